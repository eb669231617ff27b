"""Calibration: fit the constants no datasheet gives, on calibration rows only.

Latency constants, fitted jointly by robust non-linear least squares on
``log(predicted / measured)`` (scipy's ``least_squares``, soft-L1 loss), each
with a physical meaning and included only when the rows exercise it:

- ``launch_overhead_s``: the dispatch/launch cost of one call (with rows of
  several dtypes, ``dispatch_overhead_s.<dtype>`` as well: each dtype's GEMM
  library call for matrix products, e.g. MKL for fp32 and oneDNN with its
  reorders for bf16 on a CPU);
- ``kernel_overhead_s``: each further kernel of a multi-kernel op (linear's
  bias), for targets whose spec sets it (a GPU queues it behind the first);
- ``fork_join_s``: waking and joining the thread team, on multi-unit CPU
  targets (rows at or below the grain run on one thread and do not pay it);
- ``pack_bps``: the rate at which a CPU GEMM library packs B, from the rows
  whose A has at least ``pack_min_rows`` rows;
- ``compute_fraction.<dtype>``: the achievable fraction of each dtype's peak
  (when the data say more than the spec's peak, the peak itself is calibrated
  and the fraction is 1: the clock under load is above the one the spec read);
- ``tiers.<tier>.achievable_fraction``: the achievable fraction of a tier's
  bandwidth, for every tier that binds rows (vector_add rows give one plateau
  per tier, as the ERT method does; matmul/linear rows otherwise);
- ``tiers.<tier>.usable_capacity_bytes``: the usable capacity of a tier shared
  with other tenants (a VM's L3);
- ``first_touch_bps``: the page-zeroing rate that a freshly allocated output of
  at least ``first_touch_min_bytes`` (glibc's largest mmap threshold, 32 MiB)
  pays on every call, for CPU targets whose rows have such outputs.

The fit holds each tier at least as fast as the tier outside it (a penalty
residual that is zero while bandwidth falls outward): a cache slower than the
memory behind it would explain rows by a constant that means nothing.

Energy constants, by bounded linear least squares on rows whose energy is
trustworthy (a window of at least ``MIN_ENERGY_WINDOW_S``, not below the
sensor's averaging period): the energy per op of the dtype, one scale of the
spec's energy per byte of every tier (their ratios kept), and the static
power, none below ``ENERGY_FLOOR`` of the spec's value; a coefficient at its
floor is reported as such (the rows leave it no share), and the model uses
exactly the values the fit predicted with.

Everything is deterministic: the same rows give the same file, byte for byte.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from attrs import define, field

from graphsval_core import __version__
from graphsval_core.datamodel.provenance import Provenance
from graphsval_core.datamodel.target import TargetSpec
from graphsval_core.files.baseline import (
    Baseline,
    BaselineRow,
    energy_window_s,
    short_energy_window,
)
from graphsval_core.files.calibration import (
    FIRST_TOUCH_MIN_BYTES,
    CalibrationError,
    apply_constants,
    apply_file,
    constants_from_file,
    is_fraction,
)
from graphsval_core.model.reference import predict

__all__ = ["CalibrationError", "apply_file", "constants_from_file"]

SCHEMA_VERSION = 1
MIN_ENERGY_WINDOW_S = 0.01
#: How hard the fit holds each tier at least as fast as the one outside it.
HIERARCHY_WEIGHT = 10.0
#: The least share of the spec's value an energy coefficient may take.
ENERGY_FLOOR = 0.1


@define
class Param:
    name: str
    value: float  # initial
    lower: float
    upper: float
    exercised_by: str


@define
class Fit:
    values: dict[str, float]
    uncertainty: dict[str, float]
    residuals: np.ndarray
    params: list[Param]
    rows: list[BaselineRow]
    predicted: np.ndarray = field(factory=lambda: np.zeros(0))
    x: np.ndarray = field(factory=lambda: np.zeros(0))
    not_identifiable: list[str] = field(factory=list)
    held: dict[str, str] = field(factory=dict)


# --- choosing what to fit -----------------------------------------------------


def _groups(rows: Sequence[BaselineRow]) -> dict[tuple[str, str], list[int]]:
    groups: dict[tuple[str, str], list[int]] = {}
    for i, r in enumerate(rows):
        groups.setdefault((r.op, r.dtype), []).append(i)
    return groups


def predict_rows(
    registry: Any, spec: TargetSpec, rows: Sequence[BaselineRow]
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Predicted latency of every row (batched per op and dtype), and per-row terms."""
    latency = np.zeros(len(rows))
    terms = {k: np.zeros(len(rows)) for k in ("compute_s", "memory_s", "launch_s", "pack_s")}
    tier_time = np.zeros((len(rows), len(spec.tiers)))
    for (op_name, dtype), index in _groups(rows).items():
        shapes = np.array([rows[i].dims for i in index], dtype=np.int64)
        p = predict(registry, spec, registry.op(op_name), shapes, dtype)
        latency[index] = p.latency_s
        for k in terms:
            terms[k][index] = getattr(p, k)
        tier_time[index] = p.time_per_tier_s
    terms["tier_time"] = tier_time
    return latency, terms


def _headroom(spec: TargetSpec, provenance: Provenance | None) -> float:
    """How far above the spec's peak a calibrated rate may go: not at all for a
    datasheet figure (silicon never beats its datasheet peak), up to 4x for an
    estimated or machine-detected one (a VM reports its base clock)."""
    if provenance is None:
        return 1.0
    loose = provenance.kind in ("estimated", "detected") or "detected" in provenance.source
    return 4.0 if loose or "snapshot_of" in spec.fingerprint else 1.0


def choose_params(registry: Any, spec: TargetSpec, rows: Sequence[BaselineRow]) -> list[Param]:
    """The constants these rows exercise (see module doc)."""
    latency, terms = predict_rows(registry, spec, rows)
    row_dtypes = sorted({r.dtype for r in rows})
    if len(row_dtypes) == 1:
        params = [
            Param(
                "launch_overhead_s",
                spec.launch_overhead_s,
                1e-8,
                1e-2,
                f"{len(rows)} rows (mostly the launch-bound ones)",
            )
        ]
    else:  # each dtype's GEMM library (e.g. MKL for fp32, oneDNN for bf16) on its own
        params = []
        # the framework's own dispatch: ops outside the GEMM library, and the
        # further kernels of a multi-kernel op (linear's bias) on a CPU
        own = [
            r
            for r in rows
            if registry.op(r.op).gemm_dims is None
            or (registry.op(r.op).kernels > 1 and spec.kernel_overhead_s is None)
        ]
        if own:
            params.append(
                Param(
                    "launch_overhead_s",
                    spec.launch_overhead_s,
                    1e-8,
                    1e-2,
                    f"{len(own)} rows of ops outside the GEMM library or with a kernel "
                    "besides it (mostly the launch-bound ones)",
                )
            )
        params += [
            Param(
                f"dispatch_overhead_s.{d}",
                spec.launch_for(d),
                1e-8,
                1e-2,
                f"{sum(1 for r in rows if r.dtype == d and registry.op(r.op).gemm_dims)} "
                f"{d} matmul/linear rows (mostly the launch-bound ones)",
            )
            for d in row_dtypes
        ]
    for dtype in sorted({r.dtype for r in rows}):
        n = sum(1 for r in rows if r.dtype == dtype)
        cap = _headroom(spec, spec.provenance.get(f"peak_ops_per_s.{dtype}"))
        params.append(
            Param(
                f"compute_fraction.{dtype}",
                min(1.0, cap),
                1e-3,
                cap / spec.compute_fraction[dtype],
                f"{n} {dtype} rows (the compute-bound ones)",
            )
        )
    # a tier is exercised by a row when its time is a real share of the row's
    # latency (launch included): tiny launch-bound rows exercise no tier
    busy = latency
    for k, tier in enumerate(spec.tiers):
        exercised = terms["tier_time"][:, k] >= 0.3 * busy
        binding = int(np.sum(exercised))
        n_vadd = sum(1 for i, r in enumerate(rows) if r.op == "vector_add" and exercised[i])
        # the innermost tier feeds the registers: for a matrix product its traffic
        # grows with the ops exactly as compute time does, so only vector_add rows
        # can tell its bandwidth from the compute fraction
        if k == 0 and n_vadd < 2:
            binding = 0
        if binding >= 2:
            src = (
                f"{n_vadd} vector_add rows (one plateau per tier)"
                if n_vadd >= 2
                else f"{binding} matmul/linear rows whose time this tier bounds"
            )
            cap = _headroom(spec, tier.provenance.get("peak_bandwidth_bps"))
            params.append(
                Param(
                    f"tiers.{tier.name}.achievable_fraction",
                    1.0,
                    1e-3,
                    cap / tier.achievable_fraction,
                    src,
                )
            )
        if tier.shared_with_tenants and tier is not spec.tiers[-1]:
            cap = tier.effective_capacity_bytes
            params.append(
                Param(
                    f"tiers.{tier.name}.usable_capacity_bytes",
                    cap / 4,
                    spec.tiers[0].total_capacity_bytes,
                    cap,
                    "rows whose working set straddles the shared tier",
                )
            )
    multi = [r for r in rows if registry.op(r.op).kernels > 1]
    if spec.kernel_overhead_s is not None and multi:
        params.append(
            Param(
                "kernel_overhead_s",
                spec.kernel_overhead_s,
                1e-8,
                1e-2,
                f"{len(multi)} rows of ops that run more than one kernel (mostly the small ones)",
            )
        )
    packed = int(np.sum(terms["pack_s"] > 0))  # the model's own rule for who packs
    if packed >= 2:
        params.append(
            Param(
                "pack_bps",
                spec.pack_bps,
                1e8,
                1e13,
                f"{packed} matmul/linear rows of {spec.pack_min_rows:g} rows of A or more",
            )
        )
    if (
        spec.fork_join_s is not None
        and spec.parallel_grain_ops is not None
        and spec.compute_units > 1
    ):  # without a grain every row would pay it: collinear with the launch
        params.append(
            Param(
                "fork_join_s",
                spec.fork_join_s,
                1e-8,
                1e-3,
                "rows small enough to run on one thread against ones just above the grain",
            )
        )
    if spec.architecture == "cpu":
        big = [r for r in rows if _output_bytes(registry, r) >= FIRST_TOUCH_MIN_BYTES]
        if len(big) >= 2:
            params.append(
                Param(
                    "first_touch_bps",
                    10e9,
                    1e8,
                    1e12,
                    f"{len(big)} rows with a fresh output of 32 MiB or more",
                )
            )
    return params


def _output_bytes(registry: Any, row: BaselineRow) -> float:
    from graphsval_core.datamodel.dtypes import bytes_per_element

    op = registry.op(row.op)
    if not op.output_operand:
        return 0.0
    elements = op.operand_elements(np.array([row.dims]))
    return float(elements[op.output_operand][0]) * bytes_per_element(row.dtype)


# --- fitting ------------------------------------------------------------------


def _values(params: Sequence[Param], x: np.ndarray) -> dict[str, float]:
    return {p.name: float(math.exp(v)) for p, v in zip(params, x, strict=True)}


def canonical(rows: Sequence[BaselineRow]) -> list[BaselineRow]:
    """Rows in a fixed order (op, dtype, dims), whatever order the files came in."""
    return sorted(rows, key=lambda r: (r.op, r.dtype, r.dims, r.line))


def _hierarchy_penalty(spec: TargetSpec) -> np.ndarray:
    """A tier slower than the one outside it is not a cache: one residual per
    adjacent pair, zero while bandwidth falls outward, growing steeply (in
    log terms) when an inner tier's fitted bandwidth drops below the outer's."""
    bw = np.array([t.effective_bandwidth_bps for t in spec.tiers])
    return HIERARCHY_WEIGHT * np.maximum(0.0, np.log(bw[1:] / bw[:-1]))


def _hold_hierarchy(
    spec: TargetSpec, values: dict[str, float]
) -> tuple[dict[str, float], dict[str, str]]:
    """A tier whose bandwidth the fit did not set (the rows never make it bind)
    keeps its spec value unless that leaves it faster than the tier inside it
    was fitted to be: then it is held at the inner tier's bandwidth, the most
    a cache behind that one can deliver."""
    values = dict(values)
    held: dict[str, str] = {}
    for k in range(1, len(spec.tiers)):
        name = f"tiers.{spec.tiers[k].name}.achievable_fraction"
        if name in values:
            continue
        fitted = apply_constants(spec, values, "fit")
        inner = fitted.tiers[k - 1].effective_bandwidth_bps
        if fitted.tiers[k].effective_bandwidth_bps > inner:
            values[name] = inner / spec.tiers[k].effective_bandwidth_bps
            held[name] = (
                f"held at the fitted {spec.tiers[k - 1].name} bandwidth: the rows do not "
                "move it, and its spec value would make it faster than the tier inside it"
            )
    return values, held


def fit_latency(
    registry: Any,
    spec: TargetSpec,
    rows: Sequence[BaselineRow],
    params: Sequence[Param] | None = None,
    x_start: np.ndarray | None = None,
) -> Fit:
    """Robust least squares on log(predicted / measured) over ``rows``.

    The rows are put in a canonical order first and, unless ``x_start`` is
    given, the fit starts from the spec's values and from fractions of a half
    and a quarter of them, keeping the best: the objective has several optima
    and the answer must not depend on the order of the files. A constant the
    rows do not move (a zero column of the Jacobian) is not identifiable: it
    is left out of the values and keeps its spec value.
    """
    from scipy.optimize import least_squares

    rows = canonical(rows)
    params = list(params if params is not None else choose_params(registry, spec, rows))
    measured = np.array([r.latency_s for r in rows], dtype=np.float64)

    def residuals(x: np.ndarray) -> np.ndarray:
        candidate = apply_constants(spec, _values(params, x), "fit")
        latency, _ = predict_rows(registry, candidate, rows)
        return np.concatenate([np.log(latency / measured), _hierarchy_penalty(candidate)])

    lo = np.log([p.lower for p in params])
    hi = np.log([p.upper for p in params])
    base = np.log([p.value for p in params])
    fraction = np.array([is_fraction(p.name) for p in params])
    starts = (
        [x_start]
        if x_start is not None
        else [base + np.where(fraction, np.log(scale), 0.0) for scale in (1.0, 0.5, 0.25)]
    )
    best = None
    for start in starts:
        result = least_squares(
            residuals,
            np.clip(start, lo, hi),
            bounds=(lo, hi),
            loss="soft_l1",
            f_scale=0.05,
            x_scale=1.0,
            diff_step=1e-4,
            max_nfev=400,
        )
        if best is None or result.cost < best.cost - 1e-12:
            best = result
    assert best is not None
    jac = best.jac[: len(rows)]  # the rows' part (the hierarchy penalty follows)
    fun = best.fun[: len(rows)]
    columns = np.linalg.norm(jac, axis=0)
    identifiable = columns > 1e-6 * max(float(columns.max()), 1e-300)
    scale = 1.4826 * float(np.median(np.abs(fun))) if len(fun) else 0.0
    sigma = np.full(len(params), np.inf)
    if identifiable.any():
        sub = jac[:, identifiable]
        cov = np.linalg.pinv(sub.T @ sub) * scale**2
        sigma[identifiable] = np.sqrt(np.clip(np.diag(cov), 0, None))
    all_values = _values(params, best.x)
    values = {
        p.name: v for p, v, ok in zip(params, all_values.values(), identifiable, strict=True) if ok
    }
    uncertainty = {p.name: float(sg) for p, sg in zip(params, sigma, strict=True)}
    values, held = _hold_hierarchy(spec, values)
    fitted = apply_constants(spec, values, "fit")
    predicted, _ = predict_rows(registry, fitted, rows)
    return Fit(
        values,
        uncertainty,
        (predicted - measured) / measured,
        params,
        list(rows),
        predicted,
        x=best.x,
        not_identifiable=[
            p.name
            for p, ok in zip(params, identifiable, strict=True)
            if not ok and p.name not in held
        ],
        held=held,
    )


def trustworthy_energy(rows: Sequence[BaselineRow]) -> list[BaselineRow]:
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
    import re

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


def fit_energy(registry: Any, spec: TargetSpec, rows: Sequence[BaselineRow]) -> dict[str, Any]:
    """Energy per op (per dtype), one scale of the per-byte energies, static power."""
    from scipy.optimize import lsq_linear

    from graphsval_core.datamodel.dtypes import bytes_per_element  # noqa: F401 (documentation)

    good = trustworthy_energy(rows)
    dtypes = sorted({r.dtype for r in good})
    if len(good) < len(dtypes) + 3:
        return {"rows": len(good), "skipped": "too few rows with a trustworthy energy window"}
    a = np.zeros((len(good), len(dtypes) + 2))
    b = np.array([r.energy_j for r in good])
    for (op_name, dtype), index in _groups(good).items():
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
    names = [f"energy_per_op_j.{d}" for d in dtypes] + [
        "energy per byte (all tiers)",
        "idle_power_w",
    ]
    pinned = [n for n, v, f in zip(names, solution, floor, strict=True) if v <= f * (1 + 1e-6)]
    predicted = a @ solution
    out: dict[str, Any] = {
        "rows": len(good),
        # what the fitted coefficients predict: the quantity these rows measured
        "measured_as": _energy_sources(good),
        "values": values,
        "traffic_scale": scale,
        "median_abs_error": float(np.median(np.abs(predicted - b) / b)),
    }
    if pinned:
        out["at_floor"] = pinned
    return out


def leave_one_out(
    registry: Any,
    spec: TargetSpec,
    rows: Sequence[BaselineRow],
    params: Sequence[Param],
    tolerances: dict[str, dict[str, float]],
) -> dict[str, Any]:
    """Refit without each row and predict it: out-of-sample errors within the set."""
    errors, inside = [], 0
    rows = canonical(rows)
    whole = fit_latency(registry, spec, rows, params)
    for i in range(len(rows)):
        rest = [r for j, r in enumerate(rows) if j != i]
        fit = fit_latency(registry, spec, rest, params, x_start=whole.x)
        model = apply_constants(spec, fit.values, "loo")
        latency, _ = predict_rows(registry, model, [rows[i]])
        err = (latency[0] - rows[i].latency_s) / rows[i].latency_s
        regime = model_regime(registry, model, rows[i])
        errors.append(err)
        inside += abs(err) <= tolerances.get(regime, tolerances["dram_bound"])["latency"]
    abs_err = np.abs(errors)
    return {
        "rows": len(rows),
        "median_abs_error": float(np.median(abs_err)),
        "within_band": inside / len(rows) if rows else float("nan"),
        "p90_abs_error": float(np.quantile(abs_err, 0.9)),
    }


def model_regime(registry: Any, spec: TargetSpec, row: BaselineRow) -> str:
    """The model's own regime of one row (whose tolerance judges it)."""
    p = predict(registry, spec, registry.op(row.op), np.array([row.dims]), row.dtype)
    return str(p.regime[0])


# --- the calibration file -----------------------------------------------------


def _sig(x: float) -> float | None:
    """6 significant digits; None for a value that is not a number (strict JSON)."""
    return None if not math.isfinite(x) else float(f"{x:.6g}")


def sha256_of(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def build_file(
    spec: TargetSpec,
    baselines: Sequence[tuple[Baseline, str]],
    fit: Fit,
    energy: dict[str, Any],
    loo: dict[str, Any] | None,
    override: str | None,
    tolerances: dict[str, dict[str, float]],
    in_band: float,
) -> dict[str, Any]:
    """The calibration file's content (no wall-clock time: same inputs, same bytes)."""
    constants: dict[str, Any] = {}
    datasheet = _current_values(spec)
    for name, why in fit.held.items():
        tier = spec.tier(name.split(".")[1])
        constants[name] = {
            "value": _sig(fit.values[name] * tier.achievable_fraction),
            "datasheet": _sig(tier.achievable_fraction),
            "from": why,
        }
    for p in fit.params:
        if p.name not in fit.values or p.name in fit.held:
            continue
        constants[p.name] = {
            "value": _sig(_resolved(spec, p.name, fit.values[p.name])),
            "datasheet": _sig(datasheet.get(p.name, float("nan"))),
            "relative_uncertainty": _sig(fit.uncertainty[p.name]),
            "from": p.exercised_by,
        }
    floored = set(energy.get("at_floor", []))
    for name, value in energy.get("values", {}).items():
        at_floor = name in floored or (
            name.endswith(".energy_per_byte_j") and "energy per byte (all tiers)" in floored
        )
        constants[name] = {
            "value": _sig(value),
            "datasheet": _sig(datasheet.get(name, 0.0)),
            "from": f"{energy['rows']} rows with a trustworthy energy window"
            + (
                f"; at its floor ({ENERGY_FLOOR:g} of the spec's value): the rows leave "
                "it no share beside the other terms"
                if at_floor
                else ""
            ),
        }
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
        "energy": {k: v for k, v in energy.items() if k != "values"},
        "fit": {
            "rows": len(fit.rows),
            "not_identifiable": {
                name: "the rows do not move it (zero Jacobian column): the spec's value stays"
                for name in fit.not_identifiable
            },
            "median_abs_error": _sig(float(np.median(np.abs(fit.residuals)))),
            "within_band": _sig(in_band),
            "leave_one_out": {
                k: _sig(v) if isinstance(v, float) else v for k, v in (loo or {}).items()
            },
        },
        "residuals": residuals,
    }


def _current_values(spec: TargetSpec) -> dict[str, float]:
    out: dict[str, float] = {
        **{f"dispatch_overhead_s.{d}": spec.launch_for(d) for d in spec.dtypes},
        "launch_overhead_s": spec.launch_overhead_s,
        "idle_power_w": spec.idle_power_w,
    }
    for d in spec.dtypes:
        out[f"compute_fraction.{d}"] = spec.compute_fraction[d]
        out[f"energy_per_op_j.{d}"] = spec.energy_per_op_j[d]
    for t in spec.tiers:
        out[f"tiers.{t.name}.achievable_fraction"] = t.achievable_fraction
        out[f"tiers.{t.name}.energy_per_byte_j"] = t.energy_per_byte_j
        out[f"tiers.{t.name}.usable_capacity_bytes"] = t.effective_capacity_bytes
    for name in ("first_touch_bps", "fork_join_s", "kernel_overhead_s", "pack_bps"):
        if getattr(spec, name) is not None:
            out[name] = getattr(spec, name)
    return out


def _resolved(spec: TargetSpec, name: str, multiplier_or_value: float) -> float:
    """Fractions are fitted as multipliers of the spec's value; report the value."""
    if is_fraction(name):
        return multiplier_or_value * _current_values(spec)[name]
    return multiplier_or_value


def dump(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, sort_keys=False) + "\n"
