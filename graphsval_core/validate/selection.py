"""Which baseline rows a validation counts, file by file.

With no file named, every baseline the installed plugins ship; a file in a
``recapture/`` folder beside a baseline is that baseline captured a second time
and is paired with it (the capture-vs-recapture agreement), not validated.
Which rows of a file count (DESIGN.md section 6): its ``purpose`` column, else
its name's suffix, else every row with a warning. A shipped file that does
not parse, or its rows naming a target or op nobody registers, are left out
as a problem of the plugin that ships it (a file named explicitly is the
user's input: one line and exit 2). A target that ships only
calibration rows is validated on them, marked in-sample only, when the
shipped baselines are validated (never for a file named explicitly).

A shipped baseline is read before the validation (it is small, and which
targets have rows of a purpose decides the in-sample ones). A file named is
read a block of rows at a time as it is validated
(:class:`~graphsval_core.files.baseline_stream.BaselineStream`): its
selection's blocks are checked and filtered on the way, and what the whole
file holds (its hash, its targets, how many rows were selected) is known
once they are read; :func:`check_selected` then says when nothing matched.
"""

from __future__ import annotations

import functools
import hashlib
import os
import stat
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, NamedTuple

import numpy as np
from attrs import define, evolve, field, frozen

from graphsval_core.datamodel.errors import UserInputError, warn_input
from graphsval_core.files.baseline import (
    V4_COLUMNS,
    Baseline,
    BaselineFileError,
    BaselineRow,
    is_recapture,
    read_baseline_file,
    recapture_path,
)
from graphsval_core.files.baseline_block import RowBlock
from graphsval_core.files.baseline_keys import row_keys
from graphsval_core.files.baseline_rows import measurement, row_identity
from graphsval_core.files.baseline_stream import BaselineStream
from graphsval_core.plugins.registry import WORKSPACE, Registry
from graphsval_core.validate.measured import refuse_misshapen

#: The hook a plugin ships baselines through.
HOOK = "graphsval_baselines"


@define
class Selection:
    """The rows of one baseline file that count, and how they were chosen;
    :meth:`blocks` gives them (once). For a file named, ``sha256``,
    ``purpose_source``, ``warning``, ``held`` (the targets of its rows) and
    ``rows`` (those selected) are known once its blocks are read."""

    path: str
    source: Iterable[RowBlock]
    purpose_source: str = "none"
    sha256: str = ""
    in_sample: bool = False  # calibration rows validated because no validation rows exist
    warning: str = ""
    rows: int = 0
    held: set[str] = field(factory=set)
    #: rows of a file named left out for their purpose, by purpose
    other_purpose: dict[str, int] = field(factory=dict)
    #: a file named: its rows that repeat an earlier row exactly (read once)
    repeat_warning: str = ""
    #: a file named: its rows that copy rows of a file named before it (read once)
    copy_warning: str = ""
    #: a file named: its rows left out for their purpose (every one of them too)
    purpose_warning: str = ""

    def blocks(self) -> Iterator[RowBlock]:
        """The selected rows, a block at a time (each block once)."""
        for block in self.source:
            if len(block):
                self.rows += len(block)
                yield block

    @property
    def counts(self) -> bool:
        """Whether the file is part of the run: rows of it were selected, or
        (a file that cannot say which rows count) it was read whole."""
        return bool(self.rows) or self.purpose_source == "none"


@frozen
class Baselines:
    """The selections of a run and the (baseline, recapture) pairs."""

    selections: list[Selection]
    pairs: list[tuple[Baseline, Baseline]]

    @property
    def sha256(self) -> dict[str, str]:
        """Every selected file's sha256 (a file named: once read)."""
        return {s.path: s.sha256 for s in self.selections}


def targets_with_baselines(registry: Registry) -> set[str]:
    """The targets some installed or workspace baseline has rows of (any op,
    any purpose): what a selection that matched nothing could have named."""
    found: set[str] = set()
    for plugin, item in registry.baseline_files():
        shipped = shipped_baseline(registry, plugin, item, set())  # no target file of them raises
        if shipped is not None:
            found.update(r.hardware for r in shipped[0].rows)
    return found


def recapture_of(path: str, candidates: Sequence[str]) -> str | None:
    """The recapture of baseline ``path``: a file of the same name in a
    ``recapture/`` folder beside it."""
    twin = str(recapture_path(path))
    return twin if twin in candidates else None


def shipped_baseline(
    registry: Registry, plugin: str, item: Any, hws: set[str] | None = None
) -> tuple[Baseline, str] | None:
    """A baseline a plugin ships, with its sha256, less the rows naming a
    target or op nobody registers; None when it does not parse. What is left
    out is that plugin's problem, named in one line (strict mode: an error)."""
    try:
        baseline, sha = read_baseline_file(item)
        refuse_misshapen(registry, baseline)
    except BaselineFileError as exc:
        if plugin == WORKSPACE:  # the user's own capture: as strict as a file named
            raise
        registry.contribution_problem(plugin, HOOK, f"shipped baseline left out: {exc}")
        return None
    targets, ops = registry.targets(), registry.ops()
    broken = {r.hardware for r in baseline.rows} & set(registry.workspace_errors)
    for hw in sorted(broken):
        if hws is None or hw in hws:  # the user's own target: its rows are never left out
            raise UserInputError(registry.workspace_errors[hw])
    if broken:  # not selected: left out, the target file's problem named already
        baseline = evolve(
            baseline, rows=tuple(r for r in baseline.rows if r.hardware not in broken)
        )
    unknown = sorted(
        {(r.hardware, r.op) for r in baseline.rows if r.hardware not in targets or r.op not in ops}
    )
    if not unknown:
        return baseline, sha
    for hw, op in unknown:
        if hw in targets and registry.refused_ops.get(op) == plugin:
            continue  # its own op, refused in one line already: its rows go with it
        what = f"target {hw!r}" if hw not in targets else f"op {op!r}"
        registry.contribution_problem(
            plugin, HOOK, f"{baseline.path}: rows of {hw}/{op} left out: no plugin registers {what}"
        )
    rows = tuple(r for r in baseline.rows if (r.hardware, r.op) not in unknown)
    return evolve(baseline, rows=rows), sha


def _rows_key(baseline: Baseline) -> int:
    """What makes two baselines one: the same rows, column for column, in
    any order (a copy with other line ends, a BOM or sorted another way has
    them too)."""
    return hash(frozenset(row_identity(r) for r in baseline.rows))


def _identity(item: Any) -> tuple[Any, ...]:
    """What makes two named files one: the same device and inode (a path
    again, a symbolic or a hard link), else the resolved path."""
    try:
        info = os.stat(str(item))
    except OSError:  # reading it will name the problem
        return ("path", os.path.realpath(str(item)))
    return ("inode", info.st_dev, info.st_ino)


def _size(item: Any) -> int | None:
    """A regular file's size (None for a pipe, a device or a file that
    cannot be read)."""
    try:
        info = os.stat(str(item))
    except OSError:
        return None
    return info.st_size if stat.S_ISREG(info.st_mode) else None


class FileDigests(NamedTuple):
    """A regular file's SHA-256 of its bytes (what a calibration's provenance
    records of the files it read), and what its rows are, whatever their
    order and line ends: its header line, then the sum (mod 2^64) of a hash
    of each other line, a leading BOM and each line's CR dropped, so that a
    copy saved by a spreadsheet (CRLF, a BOM) or sorted another way is the
    same file. A sum keeps no line in memory."""

    sha256: str
    rows: str


def _digests(item: Any) -> FileDigests | None:
    """:class:`FileDigests` of a regular file, in one read (None if it is no
    regular file, a pipe read once, or cannot be read: its reading will
    name the problem)."""
    if _size(item) is None:
        return None
    raw, total, header = hashlib.sha256(), 0, b""
    try:
        with open(str(item), "rb") as handle:
            for n, line in enumerate(handle):
                raw.update(line)
                text = (line.removeprefix(b"\xef\xbb\xbf") if n == 0 else line).rstrip(b"\r\n")
                if n == 0:
                    header = text
                elif text:
                    total += int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "big")
    except OSError:
        return None
    rows = f"{hashlib.sha256(header).hexdigest()}:{total % 2**64:016x}"
    return FileDigests(raw.hexdigest(), rows)


def _once(explicit: Sequence[Any], digests: Callable[[Any], FileDigests | None]) -> list[Any]:
    """The named files, each once: a file named again (by the same path, a
    link to it, or a copy of its rows: :class:`FileDigests`, from
    ``digests``) is read once, with a warning, so that no row is counted
    twice."""
    out: list[Any] = []
    seen: dict[tuple[Any, ...], Any] = {}
    for item in explicit:
        key = _identity(item)
        if key in seen:
            first = seen[key]
            again = "named again" if str(item) == str(first) else f"the same file as {first}"
            warn_input(f"{item}: {again}; read once")
            continue
        seen[key] = item
        out.append(item)
    if len(out) < 2:
        return out
    # a copy holds the same lines, whatever its order and line ends (each
    # file is read again as it is validated)
    kept: list[Any] = []
    contents: dict[str, Any] = {}
    for item in out:
        found = digests(item)
        digest = found.rows if found is not None else None
        if digest is not None and digest in contents:
            warn_input(f"{item}: the same rows as {contents[digest]}; read once")
            continue
        if digest is not None:
            contents[digest] = item
        kept.append(item)
    return kept


def check_names(registry: Registry, path: str, block: RowBlock) -> None:
    """Every row of a block of a file the user named names an installed
    target and a registered op; else :class:`BaselineFileError` names the
    file and the line of the first row that does not."""
    flagged = np.zeros(len(block), dtype=bool)
    why = np.empty(len(block), dtype=object)  # a row's first bad column says why
    checks = (
        ("hardware", registry.targets(), registry.resolve),
        ("op", registry.ops(), registry.op),
    )
    for column, known, lookup in checks:
        values = getattr(block, column)
        for name in set(values.tolist()) - set(known):
            try:
                lookup(name)
            except UserInputError as exc:
                rows = (values == name) & ~flagged
                why[rows] = f"{column}: {exc}"
                flagged |= rows
    if flagged.any():
        i = int(np.flatnonzero(flagged)[0])
        raise BaselineFileError(f"{path}:{block.line[i]}: {why[i]}")


def _require_targets(held: dict[str, set[str]], hws: set[str]) -> None:
    """Refuse ``--hw`` targets of which no row of the named files is
    (``held``: each file's targets)."""
    if any(hw in targets for targets in held.values() for hw in hws):
        return
    what = "; ".join(
        f"{path} holds {', '.join(sorted(targets)) if targets else 'no rows'}"
        for path, targets in held.items()
    )
    raise UserInputError(
        f"--hw {', '.join(sorted(hws))}: no row of the given baseline(s) is of "
        f"{'it' if len(hws) == 1 else 'them'} ({what}); a row is judged against its own "
        "hardware, --hw only selects"
    )


def check_selected(baselines: Baselines, explicit: bool, hws: set[str] | None) -> None:
    """Once the files named are read: refuse ``hws`` of which none of their
    rows is (a row keeps its own hardware, ``hws`` only selects)."""
    if explicit and hws is not None:
        _require_targets({s.path: s.held for s in baselines.selections}, hws)


def _member(column: np.ndarray, allowed: set[str] | None) -> np.ndarray:
    """Mask of the values of ``column`` in ``allowed`` (None: every value)."""
    if allowed is None:
        return np.ones(len(column), dtype=bool)
    return np.fromiter(map(allowed.__contains__, column.tolist()), bool, len(column))


class _Copies:
    """The rows of the files named so far, as :func:`row_keys`: a row of a
    later file that copies one exactly (the same measurement, named twice)
    is read once, as a copy of a whole file is."""

    def __init__(self) -> None:
        self.earlier: list[tuple[str, np.ndarray]] = []  # (file, its rows' sorted keys)

    def drop(self, keys: np.ndarray) -> tuple[np.ndarray, dict[str, int]]:
        """Mask of the rows of ``keys`` no earlier file holds, and how many
        each earlier file held."""
        fresh = np.ones(len(keys), dtype=bool)
        held: dict[str, int] = {}
        for path, known in self.earlier:
            at = np.minimum(np.searchsorted(known, keys), len(known) - 1)
            hit = fresh & (known[at] == keys) if len(known) else np.zeros_like(fresh)
            if hit.any():
                held[path] = int(hit.sum())
                fresh &= ~hit
        return fresh, held


def _named(
    registry: Registry,
    sel: Selection,
    stream: BaselineStream,
    hws: set[str] | None,
    ops: set[str] | None,
    purpose: str,
    copies: _Copies | None = None,
) -> Iterator[RowBlock]:
    """The selected rows of a file named, a block at a time as it is read
    (each block's names checked first); what the file holds is written into
    ``sel`` on the way. A row that copies one of an earlier file named
    (``copies``) is left out, and counted in ``sel.copy_warning``."""
    mine: list[np.ndarray] = []
    held: dict[str, int] = {}
    for block in _selected(registry, sel, stream, hws, ops, purpose):
        if copies is None or not len(block):
            yield block
            continue
        keys = row_keys(block)
        fresh, found = copies.drop(keys)
        for path, n in found.items():
            held[path] = held.get(path, 0) + n
        mine.append(keys[fresh])
        yield block if fresh.all() else block.take(fresh)
    if copies is not None:
        copies.earlier.append(
            (sel.path, np.sort(np.concatenate(mine)) if mine else np.zeros(0, np.uint64))
        )
    if held:
        said = "; ".join(f"{n} of {path}" for path, n in held.items())
        sel.copy_warning = (
            f"{sel.path}: {sum(held.values())} row(s) repeat rows of a file named before it "
            f"exactly ({said}); each read once"
        )


def _selected(
    registry: Registry,
    sel: Selection,
    stream: BaselineStream,
    hws: set[str] | None,
    ops: set[str] | None,
    purpose: str,
) -> Iterator[RowBlock]:
    """The selected rows of a file named (see :func:`_named`)."""
    for block in stream:
        sel.purpose_source = stream.purpose_source
        check_names(registry, sel.path, block)
        sel.held.update(set(block.hardware.tolist()))
        keep = _member(block.hardware, hws) & _member(block.op, ops)
        if sel.purpose_source != "none":
            mine = block.purpose == purpose
            dropped = block.purpose[keep & ~mine]  # selected but for their purpose
            for other in set(dropped.tolist()):
                n = int(np.sum(dropped == other))
                sel.other_purpose[other] = sel.other_purpose.get(other, 0) + n
            keep &= mine
        yield block if keep.all() else block.take(keep)
    sel.sha256 = stream.sha256
    sel.repeat_warning = stream.repeat_warning
    if sel.other_purpose:  # rows left out for their purpose: said (all of them too)
        sel.purpose_warning = _left_out_for_purpose(sel)
    if sel.purpose_source == "none" and sel.rows:
        sel.warning = f"{sel.path}: no purpose column or suffix: every row counts"


def _purpose_told(sel: Selection) -> tuple[str, str]:
    """How a named file's rows of another purpose were told apart (its file
    name's suffix or its purpose column), and ``; --purpose P validates
    them`` for each such purpose ("" for none)."""
    how = "its file name's suffix" if sel.purpose_source == "suffix" else "its purpose column"
    fix = "; ".join(f"--purpose {p} validates them" for p in sorted(sel.other_purpose) if p)
    return how, f"; {fix}" if fix else ""


def _left_out_for_purpose(sel: Selection) -> str:
    """``x.validation.csv: 1 row of another purpose (calibration: its purpose
    column) left out; --purpose calibration validates them``."""
    total = sum(sel.other_purpose.values())
    kinds = ", ".join(f"{n} {p or '(empty)'}" for p, n in sorted(sel.other_purpose.items()))
    how, fix = _purpose_told(sel)
    return f"{sel.path}: {total} row(s) of another purpose ({kinds}: {how}) left out{fix}"


def why_none(selections: Sequence[Selection], purpose: str) -> str:
    """Why files named gave no row (empty when it is not their purpose):
    e.g. ``x.calibration.csv: all its 18 rows are calibration rows (its file
    name's suffix); --purpose calibration validates them``."""
    said = []
    for sel in selections:
        if sel.rows or not sel.other_purpose:
            continue
        total = sum(sel.other_purpose.values())
        kinds = " or ".join(sorted(p or "(empty)" for p in sel.other_purpose))
        how, fix = _purpose_told(sel)
        said.append(
            f"{sel.path}: all its {total} row(s) are {kinds} rows ({how}), none {purpose}{fix}"
        )
    return "; ".join(said)


def _named_pairs(explicit: Sequence[str]) -> list[tuple[Baseline, Baseline]]:
    """(capture, recapture) of each file named that has a recapture beside
    it (``recapture/`` + its name, as a capture writes one): read whole, so
    the run can say how far the silicon is from itself. A named file with
    no recapture is only streamed."""
    pairs = []
    for item in explicit:
        if not isinstance(item, str | os.PathLike) or is_recapture(str(item)):
            continue
        twin = recapture_path(str(item))
        if os.path.isfile(item) and twin.is_file():
            pairs.append((read_baseline_file(item)[0], read_baseline_file(twin)[0]))
    return pairs


def select(
    registry: Registry,
    explicit: Sequence[str],
    hws: set[str] | None,
    ops: set[str] | None,
    purpose: str,
) -> Baselines:
    """The rows of ``explicit`` files (or of every shipped baseline) for the
    targets ``hws`` and ops ``ops`` (None: all) and ``purpose``. A row keeps
    its own hardware (``hws`` only selects). The files named are read as
    their selections' blocks are (see module doc)."""
    fitted = frozenset().union(*registry.calibration_sources.values())
    if explicit:
        selections = []
        digests = functools.lru_cache(maxsize=None)(_digests)  # each file read once for both
        copies = _Copies() if len(explicit) > 1 else None  # one file: nothing to copy from
        for item in _once(explicit, digests):
            stream = BaselineStream(item, warn=False)  # its repeats: in the summary
            sel = Selection(str(item), ())
            found = digests(item) if fitted else None
            if found is not None:  # a fit read these bytes: its rows are in sample
                sel.in_sample = found.sha256 in fitted
            sel.source = _named(registry, sel, stream, hws, ops, purpose, copies)
            selections.append(sel)
        return Baselines(selections, _named_pairs(explicit))
    parsed: dict[str, Baseline] = {}
    hashes: dict[str, str] = {}
    first: dict[int, str] = {}  # the rows' key -> the file read with those rows
    for plugin, item in registry.baseline_files():
        shipped = shipped_baseline(registry, plugin, item, hws)
        if shipped is None:
            continue
        same = _rows_key(shipped[0]) if shipped[0].rows else None  # (no rows: no copy)
        if same is not None and same in first:  # a copy (a workspace's of a shipped file)
            warn_input(f"{item}: the same rows as {first[same]}; read once")
            continue
        if same is not None:
            first[same] = str(item)
        parsed[str(item)], hashes[str(item)] = shipped
    recaptures = {p for p in parsed if is_recapture(p)}
    pairs = []
    for path in parsed:
        twin = recapture_of(path, list(recaptures))
        if twin:
            pairs.append((parsed[path], parsed[twin]))
    # which targets have rows of the requested purpose at all (installed baselines)
    has_purpose: set[tuple[str, str]] = set()
    for path, b in parsed.items():
        if path in recaptures:
            continue
        for r in b.select(purpose):
            has_purpose.add((r.hardware, r.op))

    def wanted(r: BaselineRow) -> bool:
        return (hws is None or r.hardware in hws) and (ops is None or r.op in ops)

    def selection(b: Baseline, rows: list[BaselineRow], **more: Any) -> Selection:
        block = RowBlock.from_rows(rows, b.columns[len(V4_COLUMNS) :])
        return Selection(b.path, [block], b.purpose_source, hashes[b.path], **more)

    seen: dict[tuple[Any, ...], str] = {}  # a row's identity -> the file it was first read in

    def once(path: str, rows: list[BaselineRow]) -> list[BaselineRow]:
        """``rows`` less those an earlier file holds exactly (a workspace
        baseline's copy of a shipped measurement counts once), with a warning."""
        kept, copies = [], {}
        for r in rows:
            first = seen.setdefault(measurement(r), path)
            if first == path:
                kept.append(r)
            else:
                copies[first] = copies.get(first, 0) + 1
        for first, n in copies.items():
            warn_input(f"{path}: {n} row(s) repeat rows of {first} exactly; each read once")
        return kept

    selections = []
    for path, b in parsed.items():
        if path in recaptures:
            continue
        if b.purpose_source == "none":
            rows = once(path, [r for r in b.rows if wanted(r)])
            warning = f"{path}: no purpose column or suffix: every row counts"
            selections.append(selection(b, rows, warning=warning if rows else ""))
            continue
        rows = [r for r in b.select(purpose) if wanted(r)]
        # rows a shipped calibration was fitted on (its provenance names the file's bytes)
        in_sample = any(
            hashes[path] in registry.calibration_sources.get(hw, frozenset())
            for hw in {r.hardware for r in rows}
        )
        if not rows and purpose == "validation":
            other = [
                r
                for r in b.select("calibration")
                if wanted(r) and (r.hardware, r.op) not in has_purpose
            ]
            if other:
                rows, in_sample = other, True
        rows = once(path, rows)
        if rows:
            selections.append(selection(b, rows, in_sample=in_sample))
    return Baselines(selections, pairs)
