"""Traffic per tier: the bytes each tier serves to the level inside it before
residency is counted (:mod:`.residency` scales them by the miss fraction).

A matrix product ``C[M,N] = A[M,K] B[K,N]`` reuses its operands within a
C-tile ``(Mt, Nt)`` sized for the inner level: C crosses once per pass, A once
per column block of C, B once per row block. Any other op has no reuse and
moves every operand once. An output crosses twice where the caches
write-allocate (a CPU reads a line before a store fills it), except a freshly
mapped output, which the kernel has just zeroed into the cache, and the
result a GEMM library writes whole: a product that does not accumulate
(``beta = 0``) fills C's lines without reading them, while one that
accumulates onto what its output holds (``OpSpec.accumulates``: linear, onto
the bias its first kernel broadcast) reads C. A library may store C no
cheaper than a product that accumulates all the same
(``TargetSpec.product_output_passes``: MKL's fp32 sgemm on the AMD hosts,
the Zen 4 and the Zen 3, whose ``matmul`` takes what ``linear`` takes).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from graphsval_core.model.terms.compute import gemv_shapes

if TYPE_CHECKING:
    from graphsval_core.datamodel.op import OpSpec
    from graphsval_core.datamodel.target import MemoryTier, TargetSpec


def tile_capacity_bytes(tier: MemoryTier) -> float:
    """Capacity one tile may use: a unit's share of a per-unit tier, the usable
    capacity of a shared one."""
    return tier.capacity_bytes if tier.is_per_unit else tier.effective_capacity_bytes


def square_tile(gemm: np.ndarray, capacity_bytes: float, bpe: float) -> np.ndarray:
    """The square C-tile that keeps a tile of A, B and C in ``capacity_bytes``:
    ``Mt = Nt = max(1, floor(sqrt(C / (3 * bpe))))`` clamped to the shape; K is
    not tiled. ``gemm`` is ``(n, 3)`` of (M, K, N); so is the result."""
    side = max(1.0, float(np.floor(np.sqrt(capacity_bytes / (3.0 * bpe)))))
    tile = np.array(gemm, dtype=np.float64, copy=True)
    tile[:, 0] = np.minimum(tile[:, 0], side)
    tile[:, 2] = np.minimum(tile[:, 2], side)
    return tile


def gemm_traffic_bytes(
    gemm: np.ndarray,
    tile: np.ndarray,
    bpe: float,
    output_passes: float | np.ndarray = 2.0,
    out_bpe: float | None = None,
) -> np.ndarray:
    """Bytes crossing a boundary for ``C[M,N] = A[M,K] B[K,N]`` with C-tile
    ``(Mt, Nt)``: ``p*M*N*out_bpe + (M*K*ceil(N/Nt) + K*N*ceil(M/Mt)) * bpe``,
    where C crosses ``p = output_passes`` times (written, and read first by a
    write-allocate cache) and its elements take ``out_bpe`` bytes (``bpe``
    unless given: int32 for an int8 product). ``gemm`` and ``tile`` are
    ``(n, 3)`` of (M, K, N)."""
    m, k, n = (gemm[:, i].astype(np.float64) for i in range(3))
    mt, nt = tile[:, 0], tile[:, 2]
    c_bpe = bpe if out_bpe is None else out_bpe
    inputs = (m * k * np.ceil(n / nt) + k * n * np.ceil(m / mt)) * bpe
    return output_passes * m * n * c_bpe + inputs


def write_allocates(target: TargetSpec) -> bool:
    """Whether the target's caches read a line before a store fills it (a CPU's
    write-allocate caches); a GPU's L2 and a spatial accelerator's scratchpads
    take writes without reading."""
    return target.architecture == "cpu"


def product_overwrites(op: OpSpec) -> bool:
    """Whether ``op`` is a matrix product that writes its result whole: it
    does not accumulate (``OpSpec.accumulates``), so the GEMM library runs
    with ``beta = 0`` and stores every line of C without reading it (MKL and
    oneDNN stream a fresh result out). One that accumulates (linear, onto
    the bias it broadcast) reads C before it writes it."""
    return op.gemm_dims is not None and not op.accumulates


def output_read_first(
    write_allocate: bool | np.ndarray,
    fresh: bool | np.ndarray,
    overwrites: bool | np.ndarray = False,
) -> np.ndarray:
    """Per row: whether the output's lines are read before they are written.
    True on a write-allocate target unless the output is freshly mapped
    (``fresh``: the kernel has just zeroed those pages into the cache) or the
    op writes it whole (``overwrites``: :func:`product_overwrites`). Each
    argument is a bool or a per-row array."""
    return (
        np.asarray(write_allocate, dtype=bool)
        & ~np.asarray(fresh, dtype=bool)
        & ~np.asarray(overwrites, dtype=bool)
    )


def library_rewrites(gemm: np.ndarray, stored_whole: np.ndarray, library: np.ndarray) -> np.ndarray:
    """Per row of ``gemm`` (``(n, 3)`` of M, K, N): the rows where a GEMM
    library that stores C no cheaper than a product that accumulates onto
    it (``TargetSpec.product_output_passes``) does so: a product whose C would
    otherwise be stored whole (``stored_whole``: it does not accumulate, the
    caches write-allocate and the output is not freshly mapped), run by the
    library (``library``) through its GEMM kernel: K of two or more, and M
    and N too. A K of one is the library's rank-1 update and an M or N of
    one its GEMV (the level-2 paths), which store C whole (the Zen 4's fp32
    ``matmul`` of 2048 x 1 x 2048 takes 0.41-0.57 of ``linear``'s time,
    2048 x 3 x 2048 1.03)."""
    kernel = ~gemv_shapes(gemm) & (gemm[:, 1] > 1)
    return np.asarray(stored_whole, dtype=bool) & np.asarray(library, dtype=bool) & kernel


def output_passes(
    read_first: np.ndarray, rewritten: np.ndarray, library_passes: float | None
) -> np.ndarray:
    """Per row: how many times a product's C crosses each tier. Two where
    its lines are read first (``read_first``: :func:`output_read_first`);
    ``library_passes`` (``TargetSpec.product_output_passes``, 1 to 2) where
    the row is ``rewritten`` (:func:`library_rewrites`): a product that
    would write C whole (:func:`product_overwrites`), run by a GEMM library
    that stores C no cheaper than a product that accumulates; one elsewhere
    (and everywhere with no ``library_passes``)."""
    passes = 1.0 + np.asarray(read_first, dtype=np.float64)
    if library_passes is None:
        return passes
    return np.where(np.asarray(rewritten, dtype=bool), library_passes, passes)


def operand_bytes(elements: Mapping[str, np.ndarray], bpe: float) -> np.ndarray:
    """Bytes of all operands of each row: their elements times ``bpe``."""
    return sum(np.asarray(v, dtype=np.float64) for v in elements.values()) * bpe


def outside_product_bytes(
    operands: np.ndarray, gemm: np.ndarray, bpe: float, out_bpe: float | None = None
) -> np.ndarray:
    """Operand bytes outside a product's A, B and C (a bias):
    ``operands - (M*K + K*N) * bpe - M*N * out_bpe``; they cross every boundary once."""
    m, k, n = gemm[:, 0], gemm[:, 1], gemm[:, 2]
    c_bpe = bpe if out_bpe is None else out_bpe
    return operands - (m * k + k * n) * bpe - m * n * c_bpe


def reuse_traffic(
    gemm: np.ndarray,
    tiles: np.ndarray,
    bpe: float,
    outside: np.ndarray,
    passes: np.ndarray,
    out_bpe: float | None = None,
) -> np.ndarray:
    """Traffic of a matrix product at every tier: column ``k`` is
    :func:`gemm_traffic_bytes` with tier ``k``'s tile ``tiles[:, k]`` (``(n, T, 3)``),
    the output crossing ``passes`` times (:func:`output_passes`), plus the
    ``outside`` bytes. Returns ``(n, T)``."""
    traffic = np.zeros(tiles.shape[:2])
    for k in range(tiles.shape[1]):
        traffic[:, k] = gemm_traffic_bytes(gemm, tiles[:, k, :], bpe, passes, out_bpe) + outside
    return traffic


def streamed_traffic(
    operands: np.ndarray, out_bytes: np.ndarray, read_first: np.ndarray, n_tiers: int
) -> np.ndarray:
    """Traffic of an op with no reuse at every tier: every operand once, plus
    the output again where ``read_first``. Returns ``(n, n_tiers)``."""
    moved = operands + np.where(read_first, out_bytes, 0.0)
    return np.repeat(moved[:, None], n_tiers, axis=1)
