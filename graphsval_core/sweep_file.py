"""Reading sweep files (the V4 JSON schema, DESIGN.md section 6).

A sweep is ``{"op": ..., "purpose": ..., "seed": ..., "shapes": [{"shape": [...],
"dtype": ..., "regime_per_hw": {target: regime}}, ...]}``; ``schema_version`` is
optional (V4 files have none). Every error names the file and the entry.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from attrs import field, frozen

from graphsval_core.dtypes import KNOWN_DTYPES


class SweepFileError(ValueError):
    """A sweep file cannot be read; the message names the file and the entry."""


@frozen
class SweepEntry:
    shape: tuple[int, ...]
    dtype: str
    regime_per_hw: dict[str, str] = field(factory=dict)
    extra: dict[str, Any] = field(factory=dict)


@frozen
class Sweep:
    path: str
    op: str
    purpose: str | None
    entries: tuple[SweepEntry, ...]
    meta: dict[str, Any] = field(factory=dict)


def load_sweep(path: str | Path, ndims: int | None = None) -> Sweep:
    """Read a sweep JSON file; ``ndims`` (if given) is the op's dimension count."""
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except OSError as exc:
        raise SweepFileError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except json.JSONDecodeError as exc:
        raise SweepFileError(f"{path}: not valid JSON: {exc.msg} (line {exc.lineno})") from None
    if not isinstance(data, dict):
        raise SweepFileError(f"{path}: expected a JSON object at the top level")
    for key in ("op", "shapes"):
        if key not in data:
            raise SweepFileError(f"{path}: missing key {key!r}")
    if not isinstance(data["shapes"], list):
        raise SweepFileError(f"{path}: 'shapes' must be a list")
    entries = [_entry(path, i, raw, ndims) for i, raw in enumerate(data["shapes"])]
    meta = {k: v for k, v in data.items() if k not in ("op", "purpose", "shapes")}
    return Sweep(str(path), str(data["op"]), data.get("purpose"), tuple(entries), meta)


def _entry(path: Path, i: int, raw: Any, ndims: int | None) -> SweepEntry:
    where = f"{path}: shapes[{i}]"
    if not isinstance(raw, dict):
        raise SweepFileError(f"{where}: expected an object")
    for key in ("shape", "dtype"):
        if key not in raw:
            raise SweepFileError(f"{where}: missing key {key!r}")
    dims = raw["shape"]
    if not isinstance(dims, Sequence) or isinstance(dims, str) or not dims:
        raise SweepFileError(f"{where}: 'shape' must be a non-empty list of integers")
    if not all(isinstance(d, int) and not isinstance(d, bool) and d >= 1 for d in dims):
        raise SweepFileError(f"{where}: 'shape' {dims!r} must hold positive integers")
    if ndims is not None and len(dims) != ndims:
        raise SweepFileError(f"{where}: 'shape' {dims!r} has {len(dims)} dims, expected {ndims}")
    if raw["dtype"] not in KNOWN_DTYPES:
        raise SweepFileError(f"{where}: unknown dtype {raw['dtype']!r}")
    regimes = raw.get("regime_per_hw", {})
    if not isinstance(regimes, dict):
        raise SweepFileError(f"{where}: 'regime_per_hw' must be an object")
    extra = {k: v for k, v in raw.items() if k not in ("shape", "dtype", "regime_per_hw")}
    return SweepEntry(tuple(int(d) for d in dims), raw["dtype"], dict(regimes), extra)
