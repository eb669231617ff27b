"""The TPU's own consistency check: systolic-array fill.

A TPU's matrix unit is a weight-stationary systolic array of S x S MACs: a
K x N weight block is split into ``ceil(K/S) * ceil(N/S)`` array loads
("passes"), spread over the chip's A arrays, and the M rows of the
activations stream through each. Of the ``A * S^2`` MACs, a product keeps at
most ``fill = K * N / (A * S^2 * ceil(passes / A))`` busy, so no prediction
may compute faster than ``fill * peak``. The check ``tpu.systolic_fill``
compares the model's compute rate (ops / compute time) with that ceiling for
the reference matrix workloads and for probes around one array's side.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from graphsval_core.plugin_api import (
    LINEAR,
    MATMULS,
    CheckContext,
    ConsistencyCheck,
    Outcome,
    TargetSpec,
    outcome,
    workload_name,
)

CHECK = "tpu.systolic_fill"

#: ``target -> (array side S, number of arrays A)`` (hardware-facts.md): TPU v4
#: has 2 TensorCores x 4 MXUs of 128x128; the Edge TPU one array, commonly
#: reported as 64x64 (the figure its clock is derived from in targets.py).
ARRAYS: dict[str, tuple[int, int]] = {"tpu_v4": (128, 8), "coral_edge_tpu": (64, 1)}

#: The K of the probes: long enough that compute, not the launch, is what is probed.
PROBE_K = 4096


def fill(shape: list[int], side: int, arrays: int) -> float:
    """The most of the arrays' MACs a product (M, K, N) can keep busy."""
    _, k, n = shape
    passes = math.ceil(k / side) * math.ceil(n / side)
    return k * n / (arrays * side * side * math.ceil(passes / arrays))


def systolic_fill(target: TargetSpec, ctx: CheckContext) -> list[Outcome]:
    """The model never computes faster than the systolic arrays' fill allows."""
    side, arrays = ARRAYS[target.key]
    probes = [[d, PROBE_K, d] for d in (side // 2, side, side + 1, 4 * side)]
    workloads = {
        "matmul": [list(s) for s in MATMULS.values()] + probes,
        "linear": [list(LINEAR)],
    }
    cases: dict[str, dict[str, Any]] = {}
    bad: list[str] = []
    for dtype in target.dtypes:
        peak = target.peak_ops_per_s[dtype]
        for op, shapes in workloads.items():
            p = ctx.predict(target, op, shapes, dtype)
            for i, shape in enumerate(shapes):
                name = workload_name(op, shape, dtype)
                rate = float(p.flops[i] / p.compute_s[i]) / peak
                ceiling = fill(shape, side, arrays)
                cases[name] = {"model_rate_of_peak": rate, "array_fill": ceiling}
                if rate > ceiling * (1 + 1e-9):
                    bad.append(name)
    message = (
        f"no workload computes faster than its fill of the {arrays} x {side}x{side} "
        f"array{'s' if arrays > 1 else ''} allows"
    )
    if bad:
        worst = max(bad, key=lambda n: cases[n]["model_rate_of_peak"] / cases[n]["array_fill"])
        c = cases[worst]
        message = (
            f"{len(bad)} of {len(cases)} workloads compute faster than the arrays' fill allows; "
            f"worst: {worst} at {c['model_rate_of_peak']:.1%} of peak, fill "
            f"{c['array_fill']:.1%} ({', '.join(bad)})"
        )
    return [
        outcome(
            CHECK,
            target.key,
            not bad,
            message,
            numbers={"array_side": side, "arrays": arrays, "workloads": cases},
            workload=worst if bad else None,
            coefficient="compute_units / register_tile_bytes" if bad else None,
            expected=ctx.expected(CHECK, target),
        )
    ]


def checks(target: TargetSpec) -> Iterable[ConsistencyCheck]:
    """The systolic-fill check, for the TPU targets whose arrays are known."""
    if target.key not in ARRAYS:
        return []
    return [
        ConsistencyCheck(
            name=CHECK,
            description="no prediction computes faster than the systolic arrays' fill allows",
            run=systolic_fill,
        )
    ]
