"""The stable surface for plugins: everything a plugin, and its tests, import from graphsval.

A plugin imports from this module only (and, in its tests, the pytest plugin
:mod:`graphsval_core.testing`); the core's own layout may change under it
without breaking it. The names, by what a plugin does with them:

- **declare itself**: :data:`hookimpl` (the hook marker), :data:`PLUGIN_API_VERSION`;
- **describe targets and ops**: :class:`TargetSpec`, :class:`MemoryTier`,
  :class:`OpSpec`, :class:`SpecError`, the provenance helpers :func:`datasheet`,
  :func:`derived`, :func:`estimated`, :func:`detected`, :func:`calibrated`
  (with :class:`Provenance`, :class:`Sourced`), :func:`bytes_per_element`,
  :data:`KNOWN_DTYPES`, glibc's fresh-mapping size :func:`first_touch_threshold`,
  target spec files :func:`read_spec` / :func:`write_spec`,
  and the plugin's packaged files :func:`packaged_files`;
- **answer hooks** with records: :class:`ProbeResult`, :class:`Measurement`,
  :class:`PredictorSpec` (with the :class:`PredictorConstant` records a
  predictor declares), :class:`ConsistencyCheck`;
- **measure** as every measurer does: :class:`CaptureSettings`,
  :func:`measure_workload`, :func:`wall_clock_block`, the energy meter contract
  (:class:`EnergyMeter`, :class:`EnergyReading`, :class:`NoEnergy`),
  :class:`PowerSampler` and :class:`PowerIntegrator`, CUDA-event timing
  (:func:`cuda_event_block`, :func:`cuda_sync`, :func:`numerics`,
  :func:`setting`, :data:`LAUNCH_IN_TIMING`, :data:`FLUSH_L2_FACTOR`), and
  how a capture writes a measurement (:class:`CaptureItem`, :func:`measurement_row`);
- **model** a residency window on the reference model's tiles:
  :func:`square_tile`, :func:`tile_capacity_bytes`, :func:`gemm_traffic_bytes`,
  :func:`write_allocates`, :func:`product_overwrites`; predict with
  :class:`Prediction` and the regime names (:data:`LAUNCH_BOUND`,
  :data:`ALU_BOUND`, :func:`tier_regime`, :data:`REGIMES`);
- **check** invariants: :class:`CheckContext` (handed to every check),
  :class:`Outcome`, :func:`outcome`, :func:`skipped`, the statuses
  (:data:`PASS`, :data:`FAIL`, :data:`XFAIL`, :data:`XPASS`, :data:`SKIP`),
  the reference workloads (:data:`MATMULS`, :data:`LINEAR`,
  :func:`workload_name`), :func:`run_consistency` and :class:`TargetResult`;
- **format** numbers for people: :func:`fmt_si`, :func:`fmt_bytes`,
  :func:`fmt_seconds`, :func:`fmt_joules`;
- **build a registry** (tools and tests): :func:`build_registry`, :class:`Registry`.

Importing this module is cheap: every name is loaded on first use, so a
plugin's entry-point module may import it at module level.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from graphsval_core import PLUGIN_API_VERSION, hookimpl

#: name -> the module that defines it
_WHERE: dict[str, str] = {
    **dict.fromkeys(
        (
            "TargetSpec",
            "MemoryTier",
            "SpecError",
            "TIER_NAMES",
            "PAGE_BYTES",
            "first_touch_threshold",
        ),
        "graphsval_core.datamodel.target",
    ),
    **dict.fromkeys(("OpSpec", "ShapeError"), "graphsval_core.datamodel.op"),
    **dict.fromkeys(
        ("Provenance", "Sourced", "datasheet", "derived", "estimated", "detected", "calibrated"),
        "graphsval_core.datamodel.provenance",
    ),
    **dict.fromkeys(("bytes_per_element", "KNOWN_DTYPES"), "graphsval_core.datamodel.dtypes"),
    **dict.fromkeys(
        ("fmt_si", "fmt_bytes", "fmt_seconds", "fmt_joules"), "graphsval_core.datamodel.units"
    ),
    **dict.fromkeys(("read_spec", "write_spec"), "graphsval_core.files.target_spec"),
    **dict.fromkeys(
        ("ProbeResult", "Measurement", "PredictorSpec", "PredictorConstant", "ConsistencyCheck"),
        "graphsval_core.plugins.records",
    ),
    **dict.fromkeys(
        ("LAUNCH_BOUND", "ALU_BOUND", "REGIMES", "tier_regime"), "graphsval_core.datamodel.regimes"
    ),
    "packaged_files": "graphsval_core.plugins.resources",
    **dict.fromkeys(
        ("CaptureSettings", "measure_workload", "wall_clock_block"),
        "graphsval_core.measure.protocol",
    ),
    **dict.fromkeys(("EnergyMeter", "EnergyReading", "NoEnergy"), "graphsval_core.measure.energy"),
    **dict.fromkeys(("PowerSampler", "PowerIntegrator"), "graphsval_core.measure.power_sampler"),
    **dict.fromkeys(
        (
            "cuda_event_block",
            "cuda_sync",
            "numerics",
            "setting",
            "LAUNCH_IN_TIMING",
            "FLUSH_L2_FACTOR",
        ),
        "graphsval_core.measure.cuda_timing",
    ),
    **dict.fromkeys(("CaptureItem", "measurement_row"), "graphsval_core.measure.capture"),
    **dict.fromkeys(
        (
            "square_tile",
            "tile_capacity_bytes",
            "gemm_traffic_bytes",
            "write_allocates",
            "product_overwrites",
        ),
        "graphsval_core.model.terms.traffic",
    ),
    "Prediction": "graphsval_core.model.prediction",
    "CheckContext": "graphsval_core.consistency.context",
    **dict.fromkeys(
        ("Outcome", "outcome", "skipped", "PASS", "FAIL", "XFAIL", "XPASS", "SKIP"),
        "graphsval_core.datamodel.outcome",
    ),
    **dict.fromkeys(
        ("MATMULS", "LINEAR", "workload_name"), "graphsval_core.consistency.reference_shapes"
    ),
    **dict.fromkeys(("run_consistency", "TargetResult"), "graphsval_core.consistency.runner"),
    "build_registry": "graphsval_core.plugins.loader",
    "Registry": "graphsval_core.plugins.registry",
}

__all__ = ["PLUGIN_API_VERSION", "hookimpl", *sorted(_WHERE)]


def __getattr__(name: str) -> Any:
    """Load ``name`` from the module that defines it, on first use."""
    try:
        module = _WHERE[name]
    except KeyError:
        raise AttributeError(f"graphsval_core.plugin_api has no {name!r}") from None
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


if TYPE_CHECKING:  # what type checkers and editors see (names re-exported as X as X)
    from graphsval_core.consistency.context import (
        CheckContext as CheckContext,
    )
    from graphsval_core.consistency.reference_shapes import (
        LINEAR as LINEAR,
        MATMULS as MATMULS,
        workload_name as workload_name,
    )
    from graphsval_core.consistency.runner import (
        TargetResult as TargetResult,
        run_consistency as run_consistency,
    )
    from graphsval_core.datamodel.dtypes import (
        KNOWN_DTYPES as KNOWN_DTYPES,
        bytes_per_element as bytes_per_element,
    )
    from graphsval_core.datamodel.op import (
        OpSpec as OpSpec,
        ShapeError as ShapeError,
    )
    from graphsval_core.datamodel.outcome import (
        FAIL as FAIL,
        PASS as PASS,
        SKIP as SKIP,
        XFAIL as XFAIL,
        XPASS as XPASS,
        Outcome as Outcome,
        outcome as outcome,
        skipped as skipped,
    )
    from graphsval_core.datamodel.provenance import (
        Provenance as Provenance,
        Sourced as Sourced,
        calibrated as calibrated,
        datasheet as datasheet,
        derived as derived,
        detected as detected,
        estimated as estimated,
    )
    from graphsval_core.datamodel.regimes import (
        ALU_BOUND as ALU_BOUND,
        LAUNCH_BOUND as LAUNCH_BOUND,
        REGIMES as REGIMES,
        tier_regime as tier_regime,
    )
    from graphsval_core.datamodel.target import (
        PAGE_BYTES as PAGE_BYTES,
        TIER_NAMES as TIER_NAMES,
        MemoryTier as MemoryTier,
        SpecError as SpecError,
        TargetSpec as TargetSpec,
        first_touch_threshold as first_touch_threshold,
    )
    from graphsval_core.datamodel.units import (
        fmt_bytes as fmt_bytes,
        fmt_joules as fmt_joules,
        fmt_seconds as fmt_seconds,
        fmt_si as fmt_si,
    )
    from graphsval_core.files.target_spec import (
        read_spec as read_spec,
        write_spec as write_spec,
    )
    from graphsval_core.measure.capture import (
        CaptureItem as CaptureItem,
        measurement_row as measurement_row,
    )
    from graphsval_core.measure.cuda_timing import (
        FLUSH_L2_FACTOR as FLUSH_L2_FACTOR,
        LAUNCH_IN_TIMING as LAUNCH_IN_TIMING,
        cuda_event_block as cuda_event_block,
        cuda_sync as cuda_sync,
        numerics as numerics,
        setting as setting,
    )
    from graphsval_core.measure.energy import (
        EnergyMeter as EnergyMeter,
        EnergyReading as EnergyReading,
        NoEnergy as NoEnergy,
    )
    from graphsval_core.measure.power_sampler import (
        PowerIntegrator as PowerIntegrator,
        PowerSampler as PowerSampler,
    )
    from graphsval_core.measure.protocol import (
        CaptureSettings as CaptureSettings,
        measure_workload as measure_workload,
        wall_clock_block as wall_clock_block,
    )
    from graphsval_core.model.prediction import (
        Prediction as Prediction,
    )
    from graphsval_core.model.terms.traffic import (
        gemm_traffic_bytes as gemm_traffic_bytes,
        product_overwrites as product_overwrites,
        square_tile as square_tile,
        tile_capacity_bytes as tile_capacity_bytes,
        write_allocates as write_allocates,
    )
    from graphsval_core.plugins.loader import (
        build_registry as build_registry,
    )
    from graphsval_core.plugins.records import (
        ConsistencyCheck as ConsistencyCheck,
        Measurement as Measurement,
        PredictorConstant as PredictorConstant,
        PredictorSpec as PredictorSpec,
        ProbeResult as ProbeResult,
    )
    from graphsval_core.plugins.registry import (
        Registry as Registry,
    )
    from graphsval_core.plugins.resources import (
        packaged_files as packaged_files,
    )
