"""The energy fit: bounded linear least squares on rows whose energy is
trustworthy (a window of at least ``MIN_ENERGY_WINDOW_S``, not below the
sensor's averaging period).

It fits the energy per op of each dtype, one scale of the spec's energy per
byte of every tier (their ratios kept), and the static power, none below
``ENERGY_FLOOR`` of the spec's value; a coefficient at its floor is reported
as such (the rows leave it no share), and the model uses exactly the values
the fit predicted with. The fitted model predicts the quantity the rows
measured (their sensor and rails, recorded as ``measured_as``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np
from attrs import field, frozen

from graphsval_core.calibrate.rows import by_op_and_dtype
from graphsval_core.datamodel.target import TargetSpec
from graphsval_core.files.baseline import BaselineRow, energy_window_s, short_energy_window
from graphsval_core.model.reference import predict

#: The shortest energy window a row may have to take part in the fit (s).
MIN_ENERGY_WINDOW_S = 0.01
#: The least share of the spec's value an energy coefficient may take.
ENERGY_FLOOR = 0.1
#: How the one scale of every tier's energy per byte is named among the
#: coefficients at their floor.
ALL_TIERS_PER_BYTE = "energy per byte (all tiers)"


@frozen
class EnergyFit:
    """The fitted energy constants (by their calibration-file names), or why
    there are none (``skipped``), with the number of rows either way."""

    rows: int
    skipped: str | None = None
    #: The sensors (and rails) the rows were measured with.
    measured_as: tuple[str, ...] = ()
    values: dict[str, float] = field(factory=dict)
    #: The fitted multiplier of every tier's energy per byte.
    traffic_scale: float | None = None
    median_abs_error: float | None = None
    #: Coefficients held at their floor (``ALL_TIERS_PER_BYTE`` for the scale).
    at_floor: tuple[str, ...] = ()

    @property
    def fitted(self) -> bool:
        return self.skipped is None


def trustworthy_energy(rows: Sequence[BaselineRow]) -> list[BaselineRow]:
    """The rows with an energy and a latency whose energy window is long
    enough (not short of the sensor's period, at least ``MIN_ENERGY_WINDOW_S``)."""
    out = []
    for r in rows:
        if not r.energy_j or not r.latency_s:
            continue
        if short_energy_window(r):
            continue
        seconds = energy_window_s(r)
        if seconds is not None and seconds >= MIN_ENERGY_WINDOW_S:
            out.append(r)
    return out


def _energy_sources(rows: Sequence[BaselineRow]) -> list[str]:
    """The sensors (and rails) the energy rows were measured with: a model
    calibrated on them predicts that quantity (e.g. VDD_IN + VDD_SOC summed)."""
    found = set()
    for r in rows:
        source = r.extras.get("energy_source", "").strip()
        rails = re.search(r"rails=\[[^\]]*\]", r.notes)
        if source and source != "none":
            found.add(source)
        elif rails:
            found.add(f"INA3221 {rails.group(0)} summed, as captured")
        else:
            found.add("unstated by the baseline (V4 file): the target's own energy source")
    return sorted(found)


def fit_energy(registry: Any, spec: TargetSpec, rows: Sequence[BaselineRow]) -> EnergyFit:
    """Energy per op (per dtype), one scale of the per-byte energies, static power."""
    from scipy.optimize import lsq_linear

    good = trustworthy_energy(rows)
    dtypes = sorted({r.dtype for r in good})
    if len(good) < len(dtypes) + 3:
        return EnergyFit(rows=len(good), skipped="too few rows with a trustworthy energy window")
    a = np.zeros((len(good), len(dtypes) + 2))
    b = np.array([r.energy_j for r in good])
    for (op_name, dtype), index in by_op_and_dtype(good).items():
        shapes = np.array([good[i].dims for i in index], dtype=np.int64)
        p = predict(registry, spec, registry.op(op_name), shapes, dtype)
        for j, i in enumerate(index):
            a[i, dtypes.index(dtype)] = p.flops[j]
            a[i, len(dtypes)] = float(p.energy_per_tier_j[j].sum())
            a[i, len(dtypes) + 1] = good[i].latency_s
    # scale columns to unit size so the solver treats them alike; fit relative errors
    weights = 1.0 / b
    aw, bw = a * weights[:, None], b * weights
    norms = np.maximum(np.linalg.norm(aw, axis=0), 1e-300)
    # no coefficient below a tenth of the spec's: a term the rows cannot see
    # (its share hides under static power) stays small but physical, and the
    # model predicts exactly what was fitted
    spec_values = np.array(
        [spec.energy_per_op_j[d] for d in dtypes] + [1.0, max(spec.idle_power_w, 1e-3)]
    )
    floor = ENERGY_FLOOR * spec_values
    solution = lsq_linear(aw / norms, bw, bounds=(floor * norms, np.inf)).x / norms
    solution = np.maximum(solution, floor)
    values = {f"energy_per_op_j.{d}": float(solution[i]) for i, d in enumerate(dtypes)}
    scale = float(solution[len(dtypes)])
    for tier in spec.tiers:
        values[f"tiers.{tier.name}.energy_per_byte_j"] = tier.energy_per_byte_j * scale
    values["idle_power_w"] = float(solution[len(dtypes) + 1])
    names = [f"energy_per_op_j.{d}" for d in dtypes] + [ALL_TIERS_PER_BYTE, "idle_power_w"]
    pinned = [n for n, v, f in zip(names, solution, floor, strict=True) if v <= f * (1 + 1e-6)]
    predicted = a @ solution
    return EnergyFit(
        rows=len(good),
        measured_as=tuple(_energy_sources(good)),
        values=values,
        traffic_scale=scale,
        median_abs_error=float(np.median(np.abs(predicted - b) / b)),
        at_floor=tuple(pinned),
    )
