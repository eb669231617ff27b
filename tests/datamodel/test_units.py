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


def test_wrap_line_edges():
    from graphsval_core.datamodel.tables import wrap_line

    assert wrap_line("x" * 40, 40) == ["x" * 40]  # a line of exactly the width fits
    assert wrap_line(" " * 50, 40) == [""]  # blank, not a blank wider than the width
    # a hyphenated word is one word; a non-breaking space of the text stays one
    lines = wrap_line("words " * 5 + "memory-bound shapes with\u00a0care " * 3, 30)
    assert all("memory-" not in x.split()[-1] or "memory-bound" in x for x in lines)
    assert "with\u00a0care" in " ".join(lines)
    # a label keeps its figure, a figure its unit: "l2 104 uJ" is never parted
    text = "Energy 5 mJ = compute 2.57 mJ (10%) + l1 25.5 uJ (0%) + l2 104 uJ (1%) + static 2 mJ"
    for width in range(20, 60):
        joined = " | ".join(wrap_line(text, width))
        assert "l2 104 uJ" in joined and "static 2 mJ" in joined, (width, joined)
    # a width below the indent still wraps, never to lines of nothing
    assert all(x.strip() for x in wrap_line("        " + "word " * 10, 4))
    assert wrap_line("alpha beta gamma", 0) == ["alpha", "  beta", "  gamma"]  # no error
