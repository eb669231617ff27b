"""The measured row of one shape in the installed (or given) baselines:
what ``graphsval registry lookup`` prints and ``graphsval explain`` sets
beside its prediction. Never a guess: a shape nobody measured has no row."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from graphsval_core.datamodel.errors import warn_input
from graphsval_core.files.baseline import (
    Baseline,
    BaselineFileError,
    BaselineRow,
    is_recapture,
    read_baseline_file,
    read_many,
)
from graphsval_core.files.baseline_rows import row_identity
from graphsval_core.plugins.registry import WORKSPACE, Registry


def find_measured(
    registry: Registry,
    key: str,
    op: str,
    dims: tuple[int, ...],
    dtype: str,
    baselines: Sequence[str] = (),
) -> tuple[Baseline, BaselineRow] | None:
    """The row of ``key``, ``op``, ``dims`` and ``dtype`` in ``baselines``
    (default: every installed one), None when none has it. A capture wins
    over its recapture (which only measures the capture's agreement), and a
    workspace's over an installed one (listed after it); else the last row.
    A file given that cannot be read raises
    :class:`~graphsval_core.files.baseline.BaselineFileError`; a shipped one
    is left out, its plugin's problem (named at the end of the command)."""
    files = read_many(baselines) if baselines else _installed(registry)
    if baselines:  # the user's files are read whole, as validate reads them
        for baseline in files:
            refuse_misshapen(registry, baseline)
    hits = [
        (b, r)
        for b in files
        for r in b.rows
        if r.hardware == key and r.op == op and r.dims == dims and r.dtype == dtype
    ]
    if not baselines:
        hits = _read_once(hits)
    if not hits:
        return None
    if registry.target(key).ground_truth == "consistency_only":  # no silicon to have measured
        baseline, row = hits[0]
        raise BaselineFileError(f"{baseline.path}:{row.line}: {no_silicon(key)}")
    firsts = [h for h in hits if not is_recapture(h[0].path)]
    if baselines:  # files the user named: two that disagree leave the answer ambiguous
        (b0, r0), *others = firsts or hits
        for b1, r1 in others:
            if (r1.latency_s, r1.energy_j) != (r0.latency_s, r0.energy_j):
                raise BaselineFileError(
                    f"{b1.path}:{r1.line}: {key} {op} {'x'.join(map(str, dims))} {dtype} "
                    f"was measured at {b0.path}:{r0.line} too, with other values; name one "
                    "of the two files"
                )
    return (firsts or hits)[-1]


def _read_once(hits: list[tuple[Baseline, BaselineRow]]) -> list[tuple[Baseline, BaselineRow]]:
    """``hits`` less each row that repeats an earlier one of another file
    exactly (a workspace's copy of a shipped row), each with one warning
    naming both, as validate reads them once."""
    first: dict[tuple[Any, ...], tuple[Baseline, BaselineRow]] = {}
    kept = []
    for b, r in hits:
        was = first.setdefault(row_identity(r), (b, r))
        if was[0] is not b:
            warn_input(f"{b.path}:{r.line}: the same row as {was[0].path}:{was[1].line}; read once")
            continue
        kept.append((b, r))
    return kept


def _installed(registry: Registry) -> list[Baseline]:
    """Every shipped and workspace baseline that parses; the others are their
    plugin's problem, but a workspace's is an error (:class:`BaselineFileError`).
    A baseline with the same rows as one before it (a workspace's copy of a
    shipped one) is read once, with a warning, as validate reads it."""
    out = []
    first: dict[frozenset[tuple[Any, ...]], str] = {}
    for plugin, item in registry.baseline_files():
        try:
            baseline = read_baseline_file(item)[0]
            refuse_misshapen(registry, baseline)
        except BaselineFileError as exc:
            if plugin == WORKSPACE:  # the user's own capture: as strict as a file named
                raise
            registry.contribution_problem(
                plugin, "graphsval_baselines", f"shipped baseline left out: {exc}"
            )
            continue
        same = frozenset(row_identity(r) for r in baseline.rows)
        if baseline.rows and same in first:
            warn_input(f"{item}: the same rows as {first[same]}; read once")
            continue
        first.setdefault(same, str(item))
        out.append(baseline)
    return out


def no_silicon(key: str) -> str:
    """Why a measured row of consistency-only target ``key`` is refused."""
    return (
        f"{key} is a consistency-only target (no silicon to measure): a measured row of it "
        "is no capture's"
    )


def refuse_misshapen(registry: Registry, baseline: Baseline) -> None:
    """Raise :class:`BaselineFileError` naming the file and line of the first
    row of ``baseline`` whose shape has another number of dims than its op
    takes (a row of an op nobody registers is not judged here)."""
    for row in baseline.rows:
        try:
            op = registry.op(row.op)
        except LookupError:
            continue
        if len(row.dims) != len(op.dims):
            raise BaselineFileError(
                f"{baseline.path}:{row.line}: {op.dims_mismatch(row.shape, len(row.dims))}"
            )


def measured_dict(baseline: Baseline, row: BaselineRow) -> dict[str, Any]:
    """The row as ``registry lookup --json`` prints it."""
    return {
        "hardware": row.hardware,
        "op": row.op,
        "shape": row.shape,
        "dtype": row.dtype,
        "latency_s": row.latency_s,
        "energy_j": row.energy_j,
        "trial_count": row.trial_count,
        "verdict": row.extras.get("verdict") or None,
        "purpose": row.purpose,
        "notes": row.notes,
        "file": baseline.path,
        "line": row.line,
    }
