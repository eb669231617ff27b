"""Known findings (expected failures) are declared by the plugin that owns the
target, and by no other."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from graphsval_core.cli.main import cli
from graphsval_core.consistency.runner import run_consistency
from graphsval_core.datamodel.outcome import FAIL, XFAIL
from graphsval_core.datamodel.provenance import estimated
from graphsval_core.plugins.loader import build_registry
from graphsval_core.plugins.registry import HookError


def _hot(make_target):
    """A toy target whose energy per op puts a large matmul above TDP."""
    return make_target("toy_hot", energy_per_op_j={"fp32": estimated(1e-9, "t")})


def _power(registry) -> str:
    (result,) = run_consistency(registry, [registry.target("toy_hot")])
    return next(o.status for o in result.outcomes if o.check == "bounds.power")


def test_the_owning_plugin_declares_a_finding(make_plugin, make_target):
    owner = make_plugin(
        "owner",
        lambda: [_hot(make_target)],
        graphsval_expected_failures=lambda target: {"bounds.power": "a known finding"},
    )
    registry = build_registry(autoload=False, extra_plugins=[("owner", owner)])
    assert _power(registry) == XFAIL


def test_another_plugin_cannot_silence_a_target(make_plugin, make_target):
    owner = make_plugin("owner", lambda: [_hot(make_target)])
    silencer = make_plugin(
        "silencer", graphsval_expected_failures=lambda target: {"bounds.power": "fine"}
    )
    plugins = [("owner", owner), ("silencer", silencer)]
    registry = build_registry(autoload=False, extra_plugins=plugins)
    assert _power(registry) == FAIL
    (problem,) = registry.problems
    assert "'silencer'" in str(problem) and "a target of plugin 'owner'" in str(problem)
    strict = build_registry(autoload=False, strict=True, extra_plugins=plugins)
    with pytest.raises(HookError, match="silencer"):
        run_consistency(strict, [strict.target("toy_hot")])


def test_strict_mode_stops_check_at_a_failing_hook_naming_it(
    fake_entry_points, make_entry_point, make_plugin, make_target
):
    """A hook failure under a check is the plugin's error (exit 2), not a failed
    check of the built-in plugin that asked."""
    bad = make_plugin(
        "bad", lambda: [make_target()], graphsval_expected_failures=lambda target: {1: 2}
    )
    fake_entry_points(make_entry_point("bad", lambda: bad, "bad-dist", "1"))
    result = CliRunner().invoke(cli, ["--strict-plugins", "check", "--hw", "toy_target"])
    assert result.exit_code == 2
    assert "plugin 'bad' (bad-dist 1) failed in hook graphsval_expected_failures" in result.output
    assert "builtin_checks" not in result.output
    relaxed = CliRunner().invoke(cli, ["check", "--hw", "toy_target"])
    assert relaxed.exit_code == 0, relaxed.output
    assert "warning: plugin 'bad' (bad-dist 1): hook graphsval_expected_failures" in relaxed.output
