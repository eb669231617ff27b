"""The one base of every error a user's input can cause.

A file that cannot be read or parsed, an unknown name, a malformed shape, a
flag value that does not fit: each is a :class:`UserInputError` (or a subclass
named for the format or the record), whose message is one line naming the
file and line, the flag or the field. Workflows raise them; the command line
turns any of them into that one line and exit code 2, never a traceback.
"""

from __future__ import annotations

import os
import re


def clip(text: str) -> str:
    """``text`` quoted for an error line, cut to 40 characters (a value read
    from a file may be a whole line long)."""
    return repr(text if len(text) <= 40 else text[:37] + "...")


#: Invisible characters that change how the text around them reads: the
#: bidirectional overrides, embeddings, isolates and marks (U+202A-202E,
#: U+2066-2069, U+200E-200F, U+061C: a name that shows reversed), a
#: zero-width space (U+200B), the Mongolian vowel separator (U+180E), word
#: joiners and invisible operators (U+2060-2064), the deprecated format
#: controls (U+206A-206F), a byte-order mark (U+FEFF) inside a text, and
#: the Hangul fillers (U+115F, U+1160, U+3164, U+FFA0) and Khmer inherent
#: vowels (U+17B4-17B5), letters that draw nothing: a name of them reads as
#: blank. The zero-width joiner and non-joiner (U+200C-200D) are text:
#: Persian and Indic words and emoji sequences need them.
INVISIBLE = frozenset(
    "\u061c\u180e\u200b\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
    "\u2060\u2061\u2062\u2063\u2064\u2066\u2067\u2068\u2069"
    "\u206a\u206b\u206c\u206d\u206e\u206f\ufeff"
    "\u115f\u1160\u3164\uffa0\u17b4\u17b5"
)


#: A search for a control character (:func:`is_control`) in a text at once:
#: Unicode category Cc is U+0000-001F and U+007F-009F.
CONTROL = re.compile("[\\x00-\\x1f\\x7f-\\x9f\u2028\u2029" + "".join(sorted(INVISIBLE)) + "]")


def is_control(ch: str) -> bool:
    """Whether character ``ch`` is a control character: Unicode category Cc
    (a newline, a tab, a NUL, an escape), a line or paragraph separator,
    which would break a one-line message or drive the terminal, or one of
    the :data:`INVISIBLE` characters that reorder, hide or blank the text around
    them. A no-break space or a soft hyphen is text."""
    import unicodedata

    return unicodedata.category(ch) == "Cc" or ch in "\u2028\u2029" or ch in INVISIBLE


def control_character(text: str) -> str | None:
    """The first control character in ``text`` (:func:`is_control`) as
    ``U+000A``; None when there is none."""
    found = CONTROL.search(text)
    return None if found is None else f"U+{ord(found.group()):04X}"


def one_line(text: str) -> str:
    """``text`` with each control character (:func:`is_control`: a newline
    in a file's name, an escape sequence) written as Python writes it
    (``\\n``, ``\\x1b``), so a line stays one line and never drives the
    terminal."""
    return "".join(ascii(ch)[1:-1] if is_control(ch) else ch for ch in text)


def shown_path(path: str | os.PathLike[str]) -> str:
    """``path`` as a message names it: one line (:func:`one_line`), and never
    taken for standard output or a flag: a path whose text starts with ``-``
    (``--out ./-`` is the file ``-``, which ``Path`` writes without its
    ``./``) is shown with ``./`` before it. An error of any layer names a
    path through this; the command line's lines saying what was written too
    (``graphsval_core.cli.context.shown_path``)."""
    text = os.fspath(path)
    return one_line(f"./{text}" if text.startswith("-") else text)


def shell_path(path: str | os.PathLike[str]) -> str:
    """``path`` as one argument of a command a message suggests to paste:
    :func:`shown_path` (``./`` before a name starting with ``-``, which a
    program would read as options; each control character escaped),
    shell-quoted where a shell would split or read it (a folder with a
    space: ``'my dir/x.json'``). ``shlex.quote`` alone would quote an escape
    byte, not escape it: it would still reach the terminal raw. A path
    holding one is then not literally the file (inside quotes a shell reads
    ``\\x1b`` as four characters): shown safely, it is no longer pasteable
    as it stands. A path that names a file, not a command, is shown by
    :func:`shown_path`, unquoted: ``wrote my dir/report.html``."""
    import shlex

    return shlex.quote(shown_path(path))


class UserInputError(ValueError):
    """An input (file, name, shape, flag value) cannot be used; one line says why."""


class InputWarning(UserWarning):
    """Something in a user's input that graphsval reads on, but the user should
    know (an exact duplicate row, counted once): one ``warning:`` line."""


def warn_input(message: str) -> None:
    """Warn of ``message`` (one line naming the file, row or key); the command
    line prints it once, as ``warning: <message>`` on stderr."""
    import warnings

    warnings.warn(message, InputWarning, stacklevel=2)


def input_error(exc: BaseException) -> str:
    """An error about a user's file as a line to show: the message alone for
    the errors graphsval raises about input (a ``ValueError``: the class name
    says nothing to a user), else the exception's type and message."""
    return str(exc) if isinstance(exc, ValueError) else f"{type(exc).__name__}: {exc}"
