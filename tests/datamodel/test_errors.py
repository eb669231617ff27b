"""The one definition of a control character, searched for at once."""

from __future__ import annotations

import sys

from graphsval_core.datamodel.errors import CONTROL, control_character, is_control


def test_the_search_finds_exactly_the_control_characters():
    """:data:`CONTROL` (what a baseline's blocks are searched with) and
    :func:`is_control` (what a message escapes) agree on every code point."""
    apart = [
        f"U+{c:04X}"
        for c in range(sys.maxunicode + 1)
        if (CONTROL.fullmatch(chr(c)) is not None) != is_control(chr(c))
    ]
    assert apart == []


def test_the_first_control_character_is_named():
    assert control_character("plain café") is None
    assert control_character("a\u202eb\x1bc") == "U+202E"
    assert control_character("tab\there") == "U+0009"
