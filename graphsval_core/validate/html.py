"""``report.html``: one self-contained page for a design review.

The verdict first; the heatmap as a table whose every cell leads to its
records; the per target and op figures; the drift attribution; per target the
pictures (:mod:`graphsval_core.validate.plots`: predicted against measured,
the distribution of the latency error per regime with its tolerance, a
hierarchical roofline per dtype); every record in one table that sorts by any
column and filters by text, target, op, dtype, regime, status and verdict,
each record's explanation and terms a click away; the lists of records set
apart. Every text that comes from data (shapes, notes, explanations, paths)
is HTML-escaped; nothing is fetched (the script and the pictures are inline).
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from graphsval_core.datamodel.errors import one_line
from graphsval_core.datamodel.regimes import TIER_NAMES, short
from graphsval_core.datamodel.units import fmt_bytes, fmt_joules, fmt_seconds
from graphsval_core.validate.attribution import PER_DTYPE, cell_label
from graphsval_core.validate.harness import Validation
from graphsval_core.validate.html_assets import SCRIPT, STYLE
from graphsval_core.validate.paths import display_path
from graphsval_core.validate.records import Records
from graphsval_core.validate.report import (
    SUSPECT_HEADING,
    TARGET_COLUMNS,
    heatmap_layout,
    regimes_present,
    target_rows,
    verdict_counts,
)
from graphsval_core.validate.summary import Summary

esc = html.escape


def _table(header: Sequence[str], rows: Iterable[Sequence[str]], cls: str = "") -> str:
    """A plain table of escaped text."""
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{esc(str(c))}</td>" for c in r) + "</tr>" for r in rows)
    klass = f' class="{cls}"' if cls else ""
    return f"<table{klass}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _ul(items: Iterable[str], cls: str = "") -> str:
    """A list of escaped items."""
    klass = f' class="{cls}"' if cls else ""
    return f"<ul{klass}>" + "".join(f"<li>{esc(i)}</li>" for i in items) + "</ul>"


def _cell_key(hw: str, op: str, label: str) -> str:
    return f"{hw}|{op}|{label}"


def _shade(share: float) -> str:
    """A cell's background: red (none pass) through yellow to green (all pass)."""
    return f"hsl({120 * share:.0f}, 60%, {88 - 6 * (1 - abs(2 * share - 1)):.0f}%)"


def heatmap(summary: Summary, validation: Validation) -> str:
    """The heatmap: a row per target, op and dtype, a column per regime; each
    cell passed/records (and the failing verdicts: R regime, L latency, E
    energy), a link to its records in the record table."""
    cells: dict[tuple[str, str], dict[str, Any]] = {}
    for c in validation.tally.cells.values():
        cells.setdefault((c.hardware, c.op), {})[c.label] = c
    regimes = regimes_present(summary)
    head = "".join(f"<th>{esc(short(r))}</th>" for r in regimes)
    out = [f'<table class="heatmap"><thead><tr><th>op</th><th>dtype</th>{head}</tr></thead><tbody>']
    seen = None
    for t in summary.targets:
        if t.hardware != seen:
            seen = t.hardware
            note = " (in-sample only: calibration rows)" if t.in_sample else ""
            out.append(
                f'<tr class="target"><th colspan="{len(regimes) + 2}">'
                f"{esc(t.hardware)}{esc(note)}</th></tr>"
            )
        for dtype, line in heatmap_layout(cells.get((t.hardware, t.op), {}), t.dtypes, regimes):
            tds = []
            for c in line:
                if isinstance(c, str):
                    tds.append(f'<td class="cell none">{esc(c)}</td>')
                    continue
                fails = " ".join(
                    f"{k[0].upper()}{c.fails(k)}" for k in ("regime", "latency", "energy")
                    if c.fails(k)
                )  # fmt: skip
                key = _cell_key(c.hardware, c.op, c.label)
                title = f"{c.hardware} {c.op} {c.label}: {c.passed} of {c.n} records pass"
                tds.append(
                    f'<td class="cell" style="background:{_shade(c.passed / c.n)}">'
                    f'<a href="#records" data-cell="{esc(key)}" title="{esc(title)}">'
                    f"{'OK' if c.ok else 'FAIL'} {c.passed}/{c.n}"
                    + (f"<small>{esc(fails)}</small>" if fails else "")
                    + "</a></td>"
                )
            out.append(f"<tr><td>{esc(t.op)}</td><td>{esc(dtype)}</td>{''.join(tds)}</tr>")
    out.append("</tbody></table>")
    legend = (
        "<p>Each cell: the records of one target, op and predicted regime (launch and alu "
        "per dtype, memory tiers pooling every dtype), passed/records; under a failing "
        "cell the failed verdicts (R regime, L latency, E energy). Click a cell for its "
        "records.</p>"
    )
    consistency = [
        f"{hw}: {info['passed']}/{info['checks']} checks pass"
        + (
            f" ({info['expected_failures']} expected failures)"
            if info.get("expected_failures")
            else ""
        )
        for hw, info in sorted(summary.consistency.items())
    ]
    extra = ""
    if consistency:
        extra = "<p>Consistency-only targets (no silicon):</p>" + _ul(consistency)
    return legend + "".join(out) + extra


def _figure(title: str, data: str, caption: str) -> str:
    return (
        f'<figure><img alt="{esc(title)}" src="{data}">'
        f"<figcaption><b>{esc(title)}</b>. {esc(caption)}</figcaption></figure>"
    )


ROOFLINE_CAPTION = (
    "Roofs: each tier's calibrated effective bandwidth, bending into the achievable "
    "compute ceiling (the calibrated fraction of the peak; the datasheet peak dotted). Each "
    "record sits at the arithmetic intensity of its binding tier (operations over the bytes "
    "that tier serves) and the operations per second it achieved, coloured by that tier "
    "(dark: compute-bound, grey: launch-bound); crosses fail."
)


def figures(validation: Validation, registry: Any) -> str:
    """Per target: predicted vs measured, the error distribution, a roofline per dtype."""
    from graphsval_core.validate import plots

    records = validation.records
    out = []
    for hw in sorted(set(records.hardware[records.checked])):
        target = registry.target(hw)
        tiers = registry.memory_hierarchy(target)
        figs = [
            _figure(
                f"{hw}: predicted vs measured latency",
                plots.predicted_vs_measured(records, hw),
                "Coloured by predicted regime; crosses fail; the band is ±10% and ±25%.",
            ),
            _figure(
                f"{hw}: signed latency error per regime",
                plots.error_distribution(records, hw),
                "Cumulative share of records by (predicted - measured) / measured; dashed "
                "lines mark each regime's tolerance.",
            ),
        ]
        mine = records.checked & (records.hardware == hw)
        for dtype in sorted(set(records.dtype[mine])):
            if dtype in target.peak_ops_per_s:
                figs.append(
                    _figure(
                        f"{hw} {dtype}: roofline",
                        plots.roofline(records, target, dtype, tiers),
                        ROOFLINE_CAPTION,
                    )
                )
        out.append(f'<h3>{esc(hw)}</h3><div class="figures">{"".join(figs)}</div>')
    return "".join(out)


def _num(value: Any) -> str:
    return "" if value is None or (isinstance(value, float) and np.isnan(value)) else repr(value)


def _details(r: dict[str, Any]) -> str:
    """A record's explanation and terms, folded."""
    terms: list[tuple[str, str]] = []
    for name, label in (
        ("launch_s", "launch"),
        ("compute_s", "compute"),
        ("memory_s", "memory (binding tier)"),
        ("hidden_s", "overlapped"),
        ("first_touch_s", "first touch"),
        ("pack_s", "packing B"),
    ):
        if r.get(name) is not None:
            terms.append((label, fmt_seconds(r[name])))
    for tier in TIER_NAMES:
        moved = r.get(f"bytes_{tier}")
        if moved:
            terms.append(
                (f"{tier} traffic", f"{fmt_bytes(moved)} in {fmt_seconds(r[f'memory_{tier}_s'])}")
            )
    parts = [("compute", r.get("energy_compute_j"))]
    parts += [(tier, r.get(f"energy_{tier}_j")) for tier in TIER_NAMES]
    parts += [("static", r.get("energy_static_j"))]
    total = sum(v for _, v in parts if v)
    if total:
        split = ", ".join(f"{k} {fmt_joules(v)} ({v / total:.0%})" for k, v in parts if v)
        terms.append(("energy split", split))
    where = f"{display_path(r['file'] or '')}:{r['line']}"
    terms.append(("baseline row", where))
    if r.get("notes"):
        terms.append(("notes", r["notes"]))
    why = r.get("excluded_reason") or r.get("explanation") or ""
    dl = "".join(f"<dt>{esc(k)}</dt><dd>{esc(str(v))}</dd>" for k, v in terms)
    return f"<details><summary>why</summary><p>{esc(why)}</p><dl>{dl}</dl></details>"


RECORD_COLUMNS = (
    ("target", ""),
    ("op", ""),
    ("shape", ""),
    ("dtype", ""),
    ("status", ""),
    ("verdict", ""),
    ("regime predicted", ""),
    ("regime measured", ""),
    ("predicted", "num"),
    ("measured", "num"),
    ("latency error", "num"),
    ("energy error", "num"),
    ("binding tier", ""),
    ("details", ""),
)


def records_table(records: Records) -> str:
    """Every record: sortable (click a heading), filterable (the controls above)."""
    rows = []
    for i in range(len(records)):
        r = records.row(i)
        regime = r["regime_predicted"] or ""
        label = cell_label(regime, r["dtype"] if regime in PER_DTYPE else None) if regime else ""
        verdict = {True: "pass", False: "FAIL"}.get(r["passed"], "-")
        data = {
            "hw": r["hardware"],
            "op": r["op"],
            "dtype": r["dtype"],
            "regime": regime,
            "status": r["status"],
            "verdict": verdict,
            "cell": _cell_key(r["hardware"], r["op"], label) if r["status"] == "checked" else "",
        }
        attrs = " ".join(f'data-{k}="{esc(str(v or ""))}"' for k, v in data.items())
        lat_err, en_err = r["latency_error"], r["energy_error"]
        cells = [
            esc(r["hardware"]),
            esc(r["op"]),
            esc(r["shape"]),
            esc(r["dtype"]),
            esc(r["status"]),
            f'<td class="v">{verdict}</td>',
            esc(regime),
            esc(r["regime_measured"] or ""),
            _numcell(r["latency_predicted_s"], fmt_seconds),
            _numcell(r["latency_measured_s"], fmt_seconds),
            _numcell(lat_err, lambda v: f"{v:+.1%}"),
            _numcell(en_err, lambda v: f"{v:+.1%}"),
            esc(r["binding_tier"] or ""),
            _details(r),
        ]
        tds = "".join(c if c.startswith("<td") else f"<td>{c}</td>" for c in cells)
        rows.append(f'<tr class="{verdict}" {attrs}>{tds}</tr>')
    head = "".join(
        f'<th data-type="{kind or "text"}">{esc(name)}</th>' for name, kind in RECORD_COLUMNS
    )
    return (
        f'<table id="record-table"><thead><tr>{head}</tr></thead><tbody>'
        + "".join(rows)
        + "</tbody></table>"
    )


def _numcell(value: float | None, fmt: Any) -> str:
    if value is None:
        return '<td class="num" data-v=""></td>'
    return f'<td class="num" data-v="{value!r}">{esc(fmt(value))}</td>'


def _filters(records: Records) -> str:
    """The record table's controls: text, one select per column kind, the cell."""
    out = ['<div class="filters"><input type="search" id="filter-text" placeholder="filter text">']
    for name, label, values in (
        ("hw", "target", records.hardware),
        ("op", "op", records.op),
        ("dtype", "dtype", records.dtype),
        ("regime", "regime", records.regime_predicted),
        ("status", "status", records.status),
        ("verdict", "verdict", ["pass", "FAIL", "-"]),
    ):
        options = "".join(
            f'<option value="{esc(v)}">{esc(v)}</option>'
            for v in sorted({str(v) for v in values if v})
        )
        out.append(
            f'<label>{esc(label)} <select name="{name}"><option value="">all</option>'
            f"{options}</select></label>"
        )
    out.append(
        '<span id="cell-filter" hidden>cell: <span></span> <button type="button">clear</button>'
        '</span><span id="record-count"></span></div>'
    )
    return "".join(out)


def _flagged(summary: Summary) -> str:
    out = []
    for items, title, reason in (
        (summary.excluded, "Excluded (failed capture or correctness check)", True),
        (summary.near_boundary, "Near a regime boundary (regime not judged)", False),
        (summary.unplaced, "Measured regime could not be placed (regime not judged)", False),
    ):
        if items:
            lines = [
                f"{i.hardware} {i.op} {i.shape} {i.dtype}"
                + (f": {i.reason}" if reason else "")
                + f" ({display_path(i.file)}:{i.line})"
                for i in items
            ]
            out.append(
                f"<details><summary>{esc(title)}: {len(items)}</summary>"
                f"{_ul(lines, 'flagged')}</details>"
            )
    if summary.suspect:
        lines = [
            f"{s.hardware} {s.op} {s.shape} {s.dtype} {s.quantity}: {s.reason}; excluded: "
            f"{s.excluded} ({display_path(s.file)}:{s.line})"
            for s in summary.suspect
        ]
        out.append(
            f"<details><summary>{esc(SUSPECT_HEADING)}: {len(lines)}"
            f"</summary>{_ul(lines, 'flagged')}</details>"
        )
    return "".join(out) or "<p>None.</p>"


def render_html(summary: Summary, validation: Validation, registry: Any) -> str:
    """The page (see module doc)."""
    h = summary.header
    # nothing judged (the selected predictor produced nothing) never passes
    failed = summary.failed > 0 or not summary.checked
    verdict = ("FAILED: " if failed else "PASSED: ") + verdict_counts(summary)
    if not summary.checked:
        verdict += "; nothing was judged"
    drift = [
        f"{d.hardware} {d.op} {cell_label(d.regime, d.dtype)} [{d.cell}]: {d.text}"
        for d in summary.drift
    ]
    baselines = [
        f"{display_path(b.path)} (sha256 {b.sha256[:12]}, {b.rows} rows, {b.selection})"
        for b in h.baselines
    ]
    sections = [
        ("heatmap", "Heatmap", heatmap(summary, validation)),
        ("targets", "Per target and op", _table(TARGET_COLUMNS, target_rows(summary))),
        (
            "drift",
            "Drift attribution (failing cells)",
            _ul(drift) if drift else "<p>None: every cell passes.</p>",
        ),
        ("pictures", "Pictures", figures(validation, registry)),
        (
            "records",
            "Records",
            _filters(validation.records) + records_table(validation.records),
        ),
        ("apart", "Listed apart", _flagged(summary)),
        ("baselines", "Baselines", _ul(baselines)),
    ]
    if summary.warnings:
        sections.append(("warnings", "Warnings", _ul(one_line(w) for w in summary.warnings)))
    nav = "".join(f'<a href="#{key}">{esc(title)}</a>' for key, title, _ in sections)
    body = "".join(
        f'<section id="{key}"><h2>{esc(title)}</h2>{content}</section>'
        for key, title, content in sections
    )
    meta = f"graphsval {h.graphsval_version}, predictor {summary.predictor}, plugins: " + ", ".join(
        f"{p.name} {p.version}" for p in h.plugins
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>graphsval validation report</title><style>{STYLE}</style></head><body>"
        f"<header><h1>graphsval validation report</h1>"
        f'<div class="verdict {"fail" if failed else "pass"}">{esc(verdict)}</div>'
        f"<p>{esc(meta)}</p><nav>{nav}</nav></header><main>{body}</main>"
        f"<script>{SCRIPT}</script></body></html>\n"
    )
