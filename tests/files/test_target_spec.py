"""Specs survive a JSON round trip with their provenance (snapshot targets)."""

from __future__ import annotations

from graphsval_core.files.target_spec import read_spec, spec_to_json, write_spec
from graphsval_core.plugins.loader import build_registry


def test_every_installed_target_round_trips(tmp_path):
    for target in build_registry().targets().values():
        path = tmp_path / f"{target.key}.target.json"
        write_spec(target, path)
        back = read_spec(path)
        assert spec_to_json(back) == spec_to_json(target), target.key
        assert back.provenance == target.provenance


def test_a_provenance_entry_that_is_not_an_object_is_named(tmp_path):
    import json

    import pytest

    from graphsval_core.files.target_spec import TargetFileError

    target = build_registry().target("host_intel_xeon_2c_1t")
    data = spec_to_json(target)
    cases = [
        (("provenance", "pack_a_bps.fp32"), "estimated", "provenance.pack_a_bps.fp32: expected"),
        (
            ("provenance", "clock_hz"),
            {"source": "x"},
            "provenance.clock_hz.kind: expected a string",
        ),
        (
            ("provenance", "clock_hz"),
            {"kind": "guess", "source": "x"},
            "provenance.clock_hz.kind: 'guess' is not one of datasheet",
        ),
        (
            ("provenance", "clock_hz"),
            {"kind": "detected", "source": "  "},
            "provenance.clock_hz.source: expected a non-empty string",
        ),
        (
            ("provenance", "clock_hz"),
            {"kind": "detected"},
            "provenance.clock_hz.source: expected a string",
        ),
    ]
    for (top, key), bad, fragment in cases:
        broken = json.loads(json.dumps(data))
        broken[top][key] = bad
        path = tmp_path / "t.target.json"
        path.write_text(json.dumps(broken))
        with pytest.raises(TargetFileError) as info:
            read_spec(path)
        assert fragment in str(info.value) and "\n" not in str(info.value)
    broken = json.loads(json.dumps(data))
    broken["tiers"][0]["provenance"]["capacity_bytes"] = 3
    path.write_text(json.dumps(broken))
    with pytest.raises(TargetFileError, match=r"tiers\[0\]\.provenance\.capacity_bytes: expected"):
        read_spec(path)


def test_a_rate_near_zero_in_a_target_file_is_refused_by_name(tmp_path):
    # 1e-300 B/s used to give latencies of 1e306 s (predict --format json printed them)
    import json

    import pytest

    from graphsval_core.files.target_spec import TargetFileError

    data = spec_to_json(build_registry().target("host_intel_xeon_2c_1t"))
    cases = [
        (
            ("tiers", 1, "peak_bandwidth_bps"),
            "tiers[1].peak_bandwidth_bps (tier 'l2'): 1e-300 B/s",
        ),
        (
            ("tiers", 1, "achievable_fraction"),
            "tiers[1].peak_bandwidth_bps (tier 'l2') x achievable_fraction",
        ),
        (  # a matrix product's share of a tier is a fraction of a rate too
            ("product_bandwidth_fraction", "fp32"),
            "x achievable_fraction x product_bandwidth_fraction.fp32: ",
        ),
        (("peak_ops_per_s", "fp32"), "peak_ops_per_s.fp32: 1e-300 ops/s"),
        (("compute_fraction", "fp32"), "peak_ops_per_s.fp32 x compute_fraction.fp32"),
        (("pack_a_bps", "fp32"), "pack_a_bps.fp32: 1e-300 B/s"),
        (("vector_ops_per_s", "bf16"), "vector_ops_per_s.bf16: 1e-300 ops/s"),
    ]
    path = tmp_path / "t.target.json"
    for keys, fragment in cases:
        broken = json.loads(json.dumps(data))
        node = broken
        for key in keys[:-1]:
            node = node[key]
        node[keys[-1]] = 1e-300
        path.write_text(json.dumps(broken))
        with pytest.raises(TargetFileError) as info:
            read_spec(path)
        message = str(info.value)
        assert fragment in message and "below 1e+06" in message and "\n" not in message
    # a slow but real rate stays: 10 MB/s, each library's share of the L2's (0.12-0.25,
    # with the products' own share of it) above 1 MB/s
    ok = json.loads(json.dumps(data))
    ok["tiers"][1]["peak_bandwidth_bps"] = 1e7
    ok["tiers"][1]["achievable_fraction"] = 1.0
    path.write_text(json.dumps(ok))
    assert read_spec(path).tiers[1].effective_bandwidth_bps == 1e7
    # a tier's products' share is a fraction of its rate too
    tiny = json.loads(json.dumps(data))
    tiny["tiers"][1]["product_fraction"] = 1e-300
    tiny["tiers"][1]["provenance"]["product_fraction"] = {"kind": "estimated", "source": "x"}
    path.write_text(json.dumps(tiny))
    with pytest.raises(
        TargetFileError, match=r"tier 'l2'\) x achievable_fraction x product_fraction:"
    ):
        read_spec(path)


def test_an_absurdly_large_value_in_a_target_file_is_refused_by_name(tmp_path):
    # each of these used to exit 0 with latencies of 1e300 s or an energy of Infinity
    import json

    import pytest

    from graphsval_core.files.target_spec import TargetFileError

    data = spec_to_json(build_registry().target("host_intel_xeon_2c_1t"))
    cases = [
        (("launch_overhead_s",), 1e300, "launch_overhead_s: 1e+300 is above 86400"),
        (("dispatch_overhead_s", "fp32"), 86401.0, "dispatch_overhead_s.fp32"),
        (("energy_per_op_j", "fp32"), 1e308, "energy_per_op_j.fp32: 1e+308 is above 0.001"),
        (("tiers", 1, "energy_per_byte_j"), 1.0, "tiers[1].energy_per_byte_j (tier 'l2')"),
        (("tiers", 1, "access_latency_ns"), 1e300, "tiers[1].access_latency_ns (tier 'l2')"),
        (("clock_hz",), 1e300, "clock_hz: 1e+300 is above 1e+12 (a terahertz)"),
        (("library_min_macs", "bf16"), 1e300, "library_min_macs.bf16: 1e+300 is above 1e+18"),
        (("compute_units",), 2**63, "compute_units"),
        (("tdp_w",), 1e12, "tdp_w"),
    ]
    path = tmp_path / "t.target.json"
    for keys, bad, fragment in cases:
        broken = json.loads(json.dumps(data))
        node = broken
        for key in keys[:-1]:
            node = node[key]
        node[keys[-1]] = bad
        path.write_text(json.dumps(broken))
        with pytest.raises(TargetFileError) as info:
            read_spec(path)
        message = str(info.value)
        assert fragment in message and "is above" in message and "\n" not in message


def test_an_unknown_key_lists_each_expected_key_once(tmp_path):
    import json

    import pytest

    from graphsval_core.files.target_spec import TargetFileError

    data = spec_to_json(build_registry().target("host_intel_xeon_2c_1t"))
    data["foo"] = 1
    path = tmp_path / "t.target.json"
    path.write_text(json.dumps(data))
    with pytest.raises(TargetFileError) as info:
        read_spec(path)
    expected = str(info.value).split("; expected ")[1].split(", ")
    assert "key" in expected and len(expected) == len(set(expected))


def test_a_fingerprint_value_that_is_not_a_line_of_text_is_named(tmp_path):
    """A target file's fingerprint identifies the machine: each value a string,
    printable and short (a list crashed validate with a TypeError; a newline split
    the targets table)."""
    import json

    import pytest

    from graphsval_core.files.target_spec import FINGERPRINT_MAX_CHARS, TargetFileError

    data = spec_to_json(build_registry().target("host_amd_epyc_zen4_2c_1t"))
    cases = [
        (["zen4"], "fingerprint.microarchitecture: expected a string, got a list"),
        (4, "fingerprint.microarchitecture: expected a string, got a number"),
        ({"a": 1}, "fingerprint.microarchitecture: expected a string, got an object"),
        ("zen\n4", "fingerprint.microarchitecture: holds a control character"),
        ("z" * (FINGERPRINT_MAX_CHARS + 1), f"{FINGERPRINT_MAX_CHARS + 1} characters"),
    ]
    path = tmp_path / "t.target.json"
    for value, message in cases:
        bad = {**data, "fingerprint": {**data["fingerprint"], "microarchitecture": value}}
        path.write_text(json.dumps(bad))
        with pytest.raises(TargetFileError, match=message.replace("[", r"\[")) as caught:
            read_spec(path)
        assert str(path) in str(caught.value), value
    for key, message in (
        ("cpu\nmodel", "key 'cpu\\nmodel' holds a control character"),
        (" ", "names nothing"),
    ):
        bad = {**data, "fingerprint": {**data["fingerprint"], key: "x"}}
        path.write_text(json.dumps(bad))
        with pytest.raises(TargetFileError) as refused:
            read_spec(path)
        assert message in str(refused.value)
    path.write_text(json.dumps(data))
    assert read_spec(path).fingerprint["microarchitecture"] == "zen4"


def test_a_missing_figure_is_named_not_its_provenance(tmp_path):
    # a newcomer removed peak_ops_per_s and was told its provenance had "no figure of
    # that name (did you mean 'vector_ops_per_s.fp32'?)"
    import json

    import pytest

    from graphsval_core.files.target_spec import TargetFileError

    data = spec_to_json(build_registry().target("host_intel_xeon_2c_1t"))
    path = tmp_path / "t.target.json"
    whole = json.loads(json.dumps(data))
    del whole["peak_ops_per_s"]
    path.write_text(json.dumps(whole))
    with pytest.raises(TargetFileError, match=r": peak_ops_per_s: missing, though provenance"):
        read_spec(path)
    one = json.loads(json.dumps(data))
    del one["peak_ops_per_s"]["fp32"]
    path.write_text(json.dumps(one))
    with pytest.raises(TargetFileError, match=r"peak_ops_per_s gives no 'fp32': give"):
        read_spec(path)
