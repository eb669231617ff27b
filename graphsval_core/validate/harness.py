"""The validation harness: predictions against baseline rows, per record and per cell.

One record per baseline row (DESIGN.md section 6). Each counted row is
predicted (batched per block of rows, target, op and dtype: a file is read
and judged a block at a time), classified with the classifier's
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

Every part of the records (one block's group) is counted into the
validation's :class:`~graphsval_core.validate.tally.Tally`, which the summary
and the terminal read; the records themselves are kept only for the reports
that list them all, so a baseline of millions of rows is judged in memory
of a few numbers a row. Column-wise checks of a block:
:mod:`graphsval_core.validate.block_checks`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np
from attrs import Factory, evolve, field, frozen

from graphsval_core.datamodel.op import OpSpec
from graphsval_core.datamodel.regimes import AMBIGUOUS
from graphsval_core.datamodel.target import TargetSpec
from graphsval_core.files.baseline import Baseline, BaselineRow
from graphsval_core.files.baseline_block import RowBlock
from graphsval_core.files.tolerances import band
from graphsval_core.model.classifier import classify_details, measured_regime
from graphsval_core.model.plausibility import (
    LATENCY,
    Flag,
    format_suspect,
    suspect_of,
)
from graphsval_core.model.prediction import Prediction
from graphsval_core.model.reference import NAME as REFERENCE
from graphsval_core.model.terms.latency import unhidden_time
from graphsval_core.model.terms.overheads import (
    accumulating_rows,
    dispatched_rows,
    first_kernel_time,
    gemv_team_cost,
    library_rows,
)
from graphsval_core.model.terms.reference_kernel import reference_rows
from graphsval_core.plugins.records import PredictorConstant, PredictorSpec
from graphsval_core.plugins.registry import PredictorFailed, PredictorRowsFailed, Registry
from graphsval_core.validate import block_checks
from graphsval_core.validate.cells import group_index
from graphsval_core.validate.records import CHECKED, EXCLUDED, SUSPECT, Records, Terms
from graphsval_core.validate.selection import Selection
from graphsval_core.validate.tally import Tally

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
        if self.floor_median is not None:  # 0.001 is 0.1%, never "0%"
            parts.append(f"median <= {self.floor_median * 100:.3g}%")
        if self.floor_within is not None:
            parts.append(f">= {self.floor_within * 100:.3g}% within {AGREEMENT_BAND:.0%}")
        verdict = "BELOW its floor" if self.below_floor else "ok"
        return f"floor {', '.join(parts)}: {verdict}"


#: What a predictor's declared constants are keyed by: (hardware, op, dtype).
GroupKey = tuple[str, str, str]


@frozen
class Validation:
    """Everything a report needs: the records (every one, unless not
    ``kept``), their tally (the counts, cells and lists apart the summary
    and terminal read), the predictor's name, warnings about the data, and
    the recapture agreement per (target, op).

    ``constants`` is None for the reference predictor (attribution reads the
    constants from the target's spec); for any other predictor, the constants
    it declared per (hardware, op, dtype), None where it declares none."""

    records: Records
    predictor: str
    warnings: list[str] = field(factory=list)
    recapture: dict[tuple[str, str], Recapture] = field(factory=dict)
    constants: dict[GroupKey, tuple[PredictorConstant, ...] | None] | None = None
    #: the figures of every record (counted from ``records`` when not given)
    tally: Tally = field(
        default=Factory(lambda self: self.tally_of(self.records, self.constants), takes_self=True)
    )
    #: whether ``records`` holds every record (else none: the tally has the figures)
    kept: bool = True

    @staticmethod
    def tally_of(records: Records, constants: Any) -> Tally:
        """The tally of ``records`` at once (a predictor's ``constants``, or None)."""
        files = set(records.file.tolist())
        return Tally.of(records, declared=constants is not None, recapture_files=files)

    @property
    def size(self) -> int:
        """How many records the validation made (kept or not)."""
        return self.tally.records


def _reasons(head: str, flags: Sequence[Flag]) -> str:
    """``head: reason; reason``."""
    return f"{head}: " + "; ".join(f.reason for f in flags)


def _fingerprint_warnings(path: str, texts: Sequence[str], target: TargetSpec) -> list[str]:
    """What the ``fingerprint`` column's ``texts`` (each distinct one, in row
    order) say against the target's fingerprint."""
    out = []
    seen: set[tuple[str, str, str]] = set()
    for text in texts:
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
                    f"{path}: captured with {key} {value!r}, but target {target.key} says {want!r}"
                )
    return out


def validate(
    registry: Registry,
    selections: Sequence[Selection],
    predictor: PredictorSpec,
    tolerances: dict[str, dict[str, float]],
    explain: bool = True,
    *,
    keep: bool = True,
    listed: int | None = None,
    recapture_files: Sequence[str] = (),
) -> Validation:
    """Records for every selected row (see module doc), judged a block of
    rows at a time and counted into the validation's :class:`Tally`.

    ``explain`` False leaves out each record's explanation (a sentence a
    record: what a large baseline spends most of its time on when no report
    shows it); ``keep`` False keeps no record, only the tally (with
    ``listed``: the first items of each list apart); ``recapture_files``:
    the files whose records' tolerances the recapture agreement reads."""
    # kept records in the order of a whole-file grouping (a file's groups in
    # order of first appearance; in each, its excluded rows, then its checked
    # ones, in file order), whatever the blocks: (file, group, kind, part)
    parts: list[tuple[int, int, int, Records]] = []
    warnings: list[str] = []
    said: set[str] = set()  # overrides warned of once
    own = predictor.name == REFERENCE
    constants: dict[GroupKey, tuple[PredictorConstant, ...] | None] = {}
    tally = Tally(listed=listed, declared=not own, recapture_files=recapture_files)
    for file_index, sel in enumerate(selections):
        targets: list[str] = []
        fingerprints: dict[str, None] = {}
        groups: dict[GroupKey, int] = {}
        for block in sel.blocks():
            column = block.extra("fingerprint")
            if column is not None:
                fingerprints.update(dict.fromkeys(column.tolist()))
            for (hw, op_name, dtype), index in group_index(block.hardware, block.op, block.dtype):
                target = registry.target(hw)
                op = registry.op(op_name)
                if hw not in targets:
                    targets.append(hw)
                rows = block if len(index) == len(block) else block.take(index)
                group = groups.setdefault((hw, op_name, dtype), len(groups))
                for part in _group_records(
                    registry, sel, target, op, dtype, rows, predictor, tolerances, explain
                ):
                    if keep:  # counted once in order, below
                        kind = 0 if len(part) and part.status[0] == EXCLUDED else 1
                        parts.append((file_index, group, kind, part))
                    else:
                        tally.add(part)
                if not own and (hw, op_name, dtype) not in constants:
                    constants[(hw, op_name, dtype)] = _declared(
                        registry, predictor, target, op, dtype
                    )
        told = (sel.repeat_warning, sel.copy_warning, sel.purpose_warning, sel.warning)
        warnings += [w for w in told if w]
        for hw in targets:
            warnings += _fingerprint_warnings(sel.path, list(fingerprints), registry.target(hw))
            note = registry.placeholder_note(registry.target(hw))
            if note and note not in said:  # judged against placeholder figures
                said.add(note)
                warnings.append(note)
            override = registry.calibration_overrides.get(hw)
            if override and override not in said:
                said.add(override)
                warnings.append(
                    f"{hw}'s calibration was fitted on validation rows ({override}); "
                    "the rows it read count as in sample"
                )
    parts.sort(key=lambda item: item[:3])  # stable: blocks stay in file order
    for *_, part in parts:
        tally.add(part)
    records = Records.concat([part for *_, part in parts])
    if not own:
        warnings += _breakdown_warnings(predictor.name, tally, constants)
    return Validation(
        records,
        predictor.name,
        warnings,
        constants=None if own else constants,
        tally=tally,
        kept=keep,
    )


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
    name: str, tally: Tally, constants: dict[GroupKey, tuple[PredictorConstant, ...] | None]
) -> list[str]:
    """What a predictor's missing breakdown or constants take from the report."""
    out = []
    if tally.checked and not tally.compute_known:
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


def _from_rows(sel: Selection, rows: RowBlock, **values: Any) -> Records:
    """Records of ``rows`` with what the baseline says of them, and ``values``."""
    return Records.build(
        len(rows),
        terms=values.pop("terms", None),
        hardware=rows.hardware,
        op=rows.op,
        shape=rows.shape,
        dtype=rows.dtype,
        file=sel.path,
        line=rows.line,
        purpose=rows.purpose,
        in_sample=sel.in_sample,
        latency_measured_s=rows.latency_s,
        energy_measured_j=rows.energy_j,
        notes=rows.notes,
        **values,
    )


def _group_records(
    registry: Registry,
    sel: Selection,
    target: TargetSpec,
    op: OpSpec,
    dtype: str,
    rows: RowBlock,
    predictor: PredictorSpec,
    tolerances: dict[str, dict[str, float]],
    explain: bool = True,
) -> list[Records]:
    """The excluded rows of one (target, op, dtype) group, then the checked ones."""
    why = block_checks.reasons(rows, target, op, dtype, sel.path)
    out_index = [np.flatnonzero(why != None)]  # noqa: E711
    out_reasons: list[Any] = why[out_index[0]].tolist()
    keep = np.flatnonzero(why == None)  # noqa: E711
    checked = None
    if keep.size:
        sheet = registry.datasheet_target(target.key)
        kept = rows.take(keep)
        flags = block_checks.flags(sheet, op, kept, dtype, sel.path)
        for attempt in range(2):
            try:
                checked = _checked(
                    registry, sel, target, op, dtype, kept, flags, predictor, tolerances, explain
                )
                break
            except PredictorRowsFailed as exc:  # some rows invalid: those leave, once
                if registry.strict:
                    raise
                bad = np.asarray(exc.bad if not attempt else np.ones(len(kept)), dtype=bool)
                out_index.append(keep[bad])
                out_reasons += [
                    f"no prediction: predictor {predictor.name!r} returned {why}"
                    for why, out in zip(exc.reasons, bad, strict=True)
                    if out
                ]
                keep, kept, flags = keep[~bad], kept.take(~bad), flags[~bad]
                if not keep.size:
                    break
            except PredictorFailed as exc:  # a plugin's predictor: its problem is named at the end
                if registry.strict:
                    raise
                out_index.append(keep)
                out_reasons += [f"no prediction: {exc}"] * len(keep)
                keep = keep[:0]
                break
    out = []
    excluded = np.concatenate(out_index)
    if excluded.size:
        out.append(
            _from_rows(sel, rows.take(excluded), status=EXCLUDED, excluded_reason=out_reasons)
        )
    if keep.size and checked is not None:
        out.append(checked)
    return out


_FLAG = np.array([None, False, True], dtype=object)


def _verdict(made: np.ndarray, ok: np.ndarray) -> np.ndarray:
    """True or False where a verdict was made, None where it was not."""
    return _FLAG[np.where(made, np.asarray(ok, dtype=bool).astype(np.int8) + 1, 0)]


def _bands(
    tolerances: dict[str, dict[str, float]], regime: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The latency and energy tolerance of each record's predicted regime."""
    latency, energy = np.empty(len(regime)), np.empty(len(regime))
    for name in dict.fromkeys(regime.tolist()):
        mine = regime == name
        b = band(tolerances, name)
        latency[mine], energy[mine] = b["latency"], b["energy"]
    return latency, energy


def _checked(
    registry: Registry,
    sel: Selection,
    target: TargetSpec,
    op: OpSpec,
    dtype: str,
    rows: RowBlock,
    flags: np.ndarray,
    predictor: PredictorSpec,
    tolerances: dict[str, dict[str, float]],
    explain: bool = True,
) -> Records:
    """Predict, classify and judge the rows of one group; ``flags`` (per row)
    keep a suspect quantity out of its verdicts (see module doc)."""
    shapes = rows.dims_of(len(op.dims))
    pred = predictor.predict(registry, target, op, shapes, dtype)
    columns = pred.columns()
    # the classifier is the reference model with margins: reuse its prediction
    reuse = pred if predictor.name == REFERENCE else None
    cls = classify_details(registry, target, op, shapes, dtype, prediction=reuse)
    measured = rows.latency_s
    regime_measured = (
        measured_regime(cls.prediction, measured, target)
        if cls.prediction
        else np.full(len(rows), AMBIGUOUS, dtype=object)
    )
    regime = columns["regime"]
    tolerance_latency, tolerance_energy = _bands(tolerances, regime)
    latency_error = (columns["latency_s"] - measured) / measured
    suspect = block_checks.has(flags, LATENCY)
    skip = block_checks.energy_skips(rows, flags)
    energy_measured = rows.energy_j
    judged = (skip == None) & (energy_measured > 0)  # noqa: E711
    energy_error = (columns["energy_j"] - energy_measured) / energy_measured
    energy_error = np.where(judged, energy_error, np.nan)
    near = cls.near_boundary.astype(bool)
    placed = ~near & (regime_measured != AMBIGUOUS) & ~suspect
    pass_regime = _verdict(placed, regime_measured == regime)
    pass_latency = _verdict(~suspect, np.abs(latency_error) <= tolerance_latency)
    pass_energy = _verdict(judged, np.abs(energy_error) <= tolerance_energy)
    failed = (pass_regime == False) | (pass_latency == False) | (pass_energy == False)  # noqa: E712
    passed = np.where(suspect, None, _FLAG[np.where(failed, 1, 2)])
    flagged = np.flatnonzero(flags.astype(bool))
    suspect_text = np.full(len(rows), None, dtype=object)
    suspect_text[flagged] = [format_suspect(flags[i]) or None for i in flagged.tolist()]
    excluded_reason = np.full(len(rows), None, dtype=object)
    excluded_reason[suspect] = [
        _reasons("latency suspect", suspect_of(f, LATENCY)) for f in flags[suspect].tolist()
    ]
    return _from_rows(
        sel,
        rows,
        status=np.where(suspect, SUSPECT, CHECKED),
        suspect=suspect_text,
        excluded_reason=excluded_reason,
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
        terms=_terms(columns, target, dtype, op, own=predictor.name == REFERENCE, shapes=shapes),
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


def _fixed_time(columns: dict[str, np.ndarray], launch: np.ndarray) -> np.ndarray:
    """Per row, the time no rate governs: the launch, first touch, packing,
    and the part of the shorter of compute and memory the prediction did not
    hide (a GEMM library's ``product_overlap`` below 1: :func:`unhidden_time`,
    0 where the predictor reports none of those terms), so that the longer
    time alone is what a rate governs."""
    n = len(launch)
    zero = np.zeros(n)
    fixed = launch + (columns.get("first_touch_s", zero) + columns.get("pack_s", zero))
    names = ("exposed_compute_s", "exposed_memory_s", "compute_s", "memory_s")
    if all(name in columns for name in names):
        fixed = fixed + unhidden_time(*(columns[name] for name in names))
    return fixed


def _terms(
    columns: dict[str, np.ndarray],
    target: TargetSpec,
    dtype: str,
    op: OpSpec | None = None,
    own: bool = True,
    shapes: np.ndarray | None = None,
) -> Terms:
    """What attribution needs to infer the constant a measurement implies; a
    term the predictor does not report is NaN (the launch falls back on the
    target's launch overhead, first touch and packing on nothing). The
    constants (launch, dispatch, bandwidth, achievable peak, static power)
    are the target spec's, which only the reference model uses: for another
    predictor (``own`` False) they are NaN, and attribution reports the
    constants that predictor declares instead.

    The launch's first kernel is the dtype's own dispatch overhead for a
    matrix product (``op.gemm_dims`` of ``shapes``) the dtype's library runs,
    as the reference model builds it (:func:`dispatched_rows`), else the
    target's launch overhead; a predictor that reports no launch (or no
    ``op`` given) falls back on :meth:`TargetSpec.launch_for` for any op."""
    n = len(columns["latency_s"])
    absent = np.full(n, np.nan)
    reported = "launch_s" in columns
    launch = columns.get("launch_s", np.full(n, target.launch_for(dtype)))
    # a GEMV's own team cost, as the reference model charges it (gemv_team_cost)
    gemv_team = absent
    if op is not None and reported:
        gemm = None
        if op.gemm_dims is not None and shapes is not None:
            gemm = np.asarray(op.gemm_dims(shapes), dtype=np.float64).reshape(n, 3)
            flops = np.asarray(op.flops(shapes), dtype=np.float64)
            gemv_team = gemv_team_cost(target, dtype, gemm, flops)
        elif op.gemm_dims is not None:  # no shapes: every product is the library's
            gemm = np.full((n, 3), np.inf)
        dispatched = dispatched_rows(target, dtype, gemm, n)
        accumulating = accumulating_rows(target, dtype, gemm, n, op.accumulates)
        own_kernel = np.zeros(n, dtype=bool)
        if gemm is not None:  # only a product runs in the framework's own product kernel
            own_kernel = reference_rows(target, dtype, library_rows(target, dtype, gemm, n))
    else:
        dispatched = np.full(n, dtype in target.dispatch_overhead_s)
        accumulating = np.zeros(n, dtype=bool)
        own_kernel = np.zeros(n, dtype=bool)
    # a library call that accumulates onto C is its own constant: the dispatch and the
    # dtype's accumulate_overhead_s on top (the model's first_kernel_time)
    dispatch = np.where(
        dispatched & ~accumulating, target.dispatch_overhead_s.get(dtype, np.nan), np.nan
    )
    call = first_kernel_time(target, dtype, dispatched, accumulating=accumulating)
    accumulate = np.where(accumulating, call, np.nan)
    fixed = _fixed_time(columns, launch)
    # every row of a cell is held against its binding tier's effective bandwidth, the one
    # figure the tier has: an op reads each tier at its dtype's share of that (a product at
    # its library's share times the tier's product_fraction: TargetSpec.tier_share; a row
    # that reads B in place part of it at in_place_fraction, a GEMV beyond the innermost
    # tier at gemv_fraction), and a drift of the tier
    # scales every share alike, so the implied rate, that bandwidth scaled by the row's
    # memory time over its measured time, is one constant however a cell pools dtypes,
    # products with streams, or rows read in place with packed ones
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
        fixed = _fixed_time(columns, launch)
        return evolve(Terms.empty(n), launch_s=launch, fixed_s=np.nan_to_num(fixed), **given)
    at_peak = op is None or op.gemm_dims is not None  # no op given: the peak
    rate = np.full(n, target.achievable_ops(dtype, at_peak))
    kind = np.full(n, float(target.runs_at_vector_rate(dtype, at_peak)))
    if own_kernel.any():  # the framework's own kernel: its ops over its time
        with np.errstate(divide="ignore", invalid="ignore"):
            rate = np.where(own_kernel, given["flops"] / given["compute_s"], rate)
        kind = np.where(own_kernel, 2.0, kind)
    return Terms(
        launch_s=launch,
        dispatch_s=dispatch,
        accumulating_call_s=accumulate,
        launch_overhead_s=np.full(n, target.launch_overhead_s),
        gemv_team_s=gemv_team,
        fixed_s=fixed,
        **given,
        tier_bandwidth_bps=block_checks.per_value(
            columns["binding_tier"], lambda tier: bandwidth.get(tier, np.nan)
        ).astype(np.float64),
        # the reference model's rule: an op with no product at the dtype's vector rate,
        # a product no library runs at its own kernel's
        achievable_ops_per_s=rate,
        vector_rate=kind,
        static_power_w=np.full(n, target.idle_power_w),
    )


def recapture_agreement(
    validation: Validation, pairs: Sequence[tuple[Baseline, Baseline]]
) -> dict[tuple[str, str], Recapture]:
    """Capture vs recapture per (target, op) (see :class:`Recapture`)."""
    if not pairs:
        return {}
    # suspect records count too: the ceiling is the data's, not the model's
    tolerance_of = validation.tally.tolerance_of
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
