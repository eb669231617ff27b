"""The optional parts of graphsval and the one line that asks for a missing one.

Validating needs only the core's light dependencies (pluggy, click, attrs,
numpy, platformdirs). The heavy libraries come with extras:

- ``graphsval[report]``: matplotlib, for the pictures of ``validate --out``
  and ``calibrate --report``;
- ``graphsval[calibrate]``: scipy, for ``graphsval calibrate``'s fit;
- each measuring plugin's ``[capture]`` extra (``graphsval-cpu[capture]``,
  ...): torch, for ``graphsval capture`` and ``capture-machine`` on its
  targets (:func:`require_plugin_extra` reads what the extra brings from the
  plugin's installed metadata).

A command checks its extras before doing any work (:func:`require`), so it
writes nothing when one is missing and says which to install in one line
(exit 2). Presence is looked up with :func:`importlib.util.find_spec`: nothing
is imported.
"""

from __future__ import annotations

import importlib.util
import re

from graphsval_core.datamodel.errors import UserInputError

#: Each extra of the core and the modules it brings.
EXTRAS: dict[str, tuple[str, ...]] = {
    "report": ("matplotlib",),
    "calibrate": ("scipy",),
}
#: Distributions whose import name is not their name with dashes as underscores.
IMPORT_NAMES = {"nvidia-ml-py": "pynvml"}


class MissingExtraError(UserInputError):
    """A command needs an optional part that is not installed (exit 2, one line)."""


def absent(modules: tuple[str, ...]) -> list[str]:
    """The ``modules`` that cannot be imported here (none is imported)."""
    out = []
    for name in modules:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):  # a parent package missing, or a broken entry
            found = False
        if not found:
            out.append(name)
    return out


def require(extra: str, what: str) -> None:
    """Raise :class:`MissingExtraError` unless the core's ``extra`` is installed.

    :param extra: a key of :data:`EXTRAS`.
    :param what: what needs it, as the message starts (``"validate --out"``).
    """
    missing = absent(EXTRAS[extra])
    if missing:
        raise MissingExtraError(
            f"{what} needs {', '.join(missing)}, which is not installed: "
            f"pip install 'graphsval[{extra}]'"
        )


def plugin_extra_modules(distribution: str, extra: str) -> list[str]:
    """The importable names of what the installed ``distribution`` requires
    under its ``extra`` (its metadata's ``Requires-Dist ...; extra == "capture"``
    lines; a distribution name's dashes read as underscores)."""
    from importlib.metadata import PackageNotFoundError, requires

    try:
        lines = requires(distribution) or []
    except PackageNotFoundError:
        return []
    out = []
    for line in lines:
        spec, _, marker = line.partition(";")
        if re.search(rf"extra\s*==\s*[\"']{re.escape(extra)}[\"']", marker):
            name = re.match(r"[A-Za-z0-9._-]+", spec.strip())
            if name:
                out.append(IMPORT_NAMES.get(name.group(0).lower(), name.group(0).replace("-", "_")))
    return out


def require_plugin_extra(what: str, distribution: str | None, extra: str = "capture") -> None:
    """Raise :class:`MissingExtraError` unless everything the plugin
    ``distribution`` requires under its ``extra`` (a measuring plugin's
    ``[capture]``: torch) is installed. A plugin with no such extra, or one
    not installed as a distribution, needs nothing."""
    if not distribution:
        return
    missing = absent(tuple(plugin_extra_modules(distribution, extra)))
    if missing:
        raise MissingExtraError(
            f"{what} needs {', '.join(missing)}, which is not installed: "
            f"pip install '{distribution}[{extra}]'"
        )
