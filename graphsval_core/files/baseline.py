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
import hashlib
import math
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from attrs import field, frozen

from graphsval_core.datamodel.errors import UserInputError

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


def _float(value: str, where: str, column: str) -> float | None:
    value = value.strip()
    if value == "":
        return None
    try:
        number = float(value)
    except ValueError:
        raise BaselineFileError(f"{where}: {column} {value!r} is not a number") from None
    if not math.isfinite(number) or number < 0:
        raise BaselineFileError(f"{where}: {column} {value!r} must be finite and >= 0")
    return number


def parse_dims(shape: str) -> tuple[int, ...] | None:
    parts = shape.strip().lower().split("x")
    if not parts or not all(p.isdigit() and int(p) > 0 for p in parts):
        return None
    return tuple(int(p) for p in parts)


def read_baseline_file(item: Any) -> tuple[Baseline, str]:
    """Parse a baseline file, a path or an importlib Traversable, from one
    read; with the sha256 of its bytes (the report records it)."""
    name = str(item)
    try:
        data = Path(item).read_bytes() if isinstance(item, str | os.PathLike) else item.read_bytes()
    except OSError as exc:
        raise BaselineFileError(f"{name}: cannot read: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BaselineFileError(
            f"{name}: not UTF-8 text (byte {exc.start}: {exc.reason})"
        ) from None
    return read_baseline(name, text), hashlib.sha256(data).hexdigest()


def read_baseline(path: str | Path, text: str | None = None) -> Baseline:
    """Parse a baseline CSV (read from ``path`` unless its ``text`` is given)."""
    if text is None:
        return read_baseline_file(path)[0]
    path = str(path)
    reader = csv.reader(text.splitlines())
    try:
        header = next(reader)
    except StopIteration:
        raise BaselineFileError(f"{path}: empty file (expected a header)") from None
    except csv.Error as exc:
        raise BaselineFileError(f"{path}:1: {exc}") from None
    header = [h.strip() for h in header]
    if tuple(header[: len(V4_COLUMNS)]) != V4_COLUMNS:
        raise BaselineFileError(
            f"{path}:1: header must start with {','.join(V4_COLUMNS)}; got {','.join(header)}"
        )
    extras_names = header[len(V4_COLUMNS) :]
    has_purpose = "purpose" in extras_names
    file_purpose = None if has_purpose else purpose_from_name(path)
    rows = []
    lineno = 1
    try:
        for lineno, raw in enumerate(reader, start=2):
            if not raw or all(not c.strip() for c in raw):
                continue
            rows.append(_row(path, lineno, raw, header, extras_names, has_purpose, file_purpose))
    except csv.Error as exc:
        raise BaselineFileError(f"{path}:{lineno + 1}: {exc}") from None
    source = "column" if has_purpose else ("suffix" if file_purpose else "none")
    return Baseline(path, tuple(header), tuple(rows), source)


def _row(
    path: str,
    lineno: int,
    raw: list[str],
    header: list[str],
    extras_names: list[str],
    has_purpose: bool,
    file_purpose: str | None,
) -> BaselineRow:
    where = f"{path}:{lineno}"
    if len(raw) != len(header):
        raise BaselineFileError(f"{where}: {len(raw)} fields, the header has {len(header)}")
    values = dict(zip(header, raw, strict=True))
    for column in ("hardware", "op", "shape", "dtype"):
        if not values[column].strip():
            raise BaselineFileError(f"{where}: empty {column}")
    dims = parse_dims(values["shape"])
    if dims is None:
        raise BaselineFileError(f"{where}: shape {values['shape']!r} is not dims joined by 'x'")
    latency = _float(values["latency_s"], where, "latency_s")
    if latency == 0.0:
        raise BaselineFileError(f"{where}: latency_s is 0 (leave it empty for a failed shape)")
    energy = _float(values["energy_j"], where, "energy_j")
    if energy == 0.0:
        energy = None  # RAPL's sub-millisecond 0.0 readings: missing, not zero joules
    trials_text = values["trial_count"].strip() or "0"
    if not trials_text.isdigit():
        raise BaselineFileError(f"{where}: trial_count {trials_text!r} is not an integer")
    extras = {name: values[name] for name in extras_names}
    purpose = (extras.get("purpose", "").strip() or None) if has_purpose else file_purpose
    if purpose is not None and purpose not in PURPOSES:
        raise BaselineFileError(f"{where}: purpose {purpose!r} is not one of {', '.join(PURPOSES)}")
    return BaselineRow(
        line=lineno,
        hardware=values["hardware"].strip(),
        op=values["op"].strip(),
        shape=values["shape"].strip(),
        dims=dims,
        dtype=values["dtype"].strip(),
        latency_s=latency,
        energy_j=energy,
        trial_count=int(trials_text),
        notes=values["notes"],
        purpose=purpose,
        extras=extras,
    )


def read_many(paths: Iterable[Any]) -> list[Baseline]:
    """Parse several baselines (paths or importlib Traversables)."""
    return [read_baseline_file(item)[0] for item in paths]
