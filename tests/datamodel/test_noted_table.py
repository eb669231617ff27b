"""A table with a note under each row, fitted to the screen (`targets --hw`)."""

from __future__ import annotations

from graphsval_core.datamodel.tables import MIN_COLUMN, format_noted_table, format_table
from graphsval_core.testing import target_field

HEADERS = ["FIELD", "VALUE", "DATASHEET", "FIT"]
ROWS = [
    ["peak fp32", "105 GFLOP/s", "83.1 GFLOP/s", "+- 3%"],
    [
        "B in place bf16",
        "a transposed B beyond the caches, up to 64 rows of A: packs only the share kept",
        "",
        "",
    ],
    ["clock", "2.6 GHz", "", ""],
]
NOTES = [
    "calibrated: host.calibration.json",
    "estimated: oneDNN reads a bf16 linear's weight in place for up to 64 rows of A once it "
    "outgrows the caches",
    "",
]


def test_a_table_that_fits_is_the_plain_table_with_each_note_under_its_row():
    rows = [ROWS[0], ["clock", "2.6 GHz", "2.5 GHz", "+- 1%"]]
    text = format_noted_table(HEADERS, rows, [NOTES[0], ""], width=500)
    plain = format_table(HEADERS, rows).splitlines()
    lines = text.splitlines()
    assert lines[:3] == plain[:3]  # heading, rule, first row: nothing wrapped
    assert lines[3] == "    calibrated: host.calibration.json"
    assert lines[4] == plain[3]  # a row without a note has no line for it
    assert len(lines) == 5
    # a long cell with only empty cells after it spans them: it sets no column's width
    spanned = format_noted_table(HEADERS, ROWS, NOTES, width=500).splitlines()
    assert spanned[4] == "  ".join([ROWS[1][0], ROWS[1][1]])  # to the screen's edge
    assert spanned[1].split("  ")[1:] == ["-" * len("105 GFLOP/s"), "-" * 12, "-" * 5]


def test_a_narrow_screen_wraps_the_long_cells_and_notes_within_the_width():
    text = format_noted_table(HEADERS, ROWS, NOTES, width=70)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 70
    rule = lines[1].split("  ")
    assert len(rule[0]) == len("B in place bf16")  # the names keep their width
    # every column as wide as its own cells: the long value spans the empty ones, wrapped
    assert [len(r) for r in rule[1:]] == [len("105 GFLOP/s"), len("83.1 GFLOP/s"), len("+- 3%")]
    assert 60 < max(len(line) for line in lines[4:6]) <= 70  # to the screen's edge
    # each part of the listing reads back whole
    assert target_field(text, "peak fp32") == (
        ["105 GFLOP/s", "83.1 GFLOP/s", "+- 3%"],
        "calibrated: host.calibration.json",
    )
    cells, note = target_field(text, "B in place bf16")
    assert cells == [ROWS[1][1], "", ""] and note == NOTES[1]
    assert target_field(text, "clock") == (["2.6 GHz", "", ""], "")


def test_a_word_longer_than_its_column_is_never_cut():
    path = "/a/very/long/path/to/a/calibration/file/that/cannot/wrap.calibration.json"
    text = format_noted_table(["FIELD", "VALUE"], [["file", path]], [f"from {path}"], width=40)
    assert path in text.splitlines()[2] and f"    {path}" in text.splitlines()


def test_a_cell_with_empty_cells_after_it_spans_them_and_reads_back_whole():
    long = "a transposed B beyond the caches, up to 64 rows of A: packs only the share kept"
    rows = [["peak fp32", "105 GFLOP/s", "83.1 GFLOP/s", "+- 3%"], ["B in place", long, "", ""]]
    text = format_noted_table(HEADERS, rows, ["", "estimated: oneDNN"], width=60)
    lines = text.splitlines()
    rule = lines[1]
    value_column = rule.split("  ")[1]
    spanned = [line for line in lines[3:] if not line.startswith("    ")]
    # wider than its own column: the span takes the DATASHEET and FIT columns too
    assert max(len(line) for line in spanned) > len(rule.split("  ")[0]) + 2 + len(value_column)
    assert max(len(line) for line in lines) <= 60
    assert target_field(text, "B in place") == ([long, "", ""], "estimated: oneDNN")
    assert target_field(text, "peak fp32")[0] == ["105 GFLOP/s", "83.1 GFLOP/s", "+- 3%"]


def test_no_column_is_narrower_than_its_longest_word_so_columns_stay_in_line():
    rows = [["a100", "nvidia_datacenter", "consistency_only", "fp32, tf32, fp16, bf16, int8"]]
    text = format_noted_table(["TARGET", "FAMILY", "GROUND TRUTH", "DTYPES"], rows, [""], 40)
    rule = text.splitlines()[1].split("  ")
    assert [len(r) for r in rule[1:3]] == [len("nvidia_datacenter"), len("consistency_only")]
    # a name wrapped in its column reads back too
    names = [["first touch bf16 (no product)", "1.3 GB/s"]]
    narrow = format_noted_table(["FIELD", "VALUE"], names, ["calibrated"], 30)
    assert narrow.splitlines()[2].startswith("first touch ") and len(narrow.splitlines()) > 4
    assert target_field(narrow, "first touch bf16 (no product)") == (["1.3 GB/s"], "calibrated")


def test_a_wrapped_column_keeps_its_least_width_and_the_names_their_heading():
    rows = [["n", "a " * 30, "b " * 30, "c " * 30]]
    text = format_noted_table(["F", "V", "D", "X"], rows, [""], 40)
    assert all(len(r) >= MIN_COLUMN for r in text.splitlines()[1].split("  ")[1:])
    heading = "H" * 35
    wide = format_noted_table([heading, "V"], [["x" * 40, "v " * 40]], [""], 80)
    assert len(wide.splitlines()[1].split("  ")[0]) == 40  # the longest name, a word
    fits = format_noted_table([heading, "V"], [["x", "v"]], [""], 80)
    assert len(fits.splitlines()[1].split("  ")[0]) == 35  # its heading, though its cells are short


def test_a_long_name_keeps_one_line_where_the_whole_table_fits():
    name = "l1 (L1 / shared memory per SM) capacity"
    text = format_noted_table(HEADERS, [[name, "256 KiB", "", ""]], ["datasheet"], 200)
    assert text.splitlines()[2].startswith(name + "  ")
    assert target_field(text, name) == (["256 KiB", "", ""], "datasheet")


def test_the_last_column_s_long_word_and_a_name_that_starts_another_read_back_whole():
    path = "/a/long/path/to/a/calibration/file.calibration.json"
    text = format_noted_table(
        ["FIELD", "VALUE"], [["peak fp32", "1"], ["peak", path]], ["", ""], 40
    )
    assert target_field(text, "peak") == ([path], "")
    assert target_field(text, "peak fp32") == (["1"], "")


def test_the_screen_is_never_taken_as_narrower_than_40(monkeypatch):
    from graphsval_core.datamodel.tables import screen_width

    monkeypatch.setenv("COLUMNS", "20")
    assert screen_width() == 40
    monkeypatch.setenv("COLUMNS", "132")
    assert screen_width() == 132


def test_a_name_with_nothing_beside_it_stays_in_its_column():
    name = "a rather long field name that wraps in its column"
    text = format_noted_table(HEADERS, [[name, "", "", ""], ["x", "1", "2", "3"]], ["", ""], 60)
    assert target_field(text, name) == (["", "", ""], "")
    first = len(text.splitlines()[1].split("  ")[0])
    assert all(len(line) <= first for line in text.splitlines()[2:-1])
