"""The baseline CSV's column-wise reader (issue 17 item 5) reads a file as
the line-by-line rules do: the same rows, the same duplicate warning, the
same error naming the same line, whichever block of lines a bad row or a
repeated shape falls in."""

from __future__ import annotations

import warnings

import pytest

from graphsval_core.datamodel.errors import InputWarning
from graphsval_core.files import baseline_stream as stream_module
from graphsval_core.files.baseline import BaselineFileError, read_baseline

HEADER = "hardware,op,shape,dtype,latency_s,energy_j,trial_count,notes"
WIDE = HEADER + ",purpose,energy_window_s,fingerprint"
HOST = "host_intel_xeon_2c_1t"


def _rows(n: int, wide: bool = False) -> list[str]:
    extra = ",validation,0.5," if wide else ""
    return [
        f"{HOST},matmul,{i + 1}x{i % 7 + 1}x8,fp32,{(i + 1) * 1e-6:.6g},"
        f"{i % 3 * 0.25},{i % 5 + 1},n{extra}"
        for i in range(n)
    ]


def _read(
    text: str, chunk: int, columnwise: bool, monkeypatch, read_bytes: int = 4 * 2**20
) -> tuple[object, list[str]]:
    monkeypatch.setattr(stream_module, "CHUNK_LINES", chunk)
    monkeypatch.setattr(stream_module, "READ_BYTES", read_bytes)
    if not columnwise:
        monkeypatch.setattr(stream_module, "plain_block", lambda *args: None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out: object = read_baseline("b.csv", text)
        except BaselineFileError as exc:
            out = f"error: {exc}"
    monkeypatch.undo()
    return out, [str(w.message) for w in caught if issubclass(w.category, InputWarning)]


def _same(text: str, monkeypatch, chunks=(3, 4, 7, 65_536)) -> tuple[object, list[str]]:
    """What every block size and both readers make of ``text`` (all the same)."""
    reference = _read(text, 65_536, False, monkeypatch)
    for chunk in chunks:
        assert _read(text, chunk, True, monkeypatch) == reference, chunk
    # the file's bytes in pieces of any size, cut inside a line or a character
    for size in (1, 5, 64):
        assert _read(text, 4, True, monkeypatch, read_bytes=size) == reference, size
    return reference


BAD = [
    (5, lambda r: r.replace("fp32", "fp99")),
    (6, lambda r: r.replace("matmul", "")),
    (4, lambda r: r.replace("x8,", "x0,")),
    (9, lambda r: r.split(",", 1)[0] + ",matmul,1x1,fp32,1e-3,,1,"),
    (7, lambda r: r.replace(",n", ",n,extra")),
    (8, lambda r: r.replace(",fp32,", ",fp32,0,")),
    (8, lambda r: r.replace(",fp32,", ",fp32,nan,")),
    (3, lambda r: r.replace(",fp32,", ",fp32,1e99,")),
    (5, lambda r: r.replace(",n", ",x").rsplit(",", 2)[0] + ",-1,n"),
    (6, lambda r: r.replace("x8,", "x8 ,")),
    (7, lambda r: r.replace(f"{HOST}", f" {HOST}")),
    (7, lambda r: r + "\r"),
    (7, lambda r: r.replace(",n", ',"n"')),
]


READ = {BAD[3][1], BAD[9][1], BAD[10][1], BAD[11][1], BAD[12][1]}


@pytest.mark.parametrize(("at", "mutate"), BAD)
def test_a_bad_row_in_any_block_reads_as_line_by_line(monkeypatch, at, mutate):
    rows = _rows(12)
    rows[at] = mutate(rows[at])
    out, _ = _same("\n".join([HEADER, *rows]) + "\n", monkeypatch)
    # a quoted note, a CR, padded names and a shape of another op's dims are read
    assert isinstance(out, str) == (mutate not in READ), out


def test_duplicates_across_blocks(monkeypatch):
    rows = _rows(12)
    rows[9] = rows[1]  # an exact repeat, in another block
    rows.append(rows[2])
    out, warned = _same("\n".join([HEADER, *rows]) + "\n", monkeypatch)
    assert not isinstance(out, str) and len(out.rows) == 11
    assert warned == [
        "b.csv: 2 row(s) repeat an earlier row exactly (same target, op, shape, dtype, purpose "
        "and values: line 11 repeats line 3, line 14 repeats line 4); each is read once"
    ]
    rows[9] = rows[1].replace(",n", ",other note")  # the same shape, other values
    out, _ = _same("\n".join([HEADER, *rows]) + "\n", monkeypatch)
    assert out.startswith("error: b.csv:11: ") and "measured at line 3 already" in out


def test_blank_lines_failed_rows_and_extras(monkeypatch):
    rows = _rows(10, wide=True)
    rows[2] = ""
    rows[4] = ",,,,,,,,,,"
    # a failed shape, as the capture writes it: no latency, no energy, 0 trials
    head, tail = rows[5].split(",fp32,")
    rows[5] = f"{head},fp32,,,0,{tail.split(',', 3)[3]}"
    text = "\n".join([WIDE, *rows]) + "\n"
    out, _ = _same(text, monkeypatch)
    assert not isinstance(out, str)
    assert [(r.failed, r.trial_count) for r in out.rows][3] == (True, 0)
    counted = text.replace(",fp32,,,0,", ",fp32,,,1,", 1)  # trials beside no latency
    out, _ = _same(counted, monkeypatch)
    assert isinstance(out, str) and out.startswith("error: b.csv:7: trial_count '1' on a failed")
    bad = text.replace(",0.5,\n", ",-0.5,\n", 1)
    out, _ = _same(bad, monkeypatch)
    assert isinstance(out, str) and "energy_window_s" in out
    bad = text.replace(",validation,", ",training,", 1)
    out, _ = _same(bad, monkeypatch)
    assert isinstance(out, str) and "purpose" in out


def test_shipped_style_file_reads_the_same(monkeypatch):
    text = "\n".join([HEADER, *_rows(300)])  # no final newline
    out, _ = _same(text, monkeypatch, chunks=(1, 2, 64, 65_536))
    assert not isinstance(out, str) and len(out.rows) == 300
    assert out.rows[-1].line == 301
