"""The callables a plugin hands over inside its records are guarded like its
hooks, end to end (a plugin installed with its dist-info, through the
``graphsval`` command): a consistency check's ``run`` and an op's
``flops``, ``operand_elements`` and ``gemm_dims`` that raise, exit, raise
KeyboardInterrupt (no Ctrl-C) or answer garbage are the plugin's problem, in
one line naming it; the exit code reflects only the validation; strict mode
exits 2 in one line; ``graphsval plugins`` calls them and shows "problem"."""

from __future__ import annotations

import pytest
from click.testing import CliRunner, Result

from graphsval_core.cli.main import cli

FAULTS = {
    "raises": ("raise RuntimeError('boom')", "raised RuntimeError: boom"),
    "exits": ("import sys; sys.exit(3)", "raised SystemExit: 3 (the plugin called sys.exit)"),
    "interrupts": (
        "raise KeyboardInterrupt",
        "raised KeyboardInterrupt (raised by the plugin: no Ctrl-C was pressed)",
    ),
    "garbage": ("return 'not outcomes'", "returned str, expected Outcome records"),
}

CHECK = """
from graphsval_core.plugin_api import ConsistencyCheck

def run(target, context):
    {body}

@hookimpl
def graphsval_consistency_checks(target):
    return [ConsistencyCheck(name="acme.check", description="a broken check", run=run)]
"""


def _run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def _culprit(result: Result, name: str) -> list[str]:
    return [line for line in result.stderr.splitlines() if name in line]


@pytest.mark.parametrize("fault", FAULTS)
def test_a_broken_consistency_check_is_a_plugin_problem(install_plugin, fault):
    body, says = FAULTS[fault]
    name = f"check_{fault}"
    install_plugin(name, CHECK.format(body=body))
    line = f"consistency check 'acme.check' {says}"
    result = _run("check", "--hw", "i7_12700k")
    assert result.exit_code == 0, result.output  # the target's checks pass: so does the run
    assert "Traceback" not in result.output and "Aborted" not in result.output
    (warning,) = _culprit(result, name)
    assert warning == f"warning: plugin '{name}' (gvt-{name} 1.0): {line}"
    assert "skip acme.check: the check of plugin" in result.stdout
    strict = _run("--strict-plugins", "check", "--hw", "i7_12700k")
    assert strict.exit_code == 2
    (error,) = strict.stderr.strip().splitlines()
    assert name in error and line in error
    listing = _run("plugins")
    (row,) = [r for r in listing.stdout.splitlines() if r.startswith(name)]
    assert " problem " in f"{row} "
    assert line in listing.stdout


OP = """
import numpy as np
from graphsval_core.plugin_api import OpSpec

def elements(shapes):
    s = np.asarray(shapes, dtype=np.float64)
    return {{"x": s[:, 0], "out": s[:, 0]}}

def flops(shapes):
    {body}

@hookimpl
def graphsval_register_ops():
    return [OpSpec(name="acme_op", dims=("N",), operand_elements=elements, flops=flops,
                   working_set_operands=("x", "out"), output_operand="out")]
"""

OP_FAULTS = {
    "raises": ("raise RuntimeError('flops boom')", "flops raised RuntimeError: flops boom"),
    "exits": ("import sys; sys.exit(5)", "flops raised SystemExit: 5 (the plugin called sys.exit)"),
    "interrupts": ("raise KeyboardInterrupt", "flops raised KeyboardInterrupt"),
    "nan": (
        "return np.full(len(shapes), np.nan)",
        "flops returned nan in flops, expected finite non-negative numbers",
    ),
    "shape": ("return np.ones((len(shapes), 2))", "flops returned flops of shape"),
}


@pytest.fixture(scope="module")
def clean() -> str:
    result = _run("validate", "--hw", "i7_12700k", "--op", "vector_add", "-q")
    return result.stdout


@pytest.mark.parametrize("fault", OP_FAULTS)
def test_a_broken_op_loses_its_rows_only(install_plugin, clean, fault):
    body, says = OP_FAULTS[fault]
    name = f"op_{fault}"
    rows = "hardware,op,shape,dtype,latency_s,energy_j,trial_count,notes\n"
    rows += "i7_12700k,acme_op,4096,fp32,1e-5,,10,\n"
    install_plugin(
        name,
        OP.format(body=body)
        + "\nfrom pathlib import Path\n@hookimpl\ndef graphsval_baselines():\n"
        + "    return [Path(__file__).parent / 'i7_12700k_acme_op.validation.csv']\n",
        files={"i7_12700k_acme_op.validation.csv": rows},
    )
    result = _run("validate", "--hw", "i7_12700k", "--op", "vector_add", "-q")
    assert result.exit_code in (0, 1) and result.stdout == clean, result.output
    (warning,) = _culprit(result, name)
    assert f"plugin '{name}' (gvt-{name} 1.0): op 'acme_op' is not registered: {says}" in warning
    one_shape = ("--hw", "i7_12700k", "--op", "matmul", "--shape", "64x64x64", "--dtype", "fp32")
    for command in ("explain", "predict"):
        other = _run(command, *one_shape)
        assert other.exit_code == 0 and "Traceback" not in other.output, other.output
    strict = _run("--strict-plugins", "validate", "--hw", "i7_12700k")
    assert strict.exit_code == 2
    (error,) = strict.stderr.strip().splitlines()
    assert name in error and says in error
    listing = _run("plugins")
    assert any(r.startswith(name) and " problem" in r for r in listing.stdout.splitlines())


def test_an_op_failing_on_some_shapes_loses_that_batch_in_one_line(install_plugin):
    body = (
        "if np.asarray(shapes).max() > 100000: raise ValueError('too big')\n"
        "    return 2.0 * np.asarray(shapes, dtype=np.float64)[:, 0]"
    )
    install_plugin("op_big", OP.format(body=body))
    result = _run(
        "predict", "--hw", "i7_12700k", "--op", "acme_op", "--shape", "1000000", "--dtype", "fp32"
    )
    assert result.exit_code == 2
    (line,) = result.stderr.strip().splitlines()
    assert "op 'acme_op' of plugin 'op_big'" in line and "flops raised ValueError: too big" in line
    assert (
        _run(
            "predict", "--hw", "i7_12700k", "--op", "acme_op", "--shape", "1000", "--dtype", "fp32"
        ).exit_code
        == 0
    )


# --- shipped files and registration lines ---------------------------------------------

OVERLAYS = {
    "missing": ("[Path('/nonexistent/overlay.json')]", "cannot read"),
    "malformed": ("[HERE / 'bad.json']", "not valid JSON"),
    "wrong_type": ("[HERE / 'list.json']", "expected an object, got a list"),
    "folder": ("[HERE]", "cannot read"),
}


@pytest.mark.parametrize("kind", OVERLAYS)
def test_sweep_show_survives_a_broken_overlay(install_plugin, kind):
    answer, says = OVERLAYS[kind]
    name = f"overlay_{kind}"
    install_plugin(
        name,
        "from pathlib import Path\nHERE = Path(__file__).parent\n"
        f"@hookimpl\ndef graphsval_sweep_overlays():\n    return {answer}\n",
        files={"bad.json": '{"labels": {,}}', "list.json": "[1, 2]"},
    )
    result = _run("sweep", "show")
    assert result.exit_code == 0, result.output
    (line,) = _culprit(result, name)
    assert line.startswith(
        f"warning: plugin '{name}' (gvt-{name} 1.0): sweep-label overlay left out"
    )
    assert says in line
    strict = _run("--strict-plugins", "sweep", "show")
    assert strict.exit_code == 2
    (error,) = strict.stderr.strip().splitlines()
    assert name in error and says in error


@pytest.mark.parametrize("hook", ["graphsval_floors", "graphsval_prediction_snapshot"])
def test_a_str_path_is_refused_saying_what_to_return(install_plugin, hook):
    install_plugin("str_path", f"@hookimpl\ndef {hook}():\n    return 'floors.json'\n")
    result = _run("plugins")
    assert f"{hook} returned str 'floors.json', expected a pathlib.Path" in result.stdout


def test_a_failed_registration_hook_is_named(install_plugin):
    install_plugin(
        "reg_raises", "@hookimpl\ndef graphsval_register_targets():\n    raise RuntimeError('no')\n"
    )
    (line,) = _culprit(_run("targets"), "reg_raises")
    assert line.endswith(
        "invalid target registration: graphsval_register_targets raised RuntimeError: no"
    )


def test_a_malformed_entry_point_is_named_and_shown(install_plugin):
    folder = install_plugin("quoted", "")
    (folder / "gvt_quoted-1.0.dist-info" / "entry_points.txt").write_text(
        '[graphsval]\nquoted = "gvt_quoted"\n'
    )
    result = _run("targets")
    assert result.exit_code == 0 and "Traceback" not in result.output
    (line,) = _culprit(result, "quoted")
    assert "malformed entry point" in line and 'quoted = "gvt_quoted"' in line


def test_a_wrong_residency_window_is_one_line_however_many_batches(install_plugin):
    install_plugin(
        "window",
        "import numpy as np\n@hookimpl\n"
        "def graphsval_residency_window(target, op, shapes, dtype, tier):\n"
        "    return np.zeros((1, 2))\n",
    )
    result = _run("validate", "--hw", "i7_12700k", "-q")
    assert result.exit_code in (0, 1), result.output
    (line,) = _culprit(result, "window")
    assert "hook graphsval_residency_window returned an array of shape (1, 2)" in line
