"""Entry-point module of graphsval-cuda: hook implementations only, nothing
runs at import time (no torch import, no NVML initialisation)."""

from __future__ import annotations

from collections.abc import Iterable

from graphsval_core import hookimpl
from graphsval_core.plugin_records import ProbeResult
from graphsval_core.target_spec import TargetSpec

graphsval_api_version = "1.0"


@hookimpl
def graphsval_register_targets() -> Iterable[TargetSpec]:
    """H100 / H200 / A100 from datasheets, and host_gpu as NVML describes it."""
    from graphsval_cuda.host import host_gpu_spec
    from graphsval_cuda.nvml import host_gpu_info
    from graphsval_cuda.targets import datacenter_targets

    return [*datacenter_targets(), host_gpu_spec(host_gpu_info())]


@hookimpl
def graphsval_measurer_probe(target: TargetSpec) -> ProbeResult | None:
    """Whether a CUDA target can be measured here; None for other families."""
    from graphsval_cuda.nvml import host_gpu_info
    from graphsval_cuda.probe import FAMILIES, probe_target, torch_installed

    if target.family not in FAMILIES:
        return None
    return probe_target(target, host_gpu_info(), torch_present=torch_installed())
