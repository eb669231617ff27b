"""graphsval validate: per-regime assertions, drift attribution, reports, floors, exit codes."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from attrs import evolve
from click.testing import CliRunner

from graphsval_core.cli.main import cli
from graphsval_core.datamodel.provenance import datasheet, estimated
from graphsval_core.model.predict import predict_batch
from graphsval_core.plugins.loader import build_registry

HEADER = ["hardware", "op", "shape", "dtype", "latency_s", "energy_j", "trial_count", "notes"]
SHAPES = {
    "vector_add": [
        [256],
        [1000],
        [2000],  # launch_bound
        [150_000],
        [200_000],
        [250_000],  # l2_bound (1.8-3 MB: above l1, in l2)
        [1_000_000],
        [2_000_000],
        [4_000_000],
    ],  # dram_bound
    "matmul": [[512, 512, 512], [768, 768, 768], [1024, 1024, 1024]],  # alu_bound
}


def _toy(make_target, make_tier, **changes):
    """The conftest toy target; ``changes`` perturb it to make the 'silicon'."""
    l2_bw = changes.pop("l2_bw", 5e11)
    tiers = [
        make_tier("l1", 32 * 1024),
        make_tier("l2", 1024 * 1024, peak_bandwidth_bps=datasheet(l2_bw, "t")),
        make_tier(
            "dram",
            16 * 1024**3,
            is_per_unit=False,
            num_units=1,
            peak_bandwidth_bps=datasheet(5e10, "t"),
        ),
    ]
    return make_target("toy", tiers=tiers, **changes)


@pytest.fixture
def world(make_target, make_tier, make_plugin, fake_entry_points, make_entry_point, tmp_path):
    """Install the toy target; return a writer of baselines 'measured' on a drifted toy."""
    model = _toy(make_target, make_tier)
    shipped: list = []
    plugin = make_plugin("toy", lambda: [model], graphsval_baselines=lambda: list(shipped))
    fake_entry_points(make_entry_point("toy", lambda: plugin, "graphsval-toy", "0.1"))

    def write(name="toy.validation.csv", ship=False, **drift):
        silicon = _toy(make_target, make_tier, **drift)
        reg = build_registry(
            extra_plugins=[("silicon", make_plugin("s", lambda: [evolve(silicon, key="silicon")]))],
            plugin_args=["no:toy"],
        )
        path = tmp_path / name
        with path.open("w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(HEADER)
            for op, shapes in SHAPES.items():
                truth = predict_batch(reg, "silicon", op, np.array(shapes), "fp32")
                for dims, latency in zip(shapes, truth.latency_s, strict=True):
                    writer.writerow(
                        ["toy", op, "x".join(map(str, dims)), "fp32", f"{latency:.9e}", "", 11, ""]
                    )
        if ship:  # the toy plugin ships it, as a plugin ships its baselines
            shipped[:] = [path]
        return path

    return write


def _run(*args):
    return CliRunner().invoke(cli, ["validate", *args])


def _cells(result) -> dict[tuple[str, str], str]:
    """``(op, cell label) -> text``; a launch or alu cell's label carries its dtype."""
    data = json.loads(result.output)
    return {
        (t["op"], label): text
        for t in data["summary"]["targets"]
        for label, text in t["cells"].items()
    }


def test_undrifted_silicon_passes_every_cell(world):
    result = _run("--baseline", str(world()), "--format", "json")
    assert result.exit_code == 0, result.output
    cells = _cells(result)
    assert cells == {
        ("vector_add", "launch_bound (fp32)"): "OK 3/3",
        ("vector_add", "l2_bound"): "OK 3/3",
        ("vector_add", "dram_bound"): "OK 3/3",
        ("matmul", "alu_bound (fp32)"): "OK 3/3",
    }


def test_l2_bandwidth_drift_fails_exactly_that_cell(world):
    result = _run("--baseline", str(world(l2_bw=0.7 * 5e11)), "--format", "json")
    assert result.exit_code == 1
    cells = _cells(result)
    assert cells.pop(("vector_add", "l2_bound")) == "FAIL L3 /3"
    assert all(text.startswith("OK") for text in cells.values()), cells
    (drift,) = json.loads(result.output)["summary"]["drift"]
    assert drift["constant"] == "L2 bandwidth" and drift["regime"] == "l2_bound"
    assert drift["change"] == pytest.approx(-0.30, abs=0.01)
    assert drift["model"] == 5e11 and drift["implied"] == pytest.approx(3.5e11, rel=0.01)


def test_peak_flops_drift_is_attributed(world):
    result = _run(
        "--baseline",
        str(world(peak_ops_per_s={"fp32": datasheet(0.7 * 256e9, "t")})),
        "--format",
        "json",
    )
    cells = _cells(result)
    assert cells.pop(("matmul", "alu_bound (fp32)")) == "FAIL L3 /3"
    assert all(text.startswith("OK") for text in cells.values()), cells
    (drift,) = json.loads(result.output)["summary"]["drift"]
    assert drift["constant"] == "achievable peak fp32"
    assert drift["change"] == pytest.approx(-0.30, abs=0.01)


def test_an_adds_alu_cell_is_held_against_the_vector_rate_the_model_used():
    # the host's bf16 add runs at its vector rate (conversions on the vector units), not
    # at the bf16 peak of the AMX tiles: the drift names that rate and its value
    from graphsval_core.plugins.loader import build_registry

    spec = build_registry().target("host_intel_xeon_2c_1t")
    args = ("--hw", "host_intel_xeon_2c_1t", "--op", "vector_add", "--format", "json")
    result = _run(*args, "-v")
    drifts = json.loads(result.output)["summary"]["drift"]
    (alu,) = [d for d in drifts if d["regime"] == "alu_bound" and d.get("dtype") == "bf16"]
    assert alu["constant"] == "vector rate bf16"
    assert alu["model"] == pytest.approx(spec.vector_ops_per_s["bf16"])
    # ops (one an element), in the unit `targets` gives the vector rate, not FLOP/s
    assert alu["unit"] == "OP/s"
    assert "GOP/s" in alu["text"] and "FLOP/s" not in alu["text"]


def test_launch_overhead_drift_is_attributed(world):
    result = _run(
        "--baseline", str(world(launch_overhead_s=estimated(3e-6, "t"))), "--format", "json"
    )
    cells = _cells(result)
    assert cells.pop(("vector_add", "launch_bound (fp32)")) == "FAIL L3 /3"
    assert all(text.startswith("OK") for text in cells.values()), cells
    (drift,) = json.loads(result.output)["summary"]["drift"]
    assert drift["constant"] == "launch overhead"
    assert drift["implied"] == pytest.approx(3e-6, rel=0.02)
    text = _run("--baseline", str(world(launch_overhead_s=estimated(3e-6, "t")))).output
    text = " ".join(text.split())  # the summary wraps its lines at the terminal's width
    assert "launch overhead: model 2 us, measurements imply 3" in text


def test_reports_are_written_whatever_the_outcome(world, tmp_path):
    out = tmp_path / "report"
    result = _run("--baseline", str(world(l2_bw=0.5 * 5e11)), "--out", str(out))
    assert result.exit_code == 1
    for name in ("report.json", "report.md", "records.csv", "report.html"):
        assert (out / name).stat().st_size > 0
    report = json.loads((out / "report.json").read_text())
    assert report["schema_version"] == 2  # a tier cell's drift: the tier's bandwidth
    record = report["records"][0]
    for key in (
        "hardware",
        "op",
        "shape",
        "dtype",
        "regime_predicted",
        "near_boundary",
        "regime_measured",
        "latency_predicted_s",
        "latency_measured_s",
        "energy_predicted_j",
        "energy_measured_j",
        "pass_regime",
        "pass_latency",
        "pass_energy",
        "tolerance_latency",
        "tolerance_energy",
        "binding_tier",
        "explanation",
    ):
        assert key in record
    assert all(r["regime_predicted"] != "ambiguous" for r in report["records"])
    assert "data:image/png;base64," in (out / "report.html").read_text()


def test_v4_file_without_purpose_counts_every_row_with_a_warning(world, tmp_path):
    path = world("plain.csv")
    result = _run("--baseline", str(path))
    text = " ".join(result.output.split())  # the summary wraps its lines
    assert "no purpose column or suffix: every row counts" in text
    assert "12/12 records pass" in result.output


def test_energy_is_skipped_with_a_reason(world):
    result = _run("--baseline", str(world()), "--format", "json")
    records = json.loads(result.output)["records"]
    assert all(r["pass_energy"] is None for r in records)
    assert all(r["energy_skip_reason"].startswith("no energy") for r in records)


def test_excluded_rows_are_listed(world, tmp_path):
    path = world()
    with path.open("a") as handle:
        handle.write("toy,matmul,64x64x64,fp32,,,0,failed: out of memory\n")
    result = _run("--baseline", str(path), "--format", "json")
    (excluded,) = json.loads(result.output)["summary"]["excluded"]
    assert excluded["shape"] == "64x64x64" and excluded["reason"].startswith("capture failed")


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--hw", "nope_target"], "Error: Invalid value for '--hw': unknown target 'nope_target'"),
        (["--op", "conv9d"], "Error: Invalid value for '--op': unknown op 'conv9d'"),
        (["--baseline", "/nonexistent/x.csv"], "cannot read"),
        (["--tolerances", "/nonexistent/t.json"], "cannot read"),
    ],
)
def test_bad_input_exits_2_with_one_line(world, args, fragment):
    result = _run(*args)
    assert result.exit_code == 2
    assert fragment in result.output and "Traceback" not in result.output


def test_empty_explicit_selection_exits_2(world):
    result = _run("--baseline", str(world()), "--op", "linear")
    assert result.exit_code == 2
    assert "matches no baseline rows" in result.output


def test_baseline_for_a_target_that_is_not_installed(world, tmp_path):
    path = tmp_path / "orin.csv"
    path.write_text(",".join(HEADER) + "\njetson_orin_nano_8gb,matmul,64x64x64,fp16,1e-4,,11,\n")
    result = _run("--baseline", str(path))
    assert result.exit_code == 2
    assert "unknown target 'jetson_orin_nano_8gb'" in result.output


def test_no_baselines_installed_is_a_note_and_exit_0(fake_entry_points):
    fake_entry_points()
    result = _run()
    assert result.exit_code == 0
    assert "ship no baselines" in result.output


def test_baselines_of_ops_not_installed_are_named_as_such():
    """Without the built-in ops the shipped baselines are there but hold no
    row of an installed op: the note says so, not that none are shipped."""
    result = CliRunner().invoke(cli, ["-p", "no:builtin_ops", "validate"])
    assert result.exit_code in (0, 1), result.output  # the checks need the ops too
    assert "ship no baselines" not in result.output
    assert "their baselines hold no row of an installed target and op" in result.output


def test_floors_raise_lower_with_reason_and_check(world, tmp_path, monkeypatch):
    floors = tmp_path / "floors.json"
    import graphsval_core.plugins.registry as pm

    monkeypatch.setattr(pm.Registry, "floors_files", lambda self: {"toy": floors})
    world("good.validation.csv", ship=True)
    raised = _run("--update-floors")
    assert "toy/vector_add: floor - -> 9" in raised.output
    assert json.loads(floors.read_text())["floors"]["toy/vector_add"]["pass"] == 9
    world("bad.validation.csv", ship=True, l2_bw=0.5 * 5e11)
    check = _run("--check-floors")
    assert check.exit_code == 1
    assert "toy/vector_add: 6/9 pass, floor 9: FAIL (3 below)" in check.output
    refused = _run("--update-floors")
    assert refused.exit_code == 2 and "needs --reason" in refused.output
    # which floors file holds the floor (from the second newcomer)
    assert f"{floors}: toy/vector_add: 6 passes is below the floor 9" in " ".join(
        refused.output.split()
    )
    # a blank, a zero-width space, an ANSI escape, a Hangul filler, a line separator
    for blank in ("  ", "\u200b", "\x1b[2K", "\u3164", "x\u2028y"):
        said = _run("--update-floors", "--reason", blank)
        assert said.exit_code == 2 and "give a reason in words" in said.output
    alone = _run("--reason", "new L2 data")  # without --update-floors it would do nothing
    assert alone.exit_code == 2 and "give it with --update-floors" in alone.output
    assert json.loads(floors.read_text())["floors"]["toy/vector_add"]["pass"] == 9
    lowered = _run("--update-floors", "--reason", "new L2 data")
    assert lowered.exit_code == 1  # records still fail without --check-floors
    # the floors were just written at these counts: "floors hold" beside FAILED read as a
    # contradiction (from the newcomer)
    said = " ".join(lowered.output.split())
    assert "; floors updated (1 moved)" in said and "floors hold" not in said
    entry = json.loads(floors.read_text())["floors"]["toy/vector_add"]
    assert entry == {"pass": 6, "records": 9, "lowered_from": 9, "reason": "new L2 data"}
    assert _run("--check-floors").exit_code == 0
    before = floors.read_text()
    floors.write_text(before.replace("{", "{ ", 1))  # a layout of the user's own
    kept = _run("--update-floors", "--reason", "nothing to lower")  # no floor falls
    assert floors.read_text() == before.replace("{", "{ ", 1)  # unchanged: not rewritten
    assert "no floor was lowered" in kept.output and "recorded nowhere" in kept.output
    assert "; floors unchanged" in " ".join(kept.output.split())


def test_floors_in_an_installed_package_are_never_written(world, tmp_path, monkeypatch):
    import graphsval_core.plugins.registry as pm
    from graphsval_core.validate import workflow

    floors = tmp_path / "floors.json"
    monkeypatch.setattr(pm.Registry, "floors_files", lambda self: {"toy": floors})
    monkeypatch.setattr(workflow, "in_installed_package", lambda path: True)
    world("good.validation.csv", ship=True)
    refused = _run("--update-floors")
    assert refused.exit_code == 2
    assert "lies in an installed package" in refused.output and "--floors FILE" in refused.output
    assert not floors.exists()
    assert _run("--check-floors").exit_code == 0  # reading them is fine
    named = tmp_path / "mine.json"
    raised = _run("--update-floors", "--floors", str(named))
    assert raised.exit_code == 0, raised.output
    assert f"floors ({named}): toy/vector_add: floor - -> 9" in raised.output
    assert json.loads(named.read_text())["floors"]["toy/vector_add"]["pass"] == 9
    assert not floors.exists()
    assert "floor 9: ok" in _run("--check-floors", "--floors", str(named)).output


def test_a_named_floors_file_must_exist_and_be_a_file(world, tmp_path):
    world("good.validation.csv", ship=True)
    missing = _run("--check-floors", "--floors", str(tmp_path / "typo.json"))
    assert missing.exit_code == 2 and "no such floors file" in missing.output
    folder = _run("--update-floors", "--floors", str(tmp_path))
    assert folder.exit_code == 2 and "Traceback" not in folder.output
    assert f"{tmp_path}" in folder.output


def test_reports_that_cannot_be_written_are_one_line(world, tmp_path):
    taken = tmp_path / "a_file"
    taken.write_text("not a folder")
    result = _run("--baseline", str(world()), "--out", str(taken))
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"--out {taken}: is a file, not a folder" in result.output


def test_json_output_stays_json_with_the_floors(world, tmp_path):
    world("good.validation.csv", ship=True)
    floors = tmp_path / "mine.json"
    result = CliRunner().invoke(
        cli, ["validate", "--format", "json", "--update-floors", "--floors", str(floors)]
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)["summary"]
    assert summary["passed"] == summary["checked"] == 12
    assert "floor - -> 9" in result.stderr


@pytest.mark.parametrize(
    "extra",
    [
        ["--purpose", "calibration"],
        ["--predictor", "reference", "--baseline", "x.csv"],
        ["--tolerances", "t.json"],
    ],
)
def test_floors_are_only_for_the_default_selection(world, extra):
    world("good.validation.csv", ship=True)
    for flag in ("--check-floors", "--update-floors"):
        result = _run(*extra, flag)
        assert result.exit_code == 2
        assert "floors hold for the shipped baselines" in result.output


def test_vendored_real_hardware_files_validate_end_to_end():
    result = _run("--hw", "i7_12700k", "--hw", "jetson_orin_nano_8gb", "--format", "json")
    assert result.exit_code in (0, 1), result.output
    data = json.loads(result.output)
    targets = {(t["hardware"], t["op"]): t for t in data["summary"]["targets"]}
    assert targets[("i7_12700k", "matmul")]["checked"] == 18
    assert targets[("jetson_orin_nano_8gb", "matmul")]["checked"] == 20
    assert all(t["in_sample"] for t in targets.values())  # only calibration rows are shipped
    assert len(data["records"]) == 18 + 18 + 6 + 20 + 18 + 4


def test_rows_a_shipped_calibration_was_fitted_on_are_in_sample():
    """The Intel host's calibration names its three calibration files (by
    their sha256): validating them is in sample, though validation rows of the
    same target exist (before, they read "out of sample"); those validation
    rows stay out of sample; the same file named on the command line is in sample too."""
    args = ("--hw", "host_intel_xeon_2c_1t", "--op", "vector_add", "--format", "json")
    fitted = json.loads(_run("--purpose", "calibration", *args).output)
    assert [t["in_sample"] for t in fitted["summary"]["targets"]] == [True]
    assert all(r["in_sample"] for r in fitted["records"])
    held = json.loads(_run(*args).output)
    assert [t["in_sample"] for t in held["summary"]["targets"]] == [False]
    shipped = Path(__file__).resolve().parents[2] / "plugins/graphsval_cpu/graphsval_cpu"
    named = shipped / "baselines/host_intel_xeon_2c_1t_vector_add.calibration.csv"
    again = json.loads(
        _run("--purpose", "calibration", "--baseline", str(named), "--format", "json").output
    )
    assert [t["in_sample"] for t in again["summary"]["targets"]] == [True]


def test_html_escapes_data(world, tmp_path):
    path = world()
    with path.open("a") as handle:
        handle.write('toy,matmul,64x64x64,fp32,,,0,"failed: <script>alert(1)</script>"\n')
    out = tmp_path / "r"
    _run("--baseline", str(path), "--out", str(out))
    html = (out / "report.html").read_text()
    assert "<script>alert(1)" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_html_report_opens_in_headless_chromium_without_console_errors(world, tmp_path):
    import os
    import shutil
    import subprocess

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is missing under CI (.ci/run installs Debian's chromium)")
        pytest.skip("chromium is not installed")
    out = tmp_path / "r"
    _run("--baseline", str(world(l2_bw=0.5 * 5e11)), "--out", str(out))
    page = (out / "report.html").resolve()
    result = subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--enable-logging=stderr",
            "--v=0",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "graphsval validation report" in result.stdout
    console = [line for line in result.stderr.splitlines() if "CONSOLE" in line]
    assert not console, console


def test_quiet_keeps_one_line_and_says_on_stderr_what_was_not_validated():
    result = CliRunner().invoke(
        cli, ["validate", "-q", "--hw", "h100_sxm5_80gb", "--hw", "i7_12700k"]
    )
    assert result.exit_code in (0, 1), result.output
    assert len(result.stdout.splitlines()) == 1 and "records pass" in result.stdout
    assert "warning: --hw h100_sxm5_80gb: not validated" in result.stderr


def test_quiet_keeps_the_verdict_alone_on_stdout_with_floors(world, tmp_path, monkeypatch):
    """``--update-floors -q`` printed its floor lines beside the verdict:
    under -q they go to stderr, as the data's warnings do."""
    floors = tmp_path / "floors.json"
    import graphsval_core.plugins.registry as pm

    monkeypatch.setattr(pm.Registry, "floors_files", lambda self: {"toy": floors})
    world("good.validation.csv", ship=True)
    result = CliRunner().invoke(cli, ["validate", "--update-floors", "-q"])
    assert result.exit_code == 0, result.output
    (verdict,) = result.stdout.splitlines()
    assert "records pass" in verdict
    assert "toy/vector_add: floor - -> 9" in result.stderr


def test_an_alu_cell_of_both_kernels_gives_each_its_own_rate():
    # the Zen 4's bf16 linears in the alu-bound cell: oneDNN's products at a share of the
    # peak, and 1920x1x2, too small for oneDNN, in PyTorch's own kernel at ~0.1 GFLOP/s;
    # one median over both scales would name whichever record came first
    args = ("--hw", "host_amd_epyc_zen4_2c_1t", "--op", "linear", "--format", "json", "-v")
    drifts = json.loads(_run(*args).output)["summary"]["drift"]
    cell = [d for d in drifts if d["regime"] == "alu_bound" and d.get("dtype") == "bf16"]
    by_name = {d["constant"]: d for d in cell}
    assert set(by_name) == {"achievable peak bf16", "own kernel rate bf16"}
    own, peak = by_name["own kernel rate bf16"], by_name["achievable peak bf16"]
    assert own["model"] < 1e9 < 1e11 < peak["model"]  # each held to its own kernel's rate
    assert own["implied"] < 1e9 < peak["implied"]
    assert own["rows"] + peak["rows"] == int(own["cell"].split("/")[-1])
