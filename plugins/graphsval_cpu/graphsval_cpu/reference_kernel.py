"""PyTorch's own product kernel: where a dtype has no GEMM library, and
for the products too small for the library it has.

PyTorch hands a bf16 product to oneDNN only where oneDNN's bf16 path runs
(``mkldnn_bf16_device_check``: AVX-512 BW, VL and DQ, or AMX). Elsewhere (an
AMD Zen 3 or an Intel client core with AVX2 only) every bf16 product runs in
``at::native``'s reference ``cpublas`` gemm; where it runs, a product of at
most ``library_min_macs`` multiply-adds still does. The kernel forms one
output element at a time:
``matmul`` walks down a column of B per output (scalar conversions, one
element per row of B), ``linear`` forms each output as a vectorised dot of
two contiguous rows. What each costs is estimated here in cycles and
calibrated per target from its rows; the TLB's reach, which the column walk
outgrows on a wide B, is read from ``/proc/cpuinfo`` where the kernel prints
it (AMD's ``TLB size``).
"""

from __future__ import annotations

from collections.abc import Iterable

from graphsval_core.plugin_api import PAGE_BYTES, Sourced, detected, estimated

#: The ISA flags oneDNN's bf16 path needs (PyTorch's ``mkldnn_bf16_device_check``);
#: AMX (``amx_bf16``) is the other way in.
ONEDNN_BF16_FLAGS = frozenset({"avx512bw", "avx512vl", "avx512dq"})

#: Cycles the reference kernel spends per output and per multiply-add, by layout:
#: a column walk converts each bf16 pair to fp32 one element at a time (about
#: two cycles a multiply-add) and sets up and stores each output (a few tens of
#: cycles); a dot of contiguous rows converts and multiplies 8 lanes at a time
#: (well under a cycle a multiply-add) but sets up its vector accumulators and
#: reduces them across lanes for every output (about a hundred cycles).
CYCLES = {
    "reference_output_s": (18.0, "sets up, reduces and stores each output of its column walk"),
    "reference_mac_s": (2.0, "converts each bf16 pair of its column walk to fp32 and multiplies"),
    "reference_dot_output_s": (90.0, "sets up its vector dot and reduces it across lanes"),
    "reference_dot_mac_s": (0.6, "converts and multiplies 8 lanes of a contiguous dot at a time"),
}
#: The same cycles on a CPU with AVX-512 (whose bf16 goes to oneDNN: the reference
#: kernel runs only its products too small for oneDNN there), with where each comes
#: from: measured on the Zen 4 VM (``benchmarks/bench_reference_kernel.py``, four
#: runs; cycles of the 2.6 GHz ``/proc/cpuinfo`` gives, not of the clock under
#: load): a column walk 2.3-2.9 ns an output and 0.3-0.75 ns a multiply-add, a dot
#: 16.0-18.3 ns an output; a dot's time per multiply-add is too small for those
#: shapes to tell (-0.3 to 0.6 ns), so it keeps the Zen 3's fitted 0.19 ns.
_BENCH = (
    "measured on the Zen 4 VM, benchmarks/bench_reference_kernel.py: the products of at most "
    "library_min_macs multiply-adds that oneDNN never sees"
)
SMALL_PRODUCT_CYCLES = {
    "reference_output_s": (
        7.0,
        "sets up, reduces and stores each output of its column walk",
        _BENCH,
    ),
    "reference_mac_s": (
        1.7,
        "converts each pair of its column walk to fp32 and multiplies",
        _BENCH,
    ),
    "reference_dot_output_s": (
        44.0,
        "sets up its vector dot and reduces it across lanes",
        _BENCH,
    ),
    "reference_dot_mac_s": (
        0.5,
        "converts and multiplies the lanes of a contiguous dot",
        "the Zen 3 host's fitted 0.19 ns: the Zen 4 VM's bench cannot resolve it on "
        "products of at most library_min_macs (-0.3 to 0.6 ns)",
    ),
}
#: An Intel CPU's column walk, as a share of :data:`SMALL_PRODUCT_CYCLES`': the
#: Intel host's bf16 matmul 16x16x16 takes 3.3 us (``library_min_macs``'
#: provenance), 2.1 us beyond its launch, where the Zen 4's cycles give 3.4 us.
#: Its dot agrees with the Zen 4's (its calibration row 112x2x18: 37.8 us, about
#: 17.5 ns an output beyond the launch).
INTEL_WALK_SHARE = 0.63
_INTEL_WALK = (
    "the Zen 4 VM's cycles (benchmarks/bench_reference_kernel.py) times "
    f"{INTEL_WALK_SHARE:g}: the Intel host's bf16 matmul 16x16x16 takes 3.3 us, 2.1 us "
    "beyond its launch, where they give 3.4"
)


#: A second-level TLB miss the column walk's loads cannot overlap: a page walk
#: that finds the page tables in the caches, partly hidden by the next loads.
PAGE_WALK_CYCLES = 12.0
#: Second-level TLB entries of 4 KiB pages where ``/proc/cpuinfo`` gives none
#: (Intel's kernels print no ``TLB size``: Skylake to Ice Lake server cores have 1536).
DEFAULT_TLB_PAGES = 1536


def no_gemm_library(dtypes: Iterable[str], flags: frozenset[str]) -> tuple[str, ...]:
    """The dtypes whose every product runs in PyTorch's own kernel on a CPU
    with these ISA ``flags``: bf16 where oneDNN's bf16 path does not run."""
    if "bf16" not in dtypes or flags >= ONEDNN_BF16_FLAGS or "amx_bf16" in flags:
        return ()
    return ("bf16",)


def times(
    dtypes: Iterable[str], clock_hz: float, small: Iterable[str] = (), vendor: str = ""
) -> dict[str, dict[str, Sourced]]:
    """The reference kernel's four times (per output and per multiply-add,
    by layout) for each of ``dtypes`` (no GEMM library: :data:`CYCLES`) and
    of ``small`` (a library that leaves its smallest products to the kernel,
    ``library_min_macs``: :data:`SMALL_PRODUCT_CYCLES`, a column walk at
    :data:`INTEL_WALK_SHARE` of them on any CPU but an AMD one, as the Intel
    host), at ``clock_hz``. A dtype in both is a caller's error."""
    dtypes, small = list(dtypes), list(small)
    if set(dtypes) & set(small):
        raise ValueError(f"{sorted(set(dtypes) & set(small))}: no library and a small one at once")
    out: dict[str, dict[str, Sourced]] = {name: {} for name in CYCLES}

    def put(name: str, dtype: str, cycles: float, what: str, where: str = "") -> None:
        source = (
            f"about {cycles:.2g} cycles at {clock_hz / 1e9:.3g} GHz: PyTorch's reference "
            f"{dtype} gemm {what}"
        )
        out[name][dtype] = estimated(cycles / clock_hz, f"{source} ({where})" if where else source)

    for dtype in dtypes:
        for name, (cycles, what) in CYCLES.items():
            put(name, dtype, cycles, what)
    intel = vendor != "AuthenticAMD"  # as the library's terms: every CPU but an AMD one
    for dtype in small:
        for name, (cycles, what, where) in SMALL_PRODUCT_CYCLES.items():
            if intel and name in ("reference_output_s", "reference_mac_s"):
                cycles, where = cycles * INTEL_WALK_SHARE, _INTEL_WALK
            put(name, dtype, cycles, what, where)
    return out


def tlb(tlb_pages: int | None, clock_hz: float) -> tuple[Sourced, Sourced]:
    """``(tlb_reach_bytes, page_walk_s)``: the second-level TLB's entries
    (``/proc/cpuinfo``'s ``TLB size`` where given) times a 4 KiB page, and
    :data:`PAGE_WALK_CYCLES` at ``clock_hz``."""
    if tlb_pages:
        reach = detected(tlb_pages * PAGE_BYTES, f"/proc/cpuinfo TLB size: {tlb_pages} 4K pages")
    else:
        reach = estimated(
            DEFAULT_TLB_PAGES * PAGE_BYTES,
            f"{DEFAULT_TLB_PAGES} second-level TLB entries of 4 KiB pages (a server core's; "
            "/proc/cpuinfo gives no TLB size)",
        )
    walk = estimated(
        PAGE_WALK_CYCLES / clock_hz,
        f"about {PAGE_WALK_CYCLES:g} cycles at {clock_hz / 1e9:.3g} GHz: a page walk that "
        "finds the page tables in the caches, partly overlapped",
    )
    return reach, walk
