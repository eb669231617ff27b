"""Text written for other programs to read, made safe for them.

A Markdown report keeps HTML as text and a pipe inside a table cell
(:func:`md_text`, :func:`md_cell`): a note ``<script>...`` in a baseline must
not become markup in a rendered report. A CSV cell a spreadsheet would run as
a formula (text beginning ``=``, ``+``, ``-``, ``@``, a tab or a carriage
return: ``=HYPERLINK(...)``) is written with a leading ``'``, which the
spreadsheet shows as text (:func:`csv_cell`); numbers are written as they are.
"""

from __future__ import annotations

from typing import Any

_HTML = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})
#: What a spreadsheet reads as the start of a formula.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def md_text(value: Any) -> str:
    """``value`` as Markdown text: HTML shown as text, pipes escaped, one line."""
    text = str(value).translate(_HTML).replace("|", "\\|")
    return text.replace("\r", " ").replace("\n", " ")


def md_cell(value: Any) -> str:
    """``value`` as one cell of a Markdown table (see :func:`md_text`)."""
    return md_text(value)


def csv_cell(value: Any) -> Any:
    """``value`` for a CSV cell: text a spreadsheet would run as a formula
    gets a leading ``'``; anything else (numbers included) as it is."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value
