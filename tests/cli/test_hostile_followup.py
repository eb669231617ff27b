"""What a hostile newcomer found after issue 18 (its follow-up items 3 to
10): a selection never relabels rows, workspace files are the user's input,
floors and snapshots are read strictly, empty paths and contradictory flags
are usage errors, and no message lies."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from graphsval_core.cli.main import cli

HOST = "host_intel_xeon_2c_1t"
SHIPPED = Path(__file__).parents[2] / "plugins/graphsval_cpu/graphsval_cpu/baselines"
I7 = SHIPPED / "i7_12700k_matmul.calibration.csv"
HOST_CAL = SHIPPED / f"{HOST}_vector_add.calibration.csv"


def _invoke(*argv: str):
    return CliRunner().invoke(cli, [str(a) for a in argv])


def _error(*argv: str, code: int = 2) -> str:
    result = _invoke(*argv)
    assert result.exit_code == code, (argv, result.output)
    assert "Traceback" not in result.output
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, (argv, result.output)
    return errors[0]


# item 3: --hw selects, never relabels


def test_hw_never_judges_another_targets_rows():
    for hw in ("h100_sxm5_80gb", "kpu_t64"):
        result = _invoke("validate", "--hw", hw, "--baseline", I7, "--purpose", "calibration")
        assert result.exit_code == 2, result.output
        assert "PASSED" not in result.output and "excluded" not in result.output
        line = _error("validate", "--hw", hw, "--baseline", I7, "--purpose", "calibration")
        assert f"--hw {hw}: no row of the given baseline(s)" in line
        assert f"{I7} holds i7_12700k" in line


def test_calibrate_names_the_rows_of_other_targets(tmp_path):
    line = _error(
        "calibrate", "--hw", "jetson_orin_nano_8gb", "--baseline", I7, "--out", tmp_path / "c.json"
    )
    assert f"{I7} holds 18 of i7_12700k" in line
    result = _invoke(
        "calibrate", "--hw", "i7_12700k", "--baseline", I7, "--baseline", HOST_CAL,
        "--out", tmp_path / "c.json", "--no-loo",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert (
        f"warning: {HOST_CAL}: 60 row(s) of other targets left out (60 of {HOST}); "
        "calibrating i7_12700k"
    ) in result.output


# item 5: floors


def test_a_named_floors_file_is_checked_strictly_and_implies_check_floors(tmp_path):
    floors = tmp_path / "floors.json"
    argv = ("validate", "--hw", HOST, "--op", "matmul", "-q", "--floors", floors)
    cases = {
        "{}": "floors none of the validated target/op pairs",
        '{"floors": {}}': "floors none of the validated target/op pairs",
        '{"floors": {"x": {"pass": 1}}}': "floors.x: not a key of the form <target>/<op>",
        '{"floors": {"nope/matmul": {"pass": 1}}}': "unknown target 'nope'",
        f'{{"floors": {{"{HOST}/conv": {{"pass": 1}}}}}}': "unknown op 'conv'",
        '{"floors": {"i7_12700k/matmul": {"pass": 1}}}': "it holds i7_12700k/matmul",
        # a floor above its own records: no run meets it (from the newcomer)
        f'{{"floors": {{"{HOST}/matmul": {{"pass": 9, "records": 5}}}}}}': (
            f"floors.{HOST}/matmul.pass: 9 is above its 5 records"
        ),
    }
    for body, fragment in cases.items():
        floors.write_text(body)
        result = _invoke(*argv)
        assert result.exit_code == 2, (body, result.output)
        assert "PASSED" not in result.output and "floors hold" not in result.output
        assert fragment in _error(*argv), body
    floors.write_text(f'{{"floors": {{"{HOST}/matmul": {{"pass": 1}}}}}}')
    result = _invoke(*argv)  # --floors alone checks the floors
    assert result.exit_code == 0 and "floors hold" in result.output, result.output
    floors.write_text(f'{{"floors": {{"{HOST}/matmul": {{"pass": 100000}}}}}}')
    assert _invoke(*argv).exit_code == 1


# items 7, 8: empty paths, -q with -v


def test_an_empty_path_is_a_usage_error_naming_the_flag(tmp_path):
    cases = [
        ("validate", "--out", ""),
        ("validate", "--tolerances", ""),
        ("validate", "--floors", ""),
        ("validate", "--baseline", ""),
        ("check", "--snapshot", ""),
        ("calibrate", "--hw", HOST, "--baseline", HOST_CAL, "--out", ""),
        ("sweep", "from-config", "c.json", "--out", ""),
        ("--workspace", "", "targets"),
    ]
    for argv in cases:
        flag = argv[argv.index("") - 1]
        line = _error(*argv)
        assert f"'{flag}'" in line and "empty path" in line, line
    assert not list(Path.cwd().glob("*.calibration.json.tmp"))


def test_a_dash_path_is_a_usage_error_naming_the_flag(tmp_path, monkeypatch):
    """``-`` reads as standard output or input to a user: no command writes
    or reads a file called ``-`` instead (``./-`` names one)."""
    monkeypatch.chdir(tmp_path)
    cases = [
        ("validate", "--hw", HOST, "--op", "matmul", "--out", "-"),
        ("validate", "--baseline", "-"),
        ("calibrate", "--hw", HOST, "--baseline", HOST_CAL, "--out", "-"),
        ("targets", "--hw", HOST, "--target-file", "--out", "-"),
        ("sweep", "from-config", "c.json", "--out", "-"),
        ("--workspace", "-", "targets"),
    ]
    for argv in cases:
        flag = argv[argv.index("-") - 1]
        line = _error(*argv)
        assert f"'{flag}'" in line and "'-' is not standard input or output here" in line
    assert not (tmp_path / "-").exists()
    monkeypatch.setenv("GRAPHSVAL_WORKSPACE", "-")  # the variable, as --workspace
    line = _error("targets")
    assert "workspace '-' (GRAPHSVAL_WORKSPACE) is not standard input or output" in line
    monkeypatch.delenv("GRAPHSVAL_WORKSPACE")
    result = _invoke("targets", "--hw", HOST, "--target-file", "--out", "./-")
    assert result.exit_code == 0 and (tmp_path / "-").is_file(), result.output


def test_a_path_option_given_a_flag_like_value_is_a_usage_error(tmp_path, monkeypatch):
    """``validate --out --out`` took the second ``--out`` for the folder and
    wrote the reports into a folder called ``--out``; ``calibrate --out
    --no-loo`` a file ``--no-loo``: a path option's value that starts with
    ``-`` is refused, naming the flag, and says to write ``./--out`` for a
    file or folder of that name, which is taken, as an absolute path is. An
    argument starts with ``-`` only after ``--``, deliberately: it is read."""
    monkeypatch.chdir(tmp_path)
    explain = ("--hw", HOST, "--op", "matmul", "--shape", "8x8x8", "--dtype", "fp32")
    cases = [  # (command line, the flag, its value)
        (("validate", "--hw", HOST, "--op", "matmul", "-q", "--out", "--out"), "--out", "--out"),
        (("validate", "--baseline", "--out"), "--baseline", "--out"),
        (("validate", "--hw", HOST, "--tolerances", "-t.json"), "--tolerances", "-t.json"),
        (("validate", "--hw", HOST, "-q", "--floors", "--check-floors"), "--floors",
         "--check-floors"),
        (("calibrate", "--hw", HOST, "--baseline", HOST_CAL, "--out", "--no-loo"), "--out",
         "--no-loo"),
        (("calibrate", "--hw", HOST, "--baseline", HOST_CAL, "--report", "-r"), "--report", "-r"),
        (("check", "--hw", HOST, "--update-snapshot", "--snapshot", "--json"), "--snapshot",
         "--json"),
        (("sweep", "label", "--hw", HOST, "--out", "--update"), "--out", "--update"),
        (("sweep", "show", "--sweeps-dir", "--json"), "--sweeps-dir", "--json"),
        (("sweep", "generate", "--op", "vector_add", "--out-dir", "--redraw"), "--out-dir",
         "--redraw"),
        (("sweep", "from-config", "c.json", "--out", "-s.json"), "--out", "-s.json"),
        (("targets", "--hw", HOST, "--target-file", "--out", "--json"), "--out", "--json"),
        (("predict", "--hw", HOST, "--op", "matmul", "--dtype", "fp32", "--shapes", "-s.txt"),
         "--shapes", "-s.txt"),
        (("explain", *explain, "--baseline", "--json"), "--baseline", "--json"),
        (("registry", "lookup", *explain, "--baseline", "--json"), "--baseline", "--json"),
        (("plugin", "new", "acme", "--dir", "--x"), "--dir", "--x"),
        (("--workspace", "--ws", "targets"), "--workspace", "--ws"),
    ]  # fmt: skip
    for argv, flag, value in cases:
        line = _error(*argv)
        assert line.startswith(
            f"Error: Invalid value for '{flag}': '{value}' looks like an option, not a path: "
            f"write ./{value} if a file or folder of that name is meant. See `"
        ), line
    assert _error("validate", "--out", "--out") == (  # the console script says `graphsval ...`
        "Error: Invalid value for '--out': '--out' looks like an option, not a path: write "
        "./--out if a file or folder of that name is meant. See `cli validate --help`."
    )
    assert not list(tmp_path.iterdir())  # nothing written
    result = _invoke("validate", "--hw", HOST, "--op", "matmul", "-q", "--out", "./--out")
    assert result.exit_code in (0, 1) and (tmp_path / "--out/report.json").is_file(), result.output
    result = _invoke("sweep", "label", "--hw", HOST, "--out", tmp_path / "-lab.json")
    assert result.exit_code == 0 and (tmp_path / "-lab.json").is_file(), result.output
    line = _error("sweep", "from-config", "--", "-c.json")  # the argument is read
    assert line == "Error: -c.json: cannot read: No such file or directory", line


def test_a_file_named_with_a_trailing_slash_is_a_usage_error_naming_the_flag(tmp_path, monkeypatch):
    """``x/`` names a folder: a file option given one wrote or read the file
    ``x`` (``--floors new/`` made a file called ``new``); a folder option
    (``validate --out DIR``) takes it."""
    monkeypatch.chdir(tmp_path)
    cases = [
        ("validate", "--hw", HOST, "--op", "matmul", "-q", "--update-floors", "--floors", "fl/"),
        ("check", "--hw", HOST, "--update-snapshot", "--snapshot", "snap/"),
        ("sweep", "label", "--hw", HOST, "--out", "lab/"),
        ("sweep", "from-config", "c.json", "--out", "sw/"),
        ("validate", "--baseline", "x.csv/"),
        ("calibrate", "--hw", HOST, "--baseline", HOST_CAL, "--out", "cal/"),
        # a last part of . or .. names a folder too: new/. wrote a file "new"
        ("sweep", "label", "--hw", HOST, "--out", "new/."),
        ("targets", "--hw", HOST, "--target-file", "--out", "a/b/.."),
        ("validate", "--hw", HOST, "--op", "matmul", "-q", "--floors", ".."),
    ]
    for argv in cases:
        flag = argv[-2]
        line = _error(*argv)
        assert f"'{flag}'" in line and "which names a folder" in line, line
    assert not list(tmp_path.iterdir())  # nothing written
    result = _invoke("validate", "--hw", HOST, "--op", "matmul", "-q", "--out", "reports/")
    assert (tmp_path / "reports" / "report.json").is_file(), result.output
    result = _invoke("sweep", "label", "--hw", HOST, "--out", "./.lab.json")  # a dot file is one
    assert result.exit_code == 0 and (tmp_path / ".lab.json").is_file(), result.output


def test_quiet_and_verbose_together_are_refused():
    line = _error("validate", "--hw", HOST, "-q", "-v")
    assert "-q and -v" in line
    for fmt in ("json", "markdown"):  # -q would be ignored silently
        line = _error("validate", "--hw", HOST, "-q", "--format", fmt)
        assert f"-q prints the verdict alone, in text; --format {fmt}" in line


# item 6: snapshots


def test_a_named_snapshot_is_read_strictly(tmp_path):
    snapshot = tmp_path / "snap.json"
    good = f'"targets": {{"{HOST}": {{"matmul 32x32x32 fp32": [1e-05, 0.001]}}}}'
    cases = {
        f'{{"tolerence": 0.01, {good}}}': "unknown key 'tolerence' (did you mean 'tolerance'?)",
        f'{{"extra": 1, {good}}}': "unknown key 'extra'",
        f'{{"schema_version": 99, {good}}}': "schema_version 99",
        f'{{"tolerance": 0.5, {good}}}': "tolerance 0.5 is not what the check applies",
        f'{{"predictor": "mine", {good}}}': 'predictor "mine" is not',
        f'{{"columns": ["a", "b"], {good}}}': "columns",
        '{"targets": {}}': "holds no target",
        '{"targets": {"nope": {"matmul 32x32x32 fp32": [1e-05, 0.001]}}}': "unknown target",
        f'{{"targets": {{"{HOST}": {{"matmul 32x32x32 fp32": [-1e-05, 0.001]}}}}}}': "latency_s",
    }
    for body, fragment in cases.items():
        snapshot.write_text(body)
        line = _error("check", "--hw", HOST, "--snapshot", snapshot)
        assert fragment in line, (body, line)


# item 10: messages that say what happened


def test_registry_lookup_calls_an_unknown_dtype_unknown():
    line = _error(
        "registry", "lookup", "--hw", "i7_12700k", "--op", "matmul", "--shape", "64x64x64",
        "--dtype", "FP32",
    )  # fmt: skip
    assert "unknown dtype 'FP32' (did you mean 'fp32'?)" in line and "measured" not in line


def test_sweep_from_config_s_file_argument_is_held_as_a_file_option_is():
    """``sweep from-config -`` said "-: cannot read", naming no argument
    (from the newcomer): it takes the file options' checks, naming CONFIG.json."""
    for value, said in (
        ("-", "'-' is not standard input or output here"),
        ("", "an empty path names no file or folder"),
        ("cfg/", "ends in '/', '.' or '..', which names a folder"),
    ):
        result = CliRunner().invoke(cli, ["sweep", "from-config", value])
        assert result.exit_code == 2, result.output
        (line,) = [x for x in result.output.splitlines() if x.strip()]
        assert line.startswith(f"Error: Invalid value for 'CONFIG.json': {said}"), line


def test_a_warning_naming_a_file_with_a_newline_stays_one_line(capsys):
    """A workspace baseline named ``nl<newline>x.calibration.csv`` made the
    duplicate-file warning two lines (from the newcomer); an escape sequence
    in a message could drive the terminal. Each is written as Python writes it."""
    from graphsval_core.cli.context import input_warnings
    from graphsval_core.datamodel.errors import warn_input

    with input_warnings():
        warn_input("ws/baselines/nl\nx.calibration.csv: \x1b]0;t\x07 the same rows, é")
    err = capsys.readouterr().err
    assert err == "warning: ws/baselines/nl\\nx.calibration.csv: \\x1b]0;t\\x07 the same rows, é\n"


@pytest.mark.parametrize("blank", [" ", "  ", "\u3000"])
@pytest.mark.parametrize("option", ["--out", "--baseline"])
def test_a_path_option_of_blanks_is_a_usage_error(tmp_path, monkeypatch, blank, option):
    # --out ' ' made a folder named by a blank and said "reports written to  / "
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["validate", option, blank])
    assert result.exit_code == 2 and "a path of blanks" in result.output, result.output
    assert "Traceback" not in result.output and list(tmp_path.iterdir()) == []
