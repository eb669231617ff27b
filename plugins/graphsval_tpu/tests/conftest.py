"""Fixtures of the TPU plugin's tests: an empty workspace for the session."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(scope="session", autouse=True)
def _empty_workspace(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Every test runs with an empty workspace (a temporary folder, not
    created), never the user's data directory."""
    folder = tmp_path_factory.getbasetemp() / "workspace"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GRAPHSVAL_WORKSPACE", str(folder))
        yield folder
