"""Suspect measurements in validate: a physically implausible quantity (the
row's ``suspect`` column, or the checks against the uncalibrated spec) is
kept out of pass/fail with its reason, listed under its own heading and
counted; only that quantity is excluded."""

from __future__ import annotations

import csv
import json

import pytest
from click.testing import CliRunner

from graphsval_core.cli.main import cli
from graphsval_core.datamodel.errors import UserInputError
from graphsval_core.plugins.loader import build_registry
from graphsval_core.validate.report import SUSPECT_HEADING, render
from graphsval_core.validate.workflow import ValidateOptions, validate

HEADER = ["hardware", "op", "shape", "dtype", "latency_s", "energy_j", "trial_count", "notes"]
ROUNDS = "rounds disagree by 40% after 2 re-measures"


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
        writer.writerow([*HEADER, "suspect"])
        writer.writerows(rows)
    return str(path)


@pytest.fixture
def mixed(tmp_path):
    """Four rows of the toy target (TDP 65 W, fastest tier 1 TB/s): a latency
    the capture marked suspect, an energy of 200 W, operands moved at 3 TB/s that an
    old file does not mark, and a plausible row."""
    return _baseline(
        tmp_path / "toy.validation.csv",
        [
            ["toy", "vector_add", "1000", "fp32", "2.1e-6", "", 5, "", f"latency: {ROUNDS}"],
            ["toy", "vector_add", "1000000", "fp32", "2.1e-4", "0.042", 5, "", ""],
            ["toy", "vector_add", "2000", "fp32", "8e-9", "", 5, "", ""],
            ["toy", "vector_add", "4000", "fp32", "2.2e-6", "", 5, "", ""],
        ],
    )


def test_a_suspect_quantity_is_kept_out_of_pass_fail_with_its_reason(registry, mixed):
    result = validate(registry, ValidateOptions(baselines=[mixed]))
    records = result.validation.records
    by_shape = {records.shape[i]: records.row(i) for i in range(len(records))}
    marked, watts, fast, fine = (by_shape[s] for s in ("1000", "1000000", "2000", "4000"))
    # the capture's own flag: the record leaves pass/fail, with the reason
    assert marked["status"] == "suspect" and marked["passed"] is None
    assert marked["pass_latency"] is None and marked["pass_regime"] is None
    assert marked["suspect"] == f"latency: {ROUNDS}"
    assert marked["excluded_reason"] == f"latency suspect: {ROUNDS}"
    assert marked["latency_predicted_s"] is not None  # predicted all the same
    # an implausible energy: the latency keeps its verdict, the energy is skipped
    assert watts["status"] == "checked" and watts["pass_latency"] is not None
    assert watts["pass_energy"] is None and watts["passed"] is not None
    assert watts["energy_skip_reason"] == (
        "energy suspect: implies 200 W, above 2 x the 65 W TDP (datasheet)"
    )
    # an old file with no suspect column is caught at validate time
    assert fast["status"] == "suspect"
    assert fast["suspect"] == (
        "latency: moves its operands at 3 TB/s, above 2 x the 1 TB/s of l1, the fastest tier "
        "(datasheet)"
    )
    assert fine["status"] == "checked" and fine["suspect"] is None
    summary = result.summary
    assert (summary.records, summary.checked, len(summary.excluded)) == (4, 2, 0)
    (target,) = summary.targets
    assert (target.checked, target.excluded, target.suspect) == (2, 0, 3)
    assert [(s.shape, s.quantity, s.excluded) for s in summary.suspect] == [
        ("1000", "latency", "the record"),
        ("1000000", "energy", "its energy verdict"),
        ("2000", "latency", "the record"),
    ]
    text = render(summary, result.validation)
    assert f"{SUSPECT_HEADING} (3):" in text
    assert f"toy vector_add 1000 fp32 latency: {ROUNDS}; excluded: the record ({mixed}:2)" in text
    assert text.rstrip().endswith("2/2 records pass (0 fail, 0 excluded, 3 suspect)")
    markdown = render(summary, result.validation, markdown=True)
    assert f"## {SUSPECT_HEADING} (3)" in markdown


def test_suspect_records_are_listed_in_every_format(
    make_target, make_plugin, fake_entry_points, make_entry_point, mixed, tmp_path
):
    plugin = make_plugin("toy", lambda: [make_target("toy")])
    fake_entry_points(make_entry_point("toy", lambda: plugin, "graphsval-toy"))
    out = tmp_path / "report"
    result = CliRunner().invoke(cli, ["validate", "--baseline", mixed, "--format", "json"])
    data = json.loads(result.output)
    assert [s["quantity"] for s in data["summary"]["suspect"]] == ["latency", "energy", "latency"]
    assert data["summary"]["targets"][0]["suspect"] == 3
    assert {r["status"] for r in data["records"]} == {"checked", "suspect"}
    CliRunner().invoke(cli, ["validate", "--baseline", mixed, "--out", str(out)])
    assert SUSPECT_HEADING in (out / "report.md").read_text()
    assert SUSPECT_HEADING in (out / "report.html").read_text()
    assert "latency: rounds disagree" in (out / "records.csv").read_text()


def test_rounds_in_two_modes_keep_a_record_out_of_pass_fail(registry, tmp_path):
    """A file captured before the capture flagged two modes: validate reads
    the rounds (calibrate does too) and keeps such a record out; a quiet
    row and a row with no latency stay as they are."""
    path = tmp_path / "toy.validation.csv"
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow([*HEADER, "round_latencies_s"])
        writer.writerows(
            [
                [
                    "toy",
                    "vector_add",
                    "1000",
                    "fp32",
                    "7e-6",
                    "",
                    5,
                    "",
                    "1e-6 7e-6 1.1e-6 7.2e-6 7e-6",
                ],
                ["toy", "vector_add", "4000", "fp32", "2.2e-6", "", 5, "", "2.2e-6 2.1e-6 2.3e-6"],
                [
                    "toy",
                    "vector_add",
                    "8000",
                    "fp32",
                    "",
                    "",
                    0,
                    "timed out",
                    "1e-6 7e-6 1e-6 7e-6",
                ],
            ]
        )
    result = validate(registry, ValidateOptions(baselines=[str(path)]))
    records = result.validation.records
    by_shape = {records.shape[i]: records.row(i) for i in range(len(records))}
    assert by_shape["1000"]["status"] == "suspect" and by_shape["1000"]["passed"] is None
    assert by_shape["1000"]["suspect"].startswith(
        "latency: rounds fall into two modes, 2 at 1.05 us and 3 at 7 us"
    )
    assert by_shape["4000"]["suspect"] is None and by_shape["4000"]["status"] == "checked"
    assert by_shape["8000"]["suspect"] is None  # no latency: nothing to be suspect of


def test_a_malformed_suspect_column_is_one_line_naming_file_and_line(registry, tmp_path):
    path = _baseline(
        tmp_path / "toy.validation.csv",
        [["toy", "vector_add", "1000", "fp32", "2.1e-6", "", 5, "", "too hot"]],
    )
    with pytest.raises(UserInputError, match=f"^{path}:2: suspect entry 'too hot'"):
        validate(registry, ValidateOptions(baselines=[path]))


def test_the_1570_w_row_keeps_its_latency_verdict():
    """The shipped i7-12700K vector_add row of 4096 elements implies about
    1570 W: its energy leaves pass/fail, its latency verdict stays."""
    options = ValidateOptions(hws=["i7_12700k"], ops=["vector_add"], purpose="calibration")
    result = validate(build_registry(), options)
    records = result.validation.records
    (i,) = [i for i in range(len(records)) if records.shape[i] == "4096"]
    row = records.row(i)
    assert row["status"] == "checked" and row["pass_latency"] is True and row["passed"] is True
    assert row["pass_energy"] is None
    assert row["energy_skip_reason"] == (
        "energy suspect: implies 1570 W, above 2 x the 190 W TDP (datasheet)"
    )
    (suspect,) = result.summary.suspect
    assert (suspect.shape, suspect.quantity, suspect.line) == ("4096", "energy", 3)
    assert [(t.suspect, t.passed, t.checked) for t in result.summary.targets] == [(1, 5, 6)]
    # no other row of the shipped data is physically implausible; the only other suspects
    # are rows the host captures (Intel Xeon, AMD EPYC Zen 3 and Zen 4) themselves marked (rounds or
    # recaptures that would not settle) or whose rounds fall into two modes
    every = validate(build_registry(), ValidateOptions())
    implausible = [s for s in every.summary.suspect if "implies" in s.reason]
    assert [(s.hardware, s.shape) for s in implausible] == [("i7_12700k", "4096")]
    others = [s for s in every.summary.suspect if s not in implausible]
    hosts = {"host_intel_xeon_2c_1t", "host_amd_epyc_2c_1t", "host_amd_epyc_zen4_2c_1t"}
    assert {s.hardware for s in others} == hosts
    marks = ("round(s)", "recapture", "rounds fall into two modes")
    assert all(any(m in s.reason for m in marks) for s in others)
    # the Intel host's 21520x96x416 and 52x17x2560, the Zen 3's adds of 269744 and 465952
    assert sum("two modes" in s.reason for s in others) == 4


def test_the_validate_help_states_the_thresholds_in_force():
    from graphsval_core.cli.validate_cmd import validate as command
    from graphsval_core.model import plausibility as p

    text = " ".join((command.help or "").split())
    assert f"above {p.PEAK_MARGIN:g}x the dtype's peak ops/s" in text
    assert f"above {p.BANDWIDTH_MARGIN:g}x the fastest tier's peak bandwidth" in text
    assert f"above {p.SLOW_FACTOR:g}x the slowest plausible time" in text
    assert f"({p.SLOW_OVERHEAD_S * 1e3:g} ms," in text
    assert f"its ops at {p.SLOW_COMPUTE_FRACTION:.0%} of peak" in text
    assert f"energy above {p.POWER_MARGIN:g}x the TDP" in text


def test_a_record_suspect_twice_is_counted_as_one_record():
    from types import SimpleNamespace

    from graphsval_core.validate.report import _suspect_lines

    def finding(reason: str) -> SimpleNamespace:
        return SimpleNamespace(
            hardware="toy",
            op="linear",
            shape="512x7088x2",
            dtype="fp32",
            quantity="latency",
            reason=reason,
            excluded="the record",
            file="b.csv",
            line=7,
        )

    summary = SimpleNamespace(
        suspect=[finding("rounds apart"), finding("capture and recapture apart")],
        targets=[SimpleNamespace(suspect=1)],
    )
    text = _suspect_lines(summary, markdown=False)
    assert text[0] == f"{SUSPECT_HEADING} (2 findings on 1 record):"
    assert len(text) == 3
    summary.targets = [SimpleNamespace(suspect=2)]  # two records, a finding each
    assert _suspect_lines(summary, markdown=True)[0] == f"## {SUSPECT_HEADING} (2)"
