"""The files of a capture: the baseline CSV it appends to and the journal of
its rounds, written so that no measured row is ever lost and no file that is
not a baseline of the same target and op is ever touched.

Every finished shape is appended to the CSV as one complete line, flushed and
fsynced; a line cut by a kill mid-write is dropped on the next run, but only
once the file has been recognised as this capture's baseline (its header and
every complete row name the same target and op). At the end the file is
rewritten sorted, one row per shape, atomically (temp file + rename). Each
(shape, round) result also goes to a journal beside the CSV
(``<csv>.journal.jsonl``) so an interleaved capture resumes too.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from graphsval_core.files.baseline import V4_COLUMNS, BaselineFileError
from graphsval_core.files.baseline_rows import KNOWN_EXTRAS
from graphsval_core.files.inputs import read_input
from graphsval_core.files.outputs import check_output_file, check_output_temp
from graphsval_core.plugins.records import Measurement

SCHEMA_VERSION = "2"

#: Extra columns of a captured baseline, after the V4 columns: the ones a
#: baseline reader knows (:data:`graphsval_core.files.baseline_rows.KNOWN_EXTRAS`).
EXTRA_COLUMNS: tuple[str, ...] = KNOWN_EXTRAS
COLUMNS: tuple[str, ...] = V4_COLUMNS + EXTRA_COLUMNS

Row = dict[str, str]


def journal_path(path: Path) -> Path:
    return path.with_name(path.name + ".journal.jsonl")


def _complete_lines(data: bytes) -> bytes:
    """The bytes up to the last newline (a line cut by a kill is not kept)."""
    return data[: data.rfind(b"\n") + 1] if not data.endswith(b"\n") else data


def read_capture(
    path: Path, hardware: str, op: str, repair: bool = True
) -> dict[tuple[str, str], Row]:
    """The rows of an existing capture of ``hardware`` ``op`` by (shape, dtype),
    the last one winning; empty when ``path`` does not exist or is empty.
    With ``repair`` (a capture about to append), a cut last line or an older
    capture's columns are rewritten; without it nothing is written.

    Raises :class:`BaselineFileError` without touching the file when it is not
    a baseline this capture may write to: not UTF-8, a header that is not a
    capture's, or a row of another target or op."""
    check_output_file(path, BaselineFileError)
    if not path.exists():
        return {}
    data = read_input(path, BaselineFileError, "a baseline CSV")
    if not data.strip():
        return {}
    try:
        text = _complete_lines(data).decode("utf-8")
    except UnicodeDecodeError:
        raise BaselineFileError(
            f"{path}: not a baseline CSV (not UTF-8 text); refusing to modify it"
        ) from None
    lines = text.splitlines()
    header = next(csv.reader(lines[:1]), []) if lines else []
    if not data.endswith(b"\n") and len(lines) <= 1:
        # one line and no newline: a header cut by a kill (nothing was finished), or not ours
        fields = data.decode("utf-8", "replace").split(",")
        n = len(fields)
        cut_header = (
            n <= len(COLUMNS)
            and fields[:-1] == list(COLUMNS[: n - 1])
            and COLUMNS[n - 1].startswith(fields[-1])
        )
        if not cut_header:
            raise BaselineFileError(
                f"{path}: not a baseline written by graphsval capture (its first line is not a "
                "capture header); refusing to modify it"
            )
        if repair:
            path.write_bytes(b"")
        return {}
    if tuple(header[: len(V4_COLUMNS)]) != V4_COLUMNS or not set(header) <= set(COLUMNS):
        raise BaselineFileError(
            f"{path}: not a baseline written by graphsval capture (header "
            f"{','.join(header[:4])},...); refusing to modify it, name another --out"
        )
    rows: dict[tuple[str, str], Row] = {}
    try:
        for n, row in enumerate(csv.DictReader(lines), start=2):
            if None in row or any(v is None for v in row.values()):
                raise BaselineFileError(
                    f"{path}:{n}: wrong number of fields; refusing to modify it"
                )
            if row["hardware"] != hardware or row["op"] != op:
                raise BaselineFileError(
                    f"{path}: holds {row['hardware']} {row['op']} rows, not {hardware} {op}; "
                    "refusing to modify it, name another --out"
                )
            rows[(row["shape"], row["dtype"])] = {c: row.get(c, "") or "" for c in COLUMNS}
    except csv.Error as exc:
        raise BaselineFileError(
            f"{path}: not a readable CSV ({exc}); refusing to modify it"
        ) from None
    if repair and (tuple(header) != COLUMNS or not data.endswith(b"\n")):
        write_sorted(path, rows)  # an older capture's columns, or a cut last line: rewrite
    return rows


def line(row: Mapping[str, Any]) -> str:
    buf = io.StringIO()
    csv.DictWriter(buf, fieldnames=list(COLUMNS), lineterminator="\n").writerow(
        {c: row.get(c, "") for c in COLUMNS}
    )
    return buf.getvalue()


def append_row(path: Path, row: Mapping[str, Any]) -> None:
    check_output_file(path, BaselineFileError)
    new = not path.exists() or path.stat().st_size == 0
    text = (",".join(COLUMNS) + "\n" if new else "") + line(row)
    with path.open("a", newline="", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())


def sort_key(row: Mapping[str, str]) -> tuple[Any, ...]:
    dims = tuple(int(d) for d in row["shape"].split("x"))
    return (row["dtype"], dims)


def write_sorted(path: Path, rows: Mapping[tuple[str, str], Mapping[str, Any]]) -> None:
    """Rewrite ``path`` with ``rows`` sorted, atomically: through a temp file
    renamed over it, as :func:`~graphsval_core.files.outputs.write_text_atomic`
    does. A link is followed: the file it leads to is rewritten, the link
    kept (a rename over the link would replace it by a file)."""
    check_output_file(path, BaselineFileError)
    target, tmp = check_output_temp(path, BaselineFileError)
    with tmp.open("w", newline="", encoding="utf-8") as handle:
        handle.write(",".join(COLUMNS) + "\n")
        for row in sorted(rows.values(), key=sort_key):
            handle.write(line(row))
        handle.flush()
        os.fsync(handle.fileno())
    tmp.replace(target)


def finalize(path: Path, hardware: str, op: str) -> int:
    """Rewrite ``path`` sorted, one row per shape, atomically; the row count."""
    if not path.exists():
        return 0
    rows = read_capture(path, hardware, op)
    write_sorted(path, rows)
    return len(rows)


# --- the journal of rounds -----------------------------------------------------------

Journal = dict[tuple[str, str], dict[int, Measurement]]


def read_journal(path: Path, owner: dict[str, str] | None = None) -> Journal:
    """``(shape, dtype) -> round -> result`` (a later line for a round wins).
    ``owner`` (hardware, op, threads): a journal its first record says is
    another capture's is refused, never used."""
    out: Journal = {}
    check_output_file(path, BaselineFileError)
    if not path.exists():
        return out
    data = read_input(path, BaselineFileError, "a capture journal")
    parsed = 0
    theirs: dict[str, str] | None = None
    for text in _complete_lines(data).decode("utf-8", "replace").splitlines():
        if not text.strip():
            continue
        try:
            rec = json.loads(text)
            theirs = (
                {k: str(v) for k, v in rec["journal_of"].items()} if "journal_of" in rec else None
            )
            if theirs is not None:
                parsed += 1
                if owner is not None and theirs != {k: str(v) for k, v in owner.items()}:
                    break
                continue
            m = Measurement(
                latency_s=rec["latency_s"],
                energy_j=rec["energy_j"],
                trial_count=rec["trial_count"],
                notes=rec["notes"],
                extras=rec["extras"],
            )
            key, round_no = (rec["shape"], rec["dtype"]), int(rec["round"])
        except (ValueError, KeyError, TypeError, AttributeError):
            raise BaselineFileError(
                f"{path}: not a capture journal; refusing to use or modify it"
            ) from None
        parsed += 1
        out.setdefault(key, {})[round_no] = m
    if theirs is not None and owner is not None and theirs != {k: str(v) for k, v in owner.items()}:
        raise BaselineFileError(
            f"{path}: the journal of another capture ({theirs}), not of {owner}; refusing to "
            "use or modify it (name another --out)"
        )
    if parsed and data and not data.endswith(b"\n"):
        with path.open("r+b") as handle:  # a line cut by a kill: drop it before appending
            handle.truncate(len(_complete_lines(data)))
    elif data and not parsed:
        if not data.startswith(b'{"'):
            raise BaselineFileError(f"{path}: not a capture journal; refusing to use or modify it")
        path.write_bytes(b"")  # its first record cut by a kill: nothing was journaled
    return out


def start_journal(path: Path, owner: dict[str, str]) -> None:
    """Begin a journal with the record of whose capture it is."""
    check_output_file(path, BaselineFileError)
    if path.exists() and path.stat().st_size:
        return
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"journal_of": owner}) + "\n")
        handle.flush()
        os.fsync(handle.fileno())


def append_journal(path: Path, key: tuple[str, str], round_no: int, m: Measurement) -> None:
    rec = {
        "shape": key[0],
        "dtype": key[1],
        "round": round_no,
        "latency_s": m.latency_s,
        "energy_j": m.energy_j,
        "trial_count": m.trial_count,
        "notes": m.notes,
        "extras": dict(m.extras),
    }
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(rec, default=str) + "\n")
        handle.flush()
        os.fsync(handle.fileno())
