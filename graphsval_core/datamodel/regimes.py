"""The regime vocabulary, derived from the tier names (DESIGN.md section 9).

A shape is bound by one layer of the hardware: the launch (``launch_bound``),
the arithmetic (``alu_bound``) or one memory tier (``<tier>_bound``). The
classifier may also answer ``ambiguous`` (near a boundary) or ``unsupported``
(the target has no peak for the dtype). Every list of regimes in graphsval is
this one, in this order: launch, compute, then the tiers innermost first.
"""

from __future__ import annotations

#: Tier names, innermost first.
TIER_NAMES: tuple[str, ...] = ("l1", "l2", "l3", "dram")

LAUNCH_BOUND = "launch_bound"
ALU_BOUND = "alu_bound"
AMBIGUOUS = "ambiguous"
UNSUPPORTED = "unsupported"

_SUFFIX = "_bound"


def tier_regime(tier: str) -> str:
    """The regime a tier validates: ``l2`` -> ``l2_bound``."""
    return f"{tier}{_SUFFIX}"


def regime_tier(regime: str) -> str | None:
    """The tier a tier regime names (``l2_bound`` -> ``l2``); None for launch and compute."""
    if regime in (LAUNCH_BOUND, ALU_BOUND) or not regime.endswith(_SUFFIX):
        return None
    return regime.removesuffix(_SUFFIX)


def short(regime: str) -> str:
    """A column heading: ``l2_bound`` -> ``l2``, ``ambiguous`` stays."""
    return regime.removesuffix(_SUFFIX)


#: Every regime, in report order: launch, compute, the tiers innermost first.
REGIMES: tuple[str, ...] = (LAUNCH_BOUND, ALU_BOUND, *(tier_regime(t) for t in TIER_NAMES))

#: Every label a sweep entry or the classifier may carry.
LABELS: tuple[str, ...] = (*REGIMES, AMBIGUOUS, UNSUPPORTED)


def order(regime: str) -> int:
    """Sort key of a label: its place in :data:`LABELS`, unknown ones last."""
    return LABELS.index(regime) if regime in LABELS else len(LABELS)
