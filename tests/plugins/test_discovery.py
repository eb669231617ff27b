"""Discovery through the real installed entry points of the five first-party plugins."""

from __future__ import annotations

import json

from click.testing import CliRunner

from graphsval_core.cli.main import cli
from graphsval_core.plugins.loader import build_registry

FIRST_PARTY = {
    "cpu": ("graphsval-cpu", {"i7_12700k", "host_cpu"}),
    "cuda": ("graphsval-cuda", {"h100_sxm5_80gb", "h200_sxm_141gb", "a100_sxm4_80gb", "host_gpu"}),
    "jetson": (
        "graphsval-jetson",
        {"jetson_orin_nano_8gb", "jetson_orin_nx_16gb", "jetson_orin_agx_64gb"},
    ),
    "kpu": ("graphsval-kpu", {"kpu_t64", "kpu_t256", "kpu_t768"}),
    "tpu": ("graphsval-tpu", {"tpu_v4", "coral_edge_tpu"}),
}


def test_all_five_plugins_are_discovered_strictly(monkeypatch):
    monkeypatch.delenv("GRAPHSVAL_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    registry = build_registry(strict=True)
    infos = {info.name: info for info in registry.plugins}
    for name, (dist, keys) in FIRST_PARTY.items():
        assert name in infos, f"plugin {name} not discovered"
        assert infos[name].distribution == dist
        assert infos[name].loaded
        assert keys <= set(infos[name].targets)  # plus shipped snapshot targets (cpu)
    assert registry.problems == []


def test_every_target_answers_the_probe_cheaply():
    registry = build_registry(strict=True)
    for target in registry.targets().values():
        probe = registry.measurer_probe(target)
        assert probe.available or probe.reason, target.key


def test_consistency_only_targets_are_kpu_and_tpu():
    registry = build_registry(strict=True)
    kinds = {key: t.ground_truth for key, t in registry.targets().items()}
    for key in FIRST_PARTY["kpu"][1] | FIRST_PARTY["tpu"][1]:
        assert kinds[key] == "consistency_only"
    for key in FIRST_PARTY["cpu"][1] | FIRST_PARTY["cuda"][1] | FIRST_PARTY["jetson"][1]:
        assert kinds[key] == "measured"


def test_targets_command_lists_every_first_party_target():
    result = CliRunner().invoke(cli, ["targets", "--json"])
    assert result.exit_code == 0, result.output
    keys = {t["key"] for t in json.loads(result.output)["targets"]}
    for _, expected in FIRST_PARTY.values():
        assert expected <= keys


def test_host_gpu_is_listed_unavailable_without_a_gpu():
    registry = build_registry(strict=True)
    probe = registry.measurer_probe(registry.target("host_gpu"))
    try:
        import pynvml

        pynvml.nvmlInit()
        has_gpu = pynvml.nvmlDeviceGetCount() > 0
    except Exception:
        has_gpu = False
    if not has_gpu:
        assert not probe.available
        assert "no CUDA device" in probe.reason
