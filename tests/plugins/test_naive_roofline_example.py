"""The worked predictor example of the hook reference: docs/hooks.md prints
graphsval_core/examples/naive_roofline.py as it is, the example honours the
contract (the conformance class), and validating with it reports its own
constants, never the reference model's calibrated ones."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

from graphsval_core.cli.docgen import hooks_markdown
from graphsval_core.examples import naive_roofline
from graphsval_core.plugins.loader import build_registry
from graphsval_core.testing import PluginConformance

pytest_plugins = ["graphsval_core.testing"]

DOCS = Path(__file__).resolve().parents[2] / "docs"


class TestNaiveRooflineConformance(PluginConformance):
    plugin_module = "graphsval_core.examples.naive_roofline"


def test_the_hook_reference_prints_the_example_as_it_is():
    text = (DOCS / "hooks.md").read_text()
    assert inspect.getsource(naive_roofline).rstrip() in text
    assert text == hooks_markdown(), (
        "docs/hooks.md is stale: python -m graphsval_core.cli.docgen hooks > docs/hooks.md"
    )


def test_validate_reports_the_predictors_own_constants(graphsval_cli):
    key = "jetson_orin_nano_8gb"
    result = graphsval_cli(
        "validate", "--hw", key, "--predictor", "naive", "--format", "json",
        plugins=[naive_roofline],
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    drift = json.loads(result.stdout)["summary"]["drift"]
    registry = build_registry(extra_plugins=[("naive", naive_roofline)])
    target, sheet = registry.target(key), registry.datasheet_target(key)
    declared = {
        c.name: c.value
        for op in registry.ops().values()
        for c in naive_roofline.constants(registry, target, op, "fp16")
    }
    assert drift and {d["constant"] for d in drift} <= set(declared)
    for entry in drift:
        assert entry["model"] == declared[entry["constant"]]
    models = {d["constant"]: d["model"] for d in drift}
    assert models["peak fp16"] == sheet.peak_ops_per_s["fp16"]  # the datasheet's 16.7 TFLOP/s
    assert models["DRAM bandwidth"] == sheet.tiers[-1].peak_bandwidth_bps
    calibrated = target.peak_ops_per_s["fp16"] * target.compute_fraction["fp16"]
    assert calibrated not in models.values()  # never the reference model's constant
