"""Target specs to and from JSON, provenance included (named snapshot targets).

A detected target (``host_cpu``) changes from machine to machine; a capture
freezes the spec it measured against into a ``<key>.target.json`` file, and the
plugin registers it as a named target, so validating it gives the same answer
on any machine.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from graphsval_core.datamodel.errors import UserInputError
from graphsval_core.datamodel.provenance import PROVENANCE_KINDS, Provenance, Sourced
from graphsval_core.datamodel.target import NO_PROVENANCE, MemoryTier, SpecError, TargetSpec
from graphsval_core.files.calibration_file import (
    MAX_LATENCY_S,
    MIN_CAPACITY_BYTES,
    MIN_RATE,
)

SCHEMA_VERSION = 1
_TIER_FIELDS = (
    "capacity_bytes",
    "peak_bandwidth_bps",
    "access_latency_ns",
    "achievable_fraction",
    "energy_per_byte_j",
    "usable_capacity_bytes",
    "product_fraction",
)
_SCALARS = (*TargetSpec.PROVENANCED, *TargetSpec.OPTIONAL_NUMBERS)
#: A tier's optional figures (null: the whole capacity, the products' share of 1).
_TIER_OPTIONAL = ("usable_capacity_bytes", "product_fraction")
#: What the cross-target checks compare a part with (written only when set).
_COMPARISON = ("power_mode_class", "family_rank", "power_class")
_MAPS = (
    "peak_ops_per_s",
    "energy_per_op_j",
    "compute_fraction",
    "dispatch_overhead_s",
    "accumulate_overhead_s",
    "gemv_fork_join_s",
    "vector_ops_per_s",
    "product_bandwidth_fraction",
    "product_overlap",
    "pack_a_bps",
    "vector_first_touch_bps",
    "library_min_macs",
    "accumulator_lanes",
    "tail_piece_vectors",
    "product_output_passes",
    *TargetSpec.REFERENCE,
    *TargetSpec.PACKING,
    "in_place_max_rows",
    "in_place_fraction",
    "pack_read_overlap",
    "transposed_pack_min_rows",
    "transposed_pass_rows",
    "narrow_n_columns",
    "transposed_narrow_n_columns",
    "narrow_n_fraction",
    "transposed_narrow_n_group",
    "transposed_narrow_n_fraction",
    "gemv_fraction",
)


def _prov(p: Provenance) -> dict[str, str]:
    return {"kind": p.kind, "source": p.source}


def _sourced(value: Any, prov: dict[str, str] | None) -> Any:
    if value is None or prov is None:
        return value
    return Sourced(value, Provenance(prov["kind"], prov.get("source", "")))


def spec_to_json(spec: TargetSpec) -> dict[str, Any]:
    """A JSON-ready dict that :func:`spec_from_json` turns back into the same spec."""
    tiers = []
    for t in spec.tiers:
        tiers.append(
            {
                "name": t.name,
                "label": t.label,
                "is_per_unit": t.is_per_unit,
                "num_units": t.num_units,
                "shared_with_tenants": t.shared_with_tenants,
                "non_inclusive": t.non_inclusive,
                **{f: getattr(t, f) for f in _TIER_FIELDS if f != "product_fraction"},
                **({"product_fraction": t.product_fraction} if t.product_fraction != 1.0 else {}),
                "provenance": {k: _prov(v) for k, v in t.provenance.items()},
            }
        )
        written = tiers[-1]
        for name in _TIER_OPTIONAL:  # no source for a figure the file leaves out (refused)
            if written.get(name) is None:
                written["provenance"].pop(name, None)
    return {
        "schema_version": SCHEMA_VERSION,
        "key": spec.key,
        "name": spec.name,
        "family": spec.family,
        "architecture": spec.architecture,
        "compute_unit_name": spec.compute_unit_name,
        "ground_truth": spec.ground_truth,
        "power_mode": spec.power_mode,
        **{f: getattr(spec, f) for f in _COMPARISON if getattr(spec, f) is not None},
        "detected": spec.detected,
        "description": spec.description,
        "fingerprint": dict(spec.fingerprint),
        **{f: getattr(spec, f) for f in _SCALARS},
        **{f: dict(getattr(spec, f)) for f in _MAPS},
        **({"no_gemm_library": list(spec.no_gemm_library)} if spec.no_gemm_library else {}),
        "tiers": tiers,
        # a source of an optional figure the spec leaves unset describes nothing: a
        # target file may not hold one (read_spec refuses it), so none is written
        "provenance": {
            k: _prov(v)
            for k, v in spec.provenance.items()
            if not (k in TargetSpec.OPTIONAL_NUMBERS and getattr(spec, k) is None)
        },
    }


def spec_from_json(data: dict[str, Any]) -> TargetSpec:
    prov = data.get("provenance", {})
    tiers = []
    for t in data["tiers"]:
        tp = t.get("provenance", {})
        tiers.append(
            MemoryTier(
                t["name"],
                _sourced(t["capacity_bytes"], tp.get("capacity_bytes")),
                t["is_per_unit"],
                _sourced(t["num_units"], tp.get("num_units")),
                _sourced(t["peak_bandwidth_bps"], tp.get("peak_bandwidth_bps")),
                _sourced(t["access_latency_ns"], tp.get("access_latency_ns")),
                _sourced(t["achievable_fraction"], tp.get("achievable_fraction")),
                energy_per_byte_j=_sourced(t["energy_per_byte_j"], tp.get("energy_per_byte_j")),
                label=t.get("label", ""),
                shared_with_tenants=t.get("shared_with_tenants", False),
                non_inclusive=t.get("non_inclusive", False),
                usable_capacity_bytes=_sourced(
                    t.get("usable_capacity_bytes"), tp.get("usable_capacity_bytes")
                ),
                product_fraction=_sourced(
                    t.get("product_fraction", 1.0), tp.get("product_fraction")
                ),
            )
        )
    maps: dict[str, Any] = {
        f: {d: _sourced(v, prov.get(f"{f}.{d}")) for d, v in (data.get(f) or {}).items()}
        for f in _MAPS
        if not isinstance(data.get(f), int | float)
    }
    for f in TargetSpec.PACKING:  # a spec written before packing was per dtype
        if isinstance(data.get(f), int | float):
            maps[f] = _sourced(data[f], prov.get(f))
    return TargetSpec(
        key=data["key"],
        name=data["name"],
        family=data["family"],
        architecture=data["architecture"],
        compute_unit_name=data.get("compute_unit_name", "core"),
        ground_truth=data["ground_truth"],
        power_mode=data.get("power_mode"),
        **{f: data[f] for f in _COMPARISON if data.get(f) is not None},
        detected=data.get("detected", False),
        description=data.get("description", ""),
        fingerprint=data.get("fingerprint", {}),
        **{f: _sourced(data.get(f), prov.get(f)) for f in _SCALARS if f in data},
        **maps,
        no_gemm_library=tuple(data.get("no_gemm_library") or ()),
        tiers=tiers,
    )


def write_spec(spec: TargetSpec, path: str | Path) -> None:
    from graphsval_core.files.outputs import write_text_atomic

    text = json.dumps(spec_to_json(spec), indent=2, sort_keys=False) + "\n"
    write_text_atomic(path, text, TargetFileError)


class TargetFileError(UserInputError):
    """A target spec file cannot be read; the message names the file and key."""


#: The keys a spec file may hold at the top level, and in a tier.
TOP_KEYS = (
    "schema_version",
    "key",
    "name",
    "family",
    "architecture",
    "compute_unit_name",
    "ground_truth",
    "power_mode",
    *_COMPARISON,
    "detected",
    "description",
    "fingerprint",
    *_SCALARS,
    *_MAPS,
    "no_gemm_library",
    "tiers",
    "provenance",
)
TIER_KEYS = (
    "name",
    "label",
    "is_per_unit",
    "num_units",
    "shared_with_tenants",
    "non_inclusive",
    *_TIER_FIELDS,
    "provenance",
)


def read_spec(path: str | Path, text: str | bytes | None = None) -> TargetSpec:
    """The spec of file ``path`` (or of its ``text``), read strictly: valid
    UTF-8 JSON, known keys only (a misspelt one is an error), every value
    checked by :class:`TargetSpec`; :class:`TargetFileError` names the file
    and the key."""
    from graphsval_core.files import schema
    from graphsval_core.files.jsonfile import parse_json, read_json

    where, err = str(path), TargetFileError
    data = read_json(path, err) if text is None else parse_json(text, where, err)
    top = schema.obj(data, where, err)
    required = ("key", "name", "family", "architecture", "ground_truth", "tiers")
    schema.keys(top, where, err, required=required, optional=TOP_KEYS)
    schema.schema_version(top, where, err, SCHEMA_VERSION)
    if not isinstance(top["tiers"], list) or not top["tiers"]:
        raise TargetFileError(f"{where}: tiers: expected a non-empty list of tiers")
    for i, tier in enumerate(top["tiers"]):
        at = f"{where}: tiers[{i}]"
        schema.keys(schema.obj(tier, at, err), at, err, optional=TIER_KEYS)
        name = tier.get("name")
        if isinstance(name, str) and name.strip():
            at += f" (tier {name!r})"
        for key in _TIER_REQUIRED:
            if key not in tier:
                raise TargetFileError(f"{at}: missing key {key!r}")
        _types(tier, at, _TIER_TYPES)
    _types(top, where, _TOP_TYPES)
    dtypes = top.get("no_gemm_library")
    if dtypes is not None and not isinstance(dtypes, list):
        raise TargetFileError(
            f"{where}: no_gemm_library: expected a list of dtype names, got {schema.kind(dtypes)}"
        )
    for i, dtype in enumerate(dtypes or ()):
        if not isinstance(dtype, str):
            raise TargetFileError(
                f"{where}: no_gemm_library[{i}]: expected a dtype name, got {schema.kind(dtype)}"
            )
    for key in ("provenance", "fingerprint", *(m for m in _MAPS if m not in TargetSpec.PACKING)):
        if key in top and (key in ("provenance", "fingerprint") or top[key] is not None):
            schema.obj(top[key], f"{where}: {key}", err)
    for name, value in (top.get("fingerprint") or {}).items():
        _fingerprint_key(name, f"{where}: fingerprint")
        _fingerprint_value(value, f"{where}: fingerprint.{name}")
    for key in TargetSpec.PACKING:  # per dtype, or one number for every dtype
        if top.get(key) is not None and not isinstance(top[key], dict | int | float):
            raise TargetFileError(
                f"{where}: {key}: expected an object (per dtype) or a number, "
                f"got {schema.kind(top[key])}"
            )
    provenances = [(f"provenance.{k}", v) for k, v in (top.get("provenance") or {}).items()]
    for i, tier in enumerate(top["tiers"]):
        tier_prov = tier.get("provenance", {})
        schema.obj(tier_prov, f"{where}: tiers[{i}].provenance", err)
        provenances += [(f"tiers[{i}].provenance.{k}", v) for k, v in tier_prov.items()]
        for name in _TIER_OPTIONAL:  # a source of a figure the tier leaves unset
            if name in tier_prov:
                _sources_something(where, f"tiers[{i}].provenance.{name}", name, tier)
    known = _provenance_keys(top)
    for at, _entry in provenances:  # a misspelt one would leave its figure unsourced
        top_level = at.startswith("provenance.")
        name = at.removeprefix("provenance.") if top_level else at.split(".provenance.", 1)[1]
        fields = known if top_level else (*_TIER_FIELDS, "num_units")
        if top_level and name in TargetSpec.OPTIONAL_NUMBERS:
            _sources_something(where, at, name, top)
        if name not in fields:
            head, _, item = name.partition(".")
            if top_level and head in _MAPS:  # the source of a per-dtype figure the file lacks
                given = top.get(head, ...)
                if given is None:
                    raise TargetFileError(
                        f"{where}: {at}: {head} is null, so it gives no {item!r}: "
                        f"give {head} that value, or drop this provenance"
                    )
                if item and given is ...:
                    raise TargetFileError(
                        f"{where}: {head}: missing, though {at} gives its source: give "
                        f"{head} (an object, one value per dtype), or drop the provenance"
                    )
                if item and isinstance(given, dict):
                    raise TargetFileError(
                        f"{where}: {at}: {head} gives no {item!r}: give {head}.{item}, "
                        "or drop this provenance"
                    )
            raise TargetFileError(
                f"{where}: {at}: no figure of that name{schema.suggest(name, fields)}"
            )
    for at, entry in provenances:  # each {"kind": ..., "source": ...}
        entry = schema.obj(entry, f"{where}: {at}", err)
        schema.keys(entry, f"{where}: {at}", err, optional=("kind", "source"))
        kind = schema.string(entry.get("kind"), f"{where}: {at}.kind", err)
        if kind not in PROVENANCE_KINDS:
            raise TargetFileError(
                f"{where}: {at}.kind: {kind!r} is not one of {', '.join(PROVENANCE_KINDS)}"
            )
        schema.string(entry.get("source"), f"{where}: {at}.source", err)
    try:
        spec = spec_from_json(top)
    except SpecError as exc:
        raise TargetFileError(f"{where}: {_in_file(exc, top)}") from None
    except UserInputError as exc:
        raise TargetFileError(f"{where}: {exc}") from None
    except KeyError as exc:
        raise TargetFileError(f"{where}: missing key {exc}") from None
    except TypeError as exc:
        missing = re.findall(r"'(\w+)'", str(exc)) if "missing" in str(exc) else []
        if missing:
            raise TargetFileError(
                f"{where}: missing key{'s' if len(missing) > 1 else ''} "
                f"{', '.join(repr(m) for m in missing)}"
            ) from None
        raise TargetFileError(f"{where}: {exc}") from None
    except (ValueError, AttributeError) as exc:
        raise TargetFileError(f"{where}: {exc}") from None
    wrong = out_of_bounds(spec) or _no_library_size(spec)
    if wrong is not None:
        raise TargetFileError(f"{where}: {wrong}")
    return spec


def _no_library_size(spec: TargetSpec) -> str | None:
    """A file's ``library_min_macs`` of 0 for a dtype, told as ``<where>:
    ...`` (None: none is): every product of it goes to the library, as when
    the file gives the dtype no size at all, so a 0 says nothing but looks
    like a size (a count in thousands, or a placeholder)."""
    for d, v in spec.library_min_macs.items():
        if v == 0:
            return (
                f"library_min_macs.{d}: 0 sends every {d} product to the GEMM library, as "
                f"giving {d} no size does; drop the key (or give the size in multiply-adds, "
                "M*K*N, at or below which the framework's own kernel runs it)"
            )
    return None


#: What a tier of a file must give (the others have defaults).
_TIER_REQUIRED = (
    "name",
    "is_per_unit",
    "num_units",
    *(f for f in _TIER_FIELDS if f not in ("usable_capacity_bytes", "product_fraction")),
)
#: The type each non-numeric key must have, and None where it may be null.
_BOOL, _TEXT, _TEXT_OR_NULL = (bool,), (str,), (str, type(None))
_TIER_TYPES = {
    "name": _TEXT,
    "label": _TEXT,
    "is_per_unit": _BOOL,
    "shared_with_tenants": _BOOL,
    "non_inclusive": _BOOL,
}
_TOP_TYPES = {
    "key": _TEXT,
    "name": _TEXT,
    "family": _TEXT,
    "architecture": _TEXT,
    "compute_unit_name": _TEXT,
    "ground_truth": _TEXT,
    "power_mode": _TEXT_OR_NULL,
    "power_mode_class": _TEXT_OR_NULL,
    "power_class": _TEXT_OR_NULL,
    "detected": _BOOL,
    "description": _TEXT,
}


def _sources_something(where: str, at: str, name: str, holder: dict[str, Any]) -> None:
    """Refuse the provenance at ``at`` of optional figure ``name`` when
    ``holder`` (the file's top level or a tier) gives it as null or not at
    all: the file would read as sourced where the model has no such term."""
    if holder.get(name) is None:
        raise TargetFileError(
            f"{where}: {at}: {name} is "
            + ("null" if name in holder else "not given")
            + f", so this provenance sources nothing: give {name} a value, or drop it"
        )


def _provenance_keys(top: dict[str, Any]) -> tuple[str, ...]:
    """The figures of a file's top level that may have a provenance entry:
    every scalar, and ``<map>.<dtype>`` for each dtype a per-dtype map gives
    (the map's own name where it is one number for every dtype)."""
    out = list(_SCALARS)
    for name in _MAPS:
        value = top.get(name)
        if isinstance(value, dict):
            out += [f"{name}.{dtype}" for dtype in value]
        elif value is not None:
            out.append(name)
    return tuple(out)


def _types(data: dict[str, Any], where: str, types: dict[str, tuple[type, ...]]) -> None:
    """Each key of ``types`` that ``data`` holds has one of its types (a
    boolean is true or false, never the string "no")."""
    from graphsval_core.files import schema

    for key, allowed in types.items():
        if key in data and not isinstance(data[key], allowed):
            want = {_BOOL: "true or false", _TEXT: "a string"}.get(allowed, "a string or null")
            raise TargetFileError(f"{where}: {key}: expected {want}, got {schema.kind(data[key])}")


def _in_file(exc: SpecError, top: dict[str, Any]) -> str:
    """The error as the file's keys name it: a tier's own check names the tier
    (``tier 'l2': capacity_bytes``), the file its place (``tiers[1]``); a
    number with no provenance is told how a file gives one."""
    field, where, key, message = repr(exc.field), "the file's", exc.field, exc.message
    match = re.fullmatch(r"tier '(.+)': (\w+)", exc.field)
    names = [t.get("name") if isinstance(t, dict) else None for t in top["tiers"]]
    if match is not None:
        key, where = match.group(2), "that tier's"  # two tiers of one name: no place to give
        if names.count(match.group(1)) == 1:
            at = f"tiers[{names.index(match.group(1))}]"
            field, where = f"{f'{at}.{key}'!r} (tier {match.group(1)!r})", f"{at}'s"
    packing = key.split(".", 1)[0]
    if packing in TargetSpec.PACKING and isinstance(top.get(packing), int | float):
        key = packing  # one number for every dtype: one provenance entry
    if message.startswith(NO_PROVENANCE):
        message = (
            f'{NO_PROVENANCE}; give it one in {where} "provenance": {{"{key}": {{"kind": '
            f'"datasheet", "source": "where it comes from"}}}} (kind: '
            f"{', '.join(PROVENANCE_KINDS)})"
        )
    return f"field {field}: {message}"


#: The most any rate of a target file may be (ops/s or B/s): a whole
#: exascale machine; a figure past it is in the wrong unit.
MAX_RATE = 1e18
#: The least clock a target file may give (Hz): a 1 MHz part is a microcontroller.
MIN_CLOCK_HZ = 1e6
#: The most: a terahertz, two hundred times any part's clock.
MAX_CLOCK_HZ = 1e12

#: The most a target file may give: past these no part exists, and the
#: predictions overflow (a latency of 1e300 s, an energy of Infinity).
MAX_ENERGY_J = 1e-3  # per operation or byte: a millijoule, a billion times a real one
MAX_POWER_W = 1e7


def _ceilings(spec: TargetSpec) -> list[tuple[str, float, float, str]]:
    """``(where in the file, value, ceiling, what the ceiling is)`` of every
    value a target file could make absurdly large."""
    day = "a day, as in a calibration file"
    out: list[tuple[str, float, float, str]] = [
        ("idle_power_w", spec.idle_power_w, MAX_POWER_W, "ten megawatts"),
        ("tdp_w", spec.tdp_w, MAX_POWER_W, "ten megawatts"),
        ("launch_overhead_s", spec.launch_overhead_s, MAX_LATENCY_S, day),
    ]
    for name in ("kernel_overhead_s", "fork_join_s", "page_walk_s"):
        value = getattr(spec, name)
        if value is not None:
            out.append((name, value, MAX_LATENCY_S, day))
    out += [
        (f"dispatch_overhead_s.{d}", v, MAX_LATENCY_S, day)
        for d, v in spec.dispatch_overhead_s.items()
    ]
    out += [
        (f"accumulate_overhead_s.{d}", v, MAX_LATENCY_S, day)
        for d, v in spec.accumulate_overhead_s.items()
    ]
    out += [
        (f"gemv_fork_join_s.{d}", v, MAX_LATENCY_S, day) for d, v in spec.gemv_fork_join_s.items()
    ]
    joule = "a millijoule"
    out += [
        (f"energy_per_op_j.{d}", v, MAX_ENERGY_J, joule) for d, v in spec.energy_per_op_j.items()
    ]
    for i, tier in enumerate(spec.tiers):
        named = f"(tier {tier.name!r})"
        energy, latency = tier.energy_per_byte_j, tier.access_latency_ns
        out.append((f"tiers[{i}].energy_per_byte_j {named}", energy, MAX_ENERGY_J, joule))
        out.append((f"tiers[{i}].access_latency_ns {named}", latency, MAX_LATENCY_S * 1e9, day))
    out.append(("clock_hz", spec.clock_hz, MAX_CLOCK_HZ, "a terahertz"))
    out += [
        (f"{name}.{d}", v, MAX_LATENCY_S, day)
        for name in TargetSpec.REFERENCE
        for d, v in getattr(spec, name).items()
    ]
    if spec.tlb_reach_bytes is not None:
        out.append(("tlb_reach_bytes", spec.tlb_reach_bytes, MAX_RATE, "an exabyte"))
    out += [
        (f"library_min_macs.{d}", v, MAX_RATE, "an exascale machine's second of work")
        for d, v in spec.library_min_macs.items()
    ]
    return out


def out_of_bounds(spec: TargetSpec) -> str | None:
    """The first of ``spec``'s values past what any part has, told as
    ``<where>: <value> is below/above ...``: a rate (its fractions applied)
    below :data:`MIN_RATE` or above :data:`MAX_RATE`, a value above its
    ceiling (:func:`_ceilings`), a clock below :data:`MIN_CLOCK_HZ`, a
    capacity below :data:`MIN_CAPACITY_BYTES`; None when every one stands.
    A target file is held to it, and so is a spec a calibration file has
    changed (each constant in its range, yet fractions multiply)."""
    slow = too_slow(spec)
    if slow is not None:
        return slow
    for at, rate, unit in effective_rates(spec):
        if rate > MAX_RATE:
            return (
                f"{at}: {rate:.3g} {unit} is above {MAX_RATE:.0e} (an exascale "
                "machine's whole: a rate is given per second, in ops or bytes)"
            )
    for at, value, most, what in _ceilings(spec):
        if value > most:
            return f"{at}: {value:.3g} is above {most:g} ({what})"
    if spec.clock_hz < MIN_CLOCK_HZ:
        return (
            f"clock_hz: {spec.clock_hz:.6g} Hz is below {MIN_CLOCK_HZ:.0e} "
            "(no part clocks that slowly: a clock is given in Hz)"
        )
    for i, tier in enumerate(spec.tiers):
        for name in ("capacity_bytes", "usable_capacity_bytes"):
            value = getattr(tier, name)
            if value is not None and value < MIN_CAPACITY_BYTES:
                return (
                    f"tiers[{i}].{name} (tier {tier.name!r}): {value:.6g} B is below "
                    f"{MIN_CAPACITY_BYTES} B (one cache line: a capacity is given in bytes)"
                )
        if tier.capacity_bytes is not None and tier.capacity_bytes != int(tier.capacity_bytes):
            return (
                f"tiers[{i}].capacity_bytes (tier {tier.name!r}): {tier.capacity_bytes!r} is "
                "not a whole number of bytes (a capacity in KiB or MiB?)"
            )
    return _wrong_unit(spec) or _past_the_tiers(spec)


#: A target's sizes in bytes: none is below a cache line (one of 0.5 or 1 is
#: a size given in KiB or MiB, or a count of tiles); the TLB's reach is held
#: to a page by the spec itself.
_SIZES = ("register_tile_bytes", "first_touch_min_bytes")


def _wrong_unit(spec: TargetSpec) -> str | None:
    """The first of ``spec``'s sizes below a cache line (:data:`_SIZES`)
    or counts that are not whole (those sizes, ``parallel_grain_ops``,
    ``library_min_macs``: operations and multiply-adds come whole; 0.5 is a
    count in thousands or millions), told as ``<where>: ...``; None when
    every one stands."""
    for name in _SIZES:
        value = getattr(spec, name)
        if value is not None and value < MIN_CAPACITY_BYTES:
            return (
                f"{name}: {value:.6g} B is below {MIN_CAPACITY_BYTES} B (one cache line: a "
                "size is given in bytes)"
            )
    counts = [(name, getattr(spec, name), "bytes") for name in _SIZES]
    counts += [("parallel_grain_ops", spec.parallel_grain_ops, "operations")]
    counts += [
        (f"library_min_macs.{d}", v, "multiply-adds") for d, v in spec.library_min_macs.items()
    ]
    for at, value, what in counts:
        if value is not None and value != int(value):
            return f"{at}: {value:.6g} is not a whole number ({what} come whole)"
    return None


def _past_the_tiers(spec: TargetSpec) -> str | None:
    """A register tile larger than the innermost tier that holds it, or a
    first-touch threshold above the outermost tier (no output is that
    large: fresh outputs would never cost their first touch), told as
    ``<where>: ...``; None when both stand or the spec has no tiers."""
    if not spec.tiers:
        return None
    inner, outer = spec.tiers[0], spec.tiers[-1]
    tile = spec.register_tile_bytes
    if tile is not None and tile > inner.capacity_bytes:
        return (
            f"register_tile_bytes: {tile:.6g} B is above the {inner.capacity_bytes:.6g} B of "
            f"tier {inner.name!r} (registers hold less than the cache behind them: "
            "a size is given in bytes)"
        )
    least = spec.first_touch_min_bytes
    if least is not None and least > outer.capacity_bytes:
        return (
            f"first_touch_min_bytes: {least:.6g} B is above the {outer.capacity_bytes:.6g} B "
            f"of tier {outer.name!r} (no output is that large, so no first touch "
            "would ever be paid: a size is given in bytes)"
        )
    return None


def too_slow(spec: TargetSpec) -> str | None:
    """The first of ``spec``'s :func:`effective_rates` below :data:`MIN_RATE`,
    told as ``<where>: <rate> is below ...``; None when every one stands."""
    for at, rate, unit in effective_rates(spec):
        if rate < MIN_RATE:
            return (
                f"{at}: {rate:.6g} {unit} is below {MIN_RATE:.0e} (no part runs that slowly, "
                "and a rate near 0 makes every prediction infinite)"
            )
    return None


def effective_rates(spec: TargetSpec) -> list[tuple[str, float, str]]:
    """Every rate a prediction divides by, as the spec gives it and with its
    fraction applied: ``(where in the file, value, unit)``."""
    out: list[tuple[str, float, str]] = []
    for dtype, peak in spec.peak_ops_per_s.items():
        out.append((f"peak_ops_per_s.{dtype}", peak, "ops/s"))
        fraction = spec.compute_fraction.get(dtype, 1.0)
        out.append((f"peak_ops_per_s.{dtype} x compute_fraction.{dtype}", peak * fraction, "ops/s"))
        for name in ("narrow_n_fraction", "transposed_narrow_n_fraction"):
            if dtype in getattr(spec, name):  # ... and a narrow kernel's share of it
                share = getattr(spec, name)[dtype]
                at = f"peak_ops_per_s.{dtype} x compute_fraction.{dtype} x {name}.{dtype}"
                out.append((at, peak * fraction * share, "ops/s"))
    for name in ("vector_ops_per_s", "pack_bps", "pack_a_bps", "vector_first_touch_bps"):
        unit = "ops/s" if name == "vector_ops_per_s" else "B/s"
        out += [(f"{name}.{d}", v, unit) for d, v in getattr(spec, name).items()]
    if spec.first_touch_bps is not None:
        out.append(("first_touch_bps", spec.first_touch_bps, "B/s"))
    for i, tier in enumerate(spec.tiers):
        at = f"tiers[{i}].peak_bandwidth_bps (tier {tier.name!r})"
        out.append((at, tier.peak_bandwidth_bps, "B/s"))
        out.append((f"{at} x achievable_fraction", tier.effective_bandwidth_bps, "B/s"))
        product, own = tier.effective_bandwidth_bps, f"{at} x achievable_fraction"
        if tier.product_fraction != 1.0:  # a matrix product's own share of the tier
            product, own = product * tier.product_fraction, f"{own} x product_fraction"
            out.append((own, product, "B/s"))
        out += [  # ... and its library's share of every tier
            (f"{own} x product_bandwidth_fraction.{d}", product * share, "B/s")
            for d, share in spec.product_bandwidth_fraction.items()
        ]
        out += [  # ... and what a product reading B in place streams the rest of B at
            (
                f"{at} x achievable_fraction x in_place_fraction.{d}",
                tier.effective_bandwidth_bps * share,
                "B/s",
            )
            for d, share in spec.in_place_fraction.items()
        ]
        out += [  # ... and what a GEMV streams its matrix at beyond the innermost tier
            (
                f"{at} x achievable_fraction x gemv_fraction.{d}",
                tier.effective_bandwidth_bps * share,
                "B/s",
            )
            for d, share in spec.gemv_fraction.items()
            if i > 0
        ]
    return out


#: The longest value a target file's fingerprint may give (a CPU's model name or
#: ISA flags fit in far less): the value is printed in tables and messages.
FINGERPRINT_MAX_CHARS = 200


def _fingerprint_key(name: str, at: str) -> None:
    """A fingerprint's key names what it identifies (``cpu_model``): a short
    line of text, printed in tables beside its value."""
    from graphsval_core.datamodel.errors import control_character

    if not name.strip():
        raise TargetFileError(f"{at}: key {ascii(name)} names nothing (give a short name)")
    if len(name) > FINGERPRINT_MAX_CHARS:
        raise TargetFileError(
            f"{at}: key {ascii(name)[:40]}... is {len(name)} characters; a fingerprint key "
            f"holds at most {FINGERPRINT_MAX_CHARS}"
        )
    bad = control_character(name)
    if bad is not None:
        raise TargetFileError(
            f"{at}: key {ascii(name)} holds a control character ({bad}): give one line of text"
        )


def _fingerprint_value(value: Any, at: str) -> None:
    """A fingerprint value is a line of text: what identifies the machine (its
    model, cores, ISA flags, microarchitecture), compared and printed as text."""
    from graphsval_core.files import schema

    if not isinstance(value, str):
        raise TargetFileError(f"{at}: expected a string, got {schema.kind(value)}")
    if len(value) > FINGERPRINT_MAX_CHARS:
        raise TargetFileError(
            f"{at}: {len(value)} characters; a fingerprint value holds at most "
            f"{FINGERPRINT_MAX_CHARS}"
        )
    if not value.isprintable():
        raise TargetFileError(f"{at}: holds a control character (a newline, a tab, ...)")
