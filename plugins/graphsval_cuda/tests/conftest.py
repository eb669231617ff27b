"""A fake NVML module for the CUDA plugin's tests.

It mirrors ``pynvml`` (nvidia-ml-py) where the plugin relies on it: errors are
``NVMLError`` instances whose ``str`` is NVML's message, constructed from an
error code that selects a subclass (as ``pynvml.NVMLError.__new__`` does);
names come back as ``str``; memory info is an object with ``.total``; clocks
are in MHz, the power limit in mW; unsupported queries raise
``NVMLError_NotSupported``.
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest

NVML_ERROR_NOT_SUPPORTED = 3
NVML_ERROR_DRIVER_NOT_LOADED = 9
NVML_ERROR_LIBRARY_NOT_FOUND = 12
_MESSAGES = {
    NVML_ERROR_NOT_SUPPORTED: "Not Supported",
    NVML_ERROR_DRIVER_NOT_LOADED: "Driver Not Loaded",
    NVML_ERROR_LIBRARY_NOT_FOUND: "NVML Shared Library Not Found",
}


class NVMLError(Exception):
    """pynvml's error: ``NVMLError(code)`` returns the code's subclass."""

    _by_code: dict[int, type[NVMLError]] = {}
    value: int

    def __new__(cls, value: int) -> NVMLError:
        if cls is NVMLError:
            cls = NVMLError._by_code.get(value, cls)
        obj = Exception.__new__(cls)
        obj.value = value
        return obj

    def __init__(self, value: int) -> None:
        super().__init__(value)

    def __str__(self) -> str:
        return _MESSAGES.get(self.value, f"NVML Error with code {self.value}")


class NVMLError_NotSupported(NVMLError):
    pass


class NVMLError_DriverNotLoaded(NVMLError):
    pass


class NVMLError_LibraryNotFound(NVMLError):
    pass


NVMLError._by_code.update(
    {
        NVML_ERROR_NOT_SUPPORTED: NVMLError_NotSupported,
        NVML_ERROR_DRIVER_NOT_LOADED: NVMLError_DriverNotLoaded,
        NVML_ERROR_LIBRARY_NOT_FOUND: NVMLError_LibraryNotFound,
    }
)


class FakeNvml:
    """A module-like object with the subset of pynvml's API the plugin uses.

    ``gpus`` holds one dict per device (keys: name, memory_total, sm_clock,
    mem_clock, bus_width, cores, capability, power_limit_mw, energy); a key
    whose value is None makes that query raise ``NVMLError_NotSupported``.
    ``init_error`` makes ``nvmlInit`` raise that NVML error code.
    """

    NVMLError = NVMLError
    NVMLError_NotSupported = NVMLError_NotSupported
    NVMLError_DriverNotLoaded = NVMLError_DriverNotLoaded
    NVMLError_LibraryNotFound = NVMLError_LibraryNotFound
    NVML_CLOCK_SM = 1
    NVML_CLOCK_MEM = 2

    def __init__(self, gpus: list[dict[str, Any]], init_error: int | None = None) -> None:
        self.gpus = gpus
        self.init_error = init_error
        self.initialised = 0
        self.calls: list[str] = []

    # --- lifecycle ---
    def nvmlInit(self) -> None:
        self.calls.append("nvmlInit")
        if self.init_error is not None:
            raise NVMLError(self.init_error)
        self.initialised += 1

    def nvmlShutdown(self) -> None:
        self.calls.append("nvmlShutdown")
        if not self.initialised:
            raise NVMLError(NVML_ERROR_DRIVER_NOT_LOADED)
        self.initialised -= 1

    def _check(self) -> None:
        if not self.initialised:
            raise NVMLError(NVML_ERROR_DRIVER_NOT_LOADED)

    def _field(self, handle: int, key: str) -> Any:
        self._check()
        value = self.gpus[handle].get(key)
        if value is None:
            raise NVMLError(NVML_ERROR_NOT_SUPPORTED)
        return value

    # --- queries ---
    def nvmlSystemGetDriverVersion(self) -> str:
        self._check()
        return "550.54.15"

    def nvmlDeviceGetCount(self) -> int:
        self._check()
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> int:
        self._check()
        if not 0 <= index < len(self.gpus):
            raise NVMLError(2)  # NVML_ERROR_INVALID_ARGUMENT
        return index

    def nvmlDeviceGetName(self, handle: int) -> str:
        return str(self._field(handle, "name"))

    def nvmlDeviceGetMemoryInfo(self, handle: int) -> SimpleNamespace:
        total = int(self._field(handle, "memory_total"))
        return SimpleNamespace(total=total, free=total - 512 * 1024**2, used=512 * 1024**2)

    def nvmlDeviceGetMaxClockInfo(self, handle: int, clock_type: int) -> int:
        return int(self._field(handle, "sm_clock" if clock_type == 1 else "mem_clock"))

    def nvmlDeviceGetMemoryBusWidth(self, handle: int) -> int:
        return int(self._field(handle, "bus_width"))

    def nvmlDeviceGetNumGpuCores(self, handle: int) -> int:
        return int(self._field(handle, "cores"))

    def nvmlDeviceGetCudaComputeCapability(self, handle: int) -> tuple[int, int]:
        return tuple(self._field(handle, "capability"))  # type: ignore[return-value]

    def nvmlDeviceGetPowerManagementDefaultLimit(self, handle: int) -> int:
        return int(self._field(handle, "power_limit_mw"))

    def nvmlDeviceGetTotalEnergyConsumption(self, handle: int) -> int:
        return int(self._field(handle, "energy"))


#: NVML's answers for an H100 SXM5 80 GB (values as nvidia-smi reports them).
H100 = {
    "name": "NVIDIA H100 80GB HBM3",
    "memory_total": 85520809984,
    "sm_clock": 1980,
    "mem_clock": 2619,
    "bus_width": 5120,
    "cores": 16896,
    "capability": (9, 0),
    "power_limit_mw": 700000,
    "energy": 123456789,
}

#: An RTX 4090-like GPU that is no datasheet target of the plugin.
UNKNOWN = {
    "name": "NVIDIA GeForce RTX 4090",
    "memory_total": 25757220864,
    "sm_clock": 3120,
    "mem_clock": 10501,
    "bus_width": 384,
    "cores": 16384,
    "capability": (8, 9),
    "power_limit_mw": 450000,
    "energy": None,
}


@pytest.fixture
def fake_nvml() -> Callable[..., FakeNvml]:
    """Factory: ``fake_nvml(H100)``, ``fake_nvml(init_error=9)``, ..."""

    def make(*gpus: dict[str, Any], init_error: int | None = None) -> FakeNvml:
        return FakeNvml([dict(g) for g in gpus], init_error)

    return make


@pytest.fixture
def h100() -> dict[str, Any]:
    return dict(H100)


@pytest.fixture
def unknown_gpu() -> dict[str, Any]:
    return dict(UNKNOWN)
