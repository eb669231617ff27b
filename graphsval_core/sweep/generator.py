"""The deterministic, seeded generator of the frozen sweeps (``graphsval sweep generate``).

For each op, dtype and purpose it draws a pool of candidate shapes from a
seeded generator (square, skinny, tall and free-form products; vector adds
log-uniform over every tier), keeps those small enough to capture (working set
and op count caps), classifies each on every first-party target, and picks
shapes greedily so that every (measured target, regime) cell reachable at that
dtype gets its quota: a regime is never left with a handful of shapes. Shapes
of the shipped real-hardware calibration baselines are put in the calibration
set first; the validation set never contains a calibration shape. Each
calibration set then gets the structured coverage grid of :mod:`.coverage`
(a matrix product's, or an elementwise op's sizes across every tier; less any
drawn shape), which moves no drawn entry.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from graphsval_core import __version__
from graphsval_core.datamodel.dtypes import bytes_per_element
from graphsval_core.datamodel.errors import UserInputError
from graphsval_core.datamodel.regimes import AMBIGUOUS, UNSUPPORTED
from graphsval_core.files.baseline import read_many
from graphsval_core.files.sweep import Sweep, SweepEntry
from graphsval_core.model.classifier import classify
from graphsval_core.plugins.first_party import (
    CORE_DISTRIBUTION,
    FIRST_PARTY_DISTRIBUTIONS,
    is_first_party,
)
from graphsval_core.sweep.coverage import grid_for

if TYPE_CHECKING:
    from graphsval_core.datamodel.op import OpSpec
    from graphsval_core.datamodel.target import TargetSpec
    from graphsval_core.plugins.registry import Registry

DEFAULT_SEED = 20261129
OPS: tuple[str, ...] = ("matmul", "linear", "vector_add")
#: dtypes per op: CPU fp32/bf16, GPU and Jetson fp16/bf16, int8 where torch has a
#: real int8 GEMM kernel (torch._int_mm), i.e. for matmul only.
DTYPES: dict[str, tuple[str, ...]] = {
    "matmul": ("fp32", "fp16", "bf16", "int8"),
    "linear": ("fp32", "fp16", "bf16"),
    "vector_add": ("fp32", "fp16", "bf16"),
}
#: Shapes per dtype and purpose, and the quota of each (target, regime) cell.
TOTAL = {"calibration": 30, "validation": 80}
QUOTA = {"calibration": 3, "validation": 8}
POOL = 40000
#: Capture budget caps: working set and op count per shape.
MAX_WORKING_SET_BYTES = 2 * 1024**3
MAX_OPS = 2e10


class SweepGenerationError(UserInputError):
    pass


def first_party_targets(registry: Registry) -> list[TargetSpec]:
    """Targets labelled inline: first-party and not detected (the host is
    labelled through the named target its capture creates)."""
    out = []
    for key, target in sorted(registry.targets().items()):
        info = registry.target_plugin(key)
        if is_first_party(info.distribution) and not target.detected:
            out.append(target)
    return out


def _loguniform(rng: np.random.Generator, low: float, high: float, size: int) -> np.ndarray:
    return np.exp(rng.uniform(np.log(low), np.log(high), size))


def _round_dims(values: np.ndarray) -> np.ndarray:
    """Integers; above 64, multiples of 16 as real layer sizes are."""
    v = np.maximum(1, np.round(values)).astype(np.int64)
    return np.where(v > 64, (v + 8) // 16 * 16, v)


def candidates(op: OpSpec, rng: np.random.Generator, size: int = POOL) -> np.ndarray:
    """A pool of candidate shapes for ``op``."""
    if op.gemm_dims is None:
        return np.unique(_round_dims(2.0 ** rng.uniform(5, 28.5, size)))[:, None]
    quarter = size // 4
    square = _loguniform(rng, 8, 8192, quarter)
    parts = [
        np.stack([square, square, square], axis=1),  # square
        np.stack(
            [
                _loguniform(rng, 1, 64, quarter),
                _loguniform(rng, 64, 16384, quarter),
                _loguniform(rng, 64, 16384, quarter),
            ],
            axis=1,
        ),  # skinny (decode-like)
        np.stack(
            [
                _loguniform(rng, 1024, 65536, quarter),
                _loguniform(rng, 16, 1024, quarter),
                _loguniform(rng, 16, 1024, quarter),
            ],
            axis=1,
        ),  # tall (prefill-like)
        np.stack([_loguniform(rng, 1, 16384, size - 3 * quarter) for _ in range(3)], axis=1),
    ]
    return np.unique(_round_dims(np.concatenate(parts)), axis=0)


def _feasible(op: OpSpec, shapes: np.ndarray, dtype: str) -> np.ndarray:
    ws = op.working_set_bytes(shapes, bytes_per_element(dtype))
    return (ws <= MAX_WORKING_SET_BYTES) & (op.flops(shapes) <= MAX_OPS)


def labels_for(
    registry: Registry, targets: Sequence[TargetSpec], op: OpSpec, shapes: np.ndarray, dtype: str
) -> dict[str, np.ndarray]:
    """The classifier's label of every shape on every target."""
    return {t.key: classify(registry, t, op, shapes, dtype) for t in targets}


def _select(
    labels: dict[str, np.ndarray],
    stratify: Sequence[str],
    order: np.ndarray,
    preselected: np.ndarray,
    total: int,
    quota: int,
) -> list[int]:
    """Greedy: repeatedly take the candidate that fills the most under-quota
    (target, regime) cells, starting with the emptiest cell."""
    n = len(order)
    cells = sorted(
        {(hw, str(r)) for hw in stratify for r in labels[hw] if r not in (AMBIGUOUS, UNSUPPORTED)}
    )
    member = np.zeros((n, len(cells)), dtype=bool)
    for j, (hw, regime) in enumerate(cells):
        member[:, j] = labels[hw] == regime
    chosen = [int(i) for i in np.flatnonzero(preselected)]
    used = preselected.copy()
    counts = member[preselected].sum(axis=0)
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n)
    while len(chosen) < total:
        open_cells = (counts < quota) & (member[~used].sum(axis=0) > 0)
        if not open_cells.any():
            break
        neediest = np.flatnonzero(open_cells)[np.argmin(counts[open_cells])]
        pool = np.flatnonzero(member[:, neediest] & ~used)
        gain = member[pool][:, open_cells].sum(axis=1)
        best = pool[np.lexsort((rank[pool], -gain))[0]]
        chosen.append(int(best))
        used[best] = True
        counts += member[best]
    # fill up with non-ambiguous shapes in seeded order
    informative = member.any(axis=1)
    for i in order:
        if len(chosen) >= total:
            break
        if not used[i] and informative[i]:
            chosen.append(int(i))
            used[i] = True
    return chosen


def ground_truth_shapes(registry: Registry) -> dict[tuple[str, str], set[tuple[int, ...]]]:
    """(op, dtype) -> shapes of every shipped calibration baseline row, less the
    coverage grid (appended on its own after the draw, so that capturing it moves
    no drawn entry)."""
    out: dict[tuple[str, str], set[tuple[int, ...]]] = {}
    grids = {product: {shape for shape, _kind in grid_for(product)} for product in (True, False)}
    for baseline in read_many(path for _, path in registry.baseline_files()):
        for row in baseline.select("calibration"):
            if baseline.purpose_source == "none":
                continue
            if row.dims in grids[registry.op(row.op).gemm_dims is not None]:
                continue
            out.setdefault((row.op, row.dtype), set()).add(row.dims)
    return out


def coverage_entries(
    registry: Registry,
    targets: Sequence[TargetSpec],
    op: OpSpec,
    dtype: str,
    taken: set[tuple[int, ...]],
) -> list[SweepEntry]:
    """The coverage grid of ``op`` at ``dtype`` (:mod:`.coverage`: a matrix
    product's, or an elementwise op's sizes), labelled on every target, less
    the shapes in ``taken`` (the drawn calibration and validation entries) and
    those too large to capture."""
    if op.gemm_dims is None and len(op.dims) != 1:
        return []  # the stream grid is of one dimension
    grid = [(s, kind) for s, kind in grid_for(op.gemm_dims is not None) if s not in taken]
    if not grid:
        return []
    shapes = np.array([s for s, _ in grid], dtype=np.int64)
    keep = _feasible(op, shapes, dtype)
    shapes = shapes[keep]
    kinds = [kind for (_, kind), k in zip(grid, keep, strict=True) if k]
    labels = labels_for(registry, targets, op, shapes, dtype)
    return [
        SweepEntry(
            tuple(int(x) for x in shapes[i]),
            dtype,
            {hw: str(labels[hw][i]) for hw in labels},
            {"coverage": kinds[i]},
            op.name,
        )
        for i in range(len(shapes))
    ]


def generate(
    registry: Registry, ops: Iterable[str] = OPS, seed: int = DEFAULT_SEED
) -> dict[str, Sweep]:
    """Generate ``<op>_calibration.json`` and ``<op>_validation.json`` for ``ops``."""
    targets = first_party_targets(registry)
    present = {registry.target_plugin(t.key).distribution for t in targets}
    missing = FIRST_PARTY_DISTRIBUTIONS - {CORE_DISTRIBUTION} - present
    if missing:
        raise SweepGenerationError(
            f"generating the frozen sweeps needs every first-party plugin; missing: "
            f"{', '.join(sorted(missing))}"
        )
    truth = ground_truth_shapes(registry)
    command = f"graphsval sweep generate --seed {seed}"
    out: dict[str, Sweep] = {}
    for op_name in ops:
        op = registry.op(op_name)
        entries: dict[str, list[SweepEntry]] = {"calibration": [], "validation": []}
        for d_index, dtype in enumerate(DTYPES[op_name]):
            rng = np.random.default_rng([seed, OPS.index(op_name), d_index])
            pool = candidates(op, rng)
            pool = pool[_feasible(op, pool, dtype)]
            gt = sorted(truth.get((op_name, dtype), set()))
            gt_array = np.array(gt, dtype=np.int64).reshape(-1, len(op.dims))
            if len(gt):
                known = {tuple(s) for s in pool.tolist()}
                extra = [s for s in gt if s not in known]
                if extra:
                    pool = np.concatenate([pool, np.array(extra, dtype=np.int64)])
            stratify = [
                t.key for t in targets if t.ground_truth == "measured" and dtype in t.dtypes
            ]
            labels = labels_for(registry, targets, op, pool, dtype)
            order = rng.permutation(len(pool))
            index = {tuple(s): i for i, s in enumerate(pool.tolist())}
            pre = np.zeros(len(pool), dtype=bool)
            for s in gt_array.tolist():
                pre[index[tuple(s)]] = True
            cal_total = max(TOTAL["calibration"], len(gt) + 15)
            cal = _select(labels, stratify, order, pre, cal_total, QUOTA["calibration"])
            taken = np.zeros(len(pool), dtype=bool)
            taken[cal] = True
            # validation never sees a calibration (or ground-truth) shape
            val_labels = {hw: np.where(taken, AMBIGUOUS, lab) for hw, lab in labels.items()}
            val = _select(
                val_labels,
                stratify,
                order,
                np.zeros(len(pool), dtype=bool),
                TOTAL["validation"],
                QUOTA["validation"],
            )
            for purpose, chosen in (("calibration", cal), ("validation", val)):
                for i in sorted(chosen, key=lambda i: tuple(pool[i])):
                    entries[purpose].append(
                        SweepEntry(
                            tuple(int(x) for x in pool[i]),
                            dtype,
                            {hw: str(labels[hw][i]) for hw in labels},
                            {},
                            op_name,
                        )
                    )
            drawn = {tuple(int(x) for x in pool[i]) for i in (*cal, *val)}
            entries["calibration"] += coverage_entries(registry, targets, op, dtype, drawn)
        for purpose in ("calibration", "validation"):
            name = f"{op_name}_{purpose}.json"
            out[name] = Sweep(
                name,
                op_name,
                purpose,
                tuple(entries[purpose]),
                {
                    "seed": seed,
                    "generator": {"command": command, "graphsval_version": __version__},
                },
            )
    return out
