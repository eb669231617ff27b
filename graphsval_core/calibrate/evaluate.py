"""How well a calibration predicts its own rows: the share within the band of
each row's regime (in sample), and leave-one-out cross-validation (each row
predicted by a fit made without it: out-of-sample errors within the set).

A row is judged by the latency tolerance of the regime the model puts it in
(the project's tolerances file, by regime).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from attrs import frozen

from graphsval_core.calibrate.fit import fit_latency
from graphsval_core.calibrate.params import Param
from graphsval_core.calibrate.rows import canonical, predict_rows
from graphsval_core.datamodel.target import TargetSpec
from graphsval_core.files.baseline import BaselineRow
from graphsval_core.files.calibration import apply_constants
from graphsval_core.files.tolerances import band
from graphsval_core.model.reference import predict


@frozen
class LeaveOneOut:
    """Out-of-sample figures: over how many rows, the median and 90th
    percentile of the absolute relative error, and the share within the band."""

    rows: int
    median_abs_error: float
    within_band: float
    p90_abs_error: float


def model_regime(registry: Any, spec: TargetSpec, row: BaselineRow) -> str:
    """The model's own regime of one row (whose tolerance judges it)."""
    p = predict(registry, spec, registry.op(row.op), np.array([row.dims]), row.dtype)
    return str(p.regime[0])


def within_band(
    registry: Any,
    spec: TargetSpec,
    rows: Sequence[BaselineRow],
    predicted: Sequence[float],
    tolerances: dict[str, dict[str, float]],
) -> float:
    """The share of ``rows`` whose ``predicted`` latency (by ``spec``) is
    within the latency tolerance of the row's regime."""
    inside = sum(
        abs(p - r.latency_s) / r.latency_s <= tolerances[model_regime(registry, spec, r)]["latency"]
        for p, r in zip(predicted, rows, strict=True)
    )
    return inside / len(rows)


def leave_one_out(
    registry: Any,
    spec: TargetSpec,
    rows: Sequence[BaselineRow],
    params: Sequence[Param],
    tolerances: dict[str, dict[str, float]],
) -> LeaveOneOut:
    """Refit without each row and predict it: out-of-sample errors within the set.

    Each refit starts from the fit of all the rows; a regime without a
    tolerance of its own is judged by ``dram_bound``'s."""
    errors, inside = [], 0
    rows = canonical(rows)
    whole = fit_latency(registry, spec, rows, params)
    for i in range(len(rows)):
        rest = [r for j, r in enumerate(rows) if j != i]
        fit = fit_latency(registry, spec, rest, params, x_start=whole.x)
        model = apply_constants(spec, fit.values, "loo")
        latency, _ = predict_rows(registry, model, [rows[i]])
        err = (latency[0] - rows[i].latency_s) / rows[i].latency_s
        regime = model_regime(registry, model, rows[i])
        errors.append(err)
        inside += abs(err) <= band(tolerances, regime)["latency"]
    abs_err = np.abs(errors)
    return LeaveOneOut(
        rows=len(rows),
        median_abs_error=float(np.median(abs_err)),
        within_band=float(inside / len(rows)) if rows else float("nan"),
        p90_abs_error=float(np.quantile(abs_err, 0.9)),
    )
