"""The data types graphsval knows, with their storage size.

A target may only declare dtypes listed here; an unknown dtype in a spec is
rejected with the field named.
"""

from __future__ import annotations

#: Bytes per element of every known dtype.
BYTES_PER_ELEMENT: dict[str, float] = {
    "fp64": 8.0,
    "fp32": 4.0,
    "tf32": 4.0,
    "fp16": 2.0,
    "bf16": 2.0,
    "fp8": 1.0,
    "int8": 1.0,
    "int4": 0.5,
}

KNOWN_DTYPES: tuple[str, ...] = tuple(BYTES_PER_ELEMENT)


#: Bytes per output element of a matrix product where it differs from the
#: inputs': an int8 product accumulates into int32 and returns it
#: (``torch._int_mm``, the int8 GEMM graphsval measures on CPUs and GPUs).
PRODUCT_OUTPUT_BYTES: dict[str, float] = {"int8": 4.0}
#: Architectures whose products return their accumulators (PyTorch's kernels);
#: a systolic or domain-flow accelerator requantizes an int8 product to int8 in
#: its output pipeline (the Edge TPU's outputs are int8).
WIDE_OUTPUT_ARCHITECTURES = ("cpu", "gpu")


def product_output_bytes(dtype: str, architecture: str = "cpu") -> float:
    """Bytes per output element of a matrix product at ``dtype`` on a target of
    ``architecture``: int32 for int8 on a CPU or GPU, the input's size otherwise."""
    if architecture in WIDE_OUTPUT_ARCHITECTURES:
        return PRODUCT_OUTPUT_BYTES.get(dtype, bytes_per_element(dtype))
    return bytes_per_element(dtype)


def bytes_per_element(dtype: str) -> float:
    """Return the storage size of one element of ``dtype`` in bytes."""
    try:
        return BYTES_PER_ELEMENT[dtype]
    except KeyError:
        raise ValueError(
            f"unknown dtype {dtype!r}; known dtypes: {', '.join(KNOWN_DTYPES)}"
        ) from None
