"""Properties of the reference model, checked with hypothesis on the toy target
and on every installed target with its own dtypes."""

from __future__ import annotations

import attrs
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from graphsval_core.consistency.model_checks import _leaves_narrow
from graphsval_core.datamodel.provenance import datasheet, estimated
from graphsval_core.model.predict import predict_batch
from graphsval_core.model.reference import predict
from graphsval_core.plugins.loader import build_registry

SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

dims3 = st.tuples(*(st.integers(1, 20_000),) * 3)


@pytest.fixture(scope="module")
def registry():
    return build_registry()


def _targets(registry):
    # the toy target from the core tests is not installed; every installed one is
    return [t for t in registry.targets().values()]


def _ops_shapes(op: str, dims: tuple[int, int, int]) -> list[int]:
    return [dims[0] * dims[1]] if op == "vector_add" else list(dims)


@SETTINGS
@given(dims=dims3, op=st.sampled_from(["matmul", "linear", "vector_add"]), data=st.data())
def test_positive_finite_and_terms_sum(registry, dims, op, data):
    target = data.draw(st.sampled_from(_targets(registry)))
    dtype = data.draw(st.sampled_from(target.dtypes))
    p = predict_batch(registry, target.key, op, [_ops_shapes(op, dims)], dtype)
    for value in (p.latency_s[0], p.energy_j[0]):
        assert np.isfinite(value) and value > 0
    terms = (
        p.launch_s[0]
        + p.exposed_compute_s[0]
        + p.exposed_memory_s[0]
        + p.first_touch_s[0]
        + p.pack_s[0]
    )
    assert terms == p.latency_s[0]
    parts = p.energy_compute_j[0] + p.energy_per_tier_j[0].sum() + p.energy_static_j[0]
    assert parts == pytest.approx(p.energy_j[0], rel=1e-3)


@SETTINGS
@given(
    dims=dims3,
    axis=st.integers(0, 2),
    grow=st.integers(1, 5000),
    op=st.sampled_from(["matmul", "linear"]),
    data=st.data(),
)
def test_non_decreasing_in_each_dimension(registry, dims, axis, grow, op, data):
    target = data.draw(st.sampled_from(_targets(registry)))
    dtype = data.draw(st.sampled_from(target.dtypes))
    bigger = list(dims)
    bigger[axis] += grow
    p = predict_batch(registry, target.key, op, [list(dims), bigger], dtype)
    if _enters_the_library(target, dtype, dims, bigger):
        # The framework's own kernel runs a product of at most library_min_macs
        # multiply-adds, the library a larger one, faster: PyTorch keeps a bf16
        # product of at most 16 x 16 x 16 out of oneDNN. Compared on one path: the
        # smaller shape as the library would run it takes no longer.
        library = attrs.evolve(target, library_min_macs={**target.library_min_macs, dtype: 0.0})
        smaller = predict(registry, library, registry.op(op), [list(dims)], dtype)
        assert p.latency_s[1] >= smaller.latency_s[0] * (1 - 1e-12)
        assert p.energy_j[1] >= smaller.energy_j[0] * (1 - 1e-12)
        return
    # The other step down the model allows: a GEMV (M or N of 1) that wakes the
    # team pays its library's own team cost (gemv_fork_join_s), and growing its
    # 1 leaves the GEMV path for the GEMM's cheaper fork_join_s. Measured so: the
    # i7's fp32 linear 1x128x384 takes 8.7 us, its matmul 64x64x128 (ten times
    # the multiply-adds) 6.9 us. Latency may drop by that difference, no more.
    # Growing it above the grain wakes the team: the smaller shape on the team too.
    q = _as_a_team_if_it_wakes_one(registry, target, p, op, dims, dtype)
    if _leaves_narrow(p, 0, p, 1):
        # Another: a product whose N grows past the library's narrow kernel
        # (narrow_n_columns: MKL's fp32 matmul of 2 to 11 columns on the AMD hosts
        # takes 1.8 to 3.8 times what 16 take) runs in its lane kernel, faster.
        # Compared on one path: the smaller shape in the lane kernel takes no longer.
        lane = attrs.evolve(
            target,
            narrow_n_columns={},
            transposed_narrow_n_columns={},
            narrow_n_fraction={},
            transposed_narrow_n_group={},  # the linear's kernel goes with its columns
            transposed_narrow_n_fraction={},
        )
        q = predict(registry, lane, registry.op(op), [list(dims)], dtype)
        assert p.latency_s[1] >= q.latency_s[0] * (1 - 1e-12)
        return
    if _starts_packing_a_transposed_b(p):
        # A third step down: a linear whose A grows to the library's own threshold
        # for a transposed B (transposed_pack_min_rows) packs it once instead of
        # reading it once a pass of a few rows. Compared on one path: the smaller
        # shape with B packed takes no longer. (The Intel host's MKL fp32 takes this
        # step; test_packing_a_transposed_b_is_a_step_down draws it by name.)
        packed = attrs.evolve(target, transposed_pack_min_rows={}, transposed_pass_rows={})
        q = predict(registry, packed, registry.op(op), [list(dims)], dtype)
        assert p.latency_s[1] >= q.latency_s[0] * (1 - 1e-12)
        return
    step = 0.0
    if q.gemv_team is not None and q.gemv_team[0] and not p.gemv_team[1]:
        step = max(0.0, q.team_s[0] - p.team_s[1])
    assert p.latency_s[1] >= (q.latency_s[0] - step) * (1 - 1e-12)
    if step == 0.0:
        assert p.energy_j[1] >= q.energy_j[0] * (1 - 1e-12)
    else:  # the static draw over the shorter time drops with it; the rest may not
        dynamic = p.energy_j[1] - p.energy_static_j[1], q.energy_j[0] - q.energy_static_j[0]
        assert dynamic[0] >= dynamic[1] * (1 - 1e-12)
        static_drop = q.energy_static_j[0] * step / q.latency_s[0]
        assert p.energy_j[1] >= (q.energy_j[0] - static_drop) * (1 - 1e-9)


def _starts_packing_a_transposed_b(p) -> bool:
    """Whether the smaller row of ``p``'s pair reads a transposed B once a pass
    of a few rows of A (``b_passes``) and the bigger one packs it."""
    return p.b_passes is not None and p.b_passes[0] > 0 and not p.b_unpacked[1]


def test_leaving_the_narrow_kernel_is_a_step_down(registry):
    """The Zen 3 host's fp32 matmul: 11 columns run in MKL's narrow kernel,
    12 in its lane kernel, faster; in the lane kernel the 11 take no longer."""
    target = registry.target("host_amd_epyc_2c_1t")
    shapes = [[2048, 512, 11], [2048, 512, 12]]
    p = predict(registry, target, registry.op("matmul"), shapes, "fp32")
    assert _leaves_narrow(p, 0, p, 1)
    assert p.latency_s[1] < p.latency_s[0]
    lane = attrs.evolve(
        target,
        narrow_n_columns={},
        transposed_narrow_n_columns={},
        narrow_n_fraction={},
        transposed_narrow_n_group={},
        transposed_narrow_n_fraction={},
    )
    q = predict(registry, lane, registry.op("matmul"), [shapes[0]], "fp32")
    assert p.latency_s[1] >= q.latency_s[0]
    # its linear of 15 columns runs in the dot-product kernel, 16 in the lane kernel
    wide = [[2048, 512, 15], [2048, 512, 16]]
    p = predict(registry, target, registry.op("linear"), wide, "fp32")
    assert _leaves_narrow(p, 0, p, 1) and p.latency_s[1] < p.latency_s[0]
    q = predict(registry, lane, registry.op("linear"), [wide[0]], "fp32")
    assert p.latency_s[1] >= q.latency_s[0]


def test_packing_a_transposed_b_is_a_step_down(registry):
    """The Intel host's fp32 linear as its calibration rows show MKL runs it
    (its weight read once per 3 rows of A below 12 rows, packed from 12: 10
    rows take 3.9 times 3 rows' time per byte of weight, 16 rows 3.5-5.3
    times 2 rows'): 11 rows (4 passes)
    take longer than 12 (packed). With B packed the 11 rows take no longer."""
    shipped = registry.target("host_intel_xeon_2c_1t")
    target = attrs.evolve(
        shipped,
        transposed_pack_min_rows={"fp32": estimated(12, "test")},
        transposed_pass_rows={"fp32": estimated(3, "test")},
    )
    shapes = [[11, 4096, 4096], [12, 4096, 4096]]
    p = predict(registry, target, registry.op("linear"), shapes, "fp32")
    assert list(p.b_passes) == [4, 0] and _starts_packing_a_transposed_b(p)
    assert p.latency_s[1] < p.latency_s[0]
    assert dict(shipped.transposed_pass_rows) == {"fp32": 3.0}  # the shipped host's rule
    packed = attrs.evolve(shipped, transposed_pack_min_rows={}, transposed_pass_rows={})
    q = predict(registry, packed, registry.op("linear"), [shapes[0]], "fp32")
    assert p.latency_s[1] >= q.latency_s[0]


def _enters_the_library(target, dtype: str, dims, bigger) -> bool:
    """Whether growing ``dims`` to ``bigger`` takes the product from the
    framework's own kernel into the dtype's GEMM library (``library_min_macs``)."""
    least = target.library_min_macs.get(dtype)
    if least is None or dtype in target.no_gemm_library:
        return False
    return int(np.prod(dims)) <= least < int(np.prod(bigger))


def test_entering_the_library_is_the_one_other_step_down(registry):
    """The draw a reviewer's sweep found on an AVX512-bf16 host_cpu: a bf16
    product of 21x9x21 runs in PyTorch's kernel, 21x10x21 (4410 > 4096
    multiply-adds) in oneDNN's, a little faster (2.140 us against 2.125 us)."""
    target = registry.target("host_cpu")
    if "bf16" not in target.library_min_macs or "bf16" in target.no_gemm_library:
        pytest.skip("this machine's host_cpu sends no bf16 product to a library")
    dims, bigger = [21, 9, 21], [21, 10, 21]  # 3969 and 4410 multiply-adds
    if not _enters_the_library(target, "bf16", dims, bigger):
        pytest.skip("this machine's bf16 library_min_macs is not between 3969 and 4410")
    p = predict_batch(registry, "host_cpu", "matmul", [dims, bigger], "bf16")
    library = attrs.evolve(target, library_min_macs={**target.library_min_macs, "bf16": 0.0})
    smaller = predict(registry, library, registry.op("matmul"), [dims], "bf16")
    assert p.latency_s[1] >= smaller.latency_s[0]


def test_gemv_to_gemm_step_is_the_team_cost_difference(registry):
    """The i7 draw that found the step: 1x118x139 is a GEMV that pays MKL's
    sgemv team cost; 2x118x139 a GEMM that pays fork_join_s. Only the team
    costs differ by more than the extra row's work."""
    p = predict_batch(registry, "i7_12700k", "matmul", [[1, 118, 139], [2, 118, 139]], "fp32")
    assert p.gemv_team is not None and bool(p.gemv_team[0]) and not bool(p.gemv_team[1])
    step = p.team_s[0] - p.team_s[1]
    assert step > 0
    assert p.latency_s[1] < p.latency_s[0]
    assert p.latency_s[1] - p.team_s[1] >= p.latency_s[0] - p.team_s[0]


def test_an_add_that_wakes_the_team_may_take_less_than_one_thread(registry):
    """The draw that found it (this machine's detected host_cpu on a 2-CPU VM):
    a bf16 add of 28645 elements runs on one thread, 32769 (above PyTorch's grain
    of 32768) on two, sooner. On a target of one unit, or on the team for both,
    growing the add never takes less time."""
    target = attrs.evolve(
        registry.target("host_amd_epyc_2c_1t"),
        compute_units=estimated(2, "test"),
        parallel_grain_ops=estimated(32768.0, "test"),
        fork_join_s=estimated(3e-6, "test"),
    )
    add = registry.op("vector_add")
    p = predict(registry, target, add, [[28645], [32769]], "bf16")
    assert list(p.active_units) == [1, 2]
    assert p.team_s[1] > 0.0 and p.latency_s[1] < p.latency_s[0]
    team = _as_a_team_if_it_wakes_one(registry, target, p, "vector_add", [28645], "bf16")
    assert team.active_units[0] == 2 and p.latency_s[1] >= team.latency_s[0]
    one = attrs.evolve(target, compute_units=estimated(1, "test"))
    q = predict(registry, one, add, [[28645], [32769]], "bf16")
    assert q.latency_s[1] >= q.latency_s[0]


@SETTINGS
@given(n=st.integers(1, 1 << 28), grow=st.integers(1, 1 << 26), data=st.data())
def test_vector_add_non_decreasing(registry, n, grow, data):
    target = data.draw(st.sampled_from(_targets(registry)))
    dtype = data.draw(st.sampled_from(target.dtypes))
    p = predict_batch(registry, target.key, "vector_add", [[n], [n + grow]], dtype)
    before = _as_a_team_if_it_wakes_one(registry, target, p, "vector_add", [n], dtype)
    assert p.latency_s[1] >= before.latency_s[0] * (1 - 1e-12)
    assert p.energy_j[1] >= before.energy_j[0] * (1 - 1e-12)


def _as_a_team_if_it_wakes_one(registry, target, p, op: str, dims, dtype: str):
    """The smaller shape of ``p``'s pair as the bigger one runs it: where growing
    it takes the op above the target's ``parallel_grain_ops`` (PyTorch's grain),
    the bigger one wakes the thread team and splits its work, which may take
    less time than one thread alone (a hypothesis draw on this machine's
    detected host_cpu, two CPUs: a bf16 add of 28645 elements 9.25 us on one
    thread, 32769 elements 9.18 us on two); compared on one path, the smaller
    shape on the team too takes no longer. Otherwise ``p`` itself."""
    if not p.active_units[0] < p.active_units[1]:
        return p
    team = attrs.evolve(target, parallel_grain_ops=None)
    return predict(registry, team, registry.op(op), [list(dims)], dtype)


@SETTINGS
@given(dims=dims3, op=st.sampled_from(["matmul", "linear", "vector_add"]), data=st.data())
def test_memory_time_linear_in_bytes_above_latency_floor(registry, dims, op, data):
    target = data.draw(st.sampled_from(_targets(registry)))
    dtype = data.draw(st.sampled_from(target.dtypes))
    p = predict_batch(registry, target.key, op, [_ops_shapes(op, dims)], dtype)
    _memory_time_is_bytes_over_its_rate(registry, target, op, dtype, p)


def _memory_time_is_bytes_over_its_rate(registry, target, op: str, dtype: str, p) -> None:
    """Each tier's time of ``p``'s one row is its bytes over the row's rate (or
    the tier's access latency, where that is longer)."""
    tiers = registry.memory_hierarchy(target)
    # a matrix product streams at its library's share of each tier's bandwidth, times the
    # tier's own share for products (a private L2's) unless its A is too short to pack B
    # (it streams B as it lies); on the library's level-2 path (a GEMV, or an A too short
    # to pack) beyond the innermost tier at the dtype's gemv_fraction; a B read in place
    # blends in its own share (tested apart)
    product = registry.op(op).gemm_dims is not None
    if product and p.b_in_place is not None and p.b_in_place[0]:
        return
    unpacked = product and p.b_unpacked is not None and bool(p.b_unpacked[0])
    level2 = product and p.gemv_stream is not None and bool(p.gemv_stream[0])
    for k, tier in enumerate(tiers):
        share = target.product_bandwidth_fraction.get(dtype, 1.0) if product else 1.0
        share *= tier.product_fraction if product and not unpacked else 1.0
        if level2 and k > 0:
            share = target.gemv_fraction[dtype]
        moved = p.bytes_per_tier[0, k]
        streaming = moved / (tier.effective_bandwidth_bps * share)
        if moved > 0 and streaming >= tier.access_latency_ns * 1e-9:
            assert p.time_per_tier_s[0, k] == pytest.approx(streaming, rel=1e-12)
        elif moved > 0:
            assert p.time_per_tier_s[0, k] == pytest.approx(tier.access_latency_ns * 1e-9)


def test_a_gemv_s_memory_time_is_its_bytes_at_its_own_share(registry):
    # the draw that found it on the Zen 3 (its L2 timed at the GEMV's share, 6.13 ns,
    # against the products' 6.18 ns), and a GEMV and a product of two rows from memory
    target = registry.target("host_amd_epyc_2c_1t")
    assert "fp32" in target.gemv_fraction
    for shape in ([1, 89, 91], [1, 4096, 4096], [2, 2048, 2048], [4096, 4096, 1]):
        p = predict_batch(registry, target.key, "matmul", [shape], "fp32")
        assert p.gemv_stream is not None and bool(p.gemv_stream[0])
        _memory_time_is_bytes_over_its_rate(registry, target, "matmul", "fp32", p)


def _scaled_tier_target(make_target, make_tier, scale: float):
    return make_target(
        "scaled",
        launch_overhead_s=estimated(1e-9, "test"),
        tiers=[
            make_tier("l1", 32 * 1024 * scale),
            make_tier("l2", 1024 * 1024 * scale, peak_bandwidth_bps=datasheet(5e11, "t")),
            make_tier(
                "dram",
                64 * 1024**3,
                is_per_unit=False,
                num_units=1,
                peak_bandwidth_bps=datasheet(5e10, "t"),
            ),
        ],
    )


@SETTINGS
@given(dims=dims3, scale=st.floats(1.0, 16.0), op=st.sampled_from(["matmul", "vector_add"]))
def test_larger_tier_capacity_never_raises_memory_time(
    make_target, make_tier, make_plugin, dims, scale, op
):
    small = _scaled_tier_target(make_target, make_tier, 1.0)
    large = _scaled_tier_target(make_target, make_tier, scale)
    reg = build_registry(autoload=False)
    op_spec = reg.op(op)
    shapes = np.array([_ops_shapes(op, dims)])
    a = predict(reg, small, op_spec, shapes, "fp32")
    b = predict(reg, large, op_spec, shapes, "fp32")
    assert b.memory_s[0] <= a.memory_s[0] * (1 + 1e-12)


@SETTINGS
@given(dims=dims3)
def test_lower_precision_never_raises_compute_energy(make_target, dims):
    spec = make_target(
        "multi",
        peak_ops_per_s={
            d: datasheet(v, "t") for d, v in (("fp32", 1e12), ("fp16", 2e12), ("int8", 4e12))
        },
        energy_per_op_j={
            d: estimated(v, "t") for d, v in (("fp32", 2e-12), ("fp16", 1e-12), ("int8", 0.25e-12))
        },
    )
    reg = build_registry(autoload=False)
    op = reg.op("matmul")
    energy = {
        d: predict(reg, spec, op, np.array([dims]), d).energy_compute_j[0]
        for d in ("fp32", "fp16", "int8")
    }
    assert energy["int8"] <= energy["fp16"] <= energy["fp32"]


def _grid_sweep(op: str) -> np.ndarray:
    sizes = [1, 7, 64, 100, 512, 1000, 2048, 4096, 10_000]
    if op == "vector_add":
        return np.array([[4**i] for i in range(2, 15)] + [[10**i] for i in range(1, 9)])
    return np.array([[m, k, n] for m in sizes for k in sizes for n in sizes])


@pytest.mark.parametrize("op", ["matmul", "linear", "vector_add"])
def test_explanation_tier_agrees_with_regime_over_a_sweep(registry, op):
    shapes = _grid_sweep(op)
    for target in _targets(registry):
        for dtype in target.dtypes:
            p = predict_batch(registry, target.key, op, shapes, dtype)
            for i in range(len(p)):
                regime = str(p.regime[i])
                sentence = p.sentence(i)
                assert sentence.endswith(f"-> {regime}") or "above TDP" in sentence
                assert f"from {p.binding_tier[i]} at" in sentence
                if regime not in ("alu_bound", "launch_bound"):
                    assert regime == f"{p.binding_tier[i]}_bound"
                    assert p.memory_s[i] >= max(p.compute_s[i], p.launch_s[i])
