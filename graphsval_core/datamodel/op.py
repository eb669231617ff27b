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

_NAME_RE = re.compile(r"[a-z][a-z0-9_]*")


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
    - ``accumulates``: the op's matrix product adds onto what its output
      already holds (``beta = 1``: ``linear`` accumulates onto the bias its
      first kernel broadcast), so a write-allocate CPU reads C before it
      writes it; False (the default) when the GEMM library writes a fresh
      result whole (``beta = 0``, ``matmul``), never reading C.
    - ``b_transposed``: the product's B is stored ``N x K`` (``linear``'s
      weight), so each output is a dot of two contiguous rows; False (the
      default) when B is stored ``K x N`` (``matmul``), so a kernel that
      forms one output at a time walks down a column of B, one element per
      row (a framework's reference kernel does: see the target's
      ``reference_mac_s``).
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
    accumulates: bool = False
    b_transposed: bool = False

    def __attrs_post_init__(self) -> None:
        if not _NAME_RE.fullmatch(self.name):
            raise ValueError(f"field 'name': op name {self.name!r} must match [a-z][a-z0-9_]*")
        if not self.dims:
            raise ValueError(f"field 'dims': op {self.name!r} needs at least one dimension")
        if not isinstance(self.kernels, int) or isinstance(self.kernels, bool) or self.kernels < 1:
            raise ValueError(
                f"field 'kernels': op {self.name!r} runs at least one kernel, got {self.kernels!r}"
            )
        for flag in ("accumulates", "b_transposed"):
            if not isinstance(getattr(self, flag), bool):
                raise ValueError(
                    f"field {flag!r}: op {self.name!r} needs True or False, "
                    f"got {getattr(self, flag)!r}"
                )

    def parse_shape(self, text: str) -> tuple[int, ...]:
        """Parse a shape string (``"1024x1024x1024"``) into dims for this op."""
        return parse_shape(text, len(self.dims), self.name, self.dims)

    def dims_mismatch(self, shape: str, got: int) -> str:
        """What is wrong with a shape ``shape`` of ``got`` dims read for this
        op from a file (a baseline row), in one phrase."""
        return (
            f"shape {shape} has {got} dims; {self.name} takes {len(self.dims)} "
            f"({'x'.join(self.dims)})"
        )

    def format_shape(self, dims: Sequence[int]) -> str:
        """The V4 shape string of ``dims``: dims joined by ``x``."""
        return "x".join(str(int(d)) for d in dims)

    def working_set_bytes(self, shapes: np.ndarray, bytes_per_element: float) -> np.ndarray:
        """Working set in bytes, one value per shape row."""
        elements = self.operand_elements(shapes)
        total = sum(elements[name] for name in self.working_set_operands)
        return total * float(bytes_per_element)


#: The largest dimension a shape may have (2^40, a trillion elements): far
#: beyond any real operator, and every product the model forms of such dims
#: stays exact in float64 and within int64.
MAX_DIM = 2**40
_PLAIN_SHAPE = re.compile(r"[1-9][0-9]{0,12}(?:x[1-9][0-9]{0,12})*\Z")


def split_shape(text: str, what: str = "") -> tuple[int, ...]:
    """Parse ``"AxBxC"`` into positive integers of at most :data:`MAX_DIM`,
    whatever their count; :class:`ShapeError` names the part that is wrong
    (``what`` follows the shape in the message: ``" for matmul (MxKxN)"``)."""
    text = str(text)
    if _PLAIN_SHAPE.match(text):  # the common case, checked in one regex match
        dims = tuple(map(int, text.split("x")))
        if max(dims) <= MAX_DIM:
            return dims
    shown = repr(text if len(text) <= 60 else text[:57] + "...") + what
    out = []
    for part in text.strip().lower().split("x"):
        part = part.strip()
        if not part:
            raise ShapeError(f"shape {shown}: expected dims joined by 'x', got an empty dim")
        if not (part.isascii() and part.isdigit()):
            raise ShapeError(f"shape {shown}: dim {part[:20]!r} is not a positive integer")
        if len(part) > 15 or int(part) > MAX_DIM:
            big = part if len(part) <= 20 else f"{part[:17]}... ({len(part)} digits)"
            raise ShapeError(f"shape {shown}: dim {big} is larger than {MAX_DIM} (2^40)")
        value = int(part)
        if value < 1:
            raise ShapeError(f"shape {shown}: dim {part!r} must be at least 1")
        out.append(value)
    return tuple(out)


def dims_problem(dims: Sequence[object]) -> str | None:
    """Why ``dims`` (read from JSON, say) is not a shape, or None: positive
    integers of at most :data:`MAX_DIM`, at least one."""
    if not dims:
        return "expected at least one dim"
    for d in dims:
        if isinstance(d, bool) or not isinstance(d, int):
            return f"dim {d!r} is not an integer"
        if d < 1:
            return f"dim {d} must be at least 1"
        if d > MAX_DIM:
            return f"dim {d} is larger than {MAX_DIM} (2^40)"
    return None


def parse_shape(text: str, ndims: int, op: str = "", dims: Sequence[str] = ()) -> tuple[int, ...]:
    """Parse ``"AxBxC"`` into ``ndims`` positive integers, with a message naming the problem."""
    what = f" for {op} ({'x'.join(dims)})" if op else ""
    out = split_shape(text, what)
    if len(out) != ndims:
        shown = repr(text if len(text) <= 60 else text[:57] + "...")
        expected = "1 dim" if ndims == 1 else f"{ndims} dims joined by 'x'"
        raise ShapeError(f"shape {shown}{what}: expected {expected}, got {len(out)}")
    return out
