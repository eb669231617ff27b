"""Heatmap cells (target x op x regime) and drift attribution for failing cells.

A cell holds the checked records of one target and op whose predicted regime
is that regime. For a failing cell the attribution names the constant that
regime validates, the direction and median size of the latency error, and the
value of that constant the measurements imply (the model's value scaled by the
ratio of the model's term to the measured time less launch):

- ``alu_bound``: the achievable peak of each dtype;
- a tier regime: that tier's effective bandwidth;
- ``launch_bound``: the launch/dispatch overhead;
- energy failures: the static power (measured energy less the model's dynamic
  energy, over the measured time).

A record whose predictor does not report the term a constant is inferred from
(a predictor with no compute or memory breakdown) adds nothing to that figure.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from attrs import frozen

from graphsval_core.datamodel.regimes import ALU_BOUND, LAUNCH_BOUND, regime_tier
from graphsval_core.datamodel.units import fmt_seconds, fmt_si
from graphsval_core.validate.records import Records

VERDICTS = ("regime", "latency", "energy")


@frozen
class Cell:
    """The checked records of one target, op and predicted regime."""

    hardware: str
    op: str
    regime: str
    records: Records

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


def build_cells(records: Records) -> dict[tuple[str, str, str], Cell]:
    """The cells of the checked records, in order of first appearance."""
    members: dict[tuple[str, str, str], list[int]] = {}
    for i in np.flatnonzero(records.checked):
        key = (records.hardware[i], records.op[i], records.regime_predicted[i])
        members.setdefault(key, []).append(int(i))
    return {key: Cell(*key, records.take(np.array(index))) for key, index in members.items()}


@frozen
class Drift:
    """The value of one constant that a cell's measurements imply."""

    constant: str
    unit: str
    model: float
    implied: float
    shapes: int
    median_error: float
    error_kind: str = "latency"

    @property
    def change(self) -> float:
        return self.implied / self.model - 1.0 if self.model else float("nan")

    def text(self) -> str:
        def fmt(v: float) -> str:
            return fmt_seconds(v) if self.unit == "s" else fmt_si(v, self.unit)

        direction = "over" if self.median_error > 0 else "under"
        return (
            f"{self.constant}: model {fmt(self.model)}, measurements imply {fmt(self.implied)} "
            f"({self.change:+.0%}) over {self.shapes} shape{'s' if self.shapes != 1 else ''}; "
            f"the model {direction}-predicts {self.error_kind} by "
            f"{abs(self.median_error):.0%} (median)"
        )


def _median(values: Any) -> float:
    values = np.asarray(values, dtype=np.float64)
    return float(np.median(values)) if values.size else float("nan")


def _implied_rate(records: Records, rate: np.ndarray, term: np.ndarray) -> np.ndarray:
    """``rate x term / (measured - fixed)`` where the measured time exceeds the
    fixed time and the term is known: the rate that would make the term the
    measured time less launch."""
    measured = records.latency_measured_s
    fixed = records.terms.fixed_s
    usable = (measured > fixed) & np.isfinite(term) & np.isfinite(rate) & (rate != 0)
    return rate[usable] * term[usable] / (measured[usable] - fixed[usable])


def _compute_drifts(cell: Cell) -> list[Drift]:
    """The achievable peak of each dtype."""
    out = []
    recs = cell.records
    for dtype in sorted(set(recs.dtype)):
        sub = recs.take(recs.dtype == dtype)
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
                    _median(sub.latency_error),
                )
            )
    return out


def _launch_drifts(cell: Cell) -> list[Drift]:
    """The launch overhead: the measured time less compute or memory and the
    rest of the fixed time."""
    recs = cell.records
    terms = recs.terms
    busy = np.maximum(terms.compute_s, terms.memory_s)
    known = np.isfinite(busy)
    implied = np.maximum(
        0.0,
        recs.latency_measured_s[known] - busy[known] - (terms.fixed_s - terms.launch_s)[known],
    )
    if not implied.size:
        return []
    return [
        Drift(
            "launch overhead",
            "s",
            _median(terms.launch_s),
            _median(implied),
            int(implied.size),
            _median(recs.latency_error),
        )
    ]


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
            _median(recs.latency_error),
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
            _median(recs.energy_error),
            "energy",
        )
    ]


def attribute(cell: Cell) -> list[Drift]:
    """The drifted constant(s) of a cell (empty for a passing cell)."""
    if cell.ok:
        return []
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
