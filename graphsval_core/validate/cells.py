"""Heatmap cells: the checked records of one target, op and predicted regime,
counted and kept compactly, a part of the records at a time.

A cell holds the checked records of one target and op whose predicted regime
is that regime. Where the regime validates a constant the target has per dtype
(:data:`PER_DTYPE`: the launch, whose first kernel may be a dtype's own
dispatch path, and the achievable peak), the cell also holds one dtype only,
labelled ``launch_bound (bf16)``: rows of 1 us fp32 calls and 20 us bf16
calls pooled would name neither constant. A memory tier's bandwidth is one
figure for every dtype, so its cells pool them.

A cell keeps its counts and only the figures drift attribution
(:mod:`graphsval_core.validate.attribution`) reads of each record: the signed
latency error and its band, and per regime the constant a record implies
(achievable peak, tier bandwidth) or what the launch's is inferred from; of
each record whose energy was judged, its error, band and implied static
power. For a predictor other than the reference, which declares its own
constants (``declared``), it keeps the measured and predicted quantities
and the terms those constants are inferred from instead. That is a few
numbers a record: a baseline of millions of rows is summarised without
holding its records (:class:`~graphsval_core.validate.tally.Tally`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import numpy as np
from attrs import define, field

from graphsval_core.datamodel.dtypes import KNOWN_DTYPES
from graphsval_core.datamodel.regimes import ALU_BOUND, LAUNCH_BOUND, order
from graphsval_core.validate.records import Records, Terms

VERDICTS = ("regime", "latency", "energy")

#: The regimes whose constant a target has per dtype: one dtype per cell.
PER_DTYPE: tuple[str, ...] = (LAUNCH_BOUND, ALU_BOUND)

#: A cell's key: hardware, op, regime and dtype (None: a cell pooling every dtype).
CellKey = tuple[str, str, str, "str | None"]


def cell_label(regime: str, dtype: str | None) -> str:
    """``launch_bound (bf16)`` for a cell of one dtype, ``l2_bound`` for a pooled one."""
    return f"{regime} ({dtype})" if dtype else regime


def split_label(label: str) -> tuple[str, str | None]:
    """The regime and dtype of a :func:`cell_label` (dtype None: pooled)."""
    regime, _, rest = label.partition(" (")
    return regime, rest.removesuffix(")") or None


def dtype_order(dtype: str | None) -> tuple[int, str]:
    """Sort key of a dtype: the order of :data:`KNOWN_DTYPES`, others after."""
    if dtype in KNOWN_DTYPES:
        return KNOWN_DTYPES.index(dtype), ""
    return len(KNOWN_DTYPES), dtype or ""


class Rows:
    """The records at ``index`` of ``records`` (or of their terms), read a
    field at a time: no copy of the fields never read."""

    def __init__(self, records: Any, index: np.ndarray) -> None:
        self._records = records
        self._index = index

    def __len__(self) -> int:
        return len(self._index)

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._records, name)[self._index]
        setattr(self, name, value)
        return value

    @property
    def terms(self) -> Rows:
        return Rows(self._records.terms, self._index)

    def take(self, mask: np.ndarray) -> Rows:
        return Rows(self._records, self._index[mask])


def implies(records: Any, rate: np.ndarray, term: np.ndarray) -> np.ndarray:
    """Which records imply a rate (:func:`implied_rate`): the measured time
    exceeds the fixed time and the term and the rate are known."""
    measured = records.latency_measured_s
    return (measured > records.terms.fixed_s) & np.isfinite(term) & np.isfinite(rate) & (rate != 0)


def implied_rate(
    records: Any, rate: np.ndarray, term: np.ndarray, usable: np.ndarray | None = None
) -> np.ndarray:
    """``rate x term / (measured - fixed)`` of the records that imply one
    (``usable``, :func:`implies` unless given): the rate that would make the
    term the measured time less launch."""
    if usable is None:
        usable = implies(records, rate, term)
    measured, fixed = records.latency_measured_s[usable], records.terms.fixed_s[usable]
    return rate[usable] * term[usable] / (measured - fixed)


def _flags(values: np.ndarray) -> tuple[int, int]:
    """How many of a flag column's verdicts are True, and how many False."""
    return int(np.count_nonzero(values == True)), int(np.count_nonzero(values == False))  # noqa: E712


@define
class Cell:
    """One heatmap cell (see module doc): its counts and what attribution reads."""

    hardware: str
    op: str
    regime: str
    dtype: str | None
    #: what is kept: for a predictor's declared constants (True) or the reference's
    declared: bool = False
    n: int = 0
    passed: int = 0
    failures: dict[str, int] = field(factory=lambda: dict.fromkeys(VERDICTS, 0))
    #: the model's value of the constant, from the cell's first record
    first: dict[str, float] = field(factory=dict)
    # per name, one array per part: of every record, of the energy-judged ones,
    # and the constant implied by each record that implies one
    _columns: dict[str, list[np.ndarray]] = field(factory=dict)
    _energy: dict[str, list[np.ndarray]] = field(factory=dict)
    # the constant each record implies (``rate``), and in a tier's cell its dtype
    _implied: dict[str, list[np.ndarray]] = field(factory=dict)

    @property
    def key(self) -> CellKey:
        return self.hardware, self.op, self.regime, self.dtype

    @property
    def label(self) -> str:
        return cell_label(self.regime, self.dtype)

    def fails(self, kind: str) -> int:
        """Records whose ``kind`` verdict (regime, latency, energy) failed."""
        return self.failures[kind]

    @property
    def ok(self) -> bool:
        return self.passed == self.n

    def text(self) -> str:
        """``OK 18/18`` or ``FAIL R2 L5 E1 /18`` (R regime, L latency, E energy)."""
        if self.ok:
            return f"OK {self.passed}/{self.n}"
        parts = [f"{k[0].upper()}{self.fails(k)}" for k in VERDICTS if self.fails(k)]
        return f"FAIL {' '.join(parts)} /{self.n}"

    # --- gathering --------------------------------------------------------------

    def add(self, records: Records | Rows) -> None:
        """Count ``records`` (checked, all of this cell) and keep what attribution reads."""
        self.n += len(records)
        self.passed += _flags(records.passed)[0]
        for kind in VERDICTS:
            self.failures[kind] += _flags(getattr(records, f"pass_{kind}"))[1]
        judged = records.pass_energy != None  # noqa: E711
        if self.declared:
            self._keep(self._columns, records, _DECLARED, judged=judged)
            return
        terms = records.terms
        self._keep(self._columns, records, ("latency_error", "tolerance_latency"))
        if self.regime == ALU_BOUND:
            self.first.setdefault("model", float(terms.achievable_ops_per_s[0]))
            self._keep(self._columns, records, ("achievable_ops_per_s", "vector_rate"))
            usable = implies(records, terms.achievable_ops_per_s, terms.compute_s)
            rate = implied_rate(records, terms.achievable_ops_per_s, terms.compute_s, usable)
            # which rate each implies: a library's peak share, the vector units', or the
            # framework's own kernel's (one cell may hold products of both kernels)
            self._keep(self._implied, records, (), rate=rate, kind=terms.vector_rate[usable])
        elif self.regime == LAUNCH_BOUND:
            busy = np.maximum(terms.compute_s, terms.memory_s)
            self._keep(
                self._columns,
                records,
                (
                    "dispatch_s",
                    "accumulating_call_s",
                    "launch_overhead_s",
                    "gemv_team_s",
                    "launch_s",
                ),
                known=np.isfinite(busy),
                rest=records.latency_measured_s - busy - terms.fixed_s,
            )
        else:
            self.first.setdefault("model", float(terms.tier_bandwidth_bps[0]))
            # a tier's cell pools dtypes: the dtype of each rate implied
            usable = implies(records, terms.tier_bandwidth_bps, terms.memory_s)
            rate = implied_rate(records, terms.tier_bandwidth_bps, terms.memory_s, usable)
            self._keep(
                self._implied, records, (), rate=rate, dtype=np.asarray(records.dtype)[usable]
            )
        if judged.any():
            mine = records.take(judged)
            energy = mine.terms
            compute = np.nan_to_num(energy.energy_compute_j)
            traffic = np.nan_to_num(energy.energy_traffic_j)
            self.first.setdefault("static_power_w", float(energy.static_power_w[0]))
            self._keep(
                self._energy,
                mine,
                ("energy_error", "tolerance_energy"),
                implied=(mine.energy_measured_j - compute - traffic) / mine.latency_measured_s,
            )

    @staticmethod
    def _keep(
        into: dict[str, list[np.ndarray]], records: Any, names: Sequence[str], **more: Any
    ) -> None:
        for name in names:
            source = records.terms if name in _TERMS else records
            into.setdefault(name, []).append(np.asarray(getattr(source, name)))
        for name, values in more.items():
            into.setdefault(name, []).append(np.asarray(values))

    # --- reading ------------------------------------------------------------------

    def kept(self) -> list[str]:
        """The names of the fields kept of every record (:meth:`column`)."""
        return list(self._columns)

    def column(self, name: str) -> np.ndarray:
        """Field ``name`` of every record of the cell, in record order."""
        return _joined(self._columns, name)

    def energy(self, name: str) -> np.ndarray:
        """``energy_error``, ``tolerance_energy`` or ``implied`` (static power)
        of each record whose energy was judged."""
        return _joined(self._energy, name)

    def implied(self) -> np.ndarray:
        """The constant each record implies (those that imply one): the
        achievable peak of an alu-bound cell, the bandwidth of a tier's."""
        return _joined(self._implied, "rate")

    def implied_kinds(self) -> np.ndarray:
        """The rate each of :meth:`implied`'s records implies, as the records'
        ``vector_rate`` (an alu-bound cell; empty for the others)."""
        return _joined(self._implied, "kind")

    def implied_dtypes(self) -> np.ndarray:
        """The dtype of each of :meth:`implied`'s records (a tier's cell; empty
        for the others)."""
        return _joined(self._implied, "dtype").astype(str)


def _joined(parts: dict[str, list[np.ndarray]], name: str) -> np.ndarray:
    arrays = parts.get(name)
    if not arrays:
        return np.empty(0)
    if len(arrays) > 1:
        parts[name] = arrays = [np.concatenate(arrays)]
    return arrays[0]


#: What a cell keeps of each record for a declared predictor's attribution.
_DECLARED = (
    "dtype",
    "latency_measured_s",
    "latency_predicted_s",
    "energy_measured_j",
    "energy_predicted_j",
    "latency_error",
    "tolerance_latency",
    "energy_error",
    "tolerance_energy",
    "compute_s",
    "memory_s",
    "fixed_s",
)
#: The fields a cell keeps that are the model's terms (the rest are the records').
_TERMS = frozenset(a.name for a in attrs.fields(Terms))


def group_index(*columns: np.ndarray) -> list[tuple[tuple[Any, ...], np.ndarray]]:
    """The rows of each distinct combination of ``columns``' values, in
    order of first appearance: ``(values, row index)``."""
    n = len(columns[0])
    if not n:
        return []
    code = np.zeros(n, dtype=np.int64)
    single = True
    for column in columns:
        values = column.tolist()
        names = list(dict.fromkeys(values))
        if len(names) > 1:
            single = False
            index = {v: i for i, v in enumerate(names)}
            code = code * len(names) + np.fromiter(map(index.__getitem__, values), np.int64, n)
            if int(code.max()) > 2**40:  # keep the product of the columns' counts small
                code = np.unique(code, return_inverse=True)[1].astype(np.int64)
    if single:
        return [(tuple(column[0] for column in columns), np.arange(n))]
    _, first, inverse = np.unique(code, return_index=True, return_inverse=True)
    out = []
    for g in np.argsort(first, kind="stable"):
        rows = np.flatnonzero(inverse == g)
        out.append((tuple(column[rows[0]] for column in columns), rows))
    return out


def add_cells(
    cells: dict[CellKey, Cell], records: Records, declared: bool = False
) -> dict[CellKey, Cell]:
    """Count the checked ``records`` into their cells (new ones added in
    order of first appearance); ``cells`` itself, for chaining."""
    checked = np.flatnonzero(records.checked)
    if not checked.size:
        return cells
    regime = records.regime_predicted[checked]
    per_dtype = np.zeros(len(checked), dtype=bool)
    for name in PER_DTYPE:
        per_dtype |= regime == name
    dtype = np.where(per_dtype, records.dtype[checked], None)
    hardware, op = records.hardware[checked], records.op[checked]
    for key, rows in group_index(hardware, op, regime, dtype):
        cell = cells.get(key)
        if cell is None:
            cell = cells[key] = Cell(*key, declared=declared)
        cell.add(Rows(records, checked[rows]))
    return cells


def build_cells(records: Records, declared: bool = False) -> dict[CellKey, Cell]:
    """The cells of the checked records, keyed ``(hardware, op, regime,
    dtype)`` (dtype None for a regime of :data:`PER_DTYPE`'s complement), in
    order of first appearance."""
    return add_cells({}, records, declared)


def cell_order(cell: Cell) -> tuple[Any, ...]:
    """Report order: target, op, regime (launch, compute, tiers), dtype."""
    return cell.hardware, cell.op, order(cell.regime), dtype_order(cell.dtype)
