"""Benchmark: what a new user sees and waits for (issue 17).

Run: python benchmarks/bench_user.py [--install]   (prints figures; asserts nothing)

- ``predict --shapes FILE --format csv`` of 100,000 matmul shapes, as a whole
  command, beside the model alone on the same shapes (goal: about 1 s on 2
  cores, near the model's own time);
- ``graphsval validate`` over the shipped baselines (goal: under 1 s), and
  the share of it the consistency checks take;
- ``graphsval --help`` (goal: under 0.15 s, bytecode cached);
- the default ``graphsval validate`` output at 80 columns: its lines (goal:
  60 or fewer), the widest line, and the line of the verdict (goal: the
  first screen);
- with ``--install``: a validation-only install (the core and one plugin, no
  extras) into a fresh virtual environment in a temporary folder: its size,
  the time pip took, and whether torch, matplotlib or scipy came with it
  (goal: under 200 MB, none of them). It downloads from the package index.

Each command runs ``REPEATS`` times after a warm-up; the median is printed.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
REPEATS = 5
SHAPES = 100_000


def _graphsval() -> list[str]:
    exe = shutil.which("graphsval")
    return [exe] if exe else [sys.executable, "-m", "graphsval_core"]


def _time(cmd: list[str], env: dict[str, str] | None = None) -> float:
    """Median wall seconds of ``cmd`` over ``REPEATS`` runs after a warm-up."""
    subprocess.run(cmd, capture_output=True, env=env)
    times = []
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        subprocess.run(cmd, capture_output=True, env=env)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def bench_predict(folder: Path) -> None:
    from graphsval_core.model.predict import predict_batch
    from graphsval_core.plugins.loader import build_registry

    registry = build_registry()
    rng = np.random.default_rng(0)
    shapes = rng.integers(1, 8192, size=(SHAPES, 3))
    path = folder / "shapes.txt"
    path.write_text("\n".join("x".join(map(str, row)) for row in shapes.tolist()) + "\n")
    model = []
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        predict_batch(registry, "i7_12700k", "matmul", shapes, "fp32")
        model.append(time.perf_counter() - t0)
    cmd = [*_graphsval(), "predict", "--hw", "i7_12700k", "--op", "matmul", "--dtype", "fp32",
           "--shapes", str(path), "--format", "csv"]  # fmt: skip
    whole = _time(cmd)
    print(
        f"predict --shapes ({SHAPES:,} shapes) --format csv: {whole:.2f} s "
        f"(the model alone: {statistics.median(model):.3f} s)"
    )


def bench_validate() -> None:
    import graphsval_core.validate.workflow as workflow
    from graphsval_core.plugins.loader import build_registry

    whole = _time([*_graphsval(), "validate"])
    spent: dict[str, float] = {}
    checks = workflow.run_consistency

    def timed(*args: object, **kwargs: object) -> object:
        t0 = time.perf_counter()
        out = checks(*args, **kwargs)  # type: ignore[arg-type]
        spent["consistency"] = time.perf_counter() - t0
        return out

    workflow.run_consistency = timed  # type: ignore[assignment]
    t0 = time.perf_counter()
    workflow.validate(build_registry(), workflow.ValidateOptions())
    inside = time.perf_counter() - t0
    workflow.run_consistency = checks
    print(
        f"graphsval validate (shipped baselines): {whole:.2f} s; in process {inside:.2f} s, "
        f"of which the consistency checks {spent.get('consistency', 0.0):.2f} s"
    )


def bench_help() -> None:
    print(f"graphsval --help: {_time([*_graphsval(), '--help']):.3f} s")


def bench_first_screen() -> None:
    env = dict(os.environ, COLUMNS="80")
    out = subprocess.run([*_graphsval(), "validate"], capture_output=True, text=True, env=env)
    lines = out.stdout.splitlines()
    verdict = next((i for i, line in enumerate(lines) if "records pass" in line), -1) + 1
    print(
        f"graphsval validate at 80 columns: {len(lines)} lines, widest "
        f"{max((len(line) for line in lines), default=0)}, verdict on line {verdict}"
    )


def bench_install(folder: Path) -> None:
    venv = folder / "light"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "--disable-pip-version-check", "-q"]
    before = _size(venv)
    t0 = time.perf_counter()
    subprocess.run(
        [*pip, "install", str(REPO), str(REPO / "plugins" / "graphsval_cpu")],
        check=True,
        capture_output=True,
    )
    took = time.perf_counter() - t0
    listed = subprocess.run([*pip, "list"], capture_output=True, text=True).stdout.lower()
    heavy = [name for name in ("torch", "matplotlib", "scipy") if f"\n{name} " in listed]
    print(
        f"validation-only install (core + graphsval-cpu): {_size(venv) / 1e6:.0f} MB "
        f"({(_size(venv) - before) / 1e6:.0f} MB over the empty venv), pip {took:.0f} s, "
        f"heavy packages: {', '.join(heavy) or 'none'}"
    )


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        bench_predict(Path(tmp))
        bench_validate()
        bench_help()
        bench_first_screen()
        if "--install" in sys.argv[1:]:
            bench_install(Path(tmp))
