"""CUDA-event block timing, shared by the CUDA and Jetson measurers.

Events are recorded around a block of back-to-back launches and read after a
synchronize; launch overhead is inside the timed region (the same for every
shape), and with back-to-back launches in a block the launches of tiny kernels
pipeline, so a block's per-call time is what a stream of such calls costs.
An optional L2 flush (writing a buffer larger than L2) before each block gives
cold-cache numbers.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from typing import Any

#: What every CUDA-event baseline row says about launches.
LAUNCH_IN_TIMING = "yes: CUDA events around blocks of back-to-back launches"
#: The optional L2 flush writes a buffer this many times the L2 size.
FLUSH_L2_FACTOR = 2


def setting(settings: Any, name: str) -> Any:
    """A capture setting that may be missing from ``CaptureSettings`` (e.g. ``flush_l2``)."""
    if isinstance(settings, Mapping):
        return settings.get(name)
    return getattr(settings, name, None)


def _read_flag(get: Callable[[], Any]) -> str:
    """A torch backend flag as text; torch 2.9+ may warn or refuse on legacy flags."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value = get()
    except AttributeError:
        return "unknown"
    except RuntimeError:
        return "error"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def numerics(torch: Any) -> str:
    """The CUDA numerics settings that change speed (TF32, reduced-precision
    reductions), in one line for the baseline's ``numerics`` column."""
    matmul = torch.backends.cuda.matmul
    parts = {
        "tf32_matmul": lambda: matmul.allow_tf32,
        "tf32_cudnn": lambda: torch.backends.cudnn.allow_tf32,
        "fp32_precision": torch.get_float32_matmul_precision,
        "fp16_reduced_reduction": lambda: matmul.allow_fp16_reduced_precision_reduction,
        "bf16_reduced_reduction": lambda: matmul.allow_bf16_reduced_precision_reduction,
    }
    return " ".join(f"{name}={_read_flag(get)}" for name, get in parts.items())


def cuda_event_block(
    run: Callable[[], Any], torch: Any, flush_bytes: int = 0, device: str = "cuda"
) -> Callable[[int], float]:
    """A block timer: seconds for ``reps`` calls between two CUDA events."""
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    scratch = (
        torch.empty(flush_bytes // 4, dtype=torch.float32, device=device) if flush_bytes else None
    )

    def run_block(reps: int) -> float:
        if scratch is not None:
            scratch.zero_()
        start.record()
        for _ in range(reps):
            run()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) * 1e-3

    return run_block


def cuda_sync(torch: Any) -> Callable[[], None]:
    return torch.cuda.synchronize
