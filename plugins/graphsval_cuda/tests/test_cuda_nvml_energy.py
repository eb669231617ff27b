"""NvmlEnergyMeter against the fake NVML: counter, power-sampling fallback, neither."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from graphsval_core.plugin_api import EnergyMeter, PowerIntegrator
from graphsval_cuda.nvml import query_gpu
from graphsval_cuda.nvml_energy import (
    COUNTER_SOURCE,
    FALLBACK_NOTE,
    SAMPLED_SOURCE,
    GpuState,
    NvmlEnergyMeter,
    gpu_state,
)
from graphsval_cuda.probe import energy_source

Factory = Callable[..., Any]


def _meter(nvml: Any, clock: Any, **kwargs: Any) -> NvmlEnergyMeter:
    return NvmlEnergyMeter(0, nvml, clock=clock, sleep=clock.sleep, **kwargs)


def test_cuda_nvml_energy_counter(fake_nvml: Factory, h100: dict, fake_clock: Any) -> None:
    nvml = fake_nvml(h100, clock=fake_clock)
    fake_clock.advance(10.0)
    meter = _meter(nvml, fake_clock)
    assert isinstance(meter, EnergyMeter)
    assert meter.available() == (True, "")
    meter.start()
    fake_clock.advance(2.0)  # 300 W for 2 s
    reading = meter.stop()
    assert reading.joules == pytest.approx(600.0, abs=1e-3)
    assert reading.window_s == pytest.approx(2.0)
    assert (reading.source, reading.note) == (COUNTER_SOURCE, "")
    meter.close()
    assert nvml.initialised == 0


def test_cuda_nvml_energy_counter_short_window(
    fake_nvml: Factory, h100: dict, fake_clock: Any
) -> None:
    """Under the counter's update period the counter may not move: why windows are long."""
    fake_clock.advance(1.0)
    meter = _meter(fake_nvml(h100, clock=fake_clock), fake_clock)
    meter.start()
    fake_clock.advance(0.02)
    reading = meter.stop()
    assert reading.joules == 0.0
    assert reading.window_s < meter.min_window_s


def test_cuda_nvml_energy_power_fallback(
    fake_nvml: Factory, power_only_gpu: dict, fake_clock: Any
) -> None:
    """A step from 150 W to 350 W at t = 0.1 s, sampled every 10 ms, integrated."""
    power_only_gpu["power_w"] = lambda t: 150.0 if t < 0.1 else 350.0
    meter = _meter(fake_nvml(power_only_gpu, clock=fake_clock), fake_clock)
    assert meter.available() == (True, FALLBACK_NOTE)
    assert meter.source == SAMPLED_SOURCE
    meter.start()
    fake_clock.wait_until(0.3)
    reading = meter.stop()
    t = reading.window_s
    assert t >= 0.3
    expected = 150.0 * 0.1 + 350.0 * (t - 0.1)
    assert reading.joules == pytest.approx(expected, rel=0.03)
    assert reading.note.startswith(FALLBACK_NOTE)
    assert reading.source == SAMPLED_SOURCE


def test_cuda_nvml_energy_power_fallback_real_thread(
    fake_nvml: Factory, power_only_gpu: dict
) -> None:
    """Real clock and thread: constant 250 W over the sampled span."""
    meter = NvmlEnergyMeter(0, fake_nvml(power_only_gpu), interval_s=0.002)
    meter.start()
    reading = meter.stop()
    assert reading.joules == pytest.approx(250.0 * reading.window_s, rel=1e-6)


def test_cuda_nvml_energy_neither(fake_nvml: Factory, no_energy_gpu: dict) -> None:
    meter = NvmlEnergyMeter(0, fake_nvml(no_energy_gpu))
    reason = "NVML energy counter: Not Supported; NVML power usage: Not Supported"
    assert meter.available() == (False, reason)
    meter.start()
    reading = meter.stop()
    assert reading.joules is None
    assert reading.note == reason


def test_cuda_nvml_energy_no_driver(fake_nvml: Factory, h100: dict) -> None:
    meter = NvmlEnergyMeter(0, fake_nvml(h100, init_error=9))
    assert meter.available() == (False, "Driver Not Loaded")
    meter.start()
    assert meter.stop().note == "Driver Not Loaded"
    assert meter.gpu_state() is None


def test_cuda_nvml_energy_old_binding(fake_nvml: Factory, h100: dict, fake_clock: Any) -> None:
    """A binding without the counter function falls back to power sampling."""

    class OldBinding(type(fake_nvml(h100))):  # type: ignore[misc]
        def __getattribute__(self, name: str) -> Any:
            if name == "nvmlDeviceGetTotalEnergyConsumption":
                raise AttributeError(name)
            return super().__getattribute__(name)

    meter = _meter(OldBinding([dict(h100)], None, fake_clock), fake_clock)
    meter.start()
    fake_clock.wait_until(0.05)
    reading = meter.stop()
    assert reading.joules == pytest.approx(300.0 * reading.window_s, rel=1e-6)
    assert reading.note.startswith(FALLBACK_NOTE)


def test_cuda_nvml_energy_power_fails_mid_window(
    fake_nvml: Factory, power_only_gpu: dict, fake_clock: Any
) -> None:
    nvml = fake_nvml(power_only_gpu, clock=fake_clock)
    meter = _meter(nvml, fake_clock)
    meter.start()
    nvml.gpus[0]["power_w"] = None
    reading = meter.stop()
    assert reading.joules is None
    assert "failed mid-window: Not Supported" in reading.note


def test_cuda_nvml_gpu_state(fake_nvml: Factory, h100: dict, no_energy_gpu: dict) -> None:
    nvml = fake_nvml(h100)
    meter = NvmlEnergyMeter(0, nvml)
    assert meter.gpu_state() == GpuState(sm_clock_mhz=1755, temperature_c=41.0)
    bare = fake_nvml({**no_energy_gpu, "sm_clock_now": None, "temperature": None})
    bare.nvmlInit()
    assert gpu_state(0, bare) == GpuState(None, None)


def test_cuda_probe_names_the_fallback(fake_nvml: Factory, power_only_gpu: dict) -> None:
    info = query_gpu(fake_nvml(power_only_gpu))
    assert energy_source(info).startswith("NVML power-sampling fallback (no energy counter: ")


def test_cuda_power_integrator_is_time_weighted() -> None:
    integral = PowerIntegrator()
    for t, w in [(1.0, 100.0), (1.1, 100.0), (1.9, 300.0), (1.9, 999.0), (2.0, 300.0)]:
        integral.add(t, w)
    assert integral.joules == pytest.approx(10.0 + 160.0 + 30.0)
    assert integral.span_s == pytest.approx(1.0)
    assert integral.samples == 4
