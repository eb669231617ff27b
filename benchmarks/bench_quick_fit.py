"""Benchmark: how good a calibration `capture-machine --quick` leaves behind.

Run: python benchmarks/bench_quick_fit.py [TARGET] [--limits 24,48,...,all]
(default: host_intel_xeon_2c_1t, the one target whose shipped calibration
rows are a whole calibration sweep and which has validation rows). Prints
figures; asserts nothing.

For each limit, the calibration rows are cut to the entries a campaign with
that many calibration shapes per op would capture on this target (the same
sample across predicted regimes and sizes, ``measure.workflow.sample_items``),
the latency constants are fitted on them alone, and the fit is judged on the
target's whole validation set, never fitted: median |error|, share within
the regime's band, share within 10%. ``all`` is the whole sweep (what the
campaign without ``--quick`` captures). A quick campaign's calibration
is only as good as these figures: fewer rows than the constants need leave
the fit free to land in another optimum (a cache's usable capacity, say).
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from bench_fidelity import _baselines, _calibration_rows, _rows_of

from graphsval_core.calibrate.evaluate import judge, per_op
from graphsval_core.calibrate.fit import fit_latency
from graphsval_core.calibrate.params import choose_params
from graphsval_core.calibrate.rows import predict_rows
from graphsval_core.files.calibration import apply_constants
from graphsval_core.files.tolerances import load_tolerances
from graphsval_core.measure.capture import CaptureItem
from graphsval_core.measure.workflow import sample_items
from graphsval_core.plugins.loader import build_registry
from graphsval_core.plugins.registry import UnknownNameError


def _limits(text: str) -> list[int | None]:
    """``24,48,all``: shapes per op, ``all`` for the whole sweep."""
    out: list[int | None] = []
    for part in text.split(","):
        if part == "all":
            out.append(None)
        elif part.isdigit() and int(part) > 0:
            out.append(int(part))
        else:
            raise argparse.ArgumentTypeError(f"{part!r} is not a positive count or 'all'")
    return out


def _arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench_quick_fit", description=__doc__.split("\n")[0])
    parser.add_argument("target", nargs="?", default="host_intel_xeon_2c_1t")
    parser.add_argument(
        "--limits",
        type=_limits,
        default=[24, 32, 48, 64, None],
        help="calibration shapes per op, comma-separated; 'all' for the whole sweep",
    )
    return parser.parse_args(argv)


def _sampled(registry, spec, rows, limit: int | None) -> list:
    if limit is None:
        return list(rows)
    out = []
    for op in sorted({r.op for r in rows}):
        mine = [r for r in rows if r.op == op]
        items = [CaptureItem(tuple(r.dims), r.dtype) for r in mine]
        keep = {it.key for it in sample_items(registry, spec, registry.op(op), items, limit)}
        out += [r for r in mine if (r.shape, r.dtype) in keep]
    return out


def main(argv: list[str]) -> None:
    args = _arguments(argv)
    key = args.target
    registry = build_registry()
    tolerances = load_tolerances()
    try:
        spec = registry.datasheet_target(registry.target(key).key)
    except UnknownNameError as exc:
        sys.exit(f"bench_quick_fit: {exc}")
    rows = _calibration_rows(registry, spec, key) or []
    validation = _rows_of(_baselines(registry, key, "validation"), key)
    if not rows:
        sys.exit(f"{key}: no calibration rows to fit")
    if not validation:
        sys.exit(f"{key}: no validation rows to judge a fit on")
    print(f"{key}: {len(rows)} calibration rows, {len(validation)} validation rows")
    head = "validation: median |error| / in band / within 10%"
    print(f"  {'per op':>7} {'rows':>5} {'constants':>9}  {head}")
    for limit in args.limits:
        chosen = _sampled(registry, spec, rows, limit)
        label = "all" if limit is None else str(limit)
        free = len(choose_params(registry, spec, chosen))
        if len({(r.op, r.shape, r.dtype) for r in chosen}) < free:  # calibrate refuses these
            print(f"  {label:>7} {len(chosen):5d} {free:9d}  fewer rows than constants: not fitted")
            continue
        start = time.perf_counter()
        fit = fit_latency(registry, spec, chosen)
        fitted = apply_constants(spec, fit.values, "fit")
        latency, terms = predict_rows(registry, fitted, validation)
        errors, inside = judge(validation, latency, terms["regime"], tolerances)
        cells = []
        for op, f in per_op(validation, errors, inside).items():
            mine = np.array([r.op == op for r in validation])
            within = float(np.mean(np.abs(errors[mine]) <= 0.10))
            cells.append(f"{op} {f.median_abs_error:.1%} / {f.within_band:.0%} / {within:.0%}")
        took = time.perf_counter() - start
        line = f"  {label:>7} {len(chosen):5d} {len(fit.values):9d}  {'  '.join(cells)}"
        print(f"{line}  ({took:.0f} s)")


if __name__ == "__main__":
    main(sys.argv[1:])
