"""`sweep generate` keeps the frozen sweeps: a redraw that would change a
folder's shapes, or move a frozen validation shape into calibration, is
refused unless --redraw says to replace them."""

from __future__ import annotations

import json

from click.testing import CliRunner

from graphsval_core.cli.main import cli
from graphsval_core.files.sweep import Sweep, SweepEntry, write_sweep
from graphsval_core.sweep.frozen import redraw_changes


def _sweep(purpose: str, shapes: list[int]) -> Sweep:
    entries = tuple(SweepEntry((n,), "fp32", {}, {}, "vector_add") for n in shapes)
    return Sweep(f"vector_add_{purpose}.json", "vector_add", purpose, entries, {"seed": 1})


def _generate(*args: str):
    return CliRunner().invoke(cli, ["sweep", "generate", "--op", "vector_add", *args])


def test_a_redraw_names_what_it_would_change(tmp_path):
    write_sweep(_sweep("calibration", [16, 32]), tmp_path / "vector_add_calibration.json")
    write_sweep(_sweep("validation", [48, 64]), tmp_path / "vector_add_validation.json")
    new = {
        "vector_add_calibration.json": _sweep("calibration", [16, 32, 64]),
        "vector_add_validation.json": _sweep("validation", [48, 64]),
    }
    assert redraw_changes(tmp_path, new) == [
        "vector_add_calibration.json: 0 of its 2 shapes dropped, 1 added",
        "vector_add_calibration.json would hold 1 shape(s) of the frozen validation set",
    ]
    # the same shapes again (labels may differ): nothing to keep
    same = {"vector_add_validation.json": _sweep("validation", [64, 48])}
    assert redraw_changes(tmp_path, same) == []
    # no file, or one that cannot be read, holds nothing frozen
    (tmp_path / "vector_add_validation.json").write_text("{not json")
    assert redraw_changes(tmp_path / "nowhere", new) == []
    assert redraw_changes(tmp_path, same) == []


def test_generate_keeps_frozen_sweeps_it_would_redraw(tmp_path):
    first = _generate("--out-dir", str(tmp_path))
    assert first.exit_code == 0, first.output
    path = tmp_path / "vector_add_validation.json"
    drawn = path.read_text()
    # the same draw again rewrites nothing it would change
    again = _generate("--out-dir", str(tmp_path))
    assert again.exit_code == 0, again.output
    assert path.read_text() == drawn
    # a frozen set the draw does not reproduce is kept, and said so in one line
    frozen = json.loads(drawn)
    frozen["shapes"] = frozen["shapes"][1:]
    path.write_text(json.dumps(frozen))
    refused = _generate("--out-dir", str(tmp_path))
    assert refused.exit_code == 2
    message = refused.output.strip()
    assert "\n" not in message and "Traceback" not in message
    assert "vector_add_validation.json: 0 of its 239 shapes dropped, 1 added" in message
    assert "--redraw" in message
    assert json.loads(path.read_text()) == frozen
    # --redraw replaces it
    replaced = _generate("--out-dir", str(tmp_path), "--redraw")
    assert replaced.exit_code == 0, replaced.output
    assert path.read_text() == drawn
