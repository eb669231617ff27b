"""Files shipped inside the core wheel, read through importlib.resources."""

from __future__ import annotations

import os
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

SWEEPS_PACKAGE = "graphsval_core.sweeps"


def sweeps_dir() -> Traversable:
    """The folder of shipped sweep files (the data package graphsval_core.sweeps)."""
    return resources.files(SWEEPS_PACKAGE)


def sweep_files() -> list[Traversable]:
    """Every shipped sweep JSON file, sorted by name."""
    return sorted(
        (f for f in sweeps_dir().iterdir() if f.name.endswith(".json")), key=lambda f: f.name
    )


def packaged_files(package: str, folder: str, suffix: str) -> list[Traversable]:
    """Files ending in ``suffix`` in ``folder`` of an installed ``package``
    (a plugin's shipped baselines or overlays), sorted by name."""
    base = resources.files(package) / folder
    if not base.is_dir():
        return []
    return sorted((f for f in base.iterdir() if f.name.endswith(suffix)), key=lambda f: f.name)


def installed_paths() -> list[Path]:
    """The folders installed distributions live in (site-packages and the like)."""
    import site
    import sysconfig

    found = {sysconfig.get_paths()[name] for name in ("purelib", "platlib")}
    found.update(site.getsitepackages())
    found.add(site.getusersitepackages())
    return [Path(p).resolve() for p in sorted(found)]


def in_installed_package(path: Path | str) -> bool:
    """Whether ``path`` lies inside an installed distribution (site-packages),
    not in a source tree: graphsval never writes there unasked."""
    try:
        where = Path(path).resolve()
    except (OSError, RuntimeError):  # a link loop: no package lies there
        where = Path(os.path.abspath(path))
    return any(where.is_relative_to(folder) for folder in installed_paths())
