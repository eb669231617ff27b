"""How well a calibration predicts rows it did not see.

- **In sample**: the share of the fitted rows within the band of each row's
  regime.
- **Leave-one-out**: each row predicted by a fit made without it. Rows that
  share a family with their neighbours (a shape's permutations, its near
  neighbours in size) flatter this figure: the fit still saw the family.
- **Grouped cross-validation**: each *family* is left out whole and predicted
  by a fit made without it. A family is (op, dtype, the sorted
  ``floor(log2 d)`` of the shape's dims): the permutations of a shape and its
  near neighbours in size fall together (:func:`family_of`). This is the
  figure that judges a model; a validation set, where there is one, judges
  it better still.

A row is judged by the latency tolerance of the regime the model puts it in
(the project's tolerances file, by regime; a regime without one by
``dram_bound``'s).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from attrs import field, frozen

from graphsval_core.calibrate.fit import Fit, fit_latency
from graphsval_core.calibrate.params import Param
from graphsval_core.calibrate.rows import predict_rows
from graphsval_core.datamodel.target import TargetSpec
from graphsval_core.files.baseline import BaselineRow
from graphsval_core.files.calibration import apply_constants
from graphsval_core.files.tolerances import band

#: A cross-validation's progress: ``(refits done, refits in all)``.
Progress = Callable[[int, int], None]

#: Grouped CV (or a validation set) this many times worse than in sample (median
#: |error|) is warned about.
GROUPED_WARN_RATIO = 1.5
#: ... but never below this median |error|, whatever the ratio.
GROUPED_WARN_FLOOR = 0.05


@frozen
class ErrorFigures:
    """Errors over a set of rows: how many, the median and 90th percentile of
    the absolute relative latency error, and the share within the band."""

    rows: int
    median_abs_error: float
    within_band: float
    p90_abs_error: float


@frozen
class OutOfSample(ErrorFigures):
    """Out-of-sample figures (see :class:`ErrorFigures`), with the number of
    groups left out in turn (the rows, for leave-one-out; the families, for
    grouped CV) and the figures of each op."""

    groups: int = 0
    per_op: dict[str, ErrorFigures] = field(factory=dict)


#: Kept for callers of the first version of this module.
LeaveOneOut = OutOfSample


def family_of(row: BaselineRow) -> tuple[str, str, tuple[int, ...]]:
    """A row's family: (op, dtype, sorted ``floor(log2 d)`` of its dims)."""
    return (
        row.op,
        row.dtype,
        tuple(sorted(int(math.floor(math.log2(max(d, 1)))) for d in row.dims)),
    )


def figures(errors: Sequence[float], inside: Sequence[bool]) -> ErrorFigures:
    """:class:`ErrorFigures` of relative ``errors`` and whether each is in its band."""
    abs_err = np.abs(np.asarray(errors, dtype=np.float64))
    if not len(abs_err):
        return ErrorFigures(0, float("nan"), float("nan"), float("nan"))
    return ErrorFigures(
        rows=len(abs_err),
        median_abs_error=float(np.median(abs_err)),
        within_band=float(np.mean(np.asarray(inside, dtype=bool))),
        p90_abs_error=float(np.quantile(abs_err, 0.9)),
    )


def judge(
    rows: Sequence[BaselineRow],
    predicted: Sequence[float],
    regimes: Sequence[str],
    tolerances: dict[str, dict[str, float]],
) -> tuple[np.ndarray, np.ndarray]:
    """Each row's relative error and whether it is within the latency band of
    its regime (``predicted`` and ``regimes`` as :func:`predict_rows` gives them)."""
    measured = np.array([r.latency_s for r in rows], dtype=np.float64)
    errors = (np.asarray(predicted, dtype=np.float64) - measured) / measured
    limits = np.array([band(tolerances, str(g))["latency"] for g in regimes])
    return errors, np.abs(errors) <= limits


def per_op(
    rows: Sequence[BaselineRow], errors: np.ndarray, inside: np.ndarray
) -> dict[str, ErrorFigures]:
    """:func:`figures` of each op's rows, ops in name order."""
    out = {}
    for op in sorted({r.op for r in rows}):
        index = [i for i, r in enumerate(rows) if r.op == op]
        out[op] = figures(errors[index], inside[index])
    return out


def cross_validate(
    registry: Any,
    spec: TargetSpec,
    rows: Sequence[BaselineRow],
    params: Sequence[Param],
    tolerances: dict[str, dict[str, float]],
    groups: Sequence[Sequence[int]],
    x_start: np.ndarray | None = None,
    progress: Progress | None = None,
) -> OutOfSample:
    """Refit without each group of ``rows`` (indices into them) and predict
    the group: out-of-sample errors. Each refit starts from ``x_start`` (the
    fit of all the rows, when given). A row in no group is not judged.
    ``progress(done, total)``, when given, is called before the first refit
    and after each."""
    errors = np.full(len(rows), np.nan)
    inside = np.zeros(len(rows), dtype=bool)
    if progress is not None:
        progress(0, len(groups))
    for done, group in enumerate(groups, 1):
        held = set(group)
        rest = [r for j, r in enumerate(rows) if j not in held]
        fit = fit_latency(registry, spec, rest, params, x_start=x_start)
        model = apply_constants(spec, fit.values, "cv")
        out = [rows[i] for i in group]
        latency, terms = predict_rows(registry, model, out)
        err, ok = judge(out, latency, terms["regime"], tolerances)
        errors[list(group)] = err
        inside[list(group)] = ok
        if progress is not None:
            progress(done, len(groups))
    judged = ~np.isnan(errors)
    kept = [r for r, j in zip(rows, judged, strict=True) if j]
    whole = figures(errors[judged], inside[judged])
    return OutOfSample(
        rows=whole.rows,
        median_abs_error=whole.median_abs_error,
        within_band=whole.within_band,
        p90_abs_error=whole.p90_abs_error,
        groups=len(groups),
        per_op=per_op(kept, errors[judged], inside[judged]),
    )


def leave_one_out(
    registry: Any,
    spec: TargetSpec,
    fit: Fit,
    tolerances: dict[str, dict[str, float]],
    progress: Progress | None = None,
) -> OutOfSample:
    """Refit ``fit``'s rows without each row and predict it (see module doc);
    each refit starts from ``fit``."""
    groups = [[i] for i in range(len(fit.rows))]
    return cross_validate(registry, spec, fit.rows, fit.params, tolerances, groups, fit.x, progress)


def families(rows: Sequence[BaselineRow]) -> list[list[int]]:
    """The indices of ``rows`` in each family (:func:`family_of`), families in order."""
    found: dict[tuple[str, str, tuple[int, ...]], list[int]] = {}
    for i, r in enumerate(rows):
        found.setdefault(family_of(r), []).append(i)
    return [found[k] for k in sorted(found)]


def grouped_cv(
    registry: Any,
    spec: TargetSpec,
    fit: Fit,
    tolerances: dict[str, dict[str, float]],
    progress: Progress | None = None,
) -> OutOfSample:
    """Refit ``fit``'s rows without each family and predict it (see module
    doc); each refit starts from ``fit``. A family that holds every row of
    its (op, dtype) is still left out: the fit then has to predict a dtype
    from the others, as it would for a new one."""
    groups = families(fit.rows)
    return cross_validate(registry, spec, fit.rows, fit.params, tolerances, groups, fit.x, progress)


def much_worse(out_of_sample_median: float, in_sample_median: float) -> bool:
    """Whether an out-of-sample median |error| (grouped CV's, a validation
    set's) is much worse than in sample: above :data:`GROUPED_WARN_RATIO`
    times it, and above :data:`GROUPED_WARN_FLOOR`."""
    limit = max(GROUPED_WARN_RATIO * in_sample_median, GROUPED_WARN_FLOOR)
    return out_of_sample_median > limit


def grouped_warning(in_sample_median: float, grouped: OutOfSample | None) -> str | None:
    """A line when grouped CV is much worse than in sample (None otherwise)."""
    if grouped is None or not grouped.rows:
        return None
    if not much_worse(grouped.median_abs_error, in_sample_median):
        return None
    return (
        f"warning: grouped cross-validation (median |error| {grouped.median_abs_error:.1%}) "
        f"is much worse than in sample ({in_sample_median:.1%}): the constants explain the "
        "families they saw better than ones they did not; trust the grouped figure"
    )
