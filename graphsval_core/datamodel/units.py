"""Human-readable formatting of bytes, rates, times, energies and powers."""

from __future__ import annotations

import math

_BINARY = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")
_SI = ("", "k", "M", "G", "T", "P", "E")


def fmt_bytes(value: float) -> str:
    """``49152`` -> ``48 KiB`` (binary prefixes, up to 3 significant digits)."""
    value = float(value)
    i = 0
    # 1000-1023 of a prefix would print as 1e+03 at three digits: the next prefix
    while abs(value) >= 1000 and i < len(_BINARY) - 1:
        value /= 1024
        i += 1
    return f"{value:.3g} {_BINARY[i]}"


def fmt_si(value: float, unit: str) -> str:
    """``3.35e12, 'B/s'`` -> ``3.35 TB/s`` (SI prefixes, 3 significant digits)."""
    value = float(value)
    if value == 0 or not math.isfinite(value):
        return f"{value:g} {unit}"
    i = 0
    while abs(value) >= 1000 and i < len(_SI) - 1:
        value /= 1000
        i += 1
    return f"{value:.3g} {_SI[i]}{unit}"


def fmt_seconds(value: float) -> str:
    """Seconds with a fitting unit: ``5e-06`` -> ``5 us``."""
    value = float(value)
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "us"), (1e-9, "ns")):
        if abs(value) >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value / 1e-12:.3g} ps"


def fmt_cost(seconds: float) -> str:
    """A time something costs: :func:`fmt_seconds`, or ``none`` for zero
    (never ``0 ps``)."""
    return fmt_seconds(seconds) if seconds else "none"


def fmt_share(share: float) -> str:
    """A share of something in words: ``all`` for 1 (to a rounding), else
    its value to three figures (``0.52``)."""
    return "all" if share >= 1 - 1e-9 else f"{share:.3g}"


def fmt_joules(value: float) -> str:
    """Joules with a fitting unit: ``1.5e-12`` -> ``1.5 pJ``."""
    value = float(value)
    for scale, unit in ((1.0, "J"), (1e-3, "mJ"), (1e-6, "uJ"), (1e-9, "nJ"), (1e-12, "pJ")):
        if abs(value) >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value / 1e-15:.3g} fJ"
