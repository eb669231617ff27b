"""Coverage shapes: the calibration rows a GEMM library model needs, and an add's sizes.

The stratified draw (:mod:`.generator`) fills every (target, regime) cell,
but it leaves whole families of a GEMM library's behaviour out of the
calibration set: a GEMV with B in each tier, a product whose K is a handful
(an outer product that only writes C), a skinny N, the six orders of the same
three dimensions, and square products across every cache. Those are where a
fitted library model goes wrong on shapes it never saw (issue 15), so every
matrix product's calibration sweep also holds this fixed, structured grid:

- ``gemv``: M in 1, 2, 4, 16 rows with B of 64 KiB .. 64 MiB (fp32);
- ``skinny_k``: K in 1, 3, 8, 24 with M x N outputs of 256 KiB .. 64 MiB;
- ``skinny_n``: N in 1, 4, 16 with M x K operands of 1 .. 64 MiB;
- ``permutation``: every order of (16, 512, 4096), (48, 256, 2048) and
  (8, 1536, 3072);
- ``square``: 24, 48, .. 1536 on a side (every tier boundary of a CPU);
- ``tall``: N in 32, 64, 128, 256 with a tall A (M of 8192 to 65536) of
  8 MiB (in a host's last level) and 64 and 96 MiB (beyond it, fp32): the
  library streams a large A once for a modest N, the shape of a batch of
  tokens through a narrow layer.

An elementwise op (``vector_add``) has its own grid, ``stream``
(:func:`stream_shapes`): two sizes per octave from about a thousand to 33
million elements, so that the inside of every tier, not just its edges, has
calibration rows on every host. The stratified draw fills regimes, and on a
host whose adds are bound by the same loop in the L2 and in the L3 it left
the L2 of the AMD EPYC Zen 4 (130-760 KB of fp32 operands) without a row.

A coverage entry carries ``"coverage": KIND``. It is appended after the
validation set is drawn and never holds a validation shape (nor a shape the
draw already put in the calibration set), so adding it moves no other entry.
"""

from __future__ import annotations

from collections.abc import Iterable

#: (rows of A, (K, N) of B): B of 256 x 256 (256 KiB fp32) to 4096 x 4096 (64 MiB).
GEMV_ROWS = (1, 2, 4, 16)
GEMV_B = ((128, 128), (512, 256), (1024, 1024), (2048, 2048), (4096, 4096), (2048, 8192))
#: K of an outer-product-like product, and its (M, N): outputs of 256 KiB to 64 MiB.
SKINNY_K = (1, 3, 8, 24)
SKINNY_K_OUT = ((256, 256), (1024, 512), (2048, 2048), (4096, 4096))
#: N of a skinny-N product, and its (M, K).
SKINNY_N = (1, 4, 16)
SKINNY_N_A = ((512, 512), (2048, 1024), (4096, 4096))
PERMUTED = ((16, 512, 4096), (48, 256, 2048), (8, 1536, 3072))
SQUARE = (24, 48, 96, 192, 384, 768, 1536)
#: N of a tall product, and its (M, K): A of 8 MiB, 64 MiB and 96 MiB (fp32).
TALL_N = (32, 64, 128, 256)
TALL_A = ((8192, 256), (16384, 1024), (65536, 384))
#: Elements of an elementwise op: about 1000 x 2^(j/2), a multiple of 16 (never a
#: power of two, which the drawn sets hold), 992 (12 KB of fp32 operands, the L1)
#: to 32.8 M (393 MB, main memory on every host).
STREAM_HALF_OCTAVES = 31
STREAM_BASE = 1000


def _permutations(dims: tuple[int, int, int]) -> list[tuple[int, int, int]]:
    a, b, c = dims
    return sorted({(a, b, c), (a, c, b), (b, a, c), (b, c, a), (c, a, b), (c, b, a)})


def coverage_shapes() -> list[tuple[tuple[int, int, int], str]]:
    """The (M, K, N) grid and the kind of each shape, without duplicates."""
    out: dict[tuple[int, int, int], str] = {}

    def add(shapes: Iterable[tuple[int, int, int]], kind: str) -> None:
        for shape in shapes:
            out.setdefault(shape, kind)

    add(((m, k, n) for m in GEMV_ROWS for k, n in GEMV_B), "gemv")
    add(((m, k, n) for k in SKINNY_K for m, n in SKINNY_K_OUT), "skinny_k")
    add(((m, k, n) for n in SKINNY_N for m, k in SKINNY_N_A), "skinny_n")
    for dims in PERMUTED:
        add(_permutations(dims), "permutation")
    add(((s, s, s) for s in SQUARE), "square")
    add(((m, k, n) for n in TALL_N for m, k in TALL_A), "tall")
    return sorted(out.items())


def stream_shapes() -> list[tuple[tuple[int], str]]:
    """The elementwise grid: ``(elements,)`` two per octave, and its kind."""
    sizes = {16 * round(STREAM_BASE * 2 ** (j / 2) / 16) for j in range(STREAM_HALF_OCTAVES)}
    return [((n,), "stream") for n in sorted(sizes)]


def grid_for(is_product: bool) -> list[tuple[tuple[int, ...], str]]:
    """The coverage grid of an op: the matrix products' or the elementwise one."""
    return list(coverage_shapes()) if is_product else list(stream_shapes())
