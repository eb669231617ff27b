"""Prediction snapshot files: the committed predictions the ``snapshot``
consistency check compares with.

A snapshot holds, per target, ``"op shape dtype": [latency_s, energy_j]`` with 7
significant digits, one workload per line so that a diff shows what moved::

    {"schema_version": 1, "predictor": "reference", "tolerance": 0.01,
     "columns": ["latency_s", "energy_j"],
     "targets": {"i7_12700k": {"matmul 32x32x32 fp32": [4.3e-06, 0.00037], ...}}}

Each plugin ships the snapshot of its own targets (the
``graphsval_prediction_snapshot`` hook); ``graphsval check --snapshot FILE``
names one file for every target instead.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from graphsval_core.datamodel.errors import UserInputError
from graphsval_core.files import schema
from graphsval_core.files.inputs import read_path_or_resource
from graphsval_core.files.jsonfile import parse_json

SCHEMA_VERSION = 1
#: A prediction moving by more than this (relative) fails the check.
TOLERANCE = 0.01
QUANTITIES = ("latency_s", "energy_j")
#: The predictor a snapshot holds the predictions of.
PREDICTOR = "reference"

Entries = dict[str, dict[str, list[float]]]
TOP_KEYS = ("schema_version", "predictor", "tolerance", "columns", "targets")
#: The longest latency a snapshot holds (s): a day, as in a baseline.
MAX_LATENCY_S = 86_400.0


class SnapshotError(UserInputError):
    """The snapshot file is unreadable, malformed or cannot be written."""


def read_snapshot(path: Path | Any) -> Entries:
    """``target -> workload -> values`` of a snapshot file (empty if absent)."""
    try:
        if not (path.exists() if isinstance(path, Path) else path.is_file()):
            return {}
    except OSError:
        pass  # the reader words why it cannot be read
    raw = read_path_or_resource(path, SnapshotError, "a consistency snapshot")
    try:
        data = parse_json(raw, str(path), SnapshotError)
    except SnapshotError as exc:
        raise SnapshotError(f"cannot read the snapshot: {exc}") from None
    if isinstance(data, dict):
        _check_top(data, str(path))
    targets = data.get("targets") if isinstance(data, dict) else None
    if not isinstance(targets, dict) or not all(
        isinstance(v, dict)
        and all(
            isinstance(x, list)
            and len(x) == len(QUANTITIES)
            and all(isinstance(n, int | float) and not isinstance(n, bool) for n in x)
            for x in v.values()
        )
        for v in targets.values()
    ):
        raise SnapshotError(
            f"{path}: not a consistency snapshot (expected "
            '{"targets": {KEY: {WORKLOAD: [latency_s, energy_j]}}})'
        )
    for key, entries in targets.items():
        for workload, (latency, energy) in entries.items():
            at = f"{path}: targets.{key}.{workload!r}"
            schema.number(latency, f"{at} latency_s", SnapshotError, 0.0, MAX_LATENCY_S, True)
            schema.number(energy, f"{at} energy_j", SnapshotError, 0.0)
    return targets


def _check_top(data: dict[str, Any], where: str) -> None:
    """Known keys only, and those a graphsval of today writes: the schema, the
    predictor, the tolerance and the columns the check applies."""
    err = SnapshotError
    schema.keys(data, where, err, required=("targets",), optional=TOP_KEYS)
    schema.schema_version(data, where, err, SCHEMA_VERSION)
    fixed = {"predictor": PREDICTOR, "tolerance": TOLERANCE, "columns": list(QUANTITIES)}
    for key, value in fixed.items():
        if key in data and data[key] != value:
            raise err(
                f"{where}: {key} {json.dumps(data[key])[:60]} is not what the check applies "
                f"({json.dumps(value)}); a snapshot holds the {PREDICTOR} predictor's "
                f"{', '.join(QUANTITIES)} within {TOLERANCE}"
            )


def dump_snapshot(targets: Entries) -> str:
    """The text of a snapshot file: targets sorted, one workload per line."""
    lines = [
        "{",
        f'  "schema_version": {SCHEMA_VERSION},',
        f'  "predictor": "{PREDICTOR}",',
        f'  "tolerance": {TOLERANCE},',
        f'  "columns": {json.dumps(list(QUANTITIES))},',
        '  "targets": {',
    ]
    keys = sorted(targets)
    for n, key in enumerate(keys):
        lines.append(f"    {json.dumps(key)}: {{")
        items = sorted(targets[key].items())
        for m, (workload, values) in enumerate(items):
            comma = "," if m < len(items) - 1 else ""
            lines.append(f"      {json.dumps(workload)}: {json.dumps(values)}{comma}")
        lines.append("    }" + ("," if n < len(keys) - 1 else ""))
    lines += ["  }", "}", ""]
    return "\n".join(lines)


def write_snapshot(path: Path, targets: Entries) -> None:
    """Write ``targets`` to ``path`` (see :func:`dump_snapshot`)."""
    from graphsval_core.files.outputs import write_text_atomic

    write_text_atomic(path, dump_snapshot(targets), SnapshotError)
