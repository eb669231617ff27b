"""Snapshot regression: the reference workload's predictions of every fixed
target, committed in a prediction snapshot file (its plugin's, or one named
file); a prediction that moves by more than 1% fails until the snapshot is
updated deliberately (``graphsval check --update-snapshot``, which prints what
moved). Detected targets (``host_cpu``) change from machine to machine and are
not snapshotted. The file format is :mod:`graphsval_core.files.snapshot`.

An update writes a file the user named, or a plugin's snapshot in a source
tree (a plugin installed editable), never a file inside an installed package.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphsval_core.consistency.reference_shapes import workload_name
from graphsval_core.datamodel.errors import shell_path
from graphsval_core.datamodel.outcome import Outcome, outcome, skipped
from graphsval_core.files.snapshot import QUANTITIES, TOLERANCE, SnapshotError, write_snapshot
from graphsval_core.plugins.resources import in_installed_package

if TYPE_CHECKING:
    from graphsval_core.consistency.context import CheckContext
    from graphsval_core.datamodel.target import TargetSpec

CHECK = "snapshot"


def predictions(ctx: CheckContext, target: TargetSpec) -> dict[str, list[float]]:
    """``workload -> [latency_s, energy_j]`` over the reference workload set."""
    out: dict[str, list[float]] = {}
    for (op, dtype), (shapes, p) in ctx.predict_all(target).items():
        for i, shape in enumerate(shapes):
            out[workload_name(op, shape, dtype)] = [
                float(f"{p.latency_s[i]:.7g}"),
                float(f"{p.energy_j[i]:.7g}"),
            ]
    return out


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


def _name(path: Any) -> str:
    return getattr(path, "name", None) or Path(str(path)).name


def snapshot(target: TargetSpec, ctx: CheckContext) -> list[Outcome]:
    """The check: the reference workload's predictions match the committed snapshot."""
    if target.detected:
        return [skipped(CHECK, target.key, "detected target: its spec follows this machine")]
    path = ctx.snapshots.path_for(target.key)
    if path is None:
        plugin = ctx.registry.target_plugin(target.key).name
        return [
            skipped(
                CHECK,
                target.key,
                f"plugin {plugin!r} ships no prediction snapshot "
                "(the graphsval_prediction_snapshot hook)",
            )
        ]
    try:
        committed = ctx.snapshots.committed(target.key)
    except SnapshotError as exc:
        plugin = ctx.registry.target_plugin(target.key).name
        return [
            outcome(
                CHECK,
                target.key,
                False,
                f"the prediction snapshot of plugin {plugin!r} cannot be used: {exc}",
                numbers={"file": _name(path)},
            )
        ]
    if committed is None:
        named = f" --snapshot {shell_path(path)}" if ctx.snapshots.named is not None else ""
        return [
            skipped(
                CHECK,
                target.key,
                f"no committed snapshot in {_name(path)}; "
                f"`graphsval check --update-snapshot --hw {target.key}{named}` writes one",
            )
        ]
    diff = compare(committed, predictions(ctx, target))
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
            numbers={"file": _name(path), **diff, "moved": diff["moved"][:20]},
            workload=workload,
            coefficient=None,
            expected=ctx.expected(CHECK, target),
        )
    ]


def update(ctx: CheckContext, targets: Iterable[TargetSpec]) -> dict[str, list[str]]:
    """Rewrite the snapshot entries of the fixed ``targets`` (other entries are
    kept), file by file; return ``path -> one line per thing that moved``.

    A file inside an installed package is refused
    (:class:`~graphsval_core.files.snapshot.SnapshotError`): name another file.
    """
    by_path: dict[str, list[TargetSpec]] = {}
    paths: dict[str, Any] = {}
    for target in sorted(targets, key=lambda t: t.key):
        if target.detected:
            continue
        path = ctx.snapshots.path_for(target.key)
        if path is None:
            plugin = ctx.registry.target_plugin(target.key).name
            raise SnapshotError(
                f"plugin {plugin!r} ships no prediction snapshot for {target.key}; name a "
                "file to write with --snapshot FILE"
            )
        by_path.setdefault(str(path), []).append(target)
        paths[str(path)] = path
    for name, path in paths.items():
        if not isinstance(path, str | Path) or (
            ctx.snapshots.named is None and in_installed_package(path)
        ):
            raise SnapshotError(
                f"{name} lies in an installed package; graphsval writes there only "
                "from a source tree (pip install -e): name a file to write with --snapshot FILE"
            )
    out: dict[str, list[str]] = {}
    for name, chosen in by_path.items():
        path = Path(name)
        data = dict(ctx.snapshots.read(paths[name]))
        lines: list[str] = []
        for target in chosen:
            new = predictions(ctx, target)
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
        write_snapshot(path, data)
        ctx.snapshots.forget(paths[name])
        out[name] = lines
    return out
