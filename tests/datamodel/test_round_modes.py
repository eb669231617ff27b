"""Two modes in a shape's rounds: found when the rounds split into two tight
groups far apart, never for a quiet row, a lone straggler or a wide drift."""

from __future__ import annotations

import pytest

from graphsval_core.datamodel.round_modes import (
    MODES_REASON,
    Modes,
    round_latencies,
    two_modes,
)

# the shipped host's bf16 matmul 21520x21x944: a fresh output on some rounds only
ALTERNATING = [19.004e-3, 2.732e-3, 20.269e-3, 2.5338e-3, 17.893e-3, 2.7198e-3, 17.969e-3]


def test_rounds_that_alternate_between_two_states_are_two_modes():
    modes = two_modes(ALTERNATING)
    assert modes == Modes(2.7198e-3, 3, pytest.approx(18.4865e-3), 4)
    reason = modes.reason()
    assert reason.startswith(MODES_REASON) and "3 at 2.72 ms and 4 at 18.5 ms" in reason
    assert ";" not in reason and "\n" not in reason


@pytest.mark.parametrize(
    "rounds",
    [
        [1.00, 1.02, 0.98, 1.05, 1.01, 0.99, 1.03],  # quiet
        [1.00, 1.02, 0.98, 1.05, 1.01, 0.99, 3.00],  # one straggler: an outlier, not a mode
        [2.37, 2.44, 2.86, 3.46, 3.62, 4.12, 6.99],  # a drift: wide groups
        [1.0, 1.25, 1.0, 1.25],  # two groups 25% apart: within the noise of these VMs
        [1.0, 2.0, 1.0],  # too few rounds for two groups of two
    ],
)
def test_one_group_is_not_two_modes(rounds):
    assert two_modes(rounds) is None


def test_missing_and_unphysical_rounds_are_left_out():
    assert two_modes([1.0, None, 1.01, float("nan"), 2.0, 0.0, 2.02, -1.0]) == Modes(
        pytest.approx(1.005), 2, pytest.approx(2.01), 2
    )


def test_the_column_reads_as_seconds():
    assert round_latencies("1.0e-3  2.5e-03 ") == [1e-3, 2.5e-3]  # an empty round: two spaces
    assert round_latencies("") == [] and round_latencies(None) == []
    assert round_latencies("1e-3 fast") == []


def test_the_gap_between_modes_is_twice_the_outlier_floor():
    from graphsval_core.datamodel.round_modes import MODE_GAP
    from graphsval_core.measure.rounds import OUTLIER_FLOOR

    assert abs(MODE_GAP - 2 * OUTLIER_FLOOR) < 1e-12
