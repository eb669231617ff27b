"""host_gpu: detection through a fake NVML module, and the real no-driver case."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from graphsval_core.plugin_api import build_registry
from graphsval_cuda import nvml
from graphsval_cuda.host import PLACEHOLDER, host_gpu_spec
from graphsval_cuda.nvml import (
    GpuInfo,
    NvmlUnavailable,
    missing_driver_reason,
    query_gpu,
    visible_device_index,
)
from graphsval_cuda.targets import h100_sxm5_80gb

Factory = Callable[..., Any]


def test_cuda_query_reads_an_h100(fake_nvml: Factory, h100: dict[str, Any]) -> None:
    fake = fake_nvml(h100)
    info = query_gpu(fake)
    assert isinstance(info, GpuInfo)
    assert info.name == "NVIDIA H100 80GB HBM3"
    assert info.memory_total_bytes == 85520809984
    assert (info.max_sm_clock_mhz, info.max_mem_clock_mhz) == (1980, 2619)
    assert info.cuda_cores == 16896 and info.compute_capability == (9, 0)
    assert info.power_limit_w == 700.0
    assert info.energy_counter_error is None
    # 2619 MHz x 2 x 5120 bit / 8 = 3.35 TB/s, the datasheet figure
    assert info.dram_bandwidth_bps == pytest.approx(3.35e12, rel=0.001)
    assert fake.initialised == 0, "nvmlShutdown must balance nvmlInit"


def test_cuda_query_without_driver_reports_nvml_error(fake_nvml: Factory) -> None:
    info = query_gpu(fake_nvml(init_error=9))
    assert info == NvmlUnavailable("Driver Not Loaded")


def test_cuda_query_with_no_gpu_and_bad_index(fake_nvml: Factory, h100: dict[str, Any]) -> None:
    assert isinstance(query_gpu(fake_nvml()), NvmlUnavailable)
    out_of_range = query_gpu(fake_nvml(h100), index=3)
    assert isinstance(out_of_range, NvmlUnavailable) and "index 3" in out_of_range.reason


def test_cuda_unsupported_queries_become_none(
    fake_nvml: Factory, unknown_gpu: dict[str, Any]
) -> None:
    unknown_gpu.update(cores=None, capability=None, power_limit_mw=None, bus_width=None)
    info = query_gpu(fake_nvml(unknown_gpu))
    assert isinstance(info, GpuInfo)
    assert info.cuda_cores is None and info.compute_capability is None
    assert info.power_limit_w is None and info.dram_bandwidth_bps is None
    assert info.energy_counter_error == "Not Supported"
    spec = host_gpu_spec(info)  # every figure falls back to a stated rule
    assert spec.provenance["compute_units"].kind == "estimated"
    assert "assumed" in spec.provenance["tdp_w"].source


def test_cuda_host_gpu_reuses_a_known_part(fake_nvml: Factory, h100: dict[str, Any]) -> None:
    spec = host_gpu_spec(query_gpu(fake_nvml(h100)))
    part = h100_sxm5_80gb()
    assert spec.key == "host_gpu" and spec.detected
    assert spec.family == part.family
    assert dict(spec.peak_ops_per_s) == dict(part.peak_ops_per_s)
    source = spec.provenance["peak_ops_per_s.bf16"].source
    assert "reused from h100_sxm5_80gb" in source and "NVIDIA H100 80GB HBM3" in source
    assert spec.provenance["clock_hz"].kind == "detected"
    dram = spec.tier("dram")
    assert dram.capacity_bytes == 85520809984
    assert dram.provenance["capacity_bytes"].kind == "detected"
    assert spec.fingerprint["gpu_name"] == "NVIDIA H100 80GB HBM3"
    # the datasheet part takes the family's and the power class's comparisons
    assert part.family_rank == 2 and spec.family_rank is None and spec.power_class is None


def test_cuda_host_gpu_estimates_an_unknown_part(
    fake_nvml: Factory, unknown_gpu: dict[str, Any]
) -> None:
    spec = host_gpu_spec(query_gpu(fake_nvml(unknown_gpu)))
    assert spec.key == "host_gpu" and spec.family == "nvidia_gpu"
    assert spec.compute_units == 128  # 16384 cores / 128 per SM (compute capability 8.9)
    assert spec.provenance["compute_units"].kind == "derived"
    assert spec.clock_hz == 3.12e9
    assert spec.peak_ops_per_s["fp32"] == pytest.approx(2 * 16384 * 3.12e9)
    assert spec.provenance["peak_ops_per_s.fp32"].kind == "derived"
    assert spec.provenance["peak_ops_per_s.fp16"].kind == "estimated"
    assert "fp8" in spec.peak_ops_per_s
    assert spec.tdp_w == 450.0 and spec.provenance["tdp_w"].kind == "detected"
    dram = spec.tier("dram")
    assert dram.peak_bandwidth_bps == pytest.approx(10501e6 * 2 * 384 / 8)
    assert dram.label == "GDDR"
    assert "not a known datasheet part" in spec.description


def test_cuda_host_gpu_placeholder_without_driver() -> None:
    spec = host_gpu_spec(NvmlUnavailable("Driver Not Loaded"))
    assert spec.key == "host_gpu"
    assert "No NVIDIA GPU detected" in spec.description and "Driver Not Loaded" in spec.description
    provenances = [*spec.provenance.values()]
    provenances += [p for t in spec.tiers for p in t.provenance.values()]
    placeholders = [p for p in provenances if "default 1.0" not in p.source]
    assert placeholders
    assert all(str(p) == f"estimated: {PLACEHOLDER}" for p in placeholders)
    assert PLACEHOLDER == "no NVIDIA GPU detected on this machine; placeholder"


def test_cuda_visible_device_index() -> None:
    assert visible_device_index({}) == 0
    assert visible_device_index({"CUDA_VISIBLE_DEVICES": "2,3"}) == 2
    assert visible_device_index({"CUDA_VISIBLE_DEVICES": "GPU-1234"}) == 0


def test_cuda_missing_driver_is_known_without_nvml(tmp_path: Path) -> None:
    assert missing_driver_reason(tmp_path, "linux") == (
        "NVIDIA driver not loaded: no /proc/driver/nvidia/version"
    )
    assert missing_driver_reason(tmp_path, "win32") is None  # NVML decides there
    version = tmp_path / "proc/driver/nvidia/version"
    version.parent.mkdir(parents=True)
    version.write_text("NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15\n")
    assert missing_driver_reason(tmp_path, "linux") is None


def test_cuda_sandboxed_driver_is_asked(tmp_path: Path) -> None:
    """gVisor passes the GPU through without /proc/driver/nvidia: its control
    device stands for the driver, and NVML decides."""
    control = tmp_path / "dev/nvidiactl"
    control.parent.mkdir(parents=True)
    control.touch()
    assert missing_driver_reason(tmp_path, "linux") is None


def _has_real_gpu() -> bool:
    return isinstance(query_gpu(None), GpuInfo)


@pytest.mark.skipif(_has_real_gpu(), reason="this machine has an NVIDIA GPU")
def test_cuda_real_host_without_driver_lists_host_gpu_unavailable() -> None:
    nvml.host_gpu_info.cache_clear()
    registry = build_registry(autoload=False, plugin_args=["cuda"], strict=True)
    targets = registry.targets()
    assert {"h100_sxm5_80gb", "h200_sxm_141gb", "a100_sxm4_80gb", "host_gpu"} <= set(targets)
    host = targets["host_gpu"]
    assert "placeholder" in host.description
    probe = registry.measurer_probe(host)
    assert not probe.available
    assert probe.reason.startswith("no CUDA device (") and probe.reason.endswith(")")
    assert registry.target_plugin("host_gpu").distribution == "graphsval-cuda"


@pytest.mark.skipif(_has_real_gpu(), reason="this machine has an NVIDIA GPU")
def test_cuda_real_pynvml_reports_its_error() -> None:
    """The real pynvml on a machine without a GPU: an NVML error, never an exception."""
    info = query_gpu(None)
    assert isinstance(info, NvmlUnavailable) and info.reason
