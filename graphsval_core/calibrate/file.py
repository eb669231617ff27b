"""The calibration file's content: the fitted constants beside the spec's
values, where each came from (and, for one at a bound of its range or at
its floor, which: ``at_bound``), the energy fit, the fit's quality (in
sample and leave-one-out) and its diagnostics, every row's residual, and the
baselines it was fitted on (file name, SHA-256, rows used).

The file holds no wall-clock time: the same inputs give the same bytes.
Reading a calibration file and applying it to a spec is
:mod:`graphsval_core.files.calibration`.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from graphsval_core import __version__
from graphsval_core.calibrate.energy import ALL_TIERS_PER_BYTE, ENERGY_FLOOR, EnergyFit
from graphsval_core.calibrate.evaluate import ErrorFigures, OutOfSample
from graphsval_core.calibrate.fit import Fit
from graphsval_core.calibrate.validation import ValidationFigures, file_name
from graphsval_core.datamodel.target import TargetSpec
from graphsval_core.files.baseline import Baseline
from graphsval_core.files.calibration import current_values, resolved

if TYPE_CHECKING:
    from graphsval_core.calibrate.diagnostics import Diagnostic

SCHEMA_VERSION = 1


def _sig(x: float) -> float | None:
    """6 significant digits; None for a value that is not a number (strict JSON)."""
    return None if not math.isfinite(x) else float(f"{x:.6g}")


def _sig_down(x: float) -> float:
    """The largest number of 6 significant digits not above ``x`` (> 0)."""
    rounded = float(f"{x:.6g}")
    if rounded <= x:
        return rounded
    return float(f"{x - 10 ** (math.floor(math.log10(x)) - 5):.6g}")


def _held_entries(spec: TargetSpec, fit: Fit, written: dict[str, Any]) -> dict[str, Any]:
    """The entries of the tiers :func:`fit._hold_hierarchy` held at the
    bandwidth of the tier inside them: their fraction from that tier's value
    as the file gives it (``written``, or the spec's), rounded down, so that
    a tier read back from the file is never faster than the one inside it
    (each rounded to 6 digits on its own, a held L3 came out 1.2e-6 faster
    than the i7's L2)."""
    out: dict[str, Any] = {}
    for k, tier in enumerate(spec.tiers):
        name = f"tiers.{tier.name}.achievable_fraction"
        if name not in fit.held:
            continue
        inner = spec.tiers[k - 1]
        inner_name = f"tiers.{inner.name}.achievable_fraction"
        entry = out.get(inner_name) or written.get(inner_name)
        inner_fraction = entry["value"] if entry else inner.achievable_fraction
        bandwidth = inner_fraction * inner.peak_bandwidth_bps
        out[name] = {
            "value": _sig_down(bandwidth / tier.peak_bandwidth_bps),
            "datasheet": _sig(tier.achievable_fraction),
            "from": fit.held[name],
        }
    return out


def sha256_of(text: str) -> str:
    """The hex SHA-256 of ``text`` encoded as UTF-8 (a baseline's digest)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def build_file(
    spec: TargetSpec,
    baselines: Sequence[tuple[Baseline, str]],
    fit: Fit,
    energy: EnergyFit,
    loo: OutOfSample | None,
    override: str | None,
    in_band: float,
    grouped: OutOfSample | None = None,
    in_sample: dict[str, ErrorFigures] | None = None,
    warnings: Sequence[str] = (),
    diagnostics: Sequence[Diagnostic] = (),
    validation: ValidationFigures | None = None,
) -> dict[str, Any]:
    """The calibration file's content for ``spec`` (the datasheet spec), from
    ``baselines`` (each with its SHA-256), the latency and energy fits, the
    leave-one-out figures (None when skipped), the reason validation rows
    were allowed (None when they were not), the in-sample band share, the
    grouped cross-validation (None when skipped), the in-sample figures of
    each op, the warnings about the fit and its diagnostics (each a record
    in ``fit.diagnostics``; a latency constant at a bound of its range gets
    ``at_bound``: ``lower`` or ``upper``, an energy one at its floor
    ``floor``), and the figures on the validation set (``fit.validation``;
    empty when there was none)."""
    constants: dict[str, Any] = {}
    bounds = {d.subject: d.bound for d in diagnostics if d.kind == "at_bound"}
    datasheet = current_values(spec)
    for p in fit.params:
        if p.name not in fit.values or p.name in fit.held:
            continue
        constants[p.name] = {
            "value": _sig(resolved(spec, p.name, fit.values[p.name])),
            "datasheet": _sig(datasheet.get(p.name, float("nan"))),
            "relative_uncertainty": _sig(fit.uncertainty[p.name]),
            "from": p.exercised_by,
        }
        if p.name in bounds:
            constants[p.name]["at_bound"] = bounds[p.name]
    constants = {**_held_entries(spec, fit, constants), **constants}
    floored = set(energy.at_floor) | {d.subject for d in diagnostics if d.kind == "at_floor"}
    for name, value in energy.values.items():
        at_floor = name in floored or (
            name.endswith(".energy_per_byte_j") and ALL_TIERS_PER_BYTE in floored
        )
        constants[name] = {
            "value": _sig(value),
            "datasheet": _sig(datasheet.get(name, 0.0)),
            "from": f"{energy.rows} rows with a trustworthy energy window"
            + (
                f"; at its floor ({ENERGY_FLOOR:g} of the spec's value): the rows leave "
                "it no share beside the other terms"
                if at_floor
                else ""
            ),
        }
        if at_floor:
            constants[name]["at_bound"] = "floor"
    residuals = [
        {
            "op": r.op,
            "shape": r.shape,
            "dtype": r.dtype,
            "measured_s": _sig(r.latency_s),
            "predicted_s": _sig(float(pr)),
            "error": _sig(float(e)),
        }
        for r, pr, e in zip(fit.rows, fit.predicted, fit.residuals, strict=True)
    ]
    return {
        "schema_version": SCHEMA_VERSION,
        "target": spec.key,
        "provenance": {
            "kind": "calibrated",
            "graphsval_version": __version__,
            "sources": [
                {
                    "file": b.path.rsplit("/", 1)[-1],
                    "sha256": digest,
                    "rows": sum(1 for r in fit.rows if any(r is x for x in b.rows)),
                }
                for b, digest in baselines
            ],
            "validation_rows_override": override,
        },
        "constants": constants,
        "energy": _energy_section(energy),
        "fit": {
            "rows": len(fit.rows),
            "not_identifiable": {
                name: "the rows do not move it (zero Jacobian column): the spec's value stays"
                for name in fit.not_identifiable
            },
            "median_abs_error": _sig(float(np.median(np.abs(fit.residuals)))),
            "within_band": _sig(in_band),
            "in_sample_per_op": {op: _figures(f) for op, f in (in_sample or {}).items()},
            "leave_one_out": _out_of_sample(loo),
            "grouped_cv": _out_of_sample(grouped),
            "validation": _validation(validation),
            "warnings": list(warnings),
            "diagnostics": [d.record() for d in diagnostics],
        },
        "residuals": residuals,
    }


def _figures(f: ErrorFigures) -> dict[str, Any]:
    """An :class:`ErrorFigures` as JSON: rows, median, band share, p90."""
    return {
        "rows": f.rows,
        "median_abs_error": _sig(f.median_abs_error),
        "within_band": _sig(f.within_band),
        "p90_abs_error": _sig(f.p90_abs_error),
    }


def _validation(v: ValidationFigures | None) -> dict[str, Any]:
    """The validation set's figures as JSON (empty when there was none): its
    files (name and SHA-256, no folder but ``recapture/``), where they came
    from, every row and those left out (by why), and the figures of the rows
    judged with the share within 10%, over all rows and per op."""
    if v is None:
        return {}
    held = v.held
    out: dict[str, Any] = {
        "files": [{"file": file_name(name), "sha256": digest} for name, digest in held.files],
        "from": list(held.origins),
        "validation_rows": held.total,
        "left_out": {
            "no_latency": held.unmeasured,
            "suspect_latency": held.suspect,
            "unusable": held.unusable,
            "shape_measured_again": held.repeated,
            "op_not_calibrated": v.uncalibrated,
            "fitted_too": v.fitted_too,
        },
    }
    out.update(_figures(v.whole))
    if not v.rows:
        return out
    out["within_10pct"] = _sig(v.within)
    out["per_op"] = {
        op: {**_figures(f), "within_10pct": _sig(v.within_per_op[op])} for op, f in v.per_op.items()
    }
    return out


def _out_of_sample(f: OutOfSample | None) -> dict[str, Any]:
    """Out-of-sample figures as JSON, with each op's (empty when skipped)."""
    if f is None:
        return {}
    out = _figures(f)
    out["groups"] = f.groups
    out["per_op"] = {op: _figures(g) for op, g in f.per_op.items()}
    return out


def _energy_section(energy: EnergyFit) -> dict[str, Any]:
    """The file's ``energy`` entry: what the fit rests on and how well it did
    (the values themselves are among the constants)."""
    if not energy.fitted:
        return {"rows": energy.rows, "skipped": energy.skipped}
    out: dict[str, Any] = {
        "rows": energy.rows,
        "measured_as": list(energy.measured_as),
        "traffic_scale": energy.traffic_scale,
        "median_abs_error": energy.median_abs_error,
    }
    if energy.at_floor:
        out["at_floor"] = list(energy.at_floor)
    return out


def dump(data: dict[str, Any]) -> str:
    """The file's text: JSON indented by two, keys in the order built, one final newline."""
    return json.dumps(data, indent=2, sort_keys=False) + "\n"
