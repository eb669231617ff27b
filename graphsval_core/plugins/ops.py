"""A third-party op's functions behind their guard, and the check of their answers.

The registry holds every op a plugin (not built into the core) registers with
its ``operand_elements``, ``flops`` and ``gemm_dims`` wrapped (:func:`guarded`):
an answer against the contract (:func:`check_answer`) or anything they raise
(any error, ``sys.exit``, a KeyboardInterrupt that is no Ctrl-C) goes to the
registry, which records one line naming the plugin, the op and the function,
and raises :class:`~graphsval_core.plugins.registry.OpFailed` (a
:class:`~graphsval_core.plugins.registry.PredictorFailed`: the harness leaves
the rows of that batch out, a command predicting one batch stops in one line).
Before an op is registered, :func:`probe` calls each function on two small
shapes (64 and 1024 in every dim): an op that fails there is not registered.

The contract, for ``shapes`` an integer array ``(n, len(dims))``:

- ``flops(shapes)``: ``n`` finite non-negative numbers;
- ``operand_elements(shapes)``: a mapping of operand name to ``n`` finite
  non-negative numbers, holding every operand of ``working_set_operands`` and
  the ``output_operand``;
- ``gemm_dims(shapes)`` (when given): an ``(n, 3)`` array of finite positive
  ``M, K, N``.

``build`` is never called here: it needs a measuring machine.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NoReturn

from attrs import evolve

from graphsval_core.datamodel.op import OpSpec
from graphsval_core.plugins.interrupts import is_plugin_fault

#: ``fail(op, function, error)``: record the failure, then raise.
Fail = Callable[[str, str, BaseException], NoReturn]

#: The functions of an op that are called with shapes.
FUNCTIONS = ("operand_elements", "flops", "gemm_dims")


class OpAnswerError(TypeError):
    """An op's function answered against the contract."""


def describe_failure(error: BaseException) -> str:
    """``returned ...`` for an answer against the contract, else ``raised Type: message``."""
    from graphsval_core.plugins.interrupts import describe

    return str(error) if isinstance(error, OpAnswerError) else f"raised {describe(error)}"


def _numbers(what: str, value: Any, shape: tuple[int, ...], positive: bool = False) -> Any:
    import numpy as np

    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise OpAnswerError(
            f"returned {type(value).__name__} for {what}, expected numbers"
        ) from None
    if array.shape != shape:
        raise OpAnswerError(f"returned {what} of shape {array.shape}, expected {shape}")
    with np.errstate(invalid="ignore"):
        ok = np.isfinite(array) & ((array > 0) if positive else (array >= 0))
    if not ok.all():
        bad = array[~ok].reshape(-1)[0]
        kind = "positive" if positive else "non-negative"
        raise OpAnswerError(f"returned {bad:g} in {what}, expected finite {kind} numbers")
    return value


def check_answer(op: OpSpec, function: str, value: Any, n: int) -> None:
    """Raise :class:`TypeError` unless ``value`` is what ``function`` of ``op``
    must return for ``n`` shapes (see module doc)."""
    if function == "flops":
        _numbers("flops", value, (n,))
    elif function == "gemm_dims":
        _numbers("gemm_dims", value, (n, 3), positive=True)
    else:
        if not isinstance(value, Mapping):
            raise OpAnswerError(f"returned {type(value).__name__}, expected a mapping of operands")
        wanted = {*op.working_set_operands, *([op.output_operand] if op.output_operand else [])}
        missing = sorted(wanted - set(value))
        if missing:
            raise OpAnswerError(f"returned no element count of operand(s) {', '.join(missing)}")
        for name, elements in value.items():
            _numbers(f"operand {name!s:.40}", elements, (n,))


def _call(op: OpSpec, function: str, original: Any, shapes: Any, fail: Fail) -> Any:
    try:
        value = original(shapes)
        check_answer(op, function, value, len(shapes))
    except BaseException as exc:
        if not is_plugin_fault(exc):
            raise
        fail(op.name, function, exc)
    return value


def guarded(op: OpSpec, fail: Fail) -> OpSpec:
    """``op`` with its functions behind the guard."""
    changes: dict[str, Any] = {}
    for function in FUNCTIONS:
        original = getattr(op, function)
        if original is None:
            continue

        def wrapper(shapes: Any, _function: str = function, _original: Any = original) -> Any:
            return _call(op, _function, _original, shapes, fail)

        changes[function] = wrapper
    return evolve(op, **changes)


def probe(op: OpSpec) -> str | None:
    """Why ``op`` cannot be registered: its first function that fails on two
    small shapes, in words (``flops returned nan ...``); None when every one
    answers as the contract says."""
    import numpy as np

    shapes = np.array([[64] * len(op.dims), [1024] * len(op.dims)], dtype=np.int64)
    for function in FUNCTIONS:
        original = getattr(op, function)
        if original is None:
            continue
        try:
            check_answer(op, function, original(shapes.copy()), len(shapes))
        except BaseException as exc:
            if not is_plugin_fault(exc):
                raise
            return f"{function} {describe_failure(exc)}"
    return None
