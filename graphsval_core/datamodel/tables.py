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
