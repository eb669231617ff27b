"""Calibrate skips suspect measurements and lists them: a suspect latency
leaves both fits, a suspect energy only the energy fit; the constants are
those of the plausible rows."""

from __future__ import annotations

import csv

import pytest
from click.testing import CliRunner

import graphsval_core.calibrate.workflow as workflow
from graphsval_core.calibrate.workflow import CalibrateOptions, calibrate
from graphsval_core.cli.main import cli
from graphsval_core.datamodel.errors import UserInputError
from graphsval_core.plugins.loader import build_registry

ROUNDS = "latency: rounds disagree by 40% after 2 re-measures"


def _mark(path, marks, extra=()):
    """``path`` with a ``suspect`` column: ``marks`` maps a data row's index to
    its text; ``extra`` rows are appended."""
    with path.open(newline="") as handle:
        header, *rows = list(csv.reader(handle))
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow([*header, "suspect"])
        for i, row in enumerate(rows):
            writer.writerow([*row, marks.get(i, "")])
        writer.writerows(extra)
    return path


@pytest.fixture
def marked(setup):
    """The toy calibration rows: the first (vector_add 300) with a suspect
    energy, the second (vector_add 700) with a suspect latency, and a row
    whose operands would move at 24 PB/s (no column entry: caught by the checks)."""
    return _mark(
        setup("toy.calibration.csv"),
        {0: "energy: sensor glitch", 1: ROUNDS},
        [["toy", "vector_add", "5000", "fp32", "1e-12", "", "11", "", ""]],
    )


def test_suspect_rows_are_skipped_and_listed(marked, tmp_path, monkeypatch):
    energy_rows = []
    real = workflow.fit_energy

    def spy(registry, spec, rows):
        energy_rows.extend(rows)
        return real(registry, spec, rows)

    monkeypatch.setattr(workflow, "fit_energy", spy)
    options = CalibrateOptions("toy", (str(marked),), out=str(tmp_path / "t.json"))
    result = calibrate(build_registry(), options)
    shapes = [r.shape for r in result.rows]
    assert len(shapes) == 13 and "700" not in shapes and "5000" not in shapes
    assert "300" in shapes  # a suspect energy keeps the row in the latency fit
    assert {r.shape for r in energy_rows} == set(shapes) - {"300"}
    assert [(s.row.shape, s.latency) for s in result.suspect] == [
        ("300", False),
        ("700", True),
        ("5000", True),
    ]
    assert result.suspect[1].text() == f"{marked}:3: vector_add 700 fp32: {ROUNDS}"
    assert "latency: implies" in result.suspect[2].text()
    # the constants are the true ones: the absurd row did not pull the fit
    assert result.fit.values["launch_overhead_s"] == pytest.approx(3.1e-6, rel=0.02)
    assert result.fit.values["compute_fraction.fp32"] == pytest.approx(0.62, rel=0.02)
    assert result.content["fit"]["rows"] == 13


def test_the_command_lists_the_skipped_rows(marked, tmp_path):
    out = tmp_path / "t.json"
    result = CliRunner().invoke(
        cli, ["calibrate", "--hw", "toy", "--no-loo", "--baseline", str(marked), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith(f"wrote {out}: ") and "from 13 rows" in lines[0]
    assert lines[1] == (
        "  skipped 3 suspect rows (a suspect latency leaves both fits, a suspect energy the "
        "energy fit):"
    )
    assert lines[2] == f"    {marked}:2: vector_add 300 fp32: energy: sensor glitch"
    assert lines[3] == f"    {marked}:3: vector_add 700 fp32: {ROUNDS}"
    assert lines[4].startswith(f"    {marked}:16: vector_add 5000 fp32: latency: ")


def test_too_few_plausible_rows_say_how_many_were_suspect(setup, tmp_path):
    path = _mark(setup("toy.calibration.csv"), dict.fromkeys(range(12), ROUNDS))
    options = CalibrateOptions("toy", (str(path),), out=str(tmp_path / "t.json"))
    with pytest.raises(UserInputError) as few:
        calibrate(build_registry(), options)
    assert str(few.value) == (
        "2 usable toy rows in the given baselines (12 more with a suspect latency); "
        "calibration needs at least 3"
    )


def test_a_malformed_suspect_column_names_file_and_line(setup, tmp_path):
    path = _mark(setup("toy.calibration.csv"), {3: "too hot"})
    options = CalibrateOptions("toy", (str(path),), out=str(tmp_path / "t.json"))
    with pytest.raises(UserInputError, match=f"^{path}:5: suspect entry 'too hot'"):
        calibrate(build_registry(), options)
