"""Benchmark: the installed calibration on a probe's rows, shapes no sweep drew.

Run: python benchmarks/bench_probe.py [CSV...]
(default: the DNN-layer probes, benchmarks/probes/*_dnn_layers_*.csv). Prints
figures; asserts nothing, fits nothing.

A probe is captured like any baseline (``graphsval capture --sweep``, with a
``--recapture``) on shapes of its own: the matrix products of known networks
(``benchmarks/probes/README.md``). Its rows are judged as the project's
independent captures are: per op and dtype, the model's median |error| and
share within 10%, beside the capture's agreement with its recapture (the
first capture's latency against the recapture's, as ``bench_fidelity``
reads them). Issue 15's goal for a host: within 10% for at least as many
shapes as the recapture minus 10 points, median at most twice the
recapture's. Then the rows the model misses most.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from graphsval_core.calibrate.rows import predict_rows
from graphsval_core.files.baseline import read_baseline_file
from graphsval_core.plugins.loader import build_registry
from graphsval_core.validate.harness import first_latency

PROBES = Path(__file__).resolve().parent / "probes"
WORST = 8


def _rows(path: Path) -> list:
    rows = read_baseline_file(str(path))[0].rows
    return [r for r in rows if r.latency_s and not r.extras.get("suspect")]


def _figures(errors: np.ndarray) -> str:
    a = np.abs(errors)
    return f"{np.median(a):6.1%} {np.mean(a <= 0.10):5.0%}" if len(a) else f"{'-':>6} {'-':>5}"


def judge(registry, path: Path) -> None:
    rows = _rows(path)
    if not rows:
        print(f"{path.name}: no row with a latency")
        return
    again = path.parent / "recapture" / path.name
    second = {(r.shape, r.dtype): r.latency_s for r in _rows(again)} if again.exists() else {}
    spec = registry.target(rows[0].hardware)
    predicted, terms = predict_rows(registry, spec, rows)
    error = np.array(predicted) / np.array([r.latency_s for r in rows]) - 1
    drift = np.array([second.get((r.shape, r.dtype), np.nan) / first_latency(r) - 1 for r in rows])
    print(f"{path.name}: {len(rows)} rows of {spec.key} {rows[0].op}")
    print(f"  {'dtype':6s} {'rows':>4}  {'model median / w/in 10%':>23}  recapture  goal met")
    for dtype in [*sorted({r.dtype for r in rows}), "all"]:
        mine = np.array([dtype in ("all", r.dtype) for r in rows])
        model, noise = error[mine], drift[mine & ~np.isnan(drift)]
        goal = "-"
        if len(noise):
            a, b = np.abs(model), np.abs(noise)
            met = np.mean(a <= 0.1) >= np.mean(b <= 0.1) - 0.10 and np.median(a) <= 2 * np.median(b)
            goal = "yes" if met else "no"
        print(f"  {dtype:6s} {mine.sum():4d}  {_figures(model):>23}  {_figures(noise)}  {goal}")
    print(f"  the {WORST} worst:")
    for i in np.argsort(-np.abs(error))[:WORST]:
        r = rows[i]
        print(
            f"    {r.shape:>14s} {r.dtype:5s} {terms['regime'][i]:12s} measured "
            f"{r.latency_s * 1e6:9.1f} us, model {error[i]:+6.1%}, recapture {drift[i]:+5.1%}"
        )


def main(argv: list[str]) -> None:
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__)
        return
    paths = [Path(a) for a in argv] or sorted(PROBES.glob("*_dnn_layers_*.csv"))
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        sys.exit(f"bench_probe: no such file: {', '.join(missing)}")
    registry = build_registry()
    for path in paths:
        judge(registry, path)


if __name__ == "__main__":
    main(sys.argv[1:])
