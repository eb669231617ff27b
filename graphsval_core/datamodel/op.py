"""The op data model: an operator's shape schema, FLOPs and bytes per operand.

An op's functions work on batches: ``shapes`` is an integer array of shape
``(n, len(dims))`` and every function returns one value per row, so a sweep is
one call, not one call per shape. numpy is imported by the op modules, never at
import time of this one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from attrs import field, frozen

from graphsval_core.datamodel.errors import UserInputError

if TYPE_CHECKING:
    import numpy as np

_NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")


class ShapeError(UserInputError):
    """A shape string or array does not fit an op's schema."""


@frozen(kw_only=True)
class OpSpec:
    """An operator graphsval can predict and measure.

    - ``dims``: names of the shape dimensions, e.g. ``("M", "K", "N")``.
    - ``operand_elements(shapes)``: element count of every operand (inputs,
      weights, bias, output), as arrays, keyed by operand name.
    - ``working_set_operands``: the operands whose bytes make the working set
      (DESIGN.md section 9; the bias of ``linear`` moves but is not counted).
    - ``output_operand``: the operand each call writes (a fresh allocation per
      call unless the capture preallocates it).
    - ``flops(shapes)``: operations per call.
    - ``gemm_dims(shapes)``: the ``(M, K, N)`` of the matrix product the op is,
      or ``None`` for ops with no reuse (``vector_add``).
    - ``kernels``: framework kernels one call runs (``linear`` with a bias: 2,
      the bias broadcast into the output, then the product onto it); each
      beyond the first costs the target's ``kernel_overhead_s``.
    - ``build(dims, dtype, device, *, preallocate=False, seed=0)``: the workload
      builder measurers use (a :class:`~graphsval_core.measure.workloads.Workload`:
      ``run()``, ``check(out)``); it imports torch itself, lazily. None for an
      op that can only be predicted.
    """

    name: str
    dims: tuple[str, ...] = field(converter=tuple)
    description: str = ""
    operand_elements: Callable[[np.ndarray], Mapping[str, np.ndarray]]
    working_set_operands: tuple[str, ...] = field(converter=tuple)
    output_operand: str = ""
    flops: Callable[[np.ndarray], np.ndarray]
    gemm_dims: Callable[[np.ndarray], np.ndarray] | None = None
    build: Callable[..., Any] | None = None
    kernels: int = 1

    def __attrs_post_init__(self) -> None:
        if not _NAME_RE.match(self.name):
            raise ValueError(f"field 'name': op name {self.name!r} must match [a-z][a-z0-9_]*")
        if not self.dims:
            raise ValueError(f"field 'dims': op {self.name!r} needs at least one dimension")
        if not isinstance(self.kernels, int) or isinstance(self.kernels, bool) or self.kernels < 1:
            raise ValueError(
                f"field 'kernels': op {self.name!r} runs at least one kernel, got {self.kernels!r}"
            )

    def parse_shape(self, text: str) -> tuple[int, ...]:
        """Parse a shape string (``"1024x1024x1024"``) into dims for this op."""
        return parse_shape(text, len(self.dims), self.name, self.dims)

    def format_shape(self, dims: Sequence[int]) -> str:
        """The V4 shape string of ``dims``: dims joined by ``x``."""
        return "x".join(str(int(d)) for d in dims)

    def working_set_bytes(self, shapes: np.ndarray, bytes_per_element: float) -> np.ndarray:
        """Working set in bytes, one value per shape row."""
        elements = self.operand_elements(shapes)
        total = sum(elements[name] for name in self.working_set_operands)
        return total * float(bytes_per_element)


def parse_shape(text: str, ndims: int, op: str = "", dims: Sequence[str] = ()) -> tuple[int, ...]:
    """Parse ``"AxBxC"`` into positive integers, with a message naming the problem."""
    parts = str(text).strip().lower().split("x")
    what = f" for {op} ({'x'.join(dims)})" if op else ""
    if len(parts) != ndims:
        raise ShapeError(f"shape {text!r}{what}: expected {ndims} dims joined by 'x'")
    out = []
    for part in parts:
        if not part.isdigit() or int(part) < 1:
            raise ShapeError(f"shape {text!r}{what}: {part!r} is not a positive integer")
        out.append(int(part))
    return tuple(out)
