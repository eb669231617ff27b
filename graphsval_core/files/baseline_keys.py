"""Which shapes a baseline file measured already, across blocks of rows.

A shape (target, op, dims, dtype, purpose) is measured once per file: a row
repeating an earlier one exactly is read once, a row of the same shape with
other values is an error (:mod:`graphsval_core.files.baseline`). A large
file is read a block at a time, so the shapes seen so far are kept as
hashes, not rows: per row a 64-bit hash of its shape with a 32-bit check of
it (96 bits: two shapes of a file of millions of rows agree on both with a
chance far below a disk error), a 64-bit hash of its values with its notes
(a repeat agreeing on it is a copy, read once), a 64-bit one of its values
but its notes (only to tell a repeat differing only in its notes so), and
its line, in a few sorted runs of numpy arrays (about 32 bytes a row).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from attrs import frozen

from graphsval_core.files.baseline_block import RowBlock

_M1 = np.uint64(0x9E3779B97F4A7C15)
_M2 = np.uint64(0xBF58476D1CE4E5B9)
_M3 = np.uint64(0x94D049BB133111EB)


def _mix(h: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``h`` with ``x`` folded in (splitmix64's finaliser; uint64, wrapping)."""
    with np.errstate(over="ignore"):
        z = (h ^ x.astype(np.uint64, copy=False)) * _M1
        z = (z ^ (z >> np.uint64(30))) * _M2
        z = (z ^ (z >> np.uint64(27))) * _M3
        return z ^ (z >> np.uint64(31))


def _text_hash(column: np.ndarray, seed: int) -> np.ndarray:
    """A hash of each string (None too) of an object column, for this process."""
    values = column.tolist()
    distinct = set(values)
    if len(distinct) == 1:
        return np.full(len(values), hash((seed, values[0])) & 0xFFFFFFFFFFFFFFFF, np.uint64)
    codes = {v: hash((seed, v)) & 0xFFFFFFFFFFFFFFFF for v in distinct}
    return np.fromiter(map(codes.__getitem__, values), np.uint64, len(values))


def shape_hashes(block: RowBlock, seed: int = 0, purpose: bool = True) -> np.ndarray:
    """A hash of each row's shape: target, op, dims, dtype and (with
    ``purpose``) purpose."""
    h = np.full(len(block), np.uint64(seed), dtype=np.uint64)
    columns = (block.hardware, block.op, block.dtype) + ((block.purpose,) if purpose else ())
    for column in columns:
        h = _mix(h, _text_hash(column, seed))
    ndims = block.ndims
    h = _mix(h, ndims)
    for k in np.unique(ndims).tolist():
        rows = np.flatnonzero(ndims == k)
        dims = block.take(rows).dims_of(k) if len(rows) != len(block) else block.dims_of(k)
        part = h[rows]
        for j in range(k):
            part = _mix(part, dims[:, j])
        h[rows] = part
    return h


def value_hashes(block: RowBlock, notes: bool = True) -> np.ndarray:
    """A 64-bit hash of each row's values: latency, energy, trials, extras
    and (with ``notes``) notes."""
    h = np.zeros(len(block), dtype=np.uint64)
    for numbers in (block.latency_s, block.energy_j):
        h = _mix(h, np.ascontiguousarray(numbers, dtype=np.float64).view(np.uint64))
    h = _mix(h, block.trial_count)
    for column in ((block.notes,) if notes else ()) + tuple(block.extras.values()):
        h = _mix(h, _text_hash(column, 2))
    return h


def row_keys(block: RowBlock) -> np.ndarray:
    """A 64-bit key of each row's shape and values together (latency,
    energy, trials, notes), whatever purpose its file gives it and whatever
    other columns it has: two rows with the same key are one
    measurement (a copy of it), with a chance of two measurements agreeing
    by accident far below a disk error (:func:`graphsval_core.files.baseline_rows.measurement`
    is the same for rows)."""
    h = shape_hashes(block, 0, purpose=False)
    for numbers in (block.latency_s, block.energy_j):
        h = _mix(h, np.ascontiguousarray(numbers, dtype=np.float64).view(np.uint64))
    h = _mix(h, block.trial_count)
    return _mix(h, _text_hash(block.notes, 2))


#: The most rows one sorted run of shapes holds (a merge makes none larger).
RUN_ROWS = 2**20


@frozen
class Repeat:
    """Row ``index`` of a block measures the shape of line ``first`` again:
    exactly (``same``: its values and notes hash alike) or with other values
    (``notes_only``: the same values but its notes)."""

    index: int
    first: int
    same: bool
    notes_only: bool = False


class SeenShapes:
    """The shapes of a file's rows read so far (see module doc)."""

    def __init__(self) -> None:
        # sorted runs of (shape hash, check, value hash, value hash but the notes, line),
        # each sorted by shape hash
        self._runs: list[tuple[np.ndarray, ...]] = []

    def __len__(self) -> int:
        return sum(len(run[0]) for run in self._runs)

    def repeats(self, block: RowBlock) -> list[Repeat]:
        """The rows of ``block`` whose shape an earlier row (of an earlier
        block, or earlier in this one) measured, in row order; the earlier row
        is the first of that shape. Adds the shapes of the other rows."""
        n = len(block)
        if not n:
            return []
        key, check = shape_hashes(block, 0), shape_hashes(block, 1).astype(np.uint32)
        value, bare = value_hashes(block), value_hashes(block, notes=False)
        line = block.line.astype(np.int32)  # a file under 1 GiB has fewer lines
        # rows in the order of their shapes (a stable sort keeps row order among
        # equal ones): sorted keys are looked up in the runs far faster
        order = np.lexsort((check, key))
        skey, scheck = key[order], check[order]
        first_line = np.full(n, -1, dtype=np.int32)  # per sorted position
        first_value = np.zeros(n, dtype=np.uint64)
        first_bare = np.zeros(n, dtype=np.uint64)
        for run_key, run_check, run_value, run_bare, run_line in self._runs:
            at = np.minimum(np.searchsorted(run_key, skey), len(run_key) - 1)
            hit = (run_key[at] == skey) & (run_check[at] == scheck)
            first_line[hit] = run_line[at[hit]]
            first_value[hit] = run_value[at[hit]]
            first_bare[hit] = run_bare[at[hit]]
        # within the block: the first row of each shape, for the rows after it
        inner = np.zeros(n, dtype=bool)
        inner[1:] = (skey[1:] == skey[:-1]) & (scheck[1:] == scheck[:-1])
        head = np.maximum.accumulate(np.where(inner, 0, np.arange(n)))
        take = inner & (first_line < 0)
        first_line[take] = line[order[head[take]]]
        first_value[take] = value[order[head[take]]]
        first_bare[take] = bare[order[head[take]]]
        # back to row order
        first_line[order], first_value[order] = first_line.copy(), first_value.copy()
        first_bare[order] = first_bare.copy()
        repeated = first_line >= 0
        new = ~repeated
        if new.any():
            self._add(key[new], check[new], value[new], bare[new], line[new])
        at = np.flatnonzero(repeated)
        same = (first_value[at] == value[at]).tolist()
        alike = (first_bare[at] == bare[at]).tolist()  # the values but the notes
        return [
            Repeat(int(i), int(first_line[i]), s, not s and a)
            for i, s, a in zip(at.tolist(), same, alike, strict=True)
        ]

    def _add(self, *columns: np.ndarray) -> None:
        order = np.argsort(columns[0], kind="stable")
        self._runs.append(tuple(c[order] for c in columns))
        # merge runs of like size (a binary counter) up to RUN_ROWS: a few runs
        # to look a block up in, and no merge needing much memory beside them
        while len(self._runs) > 1:
            before, last = len(self._runs[-2][0]), len(self._runs[-1][0])
            if before > 2 * last or before + last > RUN_ROWS:
                break
            last_run, before_run = self._runs.pop(), self._runs.pop()
            self._runs.append(_merge(before_run, last_run))


def _merge(a: Sequence[np.ndarray], b: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
    joined = [np.concatenate([x, y]) for x, y in zip(a, b, strict=True)]
    order = np.argsort(joined[0], kind="stable")
    return tuple(c[order] for c in joined)
