"""Entry-point module of graphsval-kpu: hook implementations only, nothing
runs at import time."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from graphsval_core.plugin_api import (
    ConsistencyCheck,
    MemoryTier,
    OpSpec,
    ProbeResult,
    TargetSpec,
    hookimpl,
)

if TYPE_CHECKING:
    import numpy as np

graphsval_api_version = "2.1"


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


@hookimpl
def graphsval_expected_failures(target: TargetSpec) -> dict[str, str]:
    """Known findings about this plugin's targets (findings.py)."""
    from graphsval_kpu.findings import expected_failures

    return expected_failures(target)


@hookimpl
def graphsval_prediction_snapshot() -> Path:
    """The committed predictions of this plugin's targets (``graphsval check``)."""
    return Path(__file__).with_name("consistency_snapshot.json")
