"""Fixtures of the CPU plugin's tests: an empty workspace for the session, and
the i7's spec made another family's."""

from collections.abc import Callable

import attrs
import pytest

from graphsval_core.plugin_api import TargetSpec
from graphsval_core.testing import (  # every test: an empty workspace
    graphsval_empty_workspace as graphsval_empty_workspace,
)
from graphsval_cpu.targets import i7_12700k


@pytest.fixture
def i7_as() -> Callable[..., TargetSpec]:
    """The i7's spec with ``changes`` (another key, family and architecture),
    without the CPU GEMM library's maps a non-CPU spec refuses: a GEMV's own
    team cost and the micro-kernel's lanes."""

    def make(**changes: object) -> TargetSpec:
        return attrs.evolve(i7_12700k(), gemv_fork_join_s={}, accumulator_lanes={}, **changes)

    return make
