"""Reading an input file's bytes, with every way it can fail in one line.

A folder, a device or other special file (``/dev/zero`` would never end), a
file larger than :data:`MAX_INPUT_BYTES`, or one that cannot be opened is an
error naming the file; a pipe (``/dev/stdin``) is read.
"""

from __future__ import annotations

import os
import stat
import sys
from typing import IO

from graphsval_core.datamodel.errors import UserInputError

#: The largest input file read (a baseline of millions of rows is far less).
MAX_INPUT_BYTES = 2**30


def open_input(
    path: str | os.PathLike[str], error: type[UserInputError], what: str = "file"
) -> tuple[IO[bytes], os.stat_result]:
    """File ``path`` opened for reading, and its status, once it is known to
    be a regular file or a pipe within :data:`MAX_INPUT_BYTES` (``what``
    names it in messages: "a baseline CSV"); the caller closes it."""
    try:
        info = os.stat(path)
        if stat.S_ISDIR(info.st_mode):
            raise error(f"{path}: is a folder, not {what}")
        if not (stat.S_ISREG(info.st_mode) or stat.S_ISFIFO(info.st_mode)):
            raise error(f"{path}: not a regular file; expected {what}")
        if info.st_size > MAX_INPUT_BYTES:
            raise error(f"{path}: {info.st_size} bytes, more than {MAX_INPUT_BYTES}; not {what}")
        if stat.S_ISFIFO(info.st_mode) and sys.stderr.isatty():  # opening waits for a writer
            print(
                f"reading {path}, a pipe: waiting for what writes it (Ctrl-C stops)",
                file=sys.stderr,
            )
        return open(path, "rb"), info  # noqa: SIM115 (the caller closes it)
    except FileNotFoundError as exc:
        raise error(_missing(path, exc)) from None
    except OSError as exc:
        raise error(f"{path}: cannot read: {exc.strerror or exc}") from None


def _missing(path: str | os.PathLike[str], exc: OSError) -> str:
    """Why ``path`` is not there: a link whose file is gone says where it
    points ("No such file" read as if the link itself were missing)."""
    if os.path.islink(path):
        try:
            points = os.readlink(path)
        except OSError:
            points = "?"
        return f"{path}: a link to a file that is not there ({points})"
    return f"{path}: cannot read: {exc.strerror or exc}"


def read_input(
    path: str | os.PathLike[str], error: type[UserInputError], what: str = "file"
) -> bytes:
    """The bytes of file ``path`` (``what`` names it in messages: "a baseline CSV")."""
    handle, info = open_input(path, error, what)
    try:
        with handle:
            if stat.S_ISREG(info.st_mode):
                data = handle.read()
            else:  # a pipe: read up to the limit, a chunk at a time
                chunks, size = [], 0
                while size <= MAX_INPUT_BYTES and (chunk := handle.read(2**20)):
                    chunks.append(chunk)
                    size += len(chunk)
                data = b"".join(chunks)
    except OSError as exc:
        raise error(f"{path}: cannot read: {exc.strerror or exc}") from None
    if len(data) > MAX_INPUT_BYTES:
        raise error(f"{path}: more than {MAX_INPUT_BYTES} bytes; not {what}")
    return data


def read_path_or_resource(item: object, error: type[UserInputError], what: str = "file") -> bytes:
    """The bytes of a path (:func:`read_input`) or of an importlib Traversable
    (a file a plugin ships)."""
    if isinstance(item, str | os.PathLike):
        return read_input(item, error, what)
    try:
        return item.read_bytes()  # type: ignore[attr-defined, no-any-return]
    except IsADirectoryError:
        raise error(f"{item}: is a folder, not {what}") from None
    except OSError as exc:
        raise error(f"{item}: cannot read: {exc.strerror or exc}") from None
