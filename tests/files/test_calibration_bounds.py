"""A calibration file is held to what a target file is: each constant in its
range, and the spec it makes within what any part has (a hand-edited energy of
1e308 J per op would make every prediction infinite); its usable capacity no
larger than the cache; a fraction is the file's value whatever the target
file's fraction is."""

from __future__ import annotations

import copy
import json
import re

import pytest

from graphsval_core.files.calibration import apply_file
from graphsval_core.files.calibration_file import CalibrationFileError
from graphsval_core.plugins.loader import build_registry
from graphsval_core.plugins.resources import packaged_files

KEY = "host_amd_epyc_2c_1t"


@pytest.fixture(scope="module")
def shipped():
    registry = build_registry()
    spec = registry.datasheet_target(KEY)
    path = next(
        p
        for p in packaged_files("graphsval_cpu", "calibration", ".calibration.json")
        if p.name == f"{KEY}.calibration.json"
    )
    return spec, json.loads(path.read_text())


def _with(data, name, **entry):
    out = copy.deepcopy(data)
    out["constants"].setdefault(name, {}).update(entry)
    return out


@pytest.mark.parametrize(
    ("name", "value", "said"),
    [
        ("energy_per_op_j.fp32", 1e308, "energy_per_op_j.fp32: 1e+308 is above 0.001"),
        ("tiers.dram.energy_per_byte_j", 5.0, "energy_per_byte_j (tier 'dram'): 5 is above"),
        ("pack_bps.fp32", 1e300, "pack_bps.fp32: 1e+300 B/s is above 1e+18"),
    ],
)
def test_a_value_no_part_has_is_refused_naming_it(shipped, name, value, said):
    spec, data = shipped
    with pytest.raises(CalibrationFileError, match="with its constants") as caught:
        apply_file(spec, _with(data, name, value=value), "c.json")
    assert said in str(caught.value) and str(caught.value).startswith("c.json: ")


def test_a_usable_capacity_beyond_the_cache_is_refused_not_cut_down(shipped):
    spec, data = shipped
    l3 = next(t for t in spec.tiers if t.name == "l3")
    name = "tiers.l3.usable_capacity_bytes"
    with pytest.raises(CalibrationFileError, match="exceeds the tier's total capacity"):
        apply_file(spec, _with(data, name, value=l3.total_capacity_bytes * 30), "c.json")
    at_most = apply_file(spec, _with(data, name, value=l3.total_capacity_bytes), "c.json")
    assert at_most.tiers[2].usable_capacity_bytes == l3.total_capacity_bytes


def test_a_fraction_is_the_files_value_whatever_its_datasheet_field_says(shipped):
    spec, data = shipped
    name = "compute_fraction.fp32"
    value = data["constants"][name]["value"]
    edited = _with(data, name, datasheet=data["constants"][name]["datasheet"] / 2)
    as_shipped = apply_file(spec, data, "c.json")
    again = apply_file(spec, edited, "c.json")
    assert again.achievable_ops("fp32", True) == as_shipped.achievable_ops("fp32", True)
    assert again.peak_ops_per_s["fp32"] * again.compute_fraction["fp32"] == pytest.approx(
        value * spec.peak_ops_per_s["fp32"]
    )


@pytest.mark.parametrize(
    ("where", "value", "message"),
    [
        (("grouped_cv", "per_op", "linear", "median_abs_error"), -5, "in [0, inf], got -5"),
        (("validation", "per_op", "vector_add", "within_band"), 7, "in [0, 1], got 7"),
        (("validation", "per_op", "matmul", "median_abs_error"), "5%", "expected a number"),
        (("grouped_cv", "per_op", "linear", "rows"), 138.5, "expected an integer"),
        (("validation", "within_10pct"), 1.5, "in [0, 1], got 1.5"),
        (("grouped_cv",), "x", "expected an object"),
        (("grouped_cv", "per_op", "linear"), [], "expected an object"),
        (("rows",), "392", "expected an integer"),  # the fit's own figures (from the newcomer)
        (("rows",), -1, "got -1"),
        (("median_abs_error",), "nan", "expected a number"),
        (("grouped_cv", "groups"), 2.5, "expected an integer"),
        (("warnings",), "x", "expected a list of strings"),
    ],
)
def test_the_fit_s_out_of_sample_figures_are_held_to_their_ranges(shipped, where, value, message):
    """``targets`` prints them: an edited -5 printed -500% and a 7 700% (from
    the newcomer); each is one line naming the key now. A null (not a number
    when calibrate wrote it) is left out of the table, as before."""
    spec, data = shipped
    bad = copy.deepcopy(data)
    place = bad["fit"]
    for key in where[:-1]:
        place = place[key]
    place[where[-1]] = value
    at = "fit." + ".".join(where)
    with pytest.raises(CalibrationFileError, match=rf"{re.escape(at)}: .*{re.escape(message)}"):
        apply_file(spec, bad, "c.json")
    nulls = copy.deepcopy(data)
    nulls["fit"]["grouped_cv"]["per_op"]["linear"]["median_abs_error"] = None
    apply_file(spec, nulls, "c.json")


@pytest.mark.parametrize(
    ("rename", "message"),
    [
        ((), "fit: unknown key 'groupd_cv' (did you mean 'grouped_cv'?)"),
        (("grouped_cv",), "fit.grouped_cv: unknown key 'per_opp' (did you mean 'per_op'?)"),
        (
            ("validation", "per_op", "linear"),
            "fit.validation.per_op.linear: unknown key 'median_abs_err'",
        ),
    ],
)
def test_a_misspelt_key_of_the_fit_is_refused_not_shown_as_a_dash(shipped, rename, message):
    """``fit.groupd_cv`` or ``per_opp`` made ``targets`` print "-" for the
    figures, exit 0 (from the newcomer): the fit's keys are calibrate's."""
    spec, data = shipped
    bad = copy.deepcopy(data)
    place = bad["fit"]
    for key in rename:
        place = place[key]
    old = {(): "grouped_cv", ("grouped_cv",): "per_op"}.get(rename, "median_abs_error")
    new = {"grouped_cv": "groupd_cv", "per_op": "per_opp"}.get(old, "median_abs_err")
    place[new] = place.pop(old)
    with pytest.raises(CalibrationFileError, match=re.escape(message)):
        apply_file(spec, bad, "c.json")


def test_a_usable_capacity_is_a_size_down_to_a_cache_line_up_to_its_cache(shipped):
    """A private L2's usable capacity of 400 kB was refused below the rate
    floor of 1e6 (from the newcomer): a capacity's floor is a cache line."""
    spec, data = shipped
    name = "tiers.l2.usable_capacity_bytes"
    apply_file(spec, _with(data, name, value=400_000.0, datasheet=524_288.0), "c.json")
    with pytest.raises(CalibrationFileError, match=r"expected a number in \[64, inf\], got 10"):
        apply_file(spec, _with(data, name, value=10.0, datasheet=524_288.0), "c.json")
    with pytest.raises(CalibrationFileError, match="exceeds the tier's total capacity"):
        apply_file(spec, _with(data, name, value=1e9, datasheet=524_288.0), "c.json")
    # the spec's usable part it records is held to the cache as well
    too_big = r"usable_capacity_bytes\.datasheet: 1e\+09 B exceeds the tier's total capacity"
    with pytest.raises(CalibrationFileError, match=too_big):
        apply_file(spec, _with(data, name, value=400_000.0, datasheet=1e9), "c.json")


@pytest.mark.parametrize(
    ("name", "datasheet", "message"),
    [
        (
            "launch_overhead_s",
            1e9,
            r"launch_overhead_s\.datasheet: expected a number in \[0, 86400\]",
        ),
        ("pack_bps.fp32", 5.0, r"pack_bps\.fp32\.datasheet: expected a number in \[1e\+06, inf\]"),
        ("tiers.l3.usable_capacity_bytes", 8.0, r"usable_capacity_bytes\.datasheet: .*\[64, inf\]"),
    ],
)
def test_a_datasheet_field_is_held_to_its_constant_s_range(shipped, name, datasheet, message):
    """The spec's value a fit started from, which ``targets`` prints beside
    the fitted one: a launch overhead's datasheet of 1e9 s was accepted
    (from the newcomer); it is held to the range of the constant's value."""
    spec, data = shipped
    assert data["constants"][name]["datasheet"] is not None
    with pytest.raises(CalibrationFileError, match=message):
        apply_file(spec, _with(data, name, datasheet=datasheet), "c.json")
    apply_file(spec, _with(data, name, datasheet=None), "c.json")  # none: the spec gives none
