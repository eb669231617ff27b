"""The installed-CLI battery: every command line of the fuzz corpus run as a
subprocess of the installed ``graphsval`` (consistency checks included), and
the faults only a real process meets: a reader that closes the pipe, a full
disk (``/dev/full``), an ASCII locale with locale coercion off. The same
promises as the in-process suite: exit code 0, 1 or 2, no traceback, an
invalid input exits 2 in one line naming it, no input file modified.

A longer profile, outside the 10-minute suite: collected only with
``GRAPHSVAL_FUZZ_INSTALLED=1 python -m pytest tests/fuzz -m fuzz_installed``
(some minutes on 2 cores)."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.fuzz_installed  # collected with GRAPHSVAL_FUZZ_INSTALLED=1 only
HOST = "host_intel_xeon_2c_1t"


def _graphsval() -> str:
    beside = Path(sys.executable).with_name("graphsval")
    found = str(beside) if beside.exists() else shutil.which("graphsval")
    assert found, "no installed graphsval (pip install -e .)"
    return found


def _digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def _run(
    argv: list[str], cwd: Path, extra_env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    extra_env = extra_env or {}
    env = {**os.environ, "GRAPHSVAL_WORKSPACE": str(cwd / "workspace"), **extra_env}
    return subprocess.run(
        [_graphsval(), *argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def test_every_command_line_as_a_subprocess(command, valid_inputs, tmp_path):
    inputs, out = tmp_path / "in", tmp_path / "out"
    out.mkdir()
    names = {k: str(v) for k, v in valid_inputs.items()}
    names["OUT"] = str(out)
    if command.case is not None:
        names["FILE"] = str(inputs / f"case.{command.case.fmt}")
        Path(names["FILE"]).write_bytes(command.case.data)
    argv = [
        names.get(a, a.replace("OUT/", f"{out}/", 1) if a.startswith("OUT/") else a)
        for a in command.argv
    ]
    before = _digest(inputs)
    result = _run(argv, out)
    shown = f"{command.id}\n{result.stderr[-2000:]}"
    assert result.returncode in (0, 1, 2), shown
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr, shown
    if command.expect == "bad":
        assert result.returncode == 2, shown
        assert sum(line.startswith("Error:") for line in result.stderr.splitlines()) == 1, shown
    elif command.expect == "ok":
        assert result.returncode in (0, 1), shown
    assert _digest(inputs) == before, f"{shown}\nan input file was modified"


def test_a_closed_pipe_keeps_the_exit_code(tmp_path):
    for argv, code in ((["targets"], 0), (["sweep", "show"], 0)):
        shell = f"{_graphsval()} {' '.join(argv)} | head -c 10 > /dev/null; exit ${{PIPESTATUS[0]}}"
        result = subprocess.run(["bash", "-c", shell], capture_output=True, text=True, cwd=tmp_path)
        assert result.returncode == code and result.stderr == "", result.stderr


@pytest.mark.parametrize("argv", [["targets"], ["--help"], ["--version"], ["validate", "--help"]])
def test_a_full_disk_is_one_line_and_exit_2(tmp_path, argv):
    """Whoever writes (a command, or click itself for --help and --version)."""
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    with open("/dev/full", "w") as full:
        result = subprocess.run(
            [_graphsval(), *argv], stdout=full, stderr=subprocess.PIPE, text=True, cwd=tmp_path
        )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "Error: standard output: cannot write: No space left on device"
    ]


def test_an_ascii_locale_reads_and_writes_utf8(tmp_path, valid_inputs):
    tolerances = tmp_path / "tolerances.json"
    shipped = Path(__file__).resolve().parents[2] / "graphsval_core" / "files" / "tolerances.json"
    text = shipped.read_text(encoding="utf-8")
    tolerances.write_text(text.replace("Per-regime", "Per-régime ✓"), encoding="utf-8")
    env = {"LC_ALL": "C", "LANG": "C", "PYTHONCOERCECLOCALE": "0", "PYTHONUTF8": "0"}
    argv = ["validate", "--baseline", str(valid_inputs["V4"]), "--tolerances", str(tolerances)]
    result = _run(argv, tmp_path, env)
    assert result.returncode in (0, 1), result.stderr
    assert "Traceback" not in result.stderr


def test_a_baseline_piped_on_stdin_is_read_once(tmp_path):
    """`validate --baseline /dev/stdin` read the pipe to hash it (is it a
    file a calibration was fitted on?) and then found it empty."""
    shipped = Path(__file__).resolve().parents[2] / "plugins/graphsval_cpu/graphsval_cpu"
    rows = (shipped / "baselines/host_intel_xeon_2c_1t_vector_add.validation.csv").read_bytes()
    result = subprocess.run(
        [_graphsval(), "validate", "-q", "--baseline", "/dev/stdin"],
        input=rows,
        capture_output=True,
        cwd=tmp_path,
    )
    assert result.returncode == 1, result.stderr
    assert b"records pass" in result.stdout and b"empty file" not in result.stderr
