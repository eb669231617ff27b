"""Reading baseline CSV files: the V4 8-column files and the extended ones.

The V4 columns come first, in this order:
``hardware,op,shape,dtype,latency_s,energy_j,trial_count,notes``; any further
columns are extras (purpose, spread, correctness verdict, settings, ...). An
empty ``latency_s`` is a failed shape (the note says why); an empty or ``0.0``
``energy_j`` is missing energy (RAPL reads 0.0 for windows under ~1 ms).

Which rows count (DESIGN.md section 6): the ``purpose`` column if present,
else the file name's suffix (``.calibration.csv`` / ``.validation.csv``), else
all rows, and the caller warns; a row whose ``purpose`` cell is empty takes
the suffix's (with no suffix it is an error). Every error names the file
and the line.

A file is read a block of rows at a time, as columns
(:class:`~graphsval_core.files.baseline_stream.BaselineStream`, what a large
baseline is validated from); :func:`read_baseline_file` gathers every block
into a :class:`Baseline` of :class:`BaselineRow` s. The rules a row is read
by are :mod:`graphsval_core.files.baseline_rows`'. This module imports no
numpy (``graphsval targets`` starts without it); reading does.
"""

from __future__ import annotations

import gc
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from attrs import frozen

from graphsval_core.files.baseline_rows import (
    MAX_ENERGY_J,
    MAX_LATENCY_S,
    MAX_TRIALS,
    NUMERIC_EXTRAS,
    PURPOSES,
    V4_COLUMNS,
    BaselineFileError,
    BaselineRow,
    parse_dims,
    purpose_from_name,
)

__all__ = [
    "MAX_ENERGY_J",
    "MAX_LATENCY_S",
    "MAX_TRIALS",
    "NUMERIC_EXTRAS",
    "PURPOSES",
    "RECAPTURE_DIR",
    "V4_COLUMNS",
    "Baseline",
    "BaselineFileError",
    "BaselineRow",
    "energy_window_s",
    "is_recapture",
    "parse_dims",
    "purpose_from_name",
    "read_baseline",
    "read_baseline_file",
    "read_many",
    "recapture_path",
    "short_energy_window",
]

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
    return short_window_note(row.notes)


def short_window_note(notes: str) -> bool:
    """Whether a note says the energy window was below the sensor's
    resolution, averaging period or minimum."""
    return bool(_SHORT_WINDOW.search(notes))


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


def read_baseline_file(item: Any) -> tuple[Baseline, str]:
    """Parse a baseline file, a path or an importlib Traversable, from one
    read; with the sha256 of its bytes (the report records it).

    Every error names the file and line: an empty file, a header that is
    not the V4 columns, names a column twice or an extra column a near miss
    of a known one (``purpse``), a quoted field left open (a field never
    spans lines), a carriage return inside a line, a row of the wrong field
    count, an empty name, a malformed shape, a number that is not plain ASCII
    (no ``_``), not finite, out of range or (a latency or energy) positive
    below a picosecond or picojoule, a trial count under 1 or empty on a
    measured row or above 0 on a failed shape's (the capture writes 0),
    an unknown dtype or purpose, an empty purpose cell in a file whose name
    has no purpose suffix, a known extra column holding a value it may not
    (a verdict of ``maybe``), a file with no row, a byte that is not UTF-8
    (by its line). A shape measured twice
    in the file (same target, op, shape, dtype and purpose) is an error when
    the two rows differ, and is read once, with a warning, when they are the
    same."""
    # numpy only here: commands that only list targets start without it
    from graphsval_core.files.baseline_block import RowBlock
    from graphsval_core.files.baseline_stream import BaselineStream

    enabled = gc.isenabled()
    gc.disable()  # a row holds no cycle: the collector would only rescan every row read so far
    try:
        stream = BaselineStream(item)
        blocks = list(stream)
        rows = RowBlock.concat(blocks).rows() if blocks else []
        baseline = Baseline(stream.path, stream.header, tuple(rows), stream.purpose_source)
        return baseline, stream.sha256
    finally:
        if enabled:
            gc.enable()


def read_baseline(path: str | Path, text: str | None = None) -> Baseline:
    """Parse a baseline CSV (see :func:`read_baseline_file`), read from
    ``path`` unless its ``text`` is given (``path`` then only names it)."""
    if text is None:
        return read_baseline_file(path)[0]
    return read_baseline_file(_Text(str(path), text))[0]


class _Text:
    """A baseline's text given in memory, read as a file named ``name``."""

    def __init__(self, name: str, text: str) -> None:
        self.name = name
        self.text = text

    def __str__(self) -> str:
        return self.name

    def read_bytes(self) -> bytes:
        return self.text.encode("utf-8", "surrogatepass")


def read_many(paths: Iterable[Any]) -> list[Baseline]:
    """Parse several baselines (paths or importlib Traversables)."""
    return [read_baseline_file(item)[0] for item in paths]
