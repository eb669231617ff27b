"""What ``predict --rollup`` checks of a sweep before it prices a pass: that
the calls it sums are one model's whole passes, not a hand-edited part.

A sweep from ``sweep from-config`` names its ``source`` (the tokens of each
phase and the sequences a pass, ``batch``). Its call sites must then lie in
the phases those tokens sweep, every phase must hold the same sites with the
same calls a pass (a site left out, or counted once where the others count a
layer each, is priced as a whole pass: tokens per second for a part), and a
linear's rows must be ``batch`` times the phase's tokens a sequence (a batch
edited alone multiplied the tokens a second by itself without changing a
call). A sweep with no source is the user's own: a phase whose name is a near
miss of another's (``prefil T=1`` beside ``prefill T=1``) would split one
pass in two, and is refused too.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from typing import Any

from graphsval_core.datamodel.errors import UserInputError
from graphsval_core.sweep.model_config import scenarios_of
from graphsval_core.sweep.rollup import Call

#: A phase name the rollup reads tokens from (``phase_tokens``).
_PHASE = re.compile(r"(prefill T|decode ctx)=\d+")


class RollupInputError(UserInputError):
    """A sweep a rollup would price as something it is not."""


def check_rollup(path: str, calls: Sequence[Call], source: Mapping[str, Any]) -> None:
    """Raise :class:`RollupInputError` (one line naming ``path``) where the
    calls of a sweep are not whole passes of one model (see module doc)."""
    if "tokens" in source:
        _check_swept(path, calls, source)
    else:
        _check_names(path, calls)


def _check_swept(path: str, calls: Sequence[Call], source: Mapping[str, Any]) -> None:
    rows_of = {phase: q for phase, q, _ in scenarios_of(source["tokens"])}
    batch = int(source.get("batch", 1))
    sites: dict[str, dict[str, int]] = {}  # per phase, calls per "site (op)"
    for call in calls:
        shape = "x".join(map(str, call.shape))
        for site in call.sites:
            if site.phase not in rows_of:
                # no phase given reads as "pass" (a hand-written sweep's one pass)
                said = "no phase" if site.phase == "pass" else f"phase {site.phase!r}"
                raise RollupInputError(
                    f"{path}: {call.op} {shape}, site {site.site}: {said}, where its source's "
                    f"tokens sweep {', '.join(rows_of)}"
                )
            rows = batch * rows_of[site.phase]
            if call.op in ("linear", "linear_nobias") and call.shape[0] != rows:
                raise RollupInputError(
                    f"{path}: {call.op} {shape}, site {site.site} of {site.phase}: "
                    f"{call.shape[0]} row{'s' if call.shape[0] != 1 else ''} of A, where the "
                    f"source's batch {batch} times the phase's {rows_of[site.phase]} "
                    f"token{'s' if rows_of[site.phase] != 1 else ''} a sequence gives {rows}"
                )
            slot = sites.setdefault(site.phase, {})
            name = f"{site.site} ({call.op})"  # a site's op too: q_proj biased in one phase only
            slot[name] = slot.get(name, 0) + site.count
    phases = [p for p in rows_of if p in sites]
    if not phases:
        return
    first = phases[0]
    for phase in phases[1:]:
        if sites[phase] != sites[first]:
            raise RollupInputError(f"{path}: {_differs(phase, sites[phase], first, sites[first])}")


def _differs(phase: str, have: dict[str, int], first: str, want: dict[str, int]) -> str:
    """How the sites of ``phase`` differ from those of the ``first`` phase."""
    for site in sorted(set(have) | set(want)):
        if site not in have:
            return f"{phase} has no call site {site}, which {first} has: a pass is not whole"
        if site not in want:
            return f"{phase} has call site {site}, which {first} has not: a pass is not whole"
        if have[site] != want[site]:
            return (
                f"{phase} calls {site} {have[site]} time{'s' if have[site] != 1 else ''} a "
                f"pass, {first} {want[site]}: a pass is not whole"
            )
    return f"{phase} and {first} differ"  # unreachable: the maps differ


def _check_names(path: str, calls: Sequence[Call]) -> None:
    phases = list(dict.fromkeys(site.phase for call in calls for site in call.sites))
    named = [p for p in phases if _PHASE.fullmatch(p)]
    for phase in phases:
        if _PHASE.fullmatch(phase):
            continue
        near = difflib.get_close_matches(phase, named, n=1, cutoff=0.8)
        if near:
            raise RollupInputError(
                f"{path}: phase {phase!r} is a near miss of {near[0]!r}: one pass would be "
                "priced as two; name it so"
            )
