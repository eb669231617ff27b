"""A complete predictor plugin: the naive roofline.

Latency is the launch overhead plus the slower of the arithmetic at the
dtype's datasheet peak and the operands' bytes streamed once from DRAM at its
datasheet bandwidth; energy is the static power over that time plus the
energy of the operations and of the DRAM traffic. It reports no breakdown
terms, and declares the four constants it used, so drift attribution names
them. Register it in your distribution's pyproject.toml:

    [project.entry-points.graphsval]
    naive = "graphsval_naive.plugin"

then run `graphsval validate --predictor naive`.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from graphsval_core.plugin_api import (
    ALU_BOUND,
    LAUNCH_BOUND,
    OpSpec,
    Prediction,
    PredictorConstant,
    PredictorSpec,
    Registry,
    TargetSpec,
    bytes_per_element,
    hookimpl,
    tier_regime,
)

graphsval_api_version = "2.1"

NAME = "naive"


def _figures(registry: Registry, target: TargetSpec, dtype: str) -> dict[str, float]:
    """The datasheet figures the model uses (never the calibrated ones)."""
    sheet = registry.datasheet_target(target.key)
    dram = sheet.tiers[-1]
    return {
        "peak": sheet.peak_ops_per_s[dtype],
        "bandwidth": dram.peak_bandwidth_bps,
        "launch": sheet.launch_overhead_s,
        "static": sheet.idle_power_w,
        "per_op": sheet.energy_per_op_j[dtype],
        "per_byte": dram.energy_per_byte_j,
    }


def predict(
    registry: Registry, target: TargetSpec, op: OpSpec, shapes: np.ndarray, dtype: str
) -> Prediction:
    """Latency, energy, regime and binding tier for each shape of the batch."""
    f = _figures(registry, target, dtype)
    flops = np.asarray(op.flops(shapes), dtype=np.float64)
    moved = np.asarray(op.working_set_bytes(shapes, bytes_per_element(dtype)), dtype=np.float64)
    compute = flops / f["peak"]
    memory = moved / f["bandwidth"]
    busy = np.maximum(compute, memory)
    latency = f["launch"] + busy
    energy = f["static"] * latency + f["per_op"] * flops + f["per_byte"] * moved
    dram = registry.datasheet_target(target.key).tiers[-1].name
    regime = np.where(compute >= memory, ALU_BOUND, tier_regime(dram))
    regime = np.where(f["launch"] >= busy, LAUNCH_BOUND, regime)
    return Prediction(
        predictor=NAME,
        target=target.key,
        op=op.name,
        dtype=dtype,
        dims=op.dims,
        shapes=np.asarray(shapes),
        latency_s=latency,
        energy_j=energy,
        regime=regime,
        binding_tier=np.full(len(latency), dram),
    )


def constants(
    registry: Registry, target: TargetSpec, op: OpSpec, dtype: str
) -> list[PredictorConstant]:
    """The constants `predict` used for `target` at `dtype`."""
    f = _figures(registry, target, dtype)
    unit = "OP/s" if dtype.startswith("int") else "FLOP/s"
    dram = registry.datasheet_target(target.key).tiers[-1].name
    return [
        PredictorConstant(name=f"peak {dtype}", value=f["peak"], unit=unit, regime=ALU_BOUND),
        PredictorConstant(
            name=f"{dram.upper()} bandwidth",
            value=f["bandwidth"],
            unit="B/s",
            regime=tier_regime(dram),
        ),
        PredictorConstant(name="launch overhead", value=f["launch"], unit="s", regime=LAUNCH_BOUND),
        PredictorConstant(
            name="static power", value=f["static"], unit="W", regime=None, quantity="energy"
        ),
    ]


@hookimpl
def graphsval_register_predictors() -> Iterable[PredictorSpec]:
    return [
        PredictorSpec(
            name=NAME,
            description="naive roofline: launch + max(compute at peak, operands from DRAM)",
            predict=predict,
            constants=constants,
        )
    ]
