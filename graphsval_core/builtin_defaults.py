"""Built-in default hook implementations, registered ``trylast`` so that any
plugin can override them."""

from __future__ import annotations

from collections.abc import Sequence

from graphsval_core import hookimpl
from graphsval_core.target_spec import MemoryTier, TargetSpec


@hookimpl(trylast=True)
def graphsval_memory_hierarchy(target: TargetSpec) -> Sequence[MemoryTier]:
    """The tiers written in the target's spec."""
    return target.tiers
