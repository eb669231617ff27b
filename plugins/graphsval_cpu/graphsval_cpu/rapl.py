"""Intel RAPL package energy: locating the counters and :class:`RaplMeter`.

The powercap tree is ``sys/class/powercap/intel-rapl:<N>`` (read under a root:
``/`` normally, a fake tree in tests). Only top-level domains whose ``name``
starts with ``package`` are read: domains nest (psys contains the packages, a
package contains core and uncore), so nested or sibling domains are never added
to them. Several sockets give several package domains, which are summed.

``energy_uj`` is a microjoule counter that wraps at ``max_energy_range_uj``
(about every 30 min at 125 W on a 262 kJ range). A counter lower than its last
reading wrapped once, and the range is added. Two wraps between readings look
like one, so a window longer than one wrap period must be polled: call
:meth:`RaplMeter.poll` at least once per wrap period (a few minutes is ample), or
pass ``poll_interval_s`` to poll from a background thread. Windows under a few
minutes need neither.

Since Linux 5.10 ``energy_uj`` is readable by root only; an unprivileged read
gets EACCES, which the meter reports as a note, never as an exception.
"""

from __future__ import annotations

import errno
import re
import threading
import time
from collections.abc import Callable
from pathlib import Path

from graphsval_core.plugin_api import EnergyReading
from graphsval_cpu.machine import read_text

POWERCAP_DIR = "sys/class/powercap"
NOT_READABLE = "RAPL not readable (root only since Linux 5.10)"
NO_RAPL = "no RAPL on this machine"

_DOMAIN_RE = re.compile(r"^intel-rapl:\d+$")

#: Reads a small sysfs file (``str`` or ``bytes``: ``int()`` takes both); raises
#: OSError as ``open`` does. Injectable so tests can simulate EACCES as root.
Reader = Callable[[Path], str | bytes]


def read_some(path: Path) -> bytes:
    """The first 64 bytes of ``path`` (a counter is at most 20 digits)."""
    with path.open("rb") as handle:
        return handle.read(64)


def rapl_package_domains(root: Path) -> list[tuple[str, Path]]:
    """``(name, dir)`` of every top-level RAPL domain whose name starts with ``package``."""
    base = Path(root) / POWERCAP_DIR
    try:
        dirs = sorted(d for d in base.iterdir() if _DOMAIN_RE.match(d.name))
    except OSError:
        return []
    return [(name, d) for d in dirs if (name := read_text(d / "name") or "").startswith("package")]


def error_reason(directory: Path, exc: OSError) -> str:
    """The note for a failed read of ``directory/energy_uj``."""
    if isinstance(exc, PermissionError) or exc.errno in (errno.EACCES, errno.EPERM):
        return NOT_READABLE
    return f"RAPL {directory.name}/energy_uj unreadable: {exc.strerror or exc}"


def unreadable_reason(
    domains: list[tuple[str, Path]], reader: Callable[[Path], object] = read_some
) -> str | None:
    """Why the package counters cannot be read (None when every one reads)."""
    if not domains:
        return NO_RAPL
    for _, directory in domains:
        try:
            reader(directory / "energy_uj")
        except OSError as exc:
            return error_reason(directory, exc)
    return None


class _Counter:
    """One package counter: its last reading and the energy accumulated since start."""

    def __init__(self, directory: Path, value: int, range_uj: int | None) -> None:
        self.directory = directory
        self.last = value
        self.range_uj = range_uj
        self.total_uj = 0
        self.unknown_wrap = False

    def advance(self, value: int) -> None:
        if value >= self.last:
            self.total_uj += value - self.last
        elif self.range_uj:
            self.total_uj += value + self.range_uj - self.last
        else:
            self.unknown_wrap = True
        self.last = value


class RaplMeter:
    """Whole-package energy from the RAPL ``package`` domains (summed over sockets).

    :param root: the file-system root to read ``sys/`` under.
    :param reader: reads one sysfs file (see :data:`Reader`).
    :param clock: seconds, monotonic (injectable for tests).
    :param poll_interval_s: when set, a background thread calls :meth:`poll` this
        often during a window, for windows longer than one counter wrap.
    """

    #: Tens of uJ resolution, ~1 ms updates: a window needs tens of ms at least.
    min_window_s = 0.05

    def __init__(
        self,
        root: str | Path = "/",
        reader: Reader = read_some,
        clock: Callable[[], float] = time.perf_counter,
        poll_interval_s: float | None = None,
    ) -> None:
        self._reader = reader
        self._clock = clock
        self._poll_interval_s = poll_interval_s
        self._domains = rapl_package_domains(Path(root))
        names = " + ".join(name for name, _ in self._domains)
        if len(self._domains) > 1:
            self.source = f"RAPL {names} (whole packages, summed)"
        else:
            self.source = f"RAPL {names or 'package'} (whole package)"
        self._lock = threading.Lock()
        self._counters: list[_Counter] = []
        self._error = ""
        self._t0 = 0.0
        self._stop_polling = threading.Event()
        self._poller: threading.Thread | None = None

    def available(self) -> tuple[bool, str]:
        reason = unreadable_reason(self._domains, self._reader)
        return reason is None, reason or ""

    def _read_uj(self, path: Path) -> int:
        return int(self._reader(path))

    def _range_uj(self, directory: Path) -> int | None:
        try:
            return self._read_uj(directory / "max_energy_range_uj") or None
        except (OSError, ValueError):
            return None

    def start(self) -> None:
        """Read every package counter and begin the window."""
        self._stop_poller()
        with self._lock:
            self._counters, self._error = [], ""
            if not self._domains:
                self._error = NO_RAPL
            for _, directory in self._domains:
                try:
                    value = self._read_uj(directory / "energy_uj")
                except OSError as exc:
                    self._error = error_reason(directory, exc)
                    break
                except ValueError:
                    self._error = f"RAPL {directory.name}/energy_uj is not a number"
                    break
                self._counters.append(_Counter(directory, value, self._range_uj(directory)))
            self._t0 = self._clock()
        if not self._error and self._poll_interval_s:
            self._stop_polling.clear()
            self._poller = threading.Thread(target=self._poll_loop, daemon=True)
            self._poller.start()

    def poll(self) -> None:
        """Read the counters now, so a wrap since the last reading is counted.

        Needed only for windows longer than one wrap period; harmless otherwise.
        """
        with self._lock:
            if self._error:
                return
            for counter in self._counters:
                try:
                    counter.advance(self._read_uj(counter.directory / "energy_uj"))
                except OSError as exc:
                    self._error = error_reason(counter.directory, exc)
                    return
                except ValueError:
                    self._error = f"RAPL {counter.directory.name}/energy_uj is not a number"
                    return

    def _poll_loop(self) -> None:
        assert self._poll_interval_s is not None
        while not self._stop_polling.wait(self._poll_interval_s):
            self.poll()

    def _stop_poller(self) -> None:
        if self._poller is not None:
            self._stop_polling.set()
            self._poller.join()
            self._poller = None

    def stop(self) -> EnergyReading:
        """Read the counters a last time and return the window's package energy."""
        self._stop_poller()
        self.poll()
        window = self._clock() - self._t0
        if self._error:
            return EnergyReading(None, window, self.source, self._error)
        wrapped = [c.directory.name for c in self._counters if c.unknown_wrap]
        if wrapped:
            note = f"RAPL counter wrapped and max_energy_range_uj unreadable ({', '.join(wrapped)})"
            return EnergyReading(None, window, self.source, note)
        joules = sum(c.total_uj for c in self._counters) / 1e6
        return EnergyReading(joules, window, self.source)
