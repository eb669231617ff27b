"""measure_jetson end to end on this machine: a fake torch whose CUDA events read
the wall clock (the workload itself runs on the CPU) and a fake Jetson tree
(device tree, nvpmodel, INA3221, devfreq, thermal zones)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import attrs
import pytest

from graphsval_core.plugin_api import CaptureItem, build_registry, measurement_row
from graphsval_jetson import plugin
from graphsval_jetson.gpu_sysfs import GpuState, gpu_state, l4t_release
from graphsval_jetson.ina3221 import SOURCE, Ina3221Meter
from graphsval_jetson.measure import measure_jetson, power_mode_note
from graphsval_jetson.targets import orin_nano_8gb

#: The built-in ops, as every registry has them.
_OPS = build_registry(autoload=False).ops()
LINEAR = _OPS["linear"]
MATMUL = _OPS["matmul"]
VECTOR_ADD = _OPS["vector_add"]

Tree = Callable[..., Path]
NANO_MODEL = "NVIDIA Jetson Orin Nano Engineering Reference Developer Kit Super"
#: Short budgets: the kernels are tiny CPU ones and the test must be quick.
FAST = {
    "max_time_per_shape_s": 0.05,
    "min_block_s": 1e-4,
    "max_energy_window_s": 0.05,
    "target_ci": 0.5,
}


class FakeEvent:
    """A CUDA event that reads the wall clock when recorded."""

    def __init__(self, enable_timing: bool = False) -> None:
        self.t = 0.0

    def record(self, stream: Any = None) -> None:
        self.t = time.perf_counter()

    def synchronize(self) -> None:
        pass

    def elapsed_time(self, end: FakeEvent) -> float:
        return (end.t - self.t) * 1e3


def fake_torch(sync: Callable[..., None] = lambda device=None: None) -> SimpleNamespace:
    """The part of torch the measurer touches, as JetPack's torch answers; real CPU tensors."""
    import torch

    matmul = SimpleNamespace(
        allow_tf32=True,
        allow_fp16_reduced_precision_reduction=True,
        allow_bf16_reduced_precision_reduction=True,
    )
    return SimpleNamespace(
        __version__="2.5.0a0+872d972e41.nv24.08",
        version=SimpleNamespace(cuda="12.6"),
        cuda=SimpleNamespace(
            Event=FakeEvent,
            synchronize=sync,
            is_available=lambda: True,
            get_device_name=lambda device=None: "Orin",
            get_device_properties=lambda device=None: SimpleNamespace(L2_cache_size=2 << 20),
        ),
        backends=SimpleNamespace(
            cuda=SimpleNamespace(matmul=matmul), cudnn=SimpleNamespace(allow_tf32=True)
        ),
        get_float32_matmul_precision=lambda: "high",
        inference_mode=torch.inference_mode,
        empty=torch.empty,
        float32=torch.float32,
    )


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _add_gpu_files(root: Path, mhz: int = 1020, millic: int = 48500) -> None:
    """devfreq, a GPU thermal zone (beside a CPU one) and the L4T release file."""
    _write(root / "sys/class/devfreq/17000000.ga10b/cur_freq", f"{mhz * 1_000_000}\n")
    _write(root / "sys/class/devfreq/3d00000.host1x/cur_freq", "408000000\n")
    _write(root / "sys/class/thermal/thermal_zone0/type", "cpu-thermal\n")
    _write(root / "sys/class/thermal/thermal_zone0/temp", "50000\n")
    _write(root / "sys/class/thermal/thermal_zone1/type", "gpu-thermal\n")
    _write(root / "sys/class/thermal/thermal_zone1/temp", f"{millic}\n")
    _write(
        root / "etc/nv_tegra_release",
        "# R36 (release), REVISION: 4.3, GCID: 38968081, BOARD: generic, EABI: aarch64\n",
    )


def _meter(root: Path) -> Ina3221Meter:
    meter = Ina3221Meter(root, interval_s=0.002)
    meter.min_window_s = 0.02  # the real 0.1 s would slow every test down
    return meter


def test_jetson_measure_end_to_end(jetson_tree: Tree) -> None:
    root = jetson_tree(ina="hwmon", mode="MAXN_SUPER")
    _add_gpu_files(root, mhz=306, millic=45000)

    def sync(device: Any = None) -> None:
        """The GPU clocks up and warms while it works (read after the shape)."""
        _write(root / "sys/class/devfreq/17000000.ga10b/cur_freq", "1020000000\n")
        _write(root / "sys/class/thermal/thermal_zone1/temp", "52000\n")

    m = measure_jetson(
        orin_nano_8gb(),
        MATMUL,
        (32, 48, 64),
        "fp16",
        FAST,
        torch=fake_torch(sync),
        meter=_meter(root),
        root=root,
        device="cpu",
    )
    assert m.latency_s is not None and m.latency_s > 0
    assert m.notes == "sensor averaging ~8 ms assumed (INA3221 default; not exposed by sysfs)"
    x = m.extras
    assert x["verdict"] == "pass"
    assert x["device"] == NANO_MODEL
    assert (x["power_mode"], x["power_mode_id"]) == ("MAXN_SUPER", "2")
    assert x["ina3221_averaging_s"] == 0.008
    assert x["ina3221_averaging"].startswith("sensor averaging ~8 ms assumed")
    assert x["power_sample_interval_s"] == 0.002
    assert (x["sm_clock_mhz_before"], x["sm_clock_mhz_after"]) == (306, 1020)
    assert (x["temperature_c_before"], x["temperature_c_after"]) == (45.0, 52.0)
    assert x["numerics"].startswith("tf32_matmul=yes tf32_cudnn=yes fp32_precision=high")
    assert x["launch_in_timing"] == "yes: CUDA events around blocks of back-to-back launches"
    assert x["fingerprint"] == {
        **orin_nano_8gb().fingerprint,
        "gpu_name": "Orin",
        "cuda_runtime": "12.6",
        "l4t": "R36.4.3",
    }
    assert x["energy_source"] == SOURCE
    window = float(x["energy_window_s"])
    assert m.energy_j is not None and 0 < m.energy_j <= 5.072 * 1.208 * window * 1.01

    row = measurement_row(
        "jetson_orin_nano_8gb",
        "matmul",
        CaptureItem((32, 48, 64), "fp16"),
        "calibration",
        m,
        0.1,
        False,
    )
    assert row["device"] == NANO_MODEL and row["energy_source"] == SOURCE
    details = json.loads(row["details"])
    assert details["power_mode"] == "MAXN_SUPER" and details["ina3221_averaging_s"] == 0.008


def test_jetson_measure_power_mode_mismatch(jetson_tree: Tree) -> None:
    root = jetson_tree(mode="15W")
    m = measure_jetson(
        orin_nano_8gb(),
        VECTOR_ADD,
        (4096,),
        "bf16",
        FAST,
        torch=fake_torch(),
        meter=_meter(root),
        root=root,
        device="cpu",
    )
    assert m.extras["power_mode"] == "15W"
    assert "power mode is 15W, not MAXN_SUPER: these timings are not jetson_orin_nano_8gb's" in (
        m.notes
    )
    assert m.extras["sm_clock_mhz_before"] is None  # no devfreq in this tree


def test_jetson_measure_power_mode_unknown_and_no_ina(jetson_tree: Tree) -> None:
    root = jetson_tree(mode=None, ina=None)
    m = measure_jetson(
        orin_nano_8gb(),
        LINEAR,
        (4, 16, 8),
        "fp32",
        FAST,
        torch=fake_torch(),
        root=root,
        device="cpu",
    )
    assert m.energy_j is None and m.extras["energy_source"] == "none"
    assert m.notes.startswith("no INA3221 power monitor")
    unverified = "power mode not verified (no nvpmodel status); jetson_orin_nano_8gb is"
    assert f"{unverified} specified in MAXN_SUPER" in m.notes
    assert m.extras["power_mode"] == "unknown"


def test_jetson_measure_flush_l2_from_settings(jetson_tree: Tree) -> None:
    root = jetson_tree()
    m = measure_jetson(
        orin_nano_8gb(),
        VECTOR_ADD,
        (1024,),
        "fp32",
        {**FAST, "flush_l2": True},
        torch=fake_torch(),
        meter=_meter(root),
        root=root,
        device="cpu",
    )
    assert m.extras["l2_flush"] == "yes: 4 MiB zeroed before each block"


def test_jetson_measure_without_cuda_torch(jetson_tree: Tree) -> None:
    torch = fake_torch()
    torch.cuda.is_available = lambda: False
    with pytest.raises(RuntimeError, match="torch sees no CUDA device"):
        measure_jetson(
            orin_nano_8gb(), VECTOR_ADD, (256,), "fp32", FAST, torch=torch, root=jetson_tree()
        )


def test_jetson_power_mode_note() -> None:
    assert power_mode_note("MAXN_SUPER", "MAXN_SUPER", "k") == ""
    assert power_mode_note("maxn_super", "MAXN_SUPER", "k") == ""
    assert power_mode_note("25W", None, "k") == ""
    assert power_mode_note(None, None, "k") == "power mode not verified (no nvpmodel status)"


def test_jetson_gpu_sysfs_missing_files(tmp_path: Path) -> None:
    assert gpu_state(tmp_path) == GpuState(None, None)
    assert l4t_release(tmp_path) is None
    _write(tmp_path / "sys/class/devfreq/17000000.gpu/cur_freq", "918000000\n")
    _write(tmp_path / "sys/class/thermal/thermal_zone3/type", "GPU-therm\n")
    _write(tmp_path / "sys/class/thermal/thermal_zone3/temp", "-1500\n")
    assert gpu_state(tmp_path) == GpuState(918, -1.5)


def test_jetson_plugin_measure_ignores_other_families() -> None:
    other = attrs.evolve(orin_nano_8gb(), key="other", family="nvidia_datacenter")
    result = plugin.graphsval_measure(
        target=other, op=MATMUL, shape=(8, 8, 8), dtype="fp32", settings={}
    )
    assert result is None
