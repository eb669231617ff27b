"""The validation harness: predictions against baseline rows, per record and per cell.

One record per baseline row (DESIGN.md section 6). Each counted row is
predicted (batched per target, op and dtype), classified with the classifier's
margins (``near_boundary``), given a measured regime inferred with the same
peaks, and asserted: regime (predicted vs measured), latency and energy within
the tolerance of the predicted regime. Energy is skipped with a reason (no
energy, window below the sensor's resolution or averaging period) rather than
failed. Near-boundary records and records whose measured regime cannot be
placed are flagged and counted, never dropped; rows whose capture failed or
whose correctness verdict failed are excluded and listed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from attrs import define, field

from graphsval_core.datamodel.regimes import AMBIGUOUS
from graphsval_core.files.baseline import Baseline, BaselineRow, short_energy_window
from graphsval_core.model.classifier import classify_details, measured_regime
from graphsval_core.model.reference import NAME as REFERENCE
from graphsval_core.plugins.records import PredictorSpec
from graphsval_core.plugins.registry import Registry

RECAPTURE_DIR = "recapture"


@define
class Selection:
    """The rows of one baseline file that count, and how they were chosen."""

    baseline: Baseline
    rows: list[BaselineRow]
    in_sample: bool = False  # calibration rows validated because no validation rows exist
    warning: str = ""


@define
class Validation:
    """Everything a report needs."""

    records: list[dict[str, Any]]
    predictor: str
    warnings: list[str] = field(factory=list)
    recapture: dict[tuple[str, str], dict[str, Any]] = field(factory=dict)


def _energy_skip(row: BaselineRow) -> str | None:
    if row.energy_j is None:
        note = row.notes.strip()
        return "no energy" + (f" ({note})" if note and "energy" in note.lower() else "")
    if short_energy_window(row):
        return "window below the sensor's resolution or averaging period"
    return None


def _fingerprint_warnings(selection: Selection, target: Any) -> list[str]:
    out = []
    seen: set[tuple[str, str, str]] = set()
    for row in selection.rows:
        text = row.extras.get("fingerprint", "")
        if not text:
            continue
        try:
            captured = json.loads(text)
        except json.JSONDecodeError:
            continue
        for key, value in captured.items():
            want = target.fingerprint.get(key)
            if want is not None and str(want) != str(value) and (key, str(value), want) not in seen:
                seen.add((key, str(value), want))
                out.append(
                    f"{selection.baseline.path}: captured with {key} {value!r}, but target "
                    f"{target.key} says {want!r}"
                )
    return out


def validate(
    registry: Registry,
    selections: Sequence[Selection],
    predictor: PredictorSpec,
    tolerances: dict[str, dict[str, float]],
) -> Validation:
    """Records for every selected row (see module doc)."""
    records: list[dict[str, Any]] = []
    warnings: list[str] = []
    for sel in selections:
        if sel.warning:
            warnings.append(sel.warning)
        groups: dict[tuple[str, str, str], list[BaselineRow]] = {}
        for row in sel.rows:
            groups.setdefault((row.hardware, row.op, row.dtype), []).append(row)
        checked_targets: set[str] = set()
        for (hw, op_name, dtype), rows in groups.items():
            target = registry.target(hw)
            op = registry.op(op_name)
            if hw not in checked_targets:
                warnings += _fingerprint_warnings(sel, target)
                checked_targets.add(hw)
            records += _group_records(registry, sel, target, op, dtype, rows, predictor, tolerances)
    return Validation(records, predictor.name, warnings)


def _base(sel: Selection, row: BaselineRow) -> dict[str, Any]:
    return {
        "hardware": row.hardware,
        "op": row.op,
        "shape": row.shape,
        "dtype": row.dtype,
        "file": sel.baseline.path,
        "line": row.line,
        "purpose": row.purpose,
        "in_sample": sel.in_sample,
        "latency_measured_s": row.latency_s,
        "energy_measured_j": row.energy_j,
        "notes": row.notes,
    }


def _excluded(sel: Selection, row: BaselineRow, reason: str) -> dict[str, Any]:
    return {
        **_base(sel, row),
        "status": "excluded",
        "excluded_reason": reason,
        "passed": None,
        "pass_regime": None,
        "pass_latency": None,
        "pass_energy": None,
        "regime_predicted": None,
        "regime_measured": None,
        "near_boundary": None,
    }


def _group_records(
    registry: Registry,
    sel: Selection,
    target: Any,
    op: Any,
    dtype: str,
    rows: list[BaselineRow],
    predictor: PredictorSpec,
    tolerances: dict[str, dict[str, float]],
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    keep: list[BaselineRow] = []
    for row in rows:
        if row.latency_s is None:
            out.append(_excluded(sel, row, f"capture failed: {row.notes or 'no latency'}"))
        elif row.extras.get("verdict", "").strip().upper() == "FAIL":
            out.append(_excluded(sel, row, "correctness check failed"))
        elif dtype not in target.dtypes:
            out.append(_excluded(sel, row, f"{target.key} has no {dtype}"))
        elif len(row.dims) != len(op.dims):
            out.append(_excluded(sel, row, f"shape needs {len(op.dims)} dims for {op.name}"))
        else:
            keep.append(row)
    if not keep:
        return out
    shapes = np.array([r.dims for r in keep], dtype=np.int64)
    pred = predictor.predict(registry, target, op, shapes, dtype)
    # the classifier is the reference model with margins: reuse its prediction
    reuse = pred if predictor.name == REFERENCE else None
    cls = classify_details(registry, target, op, shapes, dtype, prediction=reuse)
    measured = np.array([r.latency_s for r in keep], dtype=np.float64)
    regime_meas = (
        measured_regime(cls.prediction, measured, target)
        if cls.prediction
        else (np.full(len(keep), AMBIGUOUS, dtype=object))
    )
    for i, row in enumerate(keep):
        regime = str(pred.regime[i])
        tol = tolerances.get(regime, tolerances["dram_bound"])
        lat_pred = float(pred.latency_s[i])
        lat_err = (lat_pred - row.latency_s) / row.latency_s
        e_pred = float(pred.energy_j[i])
        skip = _energy_skip(row)
        e_err = None if skip or not row.energy_j else (e_pred - row.energy_j) / row.energy_j
        near = bool(cls.near_boundary[i])
        measured_r = str(regime_meas[i])
        pass_regime = None if (near or measured_r == AMBIGUOUS) else (measured_r == regime)
        pass_latency = abs(lat_err) <= tol["latency"]
        pass_energy = None if e_err is None else abs(e_err) <= tol["energy"]
        verdicts = [v for v in (pass_regime, pass_latency, pass_energy) if v is not None]
        record = {
            **_base(sel, row),
            "status": "checked",
            "excluded_reason": None,
            "regime_predicted": regime,
            "near_boundary": near,
            "regime_measured": measured_r,
            "latency_predicted_s": lat_pred,
            "latency_error": lat_err,
            "energy_predicted_j": e_pred,
            "energy_error": e_err,
            "energy_skip_reason": skip,
            "pass_regime": pass_regime,
            "pass_latency": pass_latency,
            "pass_energy": pass_energy,
            "passed": all(verdicts),
            "tolerance_latency": tol["latency"],
            "tolerance_energy": tol["energy"],
            "binding_tier": str(pred.binding_tier[i]),
            "explanation": pred.sentence(i),
        }
        record["_terms"] = _terms(pred, i, target, dtype)
        out.append(record)
    return out


def _terms(pred: Any, i: int, target: Any, dtype: str) -> dict[str, Any]:
    """What attribution needs to infer the constant a measurement implies."""
    launch = getattr(pred, "launch_s", None)
    terms: dict[str, Any] = {
        "launch_s": float(launch[i]) if launch is not None else target.launch_for(dtype)
    }
    terms["fixed_s"] = terms["launch_s"] + sum(
        float(getattr(pred, name)[i])
        for name in ("first_touch_s", "pack_s")
        if getattr(pred, name, None) is not None
    )
    for name in ("compute_s", "memory_s", "energy_compute_j", "energy_static_j"):
        value = getattr(pred, name, None)
        if value is not None:
            terms[name] = float(value[i])
    if getattr(pred, "energy_per_tier_j", None) is not None:
        terms["energy_traffic_j"] = float(pred.energy_per_tier_j[i].sum())
    if getattr(pred, "flops", None) is not None:
        terms["flops"] = float(pred.flops[i])
    tier = str(pred.binding_tier[i])
    terms["binding_tier"] = tier
    terms["tier_bandwidth_bps"] = next(
        (t.effective_bandwidth_bps for t in target.tiers if t.name == tier), None
    )
    terms["achievable_ops_per_s"] = target.peak_ops_per_s[dtype] * target.compute_fraction[dtype]
    terms["static_power_w"] = target.idle_power_w
    return terms


def recapture_agreement(
    validation: Validation, pairs: Sequence[tuple[Baseline, Baseline]]
) -> dict[tuple[str, str], dict[str, Any]]:
    """Capture vs recapture per (target, op): the share of shapes whose two
    captures agree within the tolerance of the record's predicted regime (the
    ceiling any model's pass rate can reach), and the median difference."""
    tol_of = {
        (r["file"], r["shape"], r["dtype"]): r
        for r in validation.records
        if r["status"] == "checked"
    }
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for main, again in pairs:
        other = {(r.shape, r.dtype): r for r in again.rows if r.latency_s}
        agree, diffs = 0, []
        for row in main.rows:
            rec = tol_of.get((main.path, row.shape, row.dtype))
            twin = other.get((row.shape, row.dtype))
            if rec is None or twin is None:
                continue
            diff = abs(row.latency_s - twin.latency_s) / twin.latency_s
            diffs.append(diff)
            agree += diff <= rec["tolerance_latency"]
        if diffs:
            key = (main.rows[0].hardware, main.rows[0].op)
            out[key] = {
                "pairs": len(diffs),
                "agree": agree,
                "rate": agree / len(diffs),
                "median_diff": float(np.median(diffs)),
                "file": again.path,
            }
    return out


def recapture_of(path: str, candidates: Sequence[str]) -> str | None:
    """The recapture of baseline ``path``: a file of the same name in a
    ``recapture/`` folder beside it."""
    p = Path(path)
    twin = str(p.parent / RECAPTURE_DIR / p.name)
    return twin if twin in candidates else None
