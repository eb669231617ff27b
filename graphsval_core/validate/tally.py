"""What a validation's summary and terminal read of its records, gathered a
part of the records at a time.

The harness judges a baseline a block of rows at a time
(:mod:`graphsval_core.validate.harness`); each part of the records it makes
is added to a :class:`Tally`, and dropped unless the run keeps every record
for a report that lists them all. The tally holds the counts (in all and per
target and op), the heatmap cells with what drift attribution reads of each
record (:mod:`graphsval_core.validate.cells`), the records listed apart
(excluded, suspect quantities, near a regime boundary, unplaced: every one,
or with ``listed`` the first ones of each, with their exact counts), the
worst failing records (the terminal's list), and the latency tolerance of
each record of a file that has a recapture. A baseline of millions of rows
is summarised in memory of a few numbers a row.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Generic, TypeVar

import numpy as np
from attrs import define, field, frozen

from graphsval_core.datamodel.regimes import AMBIGUOUS
from graphsval_core.model.plausibility import parse_suspect
from graphsval_core.validate.cells import Cell, CellKey, Rows, add_cells, group_index
from graphsval_core.validate.records import EXCLUDED, Records

T = TypeVar("T")

#: How an excluded record's reason starts when the predictor gave it no (valid) prediction.
NO_PREDICTION = "no prediction:"
#: How many of the worst failing records a tally keeps (the terminal shows fewer).
WORST_KEPT = 50


@frozen
class Flagged:
    """A record listed apart: excluded (with its reason), near a regime
    boundary, or whose measured regime could not be placed."""

    hardware: str
    op: str
    shape: str
    dtype: str
    reason: str | None
    file: str
    line: int


@frozen
class Suspect:
    """One physically implausible quantity of a record (latency or energy),
    why, and what was kept out of pass/fail for it: the whole record for a
    latency, the energy verdict for an energy."""

    hardware: str
    op: str
    shape: str
    dtype: str
    quantity: str
    reason: str
    excluded: str
    file: str
    line: int


#: What a suspect quantity keeps out of pass/fail.
SUSPECT_EXCLUDES = {"latency": "the record", "energy": "its energy verdict"}


@define
class Listed(Generic[T]):
    """Items listed apart: every one, or the first ``limit``; ``count`` is exact."""

    limit: int | None = None
    items: list[T] = field(factory=list)
    count: int = 0

    @property
    def room(self) -> int | None:
        """How many more items are kept (None: every one)."""
        return None if self.limit is None else max(0, self.limit - len(self.items))

    def add(self, items: Iterable[T], count: int) -> None:
        self.items += items
        self.count += count


@define
class TargetOpTally:
    """The counts of one target and op."""

    records: int = 0
    checked: int = 0
    passed: int = 0
    excluded: int = 0
    #: records with a suspect quantity (latency, energy or both)
    suspect: int = 0
    near_boundary: int = 0
    unplaced: int = 0
    in_sample: bool = False
    dtypes: set[str] = field(factory=set)


def _truthy(values: np.ndarray) -> np.ndarray:
    """Mask of a column's truthy values (``if v`` of each)."""
    return values.astype(bool)


def _true(values: np.ndarray) -> np.ndarray:
    """Mask of a flag column's True verdicts (None and False are not)."""
    return np.asarray(values == True, dtype=bool)  # noqa: E712


def _flagged(records: Records, index: np.ndarray, reason: str) -> list[Flagged]:
    return list(
        map(
            Flagged,
            records.hardware[index].tolist(),
            records.op[index].tolist(),
            records.shape[index].tolist(),
            records.dtype[index].tolist(),
            getattr(records, reason)[index].tolist(),
            records.file[index].tolist(),
            records.line[index].tolist(),
        )
    )


def _suspects(records: Records, index: np.ndarray) -> list[Suspect]:
    """One entry per suspect quantity of the records at ``index``, in order."""
    return [
        Suspect(
            records.hardware[i],
            records.op[i],
            records.shape[i],
            records.dtype[i],
            flag.quantity,
            flag.reason,
            SUSPECT_EXCLUDES[flag.quantity],
            records.file[i],
            int(records.line[i]),
        )
        for i in index.tolist()
        for flag in parse_suspect(records.suspect[i])
    ]


def worst_key(records: Records) -> np.ndarray:
    """The order of the worst failures: largest |log(1 + latency error)| first
    (ascending sort key; NaN last)."""
    return _worst_key(records.latency_error)


def _worst_key(latency_error: np.ndarray) -> np.ndarray:
    error = np.abs(np.log1p(latency_error.astype(float)))
    return -np.nan_to_num(error, nan=-1.0)


class Tally:
    """The figures of a validation's records, added a part at a time (see module doc).

    ``listed``: how many records of each list apart are kept (None: all);
    ``declared``: cells keep what a declared predictor's attribution reads;
    ``recapture_files``: the baseline files whose records' latency
    tolerances are kept (:attr:`tolerance_of`)."""

    def __init__(
        self,
        *,
        listed: int | None = None,
        declared: bool = False,
        recapture_files: Iterable[str] = (),
    ) -> None:
        self.declared = declared
        self.recapture_files = frozenset(recapture_files)
        self.records = 0
        self.checked = 0
        self.passed = 0
        self.targets: dict[tuple[str, str], TargetOpTally] = {}
        self.cells: dict[CellKey, Cell] = {}
        self.excluded: Listed[Flagged] = Listed(listed)
        self.suspect: Listed[Suspect] = Listed(listed)
        self.near_boundary: Listed[Flagged] = Listed(listed)
        self.unplaced: Listed[Flagged] = Listed(listed)
        #: excluded records the predictor gave no (valid) prediction
        self.no_prediction = 0
        #: whether a checked record has a compute term (a predictor's breakdown)
        self.compute_known = False
        #: the worst failing records (at most :data:`WORST_KEPT`), in record order
        self.worst = Records.build(0)
        #: ``(file, shape, dtype) -> latency tolerance`` of the predicted
        #: records of :attr:`recapture_files`
        self.tolerance_of: dict[tuple[str, str, str], float] = {}

    @classmethod
    def of(cls, records: Records, **options: Any) -> Tally:
        """The tally of ``records`` at once."""
        tally = cls(**options)
        tally.add(records)
        return tally

    @property
    def failed(self) -> int:
        return self.checked - self.passed

    def add(self, records: Records) -> None:
        """Count ``records`` (one part, after those added before)."""
        if not len(records):
            return
        checked = records.checked
        passed = checked & _true(records.passed)
        self.records += len(records)
        self.checked += int(np.count_nonzero(checked))
        self.passed += int(np.count_nonzero(passed))
        for (hw, op), rows in group_index(records.hardware, records.op):
            mine = records if len(rows) == len(records) else Rows(records, rows)
            self._target_op(self.targets.setdefault((hw, op), TargetOpTally()), mine)
        add_cells(self.cells, records, self.declared)
        self._listed(records, checked)
        if checked.any():
            self.compute_known |= bool(np.isfinite(records.terms.compute_s[checked]).any())
        self._worst(records, checked & (records.passed == False))  # noqa: E712
        if self.recapture_files:
            self._tolerances(records)

    @staticmethod
    def _target_op(t: TargetOpTally, records: Records | Rows) -> None:
        checked = records.checked
        t.records += len(records)
        t.checked += int(np.count_nonzero(checked))
        t.passed += int(np.count_nonzero(checked & _true(records.passed)))
        t.excluded += int(np.count_nonzero(records.status == EXCLUDED))
        t.suspect += int(np.count_nonzero(_truthy(records.suspect)))
        t.near_boundary += int(np.count_nonzero(checked & _truthy(records.near_boundary)))
        t.unplaced += int(np.count_nonzero(checked & (records.regime_measured == AMBIGUOUS)))
        t.in_sample = t.in_sample or bool(_truthy(records.in_sample).any())
        t.dtypes.update(records.dtype[checked].tolist())

    def _listed(self, records: Records, checked: np.ndarray) -> None:
        excluded = np.flatnonzero(records.status == EXCLUDED)
        if excluded.size:
            reasons = records.excluded_reason[excluded].tolist()
            self.no_prediction += sum(
                1 for r in reasons if isinstance(r, str) and r.startswith(NO_PREDICTION)
            )
        for listed, index, reason in (
            (self.excluded, excluded, "excluded_reason"),
            (self.near_boundary, np.flatnonzero(checked & _true(records.near_boundary)), None),
            (
                self.unplaced,
                np.flatnonzero(checked & (records.regime_measured == AMBIGUOUS)),
                None,
            ),
        ):
            room = listed.room
            shown = index if room is None else index[:room]
            listed.add(_flagged(records, shown, reason or "regime_measured"), int(index.size))
        suspect = np.flatnonzero(_truthy(records.suspect))
        if suspect.size:
            entries = _suspects(records, suspect)
            room = self.suspect.room
            self.suspect.add(entries if room is None else entries[:room], len(entries))

    def _worst(self, records: Records, failing: np.ndarray) -> None:
        index = np.flatnonzero(failing)
        if not index.size:
            return
        if index.size > WORST_KEPT:  # this part's worst, in record order (ties: the first)
            key = _worst_key(records.latency_error[index])
            index = np.sort(index[np.argsort(key, kind="stable")[:WORST_KEPT]])
        both = Records.concat([self.worst, records.take(index)])
        keep = np.argsort(worst_key(both), kind="stable")[:WORST_KEPT]
        self.worst = both.take(np.sort(keep))

    def _tolerances(self, records: Records) -> None:
        mine = np.flatnonzero(
            (records.status != EXCLUDED) & np.isin(records.file, list(self.recapture_files))
        )
        for i in mine.tolist():
            key = (records.file[i], records.shape[i], records.dtype[i])
            self.tolerance_of[key] = float(records.tolerance_latency[i])
