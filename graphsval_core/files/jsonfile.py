"""Reading a JSON input file strictly: one parser for every JSON format.

Every JSON file graphsval reads (tolerances, sweeps, overlays, calibration
files, model configs, target specs, floors, snapshots) goes through
:func:`parse_json`, which turns each way a file can be broken into one
:class:`~graphsval_core.datamodel.errors.UserInputError` line naming the file:
bytes that are not UTF-8 (decoded as UTF-8 whatever the locale; a leading BOM
is allowed), invalid JSON (with its line and column), ``NaN`` or
``Infinity`` (not JSON; a finite number is expected everywhere), an integer
of more than :data:`MAX_INT_DIGITS` digits, a number that overflows a float
or underflows to 0 (these name the key that holds them,
``tiers[1].capacity_bytes``), nesting deeper than the parser can follow, and
a key given twice in one object with two values, ``1`` and ``1.0`` or
``true`` and ``1`` among them (named by its path too; twice with the same
value: read once, with a warning naming its path), and a string holding an
unpaired surrogate escape (``"\\ud800"``: it parses, then no UTF-8 output
can write it; named by its path).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from typing import Any

from graphsval_core.datamodel.errors import UserInputError, warn_input
from graphsval_core.files.inputs import read_input

#: The longest integer literal read (a dimension of 2^63 has 19 digits).
MAX_INT_DIGITS = 30


class _Invalid(ValueError):
    """A value the strict parser refuses; carries the message."""


class _Refused:
    """A literal the strict parser refuses, kept in place while the file is
    parsed so that its key can be named (:func:`_path_of`)."""

    def __init__(self, message: str) -> None:
        self.message = message


def _constant(name: str) -> Any:
    return _Refused(f"{name} is not a number JSON allows (a finite number is expected)")


def _int(text: str) -> Any:
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        return _Refused(f"an integer of {digits} digits (at most {MAX_INT_DIGITS})")
    return int(text)


def _float(text: str) -> Any:
    if len(text) > 64:
        return _Refused(f"a number literal of {len(text)} characters (at most 64)")
    value = float(text)
    if not math.isfinite(value):
        return _Refused(f"the number {text} overflows (a finite number is expected)")
    if value == 0 and underflows(text):
        return _Refused(f"the number {text} underflows to 0 (no figure is that small)")
    return value


def underflows(text: str) -> bool:
    """Whether number ``text`` is not zero though a float reads it as 0
    (``1e-400``): a digit of its mantissa is not 0."""
    mantissa = text.strip().lower().partition("e")[0]
    return any(c in "123456789" for c in mantissa)


def _noting(parse: Any, refused: list[_Refused]) -> Any:
    """``parse``, noting each literal it refuses in ``refused``."""

    def hook(text: str) -> Any:
        value = parse(text)
        if isinstance(value, _Refused):
            refused.append(value)
        return value

    return hook


def _find(value: Any, wanted: Callable[[Any], bool], at: str = "") -> tuple[str, Any] | None:
    """The key path (``tiers[1].capacity_bytes``) and the first item of
    ``value`` (itself included) that is ``wanted``, in the file's order."""
    if wanted(value):
        return at, value
    items: Any = ()
    if isinstance(value, dict):
        items = ((f"{at}.{key}" if at else str(key), v) for key, v in value.items())
    elif isinstance(value, list):
        items = ((f"{at}[{i}]", v) for i, v in enumerate(value))
    for path, item in items:
        if isinstance(item, dict | list | _Refused):
            found = _find(item, wanted, path)
            if found is not None:
                return found
    return None


def _path_of(value: Any) -> tuple[str, _Refused] | None:
    """The key path and the first refused literal in ``value``; None when
    there is none."""
    return _find(value, lambda item: isinstance(item, _Refused))


def _same(a: Any, b: Any) -> bool:
    """Whether two JSON values are one value, written alike: ``true`` is not
    ``1`` (Python's ``True == 1``), nor ``1`` ``1.0`` (a file reading them
    apart, such as a schema version, would read the first or the second),
    nor ``{"x": true}`` ``{"x": 1}``."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(map(_same, a, b))
    return type(a) is type(b) and not isinstance(a, dict | list) and bool(a == b)


def _path_to(value: Any, target: Any) -> str | None:
    """The key path of object ``target`` (by identity) inside ``value``."""
    found = _find(value, lambda item: item is target)
    return None if found is None else found[0]


def _pairs(refused: list[_Refused], repeated: list[tuple[dict[str, Any], str]]) -> Any:
    """The object hook: a key given twice with two values is refused where it
    stands (so that its path can be named), with one value read once (and
    noted in ``repeated``, to be told by its path). A refused literal inside
    either keeps its own message."""

    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in pairs:
            if key not in out:
                out[key] = value
            elif _path_of(out[key]) is not None:
                continue  # refused already: its first problem is the one told
            elif _path_of(value) is not None:
                out[key] = value  # its own problem, named at its own path
            elif not _same(out[key], value):
                out[key] = _Refused("given twice in one object, with two values")
                refused.append(out[key])
            else:
                repeated.append((out, key))
        return out

    return hook


def _unpaired_surrogate(value: Any, at: str = "") -> str | None:
    """The path (``a.b[2]``, ``(top level)`` for the value itself) of the
    first string of ``value``, a key or a value, that holds an unpaired
    UTF-16 surrogate (a JSON ``\\ud800`` escape alone), which no UTF-8
    output can write; None when there is none."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return at or "(top level)"
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            here = f"{at}.{key}" if at else str(key)
            if _unpaired_surrogate(key) is not None:
                return f"{at}.<a key>" if at else "<a key>"
            found = _unpaired_surrogate(item, here)
            if found is not None:
                return found
    if isinstance(value, list):
        for i, item in enumerate(value):
            found = _unpaired_surrogate(item, f"{at}[{i}]")
            if found is not None:
                return found
    return None


def parse_json(data: bytes | str, where: str, error: type[UserInputError] = UserInputError) -> Any:
    """The JSON value of ``data`` (the bytes or text of file ``where``), read
    strictly (see the module doc); ``error`` is the exception raised."""
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise error(
                f"{where}: not UTF-8 text (byte {exc.start}: {exc.reason}); "
                "expected a UTF-8 JSON file"
            ) from None
    else:
        text = data.removeprefix("\ufeff")
    if not text.strip():
        raise error(f"{where}: empty file (expected a JSON object)")
    refused: list[_Refused] = []
    repeated: list[tuple[dict[str, Any], str]] = []
    try:
        value = json.loads(
            text,
            parse_constant=_noting(_constant, refused),
            parse_int=_noting(_int, refused),
            parse_float=_noting(_float, refused),
            object_pairs_hook=_pairs(refused, repeated),
        )
        if refused:  # name the key of the first one
            found = _path_of(value)
            path, first = found if found is not None else ("", refused[0])
            raise _Invalid(f"{path}: {first.message}" if path else first.message)
        unpaired = _unpaired_surrogate(value)
        if unpaired is not None:  # "\ud800" parses, then no output can print it
            raise _Invalid(f"{unpaired}: holds an unpaired surrogate escape, not text")
        for holder, key in repeated:
            at = _path_to(value, holder)
            named = f"{at}.{key}" if at else key
            warn_input(f"{where}: key {named!r} appears twice in one object; read once")
        return value
    except _Invalid as exc:
        raise error(f"{where}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise error(
            f"{where}: not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from None
    except RecursionError:
        raise error(f"{where}: nested too deeply; not a graphsval file") from None


def read_json(path: str | os.PathLike[str], error: type[UserInputError] = UserInputError) -> Any:
    """The JSON value of the file at ``path`` (see :func:`parse_json`)."""
    return parse_json(read_input(path, error, "a JSON file"), str(path), error)
