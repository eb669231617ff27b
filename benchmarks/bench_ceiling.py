"""Benchmark: how much of the products' error a compact model could still remove.

Run: python benchmarks/bench_ceiling.py [TARGET ...]
(default: the two rich host kinds). Prints figures; asserts nothing. For each
target's matrix products (matmul and linear, per dtype), judged on its
validation rows (never fitted), median |error| and share within 10% of:

- the shipped model (its calibration as shipped);
- the shipped model corrected by the median log residual of the three
  calibration shapes nearest in log2(M, K, N) of the same op and dtype: not a
  model, a bound on what any term smooth in the shape could add (if
  neighbours in shape do not share their error, no such term can fix it);
- a BLIS-style additive model fitted per op and dtype on the calibration
  rows: compute on 16 x 6 register tiles (edge tiles' waste), C read and
  written once per K block of 256, B packed from four rows of A, A packed
  once per N block of 4096, a GEMV (M or N of 1) streaming its matrix, each
  with its own cost per byte plus an L2-miss and an L3-miss penalty (the
  working set against the tier's capacity); 15 non-negative coefficients per
  op and dtype, a non-negative least-squares start refined with a robust
  loss. More freedom than the reference model has, per op and dtype.

docs/model-fidelity.md ("Tried and dropped") has the figures of session 39.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import numpy as np
from bench_fidelity import _baselines, _rows_of
from scipy.optimize import least_squares, nnls

from graphsval_core.calibrate.rows import predict_rows
from graphsval_core.datamodel.dtypes import bytes_per_element
from graphsval_core.plugins.loader import build_registry

DEFAULT = ("host_amd_epyc_zen4_2c_1t", "host_intel_xeon_2c_1t")
NEIGHBOURS = 3
MR, NR, KC, NC = 16, 6, 256, 4096  # an AVX-512 sgemm's register tile and blocking


def _miss(working_set: float, capacity: float) -> float:
    return float(np.clip(1.0 - capacity / max(working_set, 1.0), 0.0, 1.0))


def _features(dims: Sequence[int], dtype: str, l2: float, l3: float) -> np.ndarray:
    """The BLIS-style model's terms of one product, each to be scaled by its
    fitted cost (seconds per unit)."""
    m, k, n = dims
    b = bytes_per_element(dtype)
    a_bytes, b_bytes, c_bytes = m * k * b, k * n * b, m * n * (2 if dtype == "bf16" else 4)
    ws = a_bytes + b_bytes + c_bytes
    gemv, rank1 = m == 1 or n == 1, k == 1
    blocked = not gemv and not rank1
    padded = -(-m // MR) * MR * (-(-n // NR) * NR) * k * 2.0
    c = 2.0 * c_bytes * (-(-k // KC) if blocked else 1.0) if blocked or rank1 else 0.0
    pack_b = float(b_bytes) if blocked and m >= 4 else 0.0
    pack_a = float(a_bytes) * -(-n // NC) if blocked else 0.0
    unpacked = float(b_bytes) * -(-m // MR) if blocked and m < 4 else 0.0
    stream = float(max(a_bytes, b_bytes) + c_bytes) if gemv else 0.0
    return np.array(
        [
            1.0,
            padded if blocked else 0.0,
            0.0 if blocked else 2.0 * m * k * n,
            c,
            c * _miss(c_bytes, l2),
            c * _miss(c_bytes, l3),
            pack_b,
            pack_b * _miss(ws, l2),
            pack_b * _miss(ws, l3),
            pack_a,
            pack_a * _miss(ws, l3),
            unpacked,
            unpacked * _miss(ws, l3),
            stream,
            stream * _miss(ws, l3),
        ]
    )


def _blis(cal: list, val: list, l2: float, l3: float) -> np.ndarray:
    """Validation predictions of the BLIS-style model fitted on ``cal``."""
    x = np.array([_features(r.dims, r.dtype, l2, l3) for r in cal])
    y = np.array([r.latency_s for r in cal])
    used = np.any(x != 0, axis=0)
    scale = np.where(used, np.abs(x).max(axis=0), 1.0)
    xs = x[:, used] / scale[used]
    w, _ = nnls(xs / y[:, None], np.ones(len(y)))
    start = np.log(np.maximum(w, 1e-6 * max(float(w.max()), 1e-9)))
    fit = least_squares(
        lambda lw: np.log((xs @ np.exp(lw)) / y), start, loss="soft_l1", f_scale=0.05
    )
    xv = np.array([_features(r.dims, r.dtype, l2, l3) for r in val])[:, used] / scale[used]
    return xv @ np.exp(fit.x)


def _nearest(cal: list, cal_pred: np.ndarray, val: list, val_pred: np.ndarray) -> np.ndarray:
    """``val_pred`` corrected by the median log residual of each row's nearest
    calibration shapes."""
    where = np.log2(np.array([r.dims for r in cal], dtype=np.float64))
    residual = np.log(np.array([r.latency_s for r in cal]) / cal_pred)
    out = np.empty(len(val))
    for i, r in enumerate(val):
        d = np.linalg.norm(where - np.log2(np.array(r.dims, dtype=np.float64)), axis=1)
        out[i] = val_pred[i] * np.exp(np.median(residual[np.argsort(d)[:NEIGHBOURS]]))
    return out


def _figures(pred: np.ndarray, measured: np.ndarray) -> str:
    e = np.abs(pred / measured - 1)
    return f"{np.median(e):6.1%} {np.mean(e <= 0.1):4.0%}"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="bench_ceiling", description=__doc__.split("\n")[0])
    parser.add_argument("targets", nargs="*", default=list(DEFAULT))
    args = parser.parse_args(argv)
    registry = build_registry(plugin_args=["no:workspace"])
    unknown = [key for key in args.targets if key not in registry.targets()]
    if unknown:
        print(f"bench_ceiling: unknown target {unknown[0]!r}", file=sys.stderr)
        return 2
    for key in args.targets:
        model = registry.target(key)
        tiers = {t.name: t for t in model.tiers}
        l2 = tiers["l2"].total_capacity_bytes if "l2" in tiers else 1 << 20
        l3 = tiers["l3"].effective_capacity_bytes if "l3" in tiers else 16e6
        cal_all = _rows_of(_baselines(registry, key, "calibration"), key)
        val_all = _rows_of(_baselines(registry, key, "validation"), key)
        print(f"{key}: products' validation, median |error| and share within 10%")
        head = f"{'model':>11s}  {'nearest':>11s}  {'BLIS':>11s}"
        print(f"  {'op':7s} {'dtype':5s} {'rows':>5s}  {head}")
        pooled: dict[str, list[np.ndarray]] = {"model": [], "nearest": [], "blis": [], "y": []}
        groups = sorted({(r.op, r.dtype) for r in cal_all if r.op != "vector_add"})
        for op, dtype in groups:
            cal = [r for r in cal_all if (r.op, r.dtype) == (op, dtype)]
            val = [r for r in val_all if (r.op, r.dtype) == (op, dtype)]
            if not val or len(cal) < 20:
                continue
            cal_pred, _ = predict_rows(registry, model, cal)
            val_pred, _ = predict_rows(registry, model, val)
            y = np.array([r.latency_s for r in val])
            near = _nearest(cal, cal_pred, val, val_pred)
            blis = _blis(cal, val, l2, l3)
            for name, p in (("model", val_pred), ("nearest", near), ("blis", blis), ("y", y)):
                pooled[name].append(p)
            print(
                f"  {op:7s} {dtype:5s} {len(val):5d}  {_figures(val_pred, y)}  "
                f"{_figures(near, y)}  {_figures(blis, y)}"
            )
        if not pooled["y"]:
            print("  no op and dtype with 20 calibration rows and validation rows")
        else:
            y = np.concatenate(pooled["y"])
            cells = [_figures(np.concatenate(pooled[n]), y) for n in ("model", "nearest", "blis")]
            print(f"  {'all':7s} {'':5s} {len(y):5d}  " + "  ".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
