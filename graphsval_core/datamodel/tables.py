"""Tables for people: aligned plain text for the terminal, and Markdown."""

from __future__ import annotations

import re
import shutil
import textwrap
from collections.abc import Sequence
from typing import Any

from graphsval_core.datamodel.exports import md_cell


def format_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Left-aligned columns separated by two spaces; cells never truncated."""
    cells = [[str(c) for c in headers], *[[str(c) for c in row] for row in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = [
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def screen_width() -> int:
    """The terminal's width in columns (``COLUMNS``, else the terminal's,
    else 80), at least 40."""
    return max(40, shutil.get_terminal_size((80, 24)).columns)


#: The narrowest a wrapped column of :func:`format_noted_table` gets.
MIN_COLUMN = 12
#: The widest its first column (the names) gets before its cells wrap.
FIRST_COLUMN = 30


def format_noted_table(
    headers: Sequence[str],
    rows: Sequence[Sequence[Any]],
    notes: Sequence[str],
    width: int,
    note_indent: int = 4,
) -> str:
    """A table as :func:`format_table`'s that fits ``width`` where it can,
    with a note under each row: the columns share the width (each at least
    its heading and :data:`MIN_COLUMN`; a narrow one keeps what it needs),
    a longer cell wraps within its column, and each row's note (``notes``,
    one per row; empty: none) follows it, indented by ``note_indent`` and
    wrapped to ``width``. No word is cut (a path may run past the width)."""
    cells = [[str(c) for c in headers], *[[str(c) for c in row] for row in rows]]
    natural = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    first = min(natural[0], max(FIRST_COLUMN, len(str(headers[0]))))
    room = width - first - 2 * (len(headers) - 1)
    widths = [first, *_share(natural[1:], [len(str(h)) for h in headers[1:]], room)]
    lines = _wrapped_row(cells[0], widths)
    lines.append("  ".join("-" * w for w in widths))
    pad = " " * note_indent
    for row, note in zip(cells[1:], notes, strict=True):
        lines += _wrapped_row(row, widths)
        if note:
            lines += textwrap.wrap(
                note,
                max(width, note_indent + MIN_COLUMN),
                initial_indent=pad,
                subsequent_indent=pad,
                break_on_hyphens=False,
                break_long_words=False,
            )
    return "\n".join(lines)


def _share(natural: list[int], least: list[int], room: int) -> list[int]:
    """Widths for columns of ``natural`` widths in ``room`` columns: all as
    they are where they fit, else the narrowest first each as it is or its
    fair share of what is left, whichever is less (never under its heading
    ``least`` nor :data:`MIN_COLUMN`)."""
    if sum(natural) <= room:
        return list(natural)
    out = [0] * len(natural)
    left = room
    order = sorted(range(len(natural)), key=lambda i: natural[i])
    for done, i in enumerate(order):
        fair = left // (len(order) - done)
        out[i] = min(natural[i], max(fair, least[i], MIN_COLUMN))
        left -= out[i]
    return out


def _wrapped_row(row: Sequence[str], widths: Sequence[int]) -> list[str]:
    """One row of cells, each wrapped to its column's width, as lines."""
    parts = [
        textwrap.wrap(c, w, break_on_hyphens=False, break_long_words=False) or [""]
        for c, w in zip(row, widths, strict=True)
    ]
    depth = max(len(p) for p in parts)
    return [
        "  ".join(
            (p[k] if k < len(p) else "").ljust(w) for p, w in zip(parts, widths, strict=True)
        ).rstrip()
        for k in range(depth)
    ]


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A Markdown table; a ``|`` inside a cell or a heading is escaped, HTML
    is shown as text and a line break becomes a space, so every row has the
    heading's cells and no cell becomes markup."""
    lines = ["| " + " | ".join(_md_cell(h) for h in headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _md_cell(value: Any) -> str:
    return md_cell(value)


def wrap_line(line: str, width: int) -> list[str]:
    """``line`` wrapped to ``width`` with a hanging indent (its
    own leading spaces and two more); a table (several lines in one) or a
    line that fits is kept as it is. A line may still be wider than
    ``width`` where its indent or one word (a path) is: no word is cut. A
    number stays with its unit and a label with its number ("111 GB/s",
    "l2 104 uJ"): wrapped, no line ends in a number."""
    if "\n" in line or len(line) <= width:
        return [line]
    indent = line[: len(line) - len(line.lstrip(" "))]
    glued = _LABEL_NUMBER.sub(r"\1" + _GLUE, line.lstrip(" "))
    glued = _NUMBER_UNIT.sub(r"\1" + _GLUE, glued)
    wrapped = textwrap.wrap(
        glued,
        max(width, len(indent) + 3),
        initial_indent=indent,
        subsequent_indent=indent + "  ",
        break_on_hyphens=False,
        break_long_words=False,
    )
    return [w.replace(_GLUE, " ") for w in wrapped] or [line.rstrip()]


#: Joins two words the wrap must not part (a private-use character, never in
#: the text itself, so a non-breaking space of the text stays one).
_GLUE = "\ue000"
#: A number and the word after it (its unit, or what it counts): "111 GB/s".
_NUMBER_UNIT = re.compile(r"(?<![\w.])(\d[\d.,]*(?:e[+-]?\d+)?%?) (?=[^\W\d_])")
#: A word and the number after it (a tier or a term and its figure): "l2 104".
_LABEL_NUMBER = re.compile(r"(?<![\w.])([^\W\d_][\w/]*) (?=[+-]?\d)")
