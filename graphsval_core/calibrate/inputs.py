"""The rows a calibration reads: every row of the target in the given
baselines, checked against the registry's ops, and the rows it must refuse.

Usable rows have a latency, did not fail their correctness check and are of
a dtype the target has. A usable row is refused when its file says it is
validation data (purpose column or file-name suffix), or when its (op,
shape, dtype) is in one of the project's validation sweeps (a row no fit
would use is not: it excuses no --allow-validation-rows).

A usable row with a physically implausible quantity (its ``suspect`` column,
or :func:`~graphsval_core.model.plausibility.row_flags` against the
uncalibrated spec) is kept, with its flags, so that each fit can skip what it
cannot trust.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from attrs import evolve, frozen

from graphsval_core.datamodel.errors import warn_input
from graphsval_core.datamodel.target import TargetSpec
from graphsval_core.files.baseline import (
    Baseline,
    BaselineFileError,
    BaselineRow,
    read_baseline_file,
)
from graphsval_core.files.baseline_rows import measurement
from graphsval_core.model.plausibility import LATENCY, Flag, format_suspect, row_flags
from graphsval_core.plugins.registry import UnknownNameError


@frozen
class SuspectRow:
    """A usable row with a physically implausible quantity, and where it is."""

    row: BaselineRow
    file: str
    flags: tuple[Flag, ...]

    @property
    def latency(self) -> bool:
        """Its latency is suspect (the latency fit skips it)."""
        return any(f.quantity == LATENCY for f in self.flags)

    def text(self) -> str:
        """``file:line: op shape dtype: latency: why; energy: why``."""
        r = self.row
        return f"{self.file}:{r.line}: {r.op} {r.shape} {r.dtype}: {format_suspect(self.flags)}"


@frozen
class CalibrationRows:
    """What the baselines give a calibration of one target: the usable rows
    (in file order), each baseline with its SHA-256, one line per row
    refused as validation data (``file:line: why``), and the usable rows
    with a suspect quantity."""

    rows: tuple[BaselineRow, ...]
    sources: tuple[tuple[Baseline, str], ...]
    refused: tuple[str, ...]
    suspect: tuple[SuspectRow, ...] = ()

    @property
    def trusted(self) -> list[BaselineRow]:
        """The usable rows whose latency is not suspect (those the latency fit
        takes), in file order."""
        suspect = {id(s.row) for s in self.suspect if s.latency}
        return [r for r in self.rows if id(r) not in suspect]


def unlabelled_warnings(found: CalibrationRows) -> tuple[str, ...]:
    """One line per baseline that says nothing of its purpose (no purpose
    column, no ``.calibration``/``.validation`` suffix) yet gave rows: every
    row of it is fitted, and only the project's validation sweeps could have
    kept a validation row out."""
    return tuple(
        f"warning: {baseline.path}: no purpose column or .calibration/.validation suffix: "
        "every row of it is fitted (none is in a validation sweep of the project); name a "
        "calibration file so, or give it a purpose column"
        for baseline, _digest in found.sources
        if baseline.purpose_source == "none" and baseline.rows
    )


def validation_shapes() -> set[tuple[str, tuple[int, ...], str]]:
    """(op, shape, dtype) of every entry of the project's validation sweeps."""
    from graphsval_core.sweep.labels import load_shipped

    out = set()
    for sweep in load_shipped(None).values():
        if sweep.purpose == "validation":
            out |= {(e.op or sweep.op, e.shape, e.dtype) for e in sweep.entries}
    return out


def _name_other_targets(key: str, others: dict[str, Counter[str]], any_mine: bool) -> None:
    """Rows of other targets are left out, never silently: one warning line
    per file, or, when no row of any file is of ``key``, an error naming the
    files and the targets they hold."""

    def held(counts: Counter[str]) -> str:
        return ", ".join(f"{n} of {hw}" for hw, n in sorted(counts.items()))

    if not any_mine and others:
        what = "; ".join(f"{path} holds {held(c)}" for path, c in others.items())
        raise BaselineFileError(
            f"--hw {key}: no row of the given baseline(s) is of {key} ({what}); "
            "calibrate a target on its own rows"
        )
    for path, counts in others.items():
        warn_input(
            f"{path}: {sum(counts.values())} row(s) of other targets left out ({held(counts)}); "
            f"calibrating {key}"
        )


def _refuse_unknown_targets(
    registry: Any, path: str, rows: Sequence[BaselineRow], unknown: set[str]
) -> None:
    """A row of another registered target is left out (a file may hold
    several), but one whose hardware names no registered target is a typo
    (or a target nobody installed): one line naming the file, the first such
    row and the close keys, as an unknown op is."""
    if not unknown:
        return
    first = next(r for r in rows if r.hardware in unknown)
    try:
        registry.target(first.hardware)
    except UnknownNameError as exc:
        raise BaselineFileError(f"{path}:{first.line}: {exc}") from None


def _refuse_remeasured(
    path: str, usable: Sequence[BaselineRow], fitted: dict[tuple[Any, ...], tuple[str, BaselineRow]]
) -> None:
    """A shape fitted from two files with other values would weigh twice in
    the fit (and leave-one-out would hold it out and keep it): one line
    naming both rows, as within one file; else each row of ``usable`` is
    recorded in ``fitted`` (exact copies were read once before)."""
    for r in usable:
        shape = (r.op, r.dims, r.dtype)
        if shape not in fitted:
            fitted[shape] = (path, r)
            continue
        first_path, first = fitted[shape]
        notes_only = measurement(r)[:7] == measurement(first)[:7]
        other = "differing only in its notes" if notes_only else "with other values"
        raise BaselineFileError(
            f"{path}:{r.line}: {r.hardware} {r.op} {r.shape} {r.dtype} was measured in "
            f"{first_path}:{first.line} already, {other}; keep one row per shape"
        )


def _refuse_dtypes(path: str, rows: Sequence[BaselineRow], spec: TargetSpec) -> None:
    """A calibration row of a dtype the target does not run is no measurement
    of it (capture never writes one): one line naming the file and first row,
    not a fit of the rest (a validation set leaves such rows out, counted)."""
    wrong = [r for r in rows if r.dtype not in spec.dtypes]
    if wrong:
        more = f" (and {len(wrong) - 1} more row(s) of dtypes it lacks)" if len(wrong) > 1 else ""
        raise BaselineFileError(
            f"{path}:{wrong[0].line}: dtype {wrong[0].dtype}, which {spec.key} does not run "
            f"(it has {', '.join(spec.dtypes)}){more}; remove such rows or calibrate a "
            "target that runs the dtype"
        )


def _unfitted(row: BaselineRow, spec: TargetSpec) -> str:
    """Why no fit uses ``row`` (empty: it is used): no latency (a failed
    shape), a failed numerical verdict, or a dtype the target does not run."""
    if row.dtype not in spec.dtypes:
        return f"dtype {row.dtype}, which {spec.key} does not run"
    if row.extras.get("verdict", "") == "FAIL":
        return "a failed numerical verdict"
    if not row.latency_s:
        return "no latency: a failed shape"
    return ""


def _name_unfitted(path: str, rows: Sequence[tuple[BaselineRow, str]]) -> None:
    """Rows of the target that no fit uses (each with its reason) are left
    out, never silently: one warning line per file and reason, naming the
    first lines."""
    by_reason: dict[str, list[int]] = {}
    for r, why in rows:
        by_reason.setdefault(why, []).append(r.line)
    for why, lines in by_reason.items():
        shown = ", ".join(str(n) for n in lines[:5]) + (
            f" and {len(lines) - 5} more" if len(lines) > 5 else ""
        )
        word = "line" if len(lines) == 1 else "lines"
        warn_input(f"{path}: {len(lines)} row(s) left out ({why}): {word} {shown}")


def read_rows(
    registry: Any,
    spec: TargetSpec,
    paths: Sequence[Any],
    read: Callable[[Any], tuple[Baseline, str]] = read_baseline_file,
    name_unfitted: bool = True,
    one_per_shape: bool = True,
) -> CalibrationRows:
    """The rows of ``spec``'s target in the baselines at ``paths``.

    A file named twice (or through a link) is read once, and a measurement
    copied into another file (other line ends, a BOM) counts once, each with
    a warning. Raises :class:`BaselineFileError` for a file that cannot be
    read or parsed, and for a row of an unknown op or with the wrong number
    of dims (naming file and line). ``read`` parses a file (a caller that has
    read a pipe already hands its parse on: a pipe is read once). Rows no
    fit uses (no latency, a failed verdict) are left out with a warning per
    file and reason, and a row of a dtype the target does not run raises
    :class:`BaselineFileError` naming it, unless not ``name_unfitted`` (a
    caller that counts them itself, all three left out: a validation set).
    A row of a target nobody registers (a typo of a key) raises
    :class:`BaselineFileError` naming it and the close keys; rows of other
    registered targets are left out with a warning. A shape a usable row of
    an earlier file measured with other values (another latency, or only
    other notes) raises :class:`BaselineFileError` naming both rows, as a
    shape measured twice in one file does, unless not ``one_per_shape`` (a
    caller that keeps the first itself: a validation set with its
    recapture)."""
    held_out = validation_shapes()
    rows: list[BaselineRow] = []
    sources: list[tuple[Baseline, str]] = []
    refused: list[str] = []
    suspect: list[SuspectRow] = []
    others: dict[str, Counter[str]] = {}
    seen: dict[tuple[Any, ...], str] = {}  # each measurement, and the file it came from
    files: dict[str, str] = {}  # each file read (its real path), as first named
    known = {*registry.targets(), *registry.workspace_errors}  # a broken one is still a target
    fitted: dict[tuple[Any, ...], tuple[str, BaselineRow]] = {}  # each shape fitted, and where
    for path in paths:
        if isinstance(path, str | os.PathLike):  # a file named twice (or a link to it): once
            real = os.path.realpath(path)
            if real in files:
                warn_input(f"{path}: the file {files[real]} again; read once")
                continue
            files[real] = str(path)
        baseline, digest = read(path)  # one line for unreadable or non-UTF-8
        idents, name = [measurement(r) for r in baseline.rows], str(path)
        again = [seen.get(i, name) != name for i in idents]
        if any(again):  # a copy of another file's rows (other line ends, a BOM): fitted once
            first = seen[idents[again.index(True)]]
            warn_input(
                f"{path}: {sum(again)} of its {len(baseline.rows)} row(s) are {first}'s "
                "measurements again; read once"
            )
            kept = tuple(r for r, dup in zip(baseline.rows, again, strict=True) if not dup)
            baseline = evolve(baseline, rows=kept)
        for i in idents:
            seen.setdefault(i, name)
        mine = [r for r in baseline.rows if r.hardware == spec.key]
        other = Counter(r.hardware for r in baseline.rows if r.hardware != spec.key)
        _refuse_unknown_targets(registry, str(path), baseline.rows, set(other) - known)
        if other:
            others[str(path)] = other
        for r in mine:
            try:
                op_spec = registry.op(r.op)
            except UnknownNameError as exc:
                raise BaselineFileError(f"{path}:{r.line}: {exc}") from None
            if len(r.dims) != len(op_spec.dims):
                raise BaselineFileError(
                    f"{path}:{r.line}: {op_spec.dims_mismatch(r.shape, len(r.dims))}"
                )
        if name_unfitted:
            _refuse_dtypes(str(path), mine, spec)
        why = [_unfitted(r, spec) for r in mine]
        usable = [r for r, w in zip(mine, why, strict=True) if not w]
        if name_unfitted:
            _name_unfitted(str(path), [(r, w) for r, w in zip(mine, why, strict=True) if w])
        for r in usable:  # a row no fit would use (no latency, failed) excuses nothing
            if r.purpose == "validation":
                said = {"column": "its purpose column", "suffix": "the file's name"}
                why = said.get(baseline.purpose_source, baseline.purpose_source)
                refused.append(f"{path}:{r.line}: a validation row ({why} says so)")
            elif (r.op, r.dims, r.dtype) in held_out:
                refused.append(
                    f"{path}:{r.line}: {r.op} {r.shape} {r.dtype} is in a validation "
                    "sweep of the project"
                )
        if one_per_shape:
            _refuse_remeasured(str(path), usable, fitted)
        flags = row_flags(spec, registry.op, usable, str(path))
        suspect += [SuspectRow(r, str(path), f) for r, f in zip(usable, flags, strict=True) if f]
        rows += usable
        sources.append((baseline, digest))
    _name_other_targets(spec.key, others, bool(rows or refused))
    return CalibrationRows(tuple(rows), tuple(sources), tuple(refused), tuple(suspect))
