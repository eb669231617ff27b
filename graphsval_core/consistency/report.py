"""Consistency results for people: a headline per target, then what did not
plainly pass, then a total (``graphsval check``, and ``graphsval validate``
when nothing else is installed)."""

from __future__ import annotations

from collections.abc import Sequence

from graphsval_core.consistency.runner import TargetResult
from graphsval_core.datamodel.outcome import PASS, SKIP, STATUSES


def report_lines(results: Sequence[TargetResult], verbose: bool = False) -> list[str]:
    """Per target its headline, then every outcome that is not a plain pass
    (every outcome with ``verbose``), then a total."""
    lines = []
    for result in results:
        lines.append(result.headline())
        for o in result.outcomes:
            if o.status == PASS and not verbose:
                continue
            lines.append("  " + o.line(reason=False))
            if o.status != PASS and (o.workload or o.coefficient):
                lines.append(
                    f"    workload: {o.workload or '-'}; coefficient: {o.coefficient or '-'}"
                )
            if o.reason and o.status != SKIP:
                lines.append(f"    reason: {o.reason}")
    counts = {s: sum(r.count(s) for r in results) for s in STATUSES}
    skipped = sum(1 for r in results if r.skip_reason)
    lines.append(
        f"{len(results)} target{'' if len(results) == 1 else 's'} ({skipped} skipped): "
        f"{counts['pass']} checks pass, "
        f"{counts['fail']} fail, {counts['expected_failure']} expected failures, "
        f"{counts['unexpected_pass']} unexpected passes, {counts['skip']} skipped"
    )
    return lines
