"""The Jetson Orin specs: valid, fully sourced, derived as stated."""

from __future__ import annotations

import pytest

from graphsval_core.plugin_api import MemoryTier, TargetSpec
from graphsval_jetson.targets import BOARDS, jetson_targets


@pytest.mark.parametrize("spec", jetson_targets(), ids=lambda s: s.key)
def test_jetson_spec_is_valid_and_every_number_is_sourced(spec: TargetSpec) -> None:
    assert spec.family == "jetson_orin" and spec.architecture == "gpu"
    assert spec.ground_truth == "measured" and spec.process_node_nm == 8
    assert spec.key in BOARDS
    assert spec.power_mode in ("MAXN_SUPER", "MAXN")
    assert spec.power_mode in spec.description and "part of this target" in spec.description
    assert spec.fingerprint["power_mode"] == spec.power_mode
    assert spec.fingerprint["model"].startswith("NVIDIA Jetson")
    assert [t.name for t in spec.tiers] == ["l1", "l2", "dram"]
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


def test_jetson_peaks_follow_sms_times_rate_times_clock() -> None:
    specs = {s.key: s for s in jetson_targets()}
    nano, nx, agx = (
        specs["jetson_orin_nano_8gb"],
        specs["jetson_orin_nx_16gb"],
        specs["jetson_orin_agx_64gb"],
    )
    assert (nano.compute_units, nano.clock_hz) == (8, 1.02e9)
    assert (nx.compute_units, nx.clock_hz) == (8, 1.173e9)
    assert (agx.compute_units, agx.clock_hz) == (16, 1.3e9)
    for spec in specs.values():
        sms_clock = spec.compute_units * spec.clock_hz
        assert spec.peak_ops_per_s["fp32"] == pytest.approx(256 * sms_clock)
        assert spec.peak_ops_per_s["fp16"] == pytest.approx(2048 * sms_clock)
        assert spec.peak_ops_per_s["bf16"] == spec.peak_ops_per_s["fp16"]
        # the INT8 figure, datasheet or derived, is 4096 op/clk/SM within 1%
        assert spec.peak_ops_per_s["int8"] == pytest.approx(4096 * sms_clock, rel=0.01)
        assert "x" in spec.provenance["peak_ops_per_s.fp16"].source
    assert nano.provenance["peak_ops_per_s.int8"].kind == "datasheet"
    assert "halved" in nano.provenance["peak_ops_per_s.int8"].source
    assert nano.peak_ops_per_s["int8"] == pytest.approx(33.5e12)


def test_jetson_memory_figures() -> None:
    specs = {s.key: s for s in jetson_targets()}
    assert specs["jetson_orin_nano_8gb"].tier("dram").peak_bandwidth_bps == 102e9
    assert specs["jetson_orin_nx_16gb"].tier("dram").peak_bandwidth_bps == 102e9
    assert specs["jetson_orin_agx_64gb"].tier("dram").peak_bandwidth_bps == 204.8e9
    assert specs["jetson_orin_nano_8gb"].tier("l2").capacity_bytes == 2 * 1024**2
    assert specs["jetson_orin_agx_64gb"].tier("l2").capacity_bytes == 4 * 1024**2
    for spec in specs.values():
        assert spec.tier("dram").capacity_bytes == BOARDS[spec.key].memory_gib * 1024**3
