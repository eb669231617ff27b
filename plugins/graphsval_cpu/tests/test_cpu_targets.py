"""The i7-12700K spec: valid, and every number says where it came from."""

from __future__ import annotations

import pytest

from graphsval_core.plugin_api import MemoryTier, Provenance, TargetSpec
from graphsval_cpu.targets import i7_12700k

MiB = 1024**2


@pytest.fixture(scope="module")
def spec() -> TargetSpec:
    return i7_12700k()


def test_cpu_i7_identity(spec: TargetSpec) -> None:
    assert spec.key == "i7_12700k"
    assert (spec.family, spec.architecture, spec.ground_truth) == ("cpu", "cpu", "measured")
    assert not spec.detected
    assert spec.compute_units == 12
    assert spec.process_node_nm == 10
    assert spec.tdp_w == 190
    assert spec.dtypes == ("fp32", "bf16")
    assert spec.fingerprint == {"cpu_model": "12th Gen Intel(R) Core(TM) i7-12700K"}


def test_cpu_i7_peaks(spec: TargetSpec) -> None:
    fp32 = spec.peak_ops_per_s["fp32"]
    assert fp32 == pytest.approx(1.4e12, rel=0.05)  # hardware-facts: about 1.4 TFLOPS all-core
    assert spec.peak_ops_per_s["bf16"] == fp32  # no native bf16 FMA on Alder Lake
    assert "conver" in spec.provenance["peak_ops_per_s.bf16"].source


def test_cpu_i7_tiers(spec: TargetSpec) -> None:
    names = [t.name for t in spec.tiers]
    assert names == ["l1", "l2", "l3", "dram"]
    l1, l2, l3, dram = spec.tiers
    assert (l1.capacity_bytes, l1.is_per_unit, l1.num_units) == (48 * 1024, True, 12)
    assert (l2.capacity_bytes, l2.is_per_unit) == (1.25 * MiB, True)
    assert (l3.capacity_bytes, l3.is_per_unit, l3.shared_with_tenants) == (25 * MiB, False, False)
    assert dram.peak_bandwidth_bps == 76.8e9
    assert "E-core" in l1.provenance["capacity_bytes"].source
    assert "2 MiB" in l2.provenance["capacity_bytes"].source
    bandwidths = [t.peak_bandwidth_bps for t in spec.tiers]
    assert bandwidths == sorted(bandwidths, reverse=True)


def test_cpu_i7_every_number_has_provenance(spec: TargetSpec) -> None:
    required = [
        *TargetSpec.PROVENANCED,
        "process_node_nm",
        *(f"peak_ops_per_s.{d}" for d in spec.dtypes),
        *(f"energy_per_op_j.{d}" for d in spec.dtypes),
    ]
    for name in required:
        prov = spec.provenance[name]
        assert isinstance(prov, Provenance) and prov.source, name
    for tier in spec.tiers:
        for name in MemoryTier.PROVENANCED:
            assert tier.provenance[name].source, f"{tier.name}.{name}"


def test_cpu_i7_provenance_kinds(spec: TargetSpec) -> None:
    prov = spec.provenance
    assert prov["compute_units"].kind == "datasheet"
    assert prov["tdp_w"].kind == "datasheet"
    assert "125 W" in prov["tdp_w"].source
    assert prov["process_node_nm"].kind == "datasheet"
    assert prov["peak_ops_per_s.fp32"].kind == "derived"
    assert " x " in prov["peak_ops_per_s.fp32"].source  # the formula is written out
    assert prov["launch_overhead_s"].kind == "estimated"
    assert prov["idle_power_w"].kind == "estimated"
    assert all(prov[f"energy_per_op_j.{d}"].kind == "estimated" for d in spec.dtypes)
    dram = spec.tier("dram")
    assert dram.provenance["peak_bandwidth_bps"].kind == "datasheet"
    assert dram.provenance["capacity_bytes"].kind == "estimated"
    for tier in spec.tiers[:3]:
        assert tier.provenance["capacity_bytes"].kind == "datasheet"
        assert " x " in tier.provenance["peak_bandwidth_bps"].source
