"""``graphsval ci-matrix``: the installed plugins and their targets as a CI matrix."""

from __future__ import annotations

import click

from graphsval_core.cli.context import AppContext, one_line, pass_app
from graphsval_core.cli.output import echo_json
from graphsval_core.datamodel.tables import format_noted_table, screen_width, wrap_line


@click.command("ci-matrix")
@click.option("--json", "as_json", is_flag=True, help="Print the matrix as JSON.")
@pass_app
def ci_matrix(app: AppContext, as_json: bool) -> None:
    """The installed plugins as a CI matrix: an include list of plugin,
    distribution, source folder (relative to the current folder; - when it
    lies outside it or the plugin came from an index), targets, ops, and
    whether it needs hardware or torch (.github/workflows/plugins.yml runs
    one job per entry from the repository's root)."""
    from graphsval_core.authoring.ci_matrix import ci_matrix as build

    registry = app.registry
    for problem in registry.problems:
        click.echo(f"warning: {one_line(str(problem))}", err=True)
    matrix = build(registry)
    if as_json:
        echo_json(matrix)
        return
    rows = [
        [
            e["plugin"],
            e["distribution"] or "-",
            e["source"] or "-",
            ", ".join(e["targets"]) or "-",
            ", ".join(e["ops"]) or "-",
            "yes" if e["needs_hardware"] else "no",
            "yes" if e["needs_torch"] else "no",
        ]
        for e in matrix["include"]
    ]
    headers = ["PLUGIN", "DISTRIBUTION", "SOURCE", "TARGETS", "OPS", "HARDWARE", "TORCH"]
    width = screen_width()
    table = format_noted_table(headers, rows, [""] * len(rows), width)
    if max(map(len, table.splitlines())) <= width:
        click.echo(table)
        return
    # too narrow for the columns' longest words: a block per plugin, wrapped
    for plugin, distribution, source, targets, ops, hardware, torch in rows:
        lines = [
            f"{plugin}: {distribution}"
            + (f", from {source}" if source != "-" else "")
            + f"; needs hardware: {hardware}, torch: {torch}",
            f"  targets: {targets}",
            f"  ops: {ops}",
        ]
        click.echo("\n".join(part for line in lines for part in wrap_line(line, width)))
