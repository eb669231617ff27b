"""Entry-point module of graphsval-tpu: hook implementations only, nothing
runs at import time."""

from __future__ import annotations

from collections.abc import Iterable

from graphsval_core import hookimpl
from graphsval_core.datamodel.target import TargetSpec
from graphsval_core.plugins.records import ConsistencyCheck, ProbeResult

graphsval_api_version = "1.0"


@hookimpl
def graphsval_register_targets() -> Iterable[TargetSpec]:
    """TPU v4 and the Coral Edge TPU."""
    from graphsval_tpu.targets import tpu_targets

    return tpu_targets()


@hookimpl
def graphsval_measurer_probe(target: TargetSpec) -> ProbeResult | None:
    """TPU targets have no measurer; None for other families."""
    from graphsval_tpu.targets import FAMILY

    if target.family != FAMILY:
        return None
    return ProbeResult(False, "consistency-only target: no silicon to measure")


@hookimpl
def graphsval_consistency_checks(target: TargetSpec) -> Iterable[ConsistencyCheck]:
    """The systolic-array fill check, for TPU targets."""
    from graphsval_tpu.consistency import checks

    return checks(target)
