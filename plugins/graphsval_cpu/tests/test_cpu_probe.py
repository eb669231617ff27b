"""The CPU measurer probe against fake machines (RAPL readable, EACCES, missing)."""

from __future__ import annotations

import errno
from pathlib import Path

import attrs
import pytest

import graphsval_cpu.probe as probe_module
from graphsval_core.plugin_api import TargetSpec
from graphsval_cpu.probe import probe_cpu, rapl_energy
from graphsval_cpu.targets import i7_12700k

I7_MODEL = "12th Gen Intel(R) Core(TM) i7-12700K"
NOT_READABLE = "RAPL not readable (root only since Linux 5.10)"


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n")


def machine(root: Path, model: str, *, rapl: bool) -> Path:
    """A fake machine with a cpuinfo and, optionally, RAPL domains."""
    _write(root, "proc/cpuinfo", f"processor\t: 0\nmodel name\t: {model}\nflags\t\t: avx2 fma")
    if rapl:
        pc = "sys/class/powercap"
        _write(root, f"{pc}/intel-rapl/enabled", "1")  # the control type, not a domain
        _write(root, f"{pc}/intel-rapl:0/name", "package-0")
        _write(root, f"{pc}/intel-rapl:0/energy_uj", "123456789")
        _write(root, f"{pc}/intel-rapl:0:0/name", "core")
        _write(root, f"{pc}/intel-rapl:0:0/energy_uj", "1234")
        _write(root, f"{pc}/intel-rapl:1/name", "psys")
        _write(root, f"{pc}/intel-rapl:1/energy_uj", "999")
    return root


def _eacces(path: Path) -> object:
    raise PermissionError(errno.EACCES, "Permission denied", str(path))


@pytest.fixture(autouse=True)
def torch_present(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pretend torch is installed, whatever this environment has (never import it)."""
    real = probe_module.importlib.util.find_spec
    monkeypatch.setattr(
        probe_module.importlib.util,
        "find_spec",
        lambda name, *a: object() if name == "torch" else real(name, *a),
    )


def test_cpu_probe_ignores_other_families(tmp_path: Path, i7_as) -> None:
    gpu = i7_as(key="some_gpu", family="cuda", architecture="gpu")
    assert probe_cpu(gpu, root=machine(tmp_path, I7_MODEL, rapl=True)) is None


def test_cpu_probe_rapl_readable(tmp_path: Path) -> None:
    result = probe_cpu(i7_12700k(), root=machine(tmp_path, I7_MODEL, rapl=True))
    assert result is not None and result.available, result
    assert result.energy.startswith("RAPL package domain(s) package-0 (intel-rapl:0)")
    assert "psys" not in result.energy and "core" not in result.energy.split(":")[0]


def test_cpu_probe_rapl_eacces(tmp_path: Path) -> None:
    root = machine(tmp_path, I7_MODEL, rapl=True)
    result = probe_cpu(i7_12700k(), root=root, reader=_eacces)
    assert result is not None and result.available
    assert result.energy == NOT_READABLE


def test_cpu_probe_rapl_eacces_via_open(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The default reader turns an EACCES from opening ``energy_uj`` into the note."""
    root = machine(tmp_path, I7_MODEL, rapl=True)
    real_open = Path.open

    def guarded(self: Path, *args: object, **kwargs: object) -> object:
        if self.name == "energy_uj":
            raise PermissionError(errno.EACCES, "Permission denied", str(self))
        return real_open(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", guarded)
    assert rapl_energy(root) == NOT_READABLE


def test_cpu_probe_rapl_other_error(tmp_path: Path) -> None:
    def broken(path: Path) -> object:
        raise OSError(errno.EIO, "Input/output error")

    energy = rapl_energy(machine(tmp_path, I7_MODEL, rapl=True), broken)
    assert "unreadable" in energy and "Input/output error" in energy


def test_cpu_probe_no_rapl(tmp_path: Path) -> None:
    result = probe_cpu(i7_12700k(), root=machine(tmp_path, I7_MODEL, rapl=False))
    assert result is not None and result.available
    assert result.energy == "no RAPL on this machine"


def test_cpu_probe_psys_only_is_no_package(tmp_path: Path) -> None:
    _write(tmp_path, "sys/class/powercap/intel-rapl:0/name", "psys")
    assert rapl_energy(tmp_path) == "no RAPL on this machine"


def test_cpu_probe_wrong_machine(tmp_path: Path) -> None:
    root = machine(tmp_path, "Intel(R) Xeon(R) Processor", rapl=False)
    result = probe_cpu(i7_12700k(), root=root)
    assert result is not None and not result.available
    assert result.reason == (
        "this machine is not an Intel Core i7-12700K (it is: Intel(R) Xeon(R) Processor)"
    )


def test_cpu_probe_model_match_ignores_spacing_and_clock(tmp_path: Path) -> None:
    root = machine(tmp_path, "12th Gen Intel(R)  Core(TM) i7-12700K @ 3.60GHz", rapl=False)
    result = probe_cpu(i7_12700k(), root=root)
    assert result is not None and result.available


def test_cpu_probe_unknown_machine(tmp_path: Path) -> None:
    result = probe_cpu(i7_12700k(), root=tmp_path)
    assert result is not None and not result.available
    assert "unknown" in result.reason


def test_cpu_probe_detected_target_skips_model_check(tmp_path: Path) -> None:
    host: TargetSpec = attrs.evolve(i7_12700k(), key="host_cpu", detected=True)
    root = machine(tmp_path, "Intel(R) Xeon(R) Processor", rapl=False)
    result = probe_cpu(host, root=root)
    assert result is not None and result.available


def test_cpu_probe_without_torch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(probe_module.importlib.util, "find_spec", lambda name, *a: None)
    result = probe_cpu(i7_12700k(), root=machine(tmp_path, I7_MODEL, rapl=False))
    assert result is not None and not result.available
    assert "torch is not installed" in result.reason
