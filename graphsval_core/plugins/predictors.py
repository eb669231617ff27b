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

Beyond the shapes, each row's values are checked (:func:`row_problems`): a
latency finite and positive, an energy finite and non-negative, a regime of
the target (``launch_bound``, ``alu_bound`` or ``<tier>_bound`` of one of
its tiers), a binding tier that is one of the target's tiers. A row that
breaks one is left out (:class:`Faults.rows` names the rows; the harness
validates the others), in one line per plugin, predictor and field. An
optional breakdown term that is not finite numbers is dropped from the
batch, in one line (a negative one is left to the physical-bounds check); a
prediction that names another predictor is relabelled, in one line.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any, NoReturn, Protocol

from attrs import evolve

from graphsval_core.plugins.interrupts import is_plugin_fault
from graphsval_core.plugins.records import PredictorConstant, PredictorSpec

#: ``fail(predictor, what, error)``: record the failure, then raise.
Fail = Callable[[str, str, BaseException], NoReturn]


#: ``(field, message, bad_mask, reasons)``: a field some rows break, the
#: line naming it, the rows, and per row what its value was.
RowProblem = tuple[str, str, Any, list[str]]


class Faults(Protocol):
    """What the registry does with one plugin's predictor faults."""

    def fail(self, predictor: str, what: str, error: BaseException) -> NoReturn:
        """Record the failure of the whole call, then raise."""
        ...

    def rows(self, predictor: str, problems: list[RowProblem]) -> NoReturn:
        """Record each field some rows break (:func:`row_problems`), then raise."""
        ...

    def warn(self, predictor: str, field: str, message: str) -> None:
        """Record a fault the guard repaired (a term dropped, a name relabelled)."""
        ...


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
    for name in PER_SHAPE:
        value = getattr(pred, name)
        if value is not None and np.shape(value)[:1] != (n,):
            raise TypeError(
                f"predict returned a Prediction whose {name} has shape {np.shape(value)}, "
                f"expected one row per shape ({n}, ...)"
            )


def check_explains(pred: Any, n: int) -> None:
    """Raise :class:`TypeError` unless every report can explain ``pred``."""
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


def _column(values: Any) -> Any:
    """A required field's one value per shape, as float64 (its first column)."""
    import numpy as np

    array = np.asarray(values, dtype=np.float64)
    return array.reshape(len(array), -1)[:, 0] if array.size else array.reshape(-1)


def _texts(values: Any) -> list[str]:
    import numpy as np

    array = np.asarray(values)
    return [str(v) for v in array.reshape(len(array), -1)[:, 0]] if array.size else []


def row_problems(pred: Any, tiers: tuple[str, ...]) -> list[RowProblem]:
    """``(field, message, bad_mask, reasons)`` for each required field some rows
    of ``pred`` break (see module doc); ``tiers``: the target's tier names."""
    import numpy as np

    from graphsval_core.datamodel.regimes import LABELS, tier_regime

    out = []
    latency, energy = _column(pred.latency_s), _column(pred.energy_j)
    with np.errstate(invalid="ignore"):
        for field, values, ok, what in (
            ("latency_s", latency, np.isfinite(latency) & (latency > 0), "finite positive"),
            ("energy_j", energy, np.isfinite(energy) & (energy >= 0), "finite non-negative"),
        ):
            if not ok.all():
                reasons = [f"{field} {v:g}" for v in values]
                article = "an" if field.startswith("e") else "a"
                message = f"returned {article} {field} that is not a {what} number"
                out.append((field, message, ~ok, reasons))
    regimes = {*LABELS, *(tier_regime(t) for t in tiers)}
    values = _texts(pred.regime)
    bad = np.array([v not in regimes for v in values], dtype=bool)
    if bad.any():
        what = "returned a regime that is not launch_bound, alu_bound or a tier's of the target"
        out.append(("regime", what, bad, [f"regime {v[:40]!r}" for v in values]))
    values = _texts(pred.binding_tier)
    bad = np.array([v not in tiers for v in values], dtype=bool)
    if tiers and bad.any():
        what = "returned a binding_tier that is not a tier of the target"
        known = ", ".join(tiers)
        reasons = [f"binding_tier {v[:40]!r}, not one of {known}" for v in values]
        out.append(("binding_tier", what, bad, reasons))
    return out


def bad_terms(pred: Any) -> list[tuple[str, str]]:
    """``(field, why)`` for each optional breakdown term of ``pred`` that is
    not finite numbers (a negative term is left to the physical-bounds
    consistency check, which names it)."""
    import numpy as np

    out = []
    for name in PER_SHAPE:
        value = getattr(pred, name)
        if value is None or name == "residency_tier":
            continue
        array = np.asarray(value)
        if array.dtype.kind == "b":
            continue
        if array.dtype.kind not in "iuf":
            out.append((name, f"holds {array.dtype.name} values, not numbers"))
            continue
        with np.errstate(invalid="ignore"):
            if not np.all(np.isfinite(array)):
                out.append((name, "is not finite (NaN or infinity)"))
    return out


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


def guarded(spec: PredictorSpec, faults: Faults) -> PredictorSpec:
    """``spec`` with its ``predict`` and ``constants`` behind the guard."""
    fail = faults.fail

    def predict(registry: Any, target: Any, op: Any, shapes: Any, dtype: str) -> Any:
        try:
            pred = spec.predict(registry, target, op, shapes, dtype)
            check_prediction(pred, len(shapes))
            named = pred.predictor
            dropped = bad_terms(pred)
        except BaseException as exc:
            if not is_plugin_fault(exc):
                raise
            fail(spec.name, "predict", exc)
        if named != spec.name:
            shown = repr(str(named)[:60])
            faults.warn(
                spec.name,
                "predictor",
                f"returned a Prediction named {shown}: relabelled {spec.name!r}",
            )
        for name, why in dropped:
            faults.warn(spec.name, name, f"returned a {name} that {why}: the term is dropped")
        try:
            if named != spec.name or dropped:
                pred = evolve(pred, predictor=spec.name, **{name: None for name, _ in dropped})
            check_explains(pred, len(shapes))
        except BaseException as exc:
            if not is_plugin_fault(exc):
                raise
            fail(spec.name, "predict", exc)
        tiers = tuple(t.name for t in registry.memory_hierarchy(target))
        problems = row_problems(pred, tiers)
        if problems:
            faults.rows(spec.name, problems)
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
