"""A calibration times the framework's own product kernel from the rows that
run in it, and leaves a dtype's library constants alone where it has none."""

from __future__ import annotations

import numpy as np
import pytest
from attrs import evolve

from graphsval_core.calibrate.fit import fit_latency
from graphsval_core.calibrate.params import choose_params
from graphsval_core.datamodel.provenance import datasheet, estimated
from graphsval_core.files.baseline import BaselineRow
from graphsval_core.model.predict import predict_batch
from graphsval_core.plugins.loader import build_registry

#: the "silicon": the kernel's true times, away from the spec's starting ones
TRUE = {
    "reference_output_s.bf16": 7.5e-9,
    "reference_mac_s.bf16": 1.3e-9,
    "reference_dot_output_s.bf16": 31e-9,
    "reference_dot_mac_s.bf16": 0.21e-9,
    "page_walk_s": 8e-9,
}
PRODUCTS = {  # (op, dtype): M x K x N, the bf16 walks of several K, two beyond the TLB's reach
    ("matmul", "bf16"): ["64x1x300", "40x24x500", "16x200x300", "4x900x700", "3x9000x4100"],
    ("linear", "bf16"): ["64x1x300", "40x24x500", "16x200x300", "4x900x700", "3x1200x600"],
    ("matmul", "fp32"): ["8x8x8", "16x16x16", "256x256x256", "300x200x100"],
    ("vector_add", "bf16"): ["1000", "4000"],
}
MORE_WALKS = ["2x12000x3000"]


def _spec(make_target, **times: float):
    def own(name: str, value: float) -> dict:
        return {"bf16": estimated(times.get(f"{name}.bf16", value), "t")}

    return make_target(
        "toy",
        compute_units=datasheet(1, "t"),
        peak_ops_per_s={"fp32": datasheet(1e11, "t"), "bf16": datasheet(1e11, "t")},
        energy_per_op_j={"fp32": estimated(1e-12, "t"), "bf16": estimated(1e-12, "t")},
        dispatch_overhead_s={"fp32": estimated(3e-6, "t")},
        vector_ops_per_s={"bf16": estimated(4e9, "t")},
        no_gemm_library=("bf16",),
        reference_output_s=own("reference_output_s", 5e-9),
        reference_mac_s=own("reference_mac_s", 1e-9),
        reference_dot_output_s=own("reference_dot_output_s", 40e-9),
        reference_dot_mac_s=own("reference_dot_mac_s", 0.3e-9),
        tlb_reach_bytes=estimated(8 * 2**20, "t"),
        page_walk_s=estimated(times.get("page_walk_s", 5e-9), "t"),
    )


def _rows(registry, key: str) -> list[BaselineRow]:
    rows = []
    products = {**PRODUCTS, ("matmul", "bf16"): PRODUCTS[("matmul", "bf16")] + MORE_WALKS}
    for (op, dtype), shapes in products.items():
        dims = [tuple(int(d) for d in s.split("x")) for s in shapes]
        latency = predict_batch(registry, key, op, dims, dtype).latency_s
        rows += [
            BaselineRow(1, "toy", op, s, d, dtype, float(t), None, 1, "", "calibration")
            for s, d, t in zip(shapes, dims, latency, strict=True)
        ]
    return rows


@pytest.fixture
def fitted(make_target, make_plugin, fake_entry_points):
    fake_entry_points()
    model = _spec(make_target)
    silicon = evolve(_spec(make_target, **TRUE), key="silicon")
    registry = build_registry(
        extra_plugins=[("t", make_plugin("t", lambda: [model, silicon]))],
    )
    rows = _rows(registry, "silicon")
    return registry, model, rows


def test_the_kernel_s_times_are_chosen_and_a_library_s_constants_are_not(fitted):
    registry, model, rows = fitted
    names = {p.name for p in choose_params(registry, model, rows)}
    assert set(TRUE) <= names
    # bf16 has no library here (no dispatch of its own) and no row at its peak's share
    # (its products are the framework's, its adds run at vector_ops_per_s)
    assert "dispatch_overhead_s.bf16" not in names and "compute_fraction.bf16" not in names
    assert {"dispatch_overhead_s.fp32", "compute_fraction.fp32"} <= names


def test_a_fit_recovers_the_kernel_s_times(fitted):
    registry, model, rows = fitted
    fit = fit_latency(registry, model, rows)
    for name, want in TRUE.items():
        assert fit.values[name] == pytest.approx(want, rel=0.02), name
    assert np.max(np.abs(fit.residuals)) < 0.02


def test_one_k_alone_times_no_layout(fitted):
    registry, model, rows = fitted
    one_k = [
        BaselineRow(1, "toy", "linear", f"{m}x24x{n}", (m, 24, n), "bf16", 1e-3, None, 1, "", "")
        for m, n in ((64, 300), (40, 500), (16, 300), (8, 2000))
    ]
    same_k = [r for r in rows if r.op != "linear"] + one_k
    names = {p.name for p in choose_params(registry, model, same_k)}
    assert "reference_dot_output_s.bf16" not in names and "reference_dot_mac_s.bf16" not in names
    assert "reference_mac_s.bf16" in names


def test_a_calibration_says_which_kernel_times_it_left_at_the_spec_s(fitted):
    from graphsval_core.calibrate.diagnostics import reference_not_fitted
    from graphsval_core.calibrate.params import own_kernel_rows

    registry, model, rows = fitted
    assert reference_not_fitted(model, own_kernel_rows(registry, model, rows)) == []
    # two linear rows of one K and no walk beyond the TLB's reach
    few = [r for r in rows if r.op == "vector_add" or (r.op == "matmul" and r.dims[1] < 9000)]
    few += [r for r in rows if r.op == "linear" and r.dims[1] == 24]
    few += [evolve(few[-1], shape="80x24x100", dims=(80, 24, 100))]
    found = reference_not_fitted(model, own_kernel_rows(registry, model, few))
    text = [d.message for d in found]
    assert any(
        t.startswith(
            "reference_dot_output_s.bf16 and reference_dot_mac_s.bf16 are not fitted: "
            "2 bf16 dot products of 1 value of K"
        )
        for t in text
    ), text
    assert any(t.startswith("page_walk_s is not fitted: 0 column walks") for t in text), text
    names = {p.name for p in choose_params(registry, model, few)}
    assert "page_walk_s" not in names and "reference_dot_mac_s.bf16" not in names
