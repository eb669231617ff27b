"""The Jetson probe against fake sysfs trees."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import attrs
import pytest

from graphsval_core.plugin_api import ProbeResult, TargetSpec
from graphsval_jetson import plugin, probe
from graphsval_jetson.probe import find_rails, probe_target, read_model
from graphsval_jetson.targets import orin_agx_64gb, orin_nano_8gb

Tree = Callable[..., Path]


@pytest.fixture
def with_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pretend torch is installed (the probe only asks ``find_spec``)."""
    real = probe.importlib.util.find_spec
    monkeypatch.setattr(
        probe.importlib.util,
        "find_spec",
        lambda name, *a: object() if name == "torch" else real(name, *a),
    )


def test_jetson_probe_ignores_other_families() -> None:
    other = attrs.evolve(orin_nano_8gb(), family="nvidia_datacenter")
    assert probe_target(other, Path("/nonexistent")) is None


def test_jetson_probe_jetpack5_hwmon_layout(jetson_tree: Tree, with_torch: None) -> None:
    root = jetson_tree(ina="hwmon")
    result = probe_target(orin_nano_8gb(), root)
    assert result is not None and result.available, result
    assert "power mode MAXN_SUPER" in result.reason
    assert result.energy.startswith("INA3221 VDD_IN rail")
    assert "JetPack 5+ hwmon" in result.energy and "1-0040/hwmon/hwmon3 channel 1" in result.energy
    assert str(root) not in result.energy


def test_jetson_probe_jetpack4_iio_layout(jetson_tree: Tree, with_torch: None) -> None:
    root = jetson_tree(ina="iio", rails=("VDD_IN", "VDD_CPU_GPU_CV", "VDD_SOC"))
    result = probe_target(orin_nano_8gb(), root)
    assert result is not None and result.available
    assert result.energy.startswith("INA3221 VDD_IN rail")
    assert "JetPack 4 iio" in result.energy and "iio:device0 channel 0" in result.energy
    rails = find_rails(root)
    assert [r.name for r in rails] == ["VDD_IN", "VDD_CPU_GPU_CV", "VDD_SOC"]
    assert all(r.layout == "iio" and r.readable for r in rails)


def test_jetson_probe_without_vdd_in_or_ina(jetson_tree: Tree, with_torch: None) -> None:
    no_total = probe_target(orin_nano_8gb(), jetson_tree(rails=("VDD_GPU_SOC", "VDD_CPU_CV")))
    assert no_total is not None and no_total.available
    assert no_total.energy.startswith("none: INA3221 found (rails VDD_CPU_CV, VDD_GPU_SOC)")


def test_jetson_probe_without_ina3221(jetson_tree: Tree, with_torch: None) -> None:
    result = probe_target(orin_nano_8gb(), jetson_tree(ina=None))
    assert result is not None and result.available
    assert result.energy.startswith("none: no INA3221 power monitor")


def test_jetson_probe_mismatched_board(jetson_tree: Tree, with_torch: None) -> None:
    result = probe_target(orin_agx_64gb(), jetson_tree(mode=None))
    assert result is not None and not result.available
    assert result.reason == (
        "this board is 'NVIDIA Jetson Orin Nano Engineering Reference Developer Kit Super' "
        "(Jetson Orin Nano 8GB), not a Jetson AGX Orin 64GB"
    )


def test_jetson_probe_smaller_memory_variant(jetson_tree: Tree, with_torch: None) -> None:
    result = probe_target(orin_nano_8gb(), jetson_tree(mem_kib=3_700_000))
    assert result is not None and not result.available
    assert "3.5 GiB of memory, not a Jetson Orin Nano 8GB" in result.reason


def test_jetson_probe_wrong_power_mode(jetson_tree: Tree, with_torch: None) -> None:
    result = probe_target(orin_nano_8gb(), jetson_tree(mode="15W"))
    assert result is not None and not result.available
    assert result.reason.startswith("power mode is 15W; jetson_orin_nano_8gb is specified in")
    assert "sudo nvpmodel -m 2" in result.reason


def test_jetson_probe_power_mode_unknown(jetson_tree: Tree, with_torch: None) -> None:
    result = probe_target(orin_nano_8gb(), jetson_tree(mode=None))
    assert result is not None and result.available
    assert "power mode not verified" in result.reason


def test_jetson_probe_not_a_jetson(jetson_tree: Tree, with_torch: None) -> None:
    bare = probe_target(orin_nano_8gb(), jetson_tree(model=None))
    assert bare == ProbeResult(False, "not a Jetson board (no /proc/device-tree/model)")


def test_jetson_probe_other_device_tree_board(tmp_path: Path, with_torch: None) -> None:
    root = tmp_path / "pi"
    (root / "sys/firmware/devicetree/base").mkdir(parents=True)
    (root / "sys/firmware/devicetree/base/model").write_text("Raspberry Pi 4 Model B Rev 1.4\x00")
    assert read_model(root) == "Raspberry Pi 4 Model B Rev 1.4"
    result = probe_target(orin_nano_8gb(), root)
    assert result == ProbeResult(
        False, "not a Jetson board (device-tree model is 'Raspberry Pi 4 Model B Rev 1.4')"
    )


def test_jetson_probe_without_torch(jetson_tree: Tree, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(probe.importlib.util, "find_spec", lambda name, *a: None)
    result = probe_target(orin_nano_8gb(), jetson_tree())
    assert result is not None and not result.available
    assert result.reason.startswith("torch is not installed")


def test_jetson_plugin_probe_on_this_machine() -> None:
    """This machine is no Jetson: every Jetson target is listed and unavailable."""
    from graphsval_core.plugin_api import build_registry

    registry = build_registry(autoload=False, plugin_args=["jetson"], strict=True)
    targets: dict[str, TargetSpec] = registry.targets()
    keys = {"jetson_orin_nano_8gb", "jetson_orin_nx_16gb", "jetson_orin_agx_64gb"}
    assert keys <= set(targets)
    if read_model(Path("/")) is None:
        for key in keys:
            result = registry.measurer_probe(targets[key])
            assert result == ProbeResult(False, "not a Jetson board (no /proc/device-tree/model)")
    assert plugin.graphsval_measurer_probe(target=targets["jetson_orin_nano_8gb"]) is not None
