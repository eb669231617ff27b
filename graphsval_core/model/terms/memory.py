"""Memory time: how long each tier takes to serve its traffic, and which tier
binds.

Tier ``k`` serves its bytes at its effective bandwidth, and no faster than its
access latency when any byte moves: ``t_k = max(bytes_k / bw_k, latency_k)``
if ``bytes_k > 0``, else 0. The memory time is the largest ``t_k``; that tier
is the **binding tier**, and the level inside it (the registers for tier 0)
the **residency tier**, where the working tile lives.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

#: The level inside tier 0.
REGISTERS = "registers"


class MemoryTime(NamedTuple):
    """Per row: every tier's time ``(n, T)``, the binding tier's index and its time."""

    time_per_tier_s: np.ndarray
    binding: np.ndarray
    memory_s: np.ndarray


def memory_time(
    bytes_per_tier: np.ndarray, bandwidth_bps: np.ndarray, latency_s: np.ndarray
) -> MemoryTime:
    """Each tier's time, ``max(bytes / bandwidth, latency)`` where bytes move and
    0 where none do, for ``(n, T)`` bytes and ``(T,)`` bandwidths and access
    latencies; the binding tier is the slowest (the innermost on a tie)."""
    time_per_tier = np.where(
        bytes_per_tier > 0, np.maximum(bytes_per_tier / bandwidth_bps, latency_s), 0.0
    )
    binding = np.argmax(time_per_tier, axis=1)
    return MemoryTime(time_per_tier, binding, time_per_tier[np.arange(len(binding)), binding])


def binding_tier_names(names: Sequence[str], binding: np.ndarray) -> np.ndarray:
    """The name of each row's binding tier."""
    return np.array(names)[binding]


def residency_tier_names(names: Sequence[str], binding: np.ndarray) -> np.ndarray:
    """The name of the level inside each row's binding tier: the registers
    inside tier 0, tier ``k - 1`` inside tier ``k``."""
    return np.array([REGISTERS, *names[:-1]])[binding]
