"""Capture ground truth into a baseline CSV, at the noise floor and resumably.

Every round visits every shape still to measure in a freshly shuffled order
(interleaving: slow drifts in neighbour load spread over all shapes), and each
shape's row is the median of its rounds (:mod:`graphsval_core.measure.rounds`).

While it runs, a :class:`~graphsval_core.measure.quiet.QuietWatch` looks at
what other processes and the hypervisor took over each window of about a
second: rounds measured while the machine was busy are thrown away and
measured again after a bounded wait for quiet (kept, and counted in the row's
``busy`` column, when the machine will not settle). When a shape's rounds are
all in, an outlier round is measured again at the end of the run, at most
twice; a shape whose rounds will not settle is kept and marked ``suspect``
with the reason, never dropped. An optional plausibility check adds its own
``suspect`` entries (a measurement above the target's peak, say).

Files: :mod:`graphsval_core.measure.capture_file` (a row is appended and
fsynced as each shape finishes, every round goes to a journal; a rerun skips
finished shapes and reuses journaled rounds; ``force`` re-measures).
"""

from __future__ import annotations

import operator
import random
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from attrs import define, evolve, field

from graphsval_core.datamodel.errors import one_line
from graphsval_core.datamodel.round_modes import two_modes
from graphsval_core.measure import capture_file as files
from graphsval_core.measure.capture_file import COLUMNS, EXTRA_COLUMNS, SCHEMA_VERSION
from graphsval_core.measure.protocol import CaptureSettings
from graphsval_core.measure.quiet import QuietWatch, one_minute_load
from graphsval_core.measure.rounds import (
    MAX_REMEASURES,
    combine_rounds,
    outlier_rounds,
    unsettled_reason,
)
from graphsval_core.plugins.records import Measurement
from graphsval_core.plugins.registry import HookError

__all__ = ["COLUMNS", "CaptureItem", "CaptureSummary", "capture", "finalize", "measurement_row"]

finalize = files.finalize

#: Seconds of measuring between two looks at the machine's load.
WINDOW_S = 1.0
#: A window shorter than this cannot be judged (the counters tick every 10 ms).
MIN_WINDOW_S = 0.25
#: A round measured while the machine was busy is measured again at most this often.
MAX_BUSY_RETRIES = 2


@define
class CaptureItem:
    dims: tuple[int, ...]
    dtype: str

    @property
    def shape(self) -> str:
        return "x".join(str(d) for d in self.dims)

    @property
    def key(self) -> tuple[str, str]:
        return (self.shape, self.dtype)


@define
class CaptureSummary:
    planned: int = 0
    skipped: int = 0
    measured: int = 0
    failed: int = 0
    incorrect: int = 0
    suspect: int = 0
    interrupted: bool = False
    out_of_time: bool = False
    rows: int = 0
    busy_warning: str = ""
    failures: list[str] = field(factory=list)
    suspects: list[str] = field(factory=list)
    #: rounds measured again because they lay outside the others' spread
    remeasured_rounds: int = 0
    #: rounds measured again because the machine was busy meanwhile
    busy_retries: int = 0
    #: rounds kept although the machine stayed busy
    busy_rounds: int = 0
    waits: int = 0
    waited_s: float = 0.0
    #: a wait ran out with the machine still busy: the run measured on without waiting
    gave_up_waiting: bool = False


def load_average() -> float:
    """The 1-minute load average (0.0 where the system has none)."""
    return one_minute_load() or 0.0


def measurement_row(
    hardware: str,
    op: str,
    item: CaptureItem,
    purpose: str,
    m: Measurement,
    load: float | None = None,
    busy: bool | str = False,
    *,
    rounds: int = 1,
    round_spread: float | None = None,
    round_latencies: Sequence[float | None] = (),
    suspect: Sequence[str] = (),
    remeasured: int = 0,
    waited_s: float = 0.0,
) -> dict[str, Any]:
    """The CSV row of one measured shape (``load``: the load average, None:
    read now; ``busy``: whether, or how, the machine was busy). A failed
    shape's (no latency) counts no trial, whatever ``m`` says: the baseline
    reader refuses a count of trials beside no latency. Every text (a note,
    an error's message, a device name) is one line, its control characters
    written as Python writes them (``\\t``, ``\\x1b``): the reader refuses a
    cell holding one."""
    import json

    extras = dict(m.extras)
    known = {k: extras.pop(k) for k in list(extras) if k in EXTRA_COLUMNS}
    fingerprint = known.pop("fingerprint", "")
    if isinstance(fingerprint, dict):  # its names and text values one line each too: the
        # reader refuses a control character a JSON escape (\u0009) spells
        fingerprint = json.dumps(
            {
                one_line(str(k)): one_line(v) if isinstance(v, str) else v
                for k, v in fingerprint.items()
            },
            sort_keys=True,
        )
    row = {
        "hardware": hardware,
        "op": op,
        "shape": item.shape,
        "dtype": item.dtype,
        "latency_s": "" if m.latency_s is None else f"{m.latency_s:.6e}",
        "energy_j": "" if m.energy_j is None else f"{m.energy_j:.6e}",
        "trial_count": 0 if m.latency_s is None else m.trial_count,
        "notes": m.notes,
        **known,
        "schema_version": SCHEMA_VERSION,
        "purpose": purpose,
        "suspect": "; ".join(suspect),
        "rounds": rounds,
        "round_spread_rel": "" if round_spread is None else f"{round_spread:.4f}",
        "round_latencies_s": " ".join("" if v is None else f"{v:.4e}" for v in round_latencies),
        "remeasured": remeasured,
        "load_avg": f"{load_average() if load is None else load:.2f}",
        "busy": ("yes" if busy else "no") if isinstance(busy, bool) else busy,
        "waited_s": f"{waited_s:.1f}",
        "captured_at": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "fingerprint": fingerprint,
        "details": json.dumps(extras, sort_keys=True, default=str) if extras else "",
    }
    return {k: one_line(v) if isinstance(v, str) else v for k, v in row.items()}


Measure = Callable[[CaptureItem, CaptureSettings], Measurement | None]
#: A plausibility check of a finished shape: ``"latency: reason"`` entries.
Check = Callable[[CaptureItem, Measurement], Sequence[str]]


def _measure_safely(measure: Measure, item: CaptureItem, settings: CaptureSettings) -> Measurement:
    """The measurement, or a failed one whose note says why."""
    try:
        m = measure(item, settings)
    except (KeyboardInterrupt, HookError):
        raise  # Ctrl-C, or (strict mode) a plugin fault: stop, every finished row kept
    except MemoryError:
        m, why = None, "out of memory"
    except Exception as exc:  # a kernel error, OOM on a device, unsupported dtype
        why = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
        if "out of memory" in why.lower():
            why = f"out of memory ({why})"
        m = None
    else:
        why = "no installed plugin measures this target"
    if m is None:
        return Measurement(latency_s=None, energy_j=None, trial_count=0, notes=f"failed: {why}")
    if m.latency_s is not None and not _counted(m.trial_count):
        # the reader refuses a latency beside no count of trials, or a count under 1
        why = (
            f"the measurer gave a latency with trial_count {m.trial_count!r}, not a count of at "
            "least 1"
        )
        return Measurement(latency_s=None, energy_j=None, trial_count=0, notes=f"failed: {why}")
    return m


def _counted(trials: Any) -> bool:
    """Whether ``trials`` is a count of at least one trial (a numpy integer too)."""
    if isinstance(trials, bool):
        return False
    try:
        return operator.index(trials) >= 1
    except TypeError:
        return False


Visit = tuple[CaptureItem, int]


@define
class _Run:
    """The state of one capture run (see :func:`capture`)."""

    hardware: str
    op: str
    purpose: str
    rounds: int
    out: Path
    journal: Path
    measure: Measure
    settings: CaptureSettings
    watch: QuietWatch | None
    check: Check | None
    summary: CaptureSummary
    got: dict[tuple[str, str], dict[int, Measurement]] = field(factory=dict)
    queue: deque[Visit] = field(factory=deque)
    window: list[Visit] = field(factory=list)
    window_start: float = 0.0
    busy_tries: dict[tuple[tuple[str, str], int], int] = field(factory=dict)
    busy_kept: set[tuple[tuple[str, str], int]] = field(factory=set)
    outlier_tries: dict[tuple[str, str], int] = field(factory=dict)
    waited: dict[tuple[str, str], float] = field(factory=dict)

    def visit(self, item: CaptureItem, r: int) -> None:
        """Measure one round of ``item``; its first measured round runs the
        correctness check, the others only time (same kernel, same inputs)."""
        checked = any(m.extras.get("verdict") for m in self.got.get(item.key, {}).values())
        settings = evolve(self.settings, check=False) if checked else self.settings
        m = _measure_safely(self.measure, item, settings)
        files.append_journal(self.journal, item.key, r, m)
        self.got.setdefault(item.key, {})[r] = m
        self.window.append((item, r))
        if self.watch is None or time.monotonic() - self.window_start >= WINDOW_S:
            self.close_window()

    def open_window(self) -> None:
        self.window = []
        self.window_start = time.monotonic()
        if self.watch is not None:
            self.watch.mark()

    def close_window(self) -> None:
        """Judge the window's load; re-queue its rounds if the machine was busy,
        else (or when they have been retried enough) finish their shapes."""
        load = self.watch.since_mark() if self.watch is not None else None
        if load is not None and load.seconds < MIN_WINDOW_S:
            load = None  # too short for jiffy counters to tell: unknown, not busy
        if load is not None and load.busy and self.window:
            redo = []
            for item, r in self.window:
                tries = self.busy_tries.get((item.key, r), 0)
                if tries < MAX_BUSY_RETRIES:
                    self.busy_tries[(item.key, r)] = tries + 1
                    self.got[item.key].pop(r, None)
                    redo.append((item, r))
                    self.summary.busy_retries += 1
                else:
                    self.busy_kept.add((item.key, r))
                    self.summary.busy_rounds += 1
            assert self.watch is not None
            waited, after = 0.0, None
            if redo and not self.summary.gave_up_waiting:
                waited, after = self.watch.wait()
                # a wait that ran out while still busy: the machine will not settle;
                # measure on (retries still bounded) rather than wait again and again
                self.summary.gave_up_waiting = after is not None and after.busy
            if waited:
                self.summary.waits += 1
                self.summary.waited_s += waited
                for key in {item.key for item, _r in self.window}:
                    self.waited[key] = self.waited.get(key, 0.0) + waited
            self.queue.extendleft(reversed(redo))
        for item in {it.key: it for it, _ in self.window}.values():
            if len(self.got.get(item.key, {})) == self.rounds:
                self.finish(item)
        self.open_window()

    def finish(self, item: CaptureItem) -> None:
        """Write the row of a shape whose rounds are all in (or re-queue its outliers)."""
        results = self.got[item.key]
        ok = [m for m in results.values() if m.latency_s is not None]
        if len(ok) < self.rounds:
            reason = next(m.notes for m in results.values() if m.latency_s is None)
            row = measurement_row(
                self.hardware,
                self.op,
                item,
                self.purpose,
                Measurement(latency_s=None, energy_j=None, trial_count=0, notes=reason),
            )
            files.append_row(self.out, row)
            self.summary.failed += 1
            self.summary.failures.append(f"{item.shape} {item.dtype}: {reason}")
            return
        outliers = outlier_rounds(results)
        tries = self.outlier_tries.get(item.key, 0)
        if outliers and tries < MAX_REMEASURES:
            self.outlier_tries[item.key] = tries + 1
            for r in sorted(outliers):
                del results[r]
                self.busy_kept.discard((item.key, r))
                self.queue.append((item, r))  # at the end: after the machine settles
            self.summary.remeasured_rounds += len(outliers)
            return
        combined, spread = combine_rounds(ok)
        suspect = [f"latency: {unsettled_reason(outliers, self.rounds, tries)}"] if outliers else []
        modes = two_modes(m.latency_s for m in ok)
        if modes is not None:
            suspect.append(f"latency: {modes.reason()}")
        if self.check is not None:
            suspect += list(self.check(item, combined))
        kept = sum(1 for key, r in self.busy_kept if key == item.key and r in results)
        busy = f"yes: {kept} of {self.rounds} round(s) measured while busy" if kept else "no"
        row = measurement_row(
            self.hardware,
            self.op,
            item,
            self.purpose,
            combined,
            rounds=self.rounds,
            round_spread=spread,
            round_latencies=[results[r].latency_s for r in sorted(results)],
            suspect=suspect,
            remeasured=tries,
            busy=busy,
            waited_s=self.waited.get(item.key, 0.0),
        )
        files.append_row(self.out, row)
        self.summary.measured += 1
        self.summary.incorrect += combined.extras.get("verdict") == "FAIL"
        if suspect:
            self.summary.suspect += 1
            self.summary.suspects.append(f"{item.shape} {item.dtype}: {'; '.join(suspect)}")


def capture(
    *,
    hardware: str,
    op: str,
    purpose: str,
    items: Sequence[CaptureItem],
    out: Path,
    measure: Measure,
    settings: CaptureSettings,
    force: bool = False,
    rounds: int = 1,
    seed: int = 0,
    max_total_time_s: float | None = None,
    progress: Callable[[Sequence[Any]], Any] | None = None,
    echo: Callable[[str], None] = print,
    watch: QuietWatch | None = None,
    check: Check | None = None,
) -> CaptureSummary:
    """Measure ``items`` into ``out`` (see module doc). ``watch`` (None: no
    look at the machine's load) and ``check`` (None: no plausibility check)
    are optional; the ``graphsval capture`` workflow passes both."""
    summary = CaptureSummary(planned=len(items))
    journal = files.journal_path(out)
    existing = files.read_capture(out, hardware, op)  # refuses a file that is not ours
    owner = {"hardware": hardware, "op": op, "threads": str(settings.threads)}
    journaled = files.read_journal(journal, owner)  # refuses another capture's journal
    if force:  # measure everything again; the file's rows stay until replaced
        journal.unlink(missing_ok=True)
        existing, journaled = {}, {}
    files.start_journal(journal, owner)
    done = {k for k, row in existing.items() if row["latency_s"].strip()}
    todo = [it for it in items if it.key not in done]
    summary.skipped = len(items) - len(todo)
    run = _Run(
        hardware, op, purpose, rounds, out, journal, measure,
        evolve(settings, max_time_per_shape_s=settings.max_time_per_shape_s / rounds),
        watch, check, summary,
    )  # fmt: skip
    for item in todo:  # a failed round is measured again; extra rounds are ignored
        kept = {r: m for r, m in journaled.get(item.key, {}).items() if m.latency_s and r < rounds}
        if kept:
            run.got[item.key] = kept
    visits: list[Visit] = []
    for r in range(rounds):
        order = list(todo)
        if rounds > 1:
            random.Random(f"{seed}:{r}").shuffle(order)
        visits += [(it, r) for it in order if r not in run.got.get(it.key, {})]
    run.queue.extend(visits)
    start = time.monotonic()
    tick = _ticker(progress(visits) if progress else None)
    try:
        for item in todo:  # every round journaled, but the row never reached the CSV
            if len(run.got.get(item.key, {})) == rounds:
                run.finish(item)
        run.open_window()
        while run.queue or run.window:
            if not run.queue:  # the last window: judging it may queue rounds again
                run.close_window()
                continue
            if max_total_time_s is not None and time.monotonic() - start > max_total_time_s:
                summary.out_of_time = True
                break
            item, r = run.queue.popleft()
            tick((item, r))
            run.visit(item, r)
    except KeyboardInterrupt:
        summary.interrupted = True
    finally:
        summary.rows = files.finalize(out, hardware, op) if out.exists() else 0
        if not summary.interrupted and not summary.out_of_time and journal.exists():
            finished = set(files.read_capture(out, hardware, op)) if out.exists() else set()
            if all(it.key in finished for it in items):
                journal.unlink()
    return summary


def _ticker(display: Any) -> Callable[[Visit], None]:
    """Advance a progress display by one visit: ``display.update(1, visit)``
    (a click progress bar), else the next item of an iterable display."""
    if display is None:
        return lambda visit: None
    if hasattr(display, "update"):
        length = getattr(display, "length", None)
        done = [0]

        def update(visit: Visit) -> None:
            if length is None or done[0] < length:  # rounds measured again: no overrun
                done[0] += 1
                display.update(1, visit)

        return update
    ticks: Iterator[Any] = iter(display)
    return lambda visit: next(ticks, None)
