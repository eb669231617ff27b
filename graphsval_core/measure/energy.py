"""The energy-meter contract shared by every measurer.

A meter measures the energy of one window: ``start()``, run the kernel many
times, ``stop()``. Windows shorter than ``min_window_s`` are below the sensor's
resolution or update period, so measurers repeat the kernel until the window is
at least that long and divide by the call count. A meter never raises for a
missing sensor or a permission error: it answers ``joules=None`` with a note.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from attrs import frozen


@frozen
class EnergyReading:
    """Energy of one window.

    ``joules`` is None when there is no trustworthy energy; ``note`` says why
    (or qualifies the figure, e.g. "power-sampling fallback"). ``window_s`` is
    the window's wall time; ``source`` names the sensor and what it covers
    (whole package, whole device, whole module).
    """

    joules: float | None
    window_s: float
    source: str
    note: str = ""


@runtime_checkable
class EnergyMeter(Protocol):
    """What a measurer needs from an energy sensor."""

    #: Sensor and coverage, e.g. "RAPL package-0 (whole package)".
    source: str
    #: Shortest window worth measuring (resolution, update or averaging period).
    min_window_s: float

    def available(self) -> tuple[bool, str]:
        """Whether the meter can read here, and the reason when not (cheap)."""
        ...

    def start(self) -> None:
        """Begin a window."""
        ...

    def stop(self) -> EnergyReading:
        """End the window and return its energy."""
        ...


class NoEnergy:
    """A meter for machines without a sensor: every window reads None with a note."""

    min_window_s = 0.0

    def __init__(self, reason: str, source: str = "none") -> None:
        self.reason = reason
        self.source = source
        self._t0 = 0.0

    def available(self) -> tuple[bool, str]:
        return False, self.reason

    def start(self) -> None:
        import time

        self._t0 = time.perf_counter()

    def stop(self) -> EnergyReading:
        import time

        return EnergyReading(None, time.perf_counter() - self._t0, self.source, self.reason)
