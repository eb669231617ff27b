"""The validation layer of each JSON format and of shapes files (issue 18):
strict JSON, known keys, typed and bounded values, duplicates and conflicts,
each error one line naming the file and the key or entry."""

from __future__ import annotations

import json
import warnings

import pytest

from graphsval_core.datamodel.errors import InputWarning, UserInputError
from graphsval_core.files.calibration import apply_file
from graphsval_core.files.calibration_file import CalibrationFileError
from graphsval_core.files.jsonfile import parse_json
from graphsval_core.files.overlay import read_overlay
from graphsval_core.files.shapes import ShapesFileError, read_shapes_file
from graphsval_core.files.sweep import SweepFileError, load_sweep
from graphsval_core.files.target_spec import TargetFileError, read_spec
from graphsval_core.files.tolerances import TolerancesError, load_tolerances
from graphsval_core.plugins.loader import build_registry
from graphsval_core.sweep.model_config import ModelConfigError, read_config

HOST = "host_intel_xeon_2c_1t"


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        (b'{"a": NaN}', "NaN is not a number JSON allows"),
        (b'{"a": -Infinity}', "-Infinity is not a number JSON allows"),
        (b'{"a": 1e999}', "the number 1e999 overflows"),
        (b'{"a": ' + b"9" * 5000 + b"}", "an integer of 5000 digits (at most 30)"),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
        (b'{"a": 1, "a": 2}', "a: given twice in one object, with two values"),
        (b'{"\xe9": 1}', "not UTF-8 text (byte 2: invalid continuation byte)"),
        (b"", "empty file"),
        (b"{", "not valid JSON: Expecting property name enclosed in double quotes (line 1"),
    ],
)
def test_the_json_reader_refuses_what_json_files_should_not_hold(text, fragment):
    with pytest.raises(UserInputError) as err:
        parse_json(text, "f.json")
    assert str(err.value).startswith("f.json: ") and fragment in str(err.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (b'{"a": NaN}', "f.json: a: NaN is not a number JSON allows"),
        (b'{"tiers": [{"x": 1}, {"cap": 1e999}]}', "f.json: tiers[1].cap: the number 1e999"),
        (b"[1, 2, -Infinity]", "f.json: [2]: -Infinity is not a number"),
        (b'{"a": {"b": [' + b"9" * 40 + b"]}}", "f.json: a.b[0]: an integer of 40 digits"),
        (b'{"a": 1, "b": NaN, "c": Infinity}', "f.json: b: NaN"),  # the first, in file order
        (b"NaN", "f.json: NaN is not a number"),  # no key to name
        (b'{"m": {"bf16": 4096, "bf16": 4097}}', "f.json: m.bf16: given twice in one object"),
        (b'[{"x": 1}, {"y": 2, "y": 3}]', "f.json: [1].y: given twice in one object"),
        (b'{"non_inclusive": true, "non_inclusive": 1}', "f.json: non_inclusive: given twice"),
        (b'{"a": [{"x": false}], "a": [{"x": 0}]}', "f.json: a: given twice in one object"),
        (b'{"v": 1, "v": 1.0}', "f.json: v: given twice in one object"),  # read apart elsewhere
        (b'{"v": 1.0, "v": 1}', "f.json: v: given twice in one object"),
        (b'{"a": {"b": 1e-400}}', "f.json: a.b: the number 1e-400 underflows to 0"),
        # a refused literal inside a key given twice is named where it stands
        (b'{"a": [1e400], "a": [1e400]}', "f.json: a[0]: the number 1e400 overflows"),
        (b'{"a": {"b": 1, "b": 2}, "a": {"b": 1, "b": 2}}', "f.json: a.b: given twice"),
        (b'{"a": 1, "a": {"b": NaN}}', "f.json: a.b: NaN is not a number"),
    ],
)
def test_a_refused_number_is_named_by_its_key(text, message):
    with pytest.raises(UserInputError) as err:
        parse_json(text, "f.json")
    assert str(err.value).startswith(message)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (rb'{"name": "x\ud800y"}', "f.json: name: holds an unpaired surrogate escape"),
        (rb'{"tiers": [{"label": "\udfff"}]}', "f.json: tiers[0].label: holds an unpaired"),
        (rb'{"a": {"\ud800": 1}}', "f.json: a.<a key>: holds an unpaired surrogate escape"),
    ],
)
def test_an_unpaired_surrogate_escape_is_refused_by_its_key(text, message):
    """``"\\ud800"`` parses to a string no UTF-8 output can write: printing a
    target's name that held one ended in an internal error (from the
    newcomer). A pair of escapes (an emoji) is text."""
    with pytest.raises(UserInputError) as err:
        parse_json(text, "f.json")
    assert str(err.value).startswith(message)
    assert parse_json(rb'{"name": "\ud83d\ude00"}', "f.json") == {"name": "\U0001f600"}


def test_a_key_given_twice_with_one_value_is_read_once_with_a_warning():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", InputWarning)
        assert parse_json(b'\xef\xbb\xbf{"a": 1, "a": 1}', "f.json") == {"a": 1}
        assert parse_json(b'{"b": [true], "b": [true], "c": {"d": 2, "d": 2}}', "f.json") == {
            "b": [True],
            "c": {"d": 2},
        }
    assert [str(w.message) for w in caught] == [
        "f.json: key 'a' appears twice in one object; read once",
        "f.json: key 'c.d' appears twice in one object; read once",  # named by its path
        "f.json: key 'b' appears twice in one object; read once",
    ]


def _tolerances(tmp_path, edit) -> str:
    from graphsval_core.files.tolerances import load_tolerances as shipped

    data = {"schema_version": 1, "regimes": shipped()}
    edit(data)
    path = tmp_path / "t.json"
    path.write_text(json.dumps(data))
    with pytest.raises(TolerancesError) as err:
        load_tolerances(path)
    return str(err.value).removeprefix(f"{path}: ")


def test_tolerances_refuse_typos_non_finite_and_out_of_range_values(tmp_path):
    def typo(d):
        d["regimes"]["alu_bnd"] = d["regimes"].pop("alu_bound")

    assert _tolerances(tmp_path, typo).startswith(
        "regimes: unknown key 'alu_bnd' (did you mean 'alu_bound'?)"
    )

    def kind_typo(d):
        d["regimes"]["l1_bound"]["latencyy"] = d["regimes"]["l1_bound"].pop("latency")

    assert "regimes.l1_bound: unknown key 'latencyy' (did you mean 'latency'?)" in _tolerances(
        tmp_path, kind_typo
    )
    assert _tolerances(tmp_path, lambda d: d["regimes"]["l2_bound"].update(energy=1e300)) == (
        "regimes.l2_bound.energy: expected a number in (0, 10], got 1e+300"
    )
    assert _tolerances(tmp_path, lambda d: d.update(schema_version=2)).startswith(
        "schema_version 2 is not one this graphsval reads (1)"
    )


def _sweep(tmp_path, data) -> str:
    path = tmp_path / "s.json"
    path.write_text(json.dumps(data))
    with pytest.raises(SweepFileError) as err:
        load_sweep(path)
    return str(err.value).removeprefix(f"{path}: ")


def test_sweep_counts_are_positive_integers_that_agree_with_their_call_sites(tmp_path):
    entry = {"op": "linear", "shape": [4, 64, 64], "dtype": "fp32"}
    mixed = {"op": "mixed", "shapes": [entry]}
    entry["count"] = -5
    assert (
        _sweep(tmp_path, mixed)
        == "shapes[0]: count: expected an integer in [1, 1000000000000], got -5"
    )
    entry["count"] = "many"
    assert _sweep(tmp_path, mixed) == "shapes[0]: count: expected an integer, got a string 'many'"
    entry["count"] = 3
    entry["used_in"] = [{"phase": "p", "count": 2}]
    assert _sweep(tmp_path, mixed) == (
        "shapes[0]: count 3 disagrees with its call sites, whose counts sum to 2"
    )


def test_a_sweep_shape_is_bounded(tmp_path):
    data = {"op": "matmul", "shapes": [{"shape": [2**63, 64, 64], "dtype": "fp32"}]}
    assert _sweep(tmp_path, data) == (
        "shapes[0]: 'shape' dim 9223372036854775808 is larger than 1099511627776 (2^40)"
    )


def test_a_sweep_entry_repeated_exactly_is_read_once(tmp_path):
    entry = {"shape": [8, 8, 8], "dtype": "fp32"}
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"op": "matmul", "shapes": [entry, entry]}))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", InputWarning)
        assert len(load_sweep(path).entries) == 1
    assert "shapes[1]: matmul 8x8x8 fp32 repeats shapes[0] exactly; read once" in str(
        caught[0].message
    )


def test_an_overlay_label_must_be_a_regime():
    overlay = {
        "kind": "graphsval-sweep-labels",
        "targets": ["t"],
        "labels": {"m.json": {"8x8x8 fp32": {"t": "l9_bound"}}},
    }
    with pytest.raises(SweepFileError, match=r"^o\.json: labels\.m\.json\.8x8x8 fp32\.t: label"):
        read_overlay(json.dumps(overlay), "o.json")


@pytest.mark.parametrize(
    ("edit", "fragment"),
    [
        ({"hidden_size": 0}, "hidden_size: expected an integer in [1, 2147483648], got 0"),
        ({"hidden_size": "64"}, "hidden_size: expected an integer, got a string '64'"),
        (
            {"num_attention_heads": 3},
            "hidden_size 64 is not a multiple of num_attention_heads 3 (give head_dim)",
        ),
        ({"head_dim": -1}, "head_dim: expected an integer in [1, 2147483648], got -1"),
        (
            {"num_key_value_head": 1},
            "'num_key_value_head' is not a key this reads; a misspelling of "
            "'num_key_value_heads'? (a positive integer, or null for none)",
        ),
        (
            {"ffn_config": {"moe_num_experts": 16, "moe_top_k": 4}},  # DBRX's
            "ffn_config.moe_num_experts 16: a mixture-of-experts config (each token's MLP runs "
            "in the experts it is routed to), which from-config does not model: its shapes "
            "would be a dense model's; give a dense model's config",
        ),
        (
            {"num_kv_heads": 2},
            "'num_kv_heads' is not a key this reads: it reads 'num_key_value_heads' (another "
            "family's name for it; rename it)",
        ),
        (
            {"num_local_experts": "8"},
            "num_local_experts 8: a mixture-of-experts config (each token's MLP runs in the "
            "experts it is routed to), which from-config does not model: its shapes would be "
            "a dense model's; give a dense model's config",
        ),
        (
            {"num_experts_per_tok": 2},
            "num_experts_per_tok 2: a mixture-of-experts config (each token's MLP runs in the "
            "experts it is routed to), which from-config does not model: its shapes would be "
            "a dense model's; give a dense model's config",
        ),
        (
            {"num_local_experts": 8},
            "num_local_experts 8: a mixture-of-experts config (each token's MLP runs in the "
            "experts it is routed to), which from-config does not model: its shapes would be "
            "a dense model's; give a dense model's config",
        ),
    ],
)
def test_a_model_config_holds_positive_bounded_sizes(tmp_path, edit, fragment):
    config = {
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_attention_heads": 4,
        "vocab_size": 100,
        "num_hidden_layers": 2,
        **edit,
    }
    path = tmp_path / "c.json"
    path.write_text(json.dumps(config))
    with pytest.raises(ModelConfigError) as err:
        read_config(path)
    assert str(err.value) == f"{path}: {fragment}"


def test_a_model_config_reads_its_optional_keys_beside_a_hugging_face_configs_others(tmp_path):
    """The keys a real config holds beside the sizes (a dense model's
    ``num_experts`` of 1 or null among them) are not taken for misspellings."""
    config = {
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "vocab_size": 100,
        "num_hidden_layers": 2,
        "max_position_embeddings": 4096,
        "tie_word_embeddings": False,
        "num_experts": 1,
        "n_routed_experts": None,
        "rms_norm_eps": 1e-5,
    }
    path = tmp_path / "c.json"
    path.write_text(json.dumps(config))
    assert read_config(path)["num_key_value_heads"] == 2


def test_a_shapes_file_names_the_line_and_reads_a_repeat_once(tmp_path):
    matmul = build_registry().op("matmul")
    path = tmp_path / "shapes.txt"
    path.write_text("8x8x8\n0x8x8\n")
    with pytest.raises(ShapesFileError, match=rf"^{path}:2: shape '0x8x8' for matmul"):
        read_shapes_file(path, matmul)
    path.write_text("8x8x8\n# again\n8x8x8\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", InputWarning)
        assert read_shapes_file(path, matmul) == [(8, 8, 8)]
    assert "(line 3 repeats line 1)" in str(caught[0].message)


def test_a_calibration_file_names_a_constant_it_cannot_apply():
    registry = build_registry()
    spec = registry.datasheet_target(HOST)
    data = {
        "target": HOST,
        "provenance": {"sources": [], "graphsval_version": "0"},
        "constants": {"launch_overhed_s": {"value": 1e-6}},
    }
    with pytest.raises(CalibrationFileError) as err:
        apply_file(spec, data, "c.json")
    assert str(err.value).startswith(
        f"c.json: constants.launch_overhed_s: not a constant graphsval calibrates on {HOST}"
    )
    data["constants"] = {"launch_overhead_s": {"value": float("nan")}}
    with pytest.raises(CalibrationFileError, match="expected a finite number, got nan"):
        apply_file(spec, data, "c.json")


def _host_target_file() -> dict:
    """The host's datasheet spec as a target file holds it."""
    from graphsval_core.files.target_spec import spec_to_json

    return spec_to_json(build_registry().datasheet_target(HOST))


def _refused(tmp_path, data: dict) -> str:
    """The one-line error ``read_spec`` gives for target file ``data``, after
    the file's name (which it must start with)."""
    path = tmp_path / "t.target.json"
    path.write_text(json.dumps(data))
    with pytest.raises(TargetFileError) as err:
        read_spec(path)
    assert str(err.value).startswith(f"{path}: ")
    return str(err.value).removeprefix(f"{path}: ")


def test_a_target_file_names_an_unknown_key(tmp_path):
    data = _host_target_file()
    data["clock_hzz"] = 1
    assert _refused(tmp_path, data).startswith("unknown key 'clock_hzz' (did you mean 'clock_hz'?)")


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda t: t[1].update(peak_bandwidth_bps=-5),
            "field 'tiers[1].peak_bandwidth_bps' (tier 'l2'): must be > 0, got -5",
        ),
        (
            lambda t: t[2].update(achievable_fraction=3),
            "field 'tiers[2].achievable_fraction' (tier 'l3'): must be in (0, 1], got 3",
        ),
        (
            lambda t: t[1].update(name="l9"),
            "field 'tiers[1].name' (tier 'l9'): tier name 'l9' is not one of l1, l2, l3, dram",
        ),
    ],
)
def test_a_target_file_names_a_bad_tier_by_its_place_and_its_name(tmp_path, edit, message):
    data = _host_target_file()
    edit(data["tiers"])
    assert _refused(tmp_path, data) == message


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d.update(clock_hz=2.6), "clock_hz: 2.6 Hz is below 1e+06"),
        (
            lambda d: d["tiers"][3].update(peak_bandwidth_bps=2e19),
            "tiers[3].peak_bandwidth_bps (tier 'dram'): 2e+19 B/s is above 1e+18",
        ),
        (
            lambda d: d["peak_ops_per_s"].update(fp32=1.66e20),
            "peak_ops_per_s.fp32: 1.66e+20 ops/s is above 1e+18",
        ),
        (
            lambda d: d["tiers"][0].update(capacity_bytes=48),
            "tiers[0].capacity_bytes (tier 'l1'): 48 B is below 64 B (one cache line",
        ),
    ],
)
def test_a_target_file_refuses_a_clock_or_a_capacity_in_the_wrong_unit(tmp_path, edit, message):
    data = _host_target_file()
    edit(data)
    assert _refused(tmp_path, data).startswith(message)


def _given(data: dict, name: str, value: float) -> None:
    """Give ``data`` (a target file) the number ``name`` with a provenance."""
    data[name] = value
    data["provenance"][name] = {"kind": "estimated", "source": "test"}


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda d: _given(d, "register_tile_bytes", 1),
            "register_tile_bytes: 1 B is below 64 B (one cache line: a size is given in bytes)",
        ),
        (
            lambda d: (_given(d, "first_touch_min_bytes", 0.5), _given(d, "first_touch_bps", 2e9)),
            "first_touch_min_bytes: 0.5 B is below 64 B",
        ),
        (
            lambda d: _given(d, "register_tile_bytes", 100.5),
            "register_tile_bytes: 100.5 is not a whole number (bytes come whole)",
        ),
        (
            lambda d: _given(d, "parallel_grain_ops", 32.5),
            "parallel_grain_ops: 32.5 is not a whole number (operations come whole)",
        ),
        (
            lambda d: d["library_min_macs"].update(bf16=4.5),
            "library_min_macs.bf16: 4.5 is not a whole number (multiply-adds come whole)",
        ),
        (  # 0 is no size: every product to the library, as with no key (from the newcomer)
            lambda d: d["library_min_macs"].update(bf16=0),
            "library_min_macs.bf16: 0 sends every bf16 product to the GEMM library, as giving "
            "bf16 no size does; drop the key",
        ),
        (
            lambda d: _given(d, "register_tile_bytes", 1e15),
            "register_tile_bytes: 1e+15 B is above the 49152 B of tier 'l1' (registers hold less",
        ),
        (
            lambda d: (_given(d, "first_touch_min_bytes", 1e30), _given(d, "first_touch_bps", 2e9)),
            "first_touch_min_bytes: 1e+30 B is above the",
        ),
        (
            lambda d: d["tiers"][1].update(capacity_bytes=2097152.5),
            "tiers[1].capacity_bytes (tier 'l2'): 2097152.5 is not a whole number of bytes",
        ),
    ],
)
def test_a_target_file_refuses_a_size_or_a_count_in_the_wrong_unit(tmp_path, edit, message):
    """A size under a cache line is one given in KiB or MiB, a count that is
    not whole one given in thousands: each was accepted and changed the
    predictions silently (register_tile_bytes 1 made every tile one element)."""
    data = _host_target_file()
    assert _refused_or_none(tmp_path, data) is None  # the file as shipped stands
    edit(data)
    assert _refused(tmp_path, data).startswith(message)


def _refused_or_none(tmp_path, data: dict) -> str | None:
    path = tmp_path / "ok.target.json"
    path.write_text(json.dumps(data))
    try:
        read_spec(path)
    except TargetFileError as err:
        return str(err)
    return None


def test_a_target_file_number_with_no_provenance_is_told_how_a_file_gives_one(tmp_path):
    data = _host_target_file()
    del data["provenance"]["tdp_w"]
    del data["tiers"][1]["provenance"]["peak_bandwidth_bps"]
    text = _refused(tmp_path, data)
    assert "datasheet(...)" not in text  # no Python advice for a JSON file
    assert 'give it one in tiers[1]\'s "provenance": {"peak_bandwidth_bps": {"kind": ' in text
    data["tiers"][1]["provenance"]["peak_bandwidth_bps"] = {"kind": "datasheet", "source": "s"}
    assert _refused(tmp_path, data).startswith(
        "field 'tdp_w': has no provenance; give it one in the file's \"provenance\": "
        '{"tdp_w": {"kind": "datasheet", "source": "where it comes from"}}'
    )


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda d: d["tiers"][2].update(shared_with_tenants="no"),  # "no" is truthy
            "tiers[2] (tier 'l3'): shared_with_tenants: expected true or false, got a string",
        ),
        (lambda d: d.update(detected="false"), "detected: expected true or false, got a string"),
        (
            lambda d: d["tiers"][0].update(label=5),
            "tiers[0] (tier 'l1'): label: expected a string, got a number",
        ),
        (
            lambda d: d.update(compute_unit_name=5),
            "compute_unit_name: expected a string, got a number",
        ),
        (lambda d: d.update(power_mode={}), "power_mode: expected a string or null, got an object"),
        (lambda d: d.update(provenance=None), "provenance: expected an object, got null"),
        (lambda d: d.update(fingerprint=None), "fingerprint: expected an object, got null"),
        (
            lambda d: d["tiers"][1].update(provenance=[]),
            "tiers[1].provenance: expected an object, got a list",
        ),
        (
            lambda d: d.update(pack_bps=[1, 2]),
            "pack_bps: expected an object (per dtype) or a number, got a list",
        ),
        (
            lambda d: d["tiers"][1].pop("peak_bandwidth_bps"),
            "tiers[1] (tier 'l2'): missing key 'peak_bandwidth_bps'",
        ),
    ],
)
def test_a_target_file_value_of_the_wrong_type_is_named(tmp_path, edit, message):
    data = _host_target_file()
    edit(data)
    assert _refused(tmp_path, data) == message


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda d: d["provenance"].update(clock_hzz={"kind": "datasheet", "source": "s"}),
            "provenance.clock_hzz: no figure of that name (did you mean 'clock_hz'?)",
        ),
        (
            lambda d: d["tiers"][0]["provenance"].update(capacity={"kind": "datasheet"}),
            "tiers[0].provenance.capacity: no figure of that name (did you mean 'capacity_bytes'?)",
        ),
        (
            lambda d: d["provenance"]["clock_hz"].update(note="x"),
            "provenance.clock_hz: unknown key 'note'; expected kind, source",
        ),
        (  # a null map gives none of its dtypes: not a misspelt other figure
            lambda d: d.update(pack_a_bps=None),
            "provenance.pack_a_bps.fp32: pack_a_bps is null, so it gives no 'fp32': "
            "give pack_a_bps that value, or drop this provenance",
        ),
    ],
)
def test_a_misspelt_provenance_entry_is_named(tmp_path, edit, message):
    """A misspelt entry would leave its figure without the source it meant to give."""
    data = _host_target_file()
    edit(data)
    assert _refused(tmp_path, data) == message


def test_the_provenance_advice_names_an_entry_the_file_may_hold(tmp_path):
    """pack_bps given as one number for every dtype takes one entry, "pack_bps"."""
    data = _host_target_file()
    data["pack_bps"] = 2e10
    data["provenance"] = {k: v for k, v in data["provenance"].items() if "pack_bps" not in k}
    assert 'give it one in the file\'s "provenance": {"pack_bps": {"kind": ' in _refused(
        tmp_path, data
    )
    data["provenance"]["pack_bps"] = {"kind": "estimated", "source": "s"}  # as advised
    path = tmp_path / "t.target.json"
    path.write_text(json.dumps(data))
    assert read_spec(path).pack_bps["bf16"] == 2e10


def test_a_calibration_file_holds_a_team_cost_above_zero_as_the_spec_does():
    # the spec refuses a fork/join of 0 s: the file's own check says so first, with
    # the range, rather than an error from rebuilding the spec
    registry = build_registry()
    spec = registry.datasheet_target("i7_12700k")
    data = {
        "target": "i7_12700k",
        "provenance": {"sources": [], "graphsval_version": "0"},
        "constants": {"fork_join_s": {"value": 0.0}},
    }
    with pytest.raises(CalibrationFileError) as err:
        apply_file(spec, data, "c.json")
    assert str(err.value) == (
        "c.json: constants.fork_join_s.value: expected a number in (0, 86400], got 0.0"
    )
    data["constants"] = {"gemv_fork_join_s.fp32": {"value": 0.0}}
    with pytest.raises(
        CalibrationFileError, match=r"gemv_fork_join_s.fp32.value: expected a number in \(0,"
    ):
        apply_file(spec, data, "c.json")


@pytest.mark.parametrize("given", [None, "absent"])
def test_a_provenance_of_an_optional_figure_the_file_does_not_give_is_refused(tmp_path, given):
    """A source for ``first_touch_bps`` while the file gives it as null (or
    not at all) was accepted: the file read as sourced, the model had no
    such term (from the newcomer's provenance-only entries)."""
    data = _host_target_file()
    assert data["first_touch_bps"] is None
    if given == "absent":
        del data["first_touch_bps"]
    data["provenance"]["first_touch_bps"] = {"kind": "estimated", "source": "test"}
    said = "null" if given is None else "not given"
    assert _refused(tmp_path, data) == (
        f"provenance.first_touch_bps: first_touch_bps is {said}, so this provenance sources "
        "nothing: give first_touch_bps a value, or drop it"
    )


@pytest.mark.parametrize(
    ("field", "value", "code"),
    [
        ("name", "two\nlines", "U+000A"),
        ("family", "a\u0000b", "U+0000"),
        ("name", "a\tb", "U+0009"),
        # invisible characters that reorder or hide the text around them
        ("name", "Xeon \u202e4cpu", "U+202E"),
        ("family", "c\u200bpu", "U+200B"),
        ("name", "\ufeffXeon", "U+FEFF"),
        # a letter that draws nothing: the name reads as blank
        ("name", "\u3164", "U+3164"),
    ],
)
def test_a_target_s_name_or_family_is_one_line_of_text(tmp_path, field, value, code):
    """A newline or a NUL in a target's name was accepted and printed raw in
    every table (from the newcomer); an emoji, an accent, a no-break space or
    a soft hyphen (a datasheet's name may hold one) is text."""
    data = _host_target_file()
    data[field] = "Xeon\u00a0\u00e9 \U0001f680 Plat\u00adinum"
    assert _refused_or_none(tmp_path, data) is None
    data[field] = value
    assert _refused(tmp_path, data) == (
        f"field '{field}': {ascii(value)} holds a control character ({code}): give one line of text"
    )


def test_a_spec_with_a_source_for_an_unset_figure_writes_a_file_that_reads_back(tmp_path):
    """A plugin's spec may carry a provenance for an optional figure it
    leaves unset; the file written from it (``targets --target-file``) does
    not, so that reading it back does not refuse it (from the reviewer)."""
    import attrs

    from graphsval_core.datamodel.provenance import Provenance
    from graphsval_core.files.target_spec import spec_to_json, write_spec

    spec = build_registry().datasheet_target(HOST)
    assert spec.first_touch_bps is None
    odd = attrs.evolve(
        spec,
        provenance={**spec.provenance, "first_touch_bps": Provenance("estimated", "x")},
    )
    assert "first_touch_bps" not in spec_to_json(odd)["provenance"]
    path = tmp_path / "t.target.json"
    write_spec(odd, path)
    assert read_spec(path).key == HOST


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda d: d.update(description="x\u001b]0;pwned\u0007y"),
            "field 'description': holds a control character (U+001B): give plain text",
        ),
        (
            lambda d: d["provenance"]["clock_hz"].update(source="a\u0000b"),
            "field 'provenance.clock_hz.source': holds a control character (U+0000)",
        ),
        (
            lambda d: d["tiers"][0].update(label="L1\u009b2J"),
            "field 'tiers[0].label' (tier 'l1'): holds a control character (U+009B)",
        ),
        (lambda d: d.update(name="   "), "field 'name': must be a non-empty string"),
        (
            lambda d: d.update(compute_unit_name="co\u001b[31mre"),
            "field 'compute_unit_name': holds a control character (U+001B)",
        ),
    ],
)
def test_free_text_that_would_drive_the_terminal_is_refused(tmp_path, edit, message):
    """An OSC sequence in a description retitled the user's terminal when
    `targets` printed it, a NUL in a source printed raw (from the newcomer)."""
    data = _host_target_file()
    edit(data)
    assert _refused(tmp_path, data).startswith(message)


def test_a_tier_s_provenance_of_a_figure_it_leaves_unset_is_refused(tmp_path):
    """``tiers[0].provenance.usable_capacity_bytes`` beside a null figure was
    accepted while the top level's twin was refused (from the newcomer)."""
    data = _host_target_file()
    tier = data["tiers"][0]
    assert tier.get("usable_capacity_bytes") is None
    tier["provenance"]["usable_capacity_bytes"] = {"kind": "estimated", "source": "x"}
    assert _refused(tmp_path, data).startswith(
        "tiers[0].provenance.usable_capacity_bytes: usable_capacity_bytes is "
    )


def test_a_packing_rate_without_its_row_count_names_the_dtype_and_the_cause(tmp_path):
    """``pack_bps.bf16`` alone was told "give pack_bps and pack_min_rows for
    the same dtypes", naming neither the dtype nor, on a target whose bf16
    runs in no library, the cause; a leftover provenance got a "did you
    mean" for another figure (from the newcomer)."""
    from graphsval_core.files.target_spec import spec_to_json

    zen3 = spec_to_json(build_registry().datasheet_target("host_amd_epyc_2c_1t"))
    assert "bf16" in zen3["no_gemm_library"]
    alone = json.loads(json.dumps(zen3))
    alone["pack_bps"]["bf16"] = 1e10
    assert _refused(tmp_path, alone) == (
        "field 'pack_bps.bf16': bf16 runs in no GEMM library (no_gemm_library), so nothing "
        "packs its B: drop it"
    )
    data = _host_target_file()
    data["pack_min_rows"].pop("int8")
    data["provenance"].pop("pack_min_rows.int8")
    assert _refused(tmp_path, data) == (
        "field 'pack_bps.int8': pack_min_rows gives no int8: give pack_bps and pack_min_rows "
        "for the same dtypes (or neither)"
    )
    data = _host_target_file()
    data["pack_min_rows"].pop("int8")
    data["pack_bps"].pop("int8")
    refused = _refused(tmp_path, data)  # its provenance is left over: no guess at another name
    assert "provenance.pack_bps.int8: pack_bps gives no 'int8'" in refused
    assert "did you mean" not in refused
