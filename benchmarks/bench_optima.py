"""Benchmark: how far the fit's own near-equal optima move the out-of-sample figures.

Run: python benchmarks/bench_optima.py [TARGET ...]
(default: every target with shipped calibration baselines). Prints figures;
asserts nothing. The latency fit (as ``graphsval calibrate`` runs it, on the
calibration rows only) starts three to five times and keeps the lowest cost.
For each start, lowest cost first, this prints where it ended: its cost over
the kept one's, the validation figures its constants give (the rows
``calibrate`` judges: median |error| and share within 10%, per op; never used
to choose), and the constants it puts far from the kept end's (a factor 1.25,
a share 0.25 of its range; a fraction as the fit holds it, a multiplier of
the spec's value). Ends within 1% of the kept cost fit the rows as well:
``calibrate`` warns of each constant they put far apart (unless it already
says the rows do not identify it), and the spread of their figures is what
a change of the model must beat before a screen's gain means anything.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from bench_fidelity import _baselines, _calibration_rows  # noqa: E402

from graphsval_core.calibrate.fit import RIVAL_COST, apart, fit_latency  # noqa: E402
from graphsval_core.calibrate.validation import held_out_rows, judge_validation  # noqa: E402
from graphsval_core.files.calibration import apply_constants  # noqa: E402
from graphsval_core.files.tolerances import load_tolerances  # noqa: E402
from graphsval_core.plugins.loader import build_registry  # noqa: E402

OPS = ("linear", "matmul", "vector_add")


def _far(names: list[str], x: np.ndarray, kept: np.ndarray) -> str:
    """The constants ``x`` puts far from ``kept`` (by :func:`apart`), farthest first."""
    far = [
        (apart(n, math.exp(a), math.exp(b)), f"{n} {math.exp(b):.3g} -> {math.exp(a):.3g}")
        for n, a, b in zip(names, x, kept, strict=True)
    ]
    words = [w for gap, w in sorted(far, reverse=True) if gap > 1]
    return "; ".join(words) if words else "none far apart"


def _target(registry, key: str, tolerances) -> None:
    spec = registry.datasheet_target(key)
    rows = _calibration_rows(registry, spec, key)
    if rows is None:
        print(f"{key}: no calibration baselines shipped or in the workspace: nothing to fit")
        return
    fit = fit_latency(registry, spec, rows)
    held = held_out_rows(registry, spec)
    names = [p.name for p in fit.params]
    ends = sorted(fit.ends, key=lambda end: end[0])
    kept = fit.x  # the end the fit kept (the first of the lowest cost)
    best = next(cost for cost, x in fit.ends if np.array_equal(x, kept))
    print(f"{key}: {len(ends)} starts, {len(rows)} calibration rows")
    print(
        f"  {'cost':>8} {'':>7}  validation ({' / '.join(OPS)}: median |error| (within "
        "10%)), constants far from the kept end's"
    )
    for cost, x in ends:
        over = cost / best - 1 if best > 0 else (0.0 if cost <= 0 else math.inf)
        good = "as good" if cost <= best * (1 + RIVAL_COST) else ""
        line = f"  {f'+{over:.2%}':>8} {good:>7}"
        model = apply_constants(spec, dict(zip(names, np.exp(x), strict=True)), "end")
        figures = judge_validation(registry, model, held, rows, tolerances)
        if figures is not None and figures.per_op:
            cells = [
                f"{figures.per_op[op].median_abs_error:5.1%} ({figures.within_per_op[op]:3.0%})"
                if op in figures.per_op
                else "-"
                for op in OPS
            ]
            line += "  " + " / ".join(cells)
        else:
            line += "  (no validation rows)"
        far = "the kept end" if np.array_equal(x, kept) else _far(names, x, kept)
        print(f"{line}  {far}")


def main(argv: list[str]) -> int:
    if any(a in ("-h", "--help") for a in argv):
        print(__doc__)
        return 0
    registry = build_registry()
    known = registry.targets()
    unknown = [k for k in argv if k not in known]
    if unknown:
        print(
            f"bench_optima: unknown target {', '.join(map(repr, unknown))} "
            "(see `graphsval targets`)",
            file=sys.stderr,
        )
        return 2
    keys = argv or sorted(k for k in known if _baselines(registry, k, "calibration"))
    tolerances = load_tolerances()
    for key in keys:
        _target(registry, key, tolerances)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
