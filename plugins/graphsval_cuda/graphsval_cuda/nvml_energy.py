"""GPU energy through NVML: :class:`NvmlEnergyMeter` and :func:`gpu_state`.

The meter prefers ``nvmlDeviceGetTotalEnergyConsumption`` (mJ since the driver
loaded; Volta and newer). The counter updates every 20-100 ms, so a window must
be long: about 1 s on datacenter parts (the measurer repeats the kernel).

Where the counter answers ``NVMLError_NotSupported`` (or the binding lacks it),
the meter samples ``nvmlDeviceGetPowerUsage`` (mW) every ~10 ms from a
background thread and integrates it time-weighted, and says so in the note.
That reading is itself averaged by the driver (over up to about 1 s on some
parts), so it smears short windows: 1 s is the minimum there too. When neither
query works the reading is None with NVML's error.

The NVML module is injectable as in :mod:`graphsval_cuda.nvml` (the real
``pynvml`` by default, imported on first use; a fake one in tests). NVML is
initialised once, on first use, and shut down by :meth:`NvmlEnergyMeter.close`.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import Any

from attrs import frozen

from graphsval_core.plugin_api import EnergyReading, PowerSampler
from graphsval_cuda.nvml import NO_COUNTER_IN_BINDING, load_nvml

COUNTER_SOURCE = "NVML total energy (whole device)"
SAMPLED_SOURCE = "NVML power usage, sampled (whole device)"
FALLBACK_NOTE = "NVML power-sampling fallback (no energy counter)"

#: NVML constants, used when a module does not define them.
_NVML_ERROR_NOT_SUPPORTED = 3
_NVML_CLOCK_SM = 1
_NVML_TEMPERATURE_GPU = 0


@frozen
class GpuState:
    """Conditions to record beside a measurement; None where NVML cannot say."""

    sm_clock_mhz: int | None
    temperature_c: float | None


def _error_type(nvml: Any) -> type[BaseException]:
    return getattr(nvml, "NVMLError", Exception)


def _text(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


def _not_supported(nvml: Any, exc: BaseException) -> bool:
    cls = getattr(nvml, "NVMLError_NotSupported", None)
    if cls is not None and isinstance(exc, cls):
        return True
    code = getattr(nvml, "NVML_ERROR_NOT_SUPPORTED", _NVML_ERROR_NOT_SUPPORTED)
    return getattr(exc, "value", None) == code


def gpu_state(handle: Any, nvml: Any = None) -> GpuState:
    """The current SM clock (MHz) and GPU temperature (C) of an NVML device handle.

    :param handle: from ``nvmlDeviceGetHandleByIndex`` (NVML already initialised).
    :param nvml: the NVML module; None imports the real ``pynvml``.
    """
    nvml = load_nvml() if nvml is None else nvml
    error = _error_type(nvml)

    def ask(name: str, *args: Any) -> Any:
        try:
            return getattr(nvml, name)(handle, *args)
        except (error, AttributeError):
            return None

    clock = ask("nvmlDeviceGetClockInfo", getattr(nvml, "NVML_CLOCK_SM", _NVML_CLOCK_SM))
    temp = ask(
        "nvmlDeviceGetTemperature", getattr(nvml, "NVML_TEMPERATURE_GPU", _NVML_TEMPERATURE_GPU)
    )
    return GpuState(
        int(clock) if clock is not None else None, float(temp) if temp is not None else None
    )


class NvmlEnergyMeter:
    """Whole-device GPU energy from NVML (counter, else sampled power).

    ``source`` is :data:`COUNTER_SOURCE`, and becomes :data:`SAMPLED_SOURCE`
    once the meter has found it must sample power instead.

    :param device_index: the NVML device index (see ``nvml.visible_device_index``).
    :param nvml: the NVML module; None imports the real ``pynvml`` on first use.
    :param interval_s: the power-sampling interval of the fallback.
    :param clock: seconds, monotonic (injectable for tests).
    :param sleep: the sampler's wait (injectable for tests; see ``PowerSampler``).
    """

    min_window_s = 1.0

    def __init__(
        self,
        device_index: int = 0,
        nvml: Any = None,
        *,
        interval_s: float = 0.01,
        clock: Callable[[], float] = time.perf_counter,
        sleep: Callable[[float], object] | None = None,
    ) -> None:
        self.device_index = device_index
        self.source = COUNTER_SOURCE
        self.interval_s = interval_s
        self._nvml = nvml
        self._clock = clock
        self._sleep = sleep
        self._handle: Any = None
        self._initialised = False
        #: Why the counter cannot be used (set once the fallback is chosen).
        self._counter_error: str | None = None
        self._sampler: PowerSampler | None = None
        self._e0 = 0
        self._t0 = 0.0
        self._error = ""

    # --- NVML session ---
    def _open(self) -> str | None:
        """Initialise NVML and find the device once; the error text, or None."""
        if self._handle is not None:
            return None
        if self._nvml is None:
            try:
                self._nvml = load_nvml()
            except ImportError as exc:
                return f"nvidia-ml-py is not installed: {exc}"
        error = _error_type(self._nvml)
        try:
            if not self._initialised:
                self._nvml.nvmlInit()
                self._initialised = True
            self._handle = self._nvml.nvmlDeviceGetHandleByIndex(self.device_index)
        except error as exc:
            return _text(exc)
        return None

    def close(self) -> None:
        """Shut NVML down (the meter reopens it if used again)."""
        if self._initialised:
            with contextlib.suppress(_error_type(self._nvml)):
                self._nvml.nvmlShutdown()
        self._initialised, self._handle = False, None

    @property
    def handle(self) -> Any:
        """The NVML device handle (None until the meter has opened NVML)."""
        return self._handle

    def gpu_state(self) -> GpuState | None:
        """:func:`gpu_state` of this meter's device; None when NVML is not open."""
        if self._open() is not None:
            return None
        return gpu_state(self._handle, self._nvml)

    def _ask(self, name: str, *, per_device: bool) -> str | None:
        """The text of an NVML query (of this device when ``per_device``), or None
        when NVML cannot answer it."""
        if self._open() is not None:
            return None
        try:
            query = getattr(self._nvml, name)
            value = query(self._handle) if per_device else query()
        except (_error_type(self._nvml), AttributeError):
            return None
        return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)

    def device_name(self) -> str | None:
        """NVML's name of this meter's device (to check it is the GPU being timed)."""
        return self._ask("nvmlDeviceGetName", per_device=True)

    def driver_version(self) -> str | None:
        """The NVIDIA driver version, as NVML reports it."""
        return self._ask("nvmlSystemGetDriverVersion", per_device=False)

    # --- the two ways of measuring ---
    def _read_counter(self) -> int:
        return int(self._nvml.nvmlDeviceGetTotalEnergyConsumption(self._handle))

    def _read_watts(self) -> float:
        return float(self._nvml.nvmlDeviceGetPowerUsage(self._handle)) / 1000.0

    def _try_counter(self) -> tuple[int | None, str]:
        """``(mJ, "")`` from the counter; ``(None, "")`` to fall back; ``(None, error)``."""
        if self._counter_error is not None:
            return None, ""
        try:
            return self._read_counter(), ""
        except AttributeError:
            self._counter_error = NO_COUNTER_IN_BINDING
        except _error_type(self._nvml) as exc:
            if not _not_supported(self._nvml, exc):
                return None, f"NVML total energy: {_text(exc)}"
            self._counter_error = _text(exc)
        self.source = SAMPLED_SOURCE
        return None, ""

    def available(self) -> tuple[bool, str]:
        """Whether energy can be read; with the fallback, (True, :data:`FALLBACK_NOTE`)."""
        error = self._open()
        if error is not None:
            return False, error
        value, error = self._try_counter()
        if value is not None:
            return True, ""
        if error:
            return False, error
        try:
            self._read_watts()
        except (_error_type(self._nvml), AttributeError) as exc:
            return False, self._neither(exc)
        return True, FALLBACK_NOTE

    def _neither(self, exc: BaseException) -> str:
        return f"NVML energy counter: {self._counter_error}; NVML power usage: {_text(exc)}"

    def start(self) -> None:
        """Read the counter (or start sampling power) and begin the window."""
        self._error, self._sampler = "", None
        self._t0 = self._clock()
        error = self._open()
        if error is not None:
            self._error = error
            return
        value, error = self._try_counter()
        if value is not None:
            self._e0, self._t0 = value, self._clock()
            return
        if error:
            self._error = error
            return
        sampler = PowerSampler(self._read_watts, self.interval_s, self._clock, self._sleep)
        try:
            sampler.start()
        except (_error_type(self._nvml), AttributeError) as exc:
            self._error = self._neither(exc)
            return
        self._sampler = sampler

    def stop(self) -> EnergyReading:
        """End the window and return the device's energy over it."""
        if self._error:
            return EnergyReading(None, self._clock() - self._t0, self.source, self._error)
        if self._sampler is not None:
            return self._stop_sampling(self._sampler)
        try:
            e1 = self._read_counter()
        except _error_type(self._nvml) as exc:
            window = self._clock() - self._t0
            return EnergyReading(None, window, self.source, f"NVML total energy: {_text(exc)}")
        window = self._clock() - self._t0
        if e1 < self._e0:
            note = "NVML energy counter went backwards (driver reloaded?)"
            return EnergyReading(None, window, self.source, note)
        return EnergyReading((e1 - self._e0) / 1000.0, window, self.source)

    def _stop_sampling(self, sampler: PowerSampler) -> EnergyReading:
        self._sampler = None
        integral = sampler.stop()
        window = integral.span_s
        if sampler.error is not None:
            note = f"{FALLBACK_NOTE}; NVML power usage failed mid-window: {sampler.error}"
            return EnergyReading(None, window, self.source, note)
        return EnergyReading(integral.joules, window, self.source, FALLBACK_NOTE)
