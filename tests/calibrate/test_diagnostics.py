"""Calibration diagnostics: constants at a bound or floor, constants the rows
cannot identify, a thread count other than the spec's, and copies of one row
refused (through the workflow, the command line and the file)."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
from attrs import evolve
from click.testing import CliRunner

from graphsval_core.calibrate.diagnostics import (
    diagnose,
    energy_at_floor,
    latency_at_bounds,
    share_not_fitted,
    slow_caches,
    thread_mismatch,
    unidentified,
)
from graphsval_core.calibrate.energy import ALL_TIERS_PER_BYTE, EnergyFit
from graphsval_core.calibrate.fit import Fit
from graphsval_core.calibrate.params import STREAM_ROWS, Param, ShareGate
from graphsval_core.calibrate.workflow import CalibrateOptions, calibrate
from graphsval_core.cli.main import cli
from graphsval_core.datamodel.errors import UserInputError
from graphsval_core.datamodel.provenance import datasheet, estimated
from graphsval_core.files.baseline import BaselineRow
from graphsval_core.model.predict import predict_batch
from graphsval_core.plugins.loader import build_registry

HEADER = ["hardware", "op", "shape", "dtype", "latency_s", "energy_j", "trial_count", "notes"]
SHAPES = {
    "vector_add": [[300], [700], [1500], [130_000], [210_000], [1_100_000], [4_700_000]],
    "matmul": [[520, 520, 520], [776, 776, 776], [1040, 1040, 1040], [1300, 700, 900]],
}


def _run(*args):
    return CliRunner().invoke(
        cli, ["calibrate", "--hw", "toy", "--no-loo", "--no-grouped-cv", *args]
    )


def _rewrite(path, out, change):
    """``path`` rewritten to ``out``, each row (header first) passed through ``change``."""
    with path.open(newline="") as handle:
        rows = list(csv.reader(handle))
    with out.open("w", newline="") as handle:
        csv.writer(handle).writerows(change(i, r) for i, r in enumerate(rows))
    return out


def _warnings(output):
    """The ``warning:`` lines printed above ``fit quality``, unindented."""
    head = output.split("fit quality")[0]
    return [line.strip() for line in head.splitlines() if line.strip().startswith("warning:")]


# -- copies of one row ------------------------------------------------------------------


def test_copies_of_one_row_are_refused_in_one_line_with_exit_2(setup, tmp_path):
    base = setup("toy.calibration.csv")
    lines = base.read_text().splitlines()
    copies = []
    header, last = lines[0].split(","), lines[-1].split(",")
    at = header.index("latency_s")
    for n in range(4):  # one shape (matmul 1300x700x900) measured four times, in four files
        copies.append(tmp_path / f"copy{n}.calibration.csv")
        again = list(last)
        again[at] = repr(float(last[at]) * (1 + 0.01 * n))  # four measurements, not copies
        copies[-1].write_text("\n".join([lines[0], ",".join(again)]) + "\n")
    out = tmp_path / "copies.json"
    result = _run(*[a for c in copies for a in ("--baseline", str(c))], "--out", str(out))
    assert result.exit_code == 2, result.output
    message = [line for line in result.output.splitlines() if line.strip()]
    assert len(message) == 1 and "Traceback" not in result.output
    # each file's a measurement of the shape again: refused as within one file
    assert message[0].endswith(
        f"{copies[1]}:2: toy matmul 1300x700x900 fp32 was measured in {copies[0]}:2 already, "
        "with other values; keep one row per shape"
    )
    assert not out.exists()
    with pytest.raises(UserInputError, match="keep one row per shape"):
        options = CalibrateOptions(
            "toy", tuple(str(c) for c in copies), out=str(out), leave_one_out=False
        )
        calibrate(build_registry(), options)
    # rows of fewer shapes than free constants, however they came: one line
    from graphsval_core.calibrate.diagnostics import require_distinct_rows
    from graphsval_core.calibrate.params import choose_params
    from graphsval_core.files.baseline import read_baseline_file

    registry = build_registry()
    spec = registry.datasheet_target("toy")
    rows = [read_baseline_file(str(c))[0].rows[0] for c in copies]
    with pytest.raises(UserInputError) as few:
        require_distinct_rows(spec, rows, choose_params(registry, spec, rows))
    assert str(few.value).startswith(
        "4 usable toy rows but only 1 distinct (op, shape, dtype); the fit has 2 free "
        "latency constants (launch_overhead_s, compute_fraction.fp32) and needs at least 2 "
        "distinct rows: add rows of other shapes"
    )


def test_one_measurement_in_several_files_counts_once(setup, tmp_path):
    """The same row in four files (copies, not measurements) is read once,
    said for each copy; one row then fits nothing."""
    base = setup("toy.calibration.csv")
    lines = base.read_text().splitlines()
    copies = [tmp_path / f"copy{n}.calibration.csv" for n in range(3)]
    for copy in copies:
        copy.write_text("\n".join([lines[0], lines[-1]]) + "\n")
    # one more with a column of the user's own and no suffix: a copy still (from the newcomer)
    copies.append(tmp_path / "mine.csv")
    copies[-1].write_text("\n".join([lines[0] + ",my_note", lines[-1] + ",x"]) + "\n")
    result = _run(
        *[a for c in copies for a in ("--baseline", str(c))], "--out", str(tmp_path / "c.json")
    )
    assert result.exit_code == 2, result.output
    assert result.stderr.count("measurements again; read once") == 3
    assert "1 usable toy rows in the given baselines" in result.stderr


def test_copies_of_one_row_in_one_file_count_once(setup, tmp_path):
    base = setup("toy.calibration.csv")
    lines = base.read_text().splitlines()
    one = tmp_path / "copies.calibration.csv"
    one.write_text("\n".join([lines[0]] + [lines[-1]] * 20) + "\n")  # 20 x matmul 1300x700x900
    result = _run("--baseline", str(one), "--out", str(tmp_path / "copies.json"))
    assert result.exit_code == 2, result.output
    assert "19 row(s) repeat an earlier row exactly" in result.stderr
    assert "1 usable toy rows in the given baselines" in result.stderr


def test_duplicates_count_once_but_do_not_refuse_enough_distinct_rows(setup, tmp_path):
    base = setup("toy.calibration.csv")
    lines = base.read_text().splitlines()
    twice = tmp_path / "twice.calibration.csv"
    twice.write_text("\n".join([lines[0]] + lines[1:] * 2) + "\n")  # 14 distinct, 28 rows
    result = _run("--baseline", str(twice), "--out", str(tmp_path / "twice.json"))
    assert result.exit_code == 0, result.output
    assert "14 rows" in result.stdout.splitlines()[0]
    assert "14 row(s) repeat an earlier row exactly" in result.stderr


# -- a constant at a bound of its range -------------------------------------------------


@pytest.fixture
def fast_silicon(make_target, make_tier, make_plugin, fake_entry_points, make_entry_point):
    """``toy`` (spec: half its datasheet peak achievable) and rows of a silicon that
    computes faster than that peak: the compute fraction can only reach its bound.
    Returns a writer ``write(path)`` of the rows."""

    def target(key, peak, fraction):
        return make_target(
            key,
            peak_ops_per_s={"fp32": datasheet(peak, "t")},
            compute_fraction={"fp32": estimated(fraction, "t")},
            launch_overhead_s=estimated(3.1e-6, "t"),
            tiers=[
                make_tier("l1", 32 * 1024, achievable_fraction=estimated(0.7, "t")),
                make_tier("l2", 2**20, achievable_fraction=estimated(0.55, "t")),
                make_tier("dram", 2**34, is_per_unit=False, num_units=1),
            ],
        )

    model = target("toy", 256e9, 0.5)
    plugin = make_plugin("toy", lambda: [model])
    fake_entry_points(make_entry_point("toy", lambda: plugin, "graphsval-toy"))
    silicon = evolve(target("silicon", 512e9, 0.62), key="silicon")  # 317 GFLOP/s > 256
    registry = build_registry(
        extra_plugins=[("s", make_plugin("s", lambda: [silicon]))], plugin_args=["no:toy"]
    )

    def write(path):
        with path.open("w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(HEADER)
            for op, shapes in SHAPES.items():
                truth = predict_batch(registry, "silicon", op, np.array(shapes), "fp32")
                for dims, lat in zip(shapes, truth.latency_s, strict=True):
                    shape = "x".join(map(str, dims))
                    writer.writerow(["toy", op, shape, "fp32", f"{lat:.9e}", "", 11, ""])
        return path

    return write


def test_a_constant_at_its_bound_is_warned_and_recorded(fast_silicon, tmp_path):
    base = fast_silicon(tmp_path / "fast.calibration.csv")
    out = tmp_path / "fast.json"
    result = _run("--baseline", str(base), "--out", str(out))
    assert result.exit_code == 0, result.output
    line = (
        "warning: compute_fraction.fp32 sits at the upper bound of its range (1, the spec's "
        "full peak): the fit presses it against its range (the rows may ask for more); its "
        "value is a bound, not a measurement"
    )
    assert line in _warnings(result.output)  # under the constants, above "fit quality"
    data = json.loads(out.read_text())
    assert data["constants"]["compute_fraction.fp32"]["value"] == pytest.approx(1.0, rel=0.01)
    assert data["constants"]["compute_fraction.fp32"]["at_bound"] == "upper"
    assert "at_bound" not in data["constants"]["launch_overhead_s"]
    assert {
        "kind": "at_bound",
        "subject": "compute_fraction.fp32",
        "message": line.removeprefix("warning: "),
        "bound": "upper",
    } in data["fit"]["diagnostics"]


def _param(name, lower=1e-8, upper=1e-2, exercised_by="14 rows"):
    return Param(name, 2e-6, lower, upper, exercised_by)


def _fit(values, params, uncertainty=None, **kw):
    unc = uncertainty or {p.name: 0.05 for p in params}
    return Fit(values, unc, np.zeros(0), params, [], **kw)


def test_the_bound_is_within_one_percent_in_log_terms(make_target):
    spec = make_target("toy")
    launch, fork, fraction = (
        _param("launch_overhead_s"),
        _param("fork_join_s", 1e-8, 1e-3),
        _param("compute_fraction.fp32", 1e-3, 1.0),
    )
    params = [launch, fork, fraction]
    near = _fit(
        {
            "launch_overhead_s": 1e-8 * 1.009,
            "fork_join_s": 1e-3 / 1.005,
            "compute_fraction.fp32": 1,
        },
        params,
    )
    found = {d.subject: d for d in latency_at_bounds(spec, near)}
    assert found["launch_overhead_s"].bound == "lower"
    assert "lower bound of its range (1e-08 s)" in found["launch_overhead_s"].line
    assert "(the rows may ask for less)" in found["launch_overhead_s"].line
    assert found["fork_join_s"].bound == "upper"
    assert "(1, the spec's full peak)" in found["compute_fraction.fp32"].line
    clear = _fit(
        {
            "launch_overhead_s": 1e-8 * 1.011,
            "fork_join_s": 1e-3 / 1.02,
            "compute_fraction.fp32": 0.9,
        },
        params,
    )
    assert latency_at_bounds(spec, clear) == []
    held = _fit({"compute_fraction.fp32": 1.0}, [fraction], held={"compute_fraction.fp32": "x"})
    assert latency_at_bounds(spec, held) == []  # not fitted: no bound to sit at


def test_a_packing_rate_at_its_ceiling_says_the_reads_of_b_took_it_all(make_target):
    spec = make_target("toy")
    pack = Param("pack_bps.fp32", 2e10, 1e8, 1e13, "22 fp32 matmul/linear rows")
    (top,) = latency_at_bounds(spec, _fit({"pack_bps.fp32": 1e13}, [pack]))
    assert top.bound == "upper"
    assert "the reading of B from the tier that holds it" in top.line
    assert "may ask for" not in top.line
    (bottom,) = latency_at_bounds(spec, _fit({"pack_bps.fp32": 1e8}, [pack]))
    assert "(the rows may ask for less)" in bottom.line  # a slow copy is the rows' own ask


# -- a cache slower than main memory allows ---------------------------------------------


def test_a_cache_fitted_slower_than_twice_main_memory_is_warned(make_target):
    spec = make_target("toy")  # l2 500 GB/s nominal, dram 50 GB/s peak
    name = "tiers.l2.achievable_fraction"
    l2 = Param(name, 1.0, 1e-3, 1.0, "5 matmul/linear rows")
    slow = _fit({name: 0.1}, [l2])  # 50 GB/s: no faster than the DRAM
    [found] = slow_caches(spec, slow)
    assert found.kind == "slow_cache" and found.subject == name
    assert "l2 is fitted at 50 GB/s (0.1 of its 500 GB/s nominal)" in found.line
    assert "under 2x dram's 50 GB/s peak" in found.line
    assert found in diagnose(spec, slow, EnergyFit(rows=0))
    # 2.2 x the DRAM's peak is a plausible cache; the DRAM itself is never judged
    fine = _fit({name: 0.22, "tiers.dram.achievable_fraction": 0.01}, [l2])
    assert slow_caches(spec, fine) == []
    held = _fit({name: 0.1}, [l2], held={name: "held at the fitted l1 bandwidth"})
    assert "l2 is held at 50 GB/s" in slow_caches(spec, held)[0].line
    assert slow_caches(spec, _fit({}, [l2])) == []  # not fitted: the spec's value stands


def test_a_products_share_that_makes_its_cache_slower_than_the_next_is_warned(make_target):
    spec = make_target("toy")  # l2 500 GB/s nominal, dram 50 GB/s peak
    name = "tiers.l2.product_fraction"
    share = Param(name, 1.0, 1e-2, 1.0, "5 matmul/linear rows")
    [found] = slow_caches(spec, _fit({name: 0.05}, [share]))  # 25 GB/s against 50
    assert found.kind == "slow_cache" and found.subject == name
    assert found.line.startswith(
        "warning: l2 gives a matrix product 25 GB/s (0.05 of its 500 GB/s for a stream, "
        "before the library's share), less than dram's 50 GB/s"
    ), found.line
    assert slow_caches(spec, _fit({name: 0.2}, [share])) == []  # 100 GB/s: a cache still


def test_the_i7_calibration_says_its_l2_is_not_an_l2():
    registry = build_registry()
    spec = registry.datasheet_target("i7_12700k")
    name = "tiers.l2.achievable_fraction"
    fit = _fit({name: 0.039}, [Param(name, 1.0, 1e-3, 1.0, "5 matmul/linear rows")])
    [found] = slow_caches(spec, fit)
    assert "l2 is fitted at 103 GB/s (0.039 of its 2.64 TB/s nominal)" in found.line
    assert "dram's 76.8 GB/s peak" in found.line


# -- a bandwidth share left unfitted ----------------------------------------------------


def test_an_unfitted_bandwidth_share_says_why(make_target):
    spec = make_target("toy")
    few = ShareGate(streams=3, products={"fp32": 10, "bf16": 4, "int8": 0})
    [found] = share_not_fitted(spec, few)  # one line for every dtype the streams leave out
    assert found.kind == "not_fitted" and found.subject == "product_bandwidth_fraction"
    assert found.line.startswith("warning: product_bandwidth_fraction.fp32/bf16 is not fitted")
    assert f"3 vector_add rows bound by a memory tier, {STREAM_ROWS} needed" in found.line
    assert "(10 fp32, 4 bf16 such rows)" in found.line and "int8" not in found.line
    # enough streams, but a dtype with one bound product row: that dtype alone
    one = ShareGate(streams=STREAM_ROWS, products={"fp32": 5, "bf16": 1})
    [found] = share_not_fitted(spec, one)
    assert found.subject == "product_bandwidth_fraction.bf16"
    assert "only 1 bf16 matmul/linear row is bound by a memory tier (2 needed)" in found.line
    assert "keep 1 of each tier's rate" in found.line
    # fitted everywhere, no product row bound, or no gate: nothing to say
    assert share_not_fitted(spec, ShareGate(STREAM_ROWS, {"fp32": 2})) == []
    assert share_not_fitted(spec, ShareGate(0, {"fp32": 0})) == []
    assert share_not_fitted(spec, None) == []
    assert share_not_fitted(spec, one)[0] in diagnose(
        spec, _fit({}, []), EnergyFit(rows=0), gate=one
    )


# -- energy coefficients at their floor -------------------------------------------------


def test_energy_coefficients_at_their_floor_are_warned(make_target):
    spec = make_target("toy")
    energy = EnergyFit(rows=30, at_floor=("energy_per_op_j.fp32", ALL_TIERS_PER_BYTE))
    lines = [d.line for d in energy_at_floor(spec, energy)]
    assert lines == [
        "warning: energy_per_op_j.fp32 sits at its floor (0.1 x the datasheet): the rows "
        "leave it no share beside idle power; its value is a bound, not a measurement",
        "warning: energy_per_byte_j of every tier (tiers.l1, tiers.l2, tiers.dram: one scale) "
        "sits at its floor (0.1 x the datasheet): the rows leave it no share beside idle "
        "power; its value is a bound, not a measurement",
    ]
    assert energy_at_floor(spec, EnergyFit(rows=30)) == []
    idle = energy_at_floor(
        spec, EnergyFit(rows=30, at_floor=("energy_per_op_j.fp32", "idle_power_w"))
    )
    assert "beside the other terms" in idle[0].line
    assert "beside the per-op and per-byte energy" in idle[1].line


def test_energy_at_its_floor_is_printed_and_recorded(setup, tmp_path):
    base = setup("toy.calibration.csv")
    # static power alone (40 W x latency), every window long enough
    watts = _rewrite(
        base,
        tmp_path / "watts.calibration.csv",
        lambda i, r: r if i == 0 else [*r[:5], f"{40 * float(r[4]):.9e}", "100000", r[7]],
    )
    out = tmp_path / "watts.json"
    result = _run("--baseline", str(watts), "--out", str(out))
    assert result.exit_code == 0, result.output
    shown = _warnings(result.output)
    assert any(line.startswith("warning: energy_per_op_j.fp32 sits at its floor") for line in shown)
    data = json.loads(out.read_text())
    assert data["constants"]["energy_per_op_j.fp32"]["at_bound"] == "floor"
    assert data["constants"]["tiers.dram.energy_per_byte_j"]["at_bound"] == "floor"
    assert "at_bound" not in data["constants"]["idle_power_w"]
    kinds = [(d["kind"], d["subject"]) for d in data["fit"]["diagnostics"]]
    assert ("at_floor", "energy_per_op_j.fp32") in kinds
    assert ("at_floor", ALL_TIERS_PER_BYTE) in kinds


# -- constants the rows cannot identify -------------------------------------------------


def test_a_huge_uncertainty_and_an_unmoved_constant_are_warned():
    capacity = _param("tiers.l3.usable_capacity_bytes", 49152, 5e8, "rows that straddle l3")
    launch = _param("launch_overhead_s")
    fit = _fit(
        {"tiers.l3.usable_capacity_bytes": 1.5e8, "launch_overhead_s": 2e-6},
        [capacity, launch, _param("pack_bps", 1e8, 1e13)],
        {"tiers.l3.usable_capacity_bytes": 15.2, "launch_overhead_s": 0.99, "pack_bps": np.inf},
        not_identifiable=["pack_bps"],
    )
    found = unidentified(fit)
    assert [(d.kind, d.subject) for d in found] == [
        ("uncertain", "tiers.l3.usable_capacity_bytes"),
        ("not_identifiable", "pack_bps"),
    ]
    assert found[0].line == (
        "warning: tiers.l3.usable_capacity_bytes is not identified by these rows: relative "
        "uncertainty over 1000% (above 100%), so its value means little; it rests on rows "
        "that straddle l3: add rows of that kind"
    )  # 1520%, said as targets --hw says it
    fit.uncertainty["tiers.l3.usable_capacity_bytes"] = 5.0
    assert "relative uncertainty 500% (above 100%)" in unidentified(fit)[0].line
    assert found[1].line == (
        "warning: pack_bps is not identifiable from these rows (they do not move it): "
        "the spec's value stays"
    )


def test_a_products_overlap_at_zero_is_the_physical_limit_and_judged_by_its_spread(make_target):
    spec = make_target("toy")
    overlap = Param("product_overlap.fp32", 1.0, 1e-2, 1.0, "114 fp32 matmul/linear rows")
    # at its floor: nothing hidden, which is physics, not a range the fit presses
    pinned = _fit({"product_overlap.fp32": 0.01}, [overlap], {"product_overlap.fp32": 22.3})
    (bottom,) = latency_at_bounds(spec, pinned)
    assert bottom.bound == "lower" and "0 is the physical limit" in bottom.line
    assert "may ask for" not in bottom.line
    # a relative uncertainty of 2230% at 0.01 is a spread of 0.22: identified
    assert unidentified(pinned) == []
    (top,) = latency_at_bounds(spec, _fit({"product_overlap.fp32": 1.0}, [overlap]))
    assert "1 is the physical limit" in top.line and "may ask for" not in top.line
    loose = _fit({"product_overlap.fp32": 0.5}, [overlap], {"product_overlap.fp32": 0.8})
    (found,) = unidentified(loose)
    assert found.subject == "product_overlap.fp32"
    assert "0.5 +- 0.4 (above +- 0.25 of a share from 0 to 1)" in found.line
    # a spread beyond the whole range is said as targets --hw says it
    wide = _fit({"product_overlap.fp32": 0.5}, [overlap], {"product_overlap.fp32": 2.5})
    assert "0.5 +- over 1 (above" in unidentified(wide)[0].line


def test_the_first_line_counts_the_constants_written_and_says_which_stayed(tmp_path):
    from graphsval_core.plugins.resources import packaged_files

    files = []
    for path in packaged_files("graphsval_cpu", "baselines", ".calibration.csv"):
        if path.name.startswith("host_intel_xeon_2c_1t_"):  # a few rows of each op
            lines = path.read_text().splitlines()
            files.append(tmp_path / path.name)
            # 60 rows each: none moves bf16's compute fraction (AMX's peak), as in the
            # shipped fit (50 each left the fp32 add's rate unmoved until session 65's
            # accumulating call moved the fit's path: a structural one is kept)
            files[-1].write_text("\n".join(lines[:61]) + "\n")
    out = tmp_path / "c.json"
    args = ["calibrate", "--hw", "host_intel_xeon_2c_1t", "--no-loo", "--no-grouped-cv"]
    args += [x for f in files for x in ("--baseline", str(f))]
    result = CliRunner().invoke(cli, [*args, "--out", str(out)])
    assert result.exit_code == 0, result.output
    written = json.loads(out.read_text())["constants"]
    latency = [n for n in written if not n.startswith(("energy_", "idle_")) and ".energy" not in n]
    first = result.output.splitlines()[0]
    stayed = result.output.count("is not identifiable from these rows")
    assert stayed > 0  # these rows leave some constants unmoved
    assert "compute_fraction.bf16 is not identifiable from these rows" in result.output
    assert first.startswith(
        f"wrote {out}: {len(latency)} latency constants ({stayed} more not identifiable, "
        "left at the spec's) from 180 rows"
    ), first


# -- thread count -----------------------------------------------------------------------


def _with_threads(base, out, threads):
    return _rewrite(base, out, lambda i, r: [*r, "threads" if i == 0 else threads])


def test_rows_on_another_thread_count_than_the_spec_are_warned(setup, tmp_path):
    base = setup("toy.calibration.csv")
    one = _with_threads(base, tmp_path / "one.calibration.csv", "1")
    result = _run("--baseline", str(one), "--out", str(tmp_path / "one.json"))
    assert result.exit_code == 0, result.output
    line = (
        f"warning: the rows of {one} ran on 1 thread, but toy has 4 compute units: the "
        "fitted constants describe the run measured, not the machine the spec describes"
    )
    assert line in _warnings(result.output)
    data = json.loads((tmp_path / "one.json").read_text())
    assert [d["kind"] for d in data["fit"]["diagnostics"]].count("threads") == 1
    four = _with_threads(base, tmp_path / "four.calibration.csv", "4")
    options = CalibrateOptions("toy", (str(four),), out=str(tmp_path / "four.json"))
    matched = calibrate(build_registry(), evolve(options, leave_one_out=False, grouped_cv=False))
    assert [d for d in matched.diagnostics if d.kind == "threads"] == []


def _row(line, threads):
    extras = {} if threads is None else {"threads": threads}
    return BaselineRow(
        line, "toy", "vector_add", "300", (300,), "fp32", 1e-6, None, 11, "", None, extras
    )


def test_the_thread_line_names_each_count_and_its_files(make_target):
    cpu = make_target("toy")  # 4 compute units
    files = [
        ("a.csv", [_row(2, "1"), _row(3, "4")]),
        ("b.csv", [_row(2, "2"), _row(3, None)]),
        ("c.csv", [_row(2, "1"), _row(3, "")]),
    ]
    (found,) = thread_mismatch(cpu, files)
    assert found.line.startswith(
        "warning: the rows of a.csv (1 of its 2 rows), c.csv (1 of its 2 rows) ran on 1 "
        "thread; b.csv (1 of its 2 rows) ran on 2 threads, but toy has 4 compute units"
    )
    every = thread_mismatch(cpu, [("d.csv", [_row(2, "2"), _row(3, "2")])])
    assert every[0].line.startswith("warning: the rows of d.csv ran on 2 threads, but toy")
    assert thread_mismatch(cpu, [("a.csv", [_row(2, "4"), _row(3, None)])]) == []
    gpu = make_target("toy", architecture="gpu")  # its units are SMs, not host threads
    assert thread_mismatch(gpu, files) == []


def test_a_bound_is_said_in_its_constants_unit():
    """A vector rate's bound read "(4e+06 s)": a rate per second, not seconds."""
    from graphsval_core.calibrate.diagnostics import _quantity

    assert _quantity("vector_ops_per_s.bf16", 4e6) == "4e+06 ops/s"
    assert _quantity("launch_overhead_s", 1e-8) == "1e-08 s"
    assert _quantity("dispatch_overhead_s.bf16", 1e-2) == "0.01 s"
    assert _quantity("pack_bps.fp32", 1e8) == "1e+08 B/s"
    assert _quantity("tiers.l3.usable_capacity_bytes", 3e6) == "3e+06 B"


# -- a fit with no scatter left; a baseline that does not say what it is ----------------


def test_a_fit_that_reproduces_its_rows_exactly_says_its_uncertainties_mean_nothing(
    setup, tmp_path
):
    from graphsval_core.calibrate.diagnostics import exact_fit

    # the toy's rows are the model's own latencies: every constant comes back exactly
    base = setup("toy.calibration.csv")
    result = _run("--baseline", str(base), "--out", str(tmp_path / "exact.json"))
    assert result.exit_code == 0, result.output
    (line,) = [w for w in _warnings(result.output) if "exactly" in w]
    assert line.startswith("warning: the fit reproduces its 14 distinct rows exactly")
    assert "no scatter is left to size their uncertainties (+- 0%)" in line
    recorded = json.loads((tmp_path / "exact.json").read_text())["fit"]["diagnostics"]
    assert {"kind": "exact_fit", "subject": "fit", "message": line[len("warning: ") :]} in (
        recorded
    )
    # a median error of 0.2% is scatter enough: nothing to say
    params = [_param("launch_overhead_s")]
    scattered = Fit(
        {"launch_overhead_s": 2e-6},
        {"launch_overhead_s": 0.1},
        np.array([0.002, -0.003, 0.0]),
        params,
        [],
    )
    assert exact_fit(scattered) == []
    exact = Fit({"launch_overhead_s": 2e-6}, {"launch_overhead_s": 0.0}, np.zeros(3), params, [])
    assert [d.kind for d in exact_fit(exact)] == ["exact_fit"]


def test_a_baseline_that_says_nothing_of_its_purpose_is_warned_of(setup, tmp_path):
    named = setup("toy.calibration.csv")
    bare = tmp_path / "toy_rows.csv"
    bare.write_text(named.read_text())
    result = _run("--baseline", str(bare), "--out", str(tmp_path / "bare.json"))
    assert result.exit_code == 0, result.output
    assert (
        f"warning: {bare}: no purpose column or .calibration/.validation suffix: every row "
        "of it is fitted" in result.output
    )
    result = _run("--baseline", str(named), "--out", str(tmp_path / "named.json"))
    assert result.exit_code == 0, result.output
    assert "no purpose column" not in result.output
