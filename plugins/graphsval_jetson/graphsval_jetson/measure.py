"""The Jetson measurer: torch on the integrated GPU under ``inference_mode``,
CUDA-event block timing, energy from the INA3221's ``VDD_IN`` rail.

The power mode is part of a Jetson target: it is read from nvpmodel (as the
probe reads it), recorded in every row and compared with the target's; a
mismatch, or a mode that cannot be read, goes into the row's notes. Also
recorded: the device-tree model, torch, CUDA and L4T versions, the numerics
settings that change speed (TF32, fp32 matmul precision, reduced-precision
reductions), the INA3221's averaging window and sampling interval, whether L2
was flushed, and the GPU clock and temperature before and after the shape
(devfreq and thermal zones; "before" is read before the warm-up).

``flush_l2`` in the settings mapping (or attribute) zeroes a buffer twice the
L2 size before every timed block, as the CUDA measurer does.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from pathlib import Path
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


def power_mode_note(current: str | None, wanted: str | None, key: str) -> str:
    """The note for a power mode that is not the target's, or cannot be read."""
    if current is None:
        assumed = f"; {key} is specified in {wanted}" if wanted else ""
        return f"power mode not verified (no nvpmodel status){assumed}"
    if wanted and current.upper() != wanted.upper():
        return (
            f"power mode is {current}, not {wanted}: these timings are not {key}'s "
            "(switch with nvpmodel and recapture)"
        )
    return ""


def _flush_bytes(settings: Any, torch: Any, device: str, target: TargetSpec) -> int:
    """Bytes of the L2 flush buffer (0: no flush): twice the L2 size."""
    if not setting(settings, "flush_l2"):
        return 0
    try:
        size = int(torch.cuda.get_device_properties(device).L2_cache_size)
    except (AttributeError, RuntimeError, TypeError, ValueError):
        size = 0
    if size <= 0:
        tier = next((t for t in target.tiers if t.name == "l2"), None)
        size = int(tier.total_capacity_bytes) if tier is not None else 0
    return FLUSH_L2_FACTOR * size


def measure_jetson(
    target: TargetSpec,
    op: OpSpec,
    shape: tuple[int, ...],
    dtype: str,
    settings: Mapping[str, Any] | CaptureSettings,
    *,
    torch: Any = None,
    meter: EnergyMeter | None = None,
    root: str | Path | None = None,
    device: str = "cuda",
) -> Measurement:
    """One measurement of ``op`` at ``shape`` and ``dtype`` on this Jetson.

    :param torch: the torch module (imported when None; a fake in tests).
    :param meter: the energy meter (default: the INA3221's ``VDD_IN`` under ``root``).
    :param root: where ``sys``, ``proc``, ``etc`` and ``var`` are read (default ``/``).
    :param device: the torch device the workload is built on.
    """
    from graphsval_jetson.gpu_sysfs import gpu_state, l4t_release
    from graphsval_jetson.ina3221 import Ina3221Meter
    from graphsval_jetson.probe import DEFAULT_ROOT, read_model, read_power_modes

    torch = importlib.import_module("torch") if torch is None else torch
    base = DEFAULT_ROOT if root is None else Path(root)
    opts = CaptureSettings.from_mapping(settings)
    if dtype not in target.dtypes:
        raise ValueError(f"{target.key} has no {dtype} (it has {', '.join(target.dtypes)})")
    if op.build is None:
        raise ValueError(f"op {op.name} has no workload builder")
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise RuntimeError("torch sees no CUDA device (install the JetPack build of torch)")
    meter = Ina3221Meter(base) if meter is None else meter
    modes, mode_id = read_power_modes(base)
    mode = modes.get(mode_id) if mode_id is not None else None
    gpu_name = str(torch.cuda.get_device_name(device))
    cuda_version = str(torch.version.cuda)
    fingerprint = {**target.fingerprint, "gpu_name": gpu_name, "cuda_runtime": cuda_version}
    release = l4t_release(base)
    if release:
        fingerprint["l4t"] = release
    flush = _flush_bytes(settings, torch, device, target)
    before = gpu_state(base)
    extras: dict[str, Any] = {
        "device": read_model(base) or gpu_name,
        "torch_version": str(torch.__version__),
        "numerics": numerics(torch),
        "launch_in_timing": LAUNCH_IN_TIMING,
        "fingerprint": fingerprint,
        "cuda_version": cuda_version,
        "power_mode": mode or "unknown",
        "power_mode_id": mode_id,
        "ina3221_averaging_s": getattr(meter, "averaging_s", None),
        "ina3221_averaging": getattr(meter, "averaging_note", None),
        "power_sample_interval_s": getattr(meter, "interval_s", None),
        "l2_flush": (
            f"yes: {flush / 2**20:.0f} MiB zeroed before each block" if flush else "no (warm L2)"
        ),
        "sm_clock_mhz_before": before.sm_clock_mhz,
        "temperature_c_before": before.temperature_c,
    }
    with torch.inference_mode():
        workload = op.build(shape, dtype, device, preallocate=opts.preallocate)
        block = cuda_event_block(workload.run, torch, flush, device)
        measured = measure_workload(
            workload, block, meter, opts, sync=torch.cuda.synchronize, extras=extras
        )
    after = gpu_state(base)
    note = power_mode_note(mode, target.power_mode, target.key)
    return attrs.evolve(
        measured,
        notes="; ".join(n for n in (measured.notes, note) if n),
        extras={
            **measured.extras,
            "sm_clock_mhz_after": after.sm_clock_mhz,
            "temperature_c_after": after.temperature_c,
        },
    )
