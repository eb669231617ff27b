"""A plugin can never take the tool down: plugins made to fail, installed as a
user installs them (a module and its dist-info on the path, beside the five
shipped plugins), through the ``graphsval`` command end to end.

Each hook raises, exits, raises KeyboardInterrupt (no Ctrl-C) or answers
garbage; plugins exit or interrupt at import; shipped files do not parse;
plugins clash with a built-in key. In normal mode every command still
validates the built-in targets (exit 0 or 1, the same records as without the
plugins, never a traceback) and names each culprit in one line; in strict
mode each exits 2 with one line naming it.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from graphsval_core.cli.main import cli
from graphsval_core.testing import target_field

#: Every hook but the registration ones, with its parameters and a garbage answer.
HOOKS: dict[str, tuple[str, str]] = {
    "graphsval_register_targets": ("", "'a target'"),
    "graphsval_register_ops": ("", "[42]"),
    "graphsval_register_predictors": ("", "{'naive': 1}"),
    "graphsval_baselines": ("", "[42]"),
    "graphsval_calibrations": ("", "7"),
    "graphsval_floors": ("", "42"),
    "graphsval_prediction_snapshot": ("", "[1]"),
    "graphsval_sweep_overlays": ("", "3.5"),
    "graphsval_memory_hierarchy": ("target", "'tiers'"),
    "graphsval_residency_window": ("target, op, shapes, dtype, tier", "[[1, 2]]"),
    "graphsval_measurer_probe": ("target", "'yes'"),
    "graphsval_measure": ("target, op, shape, dtype, settings", "0.5"),
    "graphsval_snapshot_target": ("target, settings", "'frozen'"),
    "graphsval_consistency_checks": ("target", "[None, 42]"),
    "graphsval_expected_failures": ("target", "{'bounds.power': 1}"),
}

#: How each hook fails: the body of the implementation.
FAULTS: dict[str, str] = {
    "raises": "raise RuntimeError('boom in {hook}')",
    "exits": "import sys; sys.exit(3)",
    "interrupts": "raise KeyboardInterrupt",
    "garbage": "return {garbage}",
}

#: What the message says for each fault.
SAYS: dict[str, str] = {
    "raises": "RuntimeError: boom in",
    "exits": "SystemExit: 3 (the plugin called sys.exit)",
    "interrupts": "KeyboardInterrupt (raised by the plugin: no Ctrl-C was pressed)",
    "garbage": "returned",
}

#: Hooks that only ``graphsval capture`` calls: measuring needs the hardware.
CAPTURE_ONLY = ("graphsval_measure",)


def _hook_plugin(fault: str, hook: str) -> str:
    args, garbage = HOOKS[hook]
    body = FAULTS[fault].format(hook=hook, garbage=garbage)
    return f"@hookimpl\ndef {hook}({args}):\n    {body}\n"


HOOK_PLUGINS = {
    f"{fault}_{hook.removeprefix('graphsval_')}": _hook_plugin(fault, hook)
    for fault in FAULTS
    for hook in HOOKS
}

#: A target spec with the key of a built-in one (graphsval-cpu's i7_12700k).
CLASHING_TARGET = """
from graphsval_core.plugin_api import MemoryTier, TargetSpec, datasheet as d

def _tier(name, capacity, bandwidth):
    shared = name == "dram"
    return MemoryTier(name, d(capacity, "x"), not shared, 1 if shared else 4, d(bandwidth, "x"),
                      d(1.0, "x"), energy_per_byte_j=d(1e-12, "x"))

@hookimpl
def graphsval_register_targets():
    return [TargetSpec(
        key="i7_12700k", name="not the real one", family="acme", architecture="cpu",
        compute_units=d(4, "x"), clock_hz=d(2e9, "x"), peak_ops_per_s={"fp32": d(1e11, "x")},
        energy_per_op_j={"fp32": d(1e-12, "x")}, launch_overhead_s=d(1e-6, "x"),
        idle_power_w=d(5.0, "x"), tdp_w=d(65.0, "x"), ground_truth="measured",
        tiers=[_tier("l1", 32768, 1e12), _tier("dram", 2**34, 5e10)])]
"""

OTHER_PLUGINS: dict[str, tuple[str, dict[str, str], bool]] = {
    # name: (source, files beside the module, whether the source takes the header)
    "exit_at_import": ("import sys\nsys.exit(7)\n", {}, False),
    "interrupt_at_import": ("raise KeyboardInterrupt\n", {}, False),
    "error_at_import": ("raise ImportError('no such SDK')\n", {}, False),
    "clash_target": (CLASHING_TARGET, {}, True),
    "clash_predictor": (
        "from graphsval_core.plugin_api import PredictorSpec\n@hookimpl\n"
        "def graphsval_register_predictors():\n"
        "    return [PredictorSpec(name='reference', description='mine', predict=print)]\n",
        {},
        True,
    ),
    "clash_op": (
        "import graphsval_core.builtin.ops as ops\n@hookimpl\n"
        "def graphsval_register_ops():\n    return [ops.MATMUL]\n",
        {},
        True,
    ),
    **{
        f"bad_file_{hook.removeprefix('graphsval_')}": (
            f"from pathlib import Path\n@hookimpl\ndef {hook}():\n    return {answer}\n",
            {"bad.csv": "hardware,op\n1,2,3\n", "bad.json": "{not json"},
            True,
        )
        for hook, answer in (
            ("graphsval_baselines", "[Path(__file__).with_name('bad.csv')]"),
            ("graphsval_calibrations", "[Path(__file__).with_name('bad.json')]"),
            ("graphsval_floors", "Path(__file__).with_name('bad.json')"),
            ("graphsval_prediction_snapshot", "Path(__file__).with_name('bad.json')"),
            ("graphsval_sweep_overlays", "[Path(__file__).with_name('bad.json')]"),
        )
    },
}

ALL = [*HOOK_PLUGINS, *OTHER_PLUGINS]


def _install(install_plugin, name: str) -> None:
    if name in HOOK_PLUGINS:
        install_plugin(name, HOOK_PLUGINS[name])
    else:
        source, files, header = OTHER_PLUGINS[name]
        install_plugin(name, source, files, header=header)


def _run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def _summary(result: Result) -> str:
    """The last line of a validation's report: ``N/M records pass (...)``."""
    return result.stdout.strip().splitlines()[-1]


def _warnings(result: Result) -> list[str]:
    """The ``warning:`` lines on stderr (a failing consistency check of a
    shipped target has lines of its own there)."""
    return [line for line in result.stderr.splitlines() if line.startswith("warning:")]


def _in_one_line(result: Result) -> None:
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception


def _expected_culprit(name: str) -> bool:
    """Whether ``graphsval validate`` meets this plugin's fault (measuring, it does not)."""
    return not any(name.endswith(hook.removeprefix("graphsval_")) for hook in CAPTURE_ONLY)


@pytest.fixture(scope="module")
def clean_validation() -> str:
    """The summary line of ``graphsval validate`` with only the shipped plugins."""
    result = _run("validate")
    assert result.exit_code in (0, 1), result.output
    return _summary(result)


#: One built-in target, for the runs of one plugin at a time.
ONE = ("--hw", "i7_12700k")


@pytest.fixture(scope="module")
def clean_one() -> str:
    """The summary line of ``graphsval validate --hw i7_12700k``, shipped plugins only."""
    result = _run("validate", *ONE)
    assert result.exit_code in (0, 1), result.output
    return _summary(result)


def test_validate_survives_every_broken_plugin_at_once(install_plugin, clean_validation):
    for name in ALL:
        _install(install_plugin, name)
    result = _run("validate")
    _in_one_line(result)
    assert result.exit_code in (0, 1), result.output
    assert _summary(result) == clean_validation  # the built-in targets, validated as ever
    warnings = _warnings(result)
    assert all(line.startswith("warning: plugin '") for line in warnings), warnings
    named = {re.match(r"warning: plugin '(\w+)'", line).group(1) for line in warnings}
    missing = {n for n in ALL if _expected_culprit(n)} - named
    assert not missing, f"culprits not named: {sorted(missing)}"


def test_explain_and_predict_survive_every_broken_plugin(install_plugin):
    for name in ALL:
        _install(install_plugin, name)
    args = ("--hw", "i7_12700k", "--op", "matmul", "--shape", "256x256x256", "--dtype", "fp32")
    for command in ("explain", "predict"):
        result = _run(command, *args)
        _in_one_line(result)
        assert result.exit_code == 0, result.output
        assert "256x256x256" in result.stdout


def test_plugins_lists_every_broken_plugin_as_a_problem(install_plugin):
    for name in ALL:
        _install(install_plugin, name)
    result = _run("plugins")
    _in_one_line(result)
    assert result.exit_code == 0, result.output
    listing = result.stdout.split("\n\n")[0]
    names = [r.split()[0] for r in listing.splitlines()[2:] if not r.startswith(" ")]
    status = {name: target_field(listing, name)[0][1] for name in names}
    for name in ALL:
        expected = {"ok"} if not _expected_culprit(name) else {"problem", "FAILED"}
        assert status[name] in expected, (name, status[name])
    for shipped in ("cpu", "cuda", "jetson", "kpu", "tpu"):
        assert status[shipped] == "ok"


@pytest.mark.parametrize("name", [n for n in ALL if _expected_culprit(n)])
def test_strict_mode_exits_2_naming_the_culprit_in_one_line(install_plugin, name):
    _install(install_plugin, name)
    result = _run("--strict-plugins", "validate")
    _in_one_line(result)
    assert result.exit_code == 2, result.output
    (line,) = result.output.splitlines()
    assert line.startswith("Error: ") and f"'{name}' (gvt-{name} 1.0)" in line
    fault = name.split("_")[0]
    if name in HOOK_PLUGINS:
        assert SAYS[fault] in line


@pytest.mark.parametrize(
    "name",
    [
        "raises_memory_hierarchy",
        "garbage_memory_hierarchy",
        "garbage_baselines",
        "raises_consistency_checks",
        "exit_at_import",
        "interrupt_at_import",
        "clash_target",
        "clash_predictor",
        "clash_op",
        "bad_file_baselines",
    ],
)
def test_each_plugin_alone_loses_its_contribution_only(install_plugin, clean_one, name):
    _install(install_plugin, name)
    result = _run("validate", *ONE)
    _in_one_line(result)
    assert result.exit_code in (0, 1), result.output
    assert _summary(result) == clean_one
    (line,) = _warnings(result)
    assert line.startswith(f"warning: plugin '{name}' (gvt-{name} 1.0): ")


def test_a_key_clash_names_the_key_and_keeps_the_built_in(install_plugin):
    for name in ("clash_target", "clash_predictor", "clash_op"):
        _install(install_plugin, name)
    result = _run("validate", "--hw", "i7_12700k", "--op", "matmul")
    assert result.exit_code in (0, 1), result.output
    text = result.stderr
    for what, key, owner in (
        ("target", "i7_12700k", "cpu"),
        ("predictor", "reference", "builtin_reference"),
        ("op", "matmul", "builtin_ops"),
    ):
        assert f"{what} '{key}' is registered by" in text and f"'{owner}'" in text
    assert "first-party plugins take precedence" in text


def test_two_third_parties_clashing_both_lose_the_key(install_plugin):
    source = CLASHING_TARGET.replace('key="i7_12700k"', 'key="acme_one"')
    install_plugin("acme", source)
    install_plugin("rival", source)
    result = _run("validate", *ONE)
    assert result.exit_code in (0, 1), result.output
    lines = _warnings(result)
    assert len(lines) == 2 and all("the key is withdrawn" in line for line in lines)
    for line, name in zip(sorted(lines), ("acme", "rival"), strict=True):
        assert line.startswith(f"warning: plugin '{name}' (gvt-{name} 1.0): target 'acme_one'")
        assert "'acme' and 'rival'" in line or "'rival' and 'acme'" in line


@pytest.mark.parametrize(
    "source, says",
    [
        ("import sys\nsys.exit(7)\n", "SystemExit: 7 (the plugin called sys.exit)"),
        (
            "raise KeyboardInterrupt\n",
            "KeyboardInterrupt (raised by the plugin: no Ctrl-C was pressed)",
        ),
    ],
    ids=["exit", "interrupt"],
)
def test_a_plugin_leaving_at_import_does_not_end_the_process(
    install_plugin, tmp_path: Path, source: str, says: str
):
    """The real command, as a process: the plugin's exit code never becomes
    the command's, and no "Aborted!"."""
    install_plugin("leaves", source, header=False)
    result = _process("validate", *ONE, cwd=tmp_path)
    assert result.returncode in (0, 1), result.stderr
    assert "Traceback" not in result.stderr and "Aborted" not in result.stderr
    assert [line for line in result.stderr.splitlines() if line.startswith("warning:")] == [
        f"warning: plugin 'leaves' (gvt-leaves 1.0): failed to import: {says}"
    ]
    strict = _process("--strict-plugins", "validate", *ONE, cwd=tmp_path)
    assert strict.returncode == 2
    assert strict.stderr.splitlines() == [
        f"Error: strict plugin loading: plugin 'leaves' (gvt-leaves 1.0): failed to import: {says}"
    ]


def _process(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "graphsval_core", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
    )


def test_the_users_ctrl_c_still_stops_the_command(install_plugin, tmp_path: Path):
    """A SIGINT that lands in a plugin's hook is the user's: the command stops."""
    install_plugin(
        "impatient",
        """
        import os, signal, time

        @hookimpl
        def graphsval_memory_hierarchy(target):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)
        """,
    )
    result = _process("validate", *ONE, cwd=tmp_path)
    assert result.returncode == 130  # 128 + SIGINT: never the 1 of a failed validation
    assert "interrupted (Ctrl-C)" in result.stderr and "warning" not in result.stderr
