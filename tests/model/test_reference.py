"""The reference model: worked examples checked by hand, and its contract."""

from __future__ import annotations

import math

import numpy as np
import pytest

from graphsval_core import hookimpl
from graphsval_core.datamodel.provenance import datasheet, estimated
from graphsval_core.datamodel.target import SpecError
from graphsval_core.model.predict import predict_batch, predict_one
from graphsval_core.model.reference import UnsupportedDtypeError
from graphsval_core.plugins.loader import build_registry


@pytest.fixture
def toy(make_target, make_plugin, fake_entry_points):
    """The conftest toy target with a 1 ns launch, so memory regimes are reachable.

    4 units; fp32 peak 256 GFLOP/s (64 GFLOP/s per unit); register tile 2 KiB
    (the cpu default); l1 32 KiB per unit (128 KiB total) at 1 TB/s; l2 1 MiB
    per unit (4 MiB total) at 500 GB/s; dram 16 GiB at 50 GB/s; 1 ns access
    latency everywhere; 1 pJ per op and per byte at every tier; idle 5 W.
    """
    fake_entry_points()
    spec = make_target("toy", launch_overhead_s=estimated(1e-9, "test"))
    registry = build_registry(extra_plugins=[("toy", make_plugin("toy", lambda: [spec]))])
    return registry


def one(registry, op, shape, dtype="fp32"):
    return predict_batch(registry, "toy", op, [shape], dtype)


def test_vector_add_in_l1(toy):
    # N=1000 fp32: x, y and out, 3 x 1000 x 4 = 12,000 B, fit l1 (131,072 B); the toy
    # is a CPU, whose write-allocate caches read out's lines before storing them:
    # 4 x 4,000 = 16,000 B, and only l1 serves them
    p = one(toy, "vector_add", (1000,))
    assert p.bytes_per_tier[0].tolist() == [16_000, 0, 0]
    assert p.time_per_tier_s[0, 0] == pytest.approx(16_000 / 1e12)  # 16 ns
    # compute: 12 B/op, a 2048 B register tile holds 170 ops -> 6 tiles -> 2 waves on 4 units
    assert p.waves[0] == 2
    assert p.compute_s[0] == pytest.approx(2 * 170 / 64e9)  # 5.3 ns
    assert p.regime[0] == "l1_bound"
    assert p.latency_s[0] == pytest.approx(1e-9 + 16e-9)
    assert p.binding_tier[0] == "l1" and p.residency_tier[0] == "registers"


def test_vector_add_in_l2(toy):
    # N=100,000: working set 1.2 MB > 128 KiB of l1, <= 4 MiB of l2: l1 and l2 serve it,
    # dram not. 1.6 MB move (write-allocate included); l1 keeps 131,072 B of the 1.2 MB
    # resident, so l2 serves 1.6e6 x (1 - 131,072 / 1.2e6) = 1,425,237.3 B
    p = one(toy, "vector_add", (100_000,))
    l2 = 1.6e6 * (1 - 131_072 / 1.2e6)
    assert p.bytes_per_tier[0].tolist() == pytest.approx([1.6e6, l2, 0])
    assert p.time_per_tier_s[0, 1] == pytest.approx(l2 / 5e11)  # 2.85 us
    assert p.regime[0] == "l2_bound" and p.residency_tier[0] == "l1"
    assert p.latency_s[0] == pytest.approx(1e-9 + l2 / 5e11)


def test_vector_add_from_dram_with_energy(toy):
    # N=1,000,000: 12 MB > 4 MiB: l2 keeps 4,194,304 B of it resident, so dram serves
    # 16e6 x (1 - 4,194,304 / 12e6) = 10,407,594.7 B at 50 GB/s -> 208 us
    p = one(toy, "vector_add", (1_000_000,))
    l2 = 16e6 * (1 - 131_072 / 12e6)
    dram = 16e6 * (1 - 4 * 2**20 / 12e6)
    assert p.bytes_per_tier[0].tolist() == pytest.approx([16e6, l2, dram])
    assert p.regime[0] == "dram_bound"
    latency = 1e-9 + dram / 5e10
    assert p.latency_s[0] == pytest.approx(latency)
    # 1e6 ops x 1 pJ + the bytes of the three tiers x 1 pJ/B + 5 W x latency
    traffic = (16e6 + l2 + dram) * 1e-12
    assert p.energy_j[0] == pytest.approx(1e6 * 1e-12 + traffic + 5.0 * latency)


def test_matmul_whose_tile_fits_l1(toy):
    # 32x32x32 fp32: working set 3 x 32 x 32 x 4 = 12,288 B fits l1 -> only l1 serves.
    # register tile: floor(sqrt(2048 / 12)) = 13 -> Mt = Nt = 13
    # l1 bytes = (MN + MK ceil(N/13) + KN ceil(M/13)) x 4 = (1024 + 3072 + 3072) x 4 = 28,672
    # (matmul is its op's only kernel: C is written whole, never read first)
    p = one(toy, "matmul", (32, 32, 32))
    assert p.bytes_per_tier[0].tolist() == [28_672, 0, 0]
    assert p.tiles[0, 0].tolist() == [13, 32, 13]
    # compute: 3 x 3 = 9 tiles -> 3 waves on 4 units; tile = 2 x 32 x 13 x 13 = 10,816 ops
    assert p.waves[0] == 3
    assert p.compute_s[0] == pytest.approx(3 * 10_816 / 64e9)  # 507 ns
    assert p.utilisation[0] == pytest.approx(2 * 32**3 / (3 * 4 * 10_816))
    assert p.regime[0] == "alu_bound"
    assert p.latency_s[0] == pytest.approx(1e-9 + 3 * 10_816 / 64e9)
    assert p.hidden_s[0] == pytest.approx(28_672 / 1e12)


def test_matmul_streaming_from_dram(toy):
    # 1x2048x2048 fp32: working set (2048 + 2048^2 + 2048) x 4 = 16.8 MB > 4 MiB.
    # dram boundary, tile sized for a unit's l2 (1 MiB): floor(sqrt(2^20 / 12)) = 295
    # -> Mt = 1, Nt = 295: (2048 + 2048 x ceil(2048/295)=7 + 2048^2 x 1) x 4 B (C written
    # once: matmul's result is written whole) ... of which l2 (4 MiB) keeps a
    # 4 MiB / 16,793,600 B share resident
    p = one(toy, "matmul", (1, 2048, 2048))
    working_set = (2048 + 2048 * 2048 + 2048) * 4
    dram_bytes = (2048 + 2048 * 7 + 2048 * 2048) * 4 * (1 - 4 * 2**20 / working_set)
    assert p.bytes_per_tier[0, 2] == pytest.approx(dram_bytes)
    assert p.tiles[0, 2].tolist() == [1, 2048, 295]
    assert p.memory_s[0] == pytest.approx(dram_bytes / 5e10)  # 337 us
    # compute: register tiles 1 x 13 -> 158 tiles -> 40 waves of 2 x 2048 x 13 ops
    assert p.compute_s[0] == pytest.approx(40 * 2 * 2048 * 13 / 64e9)
    assert p.regime[0] == "dram_bound" and p.binding_tier[0] == "dram"
    assert p.residency_tier[0] == "l2"
    sentence = p.sentence(0)
    assert "a 1x295 output tile lives in l2" in sentence
    assert "from dram at 50 GB/s" in sentence and sentence.endswith("-> dram_bound")
    # a tile read with a vowel takes "an"
    assert "an 8x8 output tile lives in" in one(toy, "matmul", (8, 8, 8)).sentence(0)


def test_linear_adds_its_bias_to_the_traffic(toy):
    mm = one(toy, "matmul", (1, 2048, 2048))
    lin = one(toy, "linear", (1, 2048, 2048))
    # the bias is not in the working set, so both keep the same share resident in l2;
    # linear also reads its output (the broadcast bias) before the product accumulates
    # onto it, where matmul writes its result whole
    share = 1 - 4 * 2**20 / ((2048 + 2048 * 2048 + 2048) * 4)
    extra = (2048 + 2048) * 4 * share  # the bias, and C read first
    assert lin.bytes_per_tier[0, 2] - mm.bytes_per_tier[0, 2] == pytest.approx(extra)


def test_launch_bound(toy, make_target, make_plugin, fake_entry_points):
    p = predict_batch(
        build_registry(
            extra_plugins=[
                (
                    "t",
                    make_plugin(
                        "t",
                        lambda: [
                            make_target("slow_launch", launch_overhead_s=estimated(5e-6, "test"))
                        ],
                    ),
                )
            ]
        ),
        "slow_launch",
        "vector_add",
        [[256]],
        "fp32",
    )
    assert p.regime[0] == "launch_bound"
    assert p.latency_s[0] == pytest.approx(5e-6 + 256 * 16 / 1e12)  # write-allocate: 16 B


def test_latency_terms_sum_exactly_and_energy_terms_sum(toy):
    rng = np.random.default_rng(1)
    shapes = rng.integers(1, 3000, size=(500, 3))
    p = predict_batch(toy, "toy", "matmul", shapes, "fp32")
    total = p.launch_s + p.exposed_compute_s + p.exposed_memory_s + p.first_touch_s + p.pack_s
    assert np.array_equal(total, p.latency_s)
    parts = p.energy_compute_j + p.energy_per_tier_j.sum(axis=1) + p.energy_static_j
    assert np.allclose(parts, p.energy_j, rtol=1e-3)


def test_single_shape_api_agrees_with_batch(toy):
    rng = np.random.default_rng(2)
    shapes = rng.integers(1, 5000, size=(50, 3))
    batch = predict_batch(toy, "toy", "matmul", shapes, "fp32")
    for i, dims in enumerate(shapes):
        row = predict_one(toy, "toy", "matmul", "x".join(map(str, dims)), "fp32")
        assert math.isclose(row["latency_s"], batch.latency_s[i], rel_tol=1e-9)
        assert math.isclose(row["energy_j"], batch.energy_j[i], rel_tol=1e-9)
        assert row["regime"] == batch.regime[i]


def test_unsupported_dtype(toy):
    with pytest.raises(UnsupportedDtypeError, match="does not support dtype 'int8'"):
        one(toy, "matmul", (8, 8, 8), "int8")


def test_target_can_override_residency_window(make_target, make_plugin, fake_entry_points):
    fake_entry_points()
    spec = make_target("tiled", launch_overhead_s=estimated(1e-9, "test"))

    def graphsval_residency_window(target, op, shapes, dtype, tier):
        if target.key != "tiled" or op.gemm_dims is None:
            return None
        tile = np.array(op.gemm_dims(shapes), dtype=float)
        tile[:, 0] = np.minimum(tile[:, 0], 8)
        tile[:, 2] = np.minimum(tile[:, 2], 8)
        return tile

    plugin = make_plugin("tiled", lambda: [spec])
    plugin.graphsval_residency_window = hookimpl(graphsval_residency_window)
    registry = build_registry(extra_plugins=[("tiled", plugin)])
    p = predict_batch(registry, "tiled", "matmul", [[1024, 1024, 1024]], "fp32")
    assert p.tiles[0, 2].tolist() == [8, 1024, 8]
    # A re-read once per column block: ceil(1024 / 8) = 128 (C written once, as
    # matmul's result is); l2 keeps 4 of the 12 MiB
    assert p.bytes_per_tier[0, 2] == pytest.approx((1 + 128 + 128) * 1024 * 1024 * 4 * 2 / 3)


def test_over_tdp_is_flagged_not_clamped(make_target, make_plugin, fake_entry_points):
    fake_entry_points()
    hot = make_target("hot", energy_per_op_j={"fp32": estimated(1e-9, "absurd")})
    registry = build_registry(extra_plugins=[("hot", make_plugin("hot", lambda: [hot]))])
    p = predict_batch(registry, "hot", "matmul", [[2048, 2048, 2048]], "fp32")
    assert p.over_tdp[0]
    assert p.energy_j[0] / p.latency_s[0] > 65.0  # not clamped to the TDP
    assert "above TDP" in p.sentence(0)


def test_first_touch_of_a_large_fresh_output(make_target, make_plugin, fake_entry_points):
    # 64 MB of fresh output at 10 GB/s of page zeroing: 6.4 ms on top of the kernel;
    # a 16 MB output (below the 32 MiB mmap threshold) is reused from the heap: free
    fake_entry_points()
    spec = make_target(
        "touchy",
        first_touch_bps=estimated(10e9, "test"),
        first_touch_min_bytes=estimated(32 * 2**20, "test"),
    )
    registry = build_registry(extra_plugins=[("t", make_plugin("t", lambda: [spec]))])
    p = predict_batch(registry, "touchy", "vector_add", [[16 * 2**20], [4 * 2**20]], "fp32")
    assert p.first_touch_s[0] == pytest.approx(64 * 2**20 / 10e9)
    assert p.first_touch_s[1] == 0.0
    total = p.launch_s + p.exposed_compute_s + p.exposed_memory_s + p.first_touch_s + p.pack_s
    assert np.array_equal(total, p.latency_s)
    assert "first touch of the fresh output 6.71 ms at 10 GB/s;" in p.sentence(0)


def _fresh_pages(make_target, key, other, first_touch_bps, **kw):
    """A toy target with fp32 and ``other`` (dtype, peak, energy per op) whose
    outputs of 32 MiB or more take fresh pages at ``first_touch_bps``."""
    dtype, peak, joules = other
    return make_target(
        key,
        peak_ops_per_s={"fp32": datasheet(256e9, "test"), dtype: datasheet(peak, "test")},
        energy_per_op_j={"fp32": estimated(1e-12, "test"), dtype: estimated(joules, "test")},
        first_touch_bps=estimated(first_touch_bps, "test"),
        first_touch_min_bytes=estimated(32 * 2**20, "test"),
        **kw,
    )


def test_an_op_with_no_product_takes_fresh_pages_at_its_dtypes_own_rate(
    make_target, make_plugin, fake_entry_points
):
    # PyTorch's bf16 add faults its output in at a third to a half of the rate its fp32
    # kernels and the GEMM library do: a vector_add at a dtype with its own rate pays
    # that rate, a matrix product of the same dtype and a dtype without one the shared
    fake_entry_points()
    spec = _fresh_pages(
        make_target,
        "touchy",
        ("bf16", 512e9, 1e-12),
        3e9,
        vector_first_touch_bps={"bf16": estimated(1e9, "test")},
    )
    registry = build_registry(extra_plugins=[("t", make_plugin("t", lambda: [spec]))])
    add = predict_batch(registry, "touchy", "vector_add", [[32 * 2**20], [8 * 2**20]], "bf16")
    assert add.first_touch_s[0] == pytest.approx(64 * 2**20 / 1e9)
    assert add.first_touch_s[1] == 0.0  # 16 MiB: reused from the heap, at any rate
    fp32 = predict_batch(registry, "touchy", "vector_add", [[16 * 2**20]], "fp32")
    assert fp32.first_touch_s[0] == pytest.approx(64 * 2**20 / 3e9)
    product = predict_batch(registry, "touchy", "matmul", [[4096, 16, 8192]], "bf16")
    assert product.first_touch_s[0] == pytest.approx(4096 * 8192 * 2 / 3e9)


def test_a_vector_first_touch_rate_needs_the_size_the_os_maps_afresh(make_target):
    with pytest.raises(
        SpecError, match="'vector_first_touch_bps': needs first_touch_bps \\(the rate the products"
    ):
        make_target(vector_first_touch_bps={"fp32": estimated(1e9, "test")})
    with pytest.raises(SpecError, match="'vector_first_touch_bps.bf16': dtype 'bf16' has no peak"):
        make_target(
            first_touch_bps=estimated(3e9, "test"),
            first_touch_min_bytes=estimated(32 * 2**20, "test"),
            vector_first_touch_bps={"bf16": estimated(1e9, "test")},
        )


def test_an_int8_product_writes_int32(make_target, make_plugin, fake_entry_points):
    # torch._int_mm returns int32: a 4096 x 2048 output is 32 MiB, not 8 MiB, so it
    # is mapped afresh (first touch) and its traffic counts 4 bytes per element;
    # A and B stay 1 byte per element
    fake_entry_points()
    spec = _fresh_pages(make_target, "int8y", ("int8", 1e12, 1e-13), 10e9)
    registry = build_registry(extra_plugins=[("t", make_plugin("t", lambda: [spec]))])
    m, k, n = 4096, 64, 2048
    p = predict_batch(registry, "int8y", "matmul", [[m, k, n]], "int8")
    assert p.first_touch_s[0] == pytest.approx(m * n * 4 / 10e9)
    assert p.working_set_bytes[0] == m * k + k * n + m * n * 4
    # every tier's traffic counts C at 4 bytes: C is written once (fresh) in l1's
    # register tiles of floor(sqrt(2048 / 3)) = 26 on a side
    tiles = np.ceil(m / 26), np.ceil(n / 26)
    l1 = m * n * 4 + m * k * tiles[1] + k * n * tiles[0]
    assert p.bytes_per_tier[0, 0] == pytest.approx(l1)
    fp32 = predict_batch(registry, "int8y", "matmul", [[m, k, n]], "fp32")
    assert fp32.working_set_bytes[0] == (m * k + k * n + m * n) * 4


def test_only_pytorch_architectures_return_int8_accumulators():
    from graphsval_core.datamodel.dtypes import product_output_bytes

    assert product_output_bytes("int8", "cpu") == product_output_bytes("int8", "gpu") == 4.0
    # a systolic array requantizes in its output pipeline
    assert product_output_bytes("int8", "systolic") == 1.0
    assert product_output_bytes("bf16", "cpu") == 2.0


def test_a_cpus_threads_split_the_products_tiles_into_blocks(toy):
    # 65 x 65 of C in the toy's 13 x 13 register tiles is 5 x 5 tiles; its 4 threads split
    # them 2 x 2 at best, 3 x 3 tiles on the busiest, where a deal would give 7 each
    p = one(toy, "matmul", [65, 4096, 65])
    assert p.waves[0] == 9
    tile_ops = 2 * 4096 * 13 * 13
    assert p.compute_s[0] == pytest.approx(9 * tile_ops / 64e9)
    assert p.utilisation[0] == pytest.approx(2 * 65 * 4096 * 65 / (9 * 4 * tile_ops))
