"""What PyTorch's CPU path costs around the arithmetic, for every CPU spec.

These are properties of the software stack (PyTorch's dispatcher, its
OpenMP thread team, the GEMM library under ``torch.mm``) rather than of the
chip; each is estimated here and calibrated per target from its rows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from graphsval_core.plugin_api import Sourced, datasheet, estimated, first_touch_threshold

#: PyTorch's at::internal::GRAIN_SIZE: an op with fewer elements (here: ops)
#: runs on the calling thread alone.
GRAIN_OPS = 32768


def dispatch() -> Sourced:
    """One PyTorch CPU operator call, dispatcher to return."""
    return estimated(2e-6, "PyTorch CPU operator dispatch, about 2 us")


def fork_join(threads: int) -> Sourced:
    """Waking the OpenMP team for a parallel region and joining it again."""
    return estimated(3e-6, f"waking and joining an OpenMP team of {threads} threads, a few us")


#: The dtypes whose products PyTorch's CPU path hands to MKL (the others go to
#: oneDNN, or to PyTorch's own kernel).
MKL_DTYPES = ("fp32",)


def _mkl_estimates(
    dtypes: Iterable[str], value: float, source: Callable[[str], str]
) -> dict[str, Sourced]:
    """``value``, estimated from ``source(dtype)``, for each of ``dtypes``
    MKL runs (:data:`MKL_DTYPES`)."""
    return {dtype: estimated(value, source(dtype)) for dtype in dtypes if dtype in MKL_DTYPES}


def gemv_fork_join(dtypes: Iterable[str], threads: int) -> dict[str, Sourced]:
    """Waking and joining the threads of MKL's level-2 path, for each of
    ``dtypes`` MKL runs (a product with M or N of 1: MKL's sgemm hands it to
    sgemv, which runs a parallel region of its own); oneDNN's GEMVs (bf16,
    int8) keep the team's cost."""
    return _mkl_estimates(
        dtypes,
        3e-6,
        lambda dtype: (
            f"MKL's {dtype} GEMV path wakes and joins its {threads} threads in a parallel "
            "region of its own: as the OpenMP team, a few us"
        ),
    )


def gemv_fraction(
    dtypes: Iterable[str], flags: Iterable[str], *, vendor: str
) -> dict[str, Sourced]:
    """The share of each tier's bandwidth beyond the L1 at which MKL's
    level-2 path streams its matrix on an AMD CPU with AVX2, for each of
    ``dtypes`` MKL runs: a GEMV (M or N of 1), and a product of fewer rows of
    A than MKL packs from, which it runs as one GEMV per row of A (on the
    Zen 3 and Zen 4 hosts 2 x 4096 x 4096 takes 1.95-2.15 times 1 x 4096 x
    4096, whatever the layout). sgemv packs nothing and reads the matrix
    front to back, as a stream's prefetchers follow it (estimated at the
    whole effective bandwidth until calibrated; the Zen 3's fit gives 0.75,
    the Zen 4's 0.49, against the products' 0.29 and 0.24). Not on Intel's
    CPUs, whose MKL reads a two-row linear's weight once (2 x 4096 x 4096 in
    3034 us against 2995 for one row: the Intel host's refit with it loses
    on validation), nor for oneDNN's bf16 and int8."""
    if vendor != "AuthenticAMD" or "avx2" not in set(flags):
        return {}
    return _mkl_estimates(
        dtypes,
        1.0,
        lambda dtype: (
            f"MKL's {dtype} GEMV (sgemv) on an AMD CPU reads its matrix once as it lies, "
            "packing nothing, and a product of too few rows of A to pack runs one GEMV per "
            "row: at a stream's rate from the tiers beyond the L1, not a micro-kernel's share"
        ),
    )


def grain() -> Sourced:
    """The work below which PyTorch keeps an op on one thread."""
    return estimated(
        GRAIN_OPS,
        f"PyTorch's at::internal::GRAIN_SIZE ({GRAIN_OPS}): a smaller op runs on one thread",
    )


#: The dtypes whose products go through oneDNN (its reorders) rather than MKL.
ONEDNN_DTYPES = ("bf16", "int8")


#: 32-bit accumulators in one AVX-512 register (or one row of an AMX tile).
AVX512_LANES = 16
#: The columns one row of MKL's sgemm micro-kernel covers where its shape
#: is taken as known: 16 fp32 accumulators, two ymm registers on AVX2 (the
#: 6 x 16 shape of the Haswell-class kernels, BLIS's among them) or one zmm.
MKL_COLUMNS = 16


def accumulator_lanes(
    dtypes: Iterable[str], flags: Iterable[str], *, vendor: str
) -> dict[str, Sourced]:
    """The output columns one row of each dtype's GEMM-library micro-kernel
    covers, for the kernels whose shape is known here:

    - oneDNN's bf16 and int8 on a CPU with AVX-512 (or AMX): its kernels
      (the brgemm matmul for bf16; for int8, ``torch._int_mm``, its s8 GEMM)
      broadcast each row of A against 16-lane vectors of B's columns (fp32 or
      int32 accumulators in a zmm register; an AMX tile row holds as many),
      so they pad C's N to a multiple of 16 and take any number of rows (the
      s8 GEMM covers the tail in pieces where :func:`tail_piece_vectors`
      says so);
    - MKL's fp32 on a CPU with AVX2 and FMA: a row of C in 16 fp32
      accumulators (two ymm registers; on an AMD CPU with AVX-512, the Zen
      4, one zmm holds as many), 16 columns.

    An Intel CPU with AVX-512 (or a CPU whose ``vendor`` is neither Intel's
    nor AMD's, with AVX-512) gets none for fp32: MKL runs its own AVX-512
    kernels there, whose shape nothing here has measured, and 16 columns
    lost on the Intel host's fp32 linear; nor do oneDNN's AVX2 kernels."""
    flags = set(flags)
    out = {}
    for dtype in dtypes:
        if dtype in ONEDNN_DTYPES and "avx512f" in flags:
            kernels = "brgemm bf16" if dtype == "bf16" else f"{dtype} (torch._int_mm's s8 GEMM)"
            out[dtype] = datasheet(
                AVX512_LANES,
                f"oneDNN's {kernels} kernels on AVX-512/AMX: each row of A broadcast "
                "against 16-lane vectors of B's columns (32-bit accumulators in a zmm register "
                "or an AMX tile row), so C's N is padded to a multiple of 16 and M is not",
            )
        elif dtype in MKL_DTYPES and {"avx2", "fma"} <= flags:
            if "avx512f" in flags and vendor != "AuthenticAMD":
                continue
            out[dtype] = estimated(
                MKL_COLUMNS,
                f"MKL's {dtype} sgemm micro-kernel on AVX2 (or a Zen 4's AVX-512): each row "
                "of C in 16 fp32 accumulators (two ymm registers, as the 6 x 16 Haswell-class "
                "kernels; one zmm), 16 columns; its M blocking (6 rows) is not modelled",
            )
    return out


#: The dtypes whose library covers N's tail in power-of-two pieces on a CPU
#: with AVX-512 VNNI and no AMX: ``torch._int_mm`` runs oneDNN's s8 GEMM
#: (``gemm_api`` in ONEDNN_VERBOSE, not a brgemm matmul).
PIECED_DTYPES = ("int8",)


def tail_piece_vectors(dtypes: Iterable[str], flags: Iterable[str]) -> dict[str, Sourced]:
    """For each dtype whose GEMM library covers the columns of N beyond its
    whole 16-lane vectors in power-of-two pieces (8, 4, 2, 1), the vectors
    one piece costs: int8 on a CPU with AVX-512 VNNI and no AMX (the Zen 4),
    where ``torch._int_mm`` runs oneDNN's s8 GEMM. Measured there
    (``benchmarks/bench_narrow_n.py --dtype int8``, one thread, 2048 x 512
    and 8192 x 256): N = 4, 8 and 16 take one vector's time; N = 5, 6, 10,
    12 what 32 takes; N = 7, 14, 28 what 48 takes; N = 15 and 31 more: each
    vector after the first, a whole one or a piece, costs the same. One
    piece, one vector is the estimate (an AMX CPU's int8 runs other kernels,
    unmeasured here)."""
    flags = set(flags)
    if not {"avx512f", "avx512_vnni"} <= flags or "amx_int8" in flags:
        return {}  # the pieces are of the 16 lanes accumulator_lanes gives on AVX-512
    return {
        dtype: estimated(
            1.0,
            "oneDNN's s8 GEMM under torch._int_mm on AVX-512 VNNI covers the columns of N "
            "beyond its 16-lane vectors in power-of-two pieces (8, 4, 2, 1), each a kernel of "
            "its own: on the Zen 4 host N = 4, 8, 16 take one vector's time, N = 5 what 32 "
            "takes, N = 7 what 48 takes (bench_narrow_n.py); one vector a piece",
        )
        for dtype in dtypes
        if dtype in PIECED_DTYPES
    }


#: The dtypes whose GEMM library stores C no cheaper than a product that
#: accumulates on an AMD CPU (the Zen 4 and the Zen 3 measured): MKL's sgemm,
#: which runs its AVX2 kernels there.
REREAD_DTYPES = ("fp32",)


#: The most columns of N MKL's fp32 product runs in its narrow kernel
#: (``benchmarks/bench_narrow_n.py`` on the Zen 3 host, one thread, 2048 x 512
#: and 256 x 256: a matmul of 2 to 11 columns takes 1.8 to 3.8 times what 16
#: take, one of 12 1.35 to 1.5 times, as the lane kernel's vectors and pieces).
MKL_NARROW_COLUMNS = 11
#: The narrow kernel's share of the compute rate the model starts from: the
#: bench's matmuls of 2 to 11 columns take a median 2.7 times what 16 take, and
#: the kernel computes them as 11 columns: 11 / (16 x 2.7).
MKL_NARROW_SHARE = 0.25
#: The most columns of N MKL's fp32 linear (a transposed B, the weight N x K)
#: runs in its own narrow kernel on an AMD CPU: every N below its lane
#: kernel's 16 (``bench_narrow_n.py`` on the Zen 3 host, 2048 x 512, 512 x
#: 4096, 8192 x 128 and 256 x 1024: N of 2 to 15 cost 0.24 to 3.0 times what
#: 16 take, going with N, not with the lanes).
MKL_LINEAR_NARROW_COLUMNS = 15
#: The weight's rows that kernel takes a pass (dot products along K): N of 4,
#: 8 and 12 cost the same per column (72 to 110 ps a multiply-add in one hour
#: of the VM, 126 to 141 in a slower one), N of 2 and 3 0.75 to 1.7 times what
#: 4 costs, so its time goes with N rounded up to 4; with A anywhere from the L3 to main
#: memory (``bench_narrow_n.py --tiers``), as it streams A under its compute.
MKL_LINEAR_NARROW_GROUP = 4
#: Its share of the compute rate the model starts from: 85 ps a multiply-add
#: (the bench's median at N = 4, 8 and 12) against the 25.5 ps of the Zen 3
#: host's peak (16 a cycle at 2.45 GHz): 0.3.
MKL_LINEAR_NARROW_SHARE = 0.3


def _narrow_mkl(vendor: str, flags: set[str]) -> bool:
    """Whether MKL's fp32 runs a narrow N in a narrow kernel of each layout
    of B on this CPU: on an AMD CPU with AVX2
    (its AVX2 path, the Zen 3 and Zen 4 alike), a matmul's (a row of C a
    step of K) and a linear's (dot products along K, four of the weight's
    rows a pass: :func:`transposed_narrow_n_group`). Not on Intel's CPUs:
    the Intel host's calibration products of 4 and 8 columns take 1.6 to
    2.5 times the model's in either layout, but its refit with the kernel in
    both layouts moved constants its rows do not identify and lost on
    validation (linear 12.4% -> 14.5%, docs/model-fidelity.md, session 60)."""
    if not {"avx2", "fma"} <= flags:
        return False
    return vendor == "AuthenticAMD"


def _narrow_estimates(
    dtypes: Iterable[str],
    flags: Iterable[str],
    vendor: str,
    value: float,
    source: Callable[[str], str],
) -> dict[str, Sourced]:
    """``value``, estimated from ``source(dtype)``, for each of ``dtypes``
    MKL runs, on a CPU where it has narrow kernels (:func:`_narrow_mkl`);
    none elsewhere."""
    if not _narrow_mkl(vendor, set(flags)):
        return {}
    return _mkl_estimates(dtypes, value, source)


def narrow_n_columns(
    dtypes: Iterable[str], flags: Iterable[str], *, vendor: str, transposed: bool = False
) -> dict[str, Sourced]:
    """The most columns of N (from 2) for which MKL runs a product of each of
    ``dtypes`` it runs in its narrow kernel, per layout of B (``transposed``:
    a linear's weight; :func:`_narrow_mkl` says where): 11 columns for a
    matmul, 15 for a linear, measured on the Zen 3 host
    (:data:`MKL_NARROW_COLUMNS`, :data:`MKL_LINEAR_NARROW_COLUMNS`)."""
    if transposed:
        return _narrow_estimates(
            dtypes,
            flags,
            vendor,
            MKL_LINEAR_NARROW_COLUMNS,
            lambda dtype: (
                f"MKL's {dtype} linear (the weight N x K) of 2 to {MKL_LINEAR_NARROW_COLUMNS} "
                "columns runs in a narrow kernel of dot products, not its lane micro-kernel: "
                "on the Zen 3 host (bench_narrow_n.py, one thread, four shapes of A) they "
                "take 0.24 to 3.0 times what 16 take, their time going with N"
            ),
        )
    return _narrow_estimates(
        dtypes,
        flags,
        vendor,
        MKL_NARROW_COLUMNS,
        lambda dtype: (
            f"MKL's {dtype} matmul (a row-major B) of 2 to {MKL_NARROW_COLUMNS} columns runs "
            "in a narrow kernel, not its lane micro-kernel: on the Zen 3 host "
            "(bench_narrow_n.py, one thread) matmuls of 2 to 11 columns take 1.8 to 3.8 times "
            "what 16 take, 12 columns 1.35 to 1.5 times"
        ),
    )


def narrow_n_fraction(
    dtypes: Iterable[str], flags: Iterable[str], *, vendor: str
) -> dict[str, Sourced]:
    """The share of the compute rate MKL's narrow matmul kernel reaches, for
    each of ``dtypes`` with one (:func:`narrow_n_columns`):
    :data:`MKL_NARROW_SHARE`, from the Zen 3 bench, until calibrated (the
    kernel computes a row of C a step of K, every N as its 11 columns); a
    linear's kernel has its own (:func:`transposed_narrow_n_fraction`)."""
    return _narrow_estimates(
        dtypes,
        flags,
        vendor,
        MKL_NARROW_SHARE,
        lambda dtype: (
            f"MKL's {dtype} narrow kernel: on the Zen 3 host (bench_narrow_n.py, one thread, "
            "2048 x 512) matmuls of 2 to 11 columns take a median 2.7 times what 16 take, "
            "about a dependent multiply-add's latency per row of C and step of K; computed "
            "as 11 columns, 11 / (16 x 2.7) of the rate"
        ),
    )


def transposed_narrow_n_group(
    dtypes: Iterable[str], flags: Iterable[str], *, vendor: str
) -> dict[str, Sourced]:
    """The weight's rows MKL's narrow linear kernel takes a pass, for each of
    ``dtypes`` with one (:func:`narrow_n_columns`, transposed): its time
    goes with N rounded up to :data:`MKL_LINEAR_NARROW_GROUP`."""
    return _narrow_estimates(
        dtypes,
        flags,
        vendor,
        MKL_LINEAR_NARROW_GROUP,
        lambda dtype: (
            f"MKL's {dtype} narrow linear on the Zen 3 host (bench_narrow_n.py, one thread, "
            "2048 x 512, 512 x 4096, 8192 x 128, 256 x 1024): N of 4, 8 and 12 cost the same "
            "per column, 72 to 110 ps a multiply-add, N of 2 and 3 0.75 to 1.7 times what 4 "
            "costs, and "
            "the same with A in the L3 as in main memory (--tiers): dot products along K, "
            "four of the weight's rows a pass, streaming A under their compute; on the Zen 4 "
            "(--tiers) each pass reads A anew, about 8 GB/s from main memory"
        ),
    )


def transposed_narrow_n_fraction(
    dtypes: Iterable[str], flags: Iterable[str], *, vendor: str
) -> dict[str, Sourced]:
    """The share of the compute rate MKL's narrow linear kernel reaches, for
    each of ``dtypes`` with one: :data:`MKL_LINEAR_NARROW_SHARE`, from the
    Zen 3 bench, until calibrated."""
    return _narrow_estimates(
        dtypes,
        flags,
        vendor,
        MKL_LINEAR_NARROW_SHARE,
        lambda dtype: (
            f"MKL's {dtype} narrow linear on the Zen 3 host (bench_narrow_n.py, one thread): "
            "85 ps a multiply-add (the median at N = 4, 8 and 12 over four shapes of A) "
            "against the peak's 25.5 ps (16 a cycle at 2.45 GHz)"
        ),
    )


def product_output_passes(
    dtypes: Iterable[str], flags: Iterable[str], *, vendor: str
) -> dict[str, Sourced]:
    """For each dtype whose GEMM library stores C no cheaper than a product
    that accumulates onto it, even when the product does not accumulate
    (``beta = 0``), the passes of C: two, as the model counts ``linear``'s
    (the bias broadcast into C, then the product onto it). MKL's fp32 on an
    AMD CPU (its AVX2 kernels, or AVX-512's), measured at one thread on one
    Zen 4 VM (session 56) and one Zen 3 VM (session 57)
    (``benchmarks/bench_output_passes.py``, the allocator held to the heap):
    ``matmul`` takes what ``linear`` onto its bias takes where C's traffic is
    most of it (matmul / linear 0.98-1.17 on the Zen 4, 0.72-1.05 on the
    Zen 3, for K of 2-32), and ``torch.mm`` into one C (``beta = 0``) 1.3-1.7
    times what ``addmm_`` into it takes (``beta = 1``, which must read C); on
    the Zen 4 held to AVX2 as well. Its GEMV and its rank-1 update (M, N or
    K of 1) store C whole (2048 x 1 x 2048: 0.41-0.57 of ``linear`` on the
    Zen 4), and the model spares them. Not on Intel's CPUs (the Intel host's
    0.47-0.72), nor for oneDNN's bf16 (0.37-0.59 on the Zen 4). An earlier
    reading of 0.62 for the Zen 3 (session 51) came from captured rows whose
    C was mapped afresh in some and not in others. Other AMD cores with AVX2
    (Zen 1, Zen 2, Zen 5) get the same until measured."""
    flags = set(flags)
    if vendor != "AuthenticAMD" or "avx2" not in flags:
        return {}
    return {
        dtype: estimated(
            2.0,
            "MKL's fp32 sgemm on an AMD CPU (measured at one thread on one Zen 4 VM and one "
            "Zen 3 VM) stores C no cheaper than a product that accumulates onto it: matmul "
            "(beta = 0) takes what linear onto its bias takes where C's traffic is most of it "
            "(0.98-1.17 on the Zen 4, 0.72-1.05 on the Zen 3), and mm into one C 1.3-1.7 times "
            "what addmm_ into it (beta = 1) takes (bench_output_passes.py); its GEMV and "
            "rank-1 update (M, N or K of 1) store C whole; oneDNN's bf16 and the Intel host's "
            "MKL store C whole too",
        )
        for dtype in dtypes
        if dtype in REREAD_DTYPES
    }


#: PyTorch hands a bf16 or fp16 product to oneDNN only above this many
#: multiply-adds (aten/src/ATen/native/mkldnn/Matmul.cpp, ``checksize``:
#: ``mkldnn_gemm_min_size = 16 * 16 * 16``); a smaller one runs in its own
#: reference kernel. An int8 product (``torch._int_mm``) has no such threshold.
LIBRARY_MIN_MACS = 16 * 16 * 16
#: The dtypes whose products skip oneDNN below :data:`LIBRARY_MIN_MACS`.
SIZED_DTYPES = ("bf16", "fp16")


def library_min_macs(dtypes: Iterable[str]) -> dict[str, Sourced]:
    """At or below how many multiply-adds each dtype's product stays out of
    its GEMM library (only the dtypes that have such a size)."""
    return {
        dtype: datasheet(
            LIBRARY_MIN_MACS,
            f"PyTorch's mkldnn_gemm_min_size (aten/src/ATen/native/mkldnn/Matmul.cpp): a "
            f"{dtype} product of at most 16x16x16 multiply-adds never goes to oneDNN, it "
            "runs in PyTorch's own kernel (the Intel host, torch 2.13: bf16 matmul 16x16x16 "
            "3.3 us, 16x16x17 18.4 us)",
        )
        for dtype in dtypes
        if dtype in SIZED_DTYPES
    }


def pack_rate(dtypes: Iterable[str]) -> dict[str, Sourced]:
    """The rate at which each dtype's GEMM library copies B into its layout."""
    out = {}
    for dtype in dtypes:
        if dtype in ONEDNN_DTYPES:
            out[dtype] = estimated(
                10e9,
                f"oneDNN reorders a {dtype} B into its blocked (VNNI/AMX) layout on every "
                "call: a read and a strided write of B with a format change, about 10 GB/s",
            )
        else:
            out[dtype] = estimated(
                20e9,
                f"MKL packs a {dtype} B into panels on every call: a read and a write of B, "
                "about 20 GB/s (a copy's rate)",
            )
    return out


def pack_min_rows(dtypes: Iterable[str]) -> dict[str, Sourced]:
    """From how many rows of A each dtype's GEMM library packs B."""
    out = {}
    for dtype in dtypes:
        if dtype in ONEDNN_DTYPES:
            out[dtype] = estimated(
                1,
                f"oneDNN reorders a {dtype} B for every call, a GEMV's included (a {dtype} "
                "GEMV takes as long for 1 row as for 16)",
            )
        else:
            out[dtype] = estimated(
                3,
                "MKL streams B unpacked through GEMV-like kernels for one or two rows of A "
                "and packs it from a few rows on",
            )
    return out


#: From how many rows of A MKL's fp32 linear packs its transposed weight (the
#: weight N x K, each row K-contiguous) on an Intel CPU with AVX-512, and how
#: many rows of A its unpacked kernel takes a pass over the weight below that.
#: The Intel host's calibration rows (one thread; time per byte of weight over
#: one pass's): linears of 4 rows take 1.97-2.14 times 2 rows', of 7 rows 2.84
#: times 3 rows', of 8 rows 2.78 times 2 rows', of 10 rows 3.92 times 3 rows':
#: ceil(M / 3) passes; those of 16 rows pack (3.5-5.3 times, not 6). So a
#: threshold above 10 and at most 16: 12, a dozen (no calibration row has 11)
#: (docs/model-fidelity.md, session 59, and session 67's refit with them).
MKL_TRANSPOSED_PACK_MIN_ROWS = 12
MKL_TRANSPOSED_PASS_ROWS = 3


def _avx512_mkl(vendor: str, flags: set[str]) -> bool:
    """Whether MKL runs its AVX-512 path on this CPU, which the Intel host's
    rows show reading B its own ways (:func:`transposed_pass_rows`,
    :func:`pack_read_overlap`): an Intel CPU with AVX-512. Not an AMD CPU,
    whose MKL takes its AVX2 path and runs a product of too few rows to pack
    as a GEMV per row (:func:`gemv_fraction`), nor an Intel CPU with AVX2
    alone: the i7-12700K's 18 linears (20 threads) lose with the passes,
    grouped CV 10.5% -> 11.3%, and its matmuls with the packing read
    (session 47: grouped CV 3.9% -> 5.0%)."""
    return vendor == "GenuineIntel" and "avx512f" in flags


def transposed_pack_min_rows(
    dtypes: Iterable[str], flags: Iterable[str], *, vendor: str
) -> dict[str, Sourced]:
    """From how many rows of A MKL packs a linear's weight, for each of
    ``dtypes`` it runs, where its unpacked kernel takes passes
    (:func:`_avx512_mkl`): :data:`MKL_TRANSPOSED_PACK_MIN_ROWS`."""
    if not _avx512_mkl(vendor, set(flags)):
        return {}
    return _mkl_estimates(
        dtypes,
        MKL_TRANSPOSED_PACK_MIN_ROWS,
        lambda dtype: (
            f"MKL's {dtype} linear (the weight N x K) on an Intel CPU with AVX-512 packs the "
            "weight only from about a dozen rows of A: the Intel host's calibration linears "
            "of 16 rows take 3.5-5.3 times 2 rows' time per byte of weight, those of 10 rows "
            f"3.9 times 3 rows' (passes of {MKL_TRANSPOSED_PASS_ROWS}): above 10 and at "
            "most 16"
        ),
    )


def transposed_pass_rows(
    dtypes: Iterable[str], flags: Iterable[str], *, vendor: str
) -> dict[str, Sourced]:
    """How many rows of A MKL's unpacked linear kernel takes a pass over the
    weight, below :func:`transposed_pack_min_rows`:
    :data:`MKL_TRANSPOSED_PASS_ROWS`."""
    if not _avx512_mkl(vendor, set(flags)):
        return {}
    return _mkl_estimates(
        dtypes,
        MKL_TRANSPOSED_PASS_ROWS,
        lambda dtype: (
            f"MKL's {dtype} linear on an Intel CPU with AVX-512 reads an unpacked weight once "
            f"per {MKL_TRANSPOSED_PASS_ROWS} rows of A: the Intel host's calibration linears of "
            "4, 7, 8 and 10 rows take 2.0-2.1, 2.8, 2.8 and 3.9 times one pass's time per "
            "byte of weight (ceil(M / 3) passes)"
        ),
    )


def pack_read_overlap(
    dtypes: Iterable[str], flags: Iterable[str], *, vendor: str
) -> dict[str, Sourced]:
    """The share of its packing copy's read of a matmul's B (row-major) that
    MKL does within its kernel's own stream where the caches hold B, for each
    of ``dtypes`` it runs on its AVX-512 path (:func:`_avx512_mkl`): all of it."""
    if not _avx512_mkl(vendor, set(flags)):
        return {}
    return _mkl_estimates(
        dtypes,
        1.0,
        lambda dtype: (
            f"MKL's {dtype} matmul on an Intel CPU with AVX-512 packs a B the caches hold as "
            "its kernel streams it: the Intel host's calibration matmuls of 4 to 48 rows of A "
            "and a B of 2-19 MB take about one stream of B (4x2048x2048 714 us against 607 us "
            "for the GEMV 1x2048x2048), their linear twins, packed in a pass of their own, "
            "1.4-2.1 times as long"
        ),
    )


#: The most rows of A for which oneDNN reads a bf16 linear's weight (a
#: transposed B, each row K contiguous elements) in place once it outgrows
#: the caches: on both host kinds such linears of 2-21 rows take about the
#: weight's memory time alone (2x2048x8192: 2.27 ms on both, against 4.95 ms
#: on the Zen 4 and 3.59 ms on the Intel Xeon as matmul, which reorders an
#: N-contiguous B). A probe on the Zen 4 host (bf16, 4096 x 4096 weight, one
#: thread, 3 rounds) finds linear still 31%, 26%, 24% and 22% faster than
#: matmul at 24, 32, 40 and 48 rows and 14% at 64, with no step between:
#: the bound is 64, an estimate.
IN_PLACE_MAX_ROWS = 64


def in_place_max_rows(dtypes: Iterable[str]) -> dict[str, Sourced]:
    """For which dtypes, and up to how many rows of A, the GEMM library reads
    a transposed B beyond the caches in place instead of packing it: oneDNN's
    bf16 (its int8 has no linear to show it)."""
    return {
        d: estimated(
            IN_PLACE_MAX_ROWS,
            f"oneDNN reads a {d} linear's weight (K-contiguous rows) in place for up to "
            f"{IN_PLACE_MAX_ROWS} rows of A once it outgrows the caches: the hosts' linears of "
            "2-21 rows take about the weight's memory time alone, while matmul's same shapes "
            "pay the reorder",
        )
        for d in dtypes
        if d == "bf16"
    }


#: What oneDNN's bf16 call costs beyond its dispatch when the product
#: accumulates onto C (``beta = 1``: linear onto the bias it broadcast; the
#: call carries a sum post-op): ``python benchmarks/bench_linear_call.py``
#: on the Zen 4 VM (torch 2.13, one thread) times a small bf16 linear with
#: its bias 2.5-4.7 us above one without and an fp32 one 0.7-1.7 us, the
#: broadcast alone the same in both dtypes (2.3-2.9 us), and
#: the shipped captures put small bf16 linears 3.7-4.6 us (Zen 4) and
#: 4.8-6.1 us (Intel host) above matmuls of the same shape, where an fp32
#: linear (MKL's sgemm takes beta as it comes) costs one framework launch
#: more, about 1.2 us. An estimate, which calibrate fits.
ACCUMULATE_OVERHEAD_S = 3e-6
#: The dtypes whose library call costs more when it accumulates (oneDNN's
#: bf16; its int8 has no linear to show it, MKL's fp32 does not).
ACCUMULATE_DTYPES = ("bf16",)


def accumulate_overhead(dtypes: Iterable[str]) -> dict[str, Sourced]:
    """What each dtype's library call costs beyond its dispatch when the
    product accumulates onto C, for the dtypes whose call does (oneDNN's
    bf16 among ``dtypes``, the dtypes some library runs)."""
    return {
        d: estimated(
            ACCUMULATE_OVERHEAD_S,
            f"oneDNN's {d} call with a sum post-op (beta = 1: linear onto its bias) takes "
            "about 3 us more than one that writes C: a bf16 linear of a few rows takes "
            "3.7-6.1 us more than the matmul of its shape on the Zen 4 and Intel hosts, "
            "the bias's own kernel about 1.2 us of it (benchmarks/bench_linear_call.py)",
        )
        for d in dtypes
        if d in ACCUMULATE_DTYPES
    }


#: The share of each tier's bandwidth at which oneDNN streams the part of a
#: weight it reads in place (the part the caches do not keep): its kernel
#: reads the weight's K-contiguous rows as they lie, not packed panels. The
#: hosts' bf16 linears of 2-8 rows with weights of 0.3-0.5 GB stream them at
#: 10-11 GB/s on both kinds, about half of what a stream gets from main
#: memory and more than the products' share gives them: an estimate, which
#: calibrate fits.
IN_PLACE_FRACTION = 0.5


def in_place_fraction(dtypes: Iterable[str]) -> dict[str, Sourced]:
    """The share of each tier's bandwidth at which the library streams the
    part of a B it reads in place, for each dtype it reads B in place for
    (:func:`in_place_max_rows`)."""
    return {
        d: estimated(
            IN_PLACE_FRACTION,
            f"oneDNN streams the part of a {d} weight it reads in place (what the caches do not "
            "keep) at about half of a stream's rate (the hosts' linears of 2-8 rows read "
            "0.3-0.5 GB weights from main memory at 10-11 GB/s)",
        )
        for d in in_place_max_rows(dtypes)
    }


#: Bytes of an A from main memory a core packs per second for MKL's fp32
#: kernel: its rows reach the packing in short strided runs (a few hundred
#: bytes to a few KiB per row and block) that the prefetchers do not follow,
#: one block before the kernel uses it; the Intel Xeon host's calibration,
#: one thread, fits 4.8 GB/s against its 22 GB/s stream.
PACK_A_PER_CORE = 4e9


def product_overlap(dtypes: Iterable[str], flags: Iterable[str]) -> dict[str, Sourced]:
    """The share of a product's shorter time (compute, or memory beyond the
    L1) that its longer one hides, for each dtype a GEMM library runs on the
    vector units: the spec starts at the roofline's 1, and a calibration
    fits it. A GEMM library alternates packing B, streaming A and its
    micro-kernel block by block, so a product whose two times are close pays
    part of both. A dtype whose peak is AMX's tiles (``amx_<dtype>``) is
    given none: the tiles compute so far above the memory's pace that no
    product shows its compute time beside its memory's (the Intel host's
    bf16 compute fraction is not identifiable), so nothing could fit it."""
    have = set(flags)
    return {
        dtype: estimated(
            1.0,
            f"the {dtype} GEMM library overlaps its compute with its traffic beyond the L1 "
            "in part: it alternates packing, streaming and its micro-kernel block by block "
            "(the roofline's full overlap until calibrated per target)",
        )
        for dtype in dtypes
        if f"amx_{dtype}" not in have
    }


def pack_a_rate(dtypes: Iterable[str], units: int) -> dict[str, Sourced]:
    """The rate at which MKL packs an fp32 A that its last-level cache does
    not hold, each thread its own blocks. oneDNN's bf16 and int8 products
    (AMX, VNNI) are given none: the host's tall ones show no such cost."""
    out = {}
    for dtype in dtypes:
        if dtype not in ONEDNN_DTYPES:
            out[dtype] = estimated(
                PACK_A_PER_CORE * units,
                f"{units} core(s) x about {PACK_A_PER_CORE / 1e9:g} GB/s: MKL packs the blocks "
                f"of a {dtype} A from main memory one core each, in short strided runs the "
                "prefetchers do not follow (the Intel Xeon host's fit: 4.8 GB/s per core)",
            )
    return out


#: Elements a core adds per second at bf16 in PyTorch's vectorized loop: each
#: element converted to fp32, added, and rounded back, a few vector
#: instructions per 16 elements and the loop around them.
BF16_ADD_PER_CORE = 4e9
#: Elements a core adds per second at fp32 in the same loop, with no
#: conversion: two loads, an add and a store per vector and the loop around
#: them. Below main memory this, not a cache's bandwidth, sets the pace: the
#: Zen 4 host's calibration adds of 0.76-1.04 MB (in its L2) and of
#: 2.3-7.4 MB (in its L3) both run at 7.4-7.6 G elements/s (90 GB/s), one
#: thread.
FP32_ADD_PER_CORE = 8e9


def vector_rate(dtypes: Iterable[str], units: int) -> dict[str, Sourced]:
    """The rate of an op with no matrix product, per dtype: bf16, whose peak
    is the AMX tiles' (or fp32's after conversion), while an elementwise
    bf16 op converts on the vector units; fp32, whose peak is the FMA
    units', while an add issues a load pair and a store per vector."""
    out = {}
    if "bf16" in dtypes:
        out["bf16"] = estimated(
            BF16_ADD_PER_CORE * units,
            f"{units} core(s) x about {BF16_ADD_PER_CORE / 1e9:g} G bf16 elements/s: PyTorch "
            "converts each element to fp32 and back around the add on the vector units, "
            "never on the matrix units",
        )
    if "fp32" in dtypes:
        out["fp32"] = estimated(
            FP32_ADD_PER_CORE * units,
            f"{units} core(s) x about {FP32_ADD_PER_CORE / 1e9:g} G fp32 elements/s: PyTorch's "
            "vectorized add loads two vectors and stores one per add, so a cache-resident "
            "add runs at the loop's rate, not the cache's bandwidth (the Zen 4 host's "
            "L2- and L3-sized calibration adds: 7.5 G/s)",
        )
    return out


#: Bytes of a fresh output (one glibc maps afresh: 32 MiB or more) a core
#: faults in and zeroes per second as a GEMM library writes it, and as
#: PyTorch's elementwise kernels do per dtype: the Intel Xeon host's
#: calibration, one thread, fits 2.2 GB/s for the products, 2.9 for fp32
#: adds and 1.3 for bf16 ones (its bf16 binary kernels write into unmapped
#: pages slowly). Each thread faults in its own pages; the i7-12700K's
#: products, 20 threads, fit 14 GB/s, less than 20 times a core's.
FIRST_TOUCH_PER_CORE = 2.2e9
VECTOR_FIRST_TOUCH_PER_CORE = {"fp32": 2.9e9, "bf16": 1.3e9}


def first_touch(units: int) -> tuple[Sourced, Sourced]:
    """The rate at which a fresh output's pages are faulted in and zeroed
    under a GEMM library's writes, and the output size glibc maps afresh."""
    return (
        estimated(
            FIRST_TOUCH_PER_CORE * units,
            f"{units} core(s) x about {FIRST_TOUCH_PER_CORE / 1e9:g} GB/s: the OS faults in and "
            "zeroes each fresh 4 KiB page as the kernel first writes it (the Intel Xeon host's "
            "fit, one thread)",
        ),
        first_touch_threshold(),
    )


def vector_first_touch(dtypes: Iterable[str], units: int) -> dict[str, Sourced]:
    """Per dtype, the rate at which PyTorch's elementwise kernels take a
    fresh output's pages (its bf16 binary kernels at under half its fp32
    ones': they write into pages not yet mapped slowly)."""
    return {
        dtype: estimated(
            rate * units,
            f"{units} core(s) x about {rate / 1e9:g} GB/s: PyTorch's {dtype} elementwise "
            "kernels faulting in a fresh output (the Intel Xeon host's fit, one thread)",
        )
        for dtype, rate in VECTOR_FIRST_TOUCH_PER_CORE.items()
        if dtype in dtypes
    }
