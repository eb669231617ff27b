"""Benchmark: the installed calibration on a probe's rows, shapes no sweep drew.

Run: python benchmarks/bench_probe.py [CSV...]
(default: the DNN-layer probes, benchmarks/probes/*_dnn_layers_*.csv). Prints
figures; asserts nothing, fits nothing. A file that does not parse is one
line and exit 2.

A probe is captured like any baseline (``graphsval capture --sweep``, with a
``--recapture``) on shapes of its own: the matrix products of known networks
(``benchmarks/probes/README.md``). Its rows are judged as the project's
independent captures are: per target, op and dtype, the model's median |error| and
share within 10%, beside the capture's agreement with its recapture (the
first capture's latency against the recapture's, as ``bench_fidelity``
reads them). Issue 15's goal for a host: within 10% for at least as many
shapes as the recapture minus 10 points, median at most twice the
recapture's. Then the rows the model misses most.
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import numpy as np

from graphsval_core.calibrate.rows import predict_rows
from graphsval_core.datamodel.errors import UserInputError
from graphsval_core.datamodel.target import TargetSpec
from graphsval_core.files.baseline import BaselineRow, read_baseline_file
from graphsval_core.plugins.loader import build_registry
from graphsval_core.plugins.registry import Registry
from graphsval_core.validate.harness import first_latency

PROBES = Path(__file__).resolve().parent / "probes"
WORST = 8


def _rows(path: Path) -> list[BaselineRow]:
    rows = read_baseline_file(str(path))[0].rows
    return [r for r in rows if r.latency_s and not r.extras.get("suspect")]


def _figures(errors: np.ndarray) -> str:
    a = np.abs(errors)
    return f"{np.median(a):6.1%} {np.mean(a <= 0.10):5.0%}" if len(a) else f"{'-':>6} {'-':>5}"


def judge(registry: Registry, path: Path) -> None:
    """Print the figures of each (target, op) the file at ``path`` holds."""
    rows = _rows(path)
    if not rows:
        print(f"{path.name}: no row with a latency")
        return
    again = path.parent / "recapture" / path.name
    second = {}
    if again.is_file():
        second = {(r.hardware, r.op, r.shape, r.dtype): r.latency_s for r in _rows(again)}
    else:
        print(f"{path.name}: no recapture/{path.name} beside it, so no recapture figures")
    for hardware, op in sorted({(r.hardware, r.op) for r in rows}):
        mine = [r for r in rows if (r.hardware, r.op) == (hardware, op)]
        _judge_group(registry, registry.target(hardware), path.name, mine, second)


def _judge_group(
    registry: Registry,
    spec: TargetSpec,
    name: str,
    rows: list[BaselineRow],
    second: dict[tuple[str, str, str, str], float],
) -> None:
    """The figures of one target's rows of one op, and its worst rows."""
    predicted, terms = predict_rows(registry, spec, rows)
    error = np.array(predicted) / np.array([r.latency_s for r in rows]) - 1
    drift = np.array(
        [
            second.get((r.hardware, r.op, r.shape, r.dtype), np.nan) / first_latency(r) - 1
            for r in rows
        ]
    )
    print(f"{name}: {len(rows)} rows of {spec.key} {rows[0].op}")
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
    worst = min(WORST, len(rows))
    print(f"  the {worst} worst:")
    for i in np.argsort(-np.abs(error))[:worst]:
        r = rows[i]
        again = "" if np.isnan(drift[i]) else f", recapture {drift[i]:+5.1%}"
        print(
            f"    {r.shape:>14s} {r.dtype:5s} {terms['regime'][i]:12s} measured "
            f"{r.latency_s * 1e6:9.1f} us, model {error[i]:+6.1%}{again}"
        )


def main(argv: list[str]) -> int:
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    unknown = [a for a in argv if a.startswith("-")]
    if unknown:
        print(f"bench_probe: unknown option {unknown[0]} (-h: usage)", file=sys.stderr)
        return 2
    paths = [Path(a) for a in argv] or sorted(PROBES.glob("*_dnn_layers_*.csv"))
    for p in paths:
        if p.is_dir():
            print(f"bench_probe: {p}: is a folder, not a file", file=sys.stderr)
            return 2
        if not p.is_file():
            print(f"bench_probe: no such file: {p}", file=sys.stderr)
            return 2
    registry = build_registry()
    try:
        for path in paths:
            judge(registry, path)
    except (UserInputError, ValueError) as exc:  # a file that does not parse, an unknown target
        print(f"bench_probe: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # | head: stop quietly
    sys.exit(main(sys.argv[1:]))
