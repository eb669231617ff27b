"""Benchmark: whether a product that overwrites C takes less time than one that reads it.

Run: python benchmarks/bench_output_passes.py [--dtype fp32|bf16] [--shape MxKxN ...]
Prints figures; asserts nothing; about half a minute at one thread. The
evidence behind ``product_output_passes`` (docs/model-fidelity.md, "A
library that reads C before it writes it"): for products whose time is
mostly C's traffic (a short K, C of 4-32 MB), the time of

- ``matmul``: ``torch.matmul`` (the library called with ``beta = 0``: it
  may store C's lines whole, one pass of C);
- ``mm out=``: ``torch.mm`` into an output allocated once (no allocator in
  the timing);
- ``linear``: ``F.linear`` with a bias (PyTorch broadcasts the bias into C,
  then the product accumulates onto it: C read and written, two passes);
- ``linear, no bias``: ``F.linear`` without one (``beta = 0`` again).

A ratio matmul / linear near one says the library reads C before it
writes it even when told not to accumulate; near a half, that it stores C
whole (each best of five rounds, warm data, one thread; for fp32, K = 1
takes another path in MKL, a rank-1 update, and is marked). On the Zen 4
host fp32 (MKL) gives 1.03-1.12 for K of 2-32 and 0.41 for K = 1; bf16
(oneDNN) 0.37-0.59 for K of 1-8.

Not a capture: nothing is written, and no figure here is fitted.
"""

from __future__ import annotations

import argparse
import re
import time
from collections.abc import Callable

import torch
import torch.nn.functional as F  # noqa: N812

ROUNDS = 5
SHAPES = (
    "2048x1x2048",
    "2048x2x2048",
    "2048x3x2048",
    "2048x8x2048",
    "3000x3x2000",
    "1024x4x1000",
    "7808x2x1056",
    "2048x16x2048",
    "2048x32x2048",
)
DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}


def best_us(call: Callable[[], object]) -> float:
    """The best of :data:`ROUNDS` rounds, microseconds per call; each round
    makes enough calls to last about 20 ms (two warm-up calls first)."""
    call()
    start = time.perf_counter()
    call()
    once = max(time.perf_counter() - start, 1e-6)
    calls = max(1, int(0.02 / once))
    best = float("inf")
    for _ in range(ROUNDS):
        start = time.perf_counter()
        for _ in range(calls):
            call()
        best = min(best, (time.perf_counter() - start) / calls)
    return best * 1e6


def parse_shape(text: str) -> tuple[int, int, int]:
    """``"MxKxN"`` -> ``(M, K, N)``, each at least 1 (argparse's error otherwise)."""
    if not re.fullmatch(r"[1-9][0-9]*x[1-9][0-9]*x[1-9][0-9]*", text):
        raise argparse.ArgumentTypeError(f"{text!r}: expected MxKxN of positive integers")
    m, k, n = (int(v) for v in text.split("x"))
    if m * n > 64 * 1024 * 1024:
        raise argparse.ArgumentTypeError(f"{text!r}: C of more than 64 M elements")
    return m, k, n


def row(m: int, k: int, n: int, dtype: torch.dtype) -> str:
    """One line of the table: the four calls' times for ``m x k x n`` and
    the ratio matmul / linear."""
    gen = torch.Generator().manual_seed(0)
    a = torch.randn(m, k, generator=gen).to(dtype)
    b = torch.randn(k, n, generator=gen).to(dtype)
    w = b.t().contiguous()
    bias = torch.randn(n, generator=gen).to(dtype)
    out = torch.empty(m, n, dtype=dtype)
    matmul = best_us(lambda: torch.matmul(a, b))
    into = best_us(lambda: torch.mm(a, b, out=out))
    linear = best_us(lambda: F.linear(a, w, bias))
    nobias = best_us(lambda: F.linear(a, w))
    size = m * n * out.element_size() / 1e6
    note = "  (K = 1: MKL's rank-1 path)" if k == 1 and dtype == torch.float32 else ""
    return (
        f"{f'{m}x{k}x{n}':>14} {size:6.1f} {matmul:9.1f} {into:9.1f} {linear:9.1f} "
        f"{nobias:9.1f} {matmul / linear:14.2f}{note}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dtype", choices=sorted(DTYPES), default="fp32")
    parser.add_argument(
        "--shape", type=parse_shape, action="append", help="MxKxN (repeatable; default a set)"
    )
    args = parser.parse_args()
    torch.set_num_threads(1)
    dtype = DTYPES[args.dtype]
    shapes = args.shape or [parse_shape(s) for s in SHAPES]
    print(f"{args.dtype}, one thread, best of {ROUNDS} rounds, us per call")
    print(
        f"{'shape':>14} {'C MB':>6} {'matmul':>9} {'mm out=':>9} {'linear':>9} "
        f"{'no bias':>9} {'matmul/linear':>14}"
    )
    for m, k, n in shapes:
        print(row(m, k, n, dtype))


if __name__ == "__main__":
    main()
