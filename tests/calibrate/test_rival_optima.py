"""A constant that another of the fit's starts puts far elsewhere at (almost)
the same cost is not pinned by the rows: the fit says so, whatever its
uncertainty at the chosen optimum."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from graphsval_core.calibrate.diagnostics import diagnose, rival_optima
from graphsval_core.calibrate.energy import EnergyFit
from graphsval_core.calibrate.fit import (
    RIVAL_COST,
    RIVAL_RATIO,
    RIVAL_SHARE,
    Fit,
    Rival,
    _rivals,
    apart,
)
from graphsval_core.calibrate.params import Param
from graphsval_core.files.calibration import fit_notes

PARAMS = [
    Param("compute_fraction.fp32", 1.0, 1e-3, 2.0, "237 fp32 rows"),
    Param("pack_bps.fp32", 2e10, 1e8, 1e13, "194 fp32 rows"),
    Param("product_overlap.fp32", 1.0, 1e-2, 1.0, "128 fp32 rows"),
]


def _end(cost, fraction, pack, overlap):
    return SimpleNamespace(cost=cost, x=np.log([fraction, pack, overlap]))


def test_a_constant_far_elsewhere_at_almost_the_same_cost_is_a_rival():
    best = _end(5.16, 0.29, 1.2e12, 0.18)
    ends = [
        _end(5.18, 0.83, 1.2e12 * 1.2, 0.22),  # +0.4%: fp32 2.9x apart; the rest close
        best,
        _end(5.16 * (1 + 2 * RIVAL_COST), 0.03, 3e11, 0.9),  # everything apart, but costlier
    ]
    found = _rivals(PARAMS, ends, best)
    assert set(found) == {"compute_fraction.fp32"}
    assert found["compute_fraction.fp32"].value == pytest.approx(0.83)
    assert found["compute_fraction.fp32"].cost_ratio == pytest.approx(5.18 / 5.16)


def test_the_farthest_of_several_rivals_is_kept():
    best = _end(1.0, 0.3, 1e11, 0.5)
    twice, thrice = _end(1.001, 0.6, 1e11, 0.5), _end(1.002, 0.1, 1e11, 0.5)
    # 0.3 -> 0.1 is a factor 3, 0.3 -> 0.6 a factor 2: the farther wins in either order
    for ends in ([best, twice, thrice], [thrice, best, twice]):
        assert _rivals(PARAMS, ends, best)["compute_fraction.fp32"].value == pytest.approx(0.1)


def test_a_share_is_apart_by_a_quarter_of_its_range_not_by_its_ratio():
    # 0.01 and 0.04 are four times apart, but 0.03 of a share: the same finding
    assert apart("product_overlap.fp32", 0.01, 0.04) < 1
    assert apart("product_overlap.fp32", 0.2, 0.2 + RIVAL_SHARE * 1.01) > 1
    assert apart("pack_bps.fp32", 1e11, 1e11 * RIVAL_RATIO * 0.99) < 1
    assert apart("pack_bps.fp32", 1e11, 1e11 / (RIVAL_RATIO * 1.01)) > 1
    best = _end(1.0, 0.3, 1e11, 0.01)
    assert _rivals(PARAMS, [best, _end(1.0, 0.3, 1e11, 0.04)], best) == {}
    moved = _rivals(PARAMS, [best, _end(1.0, 0.3, 1e11, 0.6)], best)
    assert moved["product_overlap.fp32"].value == pytest.approx(0.6)


def test_one_start_has_no_rival():
    best = _end(1.0, 0.3, 1e11, 0.5)
    assert _rivals(PARAMS, [best], best) == {}


def _fit(rivals, held=None, uncertainty=None):
    values = {"compute_fraction.fp32": 0.29, "pack_bps.fp32": 1.2e12, "product_overlap.fp32": 0.18}
    unc = uncertainty or {name: 0.1 for name in values}
    return Fit(values, unc, np.zeros(0), PARAMS, [], held=held or {}, rivals=rivals)


def test_the_warning_names_both_values_in_the_constants_terms(make_target):
    from graphsval_core.datamodel.provenance import estimated

    # a fit gives a multiplier of the spec's compute fraction: the warning gives fractions
    spec = make_target("toy", compute_fraction={"fp32": estimated(0.5, "t")})
    spec_fraction = spec.compute_fraction["fp32"]
    assert spec_fraction == 0.5
    fit = _fit({"compute_fraction.fp32": Rival(0.83, 1.0053)})
    (found,) = rival_optima(spec, fit, set())
    assert found.kind == "rival_optimum" and found.subject == "compute_fraction.fp32"
    ours, theirs = f"{0.29 * spec_fraction:.3g}", f"{0.83 * spec_fraction:.3g}"
    assert found.line == (
        "warning: compute_fraction.fp32 is not pinned by these rows: another start of the "
        f"fit ends at a cost 0.53% above this one's with it at {theirs} (this fit: {ours}), "
        "so the rows do not choose between the two; its uncertainty only sees the slope "
        "around this fit: add rows that tell them apart"
    )
    hair = rival_optima(spec, _fit({"pack_bps.fp32": Rival(3e11, 1.0001)}), set())
    assert "ends at a cost 0.01% above this one's with it at 3e+11 B/s" in hair[0].line
    same = rival_optima(spec, _fit({"pack_bps.fp32": Rival(3e11, 1.00004)}), set())
    assert (
        "ends at the same cost as this one with it at 3e+11 B/s (this fit: 1.2e+12 B/s)"
        in same[0].line
    )


def test_a_constant_already_unidentified_or_held_gets_no_second_warning(make_target):
    spec = make_target("toy")
    rivals = {"compute_fraction.fp32": Rival(0.83, 1.001), "pack_bps.fp32": Rival(3e11, 1.0)}
    assert rival_optima(spec, _fit(rivals), {"pack_bps.fp32"})[0].subject == (
        "compute_fraction.fp32"
    )
    held = _fit(rivals, held={"compute_fraction.fp32": "held"})
    assert [d.subject for d in rival_optima(spec, held, {"pack_bps.fp32"})] == []


def test_diagnose_warns_of_a_rival_after_the_uncertain_and_only_once(make_target):
    spec = make_target("toy")
    rivals = {"compute_fraction.fp32": Rival(0.83, 1.001), "pack_bps.fp32": Rival(3e11, 1.0)}
    # pack_bps.fp32 is already uncertain (2000%): one warning for it, not two
    fit = _fit(rivals, uncertainty={"compute_fraction.fp32": 0.1, "pack_bps.fp32": 20.0})
    energy = EnergyFit({}, [], 0, 0.0)
    kinds = [(d.kind, d.subject) for d in diagnose(spec, fit, energy)]
    assert kinds.index(("uncertain", "pack_bps.fp32")) < kinds.index(
        ("rival_optimum", "compute_fraction.fp32")
    )
    assert [s for k, s in kinds if s == "pack_bps.fp32"] == ["pack_bps.fp32"]


def test_targets_fit_column_says_two_optima():
    data = {
        "constants": {
            "compute_fraction.fp32": {"value": 0.29, "relative_uncertainty": 0.13},
            "pack_bps.fp32": {"value": 1.2e12, "relative_uncertainty": 0.1},
        },
        "fit": {
            "diagnostics": [
                {"kind": "rival_optimum", "subject": "compute_fraction.fp32", "message": "m"}
            ]
        },
    }
    notes = fit_notes(data)
    assert notes["compute_fraction.fp32"] == "+- 13%, two optima"
    assert notes["pack_bps.fp32"] == "+- 10%"
    data["fit"]["diagnostics"].append("a stray string")  # not a record: read past
    assert fit_notes(data)["compute_fraction.fp32"] == "+- 13%, two optima"
    assert math.isclose(RIVAL_COST, 0.01)


def test_the_fit_keeps_each_starts_end_and_names_the_rivals(monkeypatch, intel_adds):
    import scipy.optimize

    from graphsval_core.calibrate.fit import fit_latency

    registry, spec, rows, params = intel_adds
    moved = [p.name for p in params].index("launch_overhead_s")
    real = scipy.optimize.least_squares
    ends = []

    def each(fun, x0, **kw):
        result = real(fun, x0, **{**kw, "max_nfev": 3})
        if ends:  # every later start: launch_overhead_s 3x the first's; the second cheapest
            x = ends[0].x.copy()
            x[moved] += math.log(3.0)
            cost = ends[0].cost * (0.996 if len(ends) == 1 else 1.002)
            result = scipy.optimize.OptimizeResult({**ends[0], "x": x, "cost": cost})
        ends.append(result)
        return result

    monkeypatch.setattr(scipy.optimize, "least_squares", each)
    fit = fit_latency(registry, spec, rows, params)
    assert len(ends) == 5
    # each start's end is kept, in order, the chosen one among them
    assert [cost for cost, _x in fit.ends] == [end.cost for end in ends]
    assert any(np.array_equal(x, fit.x) for _cost, x in fit.ends)
    # the second start's end is kept; the first's, 0.4% dearer, is the rival
    assert np.array_equal(fit.x, ends[1].x)
    assert set(fit.rivals) == {"launch_overhead_s"}
    rival = fit.rivals["launch_overhead_s"]
    assert rival.value == pytest.approx(fit.values["launch_overhead_s"] / 3.0)
    assert rival.cost_ratio == pytest.approx(1 / 0.996)
    # a refit from one start (grouped CV's) has none
    assert fit_latency(registry, spec, rows, params, x_start=fit.x).rivals == {}


def test_an_exact_fit_shows_no_uncertainty_in_the_fit_column():
    data = {
        "constants": {
            "launch_overhead_s": {"value": 2e-6, "relative_uncertainty": 5e-12},
            "first_touch_bps": {"value": 1e10},
        },
        "fit": {"diagnostics": [{"kind": "exact_fit", "subject": "fit", "message": "m"}]},
    }
    notes = fit_notes(data)
    assert notes == {"launch_overhead_s": "exact fit, no +-"}
    data["fit"]["diagnostics"] = []
    assert fit_notes(data)["launch_overhead_s"] == "+- 5e-10%"
