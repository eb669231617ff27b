"""A calibration judged on its target's validation set: rows held out for
validation, which no fit ever sees, predicted by the fitted constants.

Grouped cross-validation leaves families of the calibration rows out, but it
cannot leave out a family the calibration rows never held, so it does not
predict the error on unseen shapes to better than a few points; a validation
set captured with shapes of its own does. :func:`held_out_rows` finds the
target's validation rows (the installed and workspace baselines, or the
files a user names) and reads them as calibrate reads its own rows;
:func:`judge_validation` gives the fitted model's figures on them: per op
the median |error|, the share within each row's regime band and the share
within 10%.

Left out, and counted: a row with no latency (never measured), one with a
suspect latency, or one that failed its
correctness check or is of a dtype the target does not run (as ``validate``
leaves them out); a shape another file measured too (each shape is judged
once, as first read: a recapture or an edited copy named beside it); a row
of an op the calibration fitted no row of (the fit says nothing about it);
a row whose (op, shape, dtype) was also fitted (calibrate told to use
validation rows anyway: it is no longer held out).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np
from attrs import field, frozen

from graphsval_core.calibrate.evaluate import ErrorFigures, figures, judge, much_worse, per_op
from graphsval_core.calibrate.inputs import read_rows
from graphsval_core.calibrate.rows import predict_rows
from graphsval_core.datamodel.errors import UserInputError, warn_input
from graphsval_core.datamodel.target import TargetSpec
from graphsval_core.files.baseline import (
    Baseline,
    BaselineFileError,
    BaselineRow,
    is_recapture,
    read_baseline_file,
)
from graphsval_core.plugins.registry import WORKSPACE, Registry

#: The validation figures also give the share of rows within this |error|.
WITHIN = 0.10
#: A validation set much worse than in sample (:func:`much_worse`, as grouped
#: CV is judged) is warned about, but not on fewer rows than this (a few
#: rows' median says little).
VALIDATION_WARN_MIN_ROWS = 10


@frozen
class HeldOut:
    """A target's validation set: its usable rows (each measurement once),
    its files (``(name, sha256)``: the name as given, or as its plugin ships
    it (:func:`file_name`)), where they came from
    ("named", "installed by <plugin>", "the workspace"), whether the user
    named them, and the rows left out: ``suspect`` (a physically implausible
    latency), ``unusable`` (a failed correctness check, or a dtype the
    target does not run), ``repeated`` (a shape another file measured
    too: each shape is judged once, as first read) and ``unmeasured`` (no
    latency: a row whose measurement never finished)."""

    rows: tuple[BaselineRow, ...]
    files: tuple[tuple[str, str], ...]
    origins: tuple[str, ...] = ()
    named: bool = False
    suspect: int = 0
    unusable: int = 0
    repeated: int = 0
    unmeasured: int = 0

    @property
    def total(self) -> int:
        """Every validation row of the target, left out or not."""
        return len(self.rows) + self.suspect + self.unusable + self.repeated + self.unmeasured


@frozen
class ValidationFigures:
    """The fitted model on the validation set ``held``: the rows judged, those
    left out for an op the calibration fitted no row of (``uncalibrated``)
    or for being fitted too (``fitted_too``), the figures over all rows and
    per op (:class:`ErrorFigures`), and the share within :data:`WITHIN` over
    all rows and per op."""

    held: HeldOut
    rows: int
    whole: ErrorFigures
    uncalibrated: int = 0
    fitted_too: int = 0
    per_op: dict[str, ErrorFigures] = field(factory=dict)
    within: float = float("nan")
    within_per_op: dict[str, float] = field(factory=dict)


def _validation_rows(rows: Sequence[BaselineRow], key: str) -> list[BaselineRow]:
    return [r for r in rows if r.hardware == key and r.purpose == "validation" and r.latency_s]


def file_name(item: object) -> str:
    """A file's name as a calibration file records it: no folder (none of
    this machine's), but ``recapture/`` before a recapture's."""
    name = str(item).replace("\\", "/").rsplit("/", 1)[-1]
    return f"recapture/{name}" if is_recapture(str(item)) else name


def _name(item: object, named: bool) -> str:
    """A file's name as calibrate tells it: as given when named, else :func:`file_name`."""
    return str(item) if named else file_name(item)


def _file_key(item: object) -> str:
    """A file's key among those parsed: its real path (a file named twice, or
    through a link, is one), or a plugin's resource as it names itself."""
    return os.path.realpath(item) if isinstance(item, str | os.PathLike) else str(item)


Parsed = dict[str, tuple[Baseline, str]]


def _read_named(key: str, named: Sequence[str], parsed: Parsed) -> None:
    """Each file named, parsed once into ``parsed`` (a pipe can be read only
    once): each must hold a validation row of ``key``, else one line naming
    it; its rows of ``key`` that are not validation rows are left out with a
    warning."""
    for path in named:
        if _file_key(path) in parsed:  # named twice: read_rows says so
            continue
        try:
            parsed[_file_key(path)] = read_baseline_file(path)
        except BaselineFileError as exc:
            raise UserInputError(f"--validation-baseline {exc}") from None
        rows = parsed[_file_key(path)][0].rows
        if not _validation_rows(rows, key):
            kinds = sorted({f"{r.hardware} {r.purpose or '(no purpose)'}" for r in rows})
            raise UserInputError(
                f"--validation-baseline {path}: no validation row of {key} with a latency "
                f"(its rows are {', '.join(kinds) or 'none'}: their hardware and purpose "
                "columns say whose and what they are)"
            )
        other = sum(1 for r in rows if r.hardware == key and r.purpose != "validation")
        if other:
            warn_input(f"{path}: {other} row(s) of {key} that are not validation rows left out")


def _installed_paths(registry: Registry, key: str, parsed: Parsed) -> tuple[list[Any], set[str]]:
    """The installed and workspace baselines holding a validation row of
    ``key`` (recaptures excepted), each parsed into ``parsed``, and where each
    came from."""
    paths: list[Any] = []
    origins: set[str] = set()
    for plugin, item in registry.baseline_files():
        if is_recapture(str(item)):
            continue
        try:
            parsed[_file_key(item)] = read_baseline_file(item)
            baseline = parsed[_file_key(item)][0]
        except BaselineFileError as exc:
            if plugin != WORKSPACE:  # a shipped file that does not parse: its plugin's problem
                continue
            raise UserInputError(  # the user's own capture: as strict as a file named
                f"{exc} (a workspace baseline, read for the validation set of {key}: fix or "
                "remove it, or name the set with --validation-baseline)"
            ) from None
        if _validation_rows(baseline.rows, key):
            paths.append(item)
            origins.add("the workspace" if plugin == WORKSPACE else f"installed by {plugin}")
    return paths, origins


def held_out_rows(registry: Registry, spec: TargetSpec, named: Sequence[str] = ()) -> HeldOut:
    """The validation set of ``spec``'s target (the datasheet spec, against
    which a latency is judged suspect, as calibrate judges its own rows): the
    validation rows with a latency in the files ``named`` (each must hold
    some, else :class:`UserInputError` naming it), or, when none is named,
    in every installed and workspace baseline (recaptures excepted: they
    measure the same shapes again). The files are read as calibrate reads
    its own: a measurement in two files (a copy, a file named twice) counts
    once, with a warning; a row of an unknown op or of the wrong number of
    dims is an error naming file and line; rows of other targets are left
    out with a warning. A shipped file that does not parse is its plugin's
    problem and is skipped; a workspace one is an error."""
    key = spec.key
    parsed: Parsed = {}  # each file parsed once, here, and handed on to read_rows
    if named:
        _read_named(key, named, parsed)
        paths, origins = list(named), {"named"}
    else:
        paths, origins = _installed_paths(registry, key, parsed)
    if not paths:
        return HeldOut((), (), named=bool(named))
    try:
        found = read_rows(  # what it leaves out, the validation set's line counts
            registry,
            spec,
            paths,
            lambda item: parsed[_file_key(item)],
            name_unfitted=False,
            one_per_shape=False,  # a shape in two files (a recapture): once, below
        )
    except BaselineFileError as exc:
        raise UserInputError(f"--validation-baseline {exc}" if named else str(exc)) from None
    every = [r for b, _ in found.sources for r in _validation_rows(b.rows, key)]
    mine = [r for b, _ in found.sources for r in b.rows if r.hardware == key]
    unmeasured = sum(1 for r in mine if r.purpose == "validation" and not r.latency_s)
    usable = [r for r in found.rows if r.purpose == "validation"]
    trusted = [r for r in found.trusted if r.purpose == "validation"]
    # a shape measured in two files (a recapture, an edited copy): once, as first read
    first = {(r.op, r.dims, r.dtype): r for r in reversed(trusted)}
    rows = [r for r in trusted if first[(r.op, r.dims, r.dtype)] is r]
    repeated = len(trusted) - len(rows)
    if repeated:
        warn_input(
            f"the validation set of {key}: {repeated} shape(s) measured in more than one "
            "file; each judged once, as first read"
        )
    return HeldOut(
        tuple(rows),
        tuple((_name(b.path, bool(named)), digest) for b, digest in found.sources),
        tuple(sorted(origins)),
        named=bool(named),
        suspect=len(usable) - len(trusted),
        unusable=len(every) - len(usable),
        repeated=repeated,
        unmeasured=unmeasured,
    )


def judge_validation(
    registry: Registry,
    fitted: TargetSpec,
    held: HeldOut,
    fitted_rows: Sequence[BaselineRow],
    tolerances: dict[str, dict[str, float]],
) -> ValidationFigures | None:
    """The ``fitted`` spec's figures on ``held`` (see module doc), judging
    the rows of the ops ``fitted_rows`` hold that are not among them; None
    when the set holds no row (``rows`` 0 when none is left to judge)."""
    if not held.total:
        return None
    ops = {r.op for r in fitted_rows}
    seen = {(r.op, r.dims, r.dtype) for r in fitted_rows}
    calibrated = [r for r in held.rows if r.op in ops]
    rows = [r for r in calibrated if (r.op, r.dims, r.dtype) not in seen]
    errors, inside = np.zeros(0), np.zeros(0, dtype=bool)
    if rows:
        predicted, terms = predict_rows(registry, fitted, rows)
        errors, inside = judge(rows, predicted, terms["regime"], tolerances)
    close = np.abs(errors) <= WITHIN  # the share within 10%, as a band of its own
    return ValidationFigures(
        held=held,
        rows=len(rows),
        whole=figures(errors, inside),
        uncalibrated=len(held.rows) - len(calibrated),
        fitted_too=len(calibrated) - len(rows),
        per_op=per_op(rows, errors, inside),
        within=figures(errors, close).within_band,
        within_per_op={op: f.within_band for op, f in per_op(rows, errors, close).items()},
    )


def unjudged_warning(figures: ValidationFigures | None) -> str | None:
    """A line when a validation set was found but judged none of its rows
    (each left out for a reason the source line counts): the fit then has no
    validation figure, which a figure-less report would leave unsaid."""
    if figures is None or figures.rows:
        return None
    return (
        f"warning: the validation set judged none of its {figures.held.total} row(s) "
        "(the 'left out' counts say why): this fit has no validation figure; name a "
        "validation set of the ops and dtypes it fits (--validation-baseline CSV)"
    )


def validation_warning(in_sample_median: float, figures: ValidationFigures | None) -> str | None:
    """A line when the validation set is much worse than in sample (the
    median |error| of the fitted rows of the ops it judges; None otherwise,
    and on fewer than :data:`VALIDATION_WARN_MIN_ROWS` rows)."""
    if figures is None or figures.rows < VALIDATION_WARN_MIN_ROWS:
        return None
    if not much_worse(figures.whole.median_abs_error, in_sample_median):
        return None
    return (
        f"warning: the validation set (median |error| {figures.whole.median_abs_error:.1%}, "
        f"{figures.rows} rows never fitted) is much worse than in sample "
        f"({in_sample_median:.1%}): the constants do not carry to shapes the calibration "
        "rows did not hold; trust the validation figure"
    )
