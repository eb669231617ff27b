"""``graphsval predict --rollup``: one forward pass of a model, summed from
the predictions of its calls (a sweep from ``sweep from-config``).

Each call site of an entry counts ``count`` calls per pass. A site with a
``batch`` (attention: ``batch`` heads in one kernel, as PyTorch runs it, one
per layer) is one kernel doing ``batch`` heads' work: it pays one launch;
its output tiles are those of the heads' products stacked into one
``(batch x M, K, N)`` product, spread over the compute units in waves (that
product's compute time and first touch); every head streams its own operands
(the head's memory time and packing, ``batch`` times); compute and memory
overlap as in the head's prediction. Energy: the heads' operations and
traffic, and the static power over the batched kernel's latency.

Per phase (``prefill T=128``: 128 tokens of every sequence; ``decode
ctx=128``: one token of every sequence with a cache of 128) the rollup gives
the latency, energy, calls, tokens per second and energy per token, a
breakdown per call site and per predicted regime, and the weight-bytes floor:
the bytes of every linear layer's weights over the outermost tier's
bandwidth, a time no pass can beat since every weight is read once.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from attrs import field, frozen

from graphsval_core.datamodel.dtypes import bytes_per_element


@frozen
class Site:
    """One call site of a sweep entry: its phase, name, calls per pass and
    the heads one call batches (1: a plain call)."""

    phase: str
    site: str
    count: int
    batch: int = 1


@frozen
class Call:
    """One entry of the sweep: op, shape, dtype and its call sites."""

    op: str
    shape: tuple[int, ...]
    dtype: str
    sites: tuple[Site, ...] = field(converter=tuple)


def combined_shape(shape: tuple[int, ...], batch: int) -> tuple[int, ...]:
    """The heads of a batched product stacked into one: ``(batch x M, K, N)``."""
    return (shape[0] * batch, *shape[1:])


def batched_terms(
    head: Mapping[str, float], stacked: Mapping[str, float], batch: int
) -> dict[str, float]:
    """Latency and energy of one kernel doing ``batch`` heads (see module doc):
    ``head`` is the prediction of one head, ``stacked`` that of the stacked
    product (each with latency_s, launch_s, compute_s, memory_s, hidden_s,
    first_touch_s, pack_s, energy_j, energy_static_j, regime and binding: the
    regime of its binding tier)."""
    if batch == 1:
        return {
            "latency_s": head["latency_s"],
            "energy_j": head["energy_j"],
            "regime": head["regime"],
        }
    compute = stacked["compute_s"]
    memory = batch * head["memory_s"]
    smaller_head = min(head["compute_s"], head["memory_s"])
    overlap = head["hidden_s"] / smaller_head if smaller_head > 0 else 1.0
    exposed = max(compute, memory) + (1.0 - overlap) * min(compute, memory)
    latency = head["launch_s"] + exposed + stacked["first_touch_s"] + batch * head["pack_s"]
    static_power = head["energy_static_j"] / head["latency_s"] if head["latency_s"] > 0 else 0.0
    work = head["energy_j"] - head["energy_static_j"]
    # the largest of launch, compute and memory, as the model names a regime
    largest = max(("launch", head["launch_s"]), ("compute", compute), ("memory", memory),
                  key=lambda kv: kv[1])[0]  # fmt: skip
    regime = {"launch": "launch_bound", "compute": "alu_bound"}.get(largest, head["binding"])
    return {
        "latency_s": latency,
        "energy_j": batch * work + static_power * latency,
        "regime": regime,
    }


def phase_tokens(phase: str, batch: int) -> int | None:
    """Tokens one pass of ``phase`` produces or reads in: ``prefill T=128`` ->
    128 per sequence, ``decode ctx=128`` -> 1 per sequence (None: unknown)."""
    if re.match(r"prefill T=(\d+)$", phase):
        return int(phase.split("=")[1]) * batch
    if re.match(r"decode ctx=(\d+)$", phase):
        return batch
    return None


def _weight_bytes(call: Call) -> float:
    """The bytes of a linear call's weights (``IN x OUT`` elements)."""
    if call.op not in ("linear", "linear_nobias") or len(call.shape) != 3:
        return 0.0
    return float(call.shape[1] * call.shape[2] * bytes_per_element(call.dtype))


def rollup(
    calls: Sequence[Call],
    rows: Sequence[Mapping[str, Any]],
    stacked: Mapping[tuple[int, int], Mapping[str, float]],
    *,
    batch: int,
    floor_bandwidth: tuple[str, float] | None,
) -> list[dict[str, Any]]:
    """Per phase, in first-seen order (see module doc). ``rows[i]`` is the
    prediction of ``calls[i]``; ``stacked[(i, b)]`` that of its heads stacked
    ``b`` at a time; ``floor_bandwidth`` the outermost tier's name and
    effective bandwidth (None: no floor)."""
    phases: dict[str, dict[str, Any]] = {}
    for i, (call, row) in enumerate(zip(calls, rows, strict=True)):
        for site in call.sites:
            terms = batched_terms(row, stacked.get((i, site.batch), row), site.batch)
            slot = phases.setdefault(
                site.phase,
                {"phase": site.phase, "calls": 0, "latency_s": 0.0, "energy_j": 0.0,
                 "weight_bytes": 0.0, "sites": {}, "regimes": {}},
            )  # fmt: skip
            latency, energy = site.count * terms["latency_s"], site.count * terms["energy_j"]
            slot["calls"] += site.count
            slot["latency_s"] += latency
            slot["energy_j"] += energy
            slot["weight_bytes"] += site.count * _weight_bytes(call)
            name = site.site + (f" ({site.batch} heads a kernel)" if site.batch > 1 else "")
            entry = slot["sites"].setdefault(
                name, {"site": name, "calls": 0, "latency_s": 0.0, "energy_j": 0.0, "regimes": {}}
            )
            entry["calls"] += site.count
            entry["latency_s"] += latency
            entry["energy_j"] += energy
            regime = str(terms["regime"])
            entry["regimes"][regime] = entry["regimes"].get(regime, 0.0) + latency
            slot["regimes"][regime] = slot["regimes"].get(regime, 0.0) + latency
    out = []
    for slot in phases.values():
        tokens = phase_tokens(slot["phase"], batch)
        latency = slot["latency_s"]
        slot["tokens"] = tokens
        slot["tokens_per_s"] = tokens / latency if tokens and latency > 0 else None
        slot["energy_per_token_j"] = slot["energy_j"] / tokens if tokens else None
        if floor_bandwidth is not None and slot["weight_bytes"] > 0:
            tier, bandwidth = floor_bandwidth
            slot["weight_floor_tier"] = tier
            slot["weight_floor_s"] = slot["weight_bytes"] / bandwidth
        else:
            slot["weight_floor_tier"] = None
            slot["weight_floor_s"] = None
        sites = sorted(slot["sites"].values(), key=lambda s: -s["latency_s"])
        for s in sites:
            s["share"] = s["latency_s"] / latency if latency > 0 else 0.0
            s["regime"] = max(s["regimes"], key=s["regimes"].get) if s["regimes"] else None
            del s["regimes"]
        slot["sites"] = sites
        slot["regimes"] = {
            r: {"latency_s": v, "share": v / latency if latency > 0 else 0.0}
            for r, v in sorted(slot["regimes"].items(), key=lambda kv: -kv[1])
        }
        out.append(slot)
    return out


def rollup_lines(phases: Sequence[Mapping[str, Any]], batch: int) -> list[str]:
    """The rollup for people: per phase a headline, the weight floor, a table
    of its call sites and its regimes."""
    from graphsval_core.datamodel.tables import format_table
    from graphsval_core.datamodel.units import fmt_bytes, fmt_joules, fmt_seconds, fmt_si

    out: list[str] = []
    for p in phases:
        if out:
            out.append("")
        head = (
            f"{p['phase']} (batch {batch}): {fmt_seconds(p['latency_s'])} and "
            f"{fmt_joules(p['energy_j'])} a pass, {p['calls']} calls"
        )
        if p["tokens_per_s"]:
            head += (
                f"; {p['tokens_per_s']:,.1f} tokens/s, "
                f"{fmt_joules(p['energy_per_token_j'])} a token"
            )
        out.append(head)
        if p["weight_floor_s"]:
            ratio = p["latency_s"] / p["weight_floor_s"]
            bandwidth = fmt_si(p["weight_bytes"] / p["weight_floor_s"], "B/s")
            out.append(
                f"  weights {fmt_bytes(p['weight_bytes'])} read a pass: at "
                f"{p['weight_floor_tier']}'s {bandwidth} no pass beats "
                f"{fmt_seconds(p['weight_floor_s'])} (this one is {ratio:.2g}x that floor)"
            )
            if ratio < 1:
                out.append(
                    "  below the floor: each call is predicted on warm data, as it is measured; "
                    "a pass whose weights outgrow the caches reads them all from "
                    f"{p['weight_floor_tier']}"
                )
        table = [
            [s["site"], s["calls"], fmt_seconds(s["latency_s"]), f"{s['share']:.0%}",
             fmt_joules(s["energy_j"]), s["regime"] or "-"]
            for s in p["sites"]
        ]  # fmt: skip
        lines = format_table(["SITE", "CALLS", "LATENCY", "SHARE", "ENERGY", "REGIME"], table)
        out += ["  " + line for line in lines.splitlines()]
        regimes = ", ".join(
            f"{r} {v['share']:.0%} ({fmt_seconds(v['latency_s'])})" for r, v in p["regimes"].items()
        )
        out.append(f"  by predicted regime: {regimes}")
    return out


def weights_floor_tier(tiers: Sequence[Any]) -> tuple[str, float] | None:
    """The outermost tier's name and effective bandwidth (None: no tier)."""
    if not tiers:
        return None
    last = tiers[-1]
    return str(last.name), float(last.effective_bandwidth_bps)
