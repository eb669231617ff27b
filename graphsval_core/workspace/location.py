"""Where the workspace is, and where each of its files lies.

The workspace holds what a user made on their own machine: the snapshot
target specs of their captures, the baselines captured, and the calibration
files fitted on them. Every command finds it, exactly as it finds what an
installed plugin ships; nothing is ever written into an installed package.

Its layout mirrors a plugin package's, so a workspace can later be promoted
to a plugin by copying its folders into one::

    targets/<key>.target.json
    baselines/<key>_<op>.<purpose>.csv
    baselines/recapture/<key>_<op>.validation.csv
    calibration/<key>.calibration.json

The folder is found, in this order: ``--workspace DIR``; the environment
variable ``GRAPHSVAL_WORKSPACE``; the user's data directory (platformdirs'
``user_data_dir("graphsval")``, or where platformdirs is not installed
``$XDG_DATA_HOME/graphsval``, else ``~/.local/share/graphsval``). Reading
never creates it: only a command that writes into it does
(:func:`ensure_parent`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from attrs import frozen

from graphsval_core.datamodel.errors import UserInputError
from graphsval_core.files.baseline import (
    RECAPTURE_DIR as RECAPTURE_DIR,  # the layout's
    recapture_path,
)
from graphsval_core.files.outputs import nearest_there

#: The environment variable naming the workspace folder.
ENV_WORKSPACE = "GRAPHSVAL_WORKSPACE"
#: The application name of the user data directory.
APP_NAME = "graphsval"

TARGETS_DIR = "targets"
BASELINES_DIR = "baselines"
CALIBRATION_DIR = "calibration"
TARGET_SUFFIX = ".target.json"
BASELINE_SUFFIX = ".csv"
CALIBRATION_SUFFIX = ".calibration.json"

#: Where a workspace folder came from (:attr:`WorkspaceLocation.source`).
FROM_FLAG = "--workspace"
FROM_ENV = ENV_WORKSPACE
FROM_USER_DATA = "user data dir"


@frozen
class WorkspaceLocation:
    """The workspace folder and where it came from (:data:`FROM_FLAG`,
    :data:`FROM_ENV` or :data:`FROM_USER_DATA`)."""

    path: Path
    source: str


def user_data_dir() -> Path:
    """The user's data directory for graphsval: platformdirs' answer, or the
    XDG one where platformdirs is not installed."""
    try:
        import platformdirs
    except ImportError:
        xdg = os.environ.get("XDG_DATA_HOME", "").strip()
        base = Path(xdg) if xdg else Path.home() / ".local" / "share"
        return base / APP_NAME
    return Path(platformdirs.user_data_dir(APP_NAME))


def locate_workspace(explicit: str | os.PathLike[str] | None = None) -> WorkspaceLocation:
    """The workspace folder and where it came from: ``explicit`` (the
    ``--workspace`` option), else ``GRAPHSVAL_WORKSPACE``, else the user's data
    directory. Nothing is created."""
    if explicit is not None and str(explicit).strip():
        return WorkspaceLocation(Path(explicit).expanduser(), FROM_FLAG)
    env = os.environ.get(ENV_WORKSPACE, "").strip()
    if env:
        return WorkspaceLocation(Path(env).expanduser(), FROM_ENV)
    return WorkspaceLocation(user_data_dir(), FROM_USER_DATA)


def unreadable_folder(ws: Path) -> str | None:
    """Why the workspace ``ws`` cannot be read: it, or its ``targets``,
    ``calibration``, ``baselines`` or ``baselines/recapture`` folder, is a
    folder that cannot be listed or searched (no read or no search
    permission: its names listed, its files not opened), told as
    ``<folder>: cannot be read (<reason>)``; None when each can be, or is
    absent. Every command stops on it: a target or calibration it could not
    list would be replaced by the installed one's answers in silence."""
    for folder in (
        ws,
        ws / TARGETS_DIR,
        ws / CALIBRATION_DIR,
        ws / BASELINES_DIR,
        ws / BASELINES_DIR / RECAPTURE_DIR,
    ):
        if not folder.is_dir():
            continue
        try:
            names = os.listdir(folder)
            if names:  # listed but not searched (no x bit): its files cannot be opened
                os.stat(folder / names[0], follow_symlinks=False)
        except OSError as exc:
            return f"{folder}: cannot be read ({exc.strerror or exc})"
    return None


def workspace_dir(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The workspace folder (:func:`locate_workspace`'s path). Nothing is created."""
    return locate_workspace(explicit).path


def target_path(ws: str | os.PathLike[str], key: str) -> Path:
    """``targets/<key>.target.json`` of workspace ``ws``."""
    return Path(ws) / TARGETS_DIR / f"{key}{TARGET_SUFFIX}"


def baseline_path(
    ws: str | os.PathLike[str], key: str, op: str, purpose: str, recapture: bool = False
) -> Path:
    """``baselines/<key>_<op>.<purpose>.csv`` of workspace ``ws``; a recapture
    lies in ``baselines/recapture/`` under the same name, where validate pairs
    it with the baseline of the same name."""
    path = Path(ws) / BASELINES_DIR / f"{key}_{op}.{purpose}{BASELINE_SUFFIX}"
    return recapture_path(path) if recapture else path


def calibration_path(ws: str | os.PathLike[str], key: str) -> Path:
    """``calibration/<key>.calibration.json`` of workspace ``ws``."""
    return Path(ws) / CALIBRATION_DIR / f"{key}{CALIBRATION_SUFFIX}"


def ensure_parent(path: Path) -> Path:
    """Create the folders above ``path`` (the workspace itself included), for a
    command about to write it; returns ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


@contextmanager
def creating_parent(path: Path) -> Iterator[Path]:
    """Create the missing folders above ``path`` for the block that writes it;
    when the block fails, remove those of them that it left empty (a failed
    command leaves no empty workspace behind)."""
    missing = [p for p in path.parents if not p.exists()]
    blocker = nearest_there(path.parent)
    if not blocker.is_dir():  # a file where a folder belongs
        raise UserInputError(f"{path}: {blocker} is not a folder; nothing written")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserInputError(
            f"{path}: cannot make the folder {path.parent}: {exc.strerror or exc}"
        ) from None
    try:
        yield path
    except BaseException:
        for folder in missing:  # innermost first
            try:
                folder.rmdir()
            except OSError:
                break
        raise
