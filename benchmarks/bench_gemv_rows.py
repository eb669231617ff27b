"""Benchmark: what a GEMV's dot products cost beyond the stream of its matrix.

Run: python benchmarks/bench_gemv_rows.py [--mib MIB] [--rounds R] [--sizes]
Prints figures; asserts nothing; under a minute at one thread. The
evidence behind "Measured and screened in session 62" in
docs/model-fidelity.md:
``torch.nn.functional.linear`` of one row of A against an N x K weight
(MKL's transposed sgemv on an x86 host: a dot product a row of the weight),
warm data, one thread, rounds interleaved over the shapes, the median call.

- over K at one weight size beyond any cache (by default 128 MiB): the rate
  at which the weight streams, and the time a row takes beyond what the
  longest rows' rate gives it (a cost per dot product, if it is one);
- with ``--sizes``, over the weight's size (4 to 32 MB) for a short and a
  long row: where a VM's shared last-level cache stops keeping the weight
  from one call to the next, round by round.

Not a capture: nothing is written, and no figure here is fitted.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import torch

KS = (256, 512, 768, 1024, 1536, 2048, 3072, 4096, 8192, 16384)
SIZES_MB = (4, 8, 12, 14, 16, 18, 20, 24, 32)
SIZE_KS = (256, 4096)


def median_call_s(call: Callable[[], object], calls: int) -> float:
    """The median of ``calls`` timed calls, in seconds, after two untimed ones."""
    call()
    call()
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def gemv(k: int, n: int) -> Callable[[], object]:
    """One row of A (1 x K) against an N x K weight, onto a bias."""
    x, weight, bias = torch.randn(1, k), torch.randn(n, k), torch.randn(n)
    return lambda: torch.nn.functional.linear(x, weight, bias)


def time_rows(k: int, n: int) -> float:
    """The median call of a 1 x K x N linear, enough calls to read ~1 GB."""
    return median_call_s(gemv(k, n), max(10, int(1e9 / (k * n * 4))))


def over_k(mib: float, rounds: int) -> None:
    elements = int(mib * 2**20 / 4)
    shapes = [(k, elements // k) for k in KS]
    times: dict[int, list[float]] = {k: [] for k in KS}
    for _ in range(rounds):  # interleaved: a slow spell of the VM hits every K alike
        for k, n in shapes:
            times[k].append(time_rows(k, n))
    longest = max(KS)
    rate = 4 * elements / statistics.median(times[longest])
    print(f"weight of {mib:g} MiB, one row of A, median of {rounds} rounds")
    print(f"{'K':>6} {'N (rows)':>9} {'ms':>8} {'GB/s':>6} {'ns/row beyond K=' + str(longest):>22}")
    for k, n in shapes:
        t = statistics.median(times[k])
        beyond = (t - 4 * k * n / rate) / n * 1e9
        print(f"{k:>6} {n:>9} {t * 1e3:8.3f} {4 * k * n / t / 1e9:6.1f} {beyond:22.1f}")


def over_size(rounds: int) -> None:
    print("\nover the weight's size: GB/s of each round (a VM's L3 keeps a weight or not)")
    print(f"{'MB':>5} " + "  ".join(f"{'K=' + str(k):>{7 * rounds - 1}}" for k in SIZE_KS))
    rates: dict[tuple[float, int], list[float]] = {}
    for _ in range(rounds):
        for mb in SIZES_MB:
            for k in SIZE_KS:
                n = int(mb * 1e6 / 4 / k)
                rates.setdefault((mb, k), []).append(4 * k * n / time_rows(k, n) / 1e9)
    for mb in SIZES_MB:
        cells = [" ".join(f"{r:6.1f}" for r in rates[(mb, k)]) for k in SIZE_KS]
        print(f"{mb:>5} " + "  ".join(cells))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=float, default=128.0, help="weight size (default 128)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    parser.add_argument("--sizes", action="store_true", help="also sweep the weight's size")
    args = parser.parse_args()
    if args.mib * 2**20 / 4 < max(KS) or args.rounds < 1:  # a row of the longest K at least
        parser.error(f"--mib must hold a row of {max(KS)} fp32 and --rounds be at least 1")
    torch.set_num_threads(1)
    over_k(args.mib, args.rounds)
    if args.sizes:
        over_size(args.rounds)


if __name__ == "__main__":
    main()
