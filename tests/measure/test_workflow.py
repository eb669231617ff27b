"""The capture workflow called directly with a fake measurer plugin: rows
written and summarised, a detected target recorded as its snapshot, the
progress display opened and closed, and the refusals as errors."""

from __future__ import annotations

import ast
import csv
import json
import os
from contextlib import contextmanager
from pathlib import Path

import pytest
from attrs import evolve
from click.testing import CliRunner

import graphsval_core.calibrate
import graphsval_core.measure
from graphsval_core.cli.main import cli
from graphsval_core.datamodel.errors import UserInputError
from graphsval_core.measure.protocol import CaptureSettings
from graphsval_core.measure.quiet import Load, QuietWatch
from graphsval_core.measure.workflow import (
    CaptureError,
    CaptureOptions,
    CaptureResult,
    capture_sweep,
)
from graphsval_core.model.reference import UnsupportedDtypeError
from graphsval_core.plugins.loader import build_registry
from graphsval_core.plugins.records import Measurement, ProbeResult
from graphsval_core.plugins.registry import UnknownNameError
from graphsval_core.workspace.location import ENV_WORKSPACE

SHAPES = [512, 256, 1024, 2048]


@pytest.fixture
def sweep(tmp_path):
    path = tmp_path / "toy_sweep.json"
    entries = [{"shape": [n], "dtype": "fp32", "regime_per_hw": {}} for n in SHAPES]
    entries.append({"shape": [64], "dtype": "bf16", "regime_per_hw": {}})  # not on the toy
    path.write_text(json.dumps({"op": "vector_add", "purpose": "calibration", "shapes": entries}))
    return path


@pytest.fixture
def toy(make_plugin, make_target):
    """A registry whose one plugin measures ``toy_target`` (and the detected
    ``toy_host``, recorded as ``toy_snap``) unless told it cannot; the calls
    it received are in ``calls``."""
    calls: list[tuple[str, tuple[int, ...], str, CaptureSettings]] = []
    here = {"available": True}

    def probe(target):
        return ProbeResult(here["available"], "no toy silicon here")

    def measure(target, op, shape, dtype, settings):
        calls.append((target.key, shape, dtype, settings))
        return Measurement(latency_s=1e-9 * shape[0], energy_j=None, trial_count=7, notes="toy")

    def snapshot(target, settings):
        return evolve(target, key="toy_snap", detected=False)

    targets = [make_target(), make_target("toy_host", detected=True)]
    plugin = make_plugin(
        "toy",
        lambda: targets,
        graphsval_measurer_probe=probe,
        graphsval_measure=measure,
        graphsval_snapshot_target=snapshot,
    )
    registry = build_registry(autoload=False, extra_plugins=[("toy", plugin)])
    return registry, calls, here, plugin


class QuietMachine(QuietWatch):
    """A machine that is always quiet, and says so at once."""

    def load_now(self, seconds: float = 0.0) -> Load | None:
        return Load(0.0, 0.0, seconds)

    def mark(self) -> None:
        pass

    def since_mark(self) -> Load | None:
        return Load(0.0, 0.0, 1.0)


@pytest.fixture(autouse=True)
def _quiet(monkeypatch):
    """The workflow's own watch sees a quiet machine, whatever the test machine
    is doing (the watch itself is tested on fake /proc/stat files)."""
    monkeypatch.setattr("graphsval_core.measure.workflow.QuietWatch", QuietMachine)


def _options(tmp_path, sweep, target="toy_target", **kw):
    return CaptureOptions(
        target=target,
        op="vector_add",
        purpose="calibration",
        sweep_file=str(sweep),
        out=str(tmp_path / "toy.csv"),
        settings=CaptureSettings(max_time_per_shape_s=0.5, threads=2),
        **kw,
    )


def _rows(path):
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def test_capture_writes_the_rows_and_returns_the_summary(toy, sweep, tmp_path):
    registry, calls, *_ = toy
    opened: list[tuple[str, int]] = []
    closed: list[bool] = []

    @contextmanager
    def progress(plan, visits):
        opened.append((plan.record_as.key, len(visits)))
        yield visits
        closed.append(True)

    result = capture_sweep(
        registry, _options(tmp_path, sweep, limit=3), progress=progress, watch=QuietMachine()
    )
    assert isinstance(result, CaptureResult)
    assert result.record_as.key == "toy_target" and result.spec_path is None
    assert result.out == tmp_path / "toy.csv"
    # a sample spread over sizes (the smallest, the largest and one between), in sweep order
    assert [c[1] for c in calls] == [(256,), (1024,), (2048,)]
    assert {c[3].threads for c in calls} == {2}
    summary = result.summary
    assert (summary.planned, summary.measured, summary.failed, summary.rows) == (3, 3, 0, 3)
    assert opened == [("toy_target", 3)] and closed == [True]
    rows = _rows(result.out)
    assert [r["shape"] for r in rows] == ["256", "1024", "2048"]
    assert {r["hardware"] for r in rows} == {"toy_target"}
    assert {r["purpose"] for r in rows} == {"calibration"}
    assert float(rows[0]["latency_s"]) == pytest.approx(256e-9)
    again = capture_sweep(registry, _options(tmp_path, sweep), watch=QuietMachine())  # resumes
    assert (again.summary.skipped, again.summary.measured, again.summary.rows) == (3, 1, 4)
    assert calls[-1][1] == (512,)


def test_a_detected_target_is_recorded_as_its_snapshot(toy, sweep, tmp_path):
    registry, calls, *_ = toy
    plans = []
    result = capture_sweep(
        registry,
        _options(tmp_path, sweep, target="toy_host", limit=1),
        on_plan=plans.append,
        watch=QuietMachine(),
    )
    assert [p.record_as.key for p in plans] == ["toy_snap"] and plans[0].target.key == "toy_host"
    # the spec goes into the workspace, where every command finds it
    workspace = Path(os.environ[ENV_WORKSPACE])
    assert result.spec_path == workspace / "targets" / "toy_snap.target.json"
    assert json.loads(result.spec_path.read_text())["key"] == "toy_snap"
    assert calls == [("toy_snap", (1024,), "fp32", calls[0][3])]  # the middle size
    assert {r["hardware"] for r in _rows(result.out)} == {"toy_snap"}


def test_a_capture_written_elsewhere_records_as_the_installed_snapshot(
    toy, sweep, tmp_path, make_plugin, make_target
):
    # a plugin ships the snapshot's key as a target (with its calibration): a capture
    # to --out records as it and writes no workspace copy, which would replace it
    _, calls, _, plugin = toy
    shipped = make_plugin("shipped", lambda: [make_target("toy_snap")])
    registry = build_registry(autoload=False, extra_plugins=[("toy", plugin), ("ship", shipped)])
    options = _options(tmp_path, sweep, target="toy_host", limit=1)
    result = capture_sweep(registry, options, watch=QuietMachine())
    workspace = Path(os.environ[ENV_WORKSPACE])
    assert result.spec_path is None and not (workspace / "targets").exists()
    assert {r["hardware"] for r in _rows(result.out)} == {"toy_snap"}
    # into the workspace (no --out), the workspace's own target is written as before
    into = capture_sweep(registry, evolve(options, out=None), watch=QuietMachine())
    assert into.spec_path == workspace / "targets" / "toy_snap.target.json"
    assert calls and all(c[0] == "toy_snap" for c in calls)


def test_capture_refuses_an_unmeasurable_target(toy, sweep, tmp_path):
    registry, calls, here, _ = toy
    here["available"] = False
    with pytest.raises(CaptureError) as refused:
        capture_sweep(registry, _options(tmp_path, sweep))
    assert str(refused.value) == "cannot measure toy_target on this machine: no toy silicon here"
    assert isinstance(refused.value, UserInputError)
    assert calls == [] and not (tmp_path / "toy.csv").exists()


def test_capture_names_the_bad_option(toy, sweep, tmp_path):
    registry, calls, *_ = toy
    with pytest.raises(UnknownNameError, match="unknown target 'nope'"):
        capture_sweep(registry, _options(tmp_path, sweep, target="nope"))
    with pytest.raises(UnsupportedDtypeError) as dtype:
        capture_sweep(registry, _options(tmp_path, sweep, dtypes=("bf16",)))
    assert str(dtype.value) == "toy_target has no bf16 (it has fp32)"
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps({"op": "vector_add", "shapes": []}))
    with pytest.raises(CaptureError, match=f"^no entry of {empty} runs on toy_target$"):
        capture_sweep(registry, _options(tmp_path, empty))
    assert calls == []


def test_the_command_renders_the_result_and_flags_the_bad_option(
    toy, sweep, tmp_path, fake_entry_points, make_entry_point
):
    plugin = toy[3]
    fake_entry_points(make_entry_point("toy", lambda: plugin, "graphsval-toy"))
    out = tmp_path / "cli.csv"
    common = ["--op", "vector_add", "--purpose", "calibration", "--sweep", str(sweep)]
    quiet = ["--allow-busy", "--max-wait", "0"]
    run = CliRunner().invoke(
        cli, ["capture", "--hw", "toy_host", *common, *quiet, "--limit", "2", "--out", str(out)]
    )
    assert run.exit_code == 0, run.output
    lines = run.stdout.splitlines()
    spec = Path(os.environ[ENV_WORKSPACE]) / "targets" / "toy_snap.target.json"
    assert lines[0] == f"toy_host is detected: recording as toy_snap (spec: {spec})"
    assert lines[1].startswith(f"writing {out}: 2 shapes x 5 round(s), about ")
    assert lines[2].startswith(
        f"{out}: 2 rows; this run measured 2, failed 0, incorrect 0, skipped 0 already measured"
    )
    bad_dtype = CliRunner().invoke(cli, ["capture", "--hw", "toy_target", *common, "--dtype", "x"])
    assert bad_dtype.exit_code == 2
    assert "Invalid value for '--dtype': toy_target has no x (it has fp32)" in bad_dtype.output
    bad_hw = CliRunner().invoke(cli, ["capture", "--hw", "nope", *common])
    assert bad_hw.exit_code == 2
    assert "Invalid value for '--hw': unknown target 'nope'" in bad_hw.output


def _imported(package) -> set[str]:
    """Every module the files of ``package`` import, at any depth in their code."""
    names: set[str] = set()
    for path in Path(package.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                names.add(node.module)
            elif isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
    return names


@pytest.mark.parametrize("package", [graphsval_core.measure, graphsval_core.calibrate])
def test_the_workflows_draw_nothing_and_import_no_command(package):
    imported = _imported(package)
    assert not {n for n in imported if n == "click" or n.startswith("graphsval_core.cli")}


def test_an_output_that_is_a_folder_or_has_no_folder_is_refused_before_anything_is_written(
    toy, sweep, tmp_path
):
    registry, calls, _, _ = toy
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    for out, message in ((out_dir, "is a folder"), (out_dir / "no" / "x.csv", "no such folder")):
        options = evolve(_options(tmp_path, sweep, target="toy_host"), out=str(out))
        with pytest.raises(CaptureError, match=message):
            capture_sweep(registry, options)
    assert list(out_dir.iterdir()) == [] and calls == []  # no spec, no row, no measurement


def test_a_measurer_that_raises_leaves_its_reason_in_the_row(
    make_plugin, make_target, sweep, tmp_path
):
    """A failed measurement is the row's outcome, with the measurer's own error,
    not a plugin problem: the capture goes on, in strict mode too."""

    def measure(target, op, shape, dtype, settings):
        if shape[0] == 1024:
            raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return Measurement(latency_s=1e-6, energy_j=None, trial_count=3, notes="")

    def probe(target):
        raise ValueError("the probe itself is broken")

    plugin = make_plugin(
        "toy", lambda: [make_target()], graphsval_measure=measure, graphsval_measurer_probe=probe
    )
    registry = build_registry(autoload=False, strict=True, extra_plugins=[("toy", plugin)])
    probed = registry.measurer_probe(registry.target("toy_target"))
    assert not probed.available
    assert "failed in hook graphsval_measurer_probe: ValueError: the probe itself" in probed.reason

    working = make_plugin(
        "toy",
        lambda: [make_target()],
        graphsval_measure=measure,
        graphsval_measurer_probe=lambda target: ProbeResult(True, ""),
    )
    registry = build_registry(autoload=False, strict=True, extra_plugins=[("toy", working)])
    result = capture_sweep(registry, _options(tmp_path, sweep))
    rows = {r["shape"]: r for r in _rows(result.out)}
    assert rows["1024"]["latency_s"] == "" and result.summary.failed == 1
    assert rows["1024"]["notes"].startswith("failed: out of memory (RuntimeError: CUDA out of")
    assert rows["512"]["latency_s"] and registry.problems == []


class BusyMachine(QuietMachine):
    def load_now(self, seconds: float = 0.0) -> Load | None:
        return Load(1.6, 0.0, 1.0)


def test_a_busy_machine_is_refused_unless_allowed(toy, sweep, tmp_path):
    registry, calls, *_ = toy
    with pytest.raises(CaptureError, match=r"^machine busy: other processes used 1.60 CPU"):
        capture_sweep(registry, _options(tmp_path, sweep), watch=BusyMachine())
    assert calls == [] and not (tmp_path / "toy.csv").exists()
    warned: list[str] = []
    result = capture_sweep(
        registry,
        _options(tmp_path, sweep, allow_busy=True),
        watch=BusyMachine(),
        echo=warned.append,
    )
    assert result.summary.measured == 4
    assert warned and "--allow-busy given" in warned[0] and result.summary.busy_warning


def test_captures_go_into_the_workspace_by_purpose_and_recapture(toy, sweep, tmp_path):
    registry, calls, *_ = toy
    workspace = Path(os.environ[ENV_WORKSPACE])
    options = evolve(_options(tmp_path, sweep), out=None, purpose="validation", rounds=3)
    first = capture_sweep(registry, options, watch=QuietMachine())
    assert first.out == workspace / "baselines" / "toy_target_vector_add.validation.csv"
    calibration = capture_sweep(
        registry, evolve(options, purpose="calibration"), watch=QuietMachine()
    )
    assert calibration.out.name == "toy_target_vector_add.calibration.csv"  # not appended
    order = [c[1] for c in calls]
    again = capture_sweep(registry, evolve(options, recapture=True), watch=QuietMachine())
    assert again.out == workspace / "baselines" / "recapture" / first.out.name
    assert again.plan.main == first.out
    assert again.reconciled is not None and again.reconciled.compared == 4
    assert again.reconciled.agree_first == 4  # the toy measures the same every time
    recaptured = [c[1] for c in calls[len(order) :]]
    assert sorted(recaptured) == sorted(order[: len(recaptured)])
    assert recaptured[:4] != order[:4]  # another order
    with pytest.raises(CaptureError, match="--recapture captures the validation set again"):
        capture_sweep(registry, evolve(options, purpose="calibration", recapture=True))


def test_a_recapture_needs_its_capture(toy, sweep, tmp_path):
    registry, *_ = toy
    options = evolve(_options(tmp_path, sweep), out=None, purpose="validation", recapture=True)
    with pytest.raises(CaptureError, match="no capture .* to compare with"):
        capture_sweep(registry, options, watch=QuietMachine())


def test_the_quick_campaign_plans_every_set_of_every_op(toy, tmp_path):
    from graphsval_core.measure.campaign import FULL, QUICK, campaign_options, plan_campaign

    registry, *_ = toy
    workspace = Path(os.environ[ENV_WORKSPACE])

    def plan(size):
        options = campaign_options(
            "toy_target",
            ("vector_add",),
            size,
            threads=1,
            workspace=str(workspace),
            allow_busy=False,
            max_wait_s=0,
        )
        return plan_campaign(registry, options)

    steps = plan(QUICK)
    assert [s.label for s in steps] == [
        "vector_add calibration",
        "vector_add validation",
        "vector_add recapture",
    ]
    whole = plan(FULL)
    # the sample, or the whole set where it holds fewer entries
    assert len(steps[0].plan.items) == min(QUICK.calibration, len(whole[0].plan.items))
    assert len(steps[1].plan.items) == min(QUICK.validation, len(whole[1].plan.items))
    assert len(steps[1].plan.items) < len(whole[1].plan.items)
    assert all(s.estimate_s > 0 for s in steps)
    assert steps[1].plan.out.name == "toy_target_vector_add.validation.csv"


def test_the_command_refuses_to_touch_a_file_that_is_not_a_capture(
    toy, sweep, tmp_path, fake_entry_points, make_entry_point
):
    plugin = toy[3]
    fake_entry_points(make_entry_point("toy", lambda: plugin, "graphsval-toy"))
    notes = tmp_path / "notes.txt"
    notes.write_text("a line I care about")
    common = ["--op", "vector_add", "--purpose", "calibration", "--sweep", str(sweep)]
    for force in ([], ["--force"]):
        run = CliRunner().invoke(
            cli,
            ["capture", "--hw", "toy_target", *common, "--allow-busy", "--out", str(notes), *force],
        )
        assert run.exit_code == 2, run.output
        assert f"{notes}: not a baseline written by graphsval capture" in run.output
        assert "Traceback" not in run.output
        assert notes.read_text() == "a line I care about"


def test_more_threads_than_the_machine_has_is_refused(make_plugin, make_target, sweep, tmp_path):
    calls = []
    host = make_target("cpu_host", detected=True, family="cpu")
    plugin = make_plugin(
        "cpuish",
        lambda: [host],
        graphsval_measurer_probe=lambda target: ProbeResult(True, ""),
        graphsval_measure=lambda **kw: calls.append(kw),
    )
    registry = build_registry(autoload=False, extra_plugins=[("cpuish", plugin)])
    options = _options(tmp_path, sweep, target="cpu_host")
    options = evolve(options, settings=evolve(options.settings, threads=host.compute_units + 1))
    with pytest.raises(CaptureError, match=r"^--threads \d+: cpu_host has \d+ usable CPU"):
        capture_sweep(registry, options)
    assert calls == []


def test_a_workspace_that_is_a_file_is_one_line(tmp_path):
    not_a_folder = tmp_path / "ws.txt"
    not_a_folder.write_text("mine")
    for args in (["targets"], ["validate"], ["workspace"]):
        run = CliRunner().invoke(cli, ["--workspace", str(not_a_folder), *args])
        assert run.exit_code == 2, run.output
        assert f"workspace {not_a_folder} (--workspace) is a file, not a folder" in run.output
        assert "Traceback" not in run.output
    assert not_a_folder.read_text() == "mine"
    fifo = tmp_path / "ws.fifo"
    os.mkfifo(fifo)  # only looked at, never opened
    run = CliRunner().invoke(cli, ["--workspace", str(fifo), "workspace"])
    assert run.exit_code == 2, run.output
    assert f"workspace {fifo} (--workspace) is a FIFO (named pipe), not a folder" in run.output
