"""The files a capture may touch: never a file that is not a capture of the
same target and op (not even with --force), an older capture's columns
upgraded, and the recapture's reconciliation of disagreeing shapes."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from graphsval_core.files.baseline import BaselineFileError, read_baseline
from graphsval_core.measure.capture import CaptureItem, capture, measurement_row
from graphsval_core.measure.capture_file import COLUMNS
from graphsval_core.measure.protocol import CaptureSettings
from graphsval_core.measure.recapture import MAX_RECAPTURE_REMEASURES, reconcile
from graphsval_core.plugins.records import Measurement

SETTINGS = CaptureSettings(max_time_per_shape_s=1.0, threads=1)
ITEMS = [CaptureItem((n,), "fp32") for n in (100, 200)]


def _measure(item: CaptureItem, settings: CaptureSettings) -> Measurement:
    return Measurement(latency_s=1e-6 * item.dims[0], energy_j=None, trial_count=3, notes="")


def _capture(out: Path, force: bool = False, items=ITEMS, measure=_measure):
    return capture(
        hardware="h",
        op="vector_add",
        purpose="validation",
        items=items,
        out=out,
        measure=measure,
        settings=SETTINGS,
        force=force,
    )


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.parametrize(
    "content",
    [
        b"my notes, one line",  # one line, no newline: used to be overwritten
        b"line one\nline two\nlast line without newline",  # its last line used to be cut
        b"hardware,op,shape\nh,vector_add,100\n",  # a CSV, but not a capture's
        b"\xff\xfe not text",
    ],
)
@pytest.mark.parametrize("force", [False, True])
def test_a_file_that_is_not_a_capture_is_never_modified(tmp_path, content, force):
    out = tmp_path / "notes.csv"
    out.write_bytes(content)
    with pytest.raises(BaselineFileError, match="refusing to modify it"):
        _capture(out, force=force)
    assert out.read_bytes() == content


@pytest.mark.parametrize("force", [False, True])
def test_a_capture_of_another_target_or_op_is_never_modified(tmp_path, force):
    out = tmp_path / "other.csv"
    capture(
        hardware="other",
        op="vector_add",
        purpose="validation",
        items=ITEMS,
        out=out,
        measure=_measure,
        settings=SETTINGS,
    )
    before = out.read_bytes()
    with pytest.raises(BaselineFileError, match="holds other vector_add rows, not h vector_add"):
        _capture(out, force=force)
    assert out.read_bytes() == before


def test_force_re_measures_a_capture_of_the_same_target_and_op(tmp_path):
    out = tmp_path / "c.csv"
    _capture(out)
    again = _capture(out, force=True)
    assert again.measured == 2 and again.skipped == 0 and len(_rows(out)) == 2


def test_an_older_captures_columns_are_upgraded_and_resumed(tmp_path):
    out = tmp_path / "old.csv"
    old = [c for c in COLUMNS if c not in ("suspect", "remeasured", "first_latency_s")]
    with out.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=old)
        writer.writeheader()
        writer.writerow(
            {"hardware": "h", "op": "vector_add", "shape": "100", "dtype": "fp32"}
            | {"latency_s": "1.0e-04", "trial_count": "3", "purpose": "validation"}
        )
    summary = _capture(out)
    assert summary.skipped == 1 and summary.measured == 1
    rows = _rows(out)
    assert list(rows[0]) == list(COLUMNS) and [r["shape"] for r in rows] == ["100", "200"]


def test_a_failed_shape_is_written_with_no_trials_and_reads_back(tmp_path):
    """A measurer's failed shape, whatever trials it says it ran, is written
    with a trial count of 0: the reader refuses trials beside no latency."""
    failed = Measurement(latency_s=None, energy_j=None, trial_count=7, notes="failed: timed out")
    row = measurement_row("h", "vector_add", ITEMS[0], "validation", failed, 0.0)
    assert row["latency_s"] == "" and row["trial_count"] == 0
    out = tmp_path / "f.csv"
    summary = _capture(
        out, measure=lambda item, s: failed if item.dims == (100,) else _measure(item, s)
    )
    assert summary.failed == 1 and summary.measured == 1
    assert [r["trial_count"] for r in _rows(out)] == ["0", "3"]
    rows = read_baseline(out).rows
    assert [(r.failed, r.trial_count) for r in rows] == [(True, 0), (False, 3)]


def test_a_measurers_text_is_written_one_line_and_reads_back(tmp_path):
    """A note, an error's message or a device name holding a control
    character (an escape sequence, a tab, a right-to-left override) is
    written as Python writes it: the reader refuses a cell holding one, and
    the capture never writes a file its reader refuses."""

    def measure(item: CaptureItem, settings: CaptureSettings) -> Measurement:
        if item.dims == (200,):
            raise RuntimeError("bad\tkernel \x1b[31mred")
        return Measurement(
            latency_s=1e-4,
            energy_j=None,
            trial_count=3,
            notes="sensor \x1b]0;title\x07 gone",
            extras={
                "device": "cpu\tmodel \u202eevil",
                "numerics": "ok",
                # a device's own name in the fingerprint (the CUDA and Jetson plugins add
                # gpu_name, driver_version, l4t as the device gives them)
                "fingerprint": {"gpu_name": "Xeon\tGold", "l4t\x1b": 36, "cores": 2},
            },
        )

    out = tmp_path / "c.csv"
    summary = _capture(out, measure=measure)
    assert summary.failed == 1 and summary.measured == 1
    rows = read_baseline(out).rows
    assert [r.notes for r in rows] == [
        "sensor \\x1b]0;title\\x07 gone",
        "failed: RuntimeError: bad\\tkernel \\x1b[31mred",
    ]
    assert rows[0].extras["device"] == "cpu\\tmodel \\u202eevil"
    assert json.loads(rows[0].extras["fingerprint"]) == {
        "cores": 2,
        "gpu_name": "Xeon\\tGold",
        "l4t\\x1b": 36,
    }


@pytest.mark.parametrize("trials", [0, -2, None, 2.5, True, "3"])
def test_a_latency_with_no_count_of_trials_is_written_as_a_failed_shape(tmp_path, trials):
    """A measurer giving a latency but no count of at least one trial (a
    plugin's bug) was written as is, a row the reader refuses (or, with no
    count, the rounds' sum failed): the shape is written failed, the note
    saying why, and the file reads back."""
    import numpy as np

    def measure(item: CaptureItem, settings: CaptureSettings) -> Measurement:
        count = trials if item.dims == (100,) else np.int64(4)  # a numpy count is a count
        return Measurement(latency_s=1e-4, energy_j=None, trial_count=count, notes="")

    out = tmp_path / "t.csv"
    summary = _capture(out, measure=measure)
    assert summary.failed == 1 and summary.measured == 1
    rows = read_baseline(out).rows
    assert [(r.failed, r.trial_count) for r in rows] == [(True, 0), (False, 4)]
    assert rows[0].notes == (
        f"failed: the measurer gave a latency with trial_count {trials!r}, not a count of at "
        "least 1"
    )


def _pair(tmp_path: Path, recaptured: dict[int, float]) -> tuple[Path, Path]:
    main, again = tmp_path / "main.csv", tmp_path / "recapture" / "main.csv"
    again.parent.mkdir()
    _capture(main)
    _capture(
        again,
        measure=lambda item, s: Measurement(
            latency_s=recaptured.get(item.dims[0], 1e-6 * item.dims[0]),
            energy_j=None,
            trial_count=3,
            notes="",
        ),
    )
    return main, again


def test_recapture_settles_a_disagreement_with_a_re_measure(tmp_path):
    main, again = _pair(tmp_path, {200: 300e-6})  # 200 recaptured 50% slower
    calls = []

    def remeasure(item):
        calls.append(item.shape)
        return 205e-6

    done = reconcile(main, again, "h", "vector_add", ITEMS, lambda item: 0.2, remeasure)
    assert (done.compared, done.agree_first, done.disagreed, done.remeasures) == (2, 1, 1, 1)
    assert calls == ["200"] and not done.unsettled
    rows = {r["shape"]: r for r in _rows(main)}
    assert float(rows["200"]["first_latency_s"]) == pytest.approx(200e-6)  # kept for the ceiling
    assert float(rows["200"]["latency_s"]) == pytest.approx(205e-6)  # median of 200, 300, 205
    assert rows["200"]["remeasured"] == "1" and not rows["200"]["suspect"]
    assert rows["100"]["first_latency_s"] == ""  # agreed: untouched
    assert float(_rows(again)[1]["latency_s"]) == pytest.approx(300e-6)  # recapture unchanged
    # a rerun does not measure the settled shape again
    rerun = reconcile(main, again, "h", "vector_add", ITEMS, lambda i: 0.2, remeasure)
    assert rerun.remeasures == 0


def test_recapture_marks_a_shape_that_never_settles_suspect(tmp_path):
    main, again = _pair(tmp_path, {200: 300e-6})
    values = iter([500e-6, 700e-6])
    done = reconcile(main, again, "h", "vector_add", ITEMS, lambda i: 0.2, lambda i: next(values))
    assert done.remeasures == MAX_RECAPTURE_REMEASURES and len(done.unsettled) == 1
    row = {r["shape"]: r for r in _rows(main)}["200"]
    assert row["suspect"].startswith("latency: capture, recapture and 2 re-measure(s) disagree")
    assert row["latency_s"]  # kept, never dropped


def test_force_keeps_the_rows_it_does_not_measure_again(tmp_path):
    out = tmp_path / "c.csv"
    _capture(out)
    again = _capture(out, force=True, items=ITEMS[:1])
    assert again.measured == 1 and [r["shape"] for r in _rows(out)] == ["100", "200"]


def test_the_journal_of_another_capture_is_refused(tmp_path):
    out = tmp_path / "c.csv"
    journal = out.with_name(out.name + ".journal.jsonl")
    journal.write_text(
        json.dumps({"journal_of": {"hardware": "h", "op": "matmul", "threads": "1"}}) + "\n"
    )
    before = journal.read_bytes()
    with pytest.raises(BaselineFileError, match="the journal of another capture"):
        _capture(out)
    assert journal.read_bytes() == before and not out.exists()


def test_a_ctrl_c_while_settling_keeps_what_was_settled(tmp_path):
    main, again = _pair(tmp_path, {100: 150e-6, 200: 300e-6})  # both disagree

    def remeasure(item):
        if item.dims == (200,):
            raise KeyboardInterrupt
        return 102e-6

    with pytest.raises(KeyboardInterrupt):
        reconcile(main, again, "h", "vector_add", ITEMS, lambda i: 0.2, remeasure)
    rows = {r["shape"]: r for r in _rows(main)}
    assert rows["100"]["first_latency_s"] and rows["100"]["remeasured"] == "1"  # settled, kept
    assert rows["200"]["first_latency_s"] == "" and rows["200"]["suspect"] == ""  # untouched


def test_a_capture_through_a_link_rewrites_the_file_it_leads_to_and_keeps_the_link(tmp_path):
    """write_sorted renamed its temp file over the path itself: a link to a
    capture became a regular file, the capture it led to left unsorted and
    stale. The file it leads to is rewritten, the link kept, as the shared
    atomic writer does."""
    from graphsval_core.measure.capture_file import write_sorted

    real = tmp_path / "real" / "mine.validation.csv"
    real.parent.mkdir()
    link = tmp_path / "link.csv"
    link.symlink_to(real)
    _capture(real, items=ITEMS[:1])
    _capture(link)  # resumes through the link, finalised (write_sorted) through it
    assert link.is_symlink() and link.resolve() == real.resolve()
    assert [r["shape"] for r in _rows(real)] == ["100", "200"]
    rows = {(r["shape"], r["dtype"]): r for r in _rows(real)}
    write_sorted(link, dict(reversed(list(rows.items()))))
    assert link.is_symlink() and [r["shape"] for r in _rows(real)] == ["100", "200"]
    assert sorted(p.name for p in real.parent.iterdir()) == ["mine.validation.csv"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.csv", "real"]
