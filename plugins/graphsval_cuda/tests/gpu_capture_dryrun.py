"""``DRY_RUN=1 scripts/gpu_capture.sh``: graphsval's own commands against the
fakes this plugin's tests use, on a machine with no GPU.

    python gpu_capture_dryrun.py graphsval ARGS...   # the graphsval command
    python gpu_capture_dryrun.py python FILE ARGS... # a Python file (the script's steps)

Before either runs, the fakes are put in place; everything else is the real
code (the installed graphsval and graphsval-cuda, the capture, its files):

- ``pynvml`` is the tests' :class:`conftest.FakeNvml` describing one
  ``NVIDIA H200`` whose energy counter follows the wall clock at 300 W, so the
  probe says ``h200_sxm_141gb`` is available and the real NVML energy meter
  measures real windows (1 s, NVML's minimum: a dry run takes the time a
  capture's energy windows take; ``DRY_RUN_WINDOW_S`` shortens them in tests);
- the driver check passes (there is no ``/proc/driver/nvidia`` here);
- the CUDA measurer gets the tests' ``fake_torch`` (CUDA events that read the
  wall clock, named ``NVIDIA H200``, torch and CUDA versions ``dry-run``) and
  builds each workload on the CPU with its dimensions clipped
  (``DRY_RUN_MAX_DIM``, 128 by default; vector_add 65536): the rows name the
  sweep's shapes, their timings are the small CPU kernels', meaningless.
"""

from __future__ import annotations

import os
import runpy
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
#: NVML's answers for an H200 SXM 141 GB (as nvidia-smi reported one: 143771 MiB).
H200_NVML = {
    "name": "NVIDIA H200",
    "memory_total": 143771 * 2**20,
    "sm_clock": 1980,
    "mem_clock": 3201,
    "bus_width": 6144,
    "cores": 16896,
    "capability": (9, 0),
    "power_limit_mw": 700000,
    "energy": 987654321,
    "power_w": 300.0,
    "sm_clock_now": 1980,
    "temperature": 38,
}
DRY = "dry-run"


def _clipped(op: Any) -> Any:
    """``op`` whose workloads are built with every dimension clipped."""
    import attrs

    limit = int(os.environ.get("DRY_RUN_MAX_DIM", "128"))
    if len(op.dims) == 1:
        limit = max(limit, 65536)
    build = op.build

    def small(dims: Any, dtype: str, device: str = "cpu", **kwargs: Any) -> Any:
        return build(tuple(min(int(d), limit) for d in dims), dtype, device, **kwargs)

    return attrs.evolve(op, build=small)


def install_fakes() -> None:
    """Put the fakes in place (see module doc)."""
    sys.path.insert(0, str(HERE))  # the tests' fakes; PYTHONSAFEPATH leaves it out
    from conftest import FakeNvml
    from test_cuda_measure import fake_torch

    sys.modules["pynvml"] = FakeNvml([dict(H200_NVML)], clock=time.perf_counter)
    import graphsval_cuda.measure as measure
    import graphsval_cuda.nvml as nvml
    from graphsval_cuda.nvml_energy import NvmlEnergyMeter

    nvml.missing_driver_reason = lambda *args, **kwargs: None
    window = os.environ.get("DRY_RUN_WINDOW_S")
    if window:
        NvmlEnergyMeter.min_window_s = float(window)
    torch = fake_torch(name=H200_NVML["name"], l2_bytes=50 * 2**20)
    torch.__version__ = DRY
    torch.version.cuda = DRY
    torch.cuda.synchronize = lambda device=None: None
    real = measure.measure_cuda

    def measure_on_cpu(
        target: Any, op: Any, shape: Any, dtype: str, settings: Any, **kwargs: Any
    ) -> Any:
        kwargs.update(torch=torch, device="cpu")
        return real(target, _clipped(op), shape, dtype, settings, **kwargs)

    measure.measure_cuda = measure_on_cpu  # the plugin's hook imports it when it measures


def main(argv: list[str]) -> None:
    if len(argv) < 2 or argv[1] not in ("graphsval", "python"):
        sys.exit("usage: gpu_capture_dryrun.py graphsval ARGS... | python FILE ARGS...")
    install_fakes()
    if argv[1] == "graphsval":  # the command itself, as `python -m graphsval_core` runs it
        sys.argv = ["graphsval", *argv[2:]]
        runpy.run_module("graphsval_core", run_name="__main__", alter_sys=True)
        return
    sys.argv = argv[2:]
    runpy.run_path(argv[2], run_name="__main__")


if __name__ == "__main__":
    main(sys.argv)
