"""The datasheet specs of graphsval-cuda: valid, fully sourced, as published."""

from __future__ import annotations

import pytest

from graphsval_core.plugin_api import MemoryTier, TargetSpec
from graphsval_cuda.host import placeholder_spec
from graphsval_cuda.targets import datacenter_targets


def _all_specs() -> list[TargetSpec]:
    return [*datacenter_targets(), placeholder_spec("Driver Not Loaded")]


def _assert_sourced(spec: TargetSpec) -> None:
    required = [
        *TargetSpec.PROVENANCED,
        *(f"peak_ops_per_s.{d}" for d in spec.peak_ops_per_s),
        *(f"energy_per_op_j.{d}" for d in spec.energy_per_op_j),
    ]
    if spec.process_node_nm is not None:
        required.append("process_node_nm")
    for name in required:
        assert spec.provenance[name].source, f"{spec.key}.{name} has no source"
    for tier in spec.tiers:
        for name in MemoryTier.PROVENANCED:
            assert tier.provenance[name].source, f"{spec.key}.{tier.name}.{name} has no source"


@pytest.mark.parametrize("spec", _all_specs(), ids=lambda s: s.key)
def test_cuda_spec_is_valid_and_every_number_is_sourced(spec: TargetSpec) -> None:
    assert spec.architecture == "gpu"
    assert spec.ground_truth == "measured"
    assert [t.name for t in spec.tiers] == ["l1", "l2", "dram"]
    assert spec.tiers[0].is_per_unit and spec.tiers[0].num_units == spec.compute_units
    _assert_sourced(spec)
    assert spec.to_dict()["key"] == spec.key


def test_cuda_datasheet_figures() -> None:
    specs = {s.key: s for s in datacenter_targets()}
    assert set(specs) == {"h100_sxm5_80gb", "h200_sxm_141gb", "a100_sxm4_80gb"}
    h100, h200, a100 = specs["h100_sxm5_80gb"], specs["h200_sxm_141gb"], specs["a100_sxm4_80gb"]
    assert h100.peak_ops_per_s["fp32"] == pytest.approx(66.9e12)
    assert h100.peak_ops_per_s["bf16"] == pytest.approx(989.4e12)
    assert h100.peak_ops_per_s["fp8"] == h100.peak_ops_per_s["int8"] == pytest.approx(1979e12)
    assert "fp8" not in a100.peak_ops_per_s
    assert a100.peak_ops_per_s["int8"] == pytest.approx(624e12)
    assert h100.tier("dram").peak_bandwidth_bps == pytest.approx(3.35e12)
    assert h200.tier("dram").peak_bandwidth_bps == pytest.approx(4.8e12)
    assert a100.tier("dram").peak_bandwidth_bps == pytest.approx(2.039e12)
    assert h200.peak_ops_per_s == h100.peak_ops_per_s
    assert h100.process_node_nm == 4 and a100.process_node_nm == 7
    for spec in specs.values():
        assert spec.family == "nvidia_datacenter"
        assert spec.fingerprint["gpu_name"].startswith("NVIDIA ")
        for dtype in spec.peak_ops_per_s:
            prov = spec.provenance[f"peak_ops_per_s.{dtype}"]
            assert prov.kind == "datasheet" and "dense" in prov.source


def test_cuda_energy_per_op_is_tdp_over_peak() -> None:
    h100 = datacenter_targets()[0]
    # hardware-facts.md: H100 at about 0.35 pJ per INT8 op
    assert h100.energy_per_op_j["int8"] == pytest.approx(0.354e-12, rel=0.01)
    for dtype, energy in h100.energy_per_op_j.items():
        assert energy == pytest.approx(h100.tdp_w / h100.peak_ops_per_s[dtype])
        assert h100.provenance[f"energy_per_op_j.{dtype}"].kind == "derived"


def test_cuda_tier_bandwidths_follow_their_stated_formula() -> None:
    for spec in datacenter_targets():
        l1 = spec.tier("l1")
        assert l1.peak_bandwidth_bps == pytest.approx(128 * spec.compute_units * spec.clock_hz)
        assert "128 B/clk/SM" in l1.provenance["peak_bandwidth_bps"].source
        bandwidths = [t.peak_bandwidth_bps for t in spec.tiers]
        assert bandwidths == sorted(bandwidths, reverse=True)
        energies = [t.energy_per_byte_j for t in spec.tiers]
        assert energies == sorted(energies)
