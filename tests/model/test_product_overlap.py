"""A GEMM library's partial overlap of compute and memory (``product_overlap``)."""

from __future__ import annotations

import numpy as np
import pytest

from graphsval_core.datamodel.provenance import estimated
from graphsval_core.datamodel.target import SpecError
from graphsval_core.files.calibration import apply_constants, current_values
from graphsval_core.files.target_spec import spec_from_json, spec_to_json
from graphsval_core.model.predict import predict_batch
from graphsval_core.model.terms.latency import overlap_terms, product_overlap


def _outer(p) -> np.ndarray:
    """Each row's memory time beyond the innermost tier."""
    return np.asarray(p.time_per_tier_s)[:, 1:].max(axis=1)


# on the toy target: a product whose main-memory time is a quarter of its compute
# (1.4 ms and 5.1 ms), one that fits the L1, and a GEMV
SHAPES = [[32, 4096, 4096], [8, 16, 16], [1, 4096, 4096]]


def test_a_library_product_pays_the_unhidden_share_of_its_shorter_time(registry_of):
    plain = predict_batch(registry_of(), "t", "matmul", SHAPES, "fp32")
    half = registry_of(product_overlap={"fp32": estimated(0.5, "fitted")})
    p = predict_batch(half, "t", "matmul", SHAPES, "fp32")
    # compute and memory themselves do not move
    assert p.compute_s == pytest.approx(plain.compute_s)
    assert p.memory_s == pytest.approx(plain.memory_s)
    added = 0.5 * np.minimum(p.compute_s, _outer(p))
    assert p.latency_s == pytest.approx(plain.latency_s + added)
    assert added[0] > 0.1 * plain.latency_s[0]  # the balanced product pays a visible share
    # the terms still add up: exposed compute + exposed memory + hidden = compute + memory
    assert p.exposed_compute_s + p.exposed_memory_s + p.hidden_s == pytest.approx(
        p.compute_s + p.memory_s
    )


def test_the_innermost_tier_stays_hidden(registry_of):
    """The L1 feeds the micro-kernel in its own pipeline: a product whose data
    fit the L1 pays nothing more, whatever the overlap."""
    serial = registry_of(product_overlap={"fp32": estimated(0.01, "fitted")})
    small = [[8, 16, 16]]
    p = predict_batch(serial, "t", "matmul", small, "fp32")
    assert _outer(p)[0] == 0.0
    assert p.latency_s == pytest.approx(
        predict_batch(registry_of(), "t", "matmul", small, "fp32").latency_s
    )


def test_only_the_library_s_products_of_the_dtype_pay_it(registry_of, make_target):
    kw = {"product_overlap": {"fp32": estimated(0.2, "fitted")}}
    plain, serial = registry_of(), registry_of(**kw)
    # an elementwise op keeps the roofline
    add = [[1 << 22]]
    assert predict_batch(serial, "t", "vector_add", add, "fp32").latency_s == pytest.approx(
        predict_batch(plain, "t", "vector_add", add, "fp32").latency_s
    )
    # in one batch, a product too small for its library keeps the roofline beside one
    # the library runs
    small = {"library_min_macs": {"fp32": estimated(5e6, "framework")}}
    mixed = [[16, 512, 512], [32, 4096, 4096]]
    got = predict_batch(registry_of(**small, **kw), "t", "matmul", mixed, "fp32")
    roof = predict_batch(registry_of(**small), "t", "matmul", mixed, "fp32")
    assert min(got.compute_s[0], _outer(got)[0]) > 0  # it would pay, were it the library's
    assert got.latency_s[0] == pytest.approx(roof.latency_s[0])
    assert got.latency_s[1] > 1.1 * roof.latency_s[1]
    # a product too small for its library runs in the framework's kernel: roofline too
    tiny = {"library_min_macs": {"fp32": estimated(1e12, "framework")}}
    assert predict_batch(
        registry_of(**tiny, **kw), "t", "matmul", SHAPES, "fp32"
    ).latency_s == pytest.approx(
        predict_batch(registry_of(**tiny), "t", "matmul", SHAPES, "fp32").latency_s
    )


def test_the_row_overlap_lies_between_the_share_and_one():
    compute = np.array([1.0, 1.0, 2.0, 0.0])
    times = np.array([[5.0, 0.5], [0.1, 3.0], [0.0, 1.0], [1.0, 1.0]])  # L1, beyond
    memory = times.max(axis=1)
    got = product_overlap(compute, times, memory, 0.25)
    # row 0: L1-bound, beyond 0.5 -> 0.75 * 0.5 exposed of the shorter 1.0
    assert got == pytest.approx([1 - 0.375, 0.25, 0.25, 1.0])
    exposed = overlap_terms(compute, memory, got)
    assert exposed.hidden_s == pytest.approx(got * np.minimum(compute, memory))


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"fp32": estimated(1.5, "x")}, r"product_overlap\.fp32.*\(0, 1\]"),
        ({"fp32": estimated(0.0, "x")}, r"product_overlap\.fp32.*\(0, 1\], got 0"),
        ({"fp32": estimated(-1, "x")}, r"product_overlap\.fp32.*\(0, 1\], got -1"),
        ({"fp32": estimated("x", "x")}, r"product_overlap\.fp32.*must be a number"),
        ({"int4": estimated(0.5, "x")}, r"product_overlap\.int4.*no peak"),
        ({"fp32": 0.5}, r"product_overlap\.fp32.*provenance"),
    ],
)
def test_a_product_overlap_is_checked(make_target, value, message):
    with pytest.raises(SpecError, match=message):
        make_target("t", product_overlap=value)


def test_a_product_overlap_survives_a_file_and_a_calibration(make_target):
    spec = make_target("t", product_overlap={"fp32": estimated(1.0, "roofline until fitted")})
    again = spec_from_json(spec_to_json(spec))
    assert again.product_overlap == {"fp32": 1.0}
    assert again.provenance["product_overlap.fp32"].kind == "estimated"
    fitted = apply_constants(spec, {"product_overlap.fp32": 0.3}, "fit")
    assert fitted.product_overlap == {"fp32": 0.3}
    assert current_values(fitted)["product_overlap.fp32"] == 0.3
    # a calibration cannot give a dtype the spec gives none
    none = make_target("t")
    assert apply_constants(none, {"product_overlap.fp32": 0.3}, "fit").product_overlap == {}


def test_attribution_counts_the_unhidden_time_as_fixed(registry_of):
    """A prediction the measurement matches exactly implies the model's own
    rates: the unhidden share of the shorter time is not put on the rate
    that governs the longer."""
    from types import SimpleNamespace

    from graphsval_core.builtin.ops import MATMUL
    from graphsval_core.validate.cells import implied_rate
    from graphsval_core.validate.harness import _terms

    registry = registry_of(product_overlap={"fp32": estimated(0.3, "fitted")})
    spec = registry.target("t")
    p = predict_batch(registry, "t", "matmul", SHAPES, "fp32")
    terms = _terms(p.columns(), spec, "fp32", MATMUL, shapes=np.array(SHAPES))
    balanced = 0  # the compute-bound product whose memory is a quarter of it
    assert p.compute_s[balanced] > p.memory_s[balanced] and p.hidden_s[balanced] > 0
    one = slice(balanced, balanced + 1)
    records = SimpleNamespace(
        latency_measured_s=p.latency_s[one], terms=SimpleNamespace(fixed_s=terms.fixed_s[one])
    )
    implied = implied_rate(records, terms.achievable_ops_per_s[one], terms.compute_s[one])
    assert implied == pytest.approx(terms.achievable_ops_per_s[one])
    # the fixed time holds launch, first touch, packing and the unhidden share
    unhidden = p.exposed_compute_s + p.exposed_memory_s - np.maximum(p.compute_s, p.memory_s)
    assert unhidden[balanced] > 0
    assert terms.fixed_s == pytest.approx(p.launch_s + p.first_touch_s + p.pack_s + unhidden)


def test_an_overlap_needs_a_library_and_a_tier_beyond_the_innermost(make_target, make_tier):
    from graphsval_core.datamodel.provenance import datasheet
    from graphsval_core.datamodel.target import TargetSpec

    overlap = {"fp32": estimated(0.5, "x")}
    # a dtype no library runs (its products are the framework kernel's, timed on their own)
    kernel = {name: {"fp32": estimated(1e-9, "t")} for name in TargetSpec.REFERENCE}
    with pytest.raises(SpecError, match=r"product_overlap\.fp32.*no_gemm_library"):
        make_target(product_overlap=overlap, no_gemm_library=["fp32"], **kernel)
    one = [make_tier("dram", 16 * 1024**3, peak_bandwidth_bps=datasheet(5e10, "t"))]
    with pytest.raises(SpecError, match=r"product_overlap\.fp32.*one memory tier"):
        make_target(product_overlap=overlap, tiers=one)


def test_explain_names_the_share_and_the_time_it_leaves_exposed(registry_of):
    half = registry_of(product_overlap={"fp32": estimated(0.5, "fitted")})
    p = predict_batch(half, "t", "matmul", SHAPES, "fp32")
    added = 0.5 * np.minimum(p.compute_s, _outer(p))
    details = p.details(0)
    assert details["product_overlap"] == 0.5
    assert details["unhidden_s"] == pytest.approx(added[0])
    assert "not overlapped by the library" in p.sentence(0)
    # the roofline's rows say nothing of it
    roof = predict_batch(registry_of(), "t", "matmul", SHAPES, "fp32")
    assert "product_overlap" not in roof.details(0)
    assert "not overlapped" not in roof.sentence(0)
