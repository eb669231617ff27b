"""Time-weighted energy from a power reading sampled in a background thread.

:class:`PowerSampler` reads power once when started, then at a steady interval
from a daemon thread, and once more when stopped; :class:`PowerIntegrator`
integrates those ``(time, watts)`` samples with the trapezoid rule, so uneven
gaps are weighted by their length. The window is the span from the first to
the last sample.

"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class PowerIntegrator:
    """Trapezoid integral of ``(t, watts)`` samples added in time order."""

    def __init__(self) -> None:
        self.joules = 0.0
        self.samples = 0
        self.first_t: float | None = None
        self.last_t: float | None = None
        self.max_gap_s = 0.0
        self._last_w = 0.0

    def add(self, t: float, watts: float) -> None:
        """Add one sample; a sample not later than the last one is ignored."""
        if self.last_t is None:
            self.first_t = t
        elif t <= self.last_t:
            return
        else:
            gap = t - self.last_t
            self.joules += gap * (watts + self._last_w) / 2
            self.max_gap_s = max(self.max_gap_s, gap)
        self.last_t, self._last_w = t, watts
        self.samples += 1

    @property
    def span_s(self) -> float:
        """Time from the first to the last sample."""
        if self.first_t is None or self.last_t is None:
            return 0.0
        return self.last_t - self.first_t


class PowerSampler:
    """Samples ``read_watts`` every ``interval_s`` between :meth:`start` and :meth:`stop`.

    :param read_watts: returns the current power in watts; may raise.
    :param interval_s: the sampling interval (deadlines on a fixed grid from the
        first sample; a late sample skips missed deadlines rather than bursting).
    :param clock: seconds, monotonic (injectable for tests).
    :param sleep: waits that many seconds (injectable for tests); the default
        waits on an event, so :meth:`stop` never waits out an interval.
    """

    def __init__(
        self,
        read_watts: Callable[[], float],
        interval_s: float,
        clock: Callable[[], float] = time.perf_counter,
        sleep: Callable[[float], object] | None = None,
    ) -> None:
        self._read = read_watts
        self._interval = interval_s
        self._clock = clock
        self._stopping = threading.Event()
        self._sleep = sleep or self._stopping.wait
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self.integral = PowerIntegrator()
        #: Why sampling failed mid-window (the reader's exception), else None.
        self.error: str | None = None

    def start(self) -> None:
        """Take the first sample (its exception propagates) and start the thread."""
        self.integral, self.error = PowerIntegrator(), None
        self._stopping.clear()
        t = self._clock()
        self.integral.add(t, self._read())
        self._thread = threading.Thread(target=self._run, args=(t,), daemon=True)
        self._thread.start()

    def _run(self, t0: float) -> None:
        tick = 1
        while not self._stopping.is_set():
            delay = t0 + tick * self._interval - self._clock()
            if delay > 0:
                self._sleep(delay)
            if self._stopping.is_set():
                return
            t = self._clock()
            try:
                watts = self._read()
            except Exception as exc:  # any reader error ends the window's sampling
                with self._lock:
                    if not self._stopping.is_set():
                        self.error = self.error or _describe(exc)
                return
            with self._lock:
                if self._stopping.is_set():
                    return
                self.integral.add(t, watts)
            tick = max(tick + 1, int((self._clock() - t0) / self._interval) + 1)

    def stop(self) -> PowerIntegrator:
        """Stop the thread, take the last sample and return the integral.

        Check :attr:`error` first: when set, the integral is incomplete.
        """
        with self._lock:
            self._stopping.set()
        t = self._clock()
        try:
            watts = self._read()
        except Exception as exc:  # reported, never raised: meters answer None
            self.error = self.error or _describe(exc)
        else:
            self.integral.add(t, watts)
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        return self.integral


def _describe(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__
