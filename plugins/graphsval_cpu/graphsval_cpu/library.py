"""What PyTorch's CPU path costs around the arithmetic, for every CPU spec.

These are properties of the software stack (PyTorch's dispatcher, its
OpenMP thread team, the GEMM library under ``torch.mm``) rather than of the
chip; each is estimated here and calibrated per target from its rows.
"""

from __future__ import annotations

from graphsval_core.plugin_api import Sourced, estimated

#: PyTorch's at::internal::GRAIN_SIZE: an op with fewer elements (here: ops)
#: runs on the calling thread alone.
GRAIN_OPS = 32768


def dispatch() -> Sourced:
    """One PyTorch CPU operator call, dispatcher to return."""
    return estimated(2e-6, "PyTorch CPU operator dispatch, about 2 us")


def fork_join(threads: int) -> Sourced:
    """Waking the OpenMP team for a parallel region and joining it again."""
    return estimated(3e-6, f"waking and joining an OpenMP team of {threads} threads, a few us")


def grain() -> Sourced:
    """The work below which PyTorch keeps an op on one thread."""
    return estimated(
        GRAIN_OPS,
        f"PyTorch's at::internal::GRAIN_SIZE ({GRAIN_OPS}): a smaller op runs on one thread",
    )


def pack_rate() -> Sourced:
    """The rate at which the GEMM library copies B into its panel layout."""
    return estimated(
        20e9,
        "MKL/oneDNN pack B into panels on every call: a read and a write of B, "
        "about 20 GB/s (a copy's rate)",
    )


def pack_min_rows() -> Sourced:
    """From how many rows of A the GEMM library packs B."""
    return estimated(
        3,
        "MKL and oneDNN stream B unpacked through GEMV-like kernels for one or two rows "
        "of A and pack it from a few rows on",
    )
