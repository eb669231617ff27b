"""Paths as the reports show them: never an absolute path of the machine that
ran the validation. A file under the current folder is shown relative to it; a
file inside a Python package (a plugin's shipped baseline) from the package's
name on (``graphsval_cpu/baselines/x.csv``); anything else by its name under
``~`` when it lies in the home folder, else as given."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path


@lru_cache(maxsize=256)
def display_path(path: str) -> str:
    """``path`` for a report (see module doc)."""
    if not path:
        return path
    p = Path(path)
    if not p.is_absolute():
        return path
    try:
        return str(p.relative_to(Path.cwd()))
    except ValueError:
        pass
    top = _package_root(p)
    if top is not None:
        return str(p.relative_to(top.parent))
    home = Path.home()
    try:
        return str(Path("~") / p.relative_to(home))
    except ValueError:
        return path


def _package_root(path: Path) -> Path | None:
    """The outermost package folder (one with ``__init__.py``) holding ``path``."""
    top = None
    for parent in path.parents:
        if (parent / "__init__.py").is_file():
            top = parent
        elif top is not None:
            break
    return top
