"""The ``graphsval`` command group: global options and the commands.

The registry of plugins is built lazily, the first time a command asks for it,
so ``graphsval --help`` and ``--version`` load no plugin and import no torch.
"""

from __future__ import annotations

import sys

import click

from graphsval_core import __version__
from graphsval_core.cli.context import AppContext, Group
from graphsval_core.cli.params import refuse_empty_paths, refuse_repeated_options


def _plugin_names(values: tuple[str, ...]) -> tuple[str, ...]:
    """``-p`` values, each naming a plugin: ``-p ''`` and ``-p no:`` name none
    (a usage error, not a plugin that "failed to import")."""
    for value in values:
        name = value.removeprefix("no:")
        if not name.strip():
            raise click.BadParameter(
                f"{value!r} names no plugin: give -p NAME or -p no:NAME", param_hint="'-p'"
            )
        head, colon, rest = value.partition(":")
        if colon and head.strip().lower() == "no" and head != "no":  # NO:cpu, No:cpu, ' no:cpu'
            if not rest.strip():
                raise click.BadParameter(
                    f"{value!r} names no plugin: give -p NAME or -p no:NAME", param_hint="'-p'"
                )
            raise click.BadParameter(
                f"{value!r}: a plugin is blocked as no:NAME exactly (lower case, no blanks): "
                f"give -p no:{rest.strip()}",
                param_hint="'-p'",
            )
        if name != name.strip():  # 'no: cpu' blocked a plugin named ' cpu': nothing
            fixed = ("no:" if value.startswith("no:") else "") + name.strip()
            raise click.BadParameter(
                f"{value!r}: a plugin's name holds no blanks around it: give -p {fixed}",
                param_hint="'-p'",
            )
    blocked = {v.removeprefix("no:") for v in values if v.startswith("no:")}
    both = sorted(blocked & {v for v in values if not v.startswith("no:")})
    if both:  # it was blocked, silently
        raise click.BadParameter(
            f"-p {both[0]} and -p no:{both[0]} both given: load it or block it", param_hint="'-p'"
        )
    return values


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="graphsval")
@click.option(
    "--strict-plugins",
    is_flag=True,
    default=None,
    help="Fail when any plugin fails to load or registers invalid data "
    "(also GRAPHSVAL_STRICT_PLUGINS=1).",
)
@click.option(
    "-p",
    "plugin_args",
    multiple=True,
    metavar="NAME",
    callback=lambda _ctx, _param, values: _plugin_names(values),
    help="Load plugin NAME even with autoload off, or block it with no:NAME (as in pytest). "
    "GRAPHSVAL_DISABLE_PLUGIN_AUTOLOAD=1 turns autoload off.",
)
@click.option(
    "--workspace",
    "workspace",
    metavar="DIR",
    help="The workspace: your own targets, captures and calibrations, found by every "
    "command (default: GRAPHSVAL_WORKSPACE, else your user data directory; "
    "`graphsval workspace` shows it).",
)
@click.pass_context
def cli(
    ctx: click.Context,
    strict_plugins: bool | None,
    plugin_args: tuple[str, ...],
    workspace: str | None,
) -> None:
    """graphsval: validate analytical performance and energy models of DNN
    operators against ground truth captured on real silicon.

    Every hardware target comes from a plugin; `graphsval plugins` lists them.
    Your own machine's targets, captures and calibrations live in a workspace
    (`graphsval workspace`).
    """
    ctx.obj = AppContext(strict_plugins, plugin_args, workspace)


#: Every command: ``name -> (module, attribute, the first paragraph of its
#: help)``. A command's module is imported only when the command runs, so
#: ``graphsval --help`` imports none (tests/cli/test_cli.py holds each first
#: paragraph to its command's docstring).
COMMANDS: dict[str, tuple[str, str, str]] = {
    "calibrate": (
        "graphsval_core.cli.calibrate_cmd",
        "calibrate",
        "Fit launch overhead, compute and tier fractions, shared-tier capacity, first-touch "
        "cost and energy coefficients from calibration rows, and write a calibration file the"
        " target's plugin can ship.",
    ),
    "capture": (
        "graphsval_core.cli.capture_cmd",
        "capture",
        "Capture ground truth for a sweep on this machine, at the noise floor and resumably.",
    ),
    "capture-machine": (
        "graphsval_core.cli.capture_machine_cmd",
        "capture_machine",
        "Capture this machine into the workspace and calibrate it.",
    ),
    "check": (
        "graphsval_core.cli.check_cmd",
        "check",
        "Run the consistency checks: decomposition, monotonicity, precision scaling, "
        "coefficient sensitivity, physical bounds, rankings, snapshot regression, provenance,"
        " and the plugins' own.",
    ),
    "ci-matrix": (
        "graphsval_core.cli.ci_matrix_cmd",
        "ci_matrix",
        "The installed plugins as a CI matrix: an include list of plugin, distribution, "
        "source folder (relative to the current folder; - when it lies outside it or the "
        "plugin came from an index), targets, ops, and whether it needs hardware or torch "
        "(.github/workflows/plugins.yml runs one job per entry from the repository's root).",
    ),
    "explain": (
        "graphsval_core.cli.predict_cmds",
        "explain",
        "Predict one shape and explain the prediction: the tile and the tier it lives in, the"
        " tier it streams from, memory and compute time, the verdict.",
    ),
    "plugin": (
        "graphsval_core.cli.plugin_cmd",
        "plugin",
        "Tools for plugin authors (docs/writing-a-plugin.md).",
    ),
    "plugins": (
        "graphsval_core.cli.plugins_cmd",
        "plugins",
        "List plugins: distribution, version, targets, and any problem: one that failed to "
        "load is FAILED; one whose hook raised, exited or answered garbage, or whose shipped "
        "files do not parse (every hook but measuring is called to find out), is problem.",
    ),
    "predict": (
        "graphsval_core.cli.predict_cmds",
        "predict",
        "Predict latency, energy and regime for one shape, a file of shapes, or a sweep.",
    ),
    "registry": (
        "graphsval_core.cli.registry_cmd",
        "registry",
        "Look up measured ground truth in the installed and workspace (or given) baselines.",
    ),
    "sweep": (
        "graphsval_core.cli.sweep_cmds",
        "sweep",
        "Frozen calibration and validation shape sets, and their regime labels.",
    ),
    "targets": (
        "graphsval_core.cli.targets_cmd",
        "targets",
        "List installed targets: family, plugin, ground truth, dtypes, tiers and whether the "
        "target's measurer can run on this machine.",
    ),
    "validate": (
        "graphsval_core.cli.validate_cmd",
        "validate",
        "Compare predictions with baselines shape by shape; for every failing cell, say which"
        " hardware assumption drifted.",
    ),
    "workspace": (
        "graphsval_core.cli.workspace_cmd",
        "workspace",
        "Show the workspace: its folder and where that came from (--workspace, "
        "GRAPHSVAL_WORKSPACE, or the user data directory), its targets, baselines (rows per "
        'file) and calibrations, and under "not read" every other file or folder in it and '
        "in those parts (a .bak copy, a name with no extension, a hidden .x.csv), with why no "
        "command reads it.",
    ),
}


def _short_help(text: str, limit: int) -> str:
    """The first sentence of ``text``, cut at a word to ``limit`` characters
    with ``...`` where it is longer (as click's own listing of commands)."""
    sentence = text.split(". ", 1)[0].rstrip(".")
    if len(sentence) <= limit:
        return sentence + "."
    return sentence[: max(limit - 3, 1)].rsplit(" ", 1)[0].rstrip(",;:") + "..."


def _lazy_group(group: click.Group) -> None:
    """Make ``group`` find its commands in :data:`COMMANDS`, importing a
    command's module only when it is asked for by name."""
    import importlib

    def list_commands(ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        module, attribute, _ = COMMANDS[name]
        command: click.Command = getattr(importlib.import_module(module), attribute)
        return refuse_repeated_options(refuse_empty_paths(command))

    def format_commands(ctx: click.Context, formatter: click.HelpFormatter) -> None:
        limit = formatter.width - 6 - max(len(name) for name in COMMANDS)
        rows = [(name, _short_help(COMMANDS[name][2], limit)) for name in COMMANDS]
        with formatter.section("Commands"):
            formatter.write_dl(sorted(rows))

    group.list_commands = list_commands  # type: ignore[method-assign]
    group.get_command = get_command  # type: ignore[method-assign]
    group.format_commands = format_commands  # type: ignore[method-assign]


_lazy_group(cli)
refuse_empty_paths(cli)  # --workspace '' (the commands: as each is loaded)
refuse_repeated_options(cli)  # --workspace A --workspace B (likewise)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: exit codes and error lines as
    :func:`graphsval_core.cli.entry.run` sets them."""
    from graphsval_core.cli.entry import run

    run(cli, argv)


if __name__ == "__main__":  # pragma: no cover
    main(sys.argv[1:])
