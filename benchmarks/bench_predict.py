"""Benchmark: batch prediction throughput and `graphsval explain` start-up.

Run: python benchmarks/bench_predict.py   (prints figures; asserts nothing)
Goals: 100,000 matmul shapes in about one second on a 2-core machine;
`graphsval explain` well under half a second; `--help` and `targets` under 0.3 s;
`graphsval validate` over every shipped baseline well under 2 s, start-up included.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time

import numpy as np

from graphsval_core.model.predict import predict_batch
from graphsval_core.plugins.loader import build_registry


def bench_batch(n: int = 100_000, repeats: int = 5) -> None:
    registry = build_registry()
    rng = np.random.default_rng(0)
    shapes = rng.integers(1, 8192, size=(n, 3))
    for hw, dtype in (("i7_12700k", "fp32"), ("kpu_t64", "bf16")):
        if hw not in registry.targets():
            continue
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            predict_batch(registry, hw, "matmul", shapes, dtype)
            times.append(time.perf_counter() - t0)
        print(
            f"predict {n} matmul shapes on {hw}: best {min(times):.3f} s, "
            f"median {sorted(times)[len(times) // 2]:.3f} s"
        )


def bench_cli(repeats: int = 5) -> None:
    exe = shutil.which("graphsval")
    cmd = [exe] if exe else [sys.executable, "-m", "graphsval_core"]
    for args in (
        ["--help"],
        ["targets"],
        ["validate", "--format", "json"],
        [
            "explain",
            "--hw",
            "i7_12700k",
            "--op",
            "matmul",
            "--shape",
            "1024x1024x1024",
            "--dtype",
            "fp32",
        ],
    ):
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            subprocess.run([*cmd, *args], capture_output=True)  # validate may exit 1
            times.append(time.perf_counter() - t0)
        print(
            f"graphsval {' '.join(args[:1])}: best {min(times):.3f} s, "
            f"median {sorted(times)[len(times) // 2]:.3f} s"
        )


if __name__ == "__main__":
    bench_batch()
    bench_cli()
