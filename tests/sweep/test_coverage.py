"""The coverage grids (issue 15 item 4): the matrix products' and the
elementwise op's. Every kind each promises is in the shipped calibration
sweeps, labelled, never a validation shape, and appending it moves no drawn
entry."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from graphsval_core.plugins.loader import build_registry
from graphsval_core.sweep.coverage import coverage_shapes, grid_for, stream_shapes
from graphsval_core.sweep.generator import (
    DTYPES,
    coverage_entries,
    first_party_targets,
    ground_truth_shapes,
)
from graphsval_core.sweep.labels import load_shipped

KINDS = {"gemv", "skinny_k", "skinny_n", "permutation", "square", "tall"}


@pytest.fixture(scope="module")
def registry():
    return build_registry()


@pytest.fixture(scope="module")
def shipped(registry):
    return load_shipped(registry, overlays=False)


def test_the_grid_holds_every_kind_without_duplicates():
    grid = coverage_shapes()
    shapes = [s for s, _ in grid]
    assert len(shapes) == len(set(shapes))
    kinds = Counter(kind for _, kind in grid)
    assert set(kinds) == KINDS
    assert {(1, 4096, 4096), (2, 2048, 2048)} <= set(shapes)  # GEMV with B in DRAM / L3
    assert {(4096, 1, 4096), (2048, 3, 2048)} <= set(shapes)  # outer products
    assert {(65536, 384, 32), (16384, 1024, 256)} <= set(shapes)  # a tall A beyond the LLC
    # the six orders of one triple
    assert sum(1 for s in shapes if sorted(s) == [16, 512, 4096]) == 6


@pytest.mark.parametrize("op", ["matmul", "linear"])
def test_shipped_calibration_sweeps_hold_the_grid(shipped, op):
    cal = shipped[f"{op}_calibration.json"]
    val = {(e.shape, e.dtype) for e in shipped[f"{op}_validation.json"].entries}
    grid = dict(coverage_shapes())
    for dtype in DTYPES[op]:
        covered = {e.shape: e for e in cal.entries if e.dtype == dtype and "coverage" in e.extra}
        assert {e.extra["coverage"] for e in covered.values()} == KINDS
        for shape, entry in covered.items():
            assert entry.extra["coverage"] == grid[shape]
            assert (shape, dtype) not in val
            assert entry.regime_per_hw  # labelled on every first-party target
        # every grid shape is either covered or already in a drawn set
        drawn = {e.shape for e in cal.entries if e.dtype == dtype and "coverage" not in e.extra}
        drawn |= {s for s, d in val if d == dtype}
        assert set(grid) <= set(covered) | drawn


def test_coverage_entries_skip_taken_shapes_for_products_and_adds(registry):
    targets = first_party_targets(registry)
    matmul = registry.op("matmul")
    (first, _), *_ = coverage_shapes()
    entries = coverage_entries(registry, targets, matmul, "fp32", {first})
    assert entries and first not in {e.shape for e in entries}
    assert all(e.op == "matmul" and e.dtype == "fp32" for e in entries)
    kinds = dict(coverage_shapes())
    assert all(e.extra == {"coverage": kinds[e.shape]} for e in entries)
    add = registry.op("vector_add")
    (smallest, _), *_ = stream_shapes()
    streams = coverage_entries(registry, targets, add, "bf16", {smallest})
    assert {e.shape for e in streams} == {s for s, _ in stream_shapes()} - {smallest}
    assert all(e.op == "vector_add" and e.extra == {"coverage": "stream"} for e in streams)


def test_captured_coverage_rows_are_not_ground_truth_of_the_draw(registry):
    """Capturing the grid must not change what the stratified draw preselects."""
    for (op, _dtype), shapes in ground_truth_shapes(registry).items():
        grid = {s for s, _ in grid_for(registry.op(op).gemm_dims is not None)}
        assert not (shapes & grid)


def test_the_stream_grid_has_two_sizes_per_octave_across_every_tier():
    sizes = np.array([s[0] for s, _ in stream_shapes()])
    assert len(sizes) == len(set(sizes)) == 31
    assert all(kind == "stream" for _, kind in stream_shapes())
    assert np.all(sizes % 16 == 0)
    assert not np.any((sizes & (sizes - 1)) == 0)  # no power of two, which the draw holds
    ratio = sizes[1:] / sizes[:-1]
    assert np.allclose(ratio, np.sqrt(2), rtol=0.02)
    # fp32 operands (three of four bytes) from inside any L1 to beyond any host's L3 share
    assert sizes[0] * 12 < 32 * 1024 and sizes[-1] * 12 > 256 * 1024**2


def test_no_stream_size_is_a_drawn_vector_add_shape(shipped):
    """ground_truth_shapes drops grid shapes: one that were also drawn would move the draw."""
    grid = {s for s, _ in stream_shapes()}
    for purpose in ("calibration", "validation"):
        entries = shipped[f"vector_add_{purpose}.json"].entries
        drawn = {e.shape for e in entries if "coverage" not in e.extra}
        assert not (drawn & grid)


def test_shipped_vector_add_calibration_sweep_holds_the_stream_grid(shipped):
    cal = shipped["vector_add_calibration.json"]
    val = {(e.shape, e.dtype) for e in shipped["vector_add_validation.json"].entries}
    grid = {s for s, _ in stream_shapes()}
    for dtype in DTYPES["vector_add"]:
        covered = [e for e in cal.entries if e.dtype == dtype and "coverage" in e.extra]
        assert {e.shape for e in covered} == grid
        assert all(e.extra["coverage"] == "stream" and e.regime_per_hw for e in covered)
        assert not {(e.shape, dtype) for e in covered} & val
