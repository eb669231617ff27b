"""The model's software and cache-policy terms: thread team, kernels per call,
the GEMM library's call and packing, write-allocate, non-inclusive caches."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from graphsval_core.datamodel.provenance import datasheet, estimated
from graphsval_core.datamodel.target import SpecError
from graphsval_core.datamodel.units import fmt_si
from graphsval_core.files.target_spec import effective_rates, spec_from_json, spec_to_json
from graphsval_core.model.classifier import measured_regime
from graphsval_core.model.predict import predict_batch
from graphsval_core.model.terms.overheads import pack_read_time
from graphsval_core.model.terms.residency import (
    inner_capacities,
    resident_capacity,
    stream_miss_fraction,
)


def test_small_ops_run_on_one_thread_and_large_ones_pay_the_fork_join(registry_of):
    registry = registry_of(
        fork_join_s=estimated(3e-6, "test"), parallel_grain_ops=estimated(32768, "test")
    )
    # vector_add does one op per element: 32,768 stays on one thread, 32,769 forks
    p = predict_batch(registry, "t", "vector_add", [[32768], [32769]], "fp32")
    assert p.launch_s.tolist() == pytest.approx([2e-6, 5e-6])
    # on one thread the register tiles run in waves of one, not of 4 units
    assert p.waves[0] == np.ceil(32768 / 170)
    assert p.waves[1] == np.ceil(np.ceil(32769 / 170) / 4)
    assert "over 1 core)" in p.sentence(0) and "over 4 cores)" in p.sentence(1)


def test_a_one_unit_target_never_forks(registry_of):
    registry = registry_of(
        compute_units=datasheet(1, "test"),
        fork_join_s=estimated(3e-6, "test"),
        parallel_grain_ops=estimated(1, "test"),
    )
    p = predict_batch(registry, "t", "vector_add", [[1 << 20]], "fp32")
    assert p.launch_s[0] == pytest.approx(2e-6)


def test_linear_runs_two_kernels(registry_of):
    # linear = the bias broadcast into the output, then the product onto it
    plain = registry_of()
    mm = predict_batch(plain, "t", "matmul", [[1, 8, 8]], "fp32")
    lin = predict_batch(plain, "t", "linear", [[1, 8, 8]], "fp32")
    assert mm.launch_s[0] == pytest.approx(2e-6)
    assert lin.launch_s[0] == pytest.approx(4e-6)  # a CPU dispatches each kernel in full
    queued = registry_of(kernel_overhead_s=estimated(0.5e-6, "test"))
    lin = predict_batch(queued, "t", "linear", [[1, 8, 8]], "fp32")
    assert lin.launch_s[0] == pytest.approx(2.5e-6)  # a GPU queues the second one


def test_the_gemm_library_call_cost_is_for_matrix_products_only(registry_of):
    registry = registry_of(dispatch_overhead_s={"fp32": estimated(20e-6, "test")})
    mm = predict_batch(registry, "t", "matmul", [[4, 4, 4]], "fp32")
    add = predict_batch(registry, "t", "vector_add", [[16]], "fp32")
    lin = predict_batch(registry, "t", "linear", [[4, 4, 4]], "fp32")
    assert mm.launch_s[0] == pytest.approx(20e-6)
    assert add.launch_s[0] == pytest.approx(2e-6)
    assert lin.launch_s[0] == pytest.approx(20e-6 + 2e-6)  # library call + bias dispatch


def test_a_product_that_accumulates_pays_its_dtype_s_accumulating_call(registry_of):
    """oneDNN's bf16 call that accumulates onto C (linear, onto its bias)
    costs more than one that writes C (``accumulate_overhead_s`` on top of
    the dispatch); a matmul keeps the dtype's dispatch, and a dtype with no
    such overhead pays its dispatch for both. Attribution puts the two
    calls' rows apart."""
    registry = registry_of(
        peak_ops_per_s={"fp32": datasheet(1e11, "t"), "bf16": datasheet(1e12, "t")},
        energy_per_op_j={"fp32": estimated(1e-12, "t"), "bf16": estimated(1e-12, "t")},
        dispatch_overhead_s={"fp32": estimated(1e-6, "t"), "bf16": estimated(15e-6, "t")},
        accumulate_overhead_s={"bf16": estimated(4e-6, "t")},
    )
    shapes = [[4, 128, 128]]
    mm = predict_batch(registry, "t", "matmul", shapes, "bf16")
    assert mm.launch_s[0] == pytest.approx(15e-6)
    lin = predict_batch(registry, "t", "linear", shapes, "bf16")
    assert lin.launch_s[0] == pytest.approx(19e-6 + 2e-6)  # accumulating call + bias dispatch
    fp32 = predict_batch(registry, "t", "linear", shapes, "fp32")
    assert fp32.launch_s[0] == pytest.approx(1e-6 + 2e-6)  # fp32 has none: its dispatch
    from graphsval_core.validate.harness import _terms

    spec = registry.target("t")
    terms = _terms(lin.columns(), spec, "bf16", registry.op("linear"), shapes=np.array(shapes))
    assert np.isnan(terms.dispatch_s).all()
    assert terms.accumulating_call_s[0] == pytest.approx(19e-6)
    terms = _terms(mm.columns(), spec, "bf16", registry.op("matmul"), shapes=np.array(shapes))
    assert terms.dispatch_s[0] == 15e-6 and np.isnan(terms.accumulating_call_s).all()
    back = spec_from_json(spec_to_json(spec))
    assert back == spec and back.accumulate_overhead_s == {"bf16": 4e-6}
    assert back.dispatch_for("bf16", True) == pytest.approx(19e-6)
    assert back.dispatch_for("bf16", False) == 15e-6
    assert back.dispatch_for("fp32", True) == 1e-6


def test_an_accumulating_overhead_is_paid_on_the_launch_where_the_dtype_has_no_dispatch(
    registry_of,
):
    """A CPU target file gives oneDNN's bf16 its accumulating overhead but no
    dispatch (calibrate fits that): before calibration the bf16 linear pays
    the overhead on top of the framework's launch, and explain says so."""
    registry = registry_of(
        peak_ops_per_s={"fp32": datasheet(1e11, "t"), "bf16": datasheet(1e12, "t")},
        energy_per_op_j={"fp32": estimated(1e-12, "t"), "bf16": estimated(1e-12, "t")},
        accumulate_overhead_s={"bf16": estimated(3e-6, "t")},
    )
    shapes = [[4, 128, 128]]
    mm = predict_batch(registry, "t", "matmul", shapes, "bf16")
    lin = predict_batch(registry, "t", "linear", shapes, "bf16")
    assert mm.launch_s[0] == pytest.approx(2e-6)
    assert lin.launch_s[0] == pytest.approx(2e-6 + 3e-6 + 2e-6)
    assert lin.details(0)["accumulate_s"] == pytest.approx(3e-6)
    assert "accumulate_s" not in mm.details(0)
    from graphsval_core.validate.harness import _terms

    spec = registry.target("t")
    terms = _terms(lin.columns(), spec, "bf16", registry.op("linear"), shapes=np.array(shapes))
    assert terms.accumulating_call_s[0] == pytest.approx(5e-6) and np.isnan(terms.dispatch_s[0])


def test_an_accumulating_overhead_is_a_library_s_of_zero_or_more(make_target):
    two = {
        "peak_ops_per_s": {"fp32": datasheet(1e12, "t"), "bf16": datasheet(1e12, "t")},
        "energy_per_op_j": {"fp32": estimated(1e-12, "t"), "bf16": estimated(1e-12, "t")},
        "no_gemm_library": ["bf16"],
    }
    with pytest.raises(SpecError, match="accumulate_overhead_s.bf16.*bf16 is in no_gemm_library"):
        make_target("t", accumulate_overhead_s={"bf16": estimated(5e-6, "test")}, **two)
    with pytest.raises(SpecError, match="accumulate_overhead_s.fp32"):
        make_target("t", accumulate_overhead_s={"fp32": estimated(-1e-6, "test")})
    kept = make_target("t", accumulate_overhead_s={"fp32": estimated(0.0, "test")})
    assert kept.dispatch_for("fp32", True) == kept.launch_overhead_s


def test_a_product_too_small_for_its_library_pays_the_framework_s_launch(registry_of):
    # PyTorch keeps a bf16 product of at most 16 x 16 x 16 multiply-adds out of oneDNN
    registry = registry_of(
        peak_ops_per_s={"fp32": datasheet(1e11, "t"), "bf16": datasheet(1e12, "t")},
        energy_per_op_j={"fp32": estimated(1e-12, "t"), "bf16": estimated(1e-12, "t")},
        dispatch_overhead_s={"fp32": estimated(1e-6, "t"), "bf16": estimated(20e-6, "t")},
        library_min_macs={"bf16": datasheet(4096, "mkldnn_gemm_min_size")},
    )
    shapes = [[16, 16, 16], [16, 16, 17], [4096, 1, 1], [4097, 1, 1]]
    mm = predict_batch(registry, "t", "matmul", shapes, "bf16")
    assert mm.launch_s.tolist() == pytest.approx([2e-6, 20e-6, 2e-6, 20e-6])
    lin = predict_batch(registry, "t", "linear", shapes[:2], "bf16")
    assert lin.launch_s.tolist() == pytest.approx([4e-6, 22e-6])  # + the bias's dispatch
    fp32 = predict_batch(registry, "t", "matmul", shapes[:1], "fp32")
    assert fp32.launch_s[0] == pytest.approx(1e-6)  # no size for fp32: always the library
    # attribution sees the same split: only the library's calls pay its dispatch
    from graphsval_core.validate.harness import _terms

    terms = _terms(
        mm.columns(), registry.target("t"), "bf16", registry.op("matmul"), shapes=np.array(shapes)
    )
    assert np.isnan(terms.dispatch_s[[0, 2]]).all() and terms.dispatch_s[[1, 3]].tolist() == [
        20e-6,
        20e-6,
    ]
    spec = registry.target("t")
    back = spec_from_json(spec_to_json(spec))
    assert back == spec and back.library_min_macs == {"bf16": 4096.0}
    assert back.provenance["library_min_macs.bf16"].source == "mkldnn_gemm_min_size"


def test_a_library_size_needs_a_dtype_with_a_peak_and_a_number_of_zero_or_more(make_target):
    with pytest.raises(SpecError, match="library_min_macs.bf16"):
        make_target(library_min_macs={"bf16": datasheet(4096, "t")})  # no bf16 peak
    with pytest.raises(SpecError, match="library_min_macs.fp32"):
        make_target(library_min_macs={"fp32": datasheet(-1, "t")})
    assert make_target(library_min_macs={"fp32": datasheet(0, "t")}).library_min_macs == {
        "fp32": 0.0
    }


def b_read(registry, p, i: int, b: float) -> float:
    """What packing B (``b`` bytes) of row ``i`` of prediction ``p`` takes to
    read it: the bytes crossing each tier at that tier's stream bandwidth."""
    tiers = registry.target("t").tiers
    crossing = stream_miss_fraction(p.working_set_bytes[i : i + 1], inner_capacities(tiers))[0]
    return max(
        b * c / t.effective_bandwidth_bps for c, t in zip(crossing, tiers, strict=True) if c > 0
    )


def test_packing_b_costs_its_bytes_from_the_threshold_on(registry_of):
    registry = registry_of(pack_bps=estimated(10e9, "test"), pack_min_rows=estimated(3, "test"))
    p = predict_batch(registry, "t", "matmul", [[2, 1024, 1024], [3, 1024, 1024]], "fp32")
    assert p.pack_s[0] == 0.0
    b = 1024 * 1024 * 4
    # the copy's writes at pack_bps, its reads of B from the tier the call lives in
    read = b_read(registry, p, 1, b)
    assert p.pack_s[1] == pytest.approx(b / 10e9 + read)
    assert read > 0
    total = p.launch_s + p.exposed_compute_s + p.exposed_memory_s + p.first_touch_s + p.pack_s
    assert np.array_equal(total, p.latency_s)
    assert "packing B" in p.sentence(1) and "packing B" not in p.sentence(0)
    add = predict_batch(registry, "t", "vector_add", [[1 << 20]], "fp32")
    assert add.pack_s[0] == 0.0


def test_packing_reads_b_at_the_rate_of_the_tier_that_holds_it(registry_of):
    registry = registry_of(pack_bps=estimated(1e13, "test"), pack_min_rows=estimated(3, "test"))
    # the toy's caches hold 128 KiB of L1 and 4 MiB of L2: B of 256 KiB, 64 MiB
    p = predict_batch(registry, "t", "matmul", [[4, 256, 256], [4, 4096, 4096]], "fp32")
    b = np.array([256 * 256 * 4, 4096 * 4096 * 4])
    per_byte = p.pack_s / b
    assert p.pack_s.tolist() == pytest.approx(
        [b_read(registry, p, i, b[i]) + b[i] / 1e13 for i in (0, 1)]
    )
    dram = registry.target("t").tiers[-1].effective_bandwidth_bps
    assert 0.9 / dram < per_byte[1] <= 1 / dram + 1 / 1e13  # nearly a pass of main memory
    assert per_byte[0] < per_byte[1] / 2  # an L2-resident B is copied much faster
    plain = pack_read_time(
        np.array([[4.0, 256, 256]]), 4, np.zeros((1, 3)), np.ones(3), np.zeros(3)
    )
    assert plain.tolist() == [0.0]  # nothing crosses: nothing to read


def test_packing_an_a_from_main_memory_costs_its_share_beyond_the_last_cache(registry_of):
    registry = registry_of(pack_a_bps={"fp32": estimated(4e9, "test")})
    # the toy's caches hold 128 KiB of L1 and 4 MiB of L2; A of 64 MiB, 0.5 MiB
    shapes = [[16384, 1024, 64], [16384, 1024, 16], [512, 256, 64], [16384, 1024, 1]]
    p = predict_batch(registry, "t", "matmul", shapes, "fp32")
    a = 16384 * 1024 * 4
    working = a + (1024 * 64 + 16384 * 64) * 4
    inside = resident_capacity(registry.target("t").tiers, 1)
    assert p.pack_a_s[0] == pytest.approx(a * (1 - inside / working) / 4e9)
    # N of 16 or fewer (the skinny-N path, a GEMV) streams A; an A in cache is not packed
    assert p.pack_a_s[1:].tolist() == [0.0, 0.0, 0.0]
    total = p.launch_s + p.exposed_compute_s + p.exposed_memory_s + p.first_touch_s + p.pack_s
    assert total == pytest.approx(p.latency_s)  # a part of pack_s: the terms still add up
    assert p.pack_s[0] == pytest.approx(p.pack_a_s[0])  # no B packing on this toy
    assert "packing A from main memory" in p.sentence(0)
    assert "packing" not in p.sentence(2)
    # without a rate the term is absent: the same product runs faster by exactly it
    plain = predict_batch(registry_of(), "t", "matmul", shapes[:1], "fp32")
    assert plain.latency_s[0] == pytest.approx(p.latency_s[0] - p.pack_a_s[0])
    # a vector_add never packs
    add = predict_batch(registry, "t", "vector_add", [[50_000_000]], "fp32")
    assert add.pack_a_s[0] == 0.0


def test_the_pack_a_rate_is_a_positive_rate_per_dtype_that_survives_a_spec_file(make_target):
    with pytest.raises(SpecError, match="pack_a_bps.fp32"):
        make_target(pack_a_bps={"fp32": estimated(0.0, "t")})
    with pytest.raises(SpecError, match="pack_a_bps.int8"):
        make_target(pack_a_bps={"int8": estimated(5e9, "t")})  # not a dtype of the target
    spec = make_target(pack_a_bps={"fp32": estimated(5e9, "t")})
    again = spec_from_json(spec_to_json(spec))
    assert again.pack_a_bps == {"fp32": 5e9}
    assert again.provenance["pack_a_bps.fp32"].kind == "estimated"


def test_pack_rate_and_threshold_come_together(make_target):
    with pytest.raises(SpecError, match="pack_bps"):
        make_target(pack_bps=estimated(10e9, "test"))
    with pytest.raises(SpecError, match="same dtypes"):
        make_target(
            peak_ops_per_s={"fp32": datasheet(1e11, "t"), "bf16": datasheet(2e11, "t")},
            energy_per_op_j={"fp32": estimated(1e-12, "t"), "bf16": estimated(1e-12, "t")},
            pack_bps={"fp32": estimated(10e9, "t"), "bf16": estimated(5e9, "t")},
            pack_min_rows={"fp32": estimated(3, "t")},
        )
    with pytest.raises(SpecError, match="pack_bps.int8"):
        make_target(
            pack_bps={"int8": estimated(10e9, "t")}, pack_min_rows={"int8": estimated(1, "t")}
        )


def test_each_dtype_packs_with_its_own_library(registry_of):
    # MKL streams a 2-row fp32 B unpacked; oneDNN reorders a bf16 B even for one row
    registry = registry_of(
        peak_ops_per_s={"fp32": datasheet(1e11, "t"), "bf16": datasheet(2e11, "t")},
        energy_per_op_j={"fp32": estimated(1e-12, "t"), "bf16": estimated(1e-12, "t")},
        pack_bps={"fp32": estimated(20e9, "mkl"), "bf16": estimated(5e9, "onednn")},
        pack_min_rows={"fp32": estimated(3, "mkl"), "bf16": estimated(1, "onednn")},
    )
    fp32 = predict_batch(registry, "t", "matmul", [[1, 1024, 1024], [4, 1024, 1024]], "fp32")
    bf16 = predict_batch(registry, "t", "matmul", [[1, 1024, 1024], [4, 1024, 1024]], "bf16")
    assert fp32.pack_s[0] == 0.0
    assert fp32.pack_s[1] == pytest.approx(
        1024 * 1024 * 4 / 20e9 + b_read(registry, fp32, 1, 4 << 20)
    )
    assert bf16.pack_s.tolist() == pytest.approx(
        [1024 * 1024 * 2 / 5e9 + b_read(registry, bf16, i, 2 << 20) for i in (0, 1)]
    )
    spec = registry.target("t")
    assert spec.provenance["pack_bps.bf16"].source == "onednn"


def test_write_allocate_on_a_cpu_not_on_a_gpu(registry_of):
    cpu = predict_batch(registry_of(), "t", "vector_add", [[1000]], "fp32")
    gpu = predict_batch(registry_of(architecture="gpu"), "t", "vector_add", [[1000]], "fp32")
    assert cpu.bytes_per_tier[0, 0] == 4 * 1000 * 4  # x, y, out and out's line read first
    assert gpu.bytes_per_tier[0, 0] == 3 * 1000 * 4
    # linear accumulates its product onto the bias it broadcast into C: the
    # CPU reads C's lines before writing them, the GPU writes them once
    shape, tile = [[64, 64, 64]], estimated(2048, "same register tile for both")
    cpu_lin = predict_batch(registry_of(register_tile_bytes=tile), "t", "linear", shape, "fp32")
    gpu_lin = predict_batch(
        registry_of(architecture="gpu", register_tile_bytes=tile), "t", "linear", shape, "fp32"
    )
    assert cpu_lin.bytes_per_tier[0, 0] - gpu_lin.bytes_per_tier[0, 0] == 64 * 64 * 4


def test_a_product_of_one_kernel_writes_its_result_whole_on_a_cpu(registry_of):
    # matmul is its op's only kernel (beta = 0): the GEMM library stores C's
    # lines without reading them, so C crosses once on a CPU as on a GPU,
    # while linear, onto its bias, reads C first: one more pass of M*N*4 bytes
    tile = estimated(2048, "same register tile for both")
    shape = [[64, 64, 64]]
    cpu = registry_of(register_tile_bytes=tile)
    gpu = registry_of(architecture="gpu", register_tile_bytes=tile)
    cpu_mm = predict_batch(cpu, "t", "matmul", shape, "fp32")
    gpu_mm = predict_batch(gpu, "t", "matmul", shape, "fp32")
    assert cpu_mm.bytes_per_tier[0].tolist() == gpu_mm.bytes_per_tier[0].tolist()
    cpu_lin = predict_batch(cpu, "t", "linear", shape, "fp32")
    bias = 64 * 4
    assert cpu_lin.bytes_per_tier[0, 0] - cpu_mm.bytes_per_tier[0, 0] == 64 * 64 * 4 + bias


def test_a_freshly_mapped_output_is_not_read_first(registry_of):
    # the kernel zeroes a fresh page into the cache: first touch, no write-allocate
    registry = registry_of(
        first_touch_bps=estimated(10e9, "test"),
        first_touch_min_bytes=estimated(32 * 2**20, "test"),
    )
    small, big = 4 * 2**20, 16 * 2**20  # outputs of 16 MiB and 64 MiB
    p = predict_batch(registry, "t", "vector_add", [[small], [big]], "fp32")
    assert p.bytes_per_tier[0, 0] == 4 * small * 4
    assert p.bytes_per_tier[1, 0] == 3 * big * 4
    assert p.first_touch_s[0] == 0.0 and p.first_touch_s[1] > 0


def test_a_non_inclusive_tier_adds_the_inner_capacity(make_tier):
    l1 = make_tier("l1", 1000, num_units=1)
    l2 = make_tier("l2", 10_000, num_units=1)
    l3 = make_tier("l3", 100_000, is_per_unit=False, num_units=1, non_inclusive=True)
    assert resident_capacity([l1, l2, l3], 2) == 110_000
    assert resident_capacity([l1, l2, l3], 1) == 10_000
    l2_victim = make_tier("l2", 10_000, num_units=1, non_inclusive=True)
    assert resident_capacity([l1, l2_victim, l3], 2) == 111_000


def test_a_non_inclusive_llc_keeps_more_of_a_large_working_set(registry_of, make_tier):
    def tiers(non_inclusive):
        return [
            make_tier("l1", 32 * 1024),
            make_tier("l2", 1024 * 1024, peak_bandwidth_bps=datasheet(5e11, "test")),
            make_tier(
                "l3",
                8 * 2**20,
                is_per_unit=False,
                num_units=1,
                peak_bandwidth_bps=datasheet(2e11, "test"),
                non_inclusive=non_inclusive,
            ),
            make_tier(
                "dram",
                16 * 2**30,
                is_per_unit=False,
                num_units=1,
                peak_bandwidth_bps=datasheet(5e10, "test"),
            ),
        ]

    shape = [[1 << 21]]  # 24 MiB of working set: 8 MiB of l3 alone, 12 MiB with the l2s
    inclusive = predict_batch(registry_of(tiers=tiers(False)), "t", "vector_add", shape, "fp32")
    victim = predict_batch(registry_of(tiers=tiers(True)), "t", "vector_add", shape, "fp32")
    moved = 4 * (1 << 21) * 4
    assert inclusive.bytes_per_tier[0, 3] == pytest.approx(moved * (1 - 8 / 24))
    assert victim.bytes_per_tier[0, 3] == pytest.approx(moved * (1 - 12 / 24))


def test_new_fields_survive_a_json_round_trip(make_target, make_tier):
    spec = make_target(
        fork_join_s=estimated(3e-6, "a"),
        parallel_grain_ops=estimated(32768, "b"),
        kernel_overhead_s=estimated(1e-6, "c"),
        pack_bps=estimated(2e10, "d"),
        pack_min_rows=estimated(3, "e"),
        tiers=[
            make_tier("l1", 32 * 1024),
            make_tier("l3", 2**20, is_per_unit=False, num_units=1, non_inclusive=True),
            make_tier("dram", 2**30, is_per_unit=False, num_units=1),
        ],
    )
    back = spec_from_json(spec_to_json(spec))
    assert back == spec
    assert back.provenance["pack_min_rows.fp32"].source == "e"
    assert back.pack_bps == {"fp32": 2e10} and back.pack_min_rows == {"fp32": 3}
    assert back.tiers[1].non_inclusive is True


def test_non_inclusive_must_be_a_boolean(make_tier):
    with pytest.raises(SpecError, match="non_inclusive"):
        make_tier("l3", 2**20, non_inclusive="yes")


def test_the_measured_launch_regime_uses_each_row_s_own_launch(registry_of):
    # linear's launch is two dispatches (4 us): 5.5 us is within LAUNCH_MULTIPLE (2x)
    # of it, launch-bound, but not of a 1-kernel op's 2 us
    registry = registry_of()
    target = registry.target("t")
    lin = predict_batch(registry, "t", "linear", [[1, 8, 8]], "fp32")
    assert measured_regime(lin, np.array([5.5e-6]), target)[0] == "launch_bound"
    add = predict_batch(registry, "t", "vector_add", [[16]], "fp32")
    assert measured_regime(add, np.array([5.5e-6]), target)[0] != "launch_bound"


def test_calibration_keeps_a_tier_non_inclusive(make_target, make_tier):
    from graphsval_core.files.calibration import apply_constants

    spec = make_target(
        tiers=[
            make_tier("l1", 32 * 1024),
            make_tier("l3", 2**20, is_per_unit=False, num_units=1, non_inclusive=True),
            make_tier("dram", 2**30, is_per_unit=False, num_units=1),
        ]
    )
    fitted = apply_constants(spec, {"tiers.l3.achievable_fraction": 0.5}, "fit")
    assert fitted.tiers[1].non_inclusive is True
    assert fitted.tiers[1].achievable_fraction == pytest.approx(0.5)


def test_an_op_runs_at_least_one_kernel():
    from attrs import evolve

    from graphsval_core.builtin.ops import MATMUL

    with pytest.raises(ValueError, match="kernels"):
        evolve(MATMUL, kernels=0)


def test_attribution_takes_first_touch_and_packing_out_with_the_launch(registry_of):
    from graphsval_core.validate.harness import _terms

    registry = registry_of(pack_bps=estimated(1e9, "test"), pack_min_rows=estimated(3, "test"))
    target = registry.target("t")
    p = predict_batch(registry, "t", "matmul", [[64, 512, 512]], "fp32")
    terms = _terms(p.columns(), target, "fp32")
    assert terms.fixed_s[0] == pytest.approx(p.launch_s[0] + p.pack_s[0])
    assert p.pack_s[0] == pytest.approx(512 * 512 * 4 / 1e9 + b_read(registry, p, 0, 1 << 20))
    # a predictor that reports no launch, first touch or packing: the target's launch
    bare = {k: v for k, v in p.columns().items() if k not in ("launch_s", "pack_s")}
    fallback = _terms(bare, target, "fp32")
    assert fallback.fixed_s[0] == fallback.launch_s[0] == target.launch_for("fp32")
    assert fallback.fixed_s[0] != terms.fixed_s[0]


def test_an_op_with_no_product_runs_at_the_vector_rate_where_given(registry_of):
    # a CPU's bf16 peak is its matrix units'; a bf16 add runs on the vector units
    registry = registry_of(
        peak_ops_per_s={"fp32": datasheet(1e11, "t"), "bf16": datasheet(1e12, "t")},
        energy_per_op_j={"fp32": estimated(1e-12, "t"), "bf16": estimated(1e-12, "t")},
        vector_ops_per_s={"bf16": estimated(1e9, "conversion around the add")},
    )
    add = predict_batch(registry, "t", "vector_add", [[1 << 20]], "bf16")
    assert add.compute_s[0] == pytest.approx((1 << 20) / 1e9, rel=0.01)
    assert add.achievable_ops_per_s == 1e9
    assert "at the vector units' 1 GOP/s bf16" in add.sentence(0)  # ops, as targets says
    mm = predict_batch(registry, "t", "matmul", [[256, 256, 256]], "bf16")
    assert mm.achievable_ops_per_s == 1e12  # a product keeps the matrix units' peak
    fp32 = predict_batch(registry, "t", "vector_add", [[1 << 20]], "fp32")
    assert fp32.achievable_ops_per_s == 1e11  # no vector rate given: the peak
    spec = registry.target("t")
    back = spec_from_json(spec_to_json(spec))
    assert back == spec and back.provenance["vector_ops_per_s.bf16"].source == (
        "conversion around the add"
    )


def test_a_vector_rate_needs_a_dtype_with_a_peak(make_target):
    with pytest.raises(SpecError, match="vector_ops_per_s.int8"):
        make_target(vector_ops_per_s={"int8": estimated(1e9, "t")})


def test_a_product_runs_at_its_librarys_share_of_each_tiers_bandwidth(registry_of):
    plain = registry_of()
    shared = registry_of(product_bandwidth_fraction={"fp32": estimated(0.5, "library")})
    shape = [[1, 4096, 4096]]  # a GEMV: memory-bound
    base = predict_batch(plain, "t", "matmul", shape, "fp32")
    half = predict_batch(shared, "t", "matmul", shape, "fp32")
    assert half.memory_s[0] == pytest.approx(2 * base.memory_s[0])
    assert half.tier_bandwidth_bps == pytest.approx([b / 2 for b in base.tier_bandwidth_bps])
    # an elementwise op streams at the tiers' own rates
    add = [[1 << 20]]
    assert predict_batch(shared, "t", "vector_add", add, "fp32").memory_s == pytest.approx(
        predict_batch(plain, "t", "vector_add", add, "fp32").memory_s
    )
    spec = shared.target("t")
    assert spec.bandwidth_share("fp32") == 0.5
    assert spec.bandwidth_share("fp32", product=False) == 1.0
    assert plain.target("t").bandwidth_share("fp32") == 1.0
    again = spec_from_json(spec_to_json(spec))
    assert again.product_bandwidth_fraction == {"fp32": 0.5}
    # attribution holds every cell against its tier's effective bandwidth, the one figure
    # the tier has: a product at half of it implies the tier's bandwidth from a measured
    # time twice its memory time, as an add does, so a cell pooling dtypes of other shares
    # (or a drift of the tier, which scales every share) reads one constant
    from graphsval_core.builtin.ops import MATMUL, VECTOR_ADD
    from graphsval_core.validate.cells import implied_rate
    from graphsval_core.validate.harness import _terms

    p = predict_batch(shared, "t", "matmul", shape, "fp32")
    tier = spec.tier(str(p.binding_tier[0]))
    terms = _terms(p.columns(), spec, "fp32", MATMUL)
    assert terms.tier_bandwidth_bps[0] == pytest.approx(tier.effective_bandwidth_bps)
    measured = SimpleNamespace(latency_measured_s=terms.fixed_s + 2 * p.memory_s, terms=terms)
    implied = implied_rate(measured, terms.tier_bandwidth_bps, p.memory_s)
    assert implied.tolist() == pytest.approx([tier.effective_bandwidth_bps / 2])
    q = predict_batch(shared, "t", "vector_add", add, "fp32")
    streams = _terms(q.columns(), spec, "fp32", VECTOR_ADD)
    bound = spec.tier(str(q.binding_tier[0]))
    assert streams.tier_bandwidth_bps[0] == pytest.approx(bound.effective_bandwidth_bps)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"fp32": estimated(1.5, "x")}, r"product_bandwidth_fraction\.fp32.*\(0, 1\]"),
        ({"fp32": estimated(0.0, "x")}, r"product_bandwidth_fraction\.fp32"),
        ({"int4": estimated(0.5, "x")}, r"product_bandwidth_fraction\.int4.*no peak"),
        ({"fp32": 0.5}, r"product_bandwidth_fraction\.fp32.*provenance"),
    ],
)
def test_a_products_bandwidth_share_is_checked(make_target, value, message):
    with pytest.raises(SpecError, match=message):
        make_target("t", product_bandwidth_fraction=value)


def test_a_product_draws_its_own_share_of_a_private_l2(registry_of, l2_share):
    plain = registry_of()
    shared = registry_of(
        tiers=l2_share(0.4),
        product_bandwidth_fraction={"fp32": estimated(0.5, "library")},
    )
    shape = [[1, 512, 1024]]  # B in the L2
    base = predict_batch(plain, "t", "matmul", shape, "fp32")
    p = predict_batch(shared, "t", "matmul", shape, "fp32")
    # the L2 at the tier's share times the library's, the other tiers at the library's
    assert p.tier_bandwidth_bps == pytest.approx(
        [
            base.tier_bandwidth_bps[0] / 2,
            base.tier_bandwidth_bps[1] * 0.2,
            base.tier_bandwidth_bps[2] / 2,
        ]
    )
    assert p.time_per_tier_s[0, 1] == pytest.approx(base.time_per_tier_s[0, 1] / 0.2)
    # a stream reads the L2 at the tier's own rate
    add = [[1 << 16]]
    assert predict_batch(shared, "t", "vector_add", add, "fp32").memory_s == pytest.approx(
        predict_batch(plain, "t", "vector_add", add, "fp32").memory_s
    )
    # a target file keeps it with its provenance; a tier without one writes nothing
    spec = shared.target("t")
    again = spec_from_json(spec_to_json(spec))
    assert again == spec and again.tier("l2").provenance["product_fraction"].source == "fitted"
    assert "product_fraction" not in spec_to_json(plain.target("t"))["tiers"][1]
    # attribution holds the L2-bound product against the L2's own bandwidth, of which
    # the product's 0.2 is a share that a drift of the tier scales alike
    from graphsval_core.builtin.ops import MATMUL
    from graphsval_core.validate.harness import _terms

    assert p.binding_tier[0] == "l2"
    terms = _terms(p.columns(), spec, "fp32", MATMUL, shapes=np.array(shape))
    assert terms.tier_bandwidth_bps[0] == pytest.approx(p.tier_bandwidth_bps[1] / 0.2)
    assert terms.tier_bandwidth_bps[0] == pytest.approx(spec.tier("l2").effective_bandwidth_bps)
    assert spec.tier_share(spec.tier("l2"), "fp32") == pytest.approx(0.2)
    assert spec.tier_share(spec.tier("l2"), "fp32", product=False) == 1.0


def test_an_a_too_short_to_pack_streams_b_without_the_tiers_product_share(registry_of, l2_share):
    # MKL's fp32 path for one or two rows of A packs nothing: B streams as it lies,
    # at the library's share of each tier but not the share a micro-kernel's bursts
    # from packed panels get of the L2 (the Intel host's GEMVs with B in its L2
    # ran at about 100 GB/s where the products' 0.38 x 0.79 of 144 gave 43)
    kw = {
        "tiers": l2_share(0.4),
        "product_bandwidth_fraction": {"fp32": estimated(0.5, "library")},
    }
    plain = registry_of()
    packing = registry_of(**kw, pack_bps=estimated(10e9, "t"), pack_min_rows=estimated(3, "t"))
    shapes = [[1, 512, 1024], [2, 512, 1024], [3, 512, 1024]]  # B in the L2
    base = predict_batch(plain, "t", "matmul", shapes, "fp32")
    p = predict_batch(packing, "t", "matmul", shapes, "fp32")
    assert p.b_unpacked.tolist() == [True, True, False]
    assert p.pack_s.tolist()[:2] == [0.0, 0.0] and p.pack_s[2] > 0  # the rows that pack
    l2 = base.tier_bandwidth_bps[1]
    assert [p.bandwidth_of(i)[1] for i in range(3)] == pytest.approx([l2 / 2, l2 / 2, l2 * 0.2])
    # the other tiers at the library's share for every row: only the tier's own share goes
    assert [p.bandwidth_of(i)[2] for i in range(3)] == pytest.approx(
        [base.tier_bandwidth_bps[2] / 2] * 3
    )
    assert p.time_per_tier_s[0, 1] == pytest.approx(p.bytes_per_tier[0, 1] / (l2 / 2))
    assert "B unpacked, A too short to pack it" in p.sentence(0)
    assert "too short" not in p.sentence(2)
    assert p.details(0)["b_unpacked"] is True and "b_unpacked" not in p.details(2)
    # a spec with no packing threshold packs every product: each at the tier's share
    no_threshold = predict_batch(registry_of(**kw), "t", "matmul", shapes, "fp32")
    assert not no_threshold.b_unpacked.any()
    assert [no_threshold.bandwidth_of(i)[1] for i in range(3)] == pytest.approx([l2 * 0.2] * 3)
    # an add is a stream already: unchanged
    add = [[1 << 16]]
    assert predict_batch(packing, "t", "vector_add", add, "fp32").memory_s == pytest.approx(
        predict_batch(plain, "t", "vector_add", add, "fp32").memory_s
    )


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (estimated(1.5, "x"), r"tier 'l2': product_fraction.*\(0, 1\]"),
        (estimated(0.0, "x"), r"tier 'l2': product_fraction"),
        (0.5, r"product_fraction.*provenance"),
        # told as the file has it: not rounded into the range, not in Python's words
        (estimated(1.0000000001, "x"), r"\(0, 1\], got 1\.0000000001$"),
        (None, r"must be a number, got null$"),
        (True, r"must be a number, got true$"),
        ("0.5", r'must be a number, got "0.5"$'),
    ],
)
def test_a_tiers_product_share_is_checked(make_tier, value, message):
    with pytest.raises(SpecError, match=message):
        make_tier("l2", 1024 * 1024, product_fraction=value)


def test_a_gemv_above_the_grain_pays_its_own_team_cost(registry_of):
    registry = registry_of(
        fork_join_s=estimated(2e-6, "test"),
        gemv_fork_join_s={"fp32": estimated(5e-6, "test")},
        parallel_grain_ops=estimated(32768, "test"),
    )
    # M of 1, N of 1, then M of 2 (a GEMM), all above the grain; then a GEMV at it
    p = predict_batch(
        registry,
        "t",
        "matmul",
        [[1, 256, 256], [256, 256, 1], [2, 256, 256], [1, 128, 128]],
        "fp32",
    )
    assert p.launch_s.tolist() == pytest.approx([7e-6, 7e-6, 4e-6, 2e-6])


def test_without_a_gemv_team_cost_a_gemv_pays_the_teams(registry_of):
    registry = registry_of(
        fork_join_s=estimated(2e-6, "test"), parallel_grain_ops=estimated(32768, "test")
    )
    p = predict_batch(registry, "t", "matmul", [[1, 256, 256], [2, 256, 256]], "fp32")
    assert p.launch_s.tolist() == pytest.approx([4e-6, 4e-6])


def test_a_gemv_team_cost_is_paid_only_by_the_gemvs_of_its_dtype(registry_of):
    # MKL's fp32 GEMV has its own team; bf16 GEMVs (another library) keep the team's,
    # and a bf16 product of at most 16x16x16 multiply-adds never reaches a library
    registry = registry_of(
        fork_join_s=estimated(2e-6, "test"),
        gemv_fork_join_s={"fp32": estimated(5e-6, "test"), "bf16": estimated(9e-6, "test")},
        parallel_grain_ops=estimated(1, "test"),
        peak_ops_per_s={"fp32": datasheet(1e12, "t"), "bf16": datasheet(1e12, "t")},
        energy_per_op_j={"fp32": estimated(1e-12, "t"), "bf16": estimated(1e-12, "t")},
        library_min_macs={"bf16": estimated(4096, "t")},
    )
    bf16 = predict_batch(registry, "t", "matmul", [[1, 16, 16], [1, 64, 128]], "bf16")
    assert bf16.launch_s.tolist() == pytest.approx([4e-6, 11e-6])
    only_fp32 = registry_of(
        fork_join_s=estimated(2e-6, "test"),
        gemv_fork_join_s={"fp32": estimated(5e-6, "test")},
        parallel_grain_ops=estimated(1, "test"),
        peak_ops_per_s={"fp32": datasheet(1e12, "t"), "bf16": datasheet(1e12, "t")},
        energy_per_op_j={"fp32": estimated(1e-12, "t"), "bf16": estimated(1e-12, "t")},
    )
    fp32 = predict_batch(only_fp32, "t", "matmul", [[1, 64, 128]], "fp32")
    bf16 = predict_batch(only_fp32, "t", "matmul", [[1, 64, 128]], "bf16")
    assert fp32.launch_s[0] == pytest.approx(7e-6) and bf16.launch_s[0] == pytest.approx(4e-6)


def test_a_gemv_team_cost_needs_the_teams(make_target):
    with pytest.raises(SpecError, match="gemv_fork_join_s.fp32.*needs fork_join_s"):
        make_target("t", gemv_fork_join_s={"fp32": estimated(5e-6, "test")})


def test_a_gemv_team_cost_needs_a_team_and_a_library(make_target):
    team = {"fork_join_s": estimated(2e-6, "test")}
    with pytest.raises(SpecError, match="gemv_fork_join_s.fp32.*one-unit target has no thread"):
        make_target(
            "t",
            compute_units=datasheet(1, "test"),
            gemv_fork_join_s={"fp32": estimated(5e-6, "test")},
            **team,
        )
    with pytest.raises(SpecError, match="gemv_fork_join_s.bf16.*bf16 is in no_gemm_library"):
        make_target(
            "t",
            peak_ops_per_s={"fp32": datasheet(1e12, "t"), "bf16": datasheet(1e12, "t")},
            energy_per_op_j={"fp32": estimated(1e-12, "t"), "bf16": estimated(1e-12, "t")},
            no_gemm_library=["bf16"],
            gemv_fork_join_s={"bf16": estimated(5e-6, "test")},
            **team,
        )


def test_a_dispatch_cost_is_a_library_s_for_a_dtype_one_runs(make_target):
    """A dtype no GEMM library runs (``no_gemm_library``) has no library call
    to pay for: its dispatch would change no prediction, so it is refused."""
    two = {
        "peak_ops_per_s": {"fp32": datasheet(1e12, "t"), "bf16": datasheet(1e12, "t")},
        "energy_per_op_j": {"fp32": estimated(1e-12, "t"), "bf16": estimated(1e-12, "t")},
        "no_gemm_library": ["bf16"],
    }
    with pytest.raises(SpecError, match="dispatch_overhead_s.bf16.*bf16 is in no_gemm_library"):
        make_target("t", dispatch_overhead_s={"bf16": estimated(5e-6, "test")}, **two)
    kept = make_target("t", dispatch_overhead_s={"fp32": estimated(5e-6, "test")}, **two)
    assert kept.launch_for("fp32") == 5e-6


_TWO_DTYPES = {
    "peak_ops_per_s": {"fp32": datasheet(1e12, "t"), "bf16": datasheet(1e12, "t")},
    "energy_per_op_j": {"fp32": estimated(1e-12, "t"), "bf16": estimated(1e-12, "t")},
    "no_gemm_library": ["bf16"],
}


@pytest.mark.parametrize(
    ("fields", "refused"),
    [
        (
            {
                "pack_bps": {"bf16": estimated(1e10, "t")},
                "pack_min_rows": {"bf16": estimated(3, "t")},
            },
            "pack_bps.bf16.*no library packs its B",
        ),
        ({"pack_a_bps": {"bf16": estimated(4e9, "t")}}, "pack_a_bps.bf16.*no library packs its A"),
        (
            {"library_min_macs": {"bf16": estimated(4096, "t")}},
            "library_min_macs.bf16.*no library takes its products",
        ),
    ],
)
def test_a_library_s_packing_and_size_are_for_a_dtype_one_runs(make_target, fields, refused):
    """Packing B or A and the size a library takes a product from belong to
    the library: for a dtype in ``no_gemm_library`` they changed no
    prediction (its products run in the framework's own kernel), so a
    target file giving them is refused, naming the constant."""
    with pytest.raises(SpecError, match=refused):
        make_target("t", **fields, **_TWO_DTYPES)
    kept = {name: {"fp32": value["bf16"]} for name, value in fields.items()}
    target = make_target("t", **kept, **_TWO_DTYPES)
    for name in fields:
        assert set(getattr(target, name)) == {"fp32"}


def test_one_packing_rate_for_every_dtype_covers_those_a_library_runs(make_target):
    """``pack_bps`` and ``pack_min_rows`` given as one number apply to each
    dtype some library runs: not to one in ``no_gemm_library``, which would
    otherwise be refused for a constant the file never named per dtype."""
    target = make_target(
        "t", pack_bps=estimated(1e10, "t"), pack_min_rows=estimated(3, "t"), **_TWO_DTYPES
    )
    assert dict(target.pack_bps) == {"fp32": 1e10}
    assert dict(target.pack_min_rows) == {"fp32": 3}
    assert "pack_bps.fp32" in target.provenance and "pack_bps.bf16" not in target.provenance
    # one number where no dtype has a library packs nothing: refused, not dropped
    none = {**_TWO_DTYPES, "no_gemm_library": ["bf16", "fp32"]}
    with pytest.raises(SpecError, match="pack_bps.*every dtype is in no_gemm_library"):
        make_target("t", pack_bps=estimated(1e10, "t"), pack_min_rows=estimated(3, "t"), **none)


def test_a_gemv_team_cost_is_above_zero_as_the_teams(make_target):
    with pytest.raises(SpecError, match="gemv_fork_join_s.fp32"):
        make_target(
            "t",
            fork_join_s=estimated(2e-6, "test"),
            gemv_fork_join_s={"fp32": estimated(0.0, "test")},
        )


def test_a_gemv_team_cost_is_a_cpus(make_target):
    with pytest.raises(SpecError, match="gemv_fork_join_s.fp32.*a gpu target has no CPU thread"):
        make_target(
            "t",
            architecture="gpu",
            fork_join_s=estimated(2e-6, "test"),
            gemv_fork_join_s={"fp32": estimated(5e-6, "test")},
        )


def test_a_gemv_team_cost_survives_a_json_round_trip(make_target):
    spec = make_target(
        fork_join_s=estimated(2e-6, "a"),
        gemv_fork_join_s={"fp32": estimated(5e-6, "g")},
        parallel_grain_ops=estimated(32768, "b"),
    )
    back = spec_from_json(spec_to_json(spec))
    assert back == spec and back.gemv_fork_join_s == {"fp32": 5e-6}
    assert back.provenance["gemv_fork_join_s.fp32"].source == "g"


def test_a_micro_kernel_s_accumulator_lanes_pad_only_c_s_columns(registry_of):
    # one unit: the compute is the padded outputs' multiply-adds at the dtype's rate
    one = {"compute_units": datasheet(1, "t"), "peak_ops_per_s": {"fp32": datasheet(64e9, "t")}}
    square = registry_of(**one)
    lanes = registry_of(**one, accumulator_lanes={"fp32": datasheet(16, "oneDNN brgemm")})
    shapes = [[80, 4096, 96], [80, 4096, 40], [80, 4096, 8], [1, 4096, 4096]]
    shapes += [[80, 4096, 2], [80, 4096, 1]]
    flops = np.array([2.0 * m * k * n for m, k, n in shapes])
    rate = 64e9
    p = predict_batch(lanes, "t", "matmul", shapes, "fp32")
    # M is never padded; N to a multiple of 16 (96 is six vectors, 40 takes three),
    # an N narrower than the lanes takes a whole (masked) vector, and an N of one
    # (the library's GEMV) is its one column
    padding = np.array([96 / 96, 48 / 40, 16 / 8, 1.0, 16 / 2, 1.0])
    assert p.compute_s.tolist() == pytest.approx((flops * padding / rate).tolist())
    assert p.utilisation.tolist() == pytest.approx((1.0 / padding).tolist())
    assert [p.details(i)["padded_n"] for i in (2, 4, 5)] == [16, 16, 1]
    assert "rows of 16-lane vectors: N computed as 16" in p.sentence(4)
    assert "one column: the library's GEMV, not its 16-lane kernel" in p.sentence(5)
    assert "GEMV" not in p.sentence(4)
    # the square register tile (13 x 13 for fp32 in 2 KiB) pads both: 80 -> 91, 96 -> 104
    q = predict_batch(square, "t", "matmul", shapes[:1], "fp32")
    assert q.compute_s[0] == pytest.approx(flops[0] * (91 * 104) / (80 * 96) / rate)
    # the lanes are a compute tile only: the L1's traffic keeps the register tile
    assert p.bytes_per_tier[0, 0] == pytest.approx(q.bytes_per_tier[0, 0])


def test_a_library_that_covers_n_s_tail_in_pieces_costs_a_vector_a_piece(registry_of):
    one = {"compute_units": datasheet(1, "t"), "peak_ops_per_s": {"fp32": datasheet(64e9, "t")}}
    lanes = {"fp32": datasheet(16, "t")}
    padded = registry_of(**one, accumulator_lanes=lanes)
    pieced = registry_of(
        **one, accumulator_lanes=lanes, tail_piece_vectors={"fp32": estimated(1.0, "pieces")}
    )
    half = registry_of(
        **one, accumulator_lanes=lanes, tail_piece_vectors={"fp32": estimated(0.5, "t")}
    )
    ns = [16, 8, 7, 5, 12, 15, 31, 32, 47, 2, 1]
    shapes = [[64, 256, n] for n in ns]
    flops = np.array([2.0 * m * k * n for m, k, n in shapes])
    p = predict_batch(pieced, "t", "matmul", shapes, "fp32")
    q = predict_batch(padded, "t", "matmul", shapes, "fp32")
    h = predict_batch(half, "t", "matmul", shapes, "fp32")
    # whole vectors, then one per set bit of N mod 16: 7 = 4 + 2 + 1, 47 = 32 + 8 + 4 + 2 + 1;
    # N = 1 is the GEMV's one column either way
    vectors = np.array([1, 1, 3, 2, 2, 4, 5, 2, 6, 1, 1 / 16])
    per_vector = flops / np.array(ns) * 16 / 64e9
    assert p.compute_s.tolist() == pytest.approx((per_vector * vectors).tolist())
    assert [p.details(i)["padded_n"] for i in range(len(ns))] == [
        16, 16, 48, 32, 32, 64, 80, 32, 96, 16, 1,
    ]  # fmt: skip
    # padding to whole vectors instead: 7 -> 16, 31 -> 32, 47 -> 48
    assert q.compute_s[2] == pytest.approx(per_vector[2])
    assert q.compute_s[8] == pytest.approx(per_vector[8] * 3)
    # the pieces at half a vector each: 7 is three halves, 31 one vector and four halves
    assert h.compute_s[2] == pytest.approx(per_vector[2] * 1.5)
    assert h.compute_s[6] == pytest.approx(per_vector[6] * 3)
    assert h.compute_s[0] == pytest.approx(per_vector[0])
    # ...and never less than one vector in all (N = 2 and 8 take one, as measured), so
    # no row runs above the peak
    assert h.compute_s[9] == pytest.approx(per_vector[9]) and h.compute_s[1] == pytest.approx(
        per_vector[1]
    )
    assert max(h.utilisation) <= 1.0 + 1e-12 and max(p.utilisation) <= 1.0 + 1e-12
    # a product the library does not run (the framework's own kernel, at most
    # library_min_macs) keeps the square tile: no lanes, no pieces
    small = registry_of(
        **one,
        accumulator_lanes=lanes,
        tail_piece_vectors={"fp32": estimated(1.0, "t")},
        library_min_macs={"fp32": datasheet(4096, "t")},
    )
    own = predict_batch(small, "t", "matmul", [[4, 4, 7], [64, 256, 7]], "fp32")
    assert "tail_pieces" not in own.details(0) and "padded_n" not in own.details(0)
    assert own.details(1)["tail_pieces"] == 3
    # explain names the pieces where there are several, and the details carry them
    assert (
        "N computed as 48; its 7 columns beyond whole vectors in 3 power-of-two pieces, "
        "4 + 2 + 1, a vector each"
    ) in " ".join(p.sentence(2).split())
    assert "15 columns beyond whole vectors in 4 power-of-two pieces, 8 + 4 + 2 + 1" in " ".join(
        p.sentence(6).split()
    )  # 31 = 16 + 15
    assert "pieces" not in p.sentence(1) and "pieces" not in p.sentence(7)
    assert "0.5 of a vector each" in " ".join(h.sentence(2).split())
    assert p.details(2)["tail_pieces"] == 3 and p.details(2)["tail_columns"] == 7
    assert p.details(8)["tail_columns"] == 15 and p.details(8)["tail_piece_vectors"] == 1.0
    assert "tail_pieces" not in p.details(7) and "tail_pieces" not in p.details(10)  # 32, GEMV
    assert "tail_pieces" not in q.details(2)
    back = spec_from_json(spec_to_json(pieced.target("t")))
    assert back.tail_piece_vectors == {"fp32": 1.0}
    assert back.provenance["tail_piece_vectors.fp32"].source == "pieces"


def test_tail_piece_vectors_need_lanes_and_cost_at_most_a_vector(make_target):
    lanes = {"fp32": datasheet(16, "t")}
    with pytest.raises(SpecError, match="tail_piece_vectors.fp32.*needs accumulator_lanes.fp32"):
        make_target(tail_piece_vectors={"fp32": estimated(1.0, "t")})
    # a piece costs no less than its own columns (the largest is half the lanes) and no
    # more than a whole vector: one range, said the same way either side
    for bad in (0.0, -1.0, 0.4, 1.5):
        with pytest.raises(SpecError, match=r"tail_piece_vectors.fp32.*must be in \[0.5, 1\]"):
            make_target(accumulator_lanes=lanes, tail_piece_vectors={"fp32": estimated(bad, "t")})
    # a GPU's library picks its own tiles: said at once, not after asking for lanes
    with pytest.raises(SpecError, match="tail_piece_vectors.fp32': a gpu target's library"):
        make_target(architecture="gpu", tail_piece_vectors={"fp32": estimated(1.0, "t")})
    assert make_target(
        accumulator_lanes=lanes, tail_piece_vectors={"fp32": estimated(0.5, "t")}
    ).tail_piece_vectors == {"fp32": 0.5}


def test_accumulator_lanes_split_over_threads_by_rows_and_vectors(registry_of):
    lanes = registry_of(accumulator_lanes={"fp32": datasheet(16, "t")})  # 4 units
    p = predict_batch(lanes, "t", "matmul", [[6, 512, 64]], "fp32")
    # 6 rows x 4 vectors: the best split of 4 threads leaves the busiest thread 6 tiles
    assert p.waves[0] == 6
    back = spec_from_json(spec_to_json(lanes.target("t")))
    assert back.accumulator_lanes == {"fp32": 16.0}
    assert back.provenance["accumulator_lanes.fp32"].kind == "datasheet"


def test_accumulator_lanes_are_a_cpu_library_s_whole_number(make_target):
    lanes = {"fp32": datasheet(16, "t")}
    with pytest.raises(SpecError, match="accumulator_lanes.fp32': a gpu target's library"):
        make_target(architecture="gpu", accumulator_lanes=lanes)
    with pytest.raises(SpecError, match="accumulator_lanes.bf16"):
        make_target(accumulator_lanes={"bf16": datasheet(16, "t")})  # no bf16 peak
    with pytest.raises(SpecError, match="fp32 is in no_gemm_library"):
        make_target(accumulator_lanes=lanes, no_gemm_library=["fp32"], **_reference_times())
    for bad, why in ((0, "> 0"), (-16, "> 0"), (12.5, "whole number"), (128, "from 1 to 64")):
        with pytest.raises(SpecError, match=f"accumulator_lanes.fp32.*{why}"):
            make_target(accumulator_lanes={"fp32": datasheet(bad, "t")})
    assert make_target(accumulator_lanes={"fp32": datasheet(64, "t")}).accumulator_lanes == {
        "fp32": 64.0
    }


def _reference_times() -> dict[str, dict[str, object]]:
    """The framework kernel's four per-dtype times for fp32 (a dtype in
    ``no_gemm_library`` needs them)."""
    from graphsval_core.datamodel.target import TargetSpec

    return {name: {"fp32": estimated(1e-9, "t")} for name in TargetSpec.REFERENCE}


def test_the_lanes_are_the_library_s_not_the_framework_kernel_s(registry_of):
    # PyTorch keeps a bf16 product of at most 16 x 16 x 16 out of oneDNN: its own kernel
    # has no micro-kernel lanes, so it keeps the square register tile (18 x 18 for bf16)
    registry = registry_of(
        compute_units=datasheet(1, "t"),
        peak_ops_per_s={"fp32": datasheet(1e11, "t"), "bf16": datasheet(1e12, "t")},
        energy_per_op_j={"fp32": estimated(1e-12, "t"), "bf16": estimated(1e-12, "t")},
        library_min_macs={"bf16": datasheet(4096, "mkldnn_gemm_min_size")},
        accumulator_lanes={"bf16": datasheet(16, "oneDNN brgemm")},
    )
    p = predict_batch(registry, "t", "matmul", [[16, 16, 16], [16, 16, 20]], "bf16")
    # at the size: one 16 x 16 tile (clamped), all of it used; above it: 16 rows of 2 vectors
    assert p.waves.tolist() == [1, 32]
    assert p.utilisation.tolist() == pytest.approx([1.0, 20 / 32])
    # explain says so: the library's row names its lanes and the N it computes
    assert "16-lane vectors: N computed as 32" in p.sentence(1)
    assert "lane" not in p.sentence(0)
    assert (p.details(1)["accumulator_lanes"], p.details(1)["padded_n"]) == (16, 32)
    assert "padded_n" not in p.details(0)


def _in_place_registry(registry_of, rows: float = 8, **more):
    return registry_of(
        peak_ops_per_s={"fp32": datasheet(1e11, "t"), "bf16": datasheet(2e11, "t")},
        energy_per_op_j={"fp32": estimated(1e-12, "t"), "bf16": estimated(1e-12, "t")},
        pack_bps={"fp32": estimated(20e9, "mkl"), "bf16": estimated(5e9, "onednn")},
        pack_min_rows={"fp32": estimated(3, "mkl"), "bf16": estimated(1, "onednn")},
        in_place_max_rows={"bf16": estimated(rows, "reads a weight in place")},
        **more,
    )


def test_a_transposed_b_beyond_the_caches_is_read_in_place_under_few_rows(registry_of):
    registry = _in_place_registry(registry_of)
    kept = inner_capacities(registry.target("t").tiers)[-1]
    big = int(np.ceil(np.sqrt(kept))) + 64  # a bf16 B of 2 x (big^2) bytes: beyond the caches
    small = int(np.sqrt(kept / 8))  # a bf16 B the caches keep
    shapes = [[8, big, big], [9, big, big], [8, small, small]]
    linear = predict_batch(registry, "t", "linear", shapes, "bf16")
    # up to the dtype's rows, a weight beyond the caches is read where it lies: the library
    # reorders only the share the caches keep
    assert linear.b_in_place.tolist() == [True, False, False]
    b = big * big * 2
    # (row 1 has one more row of A, which its copy of B reads past: within 0.1%)
    assert linear.pack_s[0] == pytest.approx(linear.pack_s[1] * kept / b, rel=1e-3)
    assert 0 < linear.pack_s[0] < linear.pack_s[1] and linear.pack_s[2] > 0
    assert "packing the share of B the caches keep " in linear.sentence(0)
    assert "(the rest read in place);" in linear.sentence(0)
    assert "read in place" not in linear.sentence(1) and "packing B" in linear.sentence(1)
    assert linear.details(0)["b_in_place"] is True and "b_in_place" not in linear.details(1)
    total = (
        linear.launch_s
        + linear.exposed_compute_s
        + linear.exposed_memory_s
        + linear.first_touch_s
        + linear.pack_s
    )
    assert np.array_equal(total, linear.latency_s)
    # the same shape as matmul (B N-contiguous) packs all of B, and so does a dtype without
    # the rule
    matmul = predict_batch(registry, "t", "matmul", shapes[:1], "bf16")
    assert not matmul.b_in_place[0] and matmul.pack_s[0] == pytest.approx(
        linear.pack_s[1], rel=1e-3
    )
    fp32 = predict_batch(registry, "t", "linear", shapes[:1], "fp32")
    assert not fp32.b_in_place[0] and fp32.pack_s[0] > linear.pack_s[0]
    # only the packing changes: the row's memory time is the one it has with every row packed
    packed_everywhere = _in_place_registry(registry_of, 4)
    assert linear.memory_s[0] == pytest.approx(
        predict_batch(packed_everywhere, "t", "linear", shapes[:1], "bf16").memory_s[0]
    )


def _across_what_the_caches_keep(registry):
    """bf16 linears of 8 rows whose K x 4096 weights grow across what the
    caches keep: the first packed, the last read in place."""
    kept = inner_capacities(registry.target("t").tiers)[-1]
    n = int(kept / 2 / 4096)
    shapes = [[8, k, 4096] for k in range(n - 3, n + 4)]
    p = predict_batch(registry, "t", "linear", shapes, "bf16")
    assert not p.b_in_place[0] and p.b_in_place[-1]
    return p


def test_reading_b_in_place_never_makes_a_larger_linear_faster(registry_of):
    # the packing stops growing where B outgrows the caches; it does not vanish there
    p = _across_what_the_caches_keep(_in_place_registry(registry_of))
    assert np.all(np.diff(p.latency_s) >= 0) and np.all(np.diff(p.pack_s) >= -1e-15)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (
            {"in_place_max_rows": {"fp32": estimated(8, "t")}},
            "in_place_max_rows.fp32.*has no pack_bps",
        ),
        (
            {
                "pack_bps": estimated(10e9, "t"),
                "pack_min_rows": estimated(3, "t"),
                "in_place_max_rows": {"fp32": estimated(2, "t")},
            },
            r"from pack_min_rows.fp32 \(3\) to 1,099,511,627,776 .*, got 2",
        ),
        (
            {
                "pack_bps": estimated(10e9, "t"),
                "pack_min_rows": estimated(3, "t"),
                "in_place_max_rows": {"fp32": estimated(1e300, "t")},
            },
            r"in_place_max_rows.fp32.*largest dimension\), got 1e\+300",
        ),
        (
            {"pack_bps": estimated(10e9, "t"), "pack_min_rows": estimated(1e300, "t")},
            r"pack_min_rows.fp32.*from 1 to 1,099,511,627,776 .*, got 1e\+300",
        ),
        (
            {"pack_bps": estimated(10e9, "t"), "pack_min_rows": estimated(2.5, "t")},
            r"pack_min_rows.fp32.*whole number of rows of A from 1 to .*, got 2.5",
        ),
        (
            {
                "pack_bps": estimated(10e9, "t"),
                "pack_min_rows": estimated(3, "t"),
                "in_place_max_rows": {"fp32": estimated(8.5, "t")},
            },
            "whole number of rows",
        ),
        ({"in_place_max_rows": {"int8": estimated(8, "t")}}, "in_place_max_rows.int8"),
    ],
)
def test_reading_b_in_place_is_checked(make_target, fields, message):
    with pytest.raises(SpecError, match=message):
        make_target(**fields)


def test_reading_b_in_place_survives_a_json_round_trip(make_target):
    spec = make_target(
        pack_bps=estimated(10e9, "t"),
        pack_min_rows=estimated(1, "t"),
        in_place_max_rows={"fp32": estimated(32, "a weight in place")},
        in_place_fraction={"fp32": estimated(0.4, "a stream's share")},
    )
    back = spec_from_json(spec_to_json(spec))
    assert back.in_place_max_rows == {"fp32": 32}
    assert back.provenance["in_place_max_rows.fp32"].source == "a weight in place"
    assert back.in_place_fraction == {"fp32": 0.4}
    assert back.provenance["in_place_fraction.fp32"].source == "a stream's share"
    assert back.to_dict()["in_place_fraction"] == {"fp32": 0.4}
    # the rate it divides by is one the target file's rate checks see
    rates = {where: value for where, value, _unit in effective_rates(spec)}
    last = spec.tiers[-1]
    name = next(w for w in rates if w.endswith("in_place_fraction.fp32") and last.name in w)
    assert rates[name] == pytest.approx(last.effective_bandwidth_bps * 0.4)


def test_a_b_too_few_rows_pack_is_not_read_in_place(registry_of):
    # below the dtype's pack_min_rows the library packs nothing: nothing is read "instead"
    registry = registry_of(
        pack_bps=estimated(20e9, "mkl"),
        pack_min_rows=estimated(3, "mkl"),
        in_place_max_rows={"fp32": estimated(8, "t")},
    )
    kept = inner_capacities(registry.target("t").tiers)[-1]
    big = int(np.ceil(np.sqrt(kept))) + 64
    p = predict_batch(registry, "t", "linear", [[2, big, big], [3, big, big]], "fp32")
    assert p.b_in_place.tolist() == [False, True]
    assert p.pack_s[0] == 0.0 and p.pack_s[1] > 0


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"architecture": "gpu"}, "does not pack B on the call"),
        ({"no_gemm_library": ("fp32",)}, "no_gemm_library: no library packs (its|a) B"),
        ("one tier", "one memory tier has no caches for B to outgrow"),
    ],
)
def test_reading_b_in_place_is_a_cpu_library_s_with_caches(make_target, make_tier, fields, message):
    packing = {
        "pack_bps": estimated(10e9, "t"),
        "pack_min_rows": estimated(1, "t"),
        "in_place_max_rows": {"fp32": estimated(8, "t")},
    }
    if fields == "one tier":
        fields = {"tiers": [make_tier("dram")]}
    with pytest.raises(SpecError, match=message):
        make_target(**packing, **fields)


def _streaming_registry(registry_of, share: float | None):
    """:func:`_in_place_registry` with the products' bf16 share at 0.25 and,
    unless ``share`` is None, the rows read in place at their own."""
    own = {} if share is None else {"in_place_fraction": {"bf16": estimated(share, "t")}}
    products = {"bf16": estimated(0.25, "t")}
    return _in_place_registry(registry_of, product_bandwidth_fraction=products, **own)


def test_a_b_read_in_place_streams_the_part_it_does_not_pack_at_its_own_share(registry_of):
    registry = _streaming_registry(registry_of, 0.8)
    spec = registry.target("t")
    kept = inner_capacities(spec.tiers)[-1]
    big = int(np.ceil(np.sqrt(kept))) * 4  # a bf16 B far beyond the caches
    shapes = [[8, big, big], [9, big, big]]  # read in place; packed
    own = predict_batch(registry, "t", "linear", shapes, "bf16")
    products = predict_batch(_streaming_registry(registry_of, None), "t", "linear", shapes, "bf16")
    assert own.b_in_place.tolist() == [True, False]
    effective = np.array([t.effective_bandwidth_bps for t in spec.tiers])
    panels = np.array(own.tier_bandwidth_bps)  # the products' share of every tier
    packed = kept / (big * big * 2)
    # each tier: the packed share of B as panels at the products' rate, the rest at the
    # row's own share of the tier, the two times added
    blend = 1.0 / (packed / panels + (1.0 - packed) / (effective * 0.8))
    assert own.row_bandwidth_bps[0] == pytest.approx(blend)
    assert own.row_bandwidth_bps[1].tolist() == pytest.approx(panels.tolist())
    assert own.time_per_tier_s[0] == pytest.approx(own.bytes_per_tier[0] / blend)
    assert own.time_per_tier_s[0, -1] < products.time_per_tier_s[0, -1]
    assert own.latency_s[0] < products.latency_s[0]
    # the packed row is timed as before
    assert own.latency_s[1] == pytest.approx(products.latency_s[1])
    # explain and the details quote the row's own rate, not the products'
    last = spec.tiers[-1]
    rate = own.details(0)["effective_bandwidth_bps"][last.name]
    assert rate == pytest.approx(blend[-1])
    assert own.details(1)["effective_bandwidth_bps"][last.name] == pytest.approx(panels[-1])
    assert own.binding_tier[0] == last.name
    assert fmt_si(rate, "B/s") in own.sentence(0)
    assert "(the rest read in place, at 0.8 of each tier's stream rate);" in own.sentence(0)
    assert own.details(0)["in_place_fraction"] == 0.8
    assert "in_place_fraction" not in own.details(1)
    # attribution holds every row of a cell against its tier's effective bandwidth (not
    # the products' share of it), so that a cell pooling rows read in place with packed
    # ones reads one constant: each row implies that bandwidth scaled by its memory time
    # over the measured time
    from graphsval_core.builtin.ops import LINEAR
    from graphsval_core.validate.cells import implied_rate
    from graphsval_core.validate.harness import _terms

    terms = _terms(own.columns(), spec, "bf16", LINEAR, shapes=np.array(shapes))
    assert panels[-1] < effective[-1]  # the products' share is below 1 here
    assert terms.tier_bandwidth_bps.tolist() == pytest.approx([effective[-1], effective[-1]])

    # the records implied_rate reads, measured at twice the memory time (plus the fixed time)
    measured = SimpleNamespace(latency_measured_s=terms.fixed_s + 2 * own.memory_s, terms=terms)
    implied = implied_rate(measured, terms.tier_bandwidth_bps, own.memory_s)
    assert implied.tolist() == pytest.approx([effective[-1] / 2, effective[-1] / 2])
    # and the measured regime judges the row by it
    regime = measured_regime(own, own.latency_s, spec)
    assert regime[0] == own.regime[0]


def test_a_b_read_in_place_at_its_own_share_never_makes_a_larger_linear_faster(registry_of):
    # a B just past what the caches keep is read almost all as panels, as just below, and
    # each further byte at the in-place rate: no step down where B outgrows the caches,
    # even at a share four times the products'
    p = _across_what_the_caches_keep(_streaming_registry(registry_of, 1.0))
    assert np.all(np.diff(p.latency_s) >= 0)


@pytest.mark.parametrize(
    ("reads_in_place", "share", "message"),
    [
        (False, 0.5, "in_place_fraction.fp32.*has no in_place_max_rows"),
        (True, 1.5, r"in_place_fraction.fp32.*\(0, 1\]"),
        (True, 0.0, "in_place_fraction.fp32"),
    ],
)
def test_a_b_read_in_place_s_own_share_is_checked(make_target, reads_in_place, share, message):
    fields = {"in_place_fraction": {"fp32": estimated(share, "t")}}
    if reads_in_place:
        fields["pack_bps"] = estimated(10e9, "t")
        fields["pack_min_rows"] = estimated(3, "t")
        fields["in_place_max_rows"] = {"fp32": estimated(8, "t")}
    with pytest.raises(SpecError, match=message):
        make_target(**fields)


def test_attribution_holds_a_tier_at_its_achievable_rate_and_a_product_at_its_peak(
    registry_of, make_tier
):
    # a DRAM at half its peak: a cell holds its rows against the 25 GB/s the model uses,
    # never the 50 GB/s datasheet; and a product's alu cell against the product peak,
    # never the dtype's vector rate (which only an op with no product runs at)
    from graphsval_core.builtin.ops import MATMUL
    from graphsval_core.validate.harness import _terms

    dram = make_tier(
        "dram",
        16 * 1024**3,
        is_per_unit=False,
        num_units=1,
        peak_bandwidth_bps=datasheet(5e10, "test"),
        achievable_fraction=estimated(0.5, "fitted"),
    )
    registry = registry_of(
        tiers=[make_tier("l1", 32 * 1024), make_tier("l2", 1024 * 1024), dram],
        vector_ops_per_s={"fp32": estimated(1e9, "loop")},
    )
    spec = registry.target("t")
    shape = [[1, 8192, 8192]]  # a GEMV whose 268 MB matrix streams from DRAM
    p = predict_batch(registry, "t", "matmul", shape, "fp32")
    assert p.binding_tier[0] == "dram"
    terms = _terms(p.columns(), spec, "fp32", MATMUL, shapes=np.array(shape))
    assert terms.tier_bandwidth_bps[0] == pytest.approx(2.5e10)
    assert terms.achievable_ops_per_s[0] == pytest.approx(spec.achievable_ops("fp32", True))
    assert spec.achievable_ops("fp32", True) != spec.achievable_ops("fp32", False)


def test_a_library_that_stores_c_as_if_it_accumulated_makes_c_cross_twice(registry_of):
    one = {"compute_units": datasheet(1, "t"), "peak_ops_per_s": {"fp32": datasheet(64e9, "t")}}
    plain = registry_of(**one)
    reread = registry_of(**one, product_output_passes={"fp32": estimated(2.0, "reads C")})
    once = registry_of(**one, product_output_passes={"fp32": estimated(1.0, "t")})
    shapes = [[2048, 3, 2048], [512, 8, 512]]  # C's traffic is most of the time
    mm = {name: predict_batch(r, "t", "matmul", shapes, "fp32") for name, r in
          (("plain", plain), ("reread", reread), ("once", once))}  # fmt: skip
    c_bytes = np.array([2048 * 2048, 512 * 512]) * 4.0
    # C crosses one more time at every tier: what the tier serves grows by C's bytes
    # times the share of it that misses the tiers inside (all of it at the first tier)
    extra = mm["reread"].bytes_per_tier - mm["plain"].bytes_per_tier
    assert extra[:, 0].tolist() == pytest.approx(c_bytes.tolist())
    assert (extra >= 0).all() and (extra <= c_bytes[:, None] * (1 + 1e-9)).all()
    # the 16 MB C's time is its memory time; 512 x 8 x 512's is its compute still
    assert mm["reread"].latency_s[0] > mm["plain"].latency_s[0]
    assert (mm["reread"].latency_s >= mm["plain"].latency_s).all()
    # one pass is the rule the model has without the field
    assert mm["once"].latency_s.tolist() == mm["plain"].latency_s.tolist()
    assert mm["reread"].details(0)["library_output_passes"] == 2.0
    assert "library_output_passes" not in mm["plain"].details(0)
    assert "C crosses twice: the library stores it as if it accumulated" in (
        mm["reread"].sentence(0)
    )
    assert "C crosses" not in mm["plain"].sentence(0)
    # K = 1 is the library's rank-1 update, M or N = 1 its GEMV: they store C whole
    level2 = [[2048, 1, 2048], [1, 64, 4096], [4096, 64, 1]]
    k1 = [predict_batch(r, "t", "matmul", level2, "fp32") for r in (plain, reread)]
    assert k1[1].latency_s.tolist() == k1[0].latency_s.tolist()
    assert not any("library_output_passes" in k1[1].details(i) for i in range(3))
    # one pass said as one pass: nothing read first, nothing said; a part of a pass, said so
    assert "library_output_passes" not in mm["once"].details(0)
    assert "C crosses" not in mm["once"].sentence(0)
    part = registry_of(**one, product_output_passes={"fp32": estimated(1.5, "t")})
    half = predict_batch(part, "t", "matmul", shapes, "fp32")
    assert "C crosses 1.5 times: the library stores it at part of an accumulation's" in (
        half.sentence(0)
    )
    assert mm["plain"].memory_s[0] < half.memory_s[0] < mm["reread"].memory_s[0]
    # linear accumulates onto its bias: it reads C anyway, with or without the field
    lin_plain = predict_batch(plain, "t", "linear", shapes, "fp32")
    lin_reread = predict_batch(reread, "t", "linear", shapes, "fp32")
    assert lin_reread.latency_s.tolist() == lin_plain.latency_s.tolist()
    assert "library_output_passes" not in lin_reread.details(0)
    back = spec_from_json(spec_to_json(reread.target("t")))
    assert back.product_output_passes == {"fp32": 2.0}
    assert back.provenance["product_output_passes.fp32"].source == "reads C"


def test_a_fresh_output_and_a_product_outside_the_library_keep_one_pass(registry_of):
    one = {
        "compute_units": datasheet(1, "t"),
        "peak_ops_per_s": {"bf16": datasheet(1e12, "t")},
        "energy_per_op_j": {"bf16": estimated(1e-12, "t")},
    }
    fresh = {
        "first_touch_bps": estimated(2e9, "t"),
        "first_touch_min_bytes": estimated(32 * 2**20, "t"),
    }
    small = {"library_min_macs": {"bf16": datasheet(16**3, "t")}}
    plain = registry_of(**one, **fresh, **small)
    reread = registry_of(
        **one, **fresh, **small, product_output_passes={"bf16": estimated(2.0, "t")}
    )
    # C of 64 MiB is mapped afresh (the kernel zeroed its pages into the cache); 16x16x16
    # runs in the framework's own kernel, not the library that stores C as if it accumulated
    shapes = [[8192, 2, 4096], [16, 16, 16], [4096, 2, 2048]]
    p = predict_batch(plain, "t", "matmul", shapes, "bf16")
    q = predict_batch(reread, "t", "matmul", shapes, "bf16")
    assert q.latency_s[:2].tolist() == p.latency_s[:2].tolist()
    assert q.latency_s[2] > p.latency_s[2]
    assert [("library_output_passes" in q.details(i)) for i in range(3)] == [False, False, True]


def test_product_output_passes_are_a_cpu_library_s_one_to_two(make_target):
    for bad in (0.0, 0.5, 2.5, -1.0):
        with pytest.raises(SpecError, match=r"product_output_passes.fp32.*must be in \[1, 2\]"):
            make_target(product_output_passes={"fp32": estimated(bad, "t")})
    with pytest.raises(SpecError, match="product_output_passes.fp32': a gpu target's library"):
        make_target(architecture="gpu", product_output_passes={"fp32": estimated(2.0, "t")})
    with pytest.raises(SpecError, match="product_output_passes.int4.*has no peak"):
        make_target(product_output_passes={"int4": estimated(2.0, "t")})
    with pytest.raises(SpecError, match="product_output_passes.fp32"):
        make_target(product_output_passes={"fp32": 2.0})  # no provenance
    assert make_target(
        product_output_passes={"fp32": estimated(1.5, "t")}
    ).product_output_passes == {"fp32": 1.5}
