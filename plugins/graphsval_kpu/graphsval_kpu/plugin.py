"""Entry-point module of graphsval-kpu: hook implementations only, nothing
runs at import time."""

from __future__ import annotations

from collections.abc import Iterable

from graphsval_core import hookimpl
from graphsval_core.plugin_records import ProbeResult
from graphsval_core.target_spec import TargetSpec

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
