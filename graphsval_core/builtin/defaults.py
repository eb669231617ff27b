"""Built-in default hook implementations, registered ``trylast`` so that any
plugin can override them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from graphsval_core import hookimpl
from graphsval_core.datamodel.dtypes import bytes_per_element
from graphsval_core.datamodel.op import OpSpec
from graphsval_core.datamodel.target import MemoryTier, TargetSpec

if TYPE_CHECKING:
    import numpy as np


@hookimpl(trylast=True)
def graphsval_memory_hierarchy(target: TargetSpec) -> Sequence[MemoryTier]:
    """The tiers written in the target's spec."""
    return target.tiers


@hookimpl(trylast=True)
def graphsval_residency_window(
    target: TargetSpec, op: OpSpec, shapes: np.ndarray, dtype: str, tier: MemoryTier
) -> np.ndarray | None:
    """The seeds' V5 heuristic: a square output tile fitting the tier's capacity
    (a unit's share of a per-unit tier), clamped to the shape; K is not tiled.
    Ops with no reuse (no ``gemm_dims``) get no tile."""
    if op.gemm_dims is None:
        return None
    from graphsval_core.model.terms.traffic import square_tile, tile_capacity_bytes

    return square_tile(op.gemm_dims(shapes), tile_capacity_bytes(tier), bytes_per_element(dtype))
