"""The command line on the fuzz corpus and on hostile flag values, in
process (click's CliRunner, one registry shared by every case, a fixed seed;
tests/fuzz/conftest.py draws the cases): the exit code is 0, 1 or 2, never a
traceback; a file mutated into an invalid one exits 2 in one line naming it;
no input file is modified, nor any file the project ships.

The consistency checks, which depend on no input, are left out of
``validate`` here (they take most of its time; ``graphsval check`` and the
installed-CLI battery, test_fuzz_installed.py, run them)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from graphsval_core.cli.main import cli

REPO = Path(__file__).resolve().parents[2]
#: The files the project ships that no command of this suite may modify.
SHIPPED = [
    *sorted((REPO / "graphsval_core" / "sweeps").glob("*.json")),
    REPO / "graphsval_core" / "files" / "tolerances.json",
    *sorted((REPO / "plugins").glob("*/graphsval_*/floors.json")),
    *sorted((REPO / "plugins").glob("*/graphsval_*/consistency_snapshot.json")),
    *sorted((REPO / "plugins").glob("*/graphsval_*/calibration/*.json")),
    *sorted((REPO / "plugins").glob("*/graphsval_*/targets/*.json")),
]


def _digest(paths: list[Path]) -> dict[str, str]:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in paths if p.is_file()}


@pytest.fixture(scope="module", autouse=True)
def shared() -> Iterator[Any]:
    """One registry for every case (built once), the consistency checks left
    out of validate, and the shipped files checked untouched at the end."""
    from graphsval_core.plugins import loader
    from graphsval_core.validate import workflow

    before = _digest(SHIPPED)
    registry = loader.build_registry()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(loader, "build_registry", lambda **kwargs: registry)
        patch.setattr(workflow, "run_consistency", lambda registry, targets=None: [])
        yield registry
    assert _digest(SHIPPED) == before, "a command modified a file the project ships"


def test_every_command_line_keeps_its_promise(command, valid_inputs, tmp_path, monkeypatch):
    inputs = tmp_path / "in"
    out = tmp_path / "out"
    out.mkdir()
    monkeypatch.chdir(out)  # what a command writes to a relative path lands here
    names = {k: str(v) for k, v in valid_inputs.items()}
    if command.case is not None:
        names["FILE"] = str(inputs / f"case.{command.case.fmt}")
        Path(names["FILE"]).write_bytes(command.case.data)
    names["OUT"] = str(out)
    argv = [
        names.get(a, a.replace("OUT/", f"{out}/", 1) if a.startswith("OUT/") else a)
        for a in command.argv
    ]
    before = _digest(sorted(inputs.iterdir()))
    result = CliRunner().invoke(cli, argv)
    shown = f"{command.id}\n{result.output[-2000:]}"
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"{shown}\n{type(result.exception).__name__}: {result.exception}"
    )
    assert result.exit_code in (0, 1, 2), shown
    assert "Traceback" not in result.output, shown
    if command.expect == "bad":
        assert result.exit_code == 2, shown
        errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
        assert len(errors) == 1, shown
        if command.case is not None:
            assert names["FILE"] in errors[0], shown
    elif command.expect == "ok":
        assert result.exit_code in (0, 1), shown
    assert _digest(sorted(inputs.iterdir())) == before, f"{shown}\nan input file was modified"
