"""Entry-point module of graphsval-jetson: hook implementations only, nothing
runs at import time (no torch import, no sysfs reads)."""

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
    """Jetson Orin Nano / NX / AGX, each in its Super/MAXN power mode."""
    from graphsval_jetson.targets import jetson_targets

    return jetson_targets()


@hookimpl
def graphsval_baselines() -> Iterable[Traversable]:
    """The vendored Jetson Orin Nano calibration rows (see baselines/NOTICE)."""
    return packaged_files("graphsval_jetson", "baselines", ".csv")


@hookimpl
def graphsval_measurer_probe(target: TargetSpec) -> ProbeResult | None:
    """Whether a Jetson target can be measured on this board; None for other families."""
    from graphsval_jetson.probe import probe_target

    return probe_target(target)
