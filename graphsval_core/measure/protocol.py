"""One measurement, the same protocol on every measurer: correctness check,
adaptive timing, then an energy window stretched to the meter's minimum.

Measurers (the ``graphsval_measure`` hook of each plugin) supply the device
specifics: a block timer (wall clock, CUDA events), an energy meter (RAPL,
NVML, INA3221) and the settings they record; this module does the rest, so a
CPU and a GPU baseline row mean the same thing.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from typing import Any

import attrs
from attrs import frozen

from graphsval_core.measure.energy import EnergyMeter, EnergyReading
from graphsval_core.measure.sampling import TimingResult, adaptive_time
from graphsval_core.measure.workloads import Workload
from graphsval_core.plugins.records import Measurement


@frozen
class CaptureSettings:
    """What a capture asks of a measurer (``graphsval capture`` flags)."""

    target_ci: float = 0.02
    max_time_per_shape_s: float = 10.0
    min_block_s: float = 1e-3
    max_energy_window_s: float = 2.0
    threads: int | None = None
    preallocate: bool = False
    #: run the correctness check (a capture checks a shape in its first round
    #: only: the kernel and its inputs are the same in every round)
    check: bool = True

    @classmethod
    def from_mapping(cls, settings: Mapping[str, Any] | CaptureSettings | None) -> CaptureSettings:
        if isinstance(settings, CaptureSettings):
            return settings
        names = attrs.fields_dict(cls)
        known = {k: v for k, v in dict(settings or {}).items() if k in names and v is not None}
        return cls(**known) if known else cls()


def wall_clock_block(run: Callable[[], Any]) -> Callable[[int], float]:
    """A block timer for host-synchronous kernels: perf_counter_ns around the calls."""

    def run_block(reps: int) -> float:
        t0 = time.perf_counter_ns()
        for _ in range(reps):
            run()
        return (time.perf_counter_ns() - t0) * 1e-9

    return run_block


#: The energy loop is topped up until its wall time reaches this multiple of the
#: meter's minimum window (the meter's own window starts earlier and ends later).
TOP_UP_TO = 1.02


def energy_window(
    run: Callable[[], Any],
    per_call_s: float,
    meter: EnergyMeter,
    max_window_s: float,
    sync: Callable[[], None] = lambda: None,
) -> tuple[float | None, EnergyReading]:
    """Run the kernel back to back for at least the meter's minimum window (and
    at most ``max_window_s``) and return the energy per call.

    The call count comes from ``per_call_s`` (the timing's median); a kernel
    that runs faster back to back would leave the window short of the minimum
    and its energy discarded, so the loop is topped up, a tenth of the calls at
    a time, until the wall clock has passed the minimum (or the cap)."""
    cap = max(max_window_s, per_call_s)
    wanted = max(meter.min_window_s, per_call_s)
    reps = max(1, math.ceil(min(wanted, cap) / max(per_call_s, 1e-9)))
    top_up = max(1, reps // 10)
    sync()
    meter.start()
    t0 = time.perf_counter()
    for _ in range(reps):
        run()
    sync()
    while (elapsed := time.perf_counter() - t0) < TOP_UP_TO * meter.min_window_s and elapsed < cap:
        for _ in range(top_up):
            run()
        sync()
        reps += top_up
    reading = meter.stop()
    if reading.joules is None:
        return None, reading
    note = reading.note
    if reading.window_s < meter.min_window_s:
        short = (
            f"energy window {reading.window_s * 1e3:.3g} ms below the sensor's "
            f"{meter.min_window_s * 1e3:.3g} ms minimum (per-shape budget)"
        )
        note = f"{note}; {short}" if note else short
        return None, EnergyReading(None, reading.window_s, reading.source, note)
    return reading.joules / reps, EnergyReading(
        reading.joules, reading.window_s, reading.source, note
    )


def measure_workload(
    workload: Workload,
    run_block: Callable[[int], float],
    meter: EnergyMeter,
    settings: CaptureSettings,
    sync: Callable[[], None] = lambda: None,
    extras: Mapping[str, Any] | None = None,
) -> Measurement:
    """Check, time and meter one workload; the measurer adds device extras."""
    verdict = None
    if settings.check:
        out = workload.run()
        sync()
        verdict = workload.check(out)
        del out
    timing: TimingResult = adaptive_time(
        run_block,
        target_ci=settings.target_ci,
        max_time_s=settings.max_time_per_shape_s,
        min_block_s=settings.min_block_s,
    )
    ok, why = meter.available()
    notes = []
    energy = None
    reading = None
    if ok:
        energy, reading = energy_window(
            workload.run, timing.median_s, meter, settings.max_energy_window_s, sync
        )
        if reading.note:
            notes.append(reading.note)
    else:
        notes.append(why)
    if verdict is not None and not verdict.passed:
        notes.insert(0, "correctness check FAILED: excluded from validation")
    if timing.stopped_by == "budget" and timing.ci_half_width_rel > settings.target_ci:
        notes.append(
            f"CI {timing.ci_half_width_rel:.1%} above the {settings.target_ci:.1%} target "
            "(per-shape budget ended)"
        )
    columns: dict[str, Any] = {
        "spread_ci_rel": f"{timing.ci_half_width_rel:.4f}",
        "samples": timing.samples,
        "block_reps": timing.block_reps,
        "warmup_calls": timing.warmup_calls,
        "stopped_by": timing.stopped_by,
        "p10_s": f"{timing.p10_s:.6e}",
        "p90_s": f"{timing.p90_s:.6e}",
        "energy_source": reading.source if reading else "none",
        "energy_window_s": f"{reading.window_s:.4f}" if reading else "",
        **(verdict.columns() if verdict is not None else {}),
        "output_alloc": workload.output_alloc,
    }
    columns.update(extras or {})
    return Measurement(
        latency_s=timing.median_s,
        energy_j=energy,
        trial_count=timing.samples * timing.block_reps,
        notes="; ".join(n for n in notes if n),
        extras=columns,
    )
