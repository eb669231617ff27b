"""Reading a baseline CSV a block of rows at a time, as columns.

:class:`BaselineStream` reads a file (a path or an importlib Traversable) in
pieces of :data:`READ_BYTES`, never holding its whole text, and yields
:class:`~graphsval_core.files.baseline_block.RowBlock` s of at most
:data:`CHUNK_LINES` lines and about :data:`CHUNK_CHARS` characters. A block
of plain lines (no quote, no carriage return, the right field count, names
needing no stripping, plain numbers)
is read column-wise; any other block is read line by line by the rules of
:mod:`graphsval_core.files.baseline_rows`, which word every error; from the
first quote or carriage return on, every line is read by the ``csv`` module.
All three read a row the same way, so a file reads the same whatever its
blocks. Shapes read twice are found by :class:`~graphsval_core.files.baseline_keys.SeenShapes`.

Errors name the file and line: the first problem in line order stops the
reading (a block's rows before it are still checked for a repeated shape,
which would have come first). After the last block, :attr:`sha256` is the
hash of the file's bytes and :attr:`rows` the rows read.
"""

from __future__ import annotations

import csv
import hashlib
import io
import os
import re
from collections.abc import Iterator
from itertools import chain, islice, repeat
from sys import intern
from typing import IO, Any

import numpy as np

from graphsval_core.datamodel.dtypes import KNOWN_DTYPES
from graphsval_core.datamodel.errors import CONTROL, warn_input
from graphsval_core.datamodel.op import MAX_DIM
from graphsval_core.files.baseline_block import RowBlock
from graphsval_core.files.baseline_keys import SeenShapes
from graphsval_core.files.baseline_rows import (
    EXTRA_VALUES,
    MAX_ENERGY_J,
    MAX_LATENCY_S,
    MAX_TRIALS,
    MIN_POSITIVE,
    NUMERIC_EXTRAS,
    PURPOSES,
    V4_COLUMNS,
    BaselineFileError,
    BaselineRow,
    blank,
    check_header,
    extra_checks,
    parse_row,
    purpose_from_name,
)
from graphsval_core.files.inputs import MAX_INPUT_BYTES, open_input, read_path_or_resource
from graphsval_core.files.jsonfile import underflows

#: How many lines a block holds at most.
CHUNK_LINES = 65_536
#: ... and of at most about this many characters of text, so that a file of
#: long lines (a wide note, a fingerprint) holds no more text at a time
CHUNK_CHARS = 8 * 2**20
#: The csv module's longest field (131,072 characters by default) would make
#: a long field an error on its path only: the column-wise path has no limit
csv.field_size_limit(max(csv.field_size_limit(), 2**31 - 1))
#: How many bytes are read from the file at a time.
READ_BYTES = 4 * 2**20
_BOM = b"\xef\xbb\xbf"
_WHAT = "a baseline CSV"


def _open(item: Any, path: str) -> IO[bytes]:
    """The file's bytes to read; every failure is one line naming it. A
    folder or a special file is refused; a pipe is read (to the size limit)."""
    if not isinstance(item, str | os.PathLike):  # a file a plugin ships: small, read at once
        return io.BytesIO(read_path_or_resource(item, BaselineFileError, _WHAT))
    return open_input(item, BaselineFileError, _WHAT)[0]


def _chunks(handle: IO[bytes], path: str, digest: Any) -> Iterator[bytes]:
    """The file's bytes, :data:`READ_BYTES` at a time, hashed into ``digest``."""
    size = 0
    while True:
        try:
            chunk = handle.read(READ_BYTES)
        except OSError as exc:
            raise BaselineFileError(f"{path}: cannot read: {exc.strerror or exc}") from None
        if not chunk:
            return
        size += len(chunk)
        if size > MAX_INPUT_BYTES:
            raise BaselineFileError(f"{path}: more than {MAX_INPUT_BYTES} bytes; not {_WHAT}")
        digest.update(chunk)
        yield chunk


def _text_lines(handle: IO[bytes], path: str, digest: Any) -> Iterator[list[str]]:
    """The file's lines, as its whole text's ``split("\\n")`` gives them (the
    last one empty after a final line break), a list at a time. A leading
    byte order mark (a spreadsheet's export) is no part of the first column;
    a byte that is not UTF-8 is named by its line and its offset after it."""
    carry: list[bytes] = []  # the bytes after the last line break so far
    at = (0, 1)  # bytes decoded so far, and the line the next bytes begin
    first = True
    for chunk in _chunks(handle, path, digest):
        cut = chunk.rfind(b"\n") + 1
        if not cut:
            carry.append(chunk)
            continue
        data = b"".join([*carry, chunk[:cut]])
        carry = [chunk[cut:]]
        text, at = _decode(data, at, path, first)
        first = False
        yield text.split("\n")[:-1]
    yield [_decode(b"".join(carry), at, path, first)[0]]


def _decode(
    data: bytes, at: tuple[int, int], path: str, first: bool
) -> tuple[str, tuple[int, int]]:
    """The text of ``data``, which follows ``at[0]`` bytes and begins line
    ``at[1]``; and where the bytes after it are."""
    offset, line = at
    if first:
        data = data.removeprefix(_BOM)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        where = line + data.count(b"\n", 0, exc.start)
        raise BaselineFileError(
            f"{path}:{where}: not UTF-8 text (byte {offset + exc.start}: {exc.reason}); "
            f"expected {_WHAT}"
        ) from None
    text = text.removeprefix("\ufeff") if first else text
    return text, (offset + len(data), line + data.count(b"\n"))


class _Layout:
    """What every row of a file is read against."""

    def __init__(self, path: str, header: list[str]) -> None:
        self.path = path
        self.width = len(header)
        self.extras = header[len(V4_COLUMNS) :]
        self.has_purpose = "purpose" in self.extras
        #: the purpose the file's name says: every row's, or (with a purpose
        #: column) that of a row whose cell is empty
        self.file_purpose = purpose_from_name(path)
        self.checks = extra_checks(self.extras)

    def row(self, lineno: int, raw: list[str]) -> BaselineRow:
        """Line ``lineno``'s row; its extra columns are checked a block at a
        time (:func:`_checked`)."""
        return parse_row(
            self.path,
            lineno,
            raw,
            self.width,
            self.extras,
            self.has_purpose,
            self.file_purpose,
        )


class BaselineStream:
    """A baseline file read a block at a time (see module doc): iterate it
    once for its :class:`RowBlock` s; :attr:`header` and
    :attr:`purpose_source` are known once the first block is read,
    :attr:`sha256`, :attr:`rows` and :attr:`repeat_warning` after the last."""

    def __init__(self, item: Any, *, warn: bool = True) -> None:
        self.item = item
        self.path = str(item)
        #: whether the rows read once are warned of as the file ends (else the
        #: caller reports :attr:`repeat_warning`)
        self.warn = warn
        self.repeat_warning = ""
        self.header: tuple[str, ...] = ()
        #: how purposes were decided: ``column``, ``suffix`` or ``none``
        self.purpose_source = "none"
        self.sha256 = ""
        self.rows = 0

    def __iter__(self) -> Iterator[RowBlock]:
        handle = _open(self.item, self.path)
        with handle:
            yield from self._read(handle)

    def _read(self, handle: IO[bytes]) -> Iterator[RowBlock]:
        path = self.path
        digest = hashlib.sha256()
        lines = chain.from_iterable(_text_lines(handle, path, digest))
        layout = _Layout(path, _header(path, lines))
        self.header = (*V4_COLUMNS, *layout.extras)
        self.purpose_source = (
            "column" if layout.has_purpose else ("suffix" if layout.file_purpose else "none")
        )
        seen = _Seen(path)
        lineno = 2  # the first line of the next block
        while block := _take(lines):
            text = ",".join(block)
            if '"' in text or "\r" in text:
                # the csv module from here on: a quoted field may hold a comma
                for rows in _csv_blocks(chain(block, lines), lineno, layout, seen):
                    yield rows
                break
            plain = plain_block(block, lineno, layout, text)
            if plain is None:
                found, error = _line_rows(block, lineno, layout)
            else:
                found, error = _extras_checked(plain, layout)
            rows = seen.admit(found, error)
            lineno += len(block)
            if len(rows):
                yield rows
        if not seen.rows:
            raise BaselineFileError(
                f"{path}: no rows under the header; a baseline holds at least one"
            )
        self.repeat_warning = seen.warning()
        if self.repeat_warning and self.warn:
            warn_input(self.repeat_warning)
        self.rows = seen.rows
        self.sha256 = digest.hexdigest()


def _take(lines: Iterator[str]) -> list[str]:
    """The next block's lines: :data:`CHUNK_LINES` of them, or fewer once
    they hold :data:`CHUNK_CHARS` characters."""
    block: list[str] = []
    chars = 0
    for line in islice(lines, CHUNK_LINES):
        block.append(line)
        chars += len(line)
        if chars >= CHUNK_CHARS:
            break
    return block


def _header(path: str, lines: Iterator[str]) -> list[str]:
    """The header's names (the first line, read by the csv module)."""
    reader = csv.reader(lines, strict=True)
    try:
        header = next(reader)
    except StopIteration:
        raise BaselineFileError(f"{path}: empty file (expected a header line)") from None
    except csv.Error as exc:
        raise BaselineFileError(f"{path}:1: {csv_problem(exc)}") from None
    if reader.line_num > 1:
        raise BaselineFileError(f"{path}:1: the header runs over lines (an unterminated quote?)")
    if len(header) <= 1 and not "".join(header).strip() and all(not ln.strip() for ln in lines):
        raise BaselineFileError(f"{path}: empty file (expected a header line)")
    return check_header(path, header)


def csv_problem(exc: csv.Error) -> str:
    """What the csv module's error ``exc`` means, in plain words. (Lines are
    split at line feeds before it reads them: a line break it sees in a
    field is a carriage return.)"""
    if "new-line character seen in unquoted field" in str(exc):
        return (
            "a carriage return inside a line (old Mac line endings?); expected LF or CRLF line ends"
        )
    return str(exc)


class _Seen:
    """The shapes of a file read so far, its rows and its exact repeats."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.shapes = SeenShapes()
        self.rows = 0
        self.repeats = 0
        self.first_repeats: list[str] = []  # "line N repeats line M", the first three

    def admit(self, block: RowBlock, error: Exception | None) -> RowBlock:
        """The rows of ``block`` that repeat no earlier row; an error for a
        shape measured again with other values; then ``error`` (the problem
        of the line after the block's rows), which came after them."""
        if len(block):
            found = self.shapes.repeats(block)
            for again in found:
                if not again.same:
                    i = again.index
                    what = f"{block.hardware[i]} {block.op[i]} {block.shape[i]} {block.dtype[i]}"
                    other = (
                        "differing only in its notes" if again.notes_only else "with other values"
                    )
                    raise BaselineFileError(
                        f"{self.path}:{block.line[i]}: {what} was measured at line "
                        f"{again.first} already, {other}; keep one row per shape"
                    )
            if found:
                self.repeats += len(found)
                room = 3 - len(self.first_repeats)
                self.first_repeats += [
                    f"line {block.line[r.index]} repeats line {r.first}" for r in found[:room]
                ]
                keep = np.ones(len(block), dtype=bool)
                keep[[r.index for r in found]] = False
                block = block.take(keep)
        if error is not None:
            raise error
        self.rows += len(block)
        return block

    def warning(self) -> str:
        """The line saying which rows repeated an earlier one exactly ('' if none)."""
        if not self.repeats:
            return ""
        n = self.repeats
        more = f" and {n - 3} more" if n > 3 else ""
        return (
            f"{self.path}: {n} row(s) repeat an earlier row exactly (same target, op, "
            f"shape, dtype, purpose and values: {', '.join(self.first_repeats)}{more}); "
            "each is read once"
        )


def _checked(
    rows: list[BaselineRow], layout: _Layout, error: Exception | None
) -> tuple[RowBlock, Exception | None]:
    """``rows`` (read line by line before ``error``'s line, or every line
    of a block) as a block, its extra columns checked: the rows before the
    first that fails, with its error, which came first; else every row and
    ``error``."""
    block, bad = _extras_checked(RowBlock.from_rows(rows, layout.extras), layout)
    return block, error if bad is None else bad


def _line_rows(block: list[str], first: int, layout: _Layout) -> tuple[RowBlock, Exception | None]:
    """Lines ``block`` (the first is line ``first``, no quote in any) one by
    one: the rows before the first bad line, and its error."""
    rows: list[BaselineRow] = []
    try:
        for lineno, line in enumerate(block, start=first):
            raw = line.split(",") if line else []
            if not blank(raw):
                rows.append(layout.row(lineno, raw))
    except BaselineFileError as exc:
        return _checked(rows, layout, exc)
    return _checked(rows, layout, None)


def _csv_blocks(
    lines: Iterator[str], first: int, layout: _Layout, seen: _Seen
) -> Iterator[RowBlock]:
    """The rows of ``lines`` (the first is line ``first``) by the csv module,
    a block of :data:`CHUNK_LINES` lines at a time. A field may not span lines."""
    path = layout.path
    reader = csv.reader(lines, strict=True)
    base = first - 1  # reader.line_num counts from here
    rows: list[BaselineRow] = []
    last = first - 1
    chars = 0
    error: Exception | None = None
    try:
        for raw in reader:
            lineno, last = last + 1, base + reader.line_num
            if last != lineno:
                raise BaselineFileError(
                    f"{path}:{lineno}: a quoted field runs on to line {last} (an unterminated "
                    "quote?); a field may not hold a line break"
                )
            if not blank(raw):
                rows.append(layout.row(lineno, raw))
            chars += sum(map(len, raw))
            if last - first + 1 >= CHUNK_LINES or chars >= CHUNK_CHARS:
                block = seen.admit(*_checked(rows, layout, None))
                rows, first, chars = [], last + 1, 0
                if len(block):
                    yield block
    except csv.Error as exc:
        if "unexpected end of data" in str(exc):
            error = BaselineFileError(
                f"{path}:{last + 1}: a quoted field is never closed (an unterminated quote "
                "takes in every line after it)"
            )
        else:
            error = BaselineFileError(f"{path}:{last + 1}: {csv_problem(exc)}")
    except BaselineFileError as exc:
        error = exc
    block = seen.admit(*_checked(rows, layout, error))
    if len(block):
        yield block


def _extras_checked(block: RowBlock, layout: _Layout) -> tuple[RowBlock, Exception | None]:
    """The rows before the first whose extra columns fail their checks
    (numbers in range, a fingerprint of JSON), and that row's error (None:
    every row passes)."""
    checks = layout.checks
    if checks is None or _extras_plain(block, checks):
        return block, None
    names = list(block.extras)
    for i, values in enumerate(zip(*block.extras.values(), strict=True)):
        try:
            checks(f"{layout.path}:{block.line[i]}", dict(zip(names, values, strict=True)))
        except BaselineFileError as exc:
            return block.take(np.arange(i)), exc
    return block, None


def _extras_plain(block: RowBlock, checks: Any) -> bool:
    """Whether the extra columns read as numbers and JSON, or of known
    values, pass at once: each numeric one plain numbers in range or empty,
    each distinct value of the others one it may hold, each distinct
    fingerprint a JSON object of names to values (else each row is checked,
    in order)."""
    for name, high in NUMERIC_EXTRAS.items():
        column = block.extra(name)
        if column is not None and _numbers(column.tolist(), high, zero_ok=True) is None:
            return False
    for name, rule in EXTRA_VALUES.items():
        column = block.extra(name)
        if column is None:
            continue
        values = column.tolist()
        if rule.high is not None:
            if not _extra_numbers(values, rule.high, rule.finite, rule.spaced, rule.tiny):
                return False
        elif not all(rule.test(v) or not v.strip() for v in dict.fromkeys(values)):
            return False
    if not _columns_agree(block):
        return False
    fingerprints = block.extra("fingerprint")
    if fingerprints is None:
        return True
    empty = dict.fromkeys(block.extras, "")
    for text in dict.fromkeys(fingerprints.tolist()):
        try:
            checks("", {**empty, "fingerprint": text})
        except BaselineFileError:
            return False
    return True


def _columns_agree(block: RowBlock) -> bool:
    """The columns a capture writes together agree in every row (p10 at most
    p90, a round latency per round), as the row-by-row rules require; their
    values are known to be numbers already."""
    p10, p90 = block.extra("p10_s"), block.extra("p90_s")
    if p10 is not None and p90 is not None:
        low = _numbers(p10.tolist(), MAX_LATENCY_S, zero_ok=True)
        high = _numbers(p90.tolist(), MAX_LATENCY_S, zero_ok=True)
        if low is None or high is None or bool(np.any(low > high)):  # NaN (empty): no test
            return False
    rounds, each = block.extra("rounds"), block.extra("round_latencies_s")
    if rounds is not None and each is not None:
        given = (np.char.str_len(np.char.strip(rounds.astype(str))) > 0) & (
            np.char.str_len(np.char.strip(each.astype(str))) > 0
        )
        if given.any():
            counts = np.array([int(c) for c in rounds[given].tolist()])
            places = np.char.count(each[given].astype(str), " ") + 1
            if bool(np.any(counts != places)):
                return False
    return True


def _numbers(column: list[str], high: float, zero_ok: bool) -> np.ndarray | None:
    """A column of numbers or empties as float64 (NaN: empty), as the
    line-by-line rules read each; None when one is not a number (as
    :func:`~graphsval_core.files.baseline_rows.plain_float` reads one), is
    NaN, out of ``[0, high]``, positive but below :data:`MIN_POSITIVE`, or 0
    where that is refused (those rules then say why)."""
    joined = "".join(column)
    if not joined.isascii() or "_" in joined:
        return None
    empty = np.array([not v for v in column], dtype=bool) if "" in column else None
    try:
        if empty is None:
            out = np.array(list(map(float, column)), dtype=np.float64)
        else:
            out = np.array([float(v) if v else np.nan for v in column], dtype=np.float64)
    except ValueError:
        return None
    if (out == 0).any() and any(underflows(v) for v, o in zip(column, out, strict=True) if o == 0):
        return None  # 1e-400: not 0, too small (the rules then say so)
    given = out if empty is None else out[~empty]
    if given.size and not (
        (given >= 0).all()
        and given.max() <= high
        and (zero_ok or given.min() > 0)
        and ((given >= MIN_POSITIVE) | (given == 0)).all()
    ):
        return None  # a NaN fails the first test
    return out


def _extra_numbers(
    values: list[str], high: float, finite: bool, spaced: bool, tiny: bool = True
) -> bool:
    """Whether a column of numbers (several to a cell when ``spaced``)
    passes its rule (:class:`~graphsval_core.files.baseline_rows.ValueRule`)
    at once; False: its cells are then tested one by one."""
    joined = " ".join(values)
    if not joined.isascii() or "_" in joined:
        return False
    # a spaced cell's numbers one by one (a blank cell is none; a tab between two is bad)
    cells = [p for v in values if v.strip() for p in v.split(" ") if p] if spaced else values
    try:
        out = np.fromiter(map(float, cells), np.float64, len(cells))
    except ValueError:  # an empty (or a bad) cell
        if spaced:
            return False  # no empty ones among them: a bad one
        cells = [v for v in cells if v.strip()]
        try:
            out = np.fromiter(map(float, cells), np.float64, len(cells))
        except ValueError:
            return False
    if (out == 0).any() and any(underflows(v) for v, o in zip(cells, out, strict=True) if o == 0):
        return False  # 1e-400: not 0, too small
    if not tiny and ((out > 0) & (out < MIN_POSITIVE)).any():
        return False
    if finite:
        return bool(np.isfinite(out).all() and (out >= 0).all() and (out <= high).all())
    return not (out < 0).any() and bool((out[np.isfinite(out)] <= high).all())


_SHAPE_TEXT = re.compile(r"[0-9x\n]*\Z")
_LONG_DIM = re.compile(r"[0-9]{16}")


def _dims(shapes: list[str]) -> tuple[np.ndarray, np.ndarray] | None:
    """Every shape's dims one after another, and where each row's start;
    None unless each is plain: ``AxBxC`` of positive integers."""
    text = "\n".join(shapes)
    if not _SHAPE_TEXT.match(text) or _LONG_DIM.search(text):
        return None
    counts = np.fromiter(map(str.count, shapes, repeat("x")), np.int64, len(shapes)) + 1
    flat = np.fromstring(text.replace("x", " "), dtype=np.int64, sep=" ")
    if flat.size != int(counts.sum()) or not flat.size or flat.min() < 1 or flat.max() > MAX_DIM:
        return None
    return flat, np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)


def _names(column: list[str]) -> np.ndarray | None:
    """A column of names as shared strings; None when one is empty or padded."""
    distinct = set(column)
    if any(not v or v != v.strip() for v in distinct):
        return None
    if len(distinct) == 1:
        out = np.empty(len(column), dtype=object)
        out[:] = intern(column[0])
        return out
    shared = {v: intern(v) for v in distinct}
    out = np.empty(len(column), dtype=object)
    out[:] = [shared[v] for v in column]
    return out


def plain_block(
    block: list[str], first: int, layout: _Layout, text: str | None = None
) -> RowBlock | None:
    """Lines ``block`` (the first is line ``first``) read column-wise when
    every one is a plain row the line-by-line rules read the same way; else
    None (those rules then read the block and word any error). The last line,
    when empty (a final line break), is dropped. Extra columns are checked
    apart (:func:`_extras_checked`). ``text``: the lines joined by commas."""
    if text is None:
        text = ",".join(block)
    if block and block[-1] == "":
        block = block[:-1]
        text = text[:-1]
    if CONTROL.search(text) is not None:
        return None  # a cell holding a control character (the rules name it)
    width = layout.width
    if not block or set(map(str.count, block, repeat(","))) != {width - 1}:
        return None
    fields = text.split(",")
    cols = [fields[i::width] for i in range(width)]
    hardware, op, dtype = _names(cols[0]), _names(cols[1]), _names(cols[3])
    if hardware is None or op is None or dtype is None or not set(cols[3]) <= set(KNOWN_DTYPES):
        return None
    dims = _dims(cols[2])
    latency = _numbers(cols[4], MAX_LATENCY_S, zero_ok=False)
    energy = _numbers(cols[5], MAX_ENERGY_J, zero_ok=True)
    trials = _counts(cols[6])
    if dims is None or latency is None or energy is None or trials is None:
        return None
    if ((trials == 0) & ~np.isnan(latency)).any():
        return None  # a trial count of 0, or none, on a measured row
    if trials.any() and (trials[np.isnan(latency)] > 0).any():
        return None  # a trial count on a failed shape
    extras = {name: _objects(column) for name, column in zip(layout.extras, cols[8:], strict=True)}
    if layout.has_purpose:
        given = cols[len(V4_COLUMNS) + layout.extras.index("purpose")]
        if not set(given) <= {"", *PURPOSES}:
            return None
        if layout.file_purpose is None and "" in given:
            return None  # an empty cell, and no suffix to say it
        purpose = _objects([p or layout.file_purpose for p in given])
    else:
        purpose = np.full(len(block), layout.file_purpose, dtype=object)
    energy[energy == 0.0] = np.nan  # RAPL's sub-millisecond 0.0: missing energy
    return RowBlock(
        line=np.arange(first, first + len(block), dtype=np.int64),
        hardware=hardware,
        op=op,
        shape=_objects(cols[2]),
        dtype=dtype,
        latency_s=latency,
        energy_j=energy,
        trial_count=trials,
        notes=_objects(cols[7]),
        purpose=purpose,
        dims=dims[0],
        dims_start=dims[1],
        extras=extras,
    )


def _counts(column: list[str]) -> np.ndarray | None:
    """A column of trial counts (empty: 0); None unless each is plain digits in range."""
    joined = "".join(column)
    if joined and not (joined.isascii() and joined.isdigit()):
        return None
    if max(map(len, column)) > 16:
        return None
    if "" in column:
        out = np.array([int(v) if v else 0 for v in column], dtype=np.int64)
    else:  # digits only: parsed at once
        out = np.fromstring(" ".join(column), dtype=np.int64, sep=" ")
        if out.size != len(column):
            return None
    return out if not out.size or out.max() <= MAX_TRIALS else None


def _objects(values: list[Any]) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out
