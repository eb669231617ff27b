"""The reference model: per-tier operational analysis of latency and energy.

For a batch of shapes of one (target, op, dtype), with memory tiers
``0 .. T-1`` innermost first (DESIGN.md section 9), the model predicts the
latency and energy of one call on warm data, term by term
(:mod:`graphsval_core.model.terms` holds one function per term):

- **Traffic per tier** (:mod:`.terms.traffic`). Column ``k`` of
  ``bytes_per_tier`` is what tier ``k`` serves to the level inside it (the
  registers for ``k = 0``). A matrix product reuses its operands within a
  C-tile sized for the inner level (the register tile for tier 0, the
  residency window a plugin gives for tier ``k - 1`` otherwise, by default a
  square tile; where a library reads B once a row of A or once a pass of a
  few rows, every tier's tile, tier 0's included, has that many rows, while
  the compute keeps the register tile's):
  ``(p*M*N + M*K*ceil(N/Nt) + K*N*ceil(M/Mt)) * bpe``, plus
  operands outside the product, such as a bias, once; C's elements take the
  product's output width (int32 for an int8 product on a CPU or GPU:
  ``torch._int_mm`` returns its accumulators). An op with no reuse
  moves every operand once. ``p`` is 2 on a write-allocate target (a CPU reads
  an output line before a store fills it) and 1 otherwise, or for a freshly
  mapped output, or for a product that does not accumulate
  (``OpSpec.accumulates``: the GEMM library writes a ``beta = 0`` result
  whole, never reading C; linear accumulates onto the bias it broadcast, so
  it reads C), unless the target's ``product_output_passes`` gives the
  dtype's library its own ``p`` for such a product (M, K and N of two or
  more, C not freshly mapped: MKL's fp32 on the AMD hosts stores C no cheaper
  than a product that accumulates, ``p`` = 2); a CPU's vector_add moves
  its output twice unless it is freshly mapped.
- **Residency** (:mod:`.terms.residency`). The levels inside tier ``k`` keep
  what fits: nothing crosses when the working set W fits their capacity C, a
  ``1 - C/W`` share of the traffic crosses when it does not. C is the inner
  tier's usable capacity, plus those inside it while each is
  ``non_inclusive`` (the two then add up). An op with no reuse (a stream)
  that overflows a private cache between the L1 and the last level keeps
  nothing in it (LRU evicts each line before the next call reaches it).
- **Memory time** (:mod:`.terms.memory`) of tier ``k``:
  ``bytes / effective bandwidth``, floored at the tier's access latency when
  any byte moves. A matrix product runs at its library's share of each
  tier's bandwidth, per dtype (``product_bandwidth_fraction``, 1 unless
  calibrated: packed panels and strided rows stream less well than an
  elementwise op, whose rows set the tiers' own fractions), times the
  tier's ``product_fraction`` (1 unless calibrated: a stream reads a private
  L2 through its streaming prefetcher, a GEMM micro-kernel reads its packed
  panels from it in short bursts, and fewer misses are in flight). A
  product that reads B in place (below, "Packing") reads the share of B
  it packs as panels at the products' share and streams the rest as it lies
  at the dtype's ``in_place_fraction`` of each tier's bandwidth, where the
  spec gives one (the two times add up). A product whose A has fewer rows
  than its library packs from (``pack_min_rows``: MKL's fp32 path for one or
  two rows, which packs nothing) streams B as it lies, at the library's
  share of each tier's bandwidth but not the tier's ``product_fraction``,
  which times a micro-kernel's bursts from packed panels. The memory time
  is the largest; that tier is the **binding tier**, the level inside it the
  **residency tier**.
- **Compute time** (:mod:`.terms.compute`): an op with no product runs at
  the dtype's ``vector_ops_per_s`` where the spec gives one (a CPU's bf16 add
  on its vector units; its fp32 add's loop, which a cache-resident add
  waits on rather than the cache), else at the peak times
  ``compute_fraction``. Output
  tiles are spread over
  the compute units in waves; a partial wave costs a full one. On a GPU a
  matrix product's tile is the CTA tile its library picks (a few CUTLASS /
  cuBLAS sizes, the one with the least work on the busiest SM, split-K when
  the tiles leave SMs idle: :func:`.terms.compute.cta_tiles`); otherwise
  register-sized output tiles (the target's ``register_tile_bytes``), which
  a CPU's threads split into a grid of blocks, ``a`` along M by ``b`` along N
  with ``a * b`` at most the threads, the split that leaves the busiest
  thread the fewest tiles (:func:`.terms.compute.partition_waves`: a skinny
  M or N leaves threads idle; where the spec gives the dtype's
  ``accumulator_lanes``, a product its library runs is tiled one row of C
  by the lanes: the micro-kernel pads every N of two or more columns to a
  multiple of them (a masked vector costs a whole one; an N of one is the
  library's GEMV, its one column; where the spec gives the dtype's
  ``tail_piece_vectors``, the columns beyond the whole vectors go in
  power-of-two pieces of that many vectors each, at least one vector in
  all: the Zen 4's int8, oneDNN's s8 GEMM) and never pads M, and the threads split
  rows and vectors as they split tiles (finer than a library's blocks of
  rows: optimistic for
  a team; the hosts run one thread, the i7 twelve). oneDNN broadcasts
  each row of A against 16-lane vectors of B on AVX-512 and AMX: the Zen 4
  host's int8 calibration products 8192 x 256 x 32 and x 64 run at 381 and
  413 GOP/s, about the rate of its square ones, where a 26 x 26 tile's
  padding of N to 52 and 78 put them 59% and 29% too slow; MKL's AVX2
  sgemm holds a row of C in two 8-lane registers), so
  ``compute = waves * tile_ops / (peak * compute_fraction / units)`` with
  ``waves`` the busiest thread's tiles, and the utilisation is
  ``ops / (waves * units * tile_ops)``. An op no larger than
  the target's ``parallel_grain_ops`` (PyTorch's grain on a CPU) runs on one
  unit: its tiles go in waves of one. Its memory terms still see every unit's
  caches (a limitation: a serial op has only one unit's share of a per-unit
  tier).
- **Launch** (:mod:`.terms.overheads`): the first kernel of a call costs
  ``launch_overhead_s``, or, for a matrix product, the dtype's GEMM-library
  call (``dispatch_overhead_s``) unless it has no more multiply-adds than
  the dtype's ``library_min_macs`` (the framework then runs it in its own
  kernel, which packs nothing: PyTorch keeps a bf16 product of at most
  16 x 16 x 16 out of oneDNN), and where the library's product accumulates
  onto C (``OpSpec.accumulates``: linear) the dtype's
  ``accumulate_overhead_s`` on top (oneDNN's bf16 call with a sum post-op);
  every further kernel of the op
  (``OpSpec.kernels``: linear broadcasts its bias, then accumulates the
  product onto it) costs ``kernel_overhead_s`` (a GPU queues it behind the
  first) or, unset, a whole framework dispatch; an op above the grain on a
  multi-unit target adds ``fork_join_s`` (waking and joining the thread team),
  or for a product on its dtype's library's level-2 path (a GEMV: M or N of
  1) the target's ``gemv_fork_join_s`` of the dtype where it gives one (MKL's
  sgemv wakes its threads its own way: the i7's fp32 GEMVs of 0.13-0.26 MB
  take 8.7-9.0 us against 5.2 us for one on a thread and 5.8-6.9 us for the
  team's small matmuls).
- **First touch**: a freshly allocated output of at least the target's
  ``first_touch_min_bytes`` costs its bytes over ``first_touch_bps`` (the OS
  faulting in and zeroing its pages), or for an op with no matrix product
  over the dtype's ``vector_first_touch_bps`` where the spec gives one (the
  kernel that writes the pages sets the pace: PyTorch's bf16 binary kernels
  take two to three times as long per fresh page as its fp32 ones).
- **Packing**: a CPU GEMM library copies B, ``K*N*bpe`` bytes, into its panel
  layout on every call once A has the dtype's ``pack_min_rows`` rows or more
  (MKL streams B unpacked through a GEMV for one or two rows; oneDNN
  reorders a bf16 or int8 B for every call, except a transposed B, a
  linear's weight, that outgrows the caches under at most the dtype's
  ``in_place_max_rows`` rows of A: it reorders only the share the caches
  keep and reads the rest in place): it reads B from where the call
  keeps it, the bytes crossing each tier (a stream's miss fractions) at that
  tier's stream bandwidth (the slowest tier), and writes the panels at the
  dtype's ``pack_bps``; and it
  packs the share of A beyond the last-level cache, ``M*K*bpe`` times the
  last tier's miss fraction, at the dtype's ``pack_a_bps`` (where the spec
  gives one) once N is above ``PACK_A_MIN_COLUMNS`` (16): serially, one
  block at a time before the kernel uses it (not for an A too short to pack
  B, whose GEMV path reads both operands as they lie).
- **Latency** (:mod:`.terms.latency`) = launch + max(compute, memory)
  + (1 - overlap) * min(compute, memory) + first touch + packing. The
  overlap is 1 (the roofline), except for a matrix product a GEMM library
  runs at a dtype the target gives a ``product_overlap``: then a ``1 - product_overlap`` share
  of the shorter of its compute time and its memory time beyond the
  innermost tier adds to the latency (a CPU GEMM library alternates
  packing, streaming and its micro-kernel; the L1 feeds the micro-kernel in
  its own pipeline). A linear in its library's kernel of dot products
  (``transposed_narrow_n_group``) keeps the roofline's overlap: it streams
  A's rows under its compute (MKL's fp32 of 4 columns on the Zen 3 host
  takes the same time a multiply-add with A in the L3 as in main memory),
  all of A once per group of the weight's rows: at every tier A crosses
  ``ceil(N / group)`` times (on the Zen 4 host each pass reads A from main
  memory at about 8 GB/s, N = 4 and N = 8 alike, and N = 8 costs 1.45
  times as much a multiply-add there as in the caches).
  The terms
  reported satisfy launch + exposed compute + exposed memory + first touch +
  pack = latency exactly; the overlapped remainder is reported as hidden.
- **Regime**: the largest of launch, compute and memory time:
  ``launch_bound``, ``alu_bound`` or the binding tier's regime.
- **Energy** (:mod:`.terms.energy`) = ops x energy per op + sum over tiers of
  bytes x energy per byte + idle (static) power x latency.

Everything is numpy over the batch: no Python loop per shape.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from graphsval_core.datamodel.dtypes import bytes_per_element, product_output_bytes
from graphsval_core.datamodel.errors import UserInputError
from graphsval_core.model.prediction import Prediction
from graphsval_core.model.terms.compute import (
    compute_waves,
    cta_tiles,
    lane_tile,
    lane_vectors,
    narrow_columns as narrow_columns_of,
    narrow_compute,
    narrow_rows,
    parallelism,
    product_tiles,
    register_tile_bytes,
    streaming_tiles,
    tail_columns,
)
from graphsval_core.model.terms.energy import energy
from graphsval_core.model.terms.latency import overlap_terms, product_overlap, regime
from graphsval_core.model.terms.memory import (
    binding_tier_names,
    memory_time,
    residency_tier_names,
)
from graphsval_core.model.terms.overheads import (
    accumulating_rows,
    dispatched_rows,
    first_kernel_time,
    first_touch_time,
    fresh_output,
    gemv_bandwidth,
    gemv_stream_rows,
    gemv_team_cost,
    hidden_pack_read,
    in_place_bandwidth,
    launch_time,
    library_rows,
    pack_a_time,
    pack_read_time,
    pack_time,
    packed_share,
    reads_b_in_place,
    team_cost,
    unpacked_bandwidth,
    unpacked_pass_rows,
    unpacked_rows,
)
from graphsval_core.model.terms.reference_kernel import reference_rows, reference_time
from graphsval_core.model.terms.residency import (
    inner_capacities,
    miss_fraction,
    stream_miss_fraction,
)
from graphsval_core.model.terms.traffic import (
    library_rewrites,
    operand_bytes,
    output_passes,
    output_read_first,
    outside_product_bytes,
    product_overwrites,
    reuse_traffic,
    square_tile,
    streamed_traffic,
    write_allocates,
)

if TYPE_CHECKING:
    from graphsval_core.datamodel.op import OpSpec
    from graphsval_core.datamodel.target import MemoryTier, TargetSpec
    from graphsval_core.plugins.registry import Registry

NAME = "reference"


class UnsupportedDtypeError(UserInputError):
    """The target has no peak for the requested dtype."""


def _tiles(
    registry: Registry,
    target: TargetSpec,
    op: OpSpec,
    shapes: np.ndarray,
    dtype: str,
    gemm: np.ndarray,
    tiers: Sequence[MemoryTier],
) -> np.ndarray:
    """The C-tile at every tier, ``(n, T, 3)``: the square register tile for
    tier 0, the residency window of tier ``k - 1`` for tier ``k``."""
    n = gemm.shape[0]
    tiles = np.zeros((n, len(tiers), 3))
    tiles[:, 0, :] = square_tile(gemm, register_tile_bytes(target), bytes_per_element(dtype))
    for k in range(1, len(tiers)):
        window = registry.residency_window(target, op, shapes, dtype, tiers[k - 1])
        tiles[:, k, :] = np.asarray(window, dtype=np.float64).reshape(n, 3)
    return tiles


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
    bpe = bytes_per_element(dtype)
    tiers = registry.memory_hierarchy(target)
    names = tuple(t.name for t in tiers)

    flops = np.asarray(op.flops(shapes), dtype=np.float64)
    elements = op.operand_elements(shapes)
    operands = operand_bytes(elements, bpe)
    working_set = np.asarray(op.working_set_bytes(shapes, bpe), dtype=np.float64)
    out_bytes = np.zeros(len(shapes))
    # a product's output may be wider than its inputs (int8 -> int32)
    out_bpe = bpe
    if op.gemm_dims is not None:
        out_bpe = product_output_bytes(dtype, target.architecture)
    if op.output_operand:
        out_elements = np.asarray(elements[op.output_operand], dtype=np.float64)
        out_bytes = out_elements * out_bpe
        wider = out_elements * (out_bpe - bpe)
        operands = operands + wider
        if op.output_operand in op.working_set_operands:
            working_set = working_set + wider

    # traffic per tier, less what the inner levels keep
    first_touch_bps = target.first_touch_rate(dtype, op.gemm_dims is not None)
    fresh = fresh_output(out_bytes, first_touch_bps, target.first_touch_min_bytes)
    overwrites = product_overwrites(op)
    read_first = output_read_first(write_allocates(target), fresh, overwrites)
    gemm: np.ndarray | None = None
    tiles: np.ndarray | None = None
    register_rows: np.ndarray | None = None
    library_passes: np.ndarray | None = None
    library = np.zeros(len(shapes), dtype=bool)
    unpacked = np.zeros(len(shapes), dtype=bool)
    b_passes: np.ndarray | None = None
    narrow: np.ndarray | None = None  # the rows of the library's narrow kernel, if any
    if op.gemm_dims is not None:
        gemm = np.asarray(op.gemm_dims(shapes), dtype=np.float64).reshape(len(shapes), 3)
        library = library_rows(target, dtype, gemm, len(shapes))  # the rows its library runs
        # the rows whose A is too short to pack (B streams as it lies)
        unpacked = unpacked_rows(target, dtype, gemm, library, op.b_transposed)
        tiles = _tiles(registry, target, op, shapes, dtype, gemm, tiers)
        # the register tile's rows, which the compute keeps: the passes and GEMVs below
        # change how often B crosses each tier (the innermost included), not the rows the
        # micro-kernel holds in its registers (a pass of 3 rows over 4 rows computes 4)
        register_rows = tiles[:, 0, 0].copy()
        if dtype in target.gemv_fraction:  # its level-2 path runs a GEMV per row of an
            # A too short to pack: each streams B through every tier, the innermost included
            # (its loads feed the registers once a GEMV; less what an inner tier keeps, as
            # for any product). The innermost once kept the register tile, B read once, so
            # an L1-bound GEMV came out too fast (the Zen 4's 2x512x256 matmul -21%)
            tiles[unpacked, :, 0] = 1.0
        narrow = narrow_rows(target, dtype, gemm, library, unpacked, op.b_transposed)
        group = target.transposed_narrow_n_group.get(dtype) if op.b_transposed else None
        if narrow is not None and group is not None:  # its kernel of dot products streams
            # all of A once per group of the weight's rows: every tier sees A once a group
            # (bench_narrow_n.py --tiers, the Zen 4 host: N = 8 reads A from main memory
            # twice, each pass at about N = 4's rate)
            tiles[narrow, :, 2] = np.minimum(tiles[narrow, :, 2], group)
        per_pass = unpacked_pass_rows(target, dtype, gemm, unpacked, op.b_transposed)
        if per_pass is not None:  # its unpacked kernel reads a transposed B once a pass of
            # a few rows of A: every tier sees B once a pass, the innermost included, as above
            tiles[:, :, 0] = np.minimum(tiles[:, :, 0], per_pass[:, None])
            b_passes = np.where(unpacked, np.ceil(gemm[:, 0] / per_pass), 0.0)
        outside = outside_product_bytes(operands, gemm, bpe, out_bpe)
        # C's passes: a library may store C as if the product accumulated, though it does not
        rewritten = library_rewrites(gemm, overwrites & write_allocates(target) & ~fresh, library)
        passes = output_passes(read_first, rewritten, target.product_output_passes.get(dtype))
        if dtype in target.product_output_passes:  # the rows it does so for, and how much
            library_passes = np.where(rewritten & (passes > 1.0), passes, 0.0)
        traffic = reuse_traffic(gemm, tiles, bpe, outside, passes, out_bpe)
    else:
        traffic = streamed_traffic(operands, out_bytes, read_first, len(tiers))
    missed = miss_fraction if gemm is not None else stream_miss_fraction
    capacities = inner_capacities(tiers)
    crossing = missed(working_set, capacities)
    bytes_per_tier = traffic * crossing

    # memory time and the binding tier: a product at its library's share of
    # each tier's (streaming) bandwidth
    shares = np.array([target.tier_share(t, dtype, gemm is not None) for t in tiers])
    effective = np.array([t.effective_bandwidth_bps for t in tiers])
    bandwidth = effective * shares
    access_latency = np.array([t.access_latency_ns * 1e-9 for t in tiers])
    kept = float(capacities[-1])
    in_place = np.zeros(len(shapes), dtype=bool)
    if gemm is not None:  # the rows of the dtype's GEMM library (above) that read B in place
        in_place = reads_b_in_place(target, dtype, gemm, bpe, op.b_transposed, kept)
    # a product reading B in place streams what it does not pack at its own share of each
    # tier; one with an A too short to pack, B at no micro-kernel share of a tier
    packed = np.ones(len(shapes)) if gemm is None else packed_share(in_place, gemm, bpe, kept)
    row_bandwidth = in_place_bandwidth(target, dtype, in_place, packed, effective, bandwidth)
    row_bandwidth = unpacked_bandwidth(
        unpacked, effective * target.bandwidth_share(dtype), bandwidth, row_bandwidth
    )
    # a GEMV streams its matrix from the tiers beyond the innermost at its own share
    gemv = gemv_stream_rows(target, dtype, gemm, library, op.b_transposed)
    gemv_share = target.gemv_fraction.get(dtype)
    row_bandwidth = gemv_bandwidth(gemv, gemv_share, effective, bandwidth, row_bandwidth)
    memory = memory_time(
        bytes_per_tier, bandwidth if row_bandwidth is None else row_bandwidth, access_latency
    )

    # compute in waves of register tiles
    units = target.compute_units
    lanes_used = np.zeros(len(shapes))
    padded_n = np.zeros(len(shapes))
    tail = np.zeros(len(shapes))
    vector_rate = target.runs_at_vector_rate(dtype, op.gemm_dims is not None)
    achievable = target.achievable_ops(dtype, op.gemm_dims is not None)
    team, active = parallelism(flops, units, target.parallel_grain_ops)
    if gemm is not None and target.architecture == "gpu":
        register_tiles = cta_tiles(gemm, flops, units)
    elif gemm is not None and tiles is not None:
        compute_tile = tiles[:, 0, :].copy()
        if register_rows is not None:
            compute_tile[:, 0] = register_rows
        along_n = None
        lanes = target.accumulator_lanes.get(dtype)
        if lanes is not None:  # the library's micro-kernel; the framework's own keeps the square
            own = library
            lane = lane_tile(gemm, lanes)
            compute_tile = np.where(own[:, None], lane, compute_tile)
            lanes_used = np.where(own, lanes, 0.0)
            # the vectors a row of C costs (N's tail in pieces where the library splits it)
            piece = target.tail_piece_vectors.get(dtype)
            vectors = lane_vectors(gemm, lanes, piece)
            if piece is not None:  # the rows whose N's tail the library covers in pieces
                tail = np.where(own & (gemm[:, 2] > 1), tail_columns(gemm, lanes), 0.0)
            along_n = np.where(own, vectors, np.ceil(gemm[:, 2] / compute_tile[:, 2]))
            # the N its tiles cover: whole tiles of the lane tile's width (one column for N = 1)
            padded_n = np.where(own, vectors * lane[:, 2], 0.0)
        register_tiles = product_tiles(
            gemm, flops, compute_tile, threads_split=target.architecture == "cpu", along_n=along_n
        )
    else:
        register_tiles = streaming_tiles(flops, operands, register_tile_bytes(target))
    compute = compute_waves(flops, register_tiles, active, units, achievable)
    compute_s = compute.compute_s
    utilisation = compute.utilisation
    narrow_share = target.narrow_n_share(dtype, op.b_transposed) if narrow is not None else None
    computed = None if gemm is None else narrow_columns_of(target, dtype, gemm, op.b_transposed)
    if narrow is not None and narrow_share and computed is not None:
        # its narrow kernel: N computed as its columns, at its share of the rate
        own = narrow_compute(gemm, computed, achievable, units, active, narrow_share)
        compute_s = np.where(narrow, own, compute_s)
        utilisation = np.where(narrow, flops / (own * achievable), utilisation)
    reference = np.zeros(len(shapes), dtype=bool)
    tlb_s = np.zeros(len(shapes))
    if gemm is not None:
        reference = reference_rows(target, dtype, library)
        if reference.any():
            own, tlb = reference_time(target, dtype, gemm, bpe, op.b_transposed)
            compute_s = np.where(reference, own, compute_s)
            tlb_s = np.where(reference, tlb, 0.0)

    # overheads of the call
    accumulating = accumulating_rows(target, dtype, gemm, len(shapes), op.accumulates)
    first_kernel = first_kernel_time(
        target, dtype, dispatched_rows(target, dtype, gemm, len(shapes)), accumulating=accumulating
    )
    accumulate_s = np.where(accumulating, target.accumulate_overhead_s.get(dtype, 0.0), 0.0)
    per_kernel = target.kernel_overhead_s
    if per_kernel is None:
        per_kernel = target.launch_overhead_s
    gemv_cost = gemv_team_cost(target, dtype, gemm, flops)
    cost = team_cost(target, gemv_cost)
    launch_s = launch_time(first_kernel, op.kernels, per_kernel, team, cost)
    team_s = np.zeros(len(shapes)) if cost is None else np.where(team, cost, 0.0)
    first_touch = first_touch_time(out_bytes, fresh, first_touch_bps)
    pack = np.zeros(len(shapes))
    pack_a = np.zeros(len(shapes))
    read_hidden = np.zeros(len(shapes))
    pack_from: float | None = None
    if gemm is not None:  # only the library packs: the framework's own kernel reads as it is
        read_b = None
        if dtype in target.pack_bps:  # the copy reads B as a stream does, whole tiers' rates
            streams = effective * target.bandwidth_share(dtype, product=False)
            # ... less the share its kernel's own stream does of a row-major B the caches hold
            read_hidden = hidden_pack_read(target, dtype, gemm, bpe, op.b_transposed, kept)
            read_b = pack_read_time(
                gemm,
                bpe,
                stream_miss_fraction(working_set, capacities),
                streams,
                access_latency,
                read_hidden,
            )
        pack_from = target.packs_from(dtype, op.b_transposed)  # a linear's own count, if any
        pack = pack_time(gemm, bpe, target.pack_bps.get(dtype), pack_from, read_b)
        pack_a = pack_a_time(gemm, bpe, crossing[:, -1], target.pack_a_bps.get(dtype))
        pack = np.where(library, pack * packed, 0.0)
        # an A too short to pack B runs the library's GEMV path, which packs neither
        pack_a = np.where(library & ~unpacked, pack_a, 0.0)
        pack = pack + pack_a

    overlap_of: float | np.ndarray = overlap
    overlap_shares: np.ndarray | None = None
    # a linear's kernel of dot products streams A's rows under its compute, as a
    # GEMV streams its matrix: the roofline's overlap, not the library's share
    dots = np.zeros(len(shapes), dtype=bool)
    if narrow is not None and op.b_transposed and dtype in target.transposed_narrow_n_group:
        dots = narrow
    if library.any() and dtype in target.product_overlap:  # the library's products only
        share = target.product_overlap[dtype]
        own = product_overlap(compute_s, memory.time_per_tier_s, memory.memory_s, share)
        overlap_of = np.where(library & ~dots, own, overlap)
        overlap_shares = np.where(library & ~dots, share, np.nan)
    exposed = overlap_terms(compute_s, memory.memory_s, overlap_of)
    latency = launch_s + exposed.exposed_compute_s + exposed.exposed_memory_s + first_touch + pack
    spent = energy(
        flops,
        bytes_per_tier,
        latency,
        target.energy_per_op_j[dtype],
        np.array([t.energy_per_byte_j for t in tiers]),
        target.idle_power_w,
        target.tdp_w,
    )

    return Prediction(
        predictor=NAME,
        target=target.key,
        op=op.name,
        dtype=dtype,
        dims=op.dims,
        shapes=shapes,
        latency_s=latency,
        energy_j=spent.energy_j,
        regime=regime(launch_s, compute_s, memory.memory_s, names, memory.binding),
        binding_tier=binding_tier_names(names, memory.binding),
        residency_tier=residency_tier_names(names, memory.binding),
        flops=flops,
        working_set_bytes=working_set,
        tier_names=names,
        tier_bandwidth_bps=tuple(float(b) for b in bandwidth),
        row_bandwidth_bps=row_bandwidth,
        in_place_fraction=target.in_place_fraction.get(dtype),
        active_units=active,
        bytes_per_tier=bytes_per_tier,
        time_per_tier_s=memory.time_per_tier_s,
        tiles=tiles,
        lanes=lanes_used,
        product_overlap=overlap_shares,
        padded_n=padded_n,
        tail_columns=tail,
        tail_piece_vectors=target.tail_piece_vectors.get(dtype),
        library_output_passes=library_passes,
        launch_s=launch_s,
        team_s=team_s,
        accumulate_s=accumulate_s,
        gemv_team=np.isfinite(gemv_cost),
        compute_s=compute_s,
        reference_kernel=reference,
        no_library=dtype in target.no_gemm_library,
        library_min_macs=target.library_min_macs.get(dtype),
        tlb_miss_s=tlb_s,
        memory_s=memory.memory_s,
        exposed_compute_s=exposed.exposed_compute_s,
        exposed_memory_s=exposed.exposed_memory_s,
        first_touch_s=first_touch,
        first_touch_bps=first_touch_bps,
        pack_s=pack,
        pack_a_s=pack_a,
        pack_read_hidden=np.where(pack > pack_a, read_hidden, 0.0),
        b_in_place=in_place,
        b_unpacked=unpacked,
        pack_from_rows=pack_from if dtype in target.pack_bps else None,
        b_passes=b_passes,
        pass_rows=target.transposed_pass_rows.get(dtype) if b_passes is not None else None,
        gemv_stream=gemv if gemv_share is not None else None,
        gemv_fraction=gemv_share,
        narrow_n=narrow if narrow_share is not None else None,
        narrow_n_fraction=narrow_share,
        narrow_n_columns=computed if narrow_share is not None else None,
        narrow_n_group=(
            target.transposed_narrow_n_group.get(dtype)
            if narrow_share is not None and op.b_transposed
            else None
        ),
        hidden_s=exposed.hidden_s,
        utilisation=utilisation,
        waves=compute.waves,
        compute_units=units,
        compute_unit_name=target.compute_unit_name,
        peak_ops_per_s=target.peak_ops_per_s[dtype],
        achievable_ops_per_s=achievable,
        vector_rate=vector_rate,
        energy_compute_j=spent.compute_j,
        energy_per_tier_j=spent.per_tier_j,
        energy_static_j=spent.static_j,
        over_tdp=spent.over_tdp,
    )
