"""The CUDA measurer probe: which targets it answers for, and its reasons."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from graphsval_core.plugin_api import MemoryTier, ProbeResult, TargetSpec, datasheet, estimated
from graphsval_cuda import plugin
from graphsval_cuda.host import host_gpu_spec
from graphsval_cuda.nvml import NvmlUnavailable, query_gpu
from graphsval_cuda.probe import probe_target
from graphsval_cuda.targets import a100_sxm4_80gb, h100_sxm5_80gb

Factory = Callable[..., Any]


def _other_family_target() -> TargetSpec:
    def s(v: float) -> Any:
        return estimated(v, "test")

    return TargetSpec(
        key="other_chip",
        name="other",
        family="somebody_else",
        architecture="cpu",
        compute_units=s(1),
        clock_hz=s(1e9),
        peak_ops_per_s={"fp32": s(1e9)},
        energy_per_op_j={"fp32": s(1e-12)},
        launch_overhead_s=s(0),
        idle_power_w=s(1),
        tdp_w=datasheet(10, "test"),
        tiers=[MemoryTier("dram", s(1e9), False, 1, s(1e9), s(100), energy_per_byte_j=s(1e-11))],
        ground_truth="measured",
    )


def test_cuda_probe_ignores_other_families() -> None:
    other = _other_family_target()
    assert probe_target(other, NvmlUnavailable("x"), torch_present=True) is None
    assert plugin.graphsval_measurer_probe(target=other) is None


def test_cuda_probe_without_device(fake_nvml: Factory) -> None:
    info = query_gpu(fake_nvml(init_error=9))
    result = probe_target(h100_sxm5_80gb(), info, torch_present=True)
    assert result == ProbeResult(False, "no CUDA device (Driver Not Loaded)")


def test_cuda_probe_matching_gpu(fake_nvml: Factory, h100: dict[str, Any]) -> None:
    info = query_gpu(fake_nvml(h100))
    result = probe_target(h100_sxm5_80gb(), info, torch_present=True)
    assert result is not None and result.available
    assert "NVML total energy counter" in result.energy
    host = probe_target(host_gpu_spec(info), info, torch_present=True)
    assert host is not None and host.available


def test_cuda_probe_other_gpu_and_no_torch(
    fake_nvml: Factory, h100: dict[str, Any], unknown_gpu: dict[str, Any]
) -> None:
    info = query_gpu(fake_nvml(h100))
    mismatch = probe_target(a100_sxm4_80gb(), info, torch_present=True)
    assert mismatch is not None and not mismatch.available
    assert "'NVIDIA H100 80GB HBM3'" in mismatch.reason
    assert "'NVIDIA A100-SXM4-80GB'" in mismatch.reason
    no_torch = probe_target(h100_sxm5_80gb(), info, torch_present=False)
    assert no_torch == ProbeResult(False, "torch is not installed")
    other = query_gpu(fake_nvml(unknown_gpu))
    host = probe_target(host_gpu_spec(other), other, torch_present=True)
    assert host is not None and host.available
    assert host.energy.startswith("none: NVML total energy counter not supported")
