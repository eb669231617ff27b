"""The TPU specs: valid, fully sourced, consistency-only, datasheet energy kept."""

from __future__ import annotations

import subprocess
import sys

import attrs
import pytest

from graphsval_core.plugin_api import MemoryTier, ProbeResult, TargetSpec, build_registry
from graphsval_tpu import plugin
from graphsval_tpu.targets import coral_edge_tpu, tpu_targets, tpu_v4


@pytest.mark.parametrize("spec", tpu_targets(), ids=lambda s: s.key)
def test_tpu_spec_is_valid_and_every_number_is_sourced(spec: TargetSpec) -> None:
    assert spec.family == "tpu" and spec.architecture == "systolic"
    assert spec.ground_truth == "consistency_only"
    assert "Consistency-only" in spec.description
    names = [
        *TargetSpec.PROVENANCED,
        "process_node_nm",
        *(f"peak_ops_per_s.{d}" for d in spec.dtypes),
        *(f"energy_per_op_j.{d}" for d in spec.dtypes),
    ]
    for name in names:
        assert spec.provenance[name].source, name
    for tier in spec.tiers:
        for name in MemoryTier.PROVENANCED:
            assert tier.provenance[name].source, f"{tier.name}.{name}"
    for dtype, energy in spec.energy_per_op_j.items():
        assert energy == pytest.approx(spec.tdp_w / spec.peak_ops_per_s[dtype])


def test_tpu_v4_figures() -> None:
    spec = tpu_v4()
    assert spec.dtypes == ("bf16", "int8")
    assert spec.peak_ops_per_s["bf16"] == spec.peak_ops_per_s["int8"] == 275e12
    # 2 TensorCores x 4 MXUs x 128 x 128 x 2 FLOP x 1.05 GHz agrees with the datasheet
    assert 2 * 4 * 128 * 128 * 2 * spec.clock_hz == pytest.approx(275e12, rel=0.01)
    assert [t.name for t in spec.tiers] == ["l1", "l2", "dram"]
    vmem, cmem, hbm = spec.tiers
    assert vmem.is_per_unit and vmem.capacity_bytes == 16 * 1024**2 and vmem.num_units == 2
    assert cmem.capacity_bytes == 128 * 1024**2
    assert hbm.capacity_bytes == 32 * 1024**3 and hbm.peak_bandwidth_bps == 1.2e12
    assert spec.tdp_w == 192 and spec.process_node_nm == 7


def test_tpu_v4_energy_per_op_is_kept_above_h100() -> None:
    """hardware-facts.md: TPU v4 (7 nm) at ~0.7 pJ/op is above H100 (4 nm) at
    ~0.35; the datasheet figure stays as published (a finding, not a bug)."""
    energy = tpu_v4().energy_per_op_j["int8"]
    assert energy == pytest.approx(0.698e-12, rel=0.01)
    assert energy > 0.354e-12


def test_coral_edge_tpu_figures() -> None:
    spec = coral_edge_tpu()
    assert spec.dtypes == ("int8",)
    assert spec.peak_ops_per_s["int8"] == 4e12
    assert spec.energy_per_op_j["int8"] == pytest.approx(0.5e-12)
    assert spec.tdp_w == 2.0
    sram, link = spec.tiers
    assert (sram.name, link.name) == ("l2", "dram")
    assert sram.capacity_bytes == 8 * 1024**2
    assert link.peak_bandwidth_bps < 1e9
    assert spec.provenance["process_node_nm"].kind == "estimated"


def test_tpu_probe_is_consistency_only_and_ignores_others() -> None:
    registry = build_registry(autoload=False, plugin_args=["tpu"], strict=True)
    targets = registry.targets()
    for key in ("tpu_v4", "coral_edge_tpu"):
        assert registry.measurer_probe(targets[key]) == ProbeResult(
            False, "consistency-only target: no silicon to measure"
        )
    other = attrs.evolve(tpu_v4(), family="kpu")
    assert plugin.graphsval_measurer_probe(target=other) is None


def test_tpu_plugin_import_is_side_effect_free() -> None:
    code = (
        "import graphsval_tpu.plugin, sys; "
        "assert graphsval_tpu.plugin.graphsval_api_version == '2.1'; "
        "assert 'torch' not in sys.modules and 'pynvml' not in sys.modules; "
        "assert 'graphsval_tpu.targets' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
