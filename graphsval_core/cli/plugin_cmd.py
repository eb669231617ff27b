"""``graphsval plugin``: tools for plugin authors (``plugin new NAME``)."""

from __future__ import annotations

import click

from graphsval_core.cli.context import InputError, Subgroup, shown_path
from graphsval_core.datamodel.errors import shell_path


@click.group(cls=Subgroup)
def plugin() -> None:
    """Tools for plugin authors (docs/writing-a-plugin.md)."""


@plugin.command()
@click.argument("name")
@click.option(
    "--dir",
    "parent",
    default=".",
    show_default=True,
    metavar="DIR",
    help="Where to create the graphsval-NAME folder.",
)
def new(name: str, parent: str) -> None:
    """Write a working plugin package, graphsval-NAME: entry point, a target spec
    with provenance on every number, a measurer skeleton, an empty baselines
    folder, a sweep-label overlay and tests using the conformance kit."""
    from graphsval_core.authoring.scaffold import ScaffoldError, scaffold

    try:
        folder = scaffold(name, parent)
    except ScaffoldError as exc:
        raise InputError(str(exc)) from None
    package = f"graphsval_{name}"
    labels = shell_path(folder / package / "sweep_labels.json")
    click.echo(f"wrote {shown_path(folder)}")
    then = f"# then: graphsval targets --hw {name}_dev1"
    click.echo(f"  pip install -e {shell_path(folder)}    {then}")
    click.echo(f"  python -m pytest {shell_path(folder / 'tests')}")
    click.echo(f"  edit {shell_path(folder / package / 'targets.py')}, then relabel:")
    click.echo(f"  graphsval sweep label --hw {name}_dev1 --out {labels}")
