"""The regime classifier, and the measured regime inferred from a measurement.

``classify`` is the reference model's own regime function with margins (one
source of truth: the same hierarchy, peaks and launch overhead as the model):

- ``unsupported`` when the target has no peak for the dtype;
- ``ambiguous`` when the two largest of the model's terms (launch, compute and
  the memory time of every tier, so that two tiers nearly tied for binding
  count too) are within 20% of each other (the larger is less than 1.2x the
  other),
  or when the working set is within +-20% of a tier capacity the model compares
  it with (the usable capacity of every tier but the outermost);
- otherwise the model's regime.

It never reads measurements. :func:`measured_regime` infers the regime of a
measurement with the same peaks (DESIGN.md section 9): ``launch_bound`` when the
measured time is within a small multiple of the launch overhead; ``alu_bound``
when the achieved op rate is at least 70% of the achievable peak; a tier's
regime when the achieved bandwidth at that tier (the model's bytes for that
tier over the measured time) is at least 70% of its effective bandwidth;
otherwise ``ambiguous``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from attrs import frozen

from graphsval_core.datamodel.regimes import (
    ALU_BOUND,
    AMBIGUOUS,
    LAUNCH_BOUND,
    UNSUPPORTED,
    tier_regime,
)

if TYPE_CHECKING:
    from graphsval_core.datamodel.op import OpSpec
    from graphsval_core.datamodel.target import TargetSpec
    from graphsval_core.model.prediction import Prediction
    from graphsval_core.plugins.registry import Registry


#: Two terms within this ratio of each other make a shape ambiguous.
TERM_MARGIN = 1.2
#: A working set within this relative distance of a tier capacity is ambiguous.
CAPACITY_MARGIN = 0.2
#: Measured time within this multiple of the launch overhead is launch_bound.
LAUNCH_MULTIPLE = 2.0
#: Achieved fraction of the achievable peak or bandwidth that places a regime.
ACHIEVED_FRACTION = 0.7


@frozen
class Classification:
    """Per-shape classifier outcome, arrays of length n."""

    label: np.ndarray  # regime, "ambiguous" or "unsupported"
    model_regime: np.ndarray  # the model's own regime (never ambiguous)
    near_boundary: np.ndarray  # bool
    term_ratio: np.ndarray  # largest term / second largest
    prediction: Prediction | None


def _near_capacity(working_set: np.ndarray, capacities: list[float]) -> np.ndarray:
    near = np.zeros(working_set.shape, dtype=bool)
    for cap in capacities:
        near |= np.abs(working_set / cap - 1.0) <= CAPACITY_MARGIN
    return near


def classify_details(
    registry: Registry,
    target: TargetSpec,
    op: OpSpec,
    shapes: Any,
    dtype: str,
    prediction: Prediction | None = None,
) -> Classification:
    """Classify a batch of shapes of one (target, op, dtype).

    ``prediction``: the reference model's prediction of these very shapes, when
    the caller already has it (the harness validating the reference model).
    """
    from graphsval_core.model.reference import predict

    shapes = np.asarray(shapes, dtype=np.int64).reshape(-1, len(op.dims))
    n = shapes.shape[0]
    if dtype not in target.peak_ops_per_s:
        label = np.full(n, UNSUPPORTED, dtype=object)
        return Classification(label, label.copy(), np.zeros(n, bool), np.full(n, np.inf), None)
    p = prediction if prediction is not None else predict(registry, target, op, shapes, dtype)
    terms = np.sort(
        np.concatenate([p.launch_s[:, None], p.compute_s[:, None], p.time_per_tier_s], axis=1),
        axis=1,
    )
    ratio = terms[:, -1] / np.maximum(terms[:, -2], 1e-300)
    tiers = registry.memory_hierarchy(target)
    near_cap = _near_capacity(p.working_set_bytes, [t.effective_capacity_bytes for t in tiers[:-1]])
    near = (ratio < TERM_MARGIN) | near_cap
    label = np.where(near, AMBIGUOUS, p.regime).astype(object)
    return Classification(label, p.regime.astype(object), near, ratio, p)


def classify(
    registry: Registry, target: TargetSpec, op: OpSpec, shapes: Any, dtype: str
) -> np.ndarray:
    """The regime label of every shape: a regime, ``ambiguous`` or ``unsupported``."""
    return classify_details(registry, target, op, shapes, dtype).label


def measured_regime(
    prediction: Prediction, measured_latency_s: np.ndarray, target: TargetSpec
) -> np.ndarray:
    """Infer the regime of measurements from achieved rates against the model's
    peaks and bandwidths (the same constants the model uses)."""
    t = np.asarray(measured_latency_s, dtype=np.float64)
    n = t.shape[0]
    out = np.full(n, AMBIGUOUS, dtype=object)
    valid = np.isfinite(t) & (t > 0)
    achievable = prediction.achievable_ops_per_s or 0.0
    scores = []
    if prediction.flops is not None and achievable > 0:
        rate = np.full(n, achievable)
        if prediction.narrow_n is not None and prediction.compute_s is not None:
            # a row in its library's narrow kernel, at the rate that kernel allows it
            rate = np.where(prediction.narrow_n, prediction.flops / prediction.compute_s, rate)
        scores.append((ALU_BOUND, prediction.flops / np.where(valid, t, np.inf) / rate))
    if prediction.bytes_per_tier is not None:
        for k, name in enumerate(prediction.tier_names):
            bw = prediction.tier_bandwidth_bps[k]
            if prediction.row_bandwidth_bps is not None:  # rows at their own rates
                bw = np.asarray(prediction.row_bandwidth_bps, dtype=np.float64)[:, k]
            achieved = prediction.bytes_per_tier[:, k] / np.where(valid, t, np.inf)
            scores.append((tier_regime(name), achieved / bw))
    if scores:
        names = np.array([s[0] for s in scores], dtype=object)
        matrix = np.stack([s[1] for s in scores], axis=1)
        best = np.argmax(matrix, axis=1)
        best_score = matrix[np.arange(n), best]
        out = np.where(best_score >= ACHIEVED_FRACTION, names[best], AMBIGUOUS).astype(object)
    per_call = prediction.launch_s
    if per_call is None:
        per_call = np.full(n, target.launch_for(prediction.dtype))
    launch = valid & (t <= LAUNCH_MULTIPLE * np.asarray(per_call, dtype=np.float64))
    out[launch] = LAUNCH_BOUND
    out[~valid] = AMBIGUOUS
    return out
