"""The CPU measurer's probe: can a CPU target be measured here, and with what energy?

Cheap and free of side effects: torch is looked up (``importlib.util.find_spec``),
never imported; RAPL counters are opened for reading only.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path

from graphsval_core.plugin_api import ProbeResult, TargetSpec
from graphsval_cpu.machine import model_name
from graphsval_cpu.rapl import rapl_package_domains, read_some, unreadable_reason

#: Opens a file and reads a little of it; raises OSError as ``open`` does.
Reader = Callable[[Path], object]


def rapl_energy(root: Path, reader: Reader = read_some) -> str:
    """What energy source the measurer would use, or why there is none."""
    domains = rapl_package_domains(root)
    reason = unreadable_reason(domains, reader)
    if reason is not None:
        return reason
    names = ", ".join(f"{name} ({directory.name})" for name, directory in domains)
    return f"RAPL package domain(s) {names}: whole-package energy"


def _normalise(model: str) -> str:
    """Model names compared without case, spacing or an ``@ x.xxGHz`` suffix."""
    return " ".join(model.split("@", 1)[0].split()).casefold()


def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def probe_cpu(
    target: TargetSpec, root: str | Path = "/", reader: Reader = read_some
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
        if "snapshot_of" in target.fingerprint:  # a VM's model name hides the generation
            arch = _microarchitecture(root)
            wanted_arch = target.fingerprint.get("microarchitecture", "")
            if arch != wanted_arch:
                return ProbeResult(
                    False,
                    f"this machine is {_article(arch or 'other')} {arch or 'other'} "
                    f"{here}, not the {wanted_arch or 'other microarchitecture'} "
                    f"{target.name} was captured on",
                    energy,
                )
    return ProbeResult(True, "", energy)


def _microarchitecture(root: Path) -> str:
    """The microarchitecture ``host_cpu``'s detection names here ("" where it
    names none): what tells an AMD EPYC VM's Zen 4 from its Zen 3."""
    from graphsval_cpu.host import detect_host_cpu

    return detect_host_cpu(root).fingerprint.get("microarchitecture", "")
