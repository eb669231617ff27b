"""Residency: what the levels inside a tier keep, run after run on warm data.

Tier ``k`` serves only what the levels inside it cannot keep. Those levels
together keep their resident capacity ``C``; a working set ``W`` that fits
(``W <= C``) never crosses, and one that does not leaves a ``1 - C/W`` share of
the traffic crossing. The registers, inside tier 0, never hold a working set.

A stream (an op with no reuse, walking its operands in the same order on
every call) that overflows a private cache between the L1 and the last level
keeps nothing in it: an LRU cache evicts each line before the next call
reaches it again, so all its traffic crosses (:func:`stream_miss_fraction`).
The last-level cache keeps a ``C/W`` share of it (its adaptive insertion
resists exactly this thrashing), and the L1 is left as above.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from graphsval_core.datamodel.target import MemoryTier


def resident_capacity(tiers: Sequence[MemoryTier], k: int) -> float:
    """What tiers ``0 .. k`` keep together: tier ``k``'s usable capacity, plus
    the tiers inside it while each holds lines the one inside it does not (a
    non-inclusive cache: Alder Lake's LLC and L2 add up)."""
    total = tiers[k].effective_capacity_bytes
    while k > 0 and tiers[k].non_inclusive:
        k -= 1
        total += tiers[k].effective_capacity_bytes
    return total


def inner_capacities(tiers: Sequence[MemoryTier]) -> np.ndarray:
    """Per tier, the resident capacity of the level inside it: 0 for tier 0
    (the registers), :func:`resident_capacity` of tiers ``0 .. k-1`` for tier
    ``k``. Returns ``(T,)``."""
    return np.array([0.0] + [resident_capacity(tiers, k) for k in range(len(tiers) - 1)])


def miss_fraction(working_set: np.ndarray, capacities: np.ndarray) -> np.ndarray:
    """Share of the traffic that crosses each tier, ``(n,)`` working sets
    against ``(T,)`` inner capacities: none when the working set fits; above
    capacity, the inner level keeps a ``C / W`` share resident (a replacement
    policy that retains what fits rather than thrashing), so ``1 - C / W``
    crosses. Continuous at ``W = C`` and growing with ``W``; 1 where the inner
    level keeps nothing (``C <= 0``). Returns ``(n, T)``."""
    share = np.clip(1.0 - capacities / working_set[:, None], 0.0, 1.0)
    return np.where(capacities > 0, share, 1.0)


def stream_miss_fraction(working_set: np.ndarray, capacities: np.ndarray) -> np.ndarray:
    """:func:`miss_fraction` for a stream (see module doc): at the tiers whose
    inner level is a cache beyond the L1 and inside the last level (every
    tier but the first two and the last), a working set above the inner
    capacity misses whole. Returns ``(n, T)``."""
    share = miss_fraction(working_set, capacities)
    inner = slice(2, max(2, len(capacities) - 1))
    over = working_set[:, None] > capacities[None, inner]
    share[:, inner] = np.where(over, 1.0, share[:, inner])
    return share
