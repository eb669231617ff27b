"""The framework's own product kernel: a product no GEMM library runs, timed
per output and per multiply-add by B's layout, with the TLB misses of a
column walk that outgrows the TLB's reach."""

from __future__ import annotations

import numpy as np
import pytest

from graphsval_core.datamodel.provenance import datasheet, estimated
from graphsval_core.datamodel.target import PAGE_BYTES, SpecError
from graphsval_core.files.target_spec import (
    TargetFileError,
    read_spec,
    spec_from_json,
    spec_to_json,
    write_spec,
)
from graphsval_core.model.predict import predict_batch
from graphsval_core.model.terms.reference_kernel import page_crossings, tlb_misses, walk_span
from graphsval_core.plugins.loader import build_registry

OUT, MAC, DOT_OUT, DOT_MAC, WALK = 6e-9, 1e-9, 40e-9, 0.3e-9, 5e-9
REACH = 8 * 2**20


def _own(value: float) -> dict:
    return {"bf16": estimated(value, "test")}


def reference_fields(**over) -> dict:
    fields = {
        "peak_ops_per_s": {"fp32": datasheet(1e11, "t"), "bf16": datasheet(1e11, "t")},
        "energy_per_op_j": {"fp32": estimated(1e-12, "t"), "bf16": estimated(1e-12, "t")},
        "dispatch_overhead_s": {"fp32": estimated(3e-6, "t")},
        "no_gemm_library": ("bf16",),
        "reference_output_s": _own(OUT),
        "reference_mac_s": _own(MAC),
        "reference_dot_output_s": _own(DOT_OUT),
        "reference_dot_mac_s": _own(DOT_MAC),
        "tlb_reach_bytes": estimated(REACH, "test"),
        "page_walk_s": estimated(WALK, "test"),
    }
    fields.update(over)
    return fields


@pytest.fixture
def registry(make_target, make_plugin, fake_entry_points):
    fake_entry_points()
    spec = make_target("t", launch_overhead_s=estimated(2e-6, "test"), **reference_fields())
    return build_registry(extra_plugins=[("t", make_plugin("t", lambda: [spec]))])


def test_a_column_walk_crosses_a_page_per_element_once_a_row_of_b_fills_one():
    gemm = np.array([[1.0, 100, 1024], [1.0, 100, 2048], [1.0, 100, 4096]])
    # bf16: rows of 2, 4 and 8 KiB
    assert page_crossings(gemm, 2.0).tolist() == [0.5, 1.0, 1.0]
    assert walk_span(gemm, 2.0).tolist() == [100 * 2048, 100 * PAGE_BYTES, 100 * PAGE_BYTES]


def test_tlb_misses_only_beyond_the_reach(make_target):
    spec = make_target("t", **reference_fields())
    rows_in_reach = REACH // PAGE_BYTES
    gemm = np.array(
        [[4.0, rows_in_reach, 4096], [4.0, rows_in_reach + 1, 4096], [4.0, 2 * rows_in_reach, 1024]]
    )
    # at the reach: no miss; one row beyond: every element misses; half-page rows
    # span the reach at twice the rows and miss on every second element beyond it
    assert tlb_misses(spec, gemm, 2.0).tolist() == [0.0, 1.0, 0.0]
    gemm[2, 1] += 2
    assert tlb_misses(spec, gemm, 2.0).tolist()[2] == 0.5
    plain = make_target("p", **reference_fields(tlb_reach_bytes=None, page_walk_s=None))
    assert tlb_misses(plain, gemm, 2.0).tolist() == [0.0, 0.0, 0.0]


def test_a_bf16_product_with_no_library_runs_in_the_framework_s_kernel(registry):
    shapes = [[4, 64, 96], [2, 8192, 4096]]  # a small one, and a walk beyond the reach
    mm = predict_batch(registry, "t", "matmul", shapes, "bf16")
    m, k, n = np.array(shapes, dtype=float).T
    walk = np.array([0.0, 1.0])  # 8192 rows of 8 KiB: 32 MiB of pages, beyond 8 MiB
    own = m * n * OUT + m * n * k * (MAC + walk * WALK)
    assert mm.compute_s.tolist() == pytest.approx(own.tolist())
    assert mm.reference_kernel.tolist() == [True, True]
    # no library: the framework's launch, no packing
    assert mm.launch_s.tolist() == pytest.approx([2e-6, 2e-6])
    assert mm.pack_s.tolist() == [0.0, 0.0]
    assert mm.regime[1] == "alu_bound"
    sentence = mm.sentence(0)
    assert "framework's own product kernel (bf16 has no GEMM library here" in sentence
    assert "output tile" not in sentence  # it forms one output at a time
    # linear's weight is stored N x K: each output a contiguous dot, no column walk
    lin = predict_batch(registry, "t", "linear", shapes, "bf16")
    assert lin.compute_s.tolist() == pytest.approx((m * n * DOT_OUT + m * n * k * DOT_MAC).tolist())
    # fp32 keeps its library: peak-rate compute and the library's dispatch
    fp32 = predict_batch(registry, "t", "matmul", shapes, "fp32")
    assert fp32.reference_kernel.tolist() == [False, False]
    assert fp32.launch_s.tolist() == pytest.approx([3e-6, 3e-6])
    assert fp32.compute_s[1] < mm.compute_s[1] / 10


def test_a_library_s_small_products_take_the_kernel_s_times_where_given(
    make_target, make_plugin, fake_entry_points
):
    fake_entry_points()
    spec = make_target(
        "t",
        launch_overhead_s=estimated(2e-6, "test"),
        **reference_fields(
            no_gemm_library=(),
            dispatch_overhead_s={"bf16": estimated(20e-6, "t")},
            library_min_macs={"bf16": datasheet(4096, "t")},
        ),
    )
    registry = build_registry(extra_plugins=[("t", make_plugin("t", lambda: [spec]))])
    mm = predict_batch(registry, "t", "matmul", [[16, 16, 16], [16, 16, 17]], "bf16")
    assert mm.reference_kernel.tolist() == [True, False]
    assert mm.compute_s[0] == pytest.approx(256 * OUT + 4096 * MAC)
    assert mm.launch_s.tolist() == pytest.approx([2e-6, 20e-6])
    # the sentence says why the library leaves it, and the library's product keeps its tile
    assert "(at most 4096 multiply-adds, too small for the bf16 GEMM library" in mm.sentence(0)
    assert "output tile" not in mm.sentence(0) and "output tile" in mm.sentence(1)


def test_the_kernel_s_times_come_together_and_name_known_dtypes(make_target):
    with pytest.raises(SpecError, match="reference_dot_mac_s"):
        make_target("t", **reference_fields(reference_dot_mac_s={}))
    with pytest.raises(SpecError, match="tlb_reach_bytes and page_walk_s together"):
        make_target("t", **reference_fields(page_walk_s=None))
    with pytest.raises(SpecError, match=r"no_gemm_library\[0\]'?: dtype .int8. has no peak"):
        make_target("t", **reference_fields(no_gemm_library=("int8",)))
    with pytest.raises(SpecError, match="listed twice"):
        make_target("t", **reference_fields(no_gemm_library=("bf16", "bf16")))
    with pytest.raises(SpecError, match="reference_mac_s.bf16"):
        make_target("t", **reference_fields(reference_mac_s=_own(0.0)))


def test_the_kernel_s_fields_survive_a_spec_file(make_target, tmp_path):
    spec = make_target("t", **reference_fields())
    assert spec_from_json(spec_to_json(spec)) == spec
    path = tmp_path / "t.target.json"
    write_spec(spec, path)
    back = read_spec(path)
    assert back == spec and back.no_gemm_library == ("bf16",)
    assert back.provenance["page_walk_s"].source == "test"
    # a file without them reads as before: no kernel times, every dtype its library
    plain = make_target("p")
    write_spec(plain, path)
    assert read_spec(path).no_gemm_library == () and not read_spec(path).reference_mac_s


def test_a_bad_no_gemm_library_in_a_file_is_one_clear_line(make_target, tmp_path):
    import json

    path = tmp_path / "t.target.json"
    write_spec(make_target("t", **reference_fields()), path)
    data = json.loads(path.read_text())
    data["no_gemm_library"] = "bf16"
    path.write_text(json.dumps(data))
    with pytest.raises(TargetFileError, match="no_gemm_library: expected a list of dtype names"):
        read_spec(path)
    data["no_gemm_library"] = ["fp8"]
    path.write_text(json.dumps(data))
    with pytest.raises(
        TargetFileError,
        match=r"t.target.json: field 'no_gemm_library\[0\]': dtype .fp8. has no peak",
    ):
        read_spec(path)


def test_the_sentence_tells_the_tlb_misses_of_a_walk(registry):
    mm = predict_batch(registry, "t", "matmul", [[2, 8192, 4096], [4, 64, 96]], "bf16")
    walk = 2 * 8192 * 4096 * WALK
    assert mm.tlb_miss_s.tolist() == pytest.approx([walk, 0.0])
    assert "TLB misses of its walk down B" in mm.sentence(0)
    assert "TLB" not in mm.sentence(1)


def test_a_tlb_maps_whole_pages_and_times_only_the_kernel(make_target):
    with pytest.raises(SpecError, match="less than one 4096 B page"):
        make_target("t", **reference_fields(tlb_reach_bytes=estimated(63, "t")))
    none = {name: {} for name in ("reference_output_s", "reference_mac_s")}
    none |= {"reference_dot_output_s": {}, "reference_dot_mac_s": {}}
    with pytest.raises(SpecError, match="times only the framework's own product kernel"):
        make_target("t", **reference_fields(**none))


def test_the_kernel_is_no_faster_than_the_peak(make_target):
    # 1e11 ops/s over 4 cores: a multiply-add (2 ops) takes at least 80 ps on one
    with pytest.raises(
        SpecError,
        match=r"reference_dot_mac_s.bf16'?: 1e-11 s a multiply-add is faster than the bf16 peak",
    ):
        make_target("t", **reference_fields(reference_dot_mac_s=_own(1e-11)))
    assert make_target("t", **reference_fields(reference_mac_s=_own(8e-11))).reference_mac_s


def test_a_non_string_in_no_gemm_library_is_named(make_target, tmp_path):
    import json

    path = tmp_path / "t.target.json"
    write_spec(make_target("t", **reference_fields()), path)
    data = json.loads(path.read_text())
    data["no_gemm_library"] = ["bf16", 3]
    path.write_text(json.dumps(data))
    with pytest.raises(
        TargetFileError, match=r"no_gemm_library\[1\]: expected a dtype name, got a number"
    ):
        read_spec(path)


def test_attribution_names_the_own_kernel_only_for_its_products(registry):
    from graphsval_core.validate.harness import _terms

    target = registry.target("t")
    shapes = np.array([[4, 64, 96], [2, 8192, 4096]])
    mm = predict_batch(registry, "t", "matmul", shapes, "bf16")
    terms = _terms(mm.columns(), target, "bf16", registry.op("matmul"), shapes=shapes)
    assert terms.vector_rate.tolist() == [2.0, 2.0]  # the own kernel's: its ops over its time
    assert terms.achievable_ops_per_s.tolist() == pytest.approx((mm.flops / mm.compute_s).tolist())
    adds = np.array([[1000], [4000]])
    add = predict_batch(registry, "t", "vector_add", adds, "bf16")
    terms = _terms(add.columns(), target, "bf16", registry.op("vector_add"), shapes=adds)
    assert terms.vector_rate.tolist() == [0.0, 0.0]  # no vector rate given: the peak's share
    fp32 = predict_batch(registry, "t", "matmul", shapes, "fp32")
    terms = _terms(fp32.columns(), target, "fp32", registry.op("matmul"), shapes=shapes)
    assert terms.vector_rate.tolist() == [0.0, 0.0]
