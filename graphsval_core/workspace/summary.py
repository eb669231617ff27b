"""What a workspace holds (``graphsval workspace``): its targets, baselines and
calibrations, file by file, and what the registry made of each, and the
files no command reads. Reads only; a missing folder is an empty workspace."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from attrs import asdict, frozen

from graphsval_core.datamodel.errors import input_error
from graphsval_core.plugins.registry import Registry
from graphsval_core.workspace.location import (
    BASELINE_SUFFIX,
    BASELINES_DIR,
    CALIBRATION_DIR,
    CALIBRATION_SUFFIX,
    RECAPTURE_DIR,
    TARGET_SUFFIX,
    TARGETS_DIR,
    WorkspaceLocation,
)
from graphsval_core.workspace.others import OtherFile, other_files
from graphsval_core.workspace.plugin import (
    PLUGIN_NAME,
    dangling_link,
    files_in,
    folder_problem,
    name_mismatch,
    owns_target,
    special_file,
)


@frozen
class TargetFile:
    """A target spec file: its key (None when unreadable), whether the registry
    has it from the workspace, the plugins whose target of that key it
    replaces, and the error that kept it out ("" when none)."""

    file: str
    key: str | None
    registered: bool
    replaces: tuple[str, ...] = ()
    error: str = ""


@frozen
class BaselineFile:
    """A baseline CSV: its rows (None when unreadable), the purpose its rows
    were selected by, whether it is a recapture, and the error ("" when none)."""

    file: str
    rows: int | None
    purpose: str | None
    recapture: bool
    error: str = ""


@frozen
class CalibrationFile:
    """A calibration file: the target it calibrates (None when unreadable),
    whether the registry applied it, and the error ("" when none)."""

    file: str
    target: str | None
    applied: bool
    error: str = ""


@frozen
class WorkspaceSummary:
    """The workspace folder, where it came from, whether it exists, its
    files, and its folders that are there but are no folder (one line each:
    a file named ``baselines``, a workspace path that is a file)."""

    path: Path
    source: str
    exists: bool
    targets: tuple[TargetFile, ...]
    baselines: tuple[BaselineFile, ...]
    calibrations: tuple[CalibrationFile, ...]
    problems: tuple[str, ...] = ()
    #: the registry was built without the workspace (``-p no:workspace``)
    left_out: bool = False
    #: the files (and folders) no command reads, each with why
    not_read: tuple[OtherFile, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "workspace": str(self.path),
            "source": self.source,
            "exists": self.exists,
            "targets": [asdict(t) for t in self.targets],
            "baselines": [asdict(b) for b in self.baselines],
            "calibrations": [asdict(c) for c in self.calibrations],
            "problems": list(self.problems),
            "left_out": self.left_out,
            "not_read": [asdict(o) for o in self.not_read],
        }


def _error(exc: Exception, path: Path) -> str:
    """What is wrong with the file at ``path`` (its line names it already)."""
    return input_error(exc).removeprefix(f"{path}: ")


def _special(message: str, path: Path) -> str:
    """What a special file in the workspace is (:func:`special_file`), without its path."""
    return message.removeprefix(f"{path}: ")


def _targets(registry: Registry, folder: Path) -> list[TargetFile]:
    from graphsval_core.files.target_spec import read_spec

    out = []
    for path in files_in(folder / TARGETS_DIR, TARGET_SUFFIX):
        name = str(path.relative_to(folder))
        if (special := special_file(path)) is not None:
            out.append(TargetFile(name, None, False, error=_special(special, path)))
            continue
        try:
            key = read_spec(path).key
        except Exception as exc:
            out.append(TargetFile(name, None, False, error=_error(exc, path)))
            continue
        mismatch = name_mismatch(path, key)
        if mismatch is not None:  # ignored: the registry does not have it from this file
            out.append(TargetFile(name, key, False, error=mismatch))
            continue
        if key in registry.workspace_errors:  # unusable: its file or its calibration is broken
            out.append(TargetFile(name, key, False, error=registry.workspace_errors[key]))
            continue
        mine = owns_target(registry, key)
        replaces = tuple(registry.replaced.get(key, ())) if mine else ()
        out.append(TargetFile(name, key, mine, replaces))
    # a spec under another name (mine.json, KEY.target.JSON, a trailing space) is
    # never loaded: said, not passed over
    for path in files_in(folder / TARGETS_DIR, ""):
        if not path.name.endswith(TARGET_SUFFIX) and near_json(path):
            error = f"a target file is named <key>{TARGET_SUFFIX}; this name is never read"
            out.append(TargetFile(str(path.relative_to(folder)), None, False, error=error))
    return sorted(out, key=lambda t: t.file)


def _baselines(folder: Path) -> list[BaselineFile]:
    from graphsval_core.files.baseline import read_baseline_file

    out = []
    base = folder / BASELINES_DIR
    for recapture, where in ((False, base), (True, base / RECAPTURE_DIR)):
        for path in files_in(where, BASELINE_SUFFIX):
            name = str(path.relative_to(folder))
            if (special := special_file(path)) is not None:
                out.append(BaselineFile(name, None, None, recapture, _special(special, path)))
                continue
            try:
                baseline = read_baseline_file(path)[0]
            except Exception as exc:
                out.append(BaselineFile(name, None, None, recapture, _error(exc, path)))
                continue
            purposes = sorted({r.purpose for r in baseline.rows if r.purpose})
            purpose = ", ".join(purposes) or None
            out.append(BaselineFile(name, len(baseline.rows), purpose, recapture))
        # a capture under a name never read (x.CSV, a trailing space): said, not passed over
        for path in files_in(where, ""):
            if not path.name.endswith(BASELINE_SUFFIX) and _near(path, BASELINE_SUFFIX):
                error = f"a baseline's name ends in {BASELINE_SUFFIX}; this name is never read"
                name = str(path.relative_to(folder))
                out.append(BaselineFile(name, None, None, recapture, error))
    return sorted(out, key=lambda b: (b.recapture, b.file))


def near_json(path: Path) -> bool:
    """Whether ``path`` looks meant to be read: a file (not a folder, nor a
    hidden one such as ``.DS_Store``) whose name ends in ``.json`` once
    case and surrounding blanks are set aside (``KEY.target.JSON``, a
    trailing space). A README or an editor's ``x.json~`` is not listed."""
    return _near(path, ".json")


def _near(path: Path, suffix: str) -> bool:
    """:func:`near_json` for the file name ending ``suffix``."""
    name = path.name
    return not name.startswith(".") and path.is_file() and name.strip().lower().endswith(suffix)


def _calibrations(registry: Registry, folder: Path) -> list[CalibrationFile]:
    out = []
    for path in files_in(folder / CALIBRATION_DIR, ""):  # never read: said, not passed over
        if not path.name.endswith(CALIBRATION_SUFFIX) and near_json(path):
            error = (
                f"a calibration file is named <key>{CALIBRATION_SUFFIX}; this name is never read"
            )
            out.append(CalibrationFile(str(path.relative_to(folder)), None, False, error))
    for path in files_in(folder / CALIBRATION_DIR, CALIBRATION_SUFFIX):
        name = str(path.relative_to(folder))
        if (special := special_file(path) or dangling_link(path)) is not None:
            out.append(CalibrationFile(name, None, False, _special(special, path)))
            continue
        if path.is_dir():
            out.append(CalibrationFile(name, None, False, "is a folder, not a file"))
            continue
        try:
            target = json.loads(path.read_text(encoding="utf-8")).get("target")
        except Exception as exc:
            out.append(CalibrationFile(name, None, False, _error(exc, path)))
            continue
        if not isinstance(target, str):  # the registry refuses it so too
            error = "names no target (a 'target' key is required)"
            out.append(CalibrationFile(name, None, False, error))
            continue
        applied = registry.calibration_files.get(target) == str(path)
        # why the registry refused it (another plugin's target, a bad value): kept
        # under the key its file name gives, or the target it names
        stem = path.name.removesuffix(CALIBRATION_SUFFIX)
        why = "" if applied else registry.workspace_errors.get(stem, "")
        why = why or ("" if applied else registry.workspace_errors.get(target, ""))
        why = why.removeprefix(f"workspace calibration {path}: ")
        out.append(CalibrationFile(name, target, applied, why))
    return sorted(out, key=lambda c: c.file)


def left_out(registry: Registry) -> bool:
    """Whether the registry was built without the workspace (``-p no:workspace``)."""
    info = {p.name: p for p in registry.plugins}.get(PLUGIN_NAME)
    return info is None or not info.loaded


def summarise(location: WorkspaceLocation, registry: Registry) -> WorkspaceSummary:
    """The files of the workspace at ``location``, and what ``registry`` (built
    with that workspace) made of each."""
    folder = location.path
    parts = (TARGETS_DIR, BASELINES_DIR, f"{BASELINES_DIR}/{RECAPTURE_DIR}", CALIBRATION_DIR)
    whole = folder_problem(folder)
    problems = [whole] if whole else [p for part in parts if (p := folder_problem(folder / part))]
    targets, baselines = _targets(registry, folder), _baselines(folder)
    calibrations = _calibrations(registry, folder)
    listed = {f.file for f in (*targets, *baselines, *calibrations)}
    return WorkspaceSummary(
        path=folder,
        source=location.source,
        exists=folder.is_dir(),
        targets=tuple(targets),
        baselines=tuple(baselines),
        calibrations=tuple(calibrations),
        problems=tuple(problems),
        left_out=left_out(registry),
        not_read=tuple(other_files(folder, listed)),
    )
