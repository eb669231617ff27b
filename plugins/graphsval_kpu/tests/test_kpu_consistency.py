"""The KPU's consistency checks: the weight-stationary regime and per-tile utilisation."""

from __future__ import annotations

import numpy as np
import pytest
from attrs import evolve

from graphsval_core.plugin_api import (
    FAIL,
    PASS,
    XFAIL,
    CheckContext,
    build_registry,
    run_consistency,
)
from graphsval_kpu import consistency

KEYS = ("kpu_t64", "kpu_t256", "kpu_t768")


@pytest.fixture(scope="module")
def registry():
    return build_registry(strict=True)


def _result(registry, key):
    (result,) = run_consistency(registry, [registry.target(key)])
    return result


def _outcomes(registry, key):
    return {o.check: o for o in _result(registry, key).outcomes}


@pytest.mark.parametrize("key", KEYS)
def test_kpu_targets_are_consistency_only_and_pass_their_checks(registry, key):
    result = _result(registry, key)
    assert result.ground_truth == "consistency_only"
    outcomes = {o.check: o for o in result.outcomes}
    assert outcomes["kpu.weight_stationary"].status == PASS
    assert outcomes["kpu.tile_utilisation"].status == PASS
    assert not [o.line() for o in result.outcomes if o.status == FAIL]


def test_weight_stationary_activates_at_80_percent_of_on_chip_memory(registry):
    t64 = registry.target("kpu_t64")
    on_chip = consistency.on_chip_bytes(t64)
    assert on_chip == 64 * 256 * 1024
    probes = _outcomes(registry, "kpu_t64")["kpu.weight_stationary"].numbers["probes"]
    inside = [p for p in probes if p["weight_stationary"]]
    outside = [p for p in probes if not p["weight_stationary"]]
    assert inside and outside
    for p in inside:
        assert p["weights_bytes"] <= 0.8 * on_chip
        assert p["dram_bytes"] < p["dram_bytes_without_the_regime"]
    for p in outside:
        assert p["weights_bytes"] > 0.8 * on_chip
        assert p["dram_bytes"] == p["dram_bytes_without_the_regime"]


def test_weight_stationary_check_fails_when_the_rule_is_missing(registry, monkeypatch):
    monkeypatch.setattr(consistency, "residency_window", lambda *args, **kwargs: None)
    fresh = build_registry(strict=True)
    check = _outcomes(fresh, "kpu_t256")["kpu.weight_stationary"]
    assert check.status == FAIL
    assert "inside the threshold" in check.message and check.workload
    assert check.coefficient == "tiers.l1.capacity_bytes"


def test_weights_read_once_lower_dram_traffic_of_a_resident_layer(registry):
    t256 = registry.target("kpu_t256")
    # 4096 x 4096 int8 weights (16 MiB) fit in 80% of 64 MiB; activations do not fit
    p = CheckContext(registry).predict(t256, "matmul", [[65536, 4096, 4096]], "int8")
    m, k, n = 65536, 4096, 4096
    assert p.tiles[0, -1].tolist() == [m, k, n]
    assert p.bytes_per_tier[0, -1] < (m * k + k * n + 2 * m * n)


def test_tile_utilisation_is_reported_per_workload(registry):
    util = _outcomes(registry, "kpu_t64")["kpu.tile_utilisation"]
    workloads = util.numbers["workloads"]
    assert util.numbers["tiles"] == 64
    tiny = workloads["matmul 32x32x32 int8"]
    assert tiny["waves"] == 1 and tiny["utilisation"] == pytest.approx(1 / 64)
    assert workloads["matmul 8192x8192x8192 int8"]["utilisation"] > 0.95
    assert "per-tile utilisation over 64 tiles" in util.message


def test_power_above_the_profile_is_an_expected_failure_with_its_reason(registry):
    power = _outcomes(registry, "kpu_t768")["bounds.power"]
    assert power.status == XFAIL and "no split of its power" in power.reason
    # a scratchpad machine writes its output once (no write-allocate read), which
    # brings the t64's worst case (5.94 W) back under its 6 W profile
    for key in ("kpu_t64", "kpu_t256"):
        assert _outcomes(registry, key)["bounds.power"].status == PASS


def test_energy_per_op_leaves_the_idle_power_to_the_static_term(registry):
    t64 = registry.target("kpu_t64")
    assert t64.energy_per_op_j["int8"] * t64.peak_ops_per_s["int8"] == pytest.approx(
        t64.tdp_w - t64.idle_power_w
    )
    assert "counted it twice" in t64.provenance["energy_per_op_j.int8"].source


def test_other_families_get_no_kpu_checks_and_keep_the_default_tile(registry):
    other = evolve(registry.target("kpu_t64"), family="not_a_kpu")
    assert list(consistency.checks(other)) == []
    op = registry.op("matmul")
    shapes = np.array([[65536, 1024, 1024]])
    assert consistency.residency_window(other, op, shapes, "int8", other.tiers[0]) is None
