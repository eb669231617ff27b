"""The command line: version, help, targets, exit codes; start-up stays light."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from graphsval_core import __version__
from graphsval_core.cli.main import cli
from graphsval_core.testing import target_field


def test_version():
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0
    assert __version__ in result.output


@pytest.mark.parametrize("args", [["--help"], ["targets", "--help"], ["plugins", "--help"]])
def test_help_imports_neither_torch_nor_plugins(args):
    code = (
        "import sys\n"
        "from graphsval_core.cli.main import cli\n"
        f"try:\n    cli.main(args={args!r}, prog_name='graphsval')\n"
        "except SystemExit:\n    pass\n"
        "bad = [m for m in ('torch', 'numpy', 'pandas', 'pynvml') if m in sys.modules]\n"
        "assert not bad, bad\n"
        "assert not any(m.startswith('graphsval_cpu') for m in sys.modules)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)


def test_targets_does_not_import_torch():
    code = (
        "import sys\n"
        "from graphsval_core.cli.main import cli\n"
        "for args in (['targets'], ['targets', '--hw', 'host_intel_xeon_2c_1t']):\n"
        "    try:\n        cli.main(args=args, prog_name='graphsval')\n"
        "    except SystemExit as e:\n        assert not e.code, e.code\n"
        "assert 'torch' not in sys.modules\n"
        "assert 'numpy' not in sys.modules  # start-up budget: calibration applied without it\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)


def test_unknown_target_is_one_line_exit_2():
    result = CliRunner().invoke(cli, ["targets", "--hw", "no_such_target"])
    assert result.exit_code == 2
    assert "unknown target 'no_such_target'" in result.output
    assert "Traceback" not in result.output


def test_unknown_flag_exits_2():
    result = CliRunner().invoke(cli, ["targets", "--frobnicate"])
    assert result.exit_code == 2
    assert "No such option" in result.output


def test_targets_json_structure(fake_entry_points, make_entry_point, make_plugin, make_target):
    plugin = make_plugin("toy", lambda: [make_target("toy_target")])
    fake_entry_points(make_entry_point("toy", lambda: plugin, "graphsval-toy", "0.1"))
    result = CliRunner().invoke(cli, ["targets", "--json"])
    assert result.exit_code == 0, result.output
    (target,) = json.loads(result.output)["targets"]
    assert target["key"] == "toy_target"
    assert target["plugin"] == "toy" and target["distribution"] == "graphsval-toy"
    assert target["measurer"] == {
        "available": False,
        "reason": "no installed plugin measures this target",
        "energy": "",
    }
    assert [t["name"] for t in target["tiers"]] == ["l1", "l2", "dram"]


@pytest.fixture
def toy_targets(fake_entry_points, make_entry_point, make_plugin, make_target):
    """Installs a toy plugin whose one target ``toy_target`` has the given
    fields, and returns ``graphsval targets --hw toy_target``'s result."""

    def run(**fields):
        plugin = make_plugin("toy", lambda: [make_target("toy_target", **fields)])
        fake_entry_points(make_entry_point("toy", lambda: plugin, "graphsval-toy", "0.1"))
        result = CliRunner().invoke(cli, ["targets", "--hw", "toy_target"])
        assert result.exit_code == 0, result.output
        return result

    return run


def _line(result, start: str) -> str:
    """A field of `targets --hw`: its cells and where its value comes from, one line."""
    cells, source = target_field(result.output, start)
    return "  ".join([*cells, source])


def test_targets_hw_shows_provenance(toy_targets):
    result = toy_targets()
    assert "peak fp32" in result.output and "datasheet: test" in result.output
    assert "l2 bandwidth" in result.output and "500 GB/s" in result.output
    assert "micro-kernel" not in result.output  # the square register tile: no lanes


def test_targets_hw_shows_a_micro_kernel_s_lanes(toy_targets):
    from graphsval_core.datamodel.provenance import datasheet

    result = toy_targets(accumulator_lanes={"fp32": datasheet(16, "oneDNN brgemm")})
    line = _line(result, "micro-kernel fp32")
    assert "16 accumulator lanes" in line and "datasheet: oneDNN brgemm" in line


def test_targets_hw_shows_a_product_overlap(toy_targets):
    from graphsval_core.datamodel.provenance import estimated

    result = toy_targets(product_overlap={"fp32": estimated(0.25, "fitted")})
    line = _line(result, "product overlap fp32")
    assert "0.25 of the shorter of compute and memory beyond l1 hidden" in line
    assert "estimated: fitted" in line
    # explain says how much of a balanced product's shorter time adds to its latency
    args = ["explain", "--op", "matmul", "--shape", "32x4096x4096", "--dtype", "fp32"]
    result = CliRunner().invoke(cli, [*args, "--hw", "toy_target"])
    assert result.exit_code == 0, result.output
    assert "the GEMM library hides 0.25 of the shorter of compute and memory" in result.output


def test_no_targets_message(fake_entry_points):
    fake_entry_points()
    result = CliRunner().invoke(cli, ["targets"])
    assert result.exit_code == 0
    assert "No targets" in result.output


def test_the_lazy_command_table_holds_each_commands_own_help():
    """``graphsval --help`` lists the commands from a table, importing none:
    each entry is the command's module, name and first paragraph of help."""
    import importlib
    import inspect

    import click

    from graphsval_core.cli.main import COMMANDS

    ctx = click.Context(cli)
    for name, (module, attribute, first) in COMMANDS.items():
        command = getattr(importlib.import_module(module), attribute)
        assert cli.get_command(ctx, name) is command
        assert command.name == name
        own = " ".join(inspect.cleandoc(command.help or "").split("\n\n")[0].split())
        assert first == own, f"{name}: update COMMANDS in graphsval_core/cli/main.py"


def test_targets_lists_each_target_with_its_tiers_and_measurer_beneath(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    result = CliRunner().invoke(cli, ["targets"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].split() == ["TARGET", "FAMILY", "GROUND", "TRUTH", "DTYPES"]
    cells, note = target_field(result.output, "i7_12700k")
    assert cells == ["cpu", "measured", "fp32, bf16"]
    assert note.startswith("plugin cpu; tiers: l1 ") and "; dram " in note
    assert "; measurer: " in note
    # every line fits the screen's width, the columns in line
    assert all(len(line) <= 80 for line in lines), [x for x in lines if len(x) > 80]
