"""Consistency checks (issue 8): each built-in check fails on a deliberately
broken synthetic target, shipped targets pass or list their expected failures
with reasons, and ``graphsval check`` / ``graphsval validate`` report them."""

from __future__ import annotations

import json

import numpy as np
import pytest
from attrs import evolve
from click.testing import CliRunner

from graphsval_core.cli.main import cli
from graphsval_core.consistency import snapshot as snap
from graphsval_core.consistency.context import CheckContext, Snapshots
from graphsval_core.consistency.runner import run_consistency
from graphsval_core.datamodel.outcome import (
    FAIL,
    PASS,
    SKIP,
    XFAIL,
    XPASS,
    Outcome,
    outcome,
)
from graphsval_core.datamodel.provenance import Provenance, datasheet, estimated
from graphsval_core.model.reference import predict as reference_predict
from graphsval_core.plugins.loader import build_registry
from graphsval_core.plugins.records import ConsistencyCheck, PredictorSpec, ProbeResult

# --- helpers ---------------------------------------------------------------------


def _two_dtypes(make_target, key="toy_target", **kw):
    """The conftest toy target with int8 beside fp32 (int8 cheaper per op)."""
    args = {
        "peak_ops_per_s": {"fp32": datasheet(256e9, "t"), "int8": datasheet(1024e9, "t")},
        "energy_per_op_j": {"fp32": estimated(1e-12, "t"), "int8": estimated(0.2e-12, "t")},
    }
    args.update(kw)
    return make_target(key, **args)


def _registry(make_plugin, targets, *, predictor=None, **hooks):
    """Only the built-ins and one plugin with ``targets`` (and a replacement
    ``reference`` predictor when given)."""
    if predictor is not None:
        hooks["graphsval_register_predictors"] = lambda: [
            PredictorSpec(name="reference", description="broken", predict=predictor)
        ]
    plugin = make_plugin("toy", lambda: list(targets), **hooks)
    blocked = ["no:builtin_reference"] if predictor is not None else []
    return build_registry(autoload=False, plugin_args=blocked, extra_plugins=[("toy", plugin)])


def _outcomes(registry, key="toy_target", context=None) -> dict[str, Outcome]:
    (result,) = run_consistency(registry, [registry.target(key)], context)
    return {o.check: o for o in result.outcomes}


def _broken(change):
    """A reference model whose prediction ``change`` alters."""

    def predict(registry, target, op, shapes, dtype):
        return change(reference_predict(registry, target, op, shapes, dtype), target)

    return predict


# --- the healthy toy passes everything --------------------------------------------


def test_a_consistent_target_passes_every_check(make_plugin, make_target):
    registry = _registry(make_plugin, [_two_dtypes(make_target)])
    outcomes = _outcomes(registry)
    assert {
        "decomposition.energy",
        "decomposition.latency",
        "monotonicity.latency",
        "monotonicity.energy",
        "monotonicity.memory_linear",
        "monotonicity.tier_traffic",
        "precision",
        "sensitivity.energy_per_op",
        "sensitivity.static_power",
        "sensitivity.energy_per_byte",
        "sensitivity.peak",
        "sensitivity.bandwidth",
        "bounds.flops",
        "bounds.bandwidth",
        "bounds.power",
        "bounds.finite",
        "snapshot",
        "provenance",
    } <= set(outcomes)
    bad = {k: o.line() for k, o in outcomes.items() if o.status not in (PASS, SKIP)}
    assert not bad
    assert outcomes["snapshot"].status == SKIP
    assert "ships no prediction snapshot" in outcomes["snapshot"].reason
    assert outcomes["decomposition.latency"].numbers["hidden_overlap_max_share"] >= 0


# --- each check fails on a broken synthetic target ----------------------------------


def test_decomposition_and_sensitivity_catch_a_double_counted_coefficient(make_plugin, make_target):
    def double(p, target):  # the compute energy enters the total twice
        return evolve(p, energy_j=p.energy_j + p.energy_compute_j)

    outcomes = _outcomes(_registry(make_plugin, [make_target()], predictor=_broken(double)))
    energy = outcomes["decomposition.energy"]
    assert energy.status == FAIL and energy.workload and energy.numbers["violations"] > 0
    sens = outcomes["sensitivity.energy_per_op"]
    assert sens.status == FAIL and sens.coefficient == "energy_per_op_j.fp32"
    assert sens.numbers["worst"]["total_delta_j"] == pytest.approx(
        2 * sens.numbers["worst"]["term_share_j"], rel=1e-6
    )


def test_latency_terms_must_sum_to_the_latency(make_plugin, make_target):
    def slower(p, target):
        return evolve(p, latency_s=p.latency_s * 1.01)

    outcomes = _outcomes(_registry(make_plugin, [make_target()], predictor=_broken(slower)))
    assert outcomes["decomposition.latency"].status == FAIL


def test_a_negative_term_fails_the_physical_bounds(make_plugin, make_target):
    def negative(p, target):  # a total still positive: the guard would refuse a negative one
        static = -0.01 * p.energy_compute_j
        total = p.energy_compute_j + p.energy_per_tier_j.sum(axis=1) + static
        return evolve(p, energy_static_j=static, energy_j=total)

    outcomes = _outcomes(_registry(make_plugin, [make_target()], predictor=_broken(negative)))
    finite = outcomes["bounds.finite"]
    assert finite.status == FAIL and finite.workload
    assert "energy" in finite.message and "-" in finite.message
    assert outcomes["decomposition.energy"].status == PASS  # the terms still add up


def test_power_above_tdp_fails_naming_workload_and_coefficient(make_plugin, make_target):
    hot = make_target(energy_per_op_j={"fp32": estimated(1e-9, "1 nJ per op: 256 W at peak")})
    power = _outcomes(_registry(make_plugin, [hot]))["bounds.power"]
    assert power.status == FAIL
    assert power.coefficient == "energy_per_op_j.fp32"
    assert power.workload.startswith("matmul 8192x8192x8192 fp32")
    assert power.numbers["worst"]["watts"] > 65.0 == power.numbers["tdp_w"]
    assert "above TDP 65 W" in power.message


def test_rates_above_peak_fail(make_plugin, make_target):
    def too_fast(p, target):
        return evolve(p, latency_s=p.latency_s / 4)

    outcomes = _outcomes(_registry(make_plugin, [make_target()], predictor=_broken(too_fast)))
    assert outcomes["bounds.flops"].status == FAIL
    assert outcomes["bounds.bandwidth"].status == FAIL


def test_monotonicity_fails_when_a_bigger_shape_is_cheaper(make_plugin, make_target):
    def shrinking(p, target):
        scale = 1.0 / (1.0 + np.asarray(p.shapes, dtype=float).sum(axis=1) / 1e4)
        return evolve(p, latency_s=p.latency_s * scale, energy_j=p.energy_j * scale)

    outcomes = _outcomes(_registry(make_plugin, [make_target()], predictor=_broken(shrinking)))
    assert outcomes["monotonicity.latency"].status == FAIL
    assert outcomes["monotonicity.energy"].status == FAIL
    assert "grown" in outcomes["monotonicity.latency"].message


def test_memory_time_must_be_linear_in_bytes(make_plugin, make_target):
    def sublinear(p, target):
        return evolve(p, time_per_tier_s=p.time_per_tier_s**0.9)

    memory = _outcomes(_registry(make_plugin, [make_target()], predictor=_broken(sublinear)))[
        "monotonicity.memory_linear"
    ]
    assert memory.status == FAIL and memory.coefficient.endswith("peak_bandwidth_bps")


def test_traffic_that_lowers_energy_fails(make_plugin, make_target):
    def subtracts(p, target):
        flipped = -p.energy_per_tier_j
        return evolve(
            p,
            energy_per_tier_j=flipped,
            energy_j=p.energy_compute_j + flipped.sum(axis=1) + p.energy_static_j,
        )

    outcomes = _outcomes(_registry(make_plugin, [make_target()], predictor=_broken(subtracts)))
    assert outcomes["monotonicity.tier_traffic"].status == FAIL


def test_inverted_precision_scaling_fails(make_plugin, make_target):
    inverted = _two_dtypes(
        make_target,
        energy_per_op_j={"fp32": estimated(1e-12, "t"), "int8": estimated(40e-12, "t")},
    )
    precision = _outcomes(_registry(make_plugin, [inverted]))["precision"]
    assert precision.status == FAIL
    assert precision.coefficient == "energy_per_op_j.int8"
    assert "int8" in precision.message and "fp32" in precision.message


def test_a_model_that_ignores_its_coefficients_fails_sensitivity(make_plugin, make_target):
    def frozen_spec(registry, target, op, shapes, dtype):
        # predicts with the registered spec, whatever the spec it is given
        return reference_predict(registry, registry.target(target.key), op, shapes, dtype)

    outcomes = _outcomes(_registry(make_plugin, [make_target()], predictor=frozen_spec))
    for check in (
        "sensitivity.energy_per_op",
        "sensitivity.static_power",
        "sensitivity.energy_per_byte",
        "sensitivity.peak",
        "sensitivity.bandwidth",
    ):
        assert outcomes[check].status == FAIL, check
        assert outcomes[check].coefficient


def test_missing_provenance_fails_the_audit(make_plugin, make_target):
    target = make_target()
    prov = dict(target.provenance)
    del prov["energy_per_op_j.fp32"]
    prov["peak_ops_per_s.fp32"] = Provenance("datasheet", "")
    object.__setattr__(target, "provenance", prov)  # a spec that bypassed validation
    audit = _outcomes(_registry(make_plugin, [target]))["provenance"]
    assert audit.status == FAIL
    assert set(audit.numbers["missing"]) == {"energy_per_op_j.fp32", "peak_ops_per_s.fp32"}


def test_inverted_family_ranking_fails(make_plugin, make_target):
    small = make_target("toy_small", family_rank=1)
    big = make_target(
        "toy_big", family_rank=2, peak_ops_per_s={"fp32": datasheet(128e9, "slower part")}
    )
    registry = _registry(make_plugin, [small, big])
    ranking = _outcomes(registry, "toy_big")["ranking:toy_small"]
    assert ranking.status == FAIL
    assert ranking.workload == "matmul 8192x8192x8192 fp32"
    assert "toy_big is slower than toy_small" in ranking.message
    assert "ranking:toy_small" not in _outcomes(registry, "toy_small")
    other_mode = evolve(big, power_mode="eco", peak_ops_per_s={"fp32": 512e9})
    skipped = _outcomes(_registry(make_plugin, [small, other_mode]), "toy_big")
    assert skipped["ranking:toy_small"].status == SKIP
    assert "power modes differ" in skipped["ranking:toy_small"].reason
    same_class = evolve(other_mode, power_mode_class="top")
    compared = _outcomes(
        _registry(make_plugin, [evolve(small, power_mode_class="top"), same_class]), "toy_big"
    )
    assert compared["ranking:toy_small"].status == PASS
    unranked = _outcomes(_registry(make_plugin, [small, evolve(big, family_rank=None)]), "toy_big")
    assert not any(name.startswith("ranking:") for name in unranked)


def test_cross_architecture_energy_expected_failure_and_unexpected_pass(make_plugin, make_target):
    def arch(key, architecture, pj, power_class="toy class"):
        return _two_dtypes(
            make_target,
            key,
            architecture=architecture,
            power_class=power_class,
            energy_per_op_j={"fp32": estimated(4e-12, "t"), "int8": estimated(pj * 1e-12, "t")},
        )

    systolic, gpu = arch("toy_systolic", "systolic", 2.0), arch("toy_gpu", "gpu", 0.5)
    registry = _registry(make_plugin, [systolic, gpu])
    check = "energy_ranking:toy_gpu"
    inverted = _outcomes(registry, "toy_systolic")[check]
    assert inverted.status == FAIL and inverted.coefficient == "energy_per_op_j.int8"
    assert (
        inverted.numbers["joules_per_op"]["toy_systolic"]
        > inverted.numbers["joules_per_op"]["toy_gpu"]
    )
    assert inverted.numbers["power_class"] == "toy class"
    elsewhere = arch("toy_gpu", "gpu", 0.5, power_class="another class")
    assert check not in _outcomes(_registry(make_plugin, [systolic, elsewhere]), "toy_systolic")

    def findings(target):
        return {check: "datasheet figures say so"} if target.key == "toy_systolic" else None

    known = _registry(make_plugin, [systolic, gpu], graphsval_expected_failures=findings)
    expected = _outcomes(known, "toy_systolic")[check]
    assert expected.status == XFAIL and expected.reason == "datasheet figures say so"
    fixed = evolve(systolic, energy_per_op_j={"fp32": 4e-12, "int8": 0.1e-12})
    fixed_registry = _registry(make_plugin, [fixed, gpu], graphsval_expected_failures=findings)
    unexpected = _outcomes(fixed_registry, "toy_systolic")[check]
    assert unexpected.status == XPASS and "remove the expectation" in unexpected.line()


def test_snapshot_regression_and_update(make_plugin, make_target, tmp_path):
    target = make_target()
    registry = _registry(make_plugin, [target])
    path = tmp_path / "snapshot.json"

    def context(reg):
        return CheckContext(reg, Snapshots(reg, path))

    assert snap.update(context(registry), [target]) == {
        str(path): ["toy_target: added (7 workloads)"]
    }
    assert _outcomes(registry, context=context(registry))["snapshot"].status == PASS
    drifted = evolve(target, peak_ops_per_s={"fp32": datasheet(200e9, "t")})
    moved_registry = _registry(make_plugin, [drifted])
    regression = _outcomes(moved_registry, context=context(moved_registry))["snapshot"]
    assert regression.status == FAIL
    assert regression.workload.startswith("matmul 8192x8192x8192 fp32")
    assert "--update-snapshot" in regression.message
    (lines,) = snap.update(context(moved_registry), [drifted]).values()
    assert any("matmul 8192x8192x8192 fp32 latency_s" in line for line in lines)
    assert _outcomes(moved_registry, context=context(moved_registry))["snapshot"].status == PASS
    data = json.loads(path.read_text())
    assert set(data["targets"]) == {"toy_target"} and data["tolerance"] == 0.01
    small = evolve(target, peak_ops_per_s={"fp32": datasheet(200e9 * 1.005, "t")})
    small_registry = _registry(make_plugin, [small])
    assert _outcomes(small_registry, context=context(small_registry))["snapshot"].status == PASS


def test_each_plugin_compares_with_its_own_snapshot(make_plugin, make_target, tmp_path):
    """Without a named file, a target's snapshot is the one its plugin ships; a
    plugin with none skips the check with the reason."""
    target = make_target()
    own = tmp_path / "toy_snapshot.json"
    registry = _registry(make_plugin, [target], graphsval_prediction_snapshot=lambda: own)
    assert _outcomes(registry)["snapshot"].status == SKIP  # shipped but empty
    context = CheckContext(registry)
    assert snap.update(context, [target]) == {str(own): ["toy_target: added (7 workloads)"]}
    assert _outcomes(registry)["snapshot"].status == PASS
    assert _outcomes(registry)["snapshot"].numbers["file"] == "toy_snapshot.json"
    bare = _registry(make_plugin, [target])
    assert "ships no prediction snapshot" in _outcomes(bare)["snapshot"].reason


def test_a_snapshot_in_an_installed_package_is_never_written(
    make_plugin, make_target, tmp_path, monkeypatch
):
    target = make_target()
    own = tmp_path / "toy_snapshot.json"
    registry = _registry(make_plugin, [target], graphsval_prediction_snapshot=lambda: own)
    monkeypatch.setattr(snap, "in_installed_package", lambda path: True)
    with pytest.raises(snap.SnapshotError, match="installed package.*--snapshot FILE"):
        snap.update(CheckContext(registry), [target])
    assert not own.exists()
    named = tmp_path / "named.json"  # a file the user names is written wherever it is
    snap.update(CheckContext(registry, Snapshots(registry, named)), [target])
    assert "toy_target" in json.loads(named.read_text())["targets"]


def test_detected_targets_are_not_snapshotted_and_unprobeable_ones_skipped(
    make_plugin, make_target
):
    here = make_target("toy_here", detected=True)
    absent = make_target("toy_absent", detected=True)

    def probe(target):
        return ProbeResult(target.key == "toy_here", "no such device here")

    registry = _registry(make_plugin, [here, absent], graphsval_measurer_probe=probe)
    results = {r.target: r for r in run_consistency(registry)}
    assert results["toy_absent"].status == SKIP
    assert "no such device here" in results["toy_absent"].skip_reason
    assert results["toy_absent"].outcomes == ()
    snapshot = {o.check: o for o in results["toy_here"].outcomes}["snapshot"]
    assert snapshot.status == SKIP and "detected" in snapshot.reason


def test_plugin_checks_run_through_the_hook_and_a_raising_one_is_a_plugin_problem(
    make_plugin, make_target
):
    def boom(target, context):
        raise RuntimeError("kaput")

    def fine(target, context):
        return [outcome("toy.fine", target.key, True, "fine", numbers={"x": 1})]

    def checks(target):
        return [
            ConsistencyCheck(name="toy.fine", description="d", run=fine),
            ConsistencyCheck(name="toy.boom", description="d", run=boom),
        ]

    registry = _registry(make_plugin, [make_target()], graphsval_consistency_checks=checks)
    outcomes = _outcomes(registry)
    assert outcomes["toy.fine"].status == PASS and outcomes["toy.fine"].plugin == "toy"
    # a plugin's broken check is its plugin's problem, not the target's failure
    assert outcomes["toy.boom"].status == SKIP
    assert "the check of plugin 'toy' failed" in outcomes["toy.boom"].message
    assert any(
        "consistency check 'toy.boom' raised RuntimeError: kaput" in str(p)
        for p in registry.problems
    )


# --- shipped targets -------------------------------------------------------------------


@pytest.fixture(scope="module")
def shipped():
    registry = build_registry(strict=True)
    return registry, run_consistency(registry)


def test_shipped_targets_pass_or_list_expected_failures_with_reasons(shipped):
    _, results = shipped
    failures = [f"{r.target}: {o.line()}" for r in results for o in r.outcomes if o.status == FAIL]
    assert not failures, "\n".join(failures)
    unexpected = [f"{r.target} {o.check}" for r in results for o in r.outcomes if o.status == XPASS]
    assert not unexpected, f"expected failures now pass; remove them: {unexpected}"
    for r in results:
        for o in r.outcomes:
            if o.status in (XFAIL, SKIP):
                assert len(o.reason) > 20, (r.target, o.check)
    checked = {r.target for r in results if not r.skip_reason}
    assert {"kpu_t64", "kpu_t256", "kpu_t768", "tpu_v4", "coral_edge_tpu", "i7_12700k"} <= checked


def test_every_expected_failure_entry_is_used(shipped):
    registry, results = shipped
    seen = {(o.check, r.target) for r in results for o in r.outcomes if o.status == XFAIL}
    # targets skipped here (host_gpu without a GPU) cannot use their entries
    declared = {
        (check, r.target)
        for r in results
        if not r.skip_reason
        for check in registry.expected_failures(registry.target(r.target))
    }
    assert declared, "the shipped plugins declare known findings"
    assert not declared - seen


def test_spatial_targets_get_their_plugin_checks(shipped):
    _, results = shipped
    by_key = {r.target: {o.check for o in r.outcomes} for r in results}
    for key in ("kpu_t64", "kpu_t256", "kpu_t768"):
        assert {"kpu.weight_stationary", "kpu.tile_utilisation"} <= by_key[key]
    for key in ("tpu_v4", "coral_edge_tpu"):
        assert "tpu.systolic_fill" in by_key[key]
    assert "kpu.weight_stationary" not in by_key["h100_sxm5_80gb"]


# --- the command line ----------------------------------------------------------------------


def test_check_json_gives_the_ground_truth_kind_of_every_target():
    result = CliRunner().invoke(cli, ["check", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    kinds = {t["hardware"]: t["ground_truth"] for t in data["targets"]}
    for key in ("kpu_t64", "kpu_t256", "kpu_t768", "tpu_v4", "coral_edge_tpu"):
        assert kinds[key] == "consistency_only"
    for key in ("i7_12700k", "h100_sxm5_80gb", "jetson_orin_nano_8gb"):
        assert kinds[key] == "measured"
    assert data["passed"] is True
    tpu = next(t for t in data["targets"] if t["hardware"] == "tpu_v4")
    assert tpu["expected_failures"] >= 1 and tpu["failed"] == 0
    assert {"check", "status", "numbers", "workload", "coefficient", "reason"} <= set(
        tpu["outcomes"][0]
    )


def test_check_exit_codes(fake_entry_points, make_entry_point, make_plugin, make_target, tmp_path):
    hot = make_target("toy_hot", energy_per_op_j={"fp32": estimated(1e-9, "t")})
    plugin = make_plugin("toy", lambda: [make_target(), hot])
    fake_entry_points(make_entry_point("toy", lambda: plugin, "graphsval-toy", "0.1"))
    runner = CliRunner()
    good = runner.invoke(cli, ["check", "--hw", "toy_target"])
    assert good.exit_code == 0, good.output
    assert "toy_target (measured):" in good.output and "0 fail" in good.output
    bad = runner.invoke(cli, ["check", "--hw", "toy_hot"])
    assert bad.exit_code == 1
    assert "FAIL bounds.power" in bad.output and "coefficient: energy_per_op_j.fp32" in bad.output
    assert runner.invoke(cli, ["check", "--hw", "nope"]).exit_code == 2
    broken = tmp_path / "snap.json"
    broken.write_text("{not json")
    result = runner.invoke(cli, ["check", "--snapshot", str(broken)])
    assert result.exit_code == 2 and "cannot read the snapshot" in result.output
    typo = runner.invoke(cli, ["check", "--hw", "toy_target", "--snapshot", str(tmp_path / "t")])
    assert typo.exit_code == 2 and "no such snapshot file" in typo.output
    fresh = tmp_path / "fresh.json"
    update = runner.invoke(
        cli, ["check", "--hw", "toy_target", "--snapshot", str(fresh), "--update-snapshot"]
    )
    assert update.exit_code == 0 and "toy_target: added" in update.output
    assert "toy_target" in json.loads(fresh.read_text())["targets"]


# --- graphsval validate ------------------------------------------------------------------------


def _baseline(registry, path):
    """A baseline 'measured' on the model itself, so every record passes."""
    rows = ["hardware,op,shape,dtype,latency_s,energy_j,trial_count,notes"]
    target = registry.target("toy_target")
    p = reference_predict(registry, target, registry.op("matmul"), [[512, 512, 512]], "fp32")
    rows.append(f"toy_target,matmul,512x512x512,fp32,{p.latency_s[0]:.9e},,11,")
    path.write_text("\n".join(rows) + "\n")
    return path


@pytest.mark.parametrize("broken", [False, True])
def test_validate_shows_consistency_only_targets_and_fails_on_a_check(
    broken, fake_entry_points, make_entry_point, make_plugin, make_target, tmp_path
):
    joules = 1e-9 if broken else 1e-12
    spatial = make_target(
        "toy_spatial",
        ground_truth="consistency_only",
        energy_per_op_j={"fp32": estimated(joules, "t")},
    )
    plugin = make_plugin("toy", lambda: [make_target(), spatial])
    fake_entry_points(make_entry_point("toy", lambda: plugin, "graphsval-toy", "0.1"))
    csv = _baseline(build_registry(), tmp_path / "toy.validation.csv")
    result = CliRunner().invoke(cli, ["validate", "--baseline", str(csv)])
    row = next(line for line in result.output.splitlines() if "toy_spatial" in line)
    assert row.startswith("Consistency-only targets (checks passed): toy_spatial ")
    assert "toy_spatial / " not in result.output  # never shown as validated cells
    if broken:
        assert result.exit_code == 1
        assert "consistency toy_spatial: FAIL bounds.power" in result.output
    else:
        assert result.exit_code == 0, result.output
        passed, checks = row.split("toy_spatial ")[1].split()[0].strip(",").split("/")
        assert passed == checks


def test_validate_with_no_baselines_still_runs_the_checks(
    fake_entry_points, make_entry_point, make_plugin, make_target
):
    hot = make_target("toy_hot", energy_per_op_j={"fp32": estimated(1e-9, "t")})
    plugin = make_plugin("toy", lambda: [hot])
    fake_entry_points(make_entry_point("toy", lambda: plugin, "graphsval-toy", "0.1"))
    result = CliRunner().invoke(cli, ["validate"])
    assert "ship no baselines" in result.output
    assert "FAIL bounds.power" in result.output
    assert result.exit_code == 1


def test_a_detected_target_takes_no_part_in_the_cross_target_checks(make_plugin, make_target):
    """This machine's target follows the machine: ranked parts and power
    classes are compared with each other, never with it."""
    small = make_target("toy_small", family_rank=1, power_class="toy class")
    big = make_target("toy_big", family_rank=2, power_class="toy class", architecture="gpu")
    here = make_target("toy_here", detected=True, family_rank=3, power_class="toy class")

    def probe(target):
        return ProbeResult(True, "")

    registry = _registry(make_plugin, [small, big, here], graphsval_measurer_probe=probe)
    assert not any(
        name.startswith(("ranking:", "energy_ranking:")) for name in _outcomes(registry, "toy_here")
    )
    assert "ranking:toy_small" in _outcomes(registry, "toy_big")
    assert not any("toy_here" in name for name in _outcomes(registry, "toy_big"))


def test_a_plugins_malformed_snapshot_fails_its_own_targets_check_alone(
    make_plugin, make_target, tmp_path
):
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    bad = make_plugin(
        "bad", lambda: [make_target("bad_one")], graphsval_prediction_snapshot=lambda: broken
    )
    good = make_plugin("good", lambda: [make_target("good_one")])
    registry = build_registry(autoload=False, extra_plugins=[("bad", bad), ("good", good)])
    from graphsval_core.consistency.workflow import CheckOptions, check

    results = {r.target: r for r in check(registry, CheckOptions()).results}
    snapshot = {o.check: o for o in results["bad_one"].outcomes}["snapshot"]
    assert snapshot.status == FAIL and "plugin 'bad' cannot be used" in snapshot.message
    assert not results["good_one"].failed


def test_bandwidth_sensitivity_allows_what_packing_b_through_the_tier_gains(
    make_plugin, make_target
):
    # a CPU library copying B reads it from the tier that holds it: raising that
    # tier's bandwidth shortens the copy as well as the tier's own term, and the
    # check allows the latency that much more; a model whose latency moves by that
    # much without reporting it in its packing term fails (compute nearly free, so
    # a memory-bound product's whole tier term and its copy show in the latency)
    packer = make_target(
        peak_ops_per_s={"fp32": datasheet(1e15, "t")},
        pack_bps=estimated(1e12, "the copy's writes"),
        pack_min_rows=estimated(1, "t"),
    )
    registry = _registry(make_plugin, [packer])
    (result,) = run_consistency(registry, [registry.target("toy_target")])
    bandwidth = next(o for o in result.outcomes if o.check == "sensitivity.bandwidth")
    assert bandwidth.status == PASS, bandwidth.message
    ctx = CheckContext(registry)
    raised = evolve(
        packer,
        tiers=[evolve(t, peak_bandwidth_bps=t.peak_bandwidth_bps * 1.1) for t in packer.tiers],
    )
    before, after = ctx.predict_all(packer), ctx.predict_all(raised)
    p, q = before[("linear", "fp32")][1], after[("linear", "fp32")][1]
    # a reference product whose latency moves by more than its tiers' terms: the copy
    term = (p.time_per_tier_s - q.time_per_tier_s).max(axis=1)
    assert np.any((p.latency_s - q.latency_s > term * 1.01) & (p.pack_s > q.pack_s))

    def hidden_packing(registry, target, op, shapes, dtype):
        p = reference_predict(registry, target, op, shapes, dtype)
        return evolve(p, pack_s=np.zeros_like(p.pack_s))  # latency keeps the copy

    broken = _outcomes(_registry(make_plugin, [packer], predictor=hidden_packing))
    assert broken["sensitivity.bandwidth"].status == FAIL
    assert "peak_bandwidth_bps" in broken["sensitivity.bandwidth"].coefficient
