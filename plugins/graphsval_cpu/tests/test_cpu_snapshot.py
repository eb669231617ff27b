"""host_cpu snapshots: the named target a pinned capture records under."""

from __future__ import annotations

import pytest

from graphsval_core.plugin_api import TargetSpec, build_registry
from graphsval_cpu.host import detect_host_cpu
from graphsval_cpu.snapshot import model_slug, snapshot_host


@pytest.mark.parametrize(
    ("model", "slug"),
    [
        ("Intel(R) Xeon(R) Processor", "intel_xeon"),
        ("Intel(R) Xeon(R) Platinum 8480+ CPU @ 2.00GHz", "intel_xeon_platinum_8480"),
        ("AMD EPYC 7B13 64-Core Processor", "amd_epyc_7b13_64_core"),
        ("12th Gen Intel(R) Core(TM) i7-12700K", "12th_intel_core_i7_12700k"),
    ],
)
def test_model_slug(model, slug):
    assert model_slug(model) == slug


def test_snapshot_scales_rates_to_the_threads_used():
    host = detect_host_cpu()
    snap = snapshot_host(host, 1)
    cores = host.compute_units
    assert snap.key.endswith(f"_{cores}c_1t") and snap.key.startswith("host_")
    assert snap.compute_units == 1 and not snap.detected
    for dtype, peak in host.peak_ops_per_s.items():
        assert snap.peak_ops_per_s[dtype] == pytest.approx(peak / cores)
    for a, b in zip(host.tiers, snap.tiers, strict=True):
        assert b.capacity_bytes == a.capacity_bytes
        assert b.peak_bandwidth_bps == pytest.approx(a.peak_bandwidth_bps / cores)
        assert b.num_units == (1 if a.is_per_unit else a.num_units)
    assert snap.fingerprint["snapshot_of"] == "host_cpu" and snap.fingerprint["threads"] == "1"
    # MKL's fp32 packs an A from memory, each thread its own blocks; oneDNN's dtypes do not
    assert set(host.pack_a_bps) == {"fp32"} and set(snap.pack_a_bps) == {"fp32"}
    assert host.pack_a_bps["fp32"] == pytest.approx(4e9 * cores)
    assert snap.pack_a_bps["fp32"] == pytest.approx(4e9)
    # each thread faults in the fresh pages it writes: the rates follow the threads, the
    # size glibc maps afresh does not; PyTorch's bf16 adds take pages slower than fp32's
    assert host.first_touch_bps == pytest.approx(2.2e9 * cores)
    assert snap.first_touch_bps == pytest.approx(2.2e9)
    assert snap.first_touch_min_bytes == host.first_touch_min_bytes == 32 * 2**20
    own = {d: r for d, r in {"fp32": 2.9e9, "bf16": 1.3e9}.items() if d in host.peak_ops_per_s}
    assert dict(snap.vector_first_touch_bps) == pytest.approx(own)
    # PyTorch keeps a bf16 product of at most 16x16x16 out of oneDNN, at any thread count;
    # fp32 (MKL) and int8 (torch._int_mm) have no such size
    # (a dtype with no GEMM library here has no such size: every product is PyTorch's own)
    sized = {
        d for d in ("bf16", "fp16") if d in host.peak_ops_per_s and d not in host.no_gemm_library
    }
    assert set(host.library_min_macs) == sized and snap.library_min_macs == host.library_min_macs
    # nor the GEMM library's micro-kernel (test_cpu_host checks it on a fake AVX-512 guest),
    # nor what its call costs more when it accumulates onto C
    assert snap.accumulator_lanes == host.accumulator_lanes
    assert snap.accumulate_overhead_s == host.accumulate_overhead_s
    # nor do the dtypes without one, the own kernel's times, or the TLB's reach
    assert snap.no_gemm_library == host.no_gemm_library
    for name in TargetSpec.REFERENCE:
        assert getattr(snap, name) == getattr(host, name)
        # every product of a dtype with no library, and a library's products too small for it
        assert set(getattr(host, name)) == set(host.no_gemm_library) | sized
    assert (snap.tlb_reach_bytes, snap.page_walk_s) == (host.tlb_reach_bytes, host.page_walk_s)
    assert all(v == 16 * 16 * 16 for v in snap.library_min_macs.values())
    assert all(snap.provenance[f"library_min_macs.{d}"].kind == "datasheet" for d in sized)
    if cores > 1:
        assert snap.provenance["peak_ops_per_s.fp32"].kind == "derived"


def test_snapshot_keeps_what_the_thread_count_does_not_change():
    from attrs import evolve

    from graphsval_core.plugin_api import estimated

    host = detect_host_cpu()
    tiers = list(host.tiers)
    last = len(tiers) - 2  # the last cache
    tiers[1] = evolve(tiers[1], product_fraction=estimated(0.4, "a calibration"))
    tiers[last] = evolve(
        tiers[last],
        non_inclusive=True,
        shared_with_tenants=True,
        usable_capacity_bytes=estimated(min(3e7, tiers[last].total_capacity_bytes), "fitted"),
    )
    snap = snapshot_host(evolve(host, tiers=tiers), 1)
    assert snap.tiers[1].product_fraction == 0.4
    assert snap.tiers[1].provenance["product_fraction"].source == "a calibration"
    assert snap.tiers[last].non_inclusive and snap.tiers[last].shared_with_tenants
    assert snap.tiers[last].usable_capacity_bytes == tiers[last].usable_capacity_bytes
    assert (
        snap.tiers[0].product_fraction == 1.0 and "product_fraction" not in snap.tiers[0].provenance
    )


def test_snapshot_hook_and_resolution():
    registry = build_registry()
    host = registry.target("host_cpu")
    snap = registry.snapshot_target(host, {"threads": 1})
    assert snap is not None and snap.key == snapshot_host(host, 1).key
    shipped = [t for t in registry.targets().values() if t.fingerprint.get("snapshot_of")]
    resolved = registry.resolve("host_cpu")
    if any(t.key == snap.key for t in shipped):
        # this machine captured the shipped host baselines: host_cpu resolves to them
        assert resolved.key == snap.key
    else:
        assert resolved.key == "host_cpu"
    assert registry.resolve("i7_12700k").key == "i7_12700k"
