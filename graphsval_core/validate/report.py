"""Validation reports people read: the summary, text, Markdown, JSON and CSV.

``build_summary`` turns a :class:`~graphsval_core.validate.harness.Validation` into the
report's ``summary`` (header, heatmap cells, drift attribution, flagged and
excluded records, per target/op figures, recapture agreement); the renderers
below and :mod:`graphsval_core.validate.html` only format it.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from graphsval_core.datamodel.regimes import AMBIGUOUS, order, short
from graphsval_core.datamodel.tables import format_table, markdown_table
from graphsval_core.datamodel.units import fmt_joules, fmt_seconds
from graphsval_core.validate.attribution import attribute, build_cells
from graphsval_core.validate.harness import Validation

SCHEMA_VERSION = 1
RECORD_FIELDS = (
    "hardware",
    "op",
    "shape",
    "dtype",
    "status",
    "passed",
    "regime_predicted",
    "near_boundary",
    "regime_measured",
    "latency_predicted_s",
    "latency_measured_s",
    "latency_error",
    "energy_predicted_j",
    "energy_measured_j",
    "energy_error",
    "pass_regime",
    "pass_latency",
    "pass_energy",
    "energy_skip_reason",
    "tolerance_latency",
    "tolerance_energy",
    "binding_tier",
    "explanation",
    "excluded_reason",
    "in_sample",
    "purpose",
    "file",
    "line",
    "notes",
)


def build_summary(
    validation: Validation, header: dict[str, Any], consistency: dict[str, Any] | None = None
) -> dict[str, Any]:
    records = validation.records
    cells = build_cells(records)
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in records:
        groups.setdefault((r["hardware"], r["op"]), []).append(r)
    rows = []
    for (hw, op), recs in sorted(groups.items()):
        checked = [r for r in recs if r["status"] == "checked"]
        errors = [abs(r["latency_error"]) for r in checked]
        rec_agree = validation.recapture.get((hw, op))
        rows.append(
            {
                "hardware": hw,
                "op": op,
                "records": len(recs),
                "checked": len(checked),
                "passed": sum(1 for r in checked if r["passed"]),
                "failed": sum(1 for r in checked if not r["passed"]),
                "excluded": len(recs) - len(checked),
                "near_boundary": sum(1 for r in checked if r["near_boundary"]),
                "unplaced": sum(1 for r in checked if r["regime_measured"] == AMBIGUOUS),
                "in_sample": any(r["in_sample"] for r in recs),
                "median_abs_latency_error": float(np.median(errors)) if errors else None,
                "recapture": rec_agree,
                "cells": {
                    c.regime: c.text() for c in cells.values() if (c.hardware, c.op) == (hw, op)
                },
            }
        )
    drift = []
    for cell in sorted(
        cells.values(),
        key=lambda c: (c.hardware, c.op, order(c.regime)),
    ):
        for d in attribute(cell):
            drift.append(
                {
                    "hardware": cell.hardware,
                    "op": cell.op,
                    "regime": cell.regime,
                    "cell": cell.text(),
                    **d.to_dict(),
                    "text": d.text(),
                }
            )
    checked = [r for r in records if r["status"] == "checked"]
    return {
        "schema_version": SCHEMA_VERSION,
        "header": header,
        "predictor": validation.predictor,
        "records": len(records),
        "checked": len(checked),
        "passed": sum(1 for r in checked if r["passed"]),
        "failed": sum(1 for r in checked if not r["passed"]),
        "excluded": [_brief(r) for r in records if r["status"] == "excluded"],
        "near_boundary": [_brief(r) for r in checked if r["near_boundary"]],
        "unplaced": [_brief(r) for r in checked if r["regime_measured"] == AMBIGUOUS],
        "targets": rows,
        "drift": drift,
        "warnings": list(validation.warnings),
        "consistency": consistency or {},
    }


def _brief(r: dict[str, Any]) -> dict[str, Any]:
    return {
        "hardware": r["hardware"],
        "op": r["op"],
        "shape": r["shape"],
        "dtype": r["dtype"],
        "reason": r.get("excluded_reason") or r.get("regime_measured"),
        "file": r["file"],
        "line": r["line"],
    }


def public_records(validation: Validation) -> list[dict[str, Any]]:
    return [{k: r.get(k) for k in RECORD_FIELDS} for r in validation.records]


def report_json(summary: dict[str, Any], validation: Validation) -> str:
    return (
        json.dumps(
            {
                "schema_version": SCHEMA_VERSION,
                "summary": summary,
                "records": public_records(validation),
            },
            indent=2,
            default=str,
        )
        + "\n"
    )


def records_csv(validation: Validation) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(RECORD_FIELDS), lineterminator="\n")
    writer.writeheader()
    for r in public_records(validation):
        writer.writerow({k: "" if v is None else v for k, v in r.items()})
    return buf.getvalue()


def _regimes_present(summary: dict[str, Any]) -> list[str]:
    seen = {reg for t in summary["targets"] for reg in t["cells"]}
    return sorted(seen, key=lambda r: (order(r), r))


def heatmap_rows(summary: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    regimes = _regimes_present(summary)
    header = ["target / op", *[short(r) for r in regimes]]
    rows = []
    for t in summary["targets"]:
        label = f"{t['hardware']} / {t['op']}" + (" (in-sample only)" if t["in_sample"] else "")
        rows.append([label, *[t["cells"].get(r, ".") for r in regimes]])
    for hw, info in sorted(summary.get("consistency", {}).items()):
        label = f"{hw} (consistency-only)"
        text = f"consistency: {info['passed']}/{info['checks']}"
        if info.get("expected_failures"):
            x = info["expected_failures"]
            text += f" ({x} expected failure{'s' if x > 1 else ''})"
        if regimes:
            rows.append([label, text, *[""] * (len(regimes) - 1)])
        else:  # no record was checked: no regime column to put the text in
            rows.append([f"{label} {text}"])
    return header, rows


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]], markdown: bool) -> str:
    return markdown_table(header, rows) if markdown else format_table(header, rows)


def _target_lines(summary: dict[str, Any]) -> list[list[str]]:
    out = []
    for t in summary["targets"]:
        rate = f"{t['passed']}/{t['checked']}" + (
            f" ({t['passed'] / t['checked']:.0%})" if t["checked"] else ""
        )
        med = (
            f"{t['median_abs_latency_error']:.1%}"
            if t["median_abs_latency_error"] is not None
            else "-"
        )
        rec = t["recapture"]
        ceiling = (
            (
                f"{rec['agree']}/{rec['pairs']} ({rec['rate']:.0%}), median diff "
                f"{rec['median_diff']:.1%}"
            )
            if rec
            else "-"
        )
        out.append(
            [
                f"{t['hardware']} / {t['op']}",
                rate,
                med,
                f"{t['near_boundary']}/{t['unplaced']}/{t['excluded']}",
                ceiling,
                "in-sample only" if t["in_sample"] else "out of sample",
            ]
        )
    return out


def render(
    summary: dict[str, Any],
    validation: Validation,
    markdown: bool = False,
    per_shape: str = "failing",
) -> str:
    """Text or Markdown: header, heatmap, attribution, per target/op, flagged, shapes."""
    h = summary["header"]
    out: list[str] = []
    title = "# graphsval validation report" if markdown else "graphsval validation report"
    out.append(title)
    out.append(
        f"graphsval {h['graphsval_version']} | predictor {summary['predictor']} | plugins: "
        + ", ".join(f"{p['name']} {p['version']}" for p in h["plugins"])
    )
    for b in h["baselines"]:
        out.append(
            f"baseline {b['path']} (sha256 {b['sha256'][:12]}, {b['rows']} rows, {b['selection']})"
        )
    out.append("")
    out.append(
        "## Heatmap"
        if markdown
        else "Heatmap (cells: OK passed/n, or FAIL R<regime> L<latency> E<energy> failures /n):"
    )
    header, rows = heatmap_rows(summary)
    out.append(_table(header, rows, markdown))
    out.append("")
    out.append("## Per target and op" if markdown else "Per target and op:")
    out.append(
        _table(
            [
                "target / op",
                "pass",
                "median |latency error|",
                "near-boundary/unplaced/excluded",
                "capture vs recapture (ceiling)",
                "data",
            ],
            _target_lines(summary),
            markdown,
        )
    )
    out.append("")
    out.append("## Drift attribution" if markdown else "Drift attribution (failing cells):")
    if summary["drift"]:
        for d in summary["drift"]:
            bullet = "- " if markdown else "  "
            out.append(
                f"{bullet}{d['hardware']} {d['op']} {d['regime']} [{d['cell']}]: {d['text']}"
            )
    else:
        out.append("none: every cell passes" if summary["checked"] else "no records")
    for name, label in (
        ("excluded", "Excluded"),
        ("near_boundary", "Near a regime boundary"),
        ("unplaced", "Measured regime could not be placed"),
    ):
        items = summary[name]
        if items:
            out.append("")
            out.append(f"## {label} ({len(items)})" if markdown else f"{label} ({len(items)}):")
            for item in items:
                bullet = "- " if markdown else "  "
                why = f": {item['reason']}" if name == "excluded" else ""
                out.append(
                    f"{bullet}{item['hardware']} {item['op']} {item['shape']} "
                    f"{item['dtype']}{why} ({item['file']}:{item['line']})"
                )
    for w in summary["warnings"]:
        out.append(f"warning: {w}")
    shown = [
        r
        for r in validation.records
        if r["status"] == "checked" and (per_shape == "all" or not r["passed"])
    ]
    if shown:
        out.append("")
        what = "Per shape" if per_shape == "all" else "Failing shapes"
        out.append(f"## {what}" if markdown else f"{what}:")
        out.append(
            _table(
                [
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
                ],
                [
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
                        f"{fmt_joules(r['energy_predicted_j'])}/"
                        + (fmt_joules(r["energy_measured_j"]) if r["energy_measured_j"] else "-"),
                        r["explanation"],
                    ]
                    for r in shown
                ],
                markdown,
            )
        )
    out.append("")
    out.append(
        f"{summary['passed']}/{summary['checked']} records pass "
        f"({summary['failed']} fail, {len(summary['excluded'])} excluded)"
    )
    return "\n".join(out) + "\n"
