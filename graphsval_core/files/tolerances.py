"""Per-regime tolerances, read from one editable file (``tolerances.json``).

The layout, strictly (a misspelt key is an error, never ignored)::

    {"schema_version": 1, "comment": "...",
     "regimes": {"alu_bound": {"latency": 0.10, "energy": 0.15}, ...}}

``regimes`` holds every core regime, each with a ``latency`` and an
``energy`` tolerance: a relative error, a finite number in (0, 10].
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from graphsval_core.datamodel.errors import UserInputError
from graphsval_core.datamodel.regimes import REGIMES
from graphsval_core.files import schema
from graphsval_core.files.inputs import read_path_or_resource
from graphsval_core.files.jsonfile import parse_json

SCHEMA_VERSION = 1
#: The loosest tolerance a file may set: a relative error of 1000%.
MAX_TOLERANCE = 10.0
KINDS = ("latency", "energy")


class TolerancesError(UserInputError):
    pass


def band(tolerances: dict[str, dict[str, float]], regime: str) -> dict[str, float]:
    """The tolerances of ``regime`` (a regime the file does not know, such as a
    plugin's own: the loosest tier's, DRAM's)."""
    return tolerances.get(regime, tolerances["dram_bound"])


def load_tolerances(path: str | Path | None = None) -> dict[str, dict[str, float]]:
    """``regime -> {"latency": tol, "energy": tol}`` from ``path`` or the shipped file."""
    where = str(path) if path else "graphsval_core/files/tolerances.json"
    item = path if path else resources.files("graphsval_core.files").joinpath("tolerances.json")
    data = read_path_or_resource(item, TolerancesError, "a tolerances file")
    return tolerances_from(parse_json(data, where, TolerancesError), where)


def tolerances_from(data: object, where: str) -> dict[str, dict[str, float]]:
    """The tolerances of a parsed file (see the module doc)."""
    err = TolerancesError
    top = schema.obj(data, where, err)
    schema.keys(top, where, err, required=("regimes",), optional=("schema_version", "comment"))
    schema.schema_version(top, where, err, SCHEMA_VERSION)
    if "comment" in top:
        schema.string(top["comment"], f"{where}: comment", err, empty=True)
    regimes = schema.obj(top["regimes"], f"{where}: regimes", err)
    schema.keys(regimes, f"{where}: regimes", err, required=REGIMES)
    out: dict[str, dict[str, float]] = {}
    for regime in REGIMES:
        at = f"{where}: regimes.{regime}"
        entry = schema.obj(regimes[regime], at, err)
        schema.keys(entry, at, err, required=KINDS)
        out[regime] = {
            kind: schema.number(entry[kind], f"{at}.{kind}", err, 0.0, MAX_TOLERANCE, low_open=True)
            for kind in KINDS
        }
    return out
