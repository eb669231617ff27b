"""Interleaved rounds of one shape: their median, their spread, and the rounds
that lie far outside what the others and their own samples predict.

Each round of a shape is a full adaptive timing (its median and the 95%
confidence half-width of that median). A round is an outlier when its median
is further from the median of all rounds than the largest of

- ``OUTLIER_MADS`` robust standard deviations of the rounds (1.4826 x MAD),
- ``OUTLIER_CIS`` times its own confidence half-width, and
- ``OUTLIER_FLOOR`` of the median (the quiet run-to-run floor of these VMs is
  3-8%: a round 15% away is not an outlier by itself),

which a stalled round (a descheduled process, a neighbour's burst) is by far,
and a quiet round essentially never is. The capture measures an outlier round
again after the machine settles, at most ``MAX_REMEASURES`` times; a shape
whose rounds will not settle is kept and marked suspect with the reason.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence

from graphsval_core.plugins.records import Measurement

OUTLIER_MADS = 5.0
OUTLIER_CIS = 4.0
OUTLIER_FLOOR = 0.15
#: An outlier round is measured again at most this many times.
MAX_REMEASURES = 2
#: The columns of a correctness verdict (measured in one round of a shape).
VERDICT_COLUMNS = ("verdict", "mean_rel_l1", "max_abs", "max_rel", "rtol", "atol", "check_scope")
#: Fewer rounds than this cannot tell an outlier from the rest.
MIN_ROUNDS_FOR_OUTLIERS = 3


def _ci(m: Measurement) -> float:
    try:
        return float(m.extras.get("spread_ci_rel", 0.0) or 0.0)
    except (TypeError, ValueError):
        return 0.0


def outlier_rounds(rounds: Mapping[int, Measurement]) -> dict[int, float]:
    """``round -> its median / the median of all rounds`` for each outlier round."""
    timed = {r: m.latency_s for r, m in rounds.items() if m.latency_s is not None}
    if len(timed) == 2:  # two rounds cannot say which is off: both, when they disagree
        low, high = sorted(timed.values())
        if low > 0 and high / low - 1.0 > 2 * OUTLIER_FLOOR:
            mid = (low + high) / 2.0
            return {r: v / mid for r, v in timed.items()}
        return {}
    if len(timed) < MIN_ROUNDS_FOR_OUTLIERS:
        return {}
    median = statistics.median(timed.values())
    if median <= 0:
        return {}
    mad = statistics.median(abs(v - median) for v in timed.values())
    out = {}
    for r, value in timed.items():
        limit = max(
            OUTLIER_MADS * 1.4826 * mad,
            OUTLIER_CIS * _ci(rounds[r]) * value,
            OUTLIER_FLOOR * median,
        )
        if abs(value - median) > limit:
            out[r] = value / median
    return out


def combine_rounds(results: Sequence[Measurement]) -> tuple[Measurement, float]:
    """Median of the rounds' medians; spread = (max - min) / 2 / median."""
    latencies = [r.latency_s for r in results if r.latency_s is not None]
    energies = [r.energy_j for r in results if r.energy_j is not None]
    median = statistics.median(latencies)
    spread = (max(latencies) - min(latencies)) / 2.0 / median if median > 0 else 0.0
    best = min(results, key=lambda r: abs((r.latency_s or 0) - median))
    notes = sorted({n for r in results for n in r.notes.split("; ") if n})
    checked = [r for r in results if r.extras.get("verdict")]  # a shape is checked once
    failed_checks = [r for r in checked if r.extras.get("verdict") == "FAIL"]
    extras = dict((failed_checks[0] if failed_checks else best).extras)
    if checked and not failed_checks:
        extras.update({k: v for k, v in checked[0].extras.items() if k in VERDICT_COLUMNS})
    m = Measurement(
        latency_s=median,
        energy_j=statistics.median(energies) if energies else None,
        trial_count=sum(r.trial_count for r in results),
        notes="; ".join(notes),
        extras=extras,
    )
    return m, spread


def unsettled_reason(outliers: Mapping[int, float], rounds: int, remeasures: int) -> str:
    """The suspect reason of a shape whose outlier rounds did not settle."""
    worst = max(outliers.items(), key=lambda kv: abs(kv[1] - 1.0))
    which = ", ".join(str(r + 1) for r in sorted(outliers))
    return (
        f"round(s) {which} of {rounds} still outside the others' spread after "
        f"{remeasures} re-measure(s) (worst {worst[1]:.2f}x the median)"
    )
