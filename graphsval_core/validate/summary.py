"""The report's summary, typed: what a validation found, per target and op.

:func:`build_summary` turns a :class:`~graphsval_core.validate.harness.Validation`
into a :class:`Summary`: the header (versions, plugins, baselines and their
hashes, tolerances), the totals, the flagged, excluded and suspect records, one
:class:`TargetOpSummary` per target and op (with its heatmap cells and the
capture-vs-recapture agreement), the drift attribution of every failing cell,
warnings, and the consistency counts of consistency-only targets. Every record
class here is serialised by :func:`summary_dict` in field order, the order
``report.json`` holds them in; the renderers in :mod:`graphsval_core.validate.report`
read the same records.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import numpy as np
from attrs import field, frozen

from graphsval_core.datamodel.regimes import AMBIGUOUS
from graphsval_core.model.plausibility import parse_suspect
from graphsval_core.validate.attribution import (
    Cell,
    Drift,
    attribute,
    build_cells,
    cell_order,
    dtype_order,
)
from graphsval_core.validate.harness import Recapture, Validation
from graphsval_core.validate.records import EXCLUDED, Records

SCHEMA_VERSION = 1


@frozen
class PluginVersion:
    """A loaded plugin of the run, as the header lists it."""

    name: str
    distribution: str | None
    version: str | None


@frozen
class BaselineInfo:
    """One baseline file of the run: its hash, the rows counted and how they were chosen."""

    path: str
    sha256: str
    rows: int
    selection: str


@frozen
class Header:
    """What a reader needs to reproduce the run."""

    graphsval_version: str
    plugins: tuple[PluginVersion, ...] = field(converter=tuple)
    baselines: tuple[BaselineInfo, ...] = field(converter=tuple)
    tolerances: Mapping[str, Mapping[str, float]]


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


@frozen
class TargetOpSummary:
    """The figures of one target and op: counts, the median latency error,
    the recapture agreement, the dtypes of its checked records and the
    heatmap cells (``label -> text``, the label ``launch_bound (bf16)`` for a
    cell of one dtype, ``l2_bound`` for one pooling every dtype: see
    :func:`~graphsval_core.validate.attribution.cell_label`)."""

    hardware: str
    op: str
    records: int
    checked: int
    passed: int
    failed: int
    excluded: int
    #: records with a suspect quantity (latency, energy or both)
    suspect: int
    near_boundary: int
    unplaced: int
    in_sample: bool
    median_abs_latency_error: float | None
    recapture: Recapture | None
    dtypes: tuple[str, ...] = field(converter=tuple)
    cells: Mapping[str, str]


@frozen
class DriftEntry:
    """The drift attribution of one failing cell: the constant, the model's
    value, the value the measurements imply, the spread of the cell's signed
    errors, and the sentence that says so. ``dtype`` is the cell's (None: a
    cell pooling every dtype); ``centred``: the median error is within a
    quarter of the band, so the sentence names no moved constant and gives
    the spread instead (``implied`` and ``change`` are still given here)."""

    hardware: str
    op: str
    regime: str
    dtype: str | None
    cell: str
    constant: str
    unit: str
    model: float
    implied: float
    change: float
    shapes: int
    median_error: float
    error_kind: str
    band: float
    p10: float
    p90: float
    over: int
    under: int
    rows: int
    centred: bool
    text: str

    @classmethod
    def of(cls, cell: Cell, drift: Drift) -> DriftEntry:
        """The entry of ``drift``, found in ``cell``."""
        return cls(
            hardware=cell.hardware,
            op=cell.op,
            regime=cell.regime,
            dtype=cell.dtype,
            cell=cell.text(),
            change=drift.change,
            centred=drift.centred,
            text=drift.text(),
            **attrs.asdict(drift),
        )


@frozen(kw_only=True)
class Summary:
    """Everything the report says about a validation (see module doc)."""

    schema_version: int = SCHEMA_VERSION
    header: Header
    predictor: str
    records: int
    checked: int
    passed: int
    failed: int
    excluded: tuple[Flagged, ...] = field(converter=tuple)
    #: every suspect quantity, excluded from pass/fail with its reason
    suspect: tuple[Suspect, ...] = field(converter=tuple)
    near_boundary: tuple[Flagged, ...] = field(converter=tuple)
    unplaced: tuple[Flagged, ...] = field(converter=tuple)
    targets: tuple[TargetOpSummary, ...] = field(converter=tuple)
    drift: tuple[DriftEntry, ...] = field(converter=tuple)
    warnings: tuple[str, ...] = field(converter=tuple)
    #: ``hardware -> counts`` of the consistency-only targets (``graphsval check``)
    consistency: Mapping[str, Mapping[str, int]] = field(factory=dict)


def summary_dict(summary: Summary) -> dict[str, Any]:
    """The summary as ``report.json`` holds it (every record in field order)."""
    return attrs.asdict(summary)


def _flagged(records: Records, mask: np.ndarray, reason: str) -> list[Flagged]:
    index = np.flatnonzero(mask)
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


def _suspects(records: Records) -> list[Suspect]:
    """One entry per suspect quantity of every record, in record order."""
    index = np.flatnonzero(_truthy(records.suspect))
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
        for i in index
        for flag in parse_suspect(records.suspect[i])
    ]


def _truthy(flags: Any) -> np.ndarray:
    """Mask of a column's truthy values (``if v`` of each)."""
    values = np.asarray(flags, dtype=object) if not isinstance(flags, np.ndarray) else flags
    return values.astype(bool)


def _count(flags: Any) -> int:
    """How many of a flag column's verdicts are True."""
    return int(np.count_nonzero(_truthy(flags)))


def _true(flags: np.ndarray) -> np.ndarray:
    """Mask of a flag column's True verdicts (None and False are not)."""
    return np.array([v is True for v in flags.tolist()], dtype=bool)


def _target_op(
    records: Records, hardware: str, op: str, cells: Sequence[Cell], recapture: Recapture | None
) -> TargetOpSummary:
    checked = records.take(records.checked)
    errors = np.abs(checked.latency_error)
    return TargetOpSummary(
        hardware=hardware,
        op=op,
        records=len(records),
        checked=len(checked),
        passed=_count(checked.passed),
        failed=len(checked) - _count(checked.passed),
        excluded=int(np.sum(records.status == EXCLUDED)),
        suspect=_count(records.suspect),
        near_boundary=_count(checked.near_boundary),
        unplaced=int(np.sum(checked.regime_measured == AMBIGUOUS)),
        in_sample=any(records.in_sample),
        median_abs_latency_error=float(np.median(errors)) if errors.size else None,
        recapture=recapture,
        dtypes=sorted(set(checked.dtype), key=dtype_order),
        cells={c.label: c.text() for c in sorted(cells, key=cell_order)},
    )


def build_summary(
    validation: Validation,
    header: Header,
    consistency: Mapping[str, Mapping[str, int]] | None = None,
) -> Summary:
    """The summary of ``validation`` (see module doc)."""
    records = validation.records
    cells = build_cells(records)
    groups: dict[tuple[str, str], list[int]] = {}
    for i, key in enumerate(zip(records.hardware.tolist(), records.op.tolist(), strict=True)):
        groups.setdefault(key, []).append(i)
    targets = [
        _target_op(
            records if len(index) == len(records) else records.take(np.array(index)),
            hw,
            op,
            [c for c in cells.values() if (c.hardware, c.op) == (hw, op)],
            validation.recapture.get((hw, op)),
        )
        for (hw, op), index in sorted(groups.items())
    ]
    drift = [
        DriftEntry.of(cell, d)
        for cell in sorted(cells.values(), key=cell_order)
        for d in attribute(cell, validation.constants)
    ]
    checked = records.checked
    return Summary(
        header=header,
        predictor=validation.predictor,
        records=len(records),
        checked=int(np.sum(checked)),
        passed=_count(records.passed[checked]),
        failed=int(np.sum(checked)) - _count(records.passed[checked]),
        excluded=_flagged(records, records.status == EXCLUDED, "excluded_reason"),
        suspect=_suspects(records),
        near_boundary=_flagged(records, checked & _true(records.near_boundary), "regime_measured"),
        unplaced=_flagged(
            records, checked & (records.regime_measured == AMBIGUOUS), "regime_measured"
        ),
        targets=targets,
        drift=drift,
        warnings=validation.warnings,
        consistency=dict(consistency or {}),
    )
