"""Energy: ``ops * energy_per_op + sum_k bytes_k * energy_per_byte_k +
idle_power * latency``, and whether its average power exceeds the TDP."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class Energy(NamedTuple):
    """Per row: the compute, per-tier ``(n, T)`` and static terms, their sum,
    and whether ``energy / latency`` exceeds the TDP."""

    compute_j: np.ndarray
    per_tier_j: np.ndarray
    static_j: np.ndarray
    energy_j: np.ndarray
    over_tdp: np.ndarray


def energy(
    flops: np.ndarray,
    bytes_per_tier: np.ndarray,
    latency_s: np.ndarray,
    energy_per_op_j: float,
    energy_per_byte_j: np.ndarray,
    idle_power_w: float,
    tdp_w: float,
) -> Energy:
    """Dynamic energy of the ops and of every tier's bytes (``(T,)`` joules per
    byte), plus static power over the latency. The power is not clamped to the
    TDP; rows above it are flagged."""
    compute = flops * energy_per_op_j
    per_tier = bytes_per_tier * energy_per_byte_j
    static = idle_power_w * latency_s
    total = compute + per_tier.sum(axis=1) + static
    return Energy(compute, per_tier, static, total, total / latency_s > tdp_w)
