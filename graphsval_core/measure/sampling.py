"""The adaptive sampling loop shared by every measurer (measurement-practice.md).

1. Warm up: call the kernel until its timings stop falling (at least
   ``min_warmup`` calls; stop when a call is no faster than 0.97x the best so
   far three times in a row, or when a quarter of the budget is spent). The
   first touch of fresh pages can make early calls 40% slower.
2. Size a block: tiny kernels are timed ``reps`` calls at a time so that one
   block lasts at least ``min_block_s`` and the timer's own cost is negligible.
3. Sample blocks until the 95% confidence half-width of the median, relative
   to the median, is at most ``target_ci`` (after ``min_samples``), or the
   per-shape budget ends, or ``max_samples`` is reached.

The block timer is injected (``run_block(reps) -> seconds``): wall clock around
the calls on a CPU, CUDA events around them on a GPU.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence

from attrs import frozen


@frozen
class TimingResult:
    """Median per-call time and how it was obtained."""

    median_s: float
    ci_half_width_rel: float  # 95% CI half-width of the median / median
    samples: int
    block_reps: int
    warmup_calls: int
    stopped_by: str  # "ci", "budget" or "max_samples"
    p10_s: float
    p90_s: float


def median_ci(samples: Sequence[float], z: float = 1.96) -> tuple[float, float, float]:
    """Median and its distribution-free 95% confidence interval (binomial order
    statistics): ``(median, low, high)``."""
    xs = sorted(samples)
    n = len(xs)
    if n == 0:
        raise ValueError("no samples")
    median = xs[n // 2] if n % 2 else 0.5 * (xs[n // 2 - 1] + xs[n // 2])
    half = z * math.sqrt(n) / 2.0
    lo = max(0, math.floor(n / 2.0 - half))
    hi = min(n - 1, math.ceil(n / 2.0 + half) - 1)
    return median, xs[lo], xs[hi]


def _quantile(xs: Sequence[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, round(q * (len(s) - 1))))]


def adaptive_time(
    run_block: Callable[[int], float],
    *,
    target_ci: float = 0.02,
    max_time_s: float = 10.0,
    min_samples: int = 5,
    max_samples: int = 1000,
    min_block_s: float = 1e-3,
    min_warmup: int = 2,
    clock: Callable[[], float] = time.perf_counter,
) -> TimingResult:
    """Time a kernel adaptively (see module doc); ``run_block(reps)`` returns the
    seconds ``reps`` back-to-back calls took."""
    start = clock()
    warm: list[float] = []
    slower_streak = 0
    while True:
        t = run_block(1)
        warm.append(t)
        if len(warm) >= min_warmup:
            slower_streak = slower_streak + 1 if t >= 0.97 * min(warm[:-1]) else 0
            if slower_streak >= 3 or clock() - start > 0.25 * max_time_s or len(warm) >= 50:
                break
    per_call = max(min(warm[-3:]), 1e-9)
    reps = max(1, math.ceil(min_block_s / per_call * (1 - 1e-9)))  # no rounding-up of 500.0000001
    samples: list[float] = []
    stopped_by = "max_samples"
    ci_rel = math.inf
    while len(samples) < max_samples:
        samples.append(run_block(reps) / reps)
        over_budget = clock() - start >= max_time_s
        if len(samples) >= min_samples:
            median, lo, hi = median_ci(samples)
            ci_rel = (hi - lo) / 2.0 / median if median > 0 else math.inf
            if ci_rel <= target_ci:
                stopped_by = "ci"
                break
        if over_budget and len(samples) >= min(3, min_samples):
            stopped_by = "budget"
            break
    median, lo, hi = median_ci(samples)
    ci_rel = (hi - lo) / 2.0 / median if median > 0 else math.inf
    return TimingResult(
        median_s=median,
        ci_half_width_rel=ci_rel,
        samples=len(samples),
        block_reps=reps,
        warmup_calls=len(warm),
        stopped_by=stopped_by,
        p10_s=_quantile(samples, 0.1),
        p90_s=_quantile(samples, 0.9),
    )
