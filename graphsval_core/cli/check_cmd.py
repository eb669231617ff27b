"""``graphsval check``: the consistency checks (invariants) of every target,
the only checks of targets with no silicon (KPU, TPU). Parses options, runs
:func:`graphsval_core.consistency.workflow.check` and renders its result."""

from __future__ import annotations

import click

from graphsval_core.cli.context import AppContext, pass_app, shown_path


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
    help="Snapshot file to compare with (default: each plugin's own).",
)
@click.option("-v", "--verbose", is_flag=True, help="Print every outcome, passes included.")
@pass_app
def check(
    app: AppContext,
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
    from graphsval_core.consistency.report import report_lines
    from graphsval_core.consistency.runner import SCHEMA_VERSION
    from graphsval_core.consistency.workflow import CheckOptions, check as run
    from graphsval_core.plugins.registry import UnknownNameError

    options = CheckOptions(hws=hws, update_snapshot=update_snapshot, snapshot_file=snapshot_file)
    try:
        result = run(app.registry, options)
    except UnknownNameError as exc:
        raise click.BadParameter(str(exc), param_hint="'--hw'") from None
    if as_json:
        from graphsval_core.cli.output import echo_json

        moved = [line for lines in result.moved.values() for line in lines]
        echo_json(
            {
                "schema_version": SCHEMA_VERSION,
                "passed": not result.failed,
                "snapshot": {
                    "file": result.snapshot_file,
                    "files": result.plugin_files,
                    "updated": result.updated,
                    "moved": moved,
                },
                "targets": [r.to_dict() for r in result.results],
            }
        )
    else:
        for path, lines in result.moved.items():
            click.echo(f"snapshot {shown_path(path)}: {len(lines)} change(s)")
            for line in lines:
                click.echo(f"  {line}")
        from graphsval_core.datamodel.tables import screen_width, wrap_line

        width = screen_width()
        for line in report_lines(list(result.results), verbose):
            click.echo("\n".join(wrap_line(line, width)))
    if result.failed:
        raise SystemExit(1)
