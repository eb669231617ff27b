"""Calibration of a GEMV's own team cost (``gemv_fork_join_s``): fitted from
launch-bound GEMVs above the grain, said to be left unfitted where too few."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
from attrs import evolve
from click.testing import CliRunner

from graphsval_core.cli.main import cli
from graphsval_core.datamodel.provenance import estimated
from graphsval_core.files.calibration import apply_file
from graphsval_core.files.calibration_file import CalibrationFileError
from graphsval_core.model.predict import predict_batch
from graphsval_core.plugins.loader import build_registry

HEADER = ["hardware", "op", "shape", "dtype", "latency_s", "energy_j", "trial_count", "notes"]
#: below and above the grain, GEMVs (M or N of 1) small and large, GEMMs
SHAPES = {
    "vector_add": [[300], [9000], [40_000], [90_000], [700_000], [3_000_000]],
    "matmul": [[64, 64, 64], [2, 1500, 1300], [24, 1200, 1400], [520, 520, 520], [96, 96, 96]],
    "linear": [[1, 70, 90], [1, 128, 384], [1, 256, 128], [1, 1024, 2048], [16, 1600, 1200]],
}
TRUE = {"fork_join_s": 2.5e-6, "gemv_fork_join_s": 6.5e-6}


def _cpu(make_target, **true):
    return make_target(
        "toy",
        fork_join_s=estimated(true.get("fork_join_s", 3e-6), "t"),
        gemv_fork_join_s=estimated(true.get("gemv_fork_join_s", 3e-6), "t"),
        parallel_grain_ops=estimated(32768, "t"),
    )


def _write(path, registry, shapes, key="silicon"):
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(HEADER)
        for op, dims_list in shapes.items():
            truth = predict_batch(registry, key, op, np.array(dims_list), "fp32")
            for dims, lat in zip(dims_list, truth.latency_s, strict=True):
                writer.writerow(
                    ["toy", op, "x".join(map(str, dims)), "fp32", f"{lat:.9e}", "", 11, ""]
                )
    return path


@pytest.fixture
def setup(make_target, make_plugin, fake_entry_points, make_entry_point):
    model = _cpu(make_target)
    plugin = make_plugin("toy", lambda: [model])
    fake_entry_points(make_entry_point("toy", lambda: plugin, "graphsval-toy"))
    silicon = evolve(_cpu(make_target, **TRUE), key="silicon")
    return build_registry(
        extra_plugins=[("s", make_plugin("s", lambda: [silicon]))], plugin_args=["no:toy"]
    )


def _calibrate(base, out):
    return CliRunner().invoke(
        cli, ["calibrate", "--hw", "toy", "--no-loo", "--baseline", str(base), "--out", str(out)]
    )


def test_a_gemvs_team_cost_is_recovered_beside_the_teams(setup, tmp_path):
    base = _write(tmp_path / "toy.calibration.csv", setup, SHAPES)
    out = tmp_path / "toy.json"
    result = _calibrate(base, out)
    assert result.exit_code == 0, result.output
    constants = json.loads(out.read_text())["constants"]
    for name, value in TRUE.items():
        assert constants[name]["value"] == pytest.approx(value, rel=0.02), name
    assert (
        constants["gemv_fork_join_s"]["from"]
        == "2 launch-bound GEMVs (M or N of 1) above the grain"
    )
    assert "gemv_fork_join_s is not fitted" not in result.output
    # the file applies: a GEMV above the grain pays the fitted cost, a GEMM the team's
    registry = build_registry()
    spec = apply_file(registry.datasheet_target("toy"), json.loads(out.read_text()), "toy.json")
    assert spec.gemv_fork_join_s == pytest.approx(TRUE["gemv_fork_join_s"], rel=0.02)


def test_one_launch_bound_gemv_leaves_it_unfitted_and_says_so(setup, tmp_path):
    shapes = {**SHAPES, "linear": [s for s in SHAPES["linear"] if s != [1, 256, 128]]}
    base = _write(tmp_path / "toy.calibration.csv", setup, shapes)
    out = tmp_path / "toy.json"
    result = _calibrate(base, out)
    assert result.exit_code == 0, result.output
    constants = json.loads(out.read_text())["constants"]
    assert "gemv_fork_join_s" not in constants
    text = " ".join(result.output.split())
    assert (
        "gemv_fork_join_s is not fitted: 1 of the 2 GEMVs (M or N of 1) above the grain is "
        "launch-bound (2 needed" in text
    ), result.output


def _file(value):
    return {
        "target": "toy",
        "provenance": {"sources": [], "graphsval_version": "0"},
        "constants": {"gemv_fork_join_s": {"value": value}},
    }


def test_a_calibration_file_refuses_a_negative_gemv_team_cost(setup):
    spec = build_registry().datasheet_target("toy")
    with pytest.raises(CalibrationFileError, match=r"^c.json: constants.gemv_fork_join_s"):
        apply_file(spec, _file(-1e-6), "c.json")
    assert apply_file(spec, _file(4e-6), "c.json").gemv_fork_join_s == 4e-6


def test_a_gemv_team_cost_applies_only_where_the_spec_has_a_team(make_target):
    spec = make_target("one")  # no team: no fork_join_s, no gemv_fork_join_s
    with pytest.raises(CalibrationFileError, match="not a constant graphsval calibrates on one"):
        apply_file(spec, {**_file(4e-6), "target": "one"}, "c.json")
