"""Two modes in a shape's rounds: a measurement whose median is one of two states.

A capture times each shape in interleaved rounds (``round_latencies_s``).
Quiet rounds agree to a few percent; a stalled round lies alone far away
(the capture measures it again). Some shapes do neither: their rounds fall
into two groups far apart, each tight, because the time depends on what ran
before them. The shipped host data show it for products whose output is
just above glibc's 32 MiB mmap threshold: a round that finds enough free,
already faulted memory at the top of the heap (a previous shape grew it)
writes its output at memory speed, one that maps it fresh pays the page
faults, 2.7 ms against 18 ms for a 21520x21x944 bf16 matmul, as each
round's shuffled order puts another shape before it. The latency of such a
row depends on the order of the run (its median is whichever state won the
vote), so it is suspect: a fit skips it and a verdict does not count it.

:func:`two_modes` finds the split: sorted, the rounds have a gap between
neighbours of at least :data:`MODE_GAP` (the slower over the faster, minus
one) with :data:`MODE_MIN_ROUNDS` or more rounds on each side, and each side
spans at most half that gap (a wide drift is a spread, not two modes).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable
from typing import NamedTuple

from graphsval_core.datamodel.units import fmt_seconds

#: The least gap between two modes: twice the 15% by which a single round
#: may stray before it is an outlier (``measure.rounds.OUTLIER_FLOOR``; a
#: test keeps the two in step; the quiet floor of these VMs is 3-8%).
MODE_GAP = 0.3
#: Each mode holds at least this many rounds (one far round is an outlier).
MODE_MIN_ROUNDS = 2
#: How the reason of a two-mode row begins (capture and read-time checks share it).
MODES_REASON = "rounds fall into two modes"


class Modes(NamedTuple):
    """The two modes of a shape's rounds: each one's median and its rounds."""

    fast_s: float
    fast_rounds: int
    slow_s: float
    slow_rounds: int

    def reason(self) -> str:
        """The one-line suspect reason (no ``;``)."""
        return (
            f"{MODES_REASON}, {self.fast_rounds} at {fmt_seconds(self.fast_s)} and "
            f"{self.slow_rounds} at {fmt_seconds(self.slow_s)}: its time depends on what ran "
            "before it (such as an output mapped fresh in some rounds and found in the heap "
            "in others), not on the shape alone"
        )


def two_modes(latencies: Iterable[float | None]) -> Modes | None:
    """The two modes of ``latencies`` (one per round; None, non-finite and
    non-positive values are left out), or None when they are one group with
    at most a lone straggler (see module doc)."""
    values = sorted(v for v in latencies if v is not None and math.isfinite(v) and v > 0)
    if len(values) < 2 * MODE_MIN_ROUNDS:
        return None
    cuts = range(MODE_MIN_ROUNDS, len(values) - MODE_MIN_ROUNDS + 1)
    cut = max(cuts, key=lambda i: values[i] / values[i - 1])
    gap = values[cut] / values[cut - 1] - 1.0
    fast, slow = values[:cut], values[cut:]
    within = max(fast[-1] / fast[0], slow[-1] / slow[0]) - 1.0
    if gap < MODE_GAP or within > gap / 2.0:
        return None
    return Modes(statistics.median(fast), len(fast), statistics.median(slow), len(slow))


def round_latencies(text: str | None) -> list[float]:
    """The seconds of a ``round_latencies_s`` column (spaces between them);
    an empty or unreadable column gives none (the baseline reader refuses a
    malformed one before this)."""
    if not text:
        return []
    try:
        return [float(v) for v in text.split()]
    except ValueError:
        return []
