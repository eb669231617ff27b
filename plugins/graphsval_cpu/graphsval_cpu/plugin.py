"""Entry-point module of graphsval-cpu: hook implementations only, nothing
runs at import time (no torch import, no sysfs or /proc reads)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from graphsval_core.plugin_api import (
    Measurement,
    OpSpec,
    ProbeResult,
    TargetSpec,
    hookimpl,
    packaged_files,
)

graphsval_api_version = "2.1"


@hookimpl
def graphsval_register_targets() -> Iterable[TargetSpec]:
    from graphsval_core.plugin_api import read_spec
    from graphsval_cpu.host import detect_host_cpu
    from graphsval_cpu.targets import i7_12700k

    snapshots = [
        read_spec(f.name, f.read_text())
        for f in packaged_files("graphsval_cpu", "targets", ".target.json")
    ]
    return [i7_12700k(), detect_host_cpu(), *snapshots]


@hookimpl
def graphsval_calibrations() -> Iterable[Traversable]:
    """Calibration files fitted with ``graphsval calibrate`` on calibration rows only."""
    return packaged_files("graphsval_cpu", "calibration", ".calibration.json")


@hookimpl
def graphsval_floors() -> Path:
    """Pass-count floors of this plugin's targets (``graphsval validate --check-floors``)."""
    return Path(__file__).with_name("floors.json")


@hookimpl
def graphsval_baselines() -> Iterable[Traversable]:
    """The vendored i7-12700K calibration rows (see baselines/NOTICE), this project's
    host captures, and their recaptures (``baselines/recapture/``: the validation
    set captured a second time, for the capture-vs-recapture ceiling)."""
    return [
        *packaged_files("graphsval_cpu", "baselines", ".csv"),
        *packaged_files("graphsval_cpu", "baselines/recapture", ".csv"),
    ]


@hookimpl
def graphsval_measure(
    target: TargetSpec, op: OpSpec, shape: tuple[int, ...], dtype: str, settings: Mapping[str, Any]
) -> Measurement | None:
    """Measure on this CPU (torch, pinned threads, RAPL); None for other families."""
    if target.family != "cpu":
        return None
    from graphsval_cpu.measure import measure_cpu

    return measure_cpu(target, op, shape, dtype, settings)


@hookimpl
def graphsval_snapshot_target(target: TargetSpec, settings: Mapping[str, Any]) -> TargetSpec | None:
    """host_cpu captured with N threads becomes host_<model>_<cores>c_<N>t."""
    if target.family != "cpu" or not target.detected:
        return None
    from graphsval_cpu.snapshot import snapshot_host

    return snapshot_host(target, dict(settings).get("threads"))


@hookimpl
def graphsval_measurer_probe(target: TargetSpec) -> ProbeResult | None:
    if target.family != "cpu":
        return None
    from graphsval_cpu.probe import probe_cpu

    return probe_cpu(target)


@hookimpl
def graphsval_expected_failures(target: TargetSpec) -> dict[str, str]:
    """Known findings about this plugin's targets (findings.py)."""
    from graphsval_cpu.findings import expected_failures

    return expected_failures(target)


@hookimpl
def graphsval_prediction_snapshot() -> Path:
    """The committed predictions of this plugin's targets (``graphsval check``)."""
    return Path(__file__).with_name("consistency_snapshot.json")
