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

A measurement that is physically implausible (:mod:`graphsval_core.model.plausibility`:
judged against the target's uncalibrated spec, plus what the row's own
``suspect`` column says) is predicted but kept out of pass/fail, with the
reason: an implausible latency makes the record ``suspect`` (no regime,
latency or energy verdict: the energy per call comes from the same timed
window), an implausible energy only skips the energy verdict.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np
from attrs import evolve, field, frozen

from graphsval_core.datamodel.op import OpSpec
from graphsval_core.datamodel.regimes import AMBIGUOUS
from graphsval_core.datamodel.target import TargetSpec
from graphsval_core.files.baseline import Baseline, BaselineRow, short_energy_window
from graphsval_core.files.tolerances import band
from graphsval_core.model.classifier import classify_details, measured_regime
from graphsval_core.model.plausibility import (
    ENERGY,
    LATENCY,
    Flag,
    format_suspect,
    row_flags,
    suspect_of,
)
from graphsval_core.model.prediction import Prediction
from graphsval_core.model.reference import NAME as REFERENCE
from graphsval_core.model.terms.overheads import pays_dispatch
from graphsval_core.plugins.records import PredictorConstant, PredictorSpec
from graphsval_core.plugins.registry import PredictorFailed, PredictorRowsFailed, Registry
from graphsval_core.validate.records import CHECKED, EXCLUDED, SUSPECT, Records, Terms
from graphsval_core.validate.selection import Selection

#: The recapture agreement is also told as the share of shapes within this.
AGREEMENT_BAND = 0.10


@frozen
class Recapture:
    """Capture vs recapture of one (target, op): the share of shapes whose two
    captures agree within the tolerance of the record's predicted regime (the
    ceiling any model's pass rate can reach on that data), the median
    difference, the share within :data:`AGREEMENT_BAND`, and how many shapes
    were measured again after disagreeing. The first capture is compared
    (``first_latency_s`` where a row was re-measured), so re-measuring cannot
    flatter the agreement."""

    pairs: int
    agree: int
    rate: float
    median_diff: float
    file: str
    within_band: float = 0.0
    remeasured: int = 0
    #: the floors of its machine kind (the plugin's floors file), when it has them
    floor_median: float | None = None
    floor_within: float | None = None

    @property
    def below_floor(self) -> bool | None:
        """Whether the agreement is below its floor (None: no floor)."""
        if self.floor_median is None and self.floor_within is None:
            return None
        return (self.floor_median is not None and self.median_diff > self.floor_median) or (
            self.floor_within is not None and self.within_band < self.floor_within
        )

    def floor_text(self) -> str:
        """``floor median <= 4%, >= 80% within 10%: ok`` (empty: no floor)."""
        if self.below_floor is None:
            return ""
        parts = []
        if self.floor_median is not None:
            parts.append(f"median <= {self.floor_median:.0%}")
        if self.floor_within is not None:
            parts.append(f">= {self.floor_within:.0%} within {AGREEMENT_BAND:.0%}")
        verdict = "BELOW its floor" if self.below_floor else "ok"
        return f"floor {', '.join(parts)}: {verdict}"


#: What a predictor's declared constants are keyed by: (hardware, op, dtype).
GroupKey = tuple[str, str, str]


@frozen
class Validation:
    """Everything a report needs: the records, the predictor's name, warnings
    about the data, and the recapture agreement per (target, op).

    ``constants`` is None for the reference predictor (attribution reads the
    constants from the target's spec); for any other predictor, the constants
    it declared per (hardware, op, dtype), None where it declares none."""

    records: Records
    predictor: str
    warnings: list[str] = field(factory=list)
    recapture: dict[tuple[str, str], Recapture] = field(factory=dict)
    constants: dict[GroupKey, tuple[PredictorConstant, ...] | None] | None = None


def _reasons(head: str, flags: Sequence[Flag]) -> str:
    """``head: reason; reason``."""
    return f"{head}: " + "; ".join(f.reason for f in flags)


def _energy_skip(row: BaselineRow, flags: Sequence[Flag] = ()) -> str | None:
    """Why the row's energy is not judged (None: it is)."""
    if row.energy_j is None:
        note = row.notes.strip()
        return "no energy" + (f" ({note})" if note and "energy" in note.lower() else "")
    if short_energy_window(row):
        return "window below the sensor's resolution or averaging period"
    if suspect_of(flags, ENERGY):
        return _reasons("energy suspect", suspect_of(flags, ENERGY))
    if suspect_of(flags, LATENCY):
        return "latency suspect: the energy per call comes from the same timed window"
    return None


def _fingerprint_warnings(selection: Selection, target: TargetSpec) -> list[str]:
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
    explain: bool = True,
) -> Validation:
    """Records for every selected row (see module doc); ``explain`` False
    leaves out each record's explanation (a sentence a record: what a large
    baseline spends most of its time on when no report shows it)."""
    parts: list[Records] = []
    warnings: list[str] = []
    own = predictor.name == REFERENCE
    constants: dict[GroupKey, tuple[PredictorConstant, ...] | None] = {}
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
            parts += _group_records(
                registry, sel, target, op, dtype, rows, predictor, tolerances, explain
            )
            if not own and (hw, op_name, dtype) not in constants:
                constants[(hw, op_name, dtype)] = _declared(registry, predictor, target, op, dtype)
    records = Records.concat(parts)
    if not own:
        warnings += _breakdown_warnings(predictor.name, records, constants)
    return Validation(records, predictor.name, warnings, constants=None if own else constants)


def _declared(
    registry: Registry, predictor: PredictorSpec, target: TargetSpec, op: OpSpec, dtype: str
) -> tuple[PredictorConstant, ...] | None:
    """The constants a predictor declares for a group; None when it declares
    none or its ``constants`` failed (a plugin problem, named at the end)."""
    try:
        return registry.predictor_constants(predictor, target, op, dtype)
    except PredictorFailed:
        if registry.strict:
            raise
        return None


def _breakdown_warnings(
    name: str, records: Records, constants: dict[GroupKey, tuple[PredictorConstant, ...] | None]
) -> list[str]:
    """What a predictor's missing breakdown or constants take from the report."""
    out = []
    checked = records.checked
    if checked.any() and not np.isfinite(records.terms.compute_s[checked]).any():
        out.append(
            f"predictor {name!r} reports no breakdown terms (compute_s, memory_s, per-tier "
            "times): explanations give its totals only, and attribution infers a constant "
            "from the whole latency"
        )
    if constants and all(c is None for c in constants.values()):
        out.append(
            f"predictor {name!r} declares no constants: drift attribution names the error in "
            "each failing cell but cannot name a constant"
        )
    return out


def _from_rows(sel: Selection, rows: Sequence[BaselineRow], **values: Any) -> Records:
    """Records of ``rows`` with what the baseline says of them, and ``values``."""
    return Records.build(
        len(rows),
        terms=values.pop("terms", None),
        hardware=[r.hardware for r in rows],
        op=[r.op for r in rows],
        shape=[r.shape for r in rows],
        dtype=[r.dtype for r in rows],
        file=sel.baseline.path,
        line=[r.line for r in rows],
        purpose=[r.purpose for r in rows],
        in_sample=sel.in_sample,
        latency_measured_s=[np.nan if r.latency_s is None else r.latency_s for r in rows],
        energy_measured_j=[np.nan if r.energy_j is None else r.energy_j for r in rows],
        notes=[r.notes for r in rows],
        **values,
    )


def _group_records(
    registry: Registry,
    sel: Selection,
    target: TargetSpec,
    op: OpSpec,
    dtype: str,
    rows: list[BaselineRow],
    predictor: PredictorSpec,
    tolerances: dict[str, dict[str, float]],
    explain: bool = True,
) -> list[Records]:
    """The excluded rows of one (target, op, dtype) group, then the checked ones."""
    excluded: list[tuple[BaselineRow, str]] = []
    keep: list[BaselineRow] = []
    for row in rows:
        if row.latency_s is None:
            excluded.append((row, f"capture failed: {row.notes or 'no latency'}"))
        elif row.extras.get("verdict", "").strip().upper() == "FAIL":
            excluded.append((row, "correctness check failed"))
        elif dtype not in target.dtypes:
            excluded.append((row, f"{target.key} has no {dtype}"))
        elif len(row.dims) != len(op.dims):
            excluded.append((row, f"shape needs {len(op.dims)} dims for {op.name}"))
        else:
            keep.append(row)
    if keep:
        sheet = registry.datasheet_target(target.key)
        flags = row_flags(sheet, registry.op, keep, sel.baseline.path)
        for attempt in range(2):
            try:
                checked = _checked(
                    registry, sel, target, op, dtype, keep, flags, predictor, tolerances, explain
                )
                break
            except PredictorRowsFailed as exc:  # some rows invalid: those leave, once
                if registry.strict:
                    raise
                bad = exc.bad if not attempt else np.ones(len(keep), dtype=bool)
                excluded += [
                    (row, f"no prediction: predictor {predictor.name!r} returned {why}")
                    for row, out, why in zip(keep, bad, exc.reasons, strict=True)
                    if out
                ]
                keep = [row for row, out in zip(keep, bad, strict=True) if not out]
                flags = [f for f, out in zip(flags, bad, strict=True) if not out]
                if not keep:
                    break
            except PredictorFailed as exc:  # a plugin's predictor: its problem is named at the end
                if registry.strict:
                    raise
                excluded += [(row, f"no prediction: {exc}") for row in keep]
                keep = []
                break
    out = []
    if excluded:
        out.append(
            _from_rows(
                sel,
                [row for row, _ in excluded],
                status=EXCLUDED,
                excluded_reason=[why for _, why in excluded],
            )
        )
    if keep:
        out.append(checked)
    return out


def _checked(
    registry: Registry,
    sel: Selection,
    target: TargetSpec,
    op: OpSpec,
    dtype: str,
    rows: list[BaselineRow],
    flags: list[tuple[Flag, ...]],
    predictor: PredictorSpec,
    tolerances: dict[str, dict[str, float]],
    explain: bool = True,
) -> Records:
    """Predict, classify and judge the rows of one group; ``flags`` (per row)
    keep a suspect quantity out of its verdicts (see module doc)."""
    shapes = np.array([r.dims for r in rows], dtype=np.int64)
    pred = predictor.predict(registry, target, op, shapes, dtype)
    columns = pred.columns()
    # the classifier is the reference model with margins: reuse its prediction
    reuse = pred if predictor.name == REFERENCE else None
    cls = classify_details(registry, target, op, shapes, dtype, prediction=reuse)
    measured = np.array([r.latency_s for r in rows], dtype=np.float64)
    regime_measured = (
        measured_regime(cls.prediction, measured, target)
        if cls.prediction
        else np.full(len(rows), AMBIGUOUS, dtype=object)
    )
    regime = columns["regime"]
    bands = [band(tolerances, r) for r in regime]
    tolerance_latency = np.array([b["latency"] for b in bands])
    tolerance_energy = np.array([b["energy"] for b in bands])
    latency_error = (columns["latency_s"] - measured) / measured
    suspect = np.array([bool(suspect_of(f, LATENCY)) for f in flags], dtype=bool)
    skip = [_energy_skip(r, f) for r, f in zip(rows, flags, strict=True)]
    energy_measured = np.array([r.energy_j or np.nan for r in rows], dtype=np.float64)
    judged = np.array([reason is None for reason in skip]) & (energy_measured > 0)
    energy_error = (columns["energy_j"] - energy_measured) / energy_measured
    energy_error = np.where(judged, energy_error, np.nan)
    near = cls.near_boundary.astype(bool)
    placed = ~near & (regime_measured != AMBIGUOUS) & ~suspect
    pass_regime = _verdict(placed, regime_measured == regime)
    pass_latency = _verdict(~suspect, np.abs(latency_error) <= tolerance_latency)
    pass_energy = _verdict(judged, np.abs(energy_error) <= tolerance_energy)
    passed = [
        None if out else all(v for v in verdicts if v is not None)
        for out, *verdicts in zip(suspect, pass_regime, pass_latency, pass_energy, strict=True)
    ]
    return _from_rows(
        sel,
        rows,
        status=np.where(suspect, SUSPECT, CHECKED),
        suspect=[format_suspect(f) or None for f in flags],
        excluded_reason=[
            _reasons("latency suspect", suspect_of(f, LATENCY)) if out else None
            for out, f in zip(suspect, flags, strict=True)
        ],
        regime_predicted=regime,
        near_boundary=near,
        regime_measured=regime_measured,
        latency_predicted_s=columns["latency_s"],
        latency_error=latency_error,
        energy_predicted_j=columns["energy_j"],
        energy_error=energy_error,
        energy_skip_reason=skip,
        pass_regime=pass_regime,
        pass_latency=pass_latency,
        pass_energy=pass_energy,
        passed=passed,
        tolerance_latency=tolerance_latency,
        tolerance_energy=tolerance_energy,
        binding_tier=columns["binding_tier"],
        explanation=[pred.sentence(i) for i in range(len(rows))] if explain else None,
        terms=_terms(columns, target, dtype, op, own=predictor.name == REFERENCE),
        **breakdown(pred),
    )


#: The prediction's terms the records carry under the same name.
BREAKDOWN_TERMS = (
    "launch_s",
    "compute_s",
    "memory_s",
    "exposed_compute_s",
    "exposed_memory_s",
    "hidden_s",
    "first_touch_s",
    "pack_s",
    "flops",
    "working_set_bytes",
    "energy_compute_j",
    "energy_static_j",
)


def breakdown(pred: Prediction) -> dict[str, Any]:
    """The record columns of a prediction's structured terms (see
    :class:`~graphsval_core.validate.records.Records`); a term the predictor
    does not report is left out (absent in the record)."""
    out: dict[str, Any] = {}
    for name in BREAKDOWN_TERMS:
        value = getattr(pred, name)
        if value is not None:
            out[name] = value
    if pred.residency_tier is not None:
        out["residency_tier"] = np.asarray(pred.residency_tier).astype(str)
    for prefix, array, suffix in (
        ("bytes_", pred.bytes_per_tier, ""),
        ("memory_", pred.time_per_tier_s, "_s"),
        ("energy_", pred.energy_per_tier_j, "_j"),
    ):
        if array is not None:
            for k, tier in enumerate(pred.tier_names):
                out[f"{prefix}{tier}{suffix}"] = np.asarray(array, dtype=np.float64)[:, k]
    return out


def _verdict(made: np.ndarray, ok: np.ndarray) -> list[bool | None]:
    """True or False where a verdict was made, None where it was not."""
    return [bool(o) if m else None for m, o in zip(made, ok, strict=True)]


def _terms(
    columns: dict[str, np.ndarray],
    target: TargetSpec,
    dtype: str,
    op: OpSpec | None = None,
    own: bool = True,
) -> Terms:
    """What attribution needs to infer the constant a measurement implies; a
    term the predictor does not report is NaN (the launch falls back on the
    target's launch overhead, first touch and packing on nothing). The
    constants (launch, dispatch, bandwidth, achievable peak, static power)
    are the target spec's, which only the reference model uses: for another
    predictor (``own`` False) they are NaN, and attribution reports the
    constants that predictor declares instead.

    The launch's first kernel is the dtype's own dispatch overhead for a
    matrix product (``op.gemm_dims``) at a dtype that has one, as the
    reference model builds it, else the target's launch overhead; a predictor
    that reports no launch (or no ``op`` given) falls back on
    :meth:`TargetSpec.launch_for` for any op."""
    n = len(columns["latency_s"])
    absent = np.full(n, np.nan)
    reported = "launch_s" in columns
    launch = columns.get("launch_s", np.full(n, target.launch_for(dtype)))
    dispatched = (
        pays_dispatch(target, dtype, op.gemm_dims is not None)
        if op is not None and reported
        else dtype in target.dispatch_overhead_s
    )
    dispatch = target.dispatch_overhead_s[dtype] if dispatched else np.nan
    zero = np.zeros(n)
    fixed = launch + (columns.get("first_touch_s", zero) + columns.get("pack_s", zero))
    bandwidth = {t.name: t.effective_bandwidth_bps for t in target.tiers}
    # the terms any predictor may give (absent: NaN)
    given = {
        name: columns.get(name, absent)
        for name in (
            "compute_s",
            "memory_s",
            "energy_compute_j",
            "energy_static_j",
            "energy_traffic_j",
            "flops",
        )
    }
    if not own:
        launch = columns.get("launch_s", absent)
        fixed = launch + (columns.get("first_touch_s", zero) + columns.get("pack_s", zero))
        return evolve(Terms.empty(n), launch_s=launch, fixed_s=np.nan_to_num(fixed), **given)
    return Terms(
        launch_s=launch,
        dispatch_s=np.full(n, dispatch),
        launch_overhead_s=np.full(n, target.launch_overhead_s),
        fixed_s=fixed,
        **given,
        tier_bandwidth_bps=np.array(
            [bandwidth.get(tier, np.nan) for tier in columns["binding_tier"]], dtype=np.float64
        ),
        achievable_ops_per_s=np.full(
            n, target.peak_ops_per_s[dtype] * target.compute_fraction[dtype]
        ),
        static_power_w=np.full(n, target.idle_power_w),
    )


def recapture_agreement(
    validation: Validation, pairs: Sequence[tuple[Baseline, Baseline]]
) -> dict[tuple[str, str], Recapture]:
    """Capture vs recapture per (target, op) (see :class:`Recapture`)."""
    records = validation.records
    if not pairs:
        return {}
    # suspect records count too: the ceiling is the data's, not the model's
    tolerance_of = {
        (records.file[i], records.shape[i], records.dtype[i]): float(records.tolerance_latency[i])
        for i in np.flatnonzero(records.predicted)
    }
    # a target/op may have several pairs (a workspace's capture of an installed key)
    diffs_of: dict[tuple[str, str], list[float]] = {}
    agree_of: dict[tuple[str, str], int] = {}
    remeasured_of: dict[tuple[str, str], int] = {}
    files_of: dict[tuple[str, str], list[str]] = {}
    for main, again in pairs:
        other = {(r.shape, r.dtype): r for r in again.rows if r.latency_s}
        for row in main.rows:
            tolerance = tolerance_of.get((main.path, row.shape, row.dtype))
            twin = other.get((row.shape, row.dtype))
            if tolerance is None or twin is None or row.latency_s is None:
                continue
            key = (row.hardware, row.op)
            first = first_latency(row)
            diff = abs(first - twin.latency_s) / twin.latency_s
            diffs_of.setdefault(key, []).append(diff)
            agree_of[key] = agree_of.get(key, 0) + (diff <= tolerance)
            remeasured = bool(row.extras.get("first_latency_s", "").strip())
            remeasured_of[key] = remeasured_of.get(key, 0) + remeasured
            if again.path not in files_of.setdefault(key, []):
                files_of[key].append(again.path)
    out: dict[tuple[str, str], Recapture] = {}
    for key, diffs in diffs_of.items():
        out[key] = Recapture(
            pairs=len(diffs),
            agree=agree_of[key],
            rate=agree_of[key] / len(diffs),
            median_diff=float(np.median(diffs)),
            file=", ".join(files_of[key]),
            within_band=float(np.mean(np.asarray(diffs) <= AGREEMENT_BAND)),
            remeasured=remeasured_of[key],
        )
    return out


def first_latency(row: BaselineRow) -> float:
    """The row's first captured latency (before any re-measure)."""
    text = row.extras.get("first_latency_s", "").strip()
    try:
        return float(text) if text else float(row.latency_s or 0.0)
    except ValueError:
        return float(row.latency_s or 0.0)
