"""Calibration files and applying calibrated constants to a spec.

Kept apart from the fitting (:mod:`graphsval_core.calibrate`, which needs
numpy and scipy) so that the registry can apply shipped calibration files on
every start-up without importing either.
"""

from __future__ import annotations

from typing import Any

from graphsval_core.datamodel.errors import UserInputError
from graphsval_core.datamodel.provenance import Provenance, Sourced
from graphsval_core.datamodel.target import MemoryTier, TargetSpec, first_touch_threshold
from graphsval_core.files.calibration_file import (
    PER_DTYPE,
    PER_DTYPE_CONSTANTS,
    SPEC_DTYPES_ONLY,
    CalibrationFileError,
    check_calibration,
    is_fraction,
)
from graphsval_core.files.target_spec import out_of_bounds


class CalibrationError(UserInputError):
    pass


#: The constants that are shares of at most 1 (a GEMM library's hidden share of
#: its shorter time, the share of a tier a weight read in place streams at): a
#: fit judges them by their own spread, ``value x relative uncertainty``, which
#: the relative figure (of a log, large for a share near 0) overstates.
SHARES = tuple(f"{n}." for n, c in PER_DTYPE_CONSTANTS.items() if c.share)

#: The widest relative uncertainty ``fit_notes`` writes out (10 = 1000%):
#: beyond it the value means nothing, and the figure says so.
WIDEST = 10.0

#: How a calibration file names the bound a constant sits at.
_BOUNDS = {"lower": "at its lower bound", "upper": "at its upper bound", "floor": "at its floor"}


def fit_notes(data: dict[str, Any]) -> dict[str, str]:
    """Per constant of a calibration file (checked first:
    :func:`check_calibration`), how well its fit pins it: ``+- 4%`` (its
    relative uncertainty, one standard deviation; a share's own spread,
    ``+- 0.41``; beyond :data:`WIDEST` of the value, or a share's whole range,
    ``+- over 1000%`` or ``+- over 1``), ``at its floor`` or ``at its lower
    bound`` where it sits at a bound of its range, ``not identified``
    where the fit's diagnostics say the rows do not pin it, and ``two optima``
    where another optimum of the fit, as good, puts it elsewhere; ``exact fit,
    no +-`` in place of the figure where the fit reproduced its rows exactly
    (no scatter was left to size it). Constants with none
    of these are left out."""
    fit = data.get("fit") or {}
    found = [d for d in fit.get("diagnostics") or () if isinstance(d, dict)]
    uncertain = {d.get("subject") for d in found if d.get("kind") == "uncertain"}
    rivalled = {d.get("subject") for d in found if d.get("kind") == "rival_optimum"}
    exact = any(d.get("kind") == "exact_fit" for d in found)
    out: dict[str, str] = {}
    for name, entry in data["constants"].items():
        parts = []
        sigma = entry.get("relative_uncertainty")
        if sigma is not None and exact:  # no scatter left to size it: no figure
            parts.append("exact fit, no +-")
        elif sigma is not None:
            parts.append(uncertainty_words(name, entry["value"], sigma))
        bound = _BOUNDS.get(str(entry.get("at_bound")))
        if bound:
            parts.append(bound)
        if name in uncertain:
            parts.append("not identified")
        if name in rivalled:
            parts.append("two optima")
        if parts:
            out[name] = ", ".join(parts)
    return out


#: The out-of-sample figures a calibration file's fit section may hold, as
#: ``targets`` names them.
OUT_OF_SAMPLE = {"grouped_cv": "grouped CV", "validation": "validation set"}


def out_of_sample(data: dict[str, Any]) -> dict[str, dict[str, dict[str, float]]]:
    """The out-of-sample figures of a calibration file (grouped CV and the
    validation set, as calibrate stores them in ``fit``): per figure
    (:data:`OUT_OF_SAMPLE`), per op, ``rows``, ``median_abs_error`` and
    ``within_band`` (and ``within_10pct`` where given). A figure or op that
    is missing or null (not a number when calibrate wrote it) is left out;
    one of the wrong kind or out of its range was refused when the file was
    read (:func:`~graphsval_core.files.calibration_file.check_calibration`)."""
    fit = data.get("fit")
    out: dict[str, dict[str, dict[str, float]]] = {}
    for name in OUT_OF_SAMPLE:
        section = fit.get(name) if isinstance(fit, dict) else None
        per_op = section.get("per_op") if isinstance(section, dict) else None
        for op, figures in (per_op if isinstance(per_op, dict) else {}).items():
            if not isinstance(figures, dict):
                continue
            kept = {
                k: float(v)
                for k, v in figures.items()
                if k in ("rows", "median_abs_error", "within_band", "within_10pct")
                and isinstance(v, int | float)
                and not isinstance(v, bool)
                and v == v
            }
            if {"rows", "median_abs_error", "within_band"} <= kept.keys():
                out.setdefault(name, {})[str(op)] = kept
    return out


def share_spread(name: str, value: float, sigma: float) -> float | None:
    """A share's (:data:`SHARES`) own spread, ``value x sigma`` (``sigma`` its
    relative uncertainty): the figure a share is judged and shown by, which
    the relative one (of a log, large for a share near 0) overstates; None
    for any other constant, judged and shown by ``sigma`` itself."""
    return value * sigma if name.startswith(SHARES) else None


def share_words(spread: float) -> str:
    """A share's own spread: ``+- 0.41``; beyond the whole range, ``+- over 1``."""
    return "+- over 1" if spread > 1 else f"+- {spread:.2g}"


def uncertainty_words(name: str, value: float, sigma: float) -> str:
    """How well a fit pins constant ``name`` at ``value`` (``sigma`` its relative
    uncertainty), as people read it: a share by its own spread
    (:func:`share_words`), any other constant by ``sigma`` (:func:`relative_words`)."""
    spread = share_spread(name, value, sigma)
    return relative_words(sigma) if spread is None else share_words(spread)


def relative_words(sigma: float) -> str:
    """``+- 16%``; below 1% to one significant figure (``+- 0.4%``), beyond
    :data:`WIDEST` ``+- over 1000%``."""
    if sigma > WIDEST:
        return f"+- over {WIDEST:.0%}"
    return f"+- {sigma:.0%}" if sigma >= 0.01 or sigma == 0 else f"+- {sigma * 100:.1g}%"


def _prov(source: str) -> Provenance:
    return Provenance("calibrated", source)


#: Spec scalars a calibration sets directly, by their own name.
SCALAR_CONSTANTS = (
    "launch_overhead_s",
    "idle_power_w",
    "kernel_overhead_s",
    "fork_join_s",
    "page_walk_s",
)


def _per_dtype(
    spec: TargetSpec, name: str, values: dict[str, float], source: str
) -> dict[str, Sourced]:
    """A per-dtype constant of ``spec`` (``name``), with the calibrated value of
    each ``name.<dtype>`` in ``values``; a constant outside ``SPEC_DTYPES_ONLY``
    (a dispatch, a product's bandwidth share) may be calibrated for a dtype the
    spec gave none, and a bare ``pack_bps`` (a calibration made before packing
    was per dtype) applies to every dtype that packs."""
    current = getattr(spec, name)
    prov = spec.provenance
    out = {d: Sourced(v, prov[f"{name}.{d}"]) for d, v in current.items()}
    dtypes = tuple(current) if name in SPEC_DTYPES_ONLY else spec.dtypes
    for dtype in dtypes:
        for key in (f"{name}.{dtype}", name if name == "pack_bps" else None):
            if key is not None and key in values:
                out[dtype] = Sourced(values[key], _prov(source))
                break
    return out


#: Per-dtype constants whose calibrated value replaces the spec's (the
#: compute fraction, a multiplier of the spec's, has its own rule below).
PER_DTYPE_VALUES = tuple(n for n, c in PER_DTYPE_CONSTANTS.items() if c.replaces)


def apply_constants(spec: TargetSpec, values: dict[str, float], source: str) -> TargetSpec:
    """A copy of ``spec`` with calibrated constants (provenance ``calibrated``)."""
    prov = dict(spec.provenance)
    changes: dict[str, Any] = {}
    for name in PER_DTYPE_VALUES:
        changes[name] = _per_dtype(spec, name, values, source)
    peaks = dict(spec.peak_ops_per_s)
    fractions = dict(spec.compute_fraction)
    for dtype in spec.dtypes:
        key = f"compute_fraction.{dtype}"
        if key not in values:
            continue
        achievable = values[key] * spec.peak_ops_per_s[dtype] * spec.compute_fraction[dtype]
        if achievable > spec.peak_ops_per_s[dtype]:
            peaks[dtype] = Sourced(
                achievable,
                _prov(
                    f"{source}; measured rates exceed the spec's peak "
                    f"({spec.peak_ops_per_s[dtype]:.4g}): the clock under load is higher"
                ),
            )
            fractions[dtype] = Sourced(1.0, _prov(source))
        else:
            fractions[dtype] = Sourced(achievable / spec.peak_ops_per_s[dtype], _prov(source))
    for dtype in spec.dtypes:
        if not isinstance(peaks[dtype], Sourced):
            peaks[dtype] = Sourced(peaks[dtype], prov[f"peak_ops_per_s.{dtype}"])
        if not isinstance(fractions[dtype], Sourced):
            fractions[dtype] = Sourced(fractions[dtype], prov[f"compute_fraction.{dtype}"])
    for name in SCALAR_CONSTANTS:
        if name in values:
            changes[name] = Sourced(values[name], _prov(source))
    if "first_touch_bps" in values:
        changes["first_touch_bps"] = Sourced(values["first_touch_bps"], _prov(source))
        changes["first_touch_min_bytes"] = first_touch_threshold()
    tiers = [_apply_tier(t, values, source) for t in spec.tiers]
    # rebuild through the constructor so every value is validated again
    fields = {a.name: getattr(spec, a.name) for a in spec.__attrs_attrs__}  # type: ignore
    fields.update(
        peak_ops_per_s=peaks,
        compute_fraction=fractions,
        tiers=tiers,
        provenance={
            k: v
            for k, v in prov.items()
            if not k.startswith(("peak_ops_per_s.", *(f"{name}." for name in PER_DTYPE)))
        },
    )
    fields.update(changes)
    return TargetSpec(**fields)


def _apply_tier(tier: MemoryTier, values: dict[str, float], source: str) -> MemoryTier:
    prefix = f"tiers.{tier.name}."
    tp = dict(tier.provenance)
    peak = Sourced(tier.peak_bandwidth_bps, tp["peak_bandwidth_bps"])
    fraction = Sourced(tier.achievable_fraction, tp["achievable_fraction"])
    if prefix + "achievable_fraction" in values:
        effective = values[prefix + "achievable_fraction"] * tier.effective_bandwidth_bps
        if effective > tier.peak_bandwidth_bps:
            peak = Sourced(
                effective,
                _prov(
                    f"{source}; measured bandwidth exceeds the spec's "
                    f"peak ({tier.peak_bandwidth_bps:.4g} B/s)"
                ),
            )
            fraction = Sourced(1.0, _prov(source))
        else:
            fraction = Sourced(effective / tier.peak_bandwidth_bps, _prov(source))
    usable: Any = None
    if tier.usable_capacity_bytes is not None:
        usable = Sourced(tier.usable_capacity_bytes, tp["usable_capacity_bytes"])
    if prefix + "usable_capacity_bytes" in values:
        usable = Sourced(
            min(values[prefix + "usable_capacity_bytes"], tier.total_capacity_bytes), _prov(source)
        )
    product: Any = tier.product_fraction
    if "product_fraction" in tp:
        product = Sourced(tier.product_fraction, tp["product_fraction"])
    if prefix + "product_fraction" in values:
        product = Sourced(values[prefix + "product_fraction"], _prov(source))
    energy = Sourced(tier.energy_per_byte_j, tp["energy_per_byte_j"])
    if prefix + "energy_per_byte_j" in values:
        energy = Sourced(values[prefix + "energy_per_byte_j"], _prov(source))
    return MemoryTier(
        tier.name,
        Sourced(tier.capacity_bytes, tp["capacity_bytes"]),
        tier.is_per_unit,
        Sourced(tier.num_units, tp["num_units"]) if "num_units" in tp else tier.num_units,
        peak,
        Sourced(tier.access_latency_ns, tp["access_latency_ns"]),
        fraction,
        energy_per_byte_j=energy,
        label=tier.label,
        shared_with_tenants=tier.shared_with_tenants,
        usable_capacity_bytes=usable,
        non_inclusive=tier.non_inclusive,
        product_fraction=product,
    )


def constants_from_file(data: dict[str, Any], spec: TargetSpec | None = None) -> dict[str, float]:
    """The values to apply, as multipliers for fractions (like a fit's
    values): of the fraction ``spec`` gives, where given, so that the
    calibrated fraction is the file's value whatever the target file says
    (its ``datasheet``, the spec's at the fit, only records it); of the
    file's ``datasheet`` otherwise (the fit's own multipliers)."""
    current = current_values(spec) if spec is not None else {}
    out = {}
    for name, entry in data["constants"].items():
        if not is_fraction(name):
            out[name] = entry["value"]
            continue
        base = entry["datasheet"] if spec is None else current[name]
        out[name] = entry["value"] / base
    return out


def apply_file(spec: TargetSpec, data: dict[str, Any], name: str) -> TargetSpec:
    """The calibrated spec a shipped calibration file describes (checked
    first: :mod:`graphsval_core.files.calibration_file`)."""
    check_calibration(data, name, spec)
    for tier in spec.tiers:  # applying would clamp it (a fit's rounding); a file may not
        entry = data["constants"].get(f"tiers.{tier.name}.usable_capacity_bytes")
        for key in ("value", "datasheet"):  # the spec's usable part of it too
            given = None if entry is None else entry.get(key)
            if given is not None and given > tier.total_capacity_bytes * (1 + 1e-9):
                raise CalibrationFileError(
                    f"{name}: constants.tiers.{tier.name}.usable_capacity_bytes"
                    f"{'' if key == 'value' else '.datasheet'}: {given:.6g} B exceeds the "
                    f"tier's total capacity {tier.total_capacity_bytes:.6g} B"
                )
    sources = ", ".join(s["file"] for s in data["provenance"]["sources"])
    calibrated = apply_constants(
        spec,
        constants_from_file(data, spec),
        f"{name} (fitted on {sources}; graphsval {data['provenance']['graphsval_version']})",
    )
    # each constant is in its range, yet fractions multiply: the values they give must stand
    # as a target file's must (no rate near 0 or past an exascale machine, no energy of a
    # joule per op)
    wrong = out_of_bounds(calibrated)
    if wrong is not None:
        raise CalibrationFileError(f"{name}: with its constants, {wrong}")
    return calibrated


#: The per-dtype constants a spec has a value of for every dtype (a default
#: where it gives none): :func:`current_values` reads them its own way.
_EVERY_DTYPE = ("dispatch_overhead_s", "compute_fraction", "energy_per_op_j")


def current_values(spec: TargetSpec) -> dict[str, float]:
    """The spec's value of every constant a calibration may set (each
    per-dtype constant of :data:`PER_DTYPE_CONSTANTS` for the dtypes the spec
    gives it, beside those every dtype has)."""
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
        out[f"tiers.{t.name}.product_fraction"] = t.product_fraction
    for name in ("first_touch_bps", "fork_join_s", "kernel_overhead_s", "page_walk_s"):
        if getattr(spec, name) is not None:
            out[name] = getattr(spec, name)
    for name in PER_DTYPE:  # the library's and the kernels' own: the dtypes the spec gives
        if name not in _EVERY_DTYPE:
            for d, value in getattr(spec, name).items():
                out[f"{name}.{d}"] = value
    return out


def resolved(spec: TargetSpec, name: str, multiplier_or_value: float) -> float:
    """Fractions are fitted as multipliers of the spec's value; report the value."""
    if is_fraction(name):
        return multiplier_or_value * current_values(spec)[name]
    return multiplier_or_value
