"""A workspace file is the user's own input (issue 18 follow-up item 4): a
broken or out-of-range calibration, or a broken target file, is an error
(exit 2, one line) for every command that uses its target, never a warning
followed by the datasheet's answer."""

from __future__ import annotations

import json
import os

import pytest

from graphsval_core.testing import target_field
from graphsval_core.workspace.location import calibration_path, target_path

from .conftest import CPU, KEY, shipped_spec, write_json

EXPLAIN = ("explain", "--op", "matmul", "--shape", "64x64x64", "--dtype", "fp32", "--hw", KEY)


def _calibration(**constants: object) -> dict[str, object]:
    data = json.loads((CPU / "calibration" / "host_intel_xeon_2c_1t.calibration.json").read_text())
    data["target"] = KEY
    data["constants"] = {"launch_overhead_s": {"value": 1e-6, "datasheet": 2e-6}, **constants}
    return data


def _one_error(result) -> str:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    return lines[0]


def test_a_good_workspace_calibration_applies(workspace, run):
    write_json(calibration_path(workspace, KEY), _calibration())
    result = run(workspace, *EXPLAIN)
    assert result.exit_code == 0, result.output


def test_an_ops_own_first_touch_rate_applies_from_a_calibration(workspace, run):
    # beside the products' rate, which brings the size glibc maps afresh with it
    rates = {
        "first_touch_bps": {"value": 2.2e9, "datasheet": None},
        "vector_first_touch_bps.bf16": {"value": 1.3e9, "datasheet": None},
    }
    write_json(calibration_path(workspace, KEY), _calibration(**rates))
    result = run(workspace, "targets", "--hw", KEY)
    assert result.exit_code == 0, result.output
    cells, source = target_field(result.output, "first touch bf16 (no product)")
    assert cells[0] == "1.3 GB/s" and source.startswith("calibrated")
    assert target_field(result.output, "first touch from")[0][0] == "32 MiB"


def test_a_products_bandwidth_share_applies_from_a_calibration(workspace, run):
    share = {"product_bandwidth_fraction.fp32": {"value": 0.5, "datasheet": 1.0}}
    write_json(calibration_path(workspace, KEY), _calibration(**share))
    result = run(workspace, "targets", "--hw", KEY)
    assert result.exit_code == 0, result.output
    share_cells, source = target_field(result.output, "product bandwidth fp32")
    assert share_cells[0] == "0.5 of each tier's" and source.startswith("calibrated")
    # a calibrated rate of packing A shows beside it
    pack = {"pack_a_bps.fp32": {"value": 4e9, "datasheet": None}}
    write_json(calibration_path(workspace, KEY), _calibration(**share, **pack))
    result = run(workspace, "targets", "--hw", KEY)
    assert result.exit_code == 0, result.output
    packing, source = target_field(result.output, "packing A fp32")
    assert "4 GB/s beyond the last cache, N > 16" in packing[0] and "calibrated" in source
    # the datasheet column says what an unset share means: the tier's whole rate
    assert share_cells[:2] == ["0.5 of each tier's", "1 of each tier's"]
    # a tier's own share shows under the tier, beside what an unset one means
    tier = {"tiers.l2.product_fraction": {"value": 0.4, "datasheet": 1.0}}
    write_json(calibration_path(workspace, KEY), _calibration(**share, **tier))
    result = run(workspace, "targets", "--hw", KEY)
    assert result.exit_code == 0, result.output
    cells, source = target_field(result.output, "l2 product share")
    assert cells[:2] == ["0.4 of it to a matrix product", "1 of it to a matrix product"]
    assert source.startswith("calibrated")


@pytest.mark.parametrize(
    ("constants", "fragment"),
    [
        ({"launch_overhead_s": {"value": -1e-6, "datasheet": 2e-6}}, "launch_overhead_s.value"),
        ({"launch_overhead_s": {"value": "1e-6", "datasheet": 2e-6}}, "expected a number"),
        ({"launch_overhead_s": {"value": 1e300, "datasheet": 2e-6}}, "[0, 86400]"),
        ({"lunch_overhead_s": {"value": 1e-6}}, "not a constant graphsval calibrates"),
        ({"compute_fraction.fp32": {"value": 50, "datasheet": 1.0}}, "(0, 2]"),
        ({"pack_bps.fp32": {"value": 0, "datasheet": 1e9}}, "pack_bps.fp32.value"),
        ({"product_bandwidth_fraction.fp32": {"value": 1.5, "datasheet": 1.0}}, "(0, 1]"),
        ({"product_bandwidth_fraction.int4": {"value": 0.5}}, "not a constant graphsval"),
        ({"tiers.l2.product_fraction": {"value": 1.5, "datasheet": 1.0}}, "(0, 1]"),
        ({"product_overlap.fp32": {"value": 1.5, "datasheet": 1.0}}, "(0, 1]"),
        ({"product_overlap.fp32": {"value": -1, "datasheet": 1.0}}, "(0, 1]"),
        ({"product_overlap.fp32": {"value": 0, "datasheet": 1.0}}, "product_overlap.fp32.value"),
        ({"product_overlap.bf16": {"value": 0.5}}, "no product_overlap for bf16 (it gives one"),
        # the entry's other keys: what calibrate writes, each of its kind
        ({"launch_overhead_s": {"value": 1e-6, "datashet": 2e-6}}, "(did you mean 'datasheet'?)"),
        (
            {"tiers.l2.product_fraction": {"value": 0.5, "datasheet": "x"}},
            "product_fraction.datasheet: expected a number, got a string",
        ),
        (
            {"launch_overhead_s": {"value": 1e-6, "relative_uncertainty": -1}},
            "relative_uncertainty: expected a number in [0, inf], got -1",
        ),
        (
            {"launch_overhead_s": {"value": 1e-6, "at_bound": "top"}},
            'at_bound: expected one of lower, upper, floor, got "top"',
        ),
        ({"launch_overhead_s": {"value": 1e-6, "from": 3}}, "from: expected a string"),
        ({"tiers.l9.product_fraction": {"value": 0.5}}, "not a constant graphsval"),
        (  # in range alone, yet it puts the products' L2 below a megabyte a second
            {"tiers.l2.product_fraction": {"value": 1e-300, "datasheet": 1.0}},
            "with its constants, tiers[1].peak_bandwidth_bps (tier 'l2') x achievable_fraction "
            "x product_fraction: 1.",
        ),
        ({"tiers.l2.achievable_fraction": {"value": 1e-300, "datasheet": 1.0}}, "below 1e+06"),
        ({"pack_a_bps.fp32": {"value": 0, "datasheet": None}}, "pack_a_bps.fp32.value"),
        ({"pack_a_bps.int4": {"value": 4e9}}, "not a constant graphsval"),
        ({"pack_a_bpz.fp32": {"value": 4e9}}, "(did you mean 'pack_a_bps.fp32'?)"),
        ({"pack_a_bps.bf16": {"value": 4e9}}, "no pack_a_bps for bf16 (it gives one for: fp32)"),
        ({"gemv_fraction.fp32": {"value": 0.5}}, "no gemv_fraction for fp32 (it gives none for"),
        ({"pack_a_bps.fp32": {"value": 1e-300}}, "[1e+06, inf]"),
        ({"first_touch_bps": {"value": 1e-300}}, "first_touch_bps.value"),
        ({"vector_first_touch_bps.fp32": {"value": 0}}, "vector_first_touch_bps.fp32.value"),
        ({"vector_first_touch_bps.int4": {"value": 1e9}}, "not a constant graphsval"),
        (  # an op's own rate with no products' rate beside it
            {"vector_first_touch_bps.fp32": {"value": 1e9}},
            "constants.vector_first_touch_bps.fp32: an op's own first-touch rate needs "
            "first_touch_bps beside it",
        ),
    ],
)
def test_a_bad_workspace_calibration_is_an_error_for_its_target(
    workspace, run, constants, fragment
):
    path = write_json(calibration_path(workspace, KEY), _calibration(**constants))
    line = _one_error(run(workspace, *EXPLAIN))
    assert f"workspace calibration {path}" in line and fragment in line, line
    assert "fix or remove it" in line


@pytest.mark.parametrize("text", ["{}", '{"target": "x",}', "[]"])
def test_a_malformed_workspace_calibration_is_an_error(workspace, run, text):
    path = calibration_path(workspace, KEY)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    line = _one_error(run(workspace, *EXPLAIN))
    assert f"workspace calibration {path}" in line
    assert "JSONDecodeError" not in line


def test_another_target_is_not_stopped_by_it(workspace, run):
    write_json(calibration_path(workspace, KEY), {})
    result = run(workspace, *EXPLAIN[:-1], "i7_12700k")
    assert result.exit_code == 0, result.output


def test_a_broken_workspace_target_file_is_an_error_for_its_key(workspace, run):
    spec = shipped_spec()
    spec["key"] = "host_broken"
    del spec["tdp_w"]
    path = write_json(target_path(workspace, "host_broken"), spec)
    line = _one_error(run(workspace, *EXPLAIN[:-1], "host_broken"))
    assert f"workspace target file {path}" in line and "missing key 'tdp_w'" in line
    assert "__init__" not in line


def test_a_folder_or_a_link_loop_in_targets_is_named(workspace, run):
    folder = target_path(workspace, "host_folder")
    folder.mkdir()
    loop = target_path(workspace, "host_loop")
    os.symlink(loop.name, loop)
    line = _one_error(run(workspace, *EXPLAIN[:-1], "host_folder"))
    assert f"{folder}: is a folder" in line
    line = _one_error(run(workspace, *EXPLAIN[:-1], "host_loop"))
    assert f"{loop}: is no regular file" in line
    result = run(workspace, "targets")
    assert "host_folder" in result.output and "host_loop" in result.output


def test_a_workspace_calibration_naming_another_target_is_an_error(workspace, run):
    """Its file says it calibrates KEY, its content another target: before, it
    was skipped and KEY answered with its datasheet's figures, exit 0."""
    data = _calibration()
    data["target"] = "other"
    path = write_json(calibration_path(workspace, KEY), data)
    line = _one_error(run(workspace, *EXPLAIN))
    assert f"workspace calibration {path}" in line
    assert f"calibrates 'other', but its file name says '{KEY}'" in line


def test_a_workspace_calibration_of_no_target_is_an_error(workspace, run):
    data = _calibration()
    data["target"] = "ghost"
    path = write_json(calibration_path(workspace, "ghost"), data)
    line = _one_error(run(workspace, *EXPLAIN[:-1], "ghost"))
    assert f"workspace calibration {path}" in line
    assert "calibrates 'ghost', a target no plugin or workspace has" in line
    assert run(workspace, *EXPLAIN).exit_code == 0  # the workspace's own target still answers


def test_a_fifo_in_the_workspace_is_named_and_left_out_never_waited_on(workspace):
    """A FIFO with no writer would hold any command that opened it: in the
    workspace (baselines, recaptures, calibrations, targets) it is one problem
    naming it, and the other files keep working. Run as a process with a
    timeout, so that a regression fails instead of holding the suite."""
    import subprocess
    import sys

    fifos = [
        workspace / "baselines" / "f.validation.csv",
        workspace / "baselines" / "recapture" / "g.validation.csv",
        workspace / "calibration" / "h.calibration.json",
        workspace / "targets" / "i.target.json",
    ]
    for fifo in fifos:
        fifo.parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(fifo)
    named = {"workspace": fifos, "validate": fifos[:3], "targets": fifos[2:3]}  # what each reads
    for args in (["workspace"], ["validate", "-q", "--hw", KEY], ["targets", "--hw", KEY]):
        done = subprocess.run(
            [sys.executable, "-m", "graphsval_core", "--workspace", str(workspace), *args],
            capture_output=True,
            text=True,
            timeout=120,
        )
        said = done.stdout + done.stderr
        assert "Traceback" not in said, said
        for fifo in named[args[0]]:
            assert f"{fifo.name}: is a FIFO (named pipe)" in said or (
                args[0] == "workspace" and f"{fifo.name}" in said and "FIFO" in said
            ), (args, said)


@pytest.mark.parametrize("part", ["baselines", "baselines/recapture", "calibration", "targets"])
def test_a_part_of_the_workspace_that_is_no_folder_is_said_not_passed_over(workspace, run, part):
    """A file (or a FIFO) where a folder of the workspace belongs holds
    nothing that is read: `workspace` says so, and so does every command, as
    one warning naming it; the rest keeps working."""
    import shutil

    where = workspace / part
    if where.is_dir():  # the filled workspace's own folder, made a file
        shutil.rmtree(where)
    where.parent.mkdir(parents=True, exist_ok=True)
    if part == "targets":
        os.mkfifo(where)  # never opened: only looked at
        kind = "a FIFO (named pipe)"
    else:
        where.write_text("hardware,op\n")
        kind = "a file"
    said = f"{where}: is {kind}, not a folder; nothing in it is read"
    shown = run(workspace, "workspace")
    assert shown.exit_code == 0, shown.output
    assert f"  problem: {said}" in shown.output
    assert shown.output.count(said) == 1  # not again as a warning
    listed = run(workspace, "workspace", "--json")
    assert json.loads(listed.stdout)["problems"] == [said]
    answered = run(workspace, *EXPLAIN[:-1], "host_intel_xeon_2c_1t")
    assert answered.exit_code == 0, answered.output
    assert said in answered.output  # a warning, once
    assert answered.output.count(said) == 1


def test_a_workspace_of_folders_has_no_problem(workspace, run):
    for part in ("baselines/recapture", "calibration", "targets"):
        (workspace / part).mkdir(parents=True, exist_ok=True)
    listed = run(workspace, "workspace", "--json")
    assert json.loads(listed.stdout)["problems"] == []


@pytest.mark.parametrize("kind", ["fifo", "dangling link"])
def test_a_calibration_that_is_no_file_makes_its_target_unusable_not_uncalibrated(
    workspace, run, kind
):
    """A FIFO (never opened) or a link that leads nowhere where the workspace
    target's calibration belongs is an error for every command that uses
    the target (never its datasheet's answers with a warning), and
    `graphsval workspace` shows it and exits 0."""
    path = calibration_path(workspace, KEY)
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
        what = "is a FIFO (named pipe), not a file"
    else:
        path.symlink_to(workspace / "nowhere" / "x.json")
        what = "is a link that leads nowhere (or round in a loop), not a file"
    line = _one_error(run(workspace, *EXPLAIN))
    assert line == f"Error: workspace calibration {path}: {what}; fix or remove it"
    shown = run(workspace, "workspace")
    assert shown.exit_code == 0, shown.output
    assert f"NOT LOADED: workspace calibration {path}: {what}" in shown.output
    assert f"calibration/{path.name}  NOT READ: {what}; left out" in shown.output
    other = run(workspace, *EXPLAIN[:-1], "host_intel_xeon_2c_1t")  # other targets answer
    assert other.exit_code == 0, other.output
    assert f"target {KEY!r} is unusable until it is fixed or removed" in other.output


def test_a_workspace_that_is_a_link_leading_nowhere_is_said(tmp_path, run):
    ws = tmp_path / "ws"
    ws.symlink_to(tmp_path / "nowhere")
    said = f"{ws}: is a link that leads nowhere, not a folder; nothing in it is read"
    shown = run(ws, "workspace")
    assert shown.exit_code == 0, shown.output
    assert f"  problem: {said}" in shown.output
    assert "does not exist yet" not in shown.output  # it is there: a link
    answered = run(ws, "targets")
    assert answered.exit_code == 0 and said in answered.output


@pytest.mark.parametrize("part", ["", "targets", "calibration", "baselines"])
def test_a_workspace_folder_that_cannot_be_read_stops_every_command(
    workspace, run, monkeypatch, part
):
    """An unreadable ``targets/`` used to leave the installed target in the
    workspace's one's place, with a warning; ``calibration/`` the datasheet's
    answers. Each is one line naming the folder, exit 2 (permissions are
    faked: a test run as root reads any folder)."""
    import graphsval_core.workspace.location as location

    (workspace / part).mkdir(parents=True, exist_ok=True)
    denied = workspace / part
    real = os.listdir

    def listdir(path="."):
        if os.fspath(path) == os.fspath(denied):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real(path)

    monkeypatch.setattr(location.os, "listdir", listdir)
    _refused_everywhere(workspace, run, denied)


@pytest.mark.parametrize("part", ["targets", "calibration"])
def test_a_workspace_folder_listed_but_not_searched_stops_every_command(
    workspace, run, monkeypatch, part
):
    """Read but no search permission (chmod 644): its names list, its files
    do not open, and the calibration's hook left the target uncalibrated
    with a warning (from the newcomer's second run)."""
    import graphsval_core.workspace.location as location

    denied = workspace / part
    denied.mkdir(parents=True, exist_ok=True)
    (denied / "a.json").write_text("{}")
    real = os.stat

    def stat(path, *args, **kwargs):
        if os.path.dirname(os.fspath(path)) == os.fspath(denied):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(location.os, "stat", stat)
    _refused_everywhere(workspace, run, denied)


def _refused_everywhere(workspace, run, denied) -> None:
    for argv in (EXPLAIN, ("targets", "--hw", KEY), ("validate", "--hw", KEY, "-q")):
        line = _one_error(run(workspace, *argv))
        assert f"workspace {denied}: cannot be read (Permission denied)" in line, line
        assert "--workspace or GRAPHSVAL_WORKSPACE" in line


def test_the_listing_says_why_a_file_is_not_in_use_never_to_see_warnings_it_does_not_print(
    workspace, run
):
    """`graphsval workspace` prints no plugin warning, so each line says why
    itself: a calibration holding no target, one under a hidden name (never
    read: an editor's file), and, under -p no:workspace, a target and a
    calibration the run leaves out."""
    write_json(workspace / "calibration" / "x.calibration.json", {})
    write_json(workspace / "calibration" / ".x.calibration.json", {})
    write_json(calibration_path(workspace, KEY), _calibration())
    listed = run(workspace, "workspace")
    assert listed.exit_code == 0, listed.output
    assert (
        "calibration/x.calibration.json  NOT READ: names no target (a 'target' key is required)"
        in listed.output
    )
    assert "calibration/.x.calibration.json  a hidden file (its name starts with '.')" in (
        listed.output
    )
    assert f"calibration/{KEY}.calibration.json  {KEY}: applied" in listed.output
    blocked = run(workspace, "-p", "no:workspace", "workspace")
    assert blocked.exit_code == 0, blocked.output
    out = " ".join(blocked.output.split())  # wrapped to the screen
    assert "see the warnings" not in out and "None:" not in out
    assert "left out of this run by -p no:workspace" in out.split(" targets (")[0]
    left = ": -p no:workspace leaves the workspace out"
    assert f"targets/{KEY}.target.json not registered{left}" in out
    assert f"calibration/{KEY}.calibration.json {KEY}: not applied{left}" in out
    assert json.loads(run(workspace, "-p", "no:workspace", "workspace", "--json").stdout)[
        "left_out"
    ]
