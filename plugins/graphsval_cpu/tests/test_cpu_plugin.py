"""The entry-point module: cheap to import, registers valid targets, probes CPU only."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import metadata

import pytest

import graphsval_cpu.plugin as plugin
from graphsval_core.plugin_api import PLUGIN_API_VERSION, build_registry, packaged_files
from graphsval_core.testing import target_field
from graphsval_cpu.targets import i7_12700k

pytest_plugins = ["graphsval_core.testing"]


def test_cpu_plugin_import_is_cheap() -> None:
    code = (
        "import graphsval_cpu.plugin, sys; "
        "assert 'torch' not in sys.modules, 'torch imported'; "
        "assert 'graphsval_cpu.host' not in sys.modules, 'host detection imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_cpu_plugin_api_version() -> None:
    assert plugin.graphsval_api_version == PLUGIN_API_VERSION


def test_cpu_plugin_registers_targets() -> None:
    registry = build_registry(autoload=False, strict=True, extra_plugins=[("cpu", plugin)])
    targets = registry.targets()
    assert {"i7_12700k", "host_cpu"} <= set(targets)
    assert targets["host_cpu"].detected and not targets["i7_12700k"].detected
    # Alder Lake has no AVX-512: MKL's AVX2 sgemm kernel, 16 columns of C a row
    assert dict(targets["i7_12700k"].accumulator_lanes) == {"fp32": 16.0}
    # the i7's 20-thread rows cannot tell a library's overlap from its rates: the roofline
    assert not targets["i7_12700k"].product_overlap
    assert registry.measurer_probe(targets["host_cpu"]).available in (True, False)


def test_cpu_plugin_probe_only_for_cpu(i7_as) -> None:
    other = i7_as(key="kpu_like", family="kpu", architecture="domain_flow")
    assert plugin.graphsval_measurer_probe(target=other) is None
    assert plugin.graphsval_measurer_probe(target=i7_12700k()) is not None


def test_cpu_plugin_entry_point() -> None:
    try:
        dist = metadata.distribution("graphsval-cpu")
    except metadata.PackageNotFoundError:
        pytest.skip("graphsval-cpu is not installed")
    eps = {ep.name: ep.value for ep in dist.entry_points if ep.group == "graphsval"}
    assert eps == {"cpu": "graphsval_cpu.plugin"}


def test_cpu_plugin_cli_targets(graphsval_cli) -> None:
    for key in ("host_cpu", "i7_12700k"):
        result = graphsval_cli("targets", "--hw", key)
        if "unknown target" in result.output:
            pytest.skip("graphsval-cpu is not installed")
        assert result.exit_code == 0, result.output
        assert key in result.output and "measurer" in result.output


#: The ops every shipped host capture holds.
HOST_OPS = ("vector_add", "matmul", "linear")


def _shipped(folder: str, suffix: str) -> set[str]:
    return {f.name[: -len(suffix)] for f in packaged_files("graphsval_cpu", folder, suffix)}


def test_every_shipped_host_snapshot_is_whole() -> None:
    """A shipped host target (Intel Xeon, AMD EPYC Zen 3 and Zen 4) ships every op's calibration
    and validation rows, the validation recapture, a calibration, floors that
    hold its capture-vs-recapture agreement, and a registered target."""
    hosts = _shipped("targets", ".target.json")
    assert {"host_intel_xeon_2c_1t", "host_amd_epyc_2c_1t", "host_amd_epyc_zen4_2c_1t"} <= hosts
    baselines = _shipped("baselines", ".csv")
    recaptures = _shipped("baselines/recapture", ".csv")
    calibrations = _shipped("calibration", ".calibration.json")
    floors = json.loads(plugin.graphsval_floors().read_text())["floors"]
    registry = build_registry(autoload=False, strict=True, extra_plugins=[("cpu", plugin)])
    targets = registry.targets()
    for key in sorted(hosts):
        assert key in targets, key
        assert key in calibrations, key
        for op in HOST_OPS:
            assert f"{key}_{op}.calibration" in baselines, (key, op)
            assert f"{key}_{op}.validation" in baselines, (key, op)
            assert f"{key}_{op}.validation" in recaptures, (key, op)
            floor = floors[f"{key}/{op}"]
            assert 0 < floor["recapture_median_max"] < 0.5, (key, op)
            assert 0 < floor["recapture_within_min"] <= 1, (key, op)


def test_cpu_shipped_hosts_show_and_write_their_library_s_software_terms(graphsval_cli) -> None:
    # the Intel host's bf16 linear reads a weight beyond its caches in place; its spec says
    # so in `targets`, in `targets --json`, and carries the fp32 add's rate of the detection
    result = graphsval_cli("targets", "--hw", "host_intel_xeon_2c_1t")
    if "unknown target" in result.output:
        pytest.skip("graphsval-cpu is not installed")
    assert result.exit_code == 0, result.output
    (value, *_), _ = target_field(result.output, "B in place bf16")
    assert "up to 64 rows of A" in value and "packs only the share the caches keep" in value
    (own, *_), source = target_field(result.output, "B in place bf16, stream")
    assert "of each tier's bandwidth for the part of B not packed" in own
    assert "from dram" in own and source.startswith("calibrated")
    as_json = graphsval_cli("targets", "--hw", "host_intel_xeon_2c_1t", "--json")
    assert as_json.exit_code == 0, as_json.output
    assert '"in_place_max_rows"' in as_json.output and '"in_place_fraction"' in as_json.output
    from graphsval_cpu import library

    registry = build_registry()
    for key in ("host_intel_xeon_2c_1t", "host_amd_epyc_zen4_2c_1t", "host_amd_epyc_2c_1t"):
        shipped = registry.datasheet_target(key)  # the target file, before its calibration
        assert shipped.vector_ops_per_s["fp32"] == library.FP32_ADD_PER_CORE  # one core of two
        libraried = [d for d in shipped.peak_ops_per_s if d not in shipped.no_gemm_library]
        expected = {d: v.value for d, v in library.in_place_max_rows(libraried).items()}
        assert dict(shipped.in_place_max_rows) == expected
        share = {d: v.value for d, v in library.in_place_fraction(libraried).items()}
        assert dict(shipped.in_place_fraction) == share
        # N's tail in pieces: each shipped file as its host's flags say (the Zen 4's int8 only)
        flags = shipped.fingerprint["flags"].split()
        pieces = library.tail_piece_vectors(libraried, flags)
        assert dict(shipped.tail_piece_vectors) == {d: v.value for d, v in pieces.items()}
        for d, v in pieces.items():
            assert shipped.provenance[f"tail_piece_vectors.{d}"] == v.provenance
        # MKL's passes over an unpacked linear weight and its packing read in the kernel's
        # stream: the Intel host's alone
        vendor = "GenuineIntel" if "Intel" in shipped.fingerprint["cpu_model"] else "AuthenticAMD"
        for name in ("transposed_pack_min_rows", "transposed_pass_rows", "pack_read_overlap"):
            per = getattr(library, name)(libraried, flags, vendor=vendor)
            assert dict(getattr(shipped, name)) == {d: v.value for d, v in per.items()}, key
            for d, v in per.items():
                assert shipped.provenance[f"{name}.{d}"] == v.provenance
            assert bool(per) == (key == "host_intel_xeon_2c_1t")
        # the framework's own kernel is timed wherever it runs a product: a dtype no
        # library runs (the Zen 3's bf16), and a library's products too small for it
        own = set(shipped.no_gemm_library) | set(shipped.library_min_macs)
        assert own and all(shipped.runs_reference(d) for d in own), key
        if shipped.library_min_macs:
            from graphsval_cpu import reference_kernel

            model = shipped.fingerprint["cpu_model"]
            vendor = "GenuineIntel" if "Intel" in model else "AuthenticAMD"
            small = reference_kernel.times(
                shipped.no_gemm_library,
                shipped.clock_hz,
                small=shipped.library_min_macs,
                vendor=vendor,
            )
            for name, per in small.items():
                assert dict(getattr(shipped, name)) == {d: v.value for d, v in per.items()}
                for d, v in per.items():
                    assert shipped.provenance[f"{name}.{d}"] == v.provenance, (key, name)
    # an Intel CPU's column walk is the Zen 4's at the Intel host's own 16x16x16 (0.63 of
    # it); the dots agree
    intel = registry.datasheet_target("host_intel_xeon_2c_1t")
    zen4 = registry.datasheet_target("host_amd_epyc_zen4_2c_1t")
    walk = (
        intel.reference_mac_s["bf16"]
        * intel.clock_hz
        / (zen4.reference_mac_s["bf16"] * zen4.clock_hz)
    )
    assert walk == pytest.approx(0.63)
    dot = intel.reference_dot_output_s["bf16"] * intel.clock_hz
    assert dot == pytest.approx(zen4.reference_dot_output_s["bf16"] * zen4.clock_hz)
    assert "cannot resolve" in intel.provenance["reference_dot_mac_s.bf16"].source
    zen4 = registry.datasheet_target("host_amd_epyc_zen4_2c_1t")
    assert dict(zen4.tail_piece_vectors) == {"int8": 1.0}
    shown = graphsval_cli("targets", "--hw", "host_amd_epyc_zen4_2c_1t")
    (value, *_), source = target_field(shown.output, "N's tail int8")
    assert value == "power-of-two pieces, 1 vector each" and source.startswith("estimated")
    (lanes, *_), source = target_field(shown.output, "micro-kernel int8")
    assert "its tail in pieces, below" in lanes and "padded" not in lanes.split(";")[0]
    assert "s8 GEMM" in source and "brgemm" not in source
    (lanes, *_), _ = target_field(shown.output, "micro-kernel bf16")
    assert "C's N padded to a multiple" in lanes
    assert "N's tail" not in graphsval_cli("targets", "--hw", "host_intel_xeon_2c_1t").output


def test_a_dtype_with_no_library_says_where_from_in_words(graphsval_cli) -> None:
    """The Zen 3 host's bf16 runs in no GEMM library: its row's note read the
    spec's key, ``no_gemm_library``; it says it in words, as every row does."""
    shown = graphsval_cli("targets", "--hw", "host_amd_epyc_2c_1t")
    (value, *_), source = target_field(shown.output, "library bf16")
    assert value == "none: every product in the framework's own kernel"
    assert source == (
        "the target's spec: no GEMM library runs its bf16 products (the own kernel's times below)"
    )
    assert "no_gemm_library" not in shown.output
