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


#: The narrowest a wrapped column of :func:`format_noted_table` gets (unless
#: all it holds is narrower).
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
    with a note under each row. The columns share the width: a column whose
    cells fit keeps its width, a longer one wraps its cells within it, none
    gets narrower than its longest word (so the columns stay in line; the
    table may then run past ``width``) nor than :data:`MIN_COLUMN`, and,
    unless the whole table fits as it is, the first (the names) takes at
    most :data:`FIRST_COLUMN` or half the width. A cell with nothing but
    empty cells after it spans them. Each row's note (``notes``, one per
    row; empty: none) follows it, indented by ``note_indent`` and wrapped
    to ``width``. No word is cut; a name (the
    first column) that wraps indents its further lines by two spaces, so a
    row starts at the only line of it that does not start with a space."""
    cells = [[str(c) for c in headers], *[[str(c) for c in row] for row in rows]]
    # what sets a column's width: its heading and the cells that do not span (a cell
    # with only empty ones after it takes their width too, in :func:`_wrapped_row`)
    own = [list(column) for column in zip(*cells, strict=True)]
    for row in cells[1:]:
        last = _last_filled(row)
        if last < len(row) - 1:
            own[last].remove(row[last])
    natural = [max((len(c) for c in column), default=0) for column in own]
    least = [min(n, max(MIN_COLUMN, _longest_word(c))) for n, c in zip(natural, own, strict=True)]
    if sum(natural) + 2 * (len(natural) - 1) <= width:
        first = natural[0]  # the whole table fits as it is
    else:
        names = min(max(FIRST_COLUMN, width // 4), width // 2)
        first = min(natural[0], max(least[0], names))
    room = width - first - 2 * (len(headers) - 1)
    widths = [first, *_share(natural[1:], least[1:], room)]
    lines = _wrapped_row(cells[0], widths, span=False)
    lines.append("  ".join("-" * w for w in widths))
    pad = " " * note_indent
    for row, note in zip(cells[1:], notes, strict=True):
        lines += _wrapped_row(row, widths, width)
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


def _longest_word(cells: Sequence[str]) -> int:
    return max((len(word) for cell in cells for word in cell.split()), default=0)


def _share(natural: list[int], least: list[int], room: int) -> list[int]:
    """Widths for columns of ``natural`` widths in ``room`` columns: all as
    they are where they fit, else each its ``least`` and what is left shared
    out, the column that needs least more first, each up to its natural
    width or its fair share of what is left, whichever is less."""
    if sum(natural) <= room:
        return list(natural)
    out = list(least)
    left = max(room - sum(least), 0)
    order = sorted(range(len(natural)), key=lambda i: natural[i] - least[i])
    for done, i in enumerate(order):
        more = min(natural[i] - least[i], left // (len(order) - done))
        out[i] += more
        left -= more
    return out


def _last_filled(row: Sequence[str]) -> int:
    """The last cell of ``row`` that holds anything, the name's at the least:
    it spans the empty cells after it (a name never spans)."""
    filled = max((i for i, c in enumerate(row) if c.strip()), default=0)
    return min(max(filled, 1), len(row) - 1)


def _wrapped_row(
    row: Sequence[str], widths: Sequence[int], width: int = 0, span: bool = True
) -> list[str]:
    """One row of cells, each wrapped to its column's width, as lines; with
    ``span``, the last cell that holds anything (the name's excepted) takes
    the width of the empty ones after it too, and the rest of the screen's
    ``width``."""
    last = _last_filled(row) if span else len(row) - 1
    spanned = sum(widths[last:]) + 2 * (len(widths) - 1 - last)
    if last < len(row) - 1:
        spanned = max(spanned, width - sum(widths[:last]) - 2 * last)
    widths = [*widths[:last], spanned]
    parts = [
        textwrap.wrap(
            c,
            w,
            subsequent_indent="  " if i == 0 else "",  # a name's lines after its first
            break_on_hyphens=False,
            break_long_words=False,
        )
        or [""]
        for i, (c, w) in enumerate(zip(row[: last + 1], widths, strict=True))
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
