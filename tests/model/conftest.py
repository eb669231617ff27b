"""Fixtures of the model's tests."""

from __future__ import annotations

import pytest

from graphsval_core.datamodel.provenance import estimated
from graphsval_core.plugins.loader import build_registry


@pytest.fixture
def registry_of(make_target, make_plugin, fake_entry_points):
    """A registry holding one toy target ``t`` built from ``make_target``'s
    defaults and the given fields (a 2 us launch)."""
    fake_entry_points()

    def build(**kw):
        spec = make_target("t", launch_overhead_s=estimated(2e-6, "test"), **kw)
        return build_registry(extra_plugins=[("t", make_plugin("t", lambda: [spec]))])

    return build
