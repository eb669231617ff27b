"""Entry-point module of graphsval-cpu: hook implementations only, nothing
runs at import time (no torch import, no sysfs or /proc reads)."""

from __future__ import annotations

from collections.abc import Iterable
from importlib.resources.abc import Traversable

from graphsval_core import hookimpl
from graphsval_core.plugin_records import ProbeResult
from graphsval_core.resources import packaged_files
from graphsval_core.target_spec import TargetSpec

graphsval_api_version = "1.0"


@hookimpl
def graphsval_register_targets() -> Iterable[TargetSpec]:
    from graphsval_cpu.host import detect_host_cpu
    from graphsval_cpu.targets import i7_12700k

    return [i7_12700k(), detect_host_cpu()]


@hookimpl
def graphsval_baselines() -> Iterable[Traversable]:
    """The vendored i7-12700K calibration rows (see baselines/NOTICE)."""
    return packaged_files("graphsval_cpu", "baselines", ".csv")


@hookimpl
def graphsval_measurer_probe(target: TargetSpec) -> ProbeResult | None:
    if target.family != "cpu":
        return None
    from graphsval_cpu.probe import probe_cpu

    return probe_cpu(target)
