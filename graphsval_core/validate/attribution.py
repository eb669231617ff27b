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
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from attrs import define, field

from graphsval_core.datamodel.regimes import ALU_BOUND, LAUNCH_BOUND, regime_tier
from graphsval_core.datamodel.units import fmt_seconds, fmt_si


@define
class Cell:
    hardware: str
    op: str
    regime: str
    records: list[dict[str, Any]] = field(factory=list)

    @property
    def n(self) -> int:
        return len(self.records)

    def fails(self, kind: str) -> int:
        return sum(1 for r in self.records if r[f"pass_{kind}"] is False)

    @property
    def passed(self) -> int:
        return sum(1 for r in self.records if r["passed"])

    @property
    def ok(self) -> bool:
        return self.passed == self.n

    def text(self) -> str:
        """``OK 18/18`` or ``FAIL R2 L5 E1 /18`` (R regime, L latency, E energy)."""
        if self.ok:
            return f"OK {self.passed}/{self.n}"
        parts = [
            f"{k[0].upper()}{self.fails(k)}"
            for k in ("regime", "latency", "energy")
            if self.fails(k)
        ]
        return f"FAIL {' '.join(parts)} /{self.n}"


def build_cells(records: Sequence[dict[str, Any]]) -> dict[tuple[str, str, str], Cell]:
    cells: dict[tuple[str, str, str], Cell] = {}
    for r in records:
        if r["status"] != "checked":
            continue
        key = (r["hardware"], r["op"], r["regime_predicted"])
        cells.setdefault(key, Cell(*key)).records.append(r)
    return cells


@define
class Drift:
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

    def to_dict(self) -> dict[str, Any]:
        return {
            "constant": self.constant,
            "unit": self.unit,
            "model": self.model,
            "implied": self.implied,
            "change": self.change,
            "shapes": self.shapes,
            "median_error": self.median_error,
            "error_kind": self.error_kind,
        }


def _median(values: list[float]) -> float:
    return float(np.median(values)) if values else float("nan")


def _fixed(record: dict[str, Any]) -> float:
    """The record's predicted time outside compute and memory: launch (all its
    kernels and any fork/join), first touch and packing."""
    terms = record["_terms"]
    return float(terms.get("fixed_s", terms["launch_s"]))


def attribute(cell: Cell) -> list[Drift]:
    """The drifted constant(s) of a cell (empty for a passing cell)."""
    if cell.ok:
        return []
    drifts: list[Drift] = []
    recs = cell.records
    if cell.fails("latency") or cell.fails("regime"):
        if cell.regime == ALU_BOUND:
            for dtype in sorted({r["dtype"] for r in recs}):
                sub = [r for r in recs if r["dtype"] == dtype]
                implied = [
                    r["_terms"]["achievable_ops_per_s"]
                    * r["_terms"]["compute_s"]
                    / (r["latency_measured_s"] - _fixed(r))
                    for r in sub
                    if r["latency_measured_s"] > _fixed(r)
                ]
                if implied:
                    unit = "OP/s" if dtype.startswith("int") else "FLOP/s"
                    drifts.append(
                        Drift(
                            f"achievable peak {dtype}",
                            unit,
                            sub[0]["_terms"]["achievable_ops_per_s"],
                            _median(implied),
                            len(implied),
                            _median([r["latency_error"] for r in sub]),
                        )
                    )
        elif cell.regime == LAUNCH_BOUND:
            implied = [
                max(
                    0.0,
                    r["latency_measured_s"]
                    - max(r["_terms"]["compute_s"], r["_terms"]["memory_s"])
                    - (_fixed(r) - r["_terms"]["launch_s"]),
                )
                for r in recs
            ]
            drifts.append(
                Drift(
                    "launch overhead",
                    "s",
                    _median([r["_terms"]["launch_s"] for r in recs]),
                    _median(implied),
                    len(implied),
                    _median([r["latency_error"] for r in recs]),
                )
            )
        else:
            tier = regime_tier(cell.regime) or cell.regime
            implied = [
                r["_terms"]["tier_bandwidth_bps"]
                * r["_terms"]["memory_s"]
                / (r["latency_measured_s"] - _fixed(r))
                for r in recs
                if r["latency_measured_s"] > _fixed(r)
                and r["_terms"]["tier_bandwidth_bps"]
            ]
            if implied:
                drifts.append(
                    Drift(
                        f"{tier.upper()} bandwidth",
                        "B/s",
                        recs[0]["_terms"]["tier_bandwidth_bps"],
                        _median(implied),
                        len(implied),
                        _median([r["latency_error"] for r in recs]),
                    )
                )
    if cell.fails("energy"):
        with_energy = [r for r in recs if r["pass_energy"] is not None]
        implied = [
            (
                r["energy_measured_j"]
                - r["_terms"].get("energy_compute_j", 0.0)
                - r["_terms"].get("energy_traffic_j", 0.0)
            )
            / r["latency_measured_s"]
            for r in with_energy
        ]
        drifts.append(
            Drift(
                "static power",
                "W",
                with_energy[0]["_terms"]["static_power_w"],
                _median(implied),
                len(implied),
                _median([r["energy_error"] for r in with_energy]),
                "energy",
            )
        )
    return drifts
