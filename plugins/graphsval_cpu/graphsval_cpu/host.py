"""The ``host_cpu`` target: this machine's CPU, read from /proc and sysfs.

What is read carries ``detected`` provenance, what is computed from it
``derived`` (with the formula), and what no file can tell (cache bandwidths,
DRAM bandwidth, latencies, energies, power) ``estimated`` with the rule used.
A missing or unreadable file never raises: the figure falls back to an
estimate whose provenance says what was missing.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from graphsval_core.plugin_api import (
    MemoryTier,
    Sourced,
    TargetSpec,
    derived,
    detected,
    estimated,
    fmt_bytes,
)
from graphsval_cpu import library, reference_kernel
from graphsval_cpu.machine import (
    CacheInstance,
    CpuInfo,
    read_caches,
    read_cpuinfo,
    read_max_freq_hz,
    read_mem_total,
    read_thread_siblings,
    usable_cpus,
)

KiB = 1024
MiB = 1024**2
GiB = 1024**3

ENERGY = "hardware-facts.md order-of-magnitude table"
CACHE_GLOB = "/sys/devices/system/cpu/cpu*/cache/index*"

#: ISA flags that decide the peaks (recorded in the fingerprint).
ISA_FLAGS: tuple[str, ...] = (
    "avx2",
    "fma",
    "avx512f",
    "avx512_bf16",
    "avx512_vnni",
    "avx_vnni",
    "amx_bf16",
    "amx_int8",
)

#: Estimated bytes/cycle per core from L2 and L3 (L1 depends on the vector width).
L2_BYTES_PER_CYCLE = 64
L3_BYTES_PER_CYCLE = 32
#: Estimated access latencies in cycles of L1, L2, L3; DRAM in ns.
LATENCY_CYCLES = {1: 5, 2: 15, 3: 60}
DRAM_LATENCY_NS = 100.0
#: Estimated energy per byte moved from each level.
ENERGY_PER_BYTE = {
    1: (1e-12, "0.5-1 pJ/B from L1"),
    2: (3e-12, "2-5 pJ/B from L2"),
    3: (10e-12, "5-15 pJ/B from a last-level cache"),
}
#: DRAM bandwidth rule: Little's law per core, capped for the whole machine:
#: the misses a core keeps in flight to memory are its L2's (demand misses and
#: the L2 streamer's prefetches, about 32), not its L1's fill buffers (16).
#: At 16 the estimate was 10.2 GB/s a core, and both host kinds' calibrations
#: pressed the DRAM's fraction against the 2x bound (Intel Xeon 1.67, AMD EPYC
#: 2.0: one core streams 17-27 GB/s from memory).
DRAM_MISSES_PER_CORE = 32
DRAM_BPS_PER_CORE = DRAM_MISSES_PER_CORE * 64 / 100e-9  # outstanding 64-B misses per 100 ns
DRAM_BPS_CAP = 100e9


@dataclass(frozen=True)
class Rate:
    """Operations per cycle per core for one dtype, and why; ``wide``: from
    512-bit (AVX-512) instructions."""

    per_cycle: int
    why: str
    wide: bool = False


#: AMD's cpu family of Zen 3 and Zen 4 (0x19): of the two only Zen 4 has
#: AVX-512, which it runs on its 256-bit units in two halves.
ZEN4_FAMILY = 0x19
#: The fingerprint's ``microarchitecture`` of an AMD Zen 4 (:func:`split_512`).
#: A VM names its CPU "AMD EPYC" whatever the generation, and a Zen 3 and a
#: Zen 4 VM differ in more than their clock: only the Zen 4 has avx512_bf16
#: and VNNI, so PyTorch runs their bf16 products in oneDNN there and in its
#: own kernel, 10 to 100 times slower, on the Zen 3. The snapshot key names
#: it (``host_amd_epyc_zen4_2c_1t``) so that the two never share one.
ZEN4 = "zen4"
#: AMD's family 0x17 (Zen, Zen+ and, from model 0x30, Zen 2) and 0x1A (Zen 5).
ZEN2_FAMILY, ZEN2_FIRST_MODEL, ZEN5_FAMILY = 0x17, 0x30, 0x1A


def microarchitecture(info: CpuInfo) -> str | None:
    """The fingerprint's ``microarchitecture`` of an AMD CPU whose model name
    may hide its generation (a VM's "AMD EPYC"): ``zen4`` (family 0x19 with
    avx512f, :func:`split_512`), ``zen5`` (family 0x1A), ``zen2`` or ``zen``
    (family 0x17, from model 0x30 or before it), ``amd_family_<hex>h`` for
    another family. None for a Zen 3 (family 0x19 without AVX-512), whose
    snapshot was shipped under the plain key before any was named, and for
    every other vendor (an Intel VM names its generation by its flags only).
    Each named kind captures under a key of its own: a Zen 5 or a Zen 2 VM
    would otherwise record its rows under the Zen 3's key, and ``validate``
    would judge them by the Zen 3's calibration."""
    if info.vendor != "AuthenticAMD" or info.family is None:
        return None
    if split_512(info):  # the test that halves its AVX-512 rates
        return ZEN4
    if info.family == ZEN4_FAMILY:
        return None
    if info.family == ZEN5_FAMILY:
        return "zen5"
    if info.family == ZEN2_FAMILY:
        first = info.model_number is not None and info.model_number >= ZEN2_FIRST_MODEL
        return "zen2" if first else "zen"
    return f"amd_family_{info.family:x}h"


def split_512(info: CpuInfo) -> bool:
    """Whether the core runs a 512-bit instruction as two 256-bit halves (AMD
    Zen 4: family 0x19 with avx512f), so AVX-512 gives the AVX2 width's rate
    per cycle. Intel and the EPYC Zen 5 (family 0x1A) run it whole; Zen 5's
    laptop parts (Strix Point), also family 0x1A, split it too and are not
    told apart here (their model number would have to)."""
    return info.vendor == "AuthenticAMD" and info.family == ZEN4_FAMILY and "avx512f" in info.flags


def isa_rates(flags: frozenset[str], halves: bool = False) -> dict[str, Rate]:
    """FLOP (int8: OP) per cycle per core for each dtype the ISA flags support;
    ``halves``: the core splits each 512-bit instruction in two (:func:`split_512`),
    halving the AVX-512 rates."""
    rates = _isa_rates(flags)
    if not halves:
        return rates
    split = "; 512-bit ops run as two 256-bit halves (AMD Zen 4), so half of that"
    return {
        dtype: Rate(rate.per_cycle // 2, rate.why + split, wide=True) if rate.wide else rate
        for dtype, rate in rates.items()
    }


def _isa_rates(flags: frozenset[str]) -> dict[str, Rate]:
    if "avx512f" in flags:
        fp32 = Rate(64, "avx512f: 2 FMA x 16 fp32 lanes x 2", wide=True)
    elif {"avx2", "fma"} <= flags:
        fp32 = Rate(32, "avx2+fma: 2 FMA x 8 fp32 lanes x 2")
    else:
        fp32 = Rate(8, "no avx2+fma: 4-lane SSE add + mul")
    if "amx_bf16" in flags:
        bf16 = Rate(1024, "amx_bf16: AMX tile multiply, 1024 bf16 FLOP/cycle")
    elif "avx512_bf16" in flags:
        bf16 = Rate(128, "avx512_bf16: 2 VDPBF16PS x 16 lanes x 2 pairs x 2", wide=True)
    else:
        bf16 = Rate(
            fp32.per_cycle,
            f"no native bf16: converted and computed in fp32 ({fp32.why})",
            wide=fp32.wide,
        )
    rates = {"fp32": fp32, "bf16": bf16}
    if "amx_int8" in flags:
        rates["int8"] = Rate(2048, "amx_int8: AMX tile multiply, 2048 int8 OP/cycle")
    elif "avx512_vnni" in flags:
        rates["int8"] = Rate(256, "avx512_vnni: 2 VPDPBUSD x 16 lanes x 4 MAC x 2", wide=True)
    elif "avx_vnni" in flags:
        rates["int8"] = Rate(128, "avx_vnni: 2 VPDPBUSD x 8 lanes x 4 MAC x 2")
    return rates


def _l1_bytes_per_cycle(flags: frozenset[str], halves: bool = False) -> tuple[int, str]:
    if "avx512f" in flags and halves:
        return 64, "2 x 32-B loads/cycle (avx512f in 256-bit halves, AMD Zen 4)"
    if "avx512f" in flags:
        return 128, "2 x 64-B loads/cycle (avx512f)"
    if "avx2" in flags:
        return 64, "2 x 32-B loads/cycle (avx2)"
    return 32, "2 x 16-B loads/cycle (SSE)"


def _clock(root: Path, info: CpuInfo) -> Sourced:
    """The clock: cpufreq maximum, else the model name's ``@ x.xxGHz``, else ``cpu MHz``."""
    hz = read_max_freq_hz(root)
    if hz:
        return detected(hz, "cpu0/cpufreq/cpuinfo_max_freq (maximum clock)")
    match = re.search(r"@\s*([\d.]+)\s*GHz", info.model or "")
    if match:
        return detected(
            float(match.group(1)) * 1e9, "the '@ x.xxGHz' of the model name (no cpufreq)"
        )
    if info.mhz:
        return detected(
            info.mhz * 1e6, "cpu MHz of /proc/cpuinfo (no cpufreq, no clock in the model name)"
        )
    return estimated(2e9, "2 GHz assumed: no cpufreq, no clock in the model name, no cpu MHz")


@dataclass(frozen=True)
class Level:
    """One cache level as the memory model sees it."""

    level: int
    capacity: Sourced  # per instance if per_unit, else the whole level
    per_unit: bool
    units: int
    spans_all: bool  # a single instance serving every usable CPU


def _describe(cpus: Iterable[int]) -> str:
    return ",".join(str(c) for c in sorted(cpus))


def cache_levels(
    instances: set[CacheInstance], siblings: dict[int, frozenset[int]], usable: frozenset[int]
) -> dict[int, Level]:
    """Group cache instances by level: per-unit when each serves one core's SMT siblings."""
    levels: dict[int, Level] = {}
    for lvl in sorted({inst.level for inst in instances}):
        group = [inst for inst in instances if inst.level == lvl]
        sizes = sorted(inst.size_bytes for inst in group)
        per_unit = all(len({siblings.get(c, frozenset({c})) for c in i.cpus}) == 1 for i in group)
        spans_all = len(group) == 1 and usable <= group[0].cpus
        if per_unit:
            spread = ""
            if sizes[0] != sizes[-1]:
                spread = f" (sizes differ up to {fmt_bytes(sizes[-1])}; the smallest is used)"
            capacity = detected(
                sizes[0],
                f"{CACHE_GLOB}: L{lvl} {fmt_bytes(sizes[0])} per core, "
                f"{len(group)} instance(s) among the usable CPUs{spread}",
            )
        else:
            ordered = sorted(group, key=lambda i: min(i.cpus))
            serves = "; ".join(f"CPUs {_describe(i.cpus)}" for i in ordered)
            capacity = detected(
                sum(sizes),
                f"{CACHE_GLOB}: L{lvl} {' + '.join(fmt_bytes(s) for s in sizes)} shared "
                f"({len(group)} instance(s), serving {serves})",
            )
        levels[lvl] = Level(lvl, capacity, per_unit, len(group), spans_all)
    return levels


def default_levels(cores: int, why: str) -> dict[int, Level]:
    """Typical x86 caches, used when sysfs says nothing about them."""
    src = f"{why}; typical x86"
    return {
        1: Level(1, estimated(32 * KiB, f"{src} L1d 32 KiB per core"), True, cores, False),
        2: Level(2, estimated(1 * MiB, f"{src} L2 1 MiB per core"), True, cores, False),
        3: Level(3, estimated(2 * MiB * cores, f"{src} L3 2 MiB/core, shared"), False, 1, False),
    }


def _sig3(value: float) -> float:
    """``value`` rounded to 3 significant digits (estimates claim no more)."""
    return float(f"{value:.3g}")


def _cache_tier(
    lvl: Level,
    *,
    clock: float,
    cores: int,
    flags: frozenset[str],
    tenants: bool,
    label: str,
    halves: bool = False,
) -> MemoryTier:
    if lvl.level == 1:
        per_cycle, how = _l1_bytes_per_cycle(flags, halves)
    else:
        per_cycle = L2_BYTES_PER_CYCLE if lvl.level == 2 else L3_BYTES_PER_CYCLE
        how = f"{per_cycle} B/cycle per core"
    cycles = LATENCY_CYCLES[lvl.level]
    joules, energy_src = ENERGY_PER_BYTE[lvl.level]
    return MemoryTier(
        f"l{lvl.level}",
        lvl.capacity,
        lvl.per_unit and not tenants,
        lvl.units,
        estimated(
            per_cycle * cores * clock,
            f"{how} x {cores} core(s) x {clock / 1e9:.3g} GHz",
        ),
        estimated(_sig3(cycles / clock * 1e9), f"{cycles} cycles at {clock / 1e9:.3g} GHz"),
        label=label,
        shared_with_tenants=tenants,
        energy_per_byte_j=estimated(joules, f"{ENERGY}: {energy_src}"),
    )


def _dram_tier(root: Path, cores: int) -> MemoryTier:
    mem = read_mem_total(root)
    capacity = (
        detected(mem, "MemTotal of /proc/meminfo")
        if mem
        else estimated(16 * GiB, "16 GiB assumed: /proc/meminfo unreadable")
    )
    bps = min(cores * DRAM_BPS_PER_CORE, DRAM_BPS_CAP)
    return MemoryTier(
        "dram",
        capacity,
        False,
        1,
        estimated(
            bps,
            "sysfs cannot tell DRAM bandwidth; Little's law, "
            f"{DRAM_MISSES_PER_CORE} outstanding 64-B misses per core (its L2's) / 100 ns = "
            f"{DRAM_BPS_PER_CORE / 1e9:.3g} GB/s x {cores} core(s), capped at "
            f"{DRAM_BPS_CAP / 1e9:g} GB/s",
        ),
        estimated(DRAM_LATENCY_NS, "typical DRAM load-to-use latency"),
        label="DRAM",
        energy_per_byte_j=estimated(20e-12, f"{ENERGY}: 15-30 pJ/B from DRAM"),
    )


def _growing(caches: list[MemoryTier], dram: MemoryTier, notes: list[str]) -> list[MemoryTier]:
    """Drop cache tiers that do not grow outward (the model needs growing tiers)."""
    kept: list[MemoryTier] = []
    for tier in caches:
        if kept and tier.total_capacity_bytes <= kept[-1].total_capacity_bytes:
            notes.append(f"{tier.name} dropped: not larger than {kept[-1].name}")
            continue
        kept.append(tier)
    while kept and kept[-1].total_capacity_bytes >= dram.total_capacity_bytes:
        notes.append(f"{kept.pop().name} dropped: not smaller than DRAM")
    return [*kept, dram]


def detect_host_cpu(root: str | Path = "/", affinity: set[int] | None = None) -> TargetSpec:
    """This machine's CPU as the target ``host_cpu`` (cached per root and affinity).

    :param root: the file-system root to read ``proc/`` and ``sys/`` under.
    :param affinity: the CPUs to count as usable (default: this process's affinity).
    """
    cpus = frozenset(affinity) if affinity is not None else usable_cpus()
    return _detect(str(Path(root)), cpus, affinity is not None)


@functools.lru_cache(maxsize=16)
def _detect(root_text: str, usable: frozenset[int], given: bool) -> TargetSpec:
    root = Path(root_text)
    notes: list[str] = []
    info = read_cpuinfo(root)
    model = info.model or "unknown CPU"
    if not info.found:
        notes.append("/proc/cpuinfo unreadable: model, flags and clock unknown")
    instances = read_caches(root, usable)
    involved = usable.union(*(inst.cpus for inst in instances))
    siblings = read_thread_siblings(root, involved)
    n_cpus = len(usable)
    cores = len({siblings[c] for c in usable}) or 1
    clock_src = _clock(root, info)
    clock = clock_src.value
    flags = info.flags
    halves = split_512(info)  # AVX-512 in two 256-bit halves (AMD Zen 4)

    if instances:
        levels = cache_levels(instances, siblings, usable)
    else:
        levels = default_levels(cores, f"no cache information under {CACHE_GLOB}")
        notes.append("no cache information in sysfs: typical x86 caches assumed")
    last = max((lvl for lvl in levels if lvl <= 3), default=0)  # the LLC the model sees
    tiers: list[MemoryTier] = []
    for lvl in sorted(levels):
        if lvl > 3:
            notes.append(f"L{lvl} ignored (the model has tiers l1-l3 and dram)")
            continue
        tenants = info.is_vm and lvl == last and levels[lvl].spans_all
        if tenants:
            notes.append(
                f"L{lvl} is shared with other tenants (a VM's last-level cache): "
                "its usable capacity is left to calibration"
            )
        tiers.append(
            _cache_tier(
                levels[lvl],
                clock=clock,
                cores=cores,
                flags=flags,
                tenants=tenants,
                label="LLC" if lvl == last and lvl > 1 else ("L1d" if lvl == 1 else ""),
                halves=halves,
            )
        )
    tiers = _growing(tiers, _dram_tier(root, cores), notes)

    rates = isa_rates(flags, halves)
    smt = "" if cores == n_cpus else f" ({cores} physical cores: SMT siblings share FMA units)"
    peaks = {
        dtype: derived(
            cores * rate.per_cycle * clock,
            f"{cores} core(s) x {rate.per_cycle} {'OP' if dtype == 'int8' else 'FLOP'}/cycle "
            f"({rate.why}) x {clock / 1e9:.3g} GHz",
        )
        for dtype, rate in rates.items()
    }
    fp32_pj = 0.75e-12
    energies = {
        "fp32": estimated(fp32_pj, f"{ENERGY}: FP32 FMA 1-2 pJ, 1.5 pJ / 2 FLOP"),
        "bf16": (
            estimated(fp32_pj / 2, f"{ENERGY}: BF16 about half of FP32")
            if rates["bf16"].per_cycle != rates["fp32"].per_cycle
            else estimated(fp32_pj, "equal to fp32: bf16 is computed in fp32 after conversion")
        ),
    }
    if "int8" in rates:
        energies["int8"] = estimated(fp32_pj / 8, f"{ENERGY}: INT8 about an eighth of FP32")

    affinity_src = "the affinity given" if given else "len(os.sched_getaffinity(0))"
    kind = "virtual machine (hypervisor flag)" if info.is_vm else "bare metal"
    core = ", ".join(
        part
        for part in (info.vendor, None if info.family is None else f"cpu family {info.family}")
        if part
    )
    core = f" ({core})" if core else ""
    description = f"Detected from this machine: {model}{core}, {n_cpus} usable CPU(s), {kind}."
    if notes:
        description += " " + "; ".join(notes) + "."
    touch, touch_from = library.first_touch(n_cpus)
    # a dtype with no GEMM library here runs every product in PyTorch's own kernel
    unlibraried = reference_kernel.no_gemm_library(peaks, flags)
    libraried = [d for d in peaks if d not in unlibraried]
    # ... and a library's smallest products too (library_min_macs)
    sized = library.library_min_macs(libraried)
    tlb_reach, page_walk = reference_kernel.tlb(info.tlb_pages, clock)
    return TargetSpec(
        key="host_cpu",
        name=f"this machine: {model} ({n_cpus} usable CPU{'s' if n_cpus != 1 else ''})",
        family="cpu",
        architecture="cpu",
        compute_units=detected(n_cpus, f"{affinity_src}: CPUs this process may use{smt}"),
        compute_unit_name="core" if cores == n_cpus else "logical cpu",
        clock_hz=clock_src,
        peak_ops_per_s=peaks,
        energy_per_op_j=energies,
        launch_overhead_s=library.dispatch(),
        fork_join_s=library.fork_join(n_cpus) if n_cpus > 1 else None,
        gemv_fork_join_s=library.gemv_fork_join(libraried, n_cpus) if n_cpus > 1 else {},
        parallel_grain_ops=library.grain() if n_cpus > 1 else None,
        vector_ops_per_s=library.vector_rate(peaks, n_cpus),
        pack_bps=library.pack_rate(libraried),
        pack_min_rows=library.pack_min_rows(libraried),
        transposed_pack_min_rows=library.transposed_pack_min_rows(
            libraried, flags, vendor=info.vendor or ""
        ),
        transposed_pass_rows=library.transposed_pass_rows(
            libraried, flags, vendor=info.vendor or ""
        ),
        pack_read_overlap=library.pack_read_overlap(libraried, flags, vendor=info.vendor or ""),
        in_place_max_rows=library.in_place_max_rows(libraried),
        in_place_fraction=library.in_place_fraction(libraried),
        gemv_fraction=library.gemv_fraction(libraried, flags, vendor=info.vendor or ""),
        narrow_n_columns=library.narrow_n_columns(libraried, flags, vendor=info.vendor or ""),
        transposed_narrow_n_columns=library.narrow_n_columns(
            libraried, flags, vendor=info.vendor or "", transposed=True
        ),
        narrow_n_fraction=library.narrow_n_fraction(libraried, flags, vendor=info.vendor or ""),
        transposed_narrow_n_group=library.transposed_narrow_n_group(
            libraried, flags, vendor=info.vendor or ""
        ),
        transposed_narrow_n_fraction=library.transposed_narrow_n_fraction(
            libraried, flags, vendor=info.vendor or ""
        ),
        pack_a_bps=library.pack_a_rate(libraried, n_cpus),
        product_overlap=library.product_overlap(libraried, flags),
        library_min_macs=sized,
        accumulate_overhead_s=library.accumulate_overhead(libraried),
        accumulator_lanes=library.accumulator_lanes(libraried, flags, vendor=info.vendor or ""),
        tail_piece_vectors=library.tail_piece_vectors(libraried, flags),
        product_output_passes=library.product_output_passes(
            libraried, flags, vendor=info.vendor or ""
        ),
        no_gemm_library=unlibraried,
        **reference_kernel.times(unlibraried, clock, small=sized, vendor=info.vendor or ""),
        tlb_reach_bytes=tlb_reach if unlibraried else None,
        page_walk_s=page_walk if unlibraried else None,
        first_touch_bps=touch,
        first_touch_min_bytes=touch_from,
        vector_first_touch_bps=library.vector_first_touch(peaks, n_cpus),
        idle_power_w=estimated(2.0 * cores, "2 W per core (static share of a package)"),
        tdp_w=estimated(10.0 * cores, "10 W per core under full load"),
        ground_truth="measured",
        detected=True,
        tiers=tiers,
        description=description,
        fingerprint={
            "cpu_model": model,
            "cores": str(n_cpus),
            "flags": " ".join(f for f in ISA_FLAGS if f in flags),
            **({"microarchitecture": arch} if (arch := microarchitecture(info)) else {}),
        },
    )
