"""Every calibration a plugin ships is what ``graphsval calibrate`` fits today
on the baselines it names: a model change that moves a fit and a file left
unrefit (the shipped constants then describe an older model) both fail here.
Refit with ``graphsval calibrate --hw KEY --baseline ... --out FILE`` (the
baselines in the order the file's ``provenance.sources`` lists them)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graphsval_core.calibrate.fit import fit_latency
from graphsval_core.calibrate.inputs import read_rows
from graphsval_core.calibrate.rows import canonical
from graphsval_core.plugin_api import packaged_files
from graphsval_core.plugins.loader import build_registry

#: The first-party plugins that ship calibrations.
SHIPPED = [
    item
    for package in ("graphsval_cpu", "graphsval_jetson", "graphsval_cuda")
    for item in packaged_files(package, "calibration", ".calibration.json")
]


def _baseline(registry, name: str) -> str:
    found = [str(p) for _plugin, p in registry.baseline_files() if Path(str(p)).name == name]
    assert len(found) == 1, f"{name}: shipped {len(found)} times"
    return found[0]


@pytest.mark.parametrize("item", SHIPPED, ids=lambda i: i.name)
def test_a_shipped_calibration_is_todays_fit_of_its_rows(item):
    registry = build_registry()
    data = json.loads(item.read_text())
    spec = registry.datasheet_target(data["target"])
    paths = [_baseline(registry, s["file"]) for s in data["provenance"]["sources"]]
    found = read_rows(registry, spec, paths)
    bad = {id(s.row) for s in found.suspect if s.latency}
    fit = fit_latency(registry, spec, canonical([r for r in found.rows if id(r) not in bad]))
    shipped = {
        name: entry["value"]
        for name, entry in data["constants"].items()
        if name in fit.values  # the energy coefficients come from their own fit
    }
    assert set(shipped) == set(fit.values), "the fit's constants differ from the file's"
    for name, value in fit.values.items():
        want = shipped[name]
        if name.endswith("achievable_fraction") or name.startswith("compute_fraction."):
            want = want / data["constants"][name]["datasheet"]  # fitted as a multiplier
        assert value == pytest.approx(want, rel=1e-4), f"{name}: refit {item.name} (module doc)"


def test_the_shipped_calibrations_are_found():
    names = {i.name for i in SHIPPED}
    assert {"i7_12700k.calibration.json", "jetson_orin_nano_8gb.calibration.json"} <= names
