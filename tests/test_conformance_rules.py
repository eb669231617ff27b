"""The conformance class of graphsval_core.testing: it passes a plugin that
honours the contract and fails, rule by rule, on plugins that break one rule.

Its test methods are called directly on subclasses built here, with in-process
plugins; a broken rule must surface as an AssertionError of that method.
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from attrs import evolve

from graphsval_core.datamodel.outcome import outcome
from graphsval_core.datamodel.provenance import Provenance, Sourced
from graphsval_core.plugins.records import ConsistencyCheck, PredictorSpec, ProbeResult
from graphsval_core.sweep.labels import load_shipped, overlay_for, write_overlay
from graphsval_core.testing import PluginConformance, make_registry

KEY = "toy_target"
METHODS = sorted(name for name in dir(PluginConformance) if name.startswith("test_"))
_OVERLAY: dict[str, str] = {}


def conformance(module: Any, **attrs: Any) -> PluginConformance:
    """An instance of a fresh subclass for ``module`` (never collected: built here)."""
    cls = type("ToyConformance", (PluginConformance,), {"plugin_module": module, **attrs})
    return cls()


def probe(target: Any) -> ProbeResult | None:
    return ProbeResult(False, "no toy hardware here") if target.family == "toy" else None


@pytest.fixture
def toy(make_plugin, make_target, tmp_path: Path) -> Callable[..., Any]:
    """Factory of the toy plugin: a valid target, a probe, a baseline and a
    sweep-label overlay; keyword arguments replace or add hooks
    (``None`` removes one), ``target`` replaces the target factory."""
    if not _OVERLAY:
        bare = make_plugin("toy_bare", lambda: [make_target(KEY)])
        registry = make_registry(bare)
        path = tmp_path / "overlay.json"
        write_overlay(overlay_for(registry, load_shipped(registry, overlays=False), [KEY]), path)
        _OVERLAY["text"] = path.read_text()
    overlay = tmp_path / "toy_labels.json"
    overlay.write_text(_OVERLAY["text"])
    baseline = tmp_path / "toy_target_matmul.validation.csv"
    baseline.write_text(
        "hardware,op,shape,dtype,latency_s,energy_j,trial_count,notes\n"
        f"{KEY},matmul,256x256x256,fp32,1.5e-04,,20,by hand\n"
    )

    def build(target: Callable[[], Any] | None = None, **hooks: Any) -> Any:
        chosen: dict[str, Any] = {
            "graphsval_measurer_probe": probe,
            "graphsval_sweep_overlays": lambda: [overlay],
            "graphsval_baselines": lambda: [baseline],
        }
        chosen.update(hooks)
        chosen = {name: fn for name, fn in chosen.items() if fn is not None}
        return make_plugin("toy_plugin", target or (lambda: [make_target(KEY)]), **chosen)

    return build


def run_all(instance: PluginConformance, tmp_path: Path) -> None:
    for name in METHODS:
        method = getattr(instance, name)
        try:
            if "tmp_path" in method.__code__.co_varnames[: method.__code__.co_argcount]:
                folder = tmp_path / name
                folder.mkdir()
                method(folder)
            else:
                method()
        except pytest.skip.Exception:
            continue  # a rule that does not apply (a plugin with no predictor)


def minimal_predict(registry: Any, target: Any, op: Any, shapes: Any, dtype: str) -> Any:
    """Latency, energy, regime and binding tier per shape: nothing else."""
    import numpy as np

    from graphsval_core.model.prediction import Prediction

    n = len(shapes)
    return Prediction(
        predictor="minimal", target=target.key, op=op.name, dtype=dtype, dims=op.dims,
        shapes=shapes, latency_s=np.full(n, 1e-3), energy_j=np.full(n, 1e-2),
        regime=np.full(n, "alu_bound"), binding_tier=np.full(n, "dram"),
    )  # fmt: skip


def predictor_plugin(make_plugin: Callable[..., Any], predict: Callable[..., Any]) -> Any:
    """A plugin that registers one predictor and nothing else."""
    spec = PredictorSpec(name="minimal", description="a minimal model", predict=predict)
    return make_plugin("toy_model", graphsval_register_predictors=lambda: [spec])


def test_the_class_passes_a_plugin_that_honours_the_contract(toy, tmp_path: Path):
    run_all(conformance(toy()), tmp_path)


def test_the_class_is_one_class_covering_every_rule():
    assert METHODS == [
        "test_baselines_parse",
        "test_consistency_checks_pass",
        "test_hooks_answer_as_the_tool_expects",
        "test_hooks_return_right_types",
        "test_measurer_probe_cheap_and_side_effect_free",
        "test_memory_hierarchy_ordered",
        "test_plugin_loads_strictly",
        "test_predictors_validate_a_baseline",
        "test_sweep_labels_present",
        "test_target_specs_valid",
    ]


def test_the_class_passes_a_minimal_predictor_plugin(make_plugin, tmp_path: Path):
    """No target of its own: its predictor runs on the class's toy target."""
    run_all(conformance(predictor_plugin(make_plugin, minimal_predict)), tmp_path)


def test_fails_a_predictor_that_would_crash_the_harness(make_plugin, tmp_path: Path):
    def short(*args: Any) -> Any:
        pred = minimal_predict(*args)
        return evolve(pred, latency_s=pred.latency_s[:1])

    instance = conformance(predictor_plugin(make_plugin, short))
    with pytest.raises(AssertionError, match="predictor 'minimal' of plugin .* failed in predict"):
        instance.test_predictors_validate_a_baseline(tmp_path)
    with pytest.raises(AssertionError, match="latency_s has shape"):
        instance.test_hooks_answer_as_the_tool_expects()


def test_fails_a_hook_the_tool_would_refuse(toy):
    """The residency window answered with the wrong shape, for one tier only:
    only calling it as the tool does finds it."""

    def window(target: Any, op: Any, shapes: Any, dtype: str, tier: Any) -> Any:
        return [[1, 2]] if tier.name == "dram" else None

    module = toy(graphsval_residency_window=window)
    with pytest.raises(AssertionError, match="graphsval_residency_window returned an array"):
        conformance(module).test_hooks_answer_as_the_tool_expects()


def test_fails_a_hook_that_exits(toy):
    def leaves(target: Any) -> Any:
        raise SystemExit(3)

    module = toy(graphsval_expected_failures=leaves)
    with pytest.raises(AssertionError, match=r"SystemExit: 3 \(the plugin called sys.exit\)"):
        conformance(module).test_hooks_answer_as_the_tool_expects()


def test_fails_a_hook_function_not_marked_hookimpl(toy):
    module = toy()

    def graphsval_register_ops():  # forgot @hookimpl: pluggy would ignore it silently
        return []

    module.graphsval_register_ops = graphsval_register_ops
    with pytest.raises(AssertionError, match="not marked @hookimpl"):
        conformance(module).test_plugin_loads_strictly()


def test_fails_a_plugin_that_does_not_load(toy):
    module = toy()
    del module.graphsval_api_version
    with pytest.raises(AssertionError, match="graphsval_api_version"):
        conformance(module).test_plugin_loads_strictly()


def test_fails_a_missing_entry_point(toy):
    with pytest.raises(AssertionError, match="no entry point 'no_such_plugin'"):
        conformance(toy(), entry_point_name="no_such_plugin").test_target_specs_valid()


def test_fails_a_spec_number_without_a_source(toy, make_target):
    unsourced = Sourced(4, Provenance("datasheet", ""))
    module = toy(target=lambda: [make_target(KEY, compute_units=unsourced)])
    with pytest.raises(AssertionError, match="compute_units has no provenance source"):
        conformance(module).test_target_specs_valid()


def test_fails_a_hook_returning_the_wrong_type(toy):
    module = toy(graphsval_measurer_probe=lambda target: "unavailable")
    with pytest.raises(AssertionError, match="graphsval_measurer_probe.*returned str"):
        conformance(module).test_hooks_return_right_types()


def test_fails_a_memory_hierarchy_out_of_order(toy):
    module = toy(graphsval_memory_hierarchy=lambda target: list(reversed(target.tiers)))
    with pytest.raises(AssertionError, match="follows"):
        conformance(module).test_memory_hierarchy_ordered()


def test_fails_a_slow_probe(toy, tmp_path: Path):
    def slow(target: Any) -> ProbeResult:
        time.sleep(0.03)
        return ProbeResult(False, "slow")

    instance = conformance(toy(graphsval_measurer_probe=slow), probe_budget_s=0.02)
    with pytest.raises(AssertionError, match="probing toy_target takes"):
        instance.test_measurer_probe_cheap_and_side_effect_free(tmp_path)


def test_fails_a_probe_that_writes_a_file(toy, tmp_path: Path):
    def writes(target: Any) -> ProbeResult:
        Path("probe.log").write_text("probed\n")
        return ProbeResult(False, "wrote a log")

    instance = conformance(toy(graphsval_measurer_probe=writes))
    with pytest.raises(AssertionError, match=r"wrote \['probe.log'\]"):
        instance.test_measurer_probe_cheap_and_side_effect_free(tmp_path)


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")
def test_fails_a_probe_that_imports_torch(toy, tmp_path: Path):
    def heavy(target: Any) -> ProbeResult:
        import torch  # noqa: F401

        return ProbeResult(True, "")

    instance = conformance(toy(graphsval_measurer_probe=heavy))
    with pytest.raises(AssertionError, match="imports torch"):
        instance.test_measurer_probe_cheap_and_side_effect_free(tmp_path)


def test_fails_a_baseline_that_does_not_parse(toy, tmp_path: Path):
    bad = tmp_path / "bad.validation.csv"
    bad.write_text("hardware,op,shape\ntoy_target,matmul,64x64x64\n")
    with pytest.raises(AssertionError, match="header must start with"):
        conformance(toy(graphsval_baselines=lambda: [bad])).test_baselines_parse()


def test_fails_a_baseline_row_of_an_unknown_target(toy, tmp_path: Path):
    bad = tmp_path / "other.validation.csv"
    bad.write_text(
        "hardware,op,shape,dtype,latency_s,energy_j,trial_count,notes\n"
        "no_such_target,matmul,64x64x64,fp32,1e-05,,5,\n"
    )
    with pytest.raises(AssertionError, match="unknown target 'no_such_target'"):
        conformance(toy(graphsval_baselines=lambda: [bad])).test_baselines_parse()


def test_fails_a_failing_consistency_check(toy):
    def always_false(target: Any, context: Any) -> list[Any]:
        return [outcome("toy.never", target.key, False, "this invariant never holds")]

    def checks(target: Any) -> list[ConsistencyCheck]:
        return [ConsistencyCheck(name="toy.never", description="fails", run=always_false)]

    with pytest.raises(AssertionError, match="this invariant never holds"):
        conformance(toy(graphsval_consistency_checks=checks)).test_consistency_checks_pass()


def test_fails_a_target_without_sweep_labels(toy):
    with pytest.raises(AssertionError, match="toy_target: .* sweep entries have no label"):
        conformance(toy(graphsval_sweep_overlays=None)).test_sweep_labels_present()


def test_fails_known_findings_that_are_not_a_mapping_of_reasons(toy):
    module = toy(graphsval_expected_failures=lambda target: ["bounds.power"])
    with pytest.raises(AssertionError, match="graphsval_expected_failures.*returned"):
        conformance(module).test_hooks_return_right_types()


def test_fails_a_stale_known_finding(toy):
    """A finding whose check passes is an unexpected pass: the plugin must drop it."""
    stale = toy(graphsval_expected_failures=lambda target: {"bounds.power": "was too hot once"})
    with pytest.raises(AssertionError, match="UNEXPECTED PASS bounds.power"):
        conformance(stale).test_consistency_checks_pass()


def test_fails_a_prediction_snapshot_that_does_not_parse(toy, tmp_path: Path):
    broken = tmp_path / "snapshot.json"
    broken.write_text('{"targets": [1, 2]}')
    module = toy(graphsval_prediction_snapshot=lambda: broken)
    with pytest.raises(AssertionError, match="not a consistency snapshot"):
        conformance(module).test_baselines_parse()
