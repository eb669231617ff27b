"""The baseline reader's rules at the edges: a number as a number is written,
a latency or energy that can be a measurement, a trial count of a measured
row, an empty purpose cell, the known extra columns (names and values), and
one plain line for a byte, a line end or a file that is not a baseline. The
column-wise blocks, the line-by-line rules and the csv module read each the
same, whichever block the row falls in."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from graphsval_core.cli.main import cli
from graphsval_core.files import baseline_stream
from graphsval_core.files.baseline import BaselineFileError, read_baseline, read_many
from graphsval_core.files.baseline_rows import KNOWN_EXTRAS, SCHEMA_VERSIONS
from graphsval_core.measure import capture_file
from graphsval_core.plugins.loader import build_registry

HEADER = "hardware,op,shape,dtype,latency_s,energy_j,trial_count,notes"
HOST = "host_intel_xeon_2c_1t"


def _row(n: int, latency: str = "1e-05", energy: str = "", trials: str = "10", *extras: str) -> str:
    return ",".join(
        [HOST, "matmul", f"{n}x64x64", "fp32", latency, energy, trials, "note", *extras]
    )


def _read(name: str, text: str, monkeypatch, plain: bool = True) -> object:
    """The rows read from ``text`` (a file named ``name``), or the error."""
    with monkeypatch.context() as patch:
        if not plain:
            patch.setattr(baseline_stream, "plain_block", lambda *args: None)
        try:
            return read_baseline(name, text).rows
        except BaselineFileError as exc:
            return str(exc)


def _readers(text: str, monkeypatch, name: str = "b.csv") -> object:
    """What the column-wise blocks make of ``text``: its rows or the error;
    the line-by-line rules and the csv module (a quoted field in the first
    row sends every line to it) make the same of it."""
    columnwise = _read(name, text, monkeypatch)
    assert _read(name, text, monkeypatch, plain=False) == columnwise
    head, _, body = text.partition("\n")
    quoted = f"{head}\n" + body.replace(",note", ',"note"', 1)
    assert quoted != text
    assert _read(name, quoted, monkeypatch) == columnwise
    return columnwise


def _file(*lines: str) -> str:
    return "\n".join(lines) + "\n"


# --- numbers -----------------------------------------------------------------------------

NUMBERS = [
    ("1e-3", 1e-3),
    (" 5", 5.0),
    ("+5", 5.0),
    ("nan", None),
    ("inf", None),
    ("0x10", None),
    ("1_000", None),
    ("1_0e-3", None),
    ("\u0663", None),  # an Arabic-Indic three: Python's float reads it
    ("5e-324", None),  # a denormal
    ("1e-13", None),
    ("1e-400", None),  # too small for a float: not 0
    ("-1e-400", None),
]


@pytest.mark.parametrize(("text", "value"), NUMBERS)
@pytest.mark.parametrize("column", ["latency_s", "energy_j", "first_latency_s", "energy_window_s"])
def test_every_reader_reads_a_number_alike(monkeypatch, column, text, value):
    rows = [_row(n, "2e-3", "0.5", "10", "0.25", "0.5") for n in range(1, 4)]
    fields = rows[1].split(",")
    at = (HEADER + ",first_latency_s,energy_window_s").split(",").index(column)
    fields[at] = text
    rows[1] = ",".join(fields)
    out = _readers(_file(HEADER + ",first_latency_s,energy_window_s", *rows), monkeypatch)
    if value is None:
        assert isinstance(out, str) and out.startswith(f"b.csv:3: {column} {text.strip()!r} "), out
    else:
        assert not isinstance(out, str), out
        row = out[1]
        read = {"latency_s": row.latency_s, "energy_j": row.energy_j}.get(column)
        assert (float(row.extras[column]) if read is None else read) == value


@pytest.mark.parametrize(
    ("column", "unit", "text"),
    [
        ("latency_s", "a picosecond (1e-12 s)", "5e-324"),
        ("energy_j", "a picojoule (1e-12 J)", "5e-324"),
        ("first_latency_s", "a picosecond (1e-12 s)", "9.99e-13"),
        ("energy_window_s", "a picosecond (1e-12 s)", "1e-300"),
        ("latency_s", "a picosecond (1e-12 s)", "1e-400"),  # read as 0 by a float
    ],
)
def test_a_value_below_a_picosecond_or_picojoule_is_no_measurement(monkeypatch, column, unit, text):
    header = HEADER + ",first_latency_s,energy_window_s"
    fields = dict(
        zip(header.split(","), _row(1, "1e-05", "", "10", "", "").split(","), strict=True)
    )
    fields[column] = text
    out = _readers(
        _file(header, _row(2, "1e-05", "", "10", "", ""), ",".join(fields.values())), monkeypatch
    )
    assert out == f"b.csv:3: {column} {text!r} is below {unit}: not a measurement"


@pytest.mark.parametrize("text", ["-1e-5", "-0.5", "nan", "1e300", "86401"])
def test_a_latency_out_of_range_is_told_the_range_the_reader_takes(monkeypatch, text):
    """A negative latency was told ``must be a finite number in [0, 86400]``,
    a range holding 0, which is refused (from the newcomer): it is told the
    range the reader takes, a picosecond to a day, and that a failed shape's
    is empty, as README.md says."""
    from pathlib import Path

    out = _readers(_file(HEADER, _row(1, text)), monkeypatch)
    assert out == (
        f"b.csv:2: latency_s {text!r} must be a finite number in [1e-12, 86400], "
        "or empty for a failed shape"
    )
    readme = " ".join((Path(__file__).parents[2] / "README.md").read_text().split())
    assert "`latency_s` at least a picosecond (0 is refused: a failed shape's is empty)" in readme


def test_zero_keeps_its_meaning(monkeypatch):
    header = HEADER + ",first_latency_s,energy_window_s"
    # a latency of 0 is refused as before (empty is a failed shape)
    out = _readers(_file(header, _row(1, "0", "", "10", "", "")), monkeypatch)
    assert out == "b.csv:2: latency_s is 0 (leave it empty for a failed shape)"
    # an energy of 0.0 is missing energy; a window of 0.0000 and the tiniest real latency read
    out = _readers(_file(header, _row(1, "1e-12", "0.0", "10", "0", "0.0000")), monkeypatch)
    assert not isinstance(out, str), out
    assert (out[0].latency_s, out[0].energy_j) == (1e-12, None)
    # a zero written with a tiny exponent is still 0 (1e-400 is not: it is too small)
    out = _readers(_file(header, _row(1, "1e-12", "0e-400", "10", "0", "0.0e-999")), monkeypatch)
    assert not isinstance(out, str), out
    assert out[0].energy_j is None


def test_a_denormal_latency_is_one_line_and_exit_2(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text(_file(HEADER, _row(64, "5e-324")))
    result = CliRunner().invoke(cli, ["validate", "--baseline", str(path)])
    assert result.exit_code == 2
    assert result.output == (
        f"Error: {path}:2: latency_s '5e-324' is below a picosecond (1e-12 s): not a measurement\n"
    )


# --- trial counts --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("latency", "text", "count"),
    [
        ("1e-05", "1", 1),
        ("1e-05", " 5", 5),
        ("1e-05", "", None),  # a latency counts its trials (every V4 file and capture does)
        ("1e-05", "  ", None),
        ("", "0", 0),  # a failed shape: the capture writes 0
        ("", "", 0),
        ("1e-05", "0", None),
        ("1e-05", "00", None),
        ("1e-05", "-3", None),
        ("1e-05", "+5", None),
        ("1e-05", "1_0", None),
        ("1e-05", "\u0663", None),
        ("1e-05", str(2**53 + 1), None),
        ("", "-1", None),
        ("", "1", None),  # trials counted beside no latency: the capture never writes it
        ("", "12", None),
        ("", "00", 0),
        ("", "many", None),
    ],
)
def test_a_measured_row_counts_at_least_one_trial(monkeypatch, latency, text, count):
    out = _readers(_file(HEADER, _row(1), _row(2, latency, "", text)), monkeypatch)
    if count is None and not text.strip():
        assert out == (
            "b.csv:3: trial_count is empty on a measured row (one with a latency_s); give the "
            f"number of trials measured, an integer in [1, {2**53}] (empty or 0 only on a "
            "failed shape)"
        )
    elif count is None:
        assert isinstance(out, str) and out.startswith(f"b.csv:3: trial_count {text.strip()!r} ")
        if not text.isascii() or not text.strip().lstrip("-").isdigit():
            assert out.endswith(
                "is not an integer (expected a count of trials, or empty on a failed shape)"
            )
        elif latency:
            assert out.endswith(
                f"must be an integer in [1, {2**53}] (0 only on a failed shape, one with no "
                "latency_s)"
            )
        else:
            assert out.endswith(
                "on a failed shape (no latency_s); a failed shape counts no trial: write 0 or "
                "leave it empty, or give the latency_s measured"
            )
    else:
        assert not isinstance(out, str), out
        assert out[1].trial_count == count


def test_no_shipped_baseline_counts_zero_trials_on_a_measured_row():
    files = read_many(item for _, item in build_registry().baseline_files())
    assert files and all(r.trial_count >= 1 for b in files for r in b.rows if not r.failed)


def test_no_baseline_in_the_tree_leaves_a_measured_rows_trials_empty():
    """A measured row must count its trials: no baseline the project ships
    (the vendored V4 ground truth included) or keeps as a probe leaves one
    empty, so refusing it breaks none."""
    import csv
    from pathlib import Path

    repo = Path(__file__).parents[2]
    files = [*repo.glob("plugins/*/*/baselines/**/*.csv"), *repo.glob("benchmarks/**/*.csv")]
    assert len(files) > 30
    for path in files:
        with path.open(newline="") as handle:
            rows = list(csv.reader(handle))
        assert rows[0][4:7] == ["latency_s", "energy_j", "trial_count"]
        for n, row in enumerate(rows[1:], start=2):
            assert not row[4].strip() or row[6].strip(), f"{path}:{n}"


def _reading_commands(path, calibration, *validate_args: str) -> list[list[str]]:
    """The four commands that read a baseline (``validate`` with
    ``validate_args``, ``explain``, ``registry lookup``, ``calibrate`` writing
    ``calibration``), each given ``path``."""
    one = f"--hw {HOST} --op matmul --shape 1x64x64 --dtype fp32".split()
    return [
        ["validate", "--baseline", str(path), *validate_args],
        ["explain", *one, "--baseline", str(path)],
        ["registry", "lookup", *one, "--baseline", str(path)],
        ["calibrate", "--hw", HOST, "--baseline", str(path), "--out", str(calibration)],
    ]


@pytest.mark.parametrize("plain", [True, False])
def test_a_measured_row_with_no_trial_count_is_one_line_and_exit_2(tmp_path, monkeypatch, plain):
    """A measured row whose trial_count is empty was read as 0 trials, an
    unknown count, and validated (from the demanding user): it is refused
    in one line naming the file and line, as a count of 0 is, whichever
    way the block is read."""
    from pathlib import Path

    if not plain:
        monkeypatch.setattr(baseline_stream, "plain_block", lambda *args: None)
    path = tmp_path / "e.csv"
    path.write_text(_file(HEADER, _row(1), _row(2, "1e-05", "", ""), _row(3)))
    for command in _reading_commands(path, tmp_path / "c.json"):
        result = CliRunner().invoke(cli, command)
        assert result.exit_code == 2, result.output
        assert result.output == (
            f"Error: {path}:3: trial_count is empty on a measured row (one with a latency_s); "
            f"give the number of trials measured, an integer in [1, {2**53}] (empty or 0 only "
            "on a failed shape)\n"
        )
    readme = " ".join((Path(__file__).parents[2] / "README.md").read_text().split())
    assert "0 or empty on a failed shape, one with no latency, and never empty on a " in readme


def test_trials_on_a_failed_shape_are_one_line_and_exit_2(tmp_path):
    path = tmp_path / "f.csv"
    path.write_text(_file(HEADER, _row(1), _row(2, "", "", "10")))
    result = CliRunner().invoke(cli, ["validate", "--baseline", str(path)])
    assert result.exit_code == 2
    assert result.output == (
        f"Error: {path}:3: trial_count '10' on a failed shape (no latency_s); a failed shape "
        "counts no trial: write 0 or leave it empty, or give the latency_s measured\n"
    )


# --- purpose -------------------------------------------------------------------------------


def test_an_empty_purpose_cell_takes_the_file_names_suffix(monkeypatch):
    text = _file(
        HEADER + ",purpose",
        _row(1) + ",validation",
        _row(2) + ",",
        _row(3) + ",  ",
        _row(4) + ",calibration",
    )
    out = _readers(text, monkeypatch, name="x.calibration.csv")
    assert not isinstance(out, str), out
    assert [r.purpose for r in out] == ["validation", "calibration", "calibration", "calibration"]
    assert read_baseline("x.calibration.csv", text).purpose_source == "column"
    # no suffix to say it: an error naming the line, never a row dropped
    assert _readers(text, monkeypatch, name="x.csv") == (
        "x.csv:3: purpose is empty and the file name has no .calibration.csv or .validation.csv "
        "suffix to say it; write calibration or validation"
    )


def test_a_row_with_an_empty_purpose_cell_counts_for_the_suffixs_purpose(tmp_path):
    path = tmp_path / "p.calibration.csv"
    path.write_text(_file(HEADER + ",purpose", _row(64) + ",", _row(32) + ",validation"))

    def records(*args: str) -> int:
        result = CliRunner().invoke(
            cli, ["validate", "--baseline", str(path), "--format", "json", *args]
        )
        assert result.exit_code in (0, 1), result.output
        return len(json.loads(result.stdout)["records"])

    assert records("--purpose", "calibration") == 1
    assert records() == 1  # the validation row


# --- the known extra columns -------------------------------------------------------------------


def test_the_capture_writes_the_newest_schema_the_reader_knows():
    assert SCHEMA_VERSIONS[-1] == capture_file.SCHEMA_VERSION
    assert capture_file.EXTRA_COLUMNS is KNOWN_EXTRAS  # one list, read and written


@pytest.mark.parametrize(
    ("name", "known"),
    [
        ("purpse", "purpose"),
        ("Purpose", "purpose"),
        ("verdit", "verdict"),
        ("thread", "threads"),
        ("energy_window", "energy_window_s"),
        ("schema_versoin", "schema_version"),
        ("latency_S", "latency_s"),  # a leading column's near miss beside the column itself
        ("latncy_s", "latency_s"),
        ("LATENCY_S", "latency_s"),  # in any case
        ("DType", "dtype"),
        ("ltaency_s", "latency_s"),  # two letters swapped
        ("energy_k", "energy_j"),  # one changed
    ],
)
def test_a_misspelt_known_column_is_an_error_naming_it(monkeypatch, name, known):
    text = _file(f"{HEADER},foo,{name}", _row(1) + ",1,pass")
    assert _readers(text, monkeypatch) == (
        f"b.csv:1: column 10 {name!r} is no column graphsval knows; did you mean {known!r}? "
        "(a column of your own needs a name further from graphsval's)"
    )


@pytest.mark.parametrize(
    "names",
    [
        "foo,bar",
        "p50_s,p99_s",
        "mean_rel_l2,load_avg15",
        "my_note,x",
        "latency_ms,latency_std_s",  # longer than a leading column: the developer's own
        "energy_uj,energy_jj",
    ],
)
def test_a_column_of_ones_own_is_read(monkeypatch, names):
    out = _readers(_file(f"{HEADER},{names}", _row(1) + ",a,b"), monkeypatch)
    assert not isinstance(out, str), out
    assert list(out[0].extras.values()) == ["a", "b"]


BAD_VALUES = [
    ("schema_version", "99", "1 or 2 (the baseline schema versions this graphsval reads)"),
    ("schema_version", "2.0", "1 or 2"),
    ("verdict", "maybe", "pass or FAIL (the correctness check's verdict)"),
    ("verdict", "fail", "pass or FAIL"),
    ("threads", "abc", "a positive integer"),
    ("threads", "0", "a positive integer"),
    ("samples", "-1", "a positive integer"),
    ("remeasured", "1.5", "an integer >= 0"),
    ("stopped_by", "never", "ci, budget or max_samples"),
    ("p10_s", "1e9", "a number of seconds, 0 or in [1e-12, 86400]"),
    ("p90_s", "5e-324", "a number of seconds, 0 or in [1e-12, 86400]"),  # a denormal
    ("p90_s", "1e-400", "a number of seconds, 0 or in [1e-12, 86400]"),  # a float reads 0
    ("spread_ci_rel", "inf", "a finite number >= 0"),
    ("rtol", "nan", "a finite number >= 0"),
    ("load_avg", "1_0", "a finite number >= 0"),
    ("max_abs", "-1", "a number >= 0, inf or nan"),
    (
        "round_latencies_s",
        "1e-3 x",
        "numbers of seconds, each 0 or in [1e-12, 86400], separated by spaces",
    ),
    (
        "round_latencies_s",
        "1e-3 5e-324",
        "numbers of seconds, each 0 or in [1e-12, 86400], separated by spaces",
    ),
    *(
        ("round_latencies_s", v, "numbers of seconds, each 0 or in [1e-12, 86400], separated by")
        for v in ("1e-3 1e-400", "1e-6 x")  # a tab is no space: a control character (below)
    ),
    ("captured_at", "yesterday", "an ISO 8601 time such as 2026-12-01T06:55:24Z"),
    ("details", "[1]", "a JSON object"),
    ("details", '{"a": NaN}', "a JSON object"),  # read as strictly as a JSON file
    ("details", '{"a": 1e400}', "a JSON object"),  # overflows a float
    ("details", '{"a": 123456789012345678901234}', "a JSON object"),  # beyond 64 bits
    ("busy", "maybe", "no, yes, or 'yes: ' or 'waited out: '"),
    ("output_alloc", "bogus", "fresh or preallocated"),
    ("check_scope", "some", "all elements or 'sampled N elements'"),
]


@pytest.mark.parametrize(("column", "value", "expects"), BAD_VALUES)
def test_a_known_column_holds_only_its_values(monkeypatch, column, value, expects):
    text = _file(f"{HEADER},{column}", _row(1) + ",", _row(2) + f",{value}")
    out = _readers(text, monkeypatch)
    assert isinstance(out, str) and out.startswith(f"b.csv:3: {column} {value!r} must be "), out
    assert f"must be {expects}" in out and out.endswith(", or empty"), out


@pytest.mark.parametrize(
    ("column", "values"),
    [
        ("schema_version", ["1", "2", ""]),
        ("verdict", ["pass", "FAIL", "", "  "]),
        ("threads", ["1", " 8", ""]),
        ("stopped_by", ["ci", "budget", "max_samples"]),
        ("max_abs", ["1.562e-02", "inf", "nan"]),  # a non-finite output: inf or nan
        ("round_latencies_s", ["2.4944e-05 2.2824e-05", "1e-3  2e-3", ""]),
        ("captured_at", ["2026-12-01T06:55:24Z", "2026-12-01 06:55"]),
        ("details", ["{}", ""]),
        ("busy", ["no", "yes", "waited out: load 3.1", "yes: 1 of 3 round(s) measured while busy"]),
        ("output_alloc", ["fresh", "preallocated", ""]),
        ("check_scope", ["all elements", "sampled 1008 elements", ""]),
    ],
)
def test_what_the_capture_writes_reads(monkeypatch, column, values):
    rows = [_row(n + 1) + f",{v}" for n, v in enumerate(values)]
    out = _readers(_file(f"{HEADER},{column}", *rows), monkeypatch)
    assert not isinstance(out, str), out
    assert [r.extras[column] for r in out] == values


@pytest.mark.parametrize(
    ("columns", "values", "fragment"),
    [
        ("p10_s,p90_s", "5,1.4e-06", "b.csv:3: p10_s '5' is above p90_s '1.4e-06'"),
        (
            "rounds,round_latencies_s",
            "3,1e-6 2e-6 3e-6 4e-6",
            "b.csv:3: round_latencies_s holds 4 value(s) for rounds 3",
        ),
    ],
)
def test_columns_written_together_agree(monkeypatch, columns, values, fragment):
    """p10 above p90, or more round latencies than rounds: no capture wrote them."""
    good = "1e-6,2e-6" if columns.startswith("p10") else "2,1e-6 "  # an unmeasured round: empty
    text = _file(f"{HEADER},{columns}", _row(1) + f",{good}", _row(2) + f",{values}")
    out = _readers(text, monkeypatch)
    assert isinstance(out, str) and out.startswith(fragment), out


# --- control characters -----------------------------------------------------------------------

CONTROLS = [
    ("\x1b", "U+001B"),  # an escape: \x1b]0;title\x07 retitles the terminal, \x1b[2J clears it
    ("\x07", "U+0007"),
    ("\t", "U+0009"),
    ("\x00", "U+0000"),
    ("\x7f", "U+007F"),
    ("\x85", "U+0085"),  # a C1 control: a next line
    ("\u2028", "U+2028"),  # a line separator
    ("\u202e", "U+202E"),  # a right-to-left override: the rest of the line shows reversed
    ("\u200b", "U+200B"),  # a zero-width space
]


@pytest.mark.parametrize(("char", "code"), CONTROLS)
@pytest.mark.parametrize(
    "column", ["notes", "suspect", "energy_source", "device", "p50_s", "hardware", "latency_s"]
)
def test_a_cell_holding_a_control_character_is_refused(monkeypatch, column, char, code):
    """A note holding an escape sequence was copied raw into records.csv,
    report.html, report.md and the terminal's list of excluded rows (from
    the demanding user): a cell holding a control character, in any column
    (the free text a report shows: the notes, the ``suspect`` reasons, the
    energy source a calibration records), is refused in one line naming the
    file, line and column, its value escaped, as a target file's or a
    sweep's free text is. Every reader says the same."""
    header = f"{HEADER},suspect,energy_source,device,p50_s"
    good = _row(1) + ",latency: slow,none,cpu,1e-5"
    fields = dict(zip(header.split(","), (_row(2) + ",,none,cpu,1e-5").split(","), strict=True))
    fields[column] = {"suspect": "latency: ", "energy_source": "rapl "}.get(column, "x")
    fields[column] = f"{fields[column]}{char}[31mred" if column != "latency_s" else f"1e-5{char}"
    out = _readers(_file(header, good, ",".join(fields.values())), monkeypatch)
    assert out == (
        f"b.csv:3: {column} {fields[column]!r} holds a control character ({code}): give one "
        "line of text"
    )


def test_a_control_character_is_named_wherever_it_lies_in_a_long_note(monkeypatch):
    note = "x" * 100 + "\x1b[2J"
    out = _readers(_file(HEADER, _row(1), _row(2).replace(",note", f",{note}")), monkeypatch)
    assert out == (
        f"b.csv:3: notes {'x' * 37 + '...'!r} holds a control character (U+001B): give one line "
        "of text"
    )


@pytest.mark.parametrize(
    "note", ["plain", "caf\u00e9 \u2013 na\u00efve", "no\u00a0break", "\u200d"]
)
def test_a_note_of_plain_text_in_any_script_reads(monkeypatch, note):
    """Text is text: an accent, a dash, a no-break space, a zero-width
    joiner (emoji and Indic words need it) are no control characters."""
    out = _readers(_file(HEADER, _row(1), _row(2).replace(",note", f",{note}")), monkeypatch)
    assert not isinstance(out, str), out
    assert out[1].notes == note


def test_a_fingerprint_naming_a_control_character_in_an_escape_is_refused(monkeypatch):
    """A fingerprint's names and values are printed in a warning (captured
    with cpu 'x', but the target says 'y'): one written as a JSON escape
    (``\\u001b``) is a control character too."""
    header = f"{HEADER},fingerprint"
    for bad in ('{"cpu\\u001b[2J": "x"}', '{"cpu": "x\\u202ey"}'):
        text = _file(header, _row(1) + ',"{""cpu"": ""x""}"', _row(2) + "," + _quoted(bad))
        out = _read("b.csv", text, monkeypatch)
        code = "U+001B" if "001b" in bad else "U+202E"
        assert out == (
            f"b.csv:3: fingerprint {bad!r} holds a control character ({code}) in a name or "
            "value: give one line of text"
        )


def _quoted(cell: str) -> str:
    return '"' + cell.replace('"', '""') + '"'


def test_a_note_holding_an_escape_is_one_line_and_exit_2_and_writes_no_report(tmp_path):
    """``validate --baseline``, ``explain``, ``registry lookup`` and
    ``calibrate`` all refuse it in one plain line (the escape written as
    ``\\x1b``), exit 2, and write no report; README.md says so."""
    from pathlib import Path

    path = tmp_path / "n.csv"
    note = "hi \x1b]0;pwned\x07\x1b[31mred <b>x</b>"
    path.write_text(_file(HEADER, _row(1), _row(2).replace(",note", f",{note}")))
    out = tmp_path / "out"
    for command in _reading_commands(path, tmp_path / "c.json", "--out", str(out)):
        result = CliRunner().invoke(cli, command)
        assert result.exit_code == 2, result.output
        assert result.output == (
            f"Error: {path}:3: notes 'hi \\x1b]0;pwned\\x07\\x1b[31mred <b>x</b>' holds a "
            "control character (U+001B): give one line of text\n"
        )
    assert not out.exists() and not (tmp_path / "c.json").exists()
    readme = " ".join((Path(__file__).parents[2] / "README.md").read_text().split())
    assert "A baseline cell holding a control character (a tab, an escape, a NUL," in readme


# --- one plain line for a byte, a line end, an empty file --------------------------------------


@pytest.mark.parametrize("size", [1, 5, 64, 4 * 2**20])
def test_a_byte_that_is_not_utf8_is_named_by_its_line(tmp_path, monkeypatch, size):
    monkeypatch.setattr(baseline_stream, "READ_BYTES", size)
    lines = [HEADER, *(_row(n) for n in range(1, 10))]
    data = _file(*lines).encode()
    at = data.index(b"note", data.index(b",6x64x64,"))  # line 7's note
    path = tmp_path / "u.csv"
    path.write_bytes(data[:at] + b"\xe9" + data[at:])
    with pytest.raises(BaselineFileError) as err:
        read_baseline(path)
    assert str(err.value) == (
        f"{path}:7: not UTF-8 text (byte {at}: invalid continuation byte); expected a baseline CSV"
    )
    path.write_bytes(data + b"\xe2\x82")  # cut inside a character, after the last line
    with pytest.raises(
        BaselineFileError, match=r"u.csv:11: not UTF-8 text \(byte \d+: unexpected end"
    ):
        read_baseline(path)


def test_a_carriage_return_inside_a_line_is_said_plainly(monkeypatch):
    plain = "a carriage return inside a line (old Mac line endings?); expected LF or CRLF line ends"
    rows = [_row(n) for n in range(1, 6)]
    rows[2] = rows[2].replace(",note", ",no\rte")
    assert _read("b.csv", _file(HEADER, *rows), monkeypatch) == f"b.csv:4: {plain}"
    old_mac = "\r".join([HEADER, *rows]) + "\r"
    assert _read("b.csv", old_mac, monkeypatch) == f"b.csv:1: {plain}"
    crlf = "\r\n".join([HEADER, _row(1), _row(2)]) + "\r\n"
    assert len(_read("b.csv", crlf, monkeypatch)) == 2


@pytest.mark.parametrize("text", ["", "\ufeff", "\n", "\n \n\n", "  "])
def test_an_empty_file_says_so(monkeypatch, text):
    assert _read("e.csv", text, monkeypatch) == "e.csv: empty file (expected a header line)"


def test_a_blank_first_line_is_no_header(monkeypatch):
    assert _read("e.csv", _file("", HEADER, _row(1)), monkeypatch) == (
        f"e.csv:1: the first line is blank; expected the header {HEADER},..."
    )


# --- a large file: the problem at line 150,000 (the third block) -------------------------------

BIG_HEADER = HEADER + ",purpose,schema_version,verdict,threads"


@pytest.fixture(scope="module")
def big_lines() -> list[str]:
    rows = [
        _row(1, f"{(i % 97 + 1) * 1e-6:.6g}", "", "10", "validation", "2", "pass", "1").replace(
            "1x64x64", f"{1 + i % 4096}x{1 + i // 4096}x8"
        )
        for i in range(149_999)
    ]
    return [BIG_HEADER, *rows]


def _set(index: int, value: str):
    """A change of a row: field ``index`` becomes ``value``."""
    return lambda row: ",".join(value if k == index else f for k, f in enumerate(row.split(",")))


BIG = [
    (_set(4, "5e-324"), "latency_s '5e-324' is below a picosecond"),
    (_set(4, "1_0e-6"), "latency_s '1_0e-6' is not a number"),
    (_set(6, "0"), "trial_count '0' must be an integer in [1, "),
    (_set(4, ""), "trial_count '10' on a failed shape (no latency_s)"),
    (_set(7, "no\rte"), "a carriage return inside a line"),
    (_set(8, ""), "purpose is empty and the file name has no"),
    (_set(9, "99"), "schema_version '99' must be 1 or 2"),
    (_set(10, "maybe"), "verdict 'maybe' must be pass or FAIL"),
    (_set(11, "abc"), "threads 'abc' must be a positive integer"),
    (_set(7, "no\x1b[2Jte"), "notes 'no\\x1b[2Jte' holds a control character (U+001B)"),
    (_set(6, ""), "trial_count is empty on a measured row"),
]


@pytest.mark.parametrize(("mutate", "fragment"), BIG)
def test_a_problem_at_line_150000_is_named_there(tmp_path, big_lines, mutate, fragment):
    lines = list(big_lines)
    lines[-1] = mutate(lines[-1])
    assert lines[-1] != big_lines[-1]
    path = tmp_path / "big.csv"
    path.write_text(_file(*lines))
    with pytest.raises(BaselineFileError) as err:
        read_baseline(path)
    assert str(err.value).startswith(f"{path}:150000: ") and fragment in str(err.value), err.value


def test_a_bad_byte_at_line_150000_is_named_there(tmp_path, big_lines):
    path = tmp_path / "big.csv"
    data = _file(*big_lines).encode()
    at = data.rindex(b"note")
    path.write_bytes(data[:at] + b"\xff" + data[at:])
    with pytest.raises(BaselineFileError) as err:
        read_baseline(path)
    assert str(err.value) == (
        f"{path}:150000: not UTF-8 text (byte {at}: invalid start byte); expected a baseline CSV"
    )
    path.write_text(_file(*big_lines))
    assert len(read_baseline(path).rows) == 149_999
