"""NVIDIA datacenter GPU target specs: datasheet figures gathered in
hardware-facts.md (dense tensor numbers), tier figures derived or estimated by
the rules of :mod:`graphsval_cuda.rules`."""

from __future__ import annotations

from collections.abc import Mapping

from graphsval_core.plugin_api import Sourced, TargetSpec, datasheet, derived, estimated, fmt_si
from graphsval_cuda import rules

KiB = 1024
MiB = 1024**2
GiB = 1024**3

#: Family of the datasheet parts (and of host_gpu when it is one of them).
FAMILY = "nvidia_datacenter"


#: The process node and power class A100 shares with TPU v4 (hardware-facts.md).
POWER_CLASS_7NM = "7 nm datacenter"


def _datacenter_gpu(
    key: str,
    *,
    name: str,
    gpu_name: str,
    source: str,
    sms: int,
    clock_hz: float,
    peak_tflops: Mapping[str, float],
    tdp_w: float,
    idle_w: float,
    node_nm: float,
    l1_per_sm_kib: int,
    l2_mib: int,
    l2_bps: Sourced,
    dram_gb: float,
    dram_bps: float,
    dram_label: str,
    sram_pj: tuple[float, float],
    note: str,
    family_rank: int,
    power_class: str | None = None,
) -> TargetSpec:
    peaks = {
        dtype: datasheet(tflops * 1e12, f"{source}: dense {dtype.upper()} {tflops:g} TFLOPS")
        for dtype, tflops in peak_tflops.items()
    }
    l1_pj, l2_pj = sram_pj
    return TargetSpec(
        key=key,
        name=name,
        family=FAMILY,
        architecture="gpu",
        compute_units=datasheet(sms, f"{source}: {sms} SMs"),
        compute_unit_name="SM",
        clock_hz=datasheet(clock_hz, f"{source}: boost clock {fmt_si(clock_hz, 'Hz')}"),
        peak_ops_per_s=peaks,
        energy_per_op_j=rules.energy_per_op(peaks, tdp_w),
        launch_overhead_s=rules.launch_overhead(),
        kernel_overhead_s=rules.kernel_overhead(),
        idle_power_w=estimated(idle_w, "an idle SXM board draws about 10-15% of its TDP"),
        tdp_w=datasheet(tdp_w, f"{source}: up to {tdp_w:g} W"),
        ground_truth="measured",
        family_rank=family_rank,
        power_class=power_class,
        process_node_nm=datasheet(node_nm, f"{source}: TSMC {node_nm:g} nm class process"),
        tiers=[
            rules.l1_tier(
                per_sm_bytes=datasheet(
                    l1_per_sm_kib * KiB, f"{source}: {l1_per_sm_kib} KiB L1/shared per SM"
                ),
                sms=sms,
                clock_hz=clock_hz,
                pj_per_byte=l1_pj,
            ),
            rules.l2_tier(
                capacity=datasheet(l2_mib * MiB, f"{source}: L2 {l2_mib} MB (binary MiB)"),
                bandwidth=l2_bps,
                clock_hz=clock_hz,
                pj_per_byte=l2_pj,
            ),
            rules.dram_tier(
                capacity=datasheet(
                    dram_gb * GiB, f"{source}: {dram_label} {dram_gb:g} GB (binary GiB)"
                ),
                bandwidth=datasheet(dram_bps, f"{source}: {dram_label} {fmt_si(dram_bps, 'B/s')}"),
                label=dram_label,
                pj_per_byte=15.0,
            ),
        ],
        description=(
            f"{name}: datasheet peaks (dense tensor figures), measured with CUDA events and "
            f"the NVML energy counter at the default {tdp_w:g} W power limit. "
            "FP32 is the non-tensor CUDA-core peak; TF32 tensor-core matmul is its own "
            f"dtype (tf32). {note}"
        ),
        fingerprint={"gpu_name": gpu_name},
    )


def _hopper_sxm(
    key: str,
    *,
    name: str,
    gpu_name: str,
    source: str,
    dram_gb: float,
    dram_bps: float,
    dram_label: str,
    note: str,
    family_rank: int,
) -> TargetSpec:
    """The GH100 die of the H100 and H200 SXM parts: the same SMs, clocks, peaks,
    power and L2; only the memory differs."""
    sms, clock = 132, 1.98e9
    l2_value, l2_formula = rules.l2_bandwidth_by_sm(sms, clock)
    return _datacenter_gpu(
        key,
        name=name,
        gpu_name=gpu_name,
        source=source,
        sms=sms,
        clock_hz=clock,
        peak_tflops={
            "fp32": 66.9,
            "tf32": 494.7,
            "fp16": 989.4,
            "bf16": 989.4,
            "fp8": 1979,
            "int8": 1979,
        },
        tdp_w=700.0,
        idle_w=70.0,
        node_nm=4,
        l1_per_sm_kib=256,
        l2_mib=50,
        l2_bps=estimated(l2_value, f"{l2_formula}; calibrate with vector_add"),
        dram_gb=dram_gb,
        dram_bps=dram_bps,
        dram_label=dram_label,
        sram_pj=(0.5, 3.0),
        note=note,
        family_rank=family_rank,
    )


def h100_sxm5_80gb() -> TargetSpec:
    """NVIDIA H100 SXM5 80 GB (Hopper GH100)."""
    return _hopper_sxm(
        "h100_sxm5_80gb",
        name="NVIDIA H100 SXM5 80GB",
        gpu_name="NVIDIA H100 80GB HBM3",
        source="NVIDIA H100 SXM5 datasheet",
        dram_gb=80,
        dram_bps=3.35e12,
        dram_label="HBM3",
        note="Tensor peaks assume the datasheet's clocks (the FP16 figure implies 1.83 GHz).",
        family_rank=2,
    )


def h200_sxm_141gb() -> TargetSpec:
    """NVIDIA H200 SXM 141 GB: H100's die with HBM3e."""
    return _hopper_sxm(
        "h200_sxm_141gb",
        name="NVIDIA H200 SXM 141GB",
        gpu_name="NVIDIA H200",
        source="NVIDIA H200 SXM datasheet",
        dram_gb=141,
        dram_bps=4.8e12,
        dram_label="HBM3e",
        note="Same compute and L2 as H100 SXM (same die); more and faster memory.",
        family_rank=3,
    )


def a100_sxm4_80gb() -> TargetSpec:
    """NVIDIA A100 SXM4 80 GB (Ampere GA100)."""
    source = "NVIDIA A100 SXM4 datasheet"
    sms, clock = 108, 1.41e9
    return _datacenter_gpu(
        "a100_sxm4_80gb",
        name="NVIDIA A100 SXM4 80GB",
        gpu_name="NVIDIA A100-SXM4-80GB",
        source=source,
        sms=sms,
        clock_hz=clock,
        peak_tflops={"fp32": 19.5, "tf32": 156, "fp16": 312, "bf16": 312, "int8": 624},
        tdp_w=400.0,
        idle_w=50.0,
        node_nm=7,
        l1_per_sm_kib=192,
        l2_mib=40,
        l2_bps=derived(
            rules.A100_L2_BYTES_PER_CLK * clock,
            f"A100 whitepaper: {rules.A100_L2_BYTES_PER_CLK} B/clk L2 read bandwidth x "
            f"{fmt_si(clock, 'Hz')}",
        ),
        dram_gb=80,
        dram_bps=2.039e12,
        dram_label="HBM2e",
        sram_pj=(0.75, 4.0),
        note="The 40 GB part (1.555 TB/s) is a different target.",
        # the family's slowest part, and the 7 nm datacenter part TPU v4 is
        # compared with for energy per op (hardware-facts.md)
        family_rank=1,
        power_class=POWER_CLASS_7NM,
    )


def datacenter_targets() -> list[TargetSpec]:
    """The three datasheet parts."""
    return [h100_sxm5_80gb(), h200_sxm_141gb(), a100_sxm4_80gb()]
