"""The workspace plugin in the registry: its targets, baselines and
calibrations are found as a plugin's; a workspace target replaces an installed
one of the same key, in one note; a bad file is one problem naming it."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphsval_core import hookimpl
from graphsval_core.files.target_spec import spec_from_json
from graphsval_core.plugins.loader import PluginLoadError, build_registry
from graphsval_core.workspace.location import baseline_path, calibration_path, target_path

from .conftest import CPU, KEY, SHIPPED, shipped_spec, write_json


def test_workspace_targets_are_registered_by_the_workspace_plugin(workspace):
    registry = build_registry(workspace=workspace)
    assert registry.target(KEY).name == "Acme host, 1 thread"
    info = registry.target_plugin(KEY)
    assert info.name == "workspace" and info.builtin and info.loaded
    assert info.targets == [KEY]
    assert registry.problems == [] and registry.notes == []


def test_workspace_baselines_include_the_recapture_folder(workspace):
    registry = build_registry(workspace=workspace)
    mine = sorted(Path(item) for plugin, item in registry.baseline_files() if plugin == "workspace")
    assert mine == sorted(
        [
            baseline_path(workspace, KEY, "matmul", "calibration"),
            baseline_path(workspace, KEY, "matmul", "validation"),
            baseline_path(workspace, KEY, "matmul", "validation", recapture=True),
        ]
    )


def test_no_workspace_by_default_and_a_missing_one_changes_nothing(tmp_path):
    plain = build_registry()
    missing = build_registry(workspace=tmp_path / "nowhere")
    assert missing.targets().keys() == plain.targets().keys()
    assert "workspace" not in plain.infos
    assert missing.problems == plain.problems and missing.notes == []
    assert not (tmp_path / "nowhere").exists()


def test_the_workspace_plugin_can_be_blocked(workspace):
    registry = build_registry(workspace=workspace, plugin_args=["no:workspace"])
    assert KEY not in registry.targets() and "workspace" not in registry.infos


@pytest.fixture
def override(tmp_path: Path) -> Path:
    """A workspace holding a changed copy of the cpu plugin's shipped snapshot target."""
    spec = shipped_spec()
    spec["name"] = "My Xeon"
    spec["launch_overhead_s"] = 9e-6
    write_json(target_path(tmp_path / "ws", SHIPPED), spec)
    return tmp_path / "ws"


def test_a_workspace_target_replaces_an_installed_one_in_one_note(override):
    registry = build_registry(workspace=override)
    assert registry.target(SHIPPED).name == "My Xeon"
    assert registry.target_plugin(SHIPPED).name == "workspace"
    assert SHIPPED not in registry.infos["cpu"].targets
    assert registry.notes == [
        f"target {SHIPPED} from the workspace ({override}) replaces the one of plugin 'cpu' "
        "(its calibration and known findings no longer apply; a calibration in the "
        "workspace's calibration/ does)"
    ]
    assert registry.replaced == {SHIPPED: ["cpu"]}
    # the cpu plugin's calibration of the key is skipped silently; the spec is the workspace's
    assert registry.problems == []
    assert SHIPPED not in registry.calibration_files
    assert registry.target(SHIPPED).launch_overhead_s == pytest.approx(9e-6)
    assert registry.expected_failures(registry.target(SHIPPED)) == {}


def test_the_workspace_calibration_of_an_overriding_target_applies(override, tmp_path):
    calibration = (CPU / "calibration" / f"{SHIPPED}.calibration.json").read_text()
    calibration_path(override, SHIPPED).parent.mkdir(parents=True)
    calibration_path(override, SHIPPED).write_text(calibration)
    registry = build_registry(workspace=override)
    assert registry.problems == []
    assert registry.calibration_files[SHIPPED] == str(calibration_path(override, SHIPPED))
    assert registry.datasheet_target(SHIPPED).name == "My Xeon"


def test_the_replaced_plugins_findings_are_not_asked(override, make_plugin):
    @hookimpl
    def graphsval_expected_failures(target):
        return {"snapshot": "a finding about the plugin's own spec"}

    acme = make_plugin(
        "acme",
        lambda: [spec_from_json(shipped_spec())],
        graphsval_expected_failures=graphsval_expected_failures,
    )
    registry = build_registry(workspace=override, extra_plugins=[("acme", acme)])
    assert registry.target_plugin(SHIPPED).name == "workspace"
    assert sorted(registry.replaced[SHIPPED]) == ["acme", "cpu"]
    assert len(registry.notes) == 2
    assert registry.expected_failures(registry.target(SHIPPED)) == {}
    assert registry.problems == []


def test_a_malformed_target_file_is_one_problem_naming_it(workspace):
    bad = target_path(workspace, "broken")
    bad.write_text("{not json")
    registry = build_registry(workspace=workspace)
    assert KEY in registry.targets()  # the other files keep working
    (problem,) = registry.problems
    assert problem.plugin == "workspace"
    assert str(bad) in str(problem) and "not valid JSON" in str(problem)
    assert "\n" not in str(problem)
    with pytest.raises(PluginLoadError, match="broken.target.json"):
        build_registry(workspace=workspace, strict=True)


def test_an_invalid_spec_and_a_key_not_its_file_s_name_are_problems(workspace):
    spec = shipped_spec()
    spec["key"] = "negative"
    spec["tiers"][0]["peak_bandwidth_bps"] = -1.0
    write_json(target_path(workspace, "negative"), spec)
    duplicate = shipped_spec()
    duplicate["key"] = KEY
    write_json(workspace / "targets" / "zz_copy.target.json", duplicate)
    registry = build_registry(workspace=workspace)
    messages = [str(p) for p in registry.problems]
    assert len(messages) == 2, messages
    assert "negative.target.json" in messages[0]
    assert "zz_copy.target.json" in messages[1]
    assert f"holds target {KEY!r}, but its name says 'zz_copy'" in messages[1]
    assert messages[1].endswith(
        "set its key to 'zz_copy'; this file is ignored"
    )  # no rename onto a file
    assert registry.target(KEY).name == "Acme host, 1 thread"


def test_a_malformed_baseline_is_an_error_where_it_is_read(workspace, run):
    """The user's own capture is read as strictly as a file named: listed as
    it is, and validate and registry lookup stop on it with one line (exit 2;
    it was a warning, and validate's verdict left the file out)."""
    bad = baseline_path(workspace, KEY, "linear", "validation")
    bad.write_text("hardware,op\nx\n")
    registry = build_registry(workspace=workspace)
    files = [str(item) for _, item in registry.baseline_files()]
    assert str(bad) in files and not registry.problems
    assert str(baseline_path(workspace, KEY, "matmul", "validation")) in files
    lookup = ("registry", "lookup", "--hw", KEY, "--op", "matmul", "--dtype", "fp32")
    for args in (("validate", "-q"), (*lookup, "--shape", "1x1x1")):
        result = run(workspace, *args)
        assert result.exit_code == 2, result.output
        (line,) = [x for x in result.output.splitlines() if x.strip()]
        assert line.startswith(f"Error: {bad}") and "Traceback" not in result.output


def test_a_calibration_of_an_installed_target_is_not_the_workspaces(workspace):
    path = calibration_path(workspace, "i7_12700k")
    path.parent.mkdir(parents=True)
    path.write_text((CPU / "calibration" / "i7_12700k.calibration.json").read_text())
    registry = build_registry(workspace=workspace)
    (problem,) = registry.problems
    assert str(path) in str(problem) and "a target of plugin 'cpu'" in str(problem)
    # the line says how to make it apply
    assert "targets/i7_12700k.target.json" in str(problem)
    assert registry.calibration_files["i7_12700k"] != str(path)


def test_a_plugin_targets_calibration_applies_once_its_target_file_is_the_workspaces(
    workspace,
):
    # what the refusal above tells the user to do: the target file in the workspace
    key = "host_amd_epyc_2c_1t"
    path = calibration_path(workspace, key)
    path.parent.mkdir(parents=True)
    path.write_text((CPU / "calibration" / f"{key}.calibration.json").read_text())
    assert build_registry(workspace=workspace).problems
    target = target_path(workspace, key)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text((CPU / "targets" / f"{key}.target.json").read_text())
    registry = build_registry(workspace=workspace)
    assert not registry.problems
    assert registry.calibration_files[key] == str(path)
