"""A calibration judged on its target's validation set: rows held out for
validation, which no fit ever sees, predicted by the fitted constants.

Grouped cross-validation leaves families of the calibration rows out, but it
cannot leave out a family the calibration rows never held, so it does not
predict the error on unseen shapes to better than a few points; a validation
set captured with shapes of its own does. :func:`held_out_rows` finds the
target's validation rows (the installed and workspace baselines, or the
files a user names), :func:`judge_validation` gives the fitted model's
figures on them: per op the median |error|, the share within each row's
regime band and the share within 10%. A validation row whose (op, shape,
dtype) was also fitted (calibrate told to use validation rows anyway) is
left out and counted: it is no longer held out.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from attrs import field, frozen

from graphsval_core.calibrate.evaluate import ErrorFigures, figures, judge, per_op
from graphsval_core.calibrate.rows import predict_rows
from graphsval_core.datamodel.errors import UserInputError
from graphsval_core.datamodel.target import TargetSpec
from graphsval_core.files.baseline import (
    BaselineFileError,
    BaselineRow,
    is_recapture,
    read_baseline_file,
)
from graphsval_core.plugins.registry import WORKSPACE, Registry

#: The validation figures also give the share of rows within this |error|.
WITHIN = 0.10
#: A validation median this many times the in-sample one is warned about ...
VALIDATION_WARN_RATIO = 1.5
#: ... but never below this median |error|, whatever the ratio.
VALIDATION_WARN_FLOOR = 0.05


@frozen
class HeldOut:
    """A target's validation rows and the files they came from (names as
    given, or as their plugin ships them); ``named`` when the user named them."""

    rows: tuple[BaselineRow, ...]
    files: tuple[str, ...]
    named: bool = False


@frozen
class ValidationFigures:
    """The fitted model on the validation set: the files, the rows judged,
    the rows left out for being fitted too, those it cannot judge, the figures over all rows and
    per op (:class:`ErrorFigures`), and the share within :data:`WITHIN`
    over all rows and per op."""

    files: tuple[str, ...]
    rows: int
    left_out: int
    whole: ErrorFigures
    unjudged: int = 0
    per_op: dict[str, ErrorFigures] = field(factory=dict)
    within: float = float("nan")
    within_per_op: dict[str, float] = field(factory=dict)


def _validation_rows(rows: Sequence[BaselineRow], key: str) -> list[BaselineRow]:
    return [r for r in rows if r.hardware == key and r.purpose == "validation" and r.latency_s]


def held_out_rows(registry: Registry, key: str, named: Sequence[str] = ()) -> HeldOut:
    """The validation rows of target ``key`` with a measured latency: from the
    files ``named`` (each must hold some, else :class:`UserInputError` naming
    it), or else from every installed and workspace baseline (recaptures
    excepted: they measure the same shapes again). A shipped file that does not
    parse is its plugin's problem and is skipped; a workspace one is an error."""
    if named:
        rows: list[BaselineRow] = []
        for path in named:
            try:
                baseline = read_baseline_file(path)[0]
            except BaselineFileError as exc:
                raise UserInputError(f"--validation-baseline {exc}") from None
            mine = _validation_rows(baseline.rows, key)
            if not mine:
                raise UserInputError(
                    f"--validation-baseline {path}: no validation row of {key} with a "
                    "latency (its rows' target and purpose columns say whose and what they are)"
                )
            rows += mine
        return HeldOut(tuple(rows), tuple(str(p) for p in named), named=True)
    rows, files = [], []
    for plugin, item in registry.baseline_files():
        if is_recapture(str(item)):
            continue
        try:
            baseline = read_baseline_file(item)[0]
        except BaselineFileError as exc:
            if plugin == WORKSPACE:  # the user's own capture: as strict as a file named
                raise UserInputError(str(exc)) from None
            continue
        mine = _validation_rows(baseline.rows, key)
        if mine:
            rows += mine
            files.append(str(baseline.path).replace("\\", "/").rsplit("/", 1)[-1])
    return HeldOut(tuple(rows), tuple(files))


def _predictable(registry: Registry, spec: TargetSpec, row: BaselineRow) -> bool:
    try:
        op = registry.op(row.op)
    except LookupError:
        return False
    return len(row.dims) == len(op.dims) and row.dtype in spec.peak_ops_per_s


def judge_validation(
    registry: Registry,
    fitted: TargetSpec,
    held: HeldOut,
    fitted_rows: Sequence[BaselineRow],
    tolerances: dict[str, dict[str, float]],
) -> ValidationFigures | None:
    """The ``fitted`` spec's figures on ``held`` (see module doc); None
    when it holds no row (``rows`` 0 when none is left to judge). A row of
    an op nobody registers, of another number of dims than its op takes, or
    of a dtype the target does not run is not judged (counted in
    ``unjudged``), as ``validate`` excludes it."""
    seen = {(r.op, r.shape, r.dtype) for r in fitted_rows}
    fresh = [r for r in held.rows if (r.op, r.shape, r.dtype) not in seen]
    left_out = len(held.rows) - len(fresh)
    rows = [r for r in fresh if _predictable(registry, fitted, r)]
    if not held.rows:
        return None
    errors, inside = np.zeros(0), np.zeros(0, dtype=bool)
    if rows:
        predicted, terms = predict_rows(registry, fitted, rows)
        errors, inside = judge(rows, predicted, terms["regime"], tolerances)
    close = np.abs(errors) <= WITHIN
    ops = per_op(rows, errors, inside)
    within_per_op = {
        op: float(np.mean(close[[i for i, r in enumerate(rows) if r.op == op]])) for op in ops
    }
    return ValidationFigures(
        files=held.files,
        rows=len(rows),
        left_out=left_out,
        unjudged=len(fresh) - len(rows),
        whole=figures(errors, inside),
        per_op=ops,
        within=float(np.mean(close)) if rows else float("nan"),
        within_per_op=within_per_op,
    )


def validation_warning(in_sample_median: float, figures: ValidationFigures | None) -> str | None:
    """A line when the validation set is much worse than in sample (the
    median |error| of the fitted rows of the ops it holds; None otherwise)."""
    if figures is None or not figures.rows:
        return None
    limit = max(VALIDATION_WARN_RATIO * in_sample_median, VALIDATION_WARN_FLOOR)
    if figures.whole.median_abs_error <= limit:
        return None
    return (
        f"warning: the validation set (median |error| {figures.whole.median_abs_error:.1%}, "
        f"{figures.rows} rows never fitted) is much worse than in sample "
        f"({in_sample_median:.1%}): the constants do not carry to shapes the calibration "
        "rows did not hold; trust the validation figure"
    )
