"""Typed records that plugins hand to the core through hooks (besides targets
and ops): predictors, consistency checks, measurer probes and measurements."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from attrs import field, frozen


@frozen(kw_only=True)
class PredictorSpec:
    """A named analytical model. ``predict`` takes a batch and returns predictions."""

    name: str
    description: str
    predict: Callable[..., Any]


@frozen(kw_only=True)
class ConsistencyCheck:
    """An invariant to run for a target: ``run(target, context)`` returns an
    iterable of :class:`graphsval_core.consistency.outcome.Outcome` (build them with
    :func:`graphsval_core.consistency.outcome.outcome`); the context is a
    :class:`graphsval_core.consistency.context.CheckContext`."""

    name: str
    description: str
    run: Callable[..., Any]


@frozen
class ProbeResult:
    """Whether a target's measurer can run on this machine, and why not.

    ``energy`` says what energy source would be used, or why there is none.
    """

    available: bool
    reason: str = ""
    energy: str = ""


@frozen(kw_only=True)
class Measurement:
    """One ground-truth measurement of one (target, op, shape, dtype).

    ``latency_s`` is ``None`` when the shape failed (the note says why);
    ``energy_j`` is ``None`` when there is no trustworthy energy.
    ``extras`` holds the baseline's extra columns (spread, verdict, settings).
    """

    latency_s: float | None
    energy_j: float | None
    trial_count: int
    notes: str = ""
    extras: Mapping[str, Any] = field(factory=dict)
