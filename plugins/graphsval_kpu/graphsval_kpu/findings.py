"""Known findings about this plugin's targets: consistency checks expected to
fail on them, each with its reason (the ``graphsval_expected_failures`` hook).

A finding is a real disagreement between an estimated figure and an
expectation, reported with its reason and never fixed by bending a
coefficient; when the check starts passing, ``graphsval check`` reports an
unexpected pass so that the entry here can be removed.
"""

from __future__ import annotations

from graphsval_core.plugin_api import TargetSpec

#: The KPU's energy per op is the profile's dynamic share (targets.py).
TRAFFIC_ON_TOP = (
    "energy per op is the profile's dynamic share ((profile power - idle) / peak), but the "
    "estimated per-byte traffic energy (hardware-facts.md: 0.5 pJ/B scratchpad, 7-20 pJ/B "
    "DRAM) comes on top of it at peak rate; the reference design gives no split of its power "
    "between arithmetic and data movement, so nothing is bent to fit: a finding awaiting a "
    "power breakdown or simulator output"
)

FINDINGS: dict[str, dict[str, str]] = {"kpu_t768": {"bounds.power": TRAFFIC_ON_TOP}}


def expected_failures(target: TargetSpec) -> dict[str, str]:
    """``check -> reason`` for ``target`` (empty for targets of other plugins)."""
    return FINDINGS.get(target.key, {})
