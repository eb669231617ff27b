"""Option types every command shares: finite numbers within bounds.

click's ``FloatRange`` lets ``nan`` and ``inf`` through (no comparison with
NaN is false); :class:`Seconds` refuses both, so that a time limit is always
a number of seconds. Its ``IntRange`` and ``FloatRange`` take whatever
Python's ``int`` and ``float`` do, ``1_000``, digits of other scripts and
whitespace among them; :class:`Whole` and :class:`Seconds` take ASCII
digits alone (a sign, a point, an exponent), so that a seed, a count or a
time reads the same everywhere it is written down.
"""

from __future__ import annotations

import math
import os
import re
from typing import TYPE_CHECKING, Any

import click

from graphsval_core.cli.context import one_line_usage

if TYPE_CHECKING:
    from graphsval_core.datamodel.op import OpSpec

#: A whole number as graphsval writes one: ASCII digits, a sign at most.
_WHOLE = re.compile(r"[+-]?[0-9]+")
#: A decimal number as graphsval writes one: ASCII digits, a sign, a point
#: and an exponent at most (no ``_``, no ``inf``, no hexadecimal).
_DECIMAL = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")
#: The most characters a number of an option may take (a seed of 2^63 has 19).
MAX_NUMBER_CHARS = 32


def written_as(value: str, pattern: re.Pattern[str], what: str) -> str | None:
    """Why ``value`` is not a number of the kind ``pattern`` matches
    (``what`` names it), or None where it is one: too long, or not written
    in ASCII digits as that kind is. Whitespace around it is refused too."""
    if len(value) > MAX_NUMBER_CHARS:
        return f"{value[:12]!r}... ({len(value)} characters) is too long for {what}"
    if not pattern.fullmatch(value):
        return f"{value!r} is not {what} (digits 0-9 only)"
    return None


def is_whole(value: str) -> bool:
    """Whether ``value`` is a whole number as graphsval writes one."""
    return written_as(value, _WHOLE, "a whole number") is None


def is_decimal(value: str) -> bool:
    """Whether ``value`` is a decimal number as graphsval writes one."""
    return written_as(value, _DECIMAL, "a number") is None


class _Written(click.ParamType):
    """An option's number refused unless written as its kind is
    (:func:`written_as`: ``pattern``, named ``what``), before the range type
    after it in the class's bases converts it."""

    pattern: re.Pattern[str]
    what: str

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str):
            why = written_as(value, self.pattern, self.what)
            if why is not None:
                self.fail(why, param, ctx)
        return super().convert(value, param, ctx)


class Seconds(_Written, click.FloatRange):
    """A finite number of seconds in ``[low, high]``, written in ASCII digits."""

    name = "seconds"
    pattern = _DECIMAL
    what = "a number of seconds"

    def __init__(self, low: float, high: float) -> None:
        super().__init__(min=low, max=high)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        # a decimal beyond a float (1e400): named as typed, not as the range's "inf"
        if isinstance(value, str) and is_decimal(value) and not math.isfinite(float(value)):
            self.fail(f"{value!r} is not a finite number of seconds", param, ctx)
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number of seconds", param, ctx)
        return number


class Whole(_Written, click.IntRange):
    """A whole number in ``[low, high]``, written in ASCII digits."""

    pattern = _WHOLE
    what = "a whole number"

    def __init__(self, low: int, high: int) -> None:
        super().__init__(min=low, max=high)


#: The metavars of options that name a file or a folder.
PATH_METAVARS = ("FILE", "DIR", "CSV")
#: The metavars of arguments that name a file (``sweep from-config CONFIG.json``).
PATH_ARGUMENT_METAVARS = ("CONFIG.json",)


def _names_a_folder(value: str) -> bool:
    """Whether path ``value`` can only name a folder: it ends in ``/`` or its
    last part is ``.`` or ``..`` (``new/.`` would write a file ``new``)."""
    last = value.replace(os.sep, "/").rsplit("/", 1)[-1]
    return value.endswith(("/", os.sep)) or last in (".", "..")


def _refuse_empty(callback: Any) -> Any:
    def check(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        values = value if isinstance(value, tuple) else (value,)
        if any(v == "" for v in values):
            raise click.BadParameter("an empty path names no file or folder", ctx, param)
        if any(v.strip() == "" for v in values if isinstance(v, str)):
            # --out ' ': a folder named by blanks, shown as nothing in every message
            raise click.BadParameter(
                "a path of blanks names no file or folder one can see: give a name", ctx, param
            )
        if any(v == "-" for v in values):  # not a file called "-", written or read silently
            raise click.BadParameter(
                "'-' is not standard input or output here: name a file or folder "
                "(/dev/stdin to read a pipe; leave out --out where a command prints; "
                "./- for a file called '-')",
                ctx,
                param,
            )
        flag_like = next((v for v in values if v and v.startswith("-")), None)
        if flag_like is not None and isinstance(param, click.Option):
            from graphsval_core.datamodel.errors import clip, shown_path

            # --out --out: the next flag taken as the value, a file "--out" written
            raise click.BadParameter(
                f"{clip(flag_like)} looks like an option, not a path: write "
                f"{shown_path(flag_like)} if a file or folder of that name is meant",
                ctx,
                param,
            )
        if param.metavar != "DIR" and any(_names_a_folder(v) for v in values if v):
            raise click.BadParameter(  # a file "x" would be read or written for "x/"
                "ends in '/', '.' or '..', which names a folder: give a file's name", ctx, param
            )
        return callback(ctx, param, value) if callback is not None else value

    check.refuses_empty = True  # type: ignore[attr-defined]
    return check


def refuse_empty_paths(command: click.Command) -> click.Command:
    """Make every option of ``command`` (and of its subcommands) that names a
    file or folder (metavar FILE, DIR or CSV; an argument of metavar
    CONFIG.json) refuse an empty value, a usage error naming the flag,
    instead of ignoring it or writing a default file;
    and ``-``, which would name standard output or input to a user, instead
    of writing or reading a file called ``-``; an option's value starting
    with ``-`` (``--out --out``: the next flag taken for the path), instead of
    a file or folder of that name (``./-x`` names one; an argument, which
    only ``--`` lets start with ``-``, takes it); and, for a file (FILE, CSV),
    a name ending in ``/``, ``.`` or ``..``, which names a folder, instead
    of a file of the name without them."""
    for param in command.params:
        named = (isinstance(param, click.Option) and param.metavar in PATH_METAVARS) or (
            isinstance(param, click.Argument) and param.metavar in PATH_ARGUMENT_METAVARS
        )
        if named and not getattr(param.callback, "refuses_empty", False):
            param.callback = _refuse_empty(param.callback)
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            refuse_empty_paths(sub)
    return command


def _single_options(command: click.Command) -> dict[str, click.Option]:
    """Each spelling (``--shape``, ``-s``) of the options of ``command`` that
    keep one value: not repeatable, not a count, not a flag."""
    out: dict[str, click.Option] = {}
    for param in command.params:
        if isinstance(param, click.Option) and not (param.multiple or param.count or param.is_flag):
            for spelling in param.opts:
                out[spelling] = param
    return out


def _flag_pairs(command: click.Command) -> dict[str, click.Option]:
    """Each spelling of the on/off flags of ``command`` (``--loo/--no-loo``)."""
    out: dict[str, click.Option] = {}
    for param in command.params:
        if isinstance(param, click.Option) and param.is_flag and param.secondary_opts:
            for spelling in (*param.opts, *param.secondary_opts):
                out[spelling] = param
    return out


def repeated_option(
    args: list[str],
    single: dict[str, click.Option],
    stop: frozenset[str] = frozenset(),
    pairs: dict[str, click.Option] | None = None,
) -> str | None:
    """The first option of ``single`` that ``args`` give twice, as a message
    naming it and both values, or the first on/off flag of ``pairs`` given
    both ways (None: neither happens). Parsing stops at ``--`` and at a word
    of ``stop`` (a group's subcommand, whose own options follow);
    ``--name=value`` counts as the option."""
    seen: dict[str, str] = {}
    flags: dict[str, str] = {}
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--" or arg in stop:
            break
        name, eq, inline = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        flag = (pairs or {}).get(arg)
        if flag is not None:
            key = flag.name or arg
            on = arg in flag.opts
            if key in flags and (flags[key] in flag.opts) != on:
                return f"{flags[key]} and {arg} contradict each other: give one of them"
            flags[key] = arg
            i += 1
            continue
        param = single.get(name)
        if param is None:
            i += 1
            continue
        value = inline if eq else (args[i + 1] if i + 1 < len(args) else "")
        key = param.name or name
        if key in seen:
            return (
                f"{name} is given twice ({seen[key]!r} and {value!r}); it takes one value: "
                "give it once"
            )
        seen[key] = value
        i += 1 if eq else 2
    return None


def refuse_repeated_options(command: click.Command) -> click.Command:
    """Make each command (and each subcommand) refuse an option that keeps one
    value given twice, a usage error naming it, instead of keeping the last
    (``predict --shape 8x8x8 --shape 16x16x16`` predicted one shape), and an
    on/off flag given both ways (``calibrate --loo --no-loo`` kept the last)."""
    if getattr(command, "refuses_repeats", False):
        return command
    stop: frozenset[str] = frozenset()
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            refuse_repeated_options(sub)
        stop = frozenset(command.list_commands(click.Context(command)))
    parse = command.parse_args
    single = _single_options(command)
    pairs = _flag_pairs(command)

    def parse_args(ctx: click.Context, args: list[str]) -> list[str]:
        problem = repeated_option(list(args), single, stop, pairs)
        if problem:  # one line, as every usage error (the root's own is raised here)
            raise one_line_usage(click.UsageError(problem, ctx))
        return parse(ctx, args)

    command.parse_args = parse_args  # type: ignore[method-assign]
    command.refuses_repeats = True  # type: ignore[attr-defined]
    return command


def refuse_unknown_dtype(dtype: str) -> None:
    """A ``--dtype`` graphsval does not know is a bad parameter, with the
    known one it differs from only in case, if any (``FP32``)."""
    from graphsval_core.datamodel.dtypes import KNOWN_DTYPES
    from graphsval_core.datamodel.errors import clip

    if dtype in KNOWN_DTYPES:
        return
    close = [d for d in KNOWN_DTYPES if d.lower() == dtype.lower()]
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise click.BadParameter(
        f"unknown dtype {clip(dtype)}{hint}; one of {', '.join(KNOWN_DTYPES)}",
        param_hint="'--dtype'",
    )


def shape_flag(op_spec: OpSpec, text: str) -> tuple[int, ...]:
    """The dims of ``--shape`` ``text`` for ``op_spec``, read as a shape is
    everywhere (a baseline's shape column, a shapes file): spaces around the
    text or a dim, and ``X`` for ``x``, are taken (``' 16X16x16'`` is
    16x16x16); anything else malformed is a bad parameter naming the flag.
    explain, predict and registry lookup read their ``--shape`` by it."""
    from graphsval_core.datamodel.op import ShapeError

    try:
        return op_spec.parse_shape(text)
    except ShapeError as exc:
        raise click.BadParameter(str(exc), param_hint="'--shape'") from None
