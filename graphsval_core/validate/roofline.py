"""Hierarchical rooflines, in the manner of Intel Advisor and Nsight Compute:
one plot per target and dtype.

- **Roofs**: each memory tier's calibrated effective bandwidth (the
  bandwidth the model uses), a line ``ops/s = bandwidth x intensity`` that
  bends into the compute ceiling where it meets it (the ridge point).
- **Ceiling**: the dtype's achievable peak, ``peak x compute_fraction`` (the
  calibrated fraction); the datasheet peak is drawn faint above it.
- **Points**: every checked record at its *binding tier's* arithmetic
  intensity (its operations over the bytes that tier serves), at the ops/s
  it achieved (operations over the measured latency), coloured by that tier:
  an l2-bound point is read against the l2 roof. A failing record is drawn
  as a cross.
- **Labels** sit just above their roofs at the left edge (the ceilings'
  above theirs), pushed apart by the height a label takes at the plot's
  scale, so that no two overlap.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from attrs import frozen

from graphsval_core.datamodel.units import fmt_si
from graphsval_core.validate.records import Records

#: The colour of each tier's roof and points (and of compute-bound points).
TIER_COLOURS = {
    "l1": "#1b9e77",
    "l2": "#d95f02",
    "l3": "#7570b3",
    "dram": "#e7298a",
    "compute": "#333333",
    "launch": "#999999",
}


@frozen
class Roof:
    """A tier's roof: its name and calibrated effective bandwidth (B/s)."""

    tier: str
    bandwidth_bps: float


@frozen
class RooflineData:
    """What one roofline plot draws (see module doc)."""

    target: str
    dtype: str
    roofs: tuple[Roof, ...]
    ceiling_ops_per_s: float
    peak_ops_per_s: float
    #: per point: intensity (ops per byte of its binding tier), achieved ops/s,
    #: binding tier, passed, and the record's label
    intensity: np.ndarray
    achieved: np.ndarray
    tier: np.ndarray
    passed: np.ndarray
    labels: tuple[str, ...]
    #: records left out: no operations, or no byte served by their binding tier
    left_out: int


def roofline_data(records: Records, target: Any, dtype: str, tiers: Sequence[Any]) -> RooflineData:
    """The roofline of ``target`` at ``dtype`` over its checked ``records``
    (``tiers``: the target's memory hierarchy, innermost first)."""
    mask = records.checked & (records.hardware == target.key) & (records.dtype == dtype)
    recs = records.take(mask)
    flops = recs.flops.astype(float)
    binding = recs.binding_tier.astype(str)
    served = np.full(len(recs), np.nan)
    for tier in {t.name for t in tiers}:
        column = getattr(recs, f"bytes_{tier}", None)
        if column is not None:
            served = np.where(binding == tier, column.astype(float), served)
    good = (flops > 0) & (served > 0) & np.isfinite(served) & (recs.latency_measured_s > 0)
    labels = tuple(f"{recs.op[i]} {recs.shape[i]}" for i in np.flatnonzero(good))
    regime = recs.regime_predicted.astype(str)
    colour_key = np.where(
        regime == "alu_bound", "compute", np.where(regime == "launch_bound", "launch", binding)
    )
    peak = float(target.peak_ops_per_s[dtype])
    return RooflineData(
        target=target.key,
        dtype=dtype,
        roofs=tuple(Roof(t.name, float(t.effective_bandwidth_bps)) for t in tiers),
        ceiling_ops_per_s=peak * float(target.compute_fraction[dtype]),
        peak_ops_per_s=peak,
        intensity=(flops / served)[good],
        achieved=(flops / recs.latency_measured_s.astype(float))[good],
        tier=colour_key[good],
        passed=np.array([bool(v) for v in recs.passed[good]], dtype=bool),
        labels=labels,
        left_out=int((~good).sum()),
    )


#: The height a label takes, in points (8 pt text and its padding).
LABEL_POINTS = 12.0
#: A label's backing, so that a line under it does not strike it through.
LABEL_BOX = {"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.8}


def _limits(data: RooflineData) -> tuple[float, float, float, float]:
    ridges = [data.ceiling_ops_per_s / r.bandwidth_bps for r in data.roofs]
    xs = [*data.intensity.tolist(), *ridges]
    lo = max(min(xs) / 4, 1e-3) if xs else 1e-2
    hi = max(xs) * 4 if xs else 1e3
    top = max(data.peak_ops_per_s, float(data.achieved.max()) if data.achieved.size else 0) * 4
    lows = [lo * min(r.bandwidth_bps for r in data.roofs)] if data.roofs else []
    if data.achieved.size:
        lows.append(float(data.achieved.min()) / 2)
    bottom = min(lows) if lows else data.ceiling_ops_per_s / 1e4
    return lo, hi, bottom, top


def _label_gap(ax: Any, bottom: float, top: float) -> float:
    """The decades one label takes on ``ax``'s y axis."""
    height_pt = ax.get_window_extent().height * 72.0 / ax.figure.dpi
    return LABEL_POINTS * math.log10(top / bottom) / max(height_pt, 1.0)


def draw_roofline(ax: Any, data: RooflineData) -> None:
    """Draw ``data`` on the matplotlib axes ``ax`` (log-log)."""
    from matplotlib.lines import Line2D

    unit = "OP/s" if data.dtype.startswith("int") else "FLOP/s"
    lo, hi, bottom, top = _limits(data)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(bottom, top)
    grid = np.geomspace(lo, hi, 256)
    for roof in data.roofs:
        colour = TIER_COLOURS.get(roof.tier, "#555555")
        bent = np.minimum(grid * roof.bandwidth_bps, data.ceiling_ops_per_s)
        ax.plot(grid, bent, color=colour, lw=1.6, zorder=2)
        ridge = data.ceiling_ops_per_s / roof.bandwidth_bps
        if lo < ridge < hi:
            ax.plot([ridge], [data.ceiling_ops_per_s], marker="|", color=colour, ms=9, zorder=2)
    ax.axhline(data.peak_ops_per_s, color="#999999", lw=0.9, ls=":", zorder=1)
    gap = _label_gap(ax, bottom, top)
    # the roofs' labels just above their lines at the left edge, the
    # ceilings' above theirs; none overlapping
    wanted = [math.log10(lo * 1.15 * r.bandwidth_bps) + gap * 0.15 for r in data.roofs]
    ceiling = math.log10(data.ceiling_ops_per_s) + gap * 0.15
    peak = math.log10(data.peak_ops_per_s) + gap * 0.15
    texts = [f"{r.tier} {fmt_si(r.bandwidth_bps, 'B/s')}" for r in data.roofs]
    colours = [TIER_COLOURS.get(r.tier, "#555555") for r in data.roofs]
    texts.append(f"achievable {data.dtype} {fmt_si(data.ceiling_ops_per_s, unit)}")
    colours.append("#222222")
    heights = [*wanted, ceiling]
    if data.peak_ops_per_s > data.ceiling_ops_per_s * 1.001:
        texts.append(f"datasheet peak {fmt_si(data.peak_ops_per_s, unit)}")
        colours.append("#777777")
        heights.append(peak)
    for text, colour, y in zip(texts, colours, spread_up(heights, gap), strict=True):
        ax.text(
            lo * 1.15, 10**y, text, color=colour, fontsize=8, va="bottom", ha="left",
            bbox=LABEL_BOX, zorder=4,
        )  # fmt: skip
    handles = []
    for key in dict.fromkeys(data.tier.tolist()):
        sel = data.tier == key
        colour = TIER_COLOURS.get(key, "#555555")
        name = {"compute": "alu-bound", "launch": "launch-bound"}.get(key, f"{key}-bound")
        for passed, marker in ((True, "o"), (False, "x")):
            pts = sel & (data.passed == passed)
            if pts.any():
                ax.scatter(
                    data.intensity[pts], data.achieved[pts], s=16 if passed else 24,
                    marker=marker, color=colour, alpha=0.75, linewidths=1.1, zorder=3,
                )  # fmt: skip
        handles.append(
            Line2D([], [], marker="o", ls="", color=colour, label=f"{name} ({int(sel.sum())})")
        )
    if (~data.passed).any():
        handles.append(Line2D([], [], marker="x", ls="", color="#555555", label="fails"))
    ax.set_xlabel("arithmetic intensity at the binding tier (ops per byte it serves)")
    ax.set_ylabel(f"achieved {unit} (measured)")
    note = f"; {data.left_out} records without tier bytes left out" if data.left_out else ""
    ax.set_title(f"{data.target} {data.dtype}: {len(data.intensity)} records{note}", fontsize=9)
    ax.grid(True, which="major", lw=0.3, alpha=0.5)
    if handles:
        ax.legend(handles=handles, fontsize=7, loc="lower right", framealpha=0.9)


def spread_up(wanted: Sequence[float], gap: float) -> list[float]:
    """Label heights (log10) as close to ``wanted`` as they can be with at
    least ``gap`` between any two: a label that would touch the one below it
    moves up (a label sits above its line)."""
    order = sorted(range(len(wanted)), key=lambda i: wanted[i])
    placed: dict[int, float] = {}
    last = -math.inf
    for i in order:
        y = max(wanted[i], last + gap)
        placed[i] = y
        last = y
    return [placed[i] for i in range(len(wanted))]
