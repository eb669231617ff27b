"""A baseline read a block of rows at a time (issue 17 item 5): blocks of
columns, shapes measured twice found across any number of blocks, the
file's bytes never held whole, and the same errors as a whole read."""

from __future__ import annotations

import hashlib
import random
import warnings

import numpy as np
import pytest

from graphsval_core.datamodel.errors import InputWarning
from graphsval_core.files import baseline_keys, baseline_stream
from graphsval_core.files.baseline import BaselineFileError, read_baseline
from graphsval_core.files.baseline_block import RowBlock
from graphsval_core.files.baseline_stream import BaselineStream

HEADER = "hardware,op,shape,dtype,latency_s,energy_j,trial_count,notes"


def _write(tmp_path, lines: list[str], name: str = "b.validation.csv"):
    path = tmp_path / name
    path.write_text("\n".join([HEADER, *lines]) + "\n")
    return path


def test_blocks_of_columns_then_the_hash_and_count(tmp_path, monkeypatch):
    monkeypatch.setattr(baseline_stream, "CHUNK_LINES", 4)
    lines = [f"h,matmul,{i + 1}x2x3,fp32,{i + 1}e-6,,2,n{i % 2}" for i in range(10)]
    lines[4] = "h,vector_add,4096,bf16,,0.0,0,failed"
    path = _write(tmp_path, lines)
    stream = BaselineStream(path)
    blocks = list(stream)
    assert [len(b) for b in blocks] == [4, 4, 2]
    assert stream.rows == 10 and stream.purpose_source == "suffix"
    assert stream.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    both = RowBlock.concat(blocks)
    assert both.line.tolist() == list(range(2, 12))
    assert both.ndims.tolist() == [3, 3, 3, 3, 1, 3, 3, 3, 3, 3]
    assert np.isnan(both.latency_s[4]) and np.isnan(both.energy_j[4])  # 0.0 J: no energy
    assert both.take(np.array([5, 4])).dims.tolist() == [6, 2, 3, 4096]
    matmul = both.take(both.op == "matmul")
    assert matmul.dims_of(3)[:2].tolist() == [[1, 2, 3], [2, 2, 3]]
    rows = both.rows()
    assert rows == list(read_baseline(path).rows)
    assert RowBlock.from_rows(rows, []).rows() == rows


def _expected(lines: list[str]) -> tuple[object, int]:
    """What the rule says of ``lines``: the error of the first row measuring
    a shape again with other values, else how many rows repeat one exactly."""
    first: dict[tuple[str, ...], tuple[int, str]] = {}
    repeats = 0
    for lineno, line in enumerate(lines, start=2):
        hw, op, shape, dtype, *values = line.split(",")
        key = (hw, op, shape, dtype)
        if key not in first:
            first[key] = (lineno, ",".join(values))
        elif first[key][1] == ",".join(values):
            repeats += 1
        else:
            what = f"{hw} {op} {shape} {dtype}"
            return (
                f"b.validation.csv:{lineno}: {what} was measured at line {first[key][0]}",
                repeats,
            )
    return None, repeats


@pytest.mark.parametrize("seed", range(6))
def test_a_shape_measured_again_is_found_however_far_back(tmp_path, monkeypatch, seed):
    monkeypatch.setattr(baseline_stream, "CHUNK_LINES", 5)
    monkeypatch.setattr(baseline_keys, "RUN_ROWS", 8)  # many runs, merged and not
    rng = random.Random(seed)
    lines = [
        f"h,matmul,{i + 1}x{rng.randint(1, 3)}x4,fp32,{rng.randint(1, 3)}e-3,,3," for i in range(60)
    ]
    for _ in range(6):  # exact repeats of rows far back
        lines.insert(rng.randint(20, len(lines)), rng.choice(lines[:15]))
    if seed % 2:  # the same shape, other values
        at = rng.randint(30, len(lines))
        lines.insert(at, lines[rng.randint(0, 10)].replace(",3,", ",4,"))
    error, repeats = _expected(lines)
    assert (error is None) == (seed % 2 == 0) and (repeats or error)
    path = tmp_path / "b.validation.csv"
    path.write_text("\n".join([HEADER, *lines]) + "\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            rows = sum(len(b) for b in BaselineStream(path))
        except BaselineFileError as exc:
            assert error is not None and str(exc).startswith(str(path.parent / error)), exc
            return
    assert error is None and rows == len(lines) - repeats
    (warned,) = [str(w.message) for w in caught if issubclass(w.category, InputWarning)]
    assert f"{repeats} row(s) repeat an earlier row exactly" in warned


def test_a_bad_extra_column_comes_before_a_later_repeat_of_its_block(tmp_path):
    header = HEADER + ",energy_window_s"
    lines = [
        "h,matmul,1x1x4,fp32,1e-3,,3,,",
        "h,matmul,2x1x4,fp32,1e-3,,3,,abc",
        "h,matmul,1x1x4,fp32,2e-3,,3,,",
    ]
    path = tmp_path / "b.validation.csv"
    path.write_text("\n".join([header, *lines]) + "\n")
    with pytest.raises(BaselineFileError, match=r":3: energy_window_s 'abc' is not a number"):
        list(BaselineStream(path))


def test_the_bytes_are_read_in_pieces_and_a_bad_byte_is_named_where_it_is(tmp_path, monkeypatch):
    monkeypatch.setattr(baseline_stream, "READ_BYTES", 7)
    lines = [f"h,matmul,{i + 1}x1x4,fp32,1e-3,,3,d\u00e9j\u00e0 vu" for i in range(20)]
    data = ("\ufeff" + "\n".join([HEADER, *lines]) + "\n").encode()
    path = tmp_path / "b.validation.csv"
    path.write_bytes(data)
    assert [r.notes for r in read_baseline(path).rows] == ["d\u00e9j\u00e0 vu"] * 20
    bad = data[:500] + b"\xff" + data[500:]
    path.write_bytes(bad)
    with pytest.raises(BaselineFileError, match=r"not UTF-8 text \(byte 497: invalid start byte\)"):
        read_baseline(path)  # as a whole read says: the offset after the byte order mark
    with pytest.raises(UnicodeDecodeError) as whole:
        bad.decode("utf-8-sig")
    assert whole.value.start == 497


def test_each_distinct_fingerprint_is_checked_once_and_a_bad_one_named(tmp_path, monkeypatch):
    monkeypatch.setattr(baseline_stream, "CHUNK_LINES", 4)
    header = HEADER + ",fingerprint"
    good = ["{}", ""]  # (a JSON object with a name holds quotes: the csv module reads it)
    lines = [f"h,matmul,{i + 1}x1x4,fp32,1e-3,,3,,{good[i % 2]}" for i in range(12)]
    path = tmp_path / "b.validation.csv"
    path.write_text("\n".join([header, *lines]) + "\n")
    assert [r.extras["fingerprint"] for r in read_baseline(path).rows] == good * 6
    lines[9] = lines[9].rsplit(",", 1)[0] + ",[1]"
    path.write_text("\n".join([header, *lines]) + "\n")
    with pytest.raises(BaselineFileError, match=r"b.validation.csv:11: fingerprint '\[1\]' is not"):
        read_baseline(path)


def test_a_block_ends_early_when_its_lines_are_long(tmp_path, monkeypatch):
    """Memory goes with the text a block holds, not only its line count."""
    lines = [f"h,matmul,{i + 1}x2x3,fp32,{i + 1}e-6,,2,{'n' * 500}" for i in range(40)]
    path = _write(tmp_path, lines)
    whole = RowBlock.concat(list(BaselineStream(path)))
    monkeypatch.setattr(baseline_stream, "CHUNK_CHARS", 2_000)  # about 4 lines a block
    blocks = list(BaselineStream(path))
    assert len(blocks) >= 8 and max(len(b) for b in blocks) <= 4
    assert RowBlock.concat(blocks).line.tolist() == whole.line.tolist()
    quoted = _write(tmp_path, ['h,matmul,1x1x1,fp32,1e-6,,2,"a, b"', *lines], name="q.csv")
    blocks = list(BaselineStream(quoted))  # the csv module's path ends its blocks alike
    assert len(blocks) >= 8 and sum(len(b) for b in blocks) == 41


@pytest.mark.parametrize("quote_at", [0, 30])
def test_a_long_field_reads_the_same_on_every_path(tmp_path, monkeypatch, quote_at):
    """The csv module refuses fields over 131,072 characters by default; the
    column-wise path has no limit: a long note reads wherever the quote is."""
    monkeypatch.setattr(baseline_stream, "CHUNK_LINES", 8)
    lines = [f"h,matmul,{i + 1}x2x3,fp32,{i + 1}e-6,,2," for i in range(40)]
    lines[1] += "n" * 200_000
    lines[quote_at] += '"a, b"'
    rows = RowBlock.concat(list(BaselineStream(_write(tmp_path, lines))))
    assert len(rows) == 40


def test_validate_reports_rows_read_once_in_its_summary_not_twice(tmp_path):
    from click.testing import CliRunner

    from graphsval_core.cli.main import cli

    row = "host_intel_xeon_2c_1t,matmul,64x64x64,fp32,1e-05,,10,"
    path = _write(tmp_path, [row, "host_intel_xeon_2c_1t,matmul,8x8x8,fp32,1e-06,,10,", row])
    result = CliRunner().invoke(cli, ["validate", "--baseline", str(path), "--format", "json"])
    assert result.exit_code in (0, 1), result.output
    import json

    said = "1 row(s) repeat an earlier row exactly"
    assert any(said in w for w in json.loads(result.stdout)["summary"]["warnings"])
    assert said not in result.stderr  # once, in the summary


@pytest.mark.parametrize("chunk", [2, 100])  # the first row in an earlier block, or the same
def test_a_repeat_differing_only_in_its_notes_says_so(tmp_path, monkeypatch, chunk):
    """Two rows of one shape whose values agree but whose notes do not were
    said to differ in "other values"; a note is a value (such rows are two
    measurements), and the line says which it is. An extra column still
    reads as other values."""
    monkeypatch.setattr(baseline_stream, "CHUNK_LINES", chunk)
    path = tmp_path / "b.validation.csv"
    rows = ["h,matmul,1x2x4,fp32,1e-3,,3,first", "h,matmul,2x2x4,fp32,1e-3,,3,", ""]
    for last, said in (
        ("h,matmul,1x2x4,fp32,1e-3,,3,second", "differing only in its notes"),
        ("h,matmul,1x2x4,fp32,2e-3,,3,second", "with other values"),
        ("h,matmul,1x2x4,fp32,2e-3,,3,first", "with other values"),
    ):
        rows[2] = last
        path.write_text("\n".join([HEADER, *rows]) + "\n")
        with pytest.raises(BaselineFileError) as caught:
            list(BaselineStream(path))
        assert str(caught.value) == (
            f"{path}:4: h matmul 1x2x4 fp32 was measured at line 2 already, {said}; keep one "
            "row per shape"
        )
    path.write_text(
        f"{HEADER},extra\n"
        + "\n".join(["h,matmul,1x2x4,fp32,1e-3,,3,,a", "h,matmul,1x2x4,fp32,1e-3,,3,,b"])
        + "\n"
    )
    with pytest.raises(BaselineFileError, match="line 2 already, with other values"):
        list(BaselineStream(path))


@pytest.mark.parametrize("chunk", [2, 100])
def test_notes_agreeing_in_32_bits_of_their_hash_are_still_two_measurements(
    tmp_path, monkeypatch, chunk
):
    """A repeat was judged a copy on its values but its notes and a 32-bit
    hash of its notes: notes whose hashes agreed in those 32 bits made two
    measurements one, read once in silence. Here every text hash keeps only
    its upper 32 bits (a collision in any 32 lower ones): the rows are
    still refused, and said to differ only in their notes."""
    monkeypatch.setattr(baseline_stream, "CHUNK_LINES", chunk)
    text_hash = baseline_keys._text_hash
    monkeypatch.setattr(
        baseline_keys,
        "_text_hash",
        lambda column, seed: text_hash(column, seed) & np.uint64(0xFFFFFFFF00000000),
    )
    rows = ["h,matmul,1x2x4,fp32,1e-3,,3,first", "h,matmul,2x2x4,fp32,1e-3,,3,"]
    path = _write(tmp_path, [*rows, "h,matmul,1x2x4,fp32,1e-3,,3,second"])
    with pytest.raises(BaselineFileError, match="line 2 already, differing only in its notes"):
        list(BaselineStream(path))
    path = _write(tmp_path, [*rows, rows[0]])  # an exact copy is still read once
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InputWarning)
        assert sum(len(b) for b in BaselineStream(path)) == 2
