"""Benchmark: how far the fit's own near-equal optima move the out-of-sample figures.

Run: python benchmarks/bench_optima.py [TARGET ...]
(default: every target with shipped calibration baselines). Prints figures;
asserts nothing. The latency fit (as ``graphsval calibrate`` runs it, on the
calibration rows only) starts three to five times and keeps the lowest cost.
For each start this prints where it ended: its cost over the kept one's, its
distance from the kept constants (the constant farthest apart, a fraction as
the fit holds it: a multiplier of the spec's value), and the validation figures its constants give (median |error|
and share within 10%, per op; never used to choose). Ends within 1% of the
kept cost fit the rows as well (``calibrate`` warns of a constant they put
far apart): the spread of their figures is what a change of the model must
beat before a screen's gain means anything.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from bench_fidelity import _baselines, _rows_of  # noqa: E402

from graphsval_core.calibrate.fit import RIVAL_COST, apart, fit_latency  # noqa: E402
from graphsval_core.calibrate.inputs import read_rows  # noqa: E402
from graphsval_core.calibrate.rows import canonical, predict_rows  # noqa: E402
from graphsval_core.files.calibration import apply_constants  # noqa: E402
from graphsval_core.plugins.loader import build_registry  # noqa: E402

OPS = ("linear", "matmul", "vector_add")


def _farthest(names: list[str], x: np.ndarray, kept: np.ndarray) -> str:
    """The constant farthest from the kept end's (by :func:`apart`), in words."""
    gaps = [apart(n, math.exp(a), math.exp(b)) for n, a, b in zip(names, x, kept, strict=True)]
    if not gaps or max(gaps) <= 1e-9:
        return "the kept end"
    i = int(np.argmax(gaps))
    return f"{names[i]} {math.exp(kept[i]):.3g} -> {math.exp(x[i]):.3g}"


def main(argv: list[str]) -> None:
    registry = build_registry()
    keys = argv or sorted(k for k in registry.targets() if _baselines(registry, k, "calibration"))
    for key in keys:
        spec = registry.datasheet_target(key)
        found = read_rows(
            registry, spec, [str(p) for p in _baselines(registry, key, "calibration")]
        )
        bad = {id(s.row) for s in found.suspect if s.latency}
        fit = fit_latency(registry, spec, canonical([r for r in found.rows if id(r) not in bad]))
        validation = _rows_of(_baselines(registry, key, "validation"), key)
        names = [p.name for p in fit.params]
        best = min(cost for cost, _x in fit.ends)
        kept = next(x for cost, x in fit.ends if cost == best)
        print(f"{key}: {len(fit.ends)} starts; validation {len(validation)} rows")
        for cost, x in fit.ends:
            good = " (as good)" if cost <= best * (1 + RIVAL_COST) else " " * 10
            line = f"  cost +{cost / best - 1:6.2%}{good}"
            if validation:
                model = apply_constants(spec, dict(zip(names, np.exp(x), strict=True)), "end")
                predicted, _ = predict_rows(registry, model, validation)
                err = predicted / np.array([r.latency_s for r in validation]) - 1
                cells = []
                for op in OPS:
                    e = np.abs([v for v, r in zip(err, validation, strict=True) if r.op == op])
                    cells.append(
                        f"{np.median(e):5.1%} ({np.mean(e <= 0.1):3.0%})" if len(e) else "-"
                    )
                line += "  " + " / ".join(cells)
            print(f"{line}  {_farthest(names, x, kept)}")


if __name__ == "__main__":
    main(sys.argv[1:])
