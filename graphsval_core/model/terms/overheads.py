"""Costs of a call beyond its compute and memory time: launch, first touch of
a fresh output, and the packing of B, and of an A from main memory, by a CPU
GEMM library."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from graphsval_core.datamodel.target import PACK_A_MIN_COLUMNS
from graphsval_core.model.terms.compute import gemv_shapes, parallelism
from graphsval_core.model.terms.memory import memory_time

if TYPE_CHECKING:
    from graphsval_core.datamodel.target import TargetSpec


def pays_dispatch(target: TargetSpec, dtype: str, product: bool) -> bool:
    """Whether a call's first kernel may be the dtype's own GEMM-library
    dispatch (``dispatch_overhead_s``): only a matrix product (``product``)
    at a dtype the spec gives one for; any other call pays the framework's
    launch. Which products do: :func:`dispatched_rows`."""
    return product and dtype in target.dispatch_overhead_s


def library_rows(target: TargetSpec, dtype: str, gemm: np.ndarray | None, n: int) -> np.ndarray:
    """Per row of ``n``: whether the dtype's GEMM library runs the product.
    ``gemm`` is ``(n, 3)`` of (M, K, N), None for an op with no product. A
    product is the library's when it has more multiply-adds ``M*K*N`` than
    the dtype's ``library_min_macs`` (0 unless given); a smaller one runs in
    the framework's own kernel (PyTorch keeps a bf16 or fp16 product of at
    most 16 x 16 x 16 out of oneDNN): no library call, no packing. A dtype in
    the target's ``no_gemm_library`` has no library: none of its products
    is the library's."""
    if gemm is None or dtype in target.no_gemm_library:
        return np.zeros(n, dtype=bool)
    macs = gemm[:, 0] * gemm[:, 1] * gemm[:, 2]
    return macs > target.library_min_macs.get(dtype, 0.0)


def dispatched_rows(target: TargetSpec, dtype: str, gemm: np.ndarray | None, n: int) -> np.ndarray:
    """Per row of ``n``: whether the call's first kernel is the library's
    dispatch: a product the library runs (:func:`library_rows`) where the
    call :func:`pays_dispatch`."""
    if not pays_dispatch(target, dtype, gemm is not None):
        return np.zeros(n, dtype=bool)
    return library_rows(target, dtype, gemm, n)


def accumulating_rows(
    target: TargetSpec, dtype: str, gemm: np.ndarray | None, n: int, accumulates: bool
) -> np.ndarray:
    """Per row of ``n``: whether the call is a product the dtype's library
    runs (:func:`library_rows`) that ``accumulates`` onto C (``OpSpec.accumulates``:
    linear onto its bias) at a dtype the spec gives an
    ``accumulate_overhead_s``: the calls that pay it."""
    if not accumulates or dtype not in target.accumulate_overhead_s:
        return np.zeros(n, dtype=bool)
    return library_rows(target, dtype, gemm, n)


def first_kernel_time(
    target: TargetSpec, dtype: str, dispatched: np.ndarray, *, accumulating: np.ndarray
) -> np.ndarray:
    """The first kernel of each call: the dtype's library call where
    ``dispatched`` (:func:`dispatched_rows`) or ``accumulating``
    (:func:`accumulating_rows`: its ``accumulate_overhead_s`` on top, whether
    or not the dtype has a dispatch of its own), :meth:`TargetSpec.dispatch_for`;
    else ``launch_overhead_s``."""
    plain = np.where(dispatched, target.dispatch_for(dtype, False), target.launch_overhead_s)
    return np.where(accumulating, target.dispatch_for(dtype, True), plain)


def gemv_rows(target: TargetSpec, dtype: str, gemm: np.ndarray | None, n: int) -> np.ndarray:
    """Per row of ``n``: whether the dtype's GEMM library runs the product on
    its level-2 path, a GEMV: one row of A or one column of B (M or N of 1;
    MKL's sgemm hands such a call to its sgemv)."""
    if gemm is None:
        return np.zeros(n, dtype=bool)
    return gemv_shapes(gemm) & library_rows(target, dtype, gemm, n)


def team_gemv_rows(
    target: TargetSpec, dtype: str, gemm: np.ndarray | None, flops: np.ndarray
) -> np.ndarray:
    """Per row: whether the call is a GEMV (:func:`gemv_rows`) that wakes the
    thread team (more than one unit, above the grain where the spec gives
    one: :func:`~graphsval_core.model.terms.compute.parallelism`), the calls
    that pay a ``gemv_fork_join_s`` where the spec gives the dtype one. The
    model, calibrate and drift attribution all ask this one rule."""
    team = parallelism(flops, target.compute_units, target.parallel_grain_ops).team
    return team & gemv_rows(target, dtype, gemm, len(flops))


def gemv_team_cost(
    target: TargetSpec, dtype: str, gemm: np.ndarray | None, flops: np.ndarray
) -> np.ndarray:
    """Per row: the dtype's ``gemv_fork_join_s`` where the call is a GEMV that
    wakes the team (:func:`team_gemv_rows`) and the target gives the dtype a
    team cost of its own beside its ``fork_join_s``, else NaN."""
    own = target.gemv_fork_join_s.get(dtype)
    if own is None or target.fork_join_s is None:
        return np.full(len(flops), np.nan)
    return np.where(team_gemv_rows(target, dtype, gemm, flops), own, np.nan)


def team_cost(target: TargetSpec, gemv_cost: np.ndarray) -> float | np.ndarray | None:
    """What waking and joining the thread team costs each row: a GEMV's own
    cost where it has one (``gemv_cost``: :func:`gemv_team_cost`), the
    target's ``fork_join_s`` otherwise (None: no team cost)."""
    if target.fork_join_s is None or not np.isfinite(gemv_cost).any():
        return target.fork_join_s
    return np.where(np.isfinite(gemv_cost), gemv_cost, target.fork_join_s)


def launch_time(
    first_kernel_s: float | np.ndarray,
    kernels: int,
    per_kernel_s: float,
    team: np.ndarray,
    fork_join_s: float | np.ndarray | None,
) -> np.ndarray:
    """The launch of a call: its first kernel (a framework dispatch, or for a
    matrix product the dtype's GEMM-library call), every further kernel of the
    op at ``per_kernel_s`` (linear broadcasts its bias, then accumulates the
    product onto it), and ``fork_join_s`` where the op wakes and joins the
    thread team (one cost, or one per row: :func:`team_cost`):
    ``first + (kernels - 1) * per_kernel [+ fork_join]``."""
    launch = np.broadcast_to(first_kernel_s + (kernels - 1) * per_kernel_s, team.shape).copy()
    if fork_join_s is not None:
        launch = launch + np.where(team, fork_join_s, 0.0)
    return launch


def fresh_output(
    out_bytes: np.ndarray, first_touch_bps: float | None, min_bytes: float | None
) -> np.ndarray:
    """Per row: whether the output is allocated afresh on every call and large
    enough (``>= min_bytes``) to be mapped anew by the OS (a CPU's malloc hands
    such sizes to mmap). Never where the target has no first-touch rate (a
    caching GPU allocator)."""
    if not first_touch_bps or min_bytes is None:
        return np.zeros(out_bytes.shape, dtype=bool)
    return out_bytes >= min_bytes


def first_touch_time(
    out_bytes: np.ndarray, fresh: np.ndarray, first_touch_bps: float | None
) -> np.ndarray:
    """The OS zeroing a fresh output's pages, serially, before the kernel
    writes them: ``out_bytes / first_touch_bps`` where ``fresh``, else 0."""
    if not first_touch_bps:
        return np.zeros(out_bytes.shape)
    return np.where(fresh, out_bytes / first_touch_bps, 0.0)


def pack_time(
    gemm: np.ndarray,
    bpe: float,
    pack_bps: float | None,
    min_rows: float | None,
    read_s: np.ndarray | None = None,
) -> np.ndarray:
    """A CPU GEMM library copying B (``K*N*bpe`` bytes) into its panel layout
    on every call, once A has ``min_rows`` rows or more; with fewer rows a
    GEMV-like kernel streams B as it is. The copy reads B from the tier the
    call's working set lives in, ``read_s`` (B's bytes at a stream's rate of
    each tier, the slowest: :func:`pack_read_time`), and writes the panels
    at the core's ``pack_bps``: ``read_s + K*N*bpe / pack_bps``. 0 where the
    target does not pack."""
    n = gemm.shape[0]
    if pack_bps is None or min_rows is None:
        return np.zeros(n)
    read = np.zeros(n) if read_s is None else read_s
    return np.where(gemm[:, 0] >= min_rows, read + b_bytes(gemm, bpe) / pack_bps, 0.0)


def hidden_pack_read(
    target: TargetSpec,
    dtype: str,
    gemm: np.ndarray,
    bpe: float,
    b_transposed: bool,
    kept_bytes: float,
) -> np.ndarray:
    """Per row: the share of its packing copy's read of B that the dtype's
    GEMM library does within its kernel's own stream of B
    (``pack_read_overlap``) through the caches (:func:`pack_read_time` takes
    it off every tier's bytes but main memory's): of a row-major B (a
    matmul's, each panel's rows contiguous runs of N; not a linear's
    transposed weight, which MKL packs in a pass of its own), that share of
    the part the caches keep, ``kept_bytes / (K*N*bpe)`` at most 1
    (``kept_bytes``, the last tier's inner capacity), so that it falls off
    smoothly where B outgrows the caches instead of at a step a fitted
    capacity could sit on. 0 elsewhere. MKL's fp32 on the Intel host:
    a matmul of 4 to 48 rows of A and a B of 2-19 MB takes about one stream of
    B (4x2048x2048 714 us against 607 us for the GEMV 1x2048x2048), its linear
    twin 1.4-2.1 times as long."""
    share = target.pack_read_overlap.get(dtype)
    if share is None or b_transposed or kept_bytes <= 0:
        return np.zeros(gemm.shape[0])
    return share * kept_share(gemm, bpe, kept_bytes)


def kept_share(gemm: np.ndarray, bpe: float, kept_bytes: float) -> np.ndarray:
    """Per row: the share of B the caches keep, ``kept_bytes / (K*N*bpe)`` at
    most 1."""
    return np.minimum(1.0, kept_bytes / np.maximum(b_bytes(gemm, bpe), 1.0))


def reads_b_in_place(
    target: TargetSpec,
    dtype: str,
    gemm: np.ndarray,
    bpe: float,
    b_transposed: bool,
    kept_bytes: float,
) -> np.ndarray:
    """Per row: whether the dtype's GEMM library (:func:`library_rows`)
    reads B where it lies instead of packing it: a transposed B (``OpSpec.b_transposed``: a
    linear's weight, each row a contiguous run of K), A of the dtype's
    ``pack_min_rows`` rows (its ``transposed_pack_min_rows`` where the spec
    gives one: fewer pack nothing anyway) up to its
    ``in_place_max_rows``, and B larger than what the caches keep
    (``kept_bytes``, the last tier's inner capacity; none without caches).
    oneDNN's bf16 linear with 2-21 rows and a weight in main memory takes
    about the weight's memory time alone on both host kinds, while the same
    shapes as ``matmul`` (B N-contiguous) and its weights of 2-3 MB pay the
    reorder."""
    most = target.in_place_max_rows.get(dtype)
    if most is None or not b_transposed or kept_bytes <= 0:
        return np.zeros(gemm.shape[0], dtype=bool)
    least = target.packs_from(dtype, True)
    rows = (gemm[:, 0] >= (least or 0.0)) & (gemm[:, 0] <= most)
    library = library_rows(target, dtype, gemm, gemm.shape[0])
    return library & rows & (b_bytes(gemm, bpe) > kept_bytes)


def in_place_bandwidth(
    target: TargetSpec,
    dtype: str,
    in_place: np.ndarray,
    packed: np.ndarray,
    effective: np.ndarray,
    bandwidth: np.ndarray,
) -> np.ndarray | None:
    """Per row, each tier's bandwidth ``(n, T)`` where some rows read B in
    place (``in_place``: :func:`reads_b_in_place`) and the spec gives the
    dtype an ``in_place_fraction``. Such a row packs the ``packed`` share of
    B the caches keep (:func:`packed_share`), read as packed panels at the
    products' ``bandwidth``, and streams the rest as it lies at the
    dtype's ``in_place_fraction`` of each tier's ``effective`` bandwidth; a
    tier's time is the sum of the two, so its rate is their harmonic blend,
    ``1 / (packed / bandwidth + (1 - packed) / (effective * share))``. A B
    just past what the caches keep is read almost all as panels, as just
    below, and each further byte at the in-place rate: the time never falls
    as B grows. None where no row reads B in place at its own share (every
    row at ``bandwidth``)."""
    share = target.in_place_fraction.get(dtype)
    if share is None or not in_place.any():
        return None
    kept = packed[:, None]
    own = 1.0 / (kept / bandwidth[None, :] + (1.0 - kept) / (effective[None, :] * share))
    return np.where(in_place[:, None], own, bandwidth[None, :])


def unpacked_rows(
    target: TargetSpec,
    dtype: str,
    gemm: np.ndarray,
    library: np.ndarray,
    transposed: bool = False,
) -> np.ndarray:
    """Per row: the dtype's GEMM library runs the product (``library``:
    :func:`library_rows`) with fewer rows of A than it packs from (the
    dtype's ``pack_min_rows``; for a ``transposed`` B, a linear's weight, its
    ``transposed_pack_min_rows`` where the spec gives one): it packs nothing
    (:func:`pack_time`) and streams B as it lies. None of them where the spec
    gives no such count."""
    least = target.packs_from(dtype, transposed)
    if least is None:
        return np.zeros(gemm.shape[0], dtype=bool)
    return library & (gemm[:, 0] < least)


def unpacked_pass_rows(
    target: TargetSpec, dtype: str, gemm: np.ndarray, unpacked: np.ndarray, transposed: bool
) -> np.ndarray | None:
    """Per row: how many rows of A the library's unpacked kernel takes per
    pass over B (B is read once a pass), for the ``unpacked`` rows
    (:func:`unpacked_rows`) of a ``transposed`` B where the dtype has
    ``transposed_pass_rows``: ``min(M, transposed_pass_rows)``; infinite for
    the other rows (no bound on their tiles). None where no row takes such
    passes."""
    per_pass = target.transposed_pass_rows.get(dtype)
    if not transposed or per_pass is None or not unpacked.any():
        return None
    return np.where(unpacked, np.minimum(gemm[:, 0], per_pass), np.inf)


def unpacked_bandwidth(
    unpacked: np.ndarray,
    streams: np.ndarray,
    bandwidth: np.ndarray,
    row_bandwidth: np.ndarray | None,
) -> np.ndarray | None:
    """Per row, each tier's bandwidth ``(n, T)`` with the ``unpacked`` rows
    (:func:`unpacked_rows`) at ``streams``: the library's share of each
    tier's effective bandwidth, without the tier's ``product_fraction``,
    which times a micro-kernel's short bursts from packed panels in a
    private L2 (an unpacked B streams through the prefetcher as an add's
    operands do). The other rows keep ``row_bandwidth`` (None: every row at
    ``bandwidth``). None where no row is unpacked and none had its own."""
    if not unpacked.any():
        return row_bandwidth
    rows = np.broadcast_to(
        bandwidth if row_bandwidth is None else row_bandwidth, (len(unpacked), len(bandwidth))
    )
    return np.where(unpacked[:, None], streams[None, :], rows)


def gemv_stream_rows(
    target: TargetSpec,
    dtype: str,
    gemm: np.ndarray | None,
    library: np.ndarray,
    transposed: bool = False,
) -> np.ndarray:
    """Per row: the dtype's GEMM library streams the product's matrix on its
    level-2 path, at the dtype's ``gemv_fraction``: a GEMV (:func:`gemv_rows`)
    or a product with fewer rows of A than the library packs from
    (:func:`unpacked_rows`), which it runs as one GEMV per row of A. None of
    them where the spec gives the dtype no ``gemv_fraction``."""
    if gemm is None or dtype not in target.gemv_fraction:
        return np.zeros(len(library), dtype=bool)
    return gemv_rows(target, dtype, gemm, len(library)) | unpacked_rows(
        target, dtype, gemm, library, transposed
    )


def gemv_bandwidth(
    gemv: np.ndarray,
    share: float | None,
    effective: np.ndarray,
    bandwidth: np.ndarray,
    row_bandwidth: np.ndarray | None,
) -> np.ndarray | None:
    """Per row, each tier's bandwidth ``(n, T)`` with the ``gemv`` rows
    (:func:`gemv_stream_rows`) streaming from every tier beyond the innermost
    at ``share`` of its ``effective`` bandwidth (the dtype's ``gemv_fraction``:
    the library's level-2 path reads its matrix as it lies, at a stream's
    pace, not a micro-kernel's bursts from packed panels); their
    innermost tier, which feeds the registers, and the other rows keep
    ``row_bandwidth`` (None: every row at ``bandwidth``). ``row_bandwidth``
    itself where ``share`` is None or no row is a GEMV."""
    if share is None or not gemv.any() or len(effective) < 2:
        return row_bandwidth
    rows = np.array(
        np.broadcast_to(
            bandwidth if row_bandwidth is None else row_bandwidth, (len(gemv), len(bandwidth))
        )
    )
    rows[gemv, 1:] = effective[1:] * share
    return rows


def b_bytes(gemm: np.ndarray, bpe: float) -> np.ndarray:
    """Bytes of each row's B, ``K*N*bpe``."""
    return gemm[:, 1] * gemm[:, 2] * bpe


def packed_share(
    in_place: np.ndarray, gemm: np.ndarray, bpe: float, kept_bytes: float
) -> np.ndarray:
    """Per row: the share of B the library packs. All of it, except where it
    reads B in place (:func:`reads_b_in_place`): then what the caches keep,
    ``kept_bytes / (K*N*bpe)``, so that the packing's cost stops growing
    where B outgrows the caches instead of vanishing there (a larger linear
    is never faster than a smaller one; the rows do not show where between
    a 2 MB and a 34 MB weight the reorder stops)."""
    return np.where(in_place, kept_share(gemm, bpe, kept_bytes), 1.0)


def pack_read_time(
    gemm: np.ndarray,
    bpe: float,
    crossing: np.ndarray,
    stream_bandwidth: np.ndarray,
    access_latency_s: np.ndarray,
    hidden: np.ndarray | None = None,
) -> np.ndarray:
    """The time packing takes to read B (``K*N*bpe`` bytes) from where the
    call keeps it: the bytes that cross each tier (``crossing``, a stream's
    miss fractions, ``(n, T)``) at that tier's stream bandwidth, the slowest
    tier. A B the L2 holds is copied in a few microseconds; one in main
    memory costs a pass at its rate (the host's fp32 products with 3-16 rows
    of A and a B of 0.5 MiB run at their compute alone; with a B of 4-16 MiB
    they take one more pass of B at the L3's rate). ``hidden`` (per row, a
    share: :func:`hidden_pack_read`) is the share of the caches' part the
    kernel's own stream reads instead: it comes off every tier's bytes but
    the last's, whose bytes (what the caches do not keep) are read whatever
    the kernel does."""
    moved = b_bytes(gemm, bpe)[:, None] * crossing
    if hidden is not None:
        moved[:, :-1] *= (1.0 - hidden)[:, None]
    return memory_time(moved, stream_bandwidth, access_latency_s).memory_s


def pack_a_time(
    gemm: np.ndarray, bpe: float, beyond_last: np.ndarray, pack_a_bps: float | None
) -> np.ndarray:
    """A CPU GEMM library packing the blocks of an A its last-level cache does
    not hold: ``M*K*bpe * beyond_last / pack_a_bps``, where ``beyond_last`` is
    the share of the working set beyond the last cache (the last tier's miss
    fraction), once N is above :data:`PACK_A_MIN_COLUMNS`. One core packs each
    block before its kernel uses it, so the time adds to the compute; main
    memory's rows reach it in short strided runs, well below a stream's rate
    (the host's tall products, A of 64-100 MiB and N of 32-256, run 25-60%
    slower than their compute and A's memory traffic overlapped). 0 where the
    target gives no rate."""
    if pack_a_bps is None:
        return np.zeros(gemm.shape[0])
    a_bytes = gemm[:, 0] * gemm[:, 1] * bpe
    return np.where(gemm[:, 2] > PACK_A_MIN_COLUMNS, a_bytes * beyond_last / pack_a_bps, 0.0)
