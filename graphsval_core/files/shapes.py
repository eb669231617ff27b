"""Shapes files (``predict --shapes FILE``): one shape string per line.

``#`` starts a comment; blank lines are skipped. Every shape is checked
against the op's schema (its dim count, positive integers of at most
``MAX_DIM``); an error names the file and line. A shape listed twice is
predicted once, with a warning naming both lines.
"""

from __future__ import annotations

from pathlib import Path

from graphsval_core.datamodel.errors import UserInputError, warn_input
from graphsval_core.datamodel.op import OpSpec, ShapeError
from graphsval_core.files.inputs import read_input

#: The most shapes a file may list.
MAX_SHAPES = 1_000_000


class ShapesFileError(UserInputError):
    """A shapes file cannot be read; the message names the file and line."""


def read_shapes_file(path: str | Path, op: OpSpec) -> list[tuple[int, ...]]:
    """The shapes of ``path`` for ``op``, in file order, each once."""
    data = read_input(path, ShapesFileError, "a shapes file")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ShapesFileError(
            f"{path}: not UTF-8 text (byte {exc.start}: {exc.reason}); expected one shape a line"
        ) from None
    shapes: dict[tuple[int, ...], int] = {}
    repeats = []
    for lineno, line in enumerate(text.split("\n"), start=1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        try:
            dims = op.parse_shape(line)
        except ShapeError as exc:
            raise ShapesFileError(f"{path}:{lineno}: {exc}") from None
        if dims in shapes:
            repeats.append(f"line {lineno} repeats line {shapes[dims]}")
            continue
        if len(shapes) >= MAX_SHAPES:
            raise ShapesFileError(f"{path}:{lineno}: more than {MAX_SHAPES} shapes")
        shapes[dims] = lineno
    if not shapes:
        raise ShapesFileError(f"{path}: no shapes in the file (one shape string a line)")
    if repeats:
        more = f" and {len(repeats) - 3} more" if len(repeats) > 3 else ""
        warn_input(
            f"{path}: {len(repeats)} shape(s) listed again ({', '.join(repeats[:3])}{more}); "
            "each is predicted once"
        )
    return list(shapes)
