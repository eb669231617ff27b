"""Which baseline rows a validation counts, file by file.

With no file named, every baseline the installed plugins ship; a file in a
``recapture/`` folder beside a baseline is that baseline captured a second time
and is paired with it (the capture-vs-recapture agreement), not validated.
Which rows of a file count (DESIGN.md section 6): its ``purpose`` column, else
its name's suffix, else every row with a warning. A target that ships only
calibration rows is validated on them, marked in-sample only, when the
shipped baselines are validated (never for a file named explicitly).
"""

from __future__ import annotations

from collections.abc import Sequence

from attrs import define, evolve, frozen

from graphsval_core.files.baseline import (
    Baseline,
    BaselineRow,
    is_recapture,
    read_baseline_file,
    recapture_path,
)
from graphsval_core.plugins.registry import Registry


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


def select(
    registry: Registry,
    explicit: Sequence[str],
    hws: set[str] | None,
    ops: set[str] | None,
    purpose: str,
    hw_override: str | None = None,
) -> Baselines:
    """The rows of ``explicit`` files (or of every shipped baseline) for the
    targets ``hws`` and ops ``ops`` (None: all) and ``purpose``; with
    ``hw_override``, every row is taken as that target's."""
    items = list(explicit) if explicit else [item for _, item in registry.baseline_files()]
    parsed: dict[str, Baseline] = {}
    hashes: dict[str, str] = {}
    for item in items:
        baseline, hashes[str(item)] = read_baseline_file(item)
        if hw_override:
            baseline = evolve(
                baseline, rows=tuple(evolve(r, hardware=hw_override) for r in baseline.rows)
            )
        parsed[str(item)] = baseline
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
