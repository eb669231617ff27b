"""The Jetson INA3221 power monitor: finding its rails and :class:`Ina3221Meter`.

Both sysfs layouts are read under a root (``/`` normally, a fake tree in tests):

- JetPack 5+ (hwmon): ``sys/bus/i2c/drivers/ina3221/<bus>-00xx/hwmon/hwmon*/``
  with ``in<N>_label``, ``in<N>_input`` (mV) and ``curr<N>_input`` (mA), power
  being V x I, or ``power<N>_input`` (uW) where the driver has it;
- JetPack 4 (iio): ``sys/bus/i2c/drivers/ina3221x/<bus>-00xx/iio:device*/`` with
  ``rail_name_<N>`` and ``in_power<N>_input`` (mW).

The meter reads ``VDD_IN`` only: it is the module input, the whole-module total,
and its sub-rails (``VDD_CPU_GPU_CV``, ``VDD_SOC``, ...) are part of it, so adding
them would double-count. The sensor averages each reading over its own window
(about 8 ms by default); the meter records that window and notes energy windows
shorter than it.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from pathlib import Path

from attrs import frozen

from graphsval_core.plugin_api import EnergyReading, PowerSampler

HWMON_DRIVER = "sys/bus/i2c/drivers/ina3221"
IIO_DRIVER = "sys/bus/i2c/drivers/ina3221x"
TOTAL_RAIL = "VDD_IN"
SOURCE = "INA3221 VDD_IN (whole module)"
#: The INA3221's averaging period when sysfs does not expose it.
DEFAULT_AVERAGING_S = 0.008

_HWMON_LABEL_RE = re.compile(r"^in(\d+)_label$")
_IIO_RAIL_RE = re.compile(r"^rail_name_(\d+)$")

#: Reads a small sysfs file as text; raises OSError as ``open`` does.
Reader = Callable[[Path], str]


def read_file(path: Path) -> str:
    """The text of a sysfs file."""
    with path.open("r", encoding="ascii", errors="replace") as handle:
        return handle.read(64)


def _read(path: Path) -> str | None:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return None


@frozen
class Rail:
    """One INA3221 channel: its rail name, sysfs layout and where it lives."""

    name: str
    layout: str  # "hwmon" (JetPack 5+) or "iio" (JetPack 4)
    where: str  # path under the driver folder, for messages
    readable: bool  # its power (or voltage and current) readings can be read
    folder: Path  # the hwmon or iio:device folder
    channel: str  # the channel number N in the file names

    def power_files(self) -> tuple[Path, ...]:
        """The files one power reading needs: one power file, or voltage and current."""
        n, folder = self.channel, self.folder
        if self.layout == "iio":
            return (folder / f"in_power{n}_input",)
        if _readable(folder / f"power{n}_input"):
            return (folder / f"power{n}_input",)
        return (folder / f"in{n}_input", folder / f"curr{n}_input")


def power_reader(rail: Rail, reader: Reader = read_file) -> Callable[[], float]:
    """A function returning ``rail``'s power now in watts (it raises OSError or
    ValueError); the files are located once, here."""
    files = rail.power_files()
    if len(files) == 2:
        volts, amps = files
        return lambda: float(reader(volts)) * float(reader(amps)) / 1e6  # mV x mA
    scale = 1e3 if rail.layout == "iio" else 1e6  # mW (iio) or uW (hwmon)
    return lambda: float(reader(files[0])) / scale


def _readable(*paths: Path) -> bool:
    return all(p.is_file() and os.access(p, os.R_OK) for p in paths)


def find_rails(root: Path) -> list[Rail]:
    """Every INA3221 rail in either sysfs layout, sorted by location."""
    rails: list[Rail] = []
    hwmon = Path(root) / HWMON_DRIVER
    for label in sorted(hwmon.glob("*/hwmon/hwmon*/in*_label")):
        match = _HWMON_LABEL_RE.match(label.name)
        name = (_read(label) or "").strip()
        if not match or not name:
            continue
        n, folder = match.group(1), label.parent
        readable = _readable(folder / f"power{n}_input") or _readable(
            folder / f"in{n}_input", folder / f"curr{n}_input"
        )
        where = f"{folder.relative_to(hwmon).as_posix()} channel {n}"
        rails.append(Rail(name, "hwmon", where, readable, folder, n))
    iio = Path(root) / IIO_DRIVER
    for rail_file in sorted(iio.glob("*/iio:device*/rail_name_*")):
        match = _IIO_RAIL_RE.match(rail_file.name)
        name = (_read(rail_file) or "").strip()
        if not match or not name:
            continue
        n, folder = match.group(1), rail_file.parent
        where = f"{folder.relative_to(iio).as_posix()} channel {n}"
        readable = _readable(folder / f"in_power{n}_input")
        rails.append(Rail(name, "iio", where, readable, folder, n))
    return rails


def total_rail(rails: list[Rail]) -> Rail | None:
    """The ``VDD_IN`` rail (the first, if several monitors name one), or None."""
    return next((r for r in rails if r.name.upper() == TOTAL_RAIL), None)


def averaging_period(folder: Path) -> tuple[float, str]:
    """The sensor's averaging period in seconds, and where that figure comes from.

    hwmon's ``update_interval`` (ms) is the time the chip takes to produce one
    averaged reading of every channel. Without it the INA3221 default of about
    8 ms is assumed (``samples``, the averaging count, is quoted when present).
    """
    text = (_read(folder / "update_interval") or "").strip()
    if text.isdigit() and int(text) > 0:
        return int(text) / 1e3, f"sensor averaging {int(text)} ms (sysfs update_interval)"
    samples = (_read(folder / "samples") or "").strip()
    quoted = f", samples={samples}" if samples.isdigit() else ""
    return DEFAULT_AVERAGING_S, (
        f"sensor averaging ~{DEFAULT_AVERAGING_S * 1e3:.0f} ms assumed "
        f"(INA3221 default; not exposed by sysfs{quoted})"
    )


def _no_rail() -> float:
    raise OSError(f"no {TOTAL_RAIL} rail")


class Ina3221Meter:
    """Whole-module Jetson energy: ``VDD_IN`` sampled at a steady interval, integrated.

    :param root: the file-system root to read ``sys/`` under.
    :param interval_s: the sampling interval.
    :param reader: reads one sysfs file (injectable for tests).
    :param clock: seconds, monotonic (injectable for tests).
    :param sleep: the sampler's wait (injectable for tests; see ``PowerSampler``).
    """

    source = SOURCE
    min_window_s = 0.1

    def __init__(
        self,
        root: str | Path = "/",
        interval_s: float = 0.005,
        *,
        reader: Reader = read_file,
        clock: Callable[[], float] = time.perf_counter,
        sleep: Callable[[float], object] | None = None,
    ) -> None:
        self.interval_s = interval_s
        self._clock = clock
        self._sleep = sleep
        self.rails = find_rails(Path(root))
        self.rail = total_rail(self.rails)
        #: The sensor's averaging period (s) and a description of where it comes from.
        self.averaging_s, self.averaging_note = (
            averaging_period(self.rail.folder) if self.rail else (DEFAULT_AVERAGING_S, "")
        )
        self._read_watts = power_reader(self.rail, reader) if self.rail else _no_rail
        self._sampler: PowerSampler | None = None
        self._error = ""
        self._t0 = 0.0

    def _unavailable(self) -> str | None:
        if not self.rails:
            return f"no INA3221 power monitor under /{HWMON_DRIVER} or /{IIO_DRIVER}"
        if self.rail is None:
            names = ", ".join(sorted({r.name for r in self.rails}))
            return (
                f"INA3221 has no {TOTAL_RAIL} rail (rails found: {names}); "
                "sub-rails are not summed into a module total"
            )
        return None

    def available(self) -> tuple[bool, str]:
        reason = self._unavailable()
        if reason is None:
            try:
                self._read_watts()
            except (OSError, ValueError) as exc:
                reason = f"INA3221 {TOTAL_RAIL} unreadable: {exc}"
        return reason is None, reason or ""

    def start(self) -> None:
        """Take the first ``VDD_IN`` sample and start sampling."""
        self._error, self._sampler = "", None
        self._t0 = self._clock()
        reason = self._unavailable()
        if reason is not None:
            self._error = reason
            return
        sampler = PowerSampler(self._read_watts, self.interval_s, self._clock, self._sleep)
        try:
            sampler.start()
        except (OSError, ValueError) as exc:
            self._error = f"INA3221 {TOTAL_RAIL} unreadable: {exc}"
            return
        self._sampler = sampler

    def stop(self) -> EnergyReading:
        """Stop sampling and return the module's energy over the sampled span."""
        sampler, self._sampler = self._sampler, None
        if sampler is None:
            return EnergyReading(None, self._clock() - self._t0, SOURCE, self._error)
        integral = sampler.stop()
        window = integral.span_s
        if sampler.error is not None:
            note = f"INA3221 {TOTAL_RAIL} reading failed mid-window: {sampler.error}"
            return EnergyReading(None, window, SOURCE, note)
        note = self.averaging_note
        if window < self.averaging_s:
            note = (
                f"window {window * 1e3:.1f} ms below the ~{self.averaging_s * 1e3:.0f} ms "
                f"INA3221 averaging period; energy noisy; {note}"
            )
        return EnergyReading(integral.joules, window, SOURCE, note)
