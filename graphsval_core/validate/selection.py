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
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from attrs import define, evolve, frozen

from graphsval_core.datamodel.errors import UserInputError, warn_input
from graphsval_core.files.baseline import (
    Baseline,
    BaselineFileError,
    BaselineRow,
    is_recapture,
    read_baseline_file,
    recapture_path,
)
from graphsval_core.plugins.registry import Registry

#: The hook a plugin ships baselines through.
HOOK = "graphsval_baselines"


@define
class Selection:
    """The rows of one baseline file that count, and how they were chosen."""

    baseline: Baseline
    rows: list[BaselineRow]
    in_sample: bool = False  # calibration rows validated because no validation rows exist
    warning: str = ""


@frozen
class Baselines:
    """The selections of a run, the (baseline, recapture) pairs, and every file's sha256."""

    selections: list[Selection]
    pairs: list[tuple[Baseline, Baseline]]
    sha256: dict[str, str]


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
    except BaselineFileError as exc:
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


def _once(explicit: Sequence[Any]) -> list[Any]:
    """The named files, each once: a file named again, by the same path or
    another (a link to it), is read once, with a warning."""
    out: list[Any] = []
    seen: dict[str, Any] = {}
    for item in explicit:
        real = os.path.realpath(str(item))
        if real in seen:
            if str(item) != str(seen[real]):
                warn_input(f"{item}: the same file as {seen[real]}; read once")
            continue
        seen[real] = item
        out.append(item)
    return out


def check_names(registry: Registry, baseline: Baseline) -> None:
    """Every row of a file the user named names an installed target and a
    registered op; else :class:`BaselineFileError` names the file and line."""
    targets, ops = registry.targets(), registry.ops()
    for row in baseline.rows:
        if row.hardware not in targets:
            try:
                registry.resolve(row.hardware)
            except UserInputError as exc:
                raise BaselineFileError(f"{baseline.path}:{row.line}: hardware: {exc}") from None
        if row.op not in ops:
            try:
                registry.op(row.op)
            except UserInputError as exc:
                raise BaselineFileError(f"{baseline.path}:{row.line}: op: {exc}") from None


def _require_targets(parsed: dict[str, Baseline], hws: set[str]) -> None:
    """Refuse ``--hw`` targets of which no row of the named files is."""
    held = {path: sorted({r.hardware for r in b.rows}) for path, b in parsed.items()}
    if any(hw in targets for targets in held.values() for hw in hws):
        return
    what = "; ".join(
        f"{path} holds {', '.join(targets) if targets else 'no rows'}"
        for path, targets in held.items()
    )
    raise UserInputError(
        f"--hw {', '.join(sorted(hws))}: no row of the given baseline(s) is of "
        f"{'it' if len(hws) == 1 else 'them'} ({what}); a row is judged against its own "
        "hardware, --hw only selects"
    )


def select(
    registry: Registry,
    explicit: Sequence[str],
    hws: set[str] | None,
    ops: set[str] | None,
    purpose: str,
) -> Baselines:
    """The rows of ``explicit`` files (or of every shipped baseline) for the
    targets ``hws`` and ops ``ops`` (None: all) and ``purpose``. A row keeps
    its own hardware (``hws`` only selects): ``hws`` of which no row of the
    ``explicit`` files is raises :class:`UserInputError` naming the files and
    the targets they hold."""
    items = [("", item) for item in _once(explicit)] if explicit else registry.baseline_files()
    parsed: dict[str, Baseline] = {}
    hashes: dict[str, str] = {}
    for plugin, item in items:
        if explicit:
            baseline, hashes[str(item)] = read_baseline_file(item)
        else:
            shipped = shipped_baseline(registry, plugin, item, hws)
            if shipped is None:
                continue
            baseline, hashes[str(item)] = shipped
        if explicit:
            check_names(registry, baseline)
        parsed[str(item)] = baseline
    if explicit and hws is not None:
        _require_targets(parsed, hws)
    recaptures = {p for p in parsed if is_recapture(p)} if not explicit else set()
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

    selections = []
    for path, b in parsed.items():
        if path in recaptures:
            continue
        if b.purpose_source == "none":
            rows = [r for r in b.rows if wanted(r)]
            warning = f"{path}: no purpose column or suffix: every row counts"
            selections.append(Selection(b, rows, False, warning if rows else ""))
            continue
        rows = [r for r in b.select(purpose) if wanted(r)]
        in_sample = False
        if not rows and purpose == "validation" and not explicit:
            other = [
                r
                for r in b.select("calibration")
                if wanted(r) and (r.hardware, r.op) not in has_purpose
            ]
            if other:
                rows, in_sample = other, True
        if rows:
            selections.append(Selection(b, rows, in_sample))
    return Baselines(selections, pairs, hashes)
