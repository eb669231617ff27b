"""A calibration judged on its target's validation set: rows held out for
validation (installed, in the workspace, or named), never fitted, predicted
by the fitted constants; printed per op beside in sample and grouped CV,
stored in the file's fit section."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from attrs import evolve
from click.testing import CliRunner

from graphsval_core.calibrate.evaluate import ErrorFigures
from graphsval_core.calibrate.validation import (
    HeldOut,
    ValidationFigures,
    held_out_rows,
    judge_validation,
    validation_warning,
)
from graphsval_core.calibrate.workflow import CalibrateOptions, calibrate
from graphsval_core.cli.main import cli
from graphsval_core.datamodel.errors import UserInputError
from graphsval_core.files.baseline import read_baseline_file
from graphsval_core.files.calibration import apply_constants
from graphsval_core.files.tolerances import load_tolerances
from graphsval_core.plugins.loader import build_registry
from graphsval_core.workspace.location import ENV_WORKSPACE

# shapes of the toy target the calibration rows (conftest.SHAPES) do not hold
UNSEEN = {
    "vector_add": [[450], [900], [150_000], [3_100_000]],
    "matmul": [[600, 600, 600], [900, 700, 800]],
}
ZEN3 = "host_amd_epyc_2c_1t"
CPU_BASELINES = (
    Path(__file__).resolve().parents[2] / "plugins/graphsval_cpu/graphsval_cpu/baselines"
)


def test_the_installed_validation_rows_of_a_target_and_no_recapture():
    held = held_out_rows(build_registry(), ZEN3)
    ops = ("linear", "matmul", "vector_add")
    assert sorted(held.files) == [f"{ZEN3}_{op}.validation.csv" for op in ops]
    expected = sum(
        1
        for op in ops
        for r in read_baseline_file(str(CPU_BASELINES / f"{ZEN3}_{op}.validation.csv"))[0].rows
        if r.latency_s
    )
    assert len(held.rows) == expected == 48  # the recapture's 48 are the same shapes again
    assert {(r.hardware, r.purpose) for r in held.rows} == {(ZEN3, "validation")}
    assert not held.named


def test_a_fitted_row_is_left_out_and_a_dtype_the_target_lacks_is_not_judged(setup, tmp_path):
    cal = setup("toy.calibration.csv")
    val = setup("toy.validation.csv", purpose_column="validation", shapes_of=UNSEEN)
    again = setup("again.validation.csv", purpose_column="validation")  # the calibration shapes
    registry = build_registry()
    fitted = calibrate(
        registry, CalibrateOptions("toy", (str(cal),), str(tmp_path / "t.json"), grouped_cv=False)
    )
    spec = apply_constants(fitted.spec, fitted.fit.values, "fit")
    held = held_out_rows(registry, "toy", (str(val), str(again)))
    assert held.named and len(held.rows) == 6 + 14
    out = judge_validation(registry, spec, held, fitted.rows, load_tolerances())
    assert out is not None and out.rows == 6 and out.left_out == 14 and out.unjudged == 0
    assert set(out.per_op) == {"matmul", "vector_add"}
    # the toy's rows are its own model's with other constants: the fit carries to new shapes,
    # the datasheet's constants do not
    assert out.whole.median_abs_error < 0.05 and out.within == 1.0
    assert fitted.validation is None  # calibrate found none of its own: the toy ships none
    datasheet = judge_validation(registry, fitted.spec, held, fitted.rows, load_tolerances())
    assert datasheet is not None and datasheet.whole.median_abs_error > 0.2

    bf16 = tmp_path / "bf16.validation.csv"
    text = val.read_text().splitlines()
    bf16.write_text("\n".join([text[0], *(line.replace(",fp32,", ",bf16,") for line in text[1:])]))
    none = judge_validation(
        registry, spec, held_out_rows(registry, "toy", (str(bf16),)), fitted.rows, {}
    )
    assert none is not None and none.rows == 0 and none.unjudged == 6
    assert validation_warning(0.01, none) is None


def test_calibrate_prints_and_stores_the_validation_set(setup, tmp_path):
    cal = setup("toy.calibration.csv")
    val = setup("toy.validation.csv", purpose_column="validation", shapes_of=UNSEEN)
    out = tmp_path / "t.json"
    args = ["calibrate", "--hw", "toy", "--baseline", str(cal), "--out", str(out), "--no-loo"]
    run = CliRunner().invoke(cli, [*args, "--validation-baseline", str(val)])
    assert run.exit_code == 0, run.output
    assert "out of sample: the validation set and grouped CV" in run.output
    assert "validation set median |error|" in run.output and "within 10% (4 rows)" in run.output
    assert f"validation set: 6 rows of {val} (named), never fitted" in run.output
    stored = json.loads(out.read_text())["fit"]["validation"]
    assert stored["files"] == [val.name] and stored["rows"] == 6  # no folder of this machine
    assert stored["left_out_as_fitted"] == 0 and stored["not_judged"] == 0
    assert set(stored["per_op"]) == {"matmul", "vector_add"}
    assert stored["per_op"]["matmul"]["rows"] == 2 and stored["within_10pct"] == 1.0

    plain = CliRunner().invoke(cli, [*args[:-1], "--no-grouped-cv", "--no-loo"])
    assert plain.exit_code == 0, plain.output
    assert "no validation set of toy in the installed and workspace baselines" in plain.output
    assert "fit quality (latency; in sample)" in plain.output
    assert json.loads(out.read_text())["fit"]["validation"] == {}


def test_a_workspace_capture_is_the_default_validation_set(setup, tmp_path):
    cal = setup("toy.calibration.csv")
    baselines = Path(os.environ[ENV_WORKSPACE]) / "baselines"
    baselines.mkdir(parents=True)
    val = setup("toy_matmul.validation.csv", purpose_column="validation", shapes_of=UNSEEN)
    (baselines / val.name).write_text(val.read_text())
    result = calibrate(
        build_registry(workspace=baselines.parent),
        CalibrateOptions("toy", (str(cal),), str(tmp_path / "t.json"), grouped_cv=False),
    )
    assert result.held_out.files == ("toy_matmul.validation.csv",)
    assert result.validation is not None and result.validation.rows == 6
    (baselines / "toy_linear.validation.csv").write_text("hardware,op\n")  # a broken capture
    with pytest.raises(UserInputError, match="toy_linear.validation.csv"):
        calibrate(
            build_registry(workspace=baselines.parent),
            CalibrateOptions("toy", (str(cal),), str(tmp_path / "u.json"), grouped_cv=False),
        )
    assert not (tmp_path / "u.json").exists()


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (None, "No such file"),
        (
            "hardware,op,shape,dtype,latency_s,energy_j,trial_count,notes,purpose\n"
            "toy,matmul,8x8x8,fp32,1e-5,,3,,calibration\n",
            "no validation row of toy",
        ),
        ("hardware,op,shape\n", "toy.validation.csv"),
    ],
)
def test_a_bad_validation_baseline_is_one_line_and_exit_2(setup, tmp_path, content, says):
    cal = setup("toy.calibration.csv")
    bad = tmp_path / "toy.validation.csv"
    if content is not None:
        bad.write_text(content)
    args = ["calibrate", "--hw", "toy", "--baseline", str(cal), "--out", str(tmp_path / "t.json")]
    run = CliRunner().invoke(cli, [*args, "--validation-baseline", str(bad)])
    assert run.exit_code == 2, run.output
    assert says in run.output and "--validation-baseline" in run.output
    assert "Traceback" not in run.output and len(run.output.strip().splitlines()) == 1
    assert not (tmp_path / "t.json").exists()  # refused before the fit: nothing written


def test_warning_only_when_the_validation_set_is_much_worse():
    def figures(median: float) -> ValidationFigures:
        return ValidationFigures(("v.csv",), 10, 0, ErrorFigures(10, median, 0.5, 0.6))

    assert validation_warning(0.05, figures(0.07)) is None
    assert validation_warning(0.01, figures(0.04)) is None  # under the 5% floor: no alarm
    line = validation_warning(0.05, figures(0.2))
    assert line is not None and "20.0%" in line and "10 rows never fitted" in line
    assert validation_warning(0.05, None) is None


def test_held_out_rows_refuses_a_named_file_of_another_target(setup, tmp_path):
    setup("toy.calibration.csv")
    val = setup("toy.validation.csv", purpose_column="validation", shapes_of=UNSEEN)
    with pytest.raises(UserInputError, match="no validation row of other"):
        held_out_rows(build_registry(), "other", (str(val),))
    assert HeldOut((), ()).rows == ()


def test_capture_machine_tells_the_out_of_sample_figures_of_its_calibration(setup, tmp_path):
    from graphsval_core.cli.capture_machine_cmd import calibrated_line

    cal = setup("toy.calibration.csv")
    val = setup("toy.validation.csv", purpose_column="validation", shapes_of=UNSEEN)
    options = CalibrateOptions("toy", (str(cal),), str(tmp_path / "t.json"), leave_one_out=False)
    both = calibrate(build_registry(), evolve(options, validation_baselines=(str(val),)))
    line = calibrated_line("toy", both)
    assert line.startswith(f"calibrated toy on 14 calibration rows: {tmp_path / 't.json'} (")
    assert "grouped CV median |error|" in line
    assert "validation set median |error|" in line and "(6 rows never fitted))" in line
    bare = calibrate(build_registry(), evolve(options, grouped_cv=False))
    assert calibrated_line("toy", bare).endswith("t.json")  # nothing out of sample to tell


def test_calibrate_warns_of_a_validation_set_far_worse_than_its_ops_in_sample(setup, tmp_path):
    cal = setup("toy.calibration.csv")
    val = setup("toy.validation.csv", purpose_column="validation", shapes_of=UNSEEN)
    lines = val.read_text().splitlines()
    slow = tmp_path / "slow.validation.csv"  # three times the toy's own latencies
    rows = [line.split(",") for line in lines[1:]]
    slow.write_text(
        "\n".join([lines[0], *(",".join([*r[:4], f"{3 * float(r[4]):.9e}", *r[5:]]) for r in rows)])
    )
    options = CalibrateOptions("toy", (str(cal),), str(tmp_path / "t.json"), grouped_cv=False)
    fine = calibrate(build_registry(), evolve(options, validation_baselines=(str(val),)))
    assert not any("validation set" in w for w in fine.warnings)
    far = calibrate(build_registry(), evolve(options, validation_baselines=(str(slow),)))
    (line,) = [w for w in far.warnings if "validation set" in w]
    assert "6 rows never fitted" in line and "66.7%" in line
    assert line in json.loads((tmp_path / "t.json").read_text())["fit"]["warnings"]
