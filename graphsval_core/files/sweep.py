"""Reading and writing sweep files (the V4 JSON schema, DESIGN.md section 6).

A sweep is ``{"op": ..., "purpose": ..., "seed": ..., "shapes": [{"shape": [...],
"dtype": ..., "regime_per_hw": {target: regime}}, ...]}``; ``schema_version`` is
optional on reading (V4 files have none) and always written. A file whose
``op`` is ``"mixed"`` (e.g. the shapes of a whole model, ``sweep from-config``)
names the op of every entry in the entry. An entry of ``sweep from-config``
also carries ``count`` (calls per pass) and ``used_in`` (its call sites, each
with its own count; they sum to ``count``). Reading is strict: an unknown key,
a value of the wrong type, a shape that is not positive integers of at most
``MAX_DIM``, an unknown dtype or label is an error naming the file and the
entry; an entry given twice (same op, shape and dtype) is an error unless the
two are identical (read once, with a warning).

Files are written one entry per line with sorted label keys, so adding a
target's labels changes no other target's label and diffs stay readable.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from attrs import field, frozen

from graphsval_core.datamodel.dtypes import KNOWN_DTYPES
from graphsval_core.datamodel.errors import UserInputError, control_character, warn_input
from graphsval_core.datamodel.op import dims_problem
from graphsval_core.datamodel.regimes import LABELS
from graphsval_core.files import schema
from graphsval_core.files.inputs import read_input
from graphsval_core.files.jsonfile import parse_json


class SweepFileError(UserInputError):
    """A sweep file cannot be read; the message names the file and the entry."""


SCHEMA_VERSION = 1
MIXED = "mixed"
#: The most calls of one shape per pass a sweep may count (a trillion).
MAX_CALLS = 10**12
_OP_NAME = re.compile(r"[a-z][a-z0-9_]*")


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


#: The keys a sweep file may hold at the top level, and in an entry.
TOP_KEYS = ("schema_version", "op", "purpose", "seed", "generator", "source", "comment", "shapes")
ENTRY_KEYS = ("op", "shape", "dtype", "regime_per_hw", "coverage", "count", "used_in")
SITE_KEYS = ("model", "phase", "site", "count", "batch")
#: The keys of a sweep's ``source`` (what ``sweep from-config`` swept: the
#: config file, the model, the tokens of each phase and the sequences a pass).
SOURCE_KEYS = ("config", "model", "tokens", "batch")
#: The most sequences a pass and tokens a phase a source may name
#: (``sweep from-config --batch`` and ``--tokens`` take no more).
MAX_SOURCE_BATCH, MAX_SOURCE_TOKENS = 2**20, 2**24
PURPOSES = ("calibration", "validation")
_ERR = SweepFileError


def load_sweep(
    path: str | Path, ndims: int | None = None, text: str | bytes | None = None
) -> Sweep:
    """Read a sweep JSON file; ``ndims`` (if given) is the op's dimension count.

    The file is checked whole (see the module doc): known keys only, typed
    values, shapes of positive integers of at most ``MAX_DIM``, known dtypes
    and labels, call counts that agree with their call sites. An entry given
    twice (the same op, shape and dtype) is an error unless the two are the
    same in every key: then it is read once, with a warning."""
    path = Path(path)
    if text is None:
        data = read_input(path, SweepFileError, "a sweep file")
        parsed = parse_json(data, str(path), SweepFileError)
    else:
        parsed = parse_json(text, str(path), SweepFileError)
    return sweep_from(parsed, path, ndims)


def sweep_from(data: Any, path: str | Path, ndims: int | None = None) -> Sweep:
    """The sweep a parsed file ``path`` holds (see :func:`load_sweep`)."""
    where = str(path)
    top = schema.obj(data, where, _ERR)
    schema.keys(top, where, _ERR, required=("op", "shapes"), optional=TOP_KEYS)
    schema.schema_version(top, where, _ERR, SCHEMA_VERSION)
    op = schema.string(top["op"], f"{where}: op", _ERR)
    if op != MIXED and not _OP_NAME.fullmatch(op):
        raise SweepFileError(f"{where}: op {op!r} is not an op name (nor {MIXED!r})")
    purpose = top.get("purpose")
    if purpose is not None and purpose not in PURPOSES:
        raise SweepFileError(
            f"{where}: purpose {purpose!r} is not one of {', '.join(PURPOSES)} (or null)"
        )
    if "seed" in top:
        schema.integer(top["seed"], f"{where}: seed", _ERR, 0, 2**64 - 1)
    if "source" in top:
        _source(top["source"], f"{where}: source")
    if not isinstance(top["shapes"], list):
        raise SweepFileError(f"{where}: 'shapes' must be a list, got {schema.kind(top['shapes'])}")
    entries: list[SweepEntry] = []
    seen: dict[tuple[str, str], int] = {}
    sites: dict[tuple[Any, ...], int] = {}  # each named call site, and its entry
    for i, raw in enumerate(top["shapes"]):
        entry = _entry(where, i, raw, ndims, op)
        ident = (entry.op, entry.key)
        if ident in seen:
            first = seen[ident]
            if raw != top["shapes"][first]:
                raise SweepFileError(
                    f"{where}: shapes[{i}]: {entry.op} {entry.key} is also shapes[{first}], "
                    "with other values; keep one"
                )
            warn_input(
                f"{where}: shapes[{i}]: {entry.op} {entry.key} repeats shapes[{first}] "
                "exactly; read once"
            )
            continue
        seen[ident] = i
        for site in map(call_site, entry.extra.get("used_in", ())):
            if not site[2]:
                continue  # no site named (a hand-written sweep's phase alone): no identity
            first = sites.setdefault(site, i)
            if first != i:  # one call site runs one shape: a rollup would count it twice
                raise SweepFileError(
                    f"{where}: shapes[{i}]: call site {site[:3]} is shapes[{first}]'s "
                    "too; a call site runs one shape: give it once"
                )
        entries.append(entry)
    meta = {k: v for k, v in top.items() if k not in ("op", "purpose", "shapes")}
    return Sweep(where, op, purpose, tuple(entries), meta)


def _entry(where: str, i: int, raw: Any, ndims: int | None, op: str) -> SweepEntry:
    at = f"{where}: shapes[{i}]"
    entry = schema.obj(raw, at, _ERR)
    required = ("shape", "dtype", "op") if op == MIXED else ("shape", "dtype")
    if op == MIXED and "op" not in entry:
        raise SweepFileError(f"{at}: a mixed sweep names the op of every entry")
    schema.keys(entry, at, _ERR, required=required, optional=ENTRY_KEYS)
    dims = entry["shape"]
    if not isinstance(dims, list):
        raise SweepFileError(
            f"{at}: 'shape' must be a non-empty list of integers, got {schema.kind(dims)}"
        )
    problem = dims_problem(dims)
    if problem:
        raise SweepFileError(f"{at}: 'shape' {problem}")
    if ndims is not None and len(dims) != ndims:
        raise SweepFileError(f"{at}: 'shape' {dims!r} has {len(dims)} dims, expected {ndims}")
    dtype = entry["dtype"]
    if not isinstance(dtype, str) or dtype not in KNOWN_DTYPES:
        raise SweepFileError(
            f"{at}: unknown dtype {dtype!r}; known dtypes: {', '.join(KNOWN_DTYPES)}"
        )
    regimes = entry.get("regime_per_hw", {})
    if not isinstance(regimes, dict):
        raise SweepFileError(f"{at}: 'regime_per_hw' must be an object")
    for hw, regime in regimes.items():
        if not hw.strip() or not isinstance(regime, str) or regime not in LABELS:
            raise SweepFileError(
                f"{at}: regime_per_hw.{hw}: {regime!r} is not a label ({', '.join(LABELS)})"
            )
    entry_op = op
    if "op" in entry:
        entry_op = schema.string(entry["op"], f"{at}: op", _ERR)
        if not _OP_NAME.fullmatch(entry_op):
            raise SweepFileError(f"{at}: op {entry_op!r} is not an op name")
        if op != MIXED and entry_op != op:
            raise SweepFileError(f"{at}: op {entry_op!r} in a sweep of op {op!r}")
    if "coverage" in entry:
        schema.string(entry["coverage"], f"{at}: coverage", _ERR)
    _counts(entry, at)
    extra = {k: v for k, v in entry.items() if k not in ("shape", "dtype", "regime_per_hw", "op")}
    return SweepEntry(tuple(dims), dtype, dict(regimes), extra, entry_op)


def _source(raw: Any, at: str) -> None:
    """A sweep's ``source`` (:data:`SOURCE_KEYS`): a rollup prices its
    ``batch`` sequences a pass (a batch of 0, -3 or "x" printed "batch 0" or
    negative tokens per second, or failed inside)."""
    source = schema.obj(raw, at, _ERR)
    schema.keys(source, at, _ERR, optional=SOURCE_KEYS)
    for key in ("config", "model"):
        if key in source:
            schema.string(source[key], f"{at}.{key}", _ERR)
    if "batch" in source:
        schema.integer(source["batch"], f"{at}.batch", _ERR, 1, MAX_SOURCE_BATCH)
    if "tokens" in source:
        tokens = source["tokens"]
        if not isinstance(tokens, list) or not tokens:
            raise SweepFileError(f"{at}.tokens: expected a non-empty list of token counts")
        for k, t in enumerate(tokens):
            schema.integer(t, f"{at}.tokens[{k}]", _ERR, 1, MAX_SOURCE_TOKENS)


def call_site(site: dict[str, Any]) -> tuple[Any, ...]:
    """What names one call site: its model, phase, site and batch, text
    compared without the spaces around it ("q_proj " is q_proj)."""
    return tuple(
        v.strip() if isinstance(v, str) else v
        for v in (site.get(key) for key in ("model", "phase", "site", "batch"))
    )


def _counts(entry: dict[str, Any], at: str) -> None:
    """``count`` (calls per pass) and ``used_in`` (the call sites, each with
    its count, and its ``batch`` when one call does several products) are
    positive integers that agree."""
    count = None
    if "count" in entry:
        count = schema.integer(entry["count"], f"{at}: count", _ERR, 1, MAX_CALLS)
    if "used_in" not in entry:
        return
    sites = entry["used_in"]
    if not isinstance(sites, list) or not sites:
        raise SweepFileError(f"{at}: 'used_in' must be a non-empty list of call sites")
    total = 0
    seen: dict[tuple[Any, ...], int] = {}
    for j, site in enumerate(sites):
        here = f"{at}: used_in[{j}]"
        schema.obj(site, here, _ERR)
        schema.keys(site, here, _ERR, required=("count",), optional=SITE_KEYS)
        for key in ("model", "phase", "site"):
            if key in site:
                text = schema.string(site[key], f"{here}.{key}", _ERR)
                bad = control_character(text)
                if bad is not None:  # printed in a rollup's table: it would drive the terminal
                    raise SweepFileError(
                        f"{here}.{key}: holds a control character ({bad}): give one line of text"
                    )
        where = call_site(site)
        if where in seen:  # counted twice, a rollup would double its time
            raise SweepFileError(
                f"{here} is the call site of used_in[{seen[where]}] again (the same model, "
                "phase, site and batch): give it once, with its calls counted there"
            )
        seen[where] = j
        total += schema.integer(site["count"], f"{here}.count", _ERR, 1, MAX_CALLS)
        if "batch" in site:  # the products one call does (the heads of a batched attention)
            schema.integer(site["batch"], f"{here}.batch", _ERR, 1, MAX_CALLS)
    if count is not None and total != count:
        raise SweepFileError(
            f"{at}: count {count} disagrees with its call sites, whose counts sum to {total}"
        )


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
    from graphsval_core.files.outputs import write_text_atomic

    write_text_atomic(path, dump_sweep(sweep), SweepFileError)
