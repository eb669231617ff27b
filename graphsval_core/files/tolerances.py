"""Per-regime tolerances, read from one editable file (``tolerances.json``)."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

from graphsval_core.datamodel.errors import UserInputError
from graphsval_core.datamodel.regimes import REGIMES


class TolerancesError(UserInputError):
    pass


def band(tolerances: dict[str, dict[str, float]], regime: str) -> dict[str, float]:
    """The tolerances of ``regime`` (a regime the file does not know, such as a
    plugin's own: the loosest tier's, DRAM's)."""
    return tolerances.get(regime, tolerances["dram_bound"])


def load_tolerances(path: str | Path | None = None) -> dict[str, dict[str, float]]:
    """``regime -> {"latency": tol, "energy": tol}`` from ``path`` or the shipped file."""
    where = str(path) if path else "graphsval_core/files/tolerances.json"
    try:
        text = (
            Path(path).read_text()
            if path
            else resources.files("graphsval_core.files").joinpath("tolerances.json").read_text()
        )
        data = json.loads(text)
    except OSError as exc:
        raise TolerancesError(f"{where}: cannot read: {exc.strerror or exc}") from None
    except json.JSONDecodeError as exc:
        raise TolerancesError(f"{where}: not valid JSON: {exc.msg} (line {exc.lineno})") from None
    regimes = data.get("regimes") if isinstance(data, dict) else None
    if not isinstance(regimes, dict):
        raise TolerancesError(f"{where}: expected an object with a 'regimes' object")
    out: dict[str, dict[str, float]] = {}
    for regime in REGIMES:
        entry = regimes.get(regime)
        if not isinstance(entry, dict):
            raise TolerancesError(f"{where}: regimes.{regime} is missing")
        for kind in ("latency", "energy"):
            value = entry.get(kind)
            if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
                raise TolerancesError(f"{where}: regimes.{regime}.{kind} must be a positive number")
        out[regime] = {"latency": float(entry["latency"]), "energy": float(entry["energy"])}
    return out
