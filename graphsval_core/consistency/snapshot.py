"""Snapshot regression (issue 8, check 8): the reference workload's predictions
of every fixed target, committed in ``snapshot.json`` beside this
module; a prediction that moves by more than 1% fails until the snapshot is
updated deliberately (``graphsval check --update-snapshot``, which prints what
moved). Detected targets (``host_cpu``) change from machine to machine and are
not snapshotted.

The file holds, per target, ``"op shape dtype": [latency_s, energy_j]`` with 7
significant digits, one workload per line so that a diff shows what moved.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphsval_core.consistency.expected import expected
from graphsval_core.consistency.runner import (
    PREDICTOR,
    Outcome,
    outcome,
    skipped,
    workload_name,
)
from graphsval_core.datamodel.errors import UserInputError

if TYPE_CHECKING:
    from graphsval_core.datamodel.target import TargetSpec
    from graphsval_core.plugins.registry import Registry

SCHEMA_VERSION = 1
#: A prediction moving by more than this (relative) fails.
TOLERANCE = 0.01
DEFAULT_PATH = Path(__file__).with_name("snapshot.json")
CHECK = "snapshot"
QUANTITIES = ("latency_s", "energy_j")

#: The snapshot file the check compares with (``graphsval check --snapshot FILE``).
_path: contextvars.ContextVar[Path] = contextvars.ContextVar("snapshot_path", default=DEFAULT_PATH)


class SnapshotError(UserInputError):
    """The snapshot file is unreadable, malformed or cannot be written."""


@contextlib.contextmanager
def using(path: str | Path | None) -> Iterator[Path]:
    """Compare with (and update) ``path`` instead of the committed file, inside the block."""
    token = _path.set(Path(path) if path else DEFAULT_PATH)
    try:
        yield _path.get()
    finally:
        _path.reset(token)


def current_path() -> Path:
    return _path.get()


def predictions(registry: Registry, target: TargetSpec) -> dict[str, list[float]]:
    """``workload -> [latency_s, energy_j]`` over the reference workload set."""
    from graphsval_core.consistency.model_checks import predict_all

    out: dict[str, list[float]] = {}
    for (op, dtype), (shapes, p) in predict_all(registry, target).items():
        for i, shape in enumerate(shapes):
            out[workload_name(op, shape, dtype)] = [
                float(f"{p.latency_s[i]:.7g}"),
                float(f"{p.energy_j[i]:.7g}"),
            ]
    return out


def read(path: Path | None = None) -> dict[str, dict[str, list[float]]]:
    """``target -> workload -> values`` of the snapshot file (empty if absent)."""
    path = path or current_path()
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SnapshotError(f"{path}: cannot read the snapshot: {exc}") from None
    targets = data.get("targets") if isinstance(data, dict) else None
    if not isinstance(targets, dict) or not all(
        isinstance(v, dict)
        and all(isinstance(x, list) and len(x) == len(QUANTITIES) for x in v.values())
        for v in targets.values()
    ):
        raise SnapshotError(
            f"{path}: not a consistency snapshot (expected "
            '{"targets": {KEY: {WORKLOAD: [latency_s, energy_j]}}})'
        )
    return targets


def write(path: Path, targets: dict[str, dict[str, list[float]]]) -> None:
    """Write ``targets`` sorted, one workload per line."""
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
    try:
        path.write_text("\n".join(lines), encoding="utf-8")
    except OSError as exc:
        raise SnapshotError(f"{path}: cannot write the snapshot: {exc}") from None


def _change(old: float, new: float) -> float:
    return (new - old) / old if old else (0.0 if new == old else float("inf"))


def compare(old: dict[str, list[float]], new: dict[str, list[float]]) -> dict[str, Any]:
    """What moved between two entries of one target: ``moved`` (beyond the
    tolerance: workload, quantity, old, new, change), ``small`` (a count of
    smaller changes), ``added`` and ``gone`` workloads."""
    moved, small = [], 0
    for workload in sorted(set(old) & set(new)):
        for quantity, a, b in zip(QUANTITIES, old[workload], new[workload], strict=True):
            change = _change(a, b)
            if abs(change) > TOLERANCE:
                moved.append(
                    {
                        "workload": workload,
                        "quantity": quantity,
                        "old": a,
                        "new": b,
                        "change": change,
                    }
                )
            elif a != b:
                small += 1
    return {
        "moved": moved,
        "small": small,
        "added": sorted(set(new) - set(old)),
        "gone": sorted(set(old) - set(new)),
    }


def _fmt(m: dict[str, Any]) -> str:
    return f"{m['workload']} {m['quantity']} {m['old']:.4g} -> {m['new']:.4g} ({m['change']:+.1%})"


def snapshot(target: TargetSpec, registry: Registry) -> list[Outcome]:
    """The check: the reference workload's predictions match the committed snapshot."""
    if target.detected:
        return [skipped(CHECK, target.key, "detected target: its spec follows this machine")]
    committed = read().get(target.key)
    if committed is None:
        return [
            skipped(
                CHECK,
                target.key,
                f"no committed snapshot in {current_path().name}; "
                f"`graphsval check --update-snapshot --hw {target.key}` writes one",
            )
        ]
    diff = compare(committed, predictions(registry, target))
    problems = len(diff["moved"]) + len(diff["added"]) + len(diff["gone"])
    ok = problems == 0
    message = f"{len(committed)} predictions within {TOLERANCE:.0%} of the snapshot"
    workload = None
    if not ok:
        parts = []
        if diff["moved"]:
            worst = max(diff["moved"], key=lambda m: abs(m["change"]))
            workload = worst["workload"]
            parts.append(f"{len(diff['moved'])} moved by more than 1% (worst: {_fmt(worst)})")
        if diff["added"]:
            parts.append(f"{len(diff['added'])} workloads not in the snapshot")
        if diff["gone"]:
            parts.append(f"{len(diff['gone'])} snapshot workloads no longer predicted")
        message = "; ".join(parts) + "; if intended, run `graphsval check --update-snapshot`"
    return [
        outcome(
            CHECK,
            target.key,
            ok,
            message,
            numbers={"file": current_path().name, **diff, "moved": diff["moved"][:20]},
            workload=workload,
            coefficient=None,
            expected=expected(CHECK, target.key),
        )
    ]


def update(registry: Registry, targets: Iterable[TargetSpec]) -> list[str]:
    """Rewrite the snapshot entries of the fixed ``targets`` (others are kept)
    and return one line per thing that moved."""
    path = current_path()
    data = read(path)
    lines: list[str] = []
    for target in sorted(targets, key=lambda t: t.key):
        if target.detected:
            continue
        new = predictions(registry, target)
        old = data.get(target.key)
        data[target.key] = new
        if old is None:
            lines.append(f"{target.key}: added ({len(new)} workloads)")
            continue
        diff = compare(old, new)
        lines += [f"{target.key}: {_fmt(m)}" for m in diff["moved"]]
        lines += [f"{target.key}: new workload {w}" for w in diff["added"]]
        lines += [f"{target.key}: workload gone {w}" for w in diff["gone"]]
        if diff["small"]:
            lines.append(f"{target.key}: {diff['small']} values moved by 1% or less")
    write(path, data)
    return lines
