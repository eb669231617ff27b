"""The Jetson GPU's clock and temperature, and the L4T release, from files.

NVML answers neither on a Jetson, so they are read under a root (``/``
normally, a fake tree in tests):

- clock: the GPU's devfreq node, ``sys/class/devfreq/<address>.<name>/cur_freq``
  (Hz), whose name is the GPU's (``ga10b`` on Orin, ``gv11b`` on Xavier,
  ``gp10b`` on TX2, ``gpu`` on some releases);
- temperature: the thermal zone whose ``type`` starts with ``gpu``
  (``gpu-thermal`` on JetPack 5+, ``GPU-therm`` on JetPack 4), ``temp`` in
  millidegrees C;
- release: ``etc/nv_tegra_release`` (``# R36 (release), REVISION: 4.3, ...``).

Every reader answers None when its file is missing or unreadable.
"""

from __future__ import annotations

import re
from pathlib import Path

from attrs import frozen

DEVFREQ = "sys/class/devfreq"
THERMAL = "sys/class/thermal"
TEGRA_RELEASE = "etc/nv_tegra_release"
#: Suffixes of the GPU's devfreq node name (after the bus address and a dot).
GPU_DEVFREQ_NAMES = ("ga10b", "gv11b", "gp10b", "gpu")

_RELEASE_RE = re.compile(r"#\s*R(\d+)\s*\(release\),\s*REVISION:\s*([\d.]+)")


@frozen
class GpuState:
    """The GPU's clock (MHz) and temperature (C); None where no file says."""

    sm_clock_mhz: int | None
    temperature_c: float | None


def _read(path: Path) -> str | None:
    try:
        return path.read_text(errors="replace").strip()
    except OSError:
        return None


def gpu_clock_mhz(root: Path) -> int | None:
    """The GPU's current clock from its devfreq node, in MHz."""
    for node in sorted((root / DEVFREQ).glob("*")):
        if node.name.rsplit(".", 1)[-1].lower() in GPU_DEVFREQ_NAMES:
            text = _read(node / "cur_freq") or ""
            if text.isdigit():
                return round(int(text) / 1e6)
    return None


def gpu_temperature_c(root: Path) -> float | None:
    """The GPU thermal zone's temperature in C."""
    for zone in sorted((root / THERMAL).glob("thermal_zone*")):
        if (_read(zone / "type") or "").lower().startswith("gpu"):
            text = _read(zone / "temp") or ""
            if text.lstrip("-").isdigit():
                return int(text) / 1000.0
    return None


def gpu_state(root: Path) -> GpuState:
    """The GPU's clock and temperature now."""
    return GpuState(gpu_clock_mhz(root), gpu_temperature_c(root))


def l4t_release(root: Path) -> str | None:
    """The L4T release (``R36.4.3``), the JetPack's Linux, or None."""
    match = _RELEASE_RE.search(_read(root / TEGRA_RELEASE) or "")
    return f"R{match.group(1)}.{match.group(2)}" if match else None
