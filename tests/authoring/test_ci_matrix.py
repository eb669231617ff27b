"""``graphsval ci-matrix``: the installed plugins as a CI matrix, and the
workflow that runs one job per entry."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from graphsval_core.authoring.ci_matrix import ci_matrix, requires_torch, source_folder
from graphsval_core.cli.main import cli
from graphsval_core.plugins.loader import build_registry

REPO = Path(__file__).resolve().parents[2]


def test_ci_matrix_json_lists_every_installed_plugin():
    result = CliRunner().invoke(cli, ["ci-matrix", "--json"])
    assert result.exit_code == 0, result.output
    matrix = json.loads(result.output)
    plugins = json.loads(CliRunner().invoke(cli, ["plugins", "--json"]).output)["plugins"]
    installed = sorted(p["name"] for p in plugins if p["loaded"] and not p["builtin"])
    assert [entry["plugin"] for entry in matrix["include"]] == installed
    assert set(installed) >= {"cpu", "cuda", "jetson", "kpu", "tpu"}
    for entry in matrix["include"]:
        assert set(entry) == {
            "plugin",
            "distribution",
            "version",
            "source",
            "targets",
            "ops",
            "needs_hardware",
            "needs_torch",
        }
        assert entry["targets"] == sorted(entry["targets"])


def test_ci_matrix_entries_of_the_shipped_plugins(monkeypatch):
    monkeypatch.chdir(REPO)
    entries = {e["plugin"]: e for e in ci_matrix(build_registry(strict=True))["include"]}
    kpu, cpu = entries["kpu"], entries["cpu"]
    assert kpu["distribution"] == "graphsval-kpu"
    assert kpu["targets"] == ["kpu_t256", "kpu_t64", "kpu_t768"]
    assert not kpu["needs_hardware"] and not kpu["needs_torch"] and kpu["ops"] == []
    assert cpu["needs_hardware"] and cpu["needs_torch"]
    assert {"matmul", "linear", "vector_add"} <= set(cpu["ops"])
    # installed from this checkout (editable): the folder, relative to the cwd
    for name in ("cpu", "cuda", "jetson", "kpu", "tpu"):
        assert entries[name]["source"] in (f"plugins/graphsval_{name}", None)


class _Dist:
    def __init__(self, url: str | None = None, requires: list[str] | None = None) -> None:
        self.url = url
        self.requires = requires

    def read_text(self, name: str) -> str | None:
        return json.dumps({"url": self.url}) if self.url and name == "direct_url.json" else None


def test_source_folder_is_relative_or_none(tmp_path: Path):
    (tmp_path / "plugins" / "x").mkdir(parents=True)
    inside = _Dist((tmp_path / "plugins" / "x").as_uri())
    assert source_folder(inside, tmp_path) == "plugins/x"
    assert source_folder(_Dist("file:///elsewhere/x"), tmp_path) is None
    assert source_folder(_Dist("https://example.org/x.whl"), tmp_path) is None
    assert source_folder(_Dist(), tmp_path) is None


def test_requires_torch():
    assert requires_torch(_Dist(requires=["graphsval>=0.1", "torch"]))
    assert requires_torch(_Dist(requires=["torch>=2.1; python_version>'3.9'"]))
    assert not requires_torch(_Dist(requires=["torchvision", 'torch; extra == "gpu"']))
    assert requires_torch(_Dist(requires=['torch; extra == "capture"']))  # a measuring plugin
    assert not requires_torch(_Dist(requires=None))


def test_workflow_runs_one_job_per_matrix_entry():
    text = (REPO / ".github" / "workflows" / "plugins.yml").read_text()
    assert "graphsval --strict-plugins ci-matrix --json" in text
    assert "fromJSON(needs.matrix.outputs.include)" in text
    assert "https://download.pytorch.org/whl/cpu" in text and "matrix.needs_torch" in text
    assert 'GRAPHSVAL_STRICT_PLUGINS: "1"' in text
    assert "graphsval validate --check-floors" in text


def test_the_matrix_fits_the_screen_as_a_table_or_a_block_per_plugin():
    wide = CliRunner(env={"COLUMNS": "250"}).invoke(cli, ["ci-matrix"])
    assert wide.exit_code == 0, wide.output
    assert wide.stdout.splitlines()[0].split() == [
        "PLUGIN", "DISTRIBUTION", "SOURCE", "TARGETS", "OPS", "HARDWARE", "TORCH"
    ]  # fmt: skip
    narrow = CliRunner(env={"COLUMNS": "60"}).invoke(cli, ["ci-matrix"])
    lines = narrow.stdout.splitlines()
    assert max(map(len, lines)) <= 60, narrow.stdout
    assert any(line.startswith("cpu: graphsval-cpu") for line in lines)
    assert "host_amd_epyc_zen4_2c_1t" in narrow.stdout and "  ops: " in narrow.stdout
