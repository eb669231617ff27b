"""Every format's reader on every case of the corpus (tests/fuzz/conftest.py):
a valid file reads, a file mutated into an invalid one is refused with one
UserInputError line naming the file, and no mutation ends in any other
exception. A few hundred cases, about a second."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest

from graphsval_core.datamodel.errors import InputWarning, UserInputError
from graphsval_core.files.baseline import read_baseline_file
from graphsval_core.files.calibration import apply_file
from graphsval_core.files.floors import read_floors
from graphsval_core.files.jsonfile import parse_json
from graphsval_core.files.overlay import read_overlay
from graphsval_core.files.shapes import read_shapes_file
from graphsval_core.files.sweep import load_sweep
from graphsval_core.files.target_spec import read_spec
from graphsval_core.files.tolerances import load_tolerances
from graphsval_core.plugins.loader import build_registry
from graphsval_core.sweep.model_config import read_config

HOST = "host_intel_xeon_2c_1t"


@pytest.fixture(scope="module")
def registry() -> Any:
    return build_registry()


def _read(fmt: str, path: Path, registry: Any) -> None:
    """Read ``path`` as format ``fmt``, as the command that takes it does."""
    if fmt == "baseline":
        read_baseline_file(path)
    elif fmt == "sweep":
        load_sweep(path)
    elif fmt == "tolerances":
        load_tolerances(path)
    elif fmt == "config":
        read_config(path)
    elif fmt == "calibration":
        apply_file(registry.datasheet_target(HOST), parse_json(path.read_bytes(), str(path)), "f")
    elif fmt == "target":
        read_spec(path)
    elif fmt == "overlay":
        read_overlay(path.read_bytes(), str(path))
    elif fmt == "floors":
        read_floors(path)
    elif fmt == "shapes":
        read_shapes_file(path, registry.op("matmul"))
    else:  # pragma: no cover
        raise AssertionError(fmt)


def test_every_reader_keeps_its_promise(case, registry, tmp_path):
    path = tmp_path / f"input.{case.fmt}"
    path.write_bytes(case.data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InputWarning)
        try:
            _read(case.fmt, path, registry)
        except UserInputError as exc:
            message = str(exc)
            assert case.expect != "ok", f"{case.id}: a valid file was refused: {message}"
            assert "\n" not in message and message.strip(), case.id
            # the file is named (the calibration's check names the name it was given)
            assert str(path) in message or case.fmt == "calibration", (case.id, message)
        else:
            assert case.expect != "bad", f"{case.id}: an invalid file was read"
    assert path.read_bytes() == case.data  # reading never writes
