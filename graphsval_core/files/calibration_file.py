"""The schema a calibration file (``<key>.calibration.json``) is checked
against before its constants are applied to a target.

What applying reads must be there and typed: ``target`` (the key),
``constants`` (each ``{"value": ..., "datasheet": ...}``, finite numbers,
positive where the value divides or scales), ``provenance`` with its
``sources`` (each naming a ``file``) and ``graphsval_version``. Every
constant's name must be one applying uses on this target (a misspelt one is
an error, never ignored): a scalar such as ``launch_overhead_s``, a per-dtype
constant such as ``compute_fraction.fp32`` of one of the target's dtypes, or
a tier's ``tiers.<tier>.<field>`` of one of its tiers. Of the fit's record,
``graphsval targets`` reads the diagnostics (which constants the rows do not
identify): ``fit`` must be an object and its ``diagnostics`` a list of
objects whose ``kind`` and ``subject`` are strings. The rest (the fit's
figures, the residuals) is a record for people and is not read.
"""

from __future__ import annotations

import json
from typing import Any

from attrs import define

from graphsval_core.datamodel.errors import UserInputError
from graphsval_core.datamodel.target import MAX_PRODUCT_SHARE, TargetSpec
from graphsval_core.files import schema

SCHEMA_VERSION = 1
TOP_KEYS = ("schema_version", "target", "provenance", "constants", "energy", "fit", "residuals")
#: Constants applied to the whole target, by their own name.
SCALARS = (
    "launch_overhead_s",
    "idle_power_w",
    "kernel_overhead_s",
    "fork_join_s",
    "first_touch_bps",
    "pack_bps",  # one rate for every dtype (a calibration made before it was per dtype)
    "page_walk_s",
)
#: Scalars applied only where the spec gives one (the TLB-miss cost needs the TLB's reach).
SPEC_SCALARS_ONLY = ("page_walk_s",)


@define(frozen=True)
class PerDtype:
    """How a calibration file holds a per-dtype constant ``<name>.<dtype>``
    (:data:`PER_DTYPE_CONSTANTS`): the range of its value (a key of
    :data:`RANGES`), whether it applies only to the dtypes whose spec gives
    one (a library that packs, a vector rate: a calibration cannot add the
    term for another), whether applying it replaces the spec's value with the
    calibrated one (the compute fraction is a multiplier of the spec's, with
    a rule of its own), and whether it is a share a fit judges by its own
    spread (``value x relative uncertainty``), which the relative figure, of
    a log, overstates near 0."""

    range: str
    spec_dtypes_only: bool = True
    replaces: bool = True
    share: bool = False
    #: a constant of the dtype's GEMM library: refused for a dtype no library
    #: runs (``no_gemm_library``), where it would change nothing
    library: bool = False


#: Every per-dtype constant a calibration file may hold, and how: checking a
#: file, applying it and the fit's judgement of a share read this table (a
#: new constant also needs its TargetSpec field, the target file's entry and
#: the fit's Param in :mod:`graphsval_core.calibrate.params`).
PER_DTYPE_CONSTANTS: dict[str, PerDtype] = {
    "dispatch_overhead_s": PerDtype("latency", spec_dtypes_only=False, library=True),
    "accumulate_overhead_s": PerDtype("latency", library=True),
    "gemv_fork_join_s": PerDtype("positive_latency", library=True),
    "pack_bps": PerDtype("rate", library=True),
    "compute_fraction": PerDtype("fraction", spec_dtypes_only=False, replaces=False),
    "energy_per_op_j": PerDtype("positive_energy", spec_dtypes_only=False),
    "vector_ops_per_s": PerDtype("rate"),
    # every product of the dtype streams at it, the framework's own kernel's too
    "product_bandwidth_fraction": PerDtype("product_share", spec_dtypes_only=False),
    "product_overlap": PerDtype("unit_share", share=True, library=True),
    "in_place_fraction": PerDtype("product_share", share=True, library=True),
    "gemv_fraction": PerDtype("product_share", share=True, library=True),
    "narrow_n_fraction": PerDtype("product_share", share=True, library=True),
    "transposed_narrow_n_fraction": PerDtype("product_share", share=True, library=True),
    "pack_a_bps": PerDtype("rate", library=True),
    "vector_first_touch_bps": PerDtype("rate", spec_dtypes_only=False),
    **{name: PerDtype("positive_latency") for name in TargetSpec.REFERENCE},
}
#: Constants of one dtype: ``<name>.<dtype>``.
PER_DTYPE = tuple(PER_DTYPE_CONSTANTS)

#: Constants of one memory tier: ``tiers.<tier>.<name>``.
PER_TIER = ("achievable_fraction", "usable_capacity_bytes", "energy_per_byte_j", "product_fraction")


class CalibrationFileError(UserInputError):
    """A calibration file does not hold what applying it needs."""


#: Per-dtype constants applied only to the dtypes whose spec gives one
#: (applying, :func:`graphsval_core.files.calibration.apply_constants`, follows
#: the same rule).
SPEC_DTYPES_ONLY = tuple(n for n, c in PER_DTYPE_CONSTANTS.items() if c.spec_dtypes_only)


def is_fraction(name: str) -> bool:
    """Whether constant ``name`` is a fraction of a peak, applied as its
    value over the spec's (a file gives it with its ``datasheet``)."""
    return name.endswith("achievable_fraction") or name.startswith("compute_fraction.")


def _outside_library(head: str, dtype: str, spec: TargetSpec) -> bool:
    """Whether ``<head>.<dtype>`` is a GEMM library's constant for a dtype
    no library runs on ``spec`` (``no_gemm_library``): no calibration sets it."""
    own = PER_DTYPE_CONSTANTS.get(head)
    return own is not None and own.library and dtype in spec.no_gemm_library


def _known(name: str, spec: TargetSpec) -> bool:
    if name in SPEC_SCALARS_ONLY:
        return getattr(spec, name, None) is not None
    if name in SCALARS:
        return True
    head, _, tail = name.partition(".")
    if _outside_library(head, tail, spec):
        return False
    if head in SPEC_DTYPES_ONLY:
        return tail in getattr(spec, head, {})
    if head in PER_DTYPE:
        return tail in spec.dtypes or tail in getattr(spec, head, {})
    if head == "tiers":
        tier, _, field = tail.partition(".")
        return field in PER_TIER and tier in {t.name for t in spec.tiers}
    return False


def known_constants(spec: TargetSpec) -> list[str]:
    """Every constant name a calibration file of ``spec`` may hold."""
    names = [*SCALARS]
    for head in PER_DTYPE:
        dtypes = getattr(spec, head, {}) if head in SPEC_DTYPES_ONLY else spec.dtypes
        names += [f"{head}.{d}" for d in dtypes]
    names += [f"tiers.{t.name}.{f}" for t in spec.tiers for f in PER_TIER]
    return [n for n in names if _known(n, spec)]


#: The longest latency constant (s): a day, the baseline reader's largest latency.
MAX_LATENCY_S = 86_400.0
#: The largest calibrated fraction: above 1 it raises the spec's peak (a clock
#: under load above the datasheet's), at most twice (validate's plausibility margin).
MAX_FRACTION = 2.0
#: The slowest rate a calibration file may give (B/s or ops/s): no part runs
#: below a megabyte (or a million operations) a second, and a rate near 0
#: would overflow every prediction to infinity.
MIN_RATE = 1e6
#: The smallest capacity (B) of a tier, a usable one included: one cache line.
MIN_CAPACITY_BYTES = 64
#: The ranges of a constant's value, ``(low, high, low_open)``: a fraction
#: of a peak, a share of a tier's rate (:data:`MAX_PRODUCT_SHARE`) or of
#: anything (at most 1), a latency (0 allowed, or above 0), a rate, a size,
#: an energy or power (0 allowed), an energy per op (above 0, as a spec holds it).
RANGES: dict[str, tuple[float, float | None, bool]] = {
    "fraction": (0.0, MAX_FRACTION, True),
    "product_share": (0.0, MAX_PRODUCT_SHARE, True),
    "unit_share": (0.0, 1.0, True),
    "latency": (0.0, MAX_LATENCY_S, False),
    "positive_latency": (0.0, MAX_LATENCY_S, True),
    "rate": (MIN_RATE, None, False),
    "capacity": (MIN_CAPACITY_BYTES, None, False),  # at most its cache's, once applied
    "energy": (0.0, None, False),
    "positive_energy": (0.0, None, True),
}
#: The ranges of the scalars and the tiers' constants (each per-dtype
#: constant's is in :data:`PER_DTYPE_CONSTANTS`); any other is an energy or power.
OTHER_RANGES = {
    "launch_overhead_s": "latency",
    "page_walk_s": "positive_latency",
    "fork_join_s": "positive_latency",
    "kernel_overhead_s": "positive_latency",
    "pack_bps": PER_DTYPE_CONSTANTS["pack_bps"].range,  # one rate for every dtype (older files)
    "first_touch_bps": "rate",
    "achievable_fraction": "fraction",
    "product_fraction": "product_share",
    "usable_capacity_bytes": "capacity",
}


def _range(name: str) -> tuple[float, float | None, bool]:
    """``(low, high, low_open)`` of constant ``name``'s value (a name
    :func:`_known` knows; any other takes an energy's range)."""
    if name.startswith("tiers."):
        kind = OTHER_RANGES.get(name.split(".")[-1], "energy")
    elif "." in name:
        own = PER_DTYPE_CONSTANTS.get(name.split(".")[0])
        kind = own.range if own is not None else "energy"
    else:
        kind = OTHER_RANGES.get(name, "energy")
    return RANGES[kind]


def check_calibration(data: Any, where: str, spec: TargetSpec) -> dict[str, Any]:
    """``data`` (a parsed calibration file ``where``) checked against the
    schema and against ``spec``, the target it calibrates; returned as is."""
    err = CalibrationFileError
    top = schema.obj(data, where, err)
    schema.keys(top, where, err, required=("target", "constants", "provenance"), optional=TOP_KEYS)
    schema.schema_version(top, where, err, SCHEMA_VERSION)
    target = schema.string(top["target"], f"{where}: target", err)
    if target != spec.key:
        raise CalibrationFileError(f"{where}: calibrates {target!r}, not {spec.key!r}")
    provenance = schema.obj(top["provenance"], f"{where}: provenance", err)
    for key in ("sources", "graphsval_version"):
        if key not in provenance:
            raise CalibrationFileError(f"{where}: provenance: missing key {key!r}")
    schema.string(provenance["graphsval_version"], f"{where}: provenance.graphsval_version", err)
    sources = provenance["sources"]
    if not isinstance(sources, list):
        raise CalibrationFileError(f"{where}: provenance.sources: expected a list of files")
    for i, source in enumerate(sources):
        at = f"{where}: provenance.sources[{i}]"
        schema.string(schema.obj(source, at, err).get("file"), f"{at}.file", err)
    constants = schema.obj(top["constants"], f"{where}: constants", err)
    for name, entry in constants.items():
        at = f"{where}: constants.{name}"
        head, _, tail = name.partition(".")
        if head in SPEC_DTYPES_ONLY and tail in spec.dtypes and not _known(name, spec):
            given = ", ".join(getattr(spec, head))
            which = f"it gives one for: {given}" if given else "it gives none for any dtype"
            raise CalibrationFileError(
                f"{at}: {spec.key} gives no {head} for {tail} ({which}), "
                "so no calibration can set one"
            )
        if _outside_library(head, tail, spec):
            raise CalibrationFileError(
                f"{at}: {spec.key} runs {tail} in no GEMM library (no_gemm_library: its "
                "products run in the framework's own kernel), so no calibration can set one"
            )
        if not _known(name, spec):
            near = schema.suggest(name, known_constants(spec))
            raise CalibrationFileError(
                f"{at}: not a constant graphsval calibrates on {spec.key}{near} (a scalar "
                f"such as launch_overhead_s, <constant>.<dtype> of {', '.join(spec.dtypes)}, or "
                f"tiers.<tier>.<{'|'.join(PER_TIER)}>)"
            )
        entry = schema.obj(entry, at, err)
        if "value" not in entry:
            raise CalibrationFileError(f"{at}: missing key 'value'")
        schema.keys(entry, at, err, required=("value",), optional=ENTRY_KEYS)
        fraction = is_fraction(name)
        low, high, low_open = _range(name)
        schema.number(entry["value"], f"{at}.value", err, low, high, low_open=low_open)
        if fraction:  # applied as value / datasheet
            if "datasheet" not in entry:
                raise CalibrationFileError(f"{at}: missing key 'datasheet' (a fraction's)")
            schema.number(entry["datasheet"], f"{at}.datasheet", err, 0.0, 1.0, low_open=True)
        elif entry.get("datasheet") is not None:  # the spec's value: in the constant's range
            schema.number(entry["datasheet"], f"{at}.datasheet", err, low, high, low_open=low_open)
        _check_entry(entry, at)
        shared = spec.first_touch_bps is not None or "first_touch_bps" in constants
        if head == "vector_first_touch_bps" and not shared:
            raise CalibrationFileError(
                f"{at}: an op's own first-touch rate needs first_touch_bps beside it "
                f"(the rate the products take fresh pages at): {spec.key} gives none, "
                "so this file must"
            )
    if "fit" in top:
        fit = schema.obj(top["fit"], f"{where}: fit", err)
        schema.keys(fit, f"{where}: fit", err, optional=FIT_KEYS)  # a typo: shown as "-"
        _check_figures(fit, f"{where}: fit")
        warnings = fit.get("warnings", [])
        if not isinstance(warnings, list) or not all(isinstance(w, str) for w in warnings):
            raise CalibrationFileError(f"{where}: fit.warnings: expected a list of strings")
        _check_diagnostics(fit, f"{where}: fit")
        _check_out_of_sample(fit, f"{where}: fit")
    return top


#: The figures of a fit's out-of-sample sections ``targets`` prints, and
#: their ranges: a share of rows, an error (0.25 is 25%), a count of rows.
FIGURES = {
    "rows": (0.0, None),
    "median_abs_error": (0.0, None),
    "p90_abs_error": (0.0, None),
    "within_band": (0.0, 1.0),
    "within_10pct": (0.0, 1.0),
}


#: What calibrate writes into a file's ``fit`` section, and into each of its
#: out-of-sample sections (``leave_one_out``, ``grouped_cv``, ``validation``).
FIT_KEYS = (
    "rows",
    "not_identifiable",
    "median_abs_error",
    "within_band",
    "in_sample_per_op",
    "leave_one_out",
    "grouped_cv",
    "validation",
    "warnings",
    "diagnostics",
)
SECTION_KEYS = (
    *FIGURES,
    "groups",
    "per_op",
    "files",
    "from",
    "left_out",
    "validation_rows",
)


def _check_out_of_sample(fit: dict[str, Any], at: str) -> None:
    """The fit's ``grouped_cv`` and ``validation`` sections (read by
    ``graphsval targets``), where given: objects whose figures
    (:data:`FIGURES`), overall and per op, are numbers in their range or
    null (not a number when calibrate wrote it), a count of rows whole."""
    err = CalibrationFileError
    for name in ("grouped_cv", "validation"):
        if name not in fit:
            continue
        section = schema.obj(fit[name], f"{at}.{name}", err)
        schema.keys(section, f"{at}.{name}", err, optional=SECTION_KEYS)
        per_op = schema.obj(section.get("per_op", {}), f"{at}.{name}.per_op", err)
        places = [(f"{at}.{name}", section)] + [
            (f"{at}.{name}.per_op.{op}", schema.obj(figures, f"{at}.{name}.per_op.{op}", err))
            for op, figures in per_op.items()
        ]
        for place, figures in places[1:]:
            schema.keys(figures, place, err, optional=tuple(FIGURES))
        if section.get("groups") is not None:
            schema.integer(section["groups"], f"{at}.{name}.groups", err, 0)
        for place, figures in places:
            _check_figures(figures, place)


def _check_figures(figures: dict[str, Any], place: str) -> None:
    """The :data:`FIGURES` of ``figures`` (a fit, or one of its sections or
    ops) where given: numbers in their range or null, a count of rows whole."""
    err = CalibrationFileError
    for key, (low, high) in FIGURES.items():
        value = figures.get(key)
        if value is None:
            continue
        if key == "rows":
            schema.integer(value, f"{place}.{key}", err, 0)
        else:
            schema.number(value, f"{place}.{key}", err, low, high)


def _check_diagnostics(fit: dict[str, Any], at: str) -> None:
    """The fit's ``diagnostics`` (read by ``graphsval targets``): a list of
    objects whose ``kind`` and ``subject`` are strings where given."""
    err = CalibrationFileError
    diagnostics = fit.get("diagnostics")
    if diagnostics is None:
        return
    if not isinstance(diagnostics, list):
        raise err(f"{at}.diagnostics: expected a list, got {schema.kind(diagnostics)}")
    for i, item in enumerate(diagnostics):
        entry = schema.obj(item, f"{at}.diagnostics[{i}]", err)
        for key in ("kind", "subject"):
            if key in entry:
                schema.string(entry[key], f"{at}.diagnostics[{i}].{key}", err)


#: What a constant's entry may hold besides its ``value`` (what calibrate writes).
ENTRY_KEYS = ("datasheet", "relative_uncertainty", "from", "at_bound")
#: The bounds ``at_bound`` may name.
BOUNDS = ("lower", "upper", "floor")


def _check_entry(entry: dict[str, Any], at: str) -> None:
    """The entry's other keys: ``datasheet`` (null where the spec has none)
    and ``relative_uncertainty`` (null where it is not a number) numbers >= 0,
    ``from`` a string, ``at_bound`` one of :data:`BOUNDS`."""
    err = CalibrationFileError
    for key in ("datasheet", "relative_uncertainty"):
        if entry.get(key) is not None:
            schema.number(entry[key], f"{at}.{key}", err, 0.0)
    if "from" in entry:
        schema.string(entry["from"], f"{at}.from", err, empty=True)
    if "at_bound" in entry and entry["at_bound"] not in BOUNDS:
        raise CalibrationFileError(
            f"{at}.at_bound: expected one of {', '.join(BOUNDS)}, got "
            + (
                json.dumps(entry["at_bound"])
                if isinstance(entry["at_bound"], str)
                else schema.kind(entry["at_bound"])
            )
        )
