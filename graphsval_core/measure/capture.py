"""Capture ground truth into a baseline CSV, resumably.

Every finished shape is appended to the file as one complete line, flushed and
fsynced, so a Ctrl-C or a kill at any point leaves a valid file with every
finished row (a line cut by a kill mid-write is dropped on the next run). A
rerun skips shapes already measured and retries failed ones (``force``
re-measures everything). At the end (and on Ctrl-C) the file is rewritten
sorted, one row per shape, atomically (temp file + rename).

With ``rounds > 1`` the capture is interleaved: every round visits every shape
in a freshly shuffled order and each shape's row is the median of its rounds,
so slow drifts in neighbour load spread over all shapes (measurement-practice:
"interleave"). Each (shape, round) result goes to a journal beside the CSV
(``<csv>.journal.jsonl``, appended and fsynced) so an interrupted interleaved
capture resumes too.
"""

from __future__ import annotations

import csv
import io
import json
import os
import random
import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from attrs import define, evolve, field

from graphsval_core.files.baseline import V4_COLUMNS, BaselineFileError, read_baseline
from graphsval_core.measure.protocol import CaptureSettings
from graphsval_core.plugins.records import Measurement

SCHEMA_VERSION = "1"

#: Extra columns of a captured baseline, after the V4 columns.
EXTRA_COLUMNS: tuple[str, ...] = (
    "schema_version",
    "purpose",
    "spread_ci_rel",
    "samples",
    "block_reps",
    "warmup_calls",
    "stopped_by",
    "p10_s",
    "p90_s",
    "rounds",
    "round_spread_rel",
    "energy_source",
    "energy_window_s",
    "verdict",
    "mean_rel_l1",
    "max_abs",
    "max_rel",
    "rtol",
    "atol",
    "check_scope",
    "output_alloc",
    "launch_in_timing",
    "threads",
    "device",
    "torch_version",
    "numerics",
    "load_avg",
    "busy",
    "captured_at",
    "fingerprint",
    "details",
)
COLUMNS: tuple[str, ...] = V4_COLUMNS + EXTRA_COLUMNS


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
    interrupted: bool = False
    out_of_time: bool = False
    rows: int = 0
    busy_warning: str = ""
    failures: list[str] = field(factory=list)


def load_average() -> tuple[float, bool, str]:
    """1-minute load, whether the machine is busy, and a warning if so."""
    try:
        load = os.getloadavg()[0]
    except OSError:
        return 0.0, False, ""
    cores = os.cpu_count() or 1  # the load average counts every CPU of the machine
    busy = load > 0.5 * cores
    warning = (
        (
            f"machine busy: load average {load:.2f} on {cores} CPU(s); timings may be "
            "noisy (recorded in each row)"
        )
        if busy
        else ""
    )
    return load, busy, warning


def _repair_tail(path: Path) -> None:
    """Drop a last line cut short by a kill mid-write."""
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        cut = data.rfind(b"\n") + 1
        with path.open("r+b") as handle:
            handle.truncate(cut)


def _existing(path: Path, hardware: str, op: str) -> dict[tuple[str, str], dict[str, str]]:
    """Rows already in ``path`` by (shape, dtype), last one winning."""
    if not path.exists() or path.stat().st_size == 0:
        return {}
    _repair_tail(path)
    if path.stat().st_size == 0:  # killed while writing the header: nothing was finished
        return {}
    baseline = read_baseline(path)
    if tuple(baseline.columns) != COLUMNS:
        raise BaselineFileError(
            f"{path}: not a baseline written by this capture (different columns); "
            "use another --out or --force"
        )
    rows: dict[tuple[str, str], dict[str, str]] = {}
    with path.open(newline="") as handle:
        for row in csv.DictReader(handle):
            if row["hardware"] != hardware or row["op"] != op:
                raise BaselineFileError(
                    f"{path}: holds {row['hardware']} {row['op']} rows, not {hardware} {op}"
                )
            rows[(row["shape"], row["dtype"])] = row
    return rows


def _line(row: dict[str, Any]) -> str:
    buf = io.StringIO()
    csv.DictWriter(buf, fieldnames=list(COLUMNS), lineterminator="\n").writerow(
        {c: row.get(c, "") for c in COLUMNS}
    )
    return buf.getvalue()


def _append(path: Path, row: dict[str, Any]) -> None:
    new = not path.exists() or path.stat().st_size == 0
    text = (",".join(COLUMNS) + "\n" if new else "") + _line(row)
    with path.open("a", newline="") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())


def sort_key(row: dict[str, str]) -> tuple[Any, ...]:
    dims = tuple(int(d) for d in row["shape"].split("x"))
    return (row["dtype"], dims)


def finalize(path: Path, hardware: str, op: str) -> int:
    """Rewrite ``path`` sorted, one row per shape, atomically; return the row count."""
    rows = _existing(path, hardware, op)
    if not rows and not path.exists():
        return 0
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", newline="") as handle:
        handle.write(",".join(COLUMNS) + "\n")
        for row in sorted(rows.values(), key=sort_key):
            handle.write(_line(row))
        handle.flush()
        os.fsync(handle.fileno())
    tmp.replace(path)
    return len(rows)


def measurement_row(
    hardware: str,
    op: str,
    item: CaptureItem,
    purpose: str,
    m: Measurement,
    load: float,
    busy: bool,
    rounds: int = 1,
    round_spread: float | None = None,
) -> dict[str, Any]:
    extras = dict(m.extras)
    known = {k: extras.pop(k) for k in list(extras) if k in EXTRA_COLUMNS}
    fingerprint = known.pop("fingerprint", "")
    if isinstance(fingerprint, dict):
        fingerprint = json.dumps(fingerprint, sort_keys=True)
    return {
        "hardware": hardware,
        "op": op,
        "shape": item.shape,
        "dtype": item.dtype,
        "latency_s": "" if m.latency_s is None else f"{m.latency_s:.6e}",
        "energy_j": "" if m.energy_j is None else f"{m.energy_j:.6e}",
        "trial_count": m.trial_count,
        "notes": m.notes,
        **known,
        "schema_version": SCHEMA_VERSION,
        "purpose": purpose,
        "rounds": rounds,
        "round_spread_rel": "" if round_spread is None else f"{round_spread:.4f}",
        "load_avg": f"{load:.2f}",
        "busy": "yes" if busy else "no",
        "captured_at": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "fingerprint": fingerprint,
        "details": json.dumps(extras, sort_keys=True, default=str) if extras else "",
    }


def failure_row(
    hardware: str, op: str, item: CaptureItem, purpose: str, why: str, load: float, busy: bool
) -> dict[str, Any]:
    return measurement_row(
        hardware,
        op,
        item,
        purpose,
        Measurement(latency_s=None, energy_j=None, trial_count=0, notes=f"failed: {why}"),
        load,
        busy,
    )


Measure = Callable[[CaptureItem, CaptureSettings], Measurement | None]


def _measure_safely(
    measure: Measure, item: CaptureItem, settings: CaptureSettings
) -> tuple[Measurement | None, str]:
    try:
        m = measure(item, settings)
    except KeyboardInterrupt:
        raise
    except MemoryError:
        return None, "out of memory"
    except Exception as exc:  # a kernel error, OOM on a device, unsupported dtype
        text = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
        if "out of memory" in text.lower():
            text = f"out of memory ({text})"
        return None, text
    if m is None:
        return None, "no installed plugin measures this target"
    return m, ""


def _combine_rounds(results: Sequence[Measurement]) -> tuple[Measurement, float]:
    """Median of the rounds' medians; spread = (max - min) / 2 / median."""
    latencies = [r.latency_s for r in results if r.latency_s is not None]
    energies = [r.energy_j for r in results if r.energy_j is not None]
    median = statistics.median(latencies)
    spread = (max(latencies) - min(latencies)) / 2.0 / median if median > 0 else 0.0
    best = min(results, key=lambda r: abs((r.latency_s or 0) - median))
    notes = sorted({n for r in results for n in r.notes.split("; ") if n})
    failed_checks = [r for r in results if r.extras.get("verdict") == "FAIL"]
    extras = dict((failed_checks[0] if failed_checks else best).extras)
    m = Measurement(
        latency_s=median,
        energy_j=statistics.median(energies) if energies else None,
        trial_count=sum(r.trial_count for r in results),
        notes="; ".join(notes),
        extras=extras,
    )
    return m, spread


def _journal(path: Path) -> Path:
    return path.with_name(path.name + ".journal.jsonl")


def _read_journal(path: Path) -> dict[tuple[str, str], dict[int, Measurement]]:
    out: dict[tuple[str, str], dict[int, Measurement]] = {}
    if not path.exists():
        return out
    _repair_tail(path)
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        rec = json.loads(line)
        m = Measurement(
            latency_s=rec["latency_s"],
            energy_j=rec["energy_j"],
            trial_count=rec["trial_count"],
            notes=rec["notes"],
            extras=rec["extras"],
        )
        out.setdefault((rec["shape"], rec["dtype"]), {})[rec["round"]] = m
    return out


def _journal_append(path: Path, item: CaptureItem, round_no: int, m: Measurement) -> None:
    rec = {
        "shape": item.shape,
        "dtype": item.dtype,
        "round": round_no,
        "latency_s": m.latency_s,
        "energy_j": m.energy_j,
        "trial_count": m.trial_count,
        "notes": m.notes,
        "extras": {k: v for k, v in m.extras.items()},
    }
    with path.open("a") as handle:
        handle.write(json.dumps(rec, default=str) + "\n")
        handle.flush()
        os.fsync(handle.fileno())


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
) -> CaptureSummary:
    """Measure ``items`` into ``out`` (see module doc)."""
    summary = CaptureSummary(planned=len(items))
    load, busy, warning = load_average()
    summary.busy_warning = warning
    if warning:
        echo(f"warning: {warning}")
    if force:
        for stale in (out, _journal(out)):
            if stale.exists():
                stale.unlink()
    existing = _existing(out, hardware, op)
    done = {k for k, row in existing.items() if row["latency_s"].strip()}
    todo = [it for it in items if it.key not in done]
    summary.skipped = len(items) - len(todo)
    start = time.monotonic()
    journal = _journal(out)
    partial: dict[tuple[str, str], dict[int, Measurement]] = {}
    if rounds > 1:
        # a failed round is measured again; rounds beyond this run's count are ignored
        for key, got in _read_journal(journal).items():
            kept = {r: m for r, m in got.items() if m.latency_s is not None and r < rounds}
            if kept:
                partial[key] = kept
    todo_keys = {it.key for it in todo}
    # shapes whose every round is in the journal but whose row never reached the CSV
    # (killed between the two writes): write them now
    for item in todo:
        got = partial.get(item.key, {})
        if all(r in got for r in range(rounds)) and rounds > 1:
            combined, spread = _combine_rounds(list(got.values()))
            _append(
                out,
                measurement_row(hardware, op, item, purpose, combined, load, busy, rounds, spread),
            )
            summary.measured += 1
            todo_keys.discard(item.key)
    todo = [it for it in todo if it.key in todo_keys]
    # the (item, round) visits still to do, round by round, each round shuffled
    visits: list[tuple[CaptureItem, int]] = []
    for r in range(rounds):
        order = list(todo)
        if rounds > 1:
            random.Random(f"{seed}:{r}").shuffle(order)
        visits += [(it, r) for it in order if r not in partial.get(it.key, {})]
    per_visit = evolve(settings, max_time_per_shape_s=settings.max_time_per_shape_s / rounds)
    bar = progress(visits) if progress else _plain(visits)
    try:
        for item, r in bar:
            if max_total_time_s is not None and time.monotonic() - start > max_total_time_s:
                summary.out_of_time = True
                break
            m, why = _measure_safely(measure, item, per_visit)
            if rounds == 1:
                if m is None:
                    _append(out, failure_row(hardware, op, item, purpose, why, load, busy))
                    summary.failed += 1
                    summary.failures.append(f"{item.shape} {item.dtype}: {why}")
                else:
                    _append(out, measurement_row(hardware, op, item, purpose, m, load, busy))
                    summary.measured += 1
                    summary.incorrect += m.extras.get("verdict") == "FAIL"
                continue
            m = m or Measurement(
                latency_s=None, energy_j=None, trial_count=0, notes=f"failed: {why}"
            )
            _journal_append(journal, item, r, m)
            got = partial.setdefault(item.key, {})
            got[r] = m
            if all(x in got for x in range(rounds)):
                ok = [x for x in got.values() if x.latency_s is not None]
                if len(ok) < rounds:
                    reason = next(x.notes for x in got.values() if x.latency_s is None)
                    _append(
                        out,
                        failure_row(
                            hardware, op, item, purpose, reason.removeprefix("failed: "), load, busy
                        ),
                    )
                    summary.failed += 1
                    summary.failures.append(f"{item.shape} {item.dtype}: {reason}")
                else:
                    combined, spread = _combine_rounds(ok)
                    _append(
                        out,
                        measurement_row(
                            hardware, op, item, purpose, combined, load, busy, rounds, spread
                        ),
                    )
                    summary.measured += 1
                    summary.incorrect += combined.extras.get("verdict") == "FAIL"
    except KeyboardInterrupt:
        summary.interrupted = True
    finally:
        summary.rows = finalize(out, hardware, op) if out.exists() else 0
        if rounds > 1 and not summary.interrupted and not summary.out_of_time and journal.exists():
            finished = {k for k, row in _existing(out, hardware, op).items()}
            if all(it.key in finished for it in items):
                journal.unlink()
    return summary


def _plain(visits: Sequence[Any]) -> Iterator[Any]:
    yield from visits
