"""Each physical term of the reference model alone, on small inputs checked by hand."""

from __future__ import annotations

import numpy as np
import pytest

from graphsval_core.datamodel.provenance import estimated
from graphsval_core.model.terms.compute import (
    RegisterTiles,
    compute_waves,
    parallelism,
    partition_waves,
    product_tiles,
    register_tile_bytes,
    streaming_tiles,
)
from graphsval_core.model.terms.energy import energy
from graphsval_core.model.terms.latency import overlap_terms, regime
from graphsval_core.model.terms.memory import (
    binding_tier_names,
    memory_time,
    residency_tier_names,
)
from graphsval_core.model.terms.overheads import (
    first_touch_time,
    fresh_output,
    launch_time,
    pack_time,
)
from graphsval_core.model.terms.residency import (
    inner_capacities,
    miss_fraction,
    stream_miss_fraction,
)
from graphsval_core.model.terms.traffic import (
    gemm_traffic_bytes,
    library_rewrites,
    operand_bytes,
    output_passes,
    output_read_first,
    outside_product_bytes,
    product_overwrites,
    reuse_traffic,
    square_tile,
    streamed_traffic,
    tile_capacity_bytes,
    write_allocates,
)

MIB = 2**20
# C[2,4] = A[2,3] B[3,4], as (M, K, N)
GEMM = np.array([[2.0, 3.0, 4.0]])


# --- traffic per tier -------------------------------------------------------------


def test_square_tile_fits_a_tile_of_each_operand_and_is_clamped_to_the_shape():
    # 48 B of fp32 hold 3 tiles of 2x2 elements: Mt = Nt = floor(sqrt(48 / 12)) = 2
    assert square_tile(GEMM, 48.0, 4.0).tolist() == [[2, 3, 2]]
    # 1 KiB would allow 9x9, clamped to the 2x4 output
    assert square_tile(GEMM, 1024.0, 4.0).tolist() == [[2, 3, 4]]
    # less than one element of each: still a 1x1 tile
    assert square_tile(GEMM, 1.0, 4.0).tolist() == [[1, 3, 1]]


def test_gemm_traffic_of_a_2x3x4_product():
    tile = np.array([[1.0, 3.0, 2.0]])
    # C twice: 2 x 8 = 16; A once per column block: 6 x ceil(4/2) = 12;
    # B once per row block: 12 x ceil(2/1) = 24; (16 + 12 + 24) x 4 B = 208 B
    assert gemm_traffic_bytes(GEMM, tile, 4.0, 2.0).tolist() == [208.0]
    # without write-allocate C crosses once: (8 + 12 + 24) x 4 = 176 B
    assert gemm_traffic_bytes(GEMM, tile, 4.0, 1.0).tolist() == [176.0]
    # the whole product as one tile: every operand once, (8 + 6 + 12) x 4 = 104 B
    assert gemm_traffic_bytes(GEMM, GEMM, 4.0, 1.0).tolist() == [104.0]


def test_operand_bytes_and_the_bytes_outside_the_product():
    # linear 2x3x4: x (6), weight (12), bias (4) and out (8) elements of fp32
    elements = {"x": np.array([6]), "w": np.array([12]), "b": np.array([4]), "out": np.array([8])}
    operands = operand_bytes(elements, 4.0)
    assert operands.tolist() == [120.0]
    assert outside_product_bytes(operands, GEMM, 4.0).tolist() == [16.0]  # the bias


def test_a_fresh_output_is_not_read_before_it_is_written(make_target):
    fresh = np.array([False, True])
    assert write_allocates(make_target("cpu")) is True
    assert write_allocates(make_target("gpu", architecture="gpu")) is False
    assert output_read_first(True, fresh).tolist() == [True, False]
    assert output_read_first(False, fresh).tolist() == [False, False]
    # a GEMM library writing a beta = 0 result whole reads none of its lines
    assert output_read_first(True, fresh, overwrites=True).tolist() == [False, False]


def test_only_a_product_that_does_not_accumulate_overwrites_its_result():
    from attrs import evolve

    from graphsval_core.builtin.ops import LINEAR, MATMUL, VECTOR_ADD

    assert product_overwrites(MATMUL) is True  # beta = 0
    assert product_overwrites(LINEAR) is False  # accumulates onto its bias
    assert product_overwrites(VECTOR_ADD) is False  # no product
    # the op says so, not its kernel count: a product followed by another
    # kernel (an activation) still writes a beta = 0 result whole, and a
    # one-kernel addmm (beta = 1) reads C
    assert product_overwrites(evolve(MATMUL, name="mm_relu", kernels=2)) is True
    assert product_overwrites(evolve(MATMUL, name="addmm", accumulates=True)) is False


def test_output_read_first_takes_bools_or_rows():
    assert output_read_first(True, False).tolist() is True
    rows = output_read_first(True, np.array([False, False]), np.array([True, False]))
    assert rows.tolist() == [False, True]


def test_a_library_that_stores_c_as_if_it_accumulated_gives_its_rows_their_passes():
    read_first = np.array([True, False, False, False])  # linear; matmul x3
    rewritten = np.array([False, True, False, True])  # a matmul the library runs, not fresh
    # no such library: one pass where C is stored whole, two where it is read first
    assert output_passes(read_first, rewritten, None).tolist() == [2.0, 1.0, 1.0, 1.0]
    assert output_passes(read_first, rewritten, 2.0).tolist() == [2.0, 2.0, 1.0, 2.0]
    assert output_passes(read_first, rewritten, 1.5).tolist() == [2.0, 1.5, 1.0, 1.5]


def test_a_library_rereads_c_in_its_gemm_kernel_not_its_level_2_paths():
    gemm = np.array(
        [[64, 3, 64], [64, 1, 64], [64, 8, 64], [8, 64, 64], [1, 64, 64], [64, 64, 1]], dtype=float
    )
    stored_whole = np.array([True, True, False, True, True, True])  # row 2 accumulates
    library = np.array([True, True, True, False, True, True])  # row 3: the framework's kernel
    # row 1 is a rank-1 update (K = 1), rows 4 and 5 GEMVs (M or N = 1)
    assert library_rewrites(gemm, stored_whole, library).tolist() == [
        True, False, False, False, False, False,
    ]  # fmt: skip


def test_accumulates_must_be_a_bool():
    from attrs import evolve

    from graphsval_core.builtin.ops import MATMUL

    with pytest.raises(ValueError, match="field 'accumulates'"):
        evolve(MATMUL, accumulates="yes")


def test_reuse_traffic_takes_each_tiers_tile():
    gemm = np.repeat(GEMM, 2, axis=0)
    # tier 0 tiled 1x2, tier 1 holds the whole product
    tiles = np.array([[[1.0, 3.0, 2.0], [2.0, 3.0, 4.0]]] * 2)
    outside = np.array([16.0, 0.0])
    traffic = reuse_traffic(gemm, tiles, 4.0, outside, np.array([2.0, 1.0]))
    # row 0 reads C first and has a 16 B bias: 208 + 16, (16 + 6 + 12) x 4 + 16
    # row 1 writes C only: 176, (8 + 6 + 12) x 4 = 104
    assert traffic.tolist() == [[224.0, 152.0], [176.0, 104.0]]
    # C's 8 elements half a pass more: 16 B more at each tier
    half = reuse_traffic(gemm, tiles, 4.0, outside, np.array([2.0, 1.5]))
    assert half[1].tolist() == [192.0, 120.0]


def test_streamed_traffic_moves_every_operand_once_at_every_tier():
    # vector_add of 1 element of fp32: 12 B of operands, 4 B of output
    traffic = streamed_traffic(
        np.array([12.0, 12.0]), np.array([4.0, 4.0]), np.array([True, False]), 3
    )
    assert traffic.tolist() == [[16.0] * 3, [12.0] * 3]


def test_tile_capacity_is_a_units_share_of_a_per_unit_tier(make_tier):
    assert tile_capacity_bytes(make_tier("l1", 1000, num_units=4)) == 1000
    shared = make_tier(
        "l3", 8000, is_per_unit=False, num_units=1, usable_capacity_bytes=estimated(6000, "test")
    )
    assert tile_capacity_bytes(shared) == 6000


# --- residency ----------------------------------------------------------------------


def test_inner_capacities_start_with_the_registers_and_add_up_non_inclusive_tiers(make_tier):
    l1 = make_tier("l1", 1000, num_units=2)
    l2 = make_tier("l2", 10_000, num_units=2)
    l3 = make_tier("l3", 100_000, is_per_unit=False, num_units=1, non_inclusive=True)
    dram = make_tier("dram", 1e9, is_per_unit=False, num_units=1)
    # the registers keep nothing; l1 and l2 their totals; l3 adds l2's 20,000 B
    assert inner_capacities([l1, l2, l3, dram]).tolist() == [0, 2000, 20_000, 120_000]


def test_a_working_set_that_fits_never_crosses_and_one_that_does_not_partly_does():
    capacities = np.array([0.0, 100.0, 300.0])
    miss = miss_fraction(np.array([50.0, 100.0, 200.0, 400.0]), capacities)
    assert miss.tolist() == [
        [1.0, 0.0, 0.0],  # fits 100 B
        [1.0, 0.0, 0.0],  # exactly fits
        [1.0, 0.5, 0.0],  # 100 of 200 B kept
        [1.0, 0.75, 0.25],  # 100 and 300 of 400 B kept
    ]


def test_a_stream_that_overflows_a_private_cache_keeps_nothing_in_it():
    # four tiers (l1, l2, l3, dram): inner capacities registers, L1, L2, L3
    capacities = np.array([0.0, 10.0, 100.0, 1000.0])
    ws = np.array([50.0, 200.0, 2000.0])
    smooth = miss_fraction(ws, capacities)
    stream = stream_miss_fraction(ws, capacities)
    # the L2 (inside the last level) keeps nothing of a stream larger than it
    assert stream[:, 2].tolist() == [0.0, 1.0, 1.0]
    assert smooth[1, 2] == 0.5
    # the L1 and the last-level cache keep their C/W share, as for any op
    assert stream[:, 1].tolist() == smooth[:, 1].tolist()
    assert stream[:, 3].tolist() == smooth[:, 3].tolist() == [0.0, 0.0, 0.5]


def test_with_three_tiers_a_stream_misses_as_any_op_does():
    capacities = np.array([0.0, 10.0, 100.0])  # l1, l2 (the last level), dram
    ws = np.array([5.0, 50.0, 500.0])
    assert stream_miss_fraction(ws, capacities).tolist() == (miss_fraction(ws, capacities).tolist())


# --- memory time ----------------------------------------------------------------------


def test_memory_time_is_floored_at_the_access_latency_and_the_slowest_tier_binds():
    bytes_per_tier = np.array([[1000.0, 0.0], [10.0, 4000.0], [1.0, 1.0]])
    memory = memory_time(bytes_per_tier, np.array([1000.0, 1000.0]), np.array([0.5, 0.1]))
    # row 0: 1 s at tier 0, nothing moves at tier 1; row 1: tier 0 at its 0.5 s floor,
    # tier 1 takes 4 s; row 2: both at their floors
    assert memory.time_per_tier_s.tolist() == [[1.0, 0.0], [0.5, 4.0], [0.5, 0.1]]
    assert memory.binding.tolist() == [0, 1, 0]
    assert memory.memory_s.tolist() == [1.0, 4.0, 0.5]


def test_the_innermost_tier_binds_on_a_tie():
    memory = memory_time(np.array([[1000.0, 1000.0]]), np.array([1e3, 1e3]), np.zeros(2))
    assert memory.binding.tolist() == [0]


def test_binding_and_residency_tier_names():
    names = ("l1", "l2", "dram")
    binding = np.array([0, 2])
    assert binding_tier_names(names, binding).tolist() == ["l1", "dram"]
    assert residency_tier_names(names, binding).tolist() == ["registers", "l2"]


# --- compute in waves -------------------------------------------------------------------


def test_register_tile_from_the_spec_or_the_architecture(make_target):
    assert register_tile_bytes(make_target("cpu")) == 2048.0
    assert register_tile_bytes(make_target("gpu", architecture="gpu")) == 65536.0
    spec = make_target("own", register_tile_bytes=estimated(512.0, "test"))
    assert register_tile_bytes(spec) == 512.0


def test_an_op_at_or_below_the_grain_runs_on_one_unit():
    flops = np.array([100.0, 101.0])
    grained = parallelism(flops, 4, 100.0)
    assert grained.team.tolist() == [False, True]
    assert grained.active_units.tolist() == [1, 4]
    ungrained = parallelism(flops, 4, None)
    assert ungrained.active_units.tolist() == [4, 4]
    single = parallelism(flops, 1, None)
    assert single.team.tolist() == [False, False]
    assert single.active_units.tolist() == [1, 1]


def test_register_tiles_of_a_product():
    # 2x3x4 product: 48 ops; 1x2 output tiles: 2 x 2 = 4 tiles of 48 / 8 x 2 = 12 ops
    tiles = product_tiles(GEMM, np.array([48.0]), np.array([[1.0, 3.0, 2.0]]))
    assert tiles.count.tolist() == [4.0]
    assert tiles.tile_ops.tolist() == [12.0]
    assert tiles.grid is None  # dealt to the units one by one
    split = product_tiles(GEMM, np.array([48.0]), np.array([[1.0, 3.0, 2.0]]), threads_split=True)
    assert [g.tolist() for g in split.grid] == [[2.0], [2.0]]


def test_threads_split_a_grid_of_tiles_into_blocks():
    along_m, along_n = np.array([7.0, 5.0, 1.0, 7.0]), np.array([7.0, 119.0, 99.0, 7.0])
    active = np.array([12, 12, 12, 1])
    # 7 x 7 tiles on 12 threads: 3 x 4 blocks of 3 x 2 tiles (a deal would give 5 each);
    # 5 x 119: 1 x 12 blocks of 5 x 10 = 50 (a deal: 50 too); 1 x 99: 9; one thread: all
    assert partition_waves(along_m, along_n, active).tolist() == [6.0, 50.0, 9.0, 49.0]
    # a thread count with no good factors uses fewer threads: 7 threads over 2 x 2 tiles
    assert partition_waves(np.array([2.0]), np.array([2.0]), np.array([7])).tolist() == [1.0]


def test_a_product_on_threads_pays_its_busiest_block():
    # 7 x 7 tiles of 100 ops on 12 units at 1.2 TOP/s: 6 tiles on the busiest thread, 100 GOP/s
    grid = (np.array([7.0]), np.array([7.0]))
    tiles = RegisterTiles(np.array([49.0]), np.array([100.0]), grid)
    compute = compute_waves(np.array([4900.0]), tiles, np.array([12]), 12, 1.2e12)
    assert compute.waves.tolist() == [6.0]
    assert compute.compute_s[0] == pytest.approx(6 * 100 / 100e9)
    dealt = compute_waves(np.array([4900.0]), tiles._replace(grid=None), np.array([12]), 12, 1.2e12)
    assert dealt.waves.tolist() == [5.0]


def test_register_tiles_of_a_streaming_op():
    # 12 B per op: a 2048 B tile holds floor(2048 / 12) = 170 ops
    flops = np.array([1000.0, 100.0, 10.0])
    operands = np.array([12_000.0, 1200.0, 1e6])
    tiles = streaming_tiles(flops, operands, 2048.0)
    # 1000 ops in 6 tiles; 100 ops in one tile of 100; 100 kB per op: one op per tile
    assert tiles.count.tolist() == [6.0, 1.0, 10.0]
    assert tiles.tile_ops.tolist() == [170.0, 100.0, 1.0]


def test_a_partial_wave_costs_a_full_one():
    # 6 tiles of 170 ops on 4 units at 256 GOP/s: 2 waves of 170 ops at 64 GOP/s each
    tiles = RegisterTiles(np.array([6.0]), np.array([170.0]))
    compute = compute_waves(np.array([1000.0]), tiles, np.array([4]), 4, 256e9)
    assert compute.waves.tolist() == [2.0]
    assert compute.compute_s[0] == pytest.approx(2 * 170 / 64e9)
    assert compute.utilisation[0] == pytest.approx(1000 / (2 * 4 * 170))
    # on one active unit: 6 waves, each still at one unit's share of the rate
    serial = compute_waves(np.array([1000.0]), tiles, np.array([1]), 4, 256e9)
    assert serial.waves.tolist() == [6.0]
    assert serial.compute_s[0] == pytest.approx(6 * 170 / 64e9)


# --- launch, first touch, packing ---------------------------------------------------------


def test_launch_of_the_first_kernel_further_kernels_and_the_fork_join():
    team = np.array([False, True])
    launch = launch_time(2e-6, 2, 0.5e-6, team, 3e-6)
    assert launch.tolist() == pytest.approx([2.5e-6, 5.5e-6])
    assert launch_time(2e-6, 1, 0.5e-6, team, None).tolist() == [2e-6, 2e-6]


def test_a_fresh_output_above_the_threshold_pays_its_first_touch():
    out = np.array([16.0 * MIB, 64.0 * MIB])
    fresh = fresh_output(out, 10e9, 32.0 * MIB)
    assert fresh.tolist() == [False, True]
    assert first_touch_time(out, fresh, 10e9).tolist() == [0.0, 64 * MIB / 10e9]
    # no first-touch rate: no output is fresh and none pays
    assert fresh_output(out, None, None).tolist() == [False, False]
    assert first_touch_time(out, np.array([True, True]), None).tolist() == [0.0, 0.0]


def test_packing_b_below_and_above_the_row_threshold():
    gemm = np.array([[2.0, 1024.0, 1024.0], [3.0, 1024.0, 1024.0]])
    # from 3 rows of A on, B's 1024 x 1024 x 4 B = 4 MiB are packed at 10 GB/s
    assert pack_time(gemm, 4.0, 10e9, 3.0).tolist() == [0.0, 4 * MIB / 10e9]
    assert pack_time(gemm, 4.0, None, None).tolist() == [0.0, 0.0]


# --- overlap and regime ----------------------------------------------------------------------


def test_the_larger_of_compute_and_memory_is_exposed_and_part_of_the_smaller_hidden():
    parts = overlap_terms(np.array([3.0, 1.0, 2.0]), np.array([1.0, 3.0, 2.0]), 0.25)
    assert parts.exposed_compute_s.tolist() == [3.0, 0.75, 2.0]
    assert parts.exposed_memory_s.tolist() == [0.75, 3.0, 1.5]  # compute wins the tie
    assert parts.hidden_s.tolist() == [0.25, 0.25, 0.5]


def test_regime_is_the_largest_of_launch_compute_and_memory():
    launch = np.array([5.0, 1.0, 1.0, 2.0])
    compute = np.array([1.0, 5.0, 1.0, 2.0])
    memory = np.array([1.0, 1.0, 5.0, 1.0])
    binding = np.array([0, 0, 1, 1])
    labels = regime(launch, compute, memory, ("l1", "dram"), binding)
    # the last row ties launch and compute: launch, the earlier, wins
    assert labels.tolist() == ["launch_bound", "alu_bound", "dram_bound", "launch_bound"]


# --- energy -------------------------------------------------------------------------------------


def test_energy_sums_ops_bytes_per_tier_and_static_power():
    spent = energy(
        flops=np.array([1000.0, 1000.0]),
        bytes_per_tier=np.array([[100.0, 10.0], [100.0, 10.0]]),
        latency_s=np.array([1e-6, 1e-12]),
        energy_per_op_j=1e-12,
        energy_per_byte_j=np.array([1e-12, 1e-11]),
        idle_power_w=5.0,
        tdp_w=65.0,
    )
    assert spent.compute_j.tolist() == pytest.approx([1e-9, 1e-9])
    assert spent.per_tier_j.ravel().tolist() == pytest.approx([1e-10] * 4)
    assert spent.static_j.tolist() == pytest.approx([5e-6, 5e-12])
    assert spent.energy_j.tolist() == pytest.approx([1.2e-9 + 5e-6, 1.2e-9 + 5e-12])
    # 1.2 nJ in 1 ps is over 1 kW: flagged, not clamped
    assert spent.over_tdp.tolist() == [False, True]


def test_cta_tiles_take_the_tile_with_the_least_work_on_the_busiest_sm():
    from graphsval_core.model.terms.compute import cta_tiles

    gemm = np.array([[4096.0, 4096.0, 4096.0], [192.0, 3072.0, 12288.0]])
    flops = 2 * gemm.prod(axis=1)
    tiles = cta_tiles(gemm, flops, units=8)
    # 4096^2: 512 tiles of 256x128 fill 64 waves exactly: the largest tile wins the tie
    assert tiles.count[0] == 512 and tiles.tile_ops[0] == pytest.approx(2 * 256 * 128 * 4096)
    # M = 192: 128- and 256-row tiles pad M to 256 (a third more work); 64x128 tiles
    # (3 x 96 = 288 = 36 full waves) waste nothing
    assert tiles.count[1] == 288
    assert tiles.count[1] * tiles.tile_ops[1] == pytest.approx(flops[1])


def test_cta_tiles_split_a_long_k_when_the_tiles_leave_sms_idle():
    from graphsval_core.model.terms.compute import SPLIT_K_MIN, cta_tiles

    gemm = np.array([[64.0, 16384.0, 64.0], [64.0, 200.0, 64.0], [64.0, 512.0, 64.0]])
    flops = 2 * gemm.prod(axis=1)
    tiles = cta_tiles(gemm, flops, units=8)
    assert tiles.count[0] == 8  # one 64x64 tile, K split over all 8 SMs
    assert tiles.tile_ops[0] == pytest.approx(flops[0] / 8)
    assert SPLIT_K_MIN > 200 and tiles.count[1] == 1  # K too short to split
    assert tiles.tile_ops[1] == pytest.approx(flops[1])
    assert tiles.count[2] == 512 / SPLIT_K_MIN  # two slices of 256
    assert tiles.tile_ops[2] == pytest.approx(2 * 64 * 64 * SPLIT_K_MIN)
