"""The Intel Core i7-12700K target spec (figures from hardware-facts.md).

Alder Lake is hybrid: 8 P-cores (Golden Cove) and 4 E-cores (Gracemont). The
memory model has one per-unit capacity per tier, so per-unit tiers use the
P-core figure and the E-core figure is noted in the provenance. Rates are
all-core: the P-cores at 4.7 GHz and the E-cores at 3.6 GHz.
"""

from __future__ import annotations

from graphsval_core.plugin_api import MemoryTier, TargetSpec, datasheet, derived, estimated
from graphsval_cpu import library

KiB = 1024
MiB = 1024**2
GiB = 1024**3

SOURCE = "Intel i7-12700K (hardware-facts.md)"
ENERGY = "hardware-facts.md order-of-magnitude table"

P_CORES, E_CORES = 8, 4
P_HZ, E_HZ = 4.7e9, 3.6e9  # all-core turbo clocks (estimated, see clock_hz)
P_FLOP_CYCLE, E_FLOP_CYCLE = 32, 16  # fp32: P 2x256-bit FMA, E 16 (hardware-facts.md)

FP32_PEAK = P_CORES * P_FLOP_CYCLE * P_HZ + E_CORES * E_FLOP_CYCLE * E_HZ
FP32_FORMULA = (
    f"{P_CORES} P x {P_FLOP_CYCLE} FLOP/cycle x {P_HZ / 1e9:g} GHz + "
    f"{E_CORES} E x {E_FLOP_CYCLE} FLOP/cycle x {E_HZ / 1e9:g} GHz (AVX2 + FMA3, no AVX-512); "
    "hardware-facts.md: about 1.4 TFLOPS all-core"
)


def _bandwidth(p_bytes: int, e_bytes: int, e_units: int, what: str) -> tuple[float, str]:
    """Aggregate bandwidth of a tier from bytes/cycle per unit, with its formula."""
    value = P_CORES * p_bytes * P_HZ + e_units * e_bytes * E_HZ
    formula = (
        f"{what}: {P_CORES} P x {p_bytes} B/cycle x {P_HZ / 1e9:g} GHz + "
        f"{e_units} x {e_bytes} B/cycle x {E_HZ / 1e9:g} GHz (bytes/cycle not in the source)"
    )
    return value, formula


def _tiers() -> list[MemoryTier]:
    l1_bw, l1_src = _bandwidth(64, 32, E_CORES, "L1d loads, P 2x32 B, E 2x16 B per cycle")
    l2_bw, l2_src = _bandwidth(64, 64, 1, "L2 64 B/cycle per P-core and per E-cluster")
    l3_bw, l3_src = _bandwidth(32, 32, 1, "ring stops (8 P + 1 E-cluster) 32 B/cycle")
    return [
        MemoryTier(
            "l1",
            datasheet(48 * KiB, f"{SOURCE}: L1d 48 KiB per P-core (E-core: 32 KiB)"),
            True,
            datasheet(P_CORES + E_CORES, f"{SOURCE}: one L1d per core, 8 P + 4 E"),
            estimated(l1_bw, l1_src),
            estimated(1.06, "5 cycles at 4.7 GHz"),
            label="L1d",
            energy_per_byte_j=estimated(1e-12, f"{ENERGY}: 0.5-1 pJ/B from L1"),
        ),
        MemoryTier(
            "l2",
            datasheet(
                1.25 * MiB,
                f"{SOURCE}: L2 1.25 MiB per P-core; the 4 E-cores share one 2 MiB L2 "
                "(12 MiB in all; 9 units x 1.25 MiB = 11.25 MiB here)",
            ),
            True,
            datasheet(P_CORES + 1, f"{SOURCE}: 8 P-core L2s + 1 E-cluster L2"),
            estimated(l2_bw, l2_src),
            estimated(3.19, "15 cycles at 4.7 GHz"),
            energy_per_byte_j=estimated(3e-12, f"{ENERGY}: 2-5 pJ/B from L2"),
        ),
        MemoryTier(
            "l3",
            datasheet(25 * MiB, f"{SOURCE}: L3 25 MiB shared"),
            False,
            1,
            estimated(l3_bw, l3_src),
            estimated(13.8, "65 cycles at 4.7 GHz"),
            label="LLC",
            energy_per_byte_j=estimated(10e-12, f"{ENERGY}: 5-15 pJ/B from a last-level cache"),
            non_inclusive=True,
        ),
        MemoryTier(
            "dram",
            estimated(32 * GiB, "a typical 2x16 GiB DDR5 kit (not a CPU figure)"),
            False,
            1,
            datasheet(76.8e9, f"{SOURCE}: DDR5-4800 dual channel, 4800 MT/s x 8 B x 2 = 76.8 GB/s"),
            estimated(85.0, "typical DDR5 load-to-use latency"),
            label="DDR5-4800",
            energy_per_byte_j=estimated(20e-12, f"{ENERGY}: 15-30 pJ/B from DRAM"),
        ),
    ]


def i7_12700k() -> TargetSpec:
    """The i7-12700K with every figure sourced."""
    return TargetSpec(
        key="i7_12700k",
        name="Intel Core i7-12700K",
        family="cpu",
        architecture="cpu",
        compute_units=datasheet(P_CORES + E_CORES, f"{SOURCE}: 8 P-cores + 4 E-cores, 20 threads"),
        compute_unit_name="core",
        clock_hz=estimated(
            P_HZ,
            "all-core P-core turbo 4.7 GHz (datasheet: base 3.6, max turbo 4.9-5.0; "
            "E-cores 2.7-3.8, 3.6 all-core); consistent with the source's 1.4 TFLOPS all-core",
        ),
        peak_ops_per_s={
            "fp32": derived(FP32_PEAK, FP32_FORMULA),
            "bf16": derived(
                FP32_PEAK,
                "equal to fp32: Alder Lake has no native bf16 FMA (no AVX-512 BF16, no AMX); "
                "bf16 is converted and computed in fp32",
            ),
        },
        energy_per_op_j={
            "fp32": estimated(
                1e-12,
                f"{ENERGY}: FP32 FMA 1-2 pJ at the ALU (5-7 nm), upper end for Intel 7 = "
                "2 pJ per FMA = 1 pJ/FLOP; excludes instruction overhead",
            ),
            "bf16": estimated(1e-12, "equal to fp32: bf16 is computed in fp32 after conversion"),
        },
        launch_overhead_s=library.dispatch(),
        fork_join_s=library.fork_join(P_CORES + E_CORES),
        gemv_fork_join_s=library.gemv_fork_join(["fp32"], P_CORES + E_CORES),
        parallel_grain_ops=library.grain(),
        # bf16 on Alder Lake runs neither MKL nor oneDNN's AMX path: no packing term for it
        pack_bps=library.pack_rate(["fp32"]),
        pack_min_rows=library.pack_min_rows(["fp32"]),
        # MKL's AVX2 sgemm kernel: 16 columns of C per row (Alder Lake has no AVX-512)
        accumulator_lanes=library.accumulator_lanes(
            ["fp32"], ["avx2", "fma"], vendor="GenuineIntel"
        ),
        idle_power_w=estimated(10.0, "desktop Alder Lake package power at idle"),
        tdp_w=datasheet(190.0, f"{SOURCE}: maximum turbo power 190 W (base power 125 W)"),
        process_node_nm=datasheet(10, "Intel ARK i7-12700K: lithography Intel 7 (10 nm class)"),
        # compared with a Jetson AGX Orin and a KPU T256 for energy per op (hardware-facts.md)
        power_class="edge, tens of watts",
        ground_truth="measured",
        tiers=_tiers(),
        description=(
            "Alder Lake hybrid, 8 P-cores + 4 E-cores; per-unit tiers use P-core figures. "
            "Energy from RAPL package (no DRAM domain)."
        ),
        fingerprint={"cpu_model": "12th Gen Intel(R) Core(TM) i7-12700K"},
    )
