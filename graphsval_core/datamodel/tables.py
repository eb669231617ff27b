"""Tables for people: aligned plain text for the terminal, and Markdown."""

from __future__ import annotations

import re
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
    """``line`` wrapped to ``width`` with a hanging indent (its own indent
    and two more spaces); a table (several lines in one) or a line that fits
    is kept as it is, and a word longer than the width (a path) is not cut."""
    if "\n" in line or len(line) <= width:
        return [line]
    indent = line[: len(line) - len(line.lstrip(" "))]
    # a number keeps its unit on its line ("111 GB/s", not "111" then "GB/s")
    glued = _NUMBER_UNIT.sub("\\1\u00a0", line.lstrip(" "))
    wrapped = textwrap.wrap(
        glued,
        width,
        initial_indent=indent,
        subsequent_indent=indent + "  ",
        break_on_hyphens=False,
        break_long_words=False,
    )
    return [w.replace("\u00a0", " ") for w in wrapped] or [line]


#: A number and the word after it (a unit, or what it counts).
_NUMBER_UNIT = re.compile(r"(\d) (?=[^\W\d_])")
