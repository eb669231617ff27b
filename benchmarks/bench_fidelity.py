"""Benchmark: how well the reference model holds on shapes its fit never saw.

Run: python benchmarks/bench_fidelity.py [TARGET ...] [--no-cv]
(default: every target with shipped calibration baselines). Prints figures;
asserts nothing. For each target, the latency constants are fitted on its
calibration rows only (as ``graphsval calibrate`` does), then per op:

- in sample: the fitted rows themselves (flattering);
- grouped CV: each family (op, dtype, sorted floor(log2 d)) left out whole and
  predicted by a fit without it (the figure the fidelity goals use);
- validation: the shipped validation rows of the target, never fitted
  (where there are any; read and left out as ``graphsval calibrate`` does),
  the share of them the model puts within 10%, and the recapture agreement
  beside them (median difference, share within 10%; the first capture,
  before any re-measure, as ``graphsval validate`` counts it).

Each figure is the median |error| and the share within the regime's band.

Goals (issue 15): host: validation within 10% for at least as many shapes as
capture vs recapture minus 10 points, median at most twice the recapture
median; i7-12700K and Orin Nano: grouped-CV median 10% or less per op.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from graphsval_core.calibrate.evaluate import ErrorFigures, grouped_cv, judge, per_op
from graphsval_core.calibrate.fit import fit_latency
from graphsval_core.calibrate.inputs import read_rows
from graphsval_core.calibrate.rows import canonical, predict_rows
from graphsval_core.calibrate.validation import held_out_rows, judge_validation
from graphsval_core.files.baseline import is_recapture, read_baseline_file
from graphsval_core.files.calibration import apply_constants
from graphsval_core.files.tolerances import load_tolerances
from graphsval_core.plugins.loader import build_registry
from graphsval_core.validate.harness import first_latency


def _cell(f: ErrorFigures | None) -> str:
    if f is None or not f.rows:
        return f"{'-':>16}"
    return f"{f.median_abs_error:6.1%} {f.within_band:4.0%} n={f.rows:<3d}"


def _baselines(registry, key: str, purpose: str) -> list[Path]:
    out = []
    for _plugin, item in registry.baseline_files():
        p = Path(str(item))
        named = p.name.startswith(key + "_") and p.name.endswith(f".{purpose}.csv")
        if named and not is_recapture(p):
            out.append(p)
    return sorted(out)


def _calibration_rows(registry, spec, key: str) -> list | None:
    """The calibration rows of ``key`` a fit uses, as calibrate fits them
    (suspect latencies left out, canonical order); None when no calibration
    baseline of it is shipped or in the workspace."""
    paths = _baselines(registry, key, "calibration")
    if not paths:
        return None
    return canonical(read_rows(registry, spec, [str(p) for p in paths]).trusted)


def _rows_of(paths: list[Path], key: str) -> list:
    rows = []
    for p in paths:
        rows += [r for r in read_baseline_file(str(p))[0].rows if r.hardware == key and r.latency_s]
    return rows


def _agreement(paths: list[Path], key: str) -> dict[str, tuple[float, float]]:
    out = {}
    for p in paths:
        again = p.parent / "recapture" / p.name
        if not again.exists():
            continue
        first = {(r.op, r.shape, r.dtype): first_latency(r) for r in _rows_of([p], key)}
        second = {(r.op, r.shape, r.dtype): r.latency_s for r in _rows_of([again], key)}
        both = [k for k in first if k in second]
        if not both:
            continue
        diff = np.array([abs(first[k] - second[k]) / second[k] for k in both])
        out[both[0][0]] = (float(np.median(diff)), float(np.mean(diff <= 0.10)))
    return out


def _arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench_fidelity", description=__doc__.split("\n")[0])
    parser.add_argument(
        "targets",
        nargs="*",
        help="targets to judge (default: every one with shipped calibration rows)",
    )
    parser.add_argument("--no-cv", action="store_true", help="skip the grouped cross-validation")
    return parser.parse_args(argv)


def main(argv: list[str]) -> None:
    args = _arguments(argv)
    cv = not args.no_cv
    keys = list(args.targets)
    registry = build_registry()
    tolerances = load_tolerances()
    if not keys:
        keys = sorted(
            {
                Path(str(p)).name.split("_" + op)[0]
                for _plugin, p in registry.baseline_files()
                for op in ("matmul", "linear", "vector_add")
                if f"_{op}." in Path(str(p)).name and str(p).endswith(".calibration.csv")
            }
        )
    for key in keys:
        if key not in registry.targets():
            known = ", ".join(sorted(registry.targets()))
            sys.exit(f"bench_fidelity: unknown target {key!r}; known: {known}")
        spec = registry.datasheet_target(registry.target(key).key)
        rows = _calibration_rows(registry, spec, key)
        if rows is None:
            print(f"{key}: no shipped calibration baselines; nothing to judge")
            continue
        start = time.perf_counter()
        fit = fit_latency(registry, spec, rows)
        fitted = apply_constants(spec, fit.values, "fit")
        latency, terms = predict_rows(registry, fitted, rows)
        errors, inside = judge(rows, latency, terms["regime"], tolerances)
        sample = per_op(rows, errors, inside)
        grouped = grouped_cv(registry, spec, fit, tolerances) if cv else None
        held = judge_validation(registry, fitted, held_out_rows(registry, spec), rows, tolerances)
        valid = held.per_op if held else {}
        within10 = held.within_per_op if held else {}
        agree = _agreement(_baselines(registry, key, "validation"), key)
        took = time.perf_counter() - start
        print(f"{key}: {len(rows)} calibration rows, {len(fit.values)} constants ({took:.0f} s)")
        print(
            f"  {'op':<11} {'in sample':>16} {'grouped CV':>16} {'validation':>16}"
            f" {'val. w/in 10%':>13}  recapture"
        )
        for op in sorted(sample):
            g = grouped.per_op.get(op) if grouped else None
            a = agree.get(op)
            again = f"{a[0]:.1%} {a[1]:.0%} within 10%" if a else "-"
            w10 = within10.get(op)
            share = f"{w10:13.0%}" if w10 is not None else f"{'-':>13}"
            cells = f"{_cell(sample[op])} {_cell(g)} {_cell(valid.get(op))}"
            print(f"  {op:<11} {cells} {share}  {again}")


if __name__ == "__main__":
    main(sys.argv[1:])
