"""What the harness decides of a block of baseline rows before and beside
its prediction, column-wise: which rows are excluded and why, the
plausibility flags of each row (:mod:`graphsval_core.model.plausibility`),
and why a row's energy is not judged.

Per row the answers are those of the rules in the harness's module doc;
they are computed once per distinct value of a text column (a note, a
verdict, a ``suspect`` column) and once per batch of numbers, never with a
Python object per row: a row with no flag shares one empty tuple.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from graphsval_core.datamodel.op import OpSpec
from graphsval_core.datamodel.target import TargetSpec
from graphsval_core.files.baseline import short_window_note
from graphsval_core.files.baseline_block import RowBlock
from graphsval_core.files.baseline_rows import BaselineFileError
from graphsval_core.model.plausibility import (
    BANDWIDTH_MARGIN,
    ENERGY,
    LATENCY,
    PEAK_MARGIN,
    POWER_MARGIN,
    ROUNDS_COLUMN,
    SLOW_FACTOR,
    SUSPECT_COLUMN,
    Flag,
    SuspectFormatError,
    check_batch,
    merge,
    modes_flags,
    parse_suspect,
    ratios,
    suspect_of,
)
from graphsval_core.validate.measured import no_silicon

NO_FLAGS: tuple[Flag, ...] = ()


def per_value(column: np.ndarray, answer: Callable[[Any], Any]) -> np.ndarray:
    """``answer`` of each value of an object column, computed once per distinct value."""
    values = column.tolist()
    out = np.empty(len(values), dtype=object)
    distinct = dict.fromkeys(values)
    if len(distinct) <= 1:
        out.fill(answer(values[0]) if values else None)
        return out
    for value in distinct:
        distinct[value] = answer(value)
    return np.fromiter(map(distinct.__getitem__, values), dtype=object, count=len(values))


def reasons(
    rows: RowBlock, target: TargetSpec, op: OpSpec, dtype: str, where: str = "baseline"
) -> np.ndarray:
    """Why each row of one (target, op, dtype) group is excluded (None: it
    is judged): its capture failed, its correctness check failed, or the
    target has no such dtype. A shape with the wrong number of dims for its
    op is no capture's: it raises :class:`BaselineFileError` naming ``where``
    (the file) and the row's line, as calibrate does, rather than being
    excluded beside a verdict that could still say PASSED."""
    if target.ground_truth == "consistency_only" and len(rows):  # no silicon to have measured
        raise BaselineFileError(
            f"{where}:{rows.line[0]}: {no_silicon(target.key)}; `graphsval check` judges it"
        )
    wrong = np.flatnonzero(rows.ndims != len(op.dims))
    if wrong.size:
        i = int(wrong[0])
        raise BaselineFileError(
            f"{where}:{rows.line[i]}: {op.dims_mismatch(rows.shape[i], int(rows.ndims[i]))}"
        )
    out = np.full(len(rows), None, dtype=object)
    failed = np.isnan(rows.latency_s)
    if failed.any():
        out[failed] = per_value(
            rows.notes[failed], lambda note: f"capture failed: {note or 'no latency'}"
        )
    verdict = rows.extra("verdict")
    if verdict is not None:
        bad = per_value(verdict, lambda v: v.strip().upper() == "FAIL").astype(bool) & ~failed
        out[bad] = "correctness check failed"
    open_ = out == None  # noqa: E711
    if dtype not in target.dtypes:
        out[open_] = f"{target.key} has no {dtype}"
    return out


def flags(sheet: TargetSpec, op: OpSpec, rows: RowBlock, dtype: str, where: str) -> np.ndarray:
    """The plausibility flags of each row (rows with a latency and the op's
    dims; ``sheet`` the uncalibrated spec): its ``suspect`` column's, its
    rounds' (two modes), then those of the checks, each once, as
    ``row_flags`` gives them. A malformed column raises
    :class:`SuspectFormatError` naming ``where`` (the file) and the row's
    line."""
    n = len(rows)
    out = np.empty(n, dtype=object)
    out.fill(NO_FLAGS)
    own = np.zeros(n, dtype=bool)
    column = rows.extra(SUSPECT_COLUMN)
    if column is not None:
        for text in dict.fromkeys(column.tolist()):
            try:
                parsed = parse_suspect(text)
            except SuspectFormatError as exc:
                line = rows.line[np.flatnonzero(column == text)[0]]
                raise SuspectFormatError(f"{where}:{line}: {exc}") from None
            if parsed:
                mine = column == text
                out[mine] = _same(parsed, int(mine.sum()))
                own |= mine
    rounds = rows.extra(ROUNDS_COLUMN)
    if rounds is not None:  # rounds in two modes (files captured before the capture said so)
        for i in np.flatnonzero(~np.isnan(rows.latency_s) & (rounds != "")).tolist():
            found = modes_flags(rounds[i], out[i])
            if found:
                out[i] = merge(out[i], found)
    if dtype not in sheet.peak_ops_per_s or not n:
        return out
    shapes = rows.dims_of(len(op.dims))
    r = ratios(sheet, op, shapes, dtype, rows.latency_s, rows.energy_j)
    beyond = (
        (r.compute > PEAK_MARGIN)
        | (r.bandwidth > BANDWIDTH_MARGIN)
        | (r.slowness > SLOW_FACTOR)
        | (r.power > POWER_MARGIN)
    )
    index = np.flatnonzero(beyond | own)  # a row's own flags are merged (each once) too
    if index.size:
        found = check_batch(
            sheet, op, shapes[index], dtype, rows.latency_s[index], rows.energy_j[index]
        )
        merged = [merge(out[i], f) for i, f in zip(index.tolist(), found, strict=True)]
        out[index] = _tuples(merged)
    return out


def _same(value: Any, n: int) -> np.ndarray:
    """``n`` times ``value`` (a tuple too) as an object array."""
    out = np.empty(n, dtype=object)
    out.fill(value)
    return out


def _tuples(values: Sequence[tuple[Flag, ...]]) -> np.ndarray:
    return np.fromiter(values, dtype=object, count=len(values))


def has(flags_of: np.ndarray, quantity: str) -> np.ndarray:
    """Mask of the rows with a flag of ``quantity``."""
    out = np.zeros(len(flags_of), dtype=bool)
    for i in np.flatnonzero(flags_of.astype(bool)).tolist():
        out[i] = bool(suspect_of(flags_of[i], quantity))
    return out


def energy_skips(rows: RowBlock, flags_of: np.ndarray) -> np.ndarray:
    """Why each row's energy is not judged (None: it is): no energy (with
    the note when it speaks of energy), a window below the sensor's
    resolution or averaging period, or a suspect energy or latency."""

    def why(note: str) -> tuple[str, bool]:
        text = note.strip()
        return (
            "no energy" + (f" ({text})" if text and "energy" in text.lower() else ""),
            short_window_note(note),
        )

    answers = per_value(rows.notes, why)
    out = np.empty(len(rows), dtype=object)
    out.fill(None)
    missing = np.isnan(rows.energy_j)
    short = np.fromiter((a[1] for a in answers), bool, len(rows))
    out[missing] = [a[0] for a in answers[missing]]
    out[~missing & short] = "window below the sensor's resolution or averaging period"
    for i in np.flatnonzero(~missing & ~short & flags_of.astype(bool)).tolist():
        energy, latency = suspect_of(flags_of[i], ENERGY), suspect_of(flags_of[i], LATENCY)
        if energy:
            out[i] = "energy suspect: " + "; ".join(f.reason for f in energy)
        elif latency:
            out[i] = "latency suspect: the energy per call comes from the same timed window"
    return out
