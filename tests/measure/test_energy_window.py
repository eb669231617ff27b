"""energy_window: the window reaches the meter's minimum even when the kernel runs
faster back to back than the timing's median said (else its energy was dropped)."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from graphsval_core.measure.energy import EnergyReading
from graphsval_core.measure.protocol import energy_window


class WallMeter:
    """A constant 10 W over the wall-clock window."""

    source = "test (whole device)"
    min_window_s = 0.02

    def available(self) -> tuple[bool, str]:
        return True, ""

    def start(self) -> None:
        self.t0 = time.perf_counter()

    def stop(self) -> EnergyReading:
        window = time.perf_counter() - self.t0
        return EnergyReading(10.0 * window, window, self.source)


def _kernel(seconds: float) -> tuple[list[int], Callable[[], None]]:
    calls: list[int] = []

    def run() -> None:
        calls.append(1)
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            pass

    return calls, run


def test_energy_window_tops_up_a_short_window() -> None:
    """The median said 4 ms a call; back to back it takes 1 ms: 5 calls would give 5 ms."""
    calls, run = _kernel(0.001)
    meter = WallMeter()
    per_call, reading = energy_window(run, 0.004, meter, max_window_s=1.0)
    assert reading.window_s >= meter.min_window_s
    assert per_call is not None and len(calls) > 5
    assert per_call == pytest.approx(reading.joules / len(calls))


def test_energy_window_respects_the_cap() -> None:
    """A cap below the meter's minimum leaves the window short: no energy, and a note."""
    calls, run = _kernel(0.001)
    per_call, reading = energy_window(run, 0.001, WallMeter(), max_window_s=0.005)
    assert per_call is None
    assert "below the sensor's 20 ms minimum" in reading.note
    assert len(calls) < 15
