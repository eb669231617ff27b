"""Entry-point module of graphsval-tpu: hook implementations only, nothing
runs at import time."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from graphsval_core.plugin_api import ConsistencyCheck, ProbeResult, TargetSpec, hookimpl

graphsval_api_version = "2.1"


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


@hookimpl
def graphsval_expected_failures(target: TargetSpec) -> dict[str, str]:
    """Known findings about this plugin's targets (findings.py)."""
    from graphsval_tpu.findings import expected_failures

    return expected_failures(target)


@hookimpl
def graphsval_prediction_snapshot() -> Path:
    """The committed predictions of this plugin's targets (``graphsval check``)."""
    return Path(__file__).with_name("consistency_snapshot.json")
