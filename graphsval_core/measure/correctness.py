"""Numerical correctness of a measured kernel against a float64 reference.

Pass when ``|out - ref| <= atol + rtol * |ref|`` for every checked element.
``rtol`` is per dtype (fp32 1e-5, tf32 and fp16 1e-3, bf16 1.6e-2, int8
exact); ``atol = rtol * sqrt(K)`` grows with the reduction length K, since with
unit-variance inputs the outputs (and their rounding) grow like sqrt(K) and
outputs near zero would otherwise fail on rounding alone. Records mean_rel_L1
(sum|out-ref| / sum|ref|), max_abs, max_rel and the verdict; for large outputs
a seeded sample of rows is checked, and the verdict says so.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from attrs import frozen

RTOL: dict[str, float] = {
    "fp64": 1e-12,
    "fp32": 1e-5,
    "tf32": 1e-3,
    "fp16": 1e-3,
    "bf16": 1.6e-2,
    "fp8": 1.25e-1,
    "int8": 0.0,
    "int4": 0.0,
}


@frozen
class Verdict:
    passed: bool
    mean_rel_l1: float
    max_abs: float
    max_rel: float
    rtol: float
    atol: float
    checked: int
    sampled: bool

    def columns(self) -> dict[str, Any]:
        """The baseline's extra columns for this verdict."""
        return {
            "verdict": "pass" if self.passed else "FAIL",
            "mean_rel_l1": f"{self.mean_rel_l1:.3e}",
            "max_abs": f"{self.max_abs:.3e}",
            "max_rel": f"{self.max_rel:.3e}",
            "rtol": f"{self.rtol:g}",
            "atol": f"{self.atol:.3e}",
            "check_scope": f"sampled {self.checked} elements" if self.sampled else "all elements",
        }


def tolerances(dtype: str, reduction_length: int) -> tuple[float, float]:
    rtol = RTOL.get(dtype, 1e-3)
    return rtol, rtol * math.sqrt(max(1, reduction_length))


def check(out: Any, ref: Any, dtype: str, reduction_length: int, sampled: bool = False) -> Verdict:
    """Compare ``out`` (any array-like; cast to float64) with the float64 ``ref``."""
    o = np.asarray(out, dtype=np.float64).ravel()
    r = np.asarray(ref, dtype=np.float64).ravel()
    if o.shape != r.shape:
        raise ValueError(f"output has {o.size} elements, reference {r.size}")
    rtol, atol = tolerances(dtype, reduction_length)
    diff = np.abs(o - r)
    finite = bool(np.all(np.isfinite(o)))
    passed = finite and bool(np.all(diff <= atol + rtol * np.abs(r)))
    denom = float(np.sum(np.abs(r)))
    rel = diff / np.maximum(np.abs(r), 1e-300)
    return Verdict(
        passed=passed,
        mean_rel_l1=float(np.sum(diff)) / denom if denom > 0 else float(np.sum(diff)),
        max_abs=float(np.max(diff)) if diff.size else 0.0,
        max_rel=float(np.max(rel)) if rel.size else 0.0,
        rtol=rtol,
        atol=atol,
        checked=int(o.size),
        sampled=sampled,
    )
