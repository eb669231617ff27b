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
from graphsval_core.plugins.loader import build_registry


@pytest.fixture
def registry_of(make_target, make_plugin, fake_entry_points):
    fake_entry_points()

    def build(**kw):
        spec = make_target("t", launch_overhead_s=estimated(2e-6, "test"), **kw)
        return build_registry(extra_plugins=[("t", make_plugin("t", lambda: [spec]))])

    return build


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
        ({"fp32": estimated(0.0, "x")}, r"product_overlap\.fp32.*> 0"),
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
