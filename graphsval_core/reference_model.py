"""The reference model: per-tier operational analysis of latency and energy.

For a batch of shapes of one (target, op, dtype), with tiers ``0 .. T-1``
innermost first (DESIGN.md section 9):

- **Traffic per tier.** Column ``k`` of ``bytes_per_tier`` is what tier ``k``
  serves to the level inside it (the registers for ``k = 0``). For matrix
  products, the reuse model with the tile sized for the inner level: C read
  and written once, A re-read once per column block of C, B once per row block
  (``(2MN + MK*ceil(N/Nt) + KN*ceil(M/Mt)) * bpe``, plus operands outside the
  product such as a bias, once); ops with no reuse move all their operand
  bytes. Run after run on warm data, the inner level keeps what fits: nothing
  crosses when the working set W fits its capacity C, and a ``1 - C/W`` share
  of that traffic crosses when it does not.
- **Memory time** of tier ``k``: ``bytes / effective bandwidth``, floored at
  the tier's access latency when any byte moves. Memory time is the largest;
  that tier is the **binding tier**, the level inside it the **residency tier**.
- **Compute time**: register-sized output tiles (the target's
  ``register_tile_bytes``) are spread over the compute units in waves; a
  partial wave costs a full one, so
  ``compute = waves * tile_ops / (peak * compute_fraction / units)`` and the
  utilisation is ``ops / (waves * units * tile_ops)``.
- **Latency** = launch + max(compute, memory) + (1 - overlap) * min(...)
  + first touch (a freshly allocated output of at least the target's
  ``first_touch_min_bytes``, over its ``first_touch_bps``). The terms reported
  satisfy launch + exposed compute + exposed memory + first touch = latency
  exactly; the overlapped remainder is reported as hidden.
- **Regime**: the largest of launch, compute and memory time: ``launch_bound``,
  ``alu_bound`` or the binding tier's regime.
- **Energy** = ops x energy per op + sum over tiers of bytes x energy per byte
  + idle (static) power x latency.

Everything is numpy over the batch: no Python loop per shape.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from graphsval_core.dtypes import bytes_per_element
from graphsval_core.prediction import Prediction

if TYPE_CHECKING:
    from graphsval_core.op_spec import OpSpec
    from graphsval_core.plugin_manager import Registry
    from graphsval_core.target_spec import MemoryTier, TargetSpec

NAME = "reference"

#: Per-unit register footprint of an output tile when the spec gives none.
DEFAULT_REGISTER_TILE_BYTES: dict[str, float] = {
    "cpu": 2048.0,  # 32 vector registers of 64 B
    "gpu": 65536.0,  # a quarter of an SM's 256 KiB register file holding accumulators
    "systolic": 65536.0,
    "domain_flow": 4096.0,  # a 32x32 PE array's accumulators
}

REGISTERS = "registers"


class UnsupportedDtypeError(ValueError):
    """The target has no peak for the requested dtype."""


def tile_capacity_bytes(tier: MemoryTier) -> float:
    """Capacity one tile may use: a unit's share of a per-unit tier, the usable
    capacity of a shared one."""
    return tier.capacity_bytes if tier.is_per_unit else tier.effective_capacity_bytes


def square_tile(gemm: np.ndarray, capacity_bytes: float, bpe: float) -> np.ndarray:
    """The seeds' square C-tile: ``Mt = Nt = sqrt(C / (3 * bpe))`` clamped to the
    shape; K is not tiled. ``gemm`` is ``(n, 3)`` of (M, K, N)."""
    side = max(1.0, float(np.floor(np.sqrt(capacity_bytes / (3.0 * bpe)))))
    tile = np.array(gemm, dtype=np.float64, copy=True)
    tile[:, 0] = np.minimum(tile[:, 0], side)
    tile[:, 2] = np.minimum(tile[:, 2], side)
    return tile


def gemm_traffic_bytes(gemm: np.ndarray, tile: np.ndarray, bpe: float) -> np.ndarray:
    """Bytes crossing a boundary for C[M,N] = A[M,K] B[K,N] with C-tile (Mt, Nt)."""
    m, k, n = (gemm[:, i].astype(np.float64) for i in range(3))
    mt, nt = tile[:, 0], tile[:, 2]
    return (2.0 * m * n + m * k * np.ceil(n / nt) + k * n * np.ceil(m / mt)) * bpe


def _miss_fraction(working_set: np.ndarray, capacity: float) -> np.ndarray:
    """Share of the traffic the inner level cannot keep, run after run on warm
    data: none when the working set fits; above capacity, the level keeps a
    ``capacity / working_set`` share of it resident (a replacement policy that
    retains what fits rather than thrashing), so the rest, ``1 - C / W``,
    crosses to the outer tier. Continuous at W = C and growing with W."""
    if capacity <= 0:
        return np.ones_like(working_set)
    return np.clip(1.0 - capacity / working_set, 0.0, 1.0)


def _register_tile_bytes(target: TargetSpec) -> float:
    if target.register_tile_bytes is not None:
        return target.register_tile_bytes
    return DEFAULT_REGISTER_TILE_BYTES[target.architecture]


def predict(
    registry: Registry,
    target: TargetSpec,
    op: OpSpec,
    shapes: Any,
    dtype: str,
    *,
    overlap: float = 1.0,
) -> Prediction:
    """Predict latency and energy for every row of ``shapes`` (see module doc)."""
    if dtype not in target.peak_ops_per_s:
        raise UnsupportedDtypeError(
            f"target {target.key} does not support dtype {dtype!r} "
            f"(it supports {', '.join(target.dtypes)})"
        )
    shapes = np.asarray(shapes, dtype=np.int64).reshape(-1, len(op.dims))
    n = shapes.shape[0]
    bpe = bytes_per_element(dtype)
    tiers = registry.memory_hierarchy(target)
    n_tiers = len(tiers)

    flops = np.asarray(op.flops(shapes), dtype=np.float64)
    elements = op.operand_elements(shapes)
    operand_bytes = sum(np.asarray(v, dtype=np.float64) for v in elements.values()) * bpe
    working_set = np.asarray(op.working_set_bytes(shapes, bpe), dtype=np.float64)

    inner_caps = [_register_tile_bytes(target)] + [tile_capacity_bytes(t) for t in tiers[:-1]]
    # resident when the working set fits in the whole inner level (registers never hold it)
    resident_caps = [0.0] + [t.effective_capacity_bytes for t in tiers[:-1]]

    bytes_per_tier = np.zeros((n, n_tiers))
    tiles: np.ndarray | None = None
    if op.gemm_dims is not None:
        gemm = np.asarray(op.gemm_dims(shapes), dtype=np.float64).reshape(n, 3)
        extra = (
            operand_bytes
            - (gemm[:, 0] * gemm[:, 1] + gemm[:, 1] * gemm[:, 2] + gemm[:, 0] * gemm[:, 2]) * bpe
        )
        tiles = np.zeros((n, n_tiers, 3))
        for k in range(n_tiers):
            if k == 0:
                tile = square_tile(gemm, inner_caps[0], bpe)
            else:
                window = registry.residency_window(target, op, shapes, dtype, tiers[k - 1])
                tile = np.asarray(window, dtype=np.float64).reshape(n, 3)
            tiles[:, k, :] = tile
            traffic = gemm_traffic_bytes(gemm, tile, bpe) + extra
            bytes_per_tier[:, k] = traffic * _miss_fraction(working_set, resident_caps[k])
    else:
        for k in range(n_tiers):
            bytes_per_tier[:, k] = operand_bytes * _miss_fraction(working_set, resident_caps[k])

    bandwidth = np.array([t.effective_bandwidth_bps for t in tiers])
    latency_floor = np.array([t.access_latency_ns * 1e-9 for t in tiers])
    time_per_tier = np.where(
        bytes_per_tier > 0, np.maximum(bytes_per_tier / bandwidth, latency_floor), 0.0
    )
    binding = np.argmax(time_per_tier, axis=1)
    memory_s = time_per_tier[np.arange(n), binding]

    # compute: register-sized output tiles (a unit's unit of work) spread over
    # the units in waves; the tile is fixed per target and dtype, so a shape
    # whose tiles do not fill every unit gets the utilisation it really has
    units = target.compute_units
    achievable = target.peak_ops_per_s[dtype] * target.compute_fraction[dtype]
    if tiles is not None:
        mt, nt = tiles[:, 0, 0], tiles[:, 0, 2]
        count = np.ceil(gemm[:, 0] / mt) * np.ceil(gemm[:, 2] / nt)
        # every output element of a product costs the same: ops per element x tile area
        tile_ops = flops / (gemm[:, 0] * gemm[:, 2]) * mt * nt
    else:
        bytes_per_op = operand_bytes / flops
        tile_ops = np.minimum(flops, np.maximum(1.0, np.floor(inner_caps[0] / bytes_per_op)))
        count = np.ceil(flops / tile_ops)
    waves = np.ceil(count / units)
    compute_s = waves * tile_ops / (achievable / units)
    utilisation = flops / (waves * units * tile_ops)

    launch_s = np.full(n, target.launch_for(dtype))
    smaller = np.minimum(compute_s, memory_s)
    exposed_smaller = (1.0 - overlap) * smaller
    compute_wins = compute_s >= memory_s
    exposed_compute = np.where(compute_wins, compute_s, exposed_smaller)
    exposed_memory = np.where(compute_wins, exposed_smaller, memory_s)
    hidden = overlap * smaller
    # first touch: an output allocated afresh on every call, large enough to be
    # mapped anew, costs the OS's page zeroing, serially (a CPU's malloc; never
    # on a caching GPU allocator, whose targets leave first_touch_bps unset)
    first_touch = np.zeros(n)
    if target.first_touch_bps and op.output_operand:
        out_bytes = np.asarray(elements[op.output_operand], dtype=np.float64) * bpe
        first_touch = np.where(out_bytes >= target.first_touch_min_bytes,
                               out_bytes / target.first_touch_bps, 0.0)
    latency = launch_s + exposed_compute + exposed_memory + first_touch

    names = tuple(t.name for t in tiers)
    regimes = np.array([f"{name}_bound" for name in names])[binding]
    which = np.argmax(np.stack([launch_s, compute_s, memory_s]), axis=0)
    regime = np.where(which == 0, "launch_bound", np.where(which == 1, "alu_bound", regimes))
    binding_tier = np.array(names)[binding]
    residency = np.array([REGISTERS, *names[:-1]])[binding]

    energy_compute = flops * target.energy_per_op_j[dtype]
    energy_per_tier = bytes_per_tier * np.array([t.energy_per_byte_j for t in tiers])
    energy_static = target.idle_power_w * latency
    energy = energy_compute + energy_per_tier.sum(axis=1) + energy_static
    over_tdp = energy / latency > target.tdp_w

    return Prediction(
        predictor=NAME,
        target=target.key,
        op=op.name,
        dtype=dtype,
        dims=op.dims,
        shapes=shapes,
        latency_s=latency,
        energy_j=energy,
        regime=regime,
        binding_tier=binding_tier,
        residency_tier=residency,
        flops=flops,
        working_set_bytes=working_set,
        tier_names=names,
        tier_bandwidth_bps=tuple(float(b) for b in bandwidth),
        bytes_per_tier=bytes_per_tier,
        time_per_tier_s=time_per_tier,
        tiles=tiles,
        launch_s=launch_s,
        compute_s=compute_s,
        memory_s=memory_s,
        exposed_compute_s=exposed_compute,
        exposed_memory_s=exposed_memory,
        first_touch_s=first_touch,
        hidden_s=hidden,
        utilisation=utilisation,
        waves=waves,
        compute_units=units,
        compute_unit_name=target.compute_unit_name,
        peak_ops_per_s=target.peak_ops_per_s[dtype],
        achievable_ops_per_s=achievable,
        energy_compute_j=energy_compute,
        energy_per_tier_j=energy_per_tier,
        energy_static_j=energy_static,
        over_tdp=over_tdp,
    )
