"""The typed checks every input format's validation layer is made of.

Each takes the value read, ``where`` it was read (``"FILE: key.path"``) and
the error to raise, and returns the value typed or raises one line saying
what was expected and what was found: objects with known keys (an unknown
one is named with the closest known one), strings, booleans excluded from
numbers, finite numbers in a range, integers within bounds.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Collection
from typing import Any

from graphsval_core.datamodel.errors import UserInputError

#: The largest count, index or size any file may hold (2^53: every integer
#: up to it is exact as a float, as numpy and JSON readers treat them).
MAX_COUNT = 2**53


def _got(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def kind(value: Any) -> str:
    """The JSON name of ``value``'s type, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def suggest(name: str, known: Collection[str]) -> str:
    """``" (did you mean 'x'?)"`` for the closest of ``known``, else ``""``."""
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def obj(value: Any, where: str, error: type[UserInputError]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise error(f"{where}: expected an object, got {kind(value)}")
    return value


def keys(
    value: dict[str, Any],
    where: str,
    error: type[UserInputError],
    required: Collection[str] = (),
    optional: Collection[str] = (),
) -> None:
    """``value`` holds every ``required`` key and no key outside ``required``
    and ``optional`` (a misspelt key is an error, never ignored)."""
    known = list(dict.fromkeys([*required, *optional]))  # each key once, in order
    for key in value:
        if key not in known:
            near = suggest(key, known)
            # a near name says it; the whole list only where none is near, or short
            listed = "" if near and len(known) > 8 else f"; expected {', '.join(known)}"
            raise error(f"{where}: unknown key {key!r}{near}{listed}")
    for key in required:
        if key not in value:
            raise error(f"{where}: missing key {key!r}")


def string(value: Any, where: str, error: type[UserInputError], empty: bool = False) -> str:
    if not isinstance(value, str):
        raise error(f"{where}: expected a string, got {kind(value)}")
    if not empty and not value.strip():
        raise error(f"{where}: expected a non-empty string")
    return value


def number(
    value: Any,
    where: str,
    error: type[UserInputError],
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
) -> float:
    """A finite number in ``[low, high]`` (``(low, high]`` with ``low_open``)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise error(f"{where}: expected a number, got {kind(value)}")
    number = float(value)
    if not math.isfinite(number):
        raise error(f"{where}: expected a finite number, got {_got(value)}")
    below = low is not None and (number <= low if low_open else number < low)
    if below or (high is not None and number > high):
        lo = "(-inf" if low is None else f"{'(' if low_open else '['}{low:g}"
        span = f"{lo}, {'inf' if high is None else f'{high:g}'}]"
        raise error(f"{where}: expected a number in {span}, got {_got(value)}")
    return number


def integer(
    value: Any,
    where: str,
    error: type[UserInputError],
    low: int = 0,
    high: int = MAX_COUNT,
) -> int:
    """An integer in ``[low, high]`` (a float such as ``3.0`` is not one)."""
    if value is None:  # "got null None" said it twice
        raise error(f"{where}: expected an integer, got null")
    if isinstance(value, bool) or not isinstance(value, int):
        raise error(f"{where}: expected an integer, got {kind(value)} {_got(value)}")
    if not low <= value <= high:
        raise error(f"{where}: expected an integer in [{low}, {high}], got {_got(value)}")
    return value


def schema_version(
    data: dict[str, Any], where: str, error: type[UserInputError], supported: int
) -> None:
    """``schema_version`` absent (older files) or one this graphsval reads."""
    if "schema_version" not in data:
        return
    version = data["schema_version"]
    if isinstance(version, bool) or not isinstance(version, int) or not 1 <= version <= supported:
        span = str(supported) if supported == 1 else f"1..{supported}"
        raise error(
            f"{where}: schema_version {_got(version)} is not one this graphsval reads "
            f"({span}); a newer graphsval wrote it, or it is not a graphsval file"
        )
