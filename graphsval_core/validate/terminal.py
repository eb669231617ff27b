"""The terminal summary of ``graphsval validate``, in the manner of pytest.

The verdict comes first, then the heatmap (passed/records of each target, op
and predicted regime), the worst failing cells with the constant each one
points at, the worst failing records (one line each) and the counts of
everything listed apart (near a regime boundary, unplaced, excluded,
suspect); the same verdict closes it. Every line fits the terminal's width;
colour only on a terminal (never with ``NO_COLOR``). ``-q`` prints the
verdict alone; ``-v`` and ``-vv`` the full report
(:func:`graphsval_core.validate.report.render`), whose long lists are also in
``--out``.
"""

from __future__ import annotations

import os
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

import click
import numpy as np
from attrs import frozen

from graphsval_core.datamodel.regimes import AMBIGUOUS, short
from graphsval_core.datamodel.tables import screen_width
from graphsval_core.datamodel.units import fmt_seconds
from graphsval_core.validate.attribution import cell_label
from graphsval_core.validate.harness import Validation
from graphsval_core.validate.report import heatmap_layout, regimes_present, verdict_counts
from graphsval_core.validate.summary import Summary
from graphsval_core.validate.tally import WORST_KEPT, worst_key

#: Failing cells whose drift attribution the summary quotes.
WORST_CELLS = 3
#: Failing records the summary lists (of those the tally keeps).
WORST_RECORDS = 6
assert WORST_RECORDS <= WORST_KEPT
#: Lines a failing cell's attribution takes at most (-v: all of it).
CELL_LINES = 3
#: Failing consistency checks the summary lists.
CONSISTENCY_LINES = 3


@frozen
class Screen:
    """Where the summary goes: its width in columns and whether it is coloured."""

    width: int = 80
    colour: bool = False

    @classmethod
    def detect(cls, stream: IO[str] | None = None) -> Screen:
        """The terminal's width (``COLUMNS``, else the terminal's, else 80) and
        colour when ``stream`` is a terminal and ``NO_COLOR`` is unset."""
        stream = stream if stream is not None else sys.stdout
        tty = bool(getattr(stream, "isatty", lambda: False)())
        return cls(screen_width(), tty and not os.environ.get("NO_COLOR"))

    def paint(self, text: str, **style: Any) -> str:
        return click.style(text, **style) if self.colour else text

    def clip(self, line: str) -> str:
        """``line`` cut to the width (plain text only)."""
        return line if len(line) <= self.width else line[: self.width - 3].rstrip() + "..."

    def wrap(self, text: str, indent: str = "  ", more: str = "    ") -> list[str]:
        return textwrap.wrap(
            text, self.width, initial_indent=indent, subsequent_indent=more, break_on_hyphens=False
        ) or [indent]


def verdict(
    summary: Summary,
    failed: bool,
    consistency_failures: int,
    floors: Any,
    reason: str | None = None,
) -> str:
    """The one-line verdict: PASSED or FAILED, and why (``reason``: why
    nothing was judged, e.g. the predictor produced nothing)."""
    parts = [verdict_counts(summary)]
    if reason:
        parts.append(reason)
    if floors is not None:
        below = sum(1 for p in floors.plugins for c in p.checks if not c.ok)
        below += len(floors.recaptures)  # a capture below its recapture floor
        moved = sum(len(p.changes) for p in floors.plugins)
        if below:
            parts.append(f"{below} floor{'s' if below != 1 else ''} not met")
        elif floors.updated:  # written at these counts just now: nothing to hold
            parts.append(f"floors updated ({moved} moved)" if moved else "floors unchanged")
        else:
            parts.append("floors hold")
    if consistency_failures:
        s = "s" if consistency_failures != 1 else ""
        parts.append(f"{consistency_failures} consistency check{s} fail{'' if s else 's'}")
    return ("FAILED: " if failed else "PASSED: ") + "; ".join(parts)


Row = list[tuple[str, dict[str, Any]]]


def _styled_table(
    screen: Screen, header: Sequence[str], rows: Sequence[Row | str], gap: int = 2
) -> list[str]:
    """Aligned columns of ``(text, style)`` cells, widths from the plain text,
    ``gap`` spaces apart; a row given as a string is a heading printed bold
    across the columns."""
    widths = [len(h) for h in header]
    for row in rows:
        if not isinstance(row, str):
            for k, (text, _) in enumerate(row):
                widths[k] = max(widths[k], len(text))
    space = " " * gap
    head = space.join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip()
    out = [screen.paint(head, bold=True)]
    for row in rows:
        if isinstance(row, str):
            out.append(screen.paint(screen.clip(row), bold=True))
            continue
        cells = [
            screen.paint(text, **style) + " " * (w - len(text))
            for (text, style), w in zip(row, widths, strict=True)
        ]
        out.append(space.join(cells).rstrip())
    return out


def _cell(cell: Any, narrow: bool) -> tuple[str, dict[str, Any]]:
    counts = f"{cell.passed}/{cell.n}"
    if cell.ok:
        return (counts if narrow else f"ok {counts}"), {"fg": "green"}
    return (f"{counts}!" if narrow else f"FAIL {counts}"), {"fg": "red", "bold": True}


def _heatmap_rows(
    summary: Summary,
    cells: dict[tuple[str, str], dict[str, Any]],
    regimes: Sequence[str],
    narrow: bool,
) -> list[Row | str]:
    rows: list[Row | str] = []
    hw_seen = None
    for t in summary.targets:
        if t.hardware != hw_seen:
            hw_seen = t.hardware
            rows.append(t.hardware + (" (in-sample only)" if t.in_sample else ""))
        mine = cells.get((t.hardware, t.op), {})
        for dtype, line in heatmap_layout(mine, t.dtypes, regimes):
            row: Row = [(f"  {t.op}", {}), (dtype, {})]
            for cell in line:
                if isinstance(cell, str):
                    row.append((cell, {"dim": True}))
                else:
                    row.append(_cell(cell, narrow))
            rows.append(row)
    return rows


def heatmap_lines(summary: Summary, validation: Validation, screen: Screen) -> list[str]:
    """The heatmap in the terminal's width: a row per target, op and dtype
    (``all``: the memory tiers' cells, which pool every dtype), a column per
    regime, each cell ``passed/records``; consistency-only targets on one line."""
    cells: dict[tuple[str, str], dict[str, Any]] = {}
    for c in validation.tally.cells.values():
        cells.setdefault((c.hardware, c.op), {})[c.label] = c
    regimes = regimes_present(summary)
    header = ["target / op", "dtype", *(short(r) for r in regimes)]
    # the widest layout that fits: "FAIL 3/9" cells, then "3/9!", then one space apart
    for narrow, gap in ((False, 2), (True, 2), (True, 1)):
        rows = _heatmap_rows(summary, cells, regimes, narrow)
        lines = _styled_table(screen, header, rows, gap)
        if max(len(click.unstyle(line)) for line in lines) <= screen.width:
            break
    legend = "passed/records" + (", ! failing" if narrow else "")
    head = f"Heatmap ({legend}; launch and alu per dtype, memory tiers over all dtypes):"
    out = screen.wrap(head, "", "  ")
    out[0] = screen.paint("Heatmap", bold=True) + out[0][len("Heatmap") :]
    out += lines
    counts = sorted(summary.consistency.items())
    consistency = [f"{hw} {info['passed']}/{info['checks']}" for hw, info in counts]
    if consistency:
        text = "Consistency-only targets (checks passed): " + ", ".join(consistency)
        out += screen.wrap(text, "")
    return out


def worst_cells(summary: Summary, screen: Screen) -> list[str]:
    """The drift attribution of the failing cells with most records beyond
    their band, each wrapped to the width."""
    if not summary.drift:
        return []
    ranked = sorted(summary.drift, key=lambda d: (-(d.over + d.under), -abs(d.median_error)))
    shown = ranked[:WORST_CELLS]
    more = len(ranked) - len(shown)
    # a cell may have a line per constant (a launch cell's GEMVs, library calls and
    # products too small for the library): count cells, and lines where they differ
    cells = len({(d.hardware, d.op, d.regime, d.dtype) for d in shown})
    lines = f"{len(shown)} lines of " if cells != len(shown) else ""
    head = (
        (
            f"Drift ({lines}the {cells} failing cells with most records beyond their band"
            if cells > 1
            else f"Drift ({lines}the failing cell"
        )
        + (f"; -v: all {len(ranked)} lines" if more else "")
        + "):"
    )
    out = screen.wrap(head, "", "  ")
    out[0] = screen.paint("Drift", bold=True) + out[0][len("Drift") :]
    for d in shown:
        head = f"{d.hardware} {d.op} {cell_label(d.regime, d.dtype)} [{d.cell}]: "
        lines = screen.wrap(head + d.text)
        if len(lines) > CELL_LINES:
            lines = lines[: CELL_LINES - 1] + [screen.clip(lines[CELL_LINES - 1] + " ...")]
            lines[-1] = lines[-1] if lines[-1].endswith("...") else lines[-1] + " ..."
        out += lines
    return out


def consistency_block(consistency: Sequence[str], screen: Screen) -> list[str]:
    """The failing consistency checks, one clipped line each, the first few."""
    if not consistency:
        return []
    n = len(consistency)
    more = f"; -v lists all {n}" if n > CONSISTENCY_LINES else ""
    head = f"Consistency checks failing ({n}{more}; graphsval check tells why):"
    out = screen.wrap(head, "", "  ")
    return out + [screen.clip("  " + line) for line in consistency[:CONSISTENCY_LINES]]


def worst_records(validation: Validation, screen: Screen) -> list[str]:
    """The failing records of largest latency error, one line each, under
    their target; each one's baseline row when the width has room for it."""
    tally = validation.tally
    records = tally.worst  # the worst failures, in record order
    if not len(records):
        return []
    shown = np.argsort(worst_key(records), kind="stable")[:WORST_RECORDS]
    targets = list(dict.fromkeys(records.hardware[i] for i in shown))
    header = ["error", "op", "shape", "dtype", "predicted", "measured", "regime p/m", "row"]
    for with_row in (True, False):
        rows: list[Row | str] = []
        for hw in targets:
            rows.append(hw)
            for i in (i for i in shown if records.hardware[i] == hw):
                pred, meas = records.regime_predicted[i], records.regime_measured[i]
                regime = short(pred) if pred == meas else f"{short(pred)}/{_short(meas)}"
                where = f"{Path(str(records.file[i])).name}:{int(records.line[i])}"
                rows.append(
                    [
                        (f"  {records.latency_error[i]:+.0%}", {"fg": "red"}),
                        (str(records.op[i]), {}),
                        (str(records.shape[i]), {}),
                        (str(records.dtype[i]), {}),
                        (fmt_seconds(records.latency_predicted_s[i]), {}),
                        (fmt_seconds(records.latency_measured_s[i]), {}),
                        (regime, {}),
                        *([(where, {"dim": True})] if with_row else []),
                    ]
                )
        table = _styled_table(screen, header if with_row else header[:-1], rows)
        if max(len(click.unstyle(line)) for line in table) <= screen.width:
            break
    more = tally.failed - len(shown)
    head = (
        f"Worst failures ({len(shown)} of {tally.failed}, by latency error as a factor: -50% ranks"
        " with +100%" + ("; -v lists all" if more else "") + "):"
    )
    lines = screen.wrap(head, "", "  ")
    lines[0] = screen.paint("Worst failures", bold=True) + lines[0][len("Worst failures") :]
    return lines + [_clip_styled(line, screen) for line in table]


def _short(regime: str) -> str:
    """A measured regime's column text: ``l2``, or ``unplaced`` for ambiguous."""
    return "unplaced" if regime == AMBIGUOUS else short(regime)


def _clip_styled(line: str, screen: Screen) -> str:
    """A styled line cut to the width: the styles are dropped only when it must be cut."""
    plain = click.unstyle(line)
    return line if len(plain) <= screen.width else screen.clip(plain)


def flagged_line(summary: Summary, screen: Screen) -> list[str]:
    """Counts of the records listed apart (``-v`` and ``--out`` list them)."""
    findings = summary.total("suspect")  # one per suspect quantity (latency, energy)
    records = sum(t.suspect for t in summary.targets)  # as the verdict line counts them
    suspect = f"suspect record{'' if records == 1 else 's'}"
    if findings > records:
        suspect += f" ({findings} suspect measurements)"  # the heading -v lists them under
    apart = [
        (summary.total("excluded"), "excluded (failed capture or check, unsupported dtype)"),
        (records, suspect),
    ]
    unjudged = [
        (summary.total("near_boundary"), "near a boundary"),
        (summary.total("unplaced"), "unplaced"),
    ]
    parts = [f"{n} {what}" for n, what in apart if n]
    regime = [f"{n} {what}" for n, what in unjudged if n]
    if regime:
        parts.append("regime not judged: " + ", ".join(regime))
    if not parts:
        return []
    return screen.wrap("Listed apart (-v lists them): " + "; ".join(parts), "")


def recapture_line(summary: Summary, screen: Screen) -> list[str]:
    """Each target's capture-vs-recapture agreement within 10% per op."""
    per_target: dict[str, list[str]] = {}
    for t in summary.targets:
        if t.recapture is not None:
            per_target.setdefault(t.hardware, []).append(f"{t.op} {t.recapture.within_band:.0%}")
    if not per_target:
        return []
    parts = [f"{hw} {', '.join(ops)}" for hw, ops in per_target.items()]
    text = "Capture vs recapture within 10% (the ceiling of any model): " + "; ".join(parts)
    return screen.wrap(text, "")


def _them(n: int) -> str:
    return "them" if n != 1 else "it"


def summary_lines(
    summary: Summary,
    validation: Validation,
    screen: Screen,
    *,
    failed: bool,
    consistency: Sequence[str] = (),
    floors: Any = None,
    reason: str | None = None,
) -> list[str]:
    """The default terminal summary (see module doc)."""
    top = verdict(summary, failed, len(consistency), floors, reason)
    style = {"fg": "red" if failed else "green", "bold": True}
    out = [screen.paint(line, **style) for line in screen.wrap(top, "", "  ")] + [""]
    out += heatmap_lines(summary, validation, screen)
    for block in (
        worst_cells(summary, screen),
        worst_records(validation, screen),
        consistency_block(consistency, screen),
        flagged_line(summary, screen) + recapture_line(summary, screen),
    ):
        if block:
            out += ["", *block]
    files = len(summary.header.baselines)
    out.append(f"{files} baseline file{'s' if files != 1 else ''} (-v lists {_them(files)})")
    for w in summary.warnings:
        out += screen.wrap(f"warning: {w}", "", "  ")
    out += ["", screen.paint(verdict_counts(summary), **style)]
    return out
