"""Where the workspace is: --workspace, then GRAPHSVAL_WORKSPACE, then the user
data directory (platformdirs, else XDG); its layout; nothing created on read."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from graphsval_core.workspace import location
from graphsval_core.workspace.location import (
    ENV_WORKSPACE,
    FROM_ENV,
    FROM_FLAG,
    FROM_USER_DATA,
    baseline_path,
    calibration_path,
    creating_parent,
    locate_workspace,
    target_path,
    workspace_dir,
)


def test_the_flag_comes_first(monkeypatch, tmp_path):
    monkeypatch.setenv(ENV_WORKSPACE, str(tmp_path / "env"))
    found = locate_workspace(str(tmp_path / "flag"))
    assert found.path == tmp_path / "flag" and found.source == FROM_FLAG
    assert workspace_dir(tmp_path / "flag") == tmp_path / "flag"


def test_then_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv(ENV_WORKSPACE, str(tmp_path / "env"))
    found = locate_workspace()
    assert found.path == tmp_path / "env" and found.source == FROM_ENV


def test_then_platformdirs_user_data_dir(monkeypatch, tmp_path):
    platformdirs = pytest.importorskip("platformdirs")
    monkeypatch.delenv(ENV_WORKSPACE, raising=False)
    monkeypatch.setattr(platformdirs, "user_data_dir", lambda app: str(tmp_path / "pd" / app))
    found = locate_workspace()
    assert found.path == tmp_path / "pd" / "graphsval" and found.source == FROM_USER_DATA


@pytest.mark.parametrize("xdg", [True, False])
def test_without_platformdirs_the_xdg_data_home(monkeypatch, tmp_path, xdg):
    monkeypatch.delenv(ENV_WORKSPACE, raising=False)
    monkeypatch.setitem(sys.modules, "platformdirs", None)  # import fails
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    if xdg:
        monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
        expected = tmp_path / "xdg" / "graphsval"
    else:
        monkeypatch.delenv("XDG_DATA_HOME", raising=False)
        expected = tmp_path / "home" / ".local" / "share" / "graphsval"
    assert workspace_dir() == expected
    assert locate_workspace().source == FROM_USER_DATA


def test_an_empty_flag_or_variable_counts_as_none(monkeypatch, tmp_path):
    monkeypatch.setenv(ENV_WORKSPACE, "  ")
    monkeypatch.setattr(location, "user_data_dir", lambda: tmp_path / "data")
    assert locate_workspace("").path == tmp_path / "data"


def test_the_layout_mirrors_a_plugin_package():
    ws = Path("/ws")
    assert target_path(ws, "k") == ws / "targets" / "k.target.json"
    assert baseline_path(ws, "k", "matmul", "calibration") == (
        ws / "baselines" / "k_matmul.calibration.csv"
    )
    assert baseline_path(ws, "k", "matmul", "validation", recapture=True) == (
        ws / "baselines" / "recapture" / "k_matmul.validation.csv"
    )
    assert calibration_path(ws, "k") == ws / "calibration" / "k.calibration.json"


def test_nothing_is_created_on_read(monkeypatch, tmp_path):
    monkeypatch.setenv(ENV_WORKSPACE, str(tmp_path / "ws"))
    locate_workspace()
    target_path(workspace_dir(), "k")
    assert not (tmp_path / "ws").exists()


def test_creating_parent_makes_the_folders_and_removes_them_when_the_write_fails(tmp_path):
    path = calibration_path(tmp_path / "ws", "k")
    with pytest.raises(RuntimeError), creating_parent(path):
        assert path.parent.is_dir()
        raise RuntimeError("the fit failed")
    assert not (tmp_path / "ws").exists()
    with creating_parent(path):
        path.write_text("{}")
    assert path.read_text() == "{}"
