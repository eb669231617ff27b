"""Files shipped inside the core wheel, read through importlib.resources."""

from __future__ import annotations

from importlib import resources
from importlib.resources.abc import Traversable

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
