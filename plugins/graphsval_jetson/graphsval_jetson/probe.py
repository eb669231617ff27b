"""Whether a Jetson target can be measured on this board (cheap, read-only).

Every file is read under a root path (``/`` by default, a fake tree in tests):

- ``proc/device-tree/model`` (or ``sys/firmware/devicetree/base/model``): is this
  a Jetson, and which module;
- ``proc/meminfo``: which memory variant of the module;
- ``etc/nvpmodel.conf`` and ``var/lib/nvpmodel/status``: the current power mode,
  which is part of a Jetson target;
- the INA3221 power monitor, in both sysfs layouts, for the ``VDD_IN`` rail
  (module input, the whole-module total; its sub-rails are never added to it):
  JetPack 5+ ``sys/bus/i2c/drivers/ina3221/<bus>-00xx/hwmon/hwmon*/in<N>_label``
  and JetPack 4 ``sys/bus/i2c/drivers/ina3221x/<bus>-00xx/iio:device*/rail_name_<N>``.

torch is looked up with ``importlib.util.find_spec``, never imported.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

from graphsval_core.plugin_api import ProbeResult, TargetSpec
from graphsval_jetson.ina3221 import (
    HWMON_DRIVER,
    IIO_DRIVER,
    TOTAL_RAIL,
    Rail,
    averaging_period,
    find_rails,
    total_rail,
)
from graphsval_jetson.targets import BOARDS, FAMILY

#: The root the probe reads under; tests point it at a fake tree.
DEFAULT_ROOT = Path("/")

MODEL_FILES = ("proc/device-tree/model", "sys/firmware/devicetree/base/model")
MEMINFO = "proc/meminfo"
NVPMODEL_CONF = "etc/nvpmodel.conf"
NVPMODEL_STATUS = "var/lib/nvpmodel/status"

#: A module whose memory is under this share of its nominal size is a smaller variant.
MEMORY_VARIANT_SHARE = 0.75

_MODE_RE = re.compile(r"<\s*POWER_MODEL\s+ID\s*=\s*(\d+)\s+NAME\s*=\s*([^\s>]+)")
_PMODE_RE = re.compile(r"pmode\s*:\s*(\d+)")


def _read(path: Path) -> str | None:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return None


def read_model(root: Path) -> str | None:
    """The device-tree model string (NUL and whitespace stripped), or None."""
    for name in MODEL_FILES:
        text = _read(root / name)
        if text is not None:
            return text.replace("\x00", "").strip()
    return None


def read_memory_bytes(root: Path) -> int | None:
    """``MemTotal`` of ``proc/meminfo`` in bytes, or None."""
    text = _read(root / MEMINFO) or ""
    match = re.search(r"^MemTotal:\s+(\d+)\s*kB", text, re.MULTILINE)
    return int(match.group(1)) * 1024 if match else None


def read_power_modes(root: Path) -> tuple[dict[str, str], str | None]:
    """nvpmodel's modes (id -> name) and the current mode id, each when readable."""
    found = _MODE_RE.findall(_read(root / NVPMODEL_CONF) or "")
    modes = {str(int(mode_id)): name for mode_id, name in found}
    match = _PMODE_RE.search(_read(root / NVPMODEL_STATUS) or "")
    return modes, str(int(match.group(1))) if match else None


def energy_source(rails: list[Rail]) -> str:
    """The energy source a capture would use (the VDD_IN rail), or why there is none."""
    if not rails:
        return f"none: no INA3221 power monitor found under /{HWMON_DRIVER} or /{IIO_DRIVER}"
    rail = total_rail(rails)
    if rail is None:
        names = ", ".join(sorted({r.name for r in rails}))
        return (
            f"none: INA3221 found (rails {names}) but no {TOTAL_RAIL} rail; "
            "sub-rails are not summed into a module total"
        )
    layout = "JetPack 5+ hwmon" if rail.layout == "hwmon" else "JetPack 4 iio"
    if not rail.readable:
        return f"none: INA3221 {TOTAL_RAIL} ({layout}, {rail.where}) readings are not readable"
    return (
        f"INA3221 {TOTAL_RAIL} rail: module input power, whole module ({layout}, {rail.where}; "
        f"{averaging_period(rail.folder)[1]})"
    )


def _which_board(model: str) -> str:
    for board in BOARDS.values():
        if board.marker.lower() in model.lower():
            return board.label
    return model


def probe_target(target: TargetSpec, root: Path | None = None) -> ProbeResult | None:
    """Probe ``target`` against the board under ``root``; None when not a Jetson target.

    :param target: the target spec.
    :param root: where to read ``proc``, ``sys``, ``etc`` and ``var`` from
        (default :data:`DEFAULT_ROOT`).
    """
    if target.family != FAMILY:
        return None
    root = DEFAULT_ROOT if root is None else Path(root)
    board = BOARDS.get(target.key)
    if board is None:
        return ProbeResult(False, f"graphsval-jetson cannot recognise the board of {target.key}")
    model = read_model(root)
    if model is None:
        return ProbeResult(False, "not a Jetson board (no /proc/device-tree/model)")
    if "jetson" not in model.lower():
        return ProbeResult(False, f"not a Jetson board (device-tree model is {model!r})")
    if board.marker.lower() not in model.lower():
        return ProbeResult(
            False, f"this board is {model!r} ({_which_board(model)}), not a {board.label}"
        )
    memory = read_memory_bytes(root)
    if memory is not None and memory < MEMORY_VARIANT_SHARE * board.memory_gib * 1024**3:
        return ProbeResult(
            False,
            f"this board is {model!r} with {memory / 1024**3:.1f} GiB of memory, "
            f"not a {board.label}",
        )
    modes, current = read_power_modes(root)
    mode = modes.get(current) if current is not None else None
    wanted = (target.power_mode or "").upper()
    if mode is not None and wanted and mode.upper() != wanted:
        ids = [i for i, name in modes.items() if name.upper() == wanted]
        how = f" (sudo nvpmodel -m {ids[0]})" if ids else ""
        return ProbeResult(
            False,
            f"power mode is {mode}; {target.key} is specified in {target.power_mode}, "
            f"switch to it first{how}",
        )
    if importlib.util.find_spec("torch") is None:
        return ProbeResult(False, "torch is not installed (a CUDA build for JetPack is needed)")
    mode_text = f"power mode {mode}" if mode else "power mode not verified (no nvpmodel status)"
    return ProbeResult(True, f"{model}, {mode_text}", energy_source(find_rails(root)))
