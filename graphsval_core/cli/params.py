"""Option types every command shares: finite numbers within bounds.

click's ``FloatRange`` lets ``nan`` and ``inf`` through (no comparison with
NaN is false); :class:`Seconds` refuses both, so that a time limit is always
a number of seconds.
"""

from __future__ import annotations

import math
from typing import Any

import click


class Seconds(click.FloatRange):
    """A finite number of seconds in ``[low, high]``."""

    name = "seconds"

    def __init__(self, low: float, high: float) -> None:
        super().__init__(min=low, max=high)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number of seconds", param, ctx)
        return number


#: The metavars of options that name a file or a folder.
PATH_METAVARS = ("FILE", "DIR", "CSV")


def _refuse_empty(callback: Any) -> Any:
    def check(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        values = value if isinstance(value, tuple) else (value,)
        if any(v == "" for v in values):
            raise click.BadParameter("an empty path names no file or folder", ctx, param)
        return callback(ctx, param, value) if callback is not None else value

    check.refuses_empty = True  # type: ignore[attr-defined]
    return check


def refuse_empty_paths(command: click.Command) -> click.Command:
    """Make every option of ``command`` (and of its subcommands) that names a
    file or folder (metavar FILE, DIR or CSV) refuse an empty value, a usage
    error naming the flag, instead of ignoring it or writing a default file."""
    for param in command.params:
        named = isinstance(param, click.Option) and param.metavar in PATH_METAVARS
        if named and not getattr(param.callback, "refuses_empty", False):
            param.callback = _refuse_empty(param.callback)
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            refuse_empty_paths(sub)
    return command
