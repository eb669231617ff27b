"""Registers the reference model as the predictor ``reference``, through the
same hook any plugin uses."""

from __future__ import annotations

from collections.abc import Iterable

from graphsval_core import hookimpl
from graphsval_core.plugins.records import PredictorSpec


def _predict(registry, target, op, shapes, dtype):  # type: ignore[no-untyped-def]
    from graphsval_core.model.reference import predict

    return predict(registry, target, op, shapes, dtype)


@hookimpl
def graphsval_register_predictors() -> Iterable[PredictorSpec]:
    return [
        PredictorSpec(
            name="reference",
            description="per-tier operational analysis (DESIGN.md section 9): the binding "
            "tier's traffic over its bandwidth vs peak compute in waves, plus launch; "
            "energy per op, per byte per tier, and static power",
            predict=_predict,
        )
    ]
