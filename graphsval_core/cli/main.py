"""The ``graphsval`` command group: global options and the commands.

The registry of plugins is built lazily, the first time a command asks for it,
so ``graphsval --help`` and ``--version`` load no plugin and import no torch.
"""

from __future__ import annotations

import sys

import click

from graphsval_core import __version__
from graphsval_core.cli.context import AppContext, Group


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


def _register_commands() -> None:
    from graphsval_core.cli import (
        calibrate_cmd,
        capture_cmd,
        capture_machine_cmd,
        check_cmd,
        ci_matrix_cmd,
        plugin_cmd,
        plugins_cmd,
        predict_cmds,
        registry_cmd,
        sweep_cmds,
        targets_cmd,
        validate_cmd,
        workspace_cmd,
    )

    cli.add_command(plugins_cmd.plugins)
    cli.add_command(targets_cmd.targets)
    cli.add_command(predict_cmds.explain)
    cli.add_command(predict_cmds.predict)
    cli.add_command(sweep_cmds.sweep)
    cli.add_command(capture_cmd.capture)
    cli.add_command(capture_machine_cmd.capture_machine)
    cli.add_command(registry_cmd.registry)
    cli.add_command(validate_cmd.validate)
    cli.add_command(check_cmd.check)
    cli.add_command(calibrate_cmd.calibrate)
    cli.add_command(plugin_cmd.plugin)
    cli.add_command(ci_matrix_cmd.ci_matrix)
    cli.add_command(workspace_cmd.workspace)


_register_commands()


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    cli.main(args=argv, prog_name="graphsval")


if __name__ == "__main__":  # pragma: no cover
    main(sys.argv[1:])
