"""Loading plugins into a registry, one invocation at a time.

A registry is built per invocation (nothing loads at import time). Each entry
point of the ``graphsval`` group is loaded inside its own guard: a plugin that
fails to import (an error, ``sys.exit``, or a KeyboardInterrupt that is no
Ctrl-C: :mod:`graphsval_core.plugins.interrupts`), declares another plugin
API major version, implements an unknown hook or registers an invalid target
is recorded as a
:class:`~graphsval_core.plugins.registry.PluginProblem` (plugin name,
distribution and version, the error) and the others keep working. Strict mode
turns any problem into :class:`PluginLoadError`, and, once loading is over,
any failing hook implementation into
:class:`~graphsval_core.plugins.registry.HookError`.
"""

from __future__ import annotations

import functools
import importlib
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from graphsval_core import PLUGIN_API_VERSION, __version__
from graphsval_core.datamodel.errors import UserInputError, warn_input
from graphsval_core.plugins import interrupts
from graphsval_core.plugins.first_party import CORE_DISTRIBUTION, is_first_party
from graphsval_core.plugins.registry import PluginInfo, Registry

ENTRY_POINT_GROUP = "graphsval"
ENV_STRICT = "GRAPHSVAL_STRICT_PLUGINS"
ENV_DISABLE_AUTOLOAD = "GRAPHSVAL_DISABLE_PLUGIN_AUTOLOAD"

#: Built-in plugins, registered through the same hooks as any other plugin.
#: Each may be blocked with ``-p no:NAME``, as in pytest.
BUILTIN_PLUGINS: dict[str, str] = {
    "builtin_ops": "graphsval_core.builtin.ops",
    "builtin_defaults": "graphsval_core.builtin.defaults",
    "builtin_reference": "graphsval_core.builtin.reference",
    "builtin_checks": "graphsval_core.builtin.checks",
}

#: The built-in plugin of the user's workspace (registered only when
#: :func:`build_registry` is given a workspace folder); ``-p no:workspace`` blocks it.
WORKSPACE_PLUGIN = "workspace"
WORKSPACE_MODULE = "graphsval_core.workspace.plugin"


def _importable(name: str) -> bool:
    """Whether module ``name`` can be found (not imported: its own import
    errors stay a plugin's problem)."""
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a parent package missing, or a bad name
        return False


class PluginLoadError(Exception):
    """Strict mode: a plugin could not be loaded or registered invalid data."""


#: The spellings of an environment flag that is on, and off (unset is off).
_ON = ("1", "true", "yes", "on")
_OFF = ("", "0", "false", "no", "off")


def _env_flag(name: str) -> bool:
    """Whether environment flag ``name`` is on. A value that is neither on
    nor off (``maybe``) is refused in one line: ``off`` had turned it on."""
    value = os.environ.get(name, "").strip().lower()
    if value not in (*_ON, *_OFF):
        raise UserInputError(
            f"{name}={os.environ[name]!r}: expected one of {', '.join(_ON)} (on) or "
            f"{', '.join(v for v in _OFF if v)} (off), or leave it unset"
        )
    return value in _ON


def _entry_points() -> Sequence[Any]:
    """The installed entry points of the ``graphsval`` group (patched in tests)."""
    from importlib.metadata import entry_points

    return list(entry_points(group=ENTRY_POINT_GROUP))


def _api_major(version: str) -> str:
    return str(version).split(".", 1)[0]


def _dist_of(ep: Any) -> tuple[str | None, str | None]:
    dist = getattr(ep, "dist", None)
    if dist is None:
        return None, None
    try:
        return dist.metadata["Name"], dist.version
    except Exception:  # a broken METADATA must not stop loading
        return None, None


def _malformed(ep: Any) -> bool:
    """Whether an entry point's value is no ``module`` or ``module:attribute``
    (a quoted value, say), which ``ep.load()`` would fail on with an
    AttributeError naming nothing."""
    pattern = getattr(ep, "pattern", None)
    return pattern is not None and pattern.match(str(ep.value)) is None


def _unique_entry_points(found: Sequence[Any], registry: Registry) -> dict[str, Any]:
    """The entry points by name. A name that two distributions use is a clash:
    a first-party distribution keeps it over a third party; two of the same
    standing both lose it. Each loser is reported (and listed by ``graphsval
    plugins``) naming both distributions."""
    by_name: dict[str, list[Any]] = {}
    for ep in found:
        by_name.setdefault(ep.name, []).append(ep)
    out: dict[str, Any] = {}
    for name, eps in by_name.items():
        if len(eps) == 1:
            out[name] = eps[0]
            continue
        first = [ep for ep in eps if is_first_party(_dist_of(ep)[0])]
        keep = first[0] if len(first) == 1 else None
        labels = " and ".join(f"{d or '?'} {v or '?'}" for d, v in map(_dist_of, eps))
        for ep in eps:
            if ep is keep:
                out[name] = ep
                continue
            dist, version = _dist_of(ep)
            loser = f"{name} ({dist or ep.value})"
            registry.infos[loser] = PluginInfo(loser, ep.value, dist, version)
            why = (
                f"{_dist_of(keep)[0]}, a first-party plugin, takes precedence"
                if keep is not None
                else "neither is loaded"
            )
            registry.record_problem(
                loser, f"entry point name {name!r} is used by {labels}; {why}: not loaded"
            )
    return out


def _register_workspace(
    registry: Registry, folder: Path, register: Callable[[str, Any, PluginInfo], None]
) -> None:
    """Register the workspace plugin of ``folder``: a built-in that is not
    first-party (its targets are the user's: never labelled inline in the
    shipped sweeps), whose registrations override every other plugin's."""
    module = importlib.import_module(WORKSPACE_MODULE)
    plugin = module.WorkspacePlugin(
        folder,
        functools.partial(registry.record_problem, WORKSPACE_PLUGIN),
        lambda: [*registry.targets(), *registry.workspace_errors],
        registry.workspace_error,
    )
    registry.overriding[WORKSPACE_PLUGIN] = plugin.label
    register(
        WORKSPACE_PLUGIN,
        plugin,
        PluginInfo(WORKSPACE_PLUGIN, WORKSPACE_MODULE, None, None, builtin=True),
    )


def build_registry(
    *,
    strict: bool | None = None,
    plugin_args: Sequence[str] = (),
    autoload: bool | None = None,
    extra_plugins: Sequence[tuple[str, Any]] = (),
    calibrated: bool = True,
    workspace: str | os.PathLike[str] | None = None,
) -> Registry:
    """Load the built-in and installed plugins and collect their registrations.

    :param strict: turn any plugin problem into :class:`PluginLoadError`
        (default: the ``GRAPHSVAL_STRICT_PLUGINS`` environment variable).
    :param plugin_args: pytest-style ``-p`` values: ``no:NAME`` blocks a plugin
        (built-in or entry point); ``NAME`` loads an entry point, or a module by
        import path, even when autoload is off.
    :param autoload: load every installed entry point (default: on unless
        ``GRAPHSVAL_DISABLE_PLUGIN_AUTOLOAD`` is set).
    :param extra_plugins: ``(name, module_or_object)`` pairs registered in-process
        (tests and embedding applications).
    :param calibrated: apply the calibration files plugins ship (False: every
        target as its datasheet spec).
    :param workspace: the user's workspace folder (see
        :mod:`graphsval_core.workspace.location`): its targets, baselines and
        calibrations are registered by the built-in ``workspace`` plugin, and
        a workspace target replaces an installed one of the same key (one
        line in ``registry.notes``). None (the default): no workspace, only
        the installed plugins; the ``graphsval`` command always passes one.
    """
    interrupts.install()  # tells the user's Ctrl-C from a plugin's KeyboardInterrupt
    if strict is None:
        strict = _env_flag(ENV_STRICT)
    if autoload is None:
        autoload = not _env_flag(ENV_DISABLE_AUTOLOAD)
    blocked = {arg[3:] for arg in plugin_args if arg.startswith("no:")}
    requested = [arg for arg in plugin_args if not arg.startswith("no:")]

    infos: dict[str, PluginInfo] = {}
    registry = Registry(infos)
    pm = registry.pm

    def register(name: str, obj: Any, info: PluginInfo) -> None:
        infos[name] = info
        if not info.builtin:
            declared = getattr(obj, "graphsval_api_version", None)
            if declared is None:
                registry.record_problem(
                    name,
                    f"declares no graphsval_api_version; this graphsval core implements "
                    f"plugin API {PLUGIN_API_VERSION}",
                )
                return
            if _api_major(declared) != _api_major(PLUGIN_API_VERSION):
                registry.record_problem(
                    name,
                    f"built for plugin API {declared}, but this graphsval core "
                    f"({__version__}) implements plugin API {PLUGIN_API_VERSION}",
                )
                return
        try:
            pm.register(obj, name=name)
        except BaseException as exc:
            if not interrupts.is_plugin_fault(exc):
                raise
            registry.record_problem(name, f"could not be registered: {interrupts.describe(exc)}")
            return
        unknown = [hc.name for hc in pm.get_hookcallers(obj) or [] if not hc.has_spec()]
        if unknown:
            registry.reject(name, f"implements unknown hook(s): {', '.join(sorted(unknown))}")
            return
        info.loaded = True

    for name, module_name in BUILTIN_PLUGINS.items():
        if name in blocked:
            continue
        module = importlib.import_module(module_name)
        register(
            name,
            module,
            PluginInfo(name, module_name, CORE_DISTRIBUTION, __version__, builtin=True),
        )

    if workspace is not None and WORKSPACE_PLUGIN not in blocked:
        _register_workspace(registry, Path(workspace), register)

    def load(name: str, info: PluginInfo, importer: Callable[[], Any]) -> None:
        """Import a plugin (a failed import is its problem), then register it."""
        infos[name] = info
        try:
            module = importer()
        except BaseException as exc:  # sys.exit at import is the plugin's fault too
            if not interrupts.is_plugin_fault(exc):
                raise
            registry.record_problem(name, f"failed to import: {interrupts.describe(exc)}")
            return
        register(name, module, info)

    eps = _unique_entry_points(_entry_points(), registry)
    for name, ep in eps.items():
        if name in BUILTIN_PLUGINS or name == WORKSPACE_PLUGIN:  # reserved, even if blocked
            dist, version = _dist_of(ep)
            loser = f"{name} ({dist or ep.value})"
            infos[loser] = PluginInfo(loser, ep.value, dist, version)
            registry.record_problem(
                loser,
                f"entry point name {name!r} is a built-in plugin's: not loaded "
                "(give the plugin a name of its own)",
            )
            continue
        if (autoload or name in requested) and name not in blocked:
            info = PluginInfo(name, ep.value, *_dist_of(ep))
            if _malformed(ep):
                infos[name] = info
                registry.record_problem(
                    name,
                    f"malformed entry point in its entry_points.txt: {name} = {ep.value} "
                    "(expected module or module:attribute, unquoted); not loaded",
                )
                continue
            load(name, info, ep.load)

    for name in requested:
        if name in eps or name in blocked or name in infos:
            continue
        if not _importable(name):  # the user's flag misspelt, not a plugin that failed
            names = sorted({*BUILTIN_PLUGINS, *eps})
            near = [n for n in names if n.lower() == name.lower()]
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            raise UserInputError(
                f"-p {name}: no installed plugin and no module of that name{hint}; plugins: "
                f"{', '.join(names)}"
            )
        load(name, PluginInfo(name, name), functools.partial(importlib.import_module, name))

    known = {*BUILTIN_PLUGINS, WORKSPACE_PLUGIN, *eps, *requested}
    known |= {name for name, _ in extra_plugins}
    for name in sorted(blocked - known):  # a misspelt block blocks nothing: said, not silent
        warn_input(  # the user's flag, not a plugin's problem: a warning even when strict
            f"-p no:{name} blocks nothing: no plugin has that name (names: "
            f"{', '.join(sorted(known))})"
        )

    for name, obj in extra_plugins:
        register(name, obj, PluginInfo(name, getattr(obj, "__name__", repr(obj))))

    registry.register_all()
    if calibrated:
        registry.apply_calibrations()
    if strict and registry.problems:
        first = registry.problems[0]
        more = len(registry.problems) - 1
        suffix = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
        raise PluginLoadError(f"strict plugin loading: {first}{suffix}")
    registry.loading_done(strict)
    return registry
