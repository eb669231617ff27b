"""RaplMeter against fake powercap trees: readable, wrap, EACCES, missing, sockets."""

from __future__ import annotations

import errno
import os
import time
from pathlib import Path

from graphsval_core.plugin_api import EnergyMeter
from graphsval_cpu.rapl import NO_RAPL, NOT_READABLE, RaplMeter

PC = "sys/class/powercap"
RANGE_UJ = 262_143_328_850


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n")


def powercap(root: Path, packages: int = 1, energy_uj: int = 1_000_000) -> Path:
    """A fake powercap tree: package domains with nested core, and a psys domain."""
    _write(root, f"{PC}/intel-rapl/enabled", "1")
    for n in range(packages):
        _write(root, f"{PC}/intel-rapl:{n}/name", f"package-{n}")
        _write(root, f"{PC}/intel-rapl:{n}/energy_uj", str(energy_uj))
        _write(root, f"{PC}/intel-rapl:{n}/max_energy_range_uj", str(RANGE_UJ))
        _write(root, f"{PC}/intel-rapl:{n}:0/name", "core")
        _write(root, f"{PC}/intel-rapl:{n}:0/energy_uj", "5")
    _write(root, f"{PC}/intel-rapl:{packages}/name", "psys")
    _write(root, f"{PC}/intel-rapl:{packages}/energy_uj", "7")
    return root


def _set(root: Path, n: int, value: int) -> None:
    """Change a counter atomically (a poller thread may be reading it)."""
    path = root / f"{PC}/intel-rapl:{n}/energy_uj"
    tmp = path.with_name("energy_uj.tmp")
    tmp.write_text(f"{value}\n")
    os.replace(tmp, path)


class Clock:
    """A settable clock."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_cpu_rapl_readable_numeric(tmp_path: Path) -> None:
    root, clock = powercap(tmp_path), Clock()
    meter = RaplMeter(root, clock=clock)
    assert isinstance(meter, EnergyMeter)
    assert meter.source == "RAPL package-0 (whole package)"
    assert meter.min_window_s == 0.05
    assert meter.available() == (True, "")
    meter.start()
    _set(root, 0, 1_000_000 + 6_250_000)  # 6.25 J in 0.1 s: 62.5 W
    _write(root, f"{PC}/intel-rapl:0:0/energy_uj", "999999999")  # nested: never added
    _write(root, f"{PC}/intel-rapl:1/energy_uj", "999999999")  # psys: never added
    clock.now += 0.1
    reading = meter.stop()
    assert reading.joules == 6.25
    assert abs(reading.window_s - 0.1) < 1e-9
    assert reading.note == ""
    assert reading.source == meter.source


def test_cpu_rapl_wrap_adds_range(tmp_path: Path) -> None:
    start = RANGE_UJ - 2_000_000
    root, clock = powercap(tmp_path, energy_uj=start), Clock()
    meter = RaplMeter(root, clock=clock)
    meter.start()
    _set(root, 0, 3_000_000)  # wrapped: 2 J to the top, 3 J after
    clock.now += 1.0
    assert meter.stop().joules == 5.0


def test_cpu_rapl_poll_counts_several_wraps(tmp_path: Path) -> None:
    """Polled once per wrap, a long window sees every wrap."""
    root, clock = powercap(tmp_path, energy_uj=0), Clock()
    meter = RaplMeter(root, clock=clock)
    meter.start()
    for value in (RANGE_UJ // 2, 10, RANGE_UJ // 2, 20):  # two wraps
        _set(root, 0, value)
        meter.poll()
    clock.now += 3600.0
    assert meter.stop().joules == (2 * RANGE_UJ + 20) / 1e6


def test_cpu_rapl_background_poller(tmp_path: Path) -> None:
    root = powercap(tmp_path, energy_uj=0)
    meter = RaplMeter(root, poll_interval_s=0.002)
    meter.start()
    _set(root, 0, RANGE_UJ - 1)
    time.sleep(0.03)  # the poller reads it
    _set(root, 0, 4)
    reading = meter.stop()
    assert reading.joules == (RANGE_UJ + 4) / 1e6


def test_cpu_rapl_wrap_without_range(tmp_path: Path) -> None:
    root = powercap(tmp_path, energy_uj=500)
    (root / f"{PC}/intel-rapl:0/max_energy_range_uj").unlink()
    meter = RaplMeter(root)
    meter.start()
    _set(root, 0, 100)
    reading = meter.stop()
    assert reading.joules is None
    assert "wrapped and max_energy_range_uj unreadable" in reading.note


def test_cpu_rapl_sockets_summed(tmp_path: Path) -> None:
    root, clock = powercap(tmp_path, packages=2), Clock()
    meter = RaplMeter(root, clock=clock)
    assert meter.source == "RAPL package-0 + package-1 (whole packages, summed)"
    meter.start()
    _set(root, 0, 3_000_000)
    _set(root, 1, 5_000_000)
    clock.now += 0.5
    assert meter.stop().joules == 6.0


def test_cpu_rapl_eacces(tmp_path: Path) -> None:
    def denied(path: Path) -> bytes:
        raise PermissionError(errno.EACCES, "Permission denied", str(path))

    meter = RaplMeter(powercap(tmp_path), reader=denied)
    assert meter.available() == (False, NOT_READABLE)
    meter.start()
    reading = meter.stop()
    assert reading.joules is None
    assert reading.note == NOT_READABLE
    assert reading.window_s >= 0


def test_cpu_rapl_eperm_and_other_errors(tmp_path: Path) -> None:
    def eperm(path: Path) -> bytes:
        raise OSError(errno.EPERM, "Operation not permitted")

    def eio(path: Path) -> bytes:
        raise OSError(errno.EIO, "Input/output error")

    root = powercap(tmp_path)
    assert RaplMeter(root, reader=eperm).available() == (False, NOT_READABLE)
    meter = RaplMeter(root, reader=eio)
    meter.start()
    note = meter.stop().note
    assert note == "RAPL intel-rapl:0/energy_uj unreadable: Input/output error"


def test_cpu_rapl_missing(tmp_path: Path) -> None:
    meter = RaplMeter(tmp_path)
    assert meter.available() == (False, NO_RAPL)
    meter.start()
    reading = meter.stop()
    assert (reading.joules, reading.note) == (None, NO_RAPL)
    psys_only = tmp_path / "psys"
    _write(psys_only, f"{PC}/intel-rapl:0/name", "psys")
    _write(psys_only, f"{PC}/intel-rapl:0/energy_uj", "1")
    assert RaplMeter(psys_only).available() == (False, NO_RAPL)
