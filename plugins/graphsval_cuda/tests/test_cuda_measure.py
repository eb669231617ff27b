"""measure_cuda end to end on this machine: a fake torch whose CUDA events read
the wall clock (the workload itself runs on the CPU) and the fake NVML."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import attrs
import pytest

from graphsval_core.plugin_api import CaptureItem, build_registry, measurement_row
from graphsval_cuda import plugin
from graphsval_cuda.host import host_gpu_spec
from graphsval_cuda.measure import measure_cuda, numerics, nvml_index
from graphsval_cuda.nvml import query_gpu
from graphsval_cuda.nvml_energy import (
    COUNTER_SOURCE,
    FALLBACK_NOTE,
    SAMPLED_SOURCE,
    NvmlEnergyMeter,
)
from graphsval_cuda.targets import a100_sxm4_80gb, h100_sxm5_80gb

#: The built-in ops, as every registry has them.
_OPS = build_registry(autoload=False).ops()
MATMUL = _OPS["matmul"]
VECTOR_ADD = _OPS["vector_add"]

Factory = Callable[..., Any]
H100_NAME = "NVIDIA H100 80GB HBM3"
#: Short budgets: the kernels are tiny CPU ones and the test must be quick.
FAST = {
    "max_time_per_shape_s": 0.05,
    "min_block_s": 1e-4,
    "max_energy_window_s": 0.05,
    "target_ci": 0.5,
}


class FakeEvent:
    """A CUDA event that reads the wall clock when recorded (the fake's kernels
    run on the CPU, synchronously)."""

    def __init__(self, enable_timing: bool = False) -> None:
        self.t = 0.0

    def record(self, stream: Any = None) -> None:
        self.t = time.perf_counter()

    def synchronize(self) -> None:
        pass

    def elapsed_time(self, end: FakeEvent) -> float:
        return (end.t - self.t) * 1e3  # milliseconds, as torch's


def fake_torch(name: str = H100_NAME, l2_bytes: int = 1 << 20) -> SimpleNamespace:
    """The part of torch the measurer touches; tensors are real CPU ones."""
    import torch

    syncs: list[Any] = []
    matmul = SimpleNamespace(
        allow_tf32=False,
        allow_fp16_reduced_precision_reduction=True,
        allow_bf16_reduced_precision_reduction=False,
    )
    return SimpleNamespace(
        __version__="2.11.0+cu130",
        version=SimpleNamespace(cuda="13.0"),
        cuda=SimpleNamespace(
            Event=FakeEvent,
            synchronize=lambda device=None: syncs.append(device),
            is_available=lambda: True,
            get_device_name=lambda device=None: name,
            get_device_properties=lambda device=None: SimpleNamespace(L2_cache_size=l2_bytes),
            syncs=syncs,
        ),
        backends=SimpleNamespace(
            cuda=SimpleNamespace(matmul=matmul), cudnn=SimpleNamespace(allow_tf32=True)
        ),
        get_float32_matmul_precision=lambda: "highest",
        inference_mode=torch.inference_mode,
        empty=torch.empty,
        float32=torch.float32,
    )


def _meter(nvml: Any) -> NvmlEnergyMeter:
    meter = NvmlEnergyMeter(0, nvml, interval_s=0.002)
    meter.min_window_s = 0.02  # the real 1 s would make every test a second long
    return meter


def _real_time_gpu(gpu: dict[str, Any]) -> dict[str, Any]:
    """The fake GPU's energy counter follows the wall clock, updating every 1 ms."""
    return {**gpu, "energy_update_s": 0.001}


def test_cuda_measure_end_to_end(fake_nvml: Factory, h100: dict[str, Any]) -> None:
    torch = fake_torch()
    nvml = fake_nvml(_real_time_gpu(h100), clock=time.perf_counter)

    def synchronize(device: Any = None) -> None:
        """The GPU clocks up and warms while it works (read after the shape)."""
        torch.cuda.syncs.append(device)
        nvml.gpus[0].update(sm_clock_now=1980, temperature=55)

    torch.cuda.synchronize = synchronize
    m = measure_cuda(
        h100_sxm5_80gb(),
        MATMUL,
        (64, 64, 64),
        "fp32",
        FAST,
        torch=torch,
        meter=_meter(nvml),
        device="cpu",
    )
    assert m.latency_s is not None and m.latency_s > 0
    assert m.notes == ""
    x = m.extras
    assert x["verdict"] == "pass"
    assert (x["device"], x["torch_version"], x["cuda_version"]) == (
        H100_NAME,
        "2.11.0+cu130",
        "13.0",
    )
    assert x["numerics"] == (
        "tf32_matmul=no tf32_cudnn=yes fp32_precision=highest "
        "fp16_reduced_reduction=yes bf16_reduced_reduction=no"
    )
    assert x["launch_in_timing"] == "yes: CUDA events around blocks of back-to-back launches"
    assert (x["sm_clock_mhz_before"], x["sm_clock_mhz_after"]) == (1755, 1980)
    assert (x["temperature_c_before"], x["temperature_c_after"]) == (41.0, 55.0)
    assert x["fingerprint"] == {
        "gpu_name": H100_NAME,
        "cuda_runtime": "13.0",
        "driver_version": "550.54.15",
    }
    assert x["l2_flush"] == "no (warm L2)"
    assert x["energy_source"] == COUNTER_SOURCE
    window = float(x["energy_window_s"])
    assert m.energy_j is not None and 0 < m.energy_j <= 300.0 * window * 1.1
    assert torch.cuda.syncs  # synchronize before and after every energy window

    row = measurement_row(
        "h100_sxm5_80gb", "matmul", CaptureItem((64, 64, 64), "fp32"), "calibration", m, 0.1, False
    )
    assert row["device"] == H100_NAME and row["numerics"].startswith("tf32_matmul=no")
    assert json.loads(row["fingerprint"])["driver_version"] == "550.54.15"
    details = json.loads(row["details"])
    assert details["sm_clock_mhz_after"] == 1980 and details["temperature_c_before"] == 41.0


def test_cuda_measure_power_fallback(fake_nvml: Factory, power_only_gpu: dict[str, Any]) -> None:
    m = measure_cuda(
        h100_sxm5_80gb(),
        VECTOR_ADD,
        (4096,),
        "bf16",
        FAST,
        torch=fake_torch(),
        meter=_meter(fake_nvml(power_only_gpu)),
        device="cpu",
    )
    assert m.extras["energy_source"] == SAMPLED_SOURCE
    assert FALLBACK_NOTE in m.notes
    assert m.energy_j is not None and m.energy_j > 0


def test_cuda_measure_without_energy(fake_nvml: Factory, no_energy_gpu: dict[str, Any]) -> None:
    m = measure_cuda(
        h100_sxm5_80gb(),
        VECTOR_ADD,
        (1024,),
        "fp16",
        FAST,
        torch=fake_torch(),
        meter=_meter(fake_nvml(no_energy_gpu)),
        device="cpu",
    )
    assert m.energy_j is None and m.latency_s is not None
    assert m.extras["energy_source"] == "none"
    assert "NVML power usage: Not Supported" in m.notes


def test_cuda_measure_flush_l2_from_settings(fake_nvml: Factory, h100: dict[str, Any]) -> None:
    m = measure_cuda(
        h100_sxm5_80gb(),
        VECTOR_ADD,
        (1024,),
        "fp32",
        {**FAST, "flush_l2": True},
        torch=fake_torch(l2_bytes=1 << 20),
        meter=_meter(fake_nvml(h100)),
        device="cpu",
    )
    assert m.extras["l2_flush"] == "yes: 2 MiB zeroed before each block"


def test_cuda_measure_refuses_another_part(fake_nvml: Factory, h100: dict[str, Any]) -> None:
    """A named datacenter target is measured only on that part; host_gpu on any GPU."""
    meter = _meter(fake_nvml(h100))
    with pytest.raises(ValueError, match="this GPU is 'NVIDIA H100 80GB HBM3', not 'NVIDIA A100"):
        measure_cuda(
            a100_sxm4_80gb(),
            VECTOR_ADD,
            (256,),
            "fp32",
            FAST,
            torch=fake_torch(),
            meter=meter,
            device="cpu",
        )
    host = host_gpu_spec(query_gpu(fake_nvml(h100)))
    m = measure_cuda(
        host, VECTOR_ADD, (256,), "fp32", FAST, torch=fake_torch(), meter=meter, device="cpu"
    )
    assert m.latency_s is not None


def test_cuda_measure_notes_an_nvml_torch_mismatch(
    fake_nvml: Factory, h100: dict[str, Any], unknown_gpu: dict[str, Any]
) -> None:
    """NVML index 0 is another GPU than torch's: the energy is suspect, and said so."""
    host = host_gpu_spec(query_gpu(fake_nvml(h100)))
    meter = _meter(fake_nvml({**unknown_gpu, "energy": 0, "power_w": 100.0}))
    m = measure_cuda(
        host, VECTOR_ADD, (256,), "fp32", FAST, torch=fake_torch(), meter=meter, device="cpu"
    )
    assert "NVML device 0 is 'NVIDIA GeForce RTX 4090'" in m.notes


def test_cuda_measure_without_cuda_torch(fake_nvml: Factory, h100: dict[str, Any]) -> None:
    torch = fake_torch()
    torch.cuda.is_available = lambda: False
    with pytest.raises(RuntimeError, match="torch sees no CUDA device"):
        measure_cuda(
            h100_sxm5_80gb(),
            VECTOR_ADD,
            (256,),
            "fp32",
            FAST,
            torch=torch,
            meter=_meter(fake_nvml(h100)),
        )


def test_cuda_numerics_survive_new_torch_flags() -> None:
    """torch 2.9+ may refuse legacy TF32 flags after the new API was used."""

    class Refusing:
        @property
        def allow_tf32(self) -> bool:
            raise RuntimeError("mix of the legacy and new APIs")

    torch = fake_torch()
    torch.backends.cuda.matmul = Refusing()
    text = numerics(torch)
    assert text.startswith("tf32_matmul=error tf32_cudnn=yes fp32_precision=highest")
    assert "fp16_reduced_reduction=unknown" in text


def test_cuda_nvml_index() -> None:
    assert nvml_index("cuda", {}) == 0
    assert nvml_index("cuda:1", {}) == 1
    assert nvml_index("cuda", {"CUDA_VISIBLE_DEVICES": "3,1"}) == 3
    assert nvml_index("cuda:1", {"CUDA_VISIBLE_DEVICES": "3,1"}) == 1
    assert nvml_index("cuda", {"CUDA_VISIBLE_DEVICES": "GPU-1234"}) == 0


def test_cuda_plugin_measure_ignores_other_families() -> None:
    other = attrs.evolve(h100_sxm5_80gb(), key="other", family="cpu")
    result = plugin.graphsval_measure(
        target=other, op=MATMUL, shape=(8, 8, 8), dtype="fp32", settings={}
    )
    assert result is None
