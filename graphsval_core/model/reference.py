"""The reference model: per-tier operational analysis of latency and energy.

For a batch of shapes of one (target, op, dtype), with tiers ``0 .. T-1``
innermost first (DESIGN.md section 9):

- **Traffic per tier.** Column ``k`` of ``bytes_per_tier`` is what tier ``k``
  serves to the level inside it (the registers for ``k = 0``). For matrix
  products, the reuse model with the tile sized for the inner level: C leaves
  once per pass, A is re-read once per column block of C, B once per row block
  (``(p*MN + MK*ceil(N/Nt) + KN*ceil(M/Mt)) * bpe``, plus operands outside the
  product such as a bias, once); ops with no reuse move all their operand
  bytes. ``p`` is 2 on a CPU, whose write-allocate caches read an output line
  before a store fills it, and 1 on a GPU or a scratchpad machine (and on a
  CPU for a freshly mapped output, which the kernel has just zeroed into the
  cache); a CPU's vector_add likewise moves its output twice. Run after run on
  warm data, the inner levels keep what fits: nothing crosses when the working
  set W fits their capacity C, and a ``1 - C/W`` share of the traffic crosses
  when it does not. C is the inner tier's usable capacity, plus those inside
  it while each is ``non_inclusive`` (Alder Lake's LLC holds what its L2s do
  not, so the two add up).
- **Memory time** of tier ``k``: ``bytes / effective bandwidth``, floored at
  the tier's access latency when any byte moves. Memory time is the largest;
  that tier is the **binding tier**, the level inside it the **residency tier**.
- **Compute time**: register-sized output tiles (the target's
  ``register_tile_bytes``) are spread over the compute units in waves; a
  partial wave costs a full one, so
  ``compute = waves * tile_ops / (peak * compute_fraction / units)`` and the
  utilisation is ``ops / (waves * units * tile_ops)``. An op no larger than
  the target's ``parallel_grain_ops`` (PyTorch's grain on a CPU) runs on one
  unit: its tiles go in waves of one. (Its memory terms still see every
  unit's caches: one unit's share is the physical answer, but with the i7's
  calibrated L2 it made a serial op slower than a parallel one twice its size.)
- **Launch**: the first kernel of a call costs ``launch_overhead_s``, or, for a
  matrix product, the dtype's GEMM-library call (``dispatch_overhead_s``);
  every further kernel of the op (``OpSpec.kernels``: linear broadcasts its
  bias, then accumulates the product onto it) costs ``kernel_overhead_s``
  (a GPU queues it behind the first) or, unset, a whole framework dispatch;
  an op above the grain on a multi-unit target adds ``fork_join_s`` (waking
  and joining the thread team).
- **Latency** = launch + max(compute, memory) + (1 - overlap) * min(...)
  + first touch (a freshly allocated output of at least the target's
  ``first_touch_min_bytes``, over its ``first_touch_bps``) + packing (a CPU
  GEMM library copies B, ``K*N*bpe`` bytes, into its panel layout at
  ``pack_bps`` on every call once A has ``pack_min_rows`` rows or more). The
  terms reported satisfy launch + exposed compute + exposed memory + first
  touch + pack = latency exactly; the overlapped remainder is reported as
  hidden.
- **Regime**: the largest of launch, compute and memory time: ``launch_bound``,
  ``alu_bound`` or the binding tier's regime.
- **Energy** = ops x energy per op + sum over tiers of bytes x energy per byte
  + idle (static) power x latency.

Everything is numpy over the batch: no Python loop per shape.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from graphsval_core.datamodel.dtypes import bytes_per_element
from graphsval_core.datamodel.errors import UserInputError
from graphsval_core.datamodel.regimes import ALU_BOUND, LAUNCH_BOUND, tier_regime
from graphsval_core.model.prediction import Prediction

if TYPE_CHECKING:
    from graphsval_core.datamodel.op import OpSpec
    from graphsval_core.datamodel.target import MemoryTier, TargetSpec
    from graphsval_core.plugins.registry import Registry

NAME = "reference"

#: Per-unit register footprint of an output tile when the spec gives none.
DEFAULT_REGISTER_TILE_BYTES: dict[str, float] = {
    "cpu": 2048.0,  # 32 vector registers of 64 B
    "gpu": 65536.0,  # a quarter of an SM's 256 KiB register file holding accumulators
    "systolic": 65536.0,
    "domain_flow": 4096.0,  # a 32x32 PE array's accumulators
}

REGISTERS = "registers"


class UnsupportedDtypeError(UserInputError):
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


def gemm_traffic_bytes(
    gemm: np.ndarray, tile: np.ndarray, bpe: float, output_passes: float = 2.0
) -> np.ndarray:
    """Bytes crossing a boundary for C[M,N] = A[M,K] B[K,N] with C-tile (Mt, Nt);
    C crosses ``output_passes`` times (written, and read first by a
    write-allocate cache)."""
    m, k, n = (gemm[:, i].astype(np.float64) for i in range(3))
    mt, nt = tile[:, 0], tile[:, 2]
    return (output_passes * m * n + m * k * np.ceil(n / nt) + k * n * np.ceil(m / mt)) * bpe


def resident_capacity(tiers: Sequence[MemoryTier], k: int) -> float:
    """What tiers ``0 .. k`` keep together: tier ``k``'s usable capacity, plus
    the tiers inside it while each holds lines the one inside it does not (a
    non-inclusive cache: Alder Lake's LLC and L2 add up)."""
    total = tiers[k].effective_capacity_bytes
    while k > 0 and tiers[k].non_inclusive:
        k -= 1
        total += tiers[k].effective_capacity_bytes
    return total


def _miss_fraction(working_set: np.ndarray, capacity: float) -> np.ndarray:
    """Share of the traffic the inner level cannot keep, run after run on warm
    data: none when the working set fits; above capacity, the level keeps a
    ``capacity / working_set`` share of it resident (a replacement policy that
    retains what fits rather than thrashing), so the rest, ``1 - C / W``,
    crosses to the outer tier. Continuous at W = C and growing with W."""
    if capacity <= 0:
        return np.ones_like(working_set)
    return np.clip(1.0 - capacity / working_set, 0.0, 1.0)


def write_allocates(target: TargetSpec) -> bool:
    """Whether the target's caches read a line before a store fills it (a CPU's
    write-allocate caches); a GPU's L2 and a spatial accelerator's scratchpads
    take writes without reading."""
    return target.architecture == "cpu"


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
    resident_caps = [0.0] + [resident_capacity(tiers, k) for k in range(n_tiers - 1)]

    out_bytes = np.zeros(n)
    if op.output_operand:
        out_bytes = np.asarray(elements[op.output_operand], dtype=np.float64) * bpe
    # an output allocated afresh on every call, large enough to be mapped anew
    fresh = np.zeros(n, dtype=bool)
    if target.first_touch_bps and target.first_touch_min_bytes is not None:
        fresh = out_bytes >= target.first_touch_min_bytes
    # a CPU's caches read a line before a store fills it (write-allocate), but
    # not a freshly mapped page: the kernel has just zeroed it into the cache; a
    # GPU's L2 takes partial writes with byte masks, so an output only leaves
    write_allocate = write_allocates(target) & ~fresh
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
            traffic = gemm_traffic_bytes(gemm, tile, bpe, 1.0 + write_allocate) + extra
            bytes_per_tier[:, k] = traffic * _miss_fraction(working_set, resident_caps[k])
    else:
        moved = operand_bytes + np.where(write_allocate, out_bytes, 0.0)
        for k in range(n_tiers):
            bytes_per_tier[:, k] = moved * _miss_fraction(working_set, resident_caps[k])

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
    # a CPU framework runs an op on one thread below its grain (PyTorch's
    # at::internal::GRAIN_SIZE); above it the thread team is woken and joined
    parallel = np.ones(n, dtype=bool)
    if target.parallel_grain_ops is not None and units > 1:
        parallel = flops > target.parallel_grain_ops
    active = np.where(parallel, units, 1)
    if tiles is not None:
        mt, nt = tiles[:, 0, 0], tiles[:, 0, 2]
        count = np.ceil(gemm[:, 0] / mt) * np.ceil(gemm[:, 2] / nt)
        # every output element of a product costs the same: ops per element x tile area
        tile_ops = flops / (gemm[:, 0] * gemm[:, 2]) * mt * nt
    else:
        bytes_per_op = operand_bytes / flops
        tile_ops = np.minimum(flops, np.maximum(1.0, np.floor(inner_caps[0] / bytes_per_op)))
        count = np.ceil(flops / tile_ops)
    waves = np.ceil(count / active)
    compute_s = waves * tile_ops / (achievable / units)
    utilisation = flops / (waves * units * tile_ops)

    # a matrix product goes through the dtype's GEMM library (MKL, oneDNN),
    # whose call cost may differ from the framework's own dispatch
    first = target.launch_for(dtype) if op.gemm_dims is not None else target.launch_overhead_s
    # each further kernel of the call (linear's bias) is a framework dispatch
    per_kernel = target.kernel_overhead_s
    if per_kernel is None:
        per_kernel = target.launch_overhead_s
    launch_s = np.full(n, first + (op.kernels - 1) * per_kernel)
    if target.fork_join_s is not None and units > 1:
        launch_s = launch_s + np.where(parallel, target.fork_join_s, 0.0)
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
    if target.first_touch_bps:
        first_touch = np.where(fresh, out_bytes / target.first_touch_bps, 0.0)
    # packing: a CPU GEMM library copies B into its panel layout on every call
    # (read once, written once, before the product reads it), unless A has too
    # few rows for it to pay (then a GEMV-like kernel streams B as it is)
    pack = np.zeros(n)
    if target.pack_bps is not None and target.pack_min_rows is not None and tiles is not None:
        pack = np.where(
            gemm[:, 0] >= target.pack_min_rows,
            gemm[:, 1] * gemm[:, 2] * bpe / target.pack_bps,
            0.0,
        )
    latency = launch_s + exposed_compute + exposed_memory + first_touch + pack

    names = tuple(t.name for t in tiers)
    regimes = np.array([tier_regime(name) for name in names])[binding]
    which = np.argmax(np.stack([launch_s, compute_s, memory_s]), axis=0)
    regime = np.where(which == 0, LAUNCH_BOUND, np.where(which == 1, ALU_BOUND, regimes))
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
        active_units=active,
        bytes_per_tier=bytes_per_tier,
        time_per_tier_s=time_per_tier,
        tiles=tiles,
        launch_s=launch_s,
        compute_s=compute_s,
        memory_s=memory_s,
        exposed_compute_s=exposed_compute,
        exposed_memory_s=exposed_memory,
        first_touch_s=first_touch,
        pack_s=pack,
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
