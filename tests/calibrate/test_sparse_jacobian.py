"""The fit's Jacobian predicts only a dtype's rows for a constant of that
dtype (``<name>.<dtype>``): the columns must be exactly those a whole
evaluation gives, on every shipped calibration's rows, or a constant that
moves another dtype's rows (or a tier) would be fitted blind to them."""

from __future__ import annotations

import numpy as np
import pytest

from graphsval_core.calibrate.fit import Objective, _dtype_of
from graphsval_core.calibrate.params import choose_params
from graphsval_core.plugins.loader import build_registry
from tests.calibrate.test_shipped_calibrations import SHIPPED, shipped_rows


def test_a_constant_belongs_to_a_dtype_only_by_its_last_part():
    dtypes = {"fp32", "bf16"}
    assert _dtype_of("compute_fraction.fp32", dtypes) == "fp32"
    assert _dtype_of("narrow_n_fraction.bf16", dtypes) == "bf16"
    assert _dtype_of("compute_fraction.int8", dtypes) is None  # no int8 rows
    assert _dtype_of("tiers.fp32.achievable_fraction", dtypes) is None
    assert _dtype_of("tiers.l2.product_fraction", dtypes) is None
    assert _dtype_of("launch_overhead_s", dtypes) is None


@pytest.mark.parametrize("item", SHIPPED, ids=lambda i: i.name)
def test_the_sparse_jacobian_is_the_whole_one(item):
    registry = build_registry()
    _data, spec, rows = shipped_rows(registry, item)
    params = choose_params(registry, spec, rows)
    objective = Objective(registry, spec, rows, params)
    # somewhere off the start, so that no term sits at a kink of the spec's values
    x = np.log([p.value for p in params]) + np.linspace(-0.2, 0.2, len(params))
    x = np.minimum(x, objective.hi - 1e-3)
    sparse = objective.jacobian(x)
    whole = objective.jacobian(x, sparse=False)
    np.testing.assert_array_equal(sparse, whole)
    assert any(o is not None for o in objective.owners)  # the sparse path was taken
