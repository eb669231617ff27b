"""Entry-point module of graphsval-jetson: hook implementations only, nothing
runs at import time (no torch import, no sysfs reads)."""

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
    """Jetson Orin Nano / NX / AGX, each in its Super/MAXN power mode."""
    from graphsval_jetson.targets import jetson_targets

    return jetson_targets()


@hookimpl
def graphsval_calibrations() -> Iterable[Traversable]:
    """Calibration files fitted with ``graphsval calibrate`` on calibration rows only."""
    return packaged_files("graphsval_jetson", "calibration", ".calibration.json")


@hookimpl
def graphsval_floors() -> Path:
    """Pass-count floors of this plugin's targets (``graphsval validate --check-floors``)."""
    return Path(__file__).with_name("floors.json")


@hookimpl
def graphsval_baselines() -> Iterable[Traversable]:
    """The vendored Jetson Orin Nano calibration rows (see baselines/NOTICE)."""
    return packaged_files("graphsval_jetson", "baselines", ".csv")


@hookimpl
def graphsval_measurer_probe(target: TargetSpec) -> ProbeResult | None:
    """Whether a Jetson target can be measured on this board; None for other families."""
    from graphsval_jetson.probe import probe_target

    return probe_target(target)


@hookimpl
def graphsval_measure(
    target: TargetSpec, op: OpSpec, shape: tuple[int, ...], dtype: str, settings: Mapping[str, Any]
) -> Measurement | None:
    """Measure on this Jetson (torch, CUDA events, INA3221 VDD_IN); None for other families."""
    from graphsval_jetson.targets import FAMILY

    if target.family != FAMILY:
        return None
    from graphsval_jetson.measure import measure_jetson

    return measure_jetson(target, op, shape, dtype, settings)


@hookimpl
def graphsval_expected_failures(target: TargetSpec) -> dict[str, str]:
    """Known findings about this plugin's targets (findings.py)."""
    from graphsval_jetson.findings import expected_failures

    return expected_failures(target)


@hookimpl
def graphsval_prediction_snapshot() -> Path:
    """The committed predictions of this plugin's targets (``graphsval check``)."""
    return Path(__file__).with_name("consistency_snapshot.json")
