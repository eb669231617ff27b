"""The report's summary, typed: what a validation found, per target and op.

:func:`build_summary` turns a :class:`~graphsval_core.validate.harness.Validation`
into a :class:`Summary`, from the figures its
:class:`~graphsval_core.validate.tally.Tally` gathered: the header (versions,
plugins, baselines and their hashes, tolerances), the totals, the flagged,
excluded and suspect records (with their exact counts), one
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

from graphsval_core.validate.attribution import Cell, Drift, attribute, cell_order, dtype_order
from graphsval_core.validate.harness import Recapture, Validation
from graphsval_core.validate.tally import SUSPECT_EXCLUDES, Flagged, Suspect, TargetOpTally

__all__ = [
    "SCHEMA_VERSION",
    "SUSPECT_EXCLUDES",
    "BaselineInfo",
    "DriftEntry",
    "Flagged",
    "Header",
    "PluginVersion",
    "Summary",
    "Suspect",
    "TargetOpSummary",
    "build_summary",
    "summary_dict",
]

#: The version of report.json's layout and meanings: 2 since a memory tier's
#: drift cell (``drift[].model``, ``.implied``) holds the tier's effective
#: bandwidth, one figure for every dtype, where 1 held the first record's
#: dtype share of it.
SCHEMA_VERSION = 2


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
    #: a cell pooling dtypes (a memory tier's): per dtype, the median value its
    #: records imply and how many imply one, ``{"fp32": {"implied": 1.2e11,
    #: "shapes": 40}}``
    by_dtype: dict[str, dict[str, float]] = field(factory=dict)

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
            by_dtype={d: {"implied": v, "shapes": n} for d, v, n in drift.by_dtype},
            # which calls the drift times is in its sentence
            **attrs.asdict(drift, filter=lambda a, _v: a.name not in ("part", "by_dtype")),
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
    #: the exact number of records (suspect: quantities) under each list apart
    #: (``excluded``, ``suspect``, ``near_boundary``, ``unplaced``), and of the
    #: excluded ones the predictor gave no prediction (``no_prediction``): a
    #: summary that keeps the first items of each list only
    #: (:attr:`ValidateOptions.records` False) still counts them all
    counts: Mapping[str, int] = field(factory=dict)

    def total(self, name: str) -> int:
        """How many items list ``name`` holds in all, however many are kept."""
        return self.counts.get(name, len(getattr(self, name)))


def summary_dict(summary: Summary) -> dict[str, Any]:
    """The summary as ``report.json`` holds it (every record in field order;
    the counts, which its lists give, left out)."""
    counts = attrs.fields(Summary).counts
    return attrs.asdict(summary, filter=lambda a, _: a is not counts)


def _target_op(
    hardware: str,
    op: str,
    t: TargetOpTally,
    cells: Sequence[Cell],
    recapture: Recapture | None,
) -> TargetOpSummary:
    errors = [np.abs(c.column("latency_error")) for c in cells]
    errors = np.concatenate(errors) if errors else np.empty(0)
    return TargetOpSummary(
        hardware=hardware,
        op=op,
        records=t.records,
        checked=t.checked,
        passed=t.passed,
        failed=t.checked - t.passed,
        excluded=t.excluded,
        suspect=t.suspect,
        near_boundary=t.near_boundary,
        unplaced=t.unplaced,
        in_sample=t.in_sample,
        median_abs_latency_error=float(np.median(errors)) if errors.size else None,
        recapture=recapture,
        dtypes=sorted(t.dtypes, key=dtype_order),
        cells={c.label: c.text() for c in sorted(cells, key=cell_order)},
    )


def build_summary(
    validation: Validation,
    header: Header,
    consistency: Mapping[str, Mapping[str, int]] | None = None,
) -> Summary:
    """The summary of ``validation`` (see module doc), from its tally."""
    tally = validation.tally
    cells = list(tally.cells.values())
    targets = [
        _target_op(
            hw,
            op,
            t,
            [c for c in cells if (c.hardware, c.op) == (hw, op)],
            validation.recapture.get((hw, op)),
        )
        for (hw, op), t in sorted(tally.targets.items())
    ]
    drift = [
        DriftEntry.of(cell, d)
        for cell in sorted(cells, key=cell_order)
        for d in attribute(cell, validation.constants)
    ]
    return Summary(
        header=header,
        predictor=validation.predictor,
        records=tally.records,
        checked=tally.checked,
        passed=tally.passed,
        failed=tally.failed,
        excluded=tally.excluded.items,
        suspect=tally.suspect.items,
        near_boundary=tally.near_boundary.items,
        unplaced=tally.unplaced.items,
        targets=targets,
        drift=drift,
        warnings=validation.warnings,
        consistency=dict(consistency or {}),
        counts={
            "excluded": tally.excluded.count,
            "suspect": tally.suspect.count,
            "near_boundary": tally.near_boundary.count,
            "unplaced": tally.unplaced.count,
            "no_prediction": tally.no_prediction,
        },
    )
