"""Benchmark: what an fp32 product with a short K costs per element of C.

Run: python benchmarks/bench_short_k.py [--m M] [--n N]
Prints figures; asserts nothing; a few seconds at one thread. The
evidence behind "Zen 4: fp32 products with a short K" in
docs/model-fidelity.md: the time of ``torch.mm`` into an output allocated
once (``out=``: no page of it is faulted in during the timing; best of five
rounds, warm data, one thread)

- over K for one M x N (by default 2048 x 2048), beside zeroing the same
  output, to tell a cost per element of C from one per multiply-add;
- over N for K = 4 and the same M, to show how the cost per element grows
  with the size of C and with a row stride that is a multiple of 4 KiB.

Not a capture: nothing is written, and no figure here is fitted.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import torch

ROUNDS = 5
KS = (1, 2, 3, 4, 8, 16, 32, 64)
NS = (256, 500, 512, 768, 1000, 1024, 1100, 1536, 2000, 2048, 3000)


def best_of_rounds_us(call: Callable[[], object], calls: int) -> float:
    """The best of :data:`ROUNDS` rounds of ``calls`` calls each, in
    microseconds per call (the caller warms the call up first)."""
    best = float("inf")
    for _ in range(ROUNDS):
        start = time.perf_counter()
        for _ in range(calls):
            call()
        best = min(best, (time.perf_counter() - start) / calls)
    return best * 1e6


def best_us(call: Callable[[], object], budget_elements: int) -> float:
    """The best of :data:`ROUNDS` rounds, in microseconds per call; each round
    makes enough calls to touch about ``2e6`` output elements."""
    calls = max(1, 2_000_000 // budget_elements)
    call()
    call()
    return best_of_rounds_us(call, calls)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--m", type=int, default=2048, help="rows of A and C (default 2048)")
    parser.add_argument("--n", type=int, default=2048, help="columns of C for the K sweep")
    args = parser.parse_args()
    if args.m < 1 or args.n < 1:
        parser.error("--m and --n must be at least 1")
    torch.set_num_threads(1)
    m, n = args.m, args.n
    out = torch.empty(m, n)
    fill = best_us(lambda: out.fill_(0.0), m * n)
    print(f"{m} x K x {n}, fp32, one thread; zeroing C takes {fill:.1f} us")
    print(f"{'K':>5} {'us':>10} {'ns per C element':>17} {'GFLOP/s':>8}")
    for k in KS:
        a, b = torch.randn(m, k), torch.randn(k, n)
        us = best_us(lambda a=a, b=b: torch.mm(a, b, out=out), m * n)
        print(f"{k:5d} {us:10.1f} {us * 1e3 / (m * n):17.3f} {2 * m * n * k / us / 1e3:8.1f}")
    print(f"\n{m} x 4 x N: C's size and row stride")
    print(f"{'N':>5} {'C MiB':>7} {'row B':>6} {'us':>10} {'ns per C element':>17}")
    for cols in NS:
        a, b, c = torch.randn(m, 4), torch.randn(4, cols), torch.empty(m, cols)
        us = best_us(lambda a=a, b=b, c=c: torch.mm(a, b, out=c), m * cols)
        size = m * cols * 4 / 2**20
        print(f"{cols:5d} {size:7.2f} {cols * 4:6d} {us:10.1f} {us * 1e3 / (m * cols):17.3f}")


if __name__ == "__main__":
    main()
