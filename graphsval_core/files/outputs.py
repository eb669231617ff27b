"""Writing an output file: one check every writer makes first.

An existing target that is not a regular file (a device such as
``/dev/full``, a FIFO, a socket, or a folder where a file is expected) is
refused in one line naming it, before anything is opened or written: an
atomic write (a temp file renamed over the target) would otherwise replace
the device by a regular file. A missing target is fine (it is created), and
so is a link to a regular file; a link to a file that is not there is
refused (a write would create the file wherever the link leads).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path

from graphsval_core.datamodel.errors import UserInputError, shown_path

_KINDS = (
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
)


def special_kind(path: str | os.PathLike[str]) -> str | None:
    """What ``path`` is when it exists and is not a regular file or a folder
    ("a character device", ...); None otherwise."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def _mode(path: str | os.PathLike[str], error: type[UserInputError], where: str) -> int | None:
    """The mode of what is at ``path``; None when nothing is there yet. A path
    that cannot even be looked at raises ``error`` in one line."""
    try:
        return os.stat(path).st_mode
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise error(f"{where}: cannot write there: {reason}") from None


def check_output_file(
    path: str | os.PathLike[str], error: type[UserInputError], label: str | None = None
) -> Path:
    """``path`` as a :class:`Path`, when a file may be written there: it does
    not exist yet (and is no link) or is a regular file (or a link to one). Raises ``error``
    (one line: ``label``, default the path, and what it is) otherwise."""
    where = label or shown_path(path)
    mode = _mode(path, error, where)
    if mode is None:
        if Path(path).is_symlink():  # a file made through it would land wherever it leads
            leads = Path(os.path.realpath(path))
            if not leads.parent.is_dir():
                raise error(f"{where}: a link to {leads}, in no folder; nothing written")
            raise error(
                f"{where}: a link to {leads}, which is not there; nothing written through it "
                "(remove the link or name another file)"
            )
        return Path(path)
    if stat.S_ISDIR(mode):
        raise error(f"{where}: is a folder, not a file; name a file to write")
    if not stat.S_ISREG(mode):
        kind = special_kind(path) or "not a regular file"
        raise error(f"{where}: is {kind}, not a regular file; refusing to write over it")
    return Path(path)


def check_output_in_folder(
    path: str | os.PathLike[str], error: type[UserInputError], label: str
) -> Path:
    """:func:`check_output_file`, and ``path``'s folder (where a link leads:
    the folder of the file it leads to) is there and a file can be made in
    it: a file option whose folder is missing is refused before any work,
    in one line naming the option (``label``), not after it as the system's
    "No such file or directory" on an absolute path."""
    checked = check_output_file(path, error, label)
    folder = Path(os.path.realpath(path)).parent
    if not folder.is_dir():
        raise error(f"{label}: no folder {folder} to write it in")
    check_writable_folder(folder, error, label)
    return checked


def check_output_folder(
    path: str | os.PathLike[str], error: type[UserInputError], label: str | None = None
) -> Path:
    """``path`` as a :class:`Path`, when files may be written into it: it does
    not exist yet or is a folder. Raises ``error`` (one line) otherwise."""
    where = label or shown_path(path)
    mode = _mode(path, error, where)
    if mode is None or stat.S_ISDIR(mode):
        return Path(path)
    if stat.S_ISREG(mode):
        raise error(f"{where}: is a file, not a folder")
    kind = special_kind(path) or "not a regular file"
    raise error(f"{where}: is {kind}, not a folder; refusing to write there")


def check_writable_folder(
    folder: str | os.PathLike[str], error: type[UserInputError], label: str
) -> None:
    """Raise ``error`` (one line: ``label``, the folder and the system's
    reason) unless a new file can be made in ``folder``, an existing folder:
    a probe file is created and removed at once. Said before long work (a fit
    of minutes), not when its result is written."""
    import tempfile

    try:
        handle, probe = tempfile.mkstemp(dir=folder, prefix=".graphsval-probe-")
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise error(f"{label}: cannot make a file in {folder} ({reason})") from None
    os.close(handle)
    os.unlink(probe)


def nearest_there(path: str | os.PathLike[str]) -> Path:
    """The nearest of ``path`` and its parents that is there: something, or
    a link, even one that leads nowhere (a relative path's last parent, the
    current folder, always is)."""
    given = Path(path)
    return next(p for p in (given, *given.parents) if p.exists() or p.is_symlink())


def check_output_place(
    folder: str | os.PathLike[str], error: type[UserInputError], label: str
) -> None:
    """Raise ``error`` (one line: ``label`` and why) unless files can be made
    in ``folder`` once the missing folders above it are: the nearest of it
    and its parents that is there must be a folder (not a file, nor a link
    that leads nowhere) in which a file can be made
    (:func:`check_writable_folder`)."""
    there = nearest_there(Path(folder).absolute())
    if not there.is_dir():
        what = "a link that leads nowhere" if not there.exists() else "not a folder"
        raise error(f"{label}: {there} is {what}")
    check_writable_folder(there, error, label)


def check_output_files(
    folder: str | os.PathLike[str],
    names: Iterable[str],
    error: type[UserInputError],
    flag: str,
) -> None:
    """Raise ``error`` (one line naming ``flag`` and the path) unless the
    files ``names`` can be written into ``folder``: it is a folder or is not
    there yet (:func:`check_output_folder`), each file is a regular one or is
    not there yet (:func:`check_output_file`), and files can be made where
    the folder goes (:func:`check_output_place`)."""
    label = f"{flag} {shown_path(folder)}"  # the folder ./-: "--out ./-", not "--out -"
    check_output_folder(folder, error, label)
    for name in names:
        path = Path(folder) / name
        if path.is_dir() and not path.is_symlink():  # the name is the command's, not the user's
            raise error(
                f"{label}: {shown_path(path)} is a folder, where the command writes its file "
                f"{name}; remove it or give another folder"
            )
        check_output_file(path, error, f"{flag} {shown_path(path)}")
    check_output_place(folder, error, label)


def check_output_temp(
    path: str | os.PathLike[str], error: type[UserInputError], label: str | None = None
) -> tuple[Path, Path]:
    """``(file, temp file)`` of an atomic write to ``path``: the file a link
    leads to (it is written, the link kept) and ``<file>.tmp`` beside it.
    Raises ``error`` (one line) unless the temp file's place is free or a
    regular file, and not a link (a write through it would land wherever it
    leads)."""
    target = Path(os.path.realpath(path))
    tmp = target.with_name(target.name + ".tmp")
    check_output_file(tmp, error, f"{label or target} (its temp file {tmp})")
    if tmp.is_symlink():
        raise error(f"{label or target}: its temp file {tmp} is a link; remove it")
    return target, tmp


def write_text_atomic(
    path: str | os.PathLike[str],
    text: str,
    error: type[UserInputError],
    label: str | None = None,
) -> None:
    """Write ``text`` (UTF-8) to ``path`` through a temp file renamed over it,
    after :func:`check_output_file`; a failure is ``error`` in one line and
    leaves no temp file. A link is followed: the file it leads to is
    written, the link kept (a rename over the link would replace it)."""
    write_texts_atomic([(path, text, label)], error)


def write_texts_atomic(
    files: Sequence[tuple[str | os.PathLike[str], str, str | None]],
    error: type[UserInputError],
) -> None:
    """Write each ``(path, text, label)`` as :func:`write_text_atomic` does,
    all or none as far as a folder allows: every place is checked and every
    temp file written before the first is renamed over its file, so a failure
    to write (one line, ``error``) leaves every file as it was and no temp
    file behind. A rename that fails (a file mounted read-only) leaves the
    ones before it replaced, and the line names them."""
    import contextlib

    places = []
    seen: dict[Path, str] = {}
    for path, text, label in files:
        check_output_file(path, error, label)  # a link into no folder is refused there
        target, tmp = check_output_temp(path, error, label)
        where = label or shown_path(path)
        if target in seen:  # two outputs, one file: the second would overwrite the first
            raise error(f"{where}: leads to the same file as {seen[target]} ({target})")
        seen[target] = where
        places.append((target, tmp, text, label or str(target)))
    written: list[Path] = []
    replaced: list[str] = []
    where = ""
    try:
        for _target, tmp, text, label in places:
            where = label
            tmp.write_text(text, encoding="utf-8")
            written.append(tmp)
        for target, tmp, _text, label in places:
            where = label
            tmp.replace(target)
            written.remove(tmp)
            replaced.append(label)
    except OSError as exc:
        for tmp in written:
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
        done = f" ({', '.join(replaced)} already written)" if replaced else ""
        raise error(f"{where}: cannot write: {exc.strerror or exc}{done}") from None
