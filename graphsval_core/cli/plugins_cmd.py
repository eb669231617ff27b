"""``graphsval plugins``: every plugin, its distribution, targets and errors."""

from __future__ import annotations

import click

from graphsval_core.cli.context import AppContext, pass_app
from graphsval_core.cli.output import echo_json
from graphsval_core.datamodel.tables import format_table


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@pass_app
def plugins(app: AppContext, as_json: bool) -> None:
    """List plugins: distribution, version, targets, and any load error."""
    registry = app.registry
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
    click.echo(
        format_table(["PLUGIN", "DISTRIBUTION", "STATUS", "TARGETS", "OPS/PREDICTORS"], rows)
    )
    if registry.problems:
        click.echo("\nProblems:")
        for problem in registry.problems:
            click.echo(f"  {problem}")
