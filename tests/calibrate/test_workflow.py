"""The calibrate workflow called directly: a typed result, the file it wrote,
plots on request, and the refusals as errors (no command line involved)."""

from __future__ import annotations

import hashlib
import json
import re

import pytest
from attrs import evolve

from graphsval_core.calibrate.evaluate import LeaveOneOut
from graphsval_core.calibrate.workflow import CalibrateOptions, CalibrateResult, calibrate
from graphsval_core.datamodel.errors import UserInputError
from graphsval_core.plugins.loader import build_registry
from graphsval_core.plugins.registry import UnknownNameError


def _options(tmp_path, *baselines, **kw):
    return CalibrateOptions(
        target="toy",
        baselines=tuple(str(b) for b in baselines),
        out=str(tmp_path / "toy.json"),
        **kw,
    )


def test_calibrate_returns_what_it_fitted_and_wrote(setup, tmp_path):
    base = setup("toy.calibration.csv")
    result = calibrate(build_registry(), _options(tmp_path, base))
    assert isinstance(result, CalibrateResult)
    assert result.spec.key == "toy" and result.spec.launch_overhead_s == 2e-6  # the datasheet
    assert len(result.rows) == 14 and result.refused == () and result.override is None
    assert result.fit.values["launch_overhead_s"] == pytest.approx(3.1e-6, rel=0.02)
    assert result.fit.values["compute_fraction.fp32"] == pytest.approx(0.62, rel=0.02)
    assert not result.energy.fitted
    assert result.energy.skipped == "too few rows with a trustworthy energy window"
    measured = [r.latency_s for r in result.rows]
    assert list(result.predicted) == pytest.approx(measured, rel=0.01)
    assert result.in_band == 1.0
    assert isinstance(result.loo, LeaveOneOut) and result.loo.rows == 14
    assert result.loo.median_abs_error < 0.02 and result.loo.within_band == 1.0
    assert result.path == tmp_path / "toy.json"
    written = json.loads(result.path.read_text())
    assert written == result.content
    assert written["fit"]["leave_one_out"]["rows"] == 14
    digest = hashlib.sha256(base.read_bytes()).hexdigest()  # the file's bytes, as validate hashes
    assert written["provenance"]["sources"] == [{"file": base.name, "sha256": digest, "rows": 14}]
    assert result.report_dir is None and not (tmp_path / "plots").exists()


def test_a_copy_of_a_file_with_other_line_ends_is_fitted_once(setup, tmp_path):
    """The same measurements in a second file (saved with CRLF line ends and
    a BOM) were fitted twice, flattering leave-one-out: read once, said."""
    base = setup("toy.calibration.csv")
    copy = tmp_path / "copy.calibration.csv"
    copy.write_bytes(b"\xef\xbb\xbf" + base.read_bytes().replace(b"\n", b"\r\n"))
    with pytest.warns(UserWarning, match=r"copy.calibration.csv: 14 of its 14 row\(s\) are "):
        result = calibrate(build_registry(), _options(tmp_path, base, copy, leave_one_out=False))
    assert len(result.rows) == 14


def test_rows_no_fit_uses_are_left_out_with_a_line_naming_them(setup, tmp_path):
    """A row of a failed verdict or no latency was dropped in silence: each
    reason is one warning naming lines."""
    base = setup("toy.calibration.csv")
    lines = base.read_text().splitlines()
    for i in (2, 3):  # a failed shape: no latency, no trial counted
        fields = lines[i].split(",")
        fields[4], fields[6] = "", "0"
        lines[i] = ",".join(fields)
    base.write_text("\n".join(lines) + "\n")
    with pytest.warns(UserWarning) as caught:
        result = calibrate(build_registry(), _options(tmp_path, base, leave_one_out=False))
    said = [str(w.message) for w in caught]
    assert f"{base}: 2 row(s) left out (no latency: a failed shape): lines 3, 4" in said
    assert len(result.rows) == 12


def test_a_row_of_a_dtype_the_target_does_not_run_is_refused(setup, tmp_path):
    """It was a warning and the rest fitted (exit 0): capture never writes
    such a row, so the file is not a calibration of this target. One line
    naming the file and its first such row."""
    base = setup("toy.calibration.csv")
    lines = base.read_text().splitlines()
    lines[3] = lines[3].replace(",fp32,", ",fp64,")
    lines[5] = lines[5].replace(",fp32,", ",bf16,")
    base.write_text("\n".join(lines) + "\n")
    with pytest.raises(UserInputError) as caught:
        calibrate(build_registry(), _options(tmp_path, base, leave_one_out=False))
    assert str(caught.value) == (
        f"{base}:4: dtype fp64, which toy does not run (it has fp32) (and 1 more row(s) of "
        "dtypes it lacks); remove such rows or calibrate a target that runs the dtype"
    )
    assert not (tmp_path / "toy.json").exists()


def test_a_failed_verdict_is_left_out_and_six_lines_are_named_as_five_and_one_more(
    make_target,
):
    from graphsval_core.calibrate.inputs import _name_unfitted, _unfitted
    from graphsval_core.files.baseline import BaselineRow

    spec = make_target()

    def row(line: int, **extras: str) -> BaselineRow:
        return BaselineRow(
            line, spec.key, "matmul", "8x8x8", (8, 8, 8), "fp32", 1e-5, None, 3, "", None, extras
        )

    assert _unfitted(row(2, verdict="FAIL"), spec) == "a failed numerical verdict"
    assert _unfitted(row(2, verdict="pass"), spec) == ""
    failed = [(row(n, verdict="FAIL"), "a failed numerical verdict") for n in range(2, 8)]
    with pytest.warns(UserWarning) as six:
        _name_unfitted("f.csv", failed)
    assert [str(w.message) for w in six] == [
        "f.csv: 6 row(s) left out (a failed numerical verdict): lines 2, 3, 4, 5, 6 and 1 more"
    ]
    with pytest.warns(UserWarning) as five:
        _name_unfitted("f.csv", failed[:5])
    assert str(five[0].message).endswith("lines 2, 3, 4, 5, 6")


def test_calibrate_without_leave_one_out_draws_plots_on_request(setup, tmp_path):
    options = _options(
        tmp_path,
        setup("toy.calibration.csv"),
        leave_one_out=False,
        report_dir=str(tmp_path / "plots"),
    )
    result = calibrate(build_registry(), options)
    assert result.loo is None and result.content["fit"]["leave_one_out"] == {}
    assert result.report_dir == str(tmp_path / "plots")
    assert sorted(p.name for p in (tmp_path / "plots").iterdir()) == [
        "toy_fit.png",
        "toy_residuals.png",
    ]


def test_calibrate_refuses_validation_rows_unless_given_a_reason(setup, tmp_path):
    base = setup("toy.validation.csv")
    with pytest.raises(UserInputError) as refused:
        calibrate(build_registry(), _options(tmp_path, base, leave_one_out=False))
    assert str(refused.value) == (
        f"refusing validation data: {base}:2: a validation row (the file's name says so) "
        "(and 13 more row(s)); calibrate on calibration rows only, or pass "
        "--allow-validation-rows REASON"
    )
    assert not (tmp_path / "toy.json").exists()
    options = _options(tmp_path, base, leave_one_out=False, allow_validation_rows="demo only")
    result = calibrate(build_registry(), options)
    assert result.override == "demo only" and len(result.refused) == 14
    assert not result.override_unused
    assert result.content["provenance"]["validation_rows_override"] == "demo only"


def test_a_validation_row_no_fit_would_use_excuses_no_reason(setup, tmp_path):
    base = setup("toy.calibration.csv")
    lines = base.read_text().splitlines()
    fields = lines[1].split(",")
    fields[4], fields[6] = "", "0"  # never measured: no latency, no trial counted
    mixed = tmp_path / "mixed.csv"
    mixed.write_text(
        "\n".join(
            [
                lines[0] + ",purpose",
                *(line + ",calibration" for line in lines[1:]),
                ",".join(fields) + ",validation",
            ]
        )
        + "\n"
    )
    options = _options(tmp_path, mixed, leave_one_out=False, allow_validation_rows="x")
    with pytest.warns(UserWarning, match=r"1 row\(s\) left out \(no latency: a failed shape\)"):
        result = calibrate(build_registry(), options)
    assert result.refused == () and result.override is None and result.override_unused
    assert result.content["provenance"]["validation_rows_override"] is None


def test_calibrate_names_the_bad_input(setup, tmp_path):
    registry = build_registry()
    with pytest.raises(UnknownNameError, match="unknown target 'nope'"):
        calibrate(registry, CalibrateOptions(target="nope", baselines=("x.csv",)))
    missing = tmp_path / "missing.csv"
    with pytest.raises(UserInputError, match=f"^{missing}: cannot read: "):
        calibrate(registry, _options(tmp_path, missing))
    other = tmp_path / "other.calibration.csv"
    other.write_text(setup("toy.calibration.csv").read_text().replace("toy,", "elsewhere,"))
    with pytest.raises(UserInputError) as unknown:  # a key nobody registers: a typo
        calibrate(registry, _options(tmp_path, other))
    assert str(unknown.value).startswith(f"{other}:2: unknown target 'elsewhere'; known: toy")


def test_calibrate_names_the_targets_a_file_holds_when_none_is_its_own(setup, elsewhere, tmp_path):
    other = tmp_path / "other.calibration.csv"
    other.write_text(setup("toy.calibration.csv").read_text().replace("toy,", f"{elsewhere},"))
    with pytest.raises(UserInputError) as few:
        calibrate(build_registry(), _options(tmp_path, other))
    assert str(few.value) == (
        f"--hw toy: no row of the given baseline(s) is of toy ({other} holds 14 of elsewhere); "
        "calibrate a target on its own rows"
    )


def test_an_output_that_cannot_be_written_is_bad_input(setup, tmp_path):
    from graphsval_core.files.calibration import CalibrationError

    base = setup("toy.calibration.csv")
    options = _options(tmp_path, base, leave_one_out=False)
    folder = tmp_path / "a_folder"
    folder.mkdir()
    with pytest.raises(CalibrationError, match=f"--out {folder}: is a folder"):
        calibrate(build_registry(), evolve(options, out=str(folder)))


def test_leave_one_out_is_skipped_above_its_row_limit_unless_asked(setup, tmp_path, monkeypatch):
    import graphsval_core.calibrate.workflow as workflow

    base = setup("toy.calibration.csv")
    monkeypatch.setattr(workflow, "LOO_MAX_ROWS", 10)
    auto = calibrate(build_registry(), _options(tmp_path, base))
    assert auto.loo is None and auto.loo_skipped == "14 rows, one refit each; --loo runs it"
    assert auto.grouped is not None  # the out-of-sample figure still runs
    forced = calibrate(build_registry(), _options(tmp_path, base, leave_one_out=True))
    assert forced.loo is not None and forced.loo.rows == 14 and forced.loo_skipped is None
    skipped = calibrate(build_registry(), _options(tmp_path, base, leave_one_out=False))
    assert skipped.loo is None and skipped.loo_skipped is None


def test_calibrate_never_writes_a_file_no_command_could_load(tmp_path):
    """Rows far faster than a snapshot's estimated peak: the fit may take the peak
    up to 4x, a calibration file holds at most 2x; calibrate says so in one line
    and writes nothing (it wrote compute_fraction.bf16 = 4, and every command
    then refused the workspace)."""
    from graphsval_core.files.calibration import CalibrationError
    from graphsval_core.plugins.resources import packaged_files

    (source,) = [
        p
        for p in packaged_files("graphsval_cpu", "baselines", ".calibration.csv")
        if p.name == "host_amd_epyc_zen4_2c_1t_matmul.calibration.csv"
    ]
    lines = source.read_text().splitlines()[1:41]
    base = tmp_path / "same.calibration.csv"
    base.write_text(
        "hardware,op,shape,dtype,latency_s,energy_j,trial_count,notes\n"
        + "".join(",".join([*line.split(",")[:4], "1e-05", "", "5", ""]) + "\n" for line in lines)
    )
    out = tmp_path / "out.json"
    options = CalibrateOptions(
        target="host_amd_epyc_zen4_2c_1t", baselines=(str(base),), out=str(out)
    )
    with pytest.raises(CalibrationError, match=r"compute_fraction\.bf16.* nothing written"):
        calibrate(build_registry(), options)
    assert not out.exists()


@pytest.fixture
def no_fit(monkeypatch):
    """The fit, made to fail the test if it is reached: the refusals below
    come before its minutes."""
    import graphsval_core.calibrate.workflow as workflow

    def reached(*_args, **_kw):
        raise AssertionError("the fit ran before the refusal")

    monkeypatch.setattr(workflow, "fit_latency", reached)


def test_a_report_folder_on_the_calibration_file_s_path_is_refused_first(setup, tmp_path, no_fit):
    base = setup("toy.calibration.csv")
    options = _options(tmp_path, base, report_dir=str(tmp_path / "toy.json"))
    with pytest.raises(UserInputError, match="the calibration file's own path") as refused:
        calibrate(build_registry(), options)
    assert str(refused.value).startswith(f"--report {tmp_path / 'toy.json'}: ")
    assert not (tmp_path / "toy.json").exists()
    # the same path written another way is the same path, and a folder under it no folder
    (tmp_path / "sub").mkdir()
    for other in (tmp_path / "sub" / ".." / "toy.json", tmp_path / "toy.json" / "plots"):
        with pytest.raises(UserInputError, match="the calibration file's own path, or under it"):
            calibrate(build_registry(), evolve(options, report_dir=str(other)))


@pytest.mark.parametrize("where", ["dl", "dl/plots"])
def test_a_report_through_a_link_that_leads_nowhere_is_refused_first(
    setup, tmp_path, no_fit, where
):
    base = setup("toy.calibration.csv")
    (tmp_path / "dl").symlink_to(tmp_path / "nowhere")
    options = _options(tmp_path, base, report_dir=str(tmp_path / where))
    with pytest.raises(UserInputError, match=f"{tmp_path / 'dl'} is a link that leads nowhere"):
        calibrate(build_registry(), options)


def test_a_temp_file_place_taken_by_a_folder_is_refused_first(setup, tmp_path, no_fit):
    base = setup("toy.calibration.csv")
    (tmp_path / "toy.json.tmp").mkdir()
    with pytest.raises(UserInputError, match=r"\(its temp file .*toy.json.tmp\): is a folder"):
        calibrate(build_registry(), _options(tmp_path, base))
    # one that is a link would be written through: refused before the fit too
    (tmp_path / "toy.json.tmp").rmdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("mine")
    (tmp_path / "toy.json.tmp").symlink_to(victim)
    with pytest.raises(UserInputError, match=r"its temp file .*toy.json.tmp is a link; remove it"):
        calibrate(build_registry(), _options(tmp_path, base))
    assert victim.read_text() == "mine"


@pytest.mark.parametrize("which", ["--out", "--report"])
def test_a_folder_no_file_can_be_made_in_is_refused_first(
    setup, tmp_path, monkeypatch, no_fit, which
):
    import tempfile

    base = setup("toy.calibration.csv")
    locked = tmp_path / "locked"
    locked.mkdir()
    real = tempfile.mkstemp

    def mkstemp(*args, dir=None, **kw):  # as a read-only mount answers, whoever runs the test
        if dir is not None and str(dir) == str(locked):
            raise PermissionError(13, "Permission denied")
        return real(*args, dir=dir, **kw)

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
    if which == "--out":
        options = evolve(_options(tmp_path, base), out=str(locked / "toy.json"))
        where = locked / "toy.json"
    else:  # a report folder still to be made, under the locked one
        options = _options(tmp_path, base, report_dir=str(locked / "plots" / "fit"))
        where = locked / "plots" / "fit"
    with pytest.raises(UserInputError) as refused:
        calibrate(build_registry(), options)
    assert (
        str(refused.value) == f"{which} {where}: cannot make a file in {locked} (Permission denied)"
    )
    assert list(locked.iterdir()) == []  # no probe left behind, no plots folder made


def test_the_probe_of_a_writable_folder_leaves_nothing(tmp_path):
    from graphsval_core.files.outputs import check_writable_folder

    check_writable_folder(tmp_path, UserInputError, "--out x")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("plot", ["toy_fit.png", "toy_residuals.png"])
def test_a_plot_file_that_is_no_file_is_refused_first(setup, tmp_path, no_fit, plot):
    base = setup("toy.calibration.csv")
    (tmp_path / "plots" / plot).mkdir(parents=True)  # a folder where a plot goes
    options = _options(tmp_path, base, report_dir=str(tmp_path / "plots"))
    told = f"--report {tmp_path / 'plots'}: {tmp_path / 'plots' / plot} is a folder, where"
    with pytest.raises(UserInputError, match=re.escape(told)):
        calibrate(build_registry(), options)
    assert not (tmp_path / "toy.json").exists()


def test_an_out_through_a_link_writes_the_linked_file_and_keeps_the_link(setup, tmp_path):
    base = setup("toy.calibration.csv")
    (tmp_path / "real").mkdir()
    options = _options(tmp_path, base, leave_one_out=False, grouped_cv=False)
    calibrate(build_registry(), evolve(options, out=str(tmp_path / "real" / "toy.json")))
    (tmp_path / "real" / "toy.json").write_text(
        (tmp_path / "real" / "toy.json").read_text().replace('"target": "toy"', '"target":"toy"')
    )  # marked: the write through the link replaces it
    link = tmp_path / "toy.json"
    link.symlink_to(tmp_path / "real" / "toy.json")
    calibrate(build_registry(), options)
    assert link.is_symlink()
    assert json.loads((tmp_path / "real" / "toy.json").read_text())["target"] == "toy"
    assert '"target": "toy"' in (tmp_path / "real" / "toy.json").read_text()


def test_an_out_through_a_link_to_a_file_not_there_is_refused_first(setup, tmp_path, no_fit):
    """It created the file wherever the link led (a stale link, or one
    planted in a shared folder): one line naming it, nothing written."""
    base = setup("toy.calibration.csv")
    (tmp_path / "real").mkdir()
    (tmp_path / "toy.json").symlink_to(tmp_path / "real" / "toy.json")
    told = (
        f"--out {tmp_path / 'toy.json'}: a link to {tmp_path / 'real' / 'toy.json'}, which is "
        "not there; nothing written through it (remove the link or name another file)"
    )
    with pytest.raises(UserInputError) as caught:
        calibrate(build_registry(), _options(tmp_path, base))
    assert str(caught.value) == told
    assert not list((tmp_path / "real").iterdir())


def test_an_out_through_a_link_into_no_folder_is_refused_first(setup, tmp_path, no_fit):
    base = setup("toy.calibration.csv")
    (tmp_path / "toy.json").symlink_to(tmp_path / "nowhere" / "toy.json")
    with pytest.raises(UserInputError, match="a link to .*nowhere/toy.json, in no folder"):
        calibrate(build_registry(), _options(tmp_path, base))


def test_each_cross_validation_tells_its_progress(setup, tmp_path):
    base = setup("toy.calibration.csv")
    told: list[tuple[str, int, int]] = []
    options = _options(tmp_path, base, progress=lambda *a: told.append(a))
    result = calibrate(build_registry(), options)
    for what, total in (("leave-one-out", result.loo.rows), ("grouped CV", result.grouped.groups)):
        seen = [(d, t) for w, d, t in told if w == what]
        assert seen == [(d, total) for d in range(total + 1)], what
    assert [w for w, _, _ in told] == sorted((w for w, _, _ in told), key=lambda w: w[0] != "l")


def test_the_refit_bar_draws_on_stderr(capsys):
    from graphsval_core.cli.calibrate_cmd import RefitProgress

    bar = RefitProgress()
    for done in range(4):
        bar("grouped CV", done, 3)
    bar("grouped CV", 5, 3)  # after the end: nothing to draw on
    out = capsys.readouterr()
    assert out.out == "" and "grouped CV (3 refits)" in out.err


def test_a_report_that_would_overwrite_the_calibration_or_lead_nowhere_is_refused_first(
    setup, tmp_path, no_fit
):
    base = setup("toy.calibration.csv")
    (tmp_path / "plots").mkdir()
    over = _options(tmp_path, base, report_dir=str(tmp_path / "plots"))
    over = evolve(over, out=str(tmp_path / "plots" / "toy_fit.png"))
    with pytest.raises(UserInputError, match="a plot would be written over --out"):
        calibrate(build_registry(), over)
    (tmp_path / "plots" / "toy_residuals.png").symlink_to(tmp_path / "none" / "r.png")
    nowhere = _options(tmp_path, base, report_dir=str(tmp_path / "plots"))
    with pytest.raises(UserInputError, match=r"toy_residuals.png: a link to .*none/r.png, in no"):
        calibrate(build_registry(), nowhere)


def test_the_refit_bar_is_closed_when_the_fit_is_interrupted(setup, tmp_path, monkeypatch):
    """Ctrl-C in a cross-validation: the bar is finished (a click bar hides
    the terminal's cursor until then)."""
    import io
    from types import SimpleNamespace

    from click.testing import CliRunner

    import graphsval_core.calibrate.evaluate as evaluate
    from graphsval_core.cli import calibrate_cmd
    from graphsval_core.cli.main import cli

    closed: list[bool] = []

    class Bar(calibrate_cmd.RefitProgress):
        def close(self) -> None:
            closed.append(self._bar is not None)
            super().close()

    def interrupted(*args):  # cross_validate(..., x_start, progress)
        args[-1](0, 5)
        raise KeyboardInterrupt

    monkeypatch.setattr(calibrate_cmd, "RefitProgress", Bar)
    monkeypatch.setattr(evaluate, "cross_validate", interrupted)

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(calibrate_cmd, "sys", SimpleNamespace(stderr=Terminal()))
    base = setup("toy.calibration.csv")
    args = ["calibrate", "--hw", "toy", "--baseline", str(base), "--out", str(tmp_path / "t.json")]
    CliRunner().invoke(cli, args)
    assert closed == [True]
