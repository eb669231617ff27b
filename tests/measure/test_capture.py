"""Capture for real on this machine: rows, resume after SIGKILL, failures,
interleaved rounds, and a deliberately wrong kernel caught by the check."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from graphsval_core.datamodel.op import OpSpec
from graphsval_core.files.baseline import read_baseline
from graphsval_core.measure.capture import COLUMNS, CaptureItem, capture, finalize
from graphsval_core.measure.protocol import CaptureSettings
from graphsval_core.measure.workloads import Workload, build_workload
from graphsval_core.plugins.loader import build_registry

FAST = CaptureSettings(target_ci=0.2, max_time_per_shape_s=0.05, min_block_s=1e-4, threads=1)


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def registry():
    return build_registry()


def _measure(registry, hw: str, op: str):
    target, op_spec = registry.target(hw), registry.op(op)
    return lambda item, opts: registry.measure(target, op_spec, item.dims, item.dtype, opts)


def test_capture_tiny_host_shapes(registry, tmp_path):
    items = [CaptureItem((n,), "fp32") for n in (4096, 256, 1024)] + [CaptureItem((512,), "bf16")]
    out = tmp_path / "host_vector_add.csv"
    summary = capture(
        hardware="host_test",
        op="vector_add",
        purpose="calibration",
        items=items,
        out=out,
        measure=_measure(registry, "host_cpu", "vector_add"),
        settings=FAST,
    )
    assert summary.measured == 4 and summary.failed == 0 and summary.rows == 4
    rows = _rows(out)
    # sorted by dtype then dims, V4 columns first
    assert [(r["dtype"], r["shape"]) for r in rows] == [
        ("bf16", "512"),
        ("fp32", "256"),
        ("fp32", "1024"),
        ("fp32", "4096"),
    ]
    assert list(rows[0])[:8] == [
        "hardware",
        "op",
        "shape",
        "dtype",
        "latency_s",
        "energy_j",
        "trial_count",
        "notes",
    ]
    for r in rows:
        assert float(r["latency_s"]) > 0 and r["verdict"] == "pass"
        assert r["threads"] == "1" and r["output_alloc"] == "fresh"
        assert r["purpose"] == "calibration" and r["schema_version"] == "2"
    assert read_baseline(out).purpose_source == "column"
    # a rerun skips everything already measured
    again = capture(
        hardware="host_test",
        op="vector_add",
        purpose="calibration",
        items=items,
        out=out,
        measure=_measure(registry, "host_cpu", "vector_add"),
        settings=FAST,
    )
    assert again.skipped == 4 and again.measured == 0
    assert _rows(out) == rows


def test_failed_shape_is_a_row_and_is_retried(registry, tmp_path):
    out = tmp_path / "f.csv"
    calls = {"n": 0}
    good = _measure(registry, "host_cpu", "vector_add")

    def flaky(item, opts):
        calls["n"] += 1
        if item.dims == (999,) and calls["n"] < 10:
            raise RuntimeError("CUDA out of memory. Tried to allocate 2 GiB")
        return good(item, opts)

    items = [CaptureItem((999,), "fp32"), CaptureItem((100,), "fp32")]
    first = capture(
        hardware="h",
        op="vector_add",
        purpose="validation",
        items=items,
        out=out,
        measure=flaky,
        settings=FAST,
    )
    assert first.failed == 1 and first.measured == 1
    failed = [r for r in _rows(out) if r["shape"] == "999"][0]
    assert failed["latency_s"] == "" and failed["notes"].startswith("failed: out of memory")
    calls["n"] = 100  # the retry succeeds
    second = capture(
        hardware="h",
        op="vector_add",
        purpose="validation",
        items=items,
        out=out,
        measure=flaky,
        settings=FAST,
    )
    assert second.skipped == 1 and second.measured == 1
    rows = _rows(out)
    assert len(rows) == 2 and all(r["latency_s"] for r in rows)


def _bad_add_op() -> OpSpec:
    """vector_add whose kernel is off by 1%: the check must catch it."""
    base = build_registry(autoload=False).op("vector_add")

    def build(dims, dtype, device="cpu", **kw):
        real = build_workload("vector_add", tuple(dims), dtype, device, **kw)
        return Workload(lambda: real.run() * 1.01, real.check, real.output_alloc)

    return OpSpec(
        name="bad_add",
        dims=base.dims,
        operand_elements=base.operand_elements,
        working_set_operands=base.working_set_operands,
        flops=base.flops,
        build=build,
    )


def test_wrong_kernel_is_caught(registry, tmp_path):
    target = registry.target("host_cpu")
    op = _bad_add_op()
    out = tmp_path / "bad.csv"
    summary = capture(
        hardware="h",
        op="bad_add",
        purpose="validation",
        items=[CaptureItem((4096,), "fp32")],
        out=out,
        settings=FAST,
        measure=lambda it, opts: registry.measure(target, op, it.dims, it.dtype, opts),
    )
    assert summary.incorrect == 1
    (row,) = _rows(out)
    assert row["verdict"] == "FAIL"
    assert "correctness check FAILED" in row["notes"]
    assert float(row["max_rel"]) == pytest.approx(0.01, rel=0.05)


def test_interleaved_rounds_take_the_median_and_resume(registry, tmp_path):
    out = tmp_path / "r.csv"
    seen: list[tuple[str, int]] = []
    good = _measure(registry, "host_cpu", "vector_add")

    def spy(item, opts):
        seen.append(item.shape)
        if len(seen) == 4:
            raise KeyboardInterrupt  # Ctrl-C in the middle of round 2
        return good(item, opts)

    items = [CaptureItem((n,), "fp32") for n in (128, 256, 512)]
    first = capture(
        hardware="h",
        op="vector_add",
        purpose="validation",
        items=items,
        out=out,
        measure=spy,
        settings=FAST,
        rounds=2,
        seed=5,
    )
    assert first.interrupted
    assert not out.exists() or _rows(out) == []
    journal = out.with_name(out.name + ".journal.jsonl")
    records = [line for line in journal.read_text().splitlines() if '"journal_of"' not in line]
    assert len(records) == 3  # round 1 done, nothing lost
    second = capture(
        hardware="h",
        op="vector_add",
        purpose="validation",
        items=items,
        out=out,
        measure=good,
        settings=FAST,
        rounds=2,
        seed=5,
    )
    assert second.measured == 3
    rows = _rows(out)
    assert sorted(r["shape"] for r in rows) == ["128", "256", "512"]
    assert all(r["rounds"] == "2" and r["round_spread_rel"] for r in rows)
    assert not journal.exists()
    # round 1 visited every shape before round 2 began, in a shuffled order
    assert sorted(seen[:3]) == ["128", "256", "512"]


def test_partial_last_line_is_dropped_on_resume(registry, tmp_path):
    out = tmp_path / "p.csv"
    good = _measure(registry, "host_cpu", "vector_add")
    capture(
        hardware="h",
        op="vector_add",
        purpose="validation",
        items=[CaptureItem((64,), "fp32")],
        out=out,
        measure=good,
        settings=FAST,
    )
    with out.open("a") as handle:
        handle.write("h,vector_add,128,fp32,1.0e-06,,5,,1,valid")  # a kill mid-write
    finalize(out, "h", "vector_add")
    assert [r["shape"] for r in _rows(out)] == ["64"]


SWEEP = {
    "op": "vector_add",
    "purpose": "calibration",
    "shapes": [{"shape": [256 + 64 * i], "dtype": "fp32", "regime_per_hw": {}} for i in range(40)],
}


def test_sigkill_mid_capture_loses_nothing_and_resumes(tmp_path):
    sweep = tmp_path / "tiny.json"
    sweep.write_text(json.dumps(SWEEP))
    out = tmp_path / "k.csv"
    cmd = [
        sys.executable,
        "-m",
        "graphsval_core",
        "capture",
        "--hw",
        "host_cpu",
        "--op",
        "vector_add",
        "--purpose",
        "calibration",
        "--sweep",
        str(sweep),
        "--threads",
        "1",
        "--max-time-per-shape",
        "0.2",
        "--target-ci",
        "0.5",
        "--rounds",
        "1",
        "--allow-busy",
        "--max-wait",
        "0",
        "--out",
        str(out),
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if out.exists() and len(out.read_text().splitlines()) >= 6:  # header + 5 rows
            break
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    before = {r["shape"]: r for r in _rows(out) if r["latency_s"]}
    assert len(before) >= 5
    read_baseline(out)  # valid as it stands
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    after = _rows(out)
    shapes = [r["shape"] for r in after]
    assert len(shapes) == 40 and len(set(shapes)) == 40  # nothing lost, nothing duplicated
    for shape, row in before.items():  # finished rows were kept, not re-measured
        match = next(r for r in after if r["shape"] == shape)
        assert match["latency_s"] == row["latency_s"]
    assert f"skipped {len(before)} already measured" in done.stdout
    assert list(_rows(out)[0]) == list(COLUMNS)


def test_journal_rounds_without_a_row_are_written_on_resume(registry, tmp_path):
    # killed after a shape's last round reached the journal but before its CSV row
    out = tmp_path / "j.csv"
    journal = out.with_name(out.name + ".journal.jsonl")
    rec = {
        "shape": "10",
        "dtype": "fp32",
        "latency_s": 2e-6,
        "energy_j": None,
        "trial_count": 5,
        "notes": "",
        "extras": {"verdict": "pass"},
    }
    journal.write_text("".join(json.dumps({**rec, "round": r}) + "\n" for r in (0, 1)))
    calls = []
    good = _measure(registry, "host_cpu", "vector_add")

    def spy(item, opts):
        calls.append(item.shape)
        return good(item, opts)

    items = [CaptureItem((10,), "fp32"), CaptureItem((20,), "fp32")]
    summary = capture(
        hardware="h",
        op="vector_add",
        purpose="validation",
        items=items,
        out=out,
        measure=spy,
        settings=FAST,
        rounds=2,
    )
    assert "10" not in calls  # not measured again
    assert sorted(r["shape"] for r in _rows(out)) == ["10", "20"]
    assert summary.measured == 2 and not journal.exists()


def test_failed_rounds_are_retried_on_resume(registry, tmp_path):
    out = tmp_path / "f.csv"
    good = _measure(registry, "host_cpu", "vector_add")
    state = {"n": 0}

    def flaky(item, opts):
        state["n"] += 1
        if item.shape == "20" and state["n"] < 3:
            raise RuntimeError("kernel error")
        if state["n"] == 3:
            raise KeyboardInterrupt
        return good(item, opts)

    items = [CaptureItem((10,), "fp32"), CaptureItem((20,), "fp32")]
    capture(
        hardware="h",
        op="vector_add",
        purpose="validation",
        items=items,
        out=out,
        measure=flaky,
        settings=FAST,
        rounds=2,
        seed=1,
    )
    capture(
        hardware="h",
        op="vector_add",
        purpose="validation",
        items=items,
        out=out,
        measure=good,
        settings=FAST,
        rounds=2,
        seed=1,
    )
    rows = {r["shape"]: r for r in _rows(out)}
    assert rows["20"]["latency_s"] and rows["10"]["latency_s"]


def test_kill_while_writing_the_header_resumes(registry, tmp_path):
    out = tmp_path / "h.csv"
    out.write_text("hardware,op,sha")  # cut mid-header
    summary = capture(
        hardware="h",
        op="vector_add",
        purpose="validation",
        items=[CaptureItem((64,), "fp32")],
        out=out,
        measure=_measure(registry, "host_cpu", "vector_add"),
        settings=FAST,
    )
    assert summary.measured == 1 and [r["shape"] for r in _rows(out)] == ["64"]
