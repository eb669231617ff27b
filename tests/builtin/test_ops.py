"""Built-in ops: FLOPs, bytes per operand and working sets (DESIGN.md section 9)."""

from __future__ import annotations

import numpy as np
import pytest

from graphsval_core.datamodel.op import ShapeError
from graphsval_core.plugins.loader import build_registry


@pytest.fixture(scope="module")
def ops():
    return build_registry(autoload=False).ops()


def test_matmul(ops):
    shapes = np.array([[64, 128, 256], [1, 1, 1]])
    assert ops["matmul"].flops(shapes).tolist() == [2 * 64 * 128 * 256, 2]
    # (M*K + K*N + M*N) * bpe at fp32
    ws = (64 * 128 + 128 * 256 + 64 * 256) * 4
    assert ops["matmul"].working_set_bytes(shapes, 4)[0] == ws


def test_linear_counts_bias_as_traffic_not_working_set(ops):
    shapes = np.array([[8, 512, 1024]])
    elements = ops["linear"].operand_elements(shapes)
    assert elements["bias"][0] == 1024
    assert ops["linear"].working_set_bytes(shapes, 2)[0] == (8 * 512 + 512 * 1024 + 8 * 1024) * 2
    assert ops["linear"].gemm_dims(shapes).tolist() == [[8, 512, 1024]]


def test_vector_add(ops):
    shapes = np.array([[4096]])
    assert ops["vector_add"].flops(shapes).tolist() == [4096]
    assert ops["vector_add"].working_set_bytes(shapes, 4)[0] == 3 * 4096 * 4
    assert ops["vector_add"].gemm_dims is None


def test_parse_shape(ops):
    assert ops["matmul"].parse_shape("1024x512x256") == (1024, 512, 256)
    assert ops["matmul"].format_shape((1, 2, 3)) == "1x2x3"
    with pytest.raises(ShapeError, match="expected 3 dims"):
        ops["matmul"].parse_shape("1024x512")
    with pytest.raises(ShapeError, match="expected 1 dim, got 3"):  # not "1 dims joined by"
        ops["vector_add"].parse_shape("8x64x64")
    with pytest.raises(ShapeError, match="'-4' is not a positive integer"):
        ops["vector_add"].parse_shape("-4")
    with pytest.raises(ShapeError, match="dim '0' must be at least 1"):
        ops["linear"].parse_shape("0x1x1")


def test_sweeps_folder_ships_as_a_resource():
    from graphsval_core.plugins.resources import sweeps_dir

    readme = sweeps_dir().joinpath("README.md")
    assert "Frozen shape sets" in readme.read_text()
