"""Ina3221Meter against fake sysfs trees in both layouts, with fake and real clocks."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from graphsval_core.plugin_api import EnergyMeter, PowerIntegrator
from graphsval_jetson.ina3221 import SOURCE, Ina3221Meter, find_rails

Tree = Callable[..., Path]
HWMON = "sys/bus/i2c/drivers/ina3221/1-0040/hwmon/hwmon3"
IIO = "sys/bus/i2c/drivers/ina3221x/1-0040/iio:device0"


class FakeClock:
    """Read by calling; ``sleep`` advances it (a sampler thread runs in fake time)."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds
        time.sleep(0.0002)

    def wait_until(self, t: float) -> None:
        deadline = time.monotonic() + 5.0
        while self.now < t and time.monotonic() < deadline:
            time.sleep(0.0005)


def _set(path: Path, text: str) -> None:
    """Replace a file atomically (a sampler thread may be reading it)."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text + "\n")
    os.replace(tmp, path)


def test_jetson_ina3221_hwmon_layout(jetson_tree: Tree) -> None:
    """JetPack 5+: VDD_IN power is in1_input (mV) x curr1_input (mA); sub-rails ignored."""
    root = jetson_tree(ina="hwmon")
    _set(root / HWMON / "curr2_input", "9999")  # a sub-rail: never added
    meter = Ina3221Meter(root)
    assert isinstance(meter, EnergyMeter)
    assert (meter.source, meter.min_window_s) == (SOURCE, 0.1)
    assert meter.available() == (True, "")
    meter.start()
    reading = meter.stop()
    assert reading.joules == pytest.approx(5.072 * 1.208 * reading.window_s, rel=1e-9)
    assert "sensor averaging ~8 ms assumed (INA3221 default; not exposed by sysfs)" in reading.note


def test_jetson_ina3221_hwmon_power_file(jetson_tree: Tree) -> None:
    """Where hwmon has power<N>_input (uW), it is read instead of V x I."""
    root = jetson_tree(ina="hwmon")
    _set(root / HWMON / "power1_input", "7000000")
    meter = Ina3221Meter(root)
    meter.start()
    reading = meter.stop()
    assert reading.joules == pytest.approx(7.0 * reading.window_s, rel=1e-9)


def test_jetson_ina3221_iio_layout(jetson_tree: Tree) -> None:
    """JetPack 4: in_power0_input (mW) of the channel named VDD_IN."""
    root = jetson_tree(ina="iio", rails=("VDD_SOC", "VDD_IN", "VDD_CPU_GPU_CV"))
    _set(root / IIO / "in_power1_input", "5000")
    meter = Ina3221Meter(root)
    assert meter.rail is not None and (meter.rail.layout, meter.rail.channel) == ("iio", "1")
    meter.start()
    reading = meter.stop()
    assert reading.joules == pytest.approx(5.0 * reading.window_s, rel=1e-9)


def test_jetson_ina3221_integration_numeric(jetson_tree: Tree) -> None:
    """Constant 5 W for 0.2 s, then 0 W: 1.0 J, sampled every 5 ms of fake time."""
    root, clock = jetson_tree(ina="iio"), FakeClock()

    def reader(path: Path) -> str:
        assert path.name == "in_power0_input"  # VDD_IN only
        return "5000" if clock() < 0.2 else "0"

    meter = Ina3221Meter(root, reader=reader, clock=clock, sleep=clock.sleep)
    meter.start()
    clock.wait_until(0.3)
    reading = meter.stop()
    assert reading.joules == pytest.approx(1.0, rel=0.02)
    assert reading.window_s >= 0.3
    assert "below" not in reading.note


def test_jetson_ina3221_value_changing_between_samples(jetson_tree: Tree) -> None:
    """Real clock and thread; the file goes from 5 W to 10 W during the window."""
    root = jetson_tree(ina="iio")
    power = root / IIO / "in_power0_input"
    _set(power, "5000")
    meter = Ina3221Meter(root, interval_s=0.002)
    meter.start()
    time.sleep(0.03)
    _set(power, "10000")
    time.sleep(0.03)
    reading = meter.stop()
    assert reading.joules is not None
    assert 5.0 * reading.window_s < reading.joules < 10.0 * reading.window_s


def test_jetson_ina3221_short_window_note(jetson_tree: Tree) -> None:
    """A 4 ms window is below the ~8 ms averaging period: noted."""
    clock = FakeClock()
    meter = Ina3221Meter(jetson_tree(), clock=clock, sleep=lambda s: time.sleep(0.001))
    meter.start()
    clock.now = 0.004
    reading = meter.stop()
    assert reading.joules == pytest.approx(5.072 * 1.208 * 0.004)
    assert reading.note.startswith(
        "window 4.0 ms below the ~8 ms INA3221 averaging period; energy noisy"
    )


def test_jetson_ina3221_update_interval_recorded(jetson_tree: Tree) -> None:
    root = jetson_tree(ina="hwmon")
    _set(root / HWMON / "update_interval", "12")
    clock = FakeClock()
    meter = Ina3221Meter(root, clock=clock, sleep=lambda s: time.sleep(0.001))
    assert meter.averaging_s == 0.012
    meter.start()
    clock.now = 0.010
    note = meter.stop().note
    assert note.startswith("window 10.0 ms below the ~12 ms INA3221 averaging period")
    assert note.endswith("sensor averaging 12 ms (sysfs update_interval)")


def test_jetson_ina3221_missing_vdd_in(jetson_tree: Tree) -> None:
    meter = Ina3221Meter(jetson_tree(rails=("VDD_CPU_GPU_CV", "VDD_SOC")))
    reason = (
        "INA3221 has no VDD_IN rail (rails found: VDD_CPU_GPU_CV, VDD_SOC); "
        "sub-rails are not summed into a module total"
    )
    assert meter.available() == (False, reason)
    meter.start()
    reading = meter.stop()
    assert (reading.joules, reading.note, reading.source) == (None, reason, SOURCE)


def test_jetson_ina3221_no_monitor(tmp_path: Path) -> None:
    meter = Ina3221Meter(tmp_path)
    ok, reason = meter.available()
    assert not ok and reason.startswith("no INA3221 power monitor")
    assert str(tmp_path) not in reason
    meter.start()
    assert meter.stop().joules is None


def test_jetson_ina3221_read_fails_mid_window(jetson_tree: Tree) -> None:
    root = jetson_tree(ina="iio")
    meter = Ina3221Meter(root, interval_s=0.001)
    assert find_rails(root)[0].readable
    meter.start()
    (root / IIO / "in_power0_input").unlink()
    reading = meter.stop()
    assert reading.joules is None
    assert reading.note.startswith("INA3221 VDD_IN reading failed mid-window")


def test_jetson_sampler_thread_stops(jetson_tree: Tree) -> None:
    before = threading.active_count()
    meter = Ina3221Meter(jetson_tree())
    meter.start()
    meter.stop()
    assert threading.active_count() == before


def test_jetson_power_integrator_is_time_weighted() -> None:
    integral = PowerIntegrator()
    for t, w in [(0.0, 4.0), (0.09, 4.0), (0.1, 6.0), (0.5, 6.0)]:
        integral.add(t, w)
    assert integral.joules == pytest.approx(0.36 + 0.05 + 2.4)
    assert integral.max_gap_s == pytest.approx(0.4)
