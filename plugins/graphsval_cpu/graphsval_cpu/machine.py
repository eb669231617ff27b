"""Small readers of the Linux files that describe this machine's CPU.

Every reader takes the file-system ``root`` to read under (``/`` normally, a
fake tree in tests) and returns ``None`` (or an empty result) when a file is
missing or unreadable: reading the machine never raises.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

CPU_DIR = "sys/devices/system/cpu"


def read_text(path: Path) -> str | None:
    """The stripped content of ``path``, or None if it cannot be read."""
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None


def parse_cpu_list(text: str | None) -> frozenset[int]:
    """``"0-3,8,10-11"`` -> ``{0, 1, 2, 3, 8, 10, 11}``; empty on bad input."""
    cpus: set[int] = set()
    for part in (text or "").split(","):
        part = part.strip()
        if not part:
            continue
        lo, _, hi = part.partition("-")
        try:
            cpus.update(range(int(lo), int(hi or lo) + 1))
        except ValueError:
            return frozenset()
    return frozenset(cpus)


_SIZE_RE = re.compile(r"^(\d+)\s*([KMG]?)i?B?$", re.IGNORECASE)


def parse_size(text: str | None) -> int | None:
    """A sysfs cache size (``"48K"``, ``"2048K"``, ``"1M"``) in bytes, or None."""
    match = _SIZE_RE.match((text or "").strip())
    if not match:
        return None
    scale = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}[match.group(2).upper()]
    return int(match.group(1)) * scale


@dataclass(frozen=True)
class CpuInfo:
    """What ``proc/cpuinfo`` says about the first processor."""

    model: str | None = None
    flags: frozenset[str] = field(default_factory=frozenset)
    mhz: float | None = None
    found: bool = False
    vendor: str | None = None  # vendor_id: GenuineIntel, AuthenticAMD, ...
    family: int | None = None  # cpu family (decimal)
    model_number: int | None = None  # "model" (decimal): the generation within a family
    tlb_pages: int | None = None  # "TLB size: 2560 4K pages" (AMD's kernels print it)

    @property
    def is_vm(self) -> bool:
        """True when the CPU reports the ``hypervisor`` flag (a virtual machine)."""
        return "hypervisor" in self.flags


def read_cpuinfo(root: Path) -> CpuInfo:
    """Model name, flags and ``cpu MHz`` of the first processor block."""
    text = read_text(root / "proc/cpuinfo")
    if text is None:
        return CpuInfo()
    fields: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            if fields:
                break  # end of the first processor block
            continue
        key, sep, value = line.partition(":")
        if sep:
            fields.setdefault(key.strip(), value.strip())
    try:
        mhz: float | None = float(fields["cpu MHz"])
    except (KeyError, ValueError):
        mhz = None
    family = fields.get("cpu family", "")  # decimal, as Linux prints it
    number = fields.get("model", "")
    tlb = fields.get("TLB size", "").split()  # "2560 4K pages"
    pages = (
        int(tlb[0]) if tlb[1:] == ["4K", "pages"] and tlb[0].isascii() and tlb[0].isdigit() else 0
    )
    return CpuInfo(
        model=fields.get("model name") or None,
        flags=frozenset(fields.get("flags", "").split()),
        mhz=mhz if mhz and mhz > 0 else None,
        found=True,
        vendor=fields.get("vendor_id") or None,
        family=int(family) if family.isascii() and family.isdigit() else None,
        model_number=int(number) if number.isascii() and number.isdigit() else None,
        tlb_pages=pages or None,
    )


def model_name(root: Path) -> str | None:
    """This machine's CPU model name, or None."""
    return read_cpuinfo(root).model


@dataclass(frozen=True)
class CacheInstance:
    """One data or unified cache: its level, size and the CPUs it serves."""

    level: int
    size_bytes: int
    cpus: frozenset[int]


def read_caches(root: Path, cpus: frozenset[int]) -> set[CacheInstance]:
    """The distinct data/unified caches serving ``cpus`` (instruction caches skipped)."""
    found: set[CacheInstance] = set()
    for cpu in sorted(cpus):
        cache_dir = root / CPU_DIR / f"cpu{cpu}" / "cache"
        try:
            entries = sorted(cache_dir.glob("index*"))
        except OSError:
            continue
        for index in entries:
            kind = read_text(index / "type")
            level = read_text(index / "level")
            size = parse_size(read_text(index / "size"))
            if kind == "Instruction" or not level or not level.isdigit() or size is None:
                continue
            shared = parse_cpu_list(read_text(index / "shared_cpu_list")) or frozenset({cpu})
            found.add(CacheInstance(int(level), size, shared))
    return found


def read_thread_siblings(root: Path, cpus: frozenset[int]) -> dict[int, frozenset[int]]:
    """For each CPU, the SMT siblings of its core (itself when unknown)."""
    out: dict[int, frozenset[int]] = {}
    for cpu in cpus:
        topo = root / CPU_DIR / f"cpu{cpu}" / "topology"
        text = read_text(topo / "thread_siblings_list") or read_text(topo / "core_cpus_list")
        out[cpu] = parse_cpu_list(text) or frozenset({cpu})
    return out


def read_max_freq_hz(root: Path) -> float | None:
    """``cpu0/cpufreq/cpuinfo_max_freq`` (kHz) in Hz, or None."""
    text = read_text(root / CPU_DIR / "cpu0/cpufreq/cpuinfo_max_freq")
    if text and text.isdigit() and int(text) > 0:
        return int(text) * 1e3
    return None


def read_mem_total(root: Path) -> int | None:
    """``MemTotal`` of ``proc/meminfo`` in bytes, or None."""
    text = read_text(root / "proc/meminfo")
    for line in (text or "").splitlines():
        if line.startswith("MemTotal:"):
            parts = line.split()
            if len(parts) >= 2 and parts[1].isdigit():
                return int(parts[1]) * 1024  # the kernel's "kB" is KiB
    return None


def usable_cpus() -> frozenset[int]:
    """The CPUs this process may run on (all CPUs where affinity is unknown)."""
    getaffinity = getattr(os, "sched_getaffinity", None)
    if getaffinity is not None:
        return frozenset(getaffinity(0))
    return frozenset(range(os.cpu_count() or 1))
