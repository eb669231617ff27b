"""The rules one baseline row is read by: columns, limits, and every check
of a field, with the message naming the file and line.

:mod:`graphsval_core.files.baseline_stream` reads a whole block of plain rows
column-wise and falls back on these rules, row by row, for a block holding
anything else; both read a row the same way.
"""

from __future__ import annotations

import difflib
import json
import math
import re
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from sys import intern
from typing import Any

from attrs import field, frozen

from graphsval_core.datamodel.dtypes import KNOWN_DTYPES
from graphsval_core.datamodel.errors import CONTROL, UserInputError, clip, control_character
from graphsval_core.datamodel.op import ShapeError, split_shape
from graphsval_core.files.jsonfile import underflows

V4_COLUMNS: tuple[str, ...] = (
    "hardware",
    "op",
    "shape",
    "dtype",
    "latency_s",
    "energy_j",
    "trial_count",
    "notes",
)
PURPOSES: tuple[str, ...] = ("calibration", "validation")

#: The largest latency (s) and energy (J) a row may hold: a day, a gigajoule.
MAX_LATENCY_S = 86_400.0
MAX_ENERGY_J = 1e9
#: The smallest positive latency (s) or energy (J) a row may hold: a
#: picosecond, a picojoule (a denormal such as 5e-324 is no measurement, and
#: a ratio over it overflows).
MIN_POSITIVE = 1e-12
#: The largest trial count a row may hold.
MAX_TRIALS = 2**53
#: Extra columns holding a number (empty: none), with their largest value.
NUMERIC_EXTRAS: dict[str, float] = {
    "first_latency_s": MAX_LATENCY_S,
    "energy_window_s": MAX_LATENCY_S * 1000,
}
#: The extra columns graphsval knows, in the order ``graphsval capture``
#: writes them (``measure.capture_file.EXTRA_COLUMNS`` is this list). Any
#: other name is a column of the developer's own, unless it is a near miss
#: of one of these.
KNOWN_EXTRAS: tuple[str, ...] = (
    "schema_version",
    "purpose",
    "suspect",
    "spread_ci_rel",
    "samples",
    "block_reps",
    "warmup_calls",
    "stopped_by",
    "p10_s",
    "p90_s",
    "rounds",
    "round_spread_rel",
    "round_latencies_s",
    "remeasured",
    "first_latency_s",
    "energy_source",
    "energy_window_s",
    "verdict",
    "mean_rel_l1",
    "max_abs",
    "max_rel",
    "rtol",
    "atol",
    "check_scope",
    "output_alloc",
    "launch_in_timing",
    "threads",
    "device",
    "torch_version",
    "numerics",
    "load_avg",
    "busy",
    "waited_s",
    "captured_at",
    "fingerprint",
    "details",
)
#: The baseline schema versions this graphsval reads (the capture's is the last).
SCHEMA_VERSIONS: tuple[str, ...] = ("1", "2")
#: How alike a column's name must be to a known one to be taken for a misspelling.
NEAR_MISS = 0.8


class BaselineFileError(UserInputError):
    """A baseline file cannot be read; the message names the file and line."""


@frozen
class BaselineRow:
    """One measured (or failed) shape."""

    line: int
    hardware: str
    op: str
    shape: str
    dims: tuple[int, ...]
    dtype: str
    latency_s: float | None
    energy_j: float | None
    trial_count: int
    notes: str
    purpose: str | None
    extras: dict[str, str] = field(factory=dict)

    @property
    def failed(self) -> bool:
        return self.latency_s is None


def row_identity(row: BaselineRow) -> tuple[Any, ...]:
    """What makes two rows one measurement: every value but the line it is
    on (a copy of a file, whatever its line ends, holds the same ones)."""
    return (
        row.hardware,
        row.op,
        row.shape,
        row.dtype,
        row.latency_s,
        row.energy_j,
        row.trial_count,
        row.notes,
        row.purpose,
        tuple(sorted(row.extras.items())),
    )


def measurement(row: BaselineRow) -> tuple[Any, ...]:
    """What makes two rows of two files one measurement (a copy of it): its
    target, op, shape, dtype, latency, energy, trials and notes, whatever
    purpose its file gives it and whatever other columns the file has (a
    column of the user's own added to a copy): two measurements agree to
    every digit of their latency by chance far less often than a disk errs."""
    return row_identity(row)[:8]


def purpose_from_name(path: str | Path) -> str | None:
    name = Path(path).name
    for purpose in PURPOSES:
        if name.endswith(f".{purpose}.csv"):
            return purpose
    return None


def plain_float(value: str) -> float:
    """``value`` as a float, written as a number is: ASCII, no ``_`` (Python's
    ``float`` also takes ``1_0e-3`` and other scripts' digits); else ValueError.
    A number too small for a float (``1e-400``) reads as the smallest one of its
    sign, not 0, so that a range check refuses it as too small."""
    if not value.isascii() or "_" in value:
        raise ValueError(value)
    number = float(value)
    if number == 0 and underflows(value):
        return math.copysign(math.ulp(0.0), number)
    return number


def parse_number(
    value: str, where: str, column: str, high: float, unit: str = "s", zero_ok: bool = True
) -> float | None:
    """A number field in ``[0, high]``, 0 or at least :data:`MIN_POSITIVE`
    (empty: None); ``unit``: ``s`` or ``J``, for the message. ``zero_ok``
    False: a column whose 0 the caller refuses (``latency_s``: a failed
    shape's is empty), so a number out of range is told the range
    ``[MIN_POSITIVE, high]``, not ``[0, high]``."""
    value = value.strip()
    if value == "":
        return None
    try:
        number = plain_float(value)
    except ValueError:
        raise BaselineFileError(
            f"{where}: {column} {clip(value)} is not a number (expected seconds or joules, "
            "or empty)"
        ) from None
    if not 0 <= number <= high:  # NaN fails this too
        if zero_ok:
            expected = f"a finite number in [0, {high:g}]"
        else:  # an empty cell, not 0, is a failed shape's (parse_row)
            expected = (
                f"a finite number in [{MIN_POSITIVE:g}, {high:g}], or empty for a failed shape"
            )
        raise BaselineFileError(f"{where}: {column} {clip(value)} must be {expected}")
    if 0 < number < MIN_POSITIVE:
        tiny = "a picosecond" if unit == "s" else "a picojoule"
        raise BaselineFileError(
            f"{where}: {column} {clip(value)} is below {tiny} ({MIN_POSITIVE:g} {unit}): "
            "not a measurement"
        )
    return number


def parse_dims(shape: str) -> tuple[int, ...] | None:
    """The dims of ``shape`` (``"AxBxC"``), or None when it is not one."""
    try:
        return split_shape(shape)
    except ShapeError:
        return None


def check_header(path: str, header: list[str]) -> list[str]:
    """The header's names, stripped: the V4 columns first, no name twice, no
    extra column a near miss of a known one (:func:`near_miss`)."""
    header = [h.strip() for h in header]
    if len(header) <= 1 and not "".join(header):
        raise BaselineFileError(
            f"{path}:1: the first line is blank; expected the header {','.join(V4_COLUMNS)},..."
        )
    if tuple(header[: len(V4_COLUMNS)]) != V4_COLUMNS:
        # name the first column that differs (a long header was cut with no mark of it)
        i = next(i for i, want in enumerate(V4_COLUMNS) if i >= len(header) or header[i] != want)
        found = f"is {clip(header[i])}" if i < len(header) else "is missing (the header ends)"
        raise BaselineFileError(
            f"{path}:1: header must start with {','.join(V4_COLUMNS)}; column {i + 1} {found}, "
            f"expected {V4_COLUMNS[i]!r}"
        )
    for i, name in enumerate(header):
        if header.index(name) != i:
            raise BaselineFileError(
                f"{path}:1: column {name!r} appears twice (columns {header.index(name) + 1} "
                f"and {i + 1})"
            )
    for i, name in enumerate(header[len(V4_COLUMNS) :], start=len(V4_COLUMNS) + 1):
        known = near_miss(name)
        if known:
            raise BaselineFileError(
                f"{path}:1: column {i} {clip(name)} is no column graphsval knows; did you mean "
                f"{known!r}? (a column of your own needs a name further from graphsval's)"
            )
    return header


def near_miss(name: str) -> str | None:
    """The known column ``name`` is a misspelling of (None: it is a known
    extra, or a name of the developer's own). An extra column: the closest
    known extra at least :data:`NEAR_MISS` alike in any case, unless the two
    differ only in digits (``p50_s`` is a percentile of its own, not
    ``p10_s`` misspelt). A leading column (``latency_s`` ...): the same name
    in another case (``LATENCY_S``), or one letter dropped, changed or two
    swapped (``latncy_s``); a longer name is the developer's own
    (``latency_ms``, ``latency_std_s``)."""
    if name in KNOWN_EXTRAS or name in V4_COLUMNS:
        return None
    folded = name.lower()
    for column in V4_COLUMNS:
        if folded == column or _one_slip(folded, column):
            return column
    extras = {k.lower(): k for k in KNOWN_EXTRAS}
    close = difflib.get_close_matches(folded, list(extras), n=1, cutoff=NEAR_MISS)
    if not close:
        return None
    if close[0] != folded and _DIGITS.sub("", close[0]) == _DIGITS.sub("", folded):
        return None  # only digits apart: a column of its own
    return extras[close[0]]


def _one_slip(name: str, known: str) -> bool:
    """Whether ``name`` is ``known`` with one letter dropped, one changed or
    two neighbours swapped (never one added: a longer name is a new one)."""
    if len(name) == len(known) - 1:
        return any(known[:i] + known[i + 1 :] == name for i in range(len(known)))
    if len(name) != len(known):
        return False
    apart = [i for i, (a, b) in enumerate(zip(name, known, strict=True)) if a != b]
    if len(apart) == 1:
        return True
    i = apart[0] if len(apart) == 2 else -1
    return apart == [i, i + 1] and name[i] == known[i + 1] and name[i + 1] == known[i]


_DIGITS = re.compile(r"[0-9]")


def _choice(*allowed: str) -> Callable[[str], bool]:
    return frozenset(allowed).__contains__


def _integer(low: int) -> Callable[[str], bool]:
    def test(value: str) -> bool:
        text = value.strip()
        return text.isascii() and text.isdigit() and len(text) <= 16 and int(text) >= low

    return test


def _number(
    high: float = math.inf, finite: bool = True, tiny: bool = True
) -> Callable[[str], bool]:
    """A test of a number >= 0 and <= ``high`` (``finite`` False: or inf or nan;
    ``tiny`` False: 0 or at least :data:`MIN_POSITIVE`, as a latency is)."""

    def test(value: str) -> bool:
        try:
            number = plain_float(value.strip())
        except ValueError:
            return False
        if not math.isfinite(number):
            return not finite and (math.isnan(number) or number > 0)
        return 0 <= number <= high and (tiny or not 0 < number < MIN_POSITIVE)

    return test


def _matches(pattern: str) -> Callable[[str], bool]:
    whole = re.compile(pattern)
    return lambda value: whole.fullmatch(value.strip()) is not None


def _json_object(value: str) -> bool:
    """A JSON object, as strictly as every JSON file is read: no NaN or
    Infinity, no key given twice."""
    try:
        data = json.loads(value, **STRICT_JSON)
    except (ValueError, RecursionError):
        return False
    return isinstance(data, dict)


def _finite_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number) or (number == 0 and underflows(text)):
        raise ValueError(f"{text} overflows or underflows a float")
    return number


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > 19:  # beyond a 64-bit integer: no value a capture writes
        raise ValueError(f"{text[:30]} has more than 19 digits")
    return int(text)


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError("a key given twice")
    return dict(pairs)


def _timestamp(value: str) -> bool:
    try:
        datetime.fromisoformat(value.strip())
    except ValueError:
        return False
    return True


@frozen
class ValueRule:
    """What a known extra column may hold besides nothing (an empty or blank
    cell: not recorded, e.g. a failed shape's): a ``test`` of a value, and
    what it ``expects`` in words. A column of numbers says so (the reader
    then checks a block's column at once): their largest value ``high``,
    whether inf and nan may stand (``finite`` False), whether a cell
    holds several, separated by spaces (``spaced``), and whether a positive
    value below :data:`MIN_POSITIVE` may stand (``tiny`` False: a time is
    no measurement below a picosecond)."""

    test: Callable[[str], bool]
    expects: str
    high: float | None = None
    finite: bool = True
    spaced: bool = False
    tiny: bool = True


def _numbers(
    expects: str,
    high: float = math.inf,
    finite: bool = True,
    spaced: bool = False,
    tiny: bool = True,
) -> ValueRule:
    one = _number(high, finite, tiny)

    def several(value: str) -> bool:  # (an empty one between two spaces: a round unmeasured)
        return all(one(v) for v in value.split(" ") if v)

    return ValueRule(several if spaced else one, expects, high, finite, spaced, tiny)


_SECONDS = f"a number of seconds, 0 or in [{MIN_POSITIVE:g}, {MAX_LATENCY_S:g}]"

#: What each known extra column other than ``purpose``, ``fingerprint`` and
#: the :data:`NUMERIC_EXTRAS` may hold (what the capture writes). The others
#: (``suspect``, parsed where it is read, and text: the energy source, the
#: device, ...) hold any text.
EXTRA_VALUES: dict[str, ValueRule] = {
    "schema_version": ValueRule(
        _choice(*SCHEMA_VERSIONS),
        f"{' or '.join(SCHEMA_VERSIONS)} (the baseline schema versions this graphsval reads)",
    ),
    "verdict": ValueRule(_choice("pass", "FAIL"), "pass or FAIL (the correctness check's verdict)"),
    "stopped_by": ValueRule(_choice("ci", "budget", "max_samples"), "ci, budget or max_samples"),
    "threads": ValueRule(_integer(1), "a positive integer"),
    "samples": ValueRule(_integer(1), "a positive integer"),
    "block_reps": ValueRule(_integer(1), "a positive integer"),
    "rounds": ValueRule(_integer(1), "a positive integer"),
    "warmup_calls": ValueRule(_integer(0), "an integer >= 0"),
    "remeasured": ValueRule(_integer(0), "an integer >= 0"),
    "spread_ci_rel": _numbers("a finite number >= 0"),
    "round_spread_rel": _numbers("a finite number >= 0"),
    "load_avg": _numbers("a finite number >= 0"),
    "waited_s": _numbers("a finite number >= 0"),
    "rtol": _numbers("a finite number >= 0"),
    "atol": _numbers("a finite number >= 0"),
    "p10_s": _numbers(_SECONDS, MAX_LATENCY_S, tiny=False),
    "p90_s": _numbers(_SECONDS, MAX_LATENCY_S, tiny=False),
    "mean_rel_l1": _numbers("a number >= 0, inf or nan", finite=False),
    "max_abs": _numbers("a number >= 0, inf or nan", finite=False),
    "max_rel": _numbers("a number >= 0, inf or nan", finite=False),
    "round_latencies_s": _numbers(
        f"numbers of seconds, each 0 or in [{MIN_POSITIVE:g}, {MAX_LATENCY_S:g}], "
        "separated by spaces",
        MAX_LATENCY_S,
        spaced=True,
        tiny=False,
    ),
    "captured_at": ValueRule(_timestamp, "an ISO 8601 time such as 2026-12-01T06:55:24Z"),
    "details": ValueRule(_json_object, "a JSON object"),
    "busy": ValueRule(
        _matches(r"no|yes|yes: .+|waited out: .+"),
        "no, yes, or 'yes: ' or 'waited out: ' and what the capture saw",
    ),
    "output_alloc": ValueRule(
        _choice("fresh", "preallocated"), "fresh or preallocated (how the output was allocated)"
    ),
    "check_scope": ValueRule(
        _matches(r"all elements|sampled [0-9]+ elements"), "all elements or 'sampled N elements'"
    ),
}


def extra_value_error(where: str, name: str, value: str) -> BaselineFileError | None:
    """The error of value ``value`` of known extra column ``name`` (None: it may hold it)."""
    rule = EXTRA_VALUES.get(name)
    if rule is None or not value.strip() or rule.test(value):
        return None
    return BaselineFileError(f"{where}: {name} {clip(value)} must be {rule.expects}, or empty")


def extra_checks(names: list[str]) -> Any:
    """A check of the extra columns graphsval reads or knows the values of,
    for a file of extra columns ``names`` (None: it has none of them)."""
    numeric = [(n, high) for n, high in NUMERIC_EXTRAS.items() if n in names]
    fingerprint = "fingerprint" in names
    valued = [n for n in EXTRA_VALUES if n in names]
    if not numeric and not fingerprint and not valued:
        return None
    good: set[str] = set()

    def check(where: str, extras: dict[str, str]) -> None:
        for name, high in numeric:
            if extras[name].strip():
                parse_number(extras[name], where, name, high)
        for name in valued:
            error = extra_value_error(where, name, extras[name])
            if error is not None:
                raise error
        _agree(where, extras)
        text = extras["fingerprint"].strip() if fingerprint else ""
        if text and text not in good:
            try:
                data = json.loads(text, **STRICT_JSON)
            except (ValueError, RecursionError):
                data = None
            if not isinstance(data, dict) or not all(
                isinstance(v, str | int | float) for v in data.values()
            ):
                raise BaselineFileError(
                    f"{where}: fingerprint {clip(text)} is not a JSON object of names to values"
                )
            # a name or value written as an escape (\u001b) is printed in a warning
            words = [*data, *(v for v in data.values() if isinstance(v, str))]
            bad = next(filter(None, map(control_character, words)), None)
            if bad is not None:
                raise BaselineFileError(
                    f"{where}: fingerprint {clip(text)} holds a control character ({bad}) in a "
                    "name or value: give one line of text"
                )
            good.add(text)

    return check


def _no_constant(name: str) -> Any:
    raise ValueError(name)


def _agree(where: str, extras: dict[str, str]) -> None:
    """Columns the capture writes together agree: p10 at most p90, and as
    many round latencies as rounds (an unmeasured round an empty place)."""
    p10, p90 = extras.get("p10_s", "").strip(), extras.get("p90_s", "").strip()
    if p10 and p90 and plain_float(p10) > plain_float(p90):
        raise BaselineFileError(f"{where}: p10_s {clip(p10)} is above p90_s {clip(p90)}")
    rounds, each = extras.get("rounds", "").strip(), extras.get("round_latencies_s", "")
    if rounds and each.strip() and int(rounds) != len(each.split(" ")):
        raise BaselineFileError(
            f"{where}: round_latencies_s holds {len(each.split(' '))} value(s) for "
            f"rounds {rounds}; give one per round (an unmeasured one empty)"
        )


def blank(raw: list[str]) -> bool:
    """Whether a line's fields hold nothing (a blank line, or only commas)."""
    return not raw or (not raw[0].strip() and not "".join(raw).strip())


def parse_row(
    path: str,
    lineno: int,
    raw: list[str],
    width: int,
    extras_names: list[str],
    has_purpose: bool,
    file_purpose: str | None,
) -> BaselineRow:
    """One row; its first fields are the V4 columns, in their order.
    ``file_purpose``: the purpose the file's name says (None: none), that of
    a row whose ``purpose`` cell is empty or absent."""
    if len(raw) != width:
        raise BaselineFileError(f"{path}:{lineno}: {len(raw)} fields, the header has {width}")
    if CONTROL.search(",".join(raw)) is not None:
        raise _control_error(f"{path}:{lineno}", raw, extras_names)
    # names repeat on every row: one string each (a large file's memory)
    hardware, op, dtype = intern(raw[0].strip()), intern(raw[1].strip()), intern(raw[3].strip())
    shape = raw[2].strip()
    if not (hardware and op and shape and dtype):
        empty = V4_COLUMNS[[hardware, op, shape, dtype].index("")]
        raise BaselineFileError(f"{path}:{lineno}: empty {empty}")
    where = f"{path}:{lineno}"
    try:
        dims = split_shape(shape)
    except ShapeError as exc:
        raise BaselineFileError(f"{where}: {exc}") from None
    if dtype not in KNOWN_DTYPES:
        raise BaselineFileError(
            f"{where}: dtype {clip(dtype)} is not a known dtype ({', '.join(KNOWN_DTYPES)})"
        )
    latency = parse_number(raw[4], where, "latency_s", MAX_LATENCY_S, zero_ok=False)
    if latency == 0.0:
        raise BaselineFileError(f"{where}: latency_s is 0 (leave it empty for a failed shape)")
    energy = parse_number(raw[5], where, "energy_j", MAX_ENERGY_J, unit="J")
    if energy == 0.0:
        energy = None  # RAPL's sub-millisecond 0.0 readings: missing, not zero joules
    trials = _trials(raw[6].strip(), where, latency is not None)
    extras = dict(zip(extras_names, raw[len(V4_COLUMNS) :], strict=True)) if extras_names else {}
    purpose = file_purpose
    if has_purpose:
        # an empty cell states no purpose: the file name's suffix, as without the column
        purpose = extras["purpose"].strip() or file_purpose
        if purpose is None:
            raise BaselineFileError(
                f"{where}: purpose is empty and the file name has no .calibration.csv or "
                ".validation.csv suffix to say it; write calibration or validation"
            )
    if purpose is not None and purpose not in PURPOSES:
        raise BaselineFileError(
            f"{where}: purpose {clip(purpose)} is not one of {', '.join(PURPOSES)}"
        )
    return BaselineRow(
        line=lineno,
        hardware=hardware,
        op=op,
        shape=shape,
        dims=dims,
        dtype=dtype,
        latency_s=latency,
        energy_j=energy,
        trial_count=trials,
        notes=raw[7],
        purpose=purpose,
        extras=extras,
    )


def _control_error(where: str, raw: list[str], extras_names: list[str]) -> BaselineFileError:
    """The error of a row one of whose cells holds a control character
    (:func:`~graphsval_core.datamodel.errors.is_control`: a tab, an escape,
    a NUL, a right-to-left override): every cell is one line of text, and a
    note or a ``suspect`` reason is printed in the terminal and the reports,
    where an escape sequence would drive the terminal or hide text."""
    for name, cell in zip((*V4_COLUMNS, *extras_names), raw, strict=True):
        bad = control_character(cell)
        if bad is not None:
            return BaselineFileError(
                f"{where}: {name} {clip(cell)} holds a control character ({bad}): give one "
                "line of text"
            )
    raise AssertionError("no control character in the row")  # the caller found one


def _trials(text: str, where: str, measured: bool) -> int:
    """The trial count ``text``: at least 1 on a ``measured`` row (never
    empty: the capture always counts the trials of a latency it writes),
    0 or empty on a failed shape's (the capture writes 0: a count of trials
    beside no latency contradicts it, as a measured row's 0 does)."""
    if text == "":
        if measured:
            raise BaselineFileError(
                f"{where}: trial_count is empty on a measured row (one with a latency_s); "
                f"give the number of trials measured, an integer in [1, {MAX_TRIALS}] "
                "(empty or 0 only on a failed shape)"
            )
        return 0
    if text.isascii() and text.isdigit() and len(text) <= 16:
        count = int(text)
        if measured and 1 <= count <= MAX_TRIALS:
            return count
        if not measured and count == 0:
            return count
    if not measured and text.isascii() and text.lstrip("-").isdigit():
        raise BaselineFileError(
            f"{where}: trial_count {clip(text)} on a failed shape (no latency_s); a failed "
            "shape counts no trial: write 0 or leave it empty, or give the latency_s measured"
        )
    if text.isascii() and text.lstrip("-").isdigit():
        raise BaselineFileError(
            f"{where}: trial_count {clip(text)} must be an integer in [1, {MAX_TRIALS}] "
            "(0 only on a failed shape, one with no latency_s)"
        )
    raise BaselineFileError(
        f"{where}: trial_count {clip(text)} is not an integer (expected a count of trials, "
        "or empty on a failed shape)"
    )


#: How a JSON cell of a baseline (``details``, ``fingerprint``) is read, as
#: strictly as every JSON file: no NaN or Infinity, no key given twice, no
#: number that overflows or underflows a float, no integer beyond 64 bits.
STRICT_JSON: dict[str, Any] = {
    "parse_constant": _no_constant,
    "object_pairs_hook": _unique,
    "parse_float": _finite_float,
    "parse_int": _bounded_int,
}
