"""What every command shares: the input error (exit 2), the per-invocation
application context with its lazily built registry, the decorator that hands
it to a command, and the command group that reports plugin failures. Commands
import this module, never each other or :mod:`graphsval_core.cli.main`."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import click

# the lines that say what a command wrote name a path as every layer's errors do
from graphsval_core.datamodel.errors import one_line as one_line, shown_path as shown_path

F = TypeVar("F", bound=Callable[..., Any])

#: Exit code for a usage or input error (DESIGN.md section 8).
EXIT_USAGE = 2


class InputError(click.ClickException):
    """An input or environment error: one line on stderr, exit code 2 (a
    control character in it, a newline in a key or a file's name, escaped)."""

    exit_code = EXIT_USAGE

    def format_message(self) -> str:
        return one_line(self.message)


class AppContext:
    """Per-invocation state: options of the group, the workspace they point at
    and the lazily built registry."""

    def __init__(
        self,
        strict: bool | None,
        plugin_args: tuple[str, ...],
        workspace_option: str | None = None,
    ) -> None:
        self.strict = strict
        self.plugin_args = plugin_args
        self.workspace_option = workspace_option
        self._registry: Any = None
        self._workspace: Any = None

    @property
    def workspace(self) -> Any:
        """The workspace folder and where it came from
        (:class:`~graphsval_core.workspace.location.WorkspaceLocation`): the
        ``--workspace`` option, else ``GRAPHSVAL_WORKSPACE``, else the user's
        data directory. Nothing is created."""
        if self._workspace is None:
            from graphsval_core.workspace.location import locate_workspace, unreadable_folder

            found = locate_workspace(self.workspace_option)
            if str(found.path) == "-":  # --workspace - is a usage error; so is the variable
                raise InputError(
                    f"workspace '-' ({found.source}) is not standard input or output here: "
                    "name a folder (./- for one called '-')"
                )
            if found.path.exists() and not found.path.is_dir():
                from graphsval_core.files.outputs import special_kind

                what = special_kind(found.path) or "a file"
                raise InputError(
                    f"workspace {found.path} ({found.source}) is {what}, not a folder; "
                    "name a folder with --workspace or GRAPHSVAL_WORKSPACE"
                )
            unread = unreadable_folder(found.path)
            if unread is not None:  # never the installed target's answers in its place
                raise InputError(
                    f"workspace {unread} ({found.source}); fix its permissions or name "
                    "another folder with --workspace or GRAPHSVAL_WORKSPACE"
                )
            self._workspace = found
        return self._workspace

    @property
    def registry(self) -> Any:
        if self._registry is None:
            from graphsval_core.plugins.loader import PluginLoadError, build_registry

            try:
                registry = build_registry(
                    strict=self.strict,
                    plugin_args=self.plugin_args,
                    workspace=self.workspace.path,
                )
            except PluginLoadError as exc:
                raise InputError(str(exc)) from exc
            if registry.strict:  # any broken plugin stops a strict run, before it starts
                from graphsval_core.authoring.health import exercise
                from graphsval_core.plugins.registry import HookError

                try:
                    exercise(registry)
                except HookError as exc:
                    raise InputError(str(exc)) from exc
            self._registry = registry
        return self._registry

    def problems(self) -> list[Any]:
        """Every plugin problem of the run: those met while loading and those
        recorded since (none if no command asked for the registry)."""
        if self._registry is None:
            return []
        return list(self._registry.problems)

    def notes(self) -> list[str]:
        """What the user should know of the run that is no problem (a workspace
        target replacing an installed one), one line each."""
        if self._registry is None:
            return []
        return list(self._registry.notes)


pass_app = click.make_pass_decorator(AppContext)


@contextlib.contextmanager
def input_warnings() -> Iterator[None]:
    """Print each :class:`~graphsval_core.datamodel.errors.InputWarning` a
    command raises as one ``warning:`` line on stderr, once, as it comes;
    other warnings go their usual way."""
    from graphsval_core.datamodel.errors import InputWarning

    shown: set[str] = set()
    with warnings.catch_warnings():
        warnings.simplefilter("always", InputWarning)
        usual = warnings.showwarning

        def show(message: Any, category: Any, *args: Any, **kwargs: Any) -> None:
            if not issubclass(category, InputWarning):
                usual(message, category, *args, **kwargs)
            elif str(message) not in shown:
                shown.add(str(message))
                click.echo(f"warning: {one_line(str(message))}", err=True)

        warnings.showwarning = show
        yield


def _workspace_own(problem: Any) -> bool:
    """Whether ``problem`` is the workspace plugin's own (a file or folder of
    the workspace that is not read), which `graphsval workspace` lists."""
    from graphsval_core.workspace.plugin import PLUGIN_NAME

    return getattr(problem, "plugin", None) == PLUGIN_NAME


#: Exit code of a command stopped by the user's Ctrl-C (128 + SIGINT).
EXIT_INTERRUPTED = 130


#: What click raises for a group run with no command, to print its help
#: (click 8.2 and later; 8.1 prints the help itself).
_HELP: type[Exception] | tuple[()] = getattr(click.exceptions, "NoArgsIsHelpError", ())


class UsageLine(click.UsageError):
    """A usage error made one line by :func:`one_line_usage`."""


def one_line_usage(exc: click.UsageError, ctx: click.Context | None = None) -> click.UsageError:
    """``exc`` as one line on stderr: click prints a usage error of a command
    as its usage, a hint and the message, four lines; this keeps the message
    (it names the flag) and points at the help of the command it came from
    (``ctx``'s subcommand where click's parser gave it no context). Help
    asked for by running a group with no command (``NoArgsIsHelpError``)
    stays help; a line already made stays as it is."""
    if isinstance(exc, (_HELP, UsageLine)):
        return exc
    if exc.ctx is not None:
        where = exc.ctx.command_path
    elif ctx is not None:
        where = " ".join(filter(None, (ctx.command_path, ctx.invoked_subcommand)))
    else:
        where = "graphsval"
    message = " ".join(exc.format_message().split())  # click lists a choice over lines
    stop = "" if message.endswith((".", "?", "!", "?)")) else "."  # click's "(Did you mean ...?)"
    # without a context, click prints "Error: <message>" alone
    line = UsageLine(f"{message}{stop} See `{where} --help`.")
    line.exit_code = exc.exit_code
    return line


class Subgroup(click.Group):
    """A group of commands (``graphsval`` itself, :class:`Group`, and
    ``sweep``, ``registry``, ``plugin`` under it): a usage error of the group
    or of one of its commands is one line that points at that command's help
    (:func:`one_line_usage`), which a group one level up cannot name."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as exc:
            raise one_line_usage(exc, ctx) from None

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:
            raise one_line_usage(exc, ctx) from None


class Group(Subgroup):
    """Turns a plugin's hook failure, any bad input a workflow reports
    (:class:`~graphsval_core.datamodel.errors.UserInputError`) and any file
    or folder that cannot be read or written (an ``OSError`` no command
    caught itself) into one line and exit code 2; prints each warning of the
    user's input (:func:`input_warnings`) as it comes. At the end of a
    command, each note of the registry (a workspace target replacing an
    installed one) is one ``note:`` line on
    stderr; at the end of one that did not fail in a hook, each plugin problem
    of the run (a plugin that did not load, or a hook implementation that
    raised or answered garbage and so gave no answer) is one ``warning:``
    line on stderr; ``graphsval plugins``, which lists them itself, prints
    none, and ``graphsval workspace`` none of the workspace's own. A Ctrl-C
    that reaches it (the user's: a plugin's own KeyboardInterrupt is caught
    where the plugin is called) ends the command
    with one line and exit code 130, never the 1 of a failed validation.
    A usage error (an unknown option, a bad value of a flag) is one line too,
    as in every :class:`Subgroup` (:func:`one_line_usage`)."""

    def invoke(self, ctx: click.Context) -> Any:
        from graphsval_core.datamodel.errors import UserInputError
        from graphsval_core.plugins.registry import HookError

        failed_in_hook = False
        refused = True  # bad input or Ctrl-C: its one line, no note before it
        try:
            with input_warnings():
                result = super().invoke(ctx)  # a usage error: one line (Subgroup.invoke)
            refused = False
            return result
        except HookError as exc:
            failed_in_hook = True
            raise InputError(str(exc)) from exc
        except UserInputError as exc:
            if str(exc).startswith(("workspace target file ", "workspace calibration ")):
                failed_in_hook = True  # its one line says it all: no warning repeats it
            raise InputError(str(exc)) from exc
        except OSError as exc:  # a file or folder no command expected to fail on
            where = f"{exc.filename}: " if exc.filename else ""
            raise InputError(f"{where}{exc.strerror or exc}") from exc
        except KeyboardInterrupt:
            failed_in_hook = True  # the user stopped it: no plugin warnings after
            click.echo("\ninterrupted (Ctrl-C): graphsval stopped", err=True)
            raise SystemExit(EXIT_INTERRUPTED) from None
        except (SystemExit, click.exceptions.Exit) as exc:  # a verdict (validate's 1), not input
            refused = exc.code not in (None, 0, 1) if isinstance(exc, SystemExit) else False
            raise
        finally:
            app = ctx.obj if isinstance(ctx.obj, AppContext) else None
            for note in app.notes() if app is not None and not refused else []:
                click.echo(f"note: {one_line(note)}", err=True)
            listed = ctx.invoked_subcommand == "plugins"
            if not failed_in_hook and not listed and app is not None:
                for problem in app.problems():
                    if ctx.invoked_subcommand == "workspace" and _workspace_own(problem):
                        continue  # `graphsval workspace` shows it beside its file
                    click.echo(f"warning: {one_line(str(problem))}", err=True)
