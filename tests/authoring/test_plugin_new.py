"""``graphsval plugin new``: the scaffolded plugin installs as is (into a temp
environment, no download), is listed, validates against a small baseline it
is given, and passes its own tests (the conformance class)."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import graphsval_core
from graphsval_core.authoring.scaffold import check_name
from graphsval_core.cli.main import cli

KEY = "acme_dev1"


def _run(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None):
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=300
    )


def _env_with(site: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))
    env.pop("GRAPHSVAL_DISABLE_PLUGIN_AUTOLOAD", None)
    env["GRAPHSVAL_STRICT_PLUGINS"] = "1"
    return env


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


#: What ``plugin new acme`` wrote (before pip leaves its build folders there).
WRITTEN: list[str] = []


@pytest.fixture(scope="module")
def acme(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """``graphsval plugin new acme`` in a temp dir, installed into a temp
    environment (a --target directory: no dependencies, no downloads)."""
    parent = tmp_path_factory.mktemp("scaffold")
    result = CliRunner().invoke(cli, ["plugin", "new", "acme", "--dir", str(parent)])
    assert result.exit_code == 0, result.output
    source = parent / "graphsval-acme"
    WRITTEN[:] = _files(source)
    site = tmp_path_factory.mktemp("acme-site")
    installed = _run(
        "-m",
        "pip",
        "install",
        "--quiet",
        "--no-deps",
        "--no-build-isolation",
        "--no-index",
        "--target",
        str(site),
        str(source),
    )
    assert installed.returncode == 0, installed.stderr
    return source, site


def test_scaffold_writes_a_complete_package(acme):
    source, _ = acme
    assert WRITTEN == [
        "README.md",
        "graphsval_acme/__init__.py",
        "graphsval_acme/baselines/README.md",
        "graphsval_acme/calibration/README.md",
        "graphsval_acme/measure.py",
        "graphsval_acme/plugin.py",
        "graphsval_acme/sweep_labels.json",
        "graphsval_acme/targets.py",
        "pyproject.toml",
        "tests/test_acme_conformance.py",
    ]
    assert 'acme = "graphsval_acme.plugin"' in (source / "pyproject.toml").read_text()
    overlay = json.loads((source / "graphsval_acme/sweep_labels.json").read_text())
    assert overlay["kind"] == "graphsval-sweep-labels" and overlay["targets"] == [KEY]
    texts = "".join((source / name).read_text() for name in WRITTEN)
    assert str(Path.home()) not in texts and str(source.parent) not in texts


def test_scaffolded_plugin_is_listed(acme, tmp_path: Path):
    _, site = acme
    result = _run("-m", "graphsval_core", "targets", "--json", env=_env_with(site), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    targets = {t["key"]: t for t in json.loads(result.stdout)["targets"]}
    assert targets[KEY]["plugin"] == "acme"
    assert targets[KEY]["distribution"] == "graphsval-acme"
    measurer = targets[KEY]["measurer"]
    assert not measurer["available"]
    assert "not implemented for this hardware" in measurer["reason"]
    assert all(p for p in targets[KEY]["provenance"].values())


def test_scaffolded_plugin_validates_against_a_small_baseline(acme, tmp_path: Path):
    _, site = acme
    env = _env_with(site)
    rows = []
    for op, shape in (("matmul", "256x256x256"), ("vector_add", "4194304")):
        predicted = _run(
            "-m", "graphsval_core", "predict", "--hw", KEY, "--op", op, "--shape", shape,
            "--dtype", "fp32", "--format", "json", env=env, cwd=tmp_path,
        )  # fmt: skip
        assert predicted.returncode == 0, predicted.stderr
        (p,) = json.loads(predicted.stdout)
        # "measured" 3% slower than the model: well inside every tolerance
        rows.append(f"{KEY},{op},{shape},fp32,{p['latency_s'] * 1.03:.6e},,50,by hand")
    baseline = tmp_path / f"{KEY}_small.validation.csv"
    baseline.write_text(
        "hardware,op,shape,dtype,latency_s,energy_j,trial_count,notes\n" + "\n".join(rows) + "\n"
    )
    result = _run(
        "-m", "graphsval_core", "validate", "--baseline", str(baseline), "--format", "json",
        env=env, cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    records = [r for r in report["records"] if r["hardware"] == KEY]
    assert len(records) == 2 and all(r["pass_latency"] for r in records)


def test_scaffolded_plugin_passes_its_own_tests(acme, tmp_path: Path):
    source, site = acme
    result = _run(
        "-m", "pytest", "-q", "-p", "no:cacheprovider", str(source / "tests"),
        env=_env_with(site), cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    # the conformance class (its predictor check skipped: acme registers none) and two tests
    assert "11 passed, 1 skipped" in result.stdout


def test_scaffolded_measurer_says_what_is_missing(acme, tmp_path: Path):
    _, site = acme
    result = _run(
        "-m", "graphsval_core", "capture", "--hw", KEY, "--op", "matmul",
        "--purpose", "validation", "--limit", "1", "--out", str(tmp_path / "x.csv"),
        "--allow-busy", "--max-wait", "0", env=_env_with(site), cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 2
    assert "not implemented for this hardware" in result.stderr
    assert "Traceback" not in result.stderr


def test_scaffolded_plugin_ships_the_calibration_it_fits(acme, tmp_path: Path):
    """The walk of docs/writing-a-plugin.md: calibration rows into the
    package's baselines, ``graphsval calibrate --out`` into its calibration
    folder, installed as package data, applied by every command."""
    source, site = acme
    copy = tmp_path / "graphsval-acme"
    shutil.copytree(source, copy, ignore=shutil.ignore_patterns("build", "*.egg-info"))
    package = copy / "graphsval_acme"
    env = _env_with(site)
    sweeps = Path(graphsval_core.__file__).parent / "sweeps"
    baselines = []
    for op in ("matmul", "vector_add"):
        predicted = _run(
            "-m", "graphsval_core", "predict", "--hw", KEY, "--op", op, "--dtype", "fp32",
            "--sweep", str(sweeps / f"{op}_calibration.json"), "--format", "csv",
            env=env, cwd=tmp_path,
        )  # fmt: skip
        assert predicted.returncode == 0, predicted.stderr
        # "measured": 25% slower than the datasheet model, plus 3 us of launch
        rows = [
            f"{KEY},{op},{r['shape']},fp32,{float(r['latency_s']) * 1.25 + 3e-6:.6e},,20,by hand"
            for r in csv.DictReader(io.StringIO(predicted.stdout))
        ]
        path = package / "baselines" / f"{KEY}_{op}.calibration.csv"
        path.write_text("hardware,op,shape,dtype,latency_s,energy_j,trial_count,notes\n")
        path.write_text(path.read_text() + "\n".join(rows) + "\n")
        baselines += ["--baseline", str(path)]
    out = package / "calibration" / f"{KEY}.calibration.json"
    fitted = _run(
        "-m", "graphsval_core", "calibrate", "--hw", KEY, *baselines, "--out", str(out),
        "--no-loo", "--no-grouped-cv", env=env, cwd=tmp_path,
    )  # fmt: skip
    assert fitted.returncode == 0, fitted.stdout + fitted.stderr
    shipped = tmp_path / "site"
    installed = _run(
        "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", "--no-index",
        "--target", str(shipped), str(copy),
    )  # fmt: skip
    assert installed.returncode == 0, installed.stderr
    assert (shipped / "graphsval_acme" / "calibration" / out.name).is_file()
    shown = _run(
        "-m", "graphsval_core", "targets", "--hw", KEY, "--json",
        env=_env_with(shipped), cwd=tmp_path,
    )  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    spec = json.loads(shown.stdout)
    assert spec["provenance"]["launch_overhead_s"].startswith(f"calibrated: {out.name}")
    assert spec["launch_overhead_s"] == pytest.approx(5e-6, rel=0.3)


@pytest.mark.parametrize(
    "name", ["Acme", "1acme", "ac-me", "acme__npu", "acme_", "_acme", "a" * 33, "acme npu", ""]
)
def test_plugin_new_rejects_an_invalid_name(name: str, tmp_path: Path):
    result = CliRunner().invoke(cli, ["plugin", "new", name, "--dir", str(tmp_path)])
    assert result.exit_code == 2
    assert result.output.count("\n") == 1 and "invalid plugin name" in result.output
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("name", ["cpu", "kpu", "core", "builtin_ops"])
def test_plugin_new_rejects_the_names_graphsval_uses(name: str, tmp_path: Path):
    result = CliRunner().invoke(cli, ["plugin", "new", name, "--dir", str(tmp_path)])
    assert result.exit_code == 2
    assert "taken by graphsval itself" in result.output


def test_plugin_new_refuses_to_overwrite(tmp_path: Path):
    (tmp_path / "graphsval-acme").mkdir()
    (tmp_path / "graphsval-acme" / "mine.txt").write_text("keep me")
    result = CliRunner().invoke(cli, ["plugin", "new", "acme", "--dir", str(tmp_path)])
    assert result.exit_code == 2
    assert "already exists; refusing to overwrite it" in result.output
    assert [p.name for p in (tmp_path / "graphsval-acme").iterdir()] == ["mine.txt"]


def test_names_derived_from_the_plugin_name():
    names = check_name("acme_npu")
    assert (names.distribution, names.package, names.target_key) == (
        "graphsval-acme-npu",
        "graphsval_acme_npu",
        "acme_npu_dev1",
    )


def test_the_next_steps_paste_into_a_shell_from_a_folder_with_a_space(tmp_path: Path):
    """``plugin new --dir "my plugins"`` printed ``pip install -e my
    plugins/graphsval-acme``, two arguments in a shell (from the newcomer)."""
    import shlex

    parent = tmp_path / "my plugins"
    result = CliRunner().invoke(cli, ["plugin", "new", "acme", "--dir", str(parent)])
    assert result.exit_code == 0, result.output
    steps = [line.split("#")[0] for line in result.output.splitlines()[1:] if "  " in line]
    install = next(s for s in steps if "pip install -e" in s)
    assert shlex.split(install)[-1] == str(parent / "graphsval-acme")
    label = next(s for s in steps if "sweep label" in s)
    assert shlex.split(label)[-1] == str(parent / "graphsval-acme/graphsval_acme/sweep_labels.json")


def _steps(output: str) -> list[str]:
    """The next-step lines ``plugin new`` printed, each a command (its
    comment cut off), or the line ``edit FILE, then relabel:``."""
    return [line.split("    #")[0].strip() for line in output.splitlines()[1:]]


def test_the_next_steps_keep_the_dot_slash_of_a_folder_named_like_a_flag(tmp_path, monkeypatch):
    """``--dir ./-pl2`` printed ``pip install -e -pl2/graphsval-acme`` and
    ``python -m pytest -pl2/...`` (pytest reads ``-p l2/...``: a plugin),
    as the line saying what was written did not (from the newcomer)."""
    import shlex

    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["plugin", "new", "acme", "--dir", "./-pl2"])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0] == "wrote ./-pl2/graphsval-acme"
    install, test, edit, label = _steps(result.output)
    assert shlex.split(install) == ["pip", "install", "-e", "./-pl2/graphsval-acme"]
    assert shlex.split(test) == ["python", "-m", "pytest", "./-pl2/graphsval-acme/tests"]
    assert edit == "edit ./-pl2/graphsval-acme/graphsval_acme/targets.py, then relabel:"
    assert shlex.split(label)[-2:] == [
        "--out",
        "./-pl2/graphsval-acme/graphsval_acme/sweep_labels.json",
    ]
    for path in (shlex.split(install)[-1], shlex.split(test)[-1], shlex.split(label)[-1]):
        assert Path(path).exists(), path


def test_the_next_steps_never_print_a_control_character_raw(tmp_path, monkeypatch):
    """``--dir $'./sp ace\\x1b'`` printed the escape byte raw in each next
    step (``shlex.quote`` quotes it, it does not escape it): it is shown
    escaped, as every line naming a path shows one, still quoted."""
    import shlex

    from graphsval_core.datamodel.errors import is_control

    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["plugin", "new", "acme", "--dir", "./sp ace\x1b\n-x"])
    assert result.exit_code == 0, result.output
    assert not any(is_control(ch) for ch in result.output.replace("\n", ""))
    assert result.output.count("\n") == 5
    install, test, edit, label = _steps(result.output)
    assert shlex.split(install)[-1] == "sp ace\\x1b\\n-x/graphsval-acme"
    assert shlex.split(test)[-1] == "sp ace\\x1b\\n-x/graphsval-acme/tests"
    assert (
        shlex.split(label)[-1] == "sp ace\\x1b\\n-x/graphsval-acme/graphsval_acme/sweep_labels.json"
    )
    assert edit.startswith("edit 'sp ace\\x1b\\n-x/graphsval-acme/")
