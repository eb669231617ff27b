"""Pass-count floors per (target, op), shipped with each plugin.

A floors file (``floors.json`` in a plugin, returned by its ``graphsval_floors``
hook) holds the minimum number of passing records of each (target, op). With
``--check-floors`` a count below its floor fails and says by how much.
``--update-floors`` raises every floor to the current count; lowering one
needs ``--reason``, which is stored next to it with ``lowered_from`` (the
floor it was lowered from) until a raise brings it back at or above that.
A floor lowered again keeps the higher ``lowered_from`` and its reason, after
the new one (``"<new>; before that: <earlier>"``). Floors are never lowered
silently.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from attrs import define

from graphsval_core.datamodel.errors import UserInputError
from graphsval_core.files import schema
from graphsval_core.files.inputs import read_path_or_resource
from graphsval_core.files.jsonfile import parse_json
from graphsval_core.files.outputs import write_text_atomic

SCHEMA_VERSION = 1


class FloorsError(UserInputError):
    pass


#: Optional floors of the capture-vs-recapture agreement of a target/op (the
#: noise floor of its machine kind): the largest median difference and the
#: smallest share of shapes within 10%. validate says when the shipped data
#: fall below them; they are set by hand from a quiet capture, never raised
#: or lowered by --update-floors.
RECAPTURE_KEYS = ("recapture_median_max", "recapture_within_min")


@define
class FloorCheck:
    key: str
    passed: int
    floor: int | None
    records: int

    @property
    def ok(self) -> bool:
        return self.floor is None or self.passed >= self.floor

    def text(self) -> str:
        if self.floor is None:
            return f"{self.key}: {self.passed}/{self.records} pass (no floor)"
        if self.ok:
            return f"{self.key}: {self.passed}/{self.records} pass, floor {self.floor}: ok"
        return (
            f"{self.key}: {self.passed}/{self.records} pass, floor {self.floor}: "
            f"FAIL ({self.floor - self.passed} below)"
        )


#: The keys of a floors file, and of one target/op's floors.
TOP_KEYS = ("schema_version", "comment", "floors")
ENTRY_KEYS = ("pass", "records", "lowered_from", "reason", *RECAPTURE_KEYS)


def read_floors(path: Path | Any) -> dict[str, dict[str, Any]]:
    """``target/op -> {"pass": n, ...}`` of a floors file (empty if it does not
    exist), read strictly: known keys only, counts non-negative integers,
    recapture floors fractions in (0, 1]."""
    try:
        exists = path.exists() if isinstance(path, Path) else path.is_file()
    except OSError:
        exists = True  # read_path_or_resource words why it cannot be read
    if not exists:
        return {}
    data = read_path_or_resource(path, FloorsError, "a floors file")
    where, err = str(path), FloorsError
    top = schema.obj(parse_json(data, where, err), where, err)
    schema.keys(top, where, err, optional=TOP_KEYS)
    schema.schema_version(top, where, err, SCHEMA_VERSION)
    floors = schema.obj(top.get("floors", {}), f"{where}: floors", err)
    for key, entry in floors.items():
        at = f"{where}: floors.{key}"
        target, slash, op = key.partition("/")
        if not (slash and target and op and "/" not in op):
            raise FloorsError(f"{at}: not a key of the form <target>/<op>")
        schema.keys(schema.obj(entry, at, err), at, err, required=("pass",), optional=ENTRY_KEYS)
        for name in ("pass", "records", "lowered_from"):
            if name in entry:
                schema.integer(entry[name], f"{at}.{name}", err)
        if "records" in entry and entry["pass"] > entry["records"]:  # a floor no run can meet
            raise FloorsError(
                f"{at}.pass: {entry['pass']} is above its {entry['records']} records (no run "
                "passes more records than it has)"
            )
        if "reason" in entry:
            schema.string(entry["reason"], f"{at}.reason", err)
        for name in RECAPTURE_KEYS:
            if entry.get(name) is not None:
                schema.number(entry[name], f"{at}.{name}", err, 0.0, 1.0, low_open=True)
    return floors


def write_floors(path: Path, floors: dict[str, dict[str, Any]]) -> None:
    body = {
        "schema_version": SCHEMA_VERSION,
        "comment": "Minimum passing records per target/op; raise with `graphsval validate "
        "--update-floors`, lower only with --reason.",
        "floors": dict(sorted(floors.items())),
    }
    write_text_atomic(path, json.dumps(body, indent=2) + "\n", FloorsError)


def check_floors(
    counts: dict[str, tuple[int, int]], floors: dict[str, dict[str, Any]]
) -> list[FloorCheck]:
    """``counts``: key -> (passed, records)."""
    return [
        FloorCheck(key, passed, floors.get(key, {}).get("pass"), records)
        for key, (passed, records) in sorted(counts.items())
    ]


def lowered_record(entry: dict[str, Any], old: int, reason: str) -> tuple[int, str]:
    """The ``lowered_from`` and reason of a floor ``old`` lowered again with
    ``reason``: a floor already lowered from a higher value keeps that value
    and its earlier reason after the new one, so a later raise between the two
    still keeps the record."""
    was = entry.get("lowered_from")
    if was is None or was <= old:
        return old, reason
    earlier = entry.get("reason")
    return was, f"{reason}; before that: {earlier}" if earlier else reason


def update_floors(
    counts: dict[str, tuple[int, int]],
    floors: dict[str, dict[str, Any]],
    keys: Iterable[str],
    reason: str | None,
) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """Raise floors to the current counts; lower only with a reason. Returns the
    new floors and one line per change. A floor lowered earlier and raised
    keeps its ``lowered_from`` and reason while it is still below that
    value, and drops them once it is back at or above it. A floor lowered
    again keeps the higher ``lowered_from`` and both reasons."""
    new = {k: dict(v) for k, v in floors.items()}
    changes = []
    for key in keys:
        passed, records = counts[key]
        old = new.get(key, {}).get("pass")
        kept = {k: v for k, v in new.get(key, {}).items() if k in RECAPTURE_KEYS}
        if old is None or passed > old:
            line = f"{key}: floor {old if old is not None else '-'} -> {passed}"
            was = new.get(key, {}).get("lowered_from")
            if was is not None and passed < was:  # still below: why it is lowered still holds
                kept = {k: v for k, v in new[key].items() if k in ("lowered_from", "reason")} | kept
                line += f" (still below {was}, the floor it was lowered from: its reason kept)"
            elif was is not None:
                line += (
                    f" (back at or above {was}, the floor it was lowered from: its reason dropped)"
                )
            new[key] = {"pass": passed, "records": records, **kept}
            changes.append(line)
        elif passed < old:
            if not reason or not reason.strip():
                raise FloorsError(
                    f"{key}: {passed} passes is below the floor {old}; lowering a floor needs "
                    "--reason TEXT"
                )
            lowered_from, why = lowered_record(new[key], old, reason)
            new[key] = {
                "pass": passed,
                "records": records,
                "lowered_from": lowered_from,
                "reason": why,
                **kept,
            }
            changes.append(f"{key}: floor {old} -> {passed} (lowered: {reason})")
    return new, changes
