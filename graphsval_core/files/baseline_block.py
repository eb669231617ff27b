"""A block of baseline rows held as columns: one numpy array per field.

What a large baseline is validated from (issue 17 item 5): no Python object
per row. Names (hardware, op, dtype, purpose) are shared strings; a row's
dims lie one after another in one integer array, row ``i``'s from
``dims_start[i]`` to ``dims_start[i + 1]``; an absent latency or energy is
NaN (an energy of 0.0 is absent, as :class:`BaselineRow` reads it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from attrs import frozen

from graphsval_core.files.baseline_rows import V4_COLUMNS, BaselineRow

#: The columns of a block other than the dims and the extras, in BaselineRow's order.
COLUMNS: tuple[str, ...] = ("line", *V4_COLUMNS, "purpose")


def _objects(values: Sequence[Any]) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


@frozen
class RowBlock:
    """Rows of one baseline file as columns (see module doc)."""

    line: np.ndarray
    hardware: np.ndarray
    op: np.ndarray
    shape: np.ndarray
    dtype: np.ndarray
    latency_s: np.ndarray
    energy_j: np.ndarray
    trial_count: np.ndarray
    notes: np.ndarray
    purpose: np.ndarray
    dims: np.ndarray
    dims_start: np.ndarray
    extras: Mapping[str, np.ndarray]

    def __len__(self) -> int:
        return int(self.line.shape[0])

    @property
    def ndims(self) -> np.ndarray:
        """How many dims each row's shape has."""
        return np.diff(self.dims_start)

    def dims_of(self, k: int) -> np.ndarray:
        """The dims of every row, ``(n, k)``; each row must have ``k`` dims."""
        index = self.dims_start[:-1, None] + np.arange(k)
        return self.dims[index].reshape(len(self), k)

    def extra(self, name: str) -> np.ndarray | None:
        """Extra column ``name`` (None: the file has no such column)."""
        return self.extras.get(name)

    def take(self, index: Any) -> RowBlock:
        """The rows at ``index`` (an index array or a boolean mask), in its order."""
        index = np.flatnonzero(index) if np.asarray(index).dtype == bool else np.asarray(index)
        starts = self.dims_start[index]
        counts = self.dims_start[index + 1] - starts
        ends = np.cumsum(counts)
        total = int(ends[-1]) if len(ends) else 0
        gather = np.repeat(starts - (ends - counts), counts) + np.arange(total)
        return RowBlock(
            **{name: getattr(self, name)[index] for name in COLUMNS},
            dims=self.dims[gather],
            dims_start=np.concatenate([[0], ends]).astype(np.int64),
            extras={name: column[index] for name, column in self.extras.items()},
        )

    @classmethod
    def concat(cls, blocks: Sequence[RowBlock]) -> RowBlock:
        """The rows of ``blocks``, in order (every block of one file: the same extras)."""
        if len(blocks) == 1:
            return blocks[0]
        offsets = np.cumsum([0] + [len(b.dims) for b in blocks[:-1]])
        return cls(
            **{name: np.concatenate([getattr(b, name) for b in blocks]) for name in COLUMNS},
            dims=np.concatenate([b.dims for b in blocks]),
            dims_start=np.concatenate(
                [[0], *(b.dims_start[1:] + off for b, off in zip(blocks, offsets, strict=True))]
            ).astype(np.int64),
            extras={
                name: np.concatenate([b.extras[name] for b in blocks]) for name in blocks[0].extras
            },
        )

    @classmethod
    def from_rows(cls, rows: Sequence[BaselineRow], extras_names: Sequence[str]) -> RowBlock:
        """The columns of ``rows`` (each holding the extras ``extras_names``)."""
        counts = [len(r.dims) for r in rows]
        return cls(
            line=np.array([r.line for r in rows], dtype=np.int64),
            hardware=_objects([r.hardware for r in rows]),
            op=_objects([r.op for r in rows]),
            shape=_objects([r.shape for r in rows]),
            dtype=_objects([r.dtype for r in rows]),
            latency_s=np.array(
                [np.nan if r.latency_s is None else r.latency_s for r in rows], dtype=np.float64
            ),
            energy_j=np.array(
                [np.nan if r.energy_j is None else r.energy_j for r in rows], dtype=np.float64
            ),
            trial_count=np.array([r.trial_count for r in rows], dtype=np.int64),
            notes=_objects([r.notes for r in rows]),
            purpose=_objects([r.purpose for r in rows]),
            dims=np.array([d for r in rows for d in r.dims], dtype=np.int64),
            dims_start=np.concatenate([[0], np.cumsum(counts, dtype=np.int64)]).astype(np.int64),
            extras={name: _objects([r.extras[name] for r in rows]) for name in extras_names},
        )

    def rows(self) -> list[BaselineRow]:
        """Every row as a :class:`BaselineRow`."""
        starts = self.dims_start.tolist()
        flat = self.dims.tolist()
        dims = [tuple(flat[a:b]) for a, b in zip(starts[:-1], starts[1:], strict=True)]
        names = list(self.extras)
        extras = (
            [
                dict(zip(names, values, strict=True))
                for values in zip(*self.extras.values(), strict=True)
            ]
            if names
            else [{} for _ in range(len(self))]
        )
        latency = [None if v != v else v for v in self.latency_s.tolist()]
        energy = [None if v != v else v for v in self.energy_j.tolist()]
        # positional, in BaselineRow's field order
        return list(
            map(
                BaselineRow,
                self.line.tolist(),
                self.hardware.tolist(),
                self.op.tolist(),
                self.shape.tolist(),
                dims,
                self.dtype.tolist(),
                latency,
                energy,
                self.trial_count.tolist(),
                self.notes.tolist(),
                self.purpose.tolist(),
                extras,
            )
        )
