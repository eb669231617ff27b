"""KPU target specs (figures from the reference design the seeds came from,
gathered in hardware-facts.md). No silicon exists: these targets are
consistency-only and every figure is datasheet-level or derived from one."""

from __future__ import annotations

from graphsval_core.plugin_api import MemoryTier, TargetSpec, datasheet, derived, estimated

KiB = 1024
GiB = 1024**3
SOURCE = "KPU reference design (hardware-facts.md)"

# Energy per op is the profile power's dynamic share over the peak: the model
# charges static power separately (idle_power_w x latency), so deriving it from
# the whole profile power counted the idle power twice and predicted a large
# matmul above the profile power (found by `graphsval check`, bounds.power).
DYNAMIC_NOTE = (
    "the model charges the idle power separately, so the whole profile power / peak "
    "counted it twice (graphsval check: bounds.power)"
)

# Per-tile scratchpad feed: an R x C PE array takes one row (R) and one column
# (C) of operands per cycle; at 2 bytes (bf16) that is 2 * (R + C) B/cycle.


def _kpu(
    key: str,
    *,
    tiles: int,
    pe_shape: str,
    clock_hz: float,
    int8_ops: float,
    bf16_flops: float,
    dram_bps: float,
    dram_label: str,
    dram_bytes: float,
    dram_pj_per_byte: float,
    power_w: float,
    family_rank: int,
    power_class: str | None = None,
) -> TargetSpec:
    rows, cols = (int(x) for x in pe_shape.split("x"))
    feed = 2 * (rows + cols)
    idle_w = power_w / 12
    dynamic_w = power_w - idle_w
    return TargetSpec(
        key=key,
        name=f"KPU {key.split('_')[1].upper()} ({tiles} tiles of {pe_shape} PEs)",
        family="kpu",
        architecture="domain_flow",
        compute_units=datasheet(tiles, SOURCE),
        compute_unit_name="tile",
        clock_hz=datasheet(clock_hz, f"{SOURCE}: default profile"),
        peak_ops_per_s={
            "int8": datasheet(int8_ops, f"{SOURCE}: peak INT8"),
            "bf16": datasheet(bf16_flops, f"{SOURCE}: peak BF16"),
        },
        energy_per_op_j={
            "int8": derived(
                dynamic_w / int8_ops,
                f"(profile power {power_w:g} W - idle {idle_w:g} W) / peak INT8 ops/s; "
                f"{DYNAMIC_NOTE}",
            ),
            "bf16": derived(
                dynamic_w / bf16_flops,
                f"(profile power {power_w:g} W - idle {idle_w:g} W) / peak BF16 FLOP/s; "
                f"{DYNAMIC_NOTE}",
            ),
        },
        launch_overhead_s=estimated(1e-6, "estimated host-to-KPU dispatch of one operator"),
        idle_power_w=estimated(
            idle_w, "estimated at 1/12 of the profile power (T64: 0.5 W of 6 W)"
        ),
        tdp_w=datasheet(power_w, f"{SOURCE}: power of the default profile"),
        ground_truth="consistency_only",
        power_mode="default",
        family_rank=family_rank,
        power_class=power_class,
        tiers=[
            MemoryTier(
                "l1",
                datasheet(256 * KiB, f"{SOURCE}: 256 KiB scratchpad per tile"),
                True,
                tiles,
                derived(
                    tiles * feed * clock_hz,
                    f"{tiles} tiles x {feed} B/cycle operand feed (2 B x (rows + cols)) x clock",
                ),
                estimated(2.0, "estimated SRAM scratchpad access"),
                label="tile scratchpad",
                energy_per_byte_j=estimated(
                    0.5e-12, "hardware-facts.md: 0.5-1 pJ/B from L1-class SRAM"
                ),
            ),
            MemoryTier(
                "dram",
                estimated(dram_bytes, f"{dram_label} capacity not given by the reference design"),
                False,
                1,
                datasheet(dram_bps, f"{SOURCE}: {dram_label} bandwidth"),
                estimated(100.0, "estimated DRAM access latency"),
                label=dram_label,
                energy_per_byte_j=estimated(
                    dram_pj_per_byte * 1e-12, "hardware-facts.md: 15-30 pJ/B DRAM, HBM lower"
                ),
            ),
        ],
        description=(
            "Consistency-only: no silicon and no simulator output yet; only invariants are checked."
        ),
    )


def kpu_targets() -> list[TargetSpec]:
    """The three KPU configurations."""
    return [
        _kpu(
            "kpu_t64",
            tiles=64,
            pe_shape="32x32",
            clock_hz=475e6,
            int8_ops=62e12,
            bf16_flops=31e12,
            dram_bps=64e9,
            dram_label="LPDDR5",
            dram_bytes=8 * GiB,
            dram_pj_per_byte=20,
            power_w=6.0,
            family_rank=1,
        ),
        _kpu(
            "kpu_t256",
            tiles=256,
            pe_shape="32x32",
            clock_hz=600e6,
            int8_ops=315e12,
            bf16_flops=157e12,
            dram_bps=256e9,
            dram_label="LPDDR5",
            dram_bytes=32 * GiB,
            dram_pj_per_byte=20,
            power_w=30.0,
            family_rank=2,
            # the edge part compared with a Jetson AGX Orin and a desktop CPU for
            # energy per op (hardware-facts.md)
            power_class="edge, tens of watts",
        ),
        _kpu(
            "kpu_t768",
            tiles=768,
            pe_shape="16x8",
            clock_hz=1.375e9,
            int8_ops=1354e12,
            bf16_flops=677e12,
            dram_bps=1638e9,
            dram_label="HBM3",
            dram_bytes=64 * GiB,
            dram_pj_per_byte=7,
            power_w=60.0,
            family_rank=3,
        ),
    ]
