"""One table, :data:`PER_DTYPE_CONSTANTS`, says how a calibration file holds
each per-dtype constant; checking, applying and the fit's judgement of a
share all read it."""

from __future__ import annotations

from collections.abc import Mapping

import attrs
import pytest

from graphsval_core.calibrate.fit import apart
from graphsval_core.datamodel.provenance import estimated
from graphsval_core.datamodel.target import SpecError, TargetSpec
from graphsval_core.files.calibration import (
    SHARES,
    apply_constants,
    current_values,
    share_spread,
)
from graphsval_core.files.calibration_file import (
    PER_DTYPE_CONSTANTS,
    RANGES,
    CalibrationFileError,
    check_calibration,
    known_constants,
)
from graphsval_core.model.predict import predict_shapes
from graphsval_core.plugins.loader import build_registry

FIELDS = {a.name for a in attrs.fields(TargetSpec)}


def test_every_constant_of_the_table_is_a_per_dtype_field_of_a_spec_with_a_range(make_target):
    spec = make_target()
    for name, how in PER_DTYPE_CONSTANTS.items():
        assert name in FIELDS, name
        assert isinstance(getattr(spec, name), Mapping), name
        assert how.range in RANGES, name
        if how.share:  # judged by its spread: a share of at most 1
            assert RANGES[how.range][1] is not None and RANGES[how.range][1] <= 1, name


def _file(spec, name, value):
    return {
        "target": spec.key,
        "constants": {name: {"value": value}},
        "provenance": {"sources": [], "graphsval_version": "0"},
    }


def test_a_share_of_the_table_is_checked_applied_and_judged_by_its_spread(make_target):
    spec = make_target(
        accumulator_lanes={"fp32": estimated(16, "t")},
        narrow_n_columns={"fp32": estimated(11, "t")},
        narrow_n_fraction={"fp32": estimated(0.25, "t")},
    )
    name = "narrow_n_fraction.fp32"
    assert name in known_constants(spec)
    check_calibration(_file(spec, name, 0.3), "f.json", spec)
    with pytest.raises(CalibrationFileError, match=r"f\.json: constants\.narrow_n_fraction"):
        check_calibration(_file(spec, name, 1.5), "f.json", spec)
    applied = apply_constants(spec, {name: 0.3}, "fit")
    assert applied.narrow_n_fraction["fp32"] == 0.3
    assert applied.provenance[name].kind == "calibrated"
    assert name.startswith(SHARES) and share_spread(name, 0.3, 0.5) == pytest.approx(0.15)
    assert apart(name, 0.1, 0.4) == pytest.approx(0.3 / 0.25)


def test_a_constant_only_for_the_dtypes_the_spec_gives_is_refused_for_another(make_target):
    spec = make_target(
        peak_ops_per_s={"fp32": estimated(1e11, "t"), "bf16": estimated(1e11, "t")},
        energy_per_op_j={"fp32": estimated(1e-12, "t"), "bf16": estimated(1e-12, "t")},
        pack_bps={"fp32": estimated(2e10, "t")},
        pack_min_rows={"fp32": estimated(3, "t")},
    )
    assert PER_DTYPE_CONSTANTS["pack_bps"].spec_dtypes_only
    check_calibration(_file(spec, "pack_bps.fp32", 3e10), "f.json", spec)
    with pytest.raises(CalibrationFileError, match="gives no pack_bps for bf16"):
        check_calibration(_file(spec, "pack_bps.bf16", 3e10), "f.json", spec)
    # a dispatch may be calibrated for any of the spec's dtypes
    assert not PER_DTYPE_CONSTANTS["dispatch_overhead_s"].spec_dtypes_only
    check_calibration(_file(spec, "dispatch_overhead_s.bf16", 3e-6), "f.json", spec)


def _file_takes(spec, name, value) -> bool:
    try:
        check_calibration(_file(spec, name, value), "f.json", spec)
    except CalibrationFileError:
        return False
    return True


def _spec_takes(spec, name, value) -> bool:
    try:
        apply_constants(spec, {name: value}, "fit")
    except SpecError:
        return False
    return True


def test_the_tables_ranges_agree_with_what_a_spec_accepts():
    # a file may not hold a value the spec would refuse once applied, nor refuse
    # one it takes: 0 for each constant the table applies as a value (a latency
    # that must stay above 0, a rate), and a share at and beyond its range's top
    registry = build_registry()
    seen = set()
    for key in sorted(registry.targets()):
        spec = registry.datasheet_target(key)
        for name in known_constants(spec):
            head = name.partition(".")[0]
            how = PER_DTYPE_CONSTANTS.get(head)
            if how is None or not how.replaces or "." not in name:
                continue
            seen.add(head)
            low, high, _ = RANGES[how.range]
            probes = [0.0] if low == 0.0 else []
            if how.range in ("product_share", "unit_share"):
                probes += [high, 1.5 * high]
            for value in probes:
                assert _file_takes(spec, name, value) == _spec_takes(spec, name, value), (
                    key,
                    name,
                    value,
                )
    # the installed targets exercise most of the table
    assert len(seen) >= len(PER_DTYPE_CONSTANTS) - 3, sorted(set(PER_DTYPE_CONSTANTS) - seen)


def test_a_library_constant_for_a_dtype_no_library_runs_is_refused():
    # the Zen 3 host runs bf16 in PyTorch's own kernel: a dispatch or a packing rate
    # of bf16's library would be taken and change nothing
    spec = build_registry().datasheet_target("host_amd_epyc_2c_1t")
    assert "bf16" in spec.no_gemm_library
    for name in ("dispatch_overhead_s.bf16", "gemv_fraction.bf16", "pack_a_bps.bf16"):
        with pytest.raises(CalibrationFileError, match="bf16.*so no calibration can set one"):
            value = 0.5 if "fraction" in name else 3e-6 if name.endswith("_s.bf16") else 1e10
            check_calibration(_file(spec, name, value), "f", spec)
    check_calibration(_file(spec, "dispatch_overhead_s.fp32", 3e-6), "f.json", spec)
    check_calibration(_file(spec, "energy_per_op_j.bf16", 1e-11), "f.json", spec)


HOST = "host_amd_epyc_2c_1t"


def test_the_products_share_of_a_dtype_no_library_runs_is_a_calibration_s_to_set():
    # the framework's own bf16 kernel streams at the products' share too: a calibration
    # may set it (calibrate fits it from two bf16 products a memory tier bounds), and it
    # moves the bf16 products' time as the same share in a target file does
    registry = build_registry()
    check_calibration(
        _file(registry.datasheet_target(HOST), "product_bandwidth_fraction.bf16", 0.05),
        "f.json",
        registry.datasheet_target(HOST),
    )
    spec = registry.target(HOST)  # as calibrated: its bf16 linear bound by a memory tier
    assert "bf16" in spec.no_gemm_library
    shares = apply_constants(spec, {"product_bandwidth_fraction.bf16": 0.05}, "test")
    assert shares.bandwidth_share("bf16") == pytest.approx(0.05)
    slow = predict_shapes(registry, shares, "linear", [[2, 4096, 4096]], "bf16")
    base = predict_shapes(registry, spec, "linear", [[2, 4096, 4096]], "bf16")
    assert slow.latency_s[0] > 2 * base.latency_s[0]


def test_the_spec_s_value_of_every_constant_of_the_table_is_known_beside_the_fit():
    """``current_values`` gives calibrate the spec's value (the file's
    ``datasheet``) of every per-dtype constant the spec gives a dtype, read
    from the table: a constant added to the table is not left out."""
    registry = build_registry()
    for key in registry.targets():
        spec = registry.target(key)  # as calibrated, every fitted constant given
        values = current_values(spec)
        for name in PER_DTYPE_CONSTANTS:
            for dtype, value in getattr(spec, name).items():
                assert values[f"{name}.{dtype}"] == value, (spec.key, name, dtype)
        for dtype in spec.dtypes:  # and the three every dtype has, defaults included
            assert values[f"dispatch_overhead_s.{dtype}"] == spec.launch_for(dtype)
            assert values[f"compute_fraction.{dtype}"] == spec.compute_fraction[dtype]
            assert values[f"energy_per_op_j.{dtype}"] == spec.energy_per_op_j[dtype]
