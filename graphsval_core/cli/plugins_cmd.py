"""``graphsval plugins``: every plugin, its distribution, targets and errors.

Before listing, every hook each plugin implements is called and every file
it ships read (:mod:`graphsval_core.authoring.health`), so a plugin that
would fail a command later shows as ``problem`` now, with the line naming it.
"""

from __future__ import annotations

import click

from graphsval_core.cli.context import AppContext, pass_app
from graphsval_core.cli.output import echo_json
from graphsval_core.datamodel.tables import format_noted_table, screen_width


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@pass_app
def plugins(app: AppContext, as_json: bool) -> None:
    """List plugins: distribution, version, targets, and any problem: one
    that failed to load is FAILED; one whose hook raised, exited or answered
    garbage, or whose shipped files do not parse (every hook but measuring is
    called to find out), is problem."""
    from graphsval_core.authoring.health import exercise

    registry = app.registry
    exercise(registry)
    if as_json:
        echo_json(
            {
                "plugins": [info.to_dict() for info in registry.plugins],
                "problems": [str(p) for p in registry.problems],
            }
        )
        return
    rows = []
    for info in registry.plugins:
        status = "FAILED" if not info.loaded else "problem" if info.errors else "ok"
        dist = f"{info.distribution} {info.version}" if info.distribution else "-"
        rows.append(
            [
                info.name,
                dist,
                status,
                ", ".join(info.targets) or "-",
                ", ".join(info.ops + info.predictors) or "-",
            ]
        )
    header = ["PLUGIN", "DISTRIBUTION", "STATUS", "TARGETS", "OPS/PREDICTORS"]
    click.echo(format_noted_table(header, rows, [""] * len(rows), screen_width()))
    if registry.problems:
        click.echo("\nProblems:")
        for problem in registry.problems:
            click.echo(f"  {problem}")  # one line each, whole (tests and scripts search them)
