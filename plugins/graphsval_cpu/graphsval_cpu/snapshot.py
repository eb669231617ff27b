"""Named snapshot targets of ``host_cpu``.

A capture on ``host_cpu`` records its rows under a named target whose spec is
the detected spec at capture time, restricted to the threads the capture used
(1 thread is far steadier on shared VMs): ``compute_units`` becomes the thread
count, per-unit tiers keep that many units, and every aggregate rate (peaks and
tier bandwidths, which the detection builds per core) is scaled by
threads / cores; on two threads or more the thread team's constants (the
grain, the team's fork/join and a GEMV's own) are kept, on one there is no
team. The key names the CPU model, its cores and the threads.
Snapshot files (``<key>.target.json``) shipped in ``graphsval_cpu/targets/``
are registered as ordinary targets.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from graphsval_core.plugin_api import MemoryTier, Provenance, Sourced, TargetSpec

_NOISE = re.compile(r"\((r|tm)\)|\bcpu\b|\bprocessor\b|\bwith\b.*$|@.*$|\bgen\b")


def model_slug(model: str) -> str:
    """``Intel(R) Xeon(R) Platinum 8480+ CPU @ 2.0GHz`` -> ``intel_xeon_platinum_8480``."""
    return _slug(_NOISE.sub(" ", model.lower()))[:32].strip("_") or "cpu"


def _slug(text: str) -> str:
    """``text`` in lower case, each run of other characters than letters and
    digits one underscore, none at either end."""
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def snapshot_key(target: TargetSpec, threads: int) -> str:
    """``host_<model>[_<microarchitecture>]_<cores>c_<threads>t``: the CPU's
    model, the microarchitecture where the detection names one the model
    name hides (an AMD EPYC VM's generation: ``host_cpu``'s fingerprint
    ``microarchitecture``, :func:`graphsval_cpu.host.microarchitecture`; a
    Zen 3 keeps the plain key it was first shipped under), its cores and the
    threads the capture used."""
    cores = target.compute_units
    model = model_slug(target.fingerprint.get("cpu_model", ""))
    arch = _slug(target.fingerprint.get("microarchitecture", ""))
    return f"host_{model}{'_' + arch if arch else ''}_{cores}c_{threads}t"


def cpu_name(fingerprint: Mapping[str, str], unknown: str = "CPU") -> str:
    """The CPU a fingerprint names, as a snapshot's name and the probe say it:
    its model, with the microarchitecture where the detection names one
    (``AMD EPYC (zen4)``)."""
    model = fingerprint.get("cpu_model", unknown)
    arch = fingerprint.get("microarchitecture")
    return f"{model} ({arch})" if arch else model


def _scaled(value: float, prov: Provenance | None, factor: float, why: str) -> Sourced:
    src = f"{why}: {value:.6g} x {factor:g}" + (f" ({prov})" if prov else "")
    if factor == 1.0 and prov is not None:
        return Sourced(value, prov)
    return Sourced(value * factor, Provenance("derived", src))


def _kept(value: float | None, prov: Provenance | None) -> Sourced | None:
    """A constant of the detected spec carried into the snapshot unchanged."""
    if value is None:
        return None
    return Sourced(value, prov) if prov is not None else Sourced(value, Provenance("detected", ""))


def _kept_per_dtype(target: TargetSpec, name: str) -> dict[str, Sourced]:
    """A per-dtype constant of the detected spec carried into the snapshot unchanged."""
    values = getattr(target, name)
    return {d: _kept(v, target.provenance.get(f"{name}.{d}")) for d, v in values.items()}  # type: ignore[misc]


def _team(target: TargetSpec) -> dict[str, object]:
    """The thread team's constants of the detected spec, carried unchanged."""
    prov = target.provenance
    return {
        "fork_join_s": _kept(target.fork_join_s, prov.get("fork_join_s")),
        "parallel_grain_ops": _kept(target.parallel_grain_ops, prov.get("parallel_grain_ops")),
        "gemv_fork_join_s": _kept_per_dtype(target, "gemv_fork_join_s"),
    }


def snapshot_host(target: TargetSpec, threads: int | None) -> TargetSpec:
    """The named target a capture of ``target`` with ``threads`` threads measures."""
    cores = target.compute_units
    threads = max(1, min(threads or cores, cores))
    factor = threads / cores
    why = f"snapshot of host_cpu for {threads} of {cores} core(s)"
    prov = target.provenance
    tiers = []
    for t in target.tiers:
        tp = t.provenance
        tiers.append(
            MemoryTier(
                t.name,
                Sourced(t.capacity_bytes, tp["capacity_bytes"]),
                t.is_per_unit,
                min(t.num_units, threads) if t.is_per_unit else t.num_units,
                _scaled(t.peak_bandwidth_bps, tp.get("peak_bandwidth_bps"), factor, why),
                Sourced(t.access_latency_ns, tp["access_latency_ns"]),
                Sourced(t.achievable_fraction, tp["achievable_fraction"]),
                energy_per_byte_j=Sourced(t.energy_per_byte_j, tp["energy_per_byte_j"]),
                label=t.label,
                shared_with_tenants=t.shared_with_tenants,
                non_inclusive=t.non_inclusive,
                # ratios and sizes the thread count does not change
                usable_capacity_bytes=_kept(
                    t.usable_capacity_bytes, tp.get("usable_capacity_bytes")
                ),
                product_fraction=(
                    Sourced(t.product_fraction, tp["product_fraction"])
                    if "product_fraction" in tp
                    else t.product_fraction
                ),
            )
        )
    return TargetSpec(
        key=snapshot_key(target, threads),
        name=f"{cpu_name(target.fingerprint)}, {threads} thread(s) of {cores}",
        family=target.family,
        architecture=target.architecture,
        compute_units=Sourced(threads, Provenance("detected", f"{why}: threads pinned")),
        compute_unit_name="core",
        clock_hz=Sourced(target.clock_hz, prov["clock_hz"]),
        peak_ops_per_s={
            d: _scaled(v, prov.get(f"peak_ops_per_s.{d}"), factor, why)
            for d, v in target.peak_ops_per_s.items()
        },
        energy_per_op_j={
            d: Sourced(v, prov[f"energy_per_op_j.{d}"]) for d, v in target.energy_per_op_j.items()
        },
        launch_overhead_s=Sourced(target.launch_overhead_s, prov["launch_overhead_s"]),
        vector_ops_per_s={
            d: _scaled(v, prov.get(f"vector_ops_per_s.{d}"), factor, why)
            for d, v in target.vector_ops_per_s.items()
        },
        # the GEMM library's packing of B does not depend on the threads
        pack_bps=_kept_per_dtype(target, "pack_bps"),
        pack_min_rows=_kept_per_dtype(target, "pack_min_rows"),
        in_place_max_rows=_kept_per_dtype(target, "in_place_max_rows"),
        transposed_pack_min_rows=_kept_per_dtype(target, "transposed_pack_min_rows"),
        transposed_pass_rows=_kept_per_dtype(target, "transposed_pass_rows"),
        pack_read_overlap=_kept_per_dtype(target, "pack_read_overlap"),
        # nor the library's choice of a narrow kernel, nor its share of a thread's rate
        narrow_n_columns=_kept_per_dtype(target, "narrow_n_columns"),
        transposed_narrow_n_columns=_kept_per_dtype(target, "transposed_narrow_n_columns"),
        narrow_n_fraction=_kept_per_dtype(target, "narrow_n_fraction"),
        transposed_narrow_n_group=_kept_per_dtype(target, "transposed_narrow_n_group"),
        transposed_narrow_n_fraction=_kept_per_dtype(target, "transposed_narrow_n_fraction"),
        # the framework's choice of kernel by a product's size does not depend on the threads
        library_min_macs=_kept_per_dtype(target, "library_min_macs"),
        # nor what its call costs more when it accumulates onto C
        accumulate_overhead_s=_kept_per_dtype(target, "accumulate_overhead_s"),
        # nor its micro-kernel's width
        accumulator_lanes=_kept_per_dtype(target, "accumulator_lanes"),
        tail_piece_vectors=_kept_per_dtype(target, "tail_piece_vectors"),
        product_output_passes=_kept_per_dtype(target, "product_output_passes"),
        # nor its own kernel's times: one thread forms each output (the
        # reference gemm runs on the calling thread), nor the TLB's reach
        no_gemm_library=target.no_gemm_library,
        **{name: _kept_per_dtype(target, name) for name in TargetSpec.REFERENCE},
        tlb_reach_bytes=_kept(target.tlb_reach_bytes, prov.get("tlb_reach_bytes")),
        page_walk_s=_kept(target.page_walk_s, prov.get("page_walk_s")),
        # each thread packs its own blocks of an A from main memory
        pack_a_bps={
            d: _scaled(v, prov.get(f"pack_a_bps.{d}"), factor, why)
            for d, v in target.pack_a_bps.items()
        },
        # each thread faults in the pages of a fresh output it writes
        first_touch_bps=(
            None
            if target.first_touch_bps is None
            else _scaled(target.first_touch_bps, prov.get("first_touch_bps"), factor, why)
        ),
        first_touch_min_bytes=_kept(
            target.first_touch_min_bytes, prov.get("first_touch_min_bytes")
        ),
        vector_first_touch_bps={
            d: _scaled(v, prov.get(f"vector_first_touch_bps.{d}"), factor, why)
            for d, v in target.vector_first_touch_bps.items()
        },
        # a product's share of each tier's bandwidth is a ratio: the same at any thread count
        product_bandwidth_fraction=_kept_per_dtype(target, "product_bandwidth_fraction"),
        in_place_fraction=_kept_per_dtype(target, "in_place_fraction"),
        gemv_fraction=_kept_per_dtype(target, "gemv_fraction"),
        # the share of a product's shorter time its library hides: carried as detected
        # (the roofline's 1 until a calibration of the snapshot's own rows fits it)
        product_overlap=_kept_per_dtype(target, "product_overlap"),
        # a capture on two threads or more wakes a team, with the grain and its costs
        # (the GEMV path's too); one on a single thread never does
        **(_team(target) if threads > 1 else {}),
        idle_power_w=Sourced(target.idle_power_w, prov["idle_power_w"]),
        tdp_w=Sourced(target.tdp_w, prov["tdp_w"]),
        ground_truth="measured",
        tiers=tiers,
        description=(
            f"Snapshot of host_cpu ({cpu_name(target.fingerprint, '?')}) taken by a "
            f"capture pinned to {threads} thread(s): the spec those baselines were measured "
            "against, the same on any machine."
        ),
        fingerprint={
            **dict(target.fingerprint),
            "threads": str(threads),
            "snapshot_of": target.key,
        },
    )
