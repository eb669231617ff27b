"""The fuzz corpus: every input format, valid files and mutated ones, drawn
from one seeded generator so that every run tries the same few hundred cases.

A :class:`Case` is the bytes of one file and what reading it must do:
``ok`` (read, perhaps with a warning), ``bad`` (refused: a
:class:`~graphsval_core.datamodel.errors.UserInputError` naming the file, exit
code 2 on the command line) or ``any`` (a random mutation: either, but never
another exception). The labelled mutations carry the promises (an invalid
file never passes); the random ones (bytes flipped, cut, spliced; JSON values
swapped for hostile ones) look for crashes.
"""

from __future__ import annotations

import copy
import json
import os
import random
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from attrs import frozen

REPO = Path(__file__).resolve().parents[2]
CPU = REPO / "plugins" / "graphsval_cpu" / "graphsval_cpu"
HOST = "host_intel_xeon_2c_1t"
#: The seed of every draw: the corpus is the same on every run.
SEED = 18
#: Random mutations per format (on top of the labelled ones).
RANDOM_PER_FORMAT = 24

#: Hostile JSON values a random mutation puts in place of one value.
HOSTILE_JSON = [
    None, True, -1, 0, 1.5, 2**64, -(2**63), "", "x", "-1", [], {}, [0], {"x": 1}, 1e308,
]  # fmt: skip
#: Hostile text an option or a CSV field takes.
HOSTILE_TEXT = [
    "", " ", "-1", "0", "nan", "inf", "-inf", "1e309", "9" * 25, "x", "../..", "é", "\u202e",
    "a" * 300, "64x64x64", "1x1", "0x64x64", "64X64X64", "%", "-", "1,2", ",", "2,-3", "\ufeff1",
    "=HYPERLINK(\"http://x\")", "<b>x</b>", "1e-300", "4096", "²",
]  # fmt: skip
#: Bytes a random mutation inserts.
HOSTILE_BYTES = [b'"', b",", b"\n", b"\r", b"\x00", b"\xff", b"\xc3", b"x", b"-", b"9", b"{", b"]"]


@frozen
class Case:
    """One file of a format and what reading it must do (``ok``, ``bad``, ``any``)."""

    fmt: str
    name: str
    data: bytes
    expect: str

    @property
    def id(self) -> str:
        return f"{self.fmt}:{self.name}"


# --- the valid bases ---------------------------------------------------------------------


def baseline_base() -> bytes:
    """The first 12 rows of the host's shipped vector_add validation capture (every column)."""
    lines = (CPU / "baselines" / f"{HOST}_vector_add.validation.csv").read_text().splitlines()
    return ("\n".join(lines[:13]) + "\n").encode()


V4_HEADER = "hardware,op,shape,dtype,latency_s,energy_j,trial_count,notes"


def v4_base() -> bytes:
    rows = [V4_HEADER]
    for n in (32, 64, 128, 256):
        rows.append(f"{HOST},matmul,{n}x{n}x{n},fp32,{n**3 * 2e-10:.6e},,10,note {n}")
    return ("\n".join(rows) + "\n").encode()


def sweep_base() -> dict[str, Any]:
    data = json.loads((REPO / "graphsval_core" / "sweeps" / "matmul_validation.json").read_text())
    data["shapes"] = data["shapes"][:6]
    return data


def mixed_base() -> dict[str, Any]:
    site = {"model": "m", "phase": "prefill T=8", "site": "q_proj", "count": 2}
    return {
        "schema_version": 1,
        "op": "mixed",
        "source": {"config": "cfg.json", "model": "m", "tokens": [8], "batch": 1},
        "shapes": [
            {"op": "linear", "shape": [8, 64, 64], "dtype": "fp32", "count": 2, "used_in": [site]},
            {"op": "matmul", "shape": [8, 16, 8], "dtype": "fp32", "count": 4},
        ],
    }


def tolerances_base() -> dict[str, Any]:
    return json.loads((REPO / "graphsval_core" / "files" / "tolerances.json").read_text())


def config_base() -> dict[str, Any]:
    return {
        "model_type": "toy",
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "vocab_size": 100,
        "num_hidden_layers": 2,
        "torch_dtype": "bfloat16",
    }


def calibration_base() -> dict[str, Any]:
    return json.loads((CPU / "calibration" / f"{HOST}.calibration.json").read_text())


def target_base() -> dict[str, Any]:
    return json.loads((CPU / "targets" / f"{HOST}.target.json").read_text())


def overlay_base() -> dict[str, Any]:
    return {
        "schema_version": 1,
        "kind": "graphsval-sweep-labels",
        "targets": ["acme_npu1"],
        "labels": {"matmul_validation.json": {"32x32x32 fp32": {"acme_npu1": "l1_bound"}}},
    }


def floors_base() -> dict[str, Any]:
    return json.loads((CPU / "floors.json").read_text())


def shapes_base() -> bytes:
    return b"64x64x64\n# a comment\n\n1x2048x2048\n"


# --- mutations --------------------------------------------------------------------------


def _js(data: Any) -> bytes:
    return json.dumps(data).encode()


def _set(data: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    out = copy.deepcopy(data)
    node = out
    for key in path[:-1]:
        node = node[key]
    if value is _DELETE:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return out


_DELETE = object()


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every path to a value of a JSON tree (containers and leaves)."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield (*prefix, key)
            yield from _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield (*prefix, i)
            yield from _paths(value, (*prefix, i))


def random_json(fmt: str, base: dict[str, Any], rng: random.Random, n: int) -> list[Case]:
    """``n`` random mutations of a JSON file: a value swapped for a hostile
    one, a key dropped or added, or the text cut, spliced or its bytes flipped."""
    paths = list(_paths(base))
    out = []
    for i in range(n):
        kind = rng.choice(["swap", "swap", "drop", "add", "bytes"])
        if kind == "bytes":
            data = random_bytes(_js(base), rng)
        elif kind == "add":
            parent = rng.choice(paths)[:-1]
            where = parent if _is_dict(base, parent) else ()
            data = _js(_set(base, (*where, "zz_unknown"), 1))
        else:
            path = rng.choice(paths)
            value = _DELETE if kind == "drop" else rng.choice(HOSTILE_JSON)
            data = _js(_set(base, path, value))
        out.append(Case(fmt, f"random{i}-{kind}", data, "any"))
    return out


def _is_dict(base: Any, path: tuple[Any, ...]) -> bool:
    node = base
    for key in path:
        node = node[key]
    return isinstance(node, dict)


def random_bytes(data: bytes, rng: random.Random) -> bytes:
    """``data`` cut, spliced, a span dropped or repeated, or bytes put in."""
    kind = rng.choice(["cut", "insert", "flip", "drop", "repeat"])
    at = rng.randrange(len(data) + 1)
    if kind == "cut":
        return data[:at]
    if kind == "insert":
        return data[:at] + rng.choice(HOSTILE_BYTES) * rng.choice([1, 1, 2, 7]) + data[at:]
    if kind == "flip":
        at = min(at, len(data) - 1)
        return data[:at] + bytes([data[at] ^ (1 << rng.randrange(8))]) + data[at + 1 :]
    end = min(len(data), at + rng.randrange(1, 40))
    return data[:at] + data[end:] if kind == "drop" else data[:end] + data[at:end] + data[end:]


def _lines(data: bytes) -> list[str]:
    return data.decode().splitlines()


def _csv(lines: list[str]) -> bytes:
    return ("\n".join(lines) + "\n").encode()


def _field(line: str, index: int, value: str) -> str:
    fields = line.split(",")
    fields[index] = value
    return ",".join(fields)


def baseline_cases(rng: random.Random) -> list[Case]:
    out = []
    for label, base in (("wide", baseline_base()), ("v4", v4_base())):
        lines = _lines(base)
        row = lines[2]
        labelled = {
            "as-is": (base, "ok"),
            "crlf": (base.replace(b"\n", b"\r\n"), "ok"),
            "bom": (b"\xef\xbb\xbf" + base, "ok"),
            "blank-lines": (base + b"\n\n", "ok"),
            "exact-duplicate": (_csv([*lines, row]), "ok"),
            "upper-x": (
                _csv([*lines[:2], _field(row, 2, row.split(",")[2].replace("x", "X")), *lines[3:]]),
                "ok",
            ),
            "other-latency": (_csv([*lines[:2], _field(row, 4, "2.5e-06"), *lines[3:]]), "ok"),
            "empty": (b"", "bad"),
            "header-only": (_csv(lines[:1]), "bad"),
            "not-utf8": (base.replace(b"fp32", b"fp\xff2", 1) + b"\xff", "bad"),
            "duplicate-column": (
                _csv([lines[0] + ",latency_s", *[r + ",1" for r in lines[1:]]]),
                "bad",
            ),
            "wrong-header": (_csv([lines[0].replace("latency_s", "latency"), *lines[1:]]), "bad"),
            "missing-field": (_csv([*lines[:2], row.rsplit(",", 1)[0], *lines[3:]]), "bad"),
            "extra-field": (_csv([*lines[:2], row + ",x", *lines[3:]]), "bad"),
            "unterminated-quote": (_csv([*lines[:2], _field(row, 7, '"open'), *lines[3:]]), "bad"),
            "quote-spans-lines": (
                _csv([*lines[:2], _field(row, 7, '"open'), _field(lines[3], 7, 'x"'), *lines[4:]]),
                "bad",
            ),
            "conflicting-duplicate": (_csv([*lines, _field(row, 4, "1.0")]), "bad"),
            "unknown-dtype": (_csv([*lines[:2], _field(row, 3, "fp33"), *lines[3:]]), "bad"),
            "empty-hardware": (_csv([*lines[:2], _field(row, 0, ""), *lines[3:]]), "bad"),
        }
        for name, value in (
            ("shape-zero", "0"),
            ("shape-huge", "9223372036854775808"),
            ("shape-text", "axb"),
            ("shape-negative", "-4"),
            ("shape-superscript", "²"),
            ("shape-empty-dim", "8xx8"),
        ):
            dims = row.split(",")[2].split("x")
            dims[0] = value
            labelled[name] = (_csv([*lines[:2], _field(row, 2, "x".join(dims)), *lines[3:]]), "bad")
        for name, column, value in (
            ("latency-nan", 4, "nan"),
            ("latency-inf", 4, "inf"),
            ("latency-negative", 4, "-1e-6"),
            ("latency-zero", 4, "0"),
            ("latency-huge", 4, "1e300"),
            ("latency-text", 4, "fast"),
            ("energy-nan", 5, "NaN"),
            ("energy-negative", 5, "-1"),
            ("trials-negative", 6, "-3"),
            ("trials-text", 6, "many"),
            ("trials-huge", 6, "9" * 30),
            ("trials-float", 6, "2.5"),
            ("latency-empty-with-trials", 4, ""),  # trials counted, no latency: never captured
            ("trials-empty", 6, ""),  # a latency with no count of trials: never captured
            ("notes-escape", 7, "x\x1b]0;title\x07\x1b[2Jy"),  # would drive the terminal
            ("notes-tab", 7, "a\tb"),
            ("notes-override", 7, "a\u202eb"),  # would show the rest of its line reversed
        ):
            labelled[name] = (_csv([*lines[:2], _field(row, column, value), *lines[3:]]), "bad")
        for name, (data, expect) in labelled.items():
            out.append(Case("baseline", f"{label}-{name}", data, expect))
        out += [
            Case("baseline", f"{label}-random{i}", random_bytes(base, rng), "any")
            for i in range(RANDOM_PER_FORMAT // 2)
        ]
        for i in range(RANDOM_PER_FORMAT // 4):  # a hostile value in one field of one row
            at = rng.randrange(1, len(lines))
            value = rng.choice(HOSTILE_TEXT).replace(",", ";")
            mutated = _csv(
                [*lines[:at], _field(lines[at], rng.randrange(8), value), *lines[at + 1 :]]
            )
            out.append(Case("baseline", f"{label}-field{i}", mutated, "any"))
    return out


def json_cases(
    fmt: str,
    base: dict[str, Any],
    labelled: dict[str, tuple[bytes | dict[str, Any], str]],
    rng: random.Random,
) -> list[Case]:
    """The cases of a JSON format: the base, the shared JSON faults, the
    format's own labelled mutations, and random ones."""
    text = json.dumps(base)
    shared: dict[str, tuple[bytes | dict[str, Any], str]] = {
        "as-is": (base, "ok"),
        "bom": (b"\xef\xbb\xbf" + text.encode(), "ok"),
        "empty": (b"", "bad"),
        "not-json": (text[: len(text) // 2].encode(), "bad"),
        "not-an-object": (b"[1, 2, 3]", "bad"),
        "not-utf8": (text.encode()[:-1] + b'\xff"}', "bad"),
        "latin1": (text.replace("{", '{"\xe9": 1, ', 1).encode("latin-1"), "bad"),
        "deep": (b"[" * 100_000 + b"]" * 100_000, "bad"),
        "digits": (text.replace("{", '{"zz": ' + "9" * 5000 + ", ", 1).encode(), "bad"),
        "unknown-key": ({**base, "zz_typo": 1}, "bad"),
        "nan": (text.replace("{", '{"zz": NaN, ', 1).encode(), "bad"),
        "infinity": (text.replace("{", '{"zz": Infinity, ', 1).encode(), "bad"),
        "duplicate-key-conflict": (text.replace("{", '{"zz": 1, "zz": 2, ', 1).encode(), "bad"),
    }
    cases = []
    for name, (data, expect) in {**shared, **labelled}.items():
        raw = data if isinstance(data, bytes) else _js(data)
        cases.append(Case(fmt, name, raw, expect))
    return cases + random_json(fmt, base, rng, RANDOM_PER_FORMAT)


def sweep_cases(rng: random.Random) -> list[Case]:
    base, mixed = sweep_base(), mixed_base()
    entry = base["shapes"][0]

    def shape(value: Any) -> dict[str, Any]:
        return _set(base, ("shapes", 0, "shape"), value)

    labelled: dict[str, tuple[bytes | dict[str, Any], str]] = {
        "mixed": (mixed, "ok"),
        "no-labels": (_set(base, ("shapes", 0, "regime_per_hw"), {}), "ok"),
        "exact-duplicate": (_set(base, ("shapes",), [*base["shapes"], entry]), "ok"),
        "duplicate-key-same": (
            json.dumps(base).replace('"op":', '"op": "matmul", "op":', 1).encode(),
            "ok",
        ),
        "conflicting-duplicate": (
            _set(
                base,
                ("shapes",),
                [*base["shapes"], {**entry, "regime_per_hw": {HOST: "ambiguous"}}],
            ),
            "bad",
        ),
        "missing-op": (_set(base, ("op",), _DELETE), "bad"),
        "op-not-a-name": (_set(base, ("op",), "Mat Mul"), "bad"),
        "shapes-not-a-list": (_set(base, ("shapes",), {}), "bad"),
        "shape-zero": (shape([0, 64, 64]), "bad"),
        "shape-huge": (shape([2**63, 64, 64]), "bad"),
        "shape-float": (shape([1.5, 64, 64]), "bad"),
        "shape-string": (shape("64x64x64"), "bad"),
        "shape-empty": (shape([]), "bad"),
        "shape-bool": (shape([True, 64, 64]), "bad"),
        "dtype-unknown": (_set(base, ("shapes", 0, "dtype"), "fp33"), "bad"),
        "label-unknown": (_set(base, ("shapes", 0, "regime_per_hw"), {HOST: "l9_bound"}), "bad"),
        "entry-unknown-key": (_set(base, ("shapes", 0, "shapee"), [1]), "bad"),
        "entry-op-conflict": (_set(base, ("shapes", 0, "op"), "linear"), "bad"),
        "purpose-unknown": (_set(base, ("purpose",), "testing"), "bad"),
        "schema-version": (_set(base, ("schema_version",), 99), "bad"),
        "seed-negative": (_set(base, ("seed",), -1), "bad"),
        "count-negative": (_set(mixed, ("shapes", 1, "count"), -5), "bad"),
        "count-text": (_set(mixed, ("shapes", 1, "count"), "many"), "bad"),
        "count-float": (_set(mixed, ("shapes", 1, "count"), 2.5), "bad"),
        "count-huge": (_set(mixed, ("shapes", 1, "count"), 10**30), "bad"),
        "count-disagrees": (_set(mixed, ("shapes", 0, "count"), 3), "bad"),
        "site-count-zero": (_set(mixed, ("shapes", 0, "used_in", 0, "count"), 0), "bad"),
        "mixed-entry-without-op": (_set(mixed, ("shapes", 1, "op"), _DELETE), "bad"),
    }
    return json_cases("sweep", base, labelled, rng)


def tolerances_cases(rng: random.Random) -> list[Case]:
    base = tolerances_base()

    def alu(kind: str, value: Any) -> dict[str, Any]:
        return _set(base, ("regimes", "alu_bound", kind), value)

    text = json.dumps(base)
    labelled: dict[str, tuple[bytes | dict[str, Any], str]] = {
        "looser": (alu("latency", 0.5), "ok"),
        "no-comment": (_set(base, ("comment",), _DELETE), "ok"),
        "no-schema-version": (_set(base, ("schema_version",), _DELETE), "ok"),
        "infinity": (text.replace('"latency": 0.1,', '"latency": Infinity,', 1).encode(), "bad"),
        "nan-value": (text.replace('"latency": 0.1,', '"latency": NaN,', 1).encode(), "bad"),
        "zero": (alu("latency", 0), "bad"),
        "negative": (alu("energy", -0.1), "bad"),
        "too-loose": (alu("latency", 11), "bad"),
        "huge": (alu("latency", 1e300), "bad"),
        "string": (alu("latency", "0.1"), "bad"),
        "bool": (alu("latency", True), "bad"),
        "typo-kind": (
            _set(alu("latency", _DELETE), ("regimes", "alu_bound", "latencyy"), 0.1),
            "bad",
        ),
        "typo-regime": (_set(base, ("regimes", "alu_bnd"), {"latency": 0.1, "energy": 0.1}), "bad"),
        "missing-regime": (_set(base, ("regimes", "l3_bound"), _DELETE), "bad"),
        "schema-version": (_set(base, ("schema_version",), 2), "bad"),
        "regimes-list": (_set(base, ("regimes",), []), "bad"),
    }
    return json_cases("tolerances", base, labelled, rng)


def config_cases(rng: random.Random) -> list[Case]:
    base = config_base()
    labelled: dict[str, tuple[bytes | dict[str, Any], str]] = {
        "head-dim": ({**base, "head_dim": 32}, "ok"),
        "kv-null": ({**base, "num_key_value_heads": None}, "ok"),
        "missing": (_set(base, ("vocab_size",), _DELETE), "bad"),
        "zero": ({**base, "hidden_size": 0}, "bad"),
        "negative": ({**base, "num_hidden_layers": -2}, "bad"),
        "string": ({**base, "hidden_size": "64"}, "bad"),
        "float": ({**base, "hidden_size": 64.0}, "bad"),
        "bool": ({**base, "vocab_size": True}, "bad"),
        "huge": ({**base, "hidden_size": 2**40}, "bad"),
        "heads-do-not-divide": ({**base, "num_attention_heads": 3}, "bad"),
        "kv-heads-do-not-divide": ({**base, "num_key_value_heads": 3}, "bad"),
    }
    # a config holds many keys graphsval does not read: an unknown key is no error here
    cases = json_cases("config", base, labelled, rng)
    return [Case(c.fmt, c.name, c.data, "ok") if c.name == "unknown-key" else c for c in cases]


def calibration_cases(rng: random.Random) -> list[Case]:
    base = calibration_base()
    constants = base["constants"]
    fraction = next(n for n in constants if n.startswith("compute_fraction."))
    one = {"value": 1, "datasheet": 1}

    def constant(name: str, entry: dict[str, Any]) -> dict[str, Any]:
        return _set(base, ("constants", name), entry)

    labelled: dict[str, tuple[bytes | dict[str, Any], str]] = {
        "record-only": (_set(_set(base, ("fit",), _DELETE), ("residuals",), _DELETE), "ok"),
        "misspelt-constant": (constant("launch_overhed_s", {"value": 1e-6}), "bad"),
        "foreign-dtype": (constant("compute_fraction.fp8", one), "bad"),
        "unknown-tier": (constant("tiers.l9.achievable_fraction", one), "bad"),
        "value-negative": (_set(base, ("constants", "launch_overhead_s", "value"), -1e-6), "bad"),
        "value-string": (_set(base, ("constants", "launch_overhead_s", "value"), "1e-6"), "bad"),
        "value-missing": (_set(base, ("constants", "launch_overhead_s", "value"), _DELETE), "bad"),
        "fraction-datasheet-zero": (_set(base, ("constants", fraction, "datasheet"), 0), "bad"),
        "other-target": (_set(base, ("target",), "i7_12700k"), "bad"),
        "no-provenance": (_set(base, ("provenance",), _DELETE), "bad"),
        "sources-not-a-list": (_set(base, ("provenance", "sources"), "x"), "bad"),
        "schema-version": (_set(base, ("schema_version",), 7), "bad"),
    }
    return json_cases("calibration", base, labelled, rng)


def target_cases(rng: random.Random) -> list[Case]:
    base = target_base()
    labelled: dict[str, tuple[bytes | dict[str, Any], str]] = {
        "no-description": (_set(base, ("description",), _DELETE), "ok"),
        "missing-key": (_set(base, ("tiers",), _DELETE), "bad"),
        "tiers-empty": (_set(base, ("tiers",), []), "bad"),
        "tier-unknown-key": (_set(base, ("tiers", 0, "bandwidth"), 1), "bad"),
        "tier-negative": (_set(base, ("tiers", 0, "peak_bandwidth_bps"), -1), "bad"),
        "clock-string": (_set(base, ("clock_hz",), "fast"), "bad"),
        "tdp-huge-negative": (_set(base, ("tdp_w",), -1e308), "bad"),
        "schema-version": (_set(base, ("schema_version",), 3), "bad"),
    }
    return json_cases("target", base, labelled, rng)


def overlay_cases(rng: random.Random) -> list[Case]:
    base = overlay_base()
    labelled: dict[str, tuple[bytes | dict[str, Any], str]] = {
        "wrong-kind": (_set(base, ("kind",), "labels"), "bad"),
        "label-unknown": (
            _set(base, ("labels", "matmul_validation.json", "32x32x32 fp32", "acme_npu1"), "l9"),
            "bad",
        ),
        "targets-twice": (_set(base, ("targets",), ["a", "a"]), "bad"),
        "labels-list": (_set(base, ("labels",), []), "bad"),
    }
    return json_cases("overlay", base, labelled, rng)


def floors_cases(rng: random.Random) -> list[Case]:
    base = floors_base()
    key = next(iter(base["floors"]))
    labelled: dict[str, tuple[bytes | dict[str, Any], str]] = {
        "pass-negative": (_set(base, ("floors", key, "pass"), -1), "bad"),
        "pass-float": (_set(base, ("floors", key, "pass"), 2.5), "bad"),
        "entry-typo": (_set(base, ("floors", key, "passes"), 1), "bad"),
        "recapture-over-one": (_set(base, ("floors", key, "recapture_within_min"), 2), "bad"),
    }
    return json_cases("floors", base, labelled, rng)


def shapes_cases(rng: random.Random) -> list[Case]:
    base = shapes_base()
    labelled = {
        "as-is": (base, "ok"),
        "crlf": (base.replace(b"\n", b"\r\n"), "ok"),
        "repeat": (base + b"64x64x64\n", "ok"),
        "bom": (b"\xef\xbb\xbf" + base, "ok"),
        "empty": (b"", "bad"),
        "comments-only": (b"# nothing\n\n", "bad"),
        "zero": (base + b"0x1x1\n", "bad"),
        "two-dims": (base + b"64x64\n", "bad"),
        "text": (base + b"axbxc\n", "bad"),
        "huge": (base + b"99999999999999999999999x1x1\n", "bad"),
        "not-utf8": (base + b"\xff\n", "bad"),
    }
    cases = [Case("shapes", name, data, expect) for name, (data, expect) in labelled.items()]
    return cases + [
        Case("shapes", f"random{i}", random_bytes(base, rng), "any")
        for i in range(RANDOM_PER_FORMAT // 2)
    ]


BUILDERS: dict[str, Callable[[random.Random], list[Case]]] = {
    "baseline": baseline_cases,
    "sweep": sweep_cases,
    "tolerances": tolerances_cases,
    "config": config_cases,
    "calibration": calibration_cases,
    "target": target_cases,
    "overlay": overlay_cases,
    "floors": floors_cases,
    "shapes": shapes_cases,
}


def corpus() -> list[Case]:
    """Every case of every format, the same on every run (one seeded generator)."""
    rng = random.Random(SEED)
    return [case for fmt in sorted(BUILDERS) for case in BUILDERS[fmt](rng)]


# --- command lines ------------------------------------------------------------------------

#: The commands each format's file is given to (FILE: the case's file; OUT: a
#: folder for what the command writes; V4, SWEEP, CONFIG: valid inputs).
COMMANDS: dict[str, list[list[str]]] = {
    "baseline": [
        ["validate", "--baseline", "FILE", "--format", "json"],
        [
            "registry",
            "lookup",
            "--hw",
            HOST,
            "--op",
            "matmul",
            "--shape",
            "64x64x64",
            "--dtype",
            "fp32",
            "--baseline",
            "FILE",
        ],
    ],
    "sweep": [["predict", "--hw", HOST, "--sweep", "FILE", "--format", "json"]],
    "tolerances": [["validate", "--baseline", "V4", "--tolerances", "FILE", "--format", "json"]],
    "config": [["sweep", "from-config", "FILE", "--out", "OUT/sweep.json"]],
    "shapes": [
        [
            "predict",
            "--hw",
            HOST,
            "--op",
            "matmul",
            "--dtype",
            "fp32",
            "--shapes",
            "FILE",
            "--format",
            "csv",
        ]
    ],
}
#: Commands with one flag given a hostile value (VALUE).
FLAG_TEMPLATES: list[list[str]] = [
    ["explain", "--hw", HOST, "--op", "matmul", "--shape", "VALUE", "--dtype", "fp32"],
    ["explain", "--hw", "VALUE", "--op", "matmul", "--shape", "8x8x8", "--dtype", "fp32"],
    ["explain", "--hw", HOST, "--op", "VALUE", "--shape", "8x8x8", "--dtype", "fp32"],
    ["explain", "--hw", HOST, "--op", "matmul", "--shape", "8x8x8", "--dtype", "VALUE", "--json"],
    ["predict", "--hw", HOST, "--op", "vector_add", "--dtype", "fp32", "--shape", "VALUE"],
    ["predict", "--hw", HOST, "--op", "matmul", "--dtype", "fp32", "--shape", "8x8x8",
     "--format", "VALUE"],
    ["predict", "--hw", HOST, "--sweep", "SWEEP", "--op", "VALUE"],
    ["predict", "--hw", HOST, "--sweep", "SWEEP", "--dtype", "VALUE", "--rollup"],
    ["predict", "--hw", HOST, "--sweep", "SWEEP", "--predictor", "VALUE"],
    ["registry", "lookup", "--hw", HOST, "--op", "matmul", "--shape", "VALUE", "--dtype", "fp32",
     "--baseline", "V4"],
    ["validate", "--baseline", "V4", "--hw", "VALUE"],
    ["validate", "--baseline", "V4", "--op", "VALUE"],
    ["validate", "--baseline", "V4", "--purpose", "VALUE"],
    ["validate", "--baseline", "VALUE"],
    ["validate", "--baseline", "V4", "--tolerances", "VALUE"],
    ["validate", "--baseline", "V4", "--format", "VALUE", "--out", "OUT/reports"],
    ["sweep", "from-config", "CONFIG", "--tokens", "VALUE", "--out", "OUT/s.json"],
    ["sweep", "from-config", "CONFIG", "--batch", "VALUE", "--out", "OUT/s.json"],
    ["sweep", "from-config", "CONFIG", "--dtype", "VALUE", "--out", "OUT/s.json"],
    ["sweep", "from-config", "CONFIG", "--out", "VALUE"],
    ["sweep", "show", "--sweeps-dir", "VALUE"],
    ["sweep", "show", "--hw", "VALUE", "--json"],
    ["sweep", "generate", "--op", "VALUE", "--out-dir", "OUT/gen"],
    ["sweep", "label", "--hw", "VALUE", "--out", "OUT/overlay.json"],
    ["check", "--hw", "VALUE"],
    ["check", "--hw", HOST, "--snapshot", "VALUE"],
    ["targets", "--hw", "VALUE"],
    ["plugin", "new", "VALUE", "--dir", "OUT/plugin"],
    ["calibrate", "--hw", "VALUE", "--baseline", "V4", "--out", "OUT/c.json"],
    # a capture that would measure is never drawn: another flag is always out of range
    ["capture", "--hw", HOST, "--op", "vector_add", "--purpose", "validation", "--threads",
     "VALUE", "--rounds", "0"],
    ["capture", "--hw", "host_cpu", "--op", "vector_add", "--purpose", "VALUE", "--rounds", "0"],
    ["capture", "--hw", "host_cpu", "--op", "vector_add", "--purpose", "validation",
     "--max-wait", "VALUE", "--rounds", "0"],
    ["capture", "--hw", "host_cpu", "--op", "vector_add", "--purpose", "validation",
     "--target-ci", "VALUE", "--limit", "0"],
    ["capture", "--hw", "host_cpu", "--op", "vector_add", "--purpose", "validation",
     "--max-total-time", "VALUE", "--rounds", "0"],
    ["capture", "--hw", "host_cpu", "--op", "vector_add", "--purpose", "validation",
     "--sweep", "VALUE", "--rounds", "0"],
    ["capture-machine", "--rounds", "VALUE", "--threads", "0"],
    ["capture-machine", "--threads", "VALUE", "--rounds", "0"],
    ["--workspace", "VALUE", "workspace"],
    ["-p", "VALUE", "targets"],
]  # fmt: skip
#: A capture of this machine's vector_add validation sweep, before the flag under test.
_CAPTURE = ["capture", "--hw", "host_cpu", "--op", "vector_add", "--purpose", "validation"]
#: Flag values that are wrong whatever else is given: each must exit 2 in one line.
BAD_FLAGS: list[list[str]] = [
    ["explain", "--hw", HOST, "--op", "matmul", "--shape", "0x64x64", "--dtype", "fp32"],
    [
        "explain",
        "--hw",
        HOST,
        "--op",
        "matmul",
        "--shape",
        "99999999999999999999999999999x64x64",
        "--dtype",
        "fp32",
    ],
    [
        "predict",
        "--hw",
        HOST,
        "--op",
        "matmul",
        "--dtype",
        "fp32",
        "--shape",
        "9223372036854775808x1x1",
    ],
    ["predict", "--hw", HOST, "--op", "matmul", "--dtype", "fp32", "--shape", "-1x2x3"],
    ["predict", "--hw", HOST, "--op", "matmul", "--dtype", "fp32", "--shape", "8x8"],
    ["predict", "--hw", HOST, "--op", "matmul", "--shape", "8x8x8"],
    ["predict", "--hw", HOST, "--op", "matmul", "--dtype", "fp32", "--shape", "8x8x8", "--rollup"],
    ["registry", "lookup", "--hw", HOST, "--op", "matmul", "--shape", "0x1x1", "--dtype", "fp32"],
    ["sweep", "from-config", "CONFIG", "--tokens", "9" * 23, "--out", "OUT/s.json"],
    ["sweep", "from-config", "CONFIG", "--tokens", "many", "--out", "OUT/s.json"],
    ["sweep", "from-config", "CONFIG", "--tokens", "0", "--out", "OUT/s.json"],
    ["sweep", "from-config", "CONFIG", "--tokens", "--5", "--out", "OUT/s.json"],
    ["sweep", "from-config", "CONFIG", "--batch", "0", "--out", "OUT/s.json"],
    ["sweep", "from-config", "CONFIG", "--batch", "99999999999", "--out", "OUT/s.json"],
    ["sweep", "from-config", "CONFIG", "--out", "OUT"],
    ["sweep", "generate", "--op", "vector_add", "--seed", "-1", "--out-dir", "OUT/gen"],
    ["sweep", "generate", "--op", "vector_add", "--out-dir", "CONFIG"],
    ["sweep", "show", "--sweeps-dir", "OUT/missing"],
    ["sweep", "label", "--hw", HOST, "--sweeps-dir", "OUT/missing"],
    ["validate", "--baseline", "V4", "--purpose", "testing"],
    ["validate", "--baseline", "OUT"],
    ["validate", "--baseline", "V4", "--tolerances", "OUT"],
    ["validate", "--baseline", "V4", "--out", "V4"],
    ["validate", "--hw", HOST, "--op", "nosuch_op"],
    ["check", "--hw", HOST, "--snapshot", "OUT/typo.json"],
    [*_CAPTURE, "--threads", "100000"],
    [*_CAPTURE, "--max-wait", "nan"],
    [*_CAPTURE, "--max-total-time", "inf"],
    [*_CAPTURE, "--target-ci", "nan"],
    [*_CAPTURE, "--seed", "-1"],
    [*_CAPTURE, "--sweep", "CONFIG"],
    ["capture-machine", "--threads", "100000"],
    ["--workspace", "V4", "targets"],
]
#: Hostile values each flag template draws.
VALUES_PER_TEMPLATE = 4
#: Of the random cases of a format, the share that also goes through its commands.
RANDOM_SHARE = 3


@frozen
class CommandCase:
    """One command line: its arguments (with the placeholders above), the
    file it is given (None for a flag case) and what it must do: ``bad`` (exit
    code 2), ``ok`` (0 or 1) or ``any`` (0, 1 or 2)."""

    argv: tuple[str, ...]
    case: Case | None
    expect: str

    @property
    def id(self) -> str:
        what = self.case.id if self.case else "flag"
        return f"{what}:{' '.join(self.argv)[:60]}"


def command_cases() -> list[CommandCase]:
    """The command lines of the corpus's files, then the flag cases."""
    out = []
    for case in corpus():
        if case.fmt not in COMMANDS:
            continue
        if case.expect == "any" and zlib.crc32(case.id.encode()) % RANDOM_SHARE:
            continue
        for argv in COMMANDS[case.fmt]:
            expect = case.expect
            if argv[0] == "registry" and expect == "ok":
                expect = "any"  # the shape looked up may not be in that file: exit 2
            out.append(CommandCase(tuple(argv), case, expect))
    out += [CommandCase(tuple(argv), None, "bad") for argv in BAD_FLAGS]
    rng = random.Random(SEED)
    for template in FLAG_TEMPLATES:
        for value in rng.sample(HOSTILE_TEXT, VALUES_PER_TEMPLATE):
            argv = tuple(value if a == "VALUE" else a for a in template)
            slow = template[0] in ("capture", "capture-machine")
            out.append(CommandCase(argv, None, "bad" if slow else "any"))
    return out


#: Set to 1 to run the installed-CLI battery (test_fuzz_installed.py): every
#: command line as a subprocess of the installed ``graphsval``, some minutes.
ENV_INSTALLED = "GRAPHSVAL_FUZZ_INSTALLED"


#: The battery is collected only when asked for (it takes minutes).
collect_ignore = [] if os.environ.get(ENV_INSTALLED) == "1" else ["test_fuzz_installed.py"]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"fuzz_installed: the installed-CLI fuzz battery (minutes; runs with {ENV_INSTALLED}=1)",
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test asking for ``case`` runs once for every case of the corpus; one
    asking for ``command`` once for every command line."""
    if "case" in metafunc.fixturenames:
        every = corpus()
        metafunc.parametrize("case", every, ids=[c.id for c in every])
    if "command" in metafunc.fixturenames:
        lines = command_cases()
        metafunc.parametrize("command", lines, ids=[c.id for c in lines])


@pytest.fixture
def valid_inputs(tmp_path: Path) -> dict[str, Path]:
    """Valid files a command line names besides its case's (V4, SWEEP, CONFIG)."""
    files = {
        "V4": tmp_path / "in" / "v4.csv",
        "SWEEP": tmp_path / "in" / "mixed.json",
        "CONFIG": tmp_path / "in" / "config.json",
    }
    files["V4"].parent.mkdir(parents=True, exist_ok=True)
    files["V4"].write_bytes(v4_base())
    files["SWEEP"].write_bytes(_js(mixed_base()))
    files["CONFIG"].write_bytes(_js(config_base()))
    return files
