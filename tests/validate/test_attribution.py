"""Drift attribution that reads right: launch and alu cells of one dtype each,
and a failing cell whose median error is centred named as scatter, not drift."""

from __future__ import annotations

import numpy as np
import pytest
from attrs import evolve

from graphsval_core.model.reference import predict
from graphsval_core.plugins.loader import build_registry
from graphsval_core.validate.attribution import (
    CENTRED_FRACTION,
    Drift,
    attribute,
    build_cells,
    implied_declared,
)
from graphsval_core.validate.harness import Validation, _terms
from graphsval_core.validate.records import Records, Terms
from graphsval_core.validate.report import heatmap_rows, render
from graphsval_core.validate.summary import Header, build_summary

BANDS = {"launch_bound": 0.30, "alu_bound": 0.10, "l2_bound": 0.20}


def _records(rows: list[dict]) -> Records:
    """Checked records of target ``cpu``, op ``matmul``, from ``rows`` of
    ``dtype``, ``regime``, ``measured`` and ``predicted`` (seconds) and the
    launch constants the model used (``launch`` its launch overhead, ``dispatch``
    the dtype's own dispatch overhead where it has one, ``accumulate`` its
    accumulating call where the row pays that instead, ``gemv`` a GEMV's own
    team cost where it pays one)."""
    n = len(rows)
    measured = np.array([r["measured"] for r in rows])
    predicted = np.array([r["predicted"] for r in rows])
    regime = [r["regime"] for r in rows]
    error = (predicted - measured) / measured
    band = np.array([BANDS[r] for r in regime])
    constant = np.array(
        [r.get("gemv", r.get("accumulate", r.get("dispatch", r.get("launch", 1e-6)))) for r in rows]
    )
    launch = np.where([g == "launch_bound" for g in regime], predicted, constant)
    busy = np.where([g == "launch_bound" for g in regime], 0.0, predicted - launch)
    terms = evolve(
        Terms.empty(n),
        launch_s=launch,
        fixed_s=launch,
        dispatch_s=np.array([r.get("dispatch", np.nan) for r in rows]),
        accumulating_call_s=np.array([r.get("accumulate", np.nan) for r in rows]),
        launch_overhead_s=np.array([r.get("launch", 1e-6) for r in rows]),
        gemv_team_s=np.array([r.get("gemv", np.nan) for r in rows]),
        compute_s=busy,
        memory_s=busy,
        tier_bandwidth_bps=np.full(n, 1e11),
        achievable_ops_per_s=np.full(n, 1e11),
    )
    ok = np.abs(error) <= band
    return Records.build(
        n,
        terms=terms,
        hardware="cpu",
        op="matmul",
        shape=[f"{i + 1}x1x1" for i in range(n)],
        dtype=[r["dtype"] for r in rows],
        status="checked",
        regime_predicted=regime,
        regime_measured=regime,
        latency_measured_s=measured,
        latency_predicted_s=predicted,
        latency_error=error,
        energy_predicted_j=1e-6,
        tolerance_latency=band,
        tolerance_energy=band,
        pass_regime=True,
        pass_latency=ok.tolist(),
        passed=ok.tolist(),
        file="cpu_matmul.validation.csv",
        line=list(range(2, n + 2)),
    )


def _launch_rows() -> list[dict]:
    """fp32 calls of ~1.3 us under a 0.8 us launch overhead, bf16 calls of ~20 us
    under a 33.4 us bf16 dispatch overhead: the model under-predicts the first
    and over-predicts the second."""
    fp32 = [
        {"dtype": "fp32", "regime": "launch_bound", "measured": m, "predicted": 0.8e-6}
        for m in (1.25e-6, 1.3e-6, 1.35e-6)
    ]
    for row in fp32:
        row["launch"] = 0.8e-6
    bf16 = [
        {
            "dtype": "bf16",
            "regime": "launch_bound",
            "measured": m,
            "predicted": 33.4e-6,
            "dispatch": 33.4e-6,
            "launch": 0.8e-6,
        }
        for m in (19e-6, 20e-6, 21e-6)
    ]
    return fp32 + bf16


def test_launch_bound_rows_of_two_dtypes_make_two_cells_each_with_its_own_sign():
    cells = build_cells(_records(_launch_rows()))
    launch = {key: cell for key, cell in cells.items() if "launch_bound" in key}
    assert len(launch) == 2  # pooled, the two read as one 82%-drop of one constant
    by_dtype = {cell.dtype: cell for cell in launch.values()}
    assert set(by_dtype) == {"fp32", "bf16"}
    assert {cell.label for cell in launch.values()} == {
        "launch_bound (fp32)",
        "launch_bound (bf16)",
    }

    (fp32,) = attribute(by_dtype["fp32"])
    assert fp32.constant == "launch overhead"  # no fp32 dispatch path of its own
    assert fp32.model == pytest.approx(0.8e-6)
    assert fp32.implied == pytest.approx(1.3e-6)
    assert fp32.median_error < 0 and fp32.change > 0  # under-predicts: the constant is larger
    assert "under-predicts latency" in fp32.text()

    (bf16,) = attribute(by_dtype["bf16"])
    assert bf16.constant == "dispatch overhead bf16"  # the dtype's own constant
    assert bf16.model == pytest.approx(33.4e-6)
    assert bf16.implied == pytest.approx(20e-6)
    assert bf16.median_error > 0 and bf16.change < 0  # over-predicts: the constant is smaller
    assert "over-predicts latency" in bf16.text()


def test_a_launch_cell_with_products_too_small_for_the_library_judges_each_constant():
    """Three bf16 calls through oneDNN (a 33.4 us dispatch, ~20 us measured) and
    two too small for it, run by the framework at its 0.8 us launch (~1 us
    measured): the dispatch is judged over the three, not pulled to 1 us, and
    the launch overhead over the two."""
    small = [
        {"dtype": "bf16", "regime": "launch_bound", "measured": m, "predicted": 0.8e-6}
        for m in (1.0e-6, 1.1e-6)
    ]
    for row in small:
        row["launch"] = 0.8e-6
    bf16 = [r for r in _launch_rows() if r["dtype"] == "bf16"]
    (cell,) = [c for c in build_cells(_records(bf16 + small)).values() if c.dtype == "bf16"]
    dispatch, launch = attribute(cell)
    assert dispatch.constant == "dispatch overhead bf16" and dispatch.shapes == 3
    assert dispatch.model == pytest.approx(33.4e-6) and dispatch.implied == pytest.approx(20e-6)
    # named for the calls it is: the cell's other line is the library's dispatch
    assert launch.constant == "launch overhead (products too small for the bf16 library)"
    assert launch.shapes == 2
    assert launch.model == pytest.approx(0.8e-6) and launch.implied == pytest.approx(1.05e-6)
    # each tells its own calls' errors: the library's over-predicted, the small ones under
    assert dispatch.median_error > 0 and launch.median_error < 0
    assert dispatch.rows == 3 and launch.rows == 2


def test_alu_bound_cells_are_split_by_dtype_and_tier_cells_pool_them():
    rows = [
        {"dtype": d, "regime": g, "measured": 1e-3, "predicted": p}
        for d, p in (("fp32", 1.2e-3), ("bf16", 0.8e-3))
        for g in ("alu_bound", "l2_bound")
    ]
    keys = set(build_cells(_records(rows)))
    assert keys == {
        ("cpu", "matmul", "alu_bound", "fp32"),
        ("cpu", "matmul", "alu_bound", "bf16"),
        ("cpu", "matmul", "l2_bound", None),  # one bandwidth for every dtype
    }


def _report(records: Records):
    validation = Validation(records, "reference")
    header = Header(graphsval_version="test", plugins=[], baselines=[], tolerances={})
    summary = build_summary(validation, header)
    return summary, render(summary, validation)


def test_the_report_labels_a_launch_cell_by_its_dtype_in_the_heatmap_and_the_attribution():
    rows = _launch_rows() + [
        {"dtype": "fp32", "regime": "l2_bound", "measured": 1e-3, "predicted": 1e-3}
    ]
    summary, text = _report(_records(rows))
    assert "cpu matmul launch_bound (bf16) [FAIL L3 /3]: dispatch overhead bf16: model 33.4 us" in (
        text
    )
    assert "cpu matmul launch_bound (fp32) [FAIL L3 /3]: launch overhead: model 800 ns" in text
    (target,) = summary.targets
    assert target.dtypes == ("fp32", "bf16")
    assert dict(target.cells) == {
        "launch_bound (fp32)": "FAIL L3 /3",
        "launch_bound (bf16)": "FAIL L3 /3",
        "l2_bound": "OK 1/1",
    }
    assert {(d.dtype, d.regime) for d in summary.drift} == {
        ("fp32", "launch_bound"),
        ("bf16", "launch_bound"),
    }
    header, table = heatmap_rows(summary)
    assert header == ["target / op", "dtype", "launch", "l2"]
    assert table == [
        ["cpu / matmul", "fp32", "FAIL L3 /3", ""],
        ["cpu / matmul", "bf16", "FAIL L3 /3", ""],
        ["cpu / matmul", "all", "", "OK 1/1"],  # the pooled cells on their own row
    ]


def _l2_cell(errors: list[float]):
    rows = [
        {"dtype": "fp32", "regime": "l2_bound", "measured": 1e-3, "predicted": 1e-3 * (1 + e)}
        for e in errors
    ]
    (cell,) = build_cells(_records(rows)).values()
    return cell


def test_a_failing_cell_centred_on_zero_gives_the_spread_not_a_moved_constant():
    cell = _l2_cell([0.30, -0.30, 0.30, -0.30, 0.0])
    assert cell.text() == "FAIL L4 /5"
    (drift,) = attribute(cell)
    text = drift.text()
    assert "imply" not in text and "(+0%)" not in text  # no constant that "moved 0%"
    assert text.startswith(
        "L2 bandwidth (model 100 GB/s) holds on average: median latency error +0%"
    )
    assert "centred (within a quarter of the 20% band)" in text
    assert "p10..p90 -30%..+30%" in text
    assert "2 over- and 2 under-predicted beyond the band, of 5" in text
    assert "a missing term, not a drifted constant" in text
    assert drift.centred and drift.median_error == pytest.approx(0.0)


def test_a_failing_cell_off_centre_still_names_the_moved_constant():
    drift = attribute(_l2_cell([0.30, 0.25, 0.35]))[0]
    assert "L2 bandwidth: model 100 GB/s, measurements imply" in drift.text()
    assert "over-predicts latency by 30% (median)" in drift.text()
    assert not drift.centred


def test_a_pooled_tier_cell_gives_each_dtypes_implied_change_beside_the_tiers():
    # fp32's rows are 30% too slow in the model, bf16's right: the tier's one figure
    # would blame the tier; the dtypes show that fp32's share of it moved
    rows = [
        {"dtype": d, "regime": "l2_bound", "measured": 1e-3, "predicted": 1e-3 * (1 + e)}
        # fp32's median +30% (its mean would be +40%)
        for d, e in (("fp32", 0.2), ("fp32", 0.3), ("fp32", 0.7), ("bf16", 0.0), ("bf16", 0.0))
    ]
    (cell,) = build_cells(_records(rows)).values()
    (drift,) = attribute(cell)
    assert [(d, n) for d, _, n in drift.by_dtype] == [("fp32", 3), ("bf16", 2)]
    assert [v for _, v, _ in drift.by_dtype] == pytest.approx([1.3e11, 1e11], rel=1e-3)
    assert "measurements imply 120 GB/s (+20%; by dtype fp32 +30%, bf16 +0%)" in drift.text()
    summary, text = _report(_records(rows))
    (entry,) = summary.drift
    assert entry.by_dtype["fp32"]["shapes"] == 3
    assert entry.by_dtype["bf16"]["implied"] == pytest.approx(1e11, rel=1e-3)
    assert "by dtype fp32 +30%, bf16 +0%" in " ".join(text.split())
    # centred: the sentence says the tier holds, and what each dtype implies
    mixed = [dict(r, predicted=1e-3 * (0.7 if r["dtype"] == "bf16" else 1.3)) for r in rows]
    mixed += [
        {"dtype": d, "regime": "l2_bound", "measured": 1e-3, "predicted": 1e-3}
        for d in ("bf16", "bf16")
    ]  # errors -30%, -30%, 0, 0, +30% x3: median 0
    (cell,) = build_cells(_records(mixed)).values()
    (drift,) = attribute(cell)
    assert drift.centred
    assert "holds on average (by dtype the rows imply fp32 +30%, bf16 -" in drift.text()
    # a tier that holds while the cell is off centre: the dtypes still show
    still = Drift(
        "L2 bandwidth",
        "B/s",
        1e11,
        1e11,
        4,
        0.12,
        band=0.2,
        by_dtype=(("fp32", 1.3e11, 2), ("bf16", 0.7e11, 2)),
    )
    assert not still.centred and still.holds
    assert "(+0.0%; by dtype fp32 +30%, bf16 -30%)" in still.text()
    # one dtype: nothing to split
    (cell,) = build_cells(_records(rows[:3])).values()
    (drift,) = attribute(cell)
    assert len(drift.by_dtype) == 1 and "by dtype" not in drift.text()


@pytest.mark.parametrize(("median", "centred"), [(0.049, True), (-0.049, True), (0.051, False)])
def test_centred_means_within_a_quarter_of_the_band(median, centred):
    drift = Drift("L2 bandwidth", "B/s", 1e11, 1e11, 3, median, band=0.20, rows=3, over=1)
    assert CENTRED_FRACTION == 0.25
    assert drift.centred is centred
    assert ("holds on average" in drift.text()) is centred


def test_an_off_centre_cell_whose_constant_did_not_move_blames_another_term():
    still = Drift("static power", "W", 79.2, 79.2 * 0.999, 14, -0.10, "energy", band=0.15)
    assert not still.centred and still.holds
    text = still.text()
    assert "static power (model 79.2 W) holds" in text and "another term" in text
    assert "under-predicts energy by 10%" in text
    moved = Drift("static power", "W", 79.2, 60.0, 14, -0.10, "energy", band=0.15)
    assert not moved.holds and "measurements imply" in moved.text()
    assert "holds" not in moved.text()


def test_a_constant_no_shape_implies_says_so():
    """A predictor whose latencies overflow (1e300 s, finite and positive but
    times a constant not): no shape implies a value, said in words, not
    "imply nan B/s (+nan%) over 0 shapes"."""
    none = Drift("L2 bandwidth", "B/s", 1e11, float("nan"), 0, 0.5, band=0.20, rows=4)
    text = none.text()
    assert "nan" not in text
    assert "L2 bandwidth (model 100 GB/s): no shape implies a value" in text
    assert "over 4 shapes" in text
    columns = {
        "latency_measured_s": np.array([1e-5, 2e-5]),
        "latency_predicted_s": np.array([1e300, 1e300]),
        "compute_s": np.array([np.nan, np.nan]),
        "memory_s": np.array([1e300, 1e300]),
        "fixed_s": np.array([0.0, 0.0]),
    }
    from graphsval_core.plugins.records import PredictorConstant

    constant = PredictorConstant(name="L2 bandwidth", value=1e300, unit="B/s", regime="l2_bound")
    with np.errstate(all="raise"):  # no warning may leak
        implied = implied_declared(columns, constant)
    assert implied.size == 0


def test_a_launch_cell_blames_a_gemvs_own_team_for_the_gemvs_alone():
    """Two fp32 GEMVs that pay MKL's GEMV team (4.4 us of an 8.6 us launch)
    measured 5 us slower, and a GEMM-path call measured as predicted: the
    GEMV team cost takes the GEMVs' drift, the launch overhead holds."""
    gemvs = [
        {
            "dtype": "fp32",
            "regime": "launch_bound",
            "measured": m,
            "predicted": 8.6e-6,
            "launch": 2.1e-6,
            "gemv": 4.4e-6,
        }
        for m in (13.5e-6, 13.7e-6)
    ]
    other = {
        "dtype": "fp32",
        "regime": "launch_bound",
        "measured": 4.2e-6,
        "predicted": 4.2e-6,
        "launch": 2.1e-6,
    }
    (cell,) = build_cells(_records([*gemvs, other])).values()
    gemv, launch = attribute(cell)
    assert gemv.constant == "GEMV fork/join fp32" and gemv.rows == 2
    assert gemv.model == pytest.approx(4.4e-6)
    assert gemv.implied == pytest.approx(4.4e-6 + 5.0e-6)
    assert "under-predicts latency" in gemv.text()
    assert launch.constant == "launch overhead" and launch.rows == 1
    assert launch.implied == pytest.approx(2.1e-6)


def test_a_gemv_paying_the_dispatch_still_counts_among_the_librarys_calls():
    """Two bf16 GEMVs through the library (its dispatch and their own team)
    and a product too small for it: the small one's line still says it is
    a product too small for the library, not a plain launch overhead."""
    gemvs = [
        {
            "dtype": "bf16",
            "regime": "launch_bound",
            "measured": 30e-6,
            "predicted": 30e-6,
            "launch": 1e-6,
            "dispatch": 20e-6,
            "gemv": 5e-6,
        }
        for _ in range(2)
    ]
    small = {
        "dtype": "bf16",
        "regime": "launch_bound",
        "measured": 3e-6,
        "predicted": 1.5e-6,
        "launch": 1e-6,
    }
    (cell,) = build_cells(_records([*gemvs, small])).values()
    names = [d.constant for d in attribute(cell)]
    assert names == [
        "GEMV fork/join bf16",
        "launch overhead (products too small for the bf16 library)",
    ]


def test_attribution_marks_the_gemvs_the_model_charges_a_gemv_team():
    # the calls whose launch holds the GEMV team cost, by the model, are the ones
    # drift attribution times it from: GEMVs (M or N of 1) above the grain, fp32 only
    registry = build_registry()
    i7 = registry.target("i7_12700k")
    plain = evolve(i7, gemv_fork_join_s={})
    shapes = np.array([[1, 128, 128], [1, 128, 384], [384, 128, 1], [2, 128, 384], [1, 1, 1]])
    for op_name in ("linear", "matmul"):
        op = registry.op(op_name)
        for dtype in ("fp32", "bf16"):
            charged = predict(registry, i7, op, shapes, dtype)
            moved = charged.launch_s != predict(registry, plain, op, shapes, dtype).launch_s
            # the terms attribution reads, from the model's own columns
            terms = _terms(charged.columns(), i7, dtype, op, True, shapes)
            marked = np.isfinite(terms.gemv_team_s)
            assert marked.tolist() == moved.tolist(), (op_name, dtype)
            expected = [False, True, True, False, False] if dtype == "fp32" else [False] * 5
            assert marked.tolist() == expected, (op_name, dtype)


def test_an_accumulating_call_is_judged_apart_from_the_dtype_s_dispatch():
    """bf16 calls that accumulate onto C (19 us modelled, ~31 us measured)
    beside ones that write it (15 us modelled, ~15 us measured): one line
    each, the accumulating one named for its own constant."""
    plain = [
        {"dtype": "bf16", "regime": "launch_bound", "measured": m, "predicted": 15e-6}
        for m in (14.8e-6, 15e-6, 15.2e-6)
    ]
    for row in plain:
        row["dispatch"] = 15e-6
    acc = [
        {"dtype": "bf16", "regime": "launch_bound", "measured": m, "predicted": 19e-6}
        for m in (30e-6, 31e-6, 32e-6)
    ]
    for row in acc:
        row["accumulate"] = 19e-6
    (cell,) = [c for c in build_cells(_records(plain + acc)).values() if c.dtype == "bf16"]
    dispatch, accumulating = attribute(cell)
    assert dispatch.constant == "dispatch overhead bf16" and dispatch.shapes == 3
    assert accumulating.constant == "accumulating call bf16 (dispatch + accumulate_overhead_s)"
    assert accumulating.shapes == 3
    assert accumulating.model == pytest.approx(19e-6)
    assert accumulating.implied == pytest.approx(31e-6)
    assert accumulating.median_error < 0 < accumulating.change
