"""Entry-point module of graphsval-kpu: hook implementations only, nothing
runs at import time."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from graphsval_core import hookimpl
from graphsval_core.datamodel.target import TargetSpec
from graphsval_core.plugins.records import ConsistencyCheck, ProbeResult

if TYPE_CHECKING:
    import numpy as np

    from graphsval_core.datamodel.op import OpSpec
    from graphsval_core.datamodel.target import MemoryTier

graphsval_api_version = "1.0"


@hookimpl
def graphsval_register_targets() -> Iterable[TargetSpec]:
    from graphsval_kpu.targets import kpu_targets

    return kpu_targets()


@hookimpl
def graphsval_measurer_probe(target: TargetSpec) -> ProbeResult | None:
    if target.family != "kpu":
        return None
    return ProbeResult(False, "consistency-only target: no silicon to measure")


@hookimpl
def graphsval_residency_window(
    target: TargetSpec, op: OpSpec, shapes: np.ndarray, dtype: str, tier: MemoryTier
) -> np.ndarray | None:
    """The weight-stationary tile of a KPU (weights within 80% of on-chip memory)."""
    from graphsval_kpu.consistency import residency_window

    return residency_window(target, op, shapes, dtype, tier)


@hookimpl
def graphsval_consistency_checks(target: TargetSpec) -> Iterable[ConsistencyCheck]:
    """The weight-stationary check and per-tile utilisation, for KPU targets."""
    from graphsval_kpu.consistency import checks

    return checks(target)
