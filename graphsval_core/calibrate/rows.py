"""Baseline rows through the model: a canonical order of the rows, and the
predicted latency and terms of many rows at once (batched per op and dtype)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from graphsval_core.datamodel.target import TargetSpec
from graphsval_core.files.baseline import BaselineRow
from graphsval_core.model.reference import predict


def canonical(rows: Sequence[BaselineRow]) -> list[BaselineRow]:
    """Rows in a fixed order (op, dtype, dims), whatever order the files came in."""
    return sorted(rows, key=lambda r: (r.op, r.dtype, r.dims, r.line))


def by_op_and_dtype(rows: Sequence[BaselineRow]) -> dict[tuple[str, str], list[int]]:
    """The indices of ``rows`` for each (op, dtype), in order of first appearance."""
    groups: dict[tuple[str, str], list[int]] = {}
    for i, r in enumerate(rows):
        groups.setdefault((r.op, r.dtype), []).append(i)
    return groups


def predict_rows(
    registry: Any, spec: TargetSpec, rows: Sequence[BaselineRow]
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Predicted latency of every row (batched per op and dtype), and per-row
    terms: ``compute_s``, ``memory_s``, ``launch_s``, ``pack_s`` (of which
    ``pack_a_s`` packs an A from main memory),
    ``tier_time`` (one column per tier of ``spec``), ``regime`` (the
    model's regime of the row, whose tolerance judges it) and
    ``library_overlap`` (whether its GEMM library's ``product_overlap``
    times it: not a linear in a kernel of dot products)."""
    latency = np.zeros(len(rows))
    names = ("compute_s", "memory_s", "launch_s", "pack_s", "pack_a_s")
    terms = {k: np.zeros(len(rows)) for k in names}
    tier_time = np.zeros((len(rows), len(spec.tiers)))
    regime = np.empty(len(rows), dtype=object)
    overlapped = np.zeros(len(rows), dtype=bool)
    for (op_name, dtype), index in by_op_and_dtype(rows).items():
        shapes = np.array([rows[i].dims for i in index], dtype=np.int64)
        p = predict(registry, spec, registry.op(op_name), shapes, dtype)
        latency[index] = p.latency_s
        for k in terms:
            terms[k][index] = getattr(p, k)
        tier_time[index] = p.time_per_tier_s
        regime[index] = p.regime
        if p.product_overlap is not None:
            overlapped[index] = ~np.isnan(p.product_overlap)
    terms["tier_time"] = tier_time
    terms["regime"] = regime
    terms["library_overlap"] = overlapped
    return latency, terms
