"""The TPU's consistency check: systolic-array fill."""

from __future__ import annotations

import pytest

from graphsval_core.plugin_api import FAIL, XFAIL, build_registry, run_consistency
from graphsval_tpu import consistency, findings


@pytest.fixture(scope="module")
def registry():
    return build_registry(strict=True)


def _result(registry, key):
    (result,) = run_consistency(registry, [registry.target(key)])
    return result


def _outcomes(registry, key):
    return {o.check: o for o in _result(registry, key).outcomes}


def test_fill_of_the_arrays():
    # TPU v4: 8 MXUs of 128x128
    assert consistency.fill([64, 4096, 64], 128, 8) == pytest.approx(0.5)
    assert consistency.fill([1, 1024, 1024], 128, 8) == pytest.approx(1.0)
    assert consistency.fill([32, 32, 32], 128, 8) == pytest.approx(32 * 32 / (8 * 128 * 128))
    # one 64x64 array: a 65-wide weight block needs 4 passes, half of them mostly empty
    assert consistency.fill([65, 4096, 65], 64, 1) == pytest.approx(65 / 128)


@pytest.mark.parametrize("key", ["tpu_v4", "coral_edge_tpu"])
def test_tpu_targets_are_consistency_only_and_only_sub_array_shapes_break_the_fill(registry, key):
    result = _result(registry, key)
    assert result.ground_truth == "consistency_only"
    assert not [o.line() for o in result.outcomes if o.status == FAIL]
    check = {o.check: o for o in result.outcomes}["tpu.systolic_fill"]
    assert check.status == XFAIL and "sub-array fill" in check.reason
    side, _ = consistency.ARRAYS[key]
    for name, case in check.numbers["workloads"].items():
        m, k, n = (int(d) for d in name.split(" ")[1].split("x"))
        if case["model_rate_of_peak"] > case["array_fill"] * (1 + 1e-9):
            assert n < side and k < consistency.PROBE_K + 1, name  # smaller than one array


def test_fill_check_fails_when_not_expected(registry, monkeypatch):
    known = {k: v for k, v in findings.FINDINGS["tpu_v4"].items() if k != "tpu.systolic_fill"}
    monkeypatch.setitem(findings.FINDINGS, "tpu_v4", known)
    check = _outcomes(registry, "tpu_v4")["tpu.systolic_fill"]
    assert check.status == FAIL
    assert check.workload.startswith("matmul 32x32x32")
    assert "compute faster than the arrays' fill allows" in check.message


def test_coral_register_tile_is_one_array():
    from graphsval_tpu.targets import coral_edge_tpu

    spec = coral_edge_tpu()
    assert spec.register_tile_bytes == 3 * 64 * 64
    assert spec.provenance["register_tile_bytes"].kind == "derived"


def test_energy_ranking_against_a100_is_a_reported_finding(registry):
    if "a100_sxm4_80gb" not in registry.targets():
        pytest.skip("graphsval-cuda is not installed: no A100 to compare with")
    outcome = _outcomes(registry, "tpu_v4")["energy_ranking:a100_sxm4_80gb"]
    assert outcome.status == XFAIL and "hardware-facts.md" in outcome.reason
    joules = outcome.numbers["joules_per_op"]
    assert joules["tpu_v4"] > joules["a100_sxm4_80gb"]
