"""A predictor's values are checked row by row, end to end (a plugin
installed with its dist-info, through the ``graphsval`` command): a row with
a NaN or negative energy, a NaN latency, a regime that is no regime of the
target or a binding tier that is no tier of it is left out, in one line
naming the plugin, the predictor and the field, and the other rows are
validated; an invalid optional term is dropped, in one line; a prediction
under another predictor's name is relabelled. A predictor that produced
nothing fails the validation (exit 1), never "0/0 records pass" with 0."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from graphsval_core.cli.main import cli

#: A predictor wrapping the naive roofline example, spoiling what MODE says
#: in the rows whose first dim is 1024 or more (the large ones).
SOURCE = """
import attrs
import numpy as np
from graphsval_core.examples import naive_roofline as nr
from graphsval_core.plugin_api import PredictorSpec

MODE = {mode!r}

def predict(registry, target, op, shapes, dtype):
    if MODE == "raises":
        raise RuntimeError("predictor boom")
    p = nr.predict(registry, target, op, shapes, dtype)
    big = np.asarray(shapes)[:, 0] >= 1024
    kw = {{"predictor": "spoiled"}}
    if MODE == "energy_nan":
        kw["energy_j"] = np.where(big, np.nan, p.energy_j)
    elif MODE == "energy_negative":
        kw["energy_j"] = np.where(big, -p.energy_j, p.energy_j)
    elif MODE == "latency_nan":
        kw["latency_s"] = np.where(big, np.nan, p.latency_s)
    elif MODE == "regime":
        kw["regime"] = np.where(big, "banana_bound", p.regime)
    elif MODE == "tier":
        kw["binding_tier"] = np.where(big, "l9", p.binding_tier)
    elif MODE == "compute_nan":
        kw["compute_s"] = np.full(len(shapes), np.nan)
    elif MODE == "other_name":
        kw["predictor"] = "somebody_else"
    return attrs.evolve(p, **kw)

@hookimpl
def graphsval_register_predictors():
    return [PredictorSpec(name="spoiled", description="spoils its rows", predict=predict)]
"""

HW = ("--hw", "i7_12700k", "--op", "matmul")


def _validate(install_plugin, mode: str, *extra: str):
    install_plugin(f"pred_{mode}", SOURCE.format(mode=mode))
    return CliRunner().invoke(cli, ["validate", *HW, "--predictor", "spoiled", *extra])


def _lines(result, word: str) -> list[str]:
    return [line for line in result.stderr.splitlines() if word in line]


@pytest.fixture(scope="module")
def clean_counts() -> tuple[int, int]:
    """(checked, excluded) of the same selection under the naive example."""
    from graphsval_core.examples import naive_roofline
    from graphsval_core.plugins.loader import build_registry
    from graphsval_core.validate.workflow import ValidateOptions, validate

    registry = build_registry(extra_plugins=[("naive", naive_roofline)])
    options = ValidateOptions(hws=HW[1:2], ops=HW[3:4], predictor="naive")
    summary = validate(registry, options).summary
    return summary.checked, len(summary.excluded)


@pytest.mark.parametrize(
    ("mode", "field"),
    [
        ("energy_nan", "energy_j"),
        ("energy_negative", "energy_j"),
        ("latency_nan", "latency_s"),
        ("regime", "regime"),
        ("tier", "binding_tier"),
    ],
)
def test_only_the_bad_rows_leave_in_one_line(install_plugin, clean_counts, mode, field):
    result = _validate(install_plugin, mode, "--format", "json")
    assert result.exit_code in (0, 1), result.output
    assert "Traceback" not in result.output
    (line,) = _lines(result, f"pred_{mode}")
    assert line.startswith(f"warning: plugin 'pred_{mode}' (gvt-pred_{mode} 1.0): ")
    assert f"predictor 'spoiled': returned a{'n' if field[0] in 'aeiou' else ''} {field}" in line
    assert line.endswith("those rows are left out")
    import json

    summary = json.loads(result.stdout)["summary"]
    checked, excluded = clean_counts
    assert 0 < summary["checked"] < checked  # the small shapes are still judged
    left_out = [e for e in summary["excluded"] if (e["reason"] or "").startswith("no prediction")]
    assert len(left_out) == checked - summary["checked"] + excluded - excluded
    assert all(f"returned {field}" in e["reason"] for e in left_out)
    strict = CliRunner().invoke(
        cli, ["--strict-plugins", "validate", *HW, "--predictor", "spoiled"]
    )
    assert strict.exit_code == 2
    (line,) = strict.stderr.strip().splitlines()
    assert f"pred_{mode}" in line and "'spoiled'" in line and field in line


def test_an_invalid_optional_term_is_dropped_in_one_line(install_plugin, clean_counts):
    result = _validate(install_plugin, "compute_nan")
    assert result.exit_code in (0, 1), result.output
    (line,) = _lines(result, "pred_compute_nan")
    assert line.endswith(
        "predictor 'spoiled': returned a compute_s that is not finite (NaN or infinity): "
        "the term is dropped"
    )
    assert f"/{clean_counts[0]} records pass" in result.stdout  # every row still judged


def test_another_predictors_name_is_relabelled(install_plugin, clean_counts):
    result = _validate(install_plugin, "other_name")
    (line,) = _lines(result, "pred_other_name")
    assert line.endswith("returned a Prediction named 'somebody_else': relabelled 'spoiled'")
    assert f"/{clean_counts[0]} records pass" in result.stdout


@pytest.mark.parametrize("fmt", ["text", "json"])
@pytest.mark.parametrize("args", [(), HW], ids=["all", "narrowed"])
def test_a_predictor_that_produced_nothing_fails_the_validation(install_plugin, fmt, args):
    install_plugin("pred_raises", SOURCE.format(mode="raises"))
    result = CliRunner().invoke(cli, ["validate", *args, "--predictor", "spoiled", "--format", fmt])
    assert result.exit_code == 1, result.output
    reason = "predictor 'spoiled' produced no prediction, so nothing was judged"
    if fmt == "text":
        assert result.stdout.startswith("FAILED: 0/0 records pass")
        assert reason in " ".join(result.stdout.split())
    else:
        assert f"FAILED: {reason}" in result.stderr
    (line,) = _lines(result, "pred_raises")
    assert line.endswith("predictor 'spoiled' failed in predict: RuntimeError: predictor boom")


def test_the_html_report_of_a_predictor_that_produced_nothing_says_failed(install_plugin, tmp_path):
    install_plugin("pred_raises", SOURCE.format(mode="raises"))
    out = tmp_path / "report"
    result = CliRunner().invoke(cli, ["validate", *HW, "--predictor", "spoiled", "--out", str(out)])
    assert result.exit_code == 1, result.output
    page = (out / "report.html").read_text()
    assert "FAILED: 0/0 records pass" in page and "nothing was judged" in page
    assert "PASSED" not in page
