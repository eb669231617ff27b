"""Is the machine quiet enough to measure? Load from others, steal time, waits.

A capture on a shared 2-vCPU VM measures garbage when another process (a test
run, a build) or the hypervisor takes the CPUs: a 13 us kernel becomes 16 ms
and nothing in the samples says so. :class:`QuietWatch` reads ``/proc/stat``
(every CPU's busy and steal jiffies) and this process's own CPU time
(``os.times``) and tells, over any interval, how many CPUs *other* processes
kept busy and what share the hypervisor stole. The capture asks it before a
run (and refuses a busy machine unless told otherwise), waits (bounded) for
quiet before each row, and checks the interval of every round it measured,
measuring that round again when others were busy meanwhile.

Where ``/proc/stat`` does not exist the 1-minute load average stands in for
the others' load (it counts this process too, so it is only used at the
start, before the capture runs anything).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

from attrs import define, frozen

#: Other processes keeping more than this many CPUs busy make the machine busy:
#: on a 2-vCPU VM half a CPU of neighbours already moves single-thread timings
#: by several percent (shared L2/L3, memory bandwidth, the scheduler).
BUSY_OTHERS_CPUS = 0.5
#: More than this share of CPU time stolen by the hypervisor makes it busy.
BUSY_STEAL = 0.05
#: Seconds over which the state is sampled when nothing was measured meanwhile.
SAMPLE_S = 1.0


@frozen
class CpuCounters:
    """A reading of the machine's counters, in seconds of CPU time."""

    at: float  # monotonic seconds
    busy_s: float  # all CPUs: user + nice + system + irq + softirq (+ guest)
    total_s: float  # all CPUs, every state
    steal_s: float
    own_s: float  # this process: user + system
    cpus: int


@frozen
class Load:
    """What others did over an interval: CPUs they kept busy, the share stolen."""

    others_cpus: float
    steal: float
    seconds: float

    @property
    def busy(self) -> bool:
        return self.others_cpus > BUSY_OTHERS_CPUS or self.steal > BUSY_STEAL

    def text(self) -> str:
        return (
            f"other processes used {self.others_cpus:.2f} CPU(s), hypervisor steal "
            f"{self.steal:.0%} over {self.seconds:.1f} s"
        )


def read_counters(proc: Path = Path("/proc")) -> CpuCounters | None:
    """The machine's CPU counters now (None without a ``/proc/stat``)."""
    try:
        lines = (proc / "stat").read_text().splitlines()
    except OSError:
        return None
    first = lines[0].split() if lines else []
    if not first or first[0] != "cpu":
        return None
    values = [int(v) for v in first[1:]]
    values += [0] * (8 - len(values))
    user, nice, system, idle, iowait, irq, softirq, steal = values[:8]
    hz = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    cpus = sum(1 for line in lines if line.startswith("cpu") and line[3:4].isdigit())
    own = os.times()
    return CpuCounters(
        at=time.monotonic(),
        busy_s=(user + nice + system + irq + softirq) / hz,
        total_s=(user + nice + system + idle + iowait + irq + softirq + steal) / hz,
        steal_s=steal / hz,
        own_s=own.user + own.system,
        cpus=max(cpus, 1),
    )


def load_between(before: CpuCounters, after: CpuCounters) -> Load:
    """What other processes and the hypervisor took between two readings."""
    seconds = max(after.at - before.at, 1e-9)
    total = after.total_s - before.total_s
    if total <= 0:
        return Load(0.0, 0.0, seconds)
    per_cpu_wall = total / after.cpus  # the wall time the counters saw pass
    others = (after.busy_s - before.busy_s) - (after.own_s - before.own_s)
    return Load(
        others_cpus=max(0.0, others / per_cpu_wall),
        steal=max(0.0, (after.steal_s - before.steal_s) / total),
        seconds=seconds,
    )


@define
class QuietWatch:
    """Watches the machine for a capture: ``load_now`` samples it, ``wait``
    waits (bounded) until it is quiet, ``since_mark`` tells what others did
    since the last ``mark`` (the round just measured). ``waited_s`` adds up
    every wait."""

    max_wait_s: float = 60.0
    proc: Path = Path("/proc")
    sleep: Callable[[float], None] = time.sleep
    waited_s: float = 0.0
    waits: int = 0
    _mark: CpuCounters | None = None

    def load_now(self, seconds: float = SAMPLE_S) -> Load | None:
        """The load over the next ``seconds`` (None where it cannot be read)."""
        before = read_counters(self.proc)
        if before is None:
            return _load_average()
        self.sleep(seconds)
        after = read_counters(self.proc)
        return None if after is None else load_between(before, after)

    def wait(self) -> tuple[float, Load | None]:
        """Wait until the machine is quiet or ``max_wait_s`` is spent; the
        seconds waited and the last load seen (None: cannot tell)."""
        waited = 0.0
        load: Load | None = None
        while waited < self.max_wait_s:
            step = min(SAMPLE_S, self.max_wait_s - waited)
            load = self.load_now(step)
            waited += step
            if load is None or not load.busy:
                break
        if waited:
            self.waited_s += waited
            self.waits += 1
        return waited, load

    def mark(self) -> None:
        self._mark = read_counters(self.proc)

    def since_mark(self) -> Load | None:
        """What others did since :meth:`mark` (None: cannot tell)."""
        if self._mark is None:
            return None
        now = read_counters(self.proc)
        return None if now is None else load_between(self._mark, now)


def one_minute_load() -> float | None:
    """The 1-minute load average (None where the system has none)."""
    try:
        return os.getloadavg()[0]
    except (OSError, AttributeError):
        return None


def _load_average() -> Load | None:
    load = one_minute_load()
    return None if load is None else Load(others_cpus=load, steal=0.0, seconds=60.0)
