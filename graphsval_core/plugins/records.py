"""Typed records that plugins hand to the core through hooks (besides targets
and ops): predictors and the constants they declare, consistency checks,
measurer probes and measurements."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from attrs import field, frozen


@frozen(kw_only=True)
class PredictorConstant:
    """One constant a predictor used, as drift attribution reports it.

    ``regime`` is the regime whose cells the constant governs (``alu_bound``
    for a peak, ``dram_bound`` for a bandwidth, ``launch_bound`` for a launch
    overhead; None: every regime, e.g. a static power); ``quantity`` is what
    it governs, ``latency`` or ``energy``. What a failing cell's measurements
    imply for it follows from its ``unit``: a rate (a unit ending in ``/s``:
    ``FLOP/s``, ``B/s``) scales inversely with the time it governs, a time
    (``s``) adds to the latency, a power (``W``) adds its share of energy over
    the measured time, and any other unit scales with the quantity.
    """

    name: str
    value: float
    unit: str
    regime: str | None
    quantity: str = "latency"


@frozen(kw_only=True)
class PredictorSpec:
    """A named analytical model.

    ``predict(registry, target, op, shapes, dtype)`` takes a batch of shapes
    and returns a :class:`graphsval_core.model.prediction.Prediction`;
    ``constants(registry, target, op, dtype)``, optional, returns the
    :class:`PredictorConstant` records it used for that target, op and dtype
    (None: it declares none, so attribution names no constant)."""

    name: str
    description: str
    predict: Callable[..., Any]
    constants: Callable[..., Any] | None = None


@frozen(kw_only=True)
class ConsistencyCheck:
    """An invariant to run for a target: ``run(target, context)`` returns an
    iterable of :class:`graphsval_core.datamodel.outcome.Outcome` (build them with
    :func:`graphsval_core.datamodel.outcome.outcome`); the context is a
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
