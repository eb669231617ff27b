"""Fake Jetson filesystem trees for the probe tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from graphsval_core.testing import (  # every test: an empty workspace
    graphsval_empty_workspace as graphsval_empty_workspace,
)

NANO_MODEL = "NVIDIA Jetson Orin Nano Engineering Reference Developer Kit Super"
AGX_MODEL = "NVIDIA Jetson AGX Orin Developer Kit"

NVPMODEL_CONF = """\
< PARAM TYPE=FILE NAME=CPU_ONLINE >
CORE_0 /sys/devices/system/cpu/cpu0/online
< POWER_MODEL ID=0 NAME=15W >
CPU_ONLINE CORE_0 1
< POWER_MODEL ID=1 NAME=25W >
CPU_ONLINE CORE_0 1
< POWER_MODEL ID=2 NAME=MAXN_SUPER >
CPU_ONLINE CORE_0 1
< PM_CONFIG DEFAULT=2 >
"""


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _hwmon(root: Path, rails: list[str]) -> None:
    folder = root / "sys/bus/i2c/drivers/ina3221/1-0040/hwmon/hwmon3"
    for n, rail in enumerate(rails, start=1):
        _write(folder / f"in{n}_label", rail + "\n")
        _write(folder / f"in{n}_input", "5072\n")
        _write(folder / f"curr{n}_input", "1208\n")
    _write(root / "sys/bus/i2c/drivers/ina3221/uevent", "DRIVER=ina3221\n")


def _iio(root: Path, rails: list[str]) -> None:
    folder = root / "sys/bus/i2c/drivers/ina3221x/1-0040/iio:device0"
    for n, rail in enumerate(rails):
        _write(folder / f"rail_name_{n}", rail + "\n")
        _write(folder / f"in_power{n}_input", "4312\n")


@pytest.fixture
def jetson_tree(tmp_path: Path) -> Callable[..., Path]:
    """Factory of a fake root: ``jetson_tree(model=..., ina="hwmon", mode="MAXN_SUPER")``.

    ``model=None`` leaves no device-tree model (not a Jetson); ``ina`` is
    ``"hwmon"`` (JetPack 5+), ``"iio"`` (JetPack 4) or None; ``mode`` is the
    current nvpmodel mode name, or None for no nvpmodel files.
    """

    def make(
        model: str | None = NANO_MODEL,
        *,
        ina: str | None = "hwmon",
        rails: tuple[str, ...] = ("VDD_IN", "VDD_CPU_GPU_CV", "VDD_SOC"),
        mode: str | None = "MAXN_SUPER",
        mem_kib: int | None = 7_620_000,
        model_file: str = "proc/device-tree/model",
    ) -> Path:
        root = tmp_path / "root"
        root.mkdir()
        if model is not None:
            _write(root / model_file, model + "\x00")
        if mem_kib is not None:
            _write(root / "proc/meminfo", f"MemTotal:        {mem_kib} kB\nMemFree: 1 kB\n")
        if mode is not None:
            ids = {"15W": 0, "25W": 1, "MAXN_SUPER": 2}
            _write(root / "etc/nvpmodel.conf", NVPMODEL_CONF)
            _write(root / "var/lib/nvpmodel/status", f"pmode:{ids[mode]:04d} fmode:quiet\n")
        if ina == "hwmon":
            _hwmon(root, list(rails))
        elif ina == "iio":
            _iio(root, list(rails))
        return root

    return make
