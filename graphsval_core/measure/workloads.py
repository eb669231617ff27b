"""Real workloads for the built-in ops, built with torch (imported lazily).

A :class:`Workload` holds the inputs on the device, ``run()`` (one call of the
op, returning its output) and ``check(out)`` (the correctness verdict against a
float64 reference computed from the same inputs). Inputs are seeded standard
normals (int8: uniform in [-8, 8)). For outputs larger than ``CHECK_ROWS`` rows
(or ``CHECK_ELEMENTS`` elements) a seeded sample is checked.

Output allocation: each call allocates its output (torch's default, and what
the vendored V4 baselines did); with ``preallocate=True`` matmul and
vector_add write into one preallocated ``out=`` tensor instead. The choice is
recorded in every baseline row (``output_alloc``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from attrs import define

from graphsval_core.measure.correctness import Verdict, check

CHECK_ROWS = 128
CHECK_ELEMENTS = 1 << 20

TORCH_DTYPES = {
    "fp64": "float64",
    "fp32": "float32",
    "tf32": "float32",
    "fp16": "float16",
    "bf16": "bfloat16",
    "int8": "int8",
}


@define
class Workload:
    run: Callable[[], Any]
    check: Callable[[Any], Verdict]
    output_alloc: str
    note: str = ""


class UnsupportedWorkload(ValueError):
    """The op/dtype/shape has no real kernel here; the message says why."""


def torch_dtype(dtype: str) -> Any:
    import torch

    if dtype not in TORCH_DTYPES:
        raise UnsupportedWorkload(f"no torch dtype for {dtype!r}")
    return getattr(torch, TORCH_DTYPES[dtype])


def _inputs(shape: tuple[int, ...], dtype: str, device: str, gen: Any) -> Any:
    import torch

    if dtype == "int8":
        return torch.randint(-8, 8, shape, generator=gen, dtype=torch.int8).to(device)
    return torch.randn(shape, generator=gen, dtype=torch.float32).to(
        device=device, dtype=torch_dtype(dtype)
    )


def _sample(n: int, count: int, seed: int) -> Any:
    """A seeded sorted sample of distinct indices below ``n`` (None: check all).

    Drawn with replacement and deduplicated: ``randperm`` of a 10^8-element
    range costs seconds, ``randint`` milliseconds."""
    import torch

    if n <= count:
        return None
    gen = torch.Generator().manual_seed(seed)
    return torch.unique(torch.randint(0, n, (count,), generator=gen))


def build_workload(
    op: str,
    dims: tuple[int, ...],
    dtype: str,
    device: str = "cpu",
    *,
    preallocate: bool = False,
    seed: int = 0,
) -> Workload:
    """The workload of a built-in op on ``device``."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    if op in ("matmul", "linear", "linear_nobias"):
        m, k, n = dims
        a = _inputs((m, k), dtype, device, gen)
        bias = None
        if op == "matmul":
            b = _inputs((k, n), dtype, device, gen)
        else:
            if dtype == "int8":
                raise UnsupportedWorkload("torch.nn.functional.linear has no int8 kernel")
            b = _inputs((n, k), dtype, device, gen)  # nn.Linear weight layout
            if op == "linear":
                bias = _inputs((n,), dtype, device, gen)
        rows = _sample(m, CHECK_ROWS, seed + 1)

        def reference() -> Any:
            a64 = (a if rows is None else a[rows.to(a.device)]).to(torch.float64).cpu()
            w64 = b.to(torch.float64).cpu()
            if op == "matmul":
                return a64 @ w64
            if bias is None:  # linear_nobias
                return a64 @ w64.T
            return a64 @ w64.T + bias.to(torch.float64).cpu()

        if op == "matmul" and dtype == "int8":

            def run() -> Any:
                return torch._int_mm(a, b)

            alloc = "fresh"
        elif op == "matmul" and preallocate:
            out = torch.empty((m, n), dtype=a.dtype, device=device)

            def run() -> Any:
                return torch.matmul(a, b, out=out)

            alloc = "preallocated"
        elif op == "matmul":

            def run() -> Any:
                return torch.matmul(a, b)

            alloc = "fresh"
        else:

            def run() -> Any:
                return torch.nn.functional.linear(a, b, bias)

            alloc = "fresh"

        def verdict(out: Any) -> Verdict:
            got = out if rows is None else out[rows.to(out.device)]
            return check(
                got.to(torch.float64).cpu().numpy(),
                reference().numpy(),
                dtype,
                k,
                sampled=rows is not None,
            )

        return Workload(run, verdict, alloc)
    if op == "vector_add":
        (n,) = dims
        x = _inputs((n,), dtype, device, gen)
        y = _inputs((n,), dtype, device, gen)
        idx = _sample(n, CHECK_ELEMENTS, seed + 2)
        if preallocate:
            out_buf = torch.empty_like(x)

            def run() -> Any:
                return torch.add(x, y, out=out_buf)

            alloc = "preallocated"
        else:

            def run() -> Any:
                return torch.add(x, y)

            alloc = "fresh"

        def verdict(out: Any) -> Verdict:
            sel = (lambda t: t) if idx is None else (lambda t: t[idx.to(t.device)])
            ref = sel(x).to(torch.float64).cpu() + sel(y).to(torch.float64).cpu()
            return check(
                sel(out).to(torch.float64).cpu().numpy(),
                ref.numpy(),
                dtype,
                1,
                sampled=idx is not None,
            )

        return Workload(run, verdict, alloc)
    raise UnsupportedWorkload(f"no built-in workload for op {op!r}")
