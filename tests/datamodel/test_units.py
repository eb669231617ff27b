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
