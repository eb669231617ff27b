"""Recapture as a step of its own: the validation set measured a second time,
in another order, and the shapes whose two captures disagree measured again.

A shape whose capture and recapture differ by more than half the latency
tolerance of its predicted regime is measured again (a full row: every round),
at most :data:`MAX_RECAPTURE_REMEASURES` times, until two of its measurements
agree within that half band. The baseline's row then holds the median of all
its measurements, the first capture's value in ``first_latency_s`` and the
count in ``remeasured``; a shape that never settles is kept and marked
``suspect``. The recapture file is never changed: the capture-vs-recapture
agreement (the goals, validate's ceiling) compares ``first_latency_s`` with
it, so re-measuring cannot flatter the agreement.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from pathlib import Path

from attrs import define, field

from graphsval_core.measure import capture_file as files
from graphsval_core.measure.capture import CaptureItem

#: A shape that disagrees is measured again at most this many times.
MAX_RECAPTURE_REMEASURES = 2

#: Measures one shape again (every round); its latency, None when it failed.
Remeasure = Callable[[CaptureItem], float | None]


@define
class Reconciled:
    """What the reconciliation did: the shapes compared, those that disagreed,
    the re-measures made, the shapes still disagreeing (marked suspect), and
    the first-capture agreement within the half band."""

    compared: int = 0
    disagreed: int = 0
    remeasures: int = 0
    unsettled: list[str] = field(factory=list)
    agree_first: int = 0


def _settled(values: Sequence[float], half_band: float) -> bool:
    """Whether the latest value agrees with an earlier one within the half band."""
    latest = values[-1]
    return any(abs(latest - v) / min(latest, v) <= half_band for v in values[:-1])


def reconcile(
    main: Path,
    recapture: Path,
    hardware: str,
    op: str,
    items: Sequence[CaptureItem],
    tolerance_of: Callable[[CaptureItem], float],
    remeasure: Remeasure,
) -> Reconciled:
    """Compare ``main`` with ``recapture`` shape by shape and settle the
    disagreements (see module doc); rewrites ``main`` atomically."""
    rows = files.read_capture(main, hardware, op)
    again = files.read_capture(recapture, hardware, op)
    result = Reconciled()
    try:
        for item in items:
            _settle(item, rows, again, tolerance_of, remeasure, result)
    finally:  # a Ctrl-C keeps every shape settled so far
        files.write_sorted(main, rows)
    return result


def _settle(
    item: CaptureItem,
    rows: dict[tuple[str, str], files.Row],
    again: dict[tuple[str, str], files.Row],
    tolerance_of: Callable[[CaptureItem], float],
    remeasure: Remeasure,
    result: Reconciled,
) -> None:
    """Compare one shape's capture and recapture; measure it again while they
    disagree (see module doc). The row changes only once a re-measure returned."""
    row, twin = rows.get(item.key), again.get(item.key)
    if not row or not twin or not row["latency_s"] or not twin["latency_s"]:
        return
    first = float(row["first_latency_s"] or row["latency_s"])
    second = float(twin["latency_s"])
    half = tolerance_of(item) / 2.0
    result.compared += 1
    if abs(first - second) / min(first, second) <= half:
        result.agree_first += 1
        return
    result.disagreed += 1
    if row.get("first_latency_s"):  # settled (or marked) by an earlier run
        return
    values = [first, second]
    tries = 0
    while tries < MAX_RECAPTURE_REMEASURES:
        latest = remeasure(item)  # a Ctrl-C propagates: this shape stays as it was
        tries += 1
        result.remeasures += 1
        if latest is None:
            continue
        values.append(latest)
        if _settled(values, half):
            break
    if len(values) == 2:  # every re-measure failed: nothing new to record
        return
    updated = dict(row)
    updated["first_latency_s"] = f"{first:.6e}"
    updated["latency_s"] = f"{statistics.median(values):.6e}"
    updated["remeasured"] = str(int(row.get("remeasured") or 0) + tries)
    if not _settled(values, half):
        spread = max(values) / min(values) - 1.0
        reason = (
            f"latency: capture, recapture and {tries} re-measure(s) disagree by up to "
            f"{spread:.0%} (more than half the +-{2 * half:.0%} band)"
        )
        updated["suspect"] = "; ".join(s for s in (row.get("suspect", ""), reason) if s)
        result.unsettled.append(f"{item.shape} {item.dtype}: {reason}")
    rows[item.key] = updated
