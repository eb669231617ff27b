"""The reference workload set every target's invariants are checked over: a
tiny (launch-bound), a medium and a large matmul, a linear layer, and a
vector_add whose working set lies in each tier, at every dtype of the target."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from graphsval_core.datamodel.dtypes import bytes_per_element

if TYPE_CHECKING:
    from graphsval_core.datamodel.target import MemoryTier

#: Reference matmul shapes (M, K, N): tiny (launch-bound), medium, large.
MATMULS: dict[str, tuple[int, int, int]] = {
    "tiny": (32, 32, 32),
    "medium": (512, 512, 512),
    "large": (8192, 8192, 8192),
}
#: The reference linear layer (B, IN, OUT): a batch of 32 through a 4096-wide layer.
LINEAR: tuple[int, int, int] = (32, 4096, 4096)


def vector_add_sizes(tiers: Sequence[MemoryTier], dtype: str) -> dict[str, int]:
    """One vector_add per tier of ``tiers`` (a target's hierarchy, innermost
    first), ``tier -> N``: its working set lies inside that tier and outside the
    tier within it (half of L1; the geometric mean of the capacities on either
    side of any other tier's boundary)."""
    bpe = bytes_per_element(dtype)
    out: dict[str, int] = {}
    for k, tier in enumerate(tiers):
        if k == 0:
            working_set = 0.5 * tier.effective_capacity_bytes
        else:
            working_set = math.sqrt(
                tiers[k - 1].effective_capacity_bytes * tier.effective_capacity_bytes
            )
        out[tier.name] = max(1, int(working_set / (3 * bpe)))
    return out


def reference_shapes(tiers: Sequence[MemoryTier], dtype: str) -> dict[str, list[Any]]:
    """The reference workload set of one dtype on a hierarchy: ``op -> shapes``."""
    return {
        "matmul": [list(s) for s in MATMULS.values()],
        "linear": [list(LINEAR)],
        "vector_add": [[n] for n in vector_add_sizes(tiers, dtype).values()],
    }


def workload_name(op: str, shape: Sequence[int], dtype: str) -> str:
    """``op shape dtype``, e.g. ``matmul 8192x8192x8192 int8``."""
    return f"{op} {'x'.join(str(int(d)) for d in shape)} {dtype}"
