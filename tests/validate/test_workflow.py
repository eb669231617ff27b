"""The validate workflow called as a function: typed options in, a typed result out."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from graphsval_core.datamodel.errors import UserInputError
from graphsval_core.plugins.loader import build_registry
from graphsval_core.validate.summary import Summary, summary_dict
from graphsval_core.validate.workflow import ValidateOptions, _uncaptured, validate

HEADER = ["hardware", "op", "shape", "dtype", "latency_s", "energy_j", "trial_count", "notes"]


@pytest.fixture
def registry(make_target, make_plugin):
    return build_registry(
        strict=True,
        autoload=False,
        extra_plugins=[("toy", make_plugin("toy", lambda: [make_target("toy")]))],
    )


def _baseline(path, rows):
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(HEADER)
        writer.writerows(rows)
    return str(path)


def test_result_is_typed_and_judges_each_row(registry, tmp_path):
    path = _baseline(
        tmp_path / "toy.validation.csv",
        [
            ["toy", "vector_add", "1000", "fp32", "1e-4", "", 5, ""],  # 50x the model: fails
            ["toy", "vector_add", "2000", "fp32", "", "", 0, "failed: oom"],  # excluded
        ],
    )
    result = validate(registry, ValidateOptions(baselines=[path]))
    assert isinstance(result.summary, Summary)
    assert result.summary.records == 2 and result.summary.checked == 1
    assert result.summary.failed == 1 and result.failed
    (excluded,) = result.summary.excluded
    assert excluded.shape == "2000" and excluded.reason.startswith("capture failed")
    records = result.validation.records
    assert list(records.status) == ["excluded", "checked"]
    assert records.row(1)["pass_latency"] is False
    assert summary_dict(result.summary)["targets"][0]["hardware"] == "toy"
    assert result.floors is None


def test_an_empty_explicit_selection_is_bad_input(registry, tmp_path):
    path = _baseline(
        tmp_path / "toy.validation.csv", [["toy", "matmul", "8x8x8", "fp32", "1e-5", "", 1, ""]]
    )
    with pytest.raises(UserInputError, match="matches no baseline rows"):
        validate(registry, ValidateOptions(baselines=[path], ops=["vector_add"]))


def test_floors_only_for_the_shipped_validation_rows():
    with pytest.raises(UserInputError, match="floors hold for the shipped baselines"):
        ValidateOptions(check_floors=True, purpose="calibration")


def test_unknown_predictor_is_bad_input(registry):
    with pytest.raises(UserInputError, match="unknown predictor 'naive'"):
        validate(registry, ValidateOptions(predictor="naive"))


def test_a_consistency_only_target_alone_is_pointed_at_its_checks():
    from graphsval_core.plugins.loader import build_registry

    shipped = build_registry()
    with pytest.raises(UserInputError, match="matches no baseline rows") as caught:
        validate(shipped, ValidateOptions(hws=["kpu_t64", "tpu_v4"]))
    assert str(caught.value).endswith(
        "kpu_t64, tpu_v4 are consistency-only targets (no silicon, no baselines): "
        "`graphsval check --hw kpu_t64 --hw tpu_v4` runs their checks"
    )
    with pytest.raises(UserInputError) as one:
        validate(shipped, ValidateOptions(hws=["kpu_t64"]))
    assert "kpu_t64 is a consistency-only target" in str(one.value)
    assert "`graphsval check --hw kpu_t64` runs its checks" in str(one.value)


def test_a_measured_target_with_no_baselines_is_told_how_one_is_made():
    from graphsval_core.plugins.loader import build_registry

    shipped = build_registry()
    with pytest.raises(UserInputError, match="matches no baseline rows") as caught:
        validate(shipped, ValidateOptions(hws=["h100_sxm5_80gb"]))
    said = str(caught.value)
    assert "h100_sxm5_80gb has no baselines installed or in the workspace" in said
    assert "targets with baselines: " in said and "i7_12700k" in said
    assert "`graphsval capture --hw h100_sxm5_80gb --op OP --purpose calibration`" in said
    with pytest.raises(UserInputError) as two:
        validate(shipped, ValidateOptions(hws=["h100_sxm5_80gb", "a100_sxm4_80gb"]))
    assert "a100_sxm4_80gb, h100_sxm5_80gb have no baselines" in str(two.value)
    assert "`graphsval capture --hw KEY --op OP" in str(two.value)
    # a target with baselines is not said to have none; nor is any where files were named
    assert _uncaptured(shipped, {"i7_12700k"}, named=False) == ""
    assert _uncaptured(shipped, {"h100_sxm5_80gb"}, named=True) == ""
    with pytest.raises(UserInputError) as both:
        validate(shipped, ValidateOptions(hws=["h100_sxm5_80gb", "kpu_t64"]))
    assert "kpu_t64 is a consistency-only target" in str(both.value)
    assert "h100_sxm5_80gb has no baselines" in str(both.value)


def test_a_target_asked_for_beside_others_but_not_validated_is_said():
    """--hw h100 --hw i7 validated the i7 alone and never named the h100."""
    from graphsval_core.plugins.loader import build_registry

    shipped = build_registry()
    result = validate(shipped, ValidateOptions(hws=["h100_sxm5_80gb", "i7_12700k"]))
    said = [w for w in result.validation.warnings if "h100_sxm5_80gb" in w]
    assert said == [
        "--hw h100_sxm5_80gb: not validated: it has no baselines installed or in the workspace "
        "(`graphsval capture --hw h100_sxm5_80gb --op OP --purpose calibration` (or "
        "validation), run on the hardware, makes one)"
    ]
    assert said[0] in summary_dict(result.summary)["warnings"]  # in every report format
    both = validate(shipped, ValidateOptions(hws=["i7_12700k"], ops=["vector_add"]))
    assert not any("not validated" in w for w in both.validation.warnings)
    # a consistency-only target has its own line, never 'not validated'
    kpu = validate(shipped, ValidateOptions(hws=["kpu_t64", "i7_12700k"], ops=["vector_add"]))
    assert not any("not validated" in w for w in kpu.validation.warnings)


def test_a_target_whose_rows_the_selection_does_not_take_is_said_so():
    """The i7's matmul rows are in the files named, but --op takes the adds:
    its rows are there and not taken (not: it has none)."""
    from graphsval_core.plugins.loader import build_registry

    shipped = build_registry()
    files = {
        Path(str(item)).name: str(item)
        for _, item in shipped.baseline_files()
        if str(item).endswith(".calibration.csv")
    }
    result = validate(
        shipped,
        ValidateOptions(
            baselines=[
                files["i7_12700k_matmul.calibration.csv"],
                files["host_amd_epyc_zen4_2c_1t_vector_add.calibration.csv"],
            ],
            hws=["i7_12700k", "host_amd_epyc_zen4_2c_1t"],
            ops=["vector_add"],
            purpose="calibration",
        ),
    )
    assert [w for w in result.validation.warnings if "not validated" in w] == [
        "--hw i7_12700k: not validated: none of its baseline rows matches --op/--purpose"
    ]


def test_a_named_file_without_a_target_asked_for_says_so(registry, tmp_path):
    from graphsval_core.plugins.loader import build_registry

    shipped = build_registry()
    i7 = next(
        str(item)
        for plugin, item in shipped.baseline_files()
        if str(item).endswith("i7_12700k_vector_add.calibration.csv")
    )
    result = validate(
        shipped,
        ValidateOptions(
            baselines=[i7], hws=["i7_12700k", "jetson_orin_nano_8gb"], purpose="calibration"
        ),
    )
    assert (
        "--hw jetson_orin_nano_8gb: not validated: no row of the baseline(s) named is of it"
        in result.validation.warnings
    )


def test_the_targets_with_baselines_are_found_past_a_broken_workspace_target():
    """A workspace target whose file is broken stops a run that asks for it,
    never one that only asks which targets have baselines."""
    from graphsval_core.validate.selection import targets_with_baselines

    shipped = build_registry()
    assert "i7_12700k" in targets_with_baselines(shipped)
    shipped.workspace_errors["i7_12700k"] = "workspace target file i7: broken; fix or remove it"
    found = targets_with_baselines(shipped)  # no error about a target nobody asked for
    assert "i7_12700k" not in found and "host_amd_epyc_zen4_2c_1t" in found


def test_a_named_file_with_a_recapture_beside_it_says_how_far_the_two_agree(tmp_path):
    probe = Path(__file__).resolve().parents[2] / "benchmarks" / "probes"
    lines = (probe / "zen4_dnn_layers_matmul.csv").read_text().splitlines()[:11]
    again = (probe / "recapture" / "zen4_dnn_layers_matmul.csv").read_text().splitlines()
    mine = tmp_path / "probe.csv"
    mine.write_text("\n".join(lines) + "\n")
    alone = validate(build_registry(), ValidateOptions(baselines=[str(mine)]))
    assert alone.validation.recapture == {}  # no recapture beside it: nothing to say
    (tmp_path / "recapture").mkdir()
    (tmp_path / "recapture" / "probe.csv").write_text("\n".join(again) + "\n")
    paired = validate(build_registry(), ValidateOptions(baselines=[str(mine)]))
    (agreement,) = paired.validation.recapture.values()
    assert agreement.pairs == 10  # the ten rows of the capture, each found again
    assert agreement.floor_within is None  # a file named is held to no shipped floor
    assert 0.0 < agreement.median_diff < 0.1


def test_a_target_whose_every_row_is_excluded_is_said_not_validated(registry, tmp_path):
    path = _baseline(
        tmp_path / "toy.validation.csv",
        [["toy", "vector_add", "2000", "fp32", "", "", 0, "failed: oom"]],  # excluded
    )
    result = validate(registry, ValidateOptions(baselines=[path], hws=["toy"]))
    assert result.summary.records == 1 and result.summary.checked == 0
    assert result.validation.warnings[-1] == (
        "--hw toy: not validated: every row of it is suspect or excluded (listed apart)"
    )
    fine = _baseline(
        tmp_path / "ok.validation.csv",
        [["toy", "vector_add", "1000", "fp32", "2e-6", "", 5, ""]],
    )
    judged = validate(registry, ValidateOptions(baselines=[fine], hws=["toy"]))
    assert not any("not validated" in w for w in judged.validation.warnings)


def test_a_capture_below_its_recapture_floor_fails_the_floors_of_the_file_named(tmp_path):
    """``--floors FILE`` holds each capture's agreement with its recapture to
    the file's floors, not the plugin's, and one below them is a floor not
    met: it had said "floors hold", exit 0 (from the newcomer)."""
    import json

    shipped = Path(__file__).resolve().parents[2] / "plugins/graphsval_cpu/graphsval_cpu"
    floors = json.loads((shipped / "floors.json").read_text())
    key = "host_intel_xeon_2c_1t/matmul"
    named = tmp_path / "floors.json"
    options = {"hws": ("host_intel_xeon_2c_1t",), "ops": ("matmul",), "check_floors": True}
    named.write_text(json.dumps(floors))
    held = validate(build_registry(), ValidateOptions(floors_file=str(named), **options))
    assert held.floors is not None and not held.floors.failed and not held.floors.recaptures
    floors["floors"][key]["recapture_within_min"] = 0.99  # above the 97% it has
    named.write_text(json.dumps(floors))
    below = validate(build_registry(), ValidateOptions(floors_file=str(named), **options))
    ((_, agreement),) = below.validation.recapture.items()
    assert agreement.floor_within == 0.99 and agreement.below_floor
    assert below.floors is not None and below.floors.failed and below.failed
    (line,) = below.floors.recaptures
    assert line.startswith(f"{key} recapture: median <= ")
    assert ">= 99% within 10%: BELOW its floor" in line
    floors["floors"][key]["recapture_median_max"] = 0.001  # a tenth of a percent, not "0%"
    named.write_text(json.dumps(floors))
    tight = validate(build_registry(), ValidateOptions(floors_file=str(named), **options))
    assert tight.floors is not None
    assert f"{key} recapture: median <= 0.1%, >= 99% within 10%" in tight.floors.recaptures[0]
