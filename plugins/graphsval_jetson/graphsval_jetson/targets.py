"""Jetson Orin target specs (Ampere GA10B GPU), each in one power mode.

The power mode is part of a target: a Jetson's GPU clock, and so every peak,
depends on it. All three targets are specified in their fastest mode
(MAXN_SUPER on Orin Nano and NX with JetPack 6.1+, MAXN on AGX), the mode the
committed baselines were captured in.

Per-SM rates of GA10B (GA100-class third-generation tensor cores, 128 CUDA
cores and 4 tensor cores per SM), per clock, dense:

- FP32: 128 cores x 2 FLOP (FMA) = 256 FLOP/clk/SM
- TF32: 4 tensor cores x 128 FMA x 2 = 1024 FLOP/clk/SM
- FP16/BF16: 4 tensor cores x 256 FMA x 2 = 2048 FLOP/clk/SM
- INT8: 4096 op/clk/SM (twice FP16)

so a peak is ``rate x SMs x GPU clock``. Orin Nano's datasheet INT8 figure
(20 dense TOPS at 625 MHz, 67 sparse TOPS in Super) agrees with 4096 x 8 x clock.
"""

from __future__ import annotations

from attrs import frozen

from graphsval_core.plugin_api import (
    MemoryTier,
    Sourced,
    TargetSpec,
    datasheet,
    derived,
    estimated,
    fmt_si,
)

KiB = 1024
MiB = 1024**2
GiB = 1024**3

FAMILY = "jetson_orin"
FACTS = "hardware-facts.md"

#: Dense ops per clock per SM of GA10B, by dtype (see the module docstring).
OPS_PER_CLK_PER_SM: dict[str, int] = {"fp32": 256, "tf32": 1024, "fp16": 2048, "bf16": 2048}
INT8_OPS_PER_CLK_PER_SM = 4096
CORES_PER_SM = 128
TENSOR_CORES_PER_SM = 4

#: L1/shared per SM (Jetson Orin technical brief; not in hardware-facts.md).
L1_PER_SM_KIB = 192
#: L1 load width, 128 B/clk/SM (NVIDIA Ampere tuning guide).
L1_BYTES_PER_CLK_PER_SM = 128
#: L2 read width per SM, scaled from A100 (5120 B/clk for 108 SMs, A100 whitepaper).
L2_BYTES_PER_CLK_PER_SM = 5120 / 108


@frozen
class Board:
    """How the probe recognises a target's board.

    ``marker`` is a substring of the device-tree model (``/proc/device-tree/model``)
    of every carrier of this module; ``memory_gib`` tells memory variants apart.
    """

    label: str
    marker: str
    memory_gib: int


#: The board each target runs on, by target key.
BOARDS: dict[str, Board] = {
    "jetson_orin_nano_8gb": Board("Jetson Orin Nano 8GB", "Orin Nano", 8),
    "jetson_orin_nx_16gb": Board("Jetson Orin NX 16GB", "Orin NX", 16),
    "jetson_orin_agx_64gb": Board("Jetson AGX Orin 64GB", "AGX Orin", 64),
}


def _peaks(sms: int, clock_hz: float, int8: Sourced) -> dict[str, Sourced]:
    clock = fmt_si(clock_hz, "Hz")
    peaks: dict[str, Sourced] = {
        dtype: derived(
            rate * sms * clock_hz,
            f"{rate} dense {dtype} FLOP/clk/SM (GA10B: {CORES_PER_SM} CUDA cores, "
            f"{TENSOR_CORES_PER_SM} tensor cores per SM) x {sms} SMs x {clock}",
        )
        for dtype, rate in OPS_PER_CLK_PER_SM.items()
    }
    peaks["int8"] = int8
    return peaks


def _int8_derived(sms: int, clock_hz: float, datasheet_note: str) -> Sourced:
    value = INT8_OPS_PER_CLK_PER_SM * sms * clock_hz
    return derived(
        value,
        f"{INT8_OPS_PER_CLK_PER_SM} dense INT8 op/clk/SM x {sms} SMs x "
        f"{fmt_si(clock_hz, 'Hz')}; {datasheet_note}",
    )


#: The class of each part's top power mode: MAXN_SUPER on the Nano and NX, MAXN
#: on the AGX, which has no Super mode (hardware-facts.md compares them there).
TOP_MODE = "max"
#: The process node and power class of the AGX, shared with a KPU T256 and a
#: desktop CPU (hardware-facts.md).
POWER_CLASS_EDGE = "edge, tens of watts"


def _orin(
    key: str,
    *,
    name: str,
    source: str,
    sms: int,
    clock_hz: float,
    clock_note: str,
    int8: Sourced,
    power_mode: str,
    tdp_w: Sourced,
    idle_w: float,
    memory_gib: int,
    dram_bps: float,
    l2_mib: int,
    model: str,
    family_rank: int,
    power_class: str | None = None,
) -> TargetSpec:
    peaks = _peaks(sms, clock_hz, int8)
    l1_bw = L1_BYTES_PER_CLK_PER_SM * sms * clock_hz
    l2_bw = L2_BYTES_PER_CLK_PER_SM * sms * clock_hz
    clock = fmt_si(clock_hz, "Hz")
    return TargetSpec(
        key=key,
        name=f"{name} ({power_mode})",
        family=FAMILY,
        architecture="gpu",
        compute_units=datasheet(sms, f"{source}: {sms} SMs ({sms * CORES_PER_SM} CUDA cores)"),
        compute_unit_name="SM",
        clock_hz=datasheet(clock_hz, f"{source}: GPU {clock} {clock_note}"),
        peak_ops_per_s=peaks,
        energy_per_op_j={
            dtype: derived(
                tdp_w.value / peak.value,
                f"module power {tdp_w.value:g} W / dense peak {dtype} "
                f"{fmt_si(peak.value, 'op/s')} (charges the whole module to the GPU's ALUs)",
            )
            for dtype, peak in peaks.items()
        },
        launch_overhead_s=estimated(
            20e-6,
            "PyTorch eager launch of one CUDA kernel from the Orin's Cortex-A78AE CPU, "
            "about 4x a desktop host's ~5 us",
        ),
        kernel_overhead_s=estimated(
            20e-6,
            "each further kernel of one call (linear's bias and product): its host-side "
            "launch from the Cortex-A78AE, queued behind the first",
        ),
        idle_power_w=estimated(
            idle_w, f"module input (VDD_IN) with the GPU idle in {power_mode}, about {idle_w:g} W"
        ),
        tdp_w=tdp_w,
        ground_truth="measured",
        power_mode=power_mode,
        # every part is targeted in its top mode: those compare across the family
        power_mode_class=TOP_MODE,
        family_rank=family_rank,
        power_class=power_class,
        process_node_nm=datasheet(8, "NVIDIA Orin SoC: Samsung 8N (8 nm) process"),
        tiers=[
            MemoryTier(
                "l1",
                estimated(
                    L1_PER_SM_KIB * KiB,
                    f"Jetson Orin technical brief: {L1_PER_SM_KIB} KB L1/shared per SM "
                    f"(not in {FACTS})",
                ),
                True,
                sms,
                derived(
                    l1_bw,
                    f"{L1_BYTES_PER_CLK_PER_SM} B/clk/SM L1 load width (Ampere tuning guide) x "
                    f"{sms} SMs x {clock}",
                ),
                estimated(round(33 / clock_hz * 1e9, 1), "~33 cycles L1 hit (microbenchmarks)"),
                label="L1 / shared memory per SM",
                energy_per_byte_j=estimated(0.75e-12, f"{FACTS}: 0.5-1 pJ/B from L1"),
            ),
            MemoryTier(
                "l2",
                datasheet(l2_mib * MiB, f"{FACTS}: GPU L2 {l2_mib} MiB"),
                False,
                1,
                estimated(
                    l2_bw,
                    "A100's L2 read width per SM (5120 B/clk / 108 SMs, A100 whitepaper) x "
                    f"{sms} SMs x {clock}; calibrate with vector_add",
                ),
                estimated(round(250 / clock_hz * 1e9, 1), "~250 cycles L2 hit (microbenchmarks)"),
                label="GPU L2 (shared)",
                energy_per_byte_j=estimated(4e-12, f"{FACTS}: 2-5 pJ/B from L2"),
            ),
            MemoryTier(
                "dram",
                datasheet(
                    memory_gib * GiB, f"{source}: {memory_gib} GB LPDDR5, shared with the CPU"
                ),
                False,
                1,
                datasheet(dram_bps, f"{FACTS}: LPDDR5 {fmt_si(dram_bps, 'B/s')} in {power_mode}"),
                estimated(600.0, "~600 ns LPDDR5 load from the GPU (microbenchmarks)"),
                label="LPDDR5 (unified)",
                energy_per_byte_j=estimated(20e-12, f"{FACTS}: 15-30 pJ/B from DRAM"),
            ),
        ],
        description=(
            f"{name} in power mode {power_mode}: the power mode is part of this target (GPU "
            f"clock {clock}); capture and validate in that mode only. Measured with CUDA events; "
            "energy from the INA3221 VDD_IN rail (whole module)."
        ),
        fingerprint={"model": model, "power_mode": power_mode},
    )


def orin_nano_8gb() -> TargetSpec:
    """Jetson Orin Nano 8GB in MAXN_SUPER (JetPack 6.1+ "Super" mode)."""
    source = "NVIDIA Jetson Orin Nano 8GB datasheet"
    return _orin(
        "jetson_orin_nano_8gb",
        name="NVIDIA Jetson Orin Nano 8GB",
        source=source,
        sms=8,
        clock_hz=1.02e9,
        clock_note="in the Super mode (625 MHz originally)",
        int8=datasheet(
            33.5e12,
            "NVIDIA Jetson Orin Nano Super: 67 sparse INT8 TOPS, halved to dense "
            f"({FACTS}: about 33 dense; 4096 x 8 SMs x 1.02 GHz = 33.4 T)",
        ),
        power_mode="MAXN_SUPER",
        tdp_w=estimated(25.0, f"MAXN_SUPER is uncapped; 25 W, the highest capped mode ({FACTS})"),
        idle_w=5.0,
        memory_gib=8,
        dram_bps=102e9,
        l2_mib=2,
        model="NVIDIA Jetson Orin Nano Engineering Reference Developer Kit Super",
        family_rank=1,
    )


def orin_nx_16gb() -> TargetSpec:
    """Jetson Orin NX 16GB in MAXN_SUPER."""
    source = "NVIDIA Jetson Orin NX 16GB datasheet"
    return _orin(
        "jetson_orin_nx_16gb",
        name="NVIDIA Jetson Orin NX 16GB",
        source=source,
        sms=8,
        clock_hz=1.173e9,
        clock_note="in the Super mode (918 MHz originally)",
        int8=_int8_derived(
            8,
            1.173e9,
            "the datasheet's 157 sparse TOPS (78.5 dense) include the two DLAs, which "
            "torch on the GPU does not use",
        ),
        power_mode="MAXN_SUPER",
        tdp_w=datasheet(40.0, f"{FACTS}: 40 W in the Super mode"),
        idle_w=5.0,
        memory_gib=16,
        dram_bps=102e9,
        l2_mib=2,
        model="NVIDIA Jetson Orin NX Engineering Reference Developer Kit Super",
        family_rank=2,
    )


def orin_agx_64gb() -> TargetSpec:
    """Jetson AGX Orin 64GB in MAXN."""
    source = "NVIDIA Jetson AGX Orin 64GB datasheet"
    return _orin(
        "jetson_orin_agx_64gb",
        name="NVIDIA Jetson AGX Orin 64GB",
        source=source,
        sms=16,
        clock_hz=1.3e9,
        clock_note="maximum (MAXN)",
        int8=_int8_derived(
            16,
            1.3e9,
            "the datasheet's 275 sparse TOPS (137.5 dense) include the two DLAs; the GPU's "
            "own 170 sparse TOPS halve to 85 dense, which this matches",
        ),
        power_mode="MAXN",
        tdp_w=datasheet(60.0, f"{FACTS}: 15-60 W, 60 W in MAXN"),
        idle_w=8.0,
        memory_gib=64,
        dram_bps=204.8e9,
        l2_mib=4,
        model="NVIDIA Jetson AGX Orin Developer Kit",
        family_rank=3,
        # the edge part compared with a KPU and a desktop CPU for energy per op
        power_class=POWER_CLASS_EDGE,
    )


def jetson_targets() -> list[TargetSpec]:
    """The three Orin targets."""
    return [orin_nano_8gb(), orin_nx_16gb(), orin_agx_64gb()]
