"""The Python API of predictions: a batch call for a target's spec, one for a
target's key, and a single-shape call that wraps them (all agree exactly)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from graphsval_core.datamodel.op import OpSpec
from graphsval_core.datamodel.target import TargetSpec
from graphsval_core.model.prediction import Prediction
from graphsval_core.plugins.registry import Registry


def predict_shapes(
    registry: Registry,
    target: TargetSpec,
    op: OpSpec | str,
    shapes: Any,
    dtype: str,
    predictor: str = "reference",
) -> Prediction:
    """Predict every row of ``shapes`` (dims; any nesting of integers) of ``op``
    (a spec or a name) on ``target`` (any spec, registered or not) at ``dtype``
    with the named predictor."""
    op_spec = registry.op(op) if isinstance(op, str) else op
    array = np.asarray(shapes, dtype=np.int64).reshape(-1, len(op_spec.dims))
    return registry.predictor(predictor).predict(registry, target, op_spec, array, dtype)


def predict_batch(
    registry: Registry,
    hw: str,
    op: str,
    shapes: Any,
    dtype: str,
    predictor: str = "reference",
) -> Prediction:
    """Predict every row of ``shapes`` (``(n, ndims)`` integers) for one target, op
    and dtype with the named predictor."""
    return predict_shapes(registry, registry.target(hw), op, shapes, dtype, predictor)


def predict_one(
    registry: Registry,
    hw: str,
    op: str,
    shape: str | Sequence[int],
    dtype: str,
    predictor: str = "reference",
) -> dict[str, Any]:
    """One shape (a shape string or dims): the JSON-ready record of the batch call."""
    op_spec = registry.op(op)
    dims = op_spec.parse_shape(shape) if isinstance(shape, str) else tuple(shape)
    return predict_batch(registry, hw, op, [dims], dtype, predictor).row(0)
