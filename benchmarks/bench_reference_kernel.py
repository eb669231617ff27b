"""Benchmark: PyTorch's own bf16 product kernel, per output and per multiply-add.

Run: python benchmarks/bench_reference_kernel.py [--dtype bf16]
Prints figures; asserts nothing; about half a minute at one thread. The
evidence behind the reference kernel's times on a CPU whose bf16 products
go to oneDNN (``reference_kernel.py`` of the CPU plugin): a product of at
most ``library_min_macs`` (4096) multiply-adds never reaches oneDNN and
runs in ``at::native``'s reference gemm, one output element at a time. For
each layout, the median of seven rounds of a call over shapes below that
size, in microseconds, and a least-squares line through them:
``launch + outputs * per_output + multiply-adds * per_mac``:

- ``matmul`` (``torch.matmul(a, b)``, B stored K x N, K of 2 or more): the
  kernel walks down a column of B for each output;
- ``linear`` (``F.linear(a, w)``, the weight N x K, no bias): each output a
  dot of two contiguous rows.

What it showed on the Zen 4 VM (torch 2.13, one thread, clock 2.6 GHz as
``/proc/cpuinfo`` gives it, not the clock under load), four runs: a dot costs
16.0-18.3 ns an output, its time per multiply-add too small for these shapes
to tell (-0.3 to 0.6 ns); a column walk 2.3-2.9 ns an output and 0.3-0.75 ns
a multiply-add. The CPU plugin ships 44 cycles a dot's output, 7 and 1.7 a
column walk's output and multiply-add, and keeps the Zen 3 host's fitted
0.19 ns (about half a cycle) for a dot's multiply-add; the Zen 3 (AVX2, no
oneDNN bf16: every bf16 product runs here) fits 29 ns, 3.1 ns and 0.71 ns
on its rows. The shipped captures agree on the dot: linear 112x2x18 takes
35.8 us (Zen 4) and 37.8 us (Intel host) and 1920x1x2 64.7 and 60.3 us,
15-17 ns an output beyond the launch. The Intel host's column walk is
cheaper: its bf16 matmul 16x16x16 takes 3.3 us, 2.1 us beyond its launch,
0.63 of what the Zen 4's cycles give, which the plugin ships for any CPU
but an AMD one.

Not a capture: nothing is written, and no figure here is fitted to a row.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import numpy as np
import torch
import torch.nn.functional as F
from bench_linear_call import ROUNDS, rounds_us

#: Shapes (M, K, N) of at most 4096 multiply-adds: few and many outputs, short and long K.
SHAPES = (
    (2, 2, 2),
    (1, 64, 64),
    (4, 16, 64),
    (8, 8, 64),
    (16, 4, 64),
    (32, 2, 64),
    (112, 2, 18),
    (48, 2, 40),
    (16, 16, 16),
    (2, 32, 64),
    (1, 256, 16),
    (40, 3, 32),
)
DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}


def median_us(call: Callable[[], object], calls: int = 300) -> float:
    """The median of :data:`ROUNDS` rounds of ``calls`` calls, in microseconds
    a call, after a warm-up (:func:`bench_linear_call.rounds_us`)."""
    return rounds_us(call, calls)[0]


def fit_line(shapes: list[tuple[int, int, int]], us: list[float]) -> tuple[float, float, float]:
    """``(launch_us, ns_per_output, ns_per_mac)``: least squares through the times."""
    x = np.array([[1.0, m * n, m * k * n] for m, k, n in shapes])
    coef, *_ = np.linalg.lstsq(x, np.array(us), rcond=None)
    return float(coef[0]), float(coef[1]) * 1e3, float(coef[2]) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--dtype", action="append", choices=sorted(DTYPES), help="dtype (repeatable; default bf16)"
    )
    args = parser.parse_args()
    torch.set_num_threads(1)
    for name in args.dtype or ["bf16"]:
        dtype = DTYPES[name]
        print(f"{name}: us a call, median of {ROUNDS} rounds; one thread")
        print(f"{'shape':>12s}{'outputs':>9s}{'macs':>7s}{'matmul':>10s}{'linear':>10s}")
        walk: list[float] = []
        dot: list[float] = []
        for m, k, n in SHAPES:
            a = torch.randn(m, k, dtype=dtype)
            b = torch.randn(k, n, dtype=dtype)
            w = torch.randn(n, k, dtype=dtype)
            walk.append(median_us(lambda a=a, b=b: torch.matmul(a, b)))
            dot.append(median_us(lambda a=a, w=w: F.linear(a, w)))
            shape = f"{m}x{k}x{n}"
            print(f"{shape:>12s}{m * n:>9d}{m * k * n:>7d}{walk[-1]:>10.2f}{dot[-1]:>10.2f}")
        shapes = list(SHAPES)
        for label, times in (("column walk (matmul)", walk), ("dot (linear)", dot)):
            launch, per_out, per_mac = fit_line(shapes, times)
            print(
                f"{label}: {launch:.2f} us + {per_out:.2f} ns an output "
                f"+ {per_mac:.3f} ns a multiply-add"
            )


if __name__ == "__main__":
    main()
