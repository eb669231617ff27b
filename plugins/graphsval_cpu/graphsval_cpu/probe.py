"""The CPU measurer's probe: can a CPU target be measured here, and with what energy?

Cheap and free of side effects: torch is looked up (``importlib.util.find_spec``),
never imported; RAPL counters are opened for reading only.
"""

from __future__ import annotations

import errno
import importlib.util
import re
from collections.abc import Callable
from pathlib import Path

from graphsval_core.plugin_records import ProbeResult
from graphsval_core.target_spec import TargetSpec
from graphsval_cpu.machine import model_name, read_text

POWERCAP_DIR = "sys/class/powercap"
_DOMAIN_RE = re.compile(r"^intel-rapl:\d+$")

#: Opens a file and reads a little of it; raises OSError as ``open`` does.
Reader = Callable[[Path], object]


def _read_some(path: Path) -> bytes:
    with path.open("rb") as handle:
        return handle.read(64)


def rapl_package_domains(root: Path) -> list[tuple[str, Path]]:
    """``(name, dir)`` of every top-level RAPL domain whose name starts with ``package``."""
    base = root / POWERCAP_DIR
    try:
        dirs = sorted(d for d in base.iterdir() if _DOMAIN_RE.match(d.name))
    except OSError:
        return []
    domains = []
    for directory in dirs:
        name = read_text(directory / "name") or ""
        if name.startswith("package"):
            domains.append((name, directory))
    return domains


def rapl_energy(root: Path, reader: Reader = _read_some) -> str:
    """What energy source the measurer would use, or why there is none."""
    domains = rapl_package_domains(root)
    if not domains:
        return "no RAPL on this machine"
    for _, directory in domains:
        try:
            reader(directory / "energy_uj")
        except PermissionError:
            return "RAPL not readable (root only since Linux 5.10)"
        except OSError as exc:
            if exc.errno in (errno.EACCES, errno.EPERM):
                return "RAPL not readable (root only since Linux 5.10)"
            return f"RAPL {directory.name}/energy_uj unreadable: {exc.strerror or exc}"
    names = ", ".join(f"{name} ({directory.name})" for name, directory in domains)
    return f"RAPL package domain(s) {names}: whole-package energy"


def _normalise(model: str) -> str:
    """Model names compared without case, spacing or an ``@ x.xxGHz`` suffix."""
    return " ".join(model.split("@", 1)[0].split()).casefold()


def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def probe_cpu(
    target: TargetSpec, root: str | Path = "/", reader: Reader = _read_some
) -> ProbeResult | None:
    """Whether the CPU measurer can run ``target`` here; None for non-CPU targets.

    :param target: the target to probe.
    :param root: the file-system root to read ``proc/`` and ``sys/`` under.
    :param reader: opens a RAPL counter (injectable so tests can simulate EACCES).
    """
    if target.family != "cpu":
        return None
    root = Path(root)
    energy = rapl_energy(root, reader)
    if importlib.util.find_spec("torch") is None:
        return ProbeResult(False, "torch is not installed (pip install torch)", energy)
    wanted = target.fingerprint.get("cpu_model")
    if wanted and not target.detected:
        here = model_name(root)
        if here is None or _normalise(here) != _normalise(wanted):
            return ProbeResult(
                False,
                f"this machine is not {_article(target.name)} {target.name} "
                f"(it is: {here or 'unknown: /proc/cpuinfo unreadable'})",
                energy,
            )
    return ProbeResult(True, "", energy)
