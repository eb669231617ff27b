"""Spec validation: every error names the field at fault."""

from __future__ import annotations

import pytest

from graphsval_core.datamodel.provenance import Provenance, datasheet, estimated
from graphsval_core.datamodel.target import SpecError, TargetSpec


def test_valid_spec_keeps_plain_numbers_and_files_provenance(make_target):
    spec = make_target()
    assert spec.clock_hz == 2e9
    assert spec.provenance["clock_hz"] == Provenance("datasheet", "test")
    assert spec.provenance["peak_ops_per_s.fp32"].kind == "datasheet"
    assert spec.dtypes == ("fp32",)
    l1 = spec.tier("l1")
    assert l1.total_capacity_bytes == 4 * 32 * 1024
    assert l1.effective_bandwidth_bps == 1e12
    assert l1.provenance["achievable_fraction"].kind == "estimated"  # the default, flagged
    assert l1.regime == "l1_bound"


def test_negative_bandwidth_names_the_field(make_tier):
    with pytest.raises(SpecError) as err:
        make_tier("l2", peak_bandwidth_bps=datasheet(-1.0, "oops"))
    assert err.value.field == "tier 'l2': peak_bandwidth_bps"
    assert "must be > 0" in str(err.value)


def test_tiers_out_of_order_are_rejected(make_target, make_tier):
    with pytest.raises(SpecError) as err:
        make_target(tiers=[make_tier("l2", 1024**2), make_tier("l1", 32 * 1024)])
    assert err.value.field == "tiers[1].name"
    assert "innermost first" in str(err.value)


def test_tier_capacity_must_grow_outward(make_target, make_tier):
    with pytest.raises(SpecError) as err:
        make_target(tiers=[make_tier("l1", 1024**2), make_tier("l2", 1024)])
    assert err.value.field == "tiers[1].capacity_bytes"


def test_unknown_dtype_is_rejected(make_target):
    with pytest.raises(SpecError) as err:
        make_target(
            peak_ops_per_s={"fp13": datasheet(1e12, "x")},
            energy_per_op_j={"fp13": estimated(1e-12, "x")},
        )
    assert err.value.field == "peak_ops_per_s.fp13"
    assert "unknown dtype" in str(err.value)


def test_number_without_provenance_is_rejected(make_target):
    with pytest.raises(SpecError) as err:
        make_target(clock_hz=3e9)
    assert err.value.field == "clock_hz"
    assert "no provenance" in str(err.value)


def test_tier_number_without_provenance_is_rejected(make_tier):
    with pytest.raises(SpecError) as err:
        make_tier("l1", peak_bandwidth_bps=2e12)
    assert err.value.field == "tier 'l1': peak_bandwidth_bps"


def test_energy_and_peak_dtypes_must_match(make_target):
    with pytest.raises(SpecError) as err:
        make_target(
            peak_ops_per_s={"fp32": datasheet(1e12, "x"), "fp16": datasheet(2e12, "x")},
        )
    assert err.value.field == "energy_per_op_j.fp16"


@pytest.mark.parametrize(
    ("field", "value", "fragment"),
    [
        ("key", "Bad-Key", "must match"),
        ("architecture", "quantum", "not one of"),
        ("ground_truth", "vibes", "not one of"),
        ("compute_units", datasheet(0, "x"), "positive integer"),
        ("tdp_w", datasheet(float("nan"), "x"), "finite"),
        ("idle_power_w", estimated(500.0, "x"), "exceeds tdp_w"),
    ],
)
def test_scalar_fields_are_validated(make_target, field, value, fragment):
    with pytest.raises(SpecError) as err:
        make_target(**{field: value})
    assert err.value.field == field
    assert fragment in str(err.value)


def test_achievable_fraction_above_one_is_rejected(make_tier):
    with pytest.raises(SpecError) as err:
        make_tier("l1", achievable_fraction=estimated(1.5, "x"))
    assert err.value.field == "tier 'l1': achievable_fraction"
    # just above 1 reads as itself, not as a rounded 1 the range allows
    with pytest.raises(SpecError, match=r"got 1\.0000001"):
        make_tier("l1", achievable_fraction=estimated(1.0000001, "x"))


def test_shared_tier_usable_capacity(make_tier):
    l3 = make_tier(
        "l3",
        300 * 1024**2,
        is_per_unit=False,
        num_units=1,
        shared_with_tenants=True,
        usable_capacity_bytes=estimated(32 * 1024**2, "calibration pending"),
    )
    assert l3.effective_capacity_bytes == 32 * 1024**2
    with pytest.raises(SpecError) as err:
        make_tier(
            "l3", 1024, is_per_unit=False, num_units=1, usable_capacity_bytes=estimated(4096, "x")
        )
    assert err.value.field == "tier 'l3': usable_capacity_bytes"


def test_unknown_tier_name(make_tier):
    with pytest.raises(SpecError) as err:
        make_tier("l9")
    assert err.value.field == "tier 'l9': name"  # as the tier's other fields


def test_to_dict_carries_provenance(make_target):
    data = make_target().to_dict()
    assert data["provenance"]["tdp_w"] == "datasheet: test"
    assert data["tiers"][0]["provenance"]["peak_bandwidth_bps"] == "datasheet: test"
    assert data["dtypes"] == ["fp32"]


@pytest.mark.parametrize("key", ["host\n", "Host", "9host", "host-1", "", "hôst"])
def test_a_key_is_the_key_rule_and_nothing_after_it(make_target, key):
    """A trailing newline passed ``^...$`` (``$`` matches before it)."""
    assert not TargetSpec.valid_key(key)
    with pytest.raises(SpecError, match="key"):
        make_target(key)


def test_compute_units_too_many_for_the_peak_is_named_not_a_field_that_divides_by_it(
    make_target,
):
    # a count of lanes where cores belong leaves each unit a few ops/s of the peak;
    # the reference kernel's check (a multiply-add no faster than one unit's peak)
    # would otherwise be the one to fail
    from graphsval_core.datamodel.target import MIN_UNIT_OPS_PER_S

    spec = make_target()
    units = int(spec.peak_ops_per_s["fp32"] / MIN_UNIT_OPS_PER_S)
    with pytest.raises(SpecError) as err:
        make_target(compute_units=datasheet(units * 2, "lanes, not cores"))
    assert err.value.field == "compute_units"
    assert "ops/s each, below 1e+06" in str(err.value)
    assert make_target(compute_units=datasheet(units, "a million ops/s each")).compute_units
    # every dtype's peak is checked, not the first one only
    peaks = {"fp32": datasheet(256e9, "t"), "bf16": datasheet(5e8, "t")}
    energy = {"fp32": estimated(1e-12, "t"), "bf16": estimated(1e-12, "t")}
    with pytest.raises(SpecError, match="share the bf16 peak of 5e"):
        make_target(
            compute_units=datasheet(1000, "t"), peak_ops_per_s=peaks, energy_per_op_j=energy
        )
    # past a billion units no part exists, whatever the peak
    with pytest.raises(SpecError, match=r"2,000,000,000 is above 1e\+09"):
        make_target(
            compute_units=datasheet(2 * 10**9, "t"),
            peak_ops_per_s={"fp32": datasheet(1e18, "t")},
        )
