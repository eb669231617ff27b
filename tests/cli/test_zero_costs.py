"""A cost that is zero reads as none (or is left out), never ``0 ps`` or
``+0 ps``: in `targets --hw`'s table and in `explain`'s prose."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from graphsval_core.cli.main import cli
from graphsval_core.datamodel.provenance import estimated


@pytest.fixture
def zero_costs(make_target, make_plugin, fake_entry_points, make_entry_point):
    spec = make_target(
        "toy",
        launch_overhead_s=estimated(0.0, "test"),
        dispatch_overhead_s={"fp32": estimated(0.0, "test")},
        accumulate_overhead_s={"fp32": estimated(0.0, "test")},
        product_overlap={"fp32": estimated(1.0, "test")},
    )
    plugin = make_plugin("toy", lambda: [spec])
    fake_entry_points(make_entry_point("toy", lambda: plugin, "graphsval-toy"))


def _lines(*args: str) -> list[str]:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    return result.output.splitlines()


def test_targets_lists_a_zero_overhead_as_none(zero_costs):
    lines = _lines("targets", "--hw", "toy")
    assert not [line for line in lines if " ps" in line or "+0" in line]
    value = {line.split("  ")[0]: line.split("  ", 1)[1].strip() for line in lines if "  " in line}
    assert value["launch overhead"] == "none"
    assert value["dispatch fp32"] == "none"
    assert value["dispatch fp32, accumulating"] == "nothing more"


def test_explain_leaves_a_zero_launch_out_and_says_none_is_unhidden(zero_costs):
    text = "\n".join(
        _lines(
            "explain", "--hw", "toy", "--op", "matmul", "--shape", "256x256x256", "--dtype", "fp32"
        )
    )
    assert " ps" not in text
    assert "launch" not in text.split("measured:")[0]
    assert "none of it adds to the latency" in text
    # an overlap of 1 (the roofline's) hides all of it, not "1 of" it (from the newcomer)
    assert "hides all of the shorter" in text and "hides 1 of" not in text
