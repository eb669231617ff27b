"""A workspace to test with: a user's own snapshot target, its captures (a
calibration set, a validation set and its recapture) and the helpers that run
the command on it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from graphsval_core.cli.main import cli
from graphsval_core.workspace.location import baseline_path, target_path

CPU = Path(__file__).resolve().parents[2] / "plugins" / "graphsval_cpu" / "graphsval_cpu"
SHIPPED = "host_intel_xeon_2c_1t"
#: The workspace's own target: the shipped host snapshot under another key.
KEY = "host_acme_2c_1t"
#: Validation rows kept in the workspace's validation set and its recapture.
VALIDATION_ROWS = 24
#: Calibration rows kept (the fit stays quick).
CALIBRATION_ROWS = 10


def shipped_spec() -> dict[str, Any]:
    """The cpu plugin's shipped snapshot target, as JSON."""
    data: dict[str, Any] = json.loads((CPU / "targets" / f"{SHIPPED}.target.json").read_text())
    return data


def write_json(path: Path, data: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1))
    return path


def _copy_rows(source: Path, dest: Path, rows: int | None = None) -> None:
    lines = source.read_text().splitlines(keepends=True)
    kept = lines if rows is None else lines[: rows + 1]
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text("".join(kept).replace(SHIPPED, KEY))


def make_workspace(folder: Path) -> Path:
    """A workspace with target ``KEY``, its matmul calibration and validation
    captures and the validation recapture."""
    spec = shipped_spec()
    spec["key"] = KEY
    spec["name"] = "Acme host, 1 thread"
    # not a snapshot of this machine's host_cpu: `--hw host_cpu` keeps resolving
    # to the plugin's own snapshot wherever the tests run
    spec["fingerprint"].pop("snapshot_of", None)
    write_json(target_path(folder, KEY), spec)
    baselines = CPU / "baselines"
    _copy_rows(
        baselines / f"{SHIPPED}_matmul.calibration.csv",
        baseline_path(folder, KEY, "matmul", "calibration"),
        CALIBRATION_ROWS,
    )
    _copy_rows(
        baselines / f"{SHIPPED}_matmul.validation.csv",
        baseline_path(folder, KEY, "matmul", "validation"),
        VALIDATION_ROWS,
    )
    _copy_rows(
        baselines / "recapture" / f"{SHIPPED}_matmul.validation.csv",
        baseline_path(folder, KEY, "matmul", "validation", recapture=True),
        VALIDATION_ROWS,
    )
    return folder


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A filled workspace (see :func:`make_workspace`)."""
    return make_workspace(tmp_path / "ws")


def first_row(path: Path) -> list[str]:
    """The first data row of a baseline CSV, split on commas (its first four
    columns are plain: hardware, op, shape, dtype)."""
    return path.read_text().splitlines()[1].split(",")


def notes(result: Result) -> list[str]:
    return [line for line in result.output.splitlines() if line.startswith("note:")]


def warnings(result: Result) -> list[str]:
    return [line for line in result.output.splitlines() if line.startswith("warning:")]


@pytest.fixture
def run() -> Callable[..., Result]:
    """``run(ws, *args)``: ``graphsval --workspace WS ARGS...`` in-process
    (``ws`` None: no --workspace option)."""

    def invoke(ws: Path | None, *args: str) -> Result:
        head = ["--workspace", str(ws)] if ws is not None else []
        # the workspace listing wraps to the screen: these tests read it a line per entry
        env = {"COLUMNS": "1000"} if args[:1] == ("workspace",) else None
        return CliRunner(env=env).invoke(cli, [*head, *map(str, args)])

    return invoke
