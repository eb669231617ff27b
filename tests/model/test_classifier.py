"""The classifier on spec-sheet numbers, checked by hand (one shape per regime),
and the measured regime inferred from achieved rates."""

from __future__ import annotations

import math

import numpy as np
import pytest

from graphsval_core.model.classifier import classify, classify_details, measured_regime
from graphsval_core.model.reference import predict
from graphsval_core.plugins.loader import build_registry


@pytest.fixture(scope="module")
def registry():
    return build_registry(calibrated=False)  # spec-sheet numbers, as the arithmetic below


def label(registry, hw, op, shape, dtype):
    return classify(registry, registry.target(hw), registry.op(op), [shape], dtype)[0]


def test_i7_12700k_spec_numbers(registry):
    t = registry.target("i7_12700k")
    assert t.peak_ops_per_s["fp32"] == pytest.approx(8 * 32 * 4.7e9 + 4 * 16 * 3.6e9)  # 1.4336e12
    assert t.launch_overhead_s == 2e-6
    assert t.tier("dram").peak_bandwidth_bps == 76.8e9
    assert t.tier("l3").peak_bandwidth_bps == pytest.approx(8 * 32 * 4.7e9 + 32 * 3.6e9)


def test_i7_12700k_one_shape_per_regime(registry):
    # launch: vector_add 256 fp32 moves 3 KiB (about 1 ns from L1) against a 2 us launch
    assert label(registry, "i7_12700k", "vector_add", (256,), "fp32") == "launch_bound"
    # alu: 2048^3 fp32. Register tiles of 13x13 (floor(sqrt(2048/12))): 158^2 = 24,964 tiles
    # -> 2,081 waves on 12 cores of 2 x 2048 x 169 ops each at 1.4336e12/12 op/s = 12.06 ms;
    # the largest memory term, L1: (2 + 158 + 158) x 2048^2 x 4 B / 2.8672e12 B/s = 1.86 ms
    compute = 2081 * (2 * 2048 * 169) / (1.4336e12 / 12)
    l1 = (2 + 158 + 158) * 2048**2 * 4 / 2.8672e12
    assert compute / l1 > 1.2
    assert label(registry, "i7_12700k", "matmul", (2048, 2048, 2048), "fp32") == "alu_bound"
    # dram: 1x4096x4096 fp32, working set 67,141,632 B > 25 MiB of L3. Tile for the L3:
    # Nt = floor(sqrt(25 MiB / 12)) = 1478 -> (2x4096 + 4096 x 3 + 4096^2) x 4 B, of which
    # L3 keeps 25 MiB / 67.1 MB resident: x 0.6096 over 76.8 GB/s = 533 us, against 24 us
    # of compute and ~42 us from L3
    ws = (4096 + 4096**2 + 4096) * 4
    dram = (2 * 4096 + 4096 * 3 + 4096**2) * 4 * (1 - 25 * 2**20 / ws) / 76.8e9
    assert dram == pytest.approx(533.4e-6, rel=1e-3)
    assert label(registry, "i7_12700k", "matmul", (1, 4096, 4096), "fp32") == "dram_bound"
    # (on the datasheet figures no shape is L2- or L3-bound: L1 streams everything the
    # outer tiers do at about the same bandwidth as L2, and twice L3's)
    # ambiguous: 1024^3 fp32 has a 12 MiB working set, within 20% of the 11.25 MiB of L2
    assert label(registry, "i7_12700k", "matmul", (1024, 1024, 1024), "fp32") == "ambiguous"
    # unsupported: the i7 has no fp16
    assert label(registry, "i7_12700k", "matmul", (64, 64, 64), "fp16") == "unsupported"


def test_h100_one_shape_per_regime(registry):
    t = registry.target("h100_sxm5_80gb")
    assert t.peak_ops_per_s["fp16"] == 989.4e12 and t.compute_units == 132
    assert t.tier("dram").peak_bandwidth_bps == 3.35e12 and t.launch_overhead_s == 5e-6
    assert label(registry, "h100_sxm5_80gb", "vector_add", (4096,), "fp16") == "launch_bound"
    # alu: 4096^3 fp16. Register tiles 104x104 (floor(sqrt(65536/6))): 40^2 = 1600 tiles
    # -> 13 waves on 132 SMs of 2 x 4096 x 104^2 ops at 989.4e12/132 op/s = 153.7 us;
    # L2 serves (2 + 20 + 20) x 4096^2 x 2 B (L1 tile 209) at 12.39 TB/s = 113.7 us
    compute = 13 * (2 * 4096 * 104**2) / (989.4e12 / 132)
    l2 = 42 * 4096**2 * 2 / (5120 / 108 * 132 * 1.98e9)
    assert compute == pytest.approx(153.7e-6, rel=1e-3) and compute / l2 > 1.2
    assert label(registry, "h100_sxm5_80gb", "matmul", (4096, 4096, 4096), "fp16") == "alu_bound"
    # dram: 1x8192x8192 fp16 streams its 134 MB of weights once from HBM: 40 us at 3.35 TB/s
    dram = (2 * 8192 + 8192 * 3 + 8192**2) * 2 / 3.35e12
    assert dram == pytest.approx(40.09e-6, rel=1e-3)
    assert label(registry, "h100_sxm5_80gb", "matmul", (1, 8192, 8192), "fp16") == "dram_bound"


def test_jetson_orin_nano_one_shape_per_regime(registry):
    t = registry.target("jetson_orin_nano_8gb")
    assert t.peak_ops_per_s["fp16"] == pytest.approx(2048 * 8 * 1.02e9)
    assert t.tier("dram").peak_bandwidth_bps == 102e9 and t.launch_overhead_s == 20e-6
    assert label(registry, "jetson_orin_nano_8gb", "vector_add", (4096,), "fp16") == "launch_bound"
    # alu: 1024x16384x1024 fp16: 10^2 = 100 register tiles -> 13 waves on 8 SMs of
    # 2 x 16384 x 104^2 ops at 16.71e12/8 op/s = 2.21 ms; dram (L2 tile 591):
    # (2 x 1024^2 + 2 x 16384 x 1024 x 2) x 2 B / 102 GB/s = 1.36 ms
    compute = 13 * (2 * 16384 * 104**2) / (2048 * 8 * 1.02e9 / 8)
    dram = (2 * 1024**2 + 1024 * 16384 * 2 + 16384 * 1024 * 2) * 2 / 102e9
    assert compute / dram > 1.2
    assert label(registry, "jetson_orin_nano_8gb", "matmul", (1024, 16384, 1024), "fp16") == (
        "alu_bound"
    )
    # dram: vector_add 2^24 fp16 = 100.7 MB: 987 us from LPDDR5 against a 20 us launch
    assert label(registry, "jetson_orin_nano_8gb", "vector_add", (1 << 24,), "fp16") == (
        "dram_bound"
    )


def test_details_report_margin(registry):
    t, op = registry.target("i7_12700k"), registry.op("matmul")
    d = classify_details(registry, t, op, [[2048, 2048, 2048], [1024, 1024, 1024]], "fp32")
    assert d.model_regime.tolist() == ["alu_bound", d.model_regime[1]]
    assert d.model_regime[1] != "ambiguous"  # the model always answers
    assert d.near_boundary.tolist() == [False, True]
    assert d.term_ratio[0] > 1.2


def test_measured_regime_from_achieved_rates(registry):
    t = registry.target("i7_12700k")
    shapes = np.array([[2048, 2048, 2048], [1, 4096, 4096], [1, 4096, 4096]])
    p = predict(registry, t, registry.op("matmul"), shapes, "fp32")
    measured = np.array(
        [
            p.flops[0] / (0.8 * t.peak_ops_per_s["fp32"]),  # 80% of peak -> alu_bound
            p.bytes_per_tier[1, 3] / (0.9 * 76.8e9),  # 90% of DRAM bandwidth -> dram_bound
            p.bytes_per_tier[2, 3] / (0.3 * 76.8e9),  # 30%: nothing reaches 70% -> ambiguous
        ]
    )
    assert measured_regime(p, measured, t).tolist() == ["alu_bound", "dram_bound", "ambiguous"]
    small = predict(registry, t, registry.op("vector_add"), np.array([[256]]), "fp32")
    assert measured_regime(small, np.array([3e-6]), t).tolist() == ["launch_bound"]
    assert measured_regime(small, np.array([math.nan]), t).tolist() == ["ambiguous"]
