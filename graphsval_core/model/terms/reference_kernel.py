"""The framework's own matrix-product kernel: a product no GEMM library runs.

PyTorch keeps a product out of its GEMM library when it is too small for one
(``library_min_macs``) or when the dtype has none on the target
(``no_gemm_library``: a bf16 product on an x86 CPU without AVX-512, where
oneDNN's bf16 path is off). Its reference kernel (``at::native``'s
``cpublas`` gemm) forms one output element at a time, so it costs a fixed
time per output and a time per multiply-add, with no blocking:

- B stored ``K x N`` (``matmul``): each output walks down a column of B, one
  element per row of B, ``N * bytes`` apart. Where that stride reaches a
  page (:data:`~graphsval_core.datamodel.target.PAGE_BYTES`) every element
  lands on a page of its own, and a walk that spans more than the TLB's
  reach (``tlb_reach_bytes``) misses the TLB on every page it crosses: the
  walk is cyclic (the next output walks the same pages), so an LRU TLB
  keeps none of it. Each miss costs ``page_walk_s``.
- B stored ``N x K`` (``linear``'s weight, ``OpSpec.b_transposed``): each
  output is a dot of two contiguous rows, vectorised, with its own per-output
  set-up and reduction.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from graphsval_core.datamodel.target import PAGE_BYTES

if TYPE_CHECKING:
    from graphsval_core.datamodel.target import TargetSpec


def reference_rows(target: TargetSpec, dtype: str, library: np.ndarray) -> np.ndarray:
    """Per row: whether the spec times the product in the framework's own
    kernel: the library does not run it (``library``, the model's
    ``library_rows``) and the spec gives the kernel's times at ``dtype``."""
    if not target.runs_reference(dtype):
        return np.zeros(library.shape, dtype=bool)
    return ~library


def page_crossings(gemm: np.ndarray, bpe: float) -> np.ndarray:
    """Per row of ``gemm`` (``(n, 3)`` of M, K, N): the share of a column
    walk's elements that land on a new page, ``min(1, N * bpe / PAGE_BYTES)``."""
    return np.minimum(1.0, gemm[:, 2] * bpe / PAGE_BYTES)


def walk_span(gemm: np.ndarray, bpe: float) -> np.ndarray:
    """Per row: the address span, in page-sized steps, that one column walk
    maps through the TLB: ``K`` rows of B, each ``min(N * bpe, PAGE_BYTES)``
    on from the last (a short row shares its page with the next)."""
    return gemm[:, 1] * np.minimum(gemm[:, 2] * bpe, PAGE_BYTES)


def tlb_misses(target: TargetSpec, gemm: np.ndarray, bpe: float) -> np.ndarray:
    """Per row: the TLB misses per multiply-add of a column walk, the
    share of its elements on a new page where the walk spans more than
    the TLB's reach, else 0 (0 everywhere where the spec has no reach)."""
    if target.tlb_reach_bytes is None:
        return np.zeros(gemm.shape[0])
    beyond = walk_span(gemm, bpe) > target.tlb_reach_bytes
    return np.where(beyond, page_crossings(gemm, bpe), 0.0)


def reference_time(
    target: TargetSpec, dtype: str, gemm: np.ndarray, bpe: float, b_transposed: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Per row: the reference kernel's time for the product ``gemm``
    (``(n, 3)`` of M, K, N) at ``dtype``, and the part of it its column walk
    spends on TLB misses: ``M*N`` outputs at the layout's time per output
    plus ``M*K*N`` multiply-adds at its time per multiply-add, and for a
    column walk (``b_transposed`` False) ``M*K*N * misses * page_walk_s``
    (0 for a dot, or where the spec gives no TLB). Zeros where the spec does
    not time the kernel."""
    n = gemm.shape[0]
    if not target.runs_reference(dtype):
        return np.zeros(n), np.zeros(n)
    outputs = gemm[:, 0] * gemm[:, 2]
    macs = outputs * gemm[:, 1]
    if b_transposed:
        per_output = target.reference_dot_output_s[dtype]
        return outputs * per_output + macs * target.reference_dot_mac_s[dtype], np.zeros(n)
    tlb = np.zeros(n)
    if target.page_walk_s is not None:
        tlb = macs * tlb_misses(target, gemm, bpe) * target.page_walk_s
    own = outputs * target.reference_output_s[dtype] + macs * target.reference_mac_s[dtype]
    return own + tlb, tlb
