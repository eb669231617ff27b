"""Benchmark: how many passes of C a product that does not accumulate makes.

Run: python benchmarks/bench_output_passes.py [--dtype fp32|bf16] [--shape MxKxN ...]
Prints figures; asserts nothing; about ten seconds at one thread. The
evidence behind ``product_output_passes`` (docs/model-fidelity.md, "Then
MKL's fp32 stores C no cheaper than an accumulation on the Zen 4 (session
56)"): for products
whose time is mostly C's traffic (a short K, C of 4-33 MB), the time of

- ``matmul``: ``torch.matmul`` (the library called with ``beta = 0``);
- ``beta 0``: ``torch.mm`` into one C allocated once (``beta = 0`` too);
- ``beta 1``: ``C.addmm_(A, B)`` into the same C (the product accumulates
  onto what C holds: C read and written);
- ``zero``: ``C.zero_()``, a pass that stores C;
- ``linear``: ``F.linear`` with a bias (PyTorch broadcasts the bias into C,
  then the product accumulates onto it);

and the ratios matmul / linear and beta 0 / beta 1. A library that stores
C whole at ``beta = 0`` takes well under ``beta 1`` and ``linear`` there
(oneDNN's bf16: matmul / linear 0.37-0.59); one that stores C no cheaper
than a product that accumulates takes at least ``beta 1`` and what
``linear`` takes (MKL's fp32 on the Zen 4 host: matmul / linear
0.98-1.17 for K of 2-32, beta 0 / beta 1 1.4-1.7; on a Zen 3 VM, session
57: 0.72-1.05 and 1.3-1.6; its rank-1 update,
K = 1, stores C whole: matmul / linear 0.41-0.57).

Each figure is the median of seven rounds that call the five in turn, each
call repeated for about 10 ms (one thread, warm data, after a warm-up of
every call). glibc's allocator is held to the heap (``mallopt``: no fresh
mapping and no trim), so no call faults C's pages in; otherwise a C of
16-32 MB can be mapped afresh on every call in one process and not in the
next, doubling matmul's and linear's times. ``MKL_ENABLE_INSTRUCTIONS=AVX2
python benchmarks/bench_output_passes.py`` holds MKL to AVX2 (no change on
the Zen 4: it runs its AVX2 kernels on AMD already).

Not a capture: nothing is written, and no figure here is fitted.
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import re
import statistics
import time
from collections.abc import Callable

import torch
import torch.nn.functional as F  # noqa: N812

ROUNDS = 7
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
#: The most elements an operand may have (A, B or C): 64 M.
MOST_ELEMENTS = 64 * 1024 * 1024
#: The most multiply-adds a shape may ask for (a few seconds at one thread).
MOST_MACS = 2 * 10**10
#: glibc's mallopt parameters: the mmap threshold and the trim threshold.
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3


def hold_allocator_to_the_heap() -> bool:
    """Ask glibc to serve every allocation from the heap and never trim it,
    so that no timed call maps or faults fresh pages; False where there is
    no glibc (the figures then include whatever the allocator does)."""
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    try:
        libc = ctypes.CDLL(name)
        libc.mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
        most = 2**31 - 1  # an int's largest: no mapping below it, no trim
        ok = libc.mallopt(M_MMAP_THRESHOLD, 1 << 30) and libc.mallopt(M_TRIM_THRESHOLD, most)
    except (OSError, AttributeError):
        return False
    return bool(ok)


def per_call_us(call: Callable[[], object], calls: int) -> float:
    """Microseconds per call over ``calls`` back-to-back calls."""
    start = time.perf_counter()
    for _ in range(calls):
        call()
    return (time.perf_counter() - start) / calls * 1e6


def parse_shape(text: str) -> tuple[int, int, int]:
    """``"MxKxN"`` -> ``(M, K, N)``: each at least 1, no operand above
    :data:`MOST_ELEMENTS` elements, at most :data:`MOST_MACS` multiply-adds
    (argparse's error otherwise)."""
    if not re.fullmatch(r"[1-9][0-9]*x[1-9][0-9]*x[1-9][0-9]*", text):
        raise argparse.ArgumentTypeError(f"{text!r}: expected MxKxN of positive integers")
    m, k, n = (int(v) for v in text.split("x"))
    if max(m * k, k * n, m * n) > MOST_ELEMENTS:
        raise argparse.ArgumentTypeError(f"{text!r}: an operand of more than 64 M elements")
    if m * k * n > MOST_MACS:
        raise argparse.ArgumentTypeError(f"{text!r}: more than {MOST_MACS:.0e} multiply-adds")
    return m, k, n


def row(m: int, k: int, n: int, dtype: torch.dtype) -> str:
    """One line of the table for ``m x k x n``: the five calls' times and
    the two ratios."""
    gen = torch.Generator().manual_seed(0)
    a = torch.randn(m, k, generator=gen).to(dtype)
    b = torch.randn(k, n, generator=gen).to(dtype)
    w = b.t().contiguous()
    bias = torch.randn(n, generator=gen).to(dtype)
    c = torch.zeros(m, n, dtype=dtype)
    calls: dict[str, Callable[[], object]] = {
        "matmul": lambda: torch.matmul(a, b),
        "beta 0": lambda: torch.mm(a, b, out=c),
        "beta 1": lambda: c.addmm_(a, b),
        "zero": c.zero_,
        "linear": lambda: F.linear(a, w, bias),
    }
    counts = {}
    for name, call in calls.items():  # warm every call up, then size its rounds
        call()
        once = max(per_call_us(call, 2), 1.0)
        counts[name] = max(1, int(10_000 / once))
    times: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(ROUNDS):
        for name, call in calls.items():
            times[name].append(per_call_us(call, counts[name]))
    med = {name: statistics.median(values) for name, values in times.items()}
    size = m * n * c.element_size() / 1e6
    level2 = dtype == torch.float32 and 1 in (m, k, n)
    note = "  (M, N or K of 1: MKL's level-2 path)" if level2 else ""
    return (
        f"{f'{m}x{k}x{n}':>14} {size:6.1f} "
        + " ".join(f"{med[name]:9.1f}" for name in calls)
        + f" {med['matmul'] / med['linear']:9.2f} {med['beta 0'] / med['beta 1']:9.2f}{note}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dtype", choices=sorted(DTYPES), default="fp32")
    parser.add_argument(
        "--shape", type=parse_shape, action="append", help="MxKxN (repeatable; default a set)"
    )
    args = parser.parse_args()
    torch.set_num_threads(1)
    held = hold_allocator_to_the_heap()
    dtype = DTYPES[args.dtype]
    shapes = args.shape or [parse_shape(s) for s in SHAPES]
    heap = "allocator held to the heap" if held else "allocator as it is (no glibc mallopt)"
    print(f"{args.dtype}, one thread, median of {ROUNDS} rounds, us per call; {heap}")
    print(
        f"{'shape':>14} {'C MB':>6} {'matmul':>9} {'beta 0':>9} {'beta 1':>9} {'zero':>9} "
        f"{'linear':>9} {'mm/lin':>9} {'b0/b1':>9}"
    )
    for m, k, n in shapes:
        print(row(m, k, n, dtype))


if __name__ == "__main__":
    main()
