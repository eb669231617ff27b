"""The capture at the noise floor with a scripted measurer and a scripted
machine: a stalled round is caught and measured again, a shape that will not
settle is kept and marked suspect, one whose rounds alternate between two
states is marked suspect, rounds measured while the machine was busy
are measured again after a wait, the plausibility check's entries reach the
row, and the sample and the outlier rule themselves."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from graphsval_core.measure.capture import CaptureItem, capture
from graphsval_core.measure.protocol import CaptureSettings
from graphsval_core.measure.quiet import Load, QuietWatch
from graphsval_core.measure.rounds import MAX_REMEASURES, outlier_rounds
from graphsval_core.measure.sample import spread_sample
from graphsval_core.plugins.records import Measurement

SETTINGS = CaptureSettings(max_time_per_shape_s=1.0, threads=1)


def _m(latency: float, ci: float = 0.01) -> Measurement:
    return Measurement(
        latency_s=latency, energy_j=None, trial_count=5, notes="", extras={"spread_ci_rel": ci}
    )


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


class Scripted:
    """A measurer: 1 us per element, except the visits ``stall`` names."""

    def __init__(self, stall=lambda item, n: False) -> None:
        self.visits: list[str] = []
        self.stall = stall

    def __call__(self, item: CaptureItem, settings: CaptureSettings) -> Measurement:
        self.visits.append(item.shape)
        n = sum(1 for v in self.visits if v == item.shape)
        base = 1e-6 * item.dims[0]
        return _m(base * 20 if self.stall(item, n) else base)


class Machine(QuietWatch):
    """A machine whose load is scripted: busy for the first ``busy_windows``
    windows; waiting takes no time."""

    def __init__(self, busy_windows: int = 0) -> None:
        super().__init__(max_wait_s=5.0, sleep=lambda s: None)
        self.busy_windows = busy_windows
        self.windows = 0

    def load_now(self, seconds: float = 1.0) -> Load | None:
        return Load(0.0, 0.0, seconds)

    def mark(self) -> None:
        pass

    def since_mark(self) -> Load | None:
        self.windows += 1
        busy = self.windows <= self.busy_windows
        return Load(1.5 if busy else 0.0, 0.0, 1.0)

    def wait(self) -> tuple[float, Load | None]:
        self.waits += 1
        self.waited_s += 2.0
        return 2.0, Load(0.0, 0.0, 1.0)


def _capture(tmp_path, measure, items, **kw):
    out = tmp_path / "c.csv"
    summary = capture(
        hardware="h",
        op="vector_add",
        purpose="validation",
        items=items,
        out=out,
        measure=measure,
        settings=SETTINGS,
        rounds=kw.pop("rounds", 5),
        **kw,
    )
    return summary, out


def test_a_stalled_round_is_caught_and_measured_again(tmp_path):
    items = [CaptureItem((n,), "fp32") for n in (100, 200, 300)]
    measurer = Scripted(stall=lambda item, n: item.dims == (200,) and n == 3)  # one stall
    summary, out = _capture(tmp_path, measurer, items, watch=Machine())
    assert summary.remeasured_rounds == 1 and summary.suspect == 0
    assert measurer.visits.count("200") == 6  # 5 rounds + the stalled one again
    row = next(r for r in _rows(out) if r["shape"] == "200")
    assert float(row["latency_s"]) == pytest.approx(200e-6)  # the stall left no trace
    assert row["remeasured"] == "1" and not row["suspect"]
    assert len(row["round_latencies_s"].split()) == 5
    assert max(float(v) for v in row["round_latencies_s"].split()) == pytest.approx(200e-6)


def test_a_shape_that_will_not_settle_is_kept_and_marked_suspect(tmp_path):
    items = [CaptureItem((100,), "fp32"), CaptureItem((50,), "fp32")]
    # every visit of shape 100 after its fourth stalls: its re-measured rounds stall again
    measurer = Scripted(stall=lambda item, n: item.dims == (100,) and n >= 5)
    summary, out = _capture(tmp_path, measurer, items, watch=Machine())
    assert summary.suspect == 1 and summary.measured == 2
    row = next(r for r in _rows(out) if r["shape"] == "100")
    assert row["latency_s"] and float(row["latency_s"]) == pytest.approx(100e-6)  # the median
    assert row["suspect"].startswith("latency: round(s) 5 of 5 still outside")
    assert f"after {MAX_REMEASURES} re-measure(s)" in row["suspect"]
    assert row["remeasured"] == str(MAX_REMEASURES)
    assert summary.suspects and summary.suspects[0].startswith("100 fp32: latency:")


def test_a_shape_whose_rounds_alternate_between_two_states_is_marked_suspect(tmp_path):
    """Shape 100 takes about 100 us on some rounds and about 700 us on the
    others (an output mapped fresh on some rounds only): no round is an
    outlier, so none is measured again, but the row says its median is one
    of two modes."""
    times = iter(v * 1e-6 for v in (100, 700, 102, 770, 98, 630, 735))

    def measure(item: CaptureItem, settings: CaptureSettings) -> Measurement:
        return _m(next(times) if item.dims == (100,) else 50e-6)

    items = [CaptureItem((100,), "fp32"), CaptureItem((50,), "fp32")]
    summary, out = _capture(tmp_path, measure, items, rounds=7, watch=Machine())
    assert summary.remeasured_rounds == 0 and summary.suspect == 1
    rows = {r["shape"]: r for r in _rows(out)}
    assert rows["100"]["suspect"].startswith(
        "latency: rounds fall into two modes, 3 at 100 us and 4 at 718 us"
    )
    assert float(rows["100"]["latency_s"]) == pytest.approx(630e-6)  # the median: a slow round
    assert rows["50"]["suspect"] == ""


def test_rounds_measured_while_busy_are_measured_again_after_a_wait(tmp_path):
    items = [CaptureItem((n,), "fp32") for n in (10, 20)]
    measurer = Scripted()
    summary, out = _capture(tmp_path, measurer, items, rounds=2, watch=Machine(busy_windows=1))
    # no real time passes between visits, so each visit closes a window only at the end:
    # the scripted machine is busy for the first window judged
    assert summary.busy_retries >= 1 and summary.waits >= 1 and summary.waited_s >= 2.0
    assert summary.measured == 2 and summary.busy_rounds == 0
    rows = _rows(out)
    assert all(float(r["waited_s"]) >= 2.0 for r in rows) and {r["busy"] for r in rows} == {"no"}
    assert len(measurer.visits) == 4 + summary.busy_retries


def test_a_machine_that_stays_busy_keeps_the_rounds_and_says_so(tmp_path):
    items = [CaptureItem((10,), "fp32")]
    summary, out = _capture(tmp_path, Scripted(), items, rounds=1, watch=Machine(busy_windows=99))
    assert summary.busy_rounds == 1 and summary.measured == 1
    (row,) = _rows(out)
    assert row["busy"] == "yes: 1 of 1 round(s) measured while busy" and row["latency_s"]


def test_the_plausibility_check_fills_the_suspect_column(tmp_path):
    items = [CaptureItem((10,), "fp32"), CaptureItem((20,), "fp32")]

    def check(item, m):
        return ["energy: implies 9 kW"] if item.dims == (20,) else []

    summary, out = _capture(tmp_path, Scripted(), items, rounds=1, check=check)
    rows = {r["shape"]: r for r in _rows(out)}
    assert rows["20"]["suspect"] == "energy: implies 9 kW" and rows["10"]["suspect"] == ""
    assert summary.suspect == 1


def test_outlier_rule():
    quiet = {r: _m(1e-3 * (1 + 0.03 * (r % 3))) for r in range(7)}
    assert outlier_rounds(quiet) == {}  # a 6% spread is no outlier
    stalled = dict(quiet) | {4: _m(9e-3)}
    assert set(outlier_rounds(stalled)) == {4}
    # two rounds cannot say which is off: both are measured again when they disagree
    assert set(outlier_rounds({0: _m(1e-3), 1: _m(9e-3)})) == {0, 1}
    assert outlier_rounds({0: _m(1e-3), 1: _m(1.1e-3)}) == {}


def test_spread_sample_covers_every_group_and_the_size_range():
    items = list(range(40))
    groups = ["a"] * 30 + ["b"] * 8 + ["c"] * 2
    sizes = [float(i) for i in items]
    got = spread_sample(items, groups, sizes, 8)
    assert len(got) == 8 and got == sorted(got)
    assert {groups[i] for i in got} == {"a", "b", "c"}
    assert 0 in got and 29 in got  # the smallest and largest of the big group
    assert spread_sample(items, groups, sizes, 8) == got  # deterministic
    assert spread_sample(items, groups, sizes, 100) == items


def test_a_shape_is_checked_for_correctness_in_one_round_only(tmp_path):
    seen: list[tuple[str, bool]] = []

    def measure(item: CaptureItem, settings: CaptureSettings) -> Measurement:
        seen.append((item.shape, settings.check))
        extras = {"spread_ci_rel": 0.01}
        if settings.check:
            extras |= {"verdict": "pass", "max_rel": "1.0e-07"}
        return Measurement(latency_s=1e-6, energy_j=None, trial_count=5, notes="", extras=extras)

    items = [CaptureItem((n,), "fp32") for n in (10, 20)]
    summary, out = _capture(tmp_path, measure, items, rounds=4)
    assert summary.measured == 2
    assert sorted(shape for shape, check in seen if check) == ["10", "20"]  # once each
    assert len(seen) == 8
    assert {r["verdict"] for r in _rows(out)} == {"pass"}  # the verdict reaches the row
    assert {r["max_rel"] for r in _rows(out)} == {"1.0e-07"}


def test_two_rounds_that_keep_disagreeing_are_suspect(tmp_path):
    items = [CaptureItem((100,), "fp32")]
    measurer = Scripted(stall=lambda item, n: n % 2 == 0)  # every second visit stalls
    summary, out = _capture(tmp_path, measurer, items, rounds=2, watch=Machine())
    (row,) = _rows(out)
    assert summary.suspect == 1 and row["suspect"].startswith("latency: round(s) 1, 2 of 2")
    assert row["latency_s"]  # kept


def test_limit_spans_the_dtypes_before_the_regimes_of_one():
    items = list(range(12))
    groups = [f"bf16 r{i % 4}" for i in range(8)] + ["fp32 r0", "fp32 r1", "int8 r0", "int8 r1"]
    got = spread_sample(items, groups, [float(i) for i in items], 3)
    assert {groups[i].split()[0] for i in got} == {"bf16", "fp32", "int8"}
