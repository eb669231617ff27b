"""TPU target specs: TPU v4 and the Coral Edge TPU (figures gathered in
hardware-facts.md). No silicon is reachable for either: both are
consistency-only, judged by invariants alone.

Energy per op is derived as TDP / peak. For TPU v4 that gives about 0.7 pJ per
op, above H100's 0.35 pJ (4 nm): the datasheet figure is kept as published; a
consistency check that expects the opposite ranking reports it as a finding.
"""

from __future__ import annotations

import math

from graphsval_core.plugin_api import MemoryTier, TargetSpec, datasheet, derived, estimated, fmt_si

KiB = 1024
MiB = 1024**2
GiB = 1024**3

FAMILY = "tpu"
FACTS = "hardware-facts.md"


def tpu_v4() -> TargetSpec:
    """One TPU v4 chip: 2 TensorCores, each with 4 MXUs of 128x128 at 1.05 GHz."""
    source = "TPU v4 (hardware-facts.md, v4 system paper)"
    cores, mxus, side, clock = 2, 4, 128, 1.05e9
    peak = 275e12
    tdp = 192.0
    # operand feed of one MXU: one row and one column of bf16 (2 B) per cycle
    feed = 2 * (side + side)
    vmem_bw = cores * mxus * feed * clock
    hbm_bw = 1.2e12
    cmem_bw = math.sqrt(vmem_bw * hbm_bw)
    mxu_peak = cores * mxus * side * side * 2 * clock
    return TargetSpec(
        key="tpu_v4",
        name="Google TPU v4 (2 TensorCores x 4 MXUs of 128x128)",
        family=FAMILY,
        architecture="systolic",
        compute_units=datasheet(cores, f"{source}: 2 TensorCores per chip"),
        compute_unit_name="TensorCore",
        clock_hz=datasheet(clock, f"{source}: 1.05 GHz"),
        peak_ops_per_s={
            "bf16": datasheet(
                peak,
                f"{source}: 275 TFLOPS BF16 (2 x 4 MXUs x 128x128 x 2 x 1.05 GHz = "
                f"{fmt_si(mxu_peak, 'FLOP/s')})",
            ),
            "int8": datasheet(peak, f"{source}: 275 TOPS INT8"),
        },
        energy_per_op_j={
            "bf16": derived(tdp / peak, "TDP 192 W / peak 275 TFLOPS BF16"),
            "int8": derived(tdp / peak, "TDP 192 W / peak 275 TOPS INT8"),
        },
        launch_overhead_s=estimated(10e-6, "host dispatch of one compiled XLA computation"),
        idle_power_w=estimated(
            0.3 * tdp, "about 30% of TDP (datacenter accelerators idle at 10-30% of TDP)"
        ),
        tdp_w=datasheet(tdp, f"{source}: 192 W TDP (170 W mean)"),
        ground_truth="consistency_only",
        power_mode="default",
        # compared with A100, the other 7 nm datacenter part, for energy per op
        # (hardware-facts.md; not with H100: 7 nm vs 4 nm)
        power_class="7 nm datacenter",
        process_node_nm=datasheet(7, f"{source}: 7 nm"),
        tiers=[
            MemoryTier(
                "l1",
                datasheet(16 * MiB, f"{source}: 16 MiB VMEM per TensorCore"),
                True,
                cores,
                derived(
                    vmem_bw,
                    f"{cores} TensorCores x {mxus} MXUs x {feed} B/cycle operand feed "
                    f"(2 B x ({side} + {side})) x {fmt_si(clock, 'Hz')}",
                ),
                estimated(2.0, "a few cycles for a vector-memory access"),
                label="VMEM (per TensorCore)",
                energy_per_byte_j=estimated(0.75e-12, f"{FACTS}: 0.5-1 pJ/B from L1-class SRAM"),
            ),
            MemoryTier(
                "l2",
                datasheet(128 * MiB, f"{source}: 128 MiB CMEM"),
                False,
                1,
                estimated(
                    cmem_bw,
                    "not published; the geometric mean of the VMEM feed and HBM bandwidths",
                ),
                estimated(50.0, "large on-chip SRAM a few tens of cycles away"),
                label="CMEM (shared)",
                energy_per_byte_j=estimated(5e-12, f"{FACTS}: 2-5 pJ/B L2, 5-15 pJ/B LLC"),
            ),
            MemoryTier(
                "dram",
                datasheet(32 * GiB, f"{source}: 32 GiB HBM2e"),
                False,
                1,
                datasheet(hbm_bw, f"{source}: HBM2e 1.2 TB/s"),
                estimated(500.0, "HBM load latency, as on GPUs of the same generation"),
                label="HBM2e",
                energy_per_byte_j=estimated(
                    15e-12, f"{FACTS}: 15-30 pJ/B DRAM, HBM at the lower end"
                ),
            ),
        ],
        description=(
            "Consistency-only: no TPU v4 silicon is reachable; only invariants are checked. "
            "Energy per op is TDP / peak (about 0.7 pJ, 0.62 pJ at the 170 W mean power), above "
            "H100's 0.35 pJ: kept as published, not bent to fit an expected ranking."
        ),
    )


def coral_edge_tpu() -> TargetSpec:
    """The Coral Edge TPU: 4 INT8 TOPS at about 2 W, int8 only, 8 MB of SRAM."""
    source = "Coral Edge TPU datasheet (hardware-facts.md)"
    peak, power = 4e12, 2.0
    side = 64  # the commonly reported 64x64 MAC array (not published by Google)
    clock = peak / (2 * side * side)
    sram_bw = (side + side) * clock  # one row and one column of int8 (1 B) per cycle
    return TargetSpec(
        key="coral_edge_tpu",
        name="Coral Edge TPU (USB / M.2 / PCIe)",
        family=FAMILY,
        architecture="systolic",
        compute_units=estimated(1, "one Edge TPU systolic array"),
        compute_unit_name="Edge TPU",
        clock_hz=estimated(
            clock,
            f"not published; 4 TOPS / (2 ops x {side}x{side} MACs), assuming the commonly "
            f"reported {side}x{side} array",
        ),
        peak_ops_per_s={"int8": datasheet(peak, f"{source}: 4 TOPS INT8 (max frequency)")},
        energy_per_op_j={"int8": derived(power / peak, "2 W / peak 4 TOPS INT8 (2 TOPS/W)")},
        register_tile_bytes=derived(
            3 * side * side,
            f"one {side}x{side} int8 output tile with its operands (3 x {side} x {side} x 1 B), "
            f"so the model's tile is the array's; the 64 KiB default made it "
            f"147x147 (graphsval check: tpu.systolic_fill)",
        ),
        launch_overhead_s=estimated(
            200e-6, "one libedgetpu invoke, a host round trip over USB or PCIe"
        ),
        idle_power_w=estimated(0.4, "about 20% of the 2 W active power"),
        tdp_w=datasheet(power, f"{source}: about 2 W (2 TOPS/W)"),
        ground_truth="consistency_only",
        power_mode="max",
        process_node_nm=estimated(28, "not published; assumed 28 nm for a 2019 edge ASIC"),
        tiers=[
            MemoryTier(
                "l2",
                datasheet(8 * MiB, f"{source}: 8 MB on-chip SRAM for parameters"),
                False,
                1,
                estimated(
                    sram_bw,
                    f"operand feed of a {side}x{side} array: ({side} + {side}) B/cycle int8 x "
                    f"{fmt_si(clock, 'Hz')}",
                ),
                estimated(5.0, "on-chip SRAM, a few cycles"),
                label="on-chip SRAM (parameters)",
                energy_per_byte_j=estimated(3e-12, f"{FACTS}: 2-5 pJ/B from L2-class SRAM"),
            ),
            MemoryTier(
                "dram",
                estimated(4 * GiB, "host memory the model streams from; not the Edge TPU's own"),
                False,
                1,
                estimated(
                    0.4e9,
                    "host link, well under 1 GB/s: USB 3.0 (5 Gbit/s, ~400 MB/s achievable) "
                    "or PCIe Gen2 x1 (500 MB/s)",
                ),
                estimated(50_000.0, "a USB / PCIe transfer round trip, tens of microseconds"),
                label="host link (USB 3 / PCIe)",
                energy_per_byte_j=estimated(
                    100e-12, f"host DRAM read (15-30 pJ/B, {FACTS}) plus the link's PHY"
                ),
            ),
        ],
        description=(
            "Consistency-only: int8 only; parameters live in 8 MB of on-chip SRAM (the l2 "
            "tier) and whatever does not fit streams from the host over USB 3 or PCIe (the "
            "dram tier). Power mode 'max' is the max-frequency libedgetpu runtime."
        ),
    )


def tpu_targets() -> list[TargetSpec]:
    """TPU v4 and the Coral Edge TPU."""
    return [tpu_v4(), coral_edge_tpu()]
