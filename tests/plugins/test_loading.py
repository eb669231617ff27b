"""Plugin loading: isolation of broken plugins, strict mode, blocking, API versions."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from graphsval_core import PLUGIN_API_VERSION
from graphsval_core.cli.main import cli
from graphsval_core.datamodel.provenance import datasheet
from graphsval_core.plugins.loader import PluginLoadError, build_registry
from graphsval_core.plugins.registry import UnknownNameError
from graphsval_core.testing import target_field


def _boom():
    raise ImportError("No module named 'missing_sdk'")


@pytest.fixture
def broken_world(fake_entry_points, make_entry_point, make_plugin, make_target, make_tier):
    """A good plugin, one that raises on import, one with an invalid tier, and
    two that register the same key."""

    def invalid_tier():
        return [
            make_target("bad_one", tiers=[make_tier("l1", peak_bandwidth_bps=datasheet(-5, "x"))])
        ]

    good = make_plugin("good", lambda: [make_target("good_one")])
    invalid = make_plugin("invalid", invalid_tier)
    dup_a = make_plugin("dup_a", lambda: [make_target("same_key"), make_target("only_a")])
    dup_b = make_plugin("dup_b", lambda: [make_target("same_key")])
    fake_entry_points(
        make_entry_point("good", lambda: good, "good-dist"),
        make_entry_point("explodes", _boom, "explodes-dist", "0.9"),
        make_entry_point("invalid", lambda: invalid, "invalid-dist"),
        make_entry_point("dup_a", lambda: dup_a, "dup-a-dist"),
        make_entry_point("dup_b", lambda: dup_b, "dup-b-dist"),
    )


def test_host_survives_broken_plugins(broken_world):
    registry = build_registry(strict=False)
    assert set(registry.targets()) == {"good_one", "only_a"}
    messages = [str(p) for p in registry.problems]
    assert any(
        "'explodes' (explodes-dist 0.9): failed to import: ImportError" in m for m in messages
    )
    invalid = [m for m in messages if "'invalid'" in m]
    assert invalid and "peak_bandwidth_bps" in invalid[0] and "invalid-dist" in invalid[0]
    dup = [m for m in messages if "same_key" in m]
    assert len(dup) == 2 and all("'dup_a' and 'dup_b'" in m for m in dup)
    infos = {i.name: i for i in registry.plugins}
    assert not infos["explodes"].loaded and not infos["invalid"].loaded
    assert infos["dup_a"].loaded and infos["dup_a"].targets == ["only_a"]


def test_strict_mode_fails_clearly(broken_world):
    with pytest.raises(PluginLoadError) as err:
        build_registry(strict=True)
    assert "explodes" in str(err.value) and "more problem" in str(err.value)


def test_strict_mode_from_environment(broken_world, monkeypatch):
    monkeypatch.setenv("GRAPHSVAL_STRICT_PLUGINS", "1")
    with pytest.raises(PluginLoadError):
        build_registry()


def test_every_command_ends_with_the_plugin_problems_on_stderr(broken_world):
    result = CliRunner().invoke(cli, ["targets"])
    assert result.exit_code == 0
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning: ")]
    assert any("'explodes' (explodes-dist 0.9): failed to import" in w for w in warnings)
    assert any("peak_bandwidth_bps" in w for w in warnings)
    assert "good_one" in result.stdout and "warning" not in result.stdout
    listing = CliRunner().invoke(cli, ["plugins"])  # lists them itself, once
    assert "warning: " not in listing.stderr


def test_plugins_command_shows_each_problem(broken_world):
    result = CliRunner().invoke(cli, ["plugins"])
    assert result.exit_code == 0, result.output
    assert "FAILED" in result.output
    assert "failed to import: ImportError" in result.output
    assert "peak_bandwidth_bps" in result.output
    assert "registered by 'dup_a' and 'dup_b'" in result.output


def test_plugins_json_lists_errors(broken_world):
    import json

    result = CliRunner().invoke(cli, ["plugins", "--json"])
    data = json.loads(result.output)
    by_name = {p["name"]: p for p in data["plugins"]}
    assert by_name["explodes"]["errors"] and not by_name["explodes"]["loaded"]
    assert by_name["good"]["targets"] == ["good_one"]
    assert len(data["problems"]) == 4


def test_strict_cli_exits_2_with_one_line(broken_world):
    result = CliRunner().invoke(cli, ["--strict-plugins", "targets"])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: strict plugin loading:")


def test_block_plugin_with_p_no(broken_world):
    registry = build_registry(strict=True, plugin_args=["no:explodes", "no:invalid", "no:dup_b"])
    assert set(registry.targets()) == {"good_one", "same_key", "only_a"}


def test_autoload_off_loads_only_requested(broken_world, monkeypatch):
    monkeypatch.setenv("GRAPHSVAL_DISABLE_PLUGIN_AUTOLOAD", "1")
    registry = build_registry(plugin_args=["good"])
    assert set(registry.targets()) == {"good_one"}
    assert registry.problems == []
    # built-ins still register through the same hooks
    assert set(registry.ops()) == {"matmul", "linear", "linear_nobias", "vector_add"}


def test_builtin_can_be_blocked(fake_entry_points):
    fake_entry_points()
    registry = build_registry(plugin_args=["no:builtin_ops"])
    assert registry.ops() == {}


def test_other_major_api_version_is_refused(
    fake_entry_points, make_entry_point, make_plugin, make_target
):
    old = make_plugin("old", lambda: [make_target("old_one")])
    old.graphsval_api_version = "0.3"
    fake_entry_points(make_entry_point("old", lambda: old, "old-dist", "0.0.1"))
    registry = build_registry()
    assert "old_one" not in registry.targets()
    (problem,) = registry.problems
    assert "built for plugin API 0.3" in str(problem)
    assert f"implements plugin API {PLUGIN_API_VERSION}" in str(problem)


def test_missing_api_version_is_refused(fake_entry_points, make_entry_point, make_plugin):
    anon = make_plugin("anon")
    del anon.graphsval_api_version
    fake_entry_points(make_entry_point("anon", lambda: anon, "anon-dist"))
    (problem,) = build_registry().problems
    assert "declares no graphsval_api_version" in str(problem)


def test_unknown_hook_is_reported(fake_entry_points, make_entry_point, make_plugin):
    typo = make_plugin("typo", graphsval_register_targetz=lambda: [])
    fake_entry_points(make_entry_point("typo", lambda: typo, "typo-dist"))
    (problem,) = build_registry().problems
    assert "unknown hook(s): graphsval_register_targetz" in str(problem)


def test_wrong_record_type_rejects_plugin(fake_entry_points, make_entry_point, make_plugin):
    wrong = make_plugin("wrong", lambda: [{"key": "dict_target"}])
    fake_entry_points(make_entry_point("wrong", lambda: wrong, "wrong-dist"))
    registry = build_registry()
    assert registry.targets() == {}
    assert "returned dict, expected TargetSpec" in str(registry.problems[0])


@pytest.fixture
def flaky_world(fake_entry_points, make_entry_point, make_plugin, make_target):
    """A plugin whose memory-hierarchy hook raises for every target."""

    def bad_hierarchy(target):
        raise RuntimeError("tier table corrupt")

    flaky = make_plugin(
        "flaky", lambda: [make_target("flaky_one")], graphsval_memory_hierarchy=bad_hierarchy
    )
    fake_entry_points(make_entry_point("flaky", lambda: flaky, "flaky-dist", "2.0"))


def test_a_raising_hook_gives_no_answer_and_is_recorded(flaky_world):
    registry = build_registry()
    target = registry.target("flaky_one")
    assert registry.memory_hierarchy(target) == target.tiers  # the built-in default answers
    (problem,) = registry.problems
    assert str(problem) == (
        "plugin 'flaky' (flaky-dist 2.0): hook graphsval_memory_hierarchy raised "
        "RuntimeError: tier table corrupt"
    )


def test_the_command_goes_on_and_warns_at_the_end(flaky_world):
    result = CliRunner().invoke(cli, ["targets"])
    assert result.exit_code == 0, result.output
    assert "flaky_one" in result.stdout and "warning" not in result.stdout
    assert result.stderr.splitlines() == [
        "warning: plugin 'flaky' (flaky-dist 2.0): hook graphsval_memory_hierarchy raised "
        "RuntimeError: tier table corrupt"
    ]
    assert "Traceback" not in result.output


def test_strict_mode_exits_2_in_one_line_at_run_time(flaky_world):
    result = CliRunner().invoke(cli, ["--strict-plugins", "targets"])
    assert result.exit_code == 2
    assert result.output.splitlines() == [
        "Error: plugin 'flaky' (flaky-dist 2.0) failed in hook graphsval_memory_hierarchy: "
        "RuntimeError: tier table corrupt"
    ]


def test_plugins_command_shows_status_problem_for_a_loaded_plugin_with_errors(broken_world):
    result = CliRunner().invoke(cli, ["plugins"])
    assert result.exit_code == 0, result.output
    listing = result.stdout.split("\n\n")[0]
    names = [r.split()[0] for r in listing.splitlines()[2:] if not r.startswith(" ")]
    status = {name: target_field(listing, name)[0][1] for name in names}
    assert status["dup_a"] == status["dup_b"] == "problem"  # loaded, but lost a key
    assert status["explodes"] == status["invalid"] == "FAILED"
    assert status["good"] == status["builtin_ops"] == "ok"


def test_memory_hierarchy_override_wins_over_builtin(
    fake_entry_points, make_entry_point, make_plugin, make_target
):
    spec = make_target("custom")

    def only_dram(target):
        return [target.tiers[-1]] if target.key == "custom" else None

    custom = make_plugin("custom", lambda: [spec], graphsval_memory_hierarchy=only_dram)
    fake_entry_points(make_entry_point("custom", lambda: custom, "custom-dist"))
    registry = build_registry()
    assert [t.name for t in registry.memory_hierarchy(spec)] == ["dram"]


def test_unknown_target_suggests_close_keys_and_the_first_party_plugins_not_loaded(
    fake_entry_points, make_entry_point, make_plugin, make_target
):
    """No key prefix is mapped to a distribution; the message lists the
    first-party distributions that are not loaded, one of which may provide it."""
    plugin = make_plugin("p", lambda: [make_target("toy_target")])
    cpu = make_plugin("cpu", lambda: [make_target("cpu_one")])
    fake_entry_points(
        make_entry_point("p", lambda: plugin, "p-dist"),
        make_entry_point("cpu", lambda: cpu, "graphsval-cpu"),
    )
    registry = build_registry()
    with pytest.raises(UnknownNameError, match="did you mean toy_target"):
        registry.target("toy_targt")
    with pytest.raises(UnknownNameError) as err:
        registry.target("jetson_orin_nano_8gb")
    assert str(err.value) == (
        "unknown target 'jetson_orin_nano_8gb'; known: cpu_one, toy_target (first-party "
        "plugins not loaded: graphsval-cuda, graphsval-jetson, graphsval-kpu, graphsval-tpu)"
    )


def test_a_block_of_no_such_plugin_is_said_not_silent(fake_entry_points):
    """``-p no:typo`` blocked nothing in silence (from the newcomer): a
    misspelt block of a plugin that then loads is a warning naming it."""
    from graphsval_core.datamodel.errors import InputWarning

    fake_entry_points()
    with pytest.warns(InputWarning) as said:
        registry = build_registry(strict=True, plugin_args=["no:builtin_opz"])
    (line,) = [str(w.message) for w in said]
    assert line.startswith("-p no:builtin_opz blocks nothing: no plugin has that name")
    assert "builtin_ops" in line
    assert registry.problems == []  # the user's flag, not a plugin's: strict loading stands
    assert set(registry.ops()) == {"matmul", "linear", "linear_nobias", "vector_add"}
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert build_registry(plugin_args=["no:builtin_ops"]).problems == []
        build_registry(plugin_args=["some.module", "no:some.module"])  # a module it names


@pytest.mark.parametrize("value", ["", "no:", " "])
def test_a_p_value_naming_no_plugin_is_a_usage_error(value):
    result = CliRunner().invoke(cli, ["-p", value, "targets"])
    assert result.exit_code == 2
    (line,) = [x for x in result.output.splitlines() if x.strip()]
    assert line.startswith(f"Error: Invalid value for '-p': {value!r} names no plugin")


@pytest.mark.parametrize(
    ("value", "says"),
    [
        (
            "NO:cpu",
            "'NO:cpu': a plugin is blocked as no:NAME exactly (lower case, no blanks): "
            "give -p no:cpu",
        ),
        (
            "No:cpu",
            "'No:cpu': a plugin is blocked as no:NAME exactly (lower case, no blanks): "
            "give -p no:cpu",
        ),
        ("no: cpu", "'no: cpu': a plugin's name holds no blanks around it: give -p no:cpu"),
        (" cpu", "' cpu': a plugin's name holds no blanks around it: give -p cpu"),
        ("cpu", "-p cpu and -p no:cpu both given: load it or block it"),
    ],
)
def test_a_p_value_spelt_almost_right_is_a_usage_error_saying_how(value, says):
    """``-p NO:cpu`` tried to import a module ``NO:cpu`` and ``-p 'no: cpu'``
    blocked a plugin named `` cpu``: each a warning, the plugin still loaded
    (from the newcomer)."""
    result = CliRunner().invoke(cli, ["-p", "no:cpu", "-p", value, "targets"])
    assert result.exit_code == 2
    (line,) = [x for x in result.output.splitlines() if x.strip()]
    assert line.startswith(f"Error: Invalid value for '-p': {says}")


@pytest.mark.parametrize("value", ["off", "OFF", " no ", "0", ""])
def test_an_off_spelling_of_an_environment_flag_is_off(value, monkeypatch, fake_entry_points):
    """``GRAPHSVAL_DISABLE_PLUGIN_AUTOLOAD=off`` had turned autoload off, then
    said no plugin was installed (from the newcomer)."""
    fake_entry_points()
    monkeypatch.setenv("GRAPHSVAL_STRICT_PLUGINS", value)
    monkeypatch.setenv("GRAPHSVAL_DISABLE_PLUGIN_AUTOLOAD", value)
    registry = build_registry()
    assert registry.problems == [] and set(registry.ops()) == {
        "matmul",
        "linear",
        "linear_nobias",
        "vector_add",
    }


def test_an_environment_flag_of_no_known_spelling_is_one_line(monkeypatch):
    monkeypatch.setenv("GRAPHSVAL_STRICT_PLUGINS", "maybe")
    result = CliRunner().invoke(cli, ["targets"])
    assert result.exit_code == 2, result.output
    (line,) = [x for x in result.output.splitlines() if x.strip()]
    assert line.startswith("Error: GRAPHSVAL_STRICT_PLUGINS='maybe': expected one of 1, true")


def test_a_p_value_naming_no_plugin_nor_module_is_an_error_naming_the_plugins():
    """With autoload off, ``-p CPU`` was a warning ("failed to import") and
    ``validate --check-floors`` then checked nothing and exited 0 (from the
    newcomer): a name no installed plugin and no module has is the user's
    typo, one line naming the plugins (and the one it differs from in case)."""
    from graphsval_core.datamodel.errors import UserInputError
    from graphsval_core.plugins.loader import build_registry

    with pytest.raises(UserInputError, match=r"-p CPU: no installed plugin and no module") as e:
        build_registry(plugin_args=["CPU"], autoload=False)
    assert "(did you mean 'cpu'?)" in str(e.value) and "builtin_ops" in str(e.value)
    with pytest.raises(UserInputError, match=r"-p no_such\.module: no installed plugin"):
        build_registry(plugin_args=["no_such.module"], autoload=False)
    result = CliRunner().invoke(cli, ["-p", "CPU", "validate", "--check-floors"])
    assert result.exit_code == 2, result.output
    assert "Error: -p CPU: no installed plugin and no module of that name" in result.output
