"""A predictor plugin is a documented, tested contract: the harness works with
any predictor that gives latency and energy (with the regime and binding tier)
per shape; breakdown terms are optional and whatever uses them says so; the
constants it declares are what attribution reports, each inferred by its
unit; one that raises or answers against the contract is named in one line."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from attrs import evolve

from graphsval_core import hookimpl
from graphsval_core.model.prediction import Prediction
from graphsval_core.plugins.loader import build_registry
from graphsval_core.plugins.records import PredictorConstant, PredictorSpec
from graphsval_core.plugins.registry import PredictorFailed
from graphsval_core.validate.workflow import ValidateOptions, validate

pytest_plugins = ["graphsval_core.testing"]

#: The minimal predictor's answer: a share of what the baseline measured
#: (plausible times on the toy target, at 10 W).
SHARE = 0.5
MEASURED_S = (2e-3, 16e-3, 128e-3)
MEASURED_J = (2e-2, 16e-2, 128e-2)
SHAPES = ("512x512x512", "1024x1024x1024", "2048x2048x2048")


def minimal(registry: Any, target: Any, op: Any, shapes: np.ndarray, dtype: str) -> Prediction:
    """Latency and energy per shape, the regime and binding tier: nothing else."""
    n = len(shapes)
    scale = (np.asarray(shapes)[:, 0] / 512) ** 3
    return Prediction(
        predictor="p",
        target=target.key,
        op=op.name,
        dtype=dtype,
        dims=op.dims,
        shapes=shapes,
        latency_s=SHARE * MEASURED_S[0] * scale,
        energy_j=SHARE * MEASURED_J[0] * scale,
        regime=np.full(n, "alu_bound"),
        binding_tier=np.full(n, "dram"),
    )


def _declared(*constants: PredictorConstant) -> Any:
    return lambda registry, target, op, dtype: list(constants)


def _plugin(make_plugin, make_target, **spec: Any) -> Any:
    predictor = PredictorSpec(name="p", description="a test predictor", **spec)
    return make_plugin(
        "acme_model",
        lambda: [make_target("toy_target")],
        graphsval_register_predictors=hookimpl(lambda: [predictor]),
    )


@pytest.fixture
def baseline(tmp_path: Path) -> Path:
    """Three matmuls on the toy target, measured at :data:`MEASURED_S` and :data:`MEASURED_J`."""
    path = tmp_path / "toy_target_matmul.validation.csv"
    rows = [
        f"toy_target,matmul,{shape},fp32,{t},{e},10,"
        for shape, t, e in zip(SHAPES, MEASURED_S, MEASURED_J, strict=True)
    ]
    path.write_text(
        "hardware,op,shape,dtype,latency_s,energy_j,trial_count,notes\n" + "\n".join(rows) + "\n"
    )
    return path


def _validate(plugin: Any, baseline: Path, strict: bool = False) -> Any:
    registry = build_registry(strict=strict, autoload=False, extra_plugins=[("acme_model", plugin)])
    return validate(registry, ValidateOptions(baselines=[str(baseline)], predictor="p"))


def test_a_minimal_predictor_validates_and_says_what_it_lacks(make_plugin, make_target, baseline):
    result = _validate(_plugin(make_plugin, make_target, predict=minimal), baseline)
    summary = result.summary
    assert summary.checked == 3 and summary.failed == 3  # half the measured time: all fail
    assert any("reports no breakdown terms" in w for w in summary.warnings)
    assert any("declares no constants" in w for w in summary.warnings)
    (latency, energy) = summary.drift
    assert latency.constant == "" and latency.error_kind == "latency"
    assert latency.text.startswith(
        "the predictor declares no latency constant for this cell, so no constant can be named: "
        "the model under-predicts latency by 50% (median) over 3 shapes"
    )
    assert energy.error_kind == "energy" and "no constant can be named" in energy.text


def test_declared_constants_are_inferred_by_their_unit(make_plugin, make_target, baseline):
    declared = _declared(
        PredictorConstant(name="peak", value=1e12, unit="FLOP/s", regime="alu_bound"),
        PredictorConstant(name="setup", value=1e-3, unit="s", regime="alu_bound"),
        PredictorConstant(name="efficiency", value=0.8, unit="", regime="alu_bound"),
        PredictorConstant(name="l2 bandwidth", value=1e11, unit="B/s", regime="l2_bound"),
        PredictorConstant(name="static", value=4.0, unit="W", regime=None, quantity="energy"),
    )
    plugin = _plugin(make_plugin, make_target, predict=minimal, constants=declared)
    summary = _validate(plugin, baseline).summary
    drift = {d.constant: d for d in summary.drift}
    assert set(drift) == {"peak", "setup", "efficiency", "static"}  # not the l2 cell's
    assert drift["peak"].implied == pytest.approx(0.5e12)  # a rate: x predicted / measured
    assert drift["setup"].implied == pytest.approx(1e-3 + 0.5 * MEASURED_S[1])  # a time adds
    assert drift["efficiency"].implied == pytest.approx(1.6)  # x measured / predicted
    # a power: the energy the model misses over the measured time (0.5 E / t = 5 W)
    assert drift["static"].implied == pytest.approx(4.0 + 5.0)
    assert drift["peak"].text.startswith("peak: model 1 TFLOP/s, measurements imply 500 GFLOP/s")
    assert not any("declares no constants" in w for w in summary.warnings)


def test_the_target_specs_constants_are_never_another_predictors(
    make_plugin, make_target, baseline
):
    """With a breakdown but no constants declared, nothing is read from the spec."""

    def with_terms(registry, target, op, shapes, dtype):
        pred = minimal(registry, target, op, shapes, dtype)
        return evolve(pred, compute_s=pred.latency_s, memory_s=0.1 * pred.latency_s)

    summary = _validate(_plugin(make_plugin, make_target, predict=with_terms), baseline).summary
    assert [d.constant for d in summary.drift] == ["", ""]
    assert not any("reports no breakdown" in w for w in summary.warnings)


BROKEN: dict[str, tuple[Any, str]] = {
    "raises": (lambda *a: 1 / 0, "ZeroDivisionError: division by zero"),
    "exits": (lambda *a: sys.exit(4), "SystemExit: 4 (the plugin called sys.exit)"),
    "garbage": (lambda *a: {"latency_s": 1.0}, "predict returned dict, expected a Prediction"),
    "short": (
        lambda *a: evolve(minimal(*a), latency_s=minimal(*a).latency_s[:1]),
        "latency_s has shape (1,), expected one value per shape (3,)",
    ),
}


@pytest.mark.parametrize("kind", BROKEN)
def test_a_broken_predictor_leaves_its_rows_out_naming_its_plugin(
    make_plugin, make_target, baseline, kind
):
    predict, says = BROKEN[kind]
    plugin = _plugin(make_plugin, make_target, predict=predict)
    result = _validate(plugin, baseline)
    assert result.summary.checked == 0
    (reason,) = {item.reason for item in result.summary.excluded}
    assert reason.startswith("no prediction: predictor 'p' of plugin 'acme_model' failed in ")
    assert says in reason
    with pytest.raises(PredictorFailed, match="predictor 'p' of plugin 'acme_model'"):
        _validate(plugin, baseline, strict=True)


def test_broken_constants_name_the_plugin_and_attribution_names_no_constant(
    make_plugin, make_target, baseline
):
    plugin = _plugin(make_plugin, make_target, predict=minimal, constants=lambda *a: [42])
    registry = build_registry(autoload=False, extra_plugins=[("acme_model", plugin)])
    result = validate(registry, ValidateOptions(baselines=[str(baseline)], predictor="p"))
    assert [d.constant for d in result.summary.drift] == ["", ""]
    (problem,) = {str(p) for p in registry.problems}
    assert problem == (
        "plugin 'acme_model': predictor 'p' failed in constants: "
        "TypeError: constants returned int, expected PredictorConstant"
    )


def test_explain_predict_and_reports_with_a_minimal_predictor(
    graphsval_cli, make_plugin, make_target, baseline, tmp_path
):
    plugin = ("acme_model", _plugin(make_plugin, make_target, predict=minimal))
    shape = ("--hw", "toy_target", "--op", "matmul", "--shape", "512x512x512", "--dtype", "fp32")
    explained = graphsval_cli("explain", *shape, "--predictor", "p", plugins=[plugin])
    assert explained.exit_code == 0, explained.output
    last = explained.stdout.split("\n\n")[-1]  # its last paragraph, wrapped to the width
    assert " ".join(last.split()) == (
        "terms: none: predictor 'p' reports no breakdown (compute, memory or per-tier times), "
        "only its totals"
    )
    predicted = graphsval_cli(
        "predict", *shape, "--predictor", "p", "--format", "json", plugins=[plugin]
    )
    assert predicted.exit_code == 0, predicted.output
    assert json.loads(predicted.stdout)[0]["latency_s"] == pytest.approx(SHARE * MEASURED_S[0])
    out = tmp_path / "reports"
    validated = graphsval_cli(
        "validate", "--baseline", str(baseline), "--predictor", "p", "--out", str(out),
        plugins=[plugin],
    )  # fmt: skip
    assert validated.exit_code == 1, validated.output
    assert "no constant can be named" in validated.stdout
    assert {p.name for p in out.iterdir()} == {
        "report.json", "report.md", "records.csv", "report.html"
    }  # fmt: skip


def test_explain_with_a_broken_predictor_is_one_line_and_exit_2(
    graphsval_cli, make_plugin, make_target
):
    plugin = ("acme_model", _plugin(make_plugin, make_target, predict=BROKEN["garbage"][0]))
    result = graphsval_cli(
        "explain", "--hw", "toy_target", "--op", "matmul", "--shape", "64x64x64",
        "--dtype", "fp32", "--predictor", "p", plugins=[plugin],
    )  # fmt: skip
    assert result.exit_code == 2
    assert result.output.splitlines() == [
        "Error: predictor 'p' of plugin 'acme_model' failed in predict: "
        "TypeError: predict returned dict, expected a Prediction"
    ]
