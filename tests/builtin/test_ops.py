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


def test_a_linear_without_bias_is_one_kernel_writing_its_result(ops):
    """torch.nn.Linear(bias=False), a LLaMA's projections: linear's shapes
    and weight layout, no bias operand, no accumulation; two dispatches (the
    weight's transpose, then the product), as F.linear runs it."""
    shapes = np.array([[8, 512, 1024]])
    op = ops["linear_nobias"]
    assert "bias" not in op.operand_elements(shapes)
    assert (op.kernels, op.accumulates, op.b_transposed) == (2, False, True)
    assert op.flops(shapes).tolist() == ops["linear"].flops(shapes).tolist()


def test_a_linear_without_bias_costs_a_matmul_s_call_and_no_bias(ops):
    """On the Zen 4 a bf16 projection without a bias pays oneDNN's dispatch
    and one framework launch (the weight's transpose), not the accumulating
    call (3.5 us) on top."""
    from graphsval_core.model.predict import predict_batch

    registry = build_registry()
    shapes = [[4, 128, 128]]
    key = "host_amd_epyc_zen4_2c_1t"
    plain = predict_batch(registry, key, "linear_nobias", shapes, "bf16")
    matmul = predict_batch(registry, key, "matmul", shapes, "bf16")
    biased = predict_batch(registry, key, "linear", shapes, "bf16")
    spec = registry.target(key)
    assert plain.launch_s[0] - matmul.launch_s[0] == pytest.approx(spec.launch_overhead_s)
    gap = spec.accumulate_overhead_s["bf16"]
    assert biased.launch_s[0] - plain.launch_s[0] == pytest.approx(gap)


def test_a_linear_without_bias_runs_and_checks_its_result():
    pytest.importorskip("torch")
    from graphsval_core.measure.workloads import build_workload

    work = build_workload("linear_nobias", (8, 32, 16), "fp32", "cpu")
    out = work.run()
    assert tuple(out.shape) == (8, 16) and work.check(out).passed
    with pytest.raises(Exception, match="no int8 kernel"):
        build_workload("linear_nobias", (8, 32, 16), "int8", "cpu")
