"""The pictures of the HTML report, drawn with matplotlib (the ``report``
extra) and embedded as PNG data: per target, predicted against measured
latency and the distribution of the signed latency error per regime with
its tolerance; per target and dtype, the hierarchical roofline
(:mod:`graphsval_core.validate.roofline`)."""

from __future__ import annotations

import base64
import io
import itertools
from typing import Any

import numpy as np

from graphsval_core.datamodel.regimes import REGIMES, short
from graphsval_core.validate.records import Records
from graphsval_core.validate.roofline import draw_roofline, roofline_data

#: The colours regimes are drawn in, in the order of :data:`REGIMES` (cycled).
PALETTE = ("#999999", "#333333", "#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e")
#: One colour per regime.
REGIME_COLOURS = dict(zip(REGIMES, itertools.cycle(PALETTE)))
#: Width of one plot, inches.
WIDTH = 6.4


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def png(fig: Any) -> str:
    """The figure as a ``data:`` URI (and closed)."""
    plt = _pyplot()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def predicted_vs_measured(records: Records, hw: str) -> str:
    """Predicted against measured latency of one target's checked records,
    coloured by predicted regime; failing records as crosses; y = x and the
    10% and 25% bands."""
    plt = _pyplot()
    recs = records.take(records.checked & (records.hardware == hw))
    measured, predicted = recs.latency_measured_s.astype(float), recs.latency_predicted_s
    fig, ax = plt.subplots(figsize=(WIDTH, 4.8))
    lo = float(min(measured.min(), predicted.min())) / 2
    hi = float(max(measured.max(), predicted.max())) * 2
    grid = np.array([lo, hi])
    ax.plot(grid, grid, color="k", lw=0.8)
    for band, alpha in ((0.25, 0.08), (0.10, 0.12)):
        ax.fill_between(grid, grid * (1 - band), grid * (1 + band), color="grey", alpha=alpha)
    passed = np.array([bool(v) for v in recs.passed], dtype=bool)
    for regime in REGIMES:
        sub = recs.regime_predicted == regime
        for ok, marker in ((True, "o"), (False, "x")):
            pts = sub & (passed == ok)
            if pts.any():
                ax.scatter(
                    measured[pts],
                    predicted[pts],
                    s=14 if ok else 20,
                    marker=marker,
                    color=REGIME_COLOURS[regime],
                    alpha=0.75,
                    label=f"{short(regime)} ({'pass' if ok else 'fail'}, {int(pts.sum())})",
                )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_xlabel("measured latency (s)")
    ax.set_ylabel("predicted latency (s)")
    ax.set_title(f"{hw}: predicted vs measured (grey bands: ±10%, ±25%)", fontsize=9)
    ax.grid(True, lw=0.3, alpha=0.5)
    ax.legend(fontsize=7, loc="upper left", ncols=2, framealpha=0.85)
    return png(fig)


def error_distribution(records: Records, hw: str) -> str:
    """The cumulative distribution of the signed latency error of one target's
    checked records per predicted regime, each regime's tolerance marked."""
    plt = _pyplot()
    recs = records.take(records.checked & (records.hardware == hw))
    fig, ax = plt.subplots(figsize=(WIDTH, 3.8))
    ratio = recs.latency_predicted_s / recs.latency_measured_s.astype(float)
    for regime in REGIMES:
        sub = recs.regime_predicted == regime
        if not sub.any():
            continue
        colour = REGIME_COLOURS[regime]
        r = np.sort(ratio[sub])
        share = np.arange(1, r.size + 1) / r.size
        tolerance = float(np.nanmax(recs.tolerance_latency[sub]))
        within = float(np.mean(np.abs(r - 1) <= tolerance))
        label = f"{short(regime)}: {int(sub.sum())} records, {within:.0%} within ±{tolerance:.0%}"
        ax.step(r, share, where="post", color=colour, lw=1.4, label=label)
        for edge in (1 - tolerance, 1 + tolerance):
            ax.axvline(edge, color=colour, lw=0.8, ls="--", alpha=0.6)
    ax.axvline(1.0, color="k", lw=0.8)
    ax.set_xscale("log")
    ticks = [0.01, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 10.0, 100.0]
    lo, hi = float(np.nanmin(ratio)), float(np.nanmax(ratio))
    shown = [t for t in ticks if lo / 1.5 <= t <= hi * 1.5 or t == 1.0]
    ax.set_xticks(shown, [f"{t - 1:+.0%}" for t in shown])
    ax.minorticks_off()
    ax.set_xlim(min(lo, 0.9) / 1.1, max(hi, 1.1) * 1.1)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("signed latency error, (predicted - measured) / measured (log scale)")
    ax.set_ylabel("share of records")
    ax.set_title(f"{hw}: latency error by predicted regime (dashed: tolerance)", fontsize=9)
    ax.grid(True, lw=0.3, alpha=0.5)
    ax.legend(fontsize=7, loc="lower right", framealpha=0.85)
    return png(fig)


def roofline(records: Records, target: Any, dtype: str, tiers: Any) -> str:
    """The hierarchical roofline of ``target`` at ``dtype`` (see
    :mod:`graphsval_core.validate.roofline`)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(WIDTH, 4.8))
    draw_roofline(ax, roofline_data(records, target, dtype, tiers))
    return png(fig)
