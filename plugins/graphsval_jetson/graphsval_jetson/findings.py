"""Known findings about this plugin's targets: consistency checks expected to
fail on them, each with its reason (the ``graphsval_expected_failures`` hook).

A finding is a real disagreement between a datasheet-derived figure and an
expectation, reported with its reason and never fixed by bending a
coefficient; when the check starts passing, ``graphsval check`` reports an
unexpected pass so that the entry here can be removed.
"""

from __future__ import annotations

from graphsval_core.plugin_api import TargetSpec

#: Energy per op derived as TDP / peak (targets.py).
TDP_OVER_PEAK = (
    "energy per op is derived as TDP (module power) / dense peak, which charges the whole "
    "power budget, idle power and data movement included, to arithmetic; the model adds "
    "idle power x latency and per-byte traffic energy on top, so a compute-bound large "
    "matmul predicts average power above TDP. A finding for the spec's owner (derive energy "
    "per op from the dynamic share, or calibrate it on energy ground truth); nothing is bent here"
)

FINDINGS: dict[str, dict[str, str]] = {
    key: {"bounds.power": TDP_OVER_PEAK}
    for key in ("jetson_orin_nano_8gb", "jetson_orin_nx_16gb", "jetson_orin_agx_64gb")
}


def expected_failures(target: TargetSpec) -> dict[str, str]:
    """``check -> reason`` for ``target`` (empty for targets of other plugins)."""
    return FINDINGS.get(target.key, {})
