"""Calibration of the software terms (fork/join, kernels, packing), the energy
floor and the hierarchy guard."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
from attrs import evolve
from click.testing import CliRunner

from graphsval_core.calibrate.energy import ENERGY_FLOOR
from graphsval_core.calibrate.fit import _hierarchy_penalty
from graphsval_core.cli.main import cli
from graphsval_core.datamodel.provenance import datasheet, estimated
from graphsval_core.files.calibration import apply_file
from graphsval_core.files.calibration_file import CalibrationFileError
from graphsval_core.model.predict import predict_batch
from graphsval_core.model.reference import predict
from graphsval_core.plugins.loader import build_registry
from graphsval_core.testing import target_field

HEADER = ["hardware", "op", "shape", "dtype", "latency_s", "energy_j", "trial_count", "notes"]
# below and above the grain, one and two kernels, one row of A (streamed) and many (packed)
SHAPES = {
    "vector_add": [[300], [9000], [30_000], [40_000], [90_000], [700_000], [3_000_000]],
    "matmul": [[1, 900, 1100], [2, 1500, 1300], [24, 1200, 1400], [48, 2000, 900], [520, 520, 520]],
    "linear": [[1, 70, 90], [1, 300, 300], [16, 1600, 1200], [600, 700, 500]],
}
TRUE = {"fork_join_s": 4.2e-6, "pack_bps.fp32": 7.5e9, "kernel_overhead_s": 1.3e-6}


def _cpu(make_target, **true):
    return make_target(
        "toy",
        fork_join_s=estimated(true.get("fork_join_s", 2e-6), "t"),
        parallel_grain_ops=estimated(32768, "t"),
        kernel_overhead_s=estimated(true.get("kernel_overhead_s", 2e-6), "t"),
        pack_bps=estimated(true.get("pack_bps.fp32", 20e9), "t"),
        pack_min_rows=estimated(3, "t"),
    )


def _write(path, registry, key, energy=None, shapes_of=SHAPES):
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(HEADER)
        for op, shapes in shapes_of.items():
            truth = predict_batch(registry, key, op, np.array(shapes), "fp32")
            for dims, lat in zip(shapes, truth.latency_s, strict=True):
                joules = "" if energy is None else f"{energy(lat):.9e}"
                row = ["toy", op, "x".join(map(str, dims)), "fp32", f"{lat:.9e}", joules, 11, ""]
                writer.writerow(row)
    return path


def _run(base, out, *extra):
    """``graphsval calibrate`` of the toy on ``base`` into ``out`` (no
    leave-one-out): its result, once it exited 0."""
    args = ["calibrate", "--hw", "toy", "--no-loo", *extra, "--baseline", str(base)]
    result = CliRunner().invoke(cli, [*args, "--out", str(out)])
    assert result.exit_code == 0, result.output
    return result


def _calibrate(base, out, *extra):
    """The constants :func:`_run` writes."""
    _run(base, out, *extra)
    return json.loads(out.read_text())["constants"]


@pytest.fixture
def installed(make_plugin, fake_entry_points, make_entry_point):
    """Installs ``model`` as the toy plugin's target and returns a registry
    with ``silicon`` (the true constants) beside it as ``silicon``."""

    def build(model, silicon):
        plugin = make_plugin("toy", lambda: [model])
        fake_entry_points(make_entry_point("toy", lambda: plugin, "graphsval-toy"))
        return build_registry(
            extra_plugins=[("s", make_plugin("s", lambda: [evolve(silicon, key="silicon")]))],
            plugin_args=["no:toy"],
        )

    return build


@pytest.fixture
def cpu_setup(make_target, installed):
    return installed(_cpu(make_target), _cpu(make_target, **TRUE))


def test_recovers_fork_join_kernel_overhead_and_pack_rate_within_2_percent(cpu_setup, tmp_path):
    base = _write(tmp_path / "toy.calibration.csv", cpu_setup, "silicon")
    out = tmp_path / "toy.json"
    result = CliRunner().invoke(
        cli, ["calibrate", "--hw", "toy", "--no-loo", "--baseline", str(base), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    constants = json.loads(out.read_text())["constants"]
    for name, value in TRUE.items():
        assert constants[name]["value"] == pytest.approx(value, rel=0.02), name
    assert "fp32 matmul/linear rows of 3 rows of A or more" in constants["pack_bps.fp32"]["from"]


def test_a_coefficient_the_rows_cannot_see_sits_at_its_floor(cpu_setup, tmp_path):
    # energies that are static power alone (40 W x latency, long windows): energy per
    # op and per byte have no share left, so both sit at a tenth of the spec's
    base = _write(tmp_path / "toy.calibration.csv", cpu_setup, "silicon", lambda t: 40.0 * t)
    text = base.read_text().replace(",11,", ",100000,")  # every window long enough
    base.write_text(text)
    out = tmp_path / "toy.json"
    result = CliRunner().invoke(
        cli, ["calibrate", "--hw", "toy", "--no-loo", "--baseline", str(base), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    constants = data["constants"]
    assert constants["energy_per_op_j.fp32"]["value"] == pytest.approx(ENERGY_FLOOR * 1e-12)
    assert "at its floor" in constants["energy_per_op_j.fp32"]["from"]
    assert "at its floor" in constants["tiers.dram.energy_per_byte_j"]["from"]
    assert data["energy"]["at_floor"] == ["energy_per_op_j.fp32", "energy per byte (all tiers)"]
    assert constants["idle_power_w"]["value"] == pytest.approx(40.0, rel=0.05)


def test_the_hierarchy_guard_only_bites_when_an_inner_tier_is_slower(make_target, make_tier):
    fine = make_target()  # 1 TB/s, 500 GB/s, 50 GB/s
    assert _hierarchy_penalty(fine).tolist() == [0.0, 0.0]
    slow_l2 = make_target(
        tiers=[
            make_tier("l1", 32 * 1024),
            make_tier("l2", 2**20, achievable_fraction=estimated(0.05, "t")),  # 50 GB/s
            make_tier("dram", 2**34, is_per_unit=False, num_units=1),  # 1 TB/s: faster
        ]
    )
    penalty = _hierarchy_penalty(slow_l2)
    assert penalty[0] == 0.0 and penalty[1] == pytest.approx(10 * np.log(1e12 / 5e10))


def test_targets_shows_datasheet_and_calibrated_values_side_by_side():
    result = CliRunner().invoke(cli, ["targets", "--hw", "i7_12700k"])
    assert result.exit_code == 0, result.output
    header = next(line for line in result.output.splitlines() if line.startswith("FIELD"))
    assert header.split() == ["FIELD", "VALUE", "DATASHEET", "FIT"]
    fraction, source = target_field(result.output, "achievable fp32")
    assert fraction[1] == "1 of peak" and fraction[2].startswith("+- ")  # datasheet, fit
    assert source == "calibrated: i7_12700k.calibration.json"  # where it comes from
    grain, source = target_field(result.output, "parallel grain")
    assert grain == ["32768 ops", "", ""] and "GRAIN_SIZE" in source  # not calibrated
    idle, _ = target_field(result.output, "idle power")
    assert idle[:2] == ["79 W", "10 W"]  # 3 digits, as rates (not 78.9636)
    assert max(len(line) for line in result.output.splitlines()[:-12]) <= 80  # the screen's width
    # the rows a calibration was fitted on are named once, in the legend, not under each field
    assert result.output.count("fitted on i7_12700k_matmul.calibration.csv") == 1
    assert "Calibrated: i7_12700k.calibration.json (fitted on" in " ".join(result.output.split())
    assert "non-inclusive" in result.output and "packing B" in result.output


def test_every_calibrated_target_keeps_its_caches_no_slower_than_the_memory_behind():
    registry = build_registry()
    for key in registry.calibration_files:
        bandwidth = [t.effective_bandwidth_bps for t in registry.target(key).tiers]
        assert all(a >= b * (1 - 1e-6) for a, b in zip(bandwidth, bandwidth[1:], strict=False)), key


def test_a_tier_the_rows_never_bind_is_held_at_the_fitted_inner_bandwidth(make_target, make_tier):
    from graphsval_core.calibrate.fit import _hold_hierarchy

    spec = make_target()  # l1 1 TB/s, l2 500 GB/s, dram 50 GB/s
    values, held = _hold_hierarchy(spec, {"tiers.l1.achievable_fraction": 0.02})  # 20 GB/s
    assert values["tiers.l2.achievable_fraction"] == pytest.approx(20e9 / 5e11)
    assert values["tiers.dram.achievable_fraction"] == pytest.approx(20e9 / 5e10)
    assert set(held) == {"tiers.l2.achievable_fraction", "tiers.dram.achievable_fraction"}
    untouched, none = _hold_hierarchy(spec, {"tiers.l2.achievable_fraction": 0.5})
    assert none == {} and "tiers.dram.achievable_fraction" not in untouched


def _fitted(registry, tmp_path, shapes, monkeypatch):
    """The constants ``calibrate`` fits for the toy on ``shapes`` (op -> shapes)
    as the registry's ``silicon`` runs them."""
    for op, rows in shapes.items():
        monkeypatch.setitem(SHAPES, op, rows)
    base = _write(tmp_path / "toy.calibration.csv", registry, "silicon")
    return _calibrate(base, tmp_path / "toy.json", "--no-grouped-cv")


def test_a_products_bandwidth_share_is_fitted_once_streams_set_the_tiers(
    make_target, installed, tmp_path, monkeypatch
):
    share = {"fp32": estimated(0.6, "the library")}
    registry = installed(make_target("toy"), make_target("toy", product_bandwidth_fraction=share))
    streams = [[int(n)] for n in np.geomspace(2e5, 4e7, 12)]  # cache- and memory-bound adds
    gemvs = [[1, 2048, 2048], [2, 4096, 1024], [1, 8192, 4096], [4, 1024, 8192]]
    shapes = {"vector_add": streams, "matmul": gemvs, "linear": [[1, 4096, 2048], [2, 2048, 4096]]}
    constants = _fitted(registry, tmp_path, shapes, monkeypatch)
    base, out = tmp_path / "toy.calibration.csv", tmp_path / "toy.json"
    share = constants["product_bandwidth_fraction.fp32"]
    assert share["value"] == pytest.approx(0.6, rel=0.02)
    assert "against 12 vector_add rows" in share["from"]
    # with too few streams to set the tiers, the tiers take the products' rate
    monkeypatch.setitem(SHAPES, "vector_add", streams[:4])
    few = _write(tmp_path / "few.calibration.csv", registry, "silicon")
    result = _run(few, tmp_path / "few.json", "--no-grouped-cv")
    written = json.loads((tmp_path / "few.json").read_text())
    assert "product_bandwidth_fraction.fp32" not in written["constants"]
    assert not [n for n in written["constants"] if n.endswith(".product_fraction")]
    # ... and the command says why, in a warning recorded in the file too
    lines = [x.strip() for x in result.output.splitlines() if "product_bandwidth_fraction" in x]
    assert len(lines) == 1 and lines[0].startswith("warning: product_bandwidth_fraction.fp32 is")
    assert "not fitted: 4 vector_add rows bound by a memory tier, 10 needed" in lines[0]
    kinds = [d["kind"] for d in written["fit"]["diagnostics"]]
    assert "not_fitted" in kinds
    # with enough streams nothing is said about the share
    again = _run(base, out, "--no-grouped-cv").output
    assert "warning: product_bandwidth_fraction" not in again


L2_SHARE_SHAPES = {  # streams in the L2 and in memory; GEMVs with B in the L2 and in memory
    "vector_add": [[int(n)] for n in [*np.geomspace(2e4, 2e5, 6), *np.geomspace(2e6, 4e7, 6)]],
    "matmul": [[1, 1024, 900], [2, 900, 1024], [1, 700, 1200], [1, 2048, 2048], [1, 8192, 4096]],
    "linear": [[1, 800, 1000], [1, 4096, 2048]],
}


def _l2_share_fit(make_target, installed, tmp_path, monkeypatch, shapes, shared=False):
    """What calibrate fits on ``shapes`` run by a toy whose L2 gives products 0.4
    of its rate and whose library takes 0.6 of every tier's (``shared``: an L2
    shared by the units, as a GPU's)."""
    fast = {"fp32": datasheet(4e12, "test")}  # so that GEMVs in the L2 are bound by it
    tiers = list(make_target().tiers)
    if shared:
        tiers[1] = evolve(tiers[1], is_per_unit=False, num_units=1)
    model = make_target("toy", peak_ops_per_s=fast, tiers=tiers)
    tiers[1] = evolve(tiers[1], product_fraction=estimated(0.4, "the library"))
    silicon = make_target(
        "toy",
        peak_ops_per_s=fast,
        tiers=tiers,
        product_bandwidth_fraction={"fp32": estimated(0.6, "the library")},
    )
    registry = installed(model, silicon)
    return _fitted(registry, tmp_path, shapes, monkeypatch)


def test_a_products_share_of_a_private_l2_is_fitted_beside_the_librarys(
    make_target, installed, tmp_path, monkeypatch
):
    constants = _l2_share_fit(make_target, installed, tmp_path, monkeypatch, L2_SHARE_SHAPES)
    fraction = constants["tiers.l2.product_fraction"]
    assert fraction["value"] == pytest.approx(0.4, rel=0.02)
    assert constants["product_bandwidth_fraction.fp32"]["value"] == pytest.approx(0.6, rel=0.02)
    assert "vector_add rows that set its own rate" in fraction["from"]


@pytest.mark.parametrize(
    "case",
    [
        "no product bound elsewhere",  # the two shares appear only as their product
        "no add in the L2",  # nothing sets the L2's own rate
        "a shared L2",  # a GPU's: the library's share is its products' rate
    ],
)
def test_a_products_share_of_the_l2_is_not_fitted_where_the_rows_cannot_tell_it(
    make_target, installed, tmp_path, monkeypatch, case
):
    shapes = dict(L2_SHARE_SHAPES)
    if case == "no product bound elsewhere":
        shapes["matmul"] = shapes["matmul"][:3]
        shapes["linear"] = shapes["linear"][:1]
    if case == "no add in the L2":
        shapes["vector_add"] = shapes["vector_add"][6:] + [
            [int(n)] for n in np.geomspace(3e6, 3e7, 6)
        ]
    constants = _l2_share_fit(
        make_target, installed, tmp_path, monkeypatch, shapes, case == "a shared L2"
    )
    assert "tiers.l2.product_fraction" not in constants
    assert "product_bandwidth_fraction.fp32" in constants  # the library's share still is


def test_the_rate_of_packing_an_a_from_memory_is_recovered_where_rows_have_one(
    make_target, installed, tmp_path, monkeypatch
):
    registry = installed(
        make_target("toy", pack_a_bps={"fp32": estimated(10e9, "an estimate")}),
        make_target("toy", pack_a_bps={"fp32": estimated(3e9, "the library")}),
    )
    # tall products (A of 8-64 MiB, beyond the toy's 4 MiB of L2) beside ones in cache
    tall = [[m, k, n] for m, k in ((8192, 256), (16384, 1024)) for n in (32, 64, 256)]
    monkeypatch.setitem(SHAPES, "matmul", [*SHAPES["matmul"], *tall])
    base = _write(tmp_path / "toy.calibration.csv", registry, "silicon")
    out = tmp_path / "toy.json"
    rate = _calibrate(base, out, "--no-grouped-cv")["pack_a_bps.fp32"]
    assert rate["value"] == pytest.approx(3e9, rel=0.02)
    assert rate["from"].startswith("9 fp32 matmul/linear rows of more than 16 columns")
    # with one row whose A outgrows the L1s (and none beyond the L2) it is not fitted
    monkeypatch.setitem(SHAPES, "matmul", [[1, 900, 1100], [24, 1200, 1400], [520, 520, 520]])
    monkeypatch.setitem(SHAPES, "linear", SHAPES["linear"][:-1])
    small = _write(tmp_path / "small.calibration.csv", registry, "silicon")
    assert "pack_a_bps.fp32" not in _calibrate(small, out, "--no-grouped-cv")


def test_a_held_tier_is_written_no_faster_than_the_tier_inside_it(make_target):
    from graphsval_core.calibrate.file import _held_entries, _sig_down
    from graphsval_core.calibrate.fit import Fit, _hold_hierarchy

    spec = make_target()  # l1 1 TB/s, l2 500 GB/s, dram 50 GB/s
    # the fitted l1 rounds down to 6 digits, the l2 held at it would round up
    values, held = _hold_hierarchy(spec, {"tiers.l1.achievable_fraction": 0.04185504999})
    assert float(f"{values['tiers.l2.achievable_fraction']:.6g}") * 5e11 > 0.041855 * 1e12
    fit = Fit(values, {}, np.zeros(0), [], [], held=held)
    written = {"tiers.l1.achievable_fraction": {"value": 0.041855}}
    out = _held_entries(spec, fit, written)
    assert out["tiers.l2.achievable_fraction"]["value"] == 0.08371
    assert out["tiers.dram.achievable_fraction"]["value"] == 0.8371  # from the l2 as written
    assert out["tiers.l2.achievable_fraction"]["from"] == held["tiers.l2.achievable_fraction"]
    assert [_sig_down(x) for x in (0.08371009998, 0.083710049, 2.5, 1e-7 * 3)] == [
        0.08371,
        0.08371,
        2.5,
        3e-7,
    ]


def test_an_ops_own_first_touch_rate_is_fitted_beside_the_products(fresh_registry, tmp_path):
    # silicon whose adds fault their fresh outputs in at a third of the products' rate:
    # with fresh outputs of both, each rate is recovered; with fresh adds of one dtype
    # alone there is one rate, the shared one
    registry = fresh_registry(
        FRESH,
        {**FRESH, "vector_first_touch_bps": {"fp32": estimated(1e9, "the add kernel")}},
    )
    adds = [("vector_add", "fp32", [n * 2**20]) for n in (10, 12, 16, 24, 32)]  # 40-128 MiB
    outer = [[4096, 4, 4096], [8192, 8, 2048], [4096, 16, 8192], [2048, 2, 8192]]
    products = [("matmul", "fp32", dims) for dims in [*SHAPES["matmul"], *outer]]
    base = _write_rows(tmp_path / "toy.calibration.csv", registry, SMALL_ADDS + products + adds)
    out = tmp_path / "toy.json"
    constants = _calibrate(base, out, "--no-grouped-cv")
    assert constants["first_touch_bps"]["value"] == pytest.approx(3e9, rel=0.02)
    assert constants["first_touch_bps"]["from"] == (
        "4 matmul/linear rows with a fresh output of 32 MiB or more"
    )
    rate = constants["vector_first_touch_bps.fp32"]
    assert rate["value"] == pytest.approx(1e9, rel=0.02)
    assert rate["from"] == (
        "5 fp32 rows of ops with no matrix product with a fresh output of 32 MiB or more"
    )
    # the file applies: the calibrated target predicts with it
    calibrated = apply_file(
        registry.target("silicon"), {**json.loads(out.read_text()), "target": "silicon"}, "x"
    )
    assert calibrated.first_touch_rate("fp32", product=False) == rate["value"]
    assert calibrated.first_touch_rate("fp32", product=True) == pytest.approx(3e9, rel=0.02)
    small = [("matmul", "fp32", dims) for dims in SHAPES["matmul"]]
    adds_only = _write_rows(tmp_path / "adds.calibration.csv", registry, SMALL_ADDS + small + adds)
    constants = _calibrate(adds_only, out, "--no-grouped-cv")
    assert "vector_first_touch_bps.fp32" not in constants
    assert constants["first_touch_bps"]["value"] == pytest.approx(1e9, rel=0.02)


@pytest.fixture
def fresh_registry(make_target, installed):
    """A toy model (``model_kw``) and the silicon it is calibrated against
    (``silicon_kw``), both with fp32 and bf16."""
    dtypes = {
        "peak_ops_per_s": {"fp32": datasheet(256e9, "t"), "bf16": datasheet(512e9, "t")},
        "energy_per_op_j": {"fp32": estimated(1e-12, "t"), "bf16": estimated(1e-12, "t")},
    }

    def build(model_kw, silicon_kw):
        return installed(
            make_target("toy", **dtypes, **model_kw), make_target("toy", **dtypes, **silicon_kw)
        )

    return build


def _write_rows(path, registry, rows):
    """``rows``: (op, dtype, dims) as the silicon times them."""
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(HEADER)
        for op, dtype, dims in rows:
            (lat,) = predict_batch(registry, "silicon", op, np.array([dims]), dtype).latency_s
            writer.writerow(["toy", op, "x".join(map(str, dims)), dtype, f"{lat:.9e}", "", 11, ""])
    return path


FRESH = {
    "first_touch_bps": estimated(3e9, "the OS"),
    "first_touch_min_bytes": estimated(32 * 2**20, "glibc"),
}
SMALL_ADDS = [("vector_add", d, [n]) for d in ("fp32", "bf16") for n in (9000, 90_000, 700_000)]


def test_with_no_fresh_products_one_dtypes_adds_measure_the_shared_first_touch_rate(
    fresh_registry, tmp_path
):
    # fresh fp32 adds (five) take pages at the shared rate, bf16 ones (three) at their
    # own: with no fresh product, the dtype with the most fresh adds measures the
    # shared rate and the other its own
    registry = fresh_registry(
        {},
        {**FRESH, "vector_first_touch_bps": {"bf16": estimated(1e9, "the bf16 add")}},
    )
    fresh = [("vector_add", "fp32", [n * 2**20]) for n in (10, 12, 16, 24, 32)]
    fresh += [("vector_add", "bf16", [n * 2**20]) for n in (20, 32, 48)]
    base = _write_rows(tmp_path / "toy.calibration.csv", registry, SMALL_ADDS + fresh)
    constants = _calibrate(base, tmp_path / "toy.json", "--no-grouped-cv")
    assert constants["first_touch_bps"]["value"] == pytest.approx(3e9, rel=0.02)
    assert constants["first_touch_bps"]["from"] == (
        "5 fp32 rows of ops with no matrix product with a fresh output of 32 MiB or more"
    )
    assert constants["vector_first_touch_bps.bf16"]["value"] == pytest.approx(1e9, rel=0.02)
    assert "vector_first_touch_bps.fp32" not in constants


def test_an_ops_own_rate_the_spec_gives_is_fitted_without_the_shared_one(fresh_registry, tmp_path):
    # the spec already gives the adds their own rate: fresh adds alone measure it and
    # say nothing about the shared rate, which keeps the spec's value
    own = {"vector_first_touch_bps": {"fp32": estimated(5e9, "a guess")}}
    registry = fresh_registry(
        {**FRESH, **own},
        {**FRESH, "vector_first_touch_bps": {"fp32": estimated(1e9, "the add")}},
    )
    fresh = [("vector_add", "fp32", [n * 2**20]) for n in (10, 16, 32)]
    base = _write_rows(tmp_path / "toy.calibration.csv", registry, SMALL_ADDS + fresh)
    constants = _calibrate(base, tmp_path / "toy.json", "--no-grouped-cv")
    assert constants["vector_first_touch_bps.fp32"]["value"] == pytest.approx(1e9, rel=0.02)
    assert "first_touch_bps" not in constants


def test_grouped_cv_holds_out_the_only_family_of_fresh_products(fresh_registry, tmp_path):
    # every fresh product is in one family: the refit without it has no row that
    # moves the shared rate while the adds still measure their own; it keeps the
    # full fit's shared rate instead of failing to apply the adds' rate alone
    registry = fresh_registry(
        {},
        {**FRESH, "vector_first_touch_bps": {"fp32": estimated(1e9, "the add")}},
    )
    products = [("matmul", "fp32", [4096, k, 4096]) for k in (4, 5, 6)]
    fresh = [("vector_add", "fp32", [n * 2**20]) for n in (10, 16, 32)]
    small = [("matmul", "fp32", dims) for dims in SHAPES["matmul"]]
    base = _write_rows(
        tmp_path / "toy.calibration.csv", registry, SMALL_ADDS + small + products + fresh
    )
    constants = _calibrate(base, tmp_path / "toy.json")
    assert constants["first_touch_bps"]["value"] == pytest.approx(3e9, rel=0.02)
    assert constants["vector_first_touch_bps.fp32"]["value"] == pytest.approx(1e9, rel=0.02)


#: below and above the grain, GEMVs (M or N of 1) small and large, GEMMs
GEMV_SHAPES = {
    "vector_add": [[300], [9000], [40_000], [90_000], [700_000], [3_000_000]],
    "matmul": [[64, 64, 64], [2, 1500, 1300], [24, 1200, 1400], [520, 520, 520], [96, 96, 96]],
    "linear": [[1, 70, 90], [1, 128, 384], [1, 256, 128], [1, 1024, 2048], [16, 1600, 1200]],
}
GEMV_TRUE = {"fork_join_s": 2.5e-6, "gemv_fork_join_s.fp32": 6.5e-6}


def _gemv_cpu(make_target, **true):
    return make_target(
        "toy",
        fork_join_s=estimated(true.get("fork_join_s", 3e-6), "t"),
        gemv_fork_join_s={"fp32": estimated(true.get("gemv_fork_join_s.fp32", 3e-6), "t")},
        parallel_grain_ops=estimated(32768, "t"),
    )


@pytest.fixture
def gemv_setup(make_target, installed):
    return installed(_gemv_cpu(make_target), _gemv_cpu(make_target, **GEMV_TRUE))


def _calibrate_gemv(base, out):
    return CliRunner().invoke(
        cli, ["calibrate", "--hw", "toy", "--no-loo", "--baseline", str(base), "--out", str(out)]
    )


def test_a_gemvs_team_cost_is_recovered_beside_the_teams(gemv_setup, tmp_path):
    base = _write(tmp_path / "toy.calibration.csv", gemv_setup, "silicon", shapes_of=GEMV_SHAPES)
    out = tmp_path / "toy.json"
    result = _calibrate_gemv(base, out)
    assert result.exit_code == 0, result.output
    constants = json.loads(out.read_text())["constants"]
    for name, value in GEMV_TRUE.items():
        assert constants[name]["value"] == pytest.approx(value, rel=0.02), name
    assert (
        constants["gemv_fork_join_s.fp32"]["from"]
        == "2 launch-bound fp32 GEMVs (M or N of 1) above the grain"
    )
    assert "gemv_fork_join_s is not fitted" not in result.output
    # the file applies: a GEMV above the grain pays the fitted cost, a GEMM the team's
    registry = build_registry()
    spec = apply_file(registry.datasheet_target("toy"), json.loads(out.read_text()), "toy.json")
    assert spec.gemv_fork_join_s["fp32"] == pytest.approx(
        GEMV_TRUE["gemv_fork_join_s.fp32"], rel=0.02
    )
    shapes = np.array([[1, 128, 384], [2, 128, 384]])
    launch = predict(registry, spec, registry.op("linear"), shapes, "fp32").launch_s
    assert launch[0] - launch[1] == pytest.approx(
        GEMV_TRUE["gemv_fork_join_s.fp32"] - GEMV_TRUE["fork_join_s"], rel=0.05
    )


def test_one_launch_bound_gemv_leaves_it_unfitted_and_says_so(gemv_setup, tmp_path):
    shapes = {**GEMV_SHAPES, "linear": [s for s in GEMV_SHAPES["linear"] if s != [1, 256, 128]]}
    base = _write(tmp_path / "toy.calibration.csv", gemv_setup, "silicon", shapes_of=shapes)
    out = tmp_path / "toy.json"
    result = _calibrate_gemv(base, out)
    assert result.exit_code == 0, result.output
    constants = json.loads(out.read_text())["constants"]
    assert "gemv_fork_join_s.fp32" not in constants
    text = " ".join(result.output.split())
    assert (
        "gemv_fork_join_s.fp32 is not fitted: 1 of the 2 fp32 GEMVs (M or N of 1) above the "
        "grain is launch-bound (2 needed" in text
    ), result.output


def _gemv_file(value):
    return {
        "target": "toy",
        "provenance": {"sources": [], "graphsval_version": "0"},
        "constants": {"gemv_fork_join_s.fp32": {"value": value}},
    }


def test_a_calibration_file_refuses_a_negative_gemv_team_cost(gemv_setup):
    spec = build_registry().datasheet_target("toy")
    with pytest.raises(CalibrationFileError, match=r"^c.json: constants.gemv_fork_join_s.fp32"):
        apply_file(spec, _gemv_file(-1e-6), "c.json")
    assert apply_file(spec, _gemv_file(4e-6), "c.json").gemv_fork_join_s == {"fp32": 4e-6}


def test_a_gemv_team_cost_applies_only_where_the_spec_has_a_team(make_target):
    spec = make_target("one")  # no team: no fork_join_s, no gemv_fork_join_s
    with pytest.raises(CalibrationFileError, match="one gives no gemv_fork_join_s for fp32"):
        apply_file(spec, {**_gemv_file(4e-6), "target": "one"}, "c.json")


def test_a_libraries_overlap_of_compute_and_memory_is_recovered_where_rows_show_both(
    make_target, installed, tmp_path, monkeypatch
):
    registry = installed(
        make_target("toy", product_overlap={"fp32": estimated(1.0, "the roofline")}),
        make_target("toy", product_overlap={"fp32": estimated(0.4, "the library")}),
    )
    # skinny products whose main-memory time is a quarter to a half of their compute
    skinny = [[m, k, n] for m in (12, 16, 24, 32) for k, n in ((4096, 4096), (2048, 6144))]
    monkeypatch.setitem(SHAPES, "matmul", [*SHAPES["matmul"], *skinny])
    base = _write(tmp_path / "toy.calibration.csv", registry, "silicon")
    out = tmp_path / "toy.json"
    result = _run(base, out, "--no-grouped-cv")
    overlap = json.loads(out.read_text())["constants"]["product_overlap.fp32"]
    assert overlap["value"] == pytest.approx(0.4, rel=0.02)
    # printed with its own spread, as a share (a percentage of a share near 0 misleads)
    line = next(x for x in result.output.splitlines() if "product_overlap.fp32:" in x)
    assert "(was 1) +- " in line and "%" not in line.split("[")[0], line
    assert (
        "fp32 matmul/linear rows whose compute and memory times are within 4x" in (overlap["from"])
    )
    # without such rows it is not fitted, and keeps the spec's roofline
    monkeypatch.setitem(SHAPES, "matmul", SHAPES["matmul"][: -len(skinny)])
    few = _write(tmp_path / "few.calibration.csv", registry, "silicon")
    assert "product_overlap.fp32" not in _calibrate(few, out, "--no-grouped-cv")


def test_the_share_a_b_read_in_place_streams_at_is_fitted_where_rows_read_one(
    make_target, installed, tmp_path, monkeypatch
):
    def toy(share):
        return make_target(
            "toy",
            pack_bps=estimated(20e9, "t"),
            pack_min_rows=estimated(3, "t"),
            in_place_max_rows={"fp32": estimated(8, "t")},
            in_place_fraction={"fp32": estimated(share, "the library")},
            product_bandwidth_fraction={"fp32": estimated(0.6, "the library")},
        )

    registry = installed(toy(0.6), toy(0.3))
    streams = [[int(n)] for n in np.geomspace(2e5, 4e7, 12)]
    # linears of 3-8 rows whose weights (16-64 MiB) outgrow the toy's caches read them in
    # place; the matmuls of the same shapes, and a 16-row linear, pack them
    in_place = [[3, 2048, 2048], [4, 4096, 2048], [6, 2048, 4096], [8, 4096, 4096]]
    shapes = {
        "vector_add": streams,
        "matmul": [[4, 2048, 2048], [8, 4096, 4096], [1, 8192, 4096]],
        "linear": [*in_place, [16, 4096, 4096]],
    }
    constants = _fitted(registry, tmp_path, shapes, monkeypatch)
    share = constants["in_place_fraction.fp32"]
    assert share["value"] == pytest.approx(0.3, rel=0.02)
    assert share["datasheet"] == pytest.approx(0.6)  # the spec's, beside the fitted value
    assert share["from"].startswith("4 fp32 rows that may read B in place")
    assert constants["product_bandwidth_fraction.fp32"]["value"] == pytest.approx(0.6, rel=0.02)
    # with three such rows it is not fitted
    shapes["linear"] = [*in_place[:3], [16, 4096, 4096]]
    assert "in_place_fraction.fp32" not in _fitted(registry, tmp_path, shapes, monkeypatch)
    # nor with four whose weights (1-2 MiB) the toy's L2, a cache of its own, keeps
    kept = [[4, 512, 512], [4, 512, 1024], [6, 1024, 512], [8, 700, 700]]
    shapes["linear"] = [*kept, *in_place[:3], [16, 4096, 4096]]
    assert "in_place_fraction.fp32" not in _fitted(registry, tmp_path, shapes, monkeypatch)


def test_the_share_a_gemv_streams_its_matrix_at_is_fitted_where_rows_stream_one(
    make_target, installed, tmp_path, monkeypatch
):
    def toy(share):
        return make_target(
            "toy",
            pack_bps=estimated(20e9, "t"),
            pack_min_rows=estimated(3, "t"),
            gemv_fraction={"fp32": estimated(share, "the library")},
            product_bandwidth_fraction={"fp32": estimated(0.4, "the library")},
        )

    registry = installed(toy(1.0), toy(0.8))
    streams = [[int(n)] for n in np.geomspace(2e5, 4e7, 12)]
    # GEMVs and a product of two rows of A (one GEMV per row) whose 16-64 MiB matrices
    # outgrow the toy's caches; products of 8-16 rows pack B and stream it at their share
    level2 = [[1, 2048, 2048], [4096, 2048, 1], [2, 4096, 2048], [1, 4096, 4096]]
    packed = [[8, 2048, 2048], [16, 4096, 2048], [8, 2048, 4096]]
    shapes = {"vector_add": streams, "matmul": [*level2, *packed], "linear": packed}
    constants = _fitted(registry, tmp_path, shapes, monkeypatch)
    share = constants["gemv_fraction.fp32"]
    assert share["value"] == pytest.approx(0.8, rel=0.02)
    assert share["datasheet"] == pytest.approx(1.0)  # the spec's, beside the fitted value
    assert share["from"].startswith("4 fp32 GEMVs (M or N of 1, or A too short to pack)")
    assert constants["product_bandwidth_fraction.fp32"]["value"] == pytest.approx(0.4, rel=0.02)
    # with three such rows it is not fitted, and calibrate says why, printed and in the file
    shapes["matmul"] = [*level2[:3], *packed]
    assert "gemv_fraction.fp32" not in _fitted(registry, tmp_path, shapes, monkeypatch)
    result = _run(tmp_path / "toy.calibration.csv", tmp_path / "toy.json", "--no-grouped-cv")
    why = (
        "gemv_fraction.fp32 is not fitted: only 3 fp32 GEMVs (M or N of 1, or A too short to "
        "pack) are bound by a tier beyond the l1 (4 needed); fp32 GEMVs keep the spec's 1 of "
        "each tier's rate beyond the l1: add GEMVs whose matrix outgrows the l1"
    )
    assert f"warning: {why}" in " ".join(result.output.split())
    found = json.loads((tmp_path / "toy.json").read_text())["fit"]["diagnostics"]
    assert {"kind": "not_fitted", "subject": "gemv_fraction.fp32", "message": why} in found
    # nor without the streams that pin the tiers, which the products' share needs too
    shapes = {"vector_add": streams[:3], "matmul": [*level2, *packed], "linear": packed}
    assert "gemv_fraction.fp32" not in _fitted(registry, tmp_path, shapes, monkeypatch)
    result = _run(tmp_path / "toy.calibration.csv", tmp_path / "toy.json", "--no-grouped-cv")
    assert "gemv_fraction.fp32 is not fitted: the fp32 products' share of the tiers is not " in (
        " ".join(result.output.split())
    )
    # nor with four small ones (matrices of 64-256 KiB) no tier beyond the L1 bounds
    small = [[1, 128, 128], [1, 256, 256], [2, 128, 256], [128, 256, 1]]
    shapes["matmul"] = [*small, *level2[:3], *packed]
    assert "gemv_fraction.fp32" not in _fitted(registry, tmp_path, shapes, monkeypatch)


def test_a_narrow_kernels_share_is_recovered_where_rows_have_a_narrow_n(
    make_target, installed, tmp_path, monkeypatch
):
    def toy(share: float):
        return make_target(
            "toy",
            accumulator_lanes={"fp32": estimated(16, "t")},
            narrow_n_columns={"fp32": estimated(11, "t")},
            narrow_n_fraction={"fp32": estimated(share, "t")},
        )

    registry = installed(toy(0.37), toy(0.3))
    narrow = [[512, 512, 4], [2048, 256, 8], [1024, 1024, 3]]
    monkeypatch.setitem(SHAPES, "matmul", [*SHAPES["matmul"], *narrow])
    base = _write(tmp_path / "toy.calibration.csv", registry, "silicon")
    out = tmp_path / "toy.json"
    share = _calibrate(base, out, "--no-grouped-cv")["narrow_n_fraction.fp32"]
    assert share["value"] == pytest.approx(0.3, rel=0.02)
    assert share["from"].startswith("3 fp32 matmul/linear rows of a narrow N")
    # with two such rows it is not fitted: the spec's share stays
    monkeypatch.setitem(SHAPES, "matmul", [*SHAPES["matmul"][:-1]])
    fewer = _write(tmp_path / "fewer.calibration.csv", registry, "silicon")
    assert "narrow_n_fraction.fp32" not in _calibrate(fewer, out, "--no-grouped-cv")


def test_a_linear_s_own_narrow_share_is_recovered_apart_from_the_matmul_s(
    make_target, installed, tmp_path, monkeypatch
):
    """MKL's fp32 on the AMD hosts: a matmul's narrow kernel and a linear's
    (dot products, four of the weight's rows a pass) each at its own share,
    each fitted from its own rows."""

    def toy(matmul_share: float, linear_share: float):
        return make_target(
            "toy",
            accumulator_lanes={"fp32": estimated(16, "t")},
            narrow_n_columns={"fp32": estimated(11, "t")},
            narrow_n_fraction={"fp32": estimated(matmul_share, "t")},
            transposed_narrow_n_columns={"fp32": estimated(15, "t")},
            transposed_narrow_n_group={"fp32": estimated(4, "t")},
            transposed_narrow_n_fraction={"fp32": estimated(linear_share, "t")},
        )

    registry = installed(toy(0.37, 0.6), toy(0.3, 0.45))
    narrow = [[512, 512, 4], [2048, 256, 8], [1024, 1024, 3]]
    monkeypatch.setitem(SHAPES, "matmul", [*SHAPES["matmul"], *narrow])
    monkeypatch.setitem(SHAPES, "linear", [*SHAPES["linear"], *narrow, [1024, 512, 13]])
    base = _write(tmp_path / "toy.calibration.csv", registry, "silicon")
    out = tmp_path / "toy.json"
    constants = _calibrate(base, out, "--no-grouped-cv")
    matmul = constants["narrow_n_fraction.fp32"]
    linear = constants["transposed_narrow_n_fraction.fp32"]
    assert matmul["value"] == pytest.approx(0.3, rel=0.02)
    assert matmul["from"].startswith("3 fp32 matmul rows of a narrow N")  # not the linears
    assert linear["value"] == pytest.approx(0.45, rel=0.02)
    assert linear["from"].startswith("4 fp32 linear rows of a narrow N")
    # with two such linears it is not fitted: the spec's share stays
    monkeypatch.setitem(SHAPES, "linear", [*SHAPES["linear"][:-2]])
    fewer = _write(tmp_path / "fewer.calibration.csv", registry, "silicon")
    assert "transposed_narrow_n_fraction.fp32" not in _calibrate(fewer, out, "--no-grouped-cv")


#: launch-bound products of both dtypes, matmul (writes C) and linear (accumulates onto its bias)
CALL_SHAPES = [[1, 128, 128], [4, 128, 128], [24, 24, 24], [48, 48, 48], [2, 64, 200]]


def _call_rows(linears=CALL_SHAPES):
    return [
        *[("matmul", d, dims) for d in ("fp32", "bf16") for dims in CALL_SHAPES],
        *[("linear", d, dims) for d in ("fp32", "bf16") for dims in linears],
        *[("matmul", d, [512, 512, 512]) for d in ("fp32", "bf16")],
        *SMALL_ADDS,
    ]


def test_an_accumulating_call_is_fitted_beside_the_dtype_s_dispatch(fresh_registry, tmp_path):
    """oneDNN's bf16 call that accumulates onto C costs 4 us more than one
    that writes it: where the spec gives bf16 an ``accumulate_overhead_s``
    and the rows hold three or more launch-bound products of each kind, the
    fit recovers it beside the dispatch; fp32, which the spec gives none,
    pays its dispatch for both; with two linears the overhead keeps the
    spec's value on top of the fitted dispatch."""
    start = {"accumulate_overhead_s": {"bf16": estimated(1e-6, "the bench")}}
    silicon = {
        "dispatch_overhead_s": {"fp32": estimated(1.3e-6, "t"), "bf16": estimated(15e-6, "t")},
        "accumulate_overhead_s": {"bf16": estimated(4e-6, "t")},
    }
    registry = fresh_registry(start, silicon)
    base = _write_rows(tmp_path / "toy.calibration.csv", registry, _call_rows())
    out = tmp_path / "toy.json"
    constants = _calibrate(base, out)
    assert constants["accumulate_overhead_s.bf16"]["value"] == pytest.approx(4e-6, rel=0.02)
    assert constants["dispatch_overhead_s.bf16"]["value"] == pytest.approx(15e-6, rel=0.02)
    assert "accumulate_overhead_s.fp32" not in constants
    assert constants["accumulate_overhead_s.bf16"]["from"] == (
        "5 launch-bound bf16 products that accumulate onto C (linear) beside 5 that write it"
    )
    spec = apply_file(build_registry().datasheet_target("toy"), json.loads(out.read_text()), "c")
    assert spec.dispatch_for("bf16", True) == pytest.approx(19e-6, rel=0.02)
    # two linears a dtype: the two calls would trade, so bf16 keeps the spec's overhead
    base = _write_rows(tmp_path / "two.calibration.csv", registry, _call_rows(CALL_SHAPES[:2]))
    result = _run(base, tmp_path / "two.json")
    constants = json.loads((tmp_path / "two.json").read_text())["constants"]
    assert "accumulate_overhead_s.bf16" not in constants
    assert "dispatch_overhead_s.bf16" in constants
    # one dtype, products alone: the launch is their call
    bf16 = [r for r in _call_rows() if r[1] == "bf16" and r[0] != "vector_add"]
    base = _write_rows(tmp_path / "bf16.calibration.csv", registry, bf16)
    alone = _calibrate(base, tmp_path / "bf16.json")
    assert "dispatch_overhead_s.bf16" not in alone and "launch_overhead_s" in alone
    assert "accumulate_overhead_s.bf16" in alone  # fitted beside the launch, not left out
    assert (
        "accumulate_overhead_s.bf16 is not fitted: 2 launch-bound bf16 products accumulate "
        "onto C (linear) and 5 write it (3 of each needed); it keeps the spec's 1 us on "
        "top of the dtype's call" in " ".join(result.output.split())
    ), result.output


def _accumulate_file(name, value):
    return {
        "target": "host_amd_epyc_zen4_2c_1t",
        "provenance": {"sources": [], "graphsval_version": "0"},
        "constants": {name: {"value": value}},
    }


def test_a_calibration_file_applies_an_accumulating_overhead_only_where_the_spec_has_one():
    """The Zen 4's spec gives oneDNN's bf16 an accumulating overhead: a file
    may calibrate it, not add one for fp32 (MKL's call has none), nor give
    it a negative value; targets shows it right after the dtype's dispatch."""
    spec = build_registry().datasheet_target("host_amd_epyc_zen4_2c_1t")
    applied = apply_file(spec, _accumulate_file("accumulate_overhead_s.bf16", 4e-6), "c.json")
    assert applied.accumulate_overhead_s == {"bf16": 4e-6}
    with pytest.raises(CalibrationFileError, match=r"^c.json: constants.accumulate_overh\w*.fp32"):
        apply_file(spec, _accumulate_file("accumulate_overhead_s.fp32", 4e-6), "c.json")
    with pytest.raises(CalibrationFileError, match=r"^c.json: constants.accumulate_overh\w*.bf16"):
        apply_file(spec, _accumulate_file("accumulate_overhead_s.bf16", -1e-6), "c.json")
    shown = CliRunner().invoke(cli, ["targets", "--hw", "host_amd_epyc_zen4_2c_1t"]).output
    lines = [line.split("  ")[0] for line in shown.splitlines() if line.startswith("dispatch ")]
    assert lines.index("dispatch bf16, accumulating") == lines.index("dispatch bf16") + 1
