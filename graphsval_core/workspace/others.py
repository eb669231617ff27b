"""The files of a workspace that no command reads, which ``graphsval
workspace`` lists too, each with why: in its folder, anything but its
parts; in a part, anything of a name that part never reads (a ``.bak``
copy, a file with no extension, a folder or a link to one). Only the
workspace's folder and its parts are looked in, never below them."""

from __future__ import annotations

from pathlib import Path

from attrs import frozen

from graphsval_core.workspace.location import (
    BASELINE_SUFFIX,
    BASELINES_DIR,
    CALIBRATION_DIR,
    CALIBRATION_SUFFIX,
    RECAPTURE_DIR,
    TARGET_SUFFIX,
    TARGETS_DIR,
)
from graphsval_core.workspace.plugin import hidden


@frozen
class OtherFile:
    """A file (or folder) of the workspace no command reads, and why."""

    file: str
    why: str


def _places(folder: Path) -> list[tuple[Path, set[str], str]]:
    """Each folder looked in, the names in it that are parts, and why
    anything else there is never read."""
    csv = f"a baseline's name ends in {BASELINE_SUFFIX}"
    return [
        (
            folder,
            {TARGETS_DIR, BASELINES_DIR, CALIBRATION_DIR},
            f"the workspace reads only {TARGETS_DIR}/, {BASELINES_DIR}/ and {CALIBRATION_DIR}/",
        ),
        (folder / TARGETS_DIR, set(), f"a target file is named <key>{TARGET_SUFFIX}"),
        (folder / BASELINES_DIR, {RECAPTURE_DIR}, csv),
        (folder / BASELINES_DIR / RECAPTURE_DIR, set(), csv),
        (
            folder / CALIBRATION_DIR,
            set(),
            f"a calibration file is named <key>{CALIBRATION_SUFFIX}",
        ),
    ]


def other_files(folder: Path, listed: set[str]) -> list[OtherFile]:
    """The entries of the workspace at ``folder`` and of its parts that no
    command reads, sorted by name: those not among ``listed`` (the names,
    relative to ``folder``, the summary lists as targets, baselines or
    calibrations) and not a part itself."""
    out = []
    for where, parts, why in _places(folder):
        try:
            entries = sorted(where.iterdir()) if where.is_dir() else []
        except OSError:  # a part that cannot be listed: its own problem line says so
            entries = []
        for path in entries:
            name = str(path.relative_to(folder))
            if path.name in parts or name in listed:
                continue
            if hidden(path):  # an editor's file: never a part
                out.append(OtherFile(name, "a hidden file (its name starts with '.')"))
                continue
            if not path.is_dir():
                out.append(OtherFile(name, why))
                continue
            # a link to a folder is no file of the part's kind either: said as a folder is
            kind = "a link to a folder" if path.is_symlink() else "a folder"
            if where == folder:
                out.append(OtherFile(name, f"{kind}; {why}"))
            else:
                part = where.relative_to(folder).as_posix()
                out.append(OtherFile(name, f"{kind}; nothing in a folder under {part}/ is read"))
    return sorted(out, key=lambda o: o.file)
