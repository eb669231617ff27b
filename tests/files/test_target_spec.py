"""Specs survive a JSON round trip with their provenance (snapshot targets)."""

from __future__ import annotations

from graphsval_core.files.target_spec import read_spec, spec_to_json, write_spec
from graphsval_core.plugins.loader import build_registry


def test_every_installed_target_round_trips(tmp_path):
    for target in build_registry().targets().values():
        path = tmp_path / f"{target.key}.target.json"
        write_spec(target, path)
        back = read_spec(path)
        assert spec_to_json(back) == spec_to_json(target), target.key
        assert back.provenance == target.provenance
