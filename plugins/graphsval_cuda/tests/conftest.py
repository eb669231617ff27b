"""A fake NVML module for the CUDA plugin's tests.

It mirrors ``pynvml`` (nvidia-ml-py) where the plugin relies on it: errors are
``NVMLError`` instances whose ``str`` is NVML's message, constructed from an
error code that selects a subclass (as ``pynvml.NVMLError.__new__`` does);
names come back as ``str``; memory info is an object with ``.total``; clocks
are in MHz, the power limit and power usage in mW, energy in mJ; unsupported
queries raise ``NVMLError_NotSupported``.

With a :class:`FakeClock`, a GPU that has a ``power_w`` draws that power (watts,
or a function of the clock's time): ``nvmlDeviceGetPowerUsage`` reports it and
the total-energy counter advances by its integral, in steps of the counter's
update period (``energy_update_s``, 50 ms by default), as NVML's does.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest

from graphsval_core.testing import (  # every test: an empty workspace
    graphsval_empty_workspace as graphsval_empty_workspace,
)

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


class FakeClock:
    """A clock for the fakes: read by calling it, moved by ``advance`` or ``sleep``.

    ``sleep`` (a sampler's wait) advances the clock and yields for a moment of
    real time, so a sampling thread runs in fake time while the test waits.
    """

    def __init__(self, now: float = 0.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds

    def sleep(self, seconds: float) -> None:
        self.now += seconds
        time.sleep(0.0002)

    def wait_until(self, t: float, timeout_s: float = 5.0) -> None:
        """Block (real time) until a sampling thread has moved the clock to ``t``."""
        deadline = time.monotonic() + timeout_s
        while self.now < t and time.monotonic() < deadline:
            time.sleep(0.0005)


def _integral(power: Callable[[float], float], t: float, steps: int = 4000) -> float:
    """Joules from time 0 to ``t`` (midpoint rule)."""
    if t <= 0:
        return 0.0
    h = t / steps
    return sum(power((i + 0.5) * h) for i in range(steps)) * h


class FakeNvml:
    """A module-like object with the subset of pynvml's API the plugin uses.

    ``gpus`` holds one dict per device (keys: name, memory_total, sm_clock,
    mem_clock, bus_width, cores, capability, power_limit_mw, energy); a key
    whose value is None makes that query raise ``NVMLError_NotSupported``.
    ``init_error`` makes ``nvmlInit`` raise that NVML error code. Energy and
    power also use ``power_w`` (W, or a function of time) with ``clock``;
    ``sm_clock_now`` (MHz) and ``temperature`` (C) are the current state.
    """

    NVMLError = NVMLError
    NVMLError_NotSupported = NVMLError_NotSupported
    NVMLError_DriverNotLoaded = NVMLError_DriverNotLoaded
    NVMLError_LibraryNotFound = NVMLError_LibraryNotFound
    NVML_CLOCK_SM = 1
    NVML_CLOCK_MEM = 2
    NVML_TEMPERATURE_GPU = 0

    def __init__(
        self,
        gpus: list[dict[str, Any]],
        init_error: int | None = None,
        clock: FakeClock | None = None,
    ) -> None:
        self.gpus = gpus
        self.init_error = init_error
        self.clock = clock or FakeClock()
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

    def _power(self, handle: int) -> Callable[[float], float]:
        power = self._field(handle, "power_w")
        return power if callable(power) else lambda t: float(power)

    def nvmlDeviceGetTotalEnergyConsumption(self, handle: int) -> int:
        base = int(self._field(handle, "energy"))
        if self.gpus[handle].get("power_w") is None:
            return base
        period = self.gpus[handle].get("energy_update_s", 0.05)
        last_update = math.floor(self.clock() / period + 1e-9) * period
        return base + int(_integral(self._power(handle), last_update) * 1000)

    def nvmlDeviceGetPowerUsage(self, handle: int) -> int:
        return int(self._power(handle)(self.clock()) * 1000)

    def nvmlDeviceGetClockInfo(self, handle: int, clock_type: int) -> int:
        key = "sm_clock_now" if clock_type == self.NVML_CLOCK_SM else "mem_clock_now"
        return int(self._field(handle, key))

    def nvmlDeviceGetTemperature(self, handle: int, sensor: int) -> int:
        return int(self._field(handle, "temperature"))


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
    "power_w": 300.0,
    "sm_clock_now": 1755,
    "temperature": 41,
}

#: An H100 whose energy counter is not supported but whose power usage is
#: (the meter's power-sampling fallback).
POWER_ONLY = {**H100, "energy": None, "power_w": 250.0}

#: A GPU with neither an energy counter nor power usage (as NVML on a Jetson).
NO_ENERGY = {**H100, "energy": None, "power_w": None}

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

    def make(
        *gpus: dict[str, Any], init_error: int | None = None, clock: FakeClock | None = None
    ) -> FakeNvml:
        return FakeNvml([dict(g) for g in gpus], init_error, clock)

    return make


@pytest.fixture
def fake_clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def power_only_gpu() -> dict[str, Any]:
    return dict(POWER_ONLY)


@pytest.fixture
def no_energy_gpu() -> dict[str, Any]:
    return dict(NO_ENERGY)


@pytest.fixture
def h100() -> dict[str, Any]:
    return dict(H100)


@pytest.fixture
def unknown_gpu() -> dict[str, Any]:
    return dict(UNKNOWN)
