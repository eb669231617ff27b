"""The baseline CSV's validation layer (issue 18): one line naming the file
and line for every way a row or the header can be wrong, duplicates judged
within one file, and what the command line makes of them."""

from __future__ import annotations

import json
import warnings

import pytest
from click.testing import CliRunner

from graphsval_core.cli.main import cli
from graphsval_core.datamodel.errors import InputWarning
from graphsval_core.files.baseline import BaselineFileError, read_baseline

HEADER = "hardware,op,shape,dtype,latency_s,energy_j,trial_count,notes"
HOST = "host_intel_xeon_2c_1t"
ROW = f"{HOST},matmul,64x64x64,fp32,1e-05,,10,note"


def _write(tmp_path, *lines: str, name: str = "b.csv"):
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


def _error(path) -> str:
    with pytest.raises(BaselineFileError) as err:
        read_baseline(path)
    assert "\n" not in str(err.value)
    return str(err.value)


@pytest.mark.parametrize(
    ("row", "fragment"),
    [
        (ROW.replace("64x64x64", "0x64x64"), "shape '0x64x64': dim '0' must be at least 1"),
        (ROW.replace("64x64x64", "9" * 29 + "x64x64"), "(29 digits) is larger than"),
        (ROW.replace("64x64x64", "64x²x64"), "dim '²' is not a positive integer"),
        (ROW.replace(",10,", ",-3,"), "trial_count '-3' must be an integer in [1, "),
        (ROW.replace(",10,", ",many,"), "trial_count 'many' is not an integer"),
        (ROW.replace("1e-05", "nan"), "latency_s 'nan' must be a finite number in [1e-12, 86400]"),
        (ROW.replace("1e-05", "1e300"), "latency_s '1e300' must be a finite number"),
        (ROW.replace("fp32", "fp33"), "dtype 'fp33' is not a known dtype"),
    ],
)
def test_a_bad_value_names_file_line_and_what_was_expected(tmp_path, row, fragment):
    path = _write(tmp_path, HEADER, ROW.replace("64x64x64", "32x32x32"), row)
    message = _error(path)
    assert message.startswith(f"{path}:3: ") and fragment in message


def test_a_header_alone_is_no_baseline(tmp_path):
    path = _write(tmp_path, HEADER)
    assert _error(path) == f"{path}: no rows under the header; a baseline holds at least one"


def test_a_column_named_twice_is_refused(tmp_path):
    path = _write(tmp_path, HEADER + ",latency_s", ROW + ",5")
    assert _error(path) == f"{path}:1: column 'latency_s' appears twice (columns 5 and 9)"


def test_a_bom_is_no_part_of_the_header(tmp_path):
    path = tmp_path / "bom.csv"
    path.write_bytes(b"\xef\xbb\xbf" + f"{HEADER}\n{ROW}\n".encode())
    assert read_baseline(path).rows[0].hardware == HOST


def test_a_header_with_an_invisible_character_shows_it(tmp_path):
    path = _write(tmp_path, "\u200b" + HEADER, ROW)
    assert "\\u200b" in _error(path)


def test_an_unterminated_quote_never_swallows_the_rows_after_it(tmp_path):
    rows = [ROW.replace("64x64x64", f"{n}x8x8") for n in range(1, 19)]
    rows[2] = rows[2].replace(",note", ',"note')
    path = _write(tmp_path, HEADER, *rows)
    assert _error(path) == (
        f"{path}:4: a quoted field is never closed (an unterminated quote takes in every line "
        "after it)"
    )
    rows[7] = rows[7].replace(",note", ',note"')
    path = _write(tmp_path, HEADER, *rows)
    assert _error(path).startswith(f"{path}:4: a quoted field runs on to line 9")


def test_exact_duplicates_count_once_with_one_warning(tmp_path):
    other = ROW.replace("64x64x64", "32x32x32")
    path = _write(tmp_path, HEADER, ROW, other, ROW, other)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", InputWarning)
        baseline = read_baseline(path)
    assert [r.line for r in baseline.rows] == [2, 3]
    (warning,) = caught
    assert str(warning.message) == (
        f"{path}: 2 row(s) repeat an earlier row exactly (same target, op, shape, dtype, "
        "purpose and values: line 4 repeats line 2, line 5 repeats line 3); each is read once"
    )


def test_a_conflicting_duplicate_is_an_error(tmp_path):
    path = _write(tmp_path, HEADER, ROW, ROW.replace("1e-05", "1.0"))
    assert _error(path) == (
        f"{path}:3: {HOST} matmul 64x64x64 fp32 was measured at line 2 already, with other "
        "values; keep one row per shape"
    )


def test_duplicates_are_judged_within_one_purpose_and_one_file(tmp_path):
    head = HEADER + ",purpose"
    path = _write(
        tmp_path, head, ROW + ",calibration", ROW.replace("1e-05", "2e-05") + ",validation"
    )
    assert len(read_baseline(path).rows) == 2
    capture = _write(tmp_path, HEADER, ROW, name="x.validation.csv")
    (tmp_path / "recapture").mkdir()
    again = _write(
        tmp_path, HEADER, ROW.replace("1e-05", "1.1e-05"), name="recapture/x.validation.csv"
    )
    assert read_baseline(capture).rows[0].latency_s != read_baseline(again).rows[0].latency_s


def test_the_command_line_counts_a_repeated_file_once_and_says_so(tmp_path):
    path = _write(tmp_path, HEADER, ROW, ROW)
    result = CliRunner().invoke(cli, ["validate", "--baseline", str(path), "--format", "json"])
    assert result.exit_code in (0, 1), result.output
    report = json.loads(result.stdout)
    assert len(report["records"]) == 1  # counted once, not twice
    said = [w for w in report["summary"]["warnings"] if "repeat an earlier row exactly" in w]
    assert len(said) == 1 and "repeat an earlier row" not in result.stderr  # in the report


@pytest.mark.parametrize(
    ("row", "fragment"),
    [
        (ROW.replace(HOST, "nosuch_target"), ":2: hardware: unknown target 'nosuch_target'"),
        (ROW.replace("matmul", "nosuch_op"), ":2: op: unknown op 'nosuch_op'"),
    ],
)
def test_a_row_of_an_unknown_target_or_op_names_file_and_line(tmp_path, row, fragment):
    path = _write(tmp_path, HEADER, row)
    result = CliRunner().invoke(cli, ["validate", "--baseline", str(path)])
    assert result.exit_code == 2
    assert f"Error: {path}{fragment}" in result.output


def test_a_named_file_that_yields_no_rows_exits_2(tmp_path):
    path = _write(tmp_path, HEADER, name="h.validation.csv")
    result = CliRunner().invoke(cli, ["validate", "--baseline", str(path)])
    assert result.exit_code == 2 and "no rows under the header" in result.output
    calibration = _write(tmp_path, HEADER, ROW, name="c.calibration.csv")
    result = CliRunner().invoke(cli, ["validate", "--baseline", str(calibration)])
    assert result.exit_code == 2
    assert (
        f"Error: nothing was validated: {calibration}: all its 1 row(s) are calibration rows "
        "(its file name's suffix), none validation; --purpose calibration validates them"
    ) in result.output
    column = _write(tmp_path, HEADER + ",purpose", ROW + ",calibration", name="p.csv")
    result = CliRunner().invoke(cli, ["validate", "--baseline", str(column)])
    assert result.exit_code == 2 and "(its purpose column)" in result.output
    assert "--purpose calibration validates them" in result.output
    picked = CliRunner().invoke(
        cli, ["validate", "-q", "--purpose", "calibration", "--baseline", str(calibration)]
    )
    assert picked.exit_code in (0, 1) and "records pass" in picked.output


def test_registry_lookup_refuses_a_file_with_two_answers(tmp_path):
    path = _write(tmp_path, HEADER, ROW.replace("1e-05", "6e-06"), ROW.replace("1e-05", "1.0"))
    args = ["--hw", HOST, "--op", "matmul", "--shape", "64x64x64", "--dtype", "fp32"]
    result = CliRunner().invoke(cli, ["registry", "lookup", *args, "--baseline", str(path)])
    assert result.exit_code == 2 and "with other values" in result.output


def test_a_named_file_of_which_no_row_can_be_checked_exits_2(tmp_path):
    path = _write(tmp_path, HEADER, f"{HOST},matmul,64x64x64,fp32,,,0,failed: out of memory")
    result = CliRunner().invoke(cli, ["validate", "--baseline", str(path)])
    assert result.exit_code == 2, result.output
    assert "Error: nothing was validated: none of the 1 selected row(s) could be checked" in (
        result.output
    )
    assert "-v lists them" not in result.output  # the command ends here: nothing lists them
