"""The HTML report: one self-contained page with pictures (matplotlib, embedded
as PNG data) and the tables of the Markdown report. Every text that comes from
data (shapes, notes, explanations, paths) is HTML-escaped."""

from __future__ import annotations

import base64
import html
import io
import itertools
from typing import Any

from graphsval_core.datamodel.regimes import REGIMES
from graphsval_core.validate.harness import Validation
from graphsval_core.validate.report import heatmap_rows, render
from graphsval_core.validate.summary import Summary

#: The colours regimes are drawn in, in the order of :data:`REGIMES` (cycled).
PALETTE = ("#7f7f7f", "#d62728", "#2ca02c", "#17becf", "#1f77b4", "#9467bd", "#8c564b")
#: One colour per regime.
REGIME_COLOURS = dict(zip(REGIMES, itertools.cycle(PALETTE)))


def _png(fig: Any) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _heatmap(summary: Summary) -> str:
    import matplotlib.pyplot as plt

    header, rows = heatmap_rows(summary)
    fig, ax = plt.subplots(figsize=(1.6 * len(header) + 2, 0.45 * len(rows) + 1.2))
    ax.axis("off")
    colours = []
    for row in rows:
        colours.append(
            ["white"]
            + [
                "#c7e9c0"
                if c.startswith("OK")
                else "#fcbba1"
                if c.startswith("FAIL")
                else "#deebf7"
                if c.startswith("consistency")
                else "white"
                for c in row[1:]
            ]
        )
    table = ax.table(
        cellText=rows, colLabels=header, cellColours=colours, loc="center", cellLoc="center"
    )
    table.auto_set_font_size(False)
    table.set_fontsize(8)
    table.auto_set_column_width(list(range(len(header))))
    return _png(fig)


def _scatter(validation: Validation) -> str:
    import matplotlib.pyplot as plt

    recs = validation.records.take(validation.records.checked)
    measured, predicted = recs.latency_measured_s, recs.latency_predicted_s
    fig, ax = plt.subplots(figsize=(6, 5))
    for regime, colour in REGIME_COLOURS.items():
        sub = recs.regime_predicted == regime
        if sub.any():
            ax.scatter(measured[sub], predicted[sub], s=12, c=colour, label=regime)
    if len(recs):
        lo = float(min(measured.min(), predicted.min())) / 2
        hi = float(max(measured.max(), predicted.max())) * 2
        ax.plot([lo, hi], [lo, hi], "k-", lw=0.8)
        ax.fill_between(
            [lo, hi],
            [lo * 0.75, hi * 0.75],
            [lo * 1.25, hi * 1.25],
            color="grey",
            alpha=0.15,
            label="+-25%",
        )
        ax.set_xlim(lo, hi)
        ax.set_ylim(lo, hi)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("measured latency (s)")
    ax.set_ylabel("predicted latency (s)")
    ax.legend(fontsize=7)
    ax.set_title("predicted vs measured, coloured by predicted regime")
    return _png(fig)


def _roofline(registry: Any, hw: str, validation: Validation) -> str:
    """Achieved FLOP/s against operational intensity (ops per working-set byte),
    with the model's roofs: each tier's effective bandwidth and each dtype's
    achievable peak."""
    import matplotlib.pyplot as plt
    import numpy as np

    from graphsval_core.datamodel.dtypes import bytes_per_element

    target = registry.target(hw)
    records = validation.records
    recs = records.take(records.checked & (records.hardware == hw))
    fig, ax = plt.subplots(figsize=(6, 4.5))
    xs = []
    for regime, colour in REGIME_COLOURS.items():
        index = np.flatnonzero((recs.regime_predicted == regime) & (recs.terms.flops > 0))
        pts = []
        for i in index:
            op = registry.op(recs.op[i])
            dims = np.array([[int(d) for d in recs.shape[i].split("x")]])
            ws = float(op.working_set_bytes(dims, bytes_per_element(recs.dtype[i]))[0])
            flops = float(recs.terms.flops[i])
            pts.append((flops / ws, flops / float(recs.latency_measured_s[i])))
        if pts:
            xs += [p[0] for p in pts]
            ax.scatter(*zip(*pts, strict=True), s=12, c=colour, label=regime)
    lo, hi = (min(xs) / 4, max(xs) * 4) if xs else (0.01, 1000.0)
    grid = np.geomspace(lo, hi, 64)
    for tier in registry.memory_hierarchy(target):
        ax.plot(
            grid,
            grid * tier.effective_bandwidth_bps,
            "--",
            lw=0.8,
            label=f"{tier.name} {tier.effective_bandwidth_bps / 1e9:.3g} GB/s",
        )
    for dtype, peak in target.peak_ops_per_s.items():
        ax.axhline(peak * target.compute_fraction[dtype], lw=0.8, color="k", alpha=0.5)
        ax.text(
            grid[0],
            peak * target.compute_fraction[dtype],
            f" {dtype} peak",
            fontsize=7,
            va="bottom",
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("ops per working-set byte")
    ax.set_ylabel("achieved ops/s (measured)")
    ax.set_title(f"roofline: {hw}")
    ax.legend(fontsize=6)
    return _png(fig)


def render_html(summary: Summary, validation: Validation, registry: Any) -> str:
    import matplotlib

    matplotlib.use("Agg")
    esc = html.escape
    images = [
        ("Heatmap", _heatmap(summary)),
        ("Predicted vs measured latency", _scatter(validation)),
    ]
    records = validation.records
    for hw in sorted(set(records.hardware[records.checked])):
        images.append((f"Roofline {hw}", _roofline(registry, hw, validation)))
    body = ["<h1>graphsval validation report</h1>"]
    for title, data in images:
        body.append(f'<h2>{esc(title)}</h2><img alt="{esc(title)}" src="{data}">')
    text = render(summary, validation, markdown=True, per_shape="all")
    body.append("<h2>Report</h2>")
    body.append(_markdown_to_html(text))
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        "<title>graphsval validation report</title>"
        "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;"
        "font-size:12px}td,th{border:1px solid #ccc;padding:2px 6px}img{max-width:100%}"
        "</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n"
    )


def _markdown_to_html(text: str) -> str:
    """The small Markdown subset the report uses: headings, bullets, tables, lines."""
    esc = html.escape
    out: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("|"):
            rows = []
            while i < len(lines) and lines[i].startswith("|"):
                if not lines[i].startswith("|---"):
                    cells = [
                        c.strip().replace("\\|", "|") for c in lines[i].strip("|").split(" | ")
                    ]
                    rows.append(cells)
                i += 1
            head, *rest = rows
            out.append("<table><tr>" + "".join(f"<th>{esc(c)}</th>" for c in head) + "</tr>")
            out += ["<tr>" + "".join(f"<td>{esc(c)}</td>" for c in r) + "</tr>" for r in rest]
            out.append("</table>")
            continue
        if line.startswith("## "):
            out.append(f"<h3>{esc(line[3:])}</h3>")
        elif line.startswith("# "):
            pass
        elif line.startswith("- "):
            out.append(f"<li>{esc(line[2:])}</li>")
        elif line.strip():
            out.append(f"<p>{esc(line)}</p>")
        i += 1
    return "\n".join(out)
