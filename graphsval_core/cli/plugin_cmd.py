"""``graphsval plugin``: tools for plugin authors (``plugin new NAME``)."""

from __future__ import annotations

from pathlib import Path

import click

from graphsval_core.cli.context import InputError, Subgroup, shown_path


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
    import shlex

    package = f"graphsval_{name}"

    def shell(path: Path) -> str:
        """``path`` as one argument of a command to paste: shell-quoted (a
        folder with a space), with ``./`` before a relative one that starts
        with ``-`` (``pip install -e -pl2/...`` reads it as options), and
        each control character escaped as ``\\x1b`` (:func:`shown_path`):
        ``shlex.quote`` quotes an escape byte, it would still reach the
        terminal raw. A path holding one is then not literally the folder
        written (inside quotes a shell reads ``\\x1b`` as four characters):
        shown safely, it is no longer pasteable as it stands."""
        return shlex.quote(shown_path(path))

    labels = shell(folder / package / "sweep_labels.json")
    click.echo(f"wrote {shown_path(folder)}")
    click.echo(f"  pip install -e {shell(folder)}    # then: graphsval targets --hw {name}_dev1")
    click.echo(f"  python -m pytest {shell(folder / 'tests')}")
    click.echo(f"  edit {shell(folder / package / 'targets.py')}, then relabel:")
    click.echo(f"  graphsval sweep label --hw {name}_dev1 --out {labels}")
