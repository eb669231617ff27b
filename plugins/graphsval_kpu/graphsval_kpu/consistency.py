"""The KPU's own model rule and consistency checks.

**Weight-stationary regime.** A KPU keeps a layer's weights resident across
its tiles' scratchpads when they fit in 80% of the on-chip memory (the rest
holds the streaming activations and outputs); the activations then stream
through once and every operand crosses the DRAM boundary exactly once. The
residency window below gives the reference model that tile (the whole
product) at the on-chip tier; otherwise the default square tile applies.

Checks (run through the ``graphsval_consistency_checks`` hook):

- ``kpu.weight_stationary``: the regime activates exactly when the weights
  fit in 80% of on-chip memory: DRAM traffic is compulsory just inside the
  threshold and above compulsory just outside it;
- ``kpu.tile_utilisation``: per-tile utilisation and waves of the reference
  workloads, reported; it fails when a utilisation leaves (0, 1].
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from graphsval_core.plugin_api import (
    LINEAR,
    MATMULS,
    CheckContext,
    ConsistencyCheck,
    MemoryTier,
    OpSpec,
    Outcome,
    TargetSpec,
    bytes_per_element,
    gemm_traffic_bytes,
    outcome,
    square_tile,
    tile_capacity_bytes,
    workload_name,
    write_allocates,
)

FAMILY = "kpu"
#: Share of on-chip memory the weights may take for the regime to activate.
WEIGHT_SHARE = 0.8
#: The probes sit this far (relative) inside and outside the threshold.
PROBE_MARGIN = 0.05


def on_chip_bytes(target: TargetSpec) -> float:
    """The on-chip memory: every tier inside DRAM (the tiles' scratchpads)."""
    return sum(t.effective_capacity_bytes for t in target.tiers if t.name != "dram")


def weight_bytes(gemm: np.ndarray, bpe: float) -> np.ndarray:
    """The weights of a product (M, K, N): the K x N operand."""
    return gemm[:, 1].astype(np.float64) * gemm[:, 2] * bpe


def residency_window(
    target: TargetSpec, op: OpSpec, shapes: np.ndarray, dtype: str, tier: MemoryTier
) -> np.ndarray | None:
    """The whole product where the weights fit in 80% of on-chip memory and
    ``tier`` is the outermost on-chip tier; None (the default tile) otherwise."""
    if target.family != FAMILY or op.gemm_dims is None:
        return None
    on_chip = [t for t in target.tiers if t.name != "dram"]
    if not on_chip or tier.name != on_chip[-1].name:
        return None
    bpe = bytes_per_element(dtype)
    gemm = np.asarray(op.gemm_dims(shapes), dtype=np.float64).reshape(-1, 3)
    stationary = weight_bytes(gemm, bpe) <= WEIGHT_SHARE * on_chip_bytes(target)
    default = square_tile(gemm, tile_capacity_bytes(tier), bpe)
    return np.where(stationary[:, None], gemm, default)


def _once_ratio(
    op_spec: OpSpec, shape: list[int], tier: MemoryTier, bpe: float, passes: float
) -> float:
    """Traffic of the whole product (every operand once) over that of the
    default square tile: what the regime must scale DRAM traffic by (the
    output crossing ``passes`` times, as the model counts it)."""
    gemm = np.asarray(op_spec.gemm_dims(np.asarray([shape])), dtype=np.float64)
    elements = op_spec.operand_elements(np.asarray([shape]))
    extra = float(sum(np.asarray(v, dtype=np.float64)[0] for v in elements.values())) * bpe
    extra -= (
        float(gemm[0, 0] * gemm[0, 1] + gemm[0, 1] * gemm[0, 2] + gemm[0, 0] * gemm[0, 2]) * bpe
    )
    once = float(gemm_traffic_bytes(gemm, gemm, bpe, passes)[0]) + extra
    tiled = square_tile(gemm, tile_capacity_bytes(tier), bpe)
    return once / (float(gemm_traffic_bytes(gemm, tiled, bpe, passes)[0]) + extra)


def weight_stationary(target: TargetSpec, ctx: CheckContext) -> list[Outcome]:
    """Probes just inside and outside the 80% threshold, for every dtype and
    both matrix ops, predicted with and without the KPU's rule: inside, DRAM
    traffic falls to every operand crossing once; outside, nothing changes."""
    from attrs import evolve

    threshold = WEIGHT_SHARE * on_chip_bytes(target)
    tiers = ctx.memory_hierarchy(target)
    names = [t.name for t in tiers]
    dram = names.index("dram")
    without = evolve(target, family=f"{FAMILY}_without_weight_stationary")
    passes = 1.0 + write_allocates(target)
    cases: list[dict[str, Any]] = []
    bad: list[dict[str, Any]] = []
    for dtype in target.dtypes:
        bpe = bytes_per_element(dtype)
        for inside in (True, False):
            share = 1 - PROBE_MARGIN if inside else 1 + PROBE_MARGIN
            side = int(math.sqrt(threshold * share / bpe))
            # enough activation rows that the working set never fits on chip
            rows = int(math.ceil(4 * on_chip_bytes(target) / (side * bpe)))
            for op in ("matmul", "linear"):
                shape = [rows, side, side]
                moved = float(ctx.predict(target, op, [shape], dtype).bytes_per_tier[0, dram])
                default = float(ctx.predict(without, op, [shape], dtype).bytes_per_tier[0, dram])
                ratio = _once_ratio(ctx.op(op), shape, tiers[dram - 1], bpe, passes)
                want = default * (ratio if inside else 1.0)
                ok = abs(moved - want) <= 1e-9 * want and (moved < default) == inside
                case = {
                    "workload": workload_name(op, shape, dtype),
                    "weights_bytes": side * side * bpe,
                    "weight_stationary": inside,
                    "dram_bytes": moved,
                    "dram_bytes_without_the_regime": default,
                    "expected_dram_bytes": want,
                }
                cases.append(case)
                if not ok:
                    bad.append(case)
    message = (
        f"weights up to {threshold / 2**20:.4g} MiB (80% of {on_chip_bytes(target) / 2**20:.4g} "
        f"MiB on chip) stay resident and every operand crosses DRAM once; larger weights "
        f"are re-read"
    )
    if bad:
        b = bad[0]
        state = "inside" if b["weight_stationary"] else "outside"
        message = (
            f"{len(bad)} of {len(cases)} probes disagree; {b['workload']} ({state} the "
            f"threshold, weights {b['weights_bytes']:.4g} B of {threshold:.4g} B): DRAM traffic "
            f"{b['dram_bytes']:.4g} B, expected {b['expected_dram_bytes']:.4g} B "
            f"({b['dram_bytes_without_the_regime']:.4g} B without the regime)"
        )
    return [
        outcome(
            "kpu.weight_stationary",
            target.key,
            not bad,
            message,
            numbers={"threshold_bytes": threshold, "probes": cases},
            workload=bad[0]["workload"] if bad else None,
            coefficient=f"tiers.{names[dram - 1]}.capacity_bytes" if bad else None,
        )
    ]


def tile_utilisation(target: TargetSpec, ctx: CheckContext) -> list[Outcome]:
    """Per-tile utilisation and waves of the reference matrix workloads."""
    shapes = {"matmul": [list(s) for s in MATMULS.values()], "linear": [list(LINEAR)]}
    report: dict[str, dict[str, float]] = {}
    bad = []
    for dtype in target.dtypes:
        for op, rows in shapes.items():
            p = ctx.predict(target, op, rows, dtype)
            for i, shape in enumerate(rows):
                name = workload_name(op, shape, dtype)
                u = float(p.utilisation[i])
                report[name] = {"utilisation": u, "waves": float(p.waves[i])}
                if not (0 < u <= 1 + 1e-9):
                    bad.append(name)
    first = target.dtypes[0]
    parts = [
        f"{name.split(' ')[0]} {name.split(' ')[1]} {v['utilisation']:.0%} "
        f"({int(v['waves'])} wave{'s' if v['waves'] != 1 else ''})"
        for name, v in report.items()
        if name.endswith(f" {first}")
    ]
    message = f"per-tile utilisation over {target.compute_units} tiles, {first}: " + ", ".join(
        parts
    )
    if bad:
        message = f"utilisation outside (0, 1] for {', '.join(bad)}"
    return [
        outcome(
            "kpu.tile_utilisation",
            target.key,
            not bad,
            message,
            numbers={"tiles": target.compute_units, "workloads": report},
            workload=bad[0] if bad else None,
            coefficient="compute_units" if bad else None,
        )
    ]


def checks(target: TargetSpec) -> Iterable[ConsistencyCheck]:
    """The KPU checks, for KPU targets only."""
    if target.family != FAMILY:
        return []
    return [
        ConsistencyCheck(
            name="kpu.weight_stationary",
            description="weights within 80% of on-chip memory stream from DRAM once",
            run=weight_stationary,
        ),
        ConsistencyCheck(
            name="kpu.tile_utilisation",
            description="per-tile utilisation of the reference workloads, in (0, 1]",
            run=tile_utilisation,
        ),
    ]
