"""Whether a CUDA target can be measured on this machine (cheap, read-only).

The probe asks NVML (through :mod:`graphsval_cuda.nvml`) what GPU is here and
checks that torch is installed without importing it. No kernel is launched.
"""

from __future__ import annotations

import importlib.util

from graphsval_core.plugin_api import ProbeResult, TargetSpec
from graphsval_cuda import host, targets
from graphsval_cuda.nvml import GpuInfo, NvmlUnavailable

#: The target families this plugin measures.
FAMILIES: tuple[str, ...] = (targets.FAMILY, host.FAMILY)


def torch_installed() -> bool:
    """True when torch can be imported (checked with ``find_spec``: no import)."""
    return importlib.util.find_spec("torch") is not None


def energy_source(info: GpuInfo) -> str:
    """What energy source a capture would use on this GPU, or why there is none."""
    if info.energy_counter_error is None:
        return "NVML total energy counter (whole board, mJ since driver load)"
    if info.power_usage_supported:
        return (
            f"NVML power-sampling fallback (no energy counter: {info.energy_counter_error}; "
            "power usage sampled every ~10 ms and integrated, whole board)"
        )
    return f"none: NVML total energy counter not supported ({info.energy_counter_error})"


def probe_target(
    target: TargetSpec, info: GpuInfo | NvmlUnavailable, *, torch_present: bool
) -> ProbeResult | None:
    """Probe ``target`` against what NVML reported; None when not a CUDA target.

    :param target: the target spec.
    :param info: this machine's GPU as NVML described it.
    :param torch_present: whether torch is installed.
    """
    if target.family not in FAMILIES:
        return None
    if isinstance(info, NvmlUnavailable):
        return ProbeResult(False, f"no CUDA device ({info.reason})")
    if target.key != host.KEY:
        expected = target.fingerprint.get("gpu_name", "")
        if " ".join(info.name.lower().split()) != " ".join(expected.lower().split()):
            return ProbeResult(
                False,
                f"this machine's GPU is {info.name!r}, not {expected!r} (measure it as {host.KEY})",
            )
    if not torch_present:
        return ProbeResult(False, "torch is not installed")
    return ProbeResult(True, f"GPU {info.index}: {info.name}", energy_source(info))
