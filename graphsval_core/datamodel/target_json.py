"""Target specs to and from JSON, provenance included (named snapshot targets).

A detected target (``host_cpu``) changes from machine to machine; a capture
freezes the spec it measured against into a ``<key>.target.json`` file, and the
plugin registers it as a named target, so validating it gives the same answer
on any machine.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from graphsval_core.datamodel.provenance import Provenance, Sourced
from graphsval_core.datamodel.target import MemoryTier, TargetSpec

SCHEMA_VERSION = 1
_TIER_FIELDS = (
    "capacity_bytes",
    "peak_bandwidth_bps",
    "access_latency_ns",
    "achievable_fraction",
    "energy_per_byte_j",
    "usable_capacity_bytes",
)
_SCALARS = (*TargetSpec.PROVENANCED, *TargetSpec.OPTIONAL_NUMBERS)
#: What the cross-target checks compare a part with (written only when set).
_COMPARISON = ("power_mode_class", "family_rank", "power_class")
_MAPS = (
    "peak_ops_per_s",
    "energy_per_op_j",
    "compute_fraction",
    "dispatch_overhead_s",
    *TargetSpec.PACKING,
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
                **{f: getattr(t, f) for f in _TIER_FIELDS},
                "provenance": {k: _prov(v) for k, v in t.provenance.items()},
            }
        )
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
        "tiers": tiers,
        "provenance": {k: _prov(v) for k, v in spec.provenance.items()},
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
        tiers=tiers,
    )


def write_spec(spec: TargetSpec, path: str | Path) -> None:
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(spec_to_json(spec), indent=2, sort_keys=False) + "\n")
    tmp.replace(path)


def read_spec(path: str | Path, text: str | None = None) -> TargetSpec:
    data = json.loads(Path(path).read_text() if text is None else text)
    return spec_from_json(data)
