"""`graphsval explain` and `graphsval predict`."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from graphsval_core.cli.main import cli
from graphsval_core.datamodel.provenance import estimated

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def toy_cli(fake_entry_points, make_entry_point, make_plugin, make_target):
    spec = make_target("toy", launch_overhead_s=estimated(1e-9, "test"))
    plugin = make_plugin("toy", lambda: [spec])
    fake_entry_points(make_entry_point("toy", lambda: plugin, "graphsval-toy"))

    def run(*args: str):
        return CliRunner().invoke(cli, list(args))

    return run


def test_explain_text(toy_cli):
    result = toy_cli(
        "explain", "--hw", "toy", "--op", "matmul", "--shape", "1x2048x2048", "--dtype", "fp32"
    )
    assert result.exit_code == 0, result.output
    assert "a 1x295 output tile lives in l2" in result.output
    assert "-> dram_bound" in result.output
    assert "Latency " in result.output and "memory" in result.output
    assert "Energy " in result.output and "static" in result.output
    assert "measured: none" in result.output


def test_explain_sets_the_measured_row_beside_the_prediction():
    from click.testing import CliRunner

    from graphsval_core.cli.main import cli

    args = ["explain", "--hw", "jetson_orin_nano_8gb", "--op", "matmul",
            "--shape", "4096x4096x512", "--dtype", "fp16"]  # fmt: skip
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    text = result.output
    assert "graphsval_jetson/baselines/jetson_orin_nano_8gb_matmul.calibration.csv:" in text
    assert str(REPO) not in text  # paths relative to the plugin package, never absolute
    assert "latency" in text and "(inferred)" in text and "%)" in text
    energy = " ".join(text.split("\nEnergy ")[1].split("\n\n")[0].split())  # one paragraph
    assert "compute" in energy and "static" in energy and "%" in energy


@pytest.mark.parametrize("columns", [60, 100])
def test_explain_wraps_its_prose_to_the_width_and_keeps_the_table(monkeypatch, columns):
    monkeypatch.setenv("COLUMNS", str(columns))
    args = ["explain", "--hw", "host_intel_xeon_2c_1t", "--op", "matmul",
            "--shape", "1x736x352", "--dtype", "fp32"]  # fmt: skip
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    wide = [line for line in lines if len(line) > columns]
    # only the measured table's header, which names the baseline file, is wider
    assert all("validation.csv:" in line for line in wide), wide
    assert lines[0].startswith("matmul 1x736x352 fp32 on host_intel_xeon_2c_1t")
    assert lines[1].startswith("  ")  # the explanation hangs under its first line
    for line in filter(None, lines):  # a number keeps its unit: none ends a line
        assert not line.split()[-1].replace(".", "").isdigit(), line
    joined = " ".join(result.output.split())
    assert "streams 982 KiB from l2 at 110 GB/s effective" in joined
    latency = next(line for line in lines if line.startswith("  latency "))
    assert "(+11.7%)" in latency  # a table row stays one line
    header = lines.index(latency) - 1  # and the table's header, its widest, right above
    assert "predicted" in lines[header] and "validation.csv:" in lines[header]
    data = json.loads(CliRunner().invoke(cli, [*args, "--json"]).output)
    assert data["measured"]["latency_s"] > 0 and data["measured"]["line"] > 1
    assert data["measured"]["latency_error"] == pytest.approx(
        (data["latency_s"] - data["measured"]["latency_s"]) / data["measured"]["latency_s"]
    )
    split = data["energy_split"]
    parts = (
        split["compute_j"]
        + split["static_j"]
        + sum(v for k, v in split.items() if k in ("l1_j", "l2_j", "l3_j", "dram_j"))
    )
    assert parts == pytest.approx(split["total_j"])


@pytest.mark.parametrize(
    ("shape", "team"),
    [("1x128x384", "GEMV fork/join fp32"), ("2x128x384", "fork/join"), ("1x128x128", None)],
)
def test_explain_says_what_the_launch_holds_of_the_thread_team(shape, team):
    # the i7: a GEMV above the grain pays MKL's GEMV team, a GEMM the team's, one at
    # the grain (one thread) none
    args = ["explain", "--hw", "i7_12700k", "--op", "linear", "--shape", shape, "--dtype", "fp32"]
    text = " ".join(CliRunner().invoke(cli, args).output.split())
    data = json.loads(CliRunner().invoke(cli, [*args, "--json"]).output)
    if team is None:
        assert "thread team" not in text and "team_s" not in data["details"]
        return
    assert f"wakes and joins the thread team: {team})" in text
    assert data["details"]["team"] == team
    assert 0 < data["details"]["team_s"] < data["terms"]["launch_s"]


def test_explain_json_has_top_level_fields(toy_cli):
    result = toy_cli(
        "explain",
        "--hw",
        "toy",
        "--op",
        "vector_add",
        "--shape",
        "1000000",
        "--dtype",
        "fp32",
        "--json",
    )
    data = json.loads(result.output)
    for key in ("latency_s", "energy_j", "regime", "binding_tier", "explanation", "terms"):
        assert key in data
    assert data["regime"] == "dram_bound" and data["binding_tier"] == "dram"
    terms = data["terms"]
    assert terms["launch_s"] + terms["exposed_compute_s"] + terms["exposed_memory_s"] == (
        pytest.approx(data["latency_s"], rel=1e-15)
    )


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--hw", "nope"], "unknown target 'nope'"),
        (["--op", "conv9d"], "unknown op 'conv9d'"),
        (["--dtype", "int8"], "does not support dtype 'int8'"),
        (["--dtype", "fp64x"], "unknown dtype 'fp64x'; one of "),
        (["--shape", "12xAx3"], "is not a positive integer"),
        (["--predictor", "oracle"], "unknown predictor 'oracle'"),
    ],
)
def test_explain_bad_input_is_one_line_exit_2(toy_cli, args, fragment):
    base = {"--hw": "toy", "--op": "matmul", "--shape": "8x8x8", "--dtype": "fp32"}
    for flag, value in zip(args[::2], args[1::2], strict=True):
        base[flag] = value
    flat = [x for pair in base.items() for x in pair]
    result = toy_cli("explain", *flat)
    assert result.exit_code == 2
    assert fragment in result.output
    assert "Traceback" not in result.output


def test_predict_shapes_file_csv(toy_cli, tmp_path):
    shapes = tmp_path / "shapes.txt"
    shapes.write_text("8x8x8\n# a comment\n\n1x2048x2048\n8x8x8\n")
    result = toy_cli(
        "predict",
        "--hw",
        "toy",
        "--op",
        "matmul",
        "--dtype",
        "fp32",
        "--shapes",
        str(shapes),
        "--format",
        "csv",
    )
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert [r["shape"] for r in rows] == ["8x8x8", "1x2048x2048"]  # the repeat predicted once
    assert "warning: " in result.stderr and "(line 5 repeats line 1)" in result.stderr
    assert rows[1]["regime"] == "dram_bound"


def test_predict_shapes_file_bad_line_names_file_and_line(toy_cli, tmp_path):
    shapes = tmp_path / "shapes.txt"
    shapes.write_text("8x8x8\n8x8\n")
    result = toy_cli(
        "predict", "--hw", "toy", "--op", "matmul", "--dtype", "fp32", "--shapes", str(shapes)
    )
    assert result.exit_code == 2
    assert f"{shapes}:2:" in result.output


def test_predict_sweep_keeps_order_across_dtypes(toy_cli, tmp_path, make_target):
    sweep = tmp_path / "s.json"
    sweep.write_text(
        json.dumps(
            {
                "op": "vector_add",
                "purpose": "validation",
                "seed": 1,
                "shapes": [
                    {"shape": [1000], "dtype": "fp32", "regime_per_hw": {"toy": "l1_bound"}},
                    {"shape": [1000000], "dtype": "fp32", "regime_per_hw": {}},
                ],
            }
        )
    )
    result = toy_cli(
        "predict", "--hw", "toy", "--op", "vector_add", "--sweep", str(sweep), "--format", "json"
    )
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    assert [r["regime"] for r in rows] == ["l1_bound", "dram_bound"]


def test_predict_malformed_sweep(toy_cli, tmp_path):
    sweep = tmp_path / "bad.json"
    sweep.write_text(
        json.dumps({"op": "vector_add", "shapes": [{"shape": [1.5], "dtype": "fp32"}]})
    )
    result = toy_cli("predict", "--hw", "toy", "--op", "vector_add", "--sweep", str(sweep))
    assert result.exit_code == 2
    assert "shapes[0]" in result.output and str(sweep) in result.output


def test_predict_sweep_with_a_shape_of_the_wrong_length(toy_cli, tmp_path):
    """One entry of a sweep with fewer dims than the op's among good ones: one line
    naming the file and the shape, exit 2 (it raised numpy's ValueError)."""
    good = {"shape": [8, 8, 8], "dtype": "fp32"}
    sweep = tmp_path / "short.json"
    sweep.write_text(
        json.dumps({"op": "matmul", "shapes": [good, {"shape": [1, 352], "dtype": "fp32"}]})
    )
    result = toy_cli("predict", "--hw", "toy", "--sweep", str(sweep), "--format", "json")
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    (line,) = [x for x in result.output.splitlines() if x.startswith("Error:")]
    assert str(sweep) in line and "matmul shape 1x352 has 2 dims" in line


def test_predict_needs_exactly_one_source(toy_cli):
    result = toy_cli("predict", "--hw", "toy", "--op", "matmul", "--dtype", "fp32")
    assert result.exit_code == 2
    assert "exactly one of" in result.output


def test_predict_table(toy_cli):
    result = toy_cli(
        "predict", "--hw", "toy", "--op", "matmul", "--dtype", "fp32", "--shape", "32x32x32"
    )
    assert result.exit_code == 0
    assert "alu_bound" in result.output and "SHAPE" in result.output


@pytest.mark.parametrize("command", ["predict", "explain"])
def test_a_placeholder_target_says_so(command):
    """host_gpu on a machine with no GPU has placeholder figures: a prediction
    from it carries a warning instead of reading as a part's. host_cpu, which
    this machine can probe, carries none."""
    from graphsval_core.plugins.loader import build_registry

    registry = build_registry()
    gpu = registry.target("host_gpu")
    if registry.measurer_probe(gpu).available:
        pytest.skip("this machine has a GPU: host_gpu's figures are its own")
    args = ["--op", "matmul", "--dtype", "fp32", "--shape", "64x64x64"]
    result = CliRunner().invoke(cli, [command, "--hw", "host_gpu", *args])
    assert result.exit_code == 0, result.output
    assert "warning: host_gpu is detected from this machine, which it cannot probe" in (
        result.stderr
    )
    assert "its figures are placeholders" in result.stderr
    cpu = CliRunner().invoke(cli, [command, "--hw", "host_cpu", *args])
    assert cpu.exit_code == 0 and "placeholder" not in cpu.stderr


def test_validate_and_sweep_label_say_a_target_is_a_placeholder(tmp_path):
    """Rows judged against host_gpu's placeholder figures, or labels drawn
    from them, carry the same warning as a prediction."""
    from graphsval_core.plugins.loader import build_registry

    registry = build_registry()
    if registry.measurer_probe(registry.target("host_gpu")).available:
        pytest.skip("this machine has a GPU: host_gpu's figures are its own")
    rows = tmp_path / "gpu.validation.csv"
    rows.write_text(
        "hardware,op,shape,dtype,latency_s,energy_j,trial_count,notes\n"
        "host_gpu,matmul,64x64x64,fp32,5.52e-6,,10,\n"
    )
    result = CliRunner().invoke(cli, ["validate", "--baseline", str(rows)])
    assert result.exit_code in (0, 1), result.output
    assert "host_gpu is detected from this machine, which it cannot probe" in " ".join(
        result.output.split()
    )
    label = CliRunner().invoke(
        cli, ["sweep", "label", "--hw", "host_gpu", "--out", str(tmp_path / "labels.json")]
    )
    assert label.exit_code == 0, label.output
    assert "its figures are placeholders" in label.stderr


@pytest.mark.parametrize(
    "argv",
    [
        "predict --hw i7_12700k --op matmul --dtype fp32 --shape 8x8x8 --shape 16x16x16",
        "targets --hw host_cpu --hw=i7_12700k",
        "registry lookup --hw i7_12700k --op matmul --op linear --shape 64x64x64 --dtype fp32",
        "--workspace wsA --workspace=wsB workspace",  # the root's own option
    ],
)
def test_an_option_of_one_value_given_twice_is_refused(argv):
    """click keeps the last: `--shape 8x8x8 --shape 16x16x16` predicted one
    shape and said nothing. Options that repeat (--baseline, --hw of
    validate) still do."""
    result = CliRunner().invoke(cli, argv.split())
    assert result.exit_code == 2, result.output
    assert "is given twice" in result.output and "give it once" in result.output


@pytest.mark.parametrize("flags", [["--loo", "--no-loo"], ["--no-loo", "--loo"]])
def test_an_on_off_flag_given_both_ways_is_refused(flags):
    """click kept the last: `calibrate --loo --no-loo` skipped the leave-one-out."""
    argv = ["calibrate", "--hw", "i7_12700k", *flags, "--baseline", "x.csv"]
    result = CliRunner().invoke(cli, argv)
    assert result.exit_code == 2, result.output
    assert f"{flags[0]} and {flags[1]} contradict each other" in result.output
    # the same way twice says one thing: it is read
    again = CliRunner().invoke(cli, ["calibrate", "--hw", "i7_12700k", "--loo", "--loo"])
    assert "contradict" not in again.output


def test_repeatable_options_and_values_that_look_like_options_still_read():
    from graphsval_core.cli.params import repeated_option

    single = {"--reason": click.Option(["--reason"]), "--shape": click.Option(["--shape"])}
    assert repeated_option(["--reason", "--shape", "--shape", "1"], single) is None
    assert repeated_option(["--shape", "1", "--", "--shape", "2"], single) is None
    assert "--shape is given twice ('1' and '2')" in (
        repeated_option(["--shape=1", "--shape", "2"], single) or ""
    )
    ok = CliRunner().invoke(
        cli, ["validate", "-q", "--hw", "i7_12700k", "--hw", "jetson_orin_nano_8gb"]
    )
    assert ok.exit_code in (0, 1) and "given twice" not in ok.output
