"""Reading baseline CSV files: the V4 8-column files and the extended ones.

The V4 columns come first, in this order:
``hardware,op,shape,dtype,latency_s,energy_j,trial_count,notes``; any further
columns are extras (purpose, spread, correctness verdict, settings, ...). An
empty ``latency_s`` is a failed shape (the note says why); an empty or ``0.0``
``energy_j`` is missing energy (RAPL reads 0.0 for windows under ~1 ms).

Which rows count (DESIGN.md section 6): the ``purpose`` column if present,
else the file name's suffix (``.calibration.csv`` / ``.validation.csv``), else
all rows, and the caller warns. Every error names the file and the line.
"""

from __future__ import annotations

import csv
import gc
import hashlib
import json
import os
import re
from collections.abc import Iterable
from pathlib import Path
from sys import intern
from typing import Any

from attrs import evolve, field, frozen

from graphsval_core.datamodel.dtypes import KNOWN_DTYPES
from graphsval_core.datamodel.errors import UserInputError, warn_input
from graphsval_core.datamodel.op import MAX_DIM, ShapeError, split_shape
from graphsval_core.files.inputs import read_path_or_resource

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
#: A baseline captured a second time lies in this folder beside it, under the
#: same name (the capture-vs-recapture agreement).
RECAPTURE_DIR = "recapture"


def recapture_path(path: str | os.PathLike[str]) -> Path:
    """Where the recapture of baseline ``path`` lies: ``recapture/<name>`` beside it."""
    p = Path(path)
    return p.parent / RECAPTURE_DIR / p.name


def is_recapture(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` lies in a recapture folder."""
    return Path(path).parent.name == RECAPTURE_DIR


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


@frozen
class Baseline:
    """A parsed baseline file. ``purpose_source`` says how purposes were decided:
    ``column``, ``suffix`` or ``none`` (every row counts, with a warning)."""

    path: str
    columns: tuple[str, ...]
    rows: tuple[BaselineRow, ...]
    purpose_source: str

    def select(self, purpose: str | None) -> list[BaselineRow]:
        """Rows of ``purpose`` (all rows when the file cannot say)."""
        if purpose is None or self.purpose_source == "none":
            return list(self.rows)
        return [r for r in self.rows if r.purpose == purpose]


_SHORT_WINDOW = re.compile(r"below .*(averaging period|resolution|minimum)", re.IGNORECASE)


def short_energy_window(row: BaselineRow) -> bool:
    """Whether the row's note says its energy window was below the sensor's
    resolution, averaging period or minimum (the energy is then noise)."""
    return bool(_SHORT_WINDOW.search(row.notes))


def energy_window_s(row: BaselineRow) -> float | None:
    """The energy window of a row: its ``energy_window_s`` column, else (V4 files,
    one reading around all trials) trial count x latency; None if unknown."""
    text = row.extras.get("energy_window_s", "").strip()
    if text:
        try:
            return float(text)
        except ValueError:
            return None
    if row.latency_s and row.trial_count:
        return row.trial_count * row.latency_s
    return None


def purpose_from_name(path: str | Path) -> str | None:
    name = Path(path).name
    for purpose in PURPOSES:
        if name.endswith(f".{purpose}.csv"):
            return purpose
    return None


#: The largest latency (s) and energy (J) a row may hold: a day, a gigajoule.
MAX_LATENCY_S = 86_400.0
MAX_ENERGY_J = 1e9
#: The largest trial count a row may hold.
MAX_TRIALS = 2**53
#: Extra columns holding a number (empty: none), with their largest value.
NUMERIC_EXTRAS: dict[str, float] = {
    "first_latency_s": MAX_LATENCY_S,
    "energy_window_s": MAX_LATENCY_S * 1000,
}


def _float(value: str, where: str, column: str, high: float) -> float | None:
    value = value.strip()
    if value == "":
        return None
    try:
        number = float(value)
    except ValueError:
        raise BaselineFileError(
            f"{where}: {column} {_clip(value)} is not a number (expected seconds or joules, "
            "or empty)"
        ) from None
    if not 0 <= number <= high:  # NaN fails this too
        raise BaselineFileError(
            f"{where}: {column} {_clip(value)} must be a finite number in [0, {high:g}]"
        )
    return number


def _clip(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:37] + "...")


def parse_dims(shape: str) -> tuple[int, ...] | None:
    """The dims of ``shape`` (``"AxBxC"``), or None when it is not one."""
    try:
        return split_shape(shape)
    except ShapeError:
        return None


def read_baseline_file(item: Any) -> tuple[Baseline, str]:
    """Parse a baseline file, a path or an importlib Traversable, from one
    read; with the sha256 of its bytes (the report records it)."""
    name = str(item)
    data = read_path_or_resource(item, BaselineFileError, "a baseline CSV")
    try:
        text = data.decode("utf-8-sig")  # a leading BOM (a spreadsheet's export) is no column
    except UnicodeDecodeError as exc:
        raise BaselineFileError(
            f"{name}: not UTF-8 text (byte {exc.start}: {exc.reason}); expected a baseline CSV"
        ) from None
    return read_baseline(name, text), hashlib.sha256(data).hexdigest()


def read_baseline(path: str | Path, text: str | None = None) -> Baseline:
    """Parse a baseline CSV (read from ``path`` unless its ``text`` is given).

    Every error names the file and line: a header that is not the V4 columns
    or names a column twice, a quoted field left open (a field never spans
    lines), a row of the wrong field count, an empty name, a malformed shape,
    a number that is not finite or out of range, an unknown dtype or purpose,
    a file with no row. A shape measured twice in the file (same target, op,
    shape, dtype and purpose) is an error when the two rows differ, and is
    read once, with a warning, when they are the same."""
    if text is None:
        return read_baseline_file(path)[0]
    enabled = gc.isenabled()
    gc.disable()  # a row holds no cycle: the collector would only rescan every row read so far
    try:
        return _read_baseline(str(path), text)
    finally:
        if enabled:
            gc.enable()


def _read_baseline(path: str, text: str) -> Baseline:
    text = text.removeprefix("\ufeff")
    reader = csv.reader(text.split("\n"), strict=True)
    try:
        header = next(reader)
    except StopIteration:
        raise BaselineFileError(f"{path}: empty file (expected a header)") from None
    except csv.Error as exc:
        raise BaselineFileError(f"{path}:1: {exc}") from None
    if reader.line_num > 1:
        raise BaselineFileError(f"{path}:1: the header runs over lines (an unterminated quote?)")
    header = [h.strip() for h in header]
    if tuple(header[: len(V4_COLUMNS)]) != V4_COLUMNS:
        got = ",".join(header)
        raise BaselineFileError(
            f"{path}:1: header must start with {','.join(V4_COLUMNS)}; got "
            f"{ascii(got[:200]) if not got.isprintable() else got[:200]}"
        )
    for i, name in enumerate(header):
        if header.index(name) != i:
            raise BaselineFileError(
                f"{path}:1: column {name!r} appears twice (columns {header.index(name) + 1} "
                f"and {i + 1})"
            )
    extras_names = header[len(V4_COLUMNS) :]
    has_purpose = "purpose" in extras_names
    file_purpose = None if has_purpose else purpose_from_name(path)
    rows: list[BaselineRow] = []
    seen: dict[tuple[Any, ...], int] = {}
    repeats: list[str] = []  # "line N repeats line M", each an exact duplicate
    checks = _extra_checks(extras_names)
    layout: _Layout = (path, len(header), extras_names, has_purpose, file_purpose, checks)
    last = 1
    if '"' not in text and "\r" not in text:  # no quoting: column-wise, a block of lines at a time
        lines = text.split("\n")
        for start in range(reader.line_num, len(lines), CHUNK_LINES):
            block = lines[start : start + CHUNK_LINES]
            if not _block(block, start + 1, layout, rows, seen):
                _rows_of(block, start + 1, layout, rows, seen, repeats)
        reader = iter(())  # type: ignore[assignment]
    try:
        for raw in reader:
            lineno, last = last + 1, reader.line_num
            if last != lineno:
                raise BaselineFileError(
                    f"{path}:{lineno}: a quoted field runs on to line {last} (an unterminated "
                    "quote?); a field may not hold a line break"
                )
            _add(lineno, raw, layout, rows, seen, repeats)
    except csv.Error as exc:
        if "unexpected end of data" in str(exc):
            raise BaselineFileError(
                f"{path}:{last + 1}: a quoted field is never closed (an unterminated quote "
                "takes in every line after it)"
            ) from None
        raise BaselineFileError(f"{path}:{last + 1}: {exc}") from None
    if not rows:
        raise BaselineFileError(f"{path}: no rows under the header; a baseline holds at least one")
    if repeats:
        more = f" and {len(repeats) - 3} more" if len(repeats) > 3 else ""
        warn_input(
            f"{path}: {len(repeats)} row(s) repeat an earlier row exactly (same target, op, "
            f"shape, dtype, purpose and values: {', '.join(repeats[:3])}{more}); each is read once"
        )
    source = "column" if has_purpose else ("suffix" if file_purpose else "none")
    return Baseline(path, tuple(header), tuple(rows), source)


#: How many lines the column-wise reader takes at a time.
CHUNK_LINES = 65_536

# what every row of a file is read against: path, width, extra columns'
# names, whether a purpose column is there, the file's purpose, extra checks
_Layout = tuple[str, int, list[str], bool, "str | None", Any]


def _add(
    lineno: int,
    raw: list[str],
    layout: _Layout,
    rows: list[BaselineRow],
    seen: dict[tuple[Any, ...], int],
    repeats: list[str],
) -> None:
    """Read one row of fields (the rule set every row is read by): skip it when
    blank, else check it, and add it unless it repeats an earlier row."""
    path, width, extras_names, has_purpose, file_purpose, checks = layout
    if not raw or (not raw[0].strip() and not "".join(raw).strip()):
        return
    row = _row(path, lineno, raw, width, extras_names, has_purpose, file_purpose)
    if checks:
        checks(f"{path}:{lineno}", row.extras)
    key = (row.hardware, row.op, row.dims, row.dtype, row.purpose)
    if key in seen:
        repeats.append(_duplicate(path, row, rows[seen[key]]))
        return
    seen[key] = len(rows)
    rows.append(row)


def _rows_of(
    block: list[str],
    first: int,
    layout: _Layout,
    rows: list[BaselineRow],
    seen: dict[tuple[Any, ...], int],
    repeats: list[str],
) -> None:
    """Lines ``block`` (the first is line ``first``, no quote in any) one by one."""
    for lineno, line in enumerate(block, start=first):
        _add(lineno, line.split(",") if line else [], layout, rows, seen, repeats)


_PLAIN_NUMBER = r"(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?"
_NUMBER_COLUMN = re.compile(f"^(?:{_PLAIN_NUMBER})?$", re.MULTILINE)
_COUNT_COLUMN = re.compile("^[0-9]{0,16}$", re.MULTILINE)
_SHAPE_COLUMN = re.compile("^[1-9][0-9]{0,12}(?:x[1-9][0-9]{0,12})*$", re.MULTILINE)


def _numbers(column: list[str], high: float, zero_ok: bool) -> Any:
    """A column of plain decimals or empties as float64 (NaN: empty); None
    when one is not plain, out of ``[0, high]``, or 0 where that is refused."""
    import numpy as np  # not at import: commands that only list targets start without it

    joined = "\n".join(column)
    if len(_NUMBER_COLUMN.findall(joined)) != len(column):
        return None
    values = np.array(column, dtype=object)
    empty = values == ""
    values[empty] = "nan"
    out = values.astype(np.float64)
    given = out[~empty]
    if given.size and (given.max() > high or (not zero_ok and (given == 0).any())):
        return None
    return out


def _block(
    block: list[str],
    first: int,
    layout: _Layout,
    rows: list[BaselineRow],
    seen: dict[tuple[Any, ...], int],
) -> bool:
    """Read lines ``block`` (the first is line ``first``) column-wise when every
    one is a plain row the line-by-line rules accept, no shape repeats and none
    needs stripping; else read nothing and say False (the caller then reads the
    block line by line, which words any error). The last line of a file, empty,
    is dropped."""
    import numpy as np

    path, width, extras_names, has_purpose, file_purpose, checks = layout
    if block and block[-1] == "":
        block = block[:-1]
    if not block or any(line.count(",") != width - 1 for line in block):
        return False
    fields = ",".join(block).split(",")
    cols = [fields[i::width] for i in range(width)]
    names = {}
    for k in (0, 1, 3):
        for value in set(cols[k]):
            if not value or value != value.strip():
                return False
            names[value] = intern(value)
    if not set(cols[3]) <= set(KNOWN_DTYPES):
        return False
    shapes = cols[2]
    if len(_SHAPE_COLUMN.findall("\n".join(shapes))) != len(shapes):
        return False
    latency = _numbers(cols[4], MAX_LATENCY_S, zero_ok=False)
    energy = _numbers(cols[5], MAX_ENERGY_J, zero_ok=True)
    if latency is None or energy is None:
        return False
    trials_text = cols[6]
    if len(_COUNT_COLUMN.findall("\n".join(trials_text))) != len(trials_text):
        return False
    trials = [int(t) if t else 0 for t in trials_text]
    if max(trials) > MAX_TRIALS:
        return False
    extras_cols = cols[len(V4_COLUMNS) :]
    if has_purpose:
        purposes = extras_cols[extras_names.index("purpose")]
        if not set(purposes) <= {"", *PURPOSES}:
            return False
        purpose_of: list[str | None] = [p or None for p in purposes]
    else:
        purpose_of = [file_purpose] * len(block)
    ndims = {shape.count("x") + 1 for shape in shapes}
    if len(ndims) == 1:  # one op's shapes: parsed by numpy
        flat = np.fromstring("\n".join(shapes).replace("x", " "), dtype=np.int64, sep=" ")
        if flat.size != len(shapes) * min(ndims) or flat.max() > MAX_DIM:
            return False
        dims_of = list(zip(*flat.reshape(len(shapes), -1).T.tolist(), strict=True))
    else:
        dims_of = [tuple(map(int, s.split("x"))) for s in shapes]
        if max(max(d) for d in dims_of) > MAX_DIM:
            return False
    hardware = [names[v] for v in cols[0]]
    op = [names[v] for v in cols[1]]
    dtype = [names[v] for v in cols[3]]
    keys = list(zip(hardware, op, dims_of, dtype, purpose_of, strict=True))
    if len(set(keys)) != len(keys) or any(k in seen for k in keys):
        return False
    extras = (
        [dict(zip(extras_names, values, strict=True)) for values in zip(*extras_cols, strict=True)]
        if extras_names
        else [{}] * len(block)
    )
    if checks:
        for i, ex in enumerate(extras):
            checks(f"{path}:{first + i}", ex)
    lat = [None if v != v else v for v in latency.tolist()]
    en = [None if v != v or v == 0.0 else v for v in energy.tolist()]
    seen.update(zip(keys, range(len(rows), len(rows) + len(block)), strict=True))
    if not extras_names:
        extras = [{} for _ in block]
    # positional, in BaselineRow's field order
    rows += map(
        BaselineRow,
        range(first, first + len(block)),
        hardware,
        op,
        shapes,
        dims_of,
        dtype,
        lat,
        en,
        trials,
        cols[7],
        purpose_of,
        extras,
    )
    return True


def _duplicate(path: str, row: BaselineRow, first: BaselineRow) -> str:
    """A second row of the same shape (and target, op, dtype, purpose): read
    once (``"line N repeats line M"`` for the warning) when it is the first
    one again; else an error."""
    what = f"{row.hardware} {row.op} {row.shape} {row.dtype}"
    if evolve(row, line=first.line, shape=first.shape) != first:
        raise BaselineFileError(
            f"{path}:{row.line}: {what} was measured at line {first.line} already, with "
            "other values; keep one row per shape"
        )
    return f"line {row.line} repeats line {first.line}"


def _extra_checks(names: list[str]) -> Any:
    """A check of the extra columns other modules read as numbers or JSON,
    for a file of extra columns ``names`` (None: it has none of them)."""
    numeric = [(n, high) for n, high in NUMERIC_EXTRAS.items() if n in names]
    fingerprint = "fingerprint" in names
    if not numeric and not fingerprint:
        return None
    good: set[str] = set()

    def check(where: str, extras: dict[str, str]) -> None:
        for name, high in numeric:
            if extras[name].strip():
                _float(extras[name], where, name, high)
        text = extras["fingerprint"].strip() if fingerprint else ""
        if text and text not in good:
            try:
                data = json.loads(text, parse_constant=_no_constant)
            except (ValueError, RecursionError):
                data = None
            if not isinstance(data, dict) or not all(
                isinstance(v, str | int | float) for v in data.values()
            ):
                raise BaselineFileError(
                    f"{where}: fingerprint {_clip(text)} is not a JSON object of names to values"
                )
            good.add(text)

    return check


def _no_constant(name: str) -> Any:
    raise ValueError(name)


def _row(
    path: str,
    lineno: int,
    raw: list[str],
    width: int,
    extras_names: list[str],
    has_purpose: bool,
    file_purpose: str | None,
) -> BaselineRow:
    """One row; its first fields are the V4 columns, in their order."""
    if len(raw) != width:
        raise BaselineFileError(f"{path}:{lineno}: {len(raw)} fields, the header has {width}")
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
            f"{where}: dtype {_clip(dtype)} is not a known dtype ({', '.join(KNOWN_DTYPES)})"
        )
    latency = _float(raw[4], where, "latency_s", MAX_LATENCY_S)
    if latency == 0.0:
        raise BaselineFileError(f"{where}: latency_s is 0 (leave it empty for a failed shape)")
    energy = _float(raw[5], where, "energy_j", MAX_ENERGY_J)
    if energy == 0.0:
        energy = None  # RAPL's sub-millisecond 0.0 readings: missing, not zero joules
    trials = _trials(raw[6].strip() or "0", where)
    extras = dict(zip(extras_names, raw[len(V4_COLUMNS) :], strict=True)) if extras_names else {}
    purpose = (extras["purpose"].strip() or None) if has_purpose else file_purpose
    if purpose is not None and purpose not in PURPOSES:
        raise BaselineFileError(
            f"{where}: purpose {_clip(purpose)} is not one of {', '.join(PURPOSES)}"
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


def _trials(text: str, where: str) -> int:
    if text.isascii() and text.isdigit() and len(text) <= 16 and int(text) <= MAX_TRIALS:
        return int(text)
    if text.isascii() and text.lstrip("-").isdigit():
        raise BaselineFileError(
            f"{where}: trial_count {_clip(text)} must be an integer in [0, {MAX_TRIALS}]"
        )
    raise BaselineFileError(
        f"{where}: trial_count {_clip(text)} is not an integer (expected a count of trials, "
        "or empty)"
    )


def read_many(paths: Iterable[Any]) -> list[Baseline]:
    """Parse several baselines (paths or importlib Traversables)."""
    return [read_baseline_file(item)[0] for item in paths]
