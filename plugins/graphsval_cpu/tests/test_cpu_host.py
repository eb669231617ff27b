"""host_cpu detection against fake /proc + sysfs trees, and on this machine."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import attrs
import pytest

from graphsval_core.plugin_api import TargetSpec
from graphsval_cpu import library
from graphsval_cpu.host import detect_host_cpu, isa_rates, split_512
from graphsval_cpu.machine import CpuInfo, parse_cpu_list, parse_size, read_cpuinfo
from graphsval_cpu.snapshot import snapshot_host

KiB = 1024
MiB = 1024**2

XEON_FLAGS = (
    "fpu sse sse2 avx fma avx2 hypervisor avx512f avx512_bf16 avx512_vnni avx_vnni "
    "amx_bf16 amx_tile amx_int8"
)

#: (level, type, size, shared_cpu_list as a function of the cpu number)
Cache = tuple[int, str, str, Callable[[int], str]]


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n")


def make_tree(
    root: Path,
    *,
    cpus: int,
    model: str | None,
    flags: str,
    mhz: str = "2100.000",
    caches: list[Cache] = (),
    siblings: Callable[[int], str] = str,
    max_freq_khz: int | None = None,
    mem_kb: int | None = 24684092,
    vendor: str | None = None,
    family: int | None = None,
    extra: tuple[str, ...] = (),
) -> Path:
    """A fake machine: proc/cpuinfo, proc/meminfo and sys/devices/system/cpu."""
    blocks = []
    for n in range(cpus):
        lines = [f"processor\t: {n}"]
        if vendor is not None:
            lines.append(f"vendor_id\t: {vendor}")
        if family is not None:
            lines.append(f"cpu family\t: {family}")
        if model is not None:
            lines.append(f"model name\t: {model}")
        lines += [f"cpu MHz\t\t: {mhz}", f"flags\t\t: {flags}", *extra]
        blocks.append("\n".join(lines))
    _write(root, "proc/cpuinfo", "\n\n".join(blocks))
    if mem_kb is not None:
        _write(root, "proc/meminfo", f"MemTotal:       {mem_kb} kB\nMemFree:  1 kB")
    for n in range(cpus):
        cpu = f"sys/devices/system/cpu/cpu{n}"
        _write(root, f"{cpu}/topology/thread_siblings_list", siblings(n))
        for i, (level, kind, size, shared) in enumerate(caches):
            index = f"{cpu}/cache/index{i}"
            _write(root, f"{index}/level", str(level))
            _write(root, f"{index}/type", kind)
            _write(root, f"{index}/size", size)
            _write(root, f"{index}/shared_cpu_list", shared(n))
    if max_freq_khz is not None:
        _write(root, "sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", str(max_freq_khz))
    return root


def kvm_guest(root: Path) -> Path:
    """A 2-vCPU KVM guest: AVX-512 + AMX Xeon, 48 KiB L1d, 2 MiB L2, 300 MiB shared L3."""
    return make_tree(
        root,
        cpus=2,
        model="Intel(R) Xeon(R) Processor",
        flags=XEON_FLAGS,
        vendor="GenuineIntel",
        family=6,
        caches=[
            (1, "Data", "48K", str),
            (1, "Instruction", "32K", str),
            (2, "Unified", "2048K", str),
            (3, "Unified", "307200K", lambda n: "0-1"),
        ],
    )


def avx2_desktop(root: Path, max_freq_khz: int | None = None) -> Path:
    """4 cores / 8 threads, AVX2 + FMA, no cpufreq, siblings n and n+4."""
    pair = lambda n: f"{n % 4},{n % 4 + 4}"  # noqa: E731
    return make_tree(
        root,
        cpus=8,
        model="Intel(R) Core(TM) i7-7700K CPU @ 4.20GHz",
        flags="fpu sse sse2 avx fma avx2",
        mhz="800.000",
        siblings=pair,
        max_freq_khz=max_freq_khz,
        caches=[
            (1, "Data", "32K", pair),
            (1, "Instruction", "32K", pair),
            (2, "Unified", "256K", pair),
            (3, "Unified", "8192K", lambda n: "0-7"),
        ],
    )


def epyc_guest(
    root: Path, family: int, flags: str, extra: tuple[str, ...] = (), model: str | None = None
) -> Path:
    """A 2-vCPU KVM guest on an AMD EPYC: 32 KiB L1d, 1 MiB L2, 32 MiB shared L3;
    ``model`` the name it gives its CPU (a VM's is "AMD EPYC", whatever the generation)."""
    return make_tree(
        root,
        cpus=2,
        model=model or ("AMD EPYC 9B14" if family == 25 else "AMD EPYC 9B45"),
        flags=flags,
        vendor="AuthenticAMD",
        family=family,
        extra=extra,
        caches=[
            (1, "Data", "32K", str),
            (2, "Unified", "1024K", str),
            (3, "Unified", "32768K", lambda n: "0-1"),
        ],
    )


ZEN4_FLAGS = "fpu sse sse2 avx fma avx2 hypervisor avx512f avx512_bf16 avx512_vnni"


# --- parsing helpers ------------------------------------------------------------


def test_cpu_parse_cpu_list() -> None:
    assert parse_cpu_list("0-3,8,10-11") == {0, 1, 2, 3, 8, 10, 11}
    assert parse_cpu_list("5") == {5}
    assert parse_cpu_list("") == frozenset()
    assert parse_cpu_list(None) == frozenset()
    assert parse_cpu_list("garbage") == frozenset()


def test_cpu_parse_size() -> None:
    assert parse_size("48K") == 48 * KiB
    assert parse_size("307200K") == 300 * MiB
    assert parse_size("1M") == MiB
    assert parse_size("512") == 512
    assert parse_size("lots") is None
    assert parse_size(None) is None


def test_cpu_isa_rates() -> None:
    assert {d: r.per_cycle for d, r in isa_rates(frozenset(XEON_FLAGS.split())).items()} == {
        "fp32": 64,
        "bf16": 1024,
        "int8": 2048,
    }
    assert {d: r.per_cycle for d, r in isa_rates(frozenset({"avx2", "fma"})).items()} == {
        "fp32": 32,
        "bf16": 32,
    }
    rates = isa_rates(frozenset({"avx512f", "avx512_bf16", "avx512_vnni"}))
    assert (rates["bf16"].per_cycle, rates["int8"].per_cycle) == (128, 256)
    assert isa_rates(frozenset({"avx2", "fma", "avx_vnni"}))["int8"].per_cycle == 128
    assert isa_rates(frozenset())["fp32"].per_cycle == 8
    assert "conver" in isa_rates(frozenset())["bf16"].why


def test_cpu_isa_rates_of_a_core_that_splits_512_bit_ops() -> None:
    # AMD Zen 4 runs each AVX-512 instruction on its 256-bit units in two halves
    flags = frozenset(ZEN4_FLAGS.split())
    split = isa_rates(flags, halves=True)
    assert {d: r.per_cycle for d, r in split.items()} == {"fp32": 32, "bf16": 64, "int8": 128}
    assert all("two 256-bit halves" in r.why for r in split.values())
    # AMX's rates are not AVX-512's: only the fp32 FMA rate halves here
    amx = isa_rates(frozenset(XEON_FLAGS.split()), halves=True)
    assert (amx["fp32"].per_cycle, amx["bf16"].per_cycle, amx["int8"].per_cycle) == (
        32,
        1024,
        2048,
    )
    avx2 = isa_rates(frozenset({"avx2", "fma", "avx_vnni"}), halves=True)
    assert {d: r.per_cycle for d, r in avx2.items()} == {"fp32": 32, "bf16": 32, "int8": 128}
    # no avx512_bf16: bf16 converts and runs at fp32's (halved) AVX-512 rate;
    # no avx512_vnni: int8 from avx_vnni, 256-bit, untouched
    bare = isa_rates(frozenset({"avx2", "fma", "avx512f", "avx_vnni"}), halves=True)
    assert {d: r.per_cycle for d, r in bare.items()} == {"fp32": 32, "bf16": 32, "int8": 128}


def test_cpu_split_512_is_amd_family_25_with_avx512() -> None:
    zen4 = CpuInfo(vendor="AuthenticAMD", family=25, flags=frozenset({"avx2", "avx512f"}))
    assert split_512(zen4) is True
    assert split_512(replace(zen4, flags=frozenset({"avx2"}))) is False  # Zen 3
    assert split_512(replace(zen4, family=26)) is False  # Zen 5 EPYC
    assert split_512(replace(zen4, vendor="GenuineIntel")) is False
    assert split_512(CpuInfo()) is False  # nothing read


@pytest.mark.parametrize(
    ("vendor_line", "family_line", "vendor", "family"),
    [
        ("vendor_id\t: AuthenticAMD", "cpu family\t: 25", "AuthenticAMD", 25),
        ("vendor_id\t: GenuineIntel", "cpu family\t: 6", "GenuineIntel", 6),
        ("vendor_id\t: ", "cpu family\t: 0x19", None, None),  # empty, hex
        ("", "cpu family\t: abc", None, None),
        ("", "cpu family\t: \u00b2", None, None),  # a digit Python reads, int() does not
        ("", "", None, None),
    ],
)
def test_cpu_read_cpuinfo_vendor_and_family(
    tmp_path: Path, vendor_line: str, family_line: str, vendor: str | None, family: int | None
) -> None:
    lines = ["processor\t: 0", vendor_line, family_line, "model name\t: X", "flags\t\t: avx2"]
    _write(tmp_path, "proc/cpuinfo", "\n".join(line for line in lines if line))
    info = read_cpuinfo(tmp_path)
    assert (info.vendor, info.family, info.model) == (vendor, family, "X")


# --- fake machines ----------------------------------------------------------------


def test_cpu_kvm_guest(tmp_path: Path) -> None:
    spec = detect_host_cpu(kvm_guest(tmp_path), affinity={0, 1})
    assert spec.key == "host_cpu" and spec.detected
    assert (spec.family, spec.architecture, spec.ground_truth) == ("cpu", "cpu", "measured")
    assert spec.compute_units == 2 and spec.compute_unit_name == "core"
    assert spec.clock_hz == 2.1e9
    assert "cpu MHz" in spec.provenance["clock_hz"].source
    assert [t.name for t in spec.tiers] == ["l1", "l2", "l3", "dram"]
    l1, l2, l3, dram = spec.tiers
    assert (l1.capacity_bytes, l1.is_per_unit, l1.num_units) == (48 * KiB, True, 2)
    assert (l2.capacity_bytes, l2.is_per_unit, l2.num_units) == (2 * MiB, True, 2)
    assert (l3.capacity_bytes, l3.is_per_unit) == (300 * MiB, False)
    assert l3.shared_with_tenants and l3.usable_capacity_bytes is None
    assert not l1.shared_with_tenants and not l2.shared_with_tenants
    assert dram.capacity_bytes == 24684092 * KiB
    assert dram.provenance["capacity_bytes"].kind == "detected"
    assert spec.peak_ops_per_s == {
        "fp32": pytest.approx(2 * 64 * 2.1e9),
        "bf16": pytest.approx(2 * 1024 * 2.1e9),
        "int8": pytest.approx(2 * 2048 * 2.1e9),
    }
    assert spec.fingerprint["cpu_model"] == "Intel(R) Xeon(R) Processor"
    assert spec.fingerprint["cores"] == "2"
    assert set(spec.fingerprint["flags"].split()) >= {"avx512f", "amx_bf16", "amx_int8"}
    assert "hypervisor" not in spec.fingerprint["flags"]
    assert "shared with other tenants" in spec.description


def test_cpu_zen4_guest_runs_avx512_at_the_avx2_width(tmp_path: Path) -> None:
    spec = detect_host_cpu(epyc_guest(tmp_path, 25, ZEN4_FLAGS), affinity={0, 1})
    assert spec.peak_ops_per_s == {
        "fp32": pytest.approx(2 * 32 * 2.1e9),
        "bf16": pytest.approx(2 * 64 * 2.1e9),
        "int8": pytest.approx(2 * 128 * 2.1e9),
    }
    assert "AMD Zen 4" in spec.provenance["peak_ops_per_s.fp32"].source
    assert "(AuthenticAMD, cpu family 25)" in spec.description
    l1 = spec.tier("l1")
    assert l1.peak_bandwidth_bps == pytest.approx(64 * 2 * 2.1e9)
    assert "256-bit halves" in l1.provenance["peak_bandwidth_bps"].source


def test_cpu_other_amd_and_intel_cores_keep_their_widths(tmp_path: Path) -> None:
    # Zen 5 (family 26) runs AVX-512 whole; Zen 3 (family 25) has none (AVX2)
    zen5 = detect_host_cpu(epyc_guest(tmp_path / "zen5", 26, ZEN4_FLAGS), affinity={0, 1})
    assert zen5.peak_ops_per_s["fp32"] == pytest.approx(2 * 64 * 2.1e9)
    assert zen5.tier("l1").peak_bandwidth_bps == pytest.approx(128 * 2 * 2.1e9)
    zen3 = detect_host_cpu(
        epyc_guest(tmp_path / "zen3", 25, "fpu sse sse2 avx fma avx2 hypervisor"), affinity={0, 1}
    )
    assert zen3.peak_ops_per_s["fp32"] == pytest.approx(2 * 32 * 2.1e9)
    assert "Zen" not in zen3.provenance["peak_ops_per_s.fp32"].source
    # an Intel core of family 25 does not exist, but the vendor decides, not the number
    intel = make_tree(
        tmp_path / "intel",
        cpus=2,
        model="Intel(R) Xeon(R) Processor",
        flags=XEON_FLAGS,
        vendor="GenuineIntel",
        family=25,
    )
    assert detect_host_cpu(intel, affinity={0, 1}).peak_ops_per_s["fp32"] == pytest.approx(
        2 * 64 * 2.1e9
    )


def test_cpu_kvm_guest_provenance_kinds(tmp_path: Path) -> None:
    spec = detect_host_cpu(kvm_guest(tmp_path), affinity={0, 1})
    prov = spec.provenance
    assert prov["compute_units"].kind == "detected"
    assert prov["clock_hz"].kind == "detected"
    for dtype in spec.dtypes:
        assert prov[f"peak_ops_per_s.{dtype}"].kind == "derived"
        assert " x " in prov[f"peak_ops_per_s.{dtype}"].source
        assert prov[f"energy_per_op_j.{dtype}"].kind == "estimated"
    for name in ("launch_overhead_s", "idle_power_w", "tdp_w"):
        assert prov[name].kind == "estimated"
    for tier in spec.tiers:
        kinds = {name: p.kind for name, p in tier.provenance.items()}
        assert kinds["capacity_bytes"] == "detected"
        assert kinds["peak_bandwidth_bps"] == "estimated"
        assert kinds["access_latency_ns"] == "estimated"
        assert kinds["energy_per_byte_j"] == "estimated"
    assert "Little" in spec.tier("dram").provenance["peak_bandwidth_bps"].source
    # a core keeps its L2's misses in flight to memory (32 of 64 B per 100 ns), two cores
    assert spec.tier("dram").peak_bandwidth_bps == pytest.approx(2 * 32 * 64 / 100e-9)
    assert "32 outstanding" in spec.tier("dram").provenance["peak_bandwidth_bps"].source


def test_cpu_kvm_guest_one_cpu(tmp_path: Path) -> None:
    spec = detect_host_cpu(kvm_guest(tmp_path), affinity={1})
    assert spec.compute_units == 1
    assert spec.tier("l1").num_units == 1
    l3 = spec.tier("l3")
    assert not l3.is_per_unit and l3.shared_with_tenants  # serves CPUs 0-1, all usable ones
    assert spec.peak_ops_per_s["fp32"] == pytest.approx(64 * 2.1e9)


def test_cpu_avx2_desktop_without_cpufreq(tmp_path: Path) -> None:
    spec = detect_host_cpu(avx2_desktop(tmp_path), affinity=set(range(8)))
    assert spec.clock_hz == 4.2e9  # from the model name, not the idle cpu MHz
    assert "model name" in spec.provenance["clock_hz"].source
    assert spec.compute_units == 8 and spec.compute_unit_name == "logical cpu"
    assert spec.dtypes == ("fp32", "bf16")
    assert spec.peak_ops_per_s["fp32"] == pytest.approx(4 * 32 * 4.2e9)  # 4 physical cores
    assert spec.peak_ops_per_s["bf16"] == spec.peak_ops_per_s["fp32"]
    assert "conver" in spec.provenance["peak_ops_per_s.bf16"].source
    l1, l2, l3, _ = spec.tiers
    assert (l1.capacity_bytes, l1.is_per_unit, l1.num_units) == (32 * KiB, True, 4)
    assert (l2.capacity_bytes, l2.is_per_unit, l2.num_units) == (256 * KiB, True, 4)
    assert (l3.capacity_bytes, l3.is_per_unit, l3.shared_with_tenants) == (8 * MiB, False, False)
    assert "bare metal" in spec.description


def test_cpu_cpufreq_wins(tmp_path: Path) -> None:
    spec = detect_host_cpu(avx2_desktop(tmp_path, max_freq_khz=4500000), affinity={0})
    assert spec.clock_hz == 4.5e9
    assert "cpuinfo_max_freq" in spec.provenance["clock_hz"].source
    assert spec.compute_units == 1 and spec.tier("l1").num_units == 1


def test_cpu_no_cache_dirs(tmp_path: Path) -> None:
    make_tree(tmp_path, cpus=2, model="Some CPU", flags="sse sse2 avx2 fma", caches=[])
    spec = detect_host_cpu(tmp_path, affinity={0, 1})
    assert [t.name for t in spec.tiers] == ["l1", "l2", "l3", "dram"]
    for tier in spec.tiers[:3]:
        prov = tier.provenance["capacity_bytes"]
        assert prov.kind == "estimated" and "no cache information" in prov.source
        assert not tier.shared_with_tenants
    assert "no cache information" in spec.description
    assert spec.peak_ops_per_s["fp32"] == pytest.approx(2 * 32 * 2.1e9)


def test_cpu_empty_tree_never_raises(tmp_path: Path) -> None:
    spec = detect_host_cpu(tmp_path, affinity={0})
    assert spec.fingerprint["cpu_model"] == "unknown CPU"
    assert spec.clock_hz == 2e9 and spec.provenance["clock_hz"].kind == "estimated"
    assert spec.peak_ops_per_s["fp32"] == pytest.approx(8 * 2e9)
    assert spec.tier("dram").provenance["capacity_bytes"].kind == "estimated"
    assert "cpuinfo unreadable" in spec.description


def test_cpu_malformed_and_shrinking_caches(tmp_path: Path) -> None:
    make_tree(
        tmp_path,
        cpus=2,
        model="Odd CPU",
        flags="avx2 fma",
        caches=[
            (1, "Data", "garbage", str),  # unreadable size: skipped
            (2, "Unified", "4096K", str),  # 8 MiB in all
            (3, "Unified", "4096K", lambda n: "0-1"),  # not larger than the L2s: dropped
        ],
    )
    spec = detect_host_cpu(tmp_path, affinity={0, 1})
    assert [t.name for t in spec.tiers] == ["l2", "dram"]
    assert "l3 dropped" in spec.description


def test_cpu_hybrid_sizes_use_the_smallest(tmp_path: Path) -> None:
    make_tree(
        tmp_path,
        cpus=2,
        model="Hybrid CPU",
        flags="avx2 fma",
        caches=[
            (1, "Data", "48K", str),
            (3, "Unified", "25600K", lambda n: "0-1"),
        ],
    )
    _write(tmp_path, "sys/devices/system/cpu/cpu1/cache/index0/size", "32K")
    spec = detect_host_cpu(tmp_path, affinity={0, 1})
    l1 = spec.tier("l1")
    assert (l1.capacity_bytes, l1.num_units) == (32 * KiB, 2)
    assert "smallest" in l1.provenance["capacity_bytes"].source


def test_cpu_detection_is_cached(tmp_path: Path) -> None:
    kvm_guest(tmp_path)
    assert detect_host_cpu(tmp_path, affinity={0, 1}) is detect_host_cpu(str(tmp_path), {0, 1})
    assert detect_host_cpu(tmp_path, affinity={0}) is not detect_host_cpu(tmp_path, {0, 1})


# --- this machine -------------------------------------------------------------------


def _sysfs_caches(cpu: int) -> dict[int, int]:
    """level -> size in bytes of the data/unified caches sysfs lists for ``cpu``."""
    base = Path("/") / "sys/devices/system/cpu" / f"cpu{cpu}" / "cache"
    out: dict[int, int] = {}
    for index in base.glob("index*"):
        if (index / "type").read_text().strip() == "Instruction":
            continue
        size = parse_size((index / "size").read_text())
        assert size is not None
        out[int((index / "level").read_text())] = size
    return out


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="needs Linux")
def test_cpu_this_machine() -> None:
    spec: TargetSpec = detect_host_cpu()
    usable = os.sched_getaffinity(0)
    assert spec.compute_units == len(usable)
    assert spec.fingerprint["cores"] == str(len(usable))
    assert 0.2e9 < spec.clock_hz < 7e9
    assert 1e9 < spec.peak_ops_per_s["fp32"] < 1e15
    assert spec.tiers[-1].name == "dram" and spec.tiers[-1].capacity_bytes > 2**28
    per_cpu = [_sysfs_caches(cpu) for cpu in sorted(usable)]
    if not per_cpu[0]:
        pytest.skip("this machine's sysfs lists no caches")
    names = {t.name for t in spec.tiers}
    for level, size in per_cpu[0].items():
        if level > 3:
            continue
        if f"l{level}" not in names:
            assert f"l{level} dropped" in spec.description
            continue
        tier = spec.tier(f"l{level}")
        assert tier.provenance["capacity_bytes"].kind == "detected"
        if tier.is_per_unit:  # the smallest instance (they differ only on hybrid CPUs)
            assert tier.capacity_bytes == min(c[level] for c in per_cpu if level in c)
        else:  # one shared instance, or the sum of several
            assert tier.capacity_bytes >= size


def test_cpu_bf16_without_onednn_runs_in_pytorch_s_own_kernel(tmp_path: Path) -> None:
    # Zen 3: AVX2 only, so PyTorch's oneDNN bf16 path is off; its kernel prints the TLB size
    zen3 = detect_host_cpu(
        epyc_guest(
            tmp_path / "zen3",
            25,
            "fpu sse sse2 avx fma avx2 hypervisor",
            extra=("TLB size\t: 2560 4K pages",),
        ),
        affinity={0, 1},
    )
    assert zen3.no_gemm_library == ("bf16",)
    # no library: no library size, no packing of B, for bf16; fp32 keeps MKL's
    assert "bf16" not in zen3.library_min_macs and set(zen3.pack_bps) == {"fp32"}
    for name in TargetSpec.REFERENCE:
        assert set(getattr(zen3, name)) == {"bf16"}
        assert zen3.provenance[f"{name}.bf16"].kind == "estimated"
    # cycles at the detected clock: 2 per multiply-add down a column, about 90 per dot
    assert zen3.reference_mac_s["bf16"] == pytest.approx(2 / 2.1e9)
    assert zen3.reference_dot_output_s["bf16"] == pytest.approx(90 / 2.1e9)
    assert zen3.tlb_reach_bytes == 2560 * 4096
    assert zen3.provenance["tlb_reach_bytes"].kind == "detected"
    assert zen3.page_walk_s == pytest.approx(12 / 2.1e9)
    # with AVX-512 BW/VL/DQ (or AMX) every dtype keeps its library; the kernel runs only
    # the bf16 products of at most library_min_macs, at the times measured on the Zen 4 VM
    xeon = detect_host_cpu(kvm_guest(tmp_path / "xeon"), affinity={0, 1})
    assert xeon.no_gemm_library == () and "bf16" in xeon.library_min_macs
    clock = xeon.clock_hz
    for name in TargetSpec.REFERENCE:
        assert set(getattr(xeon, name)) == {"bf16"}
        prov = xeon.provenance[f"{name}.bf16"]
        assert prov.kind == "estimated"
        assert "bench_reference_kernel.py" in prov.source or "cannot resolve" in prov.source
    # a dot of contiguous rows: about 44 cycles an output with AVX-512 (the Zen 3's AVX2: 90)
    assert xeon.reference_dot_output_s["bf16"] == pytest.approx(44 / clock)
    # an Intel CPU's column walk: 0.63 of the Zen 4's cycles (its 16x16x16 bf16 matmul)
    assert xeon.reference_mac_s["bf16"] == pytest.approx(0.63 * 1.7 / clock)
    assert "16x16x16" in xeon.provenance["reference_mac_s.bf16"].source
    # the dot's time per multiply-add is the Zen 3's fit, which the bench cannot resolve
    assert "cannot resolve" in xeon.provenance["reference_dot_mac_s.bf16"].source
    assert "bench_reference_kernel" not in zen3.provenance["reference_mac_s.bf16"].source
    # the column walk of so small a product never outgrows the TLB: no reach, no walk
    assert xeon.tlb_reach_bytes is None and xeon.page_walk_s is None
    # oneDNN's bf16 call that accumulates onto C costs its own; MKL's fp32 and a bf16
    # that no library runs (the Zen 3's) have none
    assert dict(xeon.accumulate_overhead_s) == {"bf16": 3e-6}
    assert xeon.provenance["accumulate_overhead_s.bf16"].kind == "estimated"
    assert not zen3.accumulate_overhead_s
    # oneDNN's AVX-512 / AMX micro-kernels pad C's N to 16 lanes; MKL's AVX-512 fp32
    # kernels on an Intel CPU keep the square register tile (their shape is unmeasured)
    lanes = {d: 16.0 for d in ("bf16", "int8") if d in xeon.peak_ops_per_s}
    assert lanes and dict(xeon.accumulator_lanes) == lanes
    assert all(xeon.provenance[f"accumulator_lanes.{d}"].kind == "datasheet" for d in lanes)
    # MKL runs its AVX2 fp32 kernel (16 columns a row) on an AVX2 core and on any AMD CPU
    assert dict(zen3.accumulator_lanes) == {"fp32": 16.0}
    assert zen3.provenance["accumulator_lanes.fp32"].kind == "estimated"
    # one thread forms each output of the kernel: a snapshot on any thread count keeps them
    from graphsval_cpu.snapshot import snapshot_host

    for threads in (1, 2):
        snap = snapshot_host(xeon, threads)
        for name in TargetSpec.REFERENCE:
            assert getattr(snap, name) == getattr(xeon, name), (threads, name)
        assert snap.tlb_reach_bytes is None and snap.page_walk_s is None
    # an AMD CPU with oneDNN's bf16 path: the Zen 4 VM's own cycles
    full = f"{ZEN4_FLAGS} avx512bw avx512vl avx512dq"
    amd = detect_host_cpu(epyc_guest(tmp_path / "amd512", 25, full), affinity={0, 1})
    assert amd.no_gemm_library == () and "bf16" in amd.library_min_macs
    assert amd.reference_mac_s["bf16"] == pytest.approx(1.7 / amd.clock_hz)
    assert amd.reference_dot_output_s["bf16"] == pytest.approx(44 / amd.clock_hz)
    zen4 = detect_host_cpu(epyc_guest(tmp_path / "zen4", 25, ZEN4_FLAGS), affinity={0, 1})
    libraried = [d for d in zen4.peak_ops_per_s if d not in zen4.no_gemm_library]
    assert {"fp32", "int8"} <= set(libraried)
    assert dict(zen4.accumulator_lanes) == {d: 16.0 for d in libraried}
    # oneDNN's s8 GEMM on AVX-512 VNNI covers N's tail in pieces; on an AMX CPU
    # (the Xeon) and without VNNI (the Zen 3) nothing is said of it
    assert dict(zen4.tail_piece_vectors) == {"int8": 1.0}
    assert zen4.provenance["tail_piece_vectors.int8"].kind == "estimated"
    assert not xeon.tail_piece_vectors and not zen3.tail_piece_vectors
    assert dict(snapshot_host(zen4, 1).tail_piece_vectors) == {"int8": 1.0}
    # MKL's fp32 sgemm stores C no cheaper than an accumulation on an AMD CPU (the Zen 4 and
    # the Zen 3 measured), not on Intel's CPUs
    assert dict(zen4.product_output_passes) == {"fp32": 2.0}
    assert dict(zen3.product_output_passes) == {"fp32": 2.0}
    assert "bench_output_passes.py" in zen4.provenance["product_output_passes.fp32"].source
    assert not xeon.product_output_passes
    assert dict(snapshot_host(zen4, 2).product_output_passes) == {"fp32": 2.0}
    # a snapshot of any thread count keeps the micro-kernel's lanes and their source
    for threads in (1, 2):
        snap = snapshot_host(xeon, threads)
        assert dict(snap.accumulator_lanes) == lanes
        assert all(
            snap.provenance[f"accumulator_lanes.{d}"] == xeon.provenance[f"accumulator_lanes.{d}"]
            for d in lanes
        )
    # an AVX2 core whose kernel prints no TLB size gets a server core's 1536 entries
    desktop = detect_host_cpu(avx2_desktop(tmp_path / "desk"))
    assert desktop.no_gemm_library == ("bf16",)
    assert desktop.tlb_reach_bytes == 1536 * 4096
    assert desktop.provenance["tlb_reach_bytes"].kind == "estimated"
    assert dict(desktop.accumulator_lanes) == {"fp32": 16.0}


def test_cpu_each_vector_library_dtype_starts_at_the_roofline_s_overlap(tmp_path: Path) -> None:
    # a dtype a GEMM library runs on the vector units gets an overlap to fit, from 1
    zen4 = detect_host_cpu(epyc_guest(tmp_path / "zen4", 25, ZEN4_FLAGS), affinity={0, 1})
    libraried = [d for d in zen4.peak_ops_per_s if d not in zen4.no_gemm_library]
    assert dict(zen4.product_overlap) == {d: 1.0 for d in libraried}
    assert all(zen4.provenance[f"product_overlap.{d}"].kind == "estimated" for d in libraried)
    # AMX's tiles compute far above the memory's pace: their dtypes get none
    xeon = detect_host_cpu(kvm_guest(tmp_path / "xeon"), affinity={0, 1})
    assert dict(xeon.product_overlap) == {"fp32": 1.0}
    # an AVX2 desktop's bf16 has no library: fp32 only
    assert dict(detect_host_cpu(avx2_desktop(tmp_path / "desk")).product_overlap) == {"fp32": 1.0}
    # a snapshot of any thread count keeps it and its source
    for threads in (1, 2):
        snap = snapshot_host(zen4, threads)
        assert snap.product_overlap == zen4.product_overlap
        assert all(
            snap.provenance[f"product_overlap.{d}"] == zen4.provenance[f"product_overlap.{d}"]
            for d in libraried
        )


def test_cpu_onednn_reads_a_bf16_weight_in_place_for_few_rows(tmp_path: Path) -> None:
    # where oneDNN runs bf16 (AVX-512 BF16 or AMX), a linear's weight beyond the caches is
    # read in place up to 64 rows of A; MKL's fp32, oneDNN's int8 and a CPU whose bf16 has
    # no library: never
    xeon = detect_host_cpu(kvm_guest(tmp_path / "xeon"), affinity={0, 1})
    assert "bf16" not in xeon.no_gemm_library
    assert dict(xeon.in_place_max_rows) == {"bf16": library.IN_PLACE_MAX_ROWS}
    assert xeon.provenance["in_place_max_rows.bf16"].kind == "estimated"
    assert xeon.in_place_max_rows["bf16"] >= xeon.pack_min_rows["bf16"]
    # ... and streams the part the caches do not keep at its own share of main memory
    assert dict(xeon.in_place_fraction) == {"bf16": library.IN_PLACE_FRACTION}
    assert xeon.provenance["in_place_fraction.bf16"].kind == "estimated"
    for root in (avx2_desktop(tmp_path / "desk"), epyc_guest(tmp_path / "zen", 25, ZEN4_FLAGS)):
        other = detect_host_cpu(root, affinity={0, 1})
        assert "bf16" in other.no_gemm_library and not other.in_place_max_rows
        assert not other.in_place_fraction
    for threads in (1, 2):
        snap = snapshot_host(xeon, threads)
        assert snap.in_place_max_rows == xeon.in_place_max_rows
        assert (
            snap.provenance["in_place_max_rows.bf16"] == xeon.provenance["in_place_max_rows.bf16"]
        )
        assert snap.in_place_fraction == xeon.in_place_fraction  # a share: any thread count


def test_cpu_mkl_s_gemv_path_streams_at_its_own_share_on_amd(tmp_path: Path) -> None:
    # MKL's fp32 GEMVs (and products of too few rows of A to pack, a GEMV per row) stream
    # their matrix at a share of their own on an AMD CPU with AVX2, estimated at a
    # stream's whole rate until calibrated; not on Intel's CPUs, nor for oneDNN's dtypes
    zen3_flags = "fpu sse sse2 avx fma avx2 hypervisor"
    zen3 = detect_host_cpu(epyc_guest(tmp_path / "zen3", 25, zen3_flags), affinity={0, 1})
    zen4 = detect_host_cpu(epyc_guest(tmp_path / "zen4", 25, ZEN4_FLAGS), affinity={0, 1})
    for spec in (zen3, zen4):
        assert dict(spec.gemv_fraction) == {"fp32": 1.0}
        assert spec.provenance["gemv_fraction.fp32"].kind == "estimated"
        assert "sgemv" in spec.provenance["gemv_fraction.fp32"].source
        for threads in (1, 2):
            snap = snapshot_host(spec, threads)
            assert snap.gemv_fraction == spec.gemv_fraction  # a share: any thread count
            assert snap.provenance["gemv_fraction.fp32"] == spec.provenance["gemv_fraction.fp32"]
    for root in (kvm_guest(tmp_path / "xeon"), avx2_desktop(tmp_path / "desk")):
        assert not detect_host_cpu(root, affinity={0, 1}).gemv_fraction


def test_cpu_mkl_runs_a_narrow_n_in_its_narrow_kernel(tmp_path: Path) -> None:
    # MKL's fp32 matmul of 2 to 11 columns runs in a narrow kernel at a share of the rate
    # on an AMD CPU with AVX2, and its linear of 2 to 15 in one of its own (dot products,
    # four of the weight's rows a pass, at a share of its own); not on Intel's CPUs (the
    # Intel host's refit with it lost on validation), nor for oneDNN's dtypes
    zen3_flags = "fpu sse sse2 avx fma avx2 hypervisor"
    zen3 = detect_host_cpu(epyc_guest(tmp_path / "zen3", 25, zen3_flags), affinity={0, 1})
    zen4 = detect_host_cpu(epyc_guest(tmp_path / "zen4", 25, ZEN4_FLAGS), affinity={0, 1})
    for spec in (zen3, zen4):
        assert dict(spec.narrow_n_columns) == {"fp32": library.MKL_NARROW_COLUMNS}
        assert dict(spec.narrow_n_fraction) == {"fp32": library.MKL_NARROW_SHARE}
        linear = {"fp32": library.MKL_LINEAR_NARROW_COLUMNS}
        assert dict(spec.transposed_narrow_n_columns) == linear
        assert dict(spec.transposed_narrow_n_group) == {"fp32": library.MKL_LINEAR_NARROW_GROUP}
        share = {"fp32": library.MKL_LINEAR_NARROW_SHARE}
        assert dict(spec.transposed_narrow_n_fraction) == share
        assert spec.narrow_n_share("fp32", True) == library.MKL_LINEAR_NARROW_SHARE
        assert spec.narrow_n_share("fp32", False) == library.MKL_NARROW_SHARE
        assert "bench_narrow_n.py" in spec.provenance["narrow_n_fraction.fp32"].source
        assert "bench_narrow_n.py" in spec.provenance["transposed_narrow_n_group.fp32"].source
        for threads in (1, 2):
            snap = snapshot_host(spec, threads)
            assert snap.narrow_n_columns == spec.narrow_n_columns
            assert snap.transposed_narrow_n_columns == spec.transposed_narrow_n_columns
            assert snap.narrow_n_fraction == spec.narrow_n_fraction  # a share: any threads
            assert snap.transposed_narrow_n_group == spec.transposed_narrow_n_group
            assert snap.transposed_narrow_n_fraction == spec.transposed_narrow_n_fraction
    for root in (kvm_guest(tmp_path / "xeon"), avx2_desktop(tmp_path / "desk")):
        spec = detect_host_cpu(root, affinity={0, 1})
        assert not spec.narrow_n_columns and not spec.narrow_n_fraction
        assert not spec.transposed_narrow_n_columns and not spec.transposed_narrow_n_fraction


def test_cpu_intel_s_mkl_reads_an_unpacked_weight_a_pass_per_three_rows(tmp_path: Path) -> None:
    # MKL's fp32 linear on an Intel CPU with AVX-512 packs its weight only from 12 rows of
    # A and below that reads it once per 3 rows (the Intel host's calibration rows); not
    # on an AMD CPU (a GEMV a row) nor on an Intel CPU with AVX2 alone (the i7 says no),
    # nor for oneDNN's dtypes
    xeon = detect_host_cpu(kvm_guest(tmp_path / "xeon"), affinity={0, 1})
    assert dict(xeon.transposed_pack_min_rows) == {"fp32": library.MKL_TRANSPOSED_PACK_MIN_ROWS}
    assert dict(xeon.transposed_pass_rows) == {"fp32": library.MKL_TRANSPOSED_PASS_ROWS}
    assert (library.MKL_TRANSPOSED_PACK_MIN_ROWS, library.MKL_TRANSPOSED_PASS_ROWS) == (12, 3)
    for name in ("transposed_pack_min_rows", "transposed_pass_rows"):
        prov = xeon.provenance[f"{name}.fp32"]
        assert prov.kind == "estimated" and "Intel host's calibration linears" in prov.source
    # ... and packs a matmul's B the caches hold as its kernel streams it
    assert dict(xeon.pack_read_overlap) == {"fp32": 1.0}
    assert "4x2048x2048 714 us" in xeon.provenance["pack_read_overlap.fp32"].source
    for threads in (1, 2):
        snap = snapshot_host(xeon, threads)
        assert snap.transposed_pack_min_rows == xeon.transposed_pack_min_rows
        assert snap.transposed_pass_rows == xeon.transposed_pass_rows
        assert snap.pack_read_overlap == xeon.pack_read_overlap
    zen3_flags = "fpu sse sse2 avx fma avx2 hypervisor"
    others = (
        epyc_guest(tmp_path / "zen3", 25, zen3_flags),
        epyc_guest(tmp_path / "zen4", 25, ZEN4_FLAGS),
        avx2_desktop(tmp_path / "desk"),
    )
    for root in others:
        spec = detect_host_cpu(root, affinity={0, 1})
        assert not spec.transposed_pack_min_rows and not spec.transposed_pass_rows
        assert not spec.pack_read_overlap


def test_cpu_an_add_runs_at_its_loop_s_rate_per_core(tmp_path: Path) -> None:
    # fp32 and bf16 adds each get their own rate per core, estimated: the fp32 loop's
    # two loads and a store, not a cache's bandwidth; bf16's conversion around the add
    zen4 = detect_host_cpu(epyc_guest(tmp_path / "zen4", 25, ZEN4_FLAGS), affinity={0, 1})
    assert dict(zen4.vector_ops_per_s) == {
        "fp32": 2 * library.FP32_ADD_PER_CORE,
        "bf16": 2 * library.BF16_ADD_PER_CORE,
    }
    assert library.BF16_ADD_PER_CORE < library.FP32_ADD_PER_CORE
    assert all(
        zen4.provenance[f"vector_ops_per_s.{d}"].kind == "estimated" for d in ("fp32", "bf16")
    )
    assert "loads two vectors and stores one" in zen4.provenance["vector_ops_per_s.fp32"].source
    # every dtype with a peak among the two gets one (an AVX2 desktop's bf16 included)
    desktop = detect_host_cpu(avx2_desktop(tmp_path / "desk"))
    assert set(desktop.vector_ops_per_s) == {"fp32", "bf16"} & set(desktop.peak_ops_per_s)
    assert "fp32" in desktop.vector_ops_per_s
    # a snapshot for one of two cores halves it and says so
    snap = snapshot_host(zen4, 1)
    assert snap.vector_ops_per_s["fp32"] == library.FP32_ADD_PER_CORE
    assert snap.provenance["vector_ops_per_s.fp32"].kind == "derived"


@pytest.mark.parametrize(
    "line", ["TLB size\t: 2560 2M pages", "TLB size\t: many 4K pages", "TLB size\t: 0 4K pages"]
)
def test_cpu_an_unreadable_tlb_size_is_no_tlb_size(tmp_path: Path, line: str) -> None:
    root = epyc_guest(tmp_path, 25, "fpu avx fma avx2", extra=(line,))
    assert read_cpuinfo(root).tlb_pages is None


AVX2_FLAGS = "fpu sse sse2 avx fma avx2 hypervisor"


def test_snapshot_key_names_every_amd_kind_apart_from_the_zen3(tmp_path):
    """A VM calls every generation "AMD EPYC"; only the Zen 4 runs bf16 products
    in oneDNN, a Zen 5 runs AVX-512 whole, a Zen 2 has other caches: none of
    their captures may land under the Zen 3's key (the one first shipped), or
    validate would judge them by the Zen 3's calibration."""

    def vm(name: str, family: int, flags: str, number: int | None = None) -> TargetSpec:
        extra = () if number is None else (f"model\t\t: {number}",)
        root = epyc_guest(tmp_path / name, family, flags, extra=extra, model="AMD EPYC")
        return detect_host_cpu(root, affinity={0, 1})

    kinds = {
        "zen4": vm("zen4", 25, ZEN4_FLAGS, 17),
        "zen3": vm("zen3", 25, AVX2_FLAGS, 1),
        "zen5": vm("zen5", 26, ZEN4_FLAGS, 2),
        "zen2": vm("zen2", 23, AVX2_FLAGS, 49),
        "zen": vm("zen", 23, AVX2_FLAGS, 1),
        "unnumbered": vm("unnumbered", 23, AVX2_FLAGS),  # no "model" line: not a Zen 2
        "old": vm("old", 21, "fpu sse sse2 avx fma hypervisor"),
    }
    keys = {name: snapshot_host(spec, 1).key for name, spec in kinds.items()}
    assert keys == {
        "zen4": "host_amd_epyc_zen4_2c_1t",
        "zen3": "host_amd_epyc_2c_1t",
        "zen5": "host_amd_epyc_zen5_2c_1t",
        "zen2": "host_amd_epyc_zen2_2c_1t",
        "zen": "host_amd_epyc_zen_2c_1t",
        "unnumbered": "host_amd_epyc_zen_2c_1t",
        "old": "host_amd_epyc_amd_family_15h_2c_1t",
    }
    assert "microarchitecture" not in kinds["zen3"].fingerprint
    assert snapshot_host(kinds["zen4"], 1).fingerprint["microarchitecture"] == "zen4"
    assert snapshot_host(kinds["zen5"], 1).name == "AMD EPYC (zen5), 1 thread(s) of 2"


def test_an_intel_cpu_names_no_microarchitecture(tmp_path):
    """Intel generations are told apart by their flags only: the key stays the model's."""
    root = make_tree(
        tmp_path,
        cpus=2,
        model="Intel(R) Xeon(R) Processor",
        flags=ZEN4_FLAGS,
        vendor="GenuineIntel",
        family=6,
        extra=("model\t\t: 143",),
    )
    spec = detect_host_cpu(root, affinity={0, 1})
    assert "microarchitecture" not in spec.fingerprint
    assert snapshot_host(spec, 1).key == "host_intel_xeon_2c_1t"


def test_cpuinfo_reads_the_model_number(tmp_path):
    """The "model" line (decimal), not "model name"; junk reads as unknown."""
    for line, want in (("model\t\t: 49", 49), ("model\t\t: 0x31", None), ("", None)):
        root = make_tree(
            tmp_path / str(want) / str(len(line)),
            cpus=1,
            model="AMD EPYC",
            flags="",
            extra=(line,) if line else (),
        )
        assert read_cpuinfo(root).model_number == want


def test_a_snapshot_is_measurable_only_on_its_own_microarchitecture_and_isa(tmp_path):
    """The model name matches on every AMD EPYC VM: the probe tells a Zen 3
    snapshot from a Zen 4 or Zen 5 machine (and back) by what host_cpu detects."""
    from graphsval_cpu.probe import probe_cpu

    zen3 = epyc_guest(tmp_path / "zen3", 25, "fpu sse sse2 avx fma avx2", model="AMD EPYC")
    zen4 = epyc_guest(tmp_path / "zen4", 25, ZEN4_FLAGS, model="AMD EPYC")
    zen5 = epyc_guest(tmp_path / "zen5", 26, ZEN4_FLAGS, model="AMD EPYC")
    snap3 = snapshot_host(detect_host_cpu(zen3, affinity={0, 1}), 1)
    snap4 = snapshot_host(detect_host_cpu(zen4, affinity={0, 1}), 1)
    assert (snap3.key, snap4.key) == ("host_amd_epyc_2c_1t", "host_amd_epyc_zen4_2c_1t")

    def available(snap: TargetSpec, root: Path) -> tuple[bool, str]:
        result = probe_cpu(snap, root=root)
        assert result is not None
        return result.available, result.reason

    assert available(snap3, zen3) == (True, "")
    assert available(snap4, zen4) == (True, "")
    ok, why = available(snap3, zen4)
    assert not ok and why == (
        "host_amd_epyc_2c_1t was captured on an AMD EPYC with avx2 fma; this machine is "
        "an AMD EPYC (zen4) with avx2 avx512_bf16 avx512_vnni avx512f fma"
    )
    ok, why = available(snap3, zen5)
    assert not ok and "this machine is an AMD EPYC (zen5)" in why
    ok, why = available(snap4, zen5)  # the same flags, another microarchitecture
    assert not ok and "this machine is an AMD EPYC (zen5)" in why
    ok, why = available(snap4, zen3)
    assert not ok and "captured on an AMD EPYC (zen4)" in why
    # a microarchitecture written in another case is the same one
    upper = attrs.evolve(snap4, fingerprint={**snap4.fingerprint, "microarchitecture": "ZEN4"})
    assert available(upper, zen4) == (True, "")


def test_cpu_a_team_of_cpus_gives_mkls_gemvs_their_own_team_cost(tmp_path: Path) -> None:
    team = detect_host_cpu(kvm_guest(tmp_path), affinity={0, 1})
    assert team.fork_join_s is not None
    # MKL's dtype alone: oneDNN's bf16 / int8 GEMVs keep the team's cost
    assert set(team.gemv_fork_join_s) == {"fp32"}
    assert "GEMV path" in team.provenance["gemv_fork_join_s.fp32"].source
    alone = detect_host_cpu(kvm_guest(tmp_path), affinity={1})
    assert alone.fork_join_s is None and alone.gemv_fork_join_s == {}


def test_cpu_a_snapshot_on_two_threads_keeps_the_team(tmp_path: Path) -> None:
    from graphsval_cpu.snapshot import snapshot_host

    def team(spec: TargetSpec) -> tuple:
        return spec.fork_join_s, spec.parallel_grain_ops, dict(spec.gemv_fork_join_s)

    detected = detect_host_cpu(kvm_guest(tmp_path), affinity={0, 1})
    two, one = snapshot_host(detected, 2), snapshot_host(detected, 1)
    assert team(two) == team(detected) and two.fork_join_s is not None
    assert two.provenance["gemv_fork_join_s.fp32"] == detected.provenance["gemv_fork_join_s.fp32"]
    assert team(one) == (None, None, {})
