"""The busy-machine watch, on fake /proc/stat files: the load of others and the
hypervisor's steal over an interval, the bounded wait, the start refusal."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from graphsval_core.measure.quiet import (
    BUSY_OTHERS_CPUS,
    CpuCounters,
    Load,
    QuietWatch,
    load_between,
    read_counters,
)

HZ = os.sysconf("SC_CLK_TCK")


def _stat(proc: Path, user: int, idle: int, steal: int = 0) -> None:
    """A /proc/stat of a 2-CPU machine with these jiffies in all."""
    proc.mkdir(exist_ok=True)
    proc.joinpath("stat").write_text(
        f"cpu  {user} 0 0 {idle} 0 0 0 {steal} 0 0\n"
        f"cpu0 {user // 2} 0 0 {idle // 2} 0 0 0 {steal // 2} 0 0\n"
        f"cpu1 {user // 2} 0 0 {idle // 2} 0 0 0 {steal // 2} 0 0\n"
        "intr 0\n"
    )


def test_read_counters_parses_proc_stat(tmp_path):
    _stat(tmp_path, user=3 * HZ, idle=5 * HZ, steal=2 * HZ)
    c = read_counters(tmp_path)
    assert c is not None and c.cpus == 2
    assert c.busy_s == pytest.approx(3.0) and c.total_s == pytest.approx(10.0)
    assert c.steal_s == pytest.approx(2.0)
    assert read_counters(tmp_path / "nowhere") is None


def test_others_load_excludes_this_process():
    before = CpuCounters(at=0.0, busy_s=0.0, total_s=0.0, steal_s=0.0, own_s=0.0, cpus=2)
    # over 1 s on 2 CPUs: 1.5 CPU-seconds busy, 1 of them ours, 0.2 s stolen
    after = CpuCounters(at=1.0, busy_s=1.5, total_s=2.0, steal_s=0.2, own_s=1.0, cpus=2)
    load = load_between(before, after)
    assert load.others_cpus == pytest.approx(0.5) and load.steal == pytest.approx(0.1)
    assert load.busy  # 10% stolen
    quiet = CpuCounters(at=1.0, busy_s=1.1, total_s=2.0, steal_s=0.0, own_s=1.0, cpus=2)
    assert not load_between(before, quiet).busy
    assert Load(BUSY_OTHERS_CPUS + 0.01, 0.0, 1.0).busy


def test_wait_is_bounded_and_recorded(tmp_path):
    """A machine that stays busy: the wait ends at max_wait_s and is counted."""
    jiffies = {"user": 0, "idle": 0}

    def sleep(seconds: float) -> None:  # others keep both CPUs busy meanwhile
        jiffies["user"] += int(2 * seconds * HZ)
        _stat(tmp_path, jiffies["user"], jiffies["idle"])

    _stat(tmp_path, 0, 0)
    watch = QuietWatch(max_wait_s=3.0, proc=tmp_path, sleep=sleep)
    waited, load = watch.wait()
    assert waited == pytest.approx(3.0) and load is not None and load.busy
    assert watch.waits == 1 and watch.waited_s == pytest.approx(3.0)


def test_wait_ends_when_the_machine_settles(tmp_path):
    calls = {"n": 0}
    jiffies = {"user": 0, "idle": 0}

    def sleep(seconds: float) -> None:  # busy for the first two seconds, then idle
        calls["n"] += 1
        key = "user" if calls["n"] <= 2 else "idle"
        jiffies[key] += int(2 * seconds * HZ)
        _stat(tmp_path, jiffies["user"], jiffies["idle"])

    _stat(tmp_path, 0, 0)
    watch = QuietWatch(max_wait_s=60.0, proc=tmp_path, sleep=sleep)
    waited, load = watch.wait()
    assert waited == pytest.approx(3.0) and load is not None and not load.busy
