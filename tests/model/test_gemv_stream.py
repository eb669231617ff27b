"""A GEMM library's level-2 path (``TargetSpec.gemv_fraction``): a GEMV, and a
product with fewer rows of A than the library packs from (one GEMV per row of
A), streams its matrix from the tiers beyond the innermost at its own share
of each tier's bandwidth, not the products' share."""

from __future__ import annotations

import numpy as np
import pytest

from graphsval_core.datamodel.provenance import estimated
from graphsval_core.datamodel.target import SpecError
from graphsval_core.files.target_spec import effective_rates, spec_from_json, spec_to_json
from graphsval_core.model.predict import predict_batch

#: The products' share of every tier in these targets.
PRODUCTS = 0.25


def _registry(registry_of, share: float | None, **kw):
    """The toy target with MKL-like packing (from 3 rows of A), the products
    at :data:`PRODUCTS` of each tier and, unless ``share`` is None, the
    level-2 path at its own."""
    own = {} if share is None else {"gemv_fraction": {"fp32": estimated(share, "t")}}
    return registry_of(
        pack_bps=estimated(20e9, "t"),
        pack_min_rows=estimated(3, "t"),
        product_bandwidth_fraction={"fp32": estimated(PRODUCTS, "t")},
        **own,
        **kw,
    )


#: Beyond the toy target's 1 MiB L2: a 64 MiB matrix in main memory.
BIG = 4096


@pytest.mark.parametrize("shape", [[1, BIG, BIG], [BIG, BIG, 1]])
@pytest.mark.parametrize("op", ["matmul", "linear"])
def test_a_gemv_streams_its_matrix_beyond_the_innermost_tier_at_its_own_share(
    registry_of, op, shape
):
    own = predict_batch(_registry(registry_of, 0.8), "t", op, [shape], "fp32")
    before = predict_batch(_registry(registry_of, None), "t", op, [shape], "fp32")
    spec = _registry(registry_of, 0.8).target("t")
    effective = np.array([t.effective_bandwidth_bps for t in spec.tiers])
    assert own.gemv_stream.tolist() == [True] and own.gemv_fraction == 0.8
    rates = np.array(own.bandwidth_of(0))
    assert rates[1:].tolist() == pytest.approx((effective[1:] * 0.8).tolist())
    # the innermost tier, which feeds the registers, keeps the rate it had
    assert rates[0] == pytest.approx(before.bandwidth_of(0)[0])
    # the bytes are the same; main memory's time is the bytes at the GEMV's rate
    assert own.bytes_per_tier[0].tolist() == pytest.approx(before.bytes_per_tier[0].tolist())
    assert own.binding_tier[0] == "dram"
    assert own.memory_s[0] == pytest.approx(own.bytes_per_tier[0, -1] / (effective[-1] * 0.8))
    assert own.latency_s[0] < before.latency_s[0]
    text = own.sentence(0)
    share = "0.8 of each tier's rate beyond the l1;"
    if shape[0] == 1:  # one row of A: too short to pack, a GEMV per row of A
        assert f"a GEMV per row of A, each streaming B at {share}" in text
    else:
        assert f"a GEMV: its matrix streams at {share}" in text
    assert own.details(0)["gemv_fraction"] == 0.8
    assert "gemv_fraction" not in before.details(0)


def test_a_product_with_an_a_too_short_to_pack_is_a_gemv_per_row_of_a(registry_of):
    # two rows of A (below pack_min_rows, 3): the library runs two GEMVs, each streaming B
    # from main memory; three rows pack B and stream it once, at the products' share
    shapes = [[1, BIG, BIG], [2, BIG, BIG], [3, BIG, BIG]]
    own = predict_batch(_registry(registry_of, 0.8), "t", "matmul", shapes, "fp32")
    before = predict_batch(_registry(registry_of, None), "t", "matmul", shapes, "fp32")
    assert own.gemv_stream.tolist() == [True, True, False]
    assert own.bytes_per_tier[1, -1] == pytest.approx(2 * own.bytes_per_tier[0, -1], rel=1e-3)
    assert own.bytes_per_tier[1, -1] > 1.9 * before.bytes_per_tier[1, -1]
    assert before.bytes_per_tier[1, -1] < 1.01 * before.bytes_per_tier[0, -1]
    assert own.memory_s[1] == pytest.approx(2 * own.memory_s[0], rel=1e-3)
    # the packed product is timed as it was without the level-2 path's share
    assert own.latency_s[2] == pytest.approx(before.latency_s[2])
    assert list(own.bandwidth_of(2)) == pytest.approx(list(before.bandwidth_of(2)))


def test_a_b_the_inner_tiers_keep_is_not_streamed_again_per_row(registry_of):
    # two rows of A against a 256 KiB B, beyond the toy's 32 KiB L1 and inside its 1 MiB
    # L2: each GEMV streams B from the L2 (twice the one row's bytes there), and main
    # memory, whose L2 keeps B, moves nothing
    shapes = [[1, 256, 256], [2, 256, 256]]
    p = predict_batch(_registry(registry_of, 0.8), "t", "matmul", shapes, "fp32")
    before = predict_batch(_registry(registry_of, None), "t", "matmul", shapes, "fp32")
    assert p.gemv_stream.tolist() == [True, True]
    assert p.bytes_per_tier[0, 1] > 0
    assert p.bytes_per_tier[1, 1] == pytest.approx(2 * p.bytes_per_tier[0, 1], rel=0.02)
    assert before.bytes_per_tier[1, 1] < 1.1 * before.bytes_per_tier[0, 1]  # once, packed
    assert p.bytes_per_tier[:, -1].tolist() == [0.0, 0.0]


def test_without_a_share_of_its_own_a_gemv_is_timed_as_before(registry_of):
    # a target whose spec gives the dtype no gemv_fraction (the i7, the GPUs)
    shapes = [[1, BIG, BIG], [2, BIG, BIG]]
    p = predict_batch(_registry(registry_of, None), "t", "matmul", shapes, "fp32")
    assert p.gemv_stream is None and p.gemv_fraction is None
    assert "a GEMV" not in p.sentence(0)


def test_the_share_round_trips_and_its_rate_is_checked(make_target):
    spec = make_target(
        "t",
        gemv_fraction={"fp32": estimated(0.7, "a stream's share")},
    )
    back = spec_from_json(spec_to_json(spec))
    assert back.gemv_fraction == {"fp32": 0.7}
    assert back.provenance["gemv_fraction.fp32"].source == "a stream's share"
    assert back.to_dict()["gemv_fraction"] == {"fp32": 0.7}
    rates = {where: value for where, value, _unit in effective_rates(spec)}
    last = spec.tiers[-1]
    name = next(w for w in rates if w.endswith("gemv_fraction.fp32") and last.name in w)
    assert rates[name] == pytest.approx(last.effective_bandwidth_bps * 0.7)
    # the innermost tier's rate is not the GEMV's: no such entry
    assert not any(w.endswith("gemv_fraction.fp32") and "tiers[0]" in w for w in rates)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"share": 1.5}, r"gemv_fraction.fp32.*\(0, 1\]"),
        ({"share": 0.0}, "gemv_fraction.fp32"),
        ({"no_gemm_library": ("fp32",)}, "no_gemm_library: no library runs its products"),
        ("one tier", "one memory tier has no tier beyond its innermost"),
        ({"dtype": "int8"}, "gemv_fraction.int8"),
        (
            {"pack_bps": estimated(10e9, "t"), "pack_min_rows": estimated(1, "t")},
            r"packs B from 1 row of A \(pack_min_rows.fp32\): it packs a GEMV's B too",
        ),
    ],
)
def test_a_gemv_s_own_share_is_checked(make_target, make_tier, fields, message):
    fields = {"tiers": [make_tier("dram")]} if fields == "one tier" else dict(fields)
    share, dtype = fields.pop("share", 0.5), fields.pop("dtype", "fp32")
    with pytest.raises(SpecError, match=message):
        make_target(gemv_fraction={dtype: estimated(share, "t")}, **fields)


def test_a_gemv_s_own_share_needs_provenance(make_target):
    with pytest.raises(SpecError, match="gemv_fraction.fp32"):
        make_target(gemv_fraction={"fp32": 0.5})


def test_an_a_too_short_to_pack_b_is_not_packed_either(registry_of):
    # the library's GEMV path reads both operands as they lie: an A of 1-2 rows beyond
    # the caches pays no packing of A, while 3 rows (B packed) pack the A's share beyond
    # the last cache, as a tall product's
    reg = _registry(registry_of, 0.8, pack_a_bps={"fp32": estimated(1e9, "t")})
    tall = [[1, 2 * BIG * BIG, 32], [2, BIG * BIG, 32], [3, BIG * BIG, 32]]
    p = predict_batch(reg, "t", "matmul", tall, "fp32")
    assert p.gemv_stream.tolist() == [True, True, False]
    assert p.pack_a_s[:2].tolist() == [0.0, 0.0] and p.pack_a_s[2] > 0
    assert "packing A" not in p.sentence(0) and "packing A" in p.sentence(2)


@pytest.mark.parametrize("shape", [[2, 64, 64], [2, 256, 256], [2, BIG, BIG]])
def test_each_gemv_per_row_of_a_reads_b_through_the_innermost_tier_too(registry_of, shape):
    # each of the two GEMVs loads all of B into the registers through the innermost tier,
    # whichever tier B lies in: the innermost sees B twice, as the tiers beyond it do, and
    # never fewer bytes than the tier behind it serves (it used to see B once, so an
    # L1-bound GEMV per row came out too fast: the Zen 4's 2x512x256 -21%)
    m, k, n = shape
    p = predict_batch(_registry(registry_of, 0.8), "t", "matmul", [[1, k, n], shape], "fp32")
    assert p.gemv_stream.tolist() == [True, True]
    b = k * n * 4
    assert p.bytes_per_tier[1, 0] >= 2 * b
    assert p.bytes_per_tier[1, 0] == pytest.approx(2 * p.bytes_per_tier[0, 0], rel=0.05)
    assert p.bytes_per_tier[1, 0] >= p.bytes_per_tier[1, 1:].max()
