"""The CUDA measurer: torch on the GPU under ``inference_mode``, CUDA-event block
timing, energy from NVML (total-energy counter, else sampled power).

Recorded in every row: the GPU's name, torch and CUDA versions, the numerics
settings that change speed (TF32 for fp32 matmuls and convolutions, the fp32
matmul precision, reduced-precision reductions of fp16/bf16), the output
allocation choice, that launch overhead is inside the timed region, whether L2
was flushed, and the SM clock and temperature before and after the shape (from
NVML; "before" is read before the warm-up, so it may be an idle clock).

A named datacenter target (``h100_sxm5_80gb``, ...) is measured only on that
part: the capture command refuses targets whose probe says unavailable, and this
measurer checks the GPU's name once more (another GPU is measured as
``host_gpu``).

An optional cold-cache mode zeroes a buffer twice the L2 size before every
timed block (the first call of each block then starts from a cold L2). It is
asked for with ``flush_l2`` in the settings mapping (or attribute);
:class:`~graphsval_core.plugin_api.CaptureSettings` has no such field, so
``graphsval capture`` always measures warm-cache.
"""

from __future__ import annotations

import functools
import importlib
import os
from collections.abc import Mapping
from typing import Any

import attrs

from graphsval_core.plugin_api import (
    FLUSH_L2_FACTOR,
    LAUNCH_IN_TIMING,
    CaptureSettings,
    EnergyMeter,
    Measurement,
    OpSpec,
    TargetSpec,
    cuda_event_block,
    measure_workload,
    numerics,
    setting,
)


def nvml_index(device: str, environ: Mapping[str, str] | None = None) -> int:
    """The NVML index of torch's ``device`` (``cuda`` or ``cuda:N``).

    NVML ignores ``CUDA_VISIBLE_DEVICES``: a plain index there is mapped through
    it; otherwise (unset, UUIDs, MIG ids) the ordinal itself is used.
    """
    ordinal = int(device.split(":", 1)[1]) if ":" in device else 0
    env = os.environ if environ is None else environ
    visible = [v.strip() for v in env.get("CUDA_VISIBLE_DEVICES", "").split(",") if v.strip()]
    if ordinal < len(visible) and visible[ordinal].isdigit():
        return int(visible[ordinal])
    return ordinal


@functools.cache
def default_meter(index: int) -> EnergyMeter:
    """One NVML meter per device for the whole process (NVML stays initialised)."""
    from graphsval_cuda.nvml_energy import NvmlEnergyMeter

    return NvmlEnergyMeter(index)


def _same_name(a: str, b: str) -> bool:
    return " ".join(a.lower().split()) == " ".join(b.lower().split())


def l2_bytes(torch: Any, device: str, target: TargetSpec) -> int:
    """The GPU's L2 size: from torch's device properties, else the target's L2 tier."""
    try:
        size = int(torch.cuda.get_device_properties(device).L2_cache_size)
    except (AttributeError, RuntimeError, TypeError, ValueError):
        size = 0
    if size > 0:
        return size
    tier = next((t for t in target.tiers if t.name == "l2"), None)
    return int(tier.total_capacity_bytes) if tier is not None else 0


def _state(meter: EnergyMeter, when: str) -> dict[str, Any]:
    read = getattr(meter, "gpu_state", None)
    state = read() if read is not None else None
    return {
        f"sm_clock_mhz_{when}": state.sm_clock_mhz if state else None,
        f"temperature_c_{when}": state.temperature_c if state else None,
    }


def measure_cuda(
    target: TargetSpec,
    op: OpSpec,
    shape: tuple[int, ...],
    dtype: str,
    settings: Mapping[str, Any] | CaptureSettings,
    *,
    torch: Any = None,
    meter: EnergyMeter | None = None,
    device: str = "cuda",
) -> Measurement:
    """One measurement of ``op`` at ``shape`` and ``dtype`` on this GPU.

    :param torch: the torch module (imported when None; a fake in tests).
    :param meter: the energy meter (default: NVML for ``device``, one per process).
    :param device: the torch device the workload is built on.
    """
    from graphsval_cuda.host import KEY as HOST_KEY

    torch = importlib.import_module("torch") if torch is None else torch
    opts = CaptureSettings.from_mapping(settings)
    if dtype not in target.dtypes:
        raise ValueError(f"{target.key} has no {dtype} (it has {', '.join(target.dtypes)})")
    if op.build is None:
        raise ValueError(f"op {op.name} has no workload builder")
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise RuntimeError("torch sees no CUDA device (a CPU-only torch build, or no driver)")
    name = str(torch.cuda.get_device_name(device))
    expected = target.fingerprint.get("gpu_name")
    if target.key != HOST_KEY and expected and not _same_name(name, expected):
        raise ValueError(f"this GPU is {name!r}, not {expected!r} (measure it as {HOST_KEY})")
    index = nvml_index(device)
    meter = default_meter(index) if meter is None else meter
    notes: list[str] = []
    nvml_name = getattr(meter, "device_name", lambda: None)()
    if nvml_name and not _same_name(nvml_name, name):
        notes.append(f"NVML device {index} is {nvml_name!r}, torch's is {name!r}: energy suspect")
    flush = (
        FLUSH_L2_FACTOR * l2_bytes(torch, device, target) if setting(settings, "flush_l2") else 0
    )
    driver = getattr(meter, "driver_version", lambda: None)()
    cuda_version = str(torch.version.cuda)
    fingerprint = {**target.fingerprint, "gpu_name": name, "cuda_runtime": cuda_version}
    if driver:
        fingerprint["driver_version"] = driver
    extras: dict[str, Any] = {
        "device": name,
        "torch_version": str(torch.__version__),
        "numerics": numerics(torch),
        "launch_in_timing": LAUNCH_IN_TIMING,
        "fingerprint": fingerprint,
        "cuda_version": cuda_version,
        "nvml_index": index,
        "l2_flush": (
            f"yes: {flush / 2**20:.0f} MiB zeroed before each block" if flush else "no (warm L2)"
        ),
        **_state(meter, "before"),
    }
    with torch.inference_mode():
        workload = op.build(shape, dtype, device, preallocate=opts.preallocate)
        block = cuda_event_block(workload.run, torch, flush, device)
        measured = measure_workload(
            workload, block, meter, opts, sync=torch.cuda.synchronize, extras=extras
        )
    return attrs.evolve(
        measured,
        notes="; ".join(n for n in (measured.notes, *notes) if n),
        extras={**measured.extras, **_state(meter, "after")},
    )
