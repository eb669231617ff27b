"""The CPU measurer: torch on the CPU under ``inference_mode`` with a pinned
thread count, wall-clock block timing, energy from RAPL's package domains.

Recorded in every row: the thread count, the torch version, the matmul backend
and its bf16 path (the numerics settings that change speed), the output
allocation choice, and that dispatch is inside the timed region.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from graphsval_core.plugin_api import (
    CaptureSettings,
    Measurement,
    OpSpec,
    TargetSpec,
    measure_workload,
    wall_clock_block,
)


def numerics(torch: Any) -> str:
    """The CPU numerics settings that change speed, in one line."""
    parts = [
        f"mkl={'yes' if torch.backends.mkl.is_available() else 'no'}",
        f"onednn={'yes' if torch.backends.mkldnn.is_available() else 'no'}",
        f"isa={torch.backends.cpu.get_cpu_capability()}",
        f"fp32_precision={torch.get_float32_matmul_precision()}",
    ]
    return " ".join(parts)


def measure_cpu(
    target: TargetSpec,
    op: OpSpec,
    shape: tuple[int, ...],
    dtype: str,
    settings: Mapping[str, Any] | CaptureSettings,
    root: str = "/",
) -> Measurement:
    """One measurement of ``op`` at ``shape`` and ``dtype`` on this CPU."""
    import torch

    from graphsval_cpu.machine import model_name
    from graphsval_cpu.rapl import RaplMeter

    opts = CaptureSettings.from_mapping(settings)
    if dtype not in target.dtypes:
        raise ValueError(f"{target.key} has no {dtype} (it has {', '.join(target.dtypes)})")
    if op.build is None:
        raise ValueError(f"op {op.name} has no workload builder")
    threads = opts.threads or torch.get_num_threads()
    torch.set_num_threads(threads)
    from pathlib import Path

    extras = {
        "threads": threads,
        "device": model_name(Path(root)) or "unknown CPU",
        "torch_version": torch.__version__,
        "numerics": numerics(torch),
        "launch_in_timing": "yes: dispatch inside the timed region, calls back to back",
        "fingerprint": dict(target.fingerprint),
    }
    with torch.inference_mode():
        workload = op.build(shape, dtype, "cpu", preallocate=opts.preallocate)
        return measure_workload(
            workload,
            wall_clock_block(workload.run),
            RaplMeter(root),
            opts,
            extras=extras,
        )
