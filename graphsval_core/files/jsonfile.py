"""Reading a JSON input file strictly: one parser for every JSON format.

Every JSON file graphsval reads (tolerances, sweeps, overlays, calibration
files, model configs, target specs, floors, snapshots) goes through
:func:`parse_json`, which turns each way a file can be broken into one
:class:`~graphsval_core.datamodel.errors.UserInputError` line naming the file:
bytes that are not UTF-8 (decoded as UTF-8 whatever the locale; a leading BOM
is allowed), invalid JSON (with its line and column), ``NaN`` or
``Infinity`` (not JSON; a finite number is expected everywhere), an integer
of more than :data:`MAX_INT_DIGITS` digits, a number that overflows a float,
nesting deeper than the parser can follow, and a key given twice in one object
(twice with the same value: counted once, with a warning).
"""

from __future__ import annotations

import json
import math
import os
from typing import Any

from graphsval_core.datamodel.errors import UserInputError, warn_input
from graphsval_core.files.inputs import read_input

#: The longest integer literal read (a dimension of 2^63 has 19 digits).
MAX_INT_DIGITS = 30


class _Invalid(ValueError):
    """A value the strict parser refuses; carries the message."""


def _constant(name: str) -> Any:
    raise _Invalid(f"{name} is not a number JSON allows (a finite number is expected)")


def _int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise _Invalid(f"an integer of {digits} digits (at most {MAX_INT_DIGITS})")
    return int(text)


def _float(text: str) -> float:
    if len(text) > 64:
        raise _Invalid(f"a number literal of {len(text)} characters (at most 64)")
    value = float(text)
    if not math.isfinite(value):
        raise _Invalid(f"the number {text} overflows (a finite number is expected)")
    return value


def _pairs(where: str) -> Any:
    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in pairs:
            if key in out:
                if out[key] != value:
                    raise _Invalid(f"key {key!r} appears twice in one object, with two values")
                warn_input(f"{where}: key {key!r} appears twice in one object; read once")
            out[key] = value
        return out

    return hook


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
    try:
        return json.loads(
            text,
            parse_constant=_constant,
            parse_int=_int,
            parse_float=_float,
            object_pairs_hook=_pairs(where),
        )
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
