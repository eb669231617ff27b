"""Known findings about this plugin's targets: consistency checks expected to
fail on them, each with its reason (the ``graphsval_expected_failures`` hook).

A finding is a real disagreement between a datasheet figure, or the reference
model, and an expectation, reported with its reason and never fixed by bending
a coefficient; when the check starts passing, ``graphsval check`` reports an
unexpected pass so that the entry here can be removed.
"""

from __future__ import annotations

from graphsval_core.plugin_api import TargetSpec

#: Energy per op derived as TDP / peak (targets.py, TPU v4).
TDP_OVER_PEAK = (
    "energy per op is derived as TDP (module power) / dense peak, which charges the whole "
    "power budget, idle power and data movement included, to arithmetic; the model adds "
    "idle power x latency and per-byte traffic energy on top, so a compute-bound large "
    "matmul predicts average power above TDP. A finding for the spec's owner (derive energy "
    "per op from the dynamic share, or calibrate it on energy ground truth); nothing is bent here"
)

#: The reference model has no sub-array fill term (consistency.py, tpu.systolic_fill).
SUB_ARRAY = (
    "the reference model clamps a unit's output tile to the shape, so a product smaller "
    "than one array is predicted at a whole unit's rate ({rate}) although it fills only "
    "K x N / S^2 of one array; the model has no sub-array fill term (a model limitation, "
    "not a spec figure; only launch-bound shapes are affected)"
)

FINDINGS: dict[str, dict[str, str]] = {
    "tpu_v4": {
        "bounds.power": TDP_OVER_PEAK,
        "energy_ranking:a100_sxm4_80gb": (
            "datasheet figures contradict the taxonomy at 7 nm: TPU v4 192 W / 275 TOPS = "
            "0.70 pJ per int8 op against A100 400 W / 624 TOPS = 0.64 pJ (both TDP / peak), "
            "and TPU v4's estimated idle power (30% of TDP) is a larger share than A100's "
            "(12.5%); reported as a finding (hardware-facts.md), never by bending a coefficient"
        ),
        "tpu.systolic_fill": SUB_ARRAY.format(rate="half the chip: one of 2 TensorCores"),
    },
    "coral_edge_tpu": {"tpu.systolic_fill": SUB_ARRAY.format(rate="the whole array")},
}


def expected_failures(target: TargetSpec) -> dict[str, str]:
    """``check -> reason`` for ``target`` (empty for targets of other plugins)."""
    return FINDINGS.get(target.key, {})
