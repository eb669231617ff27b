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


def bytes_per_element(dtype: str) -> float:
    """Return the storage size of one element of ``dtype`` in bytes."""
    try:
        return BYTES_PER_ELEMENT[dtype]
    except KeyError:
        raise ValueError(
            f"unknown dtype {dtype!r}; known dtypes: {', '.join(KNOWN_DTYPES)}"
        ) from None
