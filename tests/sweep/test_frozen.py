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
    # no file holds nothing frozen; one that cannot be read would be replaced
    assert redraw_changes(tmp_path / "nowhere", new) == []
    (tmp_path / "vector_add_validation.json").write_text("{not json")
    (change,) = redraw_changes(tmp_path, same)
    assert change.startswith("vector_add_validation.json cannot be read (not valid JSON")


def test_generate_keeps_frozen_sweeps_it_would_redraw(tmp_path):
    first = _generate("--out-dir", str(tmp_path))
    assert first.exit_code == 0, first.output
    path = tmp_path / "vector_add_validation.json"
    drawn = path.read_text()
    # the same draw again writes nothing: each file holds those bytes already
    inode = path.stat().st_ino
    again = _generate("--out-dir", str(tmp_path))
    assert again.exit_code == 0, again.output
    assert path.read_text() == drawn and path.stat().st_ino == inode  # not replaced
    assert f"unchanged {path}: 240 shapes" in again.output and "wrote" not in again.output
    # a file of the same shapes with other bytes (labels moved, or reformatted) is written
    path.write_text(json.dumps(json.loads(drawn)))
    relabelled = _generate("--out-dir", str(tmp_path))
    assert relabelled.exit_code == 0 and f"wrote {path}: 240 shapes" in relabelled.output
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


def test_a_broken_or_foreign_frozen_sweep_is_kept_unless_redrawn(tmp_path):
    assert _generate("--out-dir", str(tmp_path)).exit_code == 0
    path = tmp_path / "vector_add_validation.json"
    for content, said in (
        ("{not json", "vector_add_validation.json cannot be read (not valid JSON"),
        (
            '{"op": "matmul", "purpose": "validation", "shapes": []}',
            "vector_add_validation.json holds a validation sweep of matmul, not this one",
        ),
    ):
        path.write_text(content)
        refused = _generate("--out-dir", str(tmp_path))
        assert refused.exit_code == 2 and said in refused.output, refused.output
        assert path.read_text() == content
    assert _generate("--out-dir", str(tmp_path), "--redraw").exit_code == 0
    assert json.loads(path.read_text())["op"] == "vector_add"


def test_no_file_is_written_when_one_place_is_not_a_file(tmp_path):
    assert _generate("--out-dir", str(tmp_path)).exit_code == 0
    calibration = tmp_path / "vector_add_calibration.json"
    calibration.write_text(calibration.read_text().replace('"seed"', '"comment": "kept", "seed"'))
    kept = calibration.read_text()
    validation = tmp_path / "vector_add_validation.json"
    validation.unlink()
    validation.mkdir()
    refused = _generate("--out-dir", str(tmp_path), "--redraw")
    assert refused.exit_code == 2
    said = " ".join(refused.output.split())
    assert "vector_add_validation.json is a folder, where the command writes its file" in said
    assert calibration.read_text() == kept  # refused before anything was written


def test_sweep_show_refuses_a_fifo_and_an_unknown_target(tmp_path):
    import os

    assert _generate("--out-dir", str(tmp_path)).exit_code == 0
    runner = CliRunner()
    unknown = runner.invoke(cli, ["sweep", "show", "--sweeps-dir", str(tmp_path), "--hw", "nosuch"])
    assert unknown.exit_code == 2 and "unknown target 'nosuch'" in unknown.output
    unlabelled = runner.invoke(
        cli, ["sweep", "show", "--sweeps-dir", str(tmp_path), "--hw", "host_cpu"]
    )
    assert unlabelled.exit_code == 0
    assert "--hw host_cpu: no sweep labels it" in unlabelled.output
    os.mkfifo(tmp_path / "zz.json")  # never opened: nothing writes to it
    for args in (["show"], ["label", "--update"]):
        fifo = runner.invoke(cli, ["sweep", *args, "--sweeps-dir", str(tmp_path)])
        assert fifo.exit_code == 2
        assert "zz.json: is a FIFO (named pipe), not a sweep file" in fifo.output


def test_label_update_rewrites_only_the_sweeps_whose_labels_moved(tmp_path):
    import os

    assert _generate("--out-dir", str(tmp_path)).exit_code == 0
    for path in tmp_path.iterdir():
        os.utime(path, (1_000_000, 1_000_000))
    stale = tmp_path / "vector_add_validation.json"
    data = json.loads(stale.read_text())
    entry = data["shapes"][0]
    entry["regime_per_hw"]["i7_12700k"] = (
        "dram_bound" if entry["regime_per_hw"]["i7_12700k"] != "dram_bound" else "launch_bound"
    )
    stale.write_text(json.dumps(data))
    os.utime(stale, (1_000_000, 1_000_000))
    run = CliRunner().invoke(cli, ["sweep", "label", "--update", "--sweeps-dir", str(tmp_path)])
    assert run.exit_code == 0, run.output
    assert "1 label(s) moved" in run.output
    assert os.stat(stale).st_mtime != 1_000_000
    assert os.stat(tmp_path / "vector_add_calibration.json").st_mtime == 1_000_000


def _labelled(purpose: str, shapes: list[int], dtype: str = "fp32", label: str = "alu_bound"):
    entries = tuple(SweepEntry((n,), dtype, {"i7_12700k": label}, {}, "vector_add") for n in shapes)
    return Sweep(f"vector_add_{purpose}.json", "vector_add", purpose, entries, {"seed": 1})


def test_a_change_is_a_shape_or_a_dtype_never_a_label(tmp_path):
    write_sweep(_labelled("validation", [48, 64]), tmp_path / "vector_add_validation.json")
    name = "vector_add_validation.json"
    relabelled = {name: _labelled("validation", [48, 64], label="dram_bound")}
    assert redraw_changes(tmp_path, relabelled) == []
    other_dtype = {name: _labelled("validation", [48, 64], dtype="bf16")}
    assert redraw_changes(tmp_path, other_dtype) == [f"{name}: 2 of its 2 shapes dropped, 2 added"]
    dropped = {name: _labelled("validation", [48])}
    assert redraw_changes(tmp_path, dropped) == [f"{name}: 1 of its 2 shapes dropped, 0 added"]


def test_a_leak_is_judged_against_the_frozen_validation_set(tmp_path):
    """Even with no frozen calibration file, and whatever the new validation set holds."""
    write_sweep(_labelled("validation", [48, 64]), tmp_path / "vector_add_validation.json")
    new = {
        "vector_add_calibration.json": _labelled("calibration", [16, 64]),
        "vector_add_validation.json": _labelled("validation", [48, 64]),
    }
    assert redraw_changes(tmp_path, new) == [
        "vector_add_calibration.json would hold 1 shape(s) of the frozen validation set"
    ]
    new["vector_add_validation.json"] = _labelled("validation", [16, 32])  # a redraw of both
    changes = redraw_changes(tmp_path, new)
    assert "vector_add_calibration.json would hold 1 shape(s) of the frozen validation set" in (
        changes
    )
