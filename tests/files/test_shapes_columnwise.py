"""The shapes file's column-wise reader (issue 17 item 5) gives what the
line-by-line reader gives: the same shapes in the same order, the same
duplicate warning, the same error, on every kind of file."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from graphsval_core.builtin.ops import MATMUL
from graphsval_core.datamodel.errors import InputWarning
from graphsval_core.datamodel.op import OpSpec
from graphsval_core.files import shapes as shapes_module
from graphsval_core.files.shapes import ShapesFileError, read_shapes_file

CASES = [
    "1x2x3\n4x5x6\n",
    "1x2x3\n\n 4x5x6 \r\n1x2x3\n",
    "\n\n1x2x3",
    "1x2x3\n7x8x9\n1x2x3\n7x8x9\n1x2x3\n4x4x4\n4x4x4\n",
    "1x2x3\n1x2\n",
    "01x2x3\n",
    "1X2X3\n",
    "",
    "\n \n",
    "1x2x3\n1099511627777x1x1\n",
    "1x2x3\n1099511627776x1x1\n",
    "1x2x3\n\x0c\n2x2x2\n",
    "1x2x3 # a comment\n# only a comment\n3x3x3\n",
    "1x0x3\n",
    "1x2x3x4\n",
    "\t8x8x8\t\n",
]


def _read(path, op: OpSpec, columnwise: bool, monkeypatch) -> tuple[object, list[str]]:
    if not columnwise:
        monkeypatch.setattr(shapes_module, "_plain_shapes", lambda *args: None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out: object = read_shapes_file(path, op)
        except ShapesFileError as exc:
            out = f"error: {exc}"
    monkeypatch.undo()
    return out, [str(w.message) for w in caught if issubclass(w.category, InputWarning)]


@pytest.mark.parametrize("text", CASES)
def test_columnwise_reads_as_line_by_line(tmp_path, monkeypatch, text):
    path = tmp_path / "shapes.txt"
    path.write_text(text)
    op = MATMUL
    assert _read(path, op, True, monkeypatch) == _read(path, op, False, monkeypatch)


def test_columnwise_many_shapes_with_repeats(tmp_path, monkeypatch):
    rng = np.random.default_rng(3)
    rows = rng.integers(1, 40, size=(5000, 3)).tolist()  # many repeats
    path = tmp_path / "shapes.txt"
    path.write_text("\n".join("x".join(map(str, r)) for r in rows) + "\n")
    op = MATMUL
    fast = _read(path, op, True, monkeypatch)
    assert fast == _read(path, op, False, monkeypatch)
    assert fast[1] and "listed again" in fast[1][0]


def test_columnwise_too_many_shapes(tmp_path, monkeypatch):
    monkeypatch.setattr(shapes_module, "MAX_SHAPES", 3)
    path = tmp_path / "shapes.txt"
    path.write_text("1x1x1\n2x2x2\n1x1x1\n3x3x3\n4x4x4\n")
    op = MATMUL
    with pytest.raises(ShapesFileError, match=r"shapes.txt:5: more than 3 shapes"):
        read_shapes_file(path, op)
