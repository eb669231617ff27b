"""A GEMM library's narrow kernel (``TargetSpec.narrow_n_columns``,
``transposed_narrow_n_columns`` and ``narrow_n_fraction``): a product of 2 up
to a few columns of N runs at a share of the compute rate, not in the lane
micro-kernel (MKL's fp32 matmul on the AMD hosts: 2 to 11 columns take 1.8 to
3.8 times what 16 take)."""

from __future__ import annotations

import numpy as np
import pytest

from graphsval_core.datamodel.provenance import estimated
from graphsval_core.datamodel.target import SpecError
from graphsval_core.files.target_spec import effective_rates, spec_from_json, spec_to_json
from graphsval_core.model.predict import predict_batch

SHARE = 0.25
#: a compute-bound product: A of 4096 x 4096 in main memory is streamed once
M, K = 512, 512


def _registry(registry_of, narrow: bool = True, transposed: bool = False, **kw):
    """The toy target with 16-lane accumulators and, with ``narrow``, a narrow
    kernel up to 11 columns (of a matmul's B, or with ``transposed`` of a
    linear's) at :data:`SHARE` of the compute rate."""
    own = {}
    if narrow:
        name = "transposed_narrow_n_columns" if transposed else "narrow_n_columns"
        own = {
            name: {"fp32": estimated(11, "t")},
            "narrow_n_fraction": {"fp32": estimated(SHARE, "t")},
        }
    return registry_of(accumulator_lanes={"fp32": estimated(16, "t")}, **own, **kw)


NS = [1, 2, 4, 8, 11, 12, 16]


def test_a_narrow_n_computes_a_row_of_c_a_step_of_k_at_the_share_of_the_rate(registry_of):
    shapes = [[M, K, n] for n in NS]
    own = predict_batch(_registry(registry_of), "t", "matmul", shapes, "fp32")
    lane = predict_batch(_registry(registry_of, False), "t", "matmul", shapes, "fp32")
    narrow = [2 <= n <= 11 for n in NS]
    assert own.narrow_n.tolist() == narrow
    rate = 256e9  # the toy's peak, its compute fraction 1
    for i, n in enumerate(NS):
        # every N computed as the kernel's 11 columns, the rows over the active units
        active = float(own.active_units[i])
        want = 2 * M * K * 11 / (rate / 4 * SHARE * active) if narrow[i] else lane.compute_s[i]
        assert own.compute_s[i] == pytest.approx(want), n
        want_u = n * SHARE * active / (11 * 4) if narrow[i] else lane.utilisation[i]
        assert own.utilisation[i] == pytest.approx(want_u), n
    # its time goes with M x K, not N
    assert own.compute_s[NS.index(2)] == pytest.approx(own.compute_s[NS.index(11)])
    # memory is the lane kernel's: the narrow kernel reads what it reads
    np.testing.assert_allclose(own.memory_s, lane.memory_s)
    # 11 columns in the narrow kernel take longer than 12 in the lane kernel
    assert own.latency_s[NS.index(11)] > own.latency_s[NS.index(12)]


@pytest.mark.parametrize("m", [1, 2])
def test_a_gemv_or_an_a_too_short_to_pack_is_not_the_narrow_kernel(registry_of, m):
    # M of 1 is the library's GEMV; fewer rows of A than it packs from run on its level-2
    # path (a GEMV per row of A): neither is the narrow kernel
    reg = _registry(registry_of, pack_bps=estimated(20e9, "t"), pack_min_rows=estimated(3, "t"))
    plain = _registry(
        registry_of, False, pack_bps=estimated(20e9, "t"), pack_min_rows=estimated(3, "t")
    )
    shapes = [[m, 4096, 8], [3, 4096, 8]]
    own = predict_batch(reg, "t", "matmul", shapes, "fp32")
    assert own.narrow_n.tolist() == [False, True]
    base = predict_batch(plain, "t", "matmul", shapes, "fp32")
    assert own.latency_s[0] == pytest.approx(base.latency_s[0])
    assert "narrow" not in own.sentence(0)


def test_each_layout_has_its_own_threshold(registry_of):
    shapes = [[M, K, 4]]
    for transposed, slow, same in ((False, "matmul", "linear"), (True, "linear", "matmul")):
        reg = _registry(registry_of, transposed=transposed)
        plain = _registry(registry_of, False)
        mine = predict_batch(reg, "t", slow, shapes, "fp32")
        other = predict_batch(reg, "t", same, shapes, "fp32")
        assert mine.narrow_n.tolist() == [True]
        assert mine.compute_s[0] == pytest.approx(2 * M * K * 11 / (256e9 * SHARE))
        assert other.narrow_n is None
        assert other.latency_s[0] == pytest.approx(
            predict_batch(plain, "t", same, shapes, "fp32").latency_s[0]
        )


def test_the_fields_round_trip_through_a_target_file(registry_of):
    spec = _registry(registry_of, transposed=True).target("t")
    again = spec_from_json(spec_to_json(spec))
    assert dict(again.transposed_narrow_n_columns) == {"fp32": 11.0}
    assert dict(again.narrow_n_columns) == {}
    assert dict(again.narrow_n_fraction) == {"fp32": SHARE}
    assert again.provenance["narrow_n_fraction.fp32"].kind == "estimated"
    rates = {at: rate for at, rate, _ in effective_rates(spec)}
    assert rates["peak_ops_per_s.fp32 x compute_fraction.fp32 x narrow_n_fraction.fp32"] == (
        pytest.approx(256e9 * SHARE)
    )


@pytest.mark.parametrize(
    ("fields", "where", "words"),
    [
        ({"narrow_n_columns": 1}, "narrow_n_columns.fp32", "from 2 (an N of 1 is a GEMV) to 16"),
        ({"narrow_n_columns": 17}, "narrow_n_columns.fp32", "its accumulator_lanes.fp32"),
        ({"narrow_n_columns": 7.5}, "narrow_n_columns.fp32", "whole number of columns of N"),
        ({"transposed_narrow_n_columns": 1e300}, "transposed_narrow_n_columns", "got 1e+300"),
        ({"narrow_n_fraction": 0.5}, "narrow_n_fraction.fp32", "has no narrow_n_columns"),
        ({"narrow_n_columns": 11}, "narrow_n_columns.fp32", "give narrow_n_fraction.fp32"),
        (
            {"transposed_narrow_n_columns": 11},
            "transposed_narrow_n_columns.fp32",
            "give narrow_n_fraction.fp32",
        ),
        ({"narrow_n_columns": 11, "narrow_n_fraction": 0}, "narrow_n_fraction", "(0, 1], got 0"),
        (
            {"narrow_n_columns": 11, "narrow_n_fraction": 1.5},
            "narrow_n_fraction",
            "(0, 1], got 1.5",
        ),
        # a linear's own kernel (its group of the weight's rows, its own share)
        (
            {"transposed_narrow_n_group": 4},
            "transposed_narrow_n_group.fp32",
            "no transposed_narrow_n_columns",
        ),
        (
            {"transposed_narrow_n_fraction": 0.4},
            "transposed_narrow_n_fraction.fp32",
            "no transposed_narrow_n_columns",
        ),
        (
            {"transposed_narrow_n_columns": 15, "transposed_narrow_n_group": 16},
            "transposed_narrow_n_group.fp32",
            "from 1 to transposed_narrow_n_columns.fp32 (15), got 16",
        ),
        (
            {"transposed_narrow_n_columns": 15, "transposed_narrow_n_group": 2.5},
            "transposed_narrow_n_group.fp32",
            "whole number of the weight's rows",
        ),
        (
            {"transposed_narrow_n_columns": 15, "transposed_narrow_n_fraction": 1.5},
            "transposed_narrow_n_fraction",
            "(0, 1], got 1.5",
        ),
        (
            {
                "transposed_narrow_n_columns": 15,
                "transposed_narrow_n_fraction": 0.4,
                "narrow_n_fraction": 0.25,
            },
            "narrow_n_fraction.fp32",
            "without a transposed_narrow_n_fraction of its own",
        ),
    ],
)
def test_a_bad_narrow_field_is_refused_with_its_name(registry_of, fields, where, words):
    kw = {name: {"fp32": estimated(v, "t")} for name, v in fields.items()}
    with pytest.raises(SpecError, match=where) as err:
        registry_of(accumulator_lanes={"fp32": estimated(16, "t")}, **kw)
    assert words in str(err.value)


def test_without_lanes_a_narrow_kernel_is_at_most_the_widest_accumulator(registry_of):
    share = {"narrow_n_fraction": {"fp32": estimated(SHARE, "t")}}
    registry_of(narrow_n_columns={"fp32": estimated(64, "t")}, **share)
    with pytest.raises(SpecError, match="narrow_n_columns.fp32") as err:
        registry_of(narrow_n_columns={"fp32": estimated(65, "t")}, **share)
    assert "to 64 (the widest accumulator a spec may give" in str(err.value)


def test_a_narrow_kernel_is_a_cpu_librarys(registry_of):
    with pytest.raises(SpecError, match="narrow_n_columns.fp32': a gpu target's library"):
        registry_of(
            architecture="gpu",
            narrow_n_columns={"fp32": estimated(11, "t")},
            narrow_n_fraction={"fp32": estimated(SHARE, "t")},
        )
    with pytest.raises(SpecError, match="fp32 is in no_gemm_library"):
        registry_of(
            no_gemm_library=("fp32",),
            narrow_n_columns={"fp32": estimated(11, "t")},
            narrow_n_fraction={"fp32": estimated(SHARE, "t")},
        )


def test_explain_the_details_and_targets_name_the_narrow_kernel(registry_of):
    from graphsval_core.cli.targets_cmd import _detail_rows

    reg = _registry(registry_of)
    p = predict_batch(reg, "t", "matmul", [[M, K, 4], [M, K, 16]], "fp32")
    assert "0.25 of that in the library's narrow-N kernel (a row of C a step of K, N " in (
        p.sentence(0)
    )
    assert "N computed as 11, " in p.sentence(0) and "waves" not in p.sentence(0)
    assert p.details(0)["narrow_n_fraction"] == SHARE
    assert p.details(0)["narrow_n_columns"] == 11
    assert "narrow" not in p.sentence(1) and "narrow_n_fraction" not in p.details(1)
    rows = {r[0]: r[1] for r in _detail_rows(reg, reg.target("t"))}
    assert rows["narrow N fp32, matmul"] == (
        "N of 2 to 11 columns of a matmul's B in the library's narrow kernel "
        "(a row of C a step of K)"
    )
    assert rows["narrow N fp32, rate"] == "0.25 of the compute rate in that kernel"


def test_a_narrow_row_measured_at_its_kernels_rate_is_measured_alu_bound(registry_of):
    from graphsval_core.model.classifier import measured_regime

    reg = _registry(registry_of)
    p = predict_batch(reg, "t", "matmul", [[4096, 4096, 4], [4096, 4096, 16]], "fp32")
    assert p.regime.tolist() == ["alu_bound", "alu_bound"]
    # measured as predicted: the narrow row at its kernel's rate, not the lane kernel's
    got = measured_regime(p, p.latency_s, reg.target("t"))
    assert got.tolist() == ["alu_bound", "alu_bound"]


def test_the_consistency_check_allows_only_the_step_out_of_the_narrow_kernel(registry_of):
    from graphsval_core.consistency.model_checks import _leaves_narrow

    reg = _registry(registry_of)
    p = predict_batch(reg, "t", "matmul", [[M, K, 11], [M, K, 4], [M, K, 12]], "fp32")
    q = predict_batch(reg, "t", "matmul", [[M, K, 12], [M, K, 8], [M, K, 24]], "fp32")
    assert [_leaves_narrow(p, i, q, i) for i in range(3)] == [True, False, False]
    assert q.latency_s[0] < p.latency_s[0]  # the step down it allows
    plain = predict_batch(_registry(registry_of, False), "t", "matmul", [[M, K, 11]], "fp32")
    assert not _leaves_narrow(plain, 0, q, 0)


LINEAR_SHARE = 0.45


def _grouped(registry_of, **kw):
    """The toy target with a linear's own narrow kernel: 2 to 15 columns, in
    whole groups of 4 of the weight's rows, at :data:`LINEAR_SHARE`; and
    the matmul's kernel of 11 columns at :data:`SHARE`."""
    return registry_of(
        accumulator_lanes={"fp32": estimated(16, "t")},
        narrow_n_columns={"fp32": estimated(11, "t")},
        narrow_n_fraction={"fp32": estimated(SHARE, "t")},
        transposed_narrow_n_columns={"fp32": estimated(15, "t")},
        transposed_narrow_n_group={"fp32": estimated(4, "t")},
        transposed_narrow_n_fraction={"fp32": estimated(LINEAR_SHARE, "t")},
        **kw,
    )


def test_a_linear_s_narrow_kernel_computes_n_in_whole_groups_at_its_own_share(registry_of):
    """MKL's fp32 linear of 2 to 15 columns on the AMD hosts: dot products
    along K, four of the weight's rows a pass (``bench_narrow_n.py``: N of
    4, 8 and 12 cost the same per column, 2 and 3 0.75 to 1.7 times what 4
    costs, rounded up to 4 here)."""
    reg = _grouped(registry_of)
    ns = [2, 3, 4, 5, 8, 9, 12, 15, 16]
    p = predict_batch(reg, "t", "linear", [[M, K, n] for n in ns], "fp32")
    assert p.narrow_n.tolist() == [n <= 15 for n in ns]
    for i, n in enumerate(ns[:-1]):
        groups = -(-n // 4) * 4
        active = float(p.active_units[i])
        want = 2 * M * K * groups / (256e9 / 4 * LINEAR_SHARE * active)
        assert p.compute_s[i] == pytest.approx(want), n
        assert p.details(i)["narrow_n_columns"] == groups
        assert p.details(i)["narrow_n_fraction"] == LINEAR_SHARE
        assert p.details(i)["narrow_n_group"] == 4
        assert "padded_n" not in p.details(i)  # the lane kernel's tile does not time it
    assert p.details(len(ns) - 1)["padded_n"] == 16  # N = 16: the lane kernel's
    # 2, 3 and 4 columns cost one group; 5 two; the time goes with the groups
    assert p.compute_s[0] == pytest.approx(p.compute_s[2])
    assert p.compute_s[3] == pytest.approx(2 * p.compute_s[2])
    assert (
        "dot products along K, 4 of the weight's rows a pass over A (2 passes), N computed as 8"
        in p.sentence(ns.index(5))
    )
    assert "4 of the weight's rows a pass over A (1 pass), N computed as 4" in p.sentence(2)
    # the matmul keeps its own kernel and share: every N as its 11 columns
    mm = predict_batch(reg, "t", "matmul", [[M, K, 4]], "fp32")
    assert mm.compute_s[0] == pytest.approx(2 * M * K * 11 / (256e9 * SHARE))
    assert "a row of C a step of K, N computed as 11" in mm.sentence(0)


def test_a_linear_s_own_kernel_fields_round_trip_and_are_shown(registry_of):
    from graphsval_core.cli.targets_cmd import _detail_rows

    reg = _grouped(registry_of)
    spec = reg.target("t")
    again = spec_from_json(spec_to_json(spec))
    assert dict(again.transposed_narrow_n_group) == {"fp32": 4.0}
    assert dict(again.transposed_narrow_n_fraction) == {"fp32": LINEAR_SHARE}
    rates = {at: rate for at, rate, _ in effective_rates(spec)}
    at = "peak_ops_per_s.fp32 x compute_fraction.fp32 x transposed_narrow_n_fraction.fp32"
    assert rates[at] == pytest.approx(256e9 * LINEAR_SHARE)
    rows = {r[0]: r[1] for r in _detail_rows(reg, spec)}
    assert rows["narrow N fp32, linear"] == (
        "N of 2 to 15 columns of a linear's weight in the library's narrow kernel (dot "
        "products along K, 4 of the weight's rows a pass: N computed in whole groups)"
    )
    assert rows["narrow N fp32, linear's rate"] == "0.45 of the compute rate in that kernel"
    # without a share of its own, the linear's kernel takes the matmul's
    shared = registry_of(
        accumulator_lanes={"fp32": estimated(16, "t")},
        transposed_narrow_n_columns={"fp32": estimated(15, "t")},
        transposed_narrow_n_group={"fp32": estimated(4, "t")},
        narrow_n_fraction={"fp32": estimated(SHARE, "t")},
    )
    assert shared.target("t").narrow_n_share("fp32", True) == SHARE


def test_a_linear_s_dot_product_kernel_hides_its_traffic_under_its_compute(registry_of):
    """The library hides only ``product_overlap`` of a product's shorter
    time; its kernel of dot products streams A under its compute (MKL's fp32
    of 4 columns on the Zen 3 host: the same time a multiply-add with A in
    the L3 as in main memory), so its latency is the roofline's max."""
    reg = _grouped(registry_of, product_overlap={"fp32": estimated(0.1, "t")})
    shapes = [[8192, 2048, 4], [8192, 2048, 16]]  # A of 64 MiB: main memory
    p = predict_batch(reg, "t", "linear", shapes, "fp32")
    assert p.narrow_n.tolist() == [True, False]
    assert p.memory_s[0] > 0 and p.compute_s[0] > 0
    exposed = p.exposed_compute_s + p.exposed_memory_s
    assert exposed[0] == pytest.approx(max(p.compute_s[0], p.memory_s[0]))
    assert p.product_overlap is not None and np.isnan(p.product_overlap[0])
    # the lane kernel's product keeps the library's share: part of its shorter time adds
    assert exposed[1] > max(p.compute_s[1], p.memory_s[1]) * 1.01
    assert p.product_overlap[1] == pytest.approx(0.1)


def test_a_linear_s_dot_product_kernel_reads_a_once_a_group(registry_of):
    """Its kernel of dot products streams all of A for each group of the
    weight's rows (``bench_narrow_n.py --tiers`` on the Zen 4 host: N of 8
    reads A from main memory at the rate N of 4 does, twice): at every
    tier A crosses once per group, and a linear bound by main
    memory takes the longer for it. The matmul's kernel is not so."""
    reg = _grouped(registry_of)
    shapes = [[8192, 2048, 4], [8192, 2048, 8], [8192, 2048, 12]]  # A of 64 MiB
    p = predict_batch(reg, "t", "linear", shapes, "fp32")
    a = 8192 * 2048 * 4
    assert p.bytes_per_tier is not None
    beyond = p.bytes_per_tier[:, -1]  # main memory: less the share the caches keep
    assert beyond[1] - beyond[0] == pytest.approx(a, rel=0.06)
    assert beyond[2] - beyond[1] == pytest.approx(beyond[1] - beyond[0], rel=0.01)
    assert p.memory_s[1] > 1.9 * p.memory_s[0]
    l1 = p.bytes_per_tier[:, 0]  # the L1 feeds the registers A once a group too (and B's
    assert l1[1] - l1[0] > 0.94 * a  # rows for each tile of A's rows: more than A again)
    mm = predict_batch(reg, "t", "matmul", shapes, "fp32")
    assert mm.bytes_per_tier[1, -1] == pytest.approx(mm.bytes_per_tier[0, -1], rel=0.03)
