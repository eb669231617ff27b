"""The validation report in every format: text and Markdown for people, JSON
and CSV for tools (:mod:`graphsval_core.validate.html` adds pictures).

Everything comes from the typed :class:`~graphsval_core.validate.summary.Summary`
and the columnar :class:`~graphsval_core.validate.records.Records`; the records'
fields and their order are the schema's (:data:`RECORD_FIELDS`).
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from graphsval_core.datamodel.errors import one_line
from graphsval_core.datamodel.exports import csv_cell, md_text
from graphsval_core.datamodel.regimes import order, short
from graphsval_core.datamodel.tables import format_table, markdown_table, wrap_line
from graphsval_core.datamodel.units import fmt_joules, fmt_seconds
from graphsval_core.validate.attribution import PER_DTYPE, cell_label, split_label
from graphsval_core.validate.harness import Validation
from graphsval_core.validate.paths import display_path, report_path
from graphsval_core.validate.records import RECORD_FIELDS
from graphsval_core.validate.summary import SCHEMA_VERSION, Summary, summary_dict

T = TypeVar("T")

__all__ = [
    "RECORD_FIELDS",
    "heatmap_layout",
    "heatmap_rows",
    "records_csv",
    "regimes_present",
    "render",
    "report_json",
    "verdict_counts",
]


def _shown(record: dict[str, Any], exact: bool = False) -> dict[str, Any]:
    """A record as a report writes it: its baseline file's path as shown
    (:func:`~graphsval_core.validate.paths.display_path`; in JSON, which
    escapes a control character itself, ``report_path``)."""
    record["file"] = (report_path if exact else display_path)(record["file"] or "")
    return record


def json_safe(value: Any) -> Any:
    """``value`` with every NaN or infinite float (an overflowed error, say) as
    None: JSON has no such numbers, and a report must parse in any reader."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    return value


def report_json(summary: Summary, validation: Validation) -> str:
    """``report.json``: the summary and every record."""
    head = summary_dict(summary)
    for key in ("excluded", "suspect", "near_boundary", "unplaced"):
        for item in head[key]:
            item["file"] = report_path(item["file"])
    for item in head["header"]["baselines"]:
        item["path"] = report_path(item["path"])
    body = {
        "schema_version": SCHEMA_VERSION,
        "summary": head,
        "records": [_shown(r, exact=True) for r in validation.records.rows()],
    }
    return json.dumps(json_safe(body), indent=2, default=str, allow_nan=False) + "\n"


def records_csv(validation: Validation) -> str:
    """``records.csv``: one line per record, the schema's fields (absent: empty)."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(RECORD_FIELDS), lineterminator="\n")
    writer.writeheader()
    for r in validation.records.rows():
        writer.writerow({k: "" if v is None else csv_cell(v) for k, v in _shown(r).items()})
    return buf.getvalue()


def regimes_present(summary: Summary) -> list[str]:
    """The predicted regimes of the report's cells, in report order."""
    seen = {split_label(label)[0] for t in summary.targets for label in t.cells}
    return sorted(seen, key=lambda r: (order(r), r))


#: The dtype column of a heatmap row holding the cells that pool every dtype.
ALL_DTYPES = "all"


def heatmap_layout(
    cells: Mapping[str, T], dtypes: Sequence[str], regimes: Sequence[str]
) -> list[tuple[str, list[T | str]]]:
    """One target and op's heatmap rows, ``(dtype, cells)``, each cell the
    value ``cells`` holds under its label: one row when its records have one
    dtype; else a row per dtype for the regimes whose cells hold one dtype
    (:data:`PER_DTYPE`), then an ``all`` row for the pooled ones (``""``: the
    cell is on the other rows; ``"."``: no records)."""
    split = [r in PER_DTYPE for r in regimes]
    if len(dtypes) <= 1:
        dtype = dtypes[0] if dtypes else None
        return [
            (
                dtype or "",
                [
                    cells.get(cell_label(r, dtype if s else None), ".")
                    for r, s in zip(regimes, split, strict=True)
                ],
            )
        ]
    lines: list[tuple[str, list[T | str]]] = []
    if any(split):
        for dtype in dtypes:
            row: list[T | str] = [
                cells.get(cell_label(r, dtype), ".") if s else ""
                for r, s in zip(regimes, split, strict=True)
            ]
            if any(c not in ("", ".") for c in row):
                lines.append((dtype, row))
    if not all(split):
        lines.append(
            (
                ALL_DTYPES,
                ["" if s else cells.get(r, ".") for r, s in zip(regimes, split, strict=True)],
            )
        )
    return lines


def heatmap_rows(summary: Summary) -> tuple[list[str], list[list[str]]]:
    """The heatmap as a table: rows per target and op (and dtype, see
    :func:`heatmap_layout`), a column per regime."""
    regimes = regimes_present(summary)
    header = ["target / op", "dtype", *[short(r) for r in regimes]]
    rows = []
    for t in summary.targets:
        label = f"{t.hardware} / {t.op}" + (" (in-sample only)" if t.in_sample else "")
        for dtype, cells in heatmap_layout(dict(t.cells), t.dtypes, regimes):
            rows.append([label, dtype, *cells])
    for hw, info in sorted(summary.consistency.items()):
        label = f"{hw} (consistency-only)"
        text = f"consistency: {info['passed']}/{info['checks']}"
        if info.get("expected_failures"):
            x = info["expected_failures"]
            text += f" ({x} expected failure{'s' if x > 1 else ''})"
        if regimes:
            rows.append([label, "", text, *[""] * (len(regimes) - 1)])
        else:  # no record was checked: no regime column to put the text in
            rows.append([f"{label} {text}", ""])
    return header, rows


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]], markdown: bool) -> str:
    return markdown_table(header, rows) if markdown else format_table(header, rows)


#: The columns of the per target and op table.
TARGET_COLUMNS = (
    "target / op",
    "pass",
    "median |latency error|",
    "near-boundary/unplaced/excluded/suspect",
    "capture vs recapture (ceiling)",
    "data",
)


def target_rows(summary: Summary) -> list[list[str]]:
    """The per target and op table's rows (see :data:`TARGET_COLUMNS`)."""
    out = []
    for t in summary.targets:
        rate = f"{t.passed}/{t.checked}" + (f" ({t.passed / t.checked:.0%})" if t.checked else "")
        med = f"{t.median_abs_latency_error:.1%}" if t.median_abs_latency_error is not None else "-"
        rec = t.recapture
        ceiling = (
            f"{rec.agree}/{rec.pairs} ({rec.rate:.0%}), median diff {rec.median_diff:.1%}, "
            f"{rec.within_band:.0%} within 10%, {rec.remeasured} re-measured"
            + (f"; {rec.floor_text()}" if rec.floor_text() else "")
            if rec
            else "-"
        )
        out.append(
            [
                f"{t.hardware} / {t.op}",
                rate,
                med,
                f"{t.near_boundary}/{t.unplaced}/{t.excluded}/{t.suspect}",
                ceiling,
                "in-sample only" if t.in_sample else "out of sample",
            ]
        )
    return out


def render(
    summary: Summary,
    validation: Validation,
    markdown: bool = False,
    per_shape: str = "failing",
    width: int | None = None,
) -> str:
    """Text or Markdown: header, heatmap, attribution, per target/op, flagged, shapes.

    ``width`` (text only): the prose lines (the header, drift attribution, the
    flagged records, warnings) wrap to it with a hanging indent, as ``-v``
    prints them on a terminal; the tables keep their columns' width. None (a
    report file) keeps one line per item."""
    h = summary.header
    bullet = "- " if markdown else "  "
    esc = md_text if markdown else str  # Markdown: the inputs' text shows as text, never markup
    out: list[str] = []
    title = "# graphsval validation report" if markdown else "graphsval validation report"
    out.append(title)
    out.append(
        esc(
            f"graphsval {h.graphsval_version}, predictor {summary.predictor}, plugins: "
            + ", ".join(f"{p.name} {p.version}" for p in h.plugins)
        )
    )
    out.append("")
    out.append(f"Baselines ({len(h.baselines)}):")
    if markdown:
        out.append("")
    for b in h.baselines:
        out.append(
            bullet
            + esc(f"{display_path(b.path)} (sha256 {b.sha256[:12]}, {b.rows} rows, {b.selection})")
        )
    out.append("")
    legend = (
        "cells: OK passed/n, or FAIL R<regime> L<latency> E<energy> failures /n;"
        " launch and alu per dtype, memory tiers over all dtypes"
    )
    out.append(f"## Heatmap\n\n{legend}.\n" if markdown else f"Heatmap ({legend}):")
    header, rows = heatmap_rows(summary)
    out.append(_table(header, rows, markdown))
    out.append("")
    out.append("## Per target and op" if markdown else "Per target and op:")
    out.append(
        _table(
            TARGET_COLUMNS,
            target_rows(summary),
            markdown,
        )
    )
    out.append("")
    out.append("## Drift attribution" if markdown else "Drift attribution (failing cells):")
    if markdown:
        out.append("")
    if summary.drift:
        for d in summary.drift:
            label = cell_label(d.regime, d.dtype)
            out.append(bullet + esc(f"{d.hardware} {d.op} {label} [{d.cell}]: {d.text}"))
    else:
        out.append("none: every cell passes" if summary.checked else "no records")
    for items, label, with_reason in (
        (summary.excluded, "Excluded", True),
        (summary.near_boundary, "Near a regime boundary", False),
        (summary.unplaced, "Measured regime could not be placed", False),
    ):
        if items:
            out.append("")
            out.append(f"## {label} ({len(items)})" if markdown else f"{label} ({len(items)}):")
            if markdown:
                out.append("")
            for item in items:
                why = f": {item.reason}" if with_reason else ""
                out.append(
                    bullet
                    + esc(
                        f"{item.hardware} {item.op} {item.shape} "
                        f"{item.dtype}{why} ({display_path(item.file)}:{item.line})"
                    )
                )
    if summary.suspect:
        out.append("")
        out += _suspect_lines(summary, markdown)
    if summary.warnings:
        out.append("")
        out.append("## Warnings" if markdown else "Warnings:")
        if markdown:
            out.append("")
        # a warning names files as given: a control character in a name, escaped
        out += [f"{bullet}{esc(one_line(w))}" for w in summary.warnings]
    explain = markdown or per_shape == "all"
    table = _shape_rows(validation, per_shape, explain)
    if table:
        out.append("")
        what = "Per shape" if per_shape == "all" else "Failing shapes"
        out.append(f"## {what}" if markdown else f"{what}:")
        columns = SHAPE_COLUMNS if explain else SHAPE_COLUMNS[:-1]
        out.append(_table(columns, table, markdown))
    out.append("")
    out.append(verdict_counts(summary))
    if width is not None and not markdown:
        out = [wrapped for line in out for wrapped in wrap_line(line, width)]
    return "\n".join(out) + "\n"


def verdict_counts(summary: Summary) -> str:
    """``N/M records pass (F fail, X excluded, S suspect)``: the report's last line."""
    suspect = sum(t.suspect for t in summary.targets)
    return (
        f"{summary.passed}/{summary.checked} records pass "
        f"({summary.failed} fail, {summary.total('excluded')} excluded, {suspect} suspect)"
    )


#: The heading of the suspect measurements.
SUSPECT_HEADING = "Suspect measurements (excluded from pass/fail)"


def _suspect_lines(summary: Summary, markdown: bool) -> list[str]:
    """The suspect quantities under their heading (the per target and op table
    counts the records)."""
    bullet = "- " if markdown else "  "
    esc = md_text if markdown else str
    n = len(summary.suspect)
    records = sum(t.suspect for t in summary.targets)  # as the verdict counts them
    # a record may be suspect for two reasons (rounds apart, and capture and
    # recapture apart): each is listed, the count says so
    plural = "" if records == 1 else "s"
    count = f"{n} findings on {records} record{plural}" if n > records else f"{n}"
    out = [f"## {SUSPECT_HEADING} ({count})" if markdown else f"{SUSPECT_HEADING} ({count}):"]
    if markdown:
        out.append("")
    for item in summary.suspect:
        out.append(
            bullet
            + esc(
                f"{item.hardware} {item.op} {item.shape} {item.dtype} {item.quantity}: "
                f"{item.reason}; excluded: {item.excluded} ({display_path(item.file)}:{item.line})"
            )
        )
    return out


#: The columns of the per-shape table.
SHAPE_COLUMNS = (
    "target",
    "op",
    "shape",
    "dtype",
    "predicted",
    "measured",
    "error",
    "regime pred/meas",
    "tier",
    "energy pred/meas",
    "explanation",
)


def _shape_rows(validation: Validation, per_shape: str, explain: bool = True) -> list[list[str]]:
    """The checked records (``all``) or the failing ones, as table rows (the
    model's explanation last, with ``explain``)."""
    records = validation.records
    out = []
    for i in range(len(records)):
        r = records.row(i)
        if r["status"] != "checked" or (per_shape != "all" and r["passed"]):
            continue
        energy = fmt_joules(r["energy_measured_j"]) if r["energy_measured_j"] else "-"
        out.append(
            [
                r["hardware"],
                r["op"],
                r["shape"],
                r["dtype"],
                fmt_seconds(r["latency_predicted_s"]),
                fmt_seconds(r["latency_measured_s"]),
                f"{r['latency_error']:+.0%}",
                f"{r['regime_predicted']}/{r['regime_measured']}",
                r["binding_tier"],
                f"{fmt_joules(r['energy_predicted_j'])}/{energy}",
                *([r["explanation"]] if explain else []),
            ]
        )
    return out
