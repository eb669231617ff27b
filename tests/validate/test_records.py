"""The typed, columnar validation records: one schema, serialised in its order."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest

from graphsval_core.validate.records import RECORD_FIELDS, Records, Terms


def _two() -> Records:
    return Records.build(
        2,
        hardware=["a", "b"],
        op="matmul",
        status=["checked", "excluded"],
        passed=np.array([True, None], dtype=object),
        latency_measured_s=[1.0, np.nan],
        line=[3, 4],
        excluded_reason=[None, "capture failed"],
    )


def test_schema_order_is_the_report_order():
    assert RECORD_FIELDS[:4] == ("hardware", "op", "shape", "dtype")
    assert RECORD_FIELDS[27:30] == ("file", "line", "notes")
    assert "terms" not in RECORD_FIELDS
    assert len(RECORD_FIELDS) == len(set(RECORD_FIELDS)) == 55


def test_records_carry_the_structured_terms():
    """Per tier bytes, times and energy, compute, launch, packing, first touch
    and the energy split: a record says what explain --json says of its shape."""
    for tier in ("l1", "l2", "l3", "dram"):
        for name in (f"bytes_{tier}", f"memory_{tier}_s", f"energy_{tier}_j"):
            assert name in RECORD_FIELDS
    for name in ("launch_s", "compute_s", "pack_s", "first_touch_s", "energy_static_j"):
        assert name in RECORD_FIELDS


def test_absent_values_read_as_none_and_present_ones_as_plain_python():
    r = _two()
    first, second = r.row(0), r.row(1)
    assert list(first) == list(RECORD_FIELDS)
    assert first["latency_measured_s"] == 1.0 and type(first["latency_measured_s"]) is float
    assert second["latency_measured_s"] is None  # NaN is "absent"
    assert first["passed"] is True and second["passed"] is None
    assert first["op"] == second["op"] == "matmul"  # one value broadcast to every record
    assert type(first["line"]) is int and first["line"] == 3
    assert first["shape"] is None  # a field never given
    json.dumps(first)  # plain JSON types only, no numpy scalars


def test_numpy_flags_become_python_bools():
    r = Records.build(2, passed=np.array([True, False]))
    assert [type(v) for v in r.passed] == [bool, bool]


def test_take_and_concat_keep_fields_and_terms_aligned():
    r = _two()
    terms = Terms.empty(2)
    assert np.isnan(terms.compute_s).all()
    both = Records.concat([r, r.take(np.array([1]))])
    assert len(both) == 3
    assert list(both.hardware) == ["a", "b", "b"]
    assert both.terms.launch_s.shape == (3,)
    assert list(both.checked) == [True, False, False]


def test_unknown_field_is_refused():
    with pytest.raises(TypeError, match="not record fields: bogus"):
        Records.build(1, bogus=[1])


def test_csv_writes_absent_values_empty():
    from graphsval_core.validate.harness import Validation
    from graphsval_core.validate.report import records_csv

    text = records_csv(Validation(_two(), "reference"))
    rows = list(csv.DictReader(io.StringIO(text)))
    assert list(rows[0]) == list(RECORD_FIELDS)
    assert rows[1]["latency_measured_s"] == "" and rows[0]["latency_measured_s"] == "1.0"
    assert rows[1]["excluded_reason"] == "capture failed"
