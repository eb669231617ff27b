"""Compute time in waves of register tiles.

A compute unit works on one register-sized output tile at a time (the
target's ``register_tile_bytes`` of accumulators). The tiles are spread over
the active units in waves, and a partial wave costs a full one:
``waves = ceil(tiles / active)``, ``compute = waves * tile_ops / (achievable /
units)`` where ``achievable = peak * compute_fraction``, and the utilisation is
``ops / (waves * units * tile_ops)``. A CPU GEMM library does not deal its
register tiles out one by one: its threads split C into a grid, ``a`` parts
along M times ``b`` along N, each thread taking a block of whole tiles
(an analogy with BLIS, which threads its ``ic`` loop over M and its ``jr``
loop over N; MKL's own split is not published); the busiest
thread's ``ceil(tiles_m / a) * ceil(tiles_n / b)`` tiles are the waves, for
the split with the fewest (:func:`partition_waves`). A skinny dimension
leaves threads idle, and a grid that does not divide gives ragged blocks:
91 x 91 of C in 13 x 13
tiles on 12 threads is 7 x 7 tiles, and the best split (3 x 4 blocks)
gives the busiest thread 6 tiles where a deal of 49 would give 5. On one
thread the busiest thread has every tile. A GPU's CTA tiles (below) and
the tiles of a systolic or domain-flow array are dealt to its units in
waves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

if TYPE_CHECKING:
    from graphsval_core.datamodel.target import TargetSpec

#: Per-unit register footprint of an output tile when the spec gives none.
DEFAULT_REGISTER_TILE_BYTES: dict[str, float] = {
    "cpu": 2048.0,  # 32 vector registers of 64 B
    "gpu": 65536.0,  # a quarter of an SM's 256 KiB register file holding accumulators
    "systolic": 65536.0,
    "domain_flow": 4096.0,  # a 32x32 PE array's accumulators
}


def register_tile_bytes(target: TargetSpec) -> float:
    """The target's register tile: its spec's, else its architecture's default."""
    if target.register_tile_bytes is not None:
        return target.register_tile_bytes
    return DEFAULT_REGISTER_TILE_BYTES[target.architecture]


class Parallelism(NamedTuple):
    """Per row: whether the op wakes the thread team, and the units it runs on."""

    team: np.ndarray
    active_units: np.ndarray


def parallelism(flops: np.ndarray, units: int, grain_ops: float | None) -> Parallelism:
    """An op runs on all ``units`` (and wakes the team) when there is more than
    one unit and its ops exceed ``grain_ops`` (every op does when no grain is
    set); otherwise on one unit."""
    team = np.full(flops.shape, units > 1)
    if grain_ops is not None:
        team &= flops > grain_ops
    return Parallelism(team, np.where(team, units, 1))


class RegisterTiles(NamedTuple):
    """Per row: the number of register tiles and the ops in each, and, for a
    matrix product whose threads split C into a grid, the tiles along M and
    along N (``grid``; None where the tiles are dealt out one by one)."""

    count: np.ndarray
    tile_ops: np.ndarray
    grid: tuple[np.ndarray, np.ndarray] | None = None


def product_tiles(
    gemm: np.ndarray,
    flops: np.ndarray,
    tile: np.ndarray,
    threads_split: bool = False,
    along_n: np.ndarray | None = None,
) -> RegisterTiles:
    """A matrix product's register tiles: ``ceil(M/Mt) * ceil(N/Nt)`` output
    tiles of ``(Mt, Nt)`` (``tile``, ``(n, 3)``), each output element costing
    the same, so a tile does ``ops / (M*N) * Mt * Nt`` ops. ``along_n``, where
    given, replaces ``ceil(N/Nt)`` (the tiles a row of C costs: a library
    that covers N's tail in pieces, :func:`lane_vectors`). Where
    ``threads_split`` (a CPU GEMM library's threads), the tiles keep their
    grid, which :func:`compute_waves` splits into blocks; other
    architectures deal them to their units one by one."""
    mt, nt = tile[:, 0], tile[:, 2]
    along_m = np.ceil(gemm[:, 0] / mt)
    if along_n is None:
        along_n = np.ceil(gemm[:, 2] / nt)
    tile_ops = flops / (gemm[:, 0] * gemm[:, 2]) * mt * nt
    grid = (along_m, along_n) if threads_split else None
    return RegisterTiles(along_m * along_n, tile_ops, grid)


def gemv_shapes(gemm: np.ndarray) -> np.ndarray:
    """Per row of ``gemm`` (``(n, 3)`` of M, K, N): a GEMV's shape, one row of
    A or one column of B (M or N of 1), which a GEMM library hands to its
    level-2 path (MKL's sgemm to its sgemv)."""
    return (gemm[:, 0] == 1) | (gemm[:, 2] == 1)


def lane_tile(gemm: np.ndarray, lanes: float) -> np.ndarray:
    """The compute tile of a GEMM-library micro-kernel that broadcasts each
    row of A against vectors of ``lanes`` of B's columns
    (``TargetSpec.accumulator_lanes``): one row of C by ``lanes`` columns,
    so every N of two or more columns is padded to a multiple of the lanes
    (a masked vector costs a whole one, an N narrower than the lanes
    included), and M is not padded at all. An N of one is the library's
    GEMV, not this kernel: its tile is the one column. ``gemm`` is
    ``(n, 3)`` of (M, K, N); so is the result."""
    tile = np.array(gemm, dtype=np.float64, copy=True)
    tile[:, 0] = 1.0
    tile[:, 2] = np.where(tile[:, 2] > 1.0, float(lanes), 1.0)
    return tile


def lane_vectors(gemm: np.ndarray, lanes: float, piece: float | None = None) -> np.ndarray:
    """The vectors of ``lanes`` columns one row of C costs in a GEMM-library
    micro-kernel (:func:`lane_tile`), per row of ``gemm`` (``(n, 3)`` of M,
    K, N): ``ceil(N / lanes)`` (a masked vector costs a whole one), or, where
    the library covers the columns beyond its whole vectors in power-of-two
    pieces each costing ``piece`` vectors (``TargetSpec.tail_piece_vectors``),
    ``floor(N / lanes) + piece * pieces`` with ``pieces`` the set bits of
    ``N mod lanes`` (N = 7 is 4 + 2 + 1: three pieces), at least one vector.
    An N of one is the library's GEMV: one tile of one column."""
    n = np.asarray(gemm[:, 2], dtype=np.float64)
    vectors = np.ceil(n / lanes)
    if piece is not None:  # never less than one vector: a masked one costs a whole one
        vectors = np.maximum(np.floor(n / lanes) + piece * tail_pieces(gemm, lanes), 1.0)
    return np.where(n > 1.0, vectors, 1.0)


def tail_columns(gemm: np.ndarray, lanes: float) -> np.ndarray:
    """Per row of ``gemm`` (``(n, 3)`` of M, K, N): the columns of N beyond
    its whole vectors of ``lanes``, ``N mod lanes``."""
    n = np.asarray(gemm[:, 2], dtype=np.float64)
    return n - np.floor(n / lanes) * lanes


def tail_pieces(gemm: np.ndarray, lanes: float) -> np.ndarray:
    """Per row of ``gemm`` (``(n, 3)`` of M, K, N): the power-of-two pieces
    the columns of N beyond its whole vectors of ``lanes`` split into, the
    set bits of ``N mod lanes`` (:func:`tail_columns`; 0 for a multiple of
    the lanes)."""
    rest = tail_columns(gemm, lanes).astype(np.int64)
    pieces = np.zeros(len(rest))
    for bit in range(int(lanes).bit_length()):
        pieces += (rest >> bit) & 1
    return pieces


def narrow_rows(
    target: TargetSpec,
    dtype: str,
    gemm: np.ndarray | None,
    library: np.ndarray,
    unpacked: np.ndarray,
    transposed: bool,
) -> np.ndarray | None:
    """The rows (``library``: the ones the dtype's GEMM library runs) whose
    product the library computes in its narrow kernel: N from 2 to the most
    columns it runs so for this layout of B (``transposed``: a linear's
    weight; :meth:`TargetSpec.narrow_n_max`), M of 2 or more and an A long
    enough to pack (``unpacked``: its level-2 path, a GEMV per row of A, is
    not this kernel; nor is a GEMV, M or N of 1). None where it has no such
    kernel (or the op is no matrix product)."""
    most = target.narrow_n_max(dtype, transposed)
    if gemm is None or most is None:
        return None
    m, n = gemm[:, 0], gemm[:, 2]
    return library & ~unpacked & (m >= 2) & (n >= 2) & (n <= most)


def narrow_columns(
    target: TargetSpec, dtype: str, gemm: np.ndarray, transposed: bool
) -> np.ndarray | None:
    """Per row, the columns of N the dtype's narrow kernel for this layout
    of B computes: every N as its most columns (MKL's matmul kernel, a row
    of C a step of K), or, for a linear's weight with a
    ``transposed_narrow_n_group``, N rounded up to whole groups of that many
    of the weight's rows (MKL's fp32 linear on an AMD CPU: dot products
    along K, four rows a pass; ``bench_narrow_n.py``: N of 4, 8 and 12 cost
    the same per column, 2 and 3 0.75 to 1.7 times what 4 costs). None
    where it has no kernel."""
    most = target.narrow_n_max(dtype, transposed)
    if most is None:
        return None
    group = target.transposed_narrow_n_group.get(dtype) if transposed else None
    if group:
        return np.ceil(gemm[:, 2] / group) * group
    return np.full(len(gemm), float(most))


def narrow_compute(
    gemm: np.ndarray,
    columns: np.ndarray,
    achievable_ops_per_s: float,
    units: int,
    active_units: np.ndarray,
    share: float,
) -> np.ndarray:
    """The compute time of a product in its library's narrow kernel, each
    row's N computed as its ``columns`` (:func:`narrow_columns`: a matmul's
    as the kernel's most, its time going with M x K, as MKL's fp32 matmul of
    2 to 8 columns takes one dependent multiply-add's latency a step on the
    Zen 3; a linear's in whole groups of the weight's rows): ``2 M K
    columns`` ops at ``share`` of one unit's achievable rate, the rows split
    over the ``active_units``."""
    ops = 2.0 * gemm[:, 0] * gemm[:, 1] * columns
    return ops / (achievable_ops_per_s / units * share * active_units)


def partition_waves(along_m: np.ndarray, along_n: np.ndarray, active: np.ndarray) -> np.ndarray:
    """The tiles of the busiest thread when ``active`` threads split a grid
    of ``along_m x along_n`` tiles into ``a x b`` blocks of whole tiles
    (``a * b <= active``, as a GEMM library factors its thread count over
    the M and N loops): ``min over a of ceil(along_m / a) * ceil(along_n /
    floor(active / a))``. On one thread it is every tile; it is never fewer
    than ``ceil(tiles / active)``, the waves of a deal one tile at a time."""
    active = np.asarray(active, dtype=np.int64)
    best = along_m * along_n
    # more parts along M than tiles along it only takes threads from N
    last = min(int(active.max(initial=1)), int(np.max(along_m, initial=1)))
    for a in range(1, last + 1):
        b = np.maximum(active // a, 1)
        split = np.ceil(along_m / a) * np.ceil(along_n / b)
        best = np.where(a <= active, np.minimum(best, split), best)
    return best


def streaming_tiles(flops: np.ndarray, operands: np.ndarray, tile_bytes: float) -> RegisterTiles:
    """Register tiles of an op with no reuse: a tile holds the ops whose operands
    fill ``tile_bytes``, ``min(ops, max(1, floor(tile_bytes / (bytes / ops))))``,
    and there are ``ceil(ops / tile_ops)`` of them."""
    bytes_per_op = operands / flops
    tile_ops = np.minimum(flops, np.maximum(1.0, np.floor(tile_bytes / bytes_per_op)))
    return RegisterTiles(np.ceil(flops / tile_ops), tile_ops)


class ComputeTime(NamedTuple):
    """Per row: waves, compute time and utilisation of the units."""

    waves: np.ndarray
    compute_s: np.ndarray
    utilisation: np.ndarray


def compute_waves(
    flops: np.ndarray,
    tiles: RegisterTiles,
    active_units: np.ndarray,
    units: int,
    achievable_ops_per_s: float,
) -> ComputeTime:
    """``waves = ceil(tiles / active)`` (for tiles in a grid, the busiest
    thread's share of the best split: :func:`partition_waves`); each wave
    takes one tile's ops at one unit's share of the achievable rate,
    ``tile_ops / (achievable / units)``; utilisation ``ops / (waves * units *
    tile_ops)``."""
    if tiles.grid is not None:
        waves = partition_waves(tiles.grid[0], tiles.grid[1], active_units)
    else:
        waves = np.ceil(tiles.count / active_units)
    compute_s = waves * tiles.tile_ops / (achievable_ops_per_s / units)
    utilisation = flops / (waves * units * tiles.tile_ops)
    return ComputeTime(waves, compute_s, utilisation)


#: The CTA tiles (rows x columns of C) a GPU GEMM library chooses among, largest
#: first: the CUTLASS/cuBLAS tensor-op configurations for half and single
#: precision (cutlass/gemm/device/default_gemm_configuration.h; cuBLAS's
#: heuristics pick among the same sizes).
CTA_TILES: tuple[tuple[int, int], ...] = (
    (256, 128),
    (128, 256),
    (128, 128),
    (128, 64),
    (64, 128),
    (64, 64),
)
#: The shortest K a split-K slice gets (cuBLAS splits a long K only when the
#: output tiles leave SMs idle).
SPLIT_K_MIN = 256


def cta_tiles(gemm: np.ndarray, flops: np.ndarray, units: int) -> RegisterTiles:
    """A GPU library's choice of CTA tile for each product, with wave
    quantisation over the ``units`` SMs and split-K.

    For each candidate tile (:data:`CTA_TILES`) the product runs
    ``waves = ceil(ceil(M/mt) * ceil(N/nt) / units)`` waves of tiles of
    ``mt * nt`` outputs; the library takes the tile with the least
    ``waves * mt * nt`` (the work of the busiest SM, edge tiles costing a
    full tile), the larger tile on a tie. When that leaves SMs idle (fewer
    tiles than SMs) and K is long, K is split into
    ``s = max(1, min(floor(units / tiles), K / SPLIT_K_MIN))`` slices, each
    its own tile of ``1/s`` of the ops (``s`` is left fractional, a mean over
    the library's integer choices, so that a longer K never runs faster).
    Returns the tiles and ops per tile, as :func:`product_tiles` does."""
    m, k, n = gemm[:, 0], gemm[:, 1], gemm[:, 2]
    best_cost = np.full(len(gemm), np.inf)
    best_count = np.ones(len(gemm))
    best_area = np.ones(len(gemm))
    for mt, nt in CTA_TILES:
        count = np.ceil(m / mt) * np.ceil(n / nt)
        cost = np.ceil(count / units) * mt * nt
        better = cost < best_cost
        best_cost = np.where(better, cost, best_cost)
        best_count = np.where(better, count, best_count)
        best_area = np.where(better, float(mt * nt), best_area)
    split = np.where(
        best_count < units,
        np.maximum(1.0, np.minimum(np.floor(units / best_count), k / SPLIT_K_MIN)),
        1.0,
    )
    tile_ops = flops / (m * n) * best_area / split
    return RegisterTiles(best_count * split, tile_ops)
