"""``graphsval plugin new NAME``: a working third-party plugin package to start from.

The package it writes installs as is (``pip install -e graphsval-NAME``), shows
its placeholder target in ``graphsval targets`` and passes its own tests (the
conformance class of :mod:`graphsval_core.testing`). The templates live in
:mod:`graphsval_core.authoring.templates`.
"""

from __future__ import annotations

import importlib.util
import re
import types
from pathlib import Path

from attrs import frozen

from graphsval_core import PLUGIN_API_VERSION, __version__, hookimpl
from graphsval_core.datamodel.errors import UserInputError
from graphsval_core.plugins.first_party import CORE_DISTRIBUTION, FIRST_PARTY_DISTRIBUTIONS
from graphsval_core.plugins.loader import BUILTIN_PLUGINS

#: Plugin names: lowercase words joined by single underscores, starting with a letter.
NAME_RE = re.compile(r"[a-z][a-z0-9]*(_[a-z0-9]+)*")
MAX_NAME_LENGTH = 32
#: Names graphsval itself uses: the core package, its built-in plugins and the
#: first-party plugins (``graphsval-cpu`` is ``cpu``).
RESERVED = frozenset(
    {
        "core",
        *BUILTIN_PLUGINS,
        *(d.removeprefix(f"{CORE_DISTRIBUTION}-") for d in FIRST_PARTY_DISTRIBUTIONS),
    }
)


class ScaffoldError(UserInputError):
    """The name is invalid or the folder exists; the message is one line."""


@frozen
class PluginNames:
    """Every name derived from the plugin name ``acme``."""

    name: str

    @property
    def distribution(self) -> str:
        """``graphsval-acme`` (also the folder's name)."""
        return "graphsval-" + self.name.replace("_", "-")

    @property
    def package(self) -> str:
        """``graphsval_acme``."""
        return f"graphsval_{self.name}"

    @property
    def target_key(self) -> str:
        """``acme_dev1``: the placeholder target."""
        return f"{self.name}_dev1"

    def substitutions(self) -> dict[str, str]:
        major, minor = (int(x) for x in __version__.split(".")[:2])
        upper = f"{major + 1}.0" if major else f"0.{minor + 1}"
        return {
            "name": self.name,
            "distribution": self.distribution,
            "package": self.package,
            "target_key": self.target_key,
            "class_name": "".join(w.capitalize() for w in self.name.split("_")),
            "api_version": PLUGIN_API_VERSION,
            "core_requirement": f"graphsval>={major}.{minor},<{upper}",
            # the conformance class renders every report: report.html's pictures
            "core_report_requirement": f"graphsval[report]>={major}.{minor},<{upper}",
        }


def check_name(name: str) -> PluginNames:
    """The names of plugin ``name``; :class:`ScaffoldError` when it is unusable."""
    if not NAME_RE.fullmatch(name) or len(name) > MAX_NAME_LENGTH:
        raise ScaffoldError(
            f"invalid plugin name {name!r}: use lowercase letters and digits in words joined "
            f"by single underscores, starting with a letter, at most {MAX_NAME_LENGTH} "
            f"characters (e.g. acme or acme_npu)"
        )
    if name in RESERVED:
        raise ScaffoldError(f"plugin name {name!r} is taken by graphsval itself; pick another")
    return PluginNames(name)


def render(names: PluginNames) -> dict[str, str]:
    """Relative path -> text of every templated file."""
    from string import Template

    from graphsval_core.authoring.templates import FILES

    subs = names.substitutions()
    return {
        Template(path).substitute(subs): Template(text).substitute(subs)
        for path, text in FILES.items()
    }


def _load_targets(path: Path, names: PluginNames) -> list[object]:
    """The targets defined by the scaffold's ``targets.py`` (loaded from its file)."""
    spec = importlib.util.spec_from_file_location(f"_graphsval_scaffold_{names.name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return list(module.targets())


def write_overlay(folder: Path, names: PluginNames) -> Path:
    """Label the placeholder target in the shipped sweeps as ``graphsval sweep
    label --hw KEY --out FILE`` does, with the package's targets registered in-process."""
    from graphsval_core.plugins.loader import build_registry
    from graphsval_core.sweep.labels import load_shipped, overlay_for, write_overlay as write

    package = folder / names.package
    targets = _load_targets(package / "targets.py", names)
    plugin = types.ModuleType(f"{names.package}_scaffold")
    plugin.graphsval_api_version = PLUGIN_API_VERSION  # type: ignore[attr-defined]
    plugin.graphsval_register_targets = hookimpl(lambda: targets)  # type: ignore[attr-defined]
    registry = build_registry(
        strict=True, autoload=False, extra_plugins=[(names.name, plugin)], calibrated=False
    )
    sweeps = load_shipped(registry, overlays=False)
    out = package / "sweep_labels.json"
    write(overlay_for(registry, sweeps, [t.key for t in targets]), out)  # type: ignore[attr-defined]
    return out


def scaffold(name: str, parent: str | Path = ".") -> Path:
    """Write plugin ``name`` into ``parent/graphsval-NAME``; returns the folder.

    Refuses to overwrite an existing folder.
    """
    names = check_name(name)
    folder = Path(parent) / names.distribution
    if folder.exists():
        raise ScaffoldError(f"{folder} already exists; refusing to overwrite it")
    files = render(names)
    try:
        for relative, text in files.items():
            path = folder / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        write_overlay(folder, names)
    except OSError as exc:
        raise ScaffoldError(f"cannot write {folder}: {exc.strerror or exc}") from None
    return folder
