"""What ``graphsval explain`` says of one shape: the model's sentence, the
measured row beside the prediction when a baseline has the shape, where the
latency goes (term by term, tier by tier) and where the energy goes (the
operations, each tier's traffic, the static power over the latency), in
words and numbers; or all of it as one JSON record."""

from __future__ import annotations

from typing import Any

import numpy as np

from graphsval_core.datamodel.errors import one_line
from graphsval_core.datamodel.regimes import TIER_NAMES
from graphsval_core.datamodel.tables import wrap_line
from graphsval_core.datamodel.units import (
    fmt_bytes,
    fmt_cost,
    fmt_joules,
    fmt_seconds,
    fmt_share,
    fmt_si,
)


def energy_split(row: dict[str, Any], idle_power_w: float | None) -> dict[str, Any] | None:
    """``{"compute_j", "<tier>_j"..., "static_j", "total_j", "static_power_w"}``
    of a prediction's record (None: the predictor reports no energy terms)."""
    terms = row.get("terms") or {}
    if "energy_compute_j" not in terms or "energy_static_j" not in terms:
        return None
    out: dict[str, Any] = {"compute_j": terms["energy_compute_j"]}
    for tier in TIER_NAMES:
        if f"energy_{tier}_j" in terms:
            out[f"{tier}_j"] = terms[f"energy_{tier}_j"]
    out["static_j"] = terms["energy_static_j"]
    out["total_j"] = row["energy_j"]
    out["static_power_w"] = idle_power_w
    return out


def measured_view(
    registry: Any, target: Any, op: Any, dims: tuple[int, ...], dtype: str, pred: Any, found: Any
) -> dict[str, Any]:
    """The measured row ``found`` (``(baseline, row)``) beside ``pred``: its
    values, the errors of the prediction, and the regime the measurement
    implies (the model's peaks and bandwidths against the achieved rates)."""
    from graphsval_core.model.classifier import classify_details, measured_regime
    from graphsval_core.validate.measured import measured_dict
    from graphsval_core.validate.paths import report_path

    baseline, row = found
    data = measured_dict(baseline, row)
    data["file"] = report_path(str(baseline.path))  # as report.json names it; the text escapes
    predicted_latency, predicted_energy = float(pred.latency_s[0]), float(pred.energy_j[0])
    latency = row.latency_s
    data["latency_error"] = (predicted_latency - latency) / latency if latency else None
    energy = row.energy_j
    data["energy_error"] = (predicted_energy - energy) / energy if energy else None
    regime = None
    if latency:
        shapes = np.array([dims], dtype=np.int64)
        reuse = pred if pred.predictor == "reference" else None
        cls = classify_details(registry, target, op, shapes, dtype, prediction=reuse)
        if cls.prediction is not None:
            regime = str(measured_regime(cls.prediction, np.array([latency]), target)[0])
    data["regime_measured"] = regime
    return data


def _pct(value: float | None) -> str:
    return "" if value is None else f"({value:+.1%})"


def explain_lines(data: dict[str, Any], predictor: str, width: int | None = None) -> list[str]:
    """The text of ``explain`` (see module doc) from its JSON record, as
    items to join with newlines; the predictor as the user named it. Its
    prose is wrapped to ``width`` (None: not wrapped); the measured table is
    one item of several lines, which the wrap keeps as they are."""
    lines = _lines(data, predictor)
    return lines if width is None else [w for line in lines for w in wrap_line(line, width)]


def _lines(data: dict[str, Any], predictor: str) -> list[str]:
    out = [data["explanation"]]
    measured = data.get("measured")
    terms = data.get("terms") or {}
    if measured:
        where = f"{one_line(measured['file'])}:{measured['line']}"
        latency, energy = measured["latency_s"], measured["energy_j"]
        rows = [
            ("", "predicted", f"measured ({where})"),
            (
                "latency",
                fmt_seconds(data["latency_s"]),
                (fmt_seconds(latency) if latency else "-") + f"  {_pct(measured['latency_error'])}",
            ),
            (
                "energy",
                fmt_joules(data["energy_j"]),
                (fmt_joules(energy) if energy else "not measured")
                + f"  {_pct(measured['energy_error'])}",
            ),
            ("regime", data["regime"], (measured["regime_measured"] or "-") + " (inferred)"),
        ]
        widths = [max(len(r[k]) for r in rows) for k in range(2)]
        out.append("")
        table = [f"  {a.ljust(widths[0])}  {b.ljust(widths[1])}  {c}".rstrip() for a, b, c in rows]
        out.append("\n".join(table))  # one item: a wrap keeps a table's lines as they are
    else:
        out.append("")
        out.append(f"  measured: none ({data.get('measured_looked_in', 'no baseline has it')})")
    if not terms:
        out.append("")
        out.append(
            f"terms: none: predictor {predictor!r} reports no breakdown (compute, "
            "memory or per-tier times), only its totals"
        )
        return out
    out.append("")
    out += _latency_lines(data, terms)
    split = data.get("energy_split")
    if split:
        out.append("")
        out += _energy_lines(split)
    return out


def _latency_lines(data: dict[str, Any], terms: dict[str, float]) -> list[str]:
    parts = [
        (label, terms[name])
        for name, label in (
            ("launch_s", "launch"),
            ("exposed_compute_s", "compute"),
            ("exposed_memory_s", "memory"),
            ("first_touch_s", "first touch"),
            ("pack_s", "packing"),
        )
        if name in terms
    ]
    total = data["latency_s"]
    text = " + ".join(f"{label} {fmt_seconds(v)} ({v / total:.0%})" for label, v in parts if v)
    out = [f"Latency {fmt_seconds(total)} = {text or '0'}"]
    details = data.get("details") or {}
    if details.get("team_s"):
        out.append(
            f"  (of the launch, {fmt_seconds(details['team_s'])} wakes and joins the thread "
            f"team: {details['team']})"
        )
    if details.get("accumulate_s"):
        out.append(
            f"  (of the launch, {fmt_seconds(details['accumulate_s'])} is what the library's "
            f"call costs more for accumulating onto C: accumulate_overhead_s.{data['dtype']})"
        )
    if terms.get("hidden_s"):
        out.append(f"  ({fmt_seconds(terms['hidden_s'])} of memory and compute overlap, hidden)")
    if details.get("product_overlap") is not None:
        share = details["product_overlap"]
        hides = fmt_share(share)  # the roofline's 1: all of it
        out.append(
            f"  (the GEMM library hides {hides} of the shorter of "
            "compute and memory beyond the innermost tier: "
            f"{fmt_cost(details['unhidden_s'])} of it "
            "adds to the latency)"
        )
    moved, times = details.get("bytes_per_tier") or {}, details.get("time_per_tier_s") or {}
    bandwidth = details.get("effective_bandwidth_bps") or {}
    tiers = [
        f"{t} {fmt_bytes(b)} in {fmt_seconds(times.get(t, 0.0))} at {fmt_si(bandwidth[t], 'B/s')}"
        + (" (binding)" if t == data.get("binding_tier") else "")
        for t, b in moved.items()
        if b and t in bandwidth
    ]
    if tiers:
        out.append("  per tier: " + "; ".join(tiers))
    return out


def _energy_lines(split: dict[str, Any]) -> list[str]:
    total = split["total_j"]
    parts = [("compute", split["compute_j"])]
    parts += [(t, split[f"{t}_j"]) for t in TIER_NAMES if f"{t}_j" in split]
    parts.append(("static", split["static_j"]))
    text = " + ".join(f"{k} {fmt_joules(v)} ({v / total:.0%})" for k, v in parts if v)
    out = [f"Energy {fmt_joules(total)} = {text}"]
    biggest, value = max(parts, key=lambda kv: kv[1])
    share = value / total if total else 0.0
    if biggest == "static":
        power = split.get("static_power_w")
        watts = f" ({power:.3g} W of idle power over the latency)" if power else ""
        out.append(
            f"  static power is {share:.0%} of the energy{watts}: the time the call takes "
            "costs more than its operations and traffic"
        )
    elif biggest == "compute":
        out.append(f"  the operations are {share:.0%} of the energy")
    else:
        out.append(f"  {biggest} traffic is {share:.0%} of the energy")
    return out
