"""CUDA-event block timing, shared by the CUDA and Jetson measurers.

Events are recorded around a block of back-to-back launches and read after a
synchronize; launch overhead is inside the timed region (the same for every
shape), and with back-to-back launches in a block the launches of tiny kernels
pipeline, so a block's per-call time is what a stream of such calls costs.
An optional L2 flush (writing a buffer larger than L2) before each block gives
cold-cache numbers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


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
