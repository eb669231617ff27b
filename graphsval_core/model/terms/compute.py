"""Compute time in waves of register tiles.

A compute unit works on one register-sized output tile at a time (the
target's ``register_tile_bytes`` of accumulators). The tiles are spread over
the active units in waves, and a partial wave costs a full one:
``waves = ceil(tiles / active)``, ``compute = waves * tile_ops / (achievable /
units)`` where ``achievable = peak * compute_fraction``, and the utilisation is
``ops / (waves * units * tile_ops)``. An op no larger than the target's
``parallel_grain_ops`` (PyTorch's ``at::internal::GRAIN_SIZE`` on a CPU) runs
on one unit, so its tiles go in waves of one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

if TYPE_CHECKING:
    from graphsval_core.datamodel.target import TargetSpec

#: Per-unit register footprint of an output tile when the spec gives none.
DEFAULT_REGISTER_TILE_BYTES: dict[str, float] = {
    "cpu": 2048.0,  # 32 vector registers of 64 B
    "gpu": 65536.0,  # a quarter of an SM's 256 KiB register file holding accumulators
    "systolic": 65536.0,
    "domain_flow": 4096.0,  # a 32x32 PE array's accumulators
}


def register_tile_bytes(target: TargetSpec) -> float:
    """The target's register tile: its spec's, else its architecture's default."""
    if target.register_tile_bytes is not None:
        return target.register_tile_bytes
    return DEFAULT_REGISTER_TILE_BYTES[target.architecture]


class Parallelism(NamedTuple):
    """Per row: whether the op wakes the thread team, and the units it runs on."""

    team: np.ndarray
    active_units: np.ndarray


def parallelism(flops: np.ndarray, units: int, grain_ops: float | None) -> Parallelism:
    """An op runs on all ``units`` (and wakes the team) when there is more than
    one unit and its ops exceed ``grain_ops`` (every op does when no grain is
    set); otherwise on one unit."""
    team = np.full(flops.shape, units > 1)
    if grain_ops is not None:
        team &= flops > grain_ops
    return Parallelism(team, np.where(team, units, 1))


class RegisterTiles(NamedTuple):
    """Per row: the number of register tiles and the ops in each."""

    count: np.ndarray
    tile_ops: np.ndarray


def product_tiles(gemm: np.ndarray, flops: np.ndarray, tile: np.ndarray) -> RegisterTiles:
    """A matrix product's register tiles: ``ceil(M/Mt) * ceil(N/Nt)`` output
    tiles of ``(Mt, Nt)`` (``tile``, ``(n, 3)``), each output element costing
    the same, so a tile does ``ops / (M*N) * Mt * Nt`` ops."""
    mt, nt = tile[:, 0], tile[:, 2]
    count = np.ceil(gemm[:, 0] / mt) * np.ceil(gemm[:, 2] / nt)
    tile_ops = flops / (gemm[:, 0] * gemm[:, 2]) * mt * nt
    return RegisterTiles(count, tile_ops)


def streaming_tiles(flops: np.ndarray, operands: np.ndarray, tile_bytes: float) -> RegisterTiles:
    """Register tiles of an op with no reuse: a tile holds the ops whose operands
    fill ``tile_bytes``, ``min(ops, max(1, floor(tile_bytes / (bytes / ops))))``,
    and there are ``ceil(ops / tile_ops)`` of them."""
    bytes_per_op = operands / flops
    tile_ops = np.minimum(flops, np.maximum(1.0, np.floor(tile_bytes / bytes_per_op)))
    return RegisterTiles(np.ceil(flops / tile_ops), tile_ops)


class ComputeTime(NamedTuple):
    """Per row: waves, compute time and utilisation of the units."""

    waves: np.ndarray
    compute_s: np.ndarray
    utilisation: np.ndarray


def compute_waves(
    flops: np.ndarray,
    tiles: RegisterTiles,
    active_units: np.ndarray,
    units: int,
    achievable_ops_per_s: float,
) -> ComputeTime:
    """``waves = ceil(tiles / active)``; each wave takes one tile's ops at one
    unit's share of the achievable rate, ``tile_ops / (achievable / units)``;
    utilisation ``ops / (waves * units * tile_ops)``."""
    waves = np.ceil(tiles.count / active_units)
    compute_s = waves * tiles.tile_ops / (achievable_ops_per_s / units)
    utilisation = flops / (waves * units * tiles.tile_ops)
    return ComputeTime(waves, compute_s, utilisation)
