"""``graphsval check`` as a function: options in, a typed result out.

:func:`check` runs the consistency checks of the chosen targets (every target
by default) against the plugins' prediction snapshots or one named file, after
rewriting the snapshot first when asked. It prints nothing: the command
renders the result.
"""

from __future__ import annotations

from attrs import field, frozen

from graphsval_core.consistency.context import CheckContext, Snapshots
from graphsval_core.consistency.runner import TargetResult, run_consistency
from graphsval_core.consistency.snapshot import update
from graphsval_core.datamodel.errors import shown_path
from graphsval_core.files.outputs import check_output_in_folder
from graphsval_core.files.snapshot import SnapshotError
from graphsval_core.plugins.registry import Registry


@frozen(kw_only=True)
class CheckOptions:
    """Which targets to check, and the snapshot to compare with or rewrite."""

    hws: tuple[str, ...] = field(default=(), converter=tuple)
    #: rewrite the checked targets' snapshot entries first
    update_snapshot: bool = False
    #: one snapshot file for every target instead of each plugin's own
    snapshot_file: str | None = None


@frozen
class CheckResult:
    """Every target's outcomes, and what the snapshot update moved, file by file."""

    results: tuple[TargetResult, ...]
    #: the file named with ``snapshot_file``, else None
    snapshot_file: str | None
    #: ``plugin -> snapshot file`` each target was compared with (no file named)
    plugin_files: dict[str, str]
    updated: bool
    #: ``file -> one line per thing that moved`` (with ``update_snapshot``)
    moved: dict[str, list[str]]

    @property
    def failed(self) -> bool:
        """A check failed (expected failures do not count)."""
        return any(r.failed for r in self.results)


def check(registry: Registry, options: CheckOptions) -> CheckResult:
    """Run the consistency checks (see module doc). An unknown target, or a
    snapshot that cannot be read or written, raises
    :class:`~graphsval_core.datamodel.errors.UserInputError`."""
    targets = [registry.target(h) for h in options.hws] if options.hws else None
    snapshots = Snapshots(registry, options.snapshot_file)
    if snapshots.named and options.update_snapshot:  # refused before it is read or written
        check_output_in_folder(
            snapshots.named, SnapshotError, f"--snapshot {shown_path(snapshots.named)}"
        )
    if snapshots.named and not options.update_snapshot and not snapshots.named.exists():
        raise SnapshotError(
            f"{shown_path(snapshots.named)}: no such snapshot file (--update-snapshot writes one)"
        )
    files = {} if snapshots.named else snapshots.plugin_files()
    if snapshots.named:
        # a malformed file the user named is an input error, not a failed check
        # (a plugin's malformed snapshot fails that plugin's targets' check alone)
        entries = snapshots.read(snapshots.named)
        where = snapshots.named
        if not entries and not options.update_snapshot:
            raise SnapshotError(f"{where}: holds no target (targets is empty); nothing to check")
        for key in entries:
            if key not in registry.targets() and not options.update_snapshot:
                raise SnapshotError(f"{where}: targets.{key}: unknown target {key!r}")
    context = CheckContext(registry, snapshots)
    moved: dict[str, list[str]] = {}
    if options.update_snapshot:
        moved = update(context, targets or registry.targets().values())
    return CheckResult(
        results=tuple(run_consistency(registry, targets, context)),
        snapshot_file=str(snapshots.named) if snapshots.named else None,
        plugin_files={plugin: str(path) for plugin, path in files.items()},
        updated=options.update_snapshot,
        moved=moved,
    )
