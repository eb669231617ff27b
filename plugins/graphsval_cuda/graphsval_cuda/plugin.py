"""Entry-point module of graphsval-cuda: hook implementations only, nothing
runs at import time (no torch import, no NVML initialisation)."""

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
    """H100 / H200 / A100 from datasheets, and host_gpu as NVML describes it."""
    from graphsval_cuda.host import host_gpu_spec
    from graphsval_cuda.nvml import host_gpu_info
    from graphsval_cuda.targets import datacenter_targets

    return [*datacenter_targets(), host_gpu_spec(host_gpu_info())]


@hookimpl
def graphsval_baselines() -> Iterable[Traversable]:
    """Baselines captured on datacenter GPUs (docs/runbook-nvidia.md), if any."""
    return packaged_files("graphsval_cuda", "baselines", ".csv")


@hookimpl
def graphsval_measurer_probe(target: TargetSpec) -> ProbeResult | None:
    """Whether a CUDA target can be measured here; None for other families."""
    from graphsval_cuda.nvml import host_gpu_info
    from graphsval_cuda.probe import FAMILIES, probe_target, torch_installed

    if target.family not in FAMILIES:
        return None
    return probe_target(target, host_gpu_info(), torch_present=torch_installed())


@hookimpl
def graphsval_measure(
    target: TargetSpec, op: OpSpec, shape: tuple[int, ...], dtype: str, settings: Mapping[str, Any]
) -> Measurement | None:
    """Measure on this GPU (torch, CUDA events, NVML energy); None for other families."""
    from graphsval_cuda.probe import FAMILIES

    if target.family not in FAMILIES:
        return None
    from graphsval_cuda.measure import measure_cuda

    return measure_cuda(target, op, shape, dtype, settings)


@hookimpl
def graphsval_expected_failures(target: TargetSpec) -> dict[str, str]:
    """Known findings about this plugin's targets (findings.py)."""
    from graphsval_cuda.findings import expected_failures

    return expected_failures(target)


@hookimpl
def graphsval_prediction_snapshot() -> Path:
    """The committed predictions of this plugin's targets (``graphsval check``)."""
    return Path(__file__).with_name("consistency_snapshot.json")
