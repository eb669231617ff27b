"""Packaging: a third-party plugin built outside the repo is discovered through
its installed entry point; the core wheel carries the sweeps folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

PLUGIN_PYPROJECT = """
[build-system]
requires = ["setuptools>=70.1"]
build-backend = "setuptools.build_meta"

[project]
name = "graphsval-acme"
version = "3.1.4"
dependencies = ["graphsval"]

[project.entry-points.graphsval]
acme = "graphsval_acme"

[tool.setuptools]
py-modules = ["graphsval_acme"]
"""

PLUGIN_MODULE = '''
"""A third-party target, written without touching the graphsval core."""
from graphsval_core.plugin_api import MemoryTier, TargetSpec, datasheet, estimated, hookimpl

graphsval_api_version = "2.0"


@hookimpl
def graphsval_register_targets():
    src = "ACME NPU-1 datasheet"
    return [
        TargetSpec(
            key="acme_npu1",
            name="ACME NPU-1",
            family="acme",
            architecture="systolic",
            compute_units=datasheet(16, src),
            clock_hz=datasheet(1.2e9, src),
            peak_ops_per_s={"int8": datasheet(40e12, src)},
            energy_per_op_j={"int8": estimated(0.2e-12, "guess")},
            launch_overhead_s=estimated(3e-6, "guess"),
            idle_power_w=estimated(1.0, "guess"),
            tdp_w=datasheet(10.0, src),
            ground_truth="consistency_only",
            tiers=[
                MemoryTier("l1", datasheet(512 * 1024, src), True, 16,
                           datasheet(8e12, src), estimated(2, "guess"),
                           energy_per_byte_j=estimated(0.5e-12, "guess")),
                MemoryTier("dram", datasheet(8 * 1024**3, src), False, 1,
                           datasheet(50e9, src), estimated(90, "guess"),
                           energy_per_byte_j=estimated(20e-12, "guess")),
            ],
        )
    ]
'''


def _run(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None):
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=300
    )


@pytest.fixture(scope="module")
def acme_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Build the third-party plugin in a temp dir and install it into a temp
    environment (a --target directory, no dependencies, no downloads)."""
    src = tmp_path_factory.mktemp("acme-src")
    (src / "pyproject.toml").write_text(textwrap.dedent(PLUGIN_PYPROJECT))
    (src / "graphsval_acme.py").write_text(PLUGIN_MODULE)
    site = tmp_path_factory.mktemp("acme-site")
    result = _run(
        "-m",
        "pip",
        "install",
        "--quiet",
        "--no-deps",
        "--no-build-isolation",
        "--no-index",
        "--target",
        str(site),
        str(src),
    )
    assert result.returncode == 0, result.stderr
    return site


def _env_with(site: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))
    env.pop("GRAPHSVAL_DISABLE_PLUGIN_AUTOLOAD", None)
    return env


def test_third_party_plugin_is_listed(acme_site: Path, tmp_path: Path):
    result = _run(
        "-m", "graphsval_core", "targets", "--json", env=_env_with(acme_site), cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    targets = {t["key"]: t for t in json.loads(result.stdout)["targets"]}
    acme = targets["acme_npu1"]
    assert acme["plugin"] == "acme"
    assert acme["distribution"] == "graphsval-acme"
    assert acme["distribution_version"] == "3.1.4"
    assert acme["ground_truth"] == "consistency_only"


def test_third_party_plugin_in_plugins_listing_strict(acme_site: Path, tmp_path: Path):
    result = _run(
        "-m",
        "graphsval_core",
        "--strict-plugins",
        "plugins",
        "--json",
        env=_env_with(acme_site),
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    names = {p["name"]: p for p in json.loads(result.stdout)["plugins"]}
    assert names["acme"]["loaded"] and names["acme"]["targets"] == ["acme_npu1"]


def test_third_party_plugin_can_be_blocked(acme_site: Path, tmp_path: Path):
    result = _run(
        "-m",
        "graphsval_core",
        "-p",
        "no:acme",
        "targets",
        "--json",
        env=_env_with(acme_site),
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert "acme_npu1" not in {t["key"] for t in json.loads(result.stdout)["targets"]}


def test_core_wheel_carries_sweeps(tmp_path: Path):
    result = _run(
        "-m",
        "pip",
        "wheel",
        "--quiet",
        "--no-deps",
        "--no-build-isolation",
        "--no-index",
        "-w",
        str(tmp_path),
        str(REPO),
    )
    assert result.returncode == 0, result.stderr
    (wheel,) = tmp_path.glob("graphsval-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "graphsval_core/sweeps/README.md" in names
    assert "graphsval_core/plugins/hookspecs.py" in names
    assert not any(n.startswith("sweeps/") or n.startswith("tests/") for n in names)
