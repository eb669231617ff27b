"""A predictor plugin's functions behind their guard, and the check of their answers.

The registry hands out every predictor a plugin registers with its
``predict`` and ``constants`` wrapped (:func:`guarded`): what they raise (any
error, ``sys.exit``, a KeyboardInterrupt that is no Ctrl-C) or answer against
the contract (:func:`check_prediction`, :func:`check_constants`) goes to the
registry's failure handler, which records the problem and raises, so a
broken predictor gives one line naming its plugin instead of a traceback
deep in the harness.

The contract of ``predict(registry, target, op, shapes, dtype)``: a
:class:`~graphsval_core.model.prediction.Prediction` whose ``latency_s``,
``energy_j``, ``regime`` and ``binding_tier`` hold one value per shape of the
batch (latencies finite and positive); every breakdown field is optional, but
one that is given holds one row per shape.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any, NoReturn

from attrs import evolve

from graphsval_core.plugins.interrupts import is_plugin_fault
from graphsval_core.plugins.records import PredictorConstant, PredictorSpec

#: ``fail(predictor, what, error)``: record the failure, then raise.
Fail = Callable[[str, str, BaseException], NoReturn]

#: The per-shape fields every prediction holds.
REQUIRED = ("latency_s", "energy_j", "regime", "binding_tier")
#: Optional per-shape breakdown fields: one row per shape when given.
PER_SHAPE = (
    "residency_tier",
    "flops",
    "working_set_bytes",
    "bytes_per_tier",
    "time_per_tier_s",
    "tiles",
    "launch_s",
    "compute_s",
    "memory_s",
    "exposed_compute_s",
    "exposed_memory_s",
    "first_touch_s",
    "pack_s",
    "active_units",
    "hidden_s",
    "utilisation",
    "waves",
    "energy_compute_j",
    "energy_per_tier_j",
    "energy_static_j",
    "over_tdp",
)
#: What the reports ask of every prediction.
EXPLAINS = ("columns", "sentence", "details")
#: The quantities a declared constant may govern.
QUANTITIES = ("latency", "energy")


def check_prediction(pred: Any, n: int) -> None:
    """Raise :class:`TypeError` unless ``pred`` is a prediction of ``n`` shapes
    that the harness, the explanations and the reports can use."""
    import numpy as np  # not at import time: `graphsval --help` imports no numpy

    # what a Prediction (the plugin API's record, a layer above) has
    if not all(hasattr(pred, name) for name in (*REQUIRED, *PER_SHAPE, *EXPLAINS)):
        raise TypeError(f"predict returned {type(pred).__name__}, expected a Prediction")
    for name in REQUIRED:
        value = getattr(pred, name)
        if value is None or np.shape(value)[:1] != (n,):
            raise TypeError(
                f"predict returned a Prediction whose {name} has shape {np.shape(value)}, "
                f"expected one value per shape ({n},)"
            )
    latency = np.asarray(pred.latency_s)
    energy = np.asarray(pred.energy_j)
    if latency.dtype.kind not in "iuf" or energy.dtype.kind not in "iuf":
        raise TypeError("predict returned a Prediction whose latency_s or energy_j is not numbers")
    if not np.all(np.isfinite(latency) & (latency > 0)):
        raise TypeError("predict returned a latency that is not a finite positive number")
    for name in PER_SHAPE:
        value = getattr(pred, name)
        if value is not None and np.shape(value)[:1] != (n,):
            raise TypeError(
                f"predict returned a Prediction whose {name} has shape {np.shape(value)}, "
                f"expected one row per shape ({n}, ...)"
            )
    if n:
        try:  # what every report asks of it
            pred.columns()
            pred.sentence(0)
            pred.details(0)
        except Exception as exc:
            raise TypeError(
                f"predict returned a Prediction that cannot be explained: "
                f"{type(exc).__name__}: {exc}"
            ) from None


def check_constants(answer: Any) -> tuple[PredictorConstant, ...]:
    """The declared constants as a tuple; :class:`TypeError` for anything else."""
    if answer is None:
        return ()
    if isinstance(answer, str | bytes) or not isinstance(answer, Iterable):
        raise TypeError(
            f"constants returned {type(answer).__name__}, expected PredictorConstant records"
        )
    out = tuple(answer)
    for item in out:
        if not isinstance(item, PredictorConstant):
            raise TypeError(f"constants returned {type(item).__name__}, expected PredictorConstant")
        if item.quantity not in QUANTITIES:
            raise TypeError(
                f"constant {item.name!r} governs {item.quantity!r}, expected latency or energy"
            )
        value = item.value
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if not number or not math.isfinite(value):
            raise TypeError(f"constant {item.name!r} has value {value!r}, expected a number")
    return out


def guarded(spec: PredictorSpec, fail: Fail) -> PredictorSpec:
    """``spec`` with its ``predict`` and ``constants`` behind the guard."""

    def predict(registry: Any, target: Any, op: Any, shapes: Any, dtype: str) -> Any:
        try:
            pred = spec.predict(registry, target, op, shapes, dtype)
            check_prediction(pred, len(shapes))
        except BaseException as exc:
            if not is_plugin_fault(exc):
                raise
            fail(spec.name, "predict", exc)
        return pred

    constants = None
    if spec.constants is not None:
        declared = spec.constants

        def constants(registry: Any, target: Any, op: Any, dtype: str) -> Any:
            try:
                return check_constants(declared(registry, target, op, dtype))
            except BaseException as exc:
                if not is_plugin_fault(exc):
                    raise
                fail(spec.name, "constants", exc)

    return evolve(spec, predict=predict, constants=constants)
