"""Every command finds the workspace: targets, registry lookup, predict,
explain, validate (with no arguments too, recapture paired), calibrate (into
the workspace by default), and `graphsval workspace` shows it; an override is
one note; a bad file is one warning; an empty workspace changes nothing."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from graphsval_core.cli.main import cli
from graphsval_core.workspace.location import (
    ENV_WORKSPACE,
    baseline_path,
    calibration_path,
    target_path,
)

from .conftest import CPU, KEY, SHIPPED, first_row, notes, shipped_spec, warnings, write_json


def test_targets_lists_a_workspace_target(run, workspace):
    result = run(workspace, "targets", "--json")
    assert result.exit_code == 0, result.output
    mine = [t for t in json.loads(result.stdout)["targets"] if t["key"] == KEY]
    assert mine and mine[0]["plugin"] == "workspace"
    result = run(workspace, "targets", "--hw", KEY)
    assert result.exit_code == 0, result.output
    assert "Acme host, 1 thread" in result.output


def test_registry_lookup_predict_and_explain_find_it(run, workspace):
    _, op, shape, dtype = first_row(baseline_path(workspace, KEY, "matmul", "validation"))[:4]
    shape_args = ("--hw", KEY, "--op", op, "--shape", shape, "--dtype", dtype)
    looked = run(workspace, "registry", "lookup", *shape_args, "--json")
    assert looked.exit_code == 0, looked.output
    row = json.loads(looked.stdout)
    assert row["hardware"] == KEY and Path(row["file"]).is_relative_to(workspace)
    assert "recapture" not in Path(row["file"]).parts  # the capture, not its recapture
    predicted = run(workspace, "predict", *shape_args, "--format", "json")
    assert predicted.exit_code == 0, predicted.output
    explained = run(workspace, "explain", *shape_args)
    assert explained.exit_code == 0, explained.output
    assert KEY in explained.output


def test_validate_with_no_arguments_includes_the_workspace_and_pairs_its_recapture(run, workspace):
    result = run(workspace, "validate", "--format", "json")
    assert result.exit_code in (0, 1), result.output
    summary = json.loads(result.stdout)["summary"]
    paths = [b["path"] for b in summary["header"]["baselines"]]
    assert str(baseline_path(workspace, KEY, "matmul", "validation")) in paths
    (mine,) = [t for t in summary["targets"] if t["hardware"] == KEY]
    assert mine["records"] == 24 and not mine["in_sample"]
    recapture = baseline_path(workspace, KEY, "matmul", "validation", recapture=True)
    assert mine["recapture"]["file"] == str(recapture)
    assert mine["recapture"]["pairs"] == 24


def test_a_workspace_copy_of_a_shipped_baseline_is_read_once(run, workspace):
    """The same rows as a shipped file (a user's copy into the workspace,
    byte for byte or saved with CRLF line ends): its rows are counted once,
    with a warning naming both files."""
    shipped = CPU / "baselines" / f"{SHIPPED}_vector_add.validation.csv"
    args = ("validate", "--hw", SHIPPED, "--op", "vector_add", "--format", "json")
    before = json.loads(run(workspace, *args).stdout)["summary"]["targets"]
    copy = baseline_path(workspace, KEY, "matmul", "validation").parent / shipped.name
    for text in (shipped.read_bytes(), shipped.read_bytes().replace(b"\n", b"\r\n")):
        copy.write_bytes(text)
        result = run(workspace, *args)
        assert result.exit_code in (0, 1), result.output
        assert json.loads(result.stdout)["summary"]["targets"] == before
        assert f"warning: {copy}: the same rows as {shipped}; read once" in result.stderr


def test_registry_lookup_reads_a_workspace_copy_of_a_shipped_baseline_once(run, workspace):
    """As validate reads it (from the newcomer: lookup named the copy, with
    no warning): the shipped row, with a warning naming both files; a row
    copied into a file of the user's own, likewise, naming both lines; a
    shape nobody measured names both places it looked in."""
    shipped = CPU / "baselines" / f"{SHIPPED}_vector_add.validation.csv"
    header, *rows = shipped.read_text().splitlines()
    _, op, shape, dtype = rows[3].split(",")[:4]
    args = ("registry", "lookup", "--hw", SHIPPED, "--op", op, "--shape", shape, "--dtype", dtype)
    folder = baseline_path(workspace, KEY, "matmul", "validation").parent
    copy = folder / shipped.name
    copy.write_bytes(shipped.read_bytes())
    result = run(workspace, *args, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["file"] == str(shipped)
    assert warnings(result) == [f"warning: {copy}: the same rows as {shipped}; read once"]
    copy.unlink()
    mine = folder / "mine.validation.csv"
    mine.write_text(f"{header}\n{rows[3]}\n")
    result = run(workspace, *args, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["file"] == str(shipped)
    assert warnings(result) == [f"warning: {mine}:2: the same row as {shipped}:5; read once"]
    result = run(workspace, *args[:-4], "--shape", "3", "--dtype", dtype)
    assert result.exit_code == 2, result.output
    assert "(looked in the installed and workspace baselines)" in result.output


def test_rows_a_workspace_baseline_copies_from_a_shipped_one_count_once(run, workspace):
    """A workspace baseline holding some rows of a shipped file, copied
    exactly, beside a row of its own: the copied rows count once, with one
    warning naming both files and how many; its own row and a copied row
    with another latency (a second measurement) still count."""
    shipped = CPU / "baselines" / f"{SHIPPED}_vector_add.validation.csv"
    args = ("validate", "--hw", SHIPPED, "--op", "vector_add", "--format", "json")
    (before,) = json.loads(run(workspace, *args).stdout)["summary"]["targets"]
    header, *rows = shipped.read_text().splitlines()
    fields = rows[3].split(",")
    fields[4] = repr(float(fields[4]) * 1.01)  # the same shape measured again
    copy = baseline_path(workspace, KEY, "matmul", "validation").parent / "mine.validation.csv"
    copy.write_text("\n".join([header, *rows[:3], ",".join(fields)]) + "\n")
    result = run(workspace, *args)
    assert result.exit_code in (0, 1), result.output
    (after,) = json.loads(result.stdout)["summary"]["targets"]
    assert after["records"] == before["records"] + 1
    assert f"warning: {copy}: 3 row(s) repeat rows of {shipped} exactly; each read once" in (
        result.stderr
    )
    # the same rows in a file whose name gives no purpose: still copies (from the reviewer)
    plain = copy.with_name("mine.csv")
    copy.rename(plain)
    again = run(workspace, *args)
    (after,) = json.loads(again.stdout)["summary"]["targets"]
    assert after["records"] == before["records"] + 1
    assert f"warning: {plain}: 3 row(s) repeat rows of {shipped} exactly" in again.stderr


def test_validate_a_workspace_capture_as_calibration(run, workspace):
    calibration = baseline_path(workspace, KEY, "matmul", "calibration")
    result = run(workspace, "validate", "--baseline", calibration, "--purpose", "calibration")
    assert result.exit_code in (0, 1), result.output
    assert "unknown target" not in result.output


def test_calibrate_writes_a_workspace_target_into_the_workspace(run, workspace, tmp_path):
    calibration = baseline_path(workspace, KEY, "matmul", "calibration")
    result = run(workspace, "calibrate", "--hw", KEY, "--baseline", calibration, "--no-loo")
    assert result.exit_code == 0, result.output
    written = calibration_path(workspace, KEY)
    assert f"wrote {written}" in result.output
    assert "note:" not in result.output  # it applies: nothing to say
    assert json.loads(written.read_text())["target"] == KEY
    # the next command applies it
    shown = run(workspace, "workspace", "--json")
    (entry,) = json.loads(shown.stdout)["calibrations"]
    assert entry == {
        "file": "calibration/host_acme_2c_1t.calibration.json",
        "target": KEY,
        "applied": True,
        "error": "",
    }
    spec = run(workspace, "targets", "--hw", KEY)
    assert f"calibrated: {written}" in " ".join(spec.output.split())  # wrapped to the width


def test_calibrate_an_installed_target_keeps_writing_here(run, workspace, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    source = CPU / "baselines" / "i7_12700k_matmul.calibration.csv"
    result = run(workspace, "calibrate", "--hw", "i7_12700k", "--baseline", source, "--no-loo")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "i7_12700k.calibration.json").is_file()
    assert not (workspace / "calibration").exists()
    # and says that the file is not applied, and how to apply it
    note = " ".join(result.output.split())
    assert "note: i7_12700k is a target of plugin 'cpu': commands use the calibration" in note
    assert "targets/i7_12700k.target.json" in note
    assert "graphsval targets --hw i7_12700k --target-file --out FILE" in note


def test_an_installed_target_s_calibration_into_the_workspace_is_refused_first(
    run, workspace, monkeypatch
):
    import graphsval_core.calibrate.workflow as workflow

    monkeypatch.setattr(workflow, "fit_latency", None)  # reached: a TypeError, not exit 2
    source = CPU / "baselines" / "i7_12700k_matmul.calibration.csv"
    out = workspace / "calibration" / "i7_12700k.calibration.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    result = run(workspace, "calibrate", "--hw", "i7_12700k", "--baseline", source, "--out", out)
    assert result.exit_code == 2, result.output
    said = " ".join(result.output.split())
    assert "applies a calibration only to a workspace target" in said
    assert "i7_12700k is a target of plugin 'cpu'" in said
    assert "--target-file --out" in said and not out.exists()
    # the workspace's own target's calibration may go there
    own = calibration_path(workspace, KEY)
    calibration = baseline_path(workspace, KEY, "matmul", "calibration")
    monkeypatch.undo()
    done = run(
        workspace, "calibrate", "--hw", KEY, "--baseline", calibration, "--no-loo", "--out", own
    )
    assert done.exit_code == 0, done.output


def test_a_calibration_folder_that_is_a_file_is_one_line(run, workspace):
    (workspace / "calibration").write_text("")
    calibration = baseline_path(workspace, KEY, "matmul", "calibration")
    result = run(workspace, "calibrate", "--hw", KEY, "--baseline", calibration, "--no-loo")
    assert result.exit_code == 2, result.output
    written = calibration_path(workspace, KEY)
    assert f"Error: {written}: {workspace / 'calibration'} is not a folder; nothing written" in (
        result.output
    )


def test_a_failed_calibration_leaves_no_folder_in_the_workspace(run, workspace):
    result = run(workspace, "calibrate", "--hw", KEY, "--baseline", workspace / "none.csv")
    assert result.exit_code == 2, result.output
    assert not (workspace / "calibration").exists()


@pytest.fixture
def override(tmp_path: Path) -> Path:
    spec = shipped_spec()
    spec["name"] = "My Xeon"
    write_json(target_path(tmp_path / "ws", SHIPPED), spec)
    return tmp_path / "ws"


def test_an_override_replaces_the_installed_target_in_one_note(run, override):
    result = run(override, "targets", "--hw", SHIPPED)
    assert result.exit_code == 0, result.output
    assert "My Xeon" in result.output
    assert notes(result) == [
        f"note: target {SHIPPED} from the workspace ({override}) replaces the one of plugin 'cpu' "
        "(its calibration and known findings no longer apply; a calibration in the "
        "workspace's calibration/ does)"
    ]
    assert warnings(result) == []
    shown = json.loads(run(override, "workspace", "--json").stdout)
    assert shown["targets"][0]["replaces"] == ["cpu"]


def test_an_overridden_target_checks_and_validates_without_floors(run, override):
    checked = run(override, "check", "--hw", SHIPPED)
    # the plugin's known findings no longer apply (the note says so): only the bf16
    # add's precision finding (slower than an fp32 add, so dearer in static energy) fails
    assert checked.exit_code in (0, 1), checked.output
    failed = [line for line in checked.output.splitlines() if line.strip().startswith("FAIL")]
    assert all("precision" in line and "vector_add" in line for line in failed), failed
    assert warnings(checked) == [] and len(notes(checked)) == 1
    validated = run(override, "validate", "--hw", SHIPPED, "--check-floors")
    assert validated.exit_code in (0, 1), validated.output
    assert "Traceback" not in validated.output and warnings(validated) == []
    assert f"floor {SHIPPED}/matmul:" in validated.output


def test_a_malformed_target_file_is_one_warning_and_exit_0(run, workspace):
    bad = target_path(workspace, "broken")
    bad.write_text("{not json")
    result = run(workspace, "targets")
    assert result.exit_code == 0, result.output
    (line,) = warnings(result)
    assert str(bad) in line and "not valid JSON" in line
    assert KEY in result.output
    shown = run(workspace, "workspace")
    # what is wrong, in the file's own words: no class name, no second copy of its path
    (listed,) = [x for x in shown.output.splitlines() if "NOT LOADED" in x]
    assert listed.endswith(
        "targets/broken.target.json  NOT LOADED: not valid JSON: "
        + ("Expecting property name enclosed in double quotes (line 1, column 2)")
    )
    assert "TargetFileError" not in shown.output


def test_an_empty_or_missing_workspace_changes_nothing(run, tmp_path):
    missing = tmp_path / "ws"
    plain = run(None, "-p", "no:workspace", "targets", "--json")
    with_ws = run(missing, "targets", "--json")
    assert with_ws.exit_code == 0, with_ws.output
    assert json.loads(with_ws.stdout) == json.loads(plain.stdout)
    assert notes(with_ws) == [] and warnings(with_ws) == []
    shown = run(missing, "workspace")
    assert shown.exit_code == 0
    assert "does not exist yet" in shown.output
    assert not missing.exists()
    missing.mkdir()
    assert run(missing, "workspace", "--json").exit_code == 0
    assert list(missing.iterdir()) == []


def test_the_workspace_command_shows_the_folder_its_source_and_files(
    run, workspace, monkeypatch, tmp_path
):
    monkeypatch.setenv(ENV_WORKSPACE, str(tmp_path / "env"))
    from_env = json.loads(run(None, "workspace", "--json").stdout)
    assert from_env["workspace"] == str(tmp_path / "env")
    assert from_env["source"] == "GRAPHSVAL_WORKSPACE" and not from_env["exists"]
    result = run(workspace, "workspace", "--json")
    data = json.loads(result.stdout)
    assert data["workspace"] == str(workspace) and data["source"] == "--workspace"
    assert data["targets"] == [
        {
            "file": "targets/host_acme_2c_1t.target.json",
            "key": KEY,
            "registered": True,
            "replaces": [],
            "error": "",
        }
    ]
    calibration_rows = (
        len(baseline_path(workspace, KEY, "matmul", "calibration").read_text().splitlines()) - 1
    )
    rows = {b["file"]: (b["rows"], b["recapture"]) for b in data["baselines"]}
    assert rows == {
        "baselines/host_acme_2c_1t_matmul.calibration.csv": (calibration_rows, False),
        "baselines/host_acme_2c_1t_matmul.validation.csv": (24, False),
        "baselines/recapture/host_acme_2c_1t_matmul.validation.csv": (24, True),
    }
    text = run(workspace, "workspace").output
    assert f"workspace: {workspace} (from --workspace)" in text
    assert "baselines/host_acme_2c_1t_matmul.validation.csv  24 rows, validation" in text


def test_the_workspace_listing_wraps_to_the_screen(workspace):
    text = (
        CliRunner(env={"COLUMNS": "60"})
        .invoke(cli, ["--workspace", str(workspace), "workspace"])
        .output
    )
    lines = text.splitlines()
    # a line runs past 60 columns only where one word (the folder) does
    assert all(len(line) <= 60 or str(workspace) in line for line in lines), text
    assert len(f"workspace: {workspace} (from --workspace)") > 60  # so the header wraps:
    assert "--workspace)" not in lines[0]
    assert any(line.startswith("  ") and line.endswith("--workspace)") for line in lines[1:3])
    assert "baselines/host_acme_2c_1t_matmul.validation.csv" in text


def test_the_workspace_command_says_a_file_whose_key_is_not_its_name_is_not_loaded(run, workspace):
    """Every command ignores such a file (one warning); the listing agrees,
    and the advice offers only a rename onto no other file and a valid key."""
    spec = shipped_spec()
    spec["key"] = KEY  # a copy of the workspace's target under another name
    write_json(workspace / "targets" / "acme_copy.target.json", spec)
    write_json(workspace / "targets" / "Acme.target.json", spec)
    data = json.loads(run(workspace, "workspace", "--json").stdout)
    by_file = {t["file"]: t for t in data["targets"]}
    copy, upper = by_file["targets/acme_copy.target.json"], by_file["targets/Acme.target.json"]
    assert not copy["registered"] and not upper["registered"]
    assert copy["error"] == (
        f"holds target {KEY!r}, but its name says 'acme_copy': set its key to 'acme_copy'"
    )
    assert upper["error"].endswith(f": remove it (another file is named {KEY}.target.json)")
    assert by_file[f"targets/{KEY}.target.json"]["registered"]
    assert "NOT LOADED: holds target" in run(workspace, "workspace").output


def test_a_broken_target_file_stops_validate_of_its_rows(run, workspace):
    """The user's own target file is input: validate never leaves its rows out
    with a warning and exits 0 (issue 18 follow-up item 4)."""
    path = target_path(workspace, KEY)
    path.write_text("{truncated")
    result = run(workspace, "validate", "--format", "json")
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    (line,) = [line for line in result.output.splitlines() if line.strip()]
    assert line.startswith(f"Error: workspace target file {path}: not valid JSON")
    other = run(workspace, "validate", "--hw", "i7_12700k", "--purpose", "calibration", "-q")
    assert other.exit_code in (0, 1), other.output


def test_a_folder_named_as_a_calibration_or_baseline_is_an_error_not_skipped(run, workspace):
    # it was passed over in silence: validate ran on the uncalibrated spec
    folder = calibration_path(workspace, KEY)
    folder.mkdir(parents=True)
    result = run(workspace, "validate", "--hw", KEY, "-q")
    assert result.exit_code == 2, result.output
    (line,) = [x for x in result.output.splitlines() if x.strip()]
    assert str(folder) in line and "is a folder, not a file" in line
    assert "Traceback" not in result.output and "Errno" not in line
    folder.rmdir()
    csv = workspace / "baselines" / "extra.csv"
    csv.mkdir()
    result = run(workspace, "validate", "-q")
    assert result.exit_code == 2 and str(csv) in result.output, result.output


def test_an_unreadable_calibration_is_named_without_a_raw_errno(run, workspace, monkeypatch):
    """A workspace calibration the user may not read stopped the command
    with "[Errno 13] Permission denied: '<path>'" (from the newcomer; a root
    test cannot chmod a file unreadable, so the read fails here)."""
    from graphsval_core.plugins import answers

    path = calibration_path(workspace, KEY)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{}")

    def denied(name, *args, **kwargs):
        raise PermissionError(13, "Permission denied", str(name))

    monkeypatch.setattr(answers, "open", denied, raising=False)
    result = run(workspace, "validate", "--hw", KEY, "-q")
    assert result.exit_code == 2, result.output
    (line,) = [x for x in result.output.splitlines() if x.strip()]
    assert line == (
        f"Error: workspace calibration {path}: cannot read: Permission denied; fix or remove it"
    )


def test_the_workspace_command_says_why_a_calibration_is_not_applied(run, workspace):
    # a calibration of an installed plugin's target: refused, and the listing says why
    path = calibration_path(workspace, "i7_12700k")
    path.parent.mkdir(parents=True, exist_ok=True)
    shipped = Path(__file__).resolve().parents[2] / "plugins" / "graphsval_cpu"
    path.write_text(
        (shipped / "graphsval_cpu" / "calibration" / "i7_12700k.calibration.json").read_text()
    )
    shown = json.loads(run(workspace, "workspace", "--json").stdout)["calibrations"]
    (entry,) = [c for c in shown if c["target"] == "i7_12700k"]
    assert entry["applied"] is False
    assert "a target of plugin 'cpu'" in entry["error"]
    assert "targets/i7_12700k.target.json" in entry["error"]


def test_target_file_is_the_file_the_plugin_ships(run):
    printed = run(None, "targets", "--hw", SHIPPED, "--target-file")
    assert printed.exit_code == 0, printed.output
    assert json.loads(printed.stdout) == shipped_spec()


def test_target_file_of_a_target_in_code_replaces_it_as_its_plugin_ships_it(run, tmp_path):
    # the i7 is defined in code and ships no target file: --target-file prints one
    key = "i7_12700k"
    printed = run(None, "targets", "--hw", key, "--target-file")
    assert printed.exit_code == 0, printed.output
    data = json.loads(printed.stdout)
    assert data["key"] == key and "tiers" in data
    ws = tmp_path / "ws"
    shape = ("--hw", key, "--op", "matmul", "--shape", "64x512x1024", "--dtype", "fp32")

    def predicted(where: Path | None) -> float:
        out = run(where, "predict", *shape, "--format", "json")
        assert out.exit_code == 0, out.output
        return float(json.loads(out.stdout)[0]["latency_s"])

    installed = predicted(None)
    write_json(target_path(ws, key), data)
    assert any("replaces the one of plugin 'cpu'" in n for n in notes(run(ws, "targets")))
    # bad input is its one line: the note said before every error is left out (newcomer)
    bad = run(ws, "predict", *shape[:-4], "--shape", "4x4", "--dtype", "fp32")
    assert bad.exit_code == 2 and notes(bad) == [], bad.output
    assert len(bad.output.strip().splitlines()) == 1, bad.output
    failed = run(ws, "validate", "--hw", key, "-q")
    assert failed.exit_code == 1 and notes(failed), failed.output  # a verdict keeps its notes
    # before calibration: the datasheet's prediction, not the calibrated one
    assert predicted(ws) != installed
    # with its plugin's calibration beside it, the installed target's prediction
    shipped = CPU / "calibration" / f"{key}.calibration.json"
    write_json(calibration_path(ws, key), json.loads(shipped.read_text()))
    assert predicted(ws) == installed
    # then an edit of a value the calibration leaves alone changes what it predicts
    data["peak_ops_per_s"]["fp32"] /= 4
    write_json(target_path(ws, key), data)
    assert predicted(ws) > installed


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("targets", "--target-file"), "needs --hw KEY"),
        (("targets", "--hw", SHIPPED, "--target-file", "--json"), "give one"),
    ],
)
def test_target_file_refuses_what_it_cannot_print(run, args, said):
    result = run(None, *args)
    assert result.exit_code == 2 and said in result.output and "Traceback" not in result.output


def test_a_workspace_copy_keeps_its_plugin_s_model_hooks(run, tmp_path):
    # the KPU plugin shapes its targets' model through hooks (a weight-stationary
    # window); its target's file copied into a workspace is the same device, edited
    key = "kpu_t64"
    printed = run(None, "targets", "--hw", key, "--target-file")
    assert printed.exit_code == 0, printed.output
    ws = tmp_path / "ws"
    write_json(target_path(ws, key), json.loads(printed.stdout))
    shape = ("--hw", key, "--op", "matmul", "--shape", "18799x3570x3570", "--dtype", "int8")
    rows = []
    for where in (None, ws):
        out = run(where, "predict", *shape, "--format", "json")
        assert out.exit_code == 0, out.output
        assert "which another plugin registers" not in out.output
        rows.append(json.loads(out.stdout)[0])
    assert rows[1]["latency_s"] == rows[0]["latency_s"] and rows[1]["regime"] == "alu_bound"


def test_target_file_out_writes_into_the_workspace_in_use_and_never_over_a_file(run, tmp_path):
    # a shell's `> WS/targets/KEY.target.json` empties the workspace's copy before the
    # command reads the workspace: --out writes it after, its folders created
    ws = tmp_path / "ws"
    dest = target_path(ws, "i7_12700k")
    written = run(ws, "targets", "--hw", "i7_12700k", "--target-file", "--out", dest)
    assert written.exit_code == 0, written.output
    assert json.loads(dest.read_text())["key"] == "i7_12700k"
    assert any("replaces the one of plugin 'cpu'" in n for n in notes(run(ws, "targets")))
    edited = dest.read_text().replace('"name": "', '"name": "Mine: ', 1)
    dest.write_text(edited)
    again = run(ws, "targets", "--hw", "i7_12700k", "--target-file", "--out", dest)
    assert again.exit_code == 2 and "exists; remove it or name another file" in again.output
    assert dest.read_text() == edited  # the user's edit stays
    alone = run(None, "targets", "--hw", "i7_12700k", "--out", tmp_path / "x.json")
    assert alone.exit_code == 2 and "give --target-file" in alone.output
    assert not (tmp_path / "x.json").exists()
    # a folder, or a name ending in a slash, is not a file's name: nothing written
    folder = run(ws, "targets", "--hw", "i7_12700k", "--target-file", "--out", tmp_path)
    assert folder.exit_code == 2 and "is a folder; give the file's name" in folder.output
    slash = run(ws, "targets", "--hw", "i7_12700k", "--target-file", "--out", f"{tmp_path}/new/")
    assert slash.exit_code == 2 and "names a folder" in slash.output
    assert not (tmp_path / "new").exists()


def test_a_workspace_under_a_file_is_said_to_be_impossible_not_yet_to_come(run, tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    for args in (("workspace",), ("workspace", "--json")):
        result = run(blocker / "sub" / "ws", *args)
        assert result.exit_code == 2, result.output
        assert result.output.strip().splitlines()[-1] == (
            f"Error: workspace {blocker / 'sub' / 'ws'} (from --workspace) cannot be "
            f"created: {blocker} is not a folder; point --workspace or GRAPHSVAL_WORKSPACE at "
            "a folder"
        )
        assert "targets (" not in result.output and "Traceback" not in result.output
    fresh = run(tmp_path / "later" / "ws", "workspace").output
    assert "it does not exist yet (created when something is written)" in fresh


def test_a_target_file_of_another_name_and_a_calibration_folder_are_listed(run, workspace):
    (workspace / "targets" / "mine.json").write_text("{}")
    (workspace / "calibration" / "odd.calibration.json").mkdir(parents=True)
    text = run(workspace, "workspace").output
    assert (
        "  ?  targets/mine.json  NOT LOADED: a target file is named <key>.target.json; "
        "this name is never read"
    ) in text
    assert "calibration/odd.calibration.json  NOT READ: is a folder, not a file" in text
    assert "IsADirectoryError" not in text


def test_a_target_or_calibration_of_a_near_name_is_listed_not_passed_over(run, workspace):
    """``KEY.target.JSON``, a name with a trailing space and a calibration
    not named ``<key>.calibration.json`` were never read and never listed
    (from the newcomer); a trailing space is shown quoted, a hidden file is
    not a spec."""
    targets = workspace / "targets"
    targets.mkdir(parents=True, exist_ok=True)
    (targets / "mine.target.JSON").write_text("{}")
    (targets / "mine.target.json ").write_text("{}")
    (targets / ".DS_Store").write_text("")
    (targets / "README").write_text("notes")
    (targets / "old").mkdir()
    (workspace / "calibration").mkdir(exist_ok=True)
    (workspace / "calibration" / "mine.json").write_text("{}")
    text = run(workspace, "workspace").output
    never = "NOT LOADED: a target file is named <key>.target.json; this name is never read"
    assert f"  ?  targets/mine.target.JSON  {never}" in " ".join(text.split("\n    "))
    assert f"  ?  'targets/mine.target.json '  {never}" in " ".join(text.split("\n    "))
    read, _, unread = text.partition("\nnot read (")
    assert ".DS_Store" not in read and "README" not in read and "targets/old" not in read
    assert "targets/README  a target file is named <key>.target.json" in unread
    assert "targets/old  a folder; nothing in a folder under targets/ is read" in unread
    assert " ".join(text.split()).count("this name is never read") == 3  # 2 targets, 1 calibration
    assert "calibration/mine.json  NOT READ: a calibration file is named" in text
    listed = json.loads(run(workspace, "workspace", "--json").stdout)
    assert "targets/mine.target.json " in [t["file"] for t in listed["targets"]]


def test_a_baseline_of_a_near_name_is_listed_not_passed_over(run, workspace):
    """A capture saved as ``x.CSV`` or with a trailing space was never read
    and never listed; a README beside it is not a baseline."""
    base = baseline_path(workspace, KEY, "matmul", "validation")
    (base.parent / "mine.validation.CSV").write_text(base.read_text())
    (base.parent / "recapture" / "mine.validation.csv ").write_text(base.read_text())
    (base.parent / "README").write_text("notes")
    text = " ".join(run(workspace, "workspace").output.split("\n    "))
    never = "NOT READ: a baseline's name ends in .csv; this name is never read"
    assert f"  baselines/mine.validation.CSV  {never}" in text
    assert f"  'baselines/recapture/mine.validation.csv '  {never}" in text
    read, _, unread = text.partition("\nnot read (1):\n")
    assert "README" not in read
    assert unread == "  baselines/README  a baseline's name ends in .csv\n"


def test_every_other_file_of_the_workspace_is_listed_as_not_read(run, workspace):
    """A ``.bak`` copy, a file with no extension and a folder, in the
    workspace or one of its parts, were passed over in silence: each is
    listed, with why no command reads it (in JSON too)."""
    base = baseline_path(workspace, KEY, "matmul", "validation")
    (base.parent / f"{base.name}.bak").write_text(base.read_text())
    (base.parent / "capture").write_text(base.read_text())
    (workspace / "calibration").mkdir(exist_ok=True)
    (workspace / "calibration" / f"{KEY}.calibration.json.bak").write_text("{}")
    (workspace / "notes").write_text("mine")
    (workspace / "old").mkdir()
    shown = run(workspace, "workspace")
    assert shown.exit_code == 0, shown.output
    unread = shown.output.partition("\nnot read (5):\n")[2].splitlines()
    everything = "the workspace reads only targets/, baselines/ and calibration/"
    assert unread == [
        "  baselines/capture  a baseline's name ends in .csv",
        f"  baselines/{base.name}.bak  a baseline's name ends in .csv",
        f"  calibration/{KEY}.calibration.json.bak  a calibration file is named "
        "<key>.calibration.json",
        f"  notes  {everything}",
        f"  old  a folder; {everything}",
    ]
    listed = json.loads(run(workspace, "workspace", "--json").stdout)
    assert [o["file"] for o in listed["not_read"]] == [
        "baselines/capture",
        f"baselines/{base.name}.bak",
        f"calibration/{KEY}.calibration.json.bak",
        "notes",
        "old",
    ]


def test_a_link_to_a_folder_is_listed_as_one(run, workspace, tmp_path):
    """A link to a folder in baselines/ was said to be not read because "a
    baseline's name ends in .csv": it is said to be a link to a folder (in
    the workspace's folder and in targets/ too), and JSON lists it under
    ``not_read``, the summary's attribute of that name."""
    from graphsval_core.workspace.summary import WorkspaceSummary

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (workspace / "targets").mkdir(exist_ok=True)
    for name in ("baselines/old", "targets/old", "old"):
        (workspace / name).symlink_to(elsewhere, target_is_directory=True)
    shown = run(workspace, "workspace")
    assert shown.exit_code == 0, shown.output
    unread = shown.output.partition("\nnot read (3):\n")[2].splitlines()
    assert unread == [
        "  baselines/old  a link to a folder; nothing in a folder under baselines/ is read",
        "  old  a link to a folder; the workspace reads only targets/, baselines/ and calibration/",
        "  targets/old  a link to a folder; nothing in a folder under targets/ is read",
    ]
    listed = json.loads(run(workspace, "workspace", "--json").stdout)
    assert [o["file"] for o in listed["not_read"]] == ["baselines/old", "old", "targets/old"]
    empty = WorkspaceSummary(workspace, "--workspace", True, (), (), ())
    assert empty.not_read == () and empty.to_dict()["not_read"] == []


def test_workspace_json_keys_are_the_ones_its_help_names(run, workspace):
    """docs/cli.md (the --json help) names each key of ``workspace --json``,
    ``not_read`` among them."""
    from graphsval_core.cli.workspace_cmd import workspace as command

    (option,) = [p for p in command.params if p.name == "as_json"]
    named = re.findall(r"`(\w+)`", option.help or "")
    keys = list(json.loads(run(workspace, "workspace", "--json").stdout))
    assert named[: len(keys)] == keys and "not_read" in keys


def test_a_hidden_file_of_the_workspace_is_never_read(run, workspace):
    """An editor's dot-file (``baselines/.hidden.csv``, a hidden target or
    calibration) was read as a part, and a broken one stopped ``registry
    lookup`` (from the newcomer): each is listed as not read, hidden."""
    base = baseline_path(workspace, KEY, "matmul", "validation")
    (base.parent / ".hidden.csv").write_text("not,a\nbaseline\n")
    (base.parent / "recapture" / f".{base.name}").write_text("hardware\n")
    (workspace / "targets" / f".{KEY}.target.json").write_text("{")
    (workspace / "calibration").mkdir(exist_ok=True)
    (workspace / "calibration" / f".{KEY}.calibration.json").write_text("{")
    _, op, shape, dtype = first_row(base)[:4]
    looked = run(
        workspace, "registry", "lookup", "--hw", KEY, "--op", op, "--shape", shape,
        "--dtype", dtype, "--json",
    )  # fmt: skip
    assert looked.exit_code == 0, looked.output
    assert json.loads(looked.stdout)["file"] == str(base) and not warnings(looked)
    shown = run(workspace, "workspace")
    assert shown.exit_code == 0, shown.output
    hidden = "a hidden file (its name starts with '.')"
    assert shown.output.partition("\nnot read (4):\n")[2].splitlines() == [
        f"  baselines/.hidden.csv  {hidden}",
        f"  baselines/recapture/.{base.name}  {hidden}",
        f"  calibration/.{KEY}.calibration.json  {hidden}",
        f"  targets/.{KEY}.target.json  {hidden}",
    ]
    result = run(workspace, "validate", "--hw", KEY, "--format", "json")
    assert result.exit_code in (0, 1), result.output
    assert not warnings(result)


def test_a_target_file_is_written_only_under_the_name_a_workspace_reads(run, tmp_path):
    """``targets --target-file --out WS/targets/i7_12700k.target.json`` of
    another target wrote it, exit 0, and the i7 was then unusable in that
    workspace (from the newcomer); another case was never read."""
    key = "host_amd_epyc_2c_1t"
    for name in ("i7_12700k.target.json", f"{key}.target.JSON", f"{key}.target.json "):
        out = tmp_path / "targets" / name
        result = run(None, "targets", "--hw", key, "--target-file", "--out", str(out))
        assert result.exit_code == 2, result.output
        assert f"a target file is read as {key}.target.json" in result.output
        # a name apart only in case or blanks is told why (it ends in ".target.json " too)
        near = "exactly: blanks and case count" in " ".join(result.output.split())
        assert near == (name != "i7_12700k.target.json"), result.output
        assert not out.exists()
    for name in (f"{key}.target.json", "mine.json"):
        out = tmp_path / "targets" / name
        assert run(None, "targets", "--hw", key, "--target-file", "--out", str(out)).exit_code == 0


def test_a_newline_in_a_key_or_a_file_name_stays_on_its_one_line(run, tmp_path):
    """A provenance key ``clock<newline>hz`` made the error two lines, and a
    workspace baseline named ``a<newline>b.csv`` the no-purpose warning
    (from the newcomer's second run): both are written escaped."""
    ws = tmp_path / "ws"
    key = "host_amd_epyc_2c_1t"
    data = shipped_spec()
    data["provenance"]["clock\nhz"] = {"kind": "estimated", "source": "x"}
    write_json(target_path(ws, data["key"]), data)
    bad = run(ws, "targets", "--hw", data["key"])
    assert bad.exit_code == 2
    (line,) = [x for x in bad.output.splitlines() if x.strip()]
    assert "provenance.clock\\nhz: no figure of that name" in line
    target_path(ws, data["key"]).unlink()
    said, warned = _no_purpose_warning(run, ws, "a\nb.csv")
    assert "a\\nb.csv: no purpose column" in warned, said.output
    out = tmp_path / "t" / f"{key}.target.json "
    refused = run(None, "targets", "--hw", key, "--target-file", "--out", str(out))
    assert refused.exit_code == 2 and not out.exists()


def test_workspace_names_a_file_with_a_newline_on_one_line(run, tmp_path):
    """``graphsval workspace`` printed a broken baseline named ``nl<newline>name.csv``
    and its error raw, over two lines (from the newcomer)."""
    ws = tmp_path / "ws"
    (ws / "baselines").mkdir(parents=True)
    (ws / "baselines" / "nl\nname.csv").write_text("hi\n")
    shown = run(ws, "workspace")
    assert shown.exit_code == 0, shown.output
    (line,) = [x for x in shown.output.splitlines() if "NOT READ" in x]
    assert "nl\\nname.csv" in line and not line.rstrip().endswith("nl")


def test_a_right_to_left_override_in_a_file_name_is_written_escaped(run, tmp_path):
    """A workspace baseline whose name holds U+202E (which shows the rest of
    a line reversed) is named in its warning as ``\\u202e``, never raw."""
    said, warned = _no_purpose_warning(run, tmp_path / "ws", "vsc.\u202etxt.csv")
    assert "vsc.\\u202etxt.csv" in warned, said.output
    assert "\u202e" not in said.output


def _no_purpose_warning(run, ws, name: str):
    """``validate`` of a workspace holding a copy of a shipped i7 baseline
    under ``name`` (no purpose suffix), and its one no-purpose warning."""
    shipped = CPU / "baselines" / "i7_12700k_vector_add.calibration.csv"
    (ws / "baselines").mkdir(parents=True)
    (ws / "baselines" / name).write_text(shipped.read_text())
    said = run(ws, "validate", "--hw", "i7_12700k", "-q")
    warned = [x for x in said.output.splitlines() if "no purpose column or suffix" in x]
    assert len(warned) == 1, said.output
    return said, warned[0]
