"""Calibration: recovers known constants, refuses validation rows, is deterministic,
and the shipped calibration files load."""

from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner

from graphsval_core.cli.main import cli
from graphsval_core.plugins.loader import build_registry

HEADER = ["hardware", "op", "shape", "dtype", "latency_s", "energy_j", "trial_count", "notes"]


def _calibrate(*args):
    return _calibrate_hw("toy", *args)


def _calibrate_hw(hw, *args):
    return CliRunner().invoke(cli, ["calibrate", "--hw", hw, "--no-loo", *args])


def test_recovers_known_constants_within_2_percent(setup, tmp_path):
    out = tmp_path / "toy.calibration.json"
    result = _calibrate("--baseline", str(setup("toy.calibration.csv")), "--out", str(out))
    assert result.exit_code == 0, result.output
    constants = json.loads(out.read_text())["constants"]
    assert constants["launch_overhead_s"]["value"] == pytest.approx(3.1e-6, rel=0.02)
    assert constants["compute_fraction.fp32"]["value"] == pytest.approx(0.62, rel=0.02)
    assert constants["tiers.l2.achievable_fraction"]["value"] == pytest.approx(0.55, rel=0.02)
    assert constants["tiers.dram.achievable_fraction"]["value"] == pytest.approx(0.81, rel=0.02)
    fit = json.loads(out.read_text())["fit"]
    assert fit["median_abs_error"] < 0.01 and fit["within_band"] == 1.0


def test_an_unknown_target_is_a_bad_hw_value(setup):
    result = _calibrate_hw("nope", "--baseline", str(setup("toy.calibration.csv")))
    assert result.exit_code == 2
    assert "Invalid value for '--hw': unknown target 'nope'" in result.output


def test_refuses_validation_rows_unless_overridden(setup, tmp_path):
    by_suffix = _calibrate("--baseline", str(setup("toy.validation.csv")))
    assert by_suffix.exit_code == 2
    assert "refusing validation data" in by_suffix.output and "validation row" in by_suffix.output
    by_column = _calibrate("--baseline", str(setup("toy.csv", purpose_column="validation")))
    assert by_column.exit_code == 2
    out = tmp_path / "forced.json"
    forced = _calibrate(
        "--baseline",
        str(setup("toy.validation.csv")),
        "--out",
        str(out),
        "--allow-validation-rows",
        "demo only: no calibration capture yet",
    )
    assert forced.exit_code == 0, forced.output
    assert "WARNING: validation rows used" in forced.output
    data = json.loads(out.read_text())
    assert data["provenance"]["validation_rows_override"] == "demo only: no calibration capture yet"


def test_a_reason_with_no_validation_row_to_excuse_is_not_recorded(setup, tmp_path):
    out = tmp_path / "plain.json"
    run = _calibrate(
        "--baseline",
        str(setup("toy.calibration.csv")),
        "--out",
        str(out),
        "--allow-validation-rows",
        "just in case",
    )
    assert run.exit_code == 0, run.output
    assert "validation rows used" not in run.output
    assert "none of these rows is a validation row" in run.output
    assert json.loads(out.read_text())["provenance"]["validation_rows_override"] is None


def test_refuses_shapes_of_the_project_validation_sweeps(setup, tmp_path):
    from graphsval_core.sweep.labels import load_shipped

    entry = next(
        e for e in load_shipped(None)["vector_add_validation.json"].entries if e.dtype == "fp32"
    )
    path = tmp_path / "sneaky.calibration.csv"
    path.write_text(
        ",".join(HEADER) + f"\ntoy,vector_add,{entry.shape_string},fp32,1e-5,,11,\n"
        "toy,vector_add,300,fp32,2e-6,,11,\ntoy,vector_add,700,fp32,2e-6,,11,\n"
    )
    result = _calibrate("--baseline", str(path))
    assert result.exit_code == 2
    assert f"{entry.shape_string} fp32 is in a validation sweep" in result.output


def test_same_inputs_give_the_same_bytes(setup, tmp_path):
    base = setup("toy.calibration.csv")
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert _calibrate("--baseline", str(base), "--out", str(a)).exit_code == 0
    assert _calibrate("--baseline", str(base), "--out", str(b)).exit_code == 0
    assert a.read_bytes() == b.read_bytes()
    assert "captured_at" not in a.read_text() and "time" not in json.loads(a.read_text())


def test_shipped_calibrations_load_and_change_the_model():
    calibrated = build_registry()
    datasheet_only = build_registry(calibrated=False)
    assert {"i7_12700k", "jetson_orin_nano_8gb"} <= set(calibrated.calibration_files)
    for key in calibrated.calibration_files:
        spec, sheet = calibrated.target(key), datasheet_only.target(key)
        launch = [k for k in spec.provenance if k.startswith(("launch_overhead_s", "dispatch"))]
        assert any(spec.provenance[k].kind == "calibrated" for k in launch), key
        assert calibrated.datasheet_target(key) == sheet
        assert any(spec.launch_for(d) != sheet.launch_for(d) for d in spec.dtypes), key
    assert calibrated.problems == []


def test_shipped_calibration_data_passes_its_floors():
    result = CliRunner().invoke(cli, ["validate", "--check-floors"])
    assert result.exit_code == 0, result.output[-3000:]


@pytest.mark.parametrize(
    ("row", "fragment"),
    [
        ("toy,conv9d,8x8x8,fp32,1e-5,,11,", "unknown op 'conv9d'"),
        ("toy,matmul,64x64,fp32,1e-5,,11,", "shape 64x64 has 2 dims; matmul takes 3"),
        ("toy,matmul,8x8x8,fp64,1e-5,,11,", "dtype fp64, which toy does not run (it has fp32)"),
    ],
)
def test_bad_rows_are_one_line_naming_file_and_line(setup, tmp_path, row, fragment):
    path = tmp_path / "bad.calibration.csv"
    path.write_text(",".join(HEADER) + "\n" + row + "\n")
    result = _calibrate("--baseline", str(path))
    assert result.exit_code == 2
    assert f"{path}:2:" in result.output and fragment in result.output
    assert len(result.output.strip().splitlines()) == 1, result.output


@pytest.mark.parametrize(
    ("hardware", "fragment"),
    [
        ("TOY", "unknown target 'TOY'; did you mean toy?"),  # a case variant of the key
        ("nosuch_target", "unknown target 'nosuch_target'; known: "),
    ],
)
def test_a_row_of_no_registered_target_is_one_line_naming_file_and_line(
    setup, tmp_path, hardware, fragment
):
    """A row of another registered target is left out with a warning (a file
    may hold several), but one naming no registered target is a typo, refused
    as an unknown op is (from the newcomer: it was left out with a warning)."""
    lines = setup("toy.calibration.csv").read_text().splitlines()
    lines[3] = hardware + lines[3][len("toy") :]
    path = tmp_path / "typo.calibration.csv"
    path.write_text("\n".join(lines) + "\n")
    result = _calibrate("--baseline", str(path), "--out", str(tmp_path / "c.json"))
    assert result.exit_code == 2, result.output
    assert f"{path}:4: {fragment}" in result.output
    assert len(result.output.strip().splitlines()) == 1, result.output
    assert not (tmp_path / "c.json").exists()


@pytest.mark.parametrize(
    ("edit", "how"),
    [
        (lambda row: row + "edited", "differing only in its notes"),
        (lambda row: row.replace(",11,", ",12,"), "with other values"),
    ],
)
def test_a_shape_in_two_files_with_other_values_is_refused(setup, tmp_path, edit, how):
    """A shape measured in two files would be fitted twice (from the
    newcomer): refused naming both rows, as within one file; an exact copy
    is read once, with a warning."""
    first = setup("toy.calibration.csv")
    lines = first.read_text().splitlines()
    again = tmp_path / "again.calibration.csv"
    again.write_text(f"{lines[0]}\n{lines[2]}\n{edit(lines[5])}\n")
    op, shape = lines[5].split(",")[1:3]
    out = tmp_path / "c.json"
    result = _calibrate("--baseline", str(first), "--baseline", str(again), "--out", str(out))
    assert result.exit_code == 2, result.output
    assert (
        f"{again}:3: toy {op} {shape} fp32 was measured in {first}:6 already, {how}; "
        "keep one row per shape"
    ) in result.output
    assert [n for n in result.output.splitlines() if not n.startswith("warning:")] == [
        next(n for n in result.output.splitlines() if n.startswith("Error:"))
    ], result.output
    again.write_text(f"{lines[0]}\n{lines[5]}\n")  # a copy: read once
    result = _calibrate("--baseline", str(first), "--baseline", str(again), "--out", str(out))
    assert result.exit_code == 0, result.output
    assert "measurements again; read once" in result.output


def test_file_order_does_not_change_the_result(setup, tmp_path):
    path = setup("toy.calibration.csv")
    lines = path.read_text().splitlines()
    flipped = tmp_path / "flipped.calibration.csv"
    flipped.write_text("\n".join([lines[0], *reversed(lines[1:])]) + "\n")
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert _calibrate("--baseline", str(path), "--out", str(a)).exit_code == 0
    assert _calibrate("--baseline", str(flipped), "--out", str(b)).exit_code == 0
    da, db = json.loads(a.read_text()), json.loads(b.read_text())
    assert da["constants"] == db["constants"] and da["residuals"] == db["residuals"]


def test_a_shared_caches_capacity_gets_starts_of_its_own(monkeypatch, intel_adds):
    # the host's fit has optima near 30 MB and near 140 MB of usable L3: two more
    # starts with an eighth of the capacity's usual start
    import scipy.optimize

    from graphsval_core.calibrate.fit import CAPACITY_START, fit_latency

    registry, spec, rows, params = intel_adds
    capacity = [p.name for p in params].index("tiers.l3.usable_capacity_bytes")
    seen = []
    real = scipy.optimize.least_squares

    def once(fun, x0, **kw):
        seen.append(x0.copy())
        return real(fun, x0, **{**kw, "max_nfev": 1})

    monkeypatch.setattr(scipy.optimize, "least_squares", once)
    fit_latency(registry, spec, rows, params)
    assert len(seen) == 5
    starts = sorted(float(x[capacity]) for x in seen)
    assert starts[0] == pytest.approx(starts[-1] + math.log(CAPACITY_START))
    # without a shared cache's capacity to fit: the three usual starts
    seen.clear()
    fit_latency(registry, spec, rows, [p for i, p in enumerate(params) if i != capacity])
    assert len(seen) == 3


def test_a_fitted_tier_fraction_stays_within_what_a_calibration_file_may_hold():
    # the host's peaks are estimates (headroom 4x), but a calibration file holds a
    # fraction of at most MAX_FRACTION: the fit must never write one the loader refuses
    from graphsval_core.calibrate.params import choose_params
    from graphsval_core.files.baseline import read_baseline_file
    from graphsval_core.files.calibration_file import MAX_FRACTION
    from graphsval_core.plugins.resources import packaged_files

    registry = build_registry()
    spec = registry.datasheet_target("host_intel_xeon_2c_1t")
    files = packaged_files("graphsval_cpu", "baselines", ".calibration.csv")
    rows = [
        r
        for p in files
        if p.name.startswith("host_intel_xeon_2c_1t_")
        for r in read_baseline_file(str(p))[0].rows[:: 1 if "vector_add" in p.name else 5]
    ]
    params = {p.name: p for p in choose_params(registry, spec, rows)}
    tiers = [n for n in params if n.endswith("achievable_fraction")]
    assert tiers
    for name in tiers:
        tier = spec.tier(name.split(".")[1])
        assert params[name].upper * tier.achievable_fraction <= MAX_FRACTION * (1 + 1e-12), name
    shares = [p for n, p in params.items() if n.startswith("product_bandwidth_fraction.")]
    assert shares and all(p.upper == 1.0 for p in shares)
