"""The adaptive sampling loop (fake timers) and the correctness check."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from graphsval_core.measure.correctness import check, tolerances
from graphsval_core.measure.sampling import adaptive_time, median_ci


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def fake_kernel(clock: FakeClock, per_call, calls: list[int]):
    """run_block(reps): advances the fake clock by the per-call time x reps."""

    def run_block(reps: int) -> float:
        calls.append(reps)
        total = sum(per_call(len(calls)) for _ in range(reps))
        clock.now += total
        return total

    return run_block


def test_median_ci_brackets_the_median():
    xs = [float(i) for i in range(1, 102)]
    median, lo, hi = median_ci(xs)
    assert median == 51.0 and lo < 51.0 < hi
    # about +-1 sqrt(n) ranks around the middle
    assert 40 <= lo <= 45 and 57 <= hi <= 62


def test_steady_kernel_stops_on_ci_with_few_samples():
    clock, calls = FakeClock(), []
    result = adaptive_time(fake_kernel(clock, lambda i: 1e-3, calls), clock=clock)
    assert result.stopped_by == "ci"
    assert result.samples == 5  # the minimum
    assert result.median_s == pytest.approx(1e-3)
    assert result.ci_half_width_rel == 0.0


def test_tiny_kernel_is_timed_in_blocks():
    clock, calls = FakeClock(), []
    result = adaptive_time(fake_kernel(clock, lambda i: 2e-6, calls), clock=clock, min_block_s=1e-3)
    assert result.block_reps == 500  # 1 ms / 2 us
    assert result.median_s == pytest.approx(2e-6)


def test_warmup_runs_until_timings_stop_falling():
    clock, calls = FakeClock(), []
    # first-touch: the first 6 calls are slower, each faster than the last

    def per_call(i: int) -> float:
        return 1e-3 * (1 + max(0, 7 - i) * 0.3)

    result = adaptive_time(fake_kernel(clock, per_call, calls), clock=clock)
    assert result.warmup_calls >= 8
    assert result.median_s == pytest.approx(1e-3)


def test_noisy_kernel_stops_at_the_budget():
    clock, calls = FakeClock(), []
    rng = random.Random(0)
    result = adaptive_time(
        fake_kernel(clock, lambda i: 1e-3 * (1 + rng.random()), calls),
        clock=clock,
        target_ci=0.001,
        max_time_s=0.5,
    )
    assert result.stopped_by == "budget"
    assert result.ci_half_width_rel > 0.001
    assert clock.now == pytest.approx(0.5, abs=0.01)


def test_correctness_passes_and_reports():
    ref = np.linspace(-3, 3, 1000)
    v = check(ref.astype(np.float32), ref, "fp32", 64)
    assert v.passed and v.max_abs < 1e-6 and v.mean_rel_l1 < 1e-7
    assert (v.rtol, v.atol) == tolerances("fp32", 64) == (1e-5, 8e-5)


def test_correctness_catches_a_wrong_kernel():
    ref = np.linspace(-3, 3, 1000)
    out = ref + 1e-2
    v = check(out, ref, "fp32", 64)
    assert not v.passed
    assert v.max_abs == pytest.approx(1e-2)
    assert v.columns()["verdict"] == "FAIL"


def test_atol_grows_with_the_reduction_length():
    assert tolerances("bf16", 4096)[1] == pytest.approx(1.6e-2 * 64)
    assert tolerances("bf16", 16)[1] == pytest.approx(1.6e-2 * 4)


def test_nan_output_fails_and_sampling_is_reported():
    ref = np.ones(10)
    out = ref.copy()
    out[3] = math.nan
    v = check(out, ref, "fp16", 8, sampled=True)
    assert not v.passed
    assert v.columns()["check_scope"] == "sampled 10 elements"


def test_int8_is_exact():
    ref = np.arange(10.0)
    assert check(ref, ref, "int8", 100).passed
    assert not check(ref + 1, ref, "int8", 100).passed
