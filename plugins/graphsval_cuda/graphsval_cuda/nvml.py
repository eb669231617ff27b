"""The one place that talks to NVML.

Every NVML call of the plugin goes through :func:`query_gpu`, which takes the
NVML module as a parameter: the real ``pynvml`` (from the ``nvidia-ml-py``
distribution) by default, imported lazily, or a fake module in tests. The
result is a plain record (:class:`GpuInfo`), or :class:`NvmlUnavailable` with
NVML's own error text when there is no driver, no library or no GPU.

Nothing here runs at import time; ``pynvml`` is imported on the first query.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from attrs import frozen

#: Present on Linux (containers included) when the NVIDIA kernel driver is loaded.
DRIVER_VERSION_FILE = "proc/driver/nvidia/version"
#: The GPU device of WSL 2, where the driver lives on the Windows side.
WSL_GPU_DEVICE = "dev/dxg"
#: The NVIDIA control device: sandboxes that pass the GPU through without the
#: driver's /proc files (gVisor's nvproxy) still show it.
CONTROL_DEVICE = "dev/nvidiactl"

#: The energy-counter error when the binding predates the counter.
NO_COUNTER_IN_BINDING = "this nvidia-ml-py has no nvmlDeviceGetTotalEnergyConsumption"

#: NVML's clock-type constants (``NVML_CLOCK_SM``, ``NVML_CLOCK_MEM``), used when
#: a module does not define them.
_NVML_CLOCK_SM = 1
_NVML_CLOCK_MEM = 2


@frozen
class GpuInfo:
    """What NVML says about one GPU. Optional fields are None when NVML does
    not support the query on this device or driver."""

    index: int
    name: str
    memory_total_bytes: int
    max_sm_clock_mhz: int | None = None
    max_mem_clock_mhz: int | None = None
    memory_bus_width_bits: int | None = None
    cuda_cores: int | None = None
    compute_capability: tuple[int, int] | None = None
    power_limit_w: float | None = None
    driver_version: str | None = None
    #: None when the total-energy counter answers; else NVML's error text.
    energy_counter_error: str | None = None
    #: Whether ``nvmlDeviceGetPowerUsage`` answers (the meter's fallback).
    power_usage_supported: bool = False

    @property
    def dram_bandwidth_bps(self) -> float | None:
        """Peak memory bandwidth: max memory clock x 2 (double data rate) x bus
        width / 8, or None when NVML gives neither figure."""
        if not self.max_mem_clock_mhz or not self.memory_bus_width_bits:
            return None
        return self.max_mem_clock_mhz * 1e6 * 2 * self.memory_bus_width_bits / 8


@frozen
class NvmlUnavailable:
    """NVML could not describe a GPU; ``reason`` is NVML's error (or why not)."""

    reason: str


def _text(value: Any) -> str:
    """NVML strings: ``str`` from nvidia-ml-py 11.5+, ``bytes`` from older ones."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def load_nvml() -> Any:
    """Import and return the real ``pynvml`` module (raises ``ImportError``)."""
    return importlib.import_module("pynvml")


def visible_device_index(environ: Mapping[str, str] | None = None) -> int:
    """The NVML index of the GPU torch calls ``cuda:0``.

    NVML ignores ``CUDA_VISIBLE_DEVICES``; when its first entry is a plain
    index it is used, otherwise (unset, a UUID, a MIG id) index 0.
    """
    env = os.environ if environ is None else environ
    first = env.get("CUDA_VISIBLE_DEVICES", "").split(",")[0].strip()
    return int(first) if first.isdigit() else 0


def query_gpu(nvml: Any = None, index: int = 0) -> GpuInfo | NvmlUnavailable:
    """Describe GPU ``index`` through the NVML module ``nvml``.

    :param nvml: a module with pynvml's API (``nvmlInit``, ``NVMLError``, ...);
        None imports the real ``pynvml``.
    :param index: the NVML device index.
    :returns: :class:`GpuInfo`, or :class:`NvmlUnavailable` carrying NVML's
        error text (e.g. ``Driver Not Loaded``). Never raises for NVML errors.
    """
    if nvml is None:
        try:
            nvml = load_nvml()
        except ImportError as exc:
            return NvmlUnavailable(f"nvidia-ml-py is not installed: {exc}")
    error: type[BaseException] = getattr(nvml, "NVMLError", Exception)
    try:
        nvml.nvmlInit()
    except error as exc:
        return NvmlUnavailable(str(exc) or type(exc).__name__)
    try:
        count = int(nvml.nvmlDeviceGetCount())
        if count == 0:
            return NvmlUnavailable("NVML reports 0 GPUs")
        if not 0 <= index < count:
            return NvmlUnavailable(f"GPU index {index} out of range: NVML reports {count} GPU(s)")
        handle = nvml.nvmlDeviceGetHandleByIndex(index)
        return _describe(nvml, error, handle, index)
    except error as exc:
        return NvmlUnavailable(str(exc) or type(exc).__name__)
    finally:
        with contextlib.suppress(error):
            nvml.nvmlShutdown()


def _describe(nvml: Any, error: type[BaseException], handle: Any, index: int) -> GpuInfo:
    """Read one device's figures; a query NVML does not support gives None."""

    def optional(func_name: str, *args: Any) -> Any:
        func: Callable[..., Any] | None = getattr(nvml, func_name, None)
        if func is None:
            return None
        try:
            return func(*args)
        except error:
            return None

    clock_sm = getattr(nvml, "NVML_CLOCK_SM", _NVML_CLOCK_SM)
    clock_mem = getattr(nvml, "NVML_CLOCK_MEM", _NVML_CLOCK_MEM)
    memory = nvml.nvmlDeviceGetMemoryInfo(handle)
    capability = optional("nvmlDeviceGetCudaComputeCapability", handle)
    power_mw = optional("nvmlDeviceGetPowerManagementDefaultLimit", handle)
    driver = optional("nvmlSystemGetDriverVersion")
    try:
        nvml.nvmlDeviceGetTotalEnergyConsumption(handle)
        energy_error = None
    except AttributeError:
        energy_error = NO_COUNTER_IN_BINDING
    except error as exc:
        energy_error = str(exc) or type(exc).__name__
    power_now_mw = optional("nvmlDeviceGetPowerUsage", handle)
    return GpuInfo(
        index=index,
        name=_text(nvml.nvmlDeviceGetName(handle)).strip(),
        memory_total_bytes=int(memory.total),
        max_sm_clock_mhz=_positive(optional("nvmlDeviceGetMaxClockInfo", handle, clock_sm)),
        max_mem_clock_mhz=_positive(optional("nvmlDeviceGetMaxClockInfo", handle, clock_mem)),
        memory_bus_width_bits=_positive(optional("nvmlDeviceGetMemoryBusWidth", handle)),
        cuda_cores=_positive(optional("nvmlDeviceGetNumGpuCores", handle)),
        compute_capability=(int(capability[0]), int(capability[1])) if capability else None,
        power_limit_w=power_mw / 1000.0 if power_mw else None,
        driver_version=_text(driver) if driver is not None else None,
        energy_counter_error=energy_error,
        power_usage_supported=power_now_mw is not None,
    )


def _positive(value: Any) -> int | None:
    """NVML answers 0 for some unsupported figures: treat it as unknown."""
    return int(value) if value else None


def missing_driver_reason(root: Path = Path("/"), platform: str = sys.platform) -> str | None:
    """Why NVML cannot work here, known without importing pynvml; None to ask NVML.

    Only decides on Linux, where a loaded NVIDIA kernel driver always shows
    ``/proc/driver/nvidia/version`` (``/dev/dxg`` on WSL 2; a sandbox that
    passes the GPU through without the driver's /proc files still shows
    ``/dev/nvidiactl``).
    """
    if not platform.startswith("linux"):
        return None
    if any((root / p).exists() for p in (DRIVER_VERSION_FILE, WSL_GPU_DEVICE, CONTROL_DEVICE)):
        return None
    return f"NVIDIA driver not loaded: no /{DRIVER_VERSION_FILE}"


@functools.cache
def host_gpu_info() -> GpuInfo | NvmlUnavailable:
    """This machine's GPU (the one torch calls ``cuda:0``), queried once per process."""
    reason = missing_driver_reason()
    if reason is not None:
        return NvmlUnavailable(reason)
    return query_gpu(None, visible_device_index())
