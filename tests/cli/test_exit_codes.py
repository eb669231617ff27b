"""Exit codes as the README states them (issue 18): 0 success, 1 a validation
or check failed, 2 a usage, input or output error in one line. Write
failures exit 2; a closed pipe leaves a command's own exit code; a bug is one
line, never a traceback."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from graphsval_core.cli.entry import run
from graphsval_core.cli.main import cli

HOST = "host_intel_xeon_2c_1t"
HEADER = "hardware,op,shape,dtype,latency_s,energy_j,trial_count,notes"


def _graphsval() -> list[str]:
    beside = Path(sys.executable).with_name("graphsval")
    found = str(beside) if beside.exists() else shutil.which("graphsval")
    return [found] if found else [sys.executable, "-m", "graphsval_core"]


def _one_error(result) -> str:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    (line,) = [line for line in result.output.splitlines() if line.startswith("Error:")]
    return line


@pytest.fixture
def a_file(tmp_path) -> Path:
    path = tmp_path / "a_file"
    path.write_text("not a folder\n")
    return path


def test_write_failures_exit_2_in_one_line(tmp_path, a_file):
    runner = CliRunner()
    config = tmp_path / "cfg.json"
    config.write_text(
        '{"hidden_size": 64, "intermediate_size": 128, "num_attention_heads": 4, '
        '"vocab_size": 100, "num_hidden_layers": 2}'
    )
    cases = {
        ("sweep", "label", "--hw", HOST, "--out", f"{a_file}/overlay.json"): "--out ",
        ("sweep", "generate", "--op", "vector_add", "--out-dir", str(a_file)): "is a file",
        ("sweep", "from-config", str(config), "--out", str(tmp_path)): "is a folder",
        ("sweep", "from-config", str(config), "--out", f"{a_file}/s.json"): "cannot write",
    }
    for argv, fragment in cases.items():
        line = _one_error(runner.invoke(cli, list(argv)))
        assert fragment in line, (argv, line)
    assert a_file.read_text() == "not a folder\n"


def test_missing_sweeps_dir_is_an_error_not_an_empty_table(tmp_path):
    result = CliRunner().invoke(cli, ["sweep", "show", "--sweeps-dir", str(tmp_path / "nope")])
    assert "does not exist" in _one_error(result)


@pytest.mark.parametrize(
    "argv",
    [
        ["explain", "--hw", HOST, "--op", "matmul", "--shape", "9" * 29 + "x64x64", "--dtype",
         "fp32"],
        ["sweep", "from-config", "c.json", "--tokens", "9" * 23],
        ["capture", "--hw", "host_cpu", "--op", "vector_add", "--purpose", "validation",
         "--threads", "100000"],
        ["capture", "--hw", "host_cpu", "--op", "vector_add", "--purpose", "validation",
         "--max-wait", "nan"],
    ],
)  # fmt: skip
def test_out_of_range_flags_exit_2(argv):
    _one_error(CliRunner().invoke(cli, argv))


def test_a_rollup_count_must_be_a_positive_integer(tmp_path):
    sweep = tmp_path / "s.json"
    sweep.write_text(
        '{"op": "mixed", "shapes": [{"op": "linear", "shape": [4, 64, 64], "dtype": "fp32", '
        '"count": -5}]}'
    )
    result = CliRunner().invoke(cli, ["predict", "--hw", HOST, "--sweep", str(sweep), "--rollup"])
    assert "count: expected an integer in [1, " in _one_error(result)


def test_a_sweep_of_an_unknown_op_blames_the_sweep_not_the_flag(tmp_path):
    sweep = tmp_path / "s.json"
    sweep.write_text('{"op": "nosuch", "shapes": [{"shape": [8, 8, 8], "dtype": "fp32"}]}')
    line = _one_error(CliRunner().invoke(cli, ["predict", "--hw", HOST, "--sweep", str(sweep)]))
    assert line.startswith(f"Error: {sweep}: ") and "'--op'" not in line


def test_an_internal_error_is_one_line_and_exit_2(capsys, monkeypatch):
    @click.command()
    def broken() -> None:
        raise OverflowError("Python int too large to convert to C long")

    monkeypatch.delenv("GRAPHSVAL_TRACEBACK", raising=False)
    with pytest.raises(SystemExit) as exit_:
        run(broken, [])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("graphsval: internal error: OverflowError: Python int too large")


def test_ctrl_c_exits_130_in_one_line_not_1(capsys, monkeypatch):
    """A Ctrl-C must not read as a failed validation (exit 1, click's 'Aborted!')."""
    from graphsval_core.validate import workflow

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(workflow, "validate", interrupted)
    with pytest.raises(SystemExit) as exit_:
        run(cli, ["validate", "-q"])
    assert exit_.value.code == 130
    err = capsys.readouterr().err
    assert "interrupted (Ctrl-C)" in err and "Aborted" not in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_a_closed_pipe_keeps_the_exit_code_and_a_full_disk_exits_2(tmp_path):
    command = " ".join(_graphsval())
    closed = subprocess.run(
        ["bash", "-c", f"{command} targets | head -c 10 > /dev/null; exit ${{PIPESTATUS[0]}}"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert closed.returncode == 0 and closed.stderr == ""
    if not Path("/dev/full").exists():
        return
    with open("/dev/full", "w") as full:
        result = subprocess.run(
            [*_graphsval(), "targets"], stdout=full, stderr=subprocess.PIPE, text=True, cwd=tmp_path
        )
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "Error: standard output: cannot write: No space left on device"
    ]


def test_a_usage_error_into_a_closed_pipe_keeps_its_exit_code(tmp_path):
    # click exits 1 when the usage error it prints meets a closed pipe; graphsval keeps 2
    command = " ".join(_graphsval())
    for tail in ("head -1", "head -c 0"):
        closed = subprocess.run(
            [
                "bash",
                "-c",
                f"{command} targets --hw no_such_target 2>&1 | {tail} > /dev/null; "
                "exit ${PIPESTATUS[0]}",
            ],
            capture_output=True,
            text=True,
            cwd=tmp_path,
        )
        assert closed.returncode == 2, (tail, closed.stderr)


def test_a_usage_error_is_one_line_naming_the_flag_and_the_help_to_read():
    runner = CliRunner()
    cases = {
        ("validate", "--foo"): ("'--foo'", "`graphsval validate --help`"),
        ("validate", "--hw"): ("'--hw' requires an argument", "`graphsval validate --help`"),
        ("--bogus",): ("'--bogus'", "`graphsval --help`"),
        ("nocmd",): ("No such command 'nocmd'", "`graphsval --help`"),
        ("sweep", "nope"): ("No such command 'nope'", "`graphsval sweep --help`"),
        ("sweep", "--bogus"): ("'--bogus'", "`graphsval sweep --help`"),
        ("sweep", "generate", "--seed", "x"): ("'--seed'", "`graphsval sweep generate --help`"),
        # click's parser gives these no context: the subcommand's help all the same
        ("sweep", "generate", "--seed"): (
            "requires an argument",
            "`graphsval sweep generate --help`",
        ),
        ("sweep", "show", "--json=1"): ("does not take a value", "`graphsval sweep show --help`"),
        ("registry", "lookup", "--hw"): (
            "requires an argument",
            "`graphsval registry lookup --help`",
        ),
        ("plugin", "new", "--dir"): ("requires an argument", "`graphsval plugin new --help`"),
        ("capture", "--hw", "zzz", "--op", "matmul", "--purpose", "validation"): (
            "Invalid value for '--hw': unknown target 'zzz'",
            "`graphsval capture --help`",
        ),
        ("capture", "--hw", HOST, "--op", "zz", "--purpose", "validation"): (
            "Invalid value for '--op': unknown op 'zz'",
            "`graphsval capture --help`",
        ),
        # click lists a choice over several lines: one here
        ("capture", "--hw", HOST, "--op", "vector_add"): (
            "Missing option '--purpose'. Choose from: calibration, validation.",
            "`graphsval capture --help`",
        ),
        ("targets", "--hw", "nope"): ("unknown target 'nope'", "`graphsval targets --help`"),
        ("predict", "--hw", HOST, "--op", "matmul", "--shape", "2x2x2"): (
            "--dtype is required",
            "`graphsval predict --help`",
        ),
    }
    for argv, (what, where) in cases.items():
        result = runner.invoke(cli, list(argv), prog_name="graphsval")
        assert result.exit_code == 2, (argv, result.output)
        assert "Usage:" not in result.output and "Try '" not in result.output, argv
        (line,) = result.output.splitlines()  # one line, nothing else
        assert line.startswith("Error: ") and what in line and line.endswith(f" See {where}.")
        assert line.count("See `") == 1


def test_a_group_run_with_no_command_still_prints_its_help():
    result = CliRunner().invoke(cli, ["sweep"], prog_name="graphsval")
    assert "Usage: graphsval sweep" in result.output and "Commands:" in result.output
    for argv in ([], ["sweep"], ["registry"], ["plugin"]):
        bare = CliRunner().invoke(cli, argv, prog_name="graphsval")
        helped = CliRunner().invoke(cli, [*argv, "--help"], prog_name="graphsval")
        assert bare.output == helped.output and "See `" not in bare.output, argv


def test_a_root_option_given_twice_is_one_line_too():
    result = CliRunner().invoke(
        cli, ["--workspace", "a", "--workspace", "b", "targets"], prog_name="graphsval"
    )
    assert result.exit_code == 2
    (line,) = result.output.splitlines()
    assert "--workspace is given twice" in line and line.endswith("See `graphsval --help`.")


def test_a_whole_number_option_takes_ascii_digits_alone():
    runner = CliRunner()
    for seed in ("1_000", "\uff11\uff12", "1e3", "0x10", "12.0", "", " 7", "7\t", "7\u3000"):
        result = runner.invoke(cli, ["sweep", "generate", "--seed", seed], prog_name="graphsval")
        assert result.exit_code == 2, (seed, result.output)
        (line,) = result.output.splitlines()
        assert "'--seed'" in line and "not a whole number (digits 0-9 only)" in line, line
    for argv in (["capture", "--rounds", "1_0"], ["capture", "--threads", "\u0661"]):
        line = _one_error(runner.invoke(cli, argv))
        assert "not a whole number" in line and argv[1] in line, line
    # the bounds still hold, and a plain number passes the type
    line = _one_error(runner.invoke(cli, ["capture", "--rounds", "0"]))
    assert "0 is not in the range 1<=x<=1000" in line


def test_whole_converts_ascii_digits_with_a_sign(tmp_path):
    from graphsval_core.cli.params import Whole

    whole = Whole(-5, 10**9)
    assert whole.convert("+12", None, None) == 12
    assert whole.convert("-5", None, None) == -5
    assert whole.convert(3, None, None) == 3  # a default given as a number
    for bad in ("1_000", " 7 ", "\u0661"):
        with pytest.raises(click.BadParameter, match="not a whole number"):
            whole.convert(bad, None, None)
    with pytest.raises(click.BadParameter, match=r"\(5000 characters\) is too long") as caught:
        whole.convert("9" * 5000, None, None)
    assert len(caught.value.format_message()) < 100  # not echoed whole


def test_seconds_take_a_finite_decimal_in_ascii_digits():
    from graphsval_core.cli.params import Seconds

    seconds = Seconds(0, 86400)
    assert seconds.convert("2.5", None, None) == 2.5
    assert seconds.convert("1e3", None, None) == 1000.0
    assert seconds.convert(".5", None, None) == 0.5
    for bad in ("1_0", "\u0661", "+ 5", " 7", "0x1p3", "nan", "inf", "1e400", "１"):
        with pytest.raises(click.BadParameter, match="seconds"):
            seconds.convert(bad, None, None)
    argv = ["capture", "--hw", "host_cpu", "--op", "vector_add", "--purpose", "validation"]
    argv += ["--target-ci", "1_0"]
    line = _one_error(CliRunner().invoke(cli, argv))
    assert "'--target-ci'" in line and "not a percentage" in line
