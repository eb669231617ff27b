"""Sizes as people read them: binary prefixes, three significant digits."""

from __future__ import annotations

import pytest

from graphsval_core.datamodel.units import fmt_bytes


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (49152, "48 KiB"),
        (999 * 1024, "999 KiB"),
        # 1000-1023 of a prefix read as the next one: explain printed "1e+03 KiB"
        (1000 * 1024, "0.977 MiB"),
        (1023 * 1024 * 1024, "0.999 GiB"),
        (512, "512 B"),
        (1005, "0.981 KiB"),
    ],
)
def test_fmt_bytes_never_prints_an_exponent(value, text):
    assert fmt_bytes(value) == text
    assert "e+" not in fmt_bytes(value)


def test_wrap_line_hangs_keeps_numbers_with_units_and_never_cuts_a_path():
    from graphsval_core.datamodel.tables import wrap_line

    line = "  it streams 982 KiB from l2 at 111 GB/s effective, then " + "a/" * 30 + "file.csv:12"
    lines = wrap_line(line, 40)
    assert lines[0].startswith("  it streams") and all(x.startswith("    ") for x in lines[1:])
    assert " ".join(" ".join(lines).split()) == " ".join(line.split())
    assert any("a/a/" in x and len(x) > 40 for x in lines)  # the path is one word
    for x in lines:
        assert not x.split()[-1].isdigit(), lines
    assert wrap_line("short", 40) == ["short"]
    assert wrap_line("a table\nrow " * 20, 10) == ["a table\nrow " * 20]
