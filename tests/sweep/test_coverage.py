"""The coverage grid of the matrix products (issue 15 item 4): every kind it
promises is in the shipped calibration sweeps, labelled, never a validation
shape, and appending it moves no drawn entry."""

from __future__ import annotations

from collections import Counter

import pytest

from graphsval_core.plugins.loader import build_registry
from graphsval_core.sweep.coverage import coverage_shapes
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


def test_coverage_entries_skip_taken_shapes_and_ops_without_a_product(registry):
    targets = first_party_targets(registry)
    matmul = registry.op("matmul")
    (first, _), *_ = coverage_shapes()
    entries = coverage_entries(registry, targets, matmul, "fp32", {first})
    assert entries and first not in {e.shape for e in entries}
    assert all(e.op == "matmul" and e.dtype == "fp32" for e in entries)
    assert coverage_entries(registry, targets, registry.op("vector_add"), "fp32", set()) == []


def test_captured_coverage_rows_are_not_ground_truth_of_the_draw(registry):
    """Capturing the grid must not change what the stratified draw preselects."""
    grid = {s for s, _ in coverage_shapes()}
    for (op, _dtype), shapes in ground_truth_shapes(registry).items():
        if registry.op(op).gemm_dims is not None:
            assert not (shapes & grid)
