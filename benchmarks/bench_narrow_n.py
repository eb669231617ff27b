"""Benchmark: what a product with a narrow N costs, per dtype and layout.

Run: python benchmarks/bench_narrow_n.py [--m M] [--k K] [--dtype D ...] [--n N ...] [--tiers]
Prints figures; asserts nothing; a few seconds at one thread. The
evidence behind "Then an N narrower than the lanes pays a whole vector" in
docs/model-fidelity.md: for one M x K (by default 2048 x 512, A in the
caches), the time of a product with N columns as graphsval captures it
(``torch.matmul``, ``torch._int_mm`` for int8, and ``linear`` with its
weight stored N x K and a bias), best of five rounds, warm data, one
thread, beside the time N = 16 takes: the cost of one vector of 16 lanes
of C's row.

- bf16 (oneDNN's brgemm): every N from 2 to 16 takes what 16 takes; N = 1
  is the library's GEMV, faster.
- int8 (oneDNN's s8 GEMM under ``torch._int_mm``): N = 2, 4, 8 and 16 take
  one vector's time, and every other N one vector more per power-of-two
  piece of its columns beyond the whole vectors, each further vector, whole
  or a piece, at the same cost (N = 5 = 4 + 1 and 32: 1.65-1.7; 7 = 4 + 2 +
  1 and 48: 2.3-2.4; 15: 3.0; 31 = 16 + 15: 3.6), the evidence behind
  "Then an int8 N's tail costs a vector a piece" (``tail_piece_vectors``).
- fp32 (MKL): a matmul of 2-11 columns takes 1.8-3.8 times what 16
  take (a median 2.7 at 2048 x 512): not padding, and more per column
  than a full vector's. The evidence behind MKL's narrow kernel on AMD
  CPUs (``narrow_n_columns`` 11: every N computed as 11 columns, a row of
  C a step of K, at ``narrow_n_fraction``, started at 11 / (16 x 2.7) =
  0.25 and calibrated per host).
- fp32 linear (MKL, the weight N x K): 2 to 15 columns take 0.24 to 3.0
  times what 16 take, going with N: N of 4, 8 and 12 cost the same per
  column (72-110 ps a multiply-add on the Zen 3 host in one hour, 126-141
  in a slower one), N of 2 and 3 0.75 to 1.7 times what 4 costs, and a remainder of
  N beyond whole fours more per column. The evidence behind the linear's
  own kernel (``transposed_narrow_n_columns`` 15, ``transposed_narrow_n_group``
  4: N rounded up to whole fours, at ``transposed_narrow_n_fraction``,
  started at 25.5 / 85 = 0.3 of the peak and calibrated per host).
  ``--tiers`` times that kernel with A from the L2 to main memory (K of
  1024, M of 64 to 32768): its time a multiply-add is the same from the L3
  to main memory, so it streams A under its compute (the model keeps the
  roofline's overlap for it), while 16 columns in the lane kernel slow
  down once A leaves the L3.

Not a capture: nothing is written, and no figure here is fitted.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import torch
from bench_short_k import best_of_rounds_us

#: the most elements the benchmark gives an operand (512 MiB of fp32), so that
#: a slip of a digit is refused at once rather than run for hours or fail to allocate
MAX_ELEMENTS = 1 << 27
NS = (1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 15, 16, 20, 24, 28, 31, 32, 47, 48)
DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "int8": torch.int8}


def best_us(call: Callable[[], object]) -> float:
    """The best of :func:`bench_short_k.best_of_rounds_us`'s rounds, in
    microseconds per call; each round makes enough calls to last about 3 ms."""
    call()
    start = time.perf_counter()
    call()
    once = time.perf_counter() - start
    return best_of_rounds_us(call, max(1, int(3e-3 / max(once, 1e-7))))


def operand(rows: int, cols: int, dtype: torch.dtype) -> torch.Tensor:
    if dtype == torch.int8:
        return torch.randint(-8, 8, (rows, cols), dtype=torch.int8)
    return torch.randn(rows, cols).to(dtype)


def product(layout: str, a: torch.Tensor, n: int) -> Callable[[], object]:
    """The call graphsval times for ``layout`` (matmul or linear) with N = n."""
    k = a.shape[1]
    if layout == "linear":
        weight, bias = operand(n, k, a.dtype), torch.randn(n).to(a.dtype)
        return lambda: torch.nn.functional.linear(a, weight, bias)
    b = operand(k, n, a.dtype)
    if a.dtype == torch.int8:
        return lambda: torch._int_mm(a, b)
    return lambda: torch.matmul(a, b)


def tiers(k: int = 1024) -> None:
    """fp32 linears of 4, 8 and 16 columns with A of 256 KiB to 128 MiB: the
    time a multiply-add, and the rate A is read at, per size of A."""
    torch.set_num_threads(1)
    print(f"fp32 linear M x {k} x N, one thread: A from the L2 to main memory")
    print(f"{'N':>3} {'M':>6} {'A MiB':>7} {'us':>9} {'ps/MAC':>7} {'A GB/s':>7}")
    for n in (4, 8, 16):
        for m in (64, 128, 512, 2048, 8192, 32768):
            us = best_us(product("linear", operand(m, k, torch.float32), n))
            mib = m * k * 4 / 2**20
            print(
                f"{n:>3} {m:>6} {mib:>7.2f} {us:>9.1f} {us * 1e6 / (m * k * n):>7.1f} "
                f"{m * k * 4 / us / 1e3:>7.1f}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--m", type=int, default=2048, help="rows of A and C (default 2048)")
    parser.add_argument("--k", type=int, help="columns of A (default 512; with --tiers 1024)")
    parser.add_argument(
        "--dtype", action="append", choices=sorted(DTYPES), help="repeatable (default: all three)"
    )
    parser.add_argument(
        "--n",
        action="append",
        type=int,
        help="an N to time (repeatable; N = 16 is always timed; default: "
        f"{', '.join(map(str, NS))})",
    )
    parser.add_argument(
        "--tiers",
        action="store_true",
        help="instead: fp32 linears of 4, 8 and 16 columns, K of 1024, A from the L2 "
        "(M of 64) to main memory (M of 32768)",
    )
    args = parser.parse_args()
    if args.k is not None and args.k < 1:
        parser.error("--k must be at least 1")
    if args.tiers:
        given = [
            f for f, v in (("--m", args.m != 2048), ("--dtype", args.dtype), ("--n", args.n)) if v
        ]
        if given:
            parser.error(f"--tiers times fp32 at its own M and N: it takes no {given[0]}")
        tiers(args.k or 1024)
        return
    args.k = args.k or 512
    if args.m < 1 or args.k < 1:
        parser.error("--m and --k must be at least 1")
    if args.n and min(args.n) < 1:
        parser.error(f"--n {min(args.n)}: an N must be at least 1")
    ns = sorted({*args.n, 16}) if args.n else list(NS)
    widest = max(ns)
    for name, elements in (("A", args.m * args.k), ("B", args.k * widest), ("C", args.m * widest)):
        if elements > MAX_ELEMENTS:
            parser.error(
                f"--m {args.m} --k {args.k}{'' if name == 'A' else f' (N up to {widest})'}: "
                f"{name} would hold {elements} "
                f"elements; at most {MAX_ELEMENTS} (a benchmark of the caches, not of a "
                "machine's whole memory)"
            )
    torch.set_num_threads(1)
    print(f"{args.m} x {args.k} x N, one thread; time in us, and as a multiple of N = 16's")
    for name in dict.fromkeys(args.dtype or ("fp32", "bf16", "int8")):  # each once, in order
        dtype = DTYPES[name]
        a = operand(args.m, args.k, dtype)
        for layout in ("matmul",) if name == "int8" else ("matmul", "linear"):
            times = {n: best_us(product(layout, a, n)) for n in ns}
            print(f"\n{name} {layout}")
            print(f"{'N':>4} {'us':>9} {'x N=16':>7}")
            for n, us in times.items():
                print(f"{n:>4} {us:>9.1f} {us / times[16]:>7.2f}")


if __name__ == "__main__":
    main()
