"""Benchmark: a large baseline through ``graphsval validate`` (issue 17 item 5).

Run: python benchmarks/bench_large_baseline.py [MB ...]   (prints figures; asserts nothing)

Writes an 8-column V4 baseline of i7_12700k matmul fp32 rows (MxKxN up to
4096, no shape twice, random latency) of each size (default 20 and 200 MB) into a
temporary folder, then prints the wall time and peak memory (the child's
maximum resident set) of ``graphsval validate --baseline FILE -q`` and of
reading the file alone the way validate reads it (a block of rows at a time,
as columns: ``BaselineStream``). Goal: 200 MB in under a minute, under 1 GB.
"""

from __future__ import annotations

import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HEADER = "hardware,op,shape,dtype,latency_s,energy_j,trial_count,notes\n"


def write_baseline(path: Path, megabytes: float, seed: int = 1) -> int:
    """A baseline of about ``megabytes`` MB; its row count."""
    rng = random.Random(seed)
    target, size, rows = megabytes * 1e6, 0, 0
    with path.open("w") as out:
        out.write(HEADER)
        while size < target:
            block = []
            for i in range(rows, rows + 10_000):
                # M and K from the row's index: no shape twice (a repeat with
                # other values is an error) up to 16.7 million rows
                m, k, n = 1 + i % 4096, 1 + i // 4096 % 4096, rng.randint(1, 4096)
                block.append(
                    f"i7_12700k,matmul,{m}x{k}x{n},fp32,{rng.uniform(1e-6, 1e-1):.6g},,"
                    f"{rng.randint(1, 50)},\n"
                )
            text = "".join(block)
            out.write(text)
            size += len(text)
            rows += len(block)
    return rows


def _measure(args: list[str]) -> tuple[float, float, int]:
    """``args`` run in a child of a fresh interpreter, so its peak is its own."""
    code = (
        "import resource, subprocess, sys, time; t = time.perf_counter(); "
        f"rc = subprocess.run({args!r}, capture_output=True).returncode; "
        "print(time.perf_counter() - t, "
        "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, rc)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout
    wall, peak, rc = out.split()
    return float(wall), float(peak), int(rc)


def main(sizes: list[float]) -> None:
    exe = shutil.which("graphsval")
    graphsval = [exe] if exe else [sys.executable, "-m", "graphsval_core"]
    folder = Path(tempfile.mkdtemp(prefix="graphsval-bench-"))
    try:
        for mb in sizes:
            path = folder / f"big{mb:g}.csv"
            rows = write_baseline(path, mb)
            read = [
                sys.executable,
                "-c",
                "import sys; from graphsval_core.files.baseline_stream import BaselineStream; "
                "sum(len(block) for block in BaselineStream(sys.argv[1]))",
                str(path),
            ]
            wall, peak, _ = _measure(read)
            print(
                f"{mb:g} MB baseline ({rows:,} rows): read alone (column-wise blocks) "
                f"{wall:.1f} s, {peak:,.0f} MB"
            )
            wall, peak, rc = _measure([*graphsval, "validate", "--baseline", str(path), "-q"])
            print(
                f"{mb:g} MB baseline: graphsval validate -q {wall:.1f} s, peak {peak:,.0f} MB "
                f"(exit {rc}; goal for 200 MB: under 60 s and 1,024 MB)"
            )
            path.unlink()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main([float(a) for a in sys.argv[1:]] or [20.0, 200.0])
