"""Benchmark: what a small linear's call costs beside a matmul's of its shape.

Run: python benchmarks/bench_linear_call.py [--dtype fp32 --dtype bf16]
Prints figures; asserts nothing; about ten seconds at one thread. The
evidence behind ``accumulate_overhead_s`` ("Kept: a library call that
accumulates onto C costs its own", docs/model-fidelity.md): for shapes
small enough that the call's fixed cost is most of its time, the median
(and best) of seven rounds of ``torch.matmul(a, b)``, ``torch.mm(a, w.t())``
(the linear's product alone, writing C), ``F.linear(a, w)`` (no bias),
``F.linear(a, w, bias)`` (the bias broadcast into C, then the product
accumulated onto it: beta = 1) and the broadcast alone
(``bias.expand(M, N).clone()``), in microseconds a call.

What it showed on the Zen 4 VM (torch 2.13, one thread, two runs), at
the three smallest shapes: a bf16 linear with its bias takes 2.5-4.7 us
more than one without, an fp32 one 0.7-1.7 us more, while the broadcast
alone costs the same in both dtypes (2.3-2.9 us, with its allocation):
so the bf16 excess is the call that accumulates onto the bias, not the
broadcast. Larger outputs scatter more (256x1x256: 8-10 us more). A linear
without a bias mostly takes 0.5-1.8 us more than the matmul of its shape in either
dtype: F.linear transposes the weight (a view, one more dispatch) before the
product, as op ``linear_nobias`` counts it. The shipped
captures say the same of linear against matmul: 3.7-4.6 us more in bf16
and 1.1-1.3 us more in fp32 on the Zen 4, 4.8-6.1 and 1.2-3.0 on the
Intel host, where the model charged the bias's kernel one framework
launch (1.1-1.3 us).

Not a capture: nothing is written, and no figure here is fitted.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import torch
import torch.nn.functional as F

ROUNDS = 7
SHAPES = ((1, 128, 128), (4, 128, 128), (48, 48, 48), (256, 1, 256), (256, 8, 256), (16, 512, 256))
DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}


def rounds_us(call: Callable[[], object], calls: int = 1000) -> tuple[float, float]:
    """The median and best of :data:`ROUNDS` rounds of ``calls`` calls, in
    microseconds a call, after a warm-up."""
    for _ in range(calls // 5):
        call()
    times = []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        for _ in range(calls):
            call()
        times.append((time.perf_counter() - start) / calls * 1e6)
    return statistics.median(times), min(times)


def _calls(m: int, k: int, n: int, dtype: torch.dtype) -> tuple[Callable[[], object], ...]:
    """The five calls of one shape (see the module doc), on fresh operands."""
    a = torch.randn(m, k, dtype=dtype)
    b = torch.randn(k, n, dtype=dtype)
    w = torch.randn(n, k, dtype=dtype)
    bias = torch.randn(n, dtype=dtype)
    wt = w.t()
    return (
        lambda: torch.matmul(a, b),
        lambda: torch.mm(a, wt),
        lambda: F.linear(a, w),
        lambda: F.linear(a, w, bias),
        lambda: bias.expand(m, n).clone(),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--dtype",
        action="append",
        choices=sorted(DTYPES),
        help="dtype to time (repeatable; default: fp32 and bf16)",
    )
    args = parser.parse_args()
    torch.set_num_threads(1)
    print("us a call, median (best) of 7 rounds; one thread")
    header = ("shape", "matmul", "mm(a, w.t())", "linear, no bias", "linear", "broadcast")
    print(f"{header[0]:>16s}" + "".join(f"{h:>17s}" for h in header[1:]))
    for name in args.dtype or ["fp32", "bf16"]:
        dtype = DTYPES[name]
        print(name)
        for m, k, n in SHAPES:
            calls = _calls(m, k, n, dtype)
            cells = [rounds_us(call) for call in calls]
            shown = "".join(f"{med:>10.2f} ({low:.2f})" for med, low in cells)
            print(f"{f'{m}x{k}x{n}':>16s}{shown}")


if __name__ == "__main__":
    main()
