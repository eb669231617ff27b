"""How the ``graphsval`` console script runs a command: the exit codes and
the one line on stderr, whatever goes wrong.

Exit code 0 success, 1 a validation or check failed, 2 a usage, input or
output error, each in one line on stderr; 130 (128 + SIGINT, as a shell
reports it) a command stopped by the user's Ctrl-C
(:class:`graphsval_core.cli.context.Group`), so that an interrupted run never
reads as a failed validation. Standard output is guarded
(:mod:`graphsval_core.cli.streams`): a reader that goes away ends no
command, and a write that fails is one line and exit code 2. A fault of
graphsval itself (a bug) is one line naming the exception and exit code 2
too, never a traceback, unless ``GRAPHSVAL_TRACEBACK=1``.
"""

from __future__ import annotations

import os
import sys

import click

from graphsval_core.cli.streams import (
    OutputError,
    final_flush,
    guard_stderr,
    guard_stdout,
    utf8_streams,
)

#: Set to 1 to see the traceback of an internal error instead of its one line.
ENV_TRACEBACK = "GRAPHSVAL_TRACEBACK"
#: Exit code of a usage, input or output error (and of an internal error).
EXIT_ERROR = 2


def run(command: click.Command, argv: list[str] | None = None) -> None:
    """Run ``command`` (the ``graphsval`` group) on ``argv`` and exit."""
    utf8_streams()
    guard_stdout()
    guard_stderr()
    code: int | str | None = 0
    try:
        command.main(args=argv, prog_name="graphsval")
    except SystemExit as exc:
        code = exc.code
    except OutputError as exc:  # raised while click itself wrote (--help, --version)
        click.echo(f"Error: {exc}", err=True)
        code = EXIT_ERROR
    except Exception as exc:
        if os.environ.get(ENV_TRACEBACK) == "1":
            raise
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        click.echo(
            f"graphsval: internal error: {type(exc).__name__}: {text[:300]} (a bug in graphsval "
            f"or a plugin; {ENV_TRACEBACK}=1 shows where)",
            err=True,
        )
        code = EXIT_ERROR
    if final_flush() and code != EXIT_ERROR:
        click.echo("Error: standard output: cannot write the output", err=True)
        code = EXIT_ERROR
    sys.exit(code)
