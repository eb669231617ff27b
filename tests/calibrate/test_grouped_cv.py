"""Grouped cross-validation: families of shapes, each left out whole, and the
figures calibrate prints and stores beside in sample and leave-one-out."""

from __future__ import annotations

import json

import numpy as np
import pytest

from graphsval_core.calibrate.evaluate import (
    ErrorFigures,
    OutOfSample,
    families,
    family_of,
    figures,
    grouped_warning,
)
from graphsval_core.calibrate.workflow import CalibrateOptions, calibrate
from graphsval_core.files.baseline import BaselineRow
from graphsval_core.plugins.loader import build_registry


def _row(shape: str, op: str = "matmul", dtype: str = "fp32") -> BaselineRow:
    dims = tuple(int(d) for d in shape.split("x"))
    return BaselineRow(1, "toy", op, shape, dims, dtype, 1e-3, None, 1, "", "calibration")


def test_permutations_and_near_sizes_share_a_family():
    a, b, c = _row("64x512x16384"), _row("512x64x16384"), _row("64x600x20000")
    assert family_of(a) == family_of(b) == family_of(c) == ("matmul", "fp32", (6, 9, 14))
    assert family_of(_row("64x1024x16384")) != family_of(a)  # K doubled: another family
    assert family_of(_row("64x512x16384", dtype="bf16")) != family_of(a)
    assert family_of(_row("64x512x16384", op="linear")) != family_of(a)


def test_families_partition_the_rows():
    rows = [_row(s) for s in ("8x8x8", "64x64x64", "8x9x10", "65x64x70", "1024x1x1")]
    groups = families(rows)
    assert sorted(i for g in groups for i in g) == list(range(5))
    assert sorted(map(sorted, groups)) == [[0, 2], [1, 3], [4]]


def test_figures_of_errors():
    f = figures([0.1, -0.3, 0.02, 0.5], [True, False, True, False])
    assert f == ErrorFigures(4, pytest.approx(0.2), 0.5, pytest.approx(0.44))
    assert np.isnan(figures([], []).median_abs_error)


def test_warning_only_when_grouped_is_much_worse():
    def oos(median: float) -> OutOfSample:
        return OutOfSample(10, median, 0.5, 0.6, groups=4)

    assert grouped_warning(0.05, oos(0.06)) is None
    assert grouped_warning(0.01, oos(0.04)) is None  # under the 5% floor: no alarm
    line = grouped_warning(0.05, oos(0.12))
    assert line is not None and "12.0%" in line and "5.0%" in line
    assert grouped_warning(0.05, None) is None


def test_calibrate_stores_grouped_cv_per_op(setup, tmp_path):
    base = setup("toy.calibration.csv")
    options = CalibrateOptions(target="toy", baselines=(str(base),), out=str(tmp_path / "t.json"))
    result = calibrate(build_registry(), options)
    assert result.grouped is not None and result.grouped.rows == len(result.rows)
    assert 1 < result.grouped.groups < len(result.rows)  # families, not rows
    assert set(result.grouped.per_op) == set(result.in_sample)
    written = json.loads((tmp_path / "t.json").read_text())
    grouped = written["fit"]["grouped_cv"]
    assert grouped["groups"] == result.grouped.groups
    for op, f in result.grouped.per_op.items():
        assert grouped["per_op"][op]["median_abs_error"] == pytest.approx(f.median_abs_error)
    assert written["fit"]["in_sample_per_op"].keys() == result.in_sample.keys()
    skipped = calibrate(
        build_registry(),
        CalibrateOptions(
            target="toy",
            baselines=(str(base),),
            out=str(tmp_path / "u.json"),
            grouped_cv=False,
            leave_one_out=False,
        ),
    )
    assert skipped.grouped is None and skipped.content["fit"]["grouped_cv"] == {}


def test_calibrate_prints_each_ops_families_and_what_it_skipped(setup, tmp_path):
    from click.testing import CliRunner

    from graphsval_core.cli.main import cli

    base = setup("toy.calibration.csv")
    args = ["calibrate", "--hw", "toy", "--baseline", str(base)]
    full = CliRunner().invoke(cli, [*args, "--out", str(tmp_path / "a.json")])
    assert full.exit_code == 0, full.output
    assert "fit quality (latency; out of sample: grouped CV):" in full.output
    assert "families):" in full.output and "grouped CV     median |error|" in full.output
    assert "skipped" not in full.output
    quick = CliRunner().invoke(
        cli, [*args, "--out", str(tmp_path / "b.json"), "--no-loo", "--no-grouped-cv"]
    )
    assert quick.exit_code == 0, quick.output
    assert "skipped: leave-one-out and grouped CV:" in quick.output
    assert "grouped CV     median" not in quick.output
