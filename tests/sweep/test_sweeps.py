"""The frozen sweeps: disjoint sets, labels equal to the classifier's answer,
overlays, relabelling, malformed files, shapes from a model config."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from graphsval_core.cli.main import cli
from graphsval_core.datamodel.provenance import datasheet
from graphsval_core.files.sweep import SweepFileError, load_sweep
from graphsval_core.plugins.loader import build_registry
from graphsval_core.sweep.generator import ground_truth_shapes
from graphsval_core.sweep.labels import (
    classify_entries,
    label_inline,
    load_shipped,
    merge_overlay,
    overlay_for,
)

FIXTURES = Path(__file__).parents[1] / "fixtures"
OPS = ("matmul", "linear", "vector_add")


@pytest.fixture(scope="module")
def registry():
    return build_registry()


@pytest.fixture(scope="module")
def shipped(registry):
    return load_shipped(registry, overlays=False)


def test_every_op_has_both_frozen_sets(shipped):
    for op in OPS:
        for purpose in ("calibration", "validation"):
            sweep = shipped[f"{op}_{purpose}.json"]
            assert sweep.op == op and sweep.purpose == purpose
            assert (
                sweep.meta["seed"]
                and "graphsval sweep generate" in sweep.meta["generator"]["command"]
            )


@pytest.mark.parametrize("op", OPS)
def test_calibration_and_validation_are_disjoint(shipped, op):
    cal = {(e.shape, e.dtype) for e in shipped[f"{op}_calibration.json"].entries}
    val = {(e.shape, e.dtype) for e in shipped[f"{op}_validation.json"].entries}
    assert cal and val and not (cal & val)


def test_ground_truth_shapes_are_calibration_only(registry, shipped):
    truth = ground_truth_shapes(registry)
    assert truth, "the vendored calibration baselines are found"
    for (op, dtype), shapes in truth.items():
        cal = {e.shape for e in shipped[f"{op}_calibration.json"].entries if e.dtype == dtype}
        val = {e.shape for e in shipped[f"{op}_validation.json"].entries if e.dtype == dtype}
        assert shapes <= cal
        assert not shapes & val


def test_every_recorded_label_equals_the_classifier(registry, shipped):
    for name, sweep in shipped.items():
        for hw in sorted({hw for e in sweep.entries for hw in e.regime_per_hw}):
            if hw not in registry.targets():
                continue
            expected = classify_entries(registry, sweep, hw)
            recorded = [e.regime_per_hw.get(hw) for e in sweep.entries]
            moved = [
                (e.key, r, x)
                for e, r, x in zip(sweep.entries, recorded, expected, strict=True)
                if r != x
            ]
            assert not moved, (
                f"{name} {hw}: labels out of date ({len(moved)}), e.g. {moved[:3]}; "
                "run `graphsval sweep label --update`"
            )


@pytest.mark.parametrize("hw", ["i7_12700k", "h100_sxm5_80gb", "jetson_orin_nano_8gb"])
def test_validation_sets_cover_several_regimes_per_measured_target(shipped, hw):
    for op in OPS:
        regimes: dict[str, int] = {}
        for e in shipped[f"{op}_validation.json"].entries:
            label = e.regime_per_hw.get(hw)
            if label not in (None, "ambiguous", "unsupported"):
                regimes[label] = regimes.get(label, 0) + 1
        # the shapes are frozen, their labels follow the calibrated model: after a
        # recalibration a regime may keep only a few shapes (i7 matmul dram_bound: 3
        # after the write-allocate and packing terms), so what must hold is that at
        # least two regimes are each stressed by five shapes or more
        assert sum(1 for count in regimes.values() if count >= 5) >= 2, (op, regimes)


def _toy_registry(make_target, make_plugin, fake_entry_points, key="acme_new"):
    spec = make_target(
        key,
        peak_ops_per_s={d: datasheet(1e12, "t") for d in ("fp32", "fp16", "bf16", "int8")},
        energy_per_op_j={d: datasheet(1e-12, "t") for d in ("fp32", "fp16", "bf16", "int8")},
    )
    return build_registry(
        extra_plugins=[("toy_overlay", make_plugin("toy_overlay", lambda: [spec]))]
    )


def test_labelling_a_new_target_leaves_existing_labels_identical(registry, shipped, tmp_path):
    # relabel a copy of the shipped sweeps for one more (installed) target: the
    # new key appears, every other target's label is unchanged
    folder = tmp_path / "sweeps"
    folder.mkdir()
    for name, sweep in shipped.items():
        from graphsval_core.files.sweep import write_sweep

        stripped = [e for e in sweep.entries]
        write_sweep(
            sweep.__class__(sweep.path, sweep.op, sweep.purpose, tuple(stripped), sweep.meta),
            folder / name,
        )
    before = {p.name: p.read_text() for p in folder.glob("*.json")}
    # drop kpu_t64 labels, then label it again: files must come back byte-identical
    dropped, _ = label_inline(registry, load_shipped(registry, folder, overlays=False), [])
    for name, sweep in dropped.items():
        for e in sweep.entries:
            e.regime_per_hw.pop("kpu_t64", None)
        from graphsval_core.files.sweep import write_sweep

        write_sweep(sweep, folder / name)
    result = CliRunner().invoke(
        cli, ["sweep", "label", "--hw", "kpu_t64", "--sweeps-dir", str(folder)]
    )
    assert result.exit_code == 0, result.output
    after = {p.name: p.read_text() for p in folder.glob("*.json")}
    assert after == before


def test_overlay_from_a_third_party_plugin_is_merged(
    make_target, make_plugin, fake_entry_points, shipped, tmp_path
):
    reg = _toy_registry(make_target, make_plugin, fake_entry_points)
    overlay = overlay_for(reg, shipped, ["acme_new"])
    merged = merge_overlay(shipped, overlay, "test overlay")
    for name, sweep in merged.items():
        for new, old in zip(sweep.entries, shipped[name].entries, strict=True):
            assert "acme_new" in new.regime_per_hw
            assert {
                k: v for k, v in new.regime_per_hw.items() if k != "acme_new"
            } == old.regime_per_hw


def test_overlay_shipped_by_a_plugin_is_loaded(
    make_target, make_plugin, fake_entry_points, shipped, tmp_path
):
    reg = _toy_registry(make_target, make_plugin, fake_entry_points)
    out = tmp_path / "labels.json"
    result = CliRunner().invoke(cli, ["sweep", "label", "--hw", "i7_12700k", "--out", str(out)])
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert data["kind"] == "graphsval-sweep-labels" and data["targets"] == ["i7_12700k"]

    overlay = overlay_for(reg, shipped, ["acme_new"])
    path = tmp_path / "acme_labels.json"
    path.write_text(json.dumps(overlay))
    plugin = make_plugin("toy_overlay2", lambda: [])

    def graphsval_sweep_overlays():
        return [path]

    from graphsval_core import hookimpl

    plugin.graphsval_sweep_overlays = hookimpl(graphsval_sweep_overlays)
    reg2 = build_registry(extra_plugins=[("toy_overlay2", plugin)])
    loaded = load_shipped(reg2)
    assert all("acme_new" in e.regime_per_hw for s in loaded.values() for e in s.entries)


def test_overlay_cannot_label_undeclared_targets(shipped):
    bad = {
        "kind": "graphsval-sweep-labels",
        "targets": ["acme"],
        "labels": {
            "matmul_calibration.json": {
                shipped["matmul_calibration.json"].entries[0].key: {"i7_12700k": "alu_bound"}
            }
        },
    }
    with pytest.raises(SweepFileError, match="does not declare"):
        merge_overlay(shipped, bad, "bad overlay")


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ({"shapes": []}, "missing key 'op'"),
        ({"op": "matmul", "shapes": [{"dtype": "fp32"}]}, "shapes[0]: missing key 'shape'"),
        ({"op": "matmul", "shapes": [{"shape": [1, 2, 3], "dtype": "fp13"}]}, "unknown dtype"),
        (
            {"op": "matmul", "shapes": [{"shape": [1, 2.5, 3], "dtype": "fp32"}]},
            "shapes[0]: 'shape' dim 2.5 is not an integer",
        ),
        (
            {
                "op": "matmul",
                "shapes": [
                    {"shape": [1, 2, 3], "dtype": "fp32", "regime_per_hw": {"t": "l1_bound"}},
                    {"shape": [1, 2, 3], "dtype": "fp32", "regime_per_hw": {"t": "l2_bound"}},
                ],
            },
            "shapes[1]: matmul 1x2x3 fp32 is also shapes[0], with other values",
        ),
    ],
)
def test_malformed_sweep_files_name_file_and_entry(tmp_path, content, fragment):
    path = tmp_path / "bad_sweep.json"
    path.write_text(json.dumps(content))
    with pytest.raises(SweepFileError) as err:
        load_sweep(path)
    assert str(path) in str(err.value) and fragment in str(err.value)
    result = CliRunner().invoke(cli, ["predict", "--hw", "i7_12700k", "--sweep", str(path)])
    assert result.exit_code == 2
    assert fragment in result.output


def test_sweep_show_counts(registry):
    result = CliRunner().invoke(cli, ["sweep", "show", "--hw", "i7_12700k", "--json"])
    assert result.exit_code == 0, result.output
    rows = {r["sweep"]: r["counts"] for r in json.loads(result.output)}
    total = sum(rows["matmul_validation"].values())
    assert total == len(load_shipped(registry)["matmul_validation.json"].entries)
    assert rows["matmul_validation"].get("unsupported", 0) > 0  # int8 / fp16 on the i7


def test_from_config_llama_shapes_and_counts(tmp_path):
    out = tmp_path / "llama.json"
    result = CliRunner().invoke(
        cli,
        [
            "sweep",
            "from-config",
            str(FIXTURES / "llama-3.2-1b-config.json"),
            "--tokens",
            "1,128",
            "--dtype",
            "bf16",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    sweep = load_sweep(out)
    entries = {(e.op, e.shape): e for e in sweep.entries}
    layers, heads = 16, 32
    # prefill of 128 tokens: q/o projections 128 x 2048 x 2048, once per layer each
    q = entries[("linear_nobias", (128, 2048, 2048))]
    assert q.extra["count"] == 2 * layers  # q_proj and o_proj share the shape
    assert {s["site"] for s in q.extra["used_in"]} == {"q_proj", "o_proj"}
    # k/v: 8 kv heads x 64 = 512 outputs, k and v per layer
    assert entries[("linear_nobias", (128, 2048, 512))].extra["count"] == 2 * layers
    # MLP: gate and up 2048 -> 8192, down 8192 -> 2048
    assert entries[("linear_nobias", (128, 2048, 8192))].extra["count"] == 2 * layers
    assert entries[("linear_nobias", (128, 8192, 2048))].extra["count"] == layers
    # attention: one batched kernel a layer over the heads, scores (128, 64, 128) and
    # values (128, 128, 64) of each head, as PyTorch runs it
    scores = entries[("matmul", (128, 64, 128))]
    assert scores.extra["count"] == layers
    assert [s["batch"] for s in scores.extra["used_in"]] == [heads]
    assert entries[("matmul", (128, 128, 64))].extra["count"] == layers
    # lm_head on every position: 128 x 2048 x 128256, once
    assert entries[("linear_nobias", (128, 2048, 128256))].extra["count"] == 1
    # decode at context 128: one token, scores (1, 64, 128); T=1 prefill has the same q shapes
    assert entries[("matmul", (1, 64, 128))].extra["count"] == layers
    assert entries[("linear_nobias", (1, 2048, 2048))].extra["count"] == 2 * 2 * layers
    assert entries[("linear_nobias", (1, 2048, 128256))].extra["count"] == 2


def test_predict_rollup_sums_count_times_prediction(tmp_path):
    out = tmp_path / "llama.json"
    CliRunner().invoke(
        cli,
        [
            "sweep",
            "from-config",
            str(FIXTURES / "llama-3.2-1b-config.json"),
            "--tokens",
            "128",
            "--out",
            str(out),
        ],
    )
    detail = CliRunner().invoke(
        cli, ["predict", "--hw", "i7_12700k", "--sweep", str(out), "--format", "json"]
    )
    rows = json.loads(detail.output)
    sweep = load_sweep(out)
    plain, batched = {}, {}  # per phase: the projections' sum, the attention's kernels
    for e, row in zip(sweep.entries, rows, strict=True):
        for site in e.extra["used_in"]:
            if "batch" in site:
                batched.setdefault(site["phase"], []).append((site, row))
            else:
                phase = site["phase"]
                plain[phase] = plain.get(phase, 0) + site["count"] * row["latency_s"]
    rolled = CliRunner().invoke(
        cli, ["predict", "--hw", "i7_12700k", "--sweep", str(out), "--rollup", "--format", "json"]
    )
    assert rolled.exit_code == 0, rolled.output
    phases = {r["phase"]: r for r in json.loads(rolled.output)}
    assert phases.keys() == {"prefill T=128", "decode ctx=128"}
    for phase, p in phases.items():
        sites = {s["site"]: s for s in p["sites"]}
        attention = sum(s["latency_s"] for name, s in sites.items() if "heads a kernel" in name)
        assert p["latency_s"] == pytest.approx(plain[phase] + attention)
        # a batched kernel pays one launch, not one per head: cheaper than the heads apart
        for site, row in batched[phase]:
            mine = sites[f"{site['site']} ({site['batch']} heads a kernel)"]
            assert mine["calls"] == site["count"] == 16
            assert mine["latency_s"] < site["count"] * site["batch"] * row["latency_s"]
            assert mine["latency_s"] > site["count"] * row["latency_s"]
        assert p["tokens"] == (128 if phase.startswith("prefill") else 1)
        assert p["tokens_per_s"] == pytest.approx(p["tokens"] / p["latency_s"])
        # every weight read once: 1.24 G parameters (the tied lm_head counted) in bf16
        assert p["weight_bytes"] == 2 * 1_235_746_816
        assert p["weight_floor_tier"] == "dram" and p["weight_floor_s"] > 0
        assert sum(r["share"] for r in p["regimes"].values()) == pytest.approx(1.0)


def test_from_config_bad_config(tmp_path):
    path = tmp_path / "cfg.json"
    path.write_text(json.dumps({"hidden_size": 2048}))
    result = CliRunner().invoke(cli, ["sweep", "from-config", str(path)])
    assert result.exit_code == 2
    assert "missing key 'intermediate_size' (a positive integer)" in result.output


def test_inline_labels_are_for_first_party_targets_only(
    make_target, make_plugin, fake_entry_points, make_entry_point, tmp_path
):
    plugin = make_plugin("toy", lambda: [make_target("toy_target")])
    fake_entry_points(make_entry_point("toy", lambda: plugin, "graphsval-toy", "0.1"))
    result = CliRunner().invoke(
        cli, ["sweep", "label", "--hw", "toy_target", "--sweeps-dir", str(tmp_path)]
    )
    assert result.exit_code == 2
    assert (
        "graphsval-toy, not a first-party plugin" in result.output and "--out FILE" in result.output
    )


def test_the_shipped_sweeps_are_never_rewritten_inside_an_installed_package(monkeypatch):
    from graphsval_core.plugins import resources

    monkeypatch.setattr(resources, "in_installed_package", lambda path: True)
    runner = CliRunner()
    for args in (["sweep", "label", "--update"], ["sweep", "generate", "--op", "vector_add"]):
        result = runner.invoke(cli, args)
        assert result.exit_code == 2, result.output
        assert "lies in an installed package" in result.output


@pytest.mark.parametrize("change", ["shape", "op"])
def test_a_sweep_whose_shapes_do_not_fit_their_op_is_one_line(tmp_path, change):
    """A shape of the wrong dim count (or a sweep renamed to another op) was
    counted by `sweep show` and crashed `sweep label` with numpy's ValueError."""
    shipped = Path(__file__).resolve().parents[2] / "graphsval_core" / "sweeps"
    for path in shipped.glob("*.json"):
        (tmp_path / path.name).write_bytes(path.read_bytes())
    target = tmp_path / "matmul_validation.json"
    data = json.loads(target.read_text())
    if change == "shape":
        data["shapes"][0]["shape"] = [1, 2]
        want = "matmul shape 1x2 has 2 dims; a matmul shape needs 3"
    else:
        data["op"] = "vector_add"
        want = "has 3 dims; a vector_add shape needs 1"
    target.write_text(json.dumps(data))
    for argv in (["sweep", "show"], ["sweep", "label", "--hw", "host_intel_xeon_2c_1t"]):
        result = CliRunner().invoke(cli, [*argv, "--sweeps-dir", str(tmp_path)])
        assert result.exit_code == 2, result.output
        assert "Traceback" not in result.output and "internal error" not in result.output
        (line,) = [x for x in result.output.splitlines() if x.startswith("Error:")]
        assert line.startswith(f"Error: {target}: ") and want in line


def test_an_empty_sweeps_folder_is_named(tmp_path):
    result = CliRunner().invoke(cli, ["sweep", "show", "--sweeps-dir", str(tmp_path)])
    assert result.exit_code == 2
    assert f"--sweeps-dir {tmp_path}: no sweep files (*.json) in it" in result.output


def test_a_sweeps_folder_that_cannot_be_listed_is_not_called_empty(tmp_path, monkeypatch):
    """A folder the user may not list read as "no sweep files (*.json) in
    it" (from the newcomer); root cannot make one, so the listing fails here."""
    from graphsval_core.cli import sweep_cmds

    (tmp_path / "x.json").write_text("{}")

    listdir = os.listdir

    def denied(path=".") -> list[str]:
        if os.fspath(path) == str(tmp_path):
            raise PermissionError(13, "Permission denied", str(path))
        return listdir(path)

    monkeypatch.setattr(sweep_cmds.os, "listdir", denied)
    result = CliRunner().invoke(cli, ["sweep", "show", "--sweeps-dir", str(tmp_path)])
    assert result.exit_code == 2, result.output
    assert result.output.strip() == (
        f"Error: --sweeps-dir {tmp_path}: cannot be read (Permission denied)"
    )
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "notes.txt").write_text("")
    monkeypatch.undo()
    result = CliRunner().invoke(cli, ["sweep", "show", "--sweeps-dir", str(empty)])
    assert "no sweep files (*.json) in it" in result.output


def test_a_token_count_or_a_call_site_given_twice_is_refused(tmp_path):
    """`--tokens 128,128` wrote every prefill call site twice, and a rollup
    then doubled the model's time with no word; the reader refuses a call
    site repeated within an entry, the command a token count given twice."""
    config = str(FIXTURES / "llama-3.2-1b-config.json")
    twice = CliRunner().invoke(
        cli, ["sweep", "from-config", config, "--tokens", "128,128", "--out", str(tmp_path / "t")]
    )
    assert twice.exit_code == 2
    assert "token count 128 is given twice; give each once" in twice.output
    # an empty count was dropped in silence; other digits and whitespace were read
    for empty in ("128,,", ",128", "\t1,\u3000128", "1,1_0", "\u0661"):
        gap = CliRunner().invoke(
            cli, ["sweep", "from-config", config, "--tokens", empty, "--out", str(tmp_path / "g")]
        )
        assert gap.exit_code == 2 and "is not a comma-separated list of integers" in gap.output
    spaced = CliRunner().invoke(
        cli, ["sweep", "from-config", config, "--tokens", "+1, 128", "--out", str(tmp_path / "s")]
    )
    assert spaced.exit_code == 0, spaced.output  # a sign, and a space after a comma
    out = tmp_path / "once.json"
    once = CliRunner().invoke(
        cli, ["sweep", "from-config", config, "--tokens", "1,128", "--out", str(out)]
    )
    assert once.exit_code == 0, once.output
    data = json.loads(out.read_text())
    entry = data["shapes"][0]
    entry["used_in"].append(dict(entry["used_in"][0]))
    entry["count"] = sum(site["count"] for site in entry["used_in"])
    out.write_text(json.dumps(data))
    with pytest.raises(SweepFileError, match=r"shapes\[0\]: used_in\[\d+\] is the call site"):
        load_sweep(out)
    entry["used_in"][-1]["site"] += " "  # the same site with a space is the same site
    out.write_text(json.dumps(data))
    with pytest.raises(SweepFileError, match=r"is the call site of used_in\[0\] again"):
        load_sweep(out)
    entry["used_in"].pop()
    entry["count"] = sum(site["count"] for site in entry["used_in"])
    data["shapes"][1]["used_in"].append(dict(entry["used_in"][0]))  # in another entry
    data["shapes"][1]["count"] += entry["used_in"][0]["count"]
    out.write_text(json.dumps(data))
    with pytest.raises(SweepFileError, match=r"shapes\[1\]: call site .* is shapes\[0\]'s too"):
        load_sweep(out)


def test_a_rollup_as_csv_is_a_usage_error_not_the_table(tmp_path):
    """``predict --rollup --format csv`` printed the text table, exit 0 (from
    the newcomer): a rollup's phases are nested, so csv is refused."""
    out = tmp_path / "llama.json"
    config = str(FIXTURES / "llama-3.2-1b-config.json")
    CliRunner().invoke(cli, ["sweep", "from-config", config, "--tokens", "8", "--out", str(out)])
    argv = ["predict", "--hw", "i7_12700k", "--sweep", str(out), "--rollup", "--format", "csv"]
    result = CliRunner().invoke(cli, argv)
    assert result.exit_code == 2, result.output
    assert "--rollup prints a table or --format json, not csv" in result.output


@pytest.mark.parametrize("flag", [["--op", "matmul"], ["--dtype", "bf16"]])
def test_a_rollup_of_part_of_a_sweep_is_a_usage_error(tmp_path, flag):
    """``predict --sweep S --rollup --op matmul`` priced the two attention
    kernels as "one forward pass", 14,717 tokens/s for 41.8 (from the
    newcomer): a rollup is of the whole sweep."""
    out = tmp_path / "llama.json"
    config = str(FIXTURES / "llama-3.2-1b-config.json")
    CliRunner().invoke(cli, ["sweep", "from-config", config, "--tokens", "8", "--out", str(out)])
    argv = ["predict", "--hw", "i7_12700k", "--sweep", str(out), "--rollup", *flag]
    result = CliRunner().invoke(cli, argv)
    assert result.exit_code == 2, result.output
    assert f"--rollup prices a whole forward pass: {flag[0]} would leave out" in result.output


def test_a_call_site_holding_a_control_character_is_refused(tmp_path):
    """A site name holding U+202E was printed raw in the rollup's table,
    reversing the rest of its line (from the newcomer)."""
    out = tmp_path / "llama.json"
    config = str(FIXTURES / "llama-3.2-1b-config.json")
    CliRunner().invoke(cli, ["sweep", "from-config", config, "--tokens", "8", "--out", str(out)])
    text = out.read_text()
    assert '"q_proj"' in text
    out.write_text(text.replace('"q_proj"', '"q_\\u202eproj"', 1))
    with pytest.raises(SweepFileError, match=r"\.site: holds a control character \(U\+202E\)"):
        load_sweep(out)


def test_a_sweep_filter_that_matches_nothing_names_its_value_and_the_entries():
    """``predict --sweep S --op matmull`` said "no entry matches --op",
    naming neither the value nor what the sweep holds (from the newcomer)."""
    sweep = FIXTURES.parents[1] / "graphsval_core" / "sweeps" / "matmul_validation.json"
    argv = ["predict", "--hw", "i7_12700k", "--sweep", str(sweep), "--dtype", "fp64"]
    result = CliRunner().invoke(cli, argv)
    assert result.exit_code == 2, result.output
    line = " ".join(result.output.split())
    assert "no entry matches --dtype fp64 (its entries: matmul bf16, matmul fp16," in line


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ('"batch": 0', "source.batch: expected an integer in [1, 1048576], got 0"),
        ('"batch": -3', "source.batch: expected an integer in [1, 1048576], got -3"),
        ('"batch": "x"', "source.batch: expected an integer, got a string 'x'"),
        ('"batch": null', "source.batch: expected an integer, got null"),
        ('"tokens": [0]', "source.tokens[0]: expected an integer in [1, 16777216], got 0"),
        (
            '"batches": 1',
            "source: unknown key 'batches' (did you mean 'batch'?); expected config, model, "
            "tokens, batch",
        ),
    ],
)
def test_a_sweep_source_a_rollup_prices_is_checked(tmp_path, edit, message):
    """A hand-edited ``source`` of a from-config sweep: batch 0 printed
    "batch 0" and no tokens/s, -3 negative tokens per second, "x" or null
    failed inside the rollup (from the newcomer)."""
    out = tmp_path / "llama.json"
    config = str(FIXTURES / "llama-3.2-1b-config.json")
    CliRunner().invoke(cli, ["sweep", "from-config", config, "--tokens", "8", "--out", str(out)])
    text = out.read_text()
    key = edit.split(":")[0]
    old = {'"batch"': '"batch": 1', '"tokens"': '"tokens": [8]', '"batches"': '"batch": 1'}[key]
    assert old in text
    out.write_text(text.replace(old, edit, 1))
    argv = ["predict", "--hw", "i7_12700k", "--sweep", str(out), "--rollup"]
    result = CliRunner().invoke(cli, argv)
    assert result.exit_code == 2, result.output
    assert result.output.strip() == f"Error: {out}: {message}"


def test_a_rollup_refuses_a_phase_its_source_does_not_sweep(tmp_path):
    """A phase edited by hand ("prefil T=8") was priced as a pass of its
    own, its sites missing from the real one (from the newcomer)."""
    out = tmp_path / "llama.json"
    config = str(FIXTURES / "llama-3.2-1b-config.json")
    CliRunner().invoke(cli, ["sweep", "from-config", config, "--tokens", "8", "--out", str(out)])
    text = out.read_text()
    out.write_text(text.replace('"phase": "prefill T=8"', '"phase": "prefil T=8"', 1))
    argv = ["predict", "--hw", "i7_12700k", "--sweep", str(out), "--rollup"]
    result = CliRunner().invoke(cli, argv)
    assert result.exit_code == 2, result.output
    said = " ".join(result.output.split())
    refused = "phase 'prefil T=8', where its source's tokens sweep prefill T=8, decode ctx=8"
    assert refused in said


def _llama_sweep(tmp_path) -> dict:
    out = tmp_path / "llama.json"
    config = str(FIXTURES / "llama-3.2-1b-config.json")
    argv = ["sweep", "from-config", config, "--tokens", "1,8", "--out", str(out)]
    assert CliRunner().invoke(cli, argv).exit_code == 0
    return json.loads(out.read_text())


def _edited_rollup(tmp_path, data: dict) -> str:
    out = tmp_path / "edited.json"
    out.write_text(json.dumps(data))
    argv = ["predict", "--hw", "i7_12700k", "--sweep", str(out), "--rollup"]
    result = CliRunner().invoke(cli, argv)
    assert result.exit_code == 2, result.output
    return " ".join(result.output.split())


def _drop_site(data: dict, name: str, phase: str) -> None:
    for entry in data["shapes"]:
        entry["used_in"] = [s for s in entry["used_in"] if (s["site"], s["phase"]) != (name, phase)]
        entry["count"] = sum(s["count"] for s in entry["used_in"])
    data["shapes"] = [e for e in data["shapes"] if e["used_in"]]


def test_a_rollup_refuses_a_hand_edited_part_of_a_pass(tmp_path):
    """Edits of a from-config sweep that a rollup priced as whole passes
    (from the newcomer): the source's batch changed alone (tokens a second
    multiplied by 8, no call changed), a site dropped from one phase (a part
    of a pass priced as a pass), a site's calls changed in one phase; and
    without a source, a phase that is a near miss of another."""
    data = _llama_sweep(tmp_path)
    data["source"]["batch"] = 8
    said = _edited_rollup(tmp_path, data)
    told = "1 row of A, where the source's batch 8 times the phase's 1 token a sequence gives 8"
    assert told in said
    data = _llama_sweep(tmp_path)
    _drop_site(data, "lm_head", "decode ctx=8")
    said = _edited_rollup(tmp_path, data)
    told = (
        "decode ctx=8 has no call site lm_head (linear_nobias), which prefill T=1 has: a pass "
        "is not whole"
    )
    assert told in said
    data = _llama_sweep(tmp_path)
    for entry in data["shapes"]:
        for site in entry["used_in"]:
            if (site["site"], site["phase"]) == ("q_proj", "prefill T=8"):
                site["count"] = 1
        entry["count"] = sum(s["count"] for s in entry["used_in"])
    said = _edited_rollup(tmp_path, data)
    told = "prefill T=8 calls q_proj (linear_nobias) 1 time a pass, prefill T=1 16: a pass"
    assert told in said
    data = _llama_sweep(tmp_path)  # q_proj with a bias in one phase only (from the reviewer)
    for entry in data["shapes"]:
        if any(s["site"] == "q_proj" and s["phase"] == "prefill T=8" for s in entry["used_in"]):
            entry["op"] = "linear"
    said = _edited_rollup(tmp_path, data)
    assert "prefill T=8 has call site o_proj (linear), which prefill T=1 has not" in said
    data = _llama_sweep(tmp_path)
    del data["source"]
    for entry in data["shapes"]:
        for site in entry["used_in"]:
            if site["phase"] == "prefill T=8" and site["site"] == "q_proj":
                site["phase"] = "prefil T=8"
    said = _edited_rollup(tmp_path, data)
    told = "phase 'prefil T=8' is a near miss of 'prefill T=8': one pass would be priced as two"
    assert told in said


def test_a_rollup_of_a_dtype_the_target_lacks_says_to_sweep_again(tmp_path):
    """It said "choose one with --dtype", which --rollup refuses (from the
    second newcomer)."""
    out = tmp_path / "llama.json"
    config = str(FIXTURES / "llama-3.2-1b-config.json")
    argv = ["sweep", "from-config", config, "--tokens", "8", "--dtype", "fp8", "--out", str(out)]
    assert CliRunner().invoke(cli, argv).exit_code == 0
    result = CliRunner().invoke(
        cli, ["predict", "--hw", "i7_12700k", "--sweep", str(out), "--rollup"]
    )
    assert result.exit_code == 2
    said = " ".join(result.output.split())
    assert said.endswith("sweep the model again with sweep from-config --dtype"), said


@pytest.mark.parametrize(
    ("bias", "attention", "mlp"),
    [
        ({}, "linear_nobias", "linear_nobias"),  # a LLaMA's config says nothing: no biases
        ({"attention_bias": True}, "linear", "linear_nobias"),
        ({"attention_bias": False, "mlp_bias": True}, "linear_nobias", "linear"),
    ],
)
def test_from_config_gives_a_projection_its_bias_as_the_config_says(tmp_path, bias, attention, mlp):
    """Every projection was a linear with its bias (two kernels, and in bf16
    oneDNN's accumulating call), a LLaMA's too, which has none: its rollup
    paid the bias's kernel on every projection (from the second newcomer).
    The lm_head never has one."""
    config = json.loads((FIXTURES / "llama-3.2-1b-config.json").read_text())
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**config, **bias}))
    out = tmp_path / "sweep.json"
    argv = ["sweep", "from-config", str(path), "--tokens", "8", "--out", str(out)]
    assert CliRunner().invoke(cli, argv).exit_code == 0
    ops = {s["site"]: e.op for e in load_sweep(out).entries for s in e.extra["used_in"]}
    assert {ops[s] for s in ("q_proj", "k_proj", "v_proj", "o_proj")} == {attention}
    assert {ops[s] for s in ("mlp.gate_proj", "mlp.up_proj", "mlp.down_proj")} == {mlp}
    assert ops["lm_head"] == "linear_nobias"


def test_from_config_refuses_a_bias_key_that_is_not_true_or_false(tmp_path):
    config = json.loads((FIXTURES / "llama-3.2-1b-config.json").read_text())
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**config, "mlp_bias": "no"}))
    argv = ["sweep", "from-config", str(path), "--out", str(tmp_path / "s.json")]
    result = CliRunner().invoke(cli, argv)
    assert result.exit_code == 2
    assert "mlp_bias: expected true or false" in " ".join(result.output.split())


def test_from_config_gives_a_qwen2_its_q_k_v_bias(tmp_path):
    """A Qwen2's config names no attention_bias, yet its q/k/v projections
    carry one and its o_proj does not (from the reviewer)."""
    config = json.loads((FIXTURES / "llama-3.2-1b-config.json").read_text())
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**config, "model_type": "qwen2"}))
    out = tmp_path / "sweep.json"
    argv = ["sweep", "from-config", str(path), "--tokens", "8", "--out", str(out)]
    assert CliRunner().invoke(cli, argv).exit_code == 0
    ops = {s["site"]: e.op for e in load_sweep(out).entries for s in e.extra["used_in"]}
    assert {ops[s] for s in ("q_proj", "k_proj", "v_proj")} == {"linear"}
    assert ops["o_proj"] == ops["mlp.up_proj"] == "linear_nobias"
    rolled = ["predict", "--hw", "i7_12700k", "--sweep", str(out), "--rollup"]
    assert CliRunner().invoke(cli, rolled).exit_code == 0  # whole passes, sites of two ops
