"""Shapes files (``predict --shapes FILE``): one shape string per line.

``#`` starts a comment; blank lines are skipped. Every shape is checked
against the op's schema (its dim count, positive integers of at most
``MAX_DIM``); an error names the file and line. A shape listed twice is
predicted once, with a warning naming both lines.

A file of plain shapes (no comment, each ``AxBxC`` of the op's dim count) is
read column-wise: one regular-expression check of the whole text, the dims
parsed by numpy, duplicates found by sorting. Any other file, and any file
that check refuses, is read line by line, which says what is wrong: one
rule set, whose messages come from the line-by-line reader only.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from graphsval_core.datamodel.errors import UserInputError, warn_input
from graphsval_core.datamodel.op import MAX_DIM, OpSpec, ShapeError
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
    fast = _plain_shapes(text, len(op.dims))
    if fast is not None:
        return _unique(str(path), *fast)
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


def _plain_shapes(text: str, ndims: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The dims (one row a shape) and line numbers of a file of plain shapes
    (see module doc); None when the line-by-line reader must read it."""
    if ndims < 1 or "#" in text:
        return None
    lines = text.split("\n")
    if len(lines) > 4 * MAX_SHAPES:
        return None
    linenos = np.array([i for i, ln in enumerate(lines, start=1) if ln.strip()], np.int64)
    dim = "[1-9][0-9]{0,12}"
    plain = re.compile(f"^[ \t]*{dim}(?:x{dim}){{{ndims - 1}}}[ \t\r]*$", re.MULTILINE)
    if not len(linenos) or len(plain.findall(text)) != len(linenos):
        return None
    numbers = np.fromstring(text.replace("x", " "), dtype=np.int64, sep=" ")
    if numbers.size != len(linenos) * ndims or int(numbers.max()) > MAX_DIM:
        return None
    return numbers.reshape(-1, ndims), linenos


def _unique(path: str, dims: np.ndarray, linenos: np.ndarray) -> list[tuple[int, ...]]:
    """The shapes of ``dims`` in file order, each once, with the line-by-line
    reader's count check and duplicate warning."""
    shapes = list(zip(*dims.T.tolist(), strict=True))
    n = len(shapes)
    first = dict(zip(reversed(shapes), range(n - 1, -1, -1), strict=True))  # shape -> first row
    if len(first) == n and n <= MAX_SHAPES:
        return shapes
    out: list[tuple[int, ...]] = []
    repeats = []
    for i, dims_i in enumerate(shapes):
        j = first[dims_i]
        if j != i:
            repeats.append(f"line {linenos[i]} repeats line {linenos[j]}")
            continue
        if len(out) >= MAX_SHAPES:
            raise ShapesFileError(f"{path}:{linenos[i]}: more than {MAX_SHAPES} shapes")
        out.append(dims_i)
    if repeats:
        more = f" and {len(repeats) - 3} more" if len(repeats) > 3 else ""
        warn_input(
            f"{path}: {len(repeats)} shape(s) listed again ({', '.join(repeats[:3])}{more}); "
            "each is predicted once"
        )
    return out
