"""The built-in ops (``matmul``, ``linear``, ``linear_nobias``, ``vector_add``),
registered through the ``graphsval_register_ops`` hook like any plugin's ops.

Definitions follow DESIGN.md section 9. numpy is imported inside the functions
so that loading this plugin stays cheap.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import attrs

from graphsval_core import hookimpl
from graphsval_core.datamodel.op import OpSpec

if TYPE_CHECKING:
    import numpy as np


def _cols(shapes: np.ndarray) -> list[np.ndarray]:
    import numpy as np

    arr = np.asarray(shapes, dtype=np.float64)
    return [arr[:, i] for i in range(arr.shape[1])]


def _matmul_elements(shapes: np.ndarray) -> dict[str, np.ndarray]:
    m, k, n = _cols(shapes)
    return {"A": m * k, "B": k * n, "C": m * n}


def _matmul_flops(shapes: np.ndarray) -> np.ndarray:
    m, k, n = _cols(shapes)
    return 2.0 * m * k * n


def _identity_gemm(shapes: np.ndarray) -> np.ndarray:
    import numpy as np

    return np.asarray(shapes, dtype=np.int64)


def _linear_elements(shapes: np.ndarray) -> dict[str, np.ndarray]:
    b, i, o = _cols(shapes)
    return {"input": b * i, "weight": i * o, "bias": o, "output": b * o}


def _linear_nobias_elements(shapes: np.ndarray) -> dict[str, np.ndarray]:
    b, i, o = _cols(shapes)
    return {"input": b * i, "weight": i * o, "output": b * o}


def _vector_add_elements(shapes: np.ndarray) -> dict[str, np.ndarray]:
    (n,) = _cols(shapes)
    return {"x": n, "y": n, "out": n}


def _vector_add_flops(shapes: np.ndarray) -> np.ndarray:
    (n,) = _cols(shapes)
    return n.copy()


def _builder(name: str):  # type: ignore[no-untyped-def]
    def build(dims, dtype, device="cpu", **kwargs):  # type: ignore[no-untyped-def]
        from graphsval_core.measure.workloads import build_workload

        return build_workload(name, tuple(dims), dtype, device, **kwargs)

    return build


MATMUL = OpSpec(
    name="matmul",
    dims=("M", "K", "N"),
    description="C[M,N] = A[M,K] @ B[K,N]",
    operand_elements=_matmul_elements,
    working_set_operands=("A", "B", "C"),
    output_operand="C",
    flops=_matmul_flops,
    gemm_dims=_identity_gemm,
    build=_builder("matmul"),
)

LINEAR = OpSpec(
    name="linear",
    dims=("B", "IN", "OUT"),
    description="y[B,OUT] = x[B,IN] @ W[OUT,IN]^T + b[OUT] (torch.nn.Linear with bias)",
    operand_elements=_linear_elements,
    working_set_operands=("input", "weight", "output"),
    output_operand="output",
    flops=_matmul_flops,
    gemm_dims=_identity_gemm,
    build=_builder("linear"),
    kernels=2,
    accumulates=True,
    b_transposed=True,
)

#: A projection with no bias (``torch.nn.Linear(bias=False)``, ``F.linear(x, w)``;
#: a LLaMA's attention, MLP and output projections): the library writing its
#: result whole, the weight K-contiguous as linear's. Two dispatches, as
#: ``F.linear`` transposes the weight (a view, through the dispatcher) before
#: the product: ``benchmarks/bench_linear_call.py`` times ``F.linear(x, w)``
#: mostly 0.5-1.8 us above ``torch.matmul`` of the same shape on the Zen 4 VM (fp32
#: and bf16), one framework launch; no bias, no accumulating call.
LINEAR_NOBIAS = attrs.evolve(
    LINEAR,  # its shapes, weight layout, working set and two dispatches, less the bias
    name="linear_nobias",
    description="y[B,OUT] = x[B,IN] @ W[OUT,IN]^T (torch.nn.Linear without bias)",
    operand_elements=_linear_nobias_elements,
    build=_builder("linear_nobias"),
    accumulates=False,
)

VECTOR_ADD = OpSpec(
    name="vector_add",
    dims=("N",),
    description="out[N] = x[N] + y[N]",
    operand_elements=_vector_add_elements,
    working_set_operands=("x", "y", "out"),
    output_operand="out",
    flops=_vector_add_flops,
    build=_builder("vector_add"),
)


@hookimpl
def graphsval_register_ops() -> Iterable[OpSpec]:
    return [MATMUL, LINEAR, LINEAR_NOBIAS, VECTOR_ADD]
