"""Files a user names on the command line: one file named twice (a link to
it) is read once, two files that disagree on a shape leave no lookup
ambiguous, and a validation that checked nothing says why before any
verdict."""

from __future__ import annotations

import csv
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from graphsval_core.cli.main import cli

I7 = Path(__file__).parents[2] / "plugins/graphsval_cpu/graphsval_cpu/baselines"
I7 = I7 / "i7_12700k_matmul.calibration.csv"
HEADER = "hardware,op,shape,dtype,latency_s,energy_j,trial_count,notes\n"


def _invoke(*argv: object):
    return CliRunner().invoke(cli, [str(a) for a in argv])


def test_a_file_named_again_through_a_link_is_read_once(tmp_path):
    link = tmp_path / "again.csv"
    os.symlink(I7, link)
    once = _invoke("validate", "-q", "--purpose", "calibration", "--baseline", I7)
    twice = _invoke(
        "validate", "-q", "--purpose", "calibration", "--baseline", I7, "--baseline", link
    )
    assert once.exit_code == twice.exit_code == 1
    assert once.stdout == twice.stdout  # the same counts: its rows once
    assert f"warning: {link}: the same file as {I7}; read once" in twice.stderr


def test_a_hard_link_a_copy_or_the_same_path_again_is_read_once(tmp_path):
    """No row is counted twice however the same rows are named again."""
    copy, hard = tmp_path / "copy.csv", tmp_path / "hard.csv"
    copy.write_bytes(Path(I7).read_bytes())
    os.link(copy, hard)
    args = ("validate", "-q", "--purpose", "calibration", "--baseline", I7)
    once = _invoke(*args)
    crlf = tmp_path / "crlf.csv"  # a spreadsheet's save: a BOM and CRLF line ends
    crlf.write_bytes(b"\xef\xbb\xbf" + Path(I7).read_bytes().replace(b"\n", b"\r\n"))
    lines = Path(I7).read_text().splitlines(keepends=True)
    sorted_copy = tmp_path / "sorted.csv"  # the same rows in another order
    sorted_copy.write_text(lines[0] + "".join(reversed(lines[1:])))
    for again, says in (
        (copy, f"warning: {copy}: the same rows as {I7}; read once"),
        (crlf, f"warning: {crlf}: the same rows as {I7}; read once"),
        (sorted_copy, f"warning: {sorted_copy}: the same rows as {I7}; read once"),
        (I7, f"warning: {I7}: named again; read once"),
    ):
        twice = _invoke(*args, "--baseline", again)
        assert twice.exit_code == once.exit_code == 1
        assert twice.stdout == once.stdout, again
        assert says in twice.stderr
    linked = _invoke(*args[:-1], copy, "--baseline", hard)
    assert linked.stdout == once.stdout.replace(str(I7), str(copy))
    assert f"warning: {hard}: the same file as {copy}; read once" in linked.stderr
    other = tmp_path / "other.csv"  # one measurement apart: its copied rows read once
    lines = Path(I7).read_text().splitlines(keepends=True)
    lines[1] = lines[1].replace(",fp32,", ",fp32,9", 1)
    other.write_text("".join(lines))
    both = _invoke(*args, "--baseline", other)
    assert (
        f"warning: {other}: {len(lines) - 2} row(s) repeat rows of a file named before it "
        f"exactly ({len(lines) - 2} of {I7}); each read once"
    ) in both.stderr
    records = [int(w.split("/")[1].split()[0]) for w in (once.stdout, both.stdout)]
    assert records[1] == records[0] + 1  # the other measurement of the one shape counts


def test_rows_a_file_named_copies_from_one_named_before_it_count_once(tmp_path):
    """``validate --baseline BIG --baseline SMALL`` where SMALL holds five
    of BIG's rows counted them twice (161/243 for 158/238; from the
    newcomer): now the copies are read once, with one warning naming both
    files, whether SMALL has BIG's columns or a purpose column of its own
    (from the reviewer)."""
    lines = Path(I7).read_text().splitlines(keepends=True)
    small = tmp_path / "small.csv"
    small.write_text("".join(lines[:6]))
    labelled = tmp_path / "labelled.csv"  # the same rows, a purpose column added
    labelled.write_text(
        lines[0].rstrip("\n")
        + ",purpose\n"
        + "".join(x.rstrip("\n") + ",calibration\n" for x in lines[1:6])
    )
    own = tmp_path / "own.csv"  # the same rows, a column of the user's own added
    own.write_text(
        lines[0].rstrip("\n")
        + ",my_comment\n"
        + "".join(x.rstrip("\n") + ",ok\n" for x in lines[1:6])
    )
    args = ("validate", "-q", "--purpose", "calibration", "--baseline", I7)
    once = _invoke(*args)
    for copy in (small, labelled, own):
        twice = _invoke(*args, "--baseline", copy)
        assert twice.stdout == once.stdout, copy
        assert (
            f"warning: {copy}: 5 row(s) repeat rows of a file named before it exactly "
            f"(5 of {I7}); each read once"
        ) in twice.stderr
    alone = _invoke("validate", "-q", "--purpose", "calibration", "--baseline", small)
    assert "/5 records" in alone.stdout


def test_a_lookup_over_files_that_disagree_names_both(tmp_path):
    rows = list(csv.reader(I7.open()))
    header, first = rows[0], list(rows[1])
    first[header.index("latency_s")] = "1.0"
    other = tmp_path / "other.csv"
    with other.open("w", newline="") as handle:
        csv.writer(handle).writerows([header, first])
    shape = rows[1][header.index("shape")]
    args = ("registry", "lookup", "--hw", "i7_12700k", "--op", "matmul", "--dtype", "fp32")
    result = _invoke(*args, "--shape", shape, "--baseline", I7, "--baseline", other)
    assert result.exit_code == 2, result.output
    (line,) = [x for x in result.output.splitlines() if x.startswith("Error:")]
    assert f"{other}:2:" in line and f"{I7}:2 too, with other values" in line
    agree = _invoke(*args, "--shape", shape, "--baseline", I7, "--baseline", I7)
    assert agree.exit_code == 0, agree.output


def test_nothing_validated_says_why_before_any_verdict(tmp_path):
    two_dims = tmp_path / "two_dims.csv"
    two_dims.write_text(HEADER + "i7_12700k,matmul,64x64,fp32,1e-5,,5,\n")
    result = _invoke("validate", "--baseline", two_dims)
    assert result.exit_code == 2, result.output
    assert "PASSED" not in result.output and "records pass" not in result.stdout
    (line,) = [x for x in result.output.splitlines() if x.startswith("Error:")]
    assert f"{two_dims}:2: shape 64x64 has 2 dims; matmul takes 3" in line


def test_a_malformed_shape_beside_good_rows_is_an_input_error_not_an_exclusion(tmp_path):
    """One row with the wrong number of dims among good ones: before, it was
    "excluded" and the verdict could still say PASSED with exit 0."""
    rows = I7.read_text().splitlines()
    header, first = rows[0].split(","), rows[1].split(",")
    first[header.index("shape")] = "64x64"
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join([rows[0], ",".join(first), *rows[2:]]) + "\n")
    result = _invoke("validate", "-q", "--purpose", "calibration", "--baseline", bad)
    assert result.exit_code == 2, result.output
    assert "records pass" not in result.output
    (line,) = [x for x in result.output.splitlines() if x.startswith("Error:")]
    assert f"{bad}:2: shape 64x64 has 2 dims; matmul takes 3" in line
    unmatched = _invoke("validate", "--op", "linear", "--baseline", I7)
    assert unmatched.exit_code == 2 and "PASSED" not in unmatched.output
    (line,) = [x for x in unmatched.output.splitlines() if x.startswith("Error:")]
    assert "selection" in line and "match" in line


def test_a_misspelt_config_key_and_an_empty_sweep_are_named(tmp_path):
    import json

    config = tmp_path / "cfg.json"
    sizes = {"hidden_size": 256, "num_attention_heads": 4, "num_hidden_layers": 2}
    config.write_text(json.dumps({**sizes, "intermediate_sise": 512, "vocab_size": 1000}))
    result = _invoke("sweep", "from-config", config, "--tokens", "4", "--out", tmp_path / "o.json")
    assert result.exit_code == 2, result.output
    assert "missing key 'intermediate_size'" in result.output
    assert "the file has 'intermediate_sise': a misspelling?" in result.output
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps({"op": "matmul", "purpose": "validation", "shapes": []}))
    none = _invoke("predict", "--hw", "i7_12700k", "--sweep", empty)
    assert none.exit_code == 2 and "the sweep holds no entry" in none.output
    assert "--op" not in none.output  # no such flag was given


@pytest.mark.parametrize("command", ["registry lookup", "explain"])
def test_a_malformed_shape_in_a_named_file_stops_a_lookup_too(tmp_path, command):
    """registry lookup and explain read the file given whole, as validate does:
    a row of the wrong dim count is named, whichever shape is looked up."""
    rows = I7.read_text().splitlines()
    header, second = rows[0].split(","), rows[2].split(",")
    good = rows[1].split(",")[header.index("shape")]
    second[header.index("shape")] = "64x64"
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join([rows[0], rows[1], ",".join(second)]) + "\n")
    args = ["--hw", "i7_12700k", "--op", "matmul", "--dtype", "fp32", "--shape", good]
    result = _invoke(*command.split(), *args, "--baseline", bad)
    assert result.exit_code == 2, result.output
    (line,) = [x for x in result.output.splitlines() if x.startswith("Error:")]
    assert f"{bad}:3: shape 64x64 has 2 dims; matmul takes 3" in line


@pytest.mark.parametrize(
    ("op", "shape", "says"),
    [
        ("conv2d", "768", "Invalid value for '--op': unknown op 'conv2d'"),
        (
            "vector_add",
            "768x1",
            "Invalid value for '--shape': shape '768x1' for vector_add (N): expected 1 dim, got 2",
        ),
    ],
)
def test_registry_lookup_names_a_bad_op_or_shape(op, shape, says):
    """It said "was not measured", as if the flags were fine."""
    args = ["--hw", "i7_12700k", "--op", op, "--shape", shape, "--dtype", "fp32"]
    result = _invoke("registry", "lookup", *args)
    assert result.exit_code == 2 and says in result.output, result.output
    assert "was not measured" not in result.output


SHAPE_COMMANDS = [
    ["explain", "--hw", "i7_12700k", "--op", "matmul", "--dtype", "fp32"],
    ["predict", "--hw", "i7_12700k", "--op", "matmul", "--dtype", "fp32"],
    ["registry", "lookup", "--hw", "i7_12700k", "--op", "matmul", "--dtype", "fp32"],
]


@pytest.mark.parametrize("shape", [" 64x64x64", "64x64x64 ", " 64X64x64 ", "64 x 64 x 64"])
@pytest.mark.parametrize("command", SHAPE_COMMANDS, ids=["explain", "predict", "lookup"])
def test_a_shape_flag_is_read_as_every_shape_is(command, shape):
    """``--shape`` is read as a baseline's shape column and a shapes file
    read one: spaces around it or a dim, and X for x, are taken, by every
    command alike, and what is said names the shape as written plainly."""
    plain = _invoke(*command, "--shape", "64x64x64")
    given = _invoke(*command, "--shape", shape)
    assert plain.exit_code == 0 and given.exit_code == 0, given.output
    assert given.output == plain.output


@pytest.mark.parametrize("command", SHAPE_COMMANDS, ids=["explain", "predict", "lookup"])
def test_a_malformed_shape_flag_is_one_line_worded_alike(command):
    result = _invoke(*command, "--shape", " 7x7")
    assert result.exit_code == 2
    (line,) = result.output.splitlines()
    assert line.startswith(
        "Error: Invalid value for '--shape': shape ' 7x7' for matmul (MxKxN): expected 3 dims "
        "joined by 'x', got 2."
    ), line


def test_a_lookup_not_measured_names_the_shape_plainly():
    """It echoed the flag's text: ``matmul  7X7x7  fp32 was not measured``."""
    result = _invoke(*SHAPE_COMMANDS[2], "--shape", " 7X7x7 ")
    assert result.exit_code == 2
    assert result.output == (
        "Error: i7_12700k matmul 7x7x7 fp32 was not measured (looked in the installed and "
        "workspace baselines)\n"
    )


def test_a_measured_row_of_a_consistency_only_target_is_refused(tmp_path):
    """kpu_t64 has no silicon: rows given as measured on it were validated
    and could say PASSED."""
    rows = tmp_path / "kpu.validation.csv"
    rows.write_text(HEADER + "kpu_t64,matmul,64x64x64,int8,5.52e-6,,10,\n")
    result = _invoke("validate", "-q", "--baseline", rows)
    assert result.exit_code == 2, result.output
    assert "PASSED" not in result.output
    (line,) = [x for x in result.output.splitlines() if x.startswith("Error:")]
    assert f"{rows}:2: kpu_t64 is a consistency-only target (no silicon to measure)" in line
    args = ("--hw", "kpu_t64", "--op", "matmul", "--shape", "64x64x64", "--dtype", "int8")
    for command in (("registry", "lookup"), ("explain",)):  # nor shown beside a prediction
        looked = _invoke(*command, *args, "--baseline", rows)
        assert looked.exit_code == 2 and "is a consistency-only target" in looked.output
    fitted = _invoke(
        "calibrate", "--hw", "kpu_t64", "--baseline", rows, "--out", tmp_path / "k.json"
    )
    assert fitted.exit_code == 2 and "has no measured rows to calibrate on" in fitted.output
    assert not (tmp_path / "k.json").exists()


def test_rows_of_another_purpose_left_out_of_a_file_named_are_said(tmp_path):
    """A calibration row inside a validation file was dropped with nothing
    said, not even under -v (from the newcomer): one warning counts it."""
    rows = list(csv.reader(I7.open()))
    header = [*rows[0], "purpose"]
    mixed = tmp_path / "m.csv"
    with mixed.open("w", newline="") as handle:
        out = csv.writer(handle)
        out.writerow(header)
        for i, row in enumerate(rows[1:6]):
            out.writerow([*row, "calibration" if i == 1 else "validation"])
    result = _invoke("validate", "-q", "--baseline", mixed)
    assert "/4 records" in result.stdout
    assert (
        f"warning: {mixed}: 1 row(s) of another purpose (1 calibration: its purpose column) "
        "left out; --purpose calibration validates them"
    ) in result.stderr
    # a file all of whose rows are of another purpose, named beside one that counts
    both = _invoke("validate", "-q", "--baseline", mixed, "--baseline", I7)
    assert "/4 records" in both.stdout
    assert (
        f"warning: {I7}: 18 row(s) of another purpose (18 calibration: its file name's suffix) "
        "left out; --purpose calibration validates them"
    ) in both.stderr
