"""``graphsval check``: the consistency checks (invariants) of every target,
the only checks of targets with no silicon (KPU, TPU)."""

from __future__ import annotations

from typing import Any

import click

from graphsval_core.cli.context import InputError, pass_app


@click.command()
@click.option("--hw", "hws", multiple=True, metavar="KEY", help="Only these targets.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option(
    "--update-snapshot",
    is_flag=True,
    help="Rewrite the snapshot of the checked targets' predictions first; print what moved.",
)
@click.option(
    "--snapshot",
    "snapshot_file",
    metavar="FILE",
    help="Snapshot file to compare with (default: the committed one).",
)
@click.option("-v", "--verbose", is_flag=True, help="Print every outcome, passes included.")
@pass_app
def check(
    app: Any,
    hws: tuple[str, ...],
    as_json: bool,
    update_snapshot: bool,
    snapshot_file: str | None,
    verbose: bool,
) -> None:
    """Run the consistency checks: decomposition, monotonicity, precision
    scaling, coefficient sensitivity, physical bounds, rankings, snapshot
    regression, provenance, and the plugins' own.

    Each outcome is pass, fail, expected failure (a finding, with its reason)
    or skip. Exit 0 when nothing fails (expected failures do not), 1 when a
    check fails, 2 on bad input.
    """
    from graphsval_core.consistency import snapshot as snap
    from graphsval_core.consistency.report import report_lines
    from graphsval_core.consistency.runner import run_consistency
    from graphsval_core.plugins.registry import UnknownNameError

    registry = app.registry
    try:
        targets = [registry.target(h) for h in hws] if hws else None
    except UnknownNameError as exc:
        raise click.BadParameter(str(exc), param_hint="'--hw'") from None
    moved: list[str] = []
    try:
        with snap.using(snapshot_file) as path:
            snap.read()  # a malformed file is an input error, not a failed check
            if update_snapshot:
                moved = snap.update(registry, targets or registry.targets().values())
            results = run_consistency(registry, targets)
    except snap.SnapshotError as exc:
        raise InputError(str(exc)) from None
    failed = any(r.failed for r in results)
    if as_json:
        from graphsval_core.cli.output import echo_json
        from graphsval_core.consistency.runner import SCHEMA_VERSION

        echo_json(
            {
                "schema_version": SCHEMA_VERSION,
                "passed": not failed,
                "snapshot": {"file": str(path), "updated": update_snapshot, "moved": moved},
                "targets": [r.to_dict() for r in results],
            }
        )
    else:
        if update_snapshot:
            click.echo(f"snapshot {path}: {len(moved)} change(s)")
            for line in moved:
                click.echo(f"  {line}")
        for line in report_lines(results, verbose):
            click.echo(line)
    if failed:
        raise SystemExit(1)
