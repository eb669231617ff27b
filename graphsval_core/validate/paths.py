"""Paths as the reports show them: never an absolute path of the machine that
ran the validation. A file under the current folder is shown relative to it; a
file inside a Python package (a plugin's shipped baseline) from the package's
name on (``graphsval_cpu/baselines/x.csv``); anything else by its name under
``~`` when it lies in the home folder, else as given.

A report read by people (text, ``report.md``, ``report.html``) and
``records.csv``, which has no escapes of its own, show a control character of
a file's name (an escape sequence, a newline) as Python writes it (``\\x1b``,
:func:`~graphsval_core.datamodel.errors.one_line`): :func:`display_path`.
JSON (``report.json``, ``explain --json``) keeps the name as it is
(:func:`report_path`): its encoder writes such a character as ``\\u001b``,
so the file stays pure ASCII and the name exact."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from graphsval_core.datamodel.errors import one_line


@lru_cache(maxsize=256)
def display_path(path: str) -> str:
    """``path`` for a report people read, or a CSV (see module doc): as
    :func:`report_path` gives it, each control character escaped."""
    return one_line(report_path(path))


@lru_cache(maxsize=256)
def report_path(path: str) -> str:
    """``path`` for a JSON report (see module doc): never absolute where a
    shorter name says it, its characters as they are."""
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
