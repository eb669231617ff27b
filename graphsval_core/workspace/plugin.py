"""The built-in ``workspace`` plugin: the user's own targets, captures and
calibrations, registered through the same hooks as a plugin's shipped ones.

One :class:`WorkspacePlugin` object is registered per registry, holding its
folder (nothing module-level): ``targets/*.target.json`` are its targets,
``baselines/*.csv`` and ``baselines/recapture/*.csv`` its baselines,
``calibration/*.calibration.json`` its calibrations (the layout of
:mod:`graphsval_core.workspace.location`), none whose name starts with
``.`` (an editor's file). A target of the workspace whose key
an installed plugin registers too replaces that plugin's (the registry notes
it). A file that cannot be read is one problem naming it, handed to
``report``; the other files keep working. Reading never creates the folder.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from graphsval_core import hookimpl
from graphsval_core.datamodel.errors import input_error
from graphsval_core.datamodel.target import TargetSpec
from graphsval_core.workspace.location import (
    BASELINE_SUFFIX,
    BASELINES_DIR,
    CALIBRATION_DIR,
    CALIBRATION_SUFFIX,
    RECAPTURE_DIR,
    TARGET_SUFFIX,
    TARGETS_DIR,
)

if TYPE_CHECKING:
    from graphsval_core.plugins.registry import Registry

#: The name the workspace plugin is registered (and blocked, ``-p no:workspace``) under.
PLUGIN_NAME = "workspace"


def owns_target(registry: Registry, key: str) -> bool:
    """Whether target ``key`` is registered, and by the workspace (its file
    in the workspace's ``targets/``), not by an installed plugin."""
    return key in registry.targets() and registry.target_plugin(key).name == PLUGIN_NAME


def hidden(path: Path) -> bool:
    """Whether ``path``'s name starts with ``.``: an editor's or a tool's
    file (``.x.csv.swp``, ``.#x.csv``, a copy of a file hidden on purpose),
    never a part of the workspace (``graphsval workspace`` lists it as not
    read)."""
    return path.name.startswith(".")


def files_in(folder: Path, suffix: str) -> list[Path]:
    """The entries of ``folder`` ending in ``suffix`` that are not
    :func:`hidden`, sorted by name; none when the folder does not exist. A
    folder or a dangling link of such a name is kept: whatever reads it says
    what it is (one line naming it), rather than the workspace passing it
    over in silence."""
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.name.endswith(suffix) and not hidden(p))


def folder_problem(folder: Path) -> str | None:
    """Why the workspace folder ``folder`` (the workspace itself, or its
    ``targets``, ``baselines``, ``baselines/recapture`` or ``calibration``)
    holds nothing that is read though something is there: it is a file, a
    FIFO, a device or a link that leads nowhere; None when it is a folder or
    is absent (an empty part of the workspace)."""
    from graphsval_core.files.outputs import special_kind

    if folder.is_dir() or not (folder.exists() or folder.is_symlink()):
        return None
    if folder.is_file():
        what = "a file"
    elif folder.exists():
        what = special_kind(folder) or "not a folder"
    else:
        what = "a link that leads nowhere"
    return f"{folder}: is {what}, not a folder; nothing in it is read"


def special_file(path: Path) -> str | None:
    """Why ``path`` is not read: it is a FIFO, a socket or a device (a
    FIFO with no writer would hold every command that read it), or None.
    Named on the command line a pipe is read (``<(...)``); found in the
    workspace, it is one problem naming it, and left out."""
    from graphsval_core.files.outputs import special_kind

    kind = special_kind(path)
    return None if kind is None else f"{path}: is {kind}, not a file; left out"


def dangling_link(path: Path) -> str | None:
    """Why ``path`` is not read: it is a link that leads nowhere (or round
    in a loop), or None."""
    if path.is_symlink() and not path.exists():
        return f"{path}: is a link that leads nowhere (or round in a loop), not a file; left out"
    return None


def name_mismatch(path: Path, key: str) -> str | None:
    """Why target file ``path`` (``<name>.target.json``), which holds target
    ``key``, is not that target's file; None when its name is its key. The
    advice offers only what can be done: a rename onto no other file, a key
    the key rule allows."""
    name = path.name.removesuffix(TARGET_SUFFIX)
    if name == key:
        return None
    fixes = []
    other = path.parent / f"{key}{TARGET_SUFFIX}"
    if not other.exists() or other.samefile(path):  # a case-insensitive folder finds itself
        fixes.append(f"rename it {key}{TARGET_SUFFIX}")
    if TargetSpec.valid_key(name):
        fixes.append(f"set its key to {name!r}")
    advice = " or ".join(fixes) or f"remove it (another file is named {other.name})"
    return f"holds target {key!r}, but its name says {name!r}: {advice}"


class WorkspacePlugin:
    """The hooks of the workspace in ``folder``; ``report`` records one problem
    (a line naming the file) of the plugin; ``known_targets`` gives the keys
    the registry knows (a baseline of another target is left out, so one
    missing or broken target file never stops ``graphsval validate``)."""

    graphsval_api_version = "2.0"

    def __init__(
        self,
        folder: Path,
        report: Callable[[str], None],
        known_targets: Callable[[], Collection[str]] | None = None,
        broken: Callable[[str, str], None] | None = None,
    ) -> None:
        self.folder = folder
        self._report = report
        self._broken = broken
        self._known_targets = known_targets
        self._reported: set[str] = set()

    @property
    def label(self) -> str:
        """``the workspace (DIR)``, for messages."""
        return f"the workspace ({self.folder})"

    def problem(self, message: str) -> None:
        """Report ``message`` once, however often the hook that met it is called."""
        if message not in self._reported:
            self._reported.add(message)
            self._report(message)

    def _folder_problem(self, folder: Path) -> None:
        """One problem when ``folder`` is there but is no folder (the
        workspace itself, when the part is directly in it, said once)."""
        message = folder_problem(self.folder) or folder_problem(folder)
        if message is not None:
            self.problem(message)

    @hookimpl
    def graphsval_register_targets(self) -> Iterable[TargetSpec]:
        """Every ``targets/*.target.json``; a file that cannot be read, or whose
        key is not its name's (``<key>.target.json``: two files cannot then
        hold one key), is one problem."""
        from graphsval_core.files.target_spec import read_spec

        out: dict[str, tuple[Path, TargetSpec]] = {}
        folder = self.folder / TARGETS_DIR
        self._folder_problem(folder)
        for path in files_in(folder, TARGET_SUFFIX):
            key = path.name.removesuffix(TARGET_SUFFIX)
            try:
                if (special := special_file(path)) is not None:
                    raise ValueError(special)
                if not path.is_file():  # a folder, a link that leads nowhere or round
                    what = "is a folder" if path.is_dir() else "is no regular file (a link loop, "
                    raise ValueError(
                        f"{path}: {what}" + ("" if path.is_dir() else "a dangling link?)")
                    )
                spec = read_spec(path)
            except Exception as exc:  # a bad file is the user's input, never a traceback
                text = str(exc).removeprefix(f"{path}: ")
                self.problem(
                    f"invalid target file {path}: {input_error(exc).removeprefix(f'{path}: ')}"
                )
                if self._broken is not None:
                    self._broken(key, f"workspace target file {path}: {text}; fix or remove it")
                continue
            message = name_mismatch(path, spec.key)
            if message is not None:  # the file's name is how every command finds it
                self.problem(f"target file {path} {message}; this file is ignored")
                if self._broken is not None:
                    self._broken(key, f"workspace target file {path} {message}")
                continue
            out[spec.key] = (path, spec)  # one file per key: its name is the key
        return [spec for _, spec in out.values()]

    @hookimpl
    def graphsval_baselines(self) -> Iterable[Path]:
        """``baselines/*.csv`` and their recaptures, ``baselines/recapture/*.csv``
        (validate pairs each with the baseline of the same name). A file that
        cannot be parsed is handed on as it is: the user's own capture is read
        as strictly as a file named, and the command that reads it stops with
        one line naming the file and row (exit 2). One that holds rows of a
        target nobody registers is one problem, and left out."""
        from graphsval_core.files.baseline import read_baseline_file

        folder = self.folder / BASELINES_DIR
        self._folder_problem(folder)
        self._folder_problem(folder / RECAPTURE_DIR)
        found = [
            *files_in(folder, BASELINE_SUFFIX),
            *files_in(folder / RECAPTURE_DIR, BASELINE_SUFFIX),
        ]
        known = self._known_targets() if self._known_targets is not None else None
        out = []
        for path in found:
            if (special := special_file(path)) is not None:
                self.problem(f"baseline {special}")
                continue
            try:
                baseline = read_baseline_file(path)[0]
            except Exception:  # its reader names the problem, as an error
                out.append(path)
                continue
            unknown = sorted({r.hardware for r in baseline.rows} - set(known or ()))
            if known is not None and unknown:
                self.problem(
                    f"baseline {path}: rows of unknown target {unknown[0]!r} (no target file "
                    f"{TARGETS_DIR}/{unknown[0]}{TARGET_SUFFIX} was loaded, and no plugin "
                    "registers it); left out"
                )
                continue
            out.append(path)
        return out

    @hookimpl
    def graphsval_calibrations(self) -> Iterable[str]:
        """``calibration/*.calibration.json``, as full paths (a problem names the
        file); the registry applies each to the workspace's target of its key."""
        out = []
        self._folder_problem(self.folder / CALIBRATION_DIR)
        for path in files_in(self.folder / CALIBRATION_DIR, CALIBRATION_SUFFIX):
            if (special := special_file(path) or dangling_link(path)) is not None:
                if self._broken is None:
                    self.problem(f"calibration {special}")
                    continue
                # never the datasheet's answers in its place: its target is unusable
                key = path.name.removesuffix(CALIBRATION_SUFFIX)
                what = special.removeprefix(f"{path}: ").removesuffix("; left out")
                self.problem(
                    f"calibration {path}: {what}; target {key!r} is unusable until "
                    "it is fixed or removed"
                )
                self._broken(key, f"workspace calibration {path}: {what}; fix or remove it")
                continue
            out.append(str(path))
        return out
