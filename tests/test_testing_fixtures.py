"""The fixtures of graphsval_core.testing, as a plugin author uses them."""

from __future__ import annotations

import json

pytest_plugins = ["graphsval_core.testing"]


def test_registry_fixture_is_fresh_and_holds_the_installed_plugins(graphsval_registry):
    assert "kpu_t64" in graphsval_registry.targets()
    assert not graphsval_registry.problems


def test_register_a_plugin_in_process(graphsval_register_plugin, make_plugin, make_target):
    plugin = make_plugin("toy", lambda: [make_target("toy_one")])
    registry = graphsval_register_plugin(plugin)
    assert list(registry.targets()) == ["toy_one"]
    assert registry.target_plugin("toy_one").name == "toy"


def test_cli_fixture_runs_the_command_with_in_process_plugins(
    graphsval_cli, make_plugin, make_target
):
    plugin = make_plugin("toy", lambda: [make_target("toy_two")])
    result = graphsval_cli("targets", "--json", plugins=[plugin])
    assert result.exit_code == 0, result.output
    keys = {t["key"] for t in json.loads(result.output)["targets"]}
    assert {"toy_two", "kpu_t64"} <= keys
    result = graphsval_cli("targets", "--hw", "no_such_target")
    assert result.exit_code == 2 and "unknown target" in result.output
