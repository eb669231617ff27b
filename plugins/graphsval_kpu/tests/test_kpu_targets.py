"""KPU targets: valid specs with provenance, consistency-only, never measurable."""

from __future__ import annotations

import subprocess
import sys

import pytest

from graphsval_core.plugin_api import build_registry

KEYS = ("kpu_t64", "kpu_t256", "kpu_t768")


@pytest.fixture(scope="module")
def registry():
    return build_registry(strict=True)


@pytest.mark.parametrize("key", KEYS)
def test_kpu_spec_is_consistency_only_with_provenance(registry, key):
    target = registry.target(key)
    assert target.ground_truth == "consistency_only"
    assert target.architecture == "domain_flow"
    assert set(target.dtypes) == {"int8", "bf16"}
    for name in (
        "compute_units",
        "clock_hz",
        "tdp_w",
        "peak_ops_per_s.int8",
        "energy_per_op_j.bf16",
    ):
        assert target.provenance[name].kind in ("datasheet", "derived", "estimated")
    assert [t.name for t in target.tiers] == ["l1", "dram"]
    assert target.tiers[0].total_capacity_bytes == target.compute_units * 256 * 1024


def test_kpu_figures_follow_the_reference_design(registry):
    t64 = registry.target("kpu_t64")
    assert t64.peak_ops_per_s["int8"] == 62e12
    assert t64.tier("dram").peak_bandwidth_bps == 64e9
    # derived energy per op: (profile power - idle power) / peak (the model adds the idle power)
    assert t64.energy_per_op_j["int8"] == pytest.approx((6.0 - 0.5) / 62e12)
    # int8 runs at twice the bf16 rate, so it costs half the energy per op
    assert t64.energy_per_op_j["int8"] < t64.energy_per_op_j["bf16"]


def test_larger_kpus_are_not_slower(registry):
    peaks = [registry.target(k).peak_ops_per_s["bf16"] for k in KEYS]
    assert peaks == sorted(peaks)


@pytest.mark.parametrize("key", KEYS)
def test_probe_says_consistency_only(registry, key):
    probe = registry.measurer_probe(registry.target(key))
    assert not probe.available
    assert "consistency-only" in probe.reason


def test_entry_point_module_is_side_effect_free():
    code = "import sys, graphsval_kpu.plugin; assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)
