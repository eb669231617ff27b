"""The CPU measurer's probe: can a CPU target be measured here, and with what energy?

Cheap and free of side effects: torch is looked up (``importlib.util.find_spec``),
never imported; RAPL counters are opened for reading only.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Mapping
from pathlib import Path

from graphsval_core.plugin_api import ProbeResult, TargetSpec
from graphsval_cpu.machine import model_name
from graphsval_cpu.rapl import rapl_package_domains, read_some, unreadable_reason
from graphsval_cpu.snapshot import cpu_name

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
            other = _other_cpu(target, root)
            if other is not None:
                return ProbeResult(False, other, energy)
    return ProbeResult(True, "", energy)


def _isa(fingerprint: Mapping[str, str]) -> tuple[str, frozenset[str]]:
    """A fingerprint's microarchitecture ("" where none is named) and ISA flags,
    compared without case."""
    arch = str(fingerprint.get("microarchitecture", "")).casefold()
    return arch, frozenset(str(fingerprint.get("flags", "")).casefold().split())


def _other_cpu(target: TargetSpec, root: Path) -> str | None:
    """Why this machine is not the CPU the snapshot ``target`` was captured on,
    though its model name matches (None when it is): the microarchitecture
    ``host_cpu``'s detection names here differs (an AMD EPYC VM's Zen 4 or
    Zen 5 from its Zen 3), or the ISA flags that set the peaks and the
    libraries do (an Intel VM's generations, which only their flags tell
    apart). A snapshot that recorded no flags is judged by the
    microarchitecture alone."""
    from graphsval_cpu.host import detect_host_cpu

    here = detect_host_cpu(root).fingerprint
    here_arch, here_flags = _isa(here)
    want_arch, want_flags = _isa(target.fingerprint)
    if here_arch == want_arch and (not want_flags or here_flags == want_flags):
        return None

    def cpu(fingerprint: Mapping[str, str], flags: frozenset[str]) -> str:
        name = cpu_name(fingerprint)
        return f"{_article(name)} {name} with {' '.join(sorted(flags)) or 'no ISA flags recorded'}"

    return (
        f"{target.key} was captured on {cpu(target.fingerprint, want_flags)}; "
        f"this machine is {cpu(here, here_flags)}"
    )
