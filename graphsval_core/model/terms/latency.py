"""How compute and memory time overlap into the latency, and the regime.

Compute and memory overlap by a share ``overlap`` of the smaller of the two:
the larger is exposed whole, ``(1 - overlap) * min`` of the smaller is
exposed, and ``overlap * min`` is hidden. The regime is the largest of launch,
compute and memory time: ``launch_bound``, ``alu_bound`` or the binding
tier's regime.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from graphsval_core.datamodel.regimes import ALU_BOUND, LAUNCH_BOUND, tier_regime


class Overlap(NamedTuple):
    """Per row: the exposed compute and memory time and the hidden remainder."""

    exposed_compute_s: np.ndarray
    exposed_memory_s: np.ndarray
    hidden_s: np.ndarray


def overlap_terms(
    compute_s: np.ndarray, memory_s: np.ndarray, overlap: float | np.ndarray
) -> Overlap:
    """The larger of compute and memory (compute on a tie) is exposed whole, a
    ``1 - overlap`` share of the smaller is exposed and the rest hidden, so
    ``exposed_compute + exposed_memory + hidden = compute + memory``."""
    smaller = np.minimum(compute_s, memory_s)
    exposed_smaller = (1.0 - overlap) * smaller
    compute_wins = compute_s >= memory_s
    return Overlap(
        np.where(compute_wins, compute_s, exposed_smaller),
        np.where(compute_wins, exposed_smaller, memory_s),
        overlap * smaller,
    )


def product_overlap(
    compute_s: np.ndarray, time_per_tier_s: np.ndarray, memory_s: np.ndarray, share: float
) -> np.ndarray:
    """Per row, the overlap (as :func:`overlap_terms` takes it) of a matrix
    product whose library hides only a ``share`` of the shorter of its
    compute time and its memory time beyond the innermost tier: that time
    is ``1 - share`` exposed, and the innermost tier (the L1, which feeds the
    micro-kernel in its own pipeline) stays hidden. 1 where a row has no
    compute or no memory time."""
    times = np.asarray(time_per_tier_s, dtype=np.float64)
    outer = times[:, 1:].max(axis=1) if times.shape[1] > 1 else np.zeros(len(compute_s))
    smaller = np.minimum(compute_s, memory_s)
    serial = (1.0 - share) * np.minimum(compute_s, outer)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(smaller > 0, 1.0 - serial / smaller, 1.0)


def unhidden_time(
    exposed_compute_s: np.ndarray | float,
    exposed_memory_s: np.ndarray | float,
    compute_s: np.ndarray | float,
    memory_s: np.ndarray | float,
) -> np.ndarray:
    """The part of the shorter of compute and memory time a prediction did not
    hide (a GEMM library's ``product_overlap`` below 1): exposed compute +
    exposed memory - the longer of the two, at least 0 (0 where unknown)."""
    exposed = np.add(exposed_compute_s, exposed_memory_s)
    with np.errstate(invalid="ignore"):
        return np.clip(np.nan_to_num(exposed - np.maximum(compute_s, memory_s)), 0.0, None)


def regime(
    launch_s: np.ndarray,
    compute_s: np.ndarray,
    memory_s: np.ndarray,
    tier_names: Sequence[str],
    binding: np.ndarray,
) -> np.ndarray:
    """The largest of launch, compute and memory time, earlier on a tie:
    ``launch_bound``, ``alu_bound``, or the regime of the binding tier
    (``tier_names[binding]``)."""
    tier_regimes = np.array([tier_regime(name) for name in tier_names])[binding]
    which = np.argmax(np.stack([launch_s, compute_s, memory_s]), axis=0)
    return np.where(which == 0, LAUNCH_BOUND, np.where(which == 1, ALU_BOUND, tier_regimes))
