"""Reading and writing sweep files (the V4 JSON schema, DESIGN.md section 6).

A sweep is ``{"op": ..., "purpose": ..., "seed": ..., "shapes": [{"shape": [...],
"dtype": ..., "regime_per_hw": {target: regime}}, ...]}``; ``schema_version`` is
optional on reading (V4 files have none) and always written. A file whose
``op`` is ``"mixed"`` (e.g. the shapes of a whole model, ``sweep from-config``)
names the op of every entry in the entry. Every error names the file and the
entry; duplicate (op, shape, dtype) entries are an error.

Files are written one entry per line with sorted label keys, so adding a
target's labels changes no other target's label and diffs stay readable.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from attrs import field, frozen

from graphsval_core.datamodel.dtypes import KNOWN_DTYPES
from graphsval_core.datamodel.errors import UserInputError


class SweepFileError(UserInputError):
    """A sweep file cannot be read; the message names the file and the entry."""


SCHEMA_VERSION = 1
MIXED = "mixed"


@frozen
class SweepEntry:
    shape: tuple[int, ...]
    dtype: str
    regime_per_hw: dict[str, str] = field(factory=dict)
    extra: dict[str, Any] = field(factory=dict)
    op: str = ""

    @property
    def shape_string(self) -> str:
        return "x".join(str(d) for d in self.shape)

    @property
    def key(self) -> str:
        """``"<shape> <dtype>"``: the entry's identity within a single-op sweep."""
        return f"{self.shape_string} {self.dtype}"


@frozen
class Sweep:
    path: str
    op: str
    purpose: str | None
    entries: tuple[SweepEntry, ...]
    meta: dict[str, Any] = field(factory=dict)


def load_sweep(path: str | Path, ndims: int | None = None, text: str | None = None) -> Sweep:
    """Read a sweep JSON file; ``ndims`` (if given) is the op's dimension count."""
    path = Path(path)
    try:
        data = json.loads(path.read_text() if text is None else text)
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
    op = str(data["op"])
    entries = [_entry(path, i, raw, ndims, op) for i, raw in enumerate(data["shapes"])]
    seen: dict[tuple[str, str], int] = {}
    for i, entry in enumerate(entries):
        ident = (entry.op, entry.key)
        if ident in seen:
            raise SweepFileError(
                f"{path}: shapes[{i}]: duplicate of shapes[{seen[ident]}] ({entry.op} {entry.key})"
            )
        seen[ident] = i
    meta = {k: v for k, v in data.items() if k not in ("op", "purpose", "shapes")}
    return Sweep(str(path), op, data.get("purpose"), tuple(entries), meta)


def _entry(path: Path, i: int, raw: Any, ndims: int | None, op: str) -> SweepEntry:
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
    for hw, regime in regimes.items():
        if not isinstance(hw, str) or not isinstance(regime, str):
            raise SweepFileError(f"{where}: 'regime_per_hw' must map target keys to regime names")
    entry_op = raw.get("op", op)
    if op == MIXED and "op" not in raw:
        raise SweepFileError(f"{where}: a mixed sweep names the op of every entry")
    extra = {k: v for k, v in raw.items() if k not in ("shape", "dtype", "regime_per_hw", "op")}
    return SweepEntry(tuple(int(d) for d in dims), raw["dtype"], dict(regimes), extra, entry_op)


def entry_json(entry: SweepEntry, mixed: bool = False) -> str:
    """One entry as a single JSON line, label keys sorted."""
    data: dict[str, Any] = {}
    if mixed:
        data["op"] = entry.op
    data["shape"] = list(entry.shape)
    data["dtype"] = entry.dtype
    data["regime_per_hw"] = dict(sorted(entry.regime_per_hw.items()))
    data.update(entry.extra)
    return json.dumps(data)


def dump_sweep(sweep: Sweep) -> str:
    """The text of a sweep file: header keys, then one entry per line."""
    head: dict[str, Any] = {"schema_version": SCHEMA_VERSION, "op": sweep.op}
    if sweep.purpose is not None:
        head["purpose"] = sweep.purpose
    head.update({k: v for k, v in sweep.meta.items() if k != "schema_version"})
    lines = ["{"]
    for key, value in head.items():
        lines.append(f"  {json.dumps(key)}: {json.dumps(value)},")
    lines.append('  "shapes": [')
    mixed = sweep.op == MIXED
    body = [f"    {entry_json(e, mixed)}" for e in sweep.entries]
    lines.append(",\n".join(body))
    lines.append("  ]")
    lines.append("}")
    return "\n".join(lines) + "\n"


def write_sweep(sweep: Sweep, path: str | Path) -> None:
    """Write ``sweep`` to ``path`` atomically (temp file + rename)."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(dump_sweep(sweep))
    tmp.replace(path)
