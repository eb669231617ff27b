"""A calibration judged on its target's validation set: rows held out for
validation (installed, in the workspace, or named), never fitted, read as
calibrate reads its own rows, predicted by the fitted constants; printed per
op beside in sample and grouped CV, stored in the file's fit section."""

from __future__ import annotations

import hashlib
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
    file_name,
    held_out_rows,
    judge_validation,
    unjudged_warning,
    validation_warning,
)
from graphsval_core.calibrate.workflow import CalibrateOptions, calibrate
from graphsval_core.cli.main import cli
from graphsval_core.datamodel.errors import InputWarning, UserInputError
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


def _toy(registry=None):
    registry = registry or build_registry()
    return registry, registry.datasheet_target("toy")


def _edit(src: Path, dst: Path, change) -> Path:
    """``src`` with each data row's fields passed through ``change(fields) -> fields``."""
    head, *rows = src.read_text().splitlines()
    dst.write_text("\n".join([head, *(",".join(change(r.split(","))) for r in rows)]) + "\n")
    return dst


def test_the_installed_validation_rows_of_a_target_and_no_recapture():
    registry = build_registry()
    held = held_out_rows(registry, registry.datasheet_target(ZEN3))
    ops = ("linear", "matmul", "vector_add")
    assert sorted(name for name, _ in held.files) == [f"{ZEN3}_{op}.validation.csv" for op in ops]
    for name, digest in held.files:
        assert digest == hashlib.sha256((CPU_BASELINES / name).read_bytes()).hexdigest()
    assert held.origins == ("installed by cpu",) and not held.named
    # the validation files' rows, each once: the recapture's rows (the same shapes again,
    # beside them in recapture/) are not read
    rows = sum(
        len((CPU_BASELINES / f"{ZEN3}_{op}.validation.csv").read_text().splitlines()) - 1
        for op in ops
    )
    assert rows > 300 and held.total == rows and held.unusable == 0
    # suspect rows are left out, as validate leaves them
    assert held.suspect > 0 and len(held.rows) == rows - held.suspect
    assert {(r.hardware, r.purpose) for r in held.rows} == {(ZEN3, "validation")}


def test_what_the_fit_saw_is_left_out_and_the_rest_judged(setup, tmp_path):
    cal = setup("toy.calibration.csv")
    val = setup("toy.validation.csv", purpose_column="validation", shapes_of=UNSEEN)
    # the calibration shapes again, written another way (X): fitted, so no longer held out
    again = _edit(
        setup("again.validation.csv", purpose_column="validation"),
        tmp_path / "again2.validation.csv",
        lambda f: [f[0], f[1], f[2].replace("x", "X"), *f[3:]],
    )
    registry, spec = _toy()
    fitted = calibrate(
        registry, CalibrateOptions("toy", (str(cal),), str(tmp_path / "t.json"), grouped_cv=False)
    )
    assert fitted.validation is None  # the toy ships no validation set
    held = held_out_rows(registry, spec, (str(val), str(again)))
    assert held.named and held.total == len(held.rows) == 6 + 14
    calibrated = apply_constants(fitted.spec, fitted.fit.values, "fit")
    out = judge_validation(registry, calibrated, held, fitted.rows, load_tolerances())
    assert out is not None and out.rows == 6 and out.fitted_too == 14 and out.uncalibrated == 0
    assert set(out.per_op) == {"matmul", "vector_add"}
    assert out.per_op["matmul"].rows == 2 and out.per_op["vector_add"].rows == 4
    # the toy's rows are its own model's with other constants: the fit carries to new shapes,
    # the datasheet's constants do not
    assert out.whole.median_abs_error < 0.05 and out.within == 1.0
    assert out.within_per_op == {"matmul": 1.0, "vector_add": 1.0}
    datasheet = judge_validation(registry, spec, held, fitted.rows, load_tolerances())
    assert datasheet is not None and datasheet.whole.median_abs_error > 0.2

    # each op's share within 10% is its own: products three times slower than the toy's own
    slow = _edit(
        val,
        tmp_path / "slow.validation.csv",
        lambda f: [*f[:4], f"{3 * float(f[4]):.9e}", *f[5:]] if f[1] == "matmul" else f,
    )
    mixed = held_out_rows(registry, spec, (str(slow),))
    out = judge_validation(registry, calibrated, mixed, fitted.rows, load_tolerances())
    assert out is not None and out.within_per_op == {"matmul": 0.0, "vector_add": 1.0}
    assert out.within == pytest.approx(4 / 6)
    # within 10% is 10%: products 15% slower than the toy's own are outside it
    tolerances = load_tolerances()
    slower = _edit(
        val,
        tmp_path / "slower.validation.csv",
        lambda f: [*f[:4], f"{1.15 * float(f[4]):.9e}", *f[5:]] if f[1] == "matmul" else f,
    )
    out = judge_validation(
        registry, calibrated, held_out_rows(registry, spec, (str(slower),)), fitted.rows, tolerances
    )
    assert out is not None and out.within_per_op["matmul"] == 0.0

    # an op no calibration row is of is left out: the fit says nothing of it
    adds = [r for r in fitted.rows if r.op == "vector_add"]
    only = judge_validation(registry, calibrated, held, adds, load_tolerances())
    assert only is not None and set(only.per_op) == {"vector_add"}
    assert only.uncalibrated == 2 + 4 and only.fitted_too == 10 and only.rows == 4
    assert unjudged_warning(only) is None  # four rows judged: a figure, no warning


def test_rows_validate_leaves_out_are_left_out_and_counted(setup, tmp_path):
    setup("toy.calibration.csv")
    val = setup("toy.validation.csv", purpose_column="validation", shapes_of=UNSEEN)
    registry, spec = _toy()
    bf16 = _edit(val, tmp_path / "bf16.validation.csv", lambda f: [*f[:3], "bf16", *f[4:]])
    held = held_out_rows(registry, spec, (str(bf16),))
    assert held.total == 6 and held.unusable == 6 and not held.rows
    none = judge_validation(registry, spec, held, [], {})
    assert none is not None and none.rows == 0 and validation_warning(0.01, none) is None
    line = unjudged_warning(none)
    assert line is not None and "judged none of its 6 row(s)" in line and "\n" not in line
    assert unjudged_warning(None) is None  # no set at all: the source line says so

    first = {"n": 0}

    def too_fast(fields):  # the first row a million times faster than its own model
        first["n"] += 1
        return (
            [*fields[:4], f"{float(fields[4]) * 1e-6:.9e}", *fields[5:]]
            if first["n"] == 1
            else fields
        )

    fast = _edit(val, tmp_path / "fast.validation.csv", too_fast)
    held = held_out_rows(registry, spec, (str(fast),))
    assert held.suspect == 1 and len(held.rows) == 5 and held.total == 6


def test_a_measurement_named_twice_or_copied_counts_once(setup, tmp_path):
    setup("toy.calibration.csv")
    val = setup("toy.validation.csv", purpose_column="validation", shapes_of=UNSEEN)
    copy = tmp_path / "copy.validation.csv"
    copy.write_text(val.read_text().replace("\n", "\r\n"))
    link = tmp_path / "link.validation.csv"
    link.symlink_to(val)
    registry, spec = _toy()
    with pytest.warns(InputWarning) as caught:
        held = held_out_rows(registry, spec, (str(val), str(link), str(copy)))
    assert len(held.rows) == held.total == 6
    said = [str(w.message) for w in caught]
    assert f"{link}: the file {val} again; read once" in said
    assert any("measurements again; read once" in m for m in said)


def test_calibrate_reads_a_baseline_named_twice_once(setup, tmp_path):
    cal = setup("toy.calibration.csv")
    once = calibrate(
        build_registry(),
        CalibrateOptions("toy", (str(cal),), str(tmp_path / "a.json"), grouped_cv=False),
    )
    with pytest.warns(InputWarning, match="read once"):
        twice = calibrate(
            build_registry(),
            CalibrateOptions(
                "toy", (str(cal), str(cal)), str(tmp_path / "b.json"), grouped_cv=False
            ),
        )
    assert len(twice.rows) == len(once.rows) == 14


def test_calibrate_prints_and_stores_the_validation_set(setup, tmp_path):
    cal = setup("toy.calibration.csv")
    val = setup("toy.validation.csv", purpose_column="validation", shapes_of=UNSEEN)
    out = tmp_path / "t.json"
    args = ["calibrate", "--hw", "toy", "--baseline", str(cal), "--out", str(out), "--no-loo"]
    run = CliRunner().invoke(cli, [*args, "--validation-baseline", str(val)])
    assert run.exit_code == 0, run.output
    assert "out of sample: the validation set and grouped CV" in run.output
    assert "validation set median |error|" in run.output and "within 10% (4 rows)" in run.output
    assert f"validation set: 6 of its 6 rows judged, never fitted ({val}; named)" in run.output
    stored = json.loads(out.read_text())["fit"]["validation"]
    digest = hashlib.sha256(val.read_bytes()).hexdigest()
    assert stored["files"] == [{"file": val.name, "sha256": digest}]  # no folder of this machine
    assert stored["from"] == ["named"] and stored["rows"] == stored["validation_rows"] == 6
    assert set(stored["left_out"].values()) == {0}
    assert set(stored["per_op"]) == {"matmul", "vector_add"}
    assert stored["per_op"]["matmul"]["rows"] == 2 and stored["within_10pct"] == 1.0

    plain = CliRunner().invoke(cli, [*args[:-1], "--no-grouped-cv", "--no-loo"])
    assert plain.exit_code == 0, plain.output
    assert "no validation set of toy in the installed and workspace baselines" in plain.output
    assert "nothing judged the fit out of sample (grouped CV skipped)" in plain.output
    assert "fit quality (latency; in sample)" in plain.output
    assert json.loads(out.read_text())["fit"]["validation"] == {}

    loo_only = CliRunner().invoke(cli, [*args[:-1], "--no-grouped-cv", "--loo"])
    assert loo_only.exit_code == 0, loo_only.output
    assert "leave-one-out is the only out-of-sample figure" in loo_only.output
    assert "nothing judged the fit" not in loo_only.output


def test_calibrate_says_why_rows_and_ops_are_left_out(setup, tmp_path):
    cal = setup("toy.calibration.csv")
    val = setup("toy.validation.csv", purpose_column="validation", shapes_of=UNSEEN)
    adds = _edit(cal, tmp_path / "adds.calibration.csv", lambda f: f)
    adds.write_text(
        "\n".join(line for line in adds.read_text().splitlines() if "matmul" not in line)
    )
    args = ["calibrate", "--hw", "toy", "--baseline", str(adds), "--out", str(tmp_path / "t.json")]
    run = CliRunner().invoke(cli, [*args, "--no-loo", "--validation-baseline", str(val)])
    assert run.exit_code == 0, run.output
    assert "validation set: 4 of its 6 rows judged" in run.output
    assert "left out: 2 of an op no calibration row is of" in run.output
    stored = json.loads((tmp_path / "t.json").read_text())["fit"]["validation"]
    assert stored["left_out"] == {
        "no_latency": 0,
        "suspect_latency": 0,
        "unusable": 0,
        "shape_measured_again": 0,
        "op_not_calibrated": 2,
        "fitted_too": 0,
    }
    assert stored["rows"] == 4 and stored["validation_rows"] == 6
    assert "matmul" not in run.output.split("fit quality")[1].split("validation set:")[0]
    assert "judged none" not in run.output

    # a validation set of products only judges none of an adds-only fit: warned, recorded
    products = tmp_path / "products.validation.csv"
    products.write_text(
        "\n".join(line for line in val.read_text().splitlines() if "vector_add" not in line)
    )
    none = CliRunner().invoke(cli, [*args, "--no-loo", "--validation-baseline", str(products)])
    assert none.exit_code == 0, none.output
    warning = "warning: the validation set judged none of its 2 row(s)"
    assert warning in none.output
    assert any(
        warning in w for w in json.loads((tmp_path / "t.json").read_text())["fit"]["warnings"]
    )


def test_validation_rows_with_no_latency_are_counted_not_judged(setup, elsewhere, tmp_path):
    cal = setup("toy.calibration.csv")
    val = setup("toy.validation.csv", purpose_column="validation", shapes_of=UNSEEN)
    blanked = iter(range(2))

    def blank(fields):  # the first two rows' measurement never finished: no trial counted
        if next(blanked, None) is not None:
            fields[4] = ""
            fields[6] = "0"
        return fields

    partial = _edit(val, tmp_path / "partial.validation.csv", blank)
    head, first, *_ = partial.read_text().splitlines()
    others = []
    for hardware, purpose in (("toy", "calibration"), (elsewhere, "validation")):
        fields = first.split(",")
        fields[0], fields[-1] = hardware, purpose  # not a validation row of toy: not counted
        others.append(",".join(fields))
    partial.write_text(partial.read_text() + "\n".join(others) + "\n")
    out = tmp_path / "t.json"
    args = ["calibrate", "--hw", "toy", "--baseline", str(cal), "--out", str(out), "--no-loo"]
    run = CliRunner().invoke(cli, [*args, "--validation-baseline", str(partial)])
    assert run.exit_code == 0, run.output
    assert "validation set: 4 of its 6 rows judged" in run.output
    assert "left out: 2 with no latency (never measured)" in run.output
    stored = json.loads(out.read_text())["fit"]["validation"]
    assert stored["left_out"]["no_latency"] == 2
    assert stored["validation_rows"] == 6 and stored["rows"] == 4


def test_a_workspace_capture_is_the_default_validation_set(setup, tmp_path):
    cal = setup("toy.calibration.csv")
    baselines = Path(os.environ[ENV_WORKSPACE]) / "baselines"
    baselines.mkdir(parents=True)
    val = setup("toy_matmul.validation.csv", purpose_column="validation", shapes_of=UNSEEN)
    (baselines / val.name).write_text(val.read_text())
    options = CalibrateOptions("toy", (str(cal),), str(tmp_path / "t.json"), grouped_cv=False)
    result = calibrate(build_registry(workspace=baselines.parent), options)
    assert [name for name, _ in result.held_out.files] == ["toy_matmul.validation.csv"]
    assert result.held_out.origins == ("the workspace",)
    assert result.validation is not None and result.validation.rows == 6
    (baselines / "toy_linear.validation.csv").write_text("hardware,op\n")  # a broken capture
    with pytest.raises(UserInputError, match="toy_linear.validation.csv.*--validation-baseline"):
        calibrate(
            build_registry(workspace=baselines.parent),
            evolve(options, out=str(tmp_path / "u.json")),
        )
    assert not (tmp_path / "u.json").exists()
    # a set named instead is read, the broken one left alone
    named = evolve(options, out=str(tmp_path / "v.json"), validation_baselines=(str(val),))
    assert calibrate(build_registry(workspace=baselines.parent), named).validation.rows == 6


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (None, "No such file"),
        (
            "hardware,op,shape,dtype,latency_s,energy_j,trial_count,notes,purpose\n"
            "toy,matmul,8x8x8,fp32,1e-5,,3,,calibration\n",
            "no validation row of toy with a latency (its rows are toy calibration",
        ),
        ("hardware,op,shape\n", "toy.validation.csv"),
        (
            "hardware,op,shape,dtype,latency_s,energy_j,trial_count,notes,purpose\n"
            "toy,conv9d,8x8x8,fp32,1e-5,,3,,validation\n",
            "toy.validation.csv:2:",
        ),
        (
            "hardware,op,shape,dtype,latency_s,energy_j,trial_count,notes,purpose\n"
            "toy,matmul,8x8,fp32,1e-5,,3,,validation\n",
            "toy.validation.csv:2:",
        ),
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
    def figures(median: float, rows: int = 10) -> ValidationFigures:
        return ValidationFigures(HeldOut((), ()), rows, ErrorFigures(rows, median, 0.5, 0.6))

    assert validation_warning(0.05, figures(0.07)) is None
    assert validation_warning(0.01, figures(0.04)) is None  # under the 5% floor: no alarm
    assert validation_warning(0.05, figures(0.5, rows=9)) is None  # too few rows to say
    assert validation_warning(0.1, figures(0.16)) is not None  # 1.6 times in sample: warned
    line = validation_warning(0.05, figures(0.2))
    assert line is not None and "20.0%" in line and "10 rows never fitted" in line
    assert validation_warning(0.05, None) is None


def test_calibrate_warns_of_a_validation_set_far_worse_than_its_ops_in_sample(setup, tmp_path):
    cal = setup("toy.calibration.csv")
    shapes = {"vector_add": [[450 * k] for k in range(1, 13)]}
    val = setup("toy.validation.csv", purpose_column="validation", shapes_of=shapes)
    slow = _edit(  # three times the toy's own latencies
        val,
        tmp_path / "slow.validation.csv",
        lambda f: [*f[:4], f"{3 * float(f[4]):.9e}", *f[5:]],
    )
    options = CalibrateOptions("toy", (str(cal),), str(tmp_path / "t.json"), grouped_cv=False)
    fine = calibrate(build_registry(), evolve(options, validation_baselines=(str(val),)))
    assert not any("validation set" in w for w in fine.warnings)
    far = calibrate(build_registry(), evolve(options, validation_baselines=(str(slow),)))
    (line,) = [w for w in far.warnings if "validation set" in w]
    assert "12 rows never fitted" in line and "66.7%" in line
    assert line in json.loads((tmp_path / "t.json").read_text())["fit"]["warnings"]


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


def test_file_names_keep_no_folder_but_a_recapture_s():
    assert file_name("/some/where/a.validation.csv") == "a.validation.csv"
    assert file_name("x/recapture/a.validation.csv") == "recapture/a.validation.csv"


def test_an_out_in_no_folder_is_refused_before_the_fit(setup, tmp_path):
    cal = setup("toy.calibration.csv")
    out = tmp_path / "nowhere" / "t.json"
    with pytest.raises(UserInputError, match=f"--out {out}: no folder {out.parent} to write it in"):
        calibrate(build_registry(), CalibrateOptions("toy", (str(cal),), str(out)))


@pytest.mark.parametrize(
    ("reason", "said"),
    [
        ("", "give the reason in words"),
        ("   ", "give the reason in words"),
        ("first line\nsecond line", "give the reason on one line"),
        ("a\u2028b", "give the reason on one line"),
        ("ends in a break\n", "give the reason on one line"),
    ],
)
def test_a_blank_or_broken_reason_for_validation_rows_is_refused(setup, tmp_path, reason, said):
    cal = setup("toy.calibration.csv")
    args = ["calibrate", "--hw", "toy", "--baseline", str(cal), "--out", str(tmp_path / "t.json")]
    run = CliRunner().invoke(cli, [*args, "--allow-validation-rows", reason])
    assert run.exit_code == 2 and "--allow-validation-rows" in run.output
    assert said in run.output and not (tmp_path / "t.json").exists()


def test_a_pipe_is_read_once_and_a_shape_measured_twice_is_judged_once(setup, tmp_path):
    import threading

    setup("toy.calibration.csv")
    val = setup("toy.validation.csv", purpose_column="validation", shapes_of=UNSEEN)
    registry, spec = _toy()
    fifo = tmp_path / "pipe.validation.csv"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_text(val.read_text()), daemon=True)
    writer.start()
    held = held_out_rows(registry, spec, (str(fifo),))
    writer.join(timeout=10)
    assert len(held.rows) == 6 and held.repeated == 0

    # the same shapes measured again (another note, another latency): each judged once
    again = _edit(
        val,
        tmp_path / "again.validation.csv",
        lambda f: [*f[:4], f"{1.01 * float(f[4]):.9e}", f[5], f[6], "again", *f[8:]],
    )
    with pytest.warns(InputWarning, match=r"6 shape\(s\) measured in more than one file"):
        held = held_out_rows(registry, spec, (str(val), str(again)))
    assert len(held.rows) == 6 and held.repeated == 6 and held.total == 12
    first = {r.shape: r.latency_s for r in read_baseline_file(str(val))[0].rows}
    assert {r.shape: r.latency_s for r in held.rows} == first  # as first read


def test_a_named_files_rows_that_are_not_validation_rows_are_warned_of(setup, tmp_path):
    cal = setup("toy.calibration.csv", purpose_column="calibration")
    val = setup("toy.validation.csv", purpose_column="validation", shapes_of=UNSEEN)
    mixed = tmp_path / "mixed.csv"
    mixed.write_text(val.read_text() + "".join(cal.read_text().splitlines(True)[1:]))
    registry, spec = _toy()
    with pytest.warns(InputWarning, match=r"14 row\(s\) of toy that are not validation rows"):
        held = held_out_rows(registry, spec, (str(mixed),))
    assert len(held.rows) == 6
