"""The ``host_gpu`` target: this machine's GPU, described from NVML.

Three cases, each saying so in its provenance and description:

- NVML names a known datacenter part: that part's datasheet spec is reused
  (every figure's provenance says it was reused and why), with the detected
  clock and memory size;
- any other GPU: figures derived from what NVML reports (core count, clocks,
  bus width, power limit) plus per-architecture rates keyed by compute
  capability, stated as estimates;
- no GPU, driver or NVML library: placeholder figures, so ``host_gpu`` is still
  listed; its probe reports it unavailable.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs
from attrs import frozen

from graphsval_core.plugin_api import (
    MemoryTier,
    Provenance,
    Sourced,
    TargetSpec,
    derived,
    detected,
    estimated,
    fmt_bytes,
    fmt_si,
)
from graphsval_cuda import rules
from graphsval_cuda.nvml import GpuInfo, NvmlUnavailable
from graphsval_cuda.targets import datacenter_targets

KEY = "host_gpu"
#: Family of a host GPU that is not a known datacenter part.
FAMILY = "nvidia_gpu"
#: Provenance source of every placeholder figure (shown as "estimated: ...").
PLACEHOLDER = "no NVIDIA GPU detected on this machine; placeholder"


def _normalise(name: str) -> str:
    return " ".join(name.lower().split())


def known_part(gpu_name: str) -> TargetSpec | None:
    """The datasheet spec whose NVML name (``fingerprint['gpu_name']``) is ``gpu_name``."""
    for spec in datacenter_targets():
        if _normalise(spec.fingerprint["gpu_name"]) == _normalise(gpu_name):
            return spec
    return None


def host_gpu_spec(info: GpuInfo | NvmlUnavailable) -> TargetSpec:
    """The ``host_gpu`` spec for what NVML reported (see the module docstring)."""
    if isinstance(info, NvmlUnavailable):
        return placeholder_spec(info.reason)
    part = known_part(info.name)
    if part is not None:
        return _from_known_part(info, part)
    return _estimated_spec(info)


# --- a known datasheet part -----------------------------------------------------


def _reused(prov: Mapping[str, Provenance], note: str) -> dict[str, Provenance]:
    return {name: Provenance(p.kind, f"{p.source} [{note}]") for name, p in prov.items()}


def _from_known_part(info: GpuInfo, part: TargetSpec) -> TargetSpec:
    note = f"reused from {part.key}: NVML names this GPU {info.name!r}"
    tiers: list[MemoryTier] = []
    for tier in part.tiers:
        prov = _reused(tier.provenance, note)
        capacity = tier.capacity_bytes
        if tier.name == "dram":
            capacity = info.memory_total_bytes
            prov["capacity_bytes"] = Provenance(
                "detected", f"NVML memory total {fmt_bytes(capacity)}"
            )
        tiers.append(attrs.evolve(tier, capacity_bytes=capacity, provenance=prov))
    prov = _reused(part.provenance, note)
    clock = part.clock_hz
    if info.max_sm_clock_mhz:
        clock = info.max_sm_clock_mhz * 1e6
        prov["clock_hz"] = Provenance("detected", f"NVML max SM clock {info.max_sm_clock_mhz} MHz")
    return attrs.evolve(
        part,
        key=KEY,
        name=f"host GPU: {info.name} (matches {part.key})",
        clock_hz=clock,
        tiers=tiers,
        provenance=prov,
        detected=True,
        # this machine's GPU is no part of the family ladder or a power class:
        # the datasheet part it matches is compared there
        family_rank=None,
        power_class=None,
        fingerprint=_fingerprint(info),
        description=(
            f"This machine's GPU {info.index} ({info.name}), detected through NVML. It matches "
            f"the datasheet part {part.key}, whose peaks and tiers are reused; clock and memory "
            "size are read from NVML."
        ),
    )


def _fingerprint(info: GpuInfo) -> dict[str, str]:
    out = {"gpu_name": info.name}
    if info.driver_version:
        out["driver_version"] = info.driver_version
    return out


# --- any other GPU: per-architecture rates by compute capability ------------------


@frozen
class ArchRates:
    """Per-SM figures of one compute capability (NVIDIA architecture whitepapers)."""

    name: str
    cores_per_sm: int
    l1_per_sm_kib: int
    #: dense tensor-core ops per clock per SM, by dtype
    tensor_ops_per_clk: Mapping[str, int]


#: Dense tensor rates with FP32 accumulation (the workstation/datacenter rate;
#: GeForce cards halve FP16/BF16 with FP32 accumulation on Ampere).
ARCH_RATES: dict[tuple[int, int], ArchRates] = {
    (7, 0): ArchRates("Volta", 64, 128, {"fp16": 1024}),
    (7, 5): ArchRates("Turing", 64, 96, {"fp16": 1024, "int8": 2048}),
    (8, 0): ArchRates(
        "Ampere GA100", 64, 192, {"tf32": 1024, "fp16": 2048, "bf16": 2048, "int8": 4096}
    ),
    (8, 6): ArchRates(
        "Ampere GA10x", 128, 128, {"tf32": 512, "fp16": 1024, "bf16": 1024, "int8": 2048}
    ),
    (8, 7): ArchRates(
        "Ampere GA10B", 128, 192, {"tf32": 1024, "fp16": 2048, "bf16": 2048, "int8": 4096}
    ),
    (8, 9): ArchRates(
        "Ada", 128, 128, {"tf32": 256, "fp16": 512, "bf16": 512, "fp8": 1024, "int8": 2048}
    ),
    (9, 0): ArchRates(
        "Hopper",
        128,
        256,
        {"tf32": 2048, "fp16": 4096, "bf16": 4096, "fp8": 8192, "int8": 8192},
    ),
}

#: Assumed when NVML gives no compute capability.
DEFAULT_CAPABILITY = (8, 0)
#: Machine balance (FP32 FLOP per DRAM byte) assumed when NVML gives no core count.
ASSUMED_FLOP_PER_BYTE = 20.0
#: Figures assumed when NVML does not report them.
ASSUMED_CLOCK_HZ = 1.5e9
ASSUMED_DRAM_BPS = 1.0e12
ASSUMED_TDP_W = 300.0


def arch_rates(capability: tuple[int, int] | None) -> tuple[tuple[int, int], ArchRates, str]:
    """The table entry for ``capability``: itself, else the nearest older one."""
    if capability is None:
        cc = DEFAULT_CAPABILITY
        return cc, ARCH_RATES[cc], f"compute capability unknown; assumed {cc[0]}.{cc[1]}"
    if capability in ARCH_RATES:
        text = f"compute capability {capability[0]}.{capability[1]}"
        return capability, ARCH_RATES[capability], text
    older = [cc for cc in ARCH_RATES if cc <= capability] or [min(ARCH_RATES)]
    cc = max(older)
    return (
        cc,
        ARCH_RATES[cc],
        f"compute capability {capability[0]}.{capability[1]} not in the table; "
        f"using {cc[0]}.{cc[1]}'s rates",
    )


def _estimated_spec(info: GpuInfo) -> TargetSpec:
    """A spec for a GPU that is not a known datasheet part."""
    _, arch, cc_text = arch_rates(info.compute_capability)
    if info.max_sm_clock_mhz:
        clock = detected(
            info.max_sm_clock_mhz * 1e6, f"NVML max SM clock {info.max_sm_clock_mhz} MHz"
        )
    else:
        clock = estimated(ASSUMED_CLOCK_HZ, "NVML reports no max SM clock; assumed 1.5 GHz")
    bandwidth = info.dram_bandwidth_bps
    if bandwidth is not None:
        dram_bps = derived(
            bandwidth,
            f"NVML max memory clock {info.max_mem_clock_mhz} MHz x 2 (double data rate) x "
            f"{info.memory_bus_width_bits}-bit bus / 8",
        )
    else:
        dram_bps = estimated(
            ASSUMED_DRAM_BPS, "NVML reports no memory clock or bus width; assumed 1 TB/s"
        )
    sms = _sm_count(info, arch, cc_text, clock.value, dram_bps.value)
    n_sms = int(sms.value)
    cores = n_sms * arch.cores_per_sm
    peaks: dict[str, Sourced] = {
        "fp32": derived(
            2 * cores * clock.value,
            f"2 FLOP/FMA x {cores} CUDA cores ({n_sms} SMs x {arch.cores_per_sm}) x "
            f"{fmt_si(clock.value, 'Hz')}",
        )
    }
    for dtype, per_clk in arch.tensor_ops_per_clk.items():
        peaks[dtype] = estimated(
            per_clk * n_sms * clock.value,
            f"{per_clk} dense {dtype} tensor ops/clk/SM ({arch.name}, {cc_text}) x "
            f"{n_sms} SMs x {fmt_si(clock.value, 'Hz')}",
        )
    if info.power_limit_w:
        tdp = detected(info.power_limit_w, "NVML default power limit")
    else:
        tdp = estimated(ASSUMED_TDP_W, "NVML reports no power limit; assumed 300 W")
    l1_total = arch.l1_per_sm_kib * 1024 * n_sms
    l2_value, l2_formula = rules.l2_bandwidth_by_sm(n_sms, clock.value)
    hbm = (info.memory_bus_width_bits or 0) >= 1024
    return TargetSpec(
        key=KEY,
        name=f"host GPU: {info.name}",
        family=FAMILY,
        architecture="gpu",
        compute_units=sms,
        compute_unit_name="SM",
        clock_hz=clock,
        peak_ops_per_s=peaks,
        energy_per_op_j=rules.energy_per_op(peaks, tdp.value),
        launch_overhead_s=rules.launch_overhead(),
        kernel_overhead_s=rules.kernel_overhead(),
        idle_power_w=estimated(0.1 * tdp.value, "10% of the power limit"),
        tdp_w=tdp,
        ground_truth="measured",
        detected=True,
        tiers=[
            rules.l1_tier(
                per_sm_bytes=estimated(
                    arch.l1_per_sm_kib * 1024,
                    f"{arch.l1_per_sm_kib} KiB L1/shared per SM for {arch.name} "
                    "(NVML reports no cache sizes)",
                ),
                sms=n_sms,
                clock_hz=clock.value,
                pj_per_byte=0.75,
                kind="estimated",
            ),
            rules.l2_tier(
                capacity=estimated(
                    2 * l1_total,
                    "twice the aggregate L1 (NVML reports no L2 size; datacenter "
                    "parts have 1.4-2x)",
                ),
                bandwidth=estimated(l2_value, f"{l2_formula}"),
                clock_hz=clock.value,
                pj_per_byte=4.0,
            ),
            rules.dram_tier(
                capacity=detected(
                    info.memory_total_bytes,
                    f"NVML memory total {fmt_bytes(info.memory_total_bytes)}",
                ),
                bandwidth=dram_bps,
                label="HBM" if hbm else "GDDR",
                pj_per_byte=15.0 if hbm else 25.0,
            ),
        ],
        description=(
            f"This machine's GPU {info.index} ({info.name}), detected through NVML. It is not a "
            f"known datasheet part: peaks use {arch.name} per-SM rates ({cc_text}) and cache "
            "figures are estimates; calibrate before trusting them."
        ),
        fingerprint=_fingerprint(info),
    )


def _sm_count(
    info: GpuInfo, arch: ArchRates, cc_text: str, clock_hz: float, dram_bps: float
) -> Sourced:
    """SMs from NVML's core count, else from an assumed machine balance."""
    if info.cuda_cores:
        return derived(
            max(1, info.cuda_cores // arch.cores_per_sm),
            f"NVML core count {info.cuda_cores} / {arch.cores_per_sm} FP32 cores per SM "
            f"({arch.name}, {cc_text})",
        )
    flops = ASSUMED_FLOP_PER_BYTE * dram_bps
    return estimated(
        max(1, round(flops / (2 * arch.cores_per_sm * clock_hz))),
        f"NVML reports no core count; SMs sized so FP32 peak = "
        f"{ASSUMED_FLOP_PER_BYTE:g} FLOP/B x DRAM bandwidth",
    )


# --- no GPU -------------------------------------------------------------------------


def placeholder_spec(reason: str) -> TargetSpec:
    """``host_gpu`` on a machine without a usable NVIDIA GPU: listed, not measurable."""

    def ph(value: float) -> Sourced:
        return estimated(value, PLACEHOLDER)

    return TargetSpec(
        key=KEY,
        name="host GPU (none detected)",
        family=FAMILY,
        architecture="gpu",
        compute_units=ph(1),
        compute_unit_name="SM",
        clock_hz=ph(1e9),
        peak_ops_per_s={"fp32": ph(1e12), "fp16": ph(4e12), "bf16": ph(4e12), "int8": ph(8e12)},
        energy_per_op_j={
            "fp32": ph(1e-11),
            "fp16": ph(5e-12),
            "bf16": ph(5e-12),
            "int8": ph(2e-12),
        },
        launch_overhead_s=ph(5e-6),
        idle_power_w=ph(10.0),
        tdp_w=ph(100.0),
        ground_truth="measured",
        detected=True,
        tiers=[
            MemoryTier(
                "l1", ph(128 * 1024), True, 1, ph(1e11), ph(20.0), energy_per_byte_j=ph(1e-12)
            ),
            MemoryTier(
                "l2", ph(4 * 1024**2), False, 1, ph(5e10), ph(150.0), energy_per_byte_j=ph(4e-12)
            ),
            MemoryTier(
                "dram", ph(8 * 1024**3), False, 1, ph(1e10), ph(500.0), energy_per_byte_j=ph(2e-11)
            ),
        ],
        description=(
            f"No NVIDIA GPU detected on this machine ({reason}); every figure is a "
            "placeholder. The target is listed so it can be named; it cannot be measured here."
        ),
        fingerprint={},
    )
