"""The light install: a command that needs a missing extra says which to
install in one line, exits 2 and writes nothing; validating needs none."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from graphsval_core.cli.main import cli
from graphsval_core.extras import absent, plugin_extra_modules


@pytest.fixture
def hide(monkeypatch: pytest.MonkeyPatch):
    """Make modules unimportable (as if their extra were not installed)."""

    def _hide(*names: str) -> None:
        for name in names:
            monkeypatch.setitem(sys.modules, name, None)

    return _hide


def _one_line(output: str) -> str:
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) == 1, output
    assert "Traceback" not in output
    return lines[0]


def test_absent_looks_up_without_importing(hide):
    hide("matplotlib")
    assert absent(("matplotlib", "numpy", "no_such_module_xyz")) == [
        "matplotlib",
        "no_such_module_xyz",
    ]


def test_validate_out_without_matplotlib_names_the_extra_and_writes_nothing(hide, tmp_path):
    hide("matplotlib", "matplotlib.pyplot")
    out = tmp_path / "reports"
    result = CliRunner().invoke(cli, ["validate", "--hw", "i7_12700k", "--out", str(out)])
    assert result.exit_code == 2, result.output
    line = _one_line(result.output)
    assert "pip install 'graphsval[report]'" in line
    assert not out.exists()


def test_validate_without_the_heavy_parts_runs(hide):
    hide("matplotlib", "scipy", "torch")
    result = CliRunner().invoke(cli, ["validate", "--hw", "i7_12700k", "-q"])
    assert result.exit_code in (0, 1), result.output
    assert "records pass" in result.output


def test_capture_without_torch_names_the_plugins_capture_extra(hide, tmp_path):
    hide("torch")
    result = CliRunner().invoke(
        cli,
        [
            "capture",
            "--hw",
            "host_cpu",
            "--op",
            "vector_add",
            "--purpose",
            "validation",
            "--out",
            str(tmp_path / "x.csv"),
        ],
    )
    assert result.exit_code == 2, result.output
    assert "pip install 'graphsval-cpu[capture]'" in _one_line(result.output)
    assert not (tmp_path / "x.csv").exists()


def test_calibrate_without_scipy_names_its_extra_and_writes_nothing(hide, tmp_path):
    hide("scipy", "scipy.optimize")
    out = tmp_path / "x.calibration.json"
    result = CliRunner().invoke(
        cli, ["calibrate", "--hw", "i7_12700k", "--baseline", "x.csv", "--out", str(out)]
    )
    assert result.exit_code == 2, result.output
    assert "pip install 'graphsval[calibrate]'" in _one_line(result.output)
    assert not out.exists()


def test_calibrate_report_without_matplotlib_names_the_report_extra(hide, tmp_path):
    hide("matplotlib")
    result = CliRunner().invoke(
        cli, ["calibrate", "--hw", "i7_12700k", "--baseline", "x.csv", "--report", str(tmp_path)]
    )
    assert result.exit_code == 2, result.output
    assert "pip install 'graphsval[report]'" in _one_line(result.output)


def test_capture_machine_without_scipy_names_the_calibrate_extra(hide):
    hide("scipy")
    result = CliRunner().invoke(cli, ["capture-machine", "--quick"])
    assert result.exit_code == 2, result.output
    assert "pip install 'graphsval[calibrate]'" in _one_line(result.output)


def test_measuring_plugins_bring_torch_only_as_their_capture_extra():
    from importlib.metadata import requires

    for dist in ("graphsval-cpu", "graphsval-cuda", "graphsval-jetson"):
        assert plugin_extra_modules(dist, "capture") == ["torch"]
        plain = [r for r in requires(dist) or [] if "extra ==" not in r]
        assert not any(r.startswith("torch") for r in plain), plain
    core = [r for r in requires("graphsval") or [] if "extra ==" not in r]
    for heavy in ("torch", "matplotlib", "scipy"):
        assert not any(r.startswith(heavy) for r in core), core


def test_validate_imports_no_heavy_module():
    code = (
        "import sys\n"
        "from graphsval_core.cli.main import cli\n"
        "try:\n    cli.main(args=['validate', '-q'], prog_name='graphsval')\n"
        "except SystemExit:\n    pass\n"
        "bad = [m for m in ('torch', 'matplotlib', 'scipy') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, cwd=Path(__file__).parent
    )
