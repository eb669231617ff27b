"""Standard output that never takes a command down with a traceback.

:func:`guard_stdout` wraps ``sys.stdout`` (the console script does, before
any command runs). A reader that goes away (``graphsval validate | head``,
a broken pipe) is no error of graphsval's: the rest of the output is
dropped, the command finishes, and its exit code is the one it would have
had (1 for a failed validation). A write that fails for another reason (a
full disk, ``> /dev/full``) stops the command with one line and exit code 2.
Either way file descriptor 1 is pointed at ``/dev/null`` so that the
interpreter's last flush cannot fail again.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
from typing import Any, TextIO

from graphsval_core.datamodel.errors import UserInputError


class OutputError(UserInputError):
    """Standard output cannot be written (a full disk, say): exit code 2."""


def _silence(stream: TextIO) -> None:
    """Point ``stream``'s file descriptor at /dev/null (the data still
    buffered is dropped there, not re-tried)."""
    with contextlib.suppress(OSError, ValueError):  # an in-memory stream has no descriptor
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)


class GuardedStream:
    """A text stream that drops its output once the reader is gone and turns
    any other write failure into :class:`OutputError` (see the module doc)."""

    def __init__(self, stream: TextIO, name: str = "standard output") -> None:
        self._stream = stream
        self._name = name
        self.reader_gone = False
        #: a write failed (not for a closed pipe): the command stopped with exit code 2
        self.failed = False

    def _failed(self, exc: OSError) -> None:
        if exc.errno == errno.EPIPE or isinstance(exc, BrokenPipeError):
            _silence(self._stream)
            self.reader_gone = True
            return
        # not silenced: a caller that swallows this (click probes a stream with an
        # empty write) meets the same error on the next write
        self.failed = True
        raise OutputError(f"{self._name}: cannot write: {exc.strerror or exc}") from None

    def write(self, text: str) -> int:
        if self.reader_gone:
            return len(text)
        try:
            return self._stream.write(text)
        except OSError as exc:
            self._failed(exc)
            return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if self.reader_gone:
            return
        try:
            self._stream.flush()
        except OSError as exc:
            self._failed(exc)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def utf8_streams() -> None:
    """Standard output and error write UTF-8, whatever the locale (an ASCII
    one, ``LC_ALL=C`` with locale coercion off, would fail on the first
    non-ASCII character), with any unencodable character escaped."""
    for stream in (sys.stdout, sys.stderr):
        encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "")
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and encoding not in ("utf8", "utf8sig"):
            with contextlib.suppress(OSError, ValueError):  # already written to: leave it
                reconfigure(encoding="utf-8", errors="backslashreplace")


class QuietStream(GuardedStream):
    """Standard error: its reader gone (``graphsval ... 2>&1 | head -1``) or
    its write failing, the rest is dropped, and the command's exit code stays
    the one it would have had (a usage error's 2; click would exit 1 on a
    broken pipe). There is nowhere left to report a failure of its own."""

    def _failed(self, exc: OSError) -> None:
        _silence(self._stream)
        self.reader_gone = True


def guard_stderr() -> QuietStream:
    """Replace ``sys.stderr`` by a :class:`QuietStream` over it (once)."""
    if not isinstance(sys.stderr, QuietStream):
        sys.stderr = QuietStream(sys.stderr, "standard error")  # type: ignore[assignment]
    return sys.stderr  # type: ignore[return-value]


def guard_stdout() -> GuardedStream:
    """Replace ``sys.stdout`` by a :class:`GuardedStream` over it (once)."""
    if not isinstance(sys.stdout, GuardedStream):
        sys.stdout = GuardedStream(sys.stdout)  # type: ignore[assignment]
    return sys.stdout  # type: ignore[return-value]


def final_flush() -> bool:
    """Flush standard output and error before the interpreter does, so that
    a failure is seen here rather than reported by the interpreter's
    shutdown; whether standard output failed (its output is then dropped)."""
    failed = isinstance(sys.stdout, GuardedStream) and sys.stdout.failed
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            failed = failed or stream is sys.stdout
            _silence(getattr(stream, "_stream", stream))
    if failed:
        _silence(getattr(sys.stdout, "_stream", sys.stdout))
    return failed
