"""Heatmap cells (target x op x regime) and drift attribution for failing cells.

A cell holds the checked records of one target and op whose predicted regime
is that regime. Where the regime validates a constant the target has per dtype
(:data:`PER_DTYPE`: the launch, whose first kernel may be a dtype's own
dispatch path, and the achievable peak), the cell also holds one dtype only,
labelled ``launch_bound (bf16)``: rows of 1 us fp32 calls and 20 us bf16
calls pooled would name neither constant. A memory tier's bandwidth is one
figure for every dtype, so its cells pool them.

For a failing cell the attribution names the constant that regime validates,
the direction and median size of the latency error, and the value of that
constant the measurements imply (the model's value scaled by the ratio of the
model's term to the measured time less launch):

- ``alu_bound``: the achievable peak of the cell's dtype;
- a tier regime: that tier's effective bandwidth;
- ``launch_bound``: the dtype's dispatch overhead where the call pays it (a
  matrix product at a dtype with a dispatch path of its own), else the
  launch overhead; the measured time less everything else the model puts in
  the call falls on that one constant;
- energy failures: the static power (measured energy less the model's dynamic
  energy, over the measured time).

A failing cell whose median signed error is *centred* (within a quarter of
the cell's band, :data:`CENTRED_FRACTION`) names no moved constant: the
constant is right on average and the rows scatter around it (a term the model
lacks, not a drifted constant), so the sentence gives the spread instead:
p10..p90 of the signed errors and how many rows lie beyond the band on each
side. An off-centre cell whose implied constant is within
:data:`HOLDS_CHANGE` of the model's says the constant holds and the error
comes from another term (for energy, most often the predicted latency).

A record whose predictor does not report the term a constant is inferred from
(a predictor with no compute or memory breakdown) adds nothing to that figure.

The constants above are the target spec's, which the reference model uses.
Another predictor's cells are attributed to the constants it declares
(:class:`~graphsval_core.plugins.records.PredictorConstant`, per target, op
and dtype): each constant of the cell's regime (or of every regime) that
governs the failing quantity, with the value the measurements imply by its
unit (:func:`implied_declared`). A failing cell for which the predictor
declares no such constant names the error and its spread, and says that no
constant can be named.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from attrs import frozen

from graphsval_core.datamodel.dtypes import KNOWN_DTYPES
from graphsval_core.datamodel.regimes import ALU_BOUND, LAUNCH_BOUND, order, regime_tier
from graphsval_core.datamodel.units import fmt_seconds, fmt_si
from graphsval_core.plugins.records import PredictorConstant
from graphsval_core.validate.records import Records

VERDICTS = ("regime", "latency", "energy")

#: The regimes whose constant a target has per dtype: one dtype per cell.
PER_DTYPE: tuple[str, ...] = (LAUNCH_BOUND, ALU_BOUND)

#: A failing cell's median signed error is centred when within this share of
#: its band: the constant holds on average, the rows scatter.
CENTRED_FRACTION = 0.25
#: A constant whose implied value is within this share of the model's holds:
#: an off-centre cell's error then comes from another term.
HOLDS_CHANGE = 0.02


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


@frozen
class Cell:
    """The checked records of one target, op and predicted regime, and of one
    dtype where the regime's constant is per dtype (``dtype`` None: pooled)."""

    hardware: str
    op: str
    regime: str
    dtype: str | None
    records: Records

    @property
    def label(self) -> str:
        return cell_label(self.regime, self.dtype)

    @property
    def n(self) -> int:
        return len(self.records)

    def fails(self, kind: str) -> int:
        """Records whose ``kind`` verdict (regime, latency, energy) failed."""
        return sum(1 for v in getattr(self.records, f"pass_{kind}") if v is False)

    @property
    def passed(self) -> int:
        return sum(1 for v in self.records.passed if v)

    @property
    def ok(self) -> bool:
        return self.passed == self.n

    def text(self) -> str:
        """``OK 18/18`` or ``FAIL R2 L5 E1 /18`` (R regime, L latency, E energy)."""
        if self.ok:
            return f"OK {self.passed}/{self.n}"
        parts = [f"{k[0].upper()}{self.fails(k)}" for k in VERDICTS if self.fails(k)]
        return f"FAIL {' '.join(parts)} /{self.n}"


def build_cells(records: Records) -> dict[tuple[str, str, str, str | None], Cell]:
    """The cells of the checked records, keyed ``(hardware, op, regime,
    dtype)`` (dtype None for a regime of :data:`PER_DTYPE`'s complement), in
    order of first appearance."""
    members: dict[tuple[str, str, str, str | None], list[int]] = {}
    for i in np.flatnonzero(records.checked):
        regime = records.regime_predicted[i]
        dtype = records.dtype[i] if regime in PER_DTYPE else None
        key = (records.hardware[i], records.op[i], regime, dtype)
        members.setdefault(key, []).append(int(i))
    return {key: Cell(*key, records.take(np.array(index))) for key, index in members.items()}


def cell_order(cell: Cell) -> tuple[Any, ...]:
    """Report order: target, op, regime (launch, compute, tiers), dtype."""
    return cell.hardware, cell.op, order(cell.regime), dtype_order(cell.dtype)


@frozen
class Drift:
    """The value of one constant that a cell's measurements imply, and the
    spread of the cell's signed errors (``error_kind``: latency or energy)
    around their median: p10 and p90, and how many of the ``rows`` judged lie
    beyond the ``band`` on the over- and the under-predicting side."""

    constant: str
    unit: str
    model: float
    implied: float
    shapes: int
    median_error: float
    error_kind: str = "latency"
    band: float = float("nan")
    p10: float = float("nan")
    p90: float = float("nan")
    over: int = 0
    under: int = 0
    rows: int = 0

    @property
    def change(self) -> float:
        return self.implied / self.model - 1.0 if self.model else float("nan")

    @property
    def centred(self) -> bool:
        """The median error is within :data:`CENTRED_FRACTION` of the band:
        no constant moved, the rows scatter around a right one."""
        return bool(abs(self.median_error) <= CENTRED_FRACTION * self.band)

    def _fmt(self, v: float) -> str:
        return fmt_seconds(v) if self.unit == "s" else fmt_si(v, self.unit)

    @property
    def holds(self) -> bool:
        """The implied constant is within :data:`HOLDS_CHANGE` of the model's:
        the cell's error does not come from this constant."""
        return bool(abs(self.change) < HOLDS_CHANGE)

    def text(self) -> str:
        if not self.constant:
            return self._unnamed_text()
        if self.centred:
            return self._centred_text()
        direction = "over" if self.median_error > 0 else "under"
        if self.holds:
            return (
                f"{self.constant} (model {self._fmt(self.model)}) holds: the measurements "
                f"imply {self._fmt(self.implied)} ({self.change:+.1%}) over {self.shapes} "
                f"shape{'s' if self.shapes != 1 else ''}, yet the model {direction}-predicts "
                f"{self.error_kind} by {abs(self.median_error):.0%} (median): the error comes "
                "from another term (for energy, most often the latency the model predicts), "
                "not from this constant"
            )
        direction = "over" if self.median_error > 0 else "under"
        return (
            f"{self.constant}: model {self._fmt(self.model)}, measurements imply "
            f"{self._fmt(self.implied)} ({self.change:+.0%}) over {self.shapes} "
            f"shape{'s' if self.shapes != 1 else ''}; the model {direction}-predicts "
            f"{self.error_kind} by {abs(self.median_error):.0%} (median)"
        )

    def _unnamed_text(self) -> str:
        """A cell whose predictor declares no constant for it."""
        direction = "over" if self.median_error > 0 else "under"
        return (
            f"the predictor declares no {self.error_kind} constant for this cell, so no "
            f"constant can be named: the model {direction}-predicts {self.error_kind} by "
            f"{abs(self.median_error):.0%} (median) over {self.rows} "
            f"shape{'s' if self.rows != 1 else ''} (p10..p90 {self.p10:+.0%}..{self.p90:+.0%})"
        )

    def _centred_text(self) -> str:
        spread = f"p10..p90 {self.p10:+.0%}..{self.p90:+.0%}"
        if self.over or self.under:
            tail = (
                f"the rows scatter ({spread}; {self.over} over- and {self.under} "
                f"under-predicted beyond the band, of {self.rows}): a missing term, "
                "not a drifted constant"
            )
        else:
            tail = f"every row is within the band ({spread}): the cell fails on its regime verdict"
        return (
            f"{self.constant} (model {self._fmt(self.model)}) holds on average: median "
            f"{self.error_kind} error {self.median_error:+.0%}, centred (within a quarter of "
            f"the {self.band:.0%} band); {tail}"
        )


def _median(values: Any) -> float:
    values = np.asarray(values, dtype=np.float64)
    return float(np.median(values)) if values.size else float("nan")


def _spread(errors: Any, bands: Any) -> dict[str, Any]:
    """What :class:`Drift` says of the signed ``errors`` (NaN: not judged)
    against their ``bands``: the median, the band, p10, p90, the rows beyond
    the band on each side."""
    errors = np.asarray(errors, dtype=np.float64)
    bands = np.asarray(bands, dtype=np.float64)
    judged = np.isfinite(errors)
    errors, bands = errors[judged], bands[judged]
    if not errors.size:
        return {"median_error": float("nan"), "rows": 0}
    p10, p90 = np.percentile(errors, [10, 90])
    return {
        "median_error": float(np.median(errors)),
        "band": _median(bands),
        "p10": float(p10),
        "p90": float(p90),
        "over": int(np.sum(errors > bands)),
        "under": int(np.sum(errors < -bands)),
        "rows": int(errors.size),
    }


def _latency_spread(records: Records) -> dict[str, Any]:
    return _spread(records.latency_error, records.tolerance_latency)


def _implied_rate(records: Records, rate: np.ndarray, term: np.ndarray) -> np.ndarray:
    """``rate x term / (measured - fixed)`` where the measured time exceeds the
    fixed time and the term is known: the rate that would make the term the
    measured time less launch."""
    measured = records.latency_measured_s
    fixed = records.terms.fixed_s
    usable = (measured > fixed) & np.isfinite(term) & np.isfinite(rate) & (rate != 0)
    return rate[usable] * term[usable] / (measured[usable] - fixed[usable])


def _by_dtype(records: Records) -> list[tuple[str, Records]]:
    """The records of each dtype, in dtype order (one for a cell of :data:`PER_DTYPE`)."""
    return [
        (dtype, records.take(records.dtype == dtype))
        for dtype in sorted(set(records.dtype), key=dtype_order)
    ]


def _compute_drifts(cell: Cell) -> list[Drift]:
    """The achievable peak of the cell's dtype."""
    out = []
    for dtype, sub in _by_dtype(cell.records):
        implied = _implied_rate(sub, sub.terms.achievable_ops_per_s, sub.terms.compute_s)
        if implied.size:
            unit = "OP/s" if dtype.startswith("int") else "FLOP/s"
            out.append(
                Drift(
                    f"achievable peak {dtype}",
                    unit,
                    float(sub.terms.achievable_ops_per_s[0]),
                    _median(implied),
                    int(implied.size),
                    **_latency_spread(sub),
                )
            )
    return out


def _launch_drifts(cell: Cell) -> list[Drift]:
    """The launch constant of the cell's dtype (its dispatch overhead where
    the call pays one, else the launch overhead): the measured time less
    compute or memory and the rest of the fixed time, less the launch the
    model adds beyond that one constant (further kernels, a thread team)."""
    out = []
    for dtype, sub in _by_dtype(cell.records):
        terms = sub.terms
        per_dtype = bool(np.isfinite(terms.dispatch_s).all())
        constant = terms.dispatch_s if per_dtype else terms.launch_overhead_s
        if not np.isfinite(constant).all():  # records built without the constants
            constant = terms.launch_s
        busy = np.maximum(terms.compute_s, terms.memory_s)
        known = np.isfinite(busy)
        implied = np.maximum(0.0, (sub.latency_measured_s - busy - terms.fixed_s + constant)[known])
        if implied.size:
            out.append(
                Drift(
                    f"dispatch overhead {dtype}" if per_dtype else "launch overhead",
                    "s",
                    _median(constant),
                    _median(implied),
                    int(implied.size),
                    **_latency_spread(sub),
                )
            )
    return out


def _tier_drifts(cell: Cell) -> list[Drift]:
    """The binding tier's effective bandwidth."""
    recs = cell.records
    tier = regime_tier(cell.regime) or cell.regime
    implied = _implied_rate(recs, recs.terms.tier_bandwidth_bps, recs.terms.memory_s)
    if not implied.size:
        return []
    return [
        Drift(
            f"{tier.upper()} bandwidth",
            "B/s",
            float(recs.terms.tier_bandwidth_bps[0]),
            _median(implied),
            int(implied.size),
            **_latency_spread(recs),
        )
    ]


def _energy_drifts(cell: Cell) -> list[Drift]:
    """The static power: measured energy less the model's dynamic energy, over
    the measured time."""
    judged = np.array([v is not None for v in cell.records.pass_energy], dtype=bool)
    recs = cell.records.take(judged)
    terms = recs.terms
    compute, traffic = np.nan_to_num(terms.energy_compute_j), np.nan_to_num(terms.energy_traffic_j)
    implied = (recs.energy_measured_j - compute - traffic) / recs.latency_measured_s
    return [
        Drift(
            "static power",
            "W",
            float(terms.static_power_w[0]),
            _median(implied),
            int(implied.size),
            error_kind="energy",
            **_spread(recs.energy_error, recs.tolerance_energy),
        )
    ]


#: A predictor's declared constants per (hardware, op, dtype); None: it declares none.
Declared = Mapping[tuple[str, str, str], tuple[PredictorConstant, ...] | None]


def implied_declared(records: Records, constant: PredictorConstant) -> np.ndarray:
    """The value of a declared constant each record's measurement implies.

    A rate (unit ending in ``/s``) scales inversely with the time it governs:
    the term the predictor reports for the regime where it has one (compute
    for ``alu_bound``, memory for a tier), else its whole predicted latency.
    A time (``s``) adds to the latency; a power (``W``) adds the energy the
    model misses over the measured time; any other unit scales with the
    quantity (measured over predicted)."""
    value = float(constant.value)
    if constant.quantity == "energy":
        measured, predicted = records.energy_measured_j, records.energy_predicted_j
    else:
        measured, predicted = records.latency_measured_s, records.latency_predicted_s
    ok = np.isfinite(measured) & np.isfinite(predicted) & (measured > 0) & (predicted > 0)
    latency = constant.quantity == "latency"
    with np.errstate(divide="ignore", invalid="ignore"):
        if latency and constant.unit.endswith("/s"):
            terms = records.terms
            term = terms.compute_s if constant.regime == ALU_BOUND else terms.memory_s
            rest = measured - np.nan_to_num(records.terms.fixed_s)
            reported = np.isfinite(term) & (rest > 0)
            implied = np.where(reported, value * term / rest, value * predicted / measured)
        elif latency and constant.unit == "s":
            implied = value + (measured - predicted)
        elif constant.unit == "W":
            implied = value + (measured - predicted) / records.latency_measured_s
        else:
            implied = value * measured / predicted
    return implied[ok & np.isfinite(implied)]


def _declared_drifts(cell: Cell, declared: Declared) -> list[Drift]:
    """A failing cell of a predictor other than the reference: one drift per
    declared constant that governs the failing quantity in the cell's regime,
    and one that names no constant for the dtypes it declares none for."""
    out: list[Drift] = []
    kinds = []
    if cell.fails("latency") or cell.fails("regime"):
        kinds.append("latency")
    if cell.fails("energy"):
        kinds.append("energy")
    for kind in kinds:
        recs = cell.records
        if kind == "energy":
            recs = recs.take(np.array([v is not None for v in recs.pass_energy], dtype=bool))
        by_constant: dict[PredictorConstant, list[str]] = {}
        unnamed: list[str] = []
        for dtype in sorted(set(recs.dtype), key=dtype_order):
            mine = [
                c
                for c in declared.get((cell.hardware, cell.op, dtype)) or ()
                if c.quantity == kind and c.regime in (None, cell.regime)
            ]
            for constant in mine:
                by_constant.setdefault(constant, []).append(dtype)
            if not mine:
                unnamed.append(dtype)
        errors = "energy_error" if kind == "energy" else "latency_error"
        bands = "tolerance_energy" if kind == "energy" else "tolerance_latency"
        for constant, dtypes in by_constant.items():
            sub = recs.take(np.isin(recs.dtype, dtypes))
            implied = implied_declared(sub, constant)
            out.append(
                Drift(
                    constant.name,
                    constant.unit,
                    float(constant.value),
                    _median(implied),
                    int(implied.size),
                    error_kind=kind,
                    **_spread(getattr(sub, errors), getattr(sub, bands)),
                )
            )
        if unnamed:
            sub = recs.take(np.isin(recs.dtype, unnamed))
            spread = _spread(getattr(sub, errors), getattr(sub, bands))
            nan = float("nan")
            out.append(Drift("", "", nan, nan, spread["rows"], error_kind=kind, **spread))
    return out


def attribute(cell: Cell, declared: Declared | None = None) -> list[Drift]:
    """The drifted constant(s) of a cell (empty for a passing cell).

    ``declared``: the constants a predictor other than the reference declares
    (see the module doc); None for the reference model, whose constants are
    the target spec's."""
    if cell.ok:
        return []
    if declared is not None:
        return _declared_drifts(cell, declared)
    drifts: list[Drift] = []
    if cell.fails("latency") or cell.fails("regime"):
        if cell.regime == ALU_BOUND:
            drifts += _compute_drifts(cell)
        elif cell.regime == LAUNCH_BOUND:
            drifts += _launch_drifts(cell)
        else:
            drifts += _tier_drifts(cell)
    if cell.fails("energy"):
        drifts += _energy_drifts(cell)
    return drifts
