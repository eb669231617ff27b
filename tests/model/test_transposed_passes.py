"""A GEMM library's unpacked kernel over a transposed B (a linear's weight:
``TargetSpec.transposed_pack_min_rows`` and ``transposed_pass_rows``): below
its own packing threshold it packs nothing and reads B once per pass of a
few rows of A (MKL's fp32 linear on the Intel host: 3 rows a pass)."""

from __future__ import annotations

import pytest

from graphsval_core.datamodel.provenance import estimated
from graphsval_core.datamodel.target import SpecError
from graphsval_core.files.target_spec import spec_from_json, spec_to_json
from graphsval_core.model.predict import predict_batch

#: Beyond the toy target's 1 MiB L2: a 64 MiB weight in main memory.
BIG = 4096


def _registry(registry_of, passes: bool = True, **kw):
    """The toy target with MKL-like packing (from 3 rows of A) and, with
    ``passes``, a transposed B unpacked below 12 rows, 3 rows a pass."""
    own = (
        {
            "transposed_pack_min_rows": {"fp32": estimated(12, "t")},
            "transposed_pass_rows": {"fp32": estimated(3, "t")},
        }
        if passes
        else {}
    )
    return registry_of(
        pack_bps=estimated(20e9, "t"),
        pack_min_rows=estimated(3, "t"),
        **own,
        **kw,
    )


ROWS = [2, 3, 4, 6, 7, 10, 11, 12]


def test_a_transposed_b_is_read_once_a_pass_of_rows_below_its_threshold(registry_of):
    shapes = [[m, BIG, BIG] for m in ROWS]
    own = predict_batch(_registry(registry_of), "t", "linear", shapes, "fp32")
    dram = own.bytes_per_tier[:, -1]
    # main memory sees the weight (less what the caches keep) once a pass of 3 rows:
    # ceil(M / 3) times what 2 rows, one pass, see
    passes = [-(-m // 3) for m in ROWS[:-1]]
    for m, got, want in zip(ROWS, dram, passes, strict=False):
        assert got == pytest.approx(want * dram[0], rel=0.02), m
    # 12 rows pack it: one read of B by the kernel, and the packing's own time
    assert dram[-1] < 1.1 * dram[0]  # (not the 4 passes 12 rows would take)
    assert own.b_unpacked.tolist() == [True] * 7 + [False]
    assert own.pack_s[:-1].tolist() == [0.0] * 7 and own.pack_s[-1] > 0
    assert own.memory_s[2] == pytest.approx(2 * own.memory_s[0], rel=0.02)


def test_without_the_fields_a_linear_packs_from_pack_min_rows(registry_of):
    shapes = [[m, BIG, BIG] for m in ROWS]
    before = predict_batch(_registry(registry_of, False), "t", "linear", shapes, "fp32")
    assert before.b_unpacked.tolist() == [True] + [False] * 7
    assert all(p > 0 for p in before.pack_s[1:])
    assert before.bytes_per_tier[2, -1] < 1.02 * before.bytes_per_tier[0, -1]  # 4 rows: B once


@pytest.mark.parametrize("m", [2, 4, 7, 12])
def test_a_matmul_an_n_contiguous_b_keeps_pack_min_rows(registry_of, m):
    shape = [[m, BIG, BIG]]
    own = predict_batch(_registry(registry_of), "t", "matmul", shape, "fp32")
    before = predict_batch(_registry(registry_of, False), "t", "matmul", shape, "fp32")
    assert own.latency_s[0] == pytest.approx(before.latency_s[0])
    assert own.b_unpacked.tolist() == before.b_unpacked.tolist() == [m < 3]


def test_the_fields_round_trip_through_a_target_file(registry_of):
    spec = _registry(registry_of).target("t")
    again = spec_from_json(spec_to_json(spec))
    assert dict(again.transposed_pack_min_rows) == {"fp32": 12.0}
    assert dict(again.transposed_pass_rows) == {"fp32": 3.0}
    assert again.provenance["transposed_pass_rows.fp32"].kind == "estimated"


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        ({"transposed_pack_min_rows": 1}, "from 2 to 1,099,511,627,776 (a shape's largest"),
        ({"transposed_pack_min_rows": 7.5}, "whole number of rows of A from 2 to"),
        ({"transposed_pack_min_rows": 1e300}, "got 1e+300"),
        ({"transposed_pass_rows": 3}, "has no transposed_pack_min_rows"),
        (
            {"transposed_pack_min_rows": 12, "transposed_pass_rows": 12},
            "from 1 to below transposed_pack_min_rows.fp32 (12), got 12",
        ),
        (
            {"transposed_pack_min_rows": 12, "transposed_pass_rows": 0.5},
            "from 1 to below transposed_pack_min_rows.fp32 (12), got 0.5",
        ),
        (
            {"transposed_pack_min_rows": 12, "transposed_pass_rows": 3, "gemv_fraction": 0.5},
            "has a gemv_fraction",
        ),
    ],
)
def test_a_bad_transposed_field_is_refused_with_its_name(registry_of, fields, words):
    kw = {name: {"fp32": estimated(v, "t")} for name, v in fields.items()}
    with pytest.raises(SpecError, match="transposed_") as err:
        registry_of(pack_bps=estimated(20e9, "t"), pack_min_rows=estimated(3, "t"), **kw)
    assert words in str(err.value)


def test_a_threshold_needs_a_library_that_packs(registry_of):
    with pytest.raises(SpecError, match="has no pack_bps"):
        registry_of(transposed_pack_min_rows={"fp32": estimated(12, "t")})


def test_a_threshold_below_pack_min_rows_packs_a_transposed_b_from_it(registry_of):
    # a library may pack a linear's weight from fewer rows than a matmul's B: 2 rows pack
    reg = _registry(registry_of, False, transposed_pack_min_rows={"fp32": estimated(2, "t")})
    shapes = [[1, BIG, BIG], [2, BIG, BIG]]
    linear = predict_batch(reg, "t", "linear", shapes, "fp32")
    matmul = predict_batch(reg, "t", "matmul", shapes, "fp32")
    assert linear.b_unpacked.tolist() == [True, False] and linear.pack_s[1] > 0
    assert matmul.b_unpacked.tolist() == [True, True] and matmul.pack_s[1] == 0


def test_explain_the_details_and_targets_name_the_passes(registry_of):
    from graphsval_core.cli.targets_cmd import _detail_rows

    reg = _registry(registry_of)
    p = predict_batch(reg, "t", "linear", [[7, BIG, BIG], [2, BIG, BIG]], "fp32")
    assert "B streams as it lies, once per 3 rows of A (3 passes);" in p.sentence(0)
    # the threshold that leaves B unpacked is the linear's own, not pack_min_rows' 3
    assert "A too short to pack it (the library packs from 12 rows of A):" in p.sentence(0)
    matmul = predict_batch(reg, "t", "matmul", [[2, BIG, BIG]], "fp32")
    assert "A too short to pack it (the library packs from 3 rows of A):" in matmul.sentence(0)
    assert p.details(0)["b_passes"] == 3
    # one pass is as any unpacked product reads B: no clause, no key
    assert "B streams as it lies;" in p.sentence(1) and "passes" not in p.sentence(1)
    assert "b_passes" not in p.details(1)
    rows = {r[0]: r[1] for r in _detail_rows(reg, reg.target("t"))}
    assert (
        rows["transposed B fp32"]
        == "a linear's weight unpacked below 12 rows of A (packed from there)"
    )
    assert rows["transposed B fp32, passes"] == "read once per 3 rows of A below it"


def test_a_transposed_b_is_read_in_place_only_from_its_own_threshold(registry_of):
    # reading B in place replaces packing it: a linear the library runs unpacked does neither
    in_place = {"in_place_max_rows": {"fp32": estimated(64, "t")}}
    reg = _registry(registry_of, **in_place)
    p = predict_batch(reg, "t", "linear", [[4, BIG, BIG], [12, BIG, BIG]], "fp32")
    assert p.b_in_place.tolist() == [False, True]
    assert p.b_unpacked.tolist() == [True, False]
    with pytest.raises(SpecError, match="in_place_max_rows.fp32") as err:
        _registry(registry_of, in_place_max_rows={"fp32": estimated(8, "t")})
    assert "from transposed_pack_min_rows.fp32 (12) to 1,099,511,627,776" in str(err.value)


def test_a_library_packing_from_one_row_has_no_unpacked_kernel(registry_of):
    # oneDNN's bf16 and int8 pack B from one row of A: no threshold of their own
    with pytest.raises(SpecError, match="transposed_pack_min_rows.fp32") as err:
        registry_of(
            pack_bps=estimated(20e9, "t"),
            pack_min_rows=estimated(1, "t"),
            transposed_pack_min_rows={"fp32": estimated(12, "t")},
        )
    assert "packs B from 1 row of A (pack_min_rows.fp32)" in str(err.value)


def test_one_row_a_pass_reads_as_one_row(registry_of):
    reg = _registry(
        registry_of,
        False,
        transposed_pack_min_rows={"fp32": estimated(12, "t")},
        transposed_pass_rows={"fp32": estimated(1, "t")},
    )
    p = predict_batch(reg, "t", "linear", [[4, BIG, BIG]], "fp32")
    assert "once per row of A (4 passes);" in p.sentence(0)


@pytest.mark.parametrize("big", [64, 256, BIG])
def test_every_tier_sees_b_once_a_pass_the_innermost_included(registry_of, big):
    # a weight in the L1, in the L2 or in main memory: the unpacked kernel loads it into
    # the registers once a pass, so the innermost tier serves it ceil(M / 3) times too and
    # never fewer bytes than a tier behind it (it used to see it once: 7 rows took 3 passes
    # from the L2 and main memory but one through the L1)
    shapes = [[2, big, big], [7, big, big]]
    p = predict_batch(_registry(registry_of), "t", "linear", shapes, "fp32")
    assert p.b_unpacked.tolist() == [True, True]
    b = big * big * 4
    assert p.bytes_per_tier[0, 0] >= b and p.bytes_per_tier[1, 0] >= 3 * b
    assert p.bytes_per_tier[1, 0] == pytest.approx(3 * p.bytes_per_tier[0, 0], rel=0.05)
    for row in range(2):
        assert p.bytes_per_tier[row, 0] >= p.bytes_per_tier[row, 1:].max()


def test_the_passes_leave_the_compute_to_the_register_tile(registry_of):
    # the passes say how often B crosses each tier, not how many rows the micro-kernel
    # holds: a linear of 4 or 7 rows computes 4 or 7 rows, not 6 or 9 (two or three whole
    # passes), on a target whose register tile is the square default (no
    # accumulator_lanes, as the Intel host's fp32)
    spec = _registry(registry_of).target("t")
    assert not spec.accumulator_lanes
    shapes = [[m, 512, 256] for m in (2, 4, 7, 10)]
    own = predict_batch(_registry(registry_of), "t", "linear", shapes, "fp32")
    before = predict_batch(_registry(registry_of, False), "t", "linear", shapes, "fp32")
    assert own.b_unpacked.tolist() == [True] * 4
    assert own.compute_s.tolist() == pytest.approx(before.compute_s.tolist())
    assert own.utilisation.tolist() == pytest.approx(before.utilisation.tolist())
