"""The latency constants a calibration fits, chosen by what the rows exercise.

Each constant has a physical meaning and is included only when the rows
exercise it:

- ``launch_overhead_s``: the dispatch/launch cost of one call (with rows of
  several dtypes, ``dispatch_overhead_s.<dtype>`` as well: each dtype's GEMM
  library call for matrix products, e.g. MKL for fp32 and oneDNN with its
  reorders for bf16 on a CPU; a product no larger than the dtype's
  ``library_min_macs`` pays the framework's launch);
- ``accumulate_overhead_s.<dtype>``: the dtype's library call for a
  product that accumulates onto C (beta = 1: linear onto its bias; oneDNN's
  bf16 call with its sum post-op costs 3-4 us more than one that writes C),
  for each dtype the spec gives one, where the dtype's call is fitted
  (its ``dispatch_overhead_s``, or ``launch_overhead_s``) and the rows hold
  :data:`ACCUMULATE_ROWS` distinct launch-bound products of each kind;
- ``kernel_overhead_s``: each further kernel of a multi-kernel op (linear's
  bias), for targets whose spec sets it (a GPU queues it behind the first);
- ``fork_join_s``: waking and joining the thread team, on multi-unit CPU
  targets (rows at or below the grain run on one thread and do not pay it);
  ``gemv_fork_join_s.<dtype>``: the same for a product on the dtype's GEMM
  library's level-2 path (M or N of 1), where the spec gives the dtype one
  and at least :data:`GEMV_TEAM_ROWS` distinct GEMVs of it above the grain
  are launch-bound (a large GEMV's few microseconds of team are lost in its
  stream of B);
- ``pack_bps.<dtype>``: the rate at which a CPU GEMM library packs B (each
  dtype's library on its own: MKL for fp32, oneDNN's reorders for bf16 and
  int8), from the rows of that dtype whose A has at least its ``pack_min_rows``
  rows;
- ``vector_ops_per_s.<dtype>``: the rate of an op with no matrix product at a
  dtype whose spec gives one (a CPU's bf16 add, on the vector units), from the
  rows of such ops at that dtype;
- ``compute_fraction.<dtype>``: the achievable fraction of each dtype's peak
  (when the data say more than the spec's peak, the peak itself is calibrated
  and the fraction is 1: the clock under load is above the one the spec read);
- ``tiers.<tier>.achievable_fraction``: the achievable fraction of a tier's
  bandwidth, for every tier that binds rows (vector_add rows give one plateau
  per tier, as the ERT method does; matmul/linear rows otherwise);
- ``tiers.<tier>.usable_capacity_bytes``: the usable capacity of a tier shared
  with other tenants (a VM's L3);
- ``product_bandwidth_fraction.<dtype>``: the share of each tier's bandwidth
  a matrix product's library achieves at that dtype, once the rows hold at
  least :data:`STREAM_ROWS` vector_add rows bound by a memory tier (they set
  the tiers' own fractions, as the ERT method does) and two product rows of
  the dtype bound by one; with fewer streams the tiers' fractions take the
  products' rates, as before;
- ``tiers.<tier>.product_fraction``: the share of a private cache's
  bandwidth, other than the innermost tier's (a core's own L2), that a matrix
  product draws, relative to a stream's, where the products' shares are
  fitted, the tier bounds at least two vector_add rows and two product rows
  of a fitted dtype, and two of that dtype's product rows are bound by
  another tier only: a stream reads it through the L2 streaming prefetcher,
  a GEMM micro-kernel reads its packed panels from it in short bursts;
- ``product_overlap.<dtype>``: the share of the shorter of a matrix
  product's compute time and its memory time beyond the innermost tier that
  runs under the longer, for each dtype the spec gives one, from at least
  :data:`OVERLAP_ROWS` product rows of the dtype whose shorter time is at
  least :data:`OVERLAP_SHARE` of the longer (under the spec's values);
- ``in_place_fraction.<dtype>``: the share of each tier's bandwidth at
  which a product that reads B in place streams the part it does not pack,
  for each dtype the spec gives one, where the dtype's products' share is
  fitted and at least :data:`IN_PLACE_ROWS` of its rows may read B in place
  (a transposed B beyond what the caches keep, a shared last cache counted
  at the least capacity the fit may give it, under few enough rows of A);
- ``narrow_n_fraction.<dtype>``: the share of the compute rate at which the
  dtype's GEMM library runs a product of a narrow N in its narrow kernel,
  for each dtype the spec gives one, from at least :data:`NARROW_ROWS`
  distinct such rows (N from 2 to ``narrow_n_columns``, or
  ``transposed_narrow_n_columns`` for a linear whose kernel has no share of
  its own);
- ``transposed_narrow_n_fraction.<dtype>``: the same for a linear's own
  narrow kernel (MKL's fp32 on an AMD CPU: dot products along K), for each
  dtype the spec gives one, from at least :data:`NARROW_ROWS` distinct
  linears of 2 to ``transposed_narrow_n_columns`` columns;
- ``pack_a_bps.<dtype>``: the rate at which a CPU GEMM library packs an A
  that lies beyond the last-level cache (serially with its compute), for
  each dtype the spec gives one (MKL's fp32), from the rows of that dtype
  whose A outgrows the caches inside the last level and whose N is above
  ``PACK_A_MIN_COLUMNS``;
- ``first_touch_bps``: the page-zeroing rate that a freshly allocated output of
  at least ``first_touch_min_bytes`` (glibc's largest mmap threshold, 32 MiB)
  pays on every call, for CPU targets whose rows have such outputs;
  ``vector_first_touch_bps.<dtype>``: that rate for ops with no matrix product
  at a dtype, from its two or more rows with such outputs (the kernel that
  writes the fresh pages sets the pace: PyTorch's bf16 add faults its output
  in at a third to a half of its fp32 add's rate); with fewer than two fresh
  products, the dtype with the most such rows sets the shared rate instead
  (:func:`_first_touch`);
- ``reference_output_s.<dtype>`` and ``reference_mac_s.<dtype>`` (a column
  walk of B, ``matmul``), ``reference_dot_output_s.<dtype>`` and
  ``reference_dot_mac_s.<dtype>`` (a dot of contiguous rows, ``linear``):
  the framework's own product kernel's time per output and per
  multiply-add, for each dtype the spec times it at, from the products of
  that layout no GEMM library runs (three or more, of at least two values
  of K: one K alone cannot tell a time per output from one per
  multiply-add); ``page_walk_s``: a TLB miss of the column walk, from two
  or more such products whose walk spans more than the TLB's reach.

A dtype's ``dispatch_overhead_s`` is fitted only where the library runs
some of its rows, and its ``compute_fraction`` only where some of its rows
compute at its peak's share (a dtype whose products all run in the
framework's kernel and whose other ops run at ``vector_ops_per_s`` has none).

Each comes with a starting value, bounds, and a line saying which rows
exercise it (recorded in the calibration file). Fractions are fitted as
multipliers of the spec's value; a rate may go above the spec's peak only
where that peak is an estimate or was detected on the machine.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

import numpy as np
from attrs import define, frozen

from graphsval_core.calibrate.rows import by_op_and_dtype, predict_rows
from graphsval_core.datamodel.dtypes import bytes_per_element, product_output_bytes
from graphsval_core.datamodel.op import OpSpec
from graphsval_core.datamodel.provenance import Provenance
from graphsval_core.datamodel.target import (
    FIRST_TOUCH_MIN_BYTES,
    MAX_PRODUCT_SHARE,
    PACK_A_MIN_COLUMNS,
    TargetSpec,
)
from graphsval_core.files.baseline import BaselineRow
from graphsval_core.files.calibration import SHARES  # noqa: F401 (re-exported)
from graphsval_core.files.calibration_file import MAX_FRACTION, PER_DTYPE_CONSTANTS, RANGES
from graphsval_core.model.terms.compute import narrow_rows
from graphsval_core.model.terms.overheads import (
    gemv_stream_rows,
    library_rows,
    reads_b_in_place,
    team_gemv_rows,
    unpacked_rows,
)
from graphsval_core.model.terms.reference_kernel import tlb_misses
from graphsval_core.model.terms.residency import inner_capacities

#: The share of a row's latency (launch included) a tier's time must reach for the
#: row to exercise that tier: tiny launch-bound rows exercise none.
EXERCISED_SHARE = 0.3
#: Stream rows (vector_add bound by a memory tier) a fit needs before it tells a
#: matrix product's bandwidth share from the tiers' own fractions: fewer (the
#: i7's three, the Orin's) leave the two to trade against each other.
STREAM_ROWS = 10
#: Launch-bound GEMVs above the grain a fit needs before it times a GEMV's team
#: on its own (the i7 has three: 1x128x384, 1x128x512 and 1x256x128, of two
#: families).
GEMV_TEAM_ROWS = 2
#: Product rows of a dtype whose compute and memory times are both visible (the
#: shorter at least OVERLAP_SHARE of the longer) before its ``product_overlap``
#: is fitted.
OVERLAP_ROWS = 5
OVERLAP_SHARE = 0.25
#: Rows of a dtype that read B in place before its ``in_place_fraction`` is
#: fitted.
IN_PLACE_ROWS = 4
#: Distinct GEMVs of a dtype a tier beyond the innermost bounds before its
#: ``gemv_fraction`` is fitted.
GEMV_STREAM_ROWS = 4
#: Distinct products of a dtype in its library's narrow kernel (a narrow N)
#: before its ``narrow_n_fraction`` is fitted.
NARROW_ROWS = 3
#: Distinct launch-bound products of a dtype its library runs, of each kind
#: (accumulating onto C, and writing it), before its ``accumulate_overhead_s``
#: is fitted beside its ``dispatch_overhead_s``.
ACCUMULATE_ROWS = 3


@define
class Param:
    """One constant to fit: its name (as in the calibration file), initial
    value, bounds, and which rows exercise it."""

    name: str
    value: float  # initial
    lower: float
    upper: float
    exercised_by: str


def _top(name: str) -> float:
    """The largest value a calibration file may give per-dtype constant
    ``name`` (its range in :data:`~graphsval_core.files.calibration_file.PER_DTYPE_CONSTANTS`):
    the fit's upper bound for a share."""
    top = RANGES[PER_DTYPE_CONSTANTS[name].range][1]
    assert top is not None, name
    return top


def _headroom(spec: TargetSpec, provenance: Provenance | None) -> float:
    """How far above the spec's peak a calibrated rate may go: not at all for a
    datasheet figure (silicon never beats its datasheet peak), up to 4x for an
    estimated or machine-detected one (a VM reports its base clock)."""
    if provenance is None:
        return 1.0
    loose = provenance.kind in ("estimated", "detected") or "detected" in provenance.source
    return 4.0 if loose or "snapshot_of" in spec.fingerprint else 1.0


def _product_batches(
    registry: Any, rows: Sequence[BaselineRow]
) -> Iterator[tuple[str, list[int], np.ndarray, OpSpec]]:
    """``(dtype, row indices, (n, 3) of M, K, N, op)`` for each (op, dtype)
    batch of ``rows`` whose op is a matrix product."""
    for (op_name, dtype), index in by_op_and_dtype(rows).items():
        op = registry.op(op_name)
        if op.gemm_dims is not None:
            shapes = np.array([rows[i].dims for i in index], dtype=np.int64)
            gemm = np.asarray(op.gemm_dims(shapes), dtype=np.float64).reshape(len(index), 3)
            yield dtype, index, gemm, op


def _library_rows(registry: Any, spec: TargetSpec, rows: Sequence[BaselineRow]) -> np.ndarray:
    """Per row: whether its dtype's GEMM library runs it (the model's
    ``library_rows``: a matrix product above the dtype's ``library_min_macs``),
    whether or not the dtype has a dispatch constant yet."""
    out = np.zeros(len(rows), dtype=bool)
    for dtype, index, gemm, _op in _product_batches(registry, rows):
        out[index] = library_rows(spec, dtype, gemm, len(index))
    return out


def choose_params(registry: Any, spec: TargetSpec, rows: Sequence[BaselineRow]) -> list[Param]:
    """The constants these rows exercise (see module doc)."""
    latency, terms = predict_rows(registry, spec, rows)
    row_dtypes = sorted({r.dtype for r in rows})
    if len(row_dtypes) == 1:
        params = [
            Param(
                "launch_overhead_s",
                spec.launch_overhead_s,
                1e-8,
                1e-2,
                f"{len(rows)} rows (mostly the launch-bound ones)",
            )
        ]
    else:  # each dtype's GEMM library (e.g. MKL for fp32, oneDNN for bf16) on its own
        params = []
        # the framework's own dispatch: ops outside the GEMM library (products
        # too small for it included), and the further kernels of a
        # multi-kernel op (linear's bias) on a CPU
        library = _library_rows(registry, spec, rows)
        own = [
            r
            for i, r in enumerate(rows)
            if not library[i] or (registry.op(r.op).kernels > 1 and spec.kernel_overhead_s is None)
        ]
        if own:
            params.append(
                Param(
                    "launch_overhead_s",
                    spec.launch_overhead_s,
                    1e-8,
                    1e-2,
                    f"{len(own)} rows of ops outside the GEMM library or with a kernel "
                    "besides it (mostly the launch-bound ones)",
                )
            )
        counted = {
            d: sum(1 for i, r in enumerate(rows) if r.dtype == d and library[i]) for d in row_dtypes
        }
        params += [
            Param(
                f"dispatch_overhead_s.{d}",
                spec.launch_for(d),
                1e-8,
                1e-2,
                f"{counted[d]} {d} matmul/linear rows (mostly the launch-bound ones)",
            )
            for d in row_dtypes
            if counted[d]
        ]
    at_peak = _at_peak_share(registry, spec, rows)
    for dtype in sorted({r.dtype for r in rows}):
        n = int(np.sum(at_peak & np.array([r.dtype == dtype for r in rows])))
        if not n:
            continue
        cap = _headroom(spec, spec.provenance.get(f"peak_ops_per_s.{dtype}"))
        params.append(
            Param(
                f"compute_fraction.{dtype}",
                min(1.0, cap),
                1e-3,
                cap / spec.compute_fraction[dtype],
                f"{n} {dtype} rows (the compute-bound ones)",
            )
        )
    for dtype in sorted(spec.vector_ops_per_s):
        n = sum(1 for r in rows if r.dtype == dtype and registry.op(r.op).gemm_dims is None)
        if n >= 2:
            params.append(
                Param(
                    f"vector_ops_per_s.{dtype}",
                    spec.vector_ops_per_s[dtype],
                    spec.vector_ops_per_s[dtype] / 1000,
                    spec.vector_ops_per_s[dtype] * 4,
                    f"{n} {dtype} rows of ops with no matrix product (the cache-resident ones)",
                )
            )
    gate = share_gate(registry, rows, latency, terms["tier_time"])
    bound = tiers_bound(latency, terms["tier_time"])
    for k, tier in enumerate(spec.tiers):
        exercised = bound[:, k]
        binding = int(np.sum(exercised))
        n_vadd = sum(1 for i, r in enumerate(rows) if r.op == "vector_add" and exercised[i])
        params += _product_fraction(registry, spec, rows, bound, k, gate)
        # the innermost tier feeds the registers: for a matrix product its traffic
        # grows with the ops exactly as compute time does, so only vector_add rows
        # can tell its bandwidth from the compute fraction
        if k == 0 and n_vadd < 2:
            binding = 0
        if binding >= 2:
            src = (
                f"{n_vadd} vector_add rows (one plateau per tier)"
                if n_vadd >= 2
                else f"{binding} matmul/linear rows whose time this tier bounds"
            )
            # above the spec's peak only as far as a calibration file may say (MAX_FRACTION)
            cap = min(_headroom(spec, tier.provenance.get("peak_bandwidth_bps")), MAX_FRACTION)
            params.append(
                Param(
                    f"tiers.{tier.name}.achievable_fraction",
                    1.0,
                    1e-3,
                    cap / tier.achievable_fraction,
                    src,
                )
            )
        if tier.shared_with_tenants and tier is not spec.tiers[-1]:
            cap = tier.effective_capacity_bytes
            params.append(
                Param(
                    f"tiers.{tier.name}.usable_capacity_bytes",
                    cap / 4,
                    spec.tiers[0].total_capacity_bytes,
                    cap,
                    "rows whose working set straddles the shared tier",
                )
            )
    params += _product_shares(spec, gate)
    params += _in_place_shares(registry, spec, rows, gate)
    params += _gemv_shares(registry, spec, rows, bound, gate)
    params += _narrow_shares(registry, spec, rows, terms["regime"])
    multi = [r for r in rows if registry.op(r.op).kernels > 1]
    if spec.kernel_overhead_s is not None and multi:
        params.append(
            Param(
                "kernel_overhead_s",
                spec.kernel_overhead_s,
                1e-8,
                1e-2,
                f"{len(multi)} rows of ops that run more than one kernel (mostly the small ones)",
            )
        )
    packs = terms["pack_s"] - terms["pack_a_s"] > 0  # the model's own rule for who packs B
    for dtype in row_dtypes:
        packed = int(sum(1 for i, r in enumerate(rows) if packs[i] and r.dtype == dtype))
        least = spec.pack_min_rows.get(dtype, 0.0)
        if packed >= 2:
            params.append(
                Param(
                    f"pack_bps.{dtype}",
                    spec.pack_bps[dtype],
                    1e8,
                    1e13,
                    f"{packed} {dtype} matmul/linear rows of {least:g} "
                    f"row{'' if least == 1 else 's'} of A or more"
                    + (
                        f" (linears of {spec.transposed_pack_min_rows[dtype]:g} or more)"
                        if dtype in spec.transposed_pack_min_rows
                        else ""
                    ),
                )
            )
    params += _pack_a(registry, spec, rows)
    if (
        spec.fork_join_s is not None
        and spec.parallel_grain_ops is not None
        and spec.compute_units > 1
    ):  # without a grain every row would pay it: collinear with the launch
        params.append(
            Param(
                "fork_join_s",
                spec.fork_join_s,
                1e-8,
                1e-3,
                "rows small enough to run on one thread against ones just above the grain",
            )
        )
    params += _gemv_team(registry, spec, rows, terms["regime"])
    params += _accumulate_dispatch(registry, spec, rows, terms["regime"], params)
    params += _overlap(registry, spec, rows, terms)
    params += _first_touch(registry, spec, rows)
    params += _reference(registry, spec, rows)
    return params


def _overlap(
    registry: Any, spec: TargetSpec, rows: Sequence[BaselineRow], terms: dict[str, np.ndarray]
) -> list[Param]:
    """``product_overlap.<dtype>`` for each dtype the spec gives one with at
    least :data:`OVERLAP_ROWS` products its library runs, and times with that
    overlap (not a linear in a kernel of dot products), whose shorter time (of
    compute and memory) is at least :data:`OVERLAP_SHARE` of the longer."""
    library = _library_rows(registry, spec, rows) & terms["library_overlap"]
    compute, memory = terms["compute_s"], terms["memory_s"]
    longer = np.maximum(compute, memory)
    both = library & (np.minimum(compute, memory) >= OVERLAP_SHARE * longer) & (longer > 0)
    params = []
    for dtype in sorted(spec.product_overlap):
        count = int(sum(1 for i, r in enumerate(rows) if both[i] and r.dtype == dtype))
        if count >= OVERLAP_ROWS:
            params.append(
                Param(
                    f"product_overlap.{dtype}",
                    spec.product_overlap[dtype],
                    1e-2,
                    _top("product_overlap"),
                    f"{count} {dtype} matmul/linear rows whose compute and memory times are "
                    f"within {1 / OVERLAP_SHARE:g}x of each other",
                )
            )
    return params


class GemvTeam(NamedTuple):
    """Distinct GEMVs (M or N of 1, the library's) of one dtype that wake the
    thread team in a set of rows: all of them, and the launch-bound ones,
    which time the team."""

    above_grain: int
    launch_bound: int


def gemv_team_rows(
    registry: Any, spec: TargetSpec, rows: Sequence[BaselineRow], regime: np.ndarray | None = None
) -> dict[str, GemvTeam]:
    """Per dtype whose ``gemv_fork_join_s`` the spec gives (beside its
    ``fork_join_s``), the GEMVs of that dtype that wake the team and could
    time it (the model's rule, :func:`team_gemv_rows`; ``regime``: each
    row's predicted regime, from the spec when not given)."""
    if spec.fork_join_s is None:
        return {}
    dtypes = [d for d in spec.gemv_fork_join_s if any(r.dtype == d for r in rows)]
    if not dtypes:
        return {}
    if regime is None:
        regime = predict_rows(registry, spec, rows)[1]["regime"]
    gemv = np.zeros(len(rows), dtype=bool)
    for dtype, index, gemm, op in _product_batches(registry, rows):
        shapes = np.array([rows[i].dims for i in index], dtype=np.int64)
        flops = np.asarray(op.flops(shapes), dtype=np.float64)
        gemv[index] = team_gemv_rows(spec, dtype, gemm, flops)
    out = {}
    for dtype in dtypes:
        seen = {(r.op, tuple(r.dims)) for i, r in enumerate(rows) if gemv[i] and r.dtype == dtype}
        bound = {
            (r.op, tuple(r.dims))
            for i, r in enumerate(rows)
            if gemv[i] and r.dtype == dtype and regime[i] == "launch_bound"
        }
        out[dtype] = GemvTeam(len(seen), len(bound))
    return out


def _gemv_team(
    registry: Any, spec: TargetSpec, rows: Sequence[BaselineRow], regime: np.ndarray
) -> list[Param]:
    """``gemv_fork_join_s.<dtype>``, for each dtype the spec gives one with
    :data:`GEMV_TEAM_ROWS` distinct launch-bound GEMVs of that dtype that
    wake the team."""
    return [
        Param(
            f"gemv_fork_join_s.{dtype}",
            spec.gemv_fork_join_s[dtype],
            1e-8,
            1e-3,
            f"{counts.launch_bound} launch-bound {dtype} GEMVs (M or N of 1) above the grain",
        )
        for dtype, counts in gemv_team_rows(registry, spec, rows, regime).items()
        if counts.launch_bound >= GEMV_TEAM_ROWS
    ]


def accumulate_rows(
    registry: Any, spec: TargetSpec, rows: Sequence[BaselineRow], regime: np.ndarray
) -> dict[str, tuple[int, int]]:
    """Per dtype the spec gives an ``accumulate_overhead_s``: the distinct
    launch-bound products its library runs that accumulate onto C (linear),
    and those that write it (matmul)."""
    library = _library_rows(registry, spec, rows)
    out = {}
    for dtype in spec.accumulate_overhead_s:
        kinds: dict[bool, set[tuple[str, tuple[int, ...]]]] = {True: set(), False: set()}
        for i, r in enumerate(rows):
            if r.dtype == dtype and library[i] and regime[i] == "launch_bound":
                kinds[registry.op(r.op).accumulates].add((r.op, tuple(r.dims)))
        out[dtype] = (len(kinds[True]), len(kinds[False]))
    return out


def _accumulate_dispatch(
    registry: Any,
    spec: TargetSpec,
    rows: Sequence[BaselineRow],
    regime: np.ndarray,
    chosen: Sequence[Param],
) -> list[Param]:
    """``accumulate_overhead_s.<dtype>`` for each dtype the spec gives one
    whose call is fitted (its ``dispatch_overhead_s``, or with rows of one
    dtype ``launch_overhead_s``), from :data:`ACCUMULATE_ROWS` distinct
    launch-bound products of each kind (fewer of either, and the two calls
    would trade against each other)."""
    fitted = {p.name for p in chosen}
    return [
        Param(
            f"accumulate_overhead_s.{dtype}",
            spec.accumulate_overhead_s[dtype],
            1e-8,
            1e-2,
            f"{acc} launch-bound {dtype} products that accumulate onto C (linear) beside "
            f"{plain} that write it",
        )
        for dtype, (acc, plain) in accumulate_rows(registry, spec, rows, regime).items()
        if {f"dispatch_overhead_s.{dtype}", "launch_overhead_s"} & fitted
        and min(acc, plain) >= ACCUMULATE_ROWS
    ]


def _at_peak_share(registry: Any, spec: TargetSpec, rows: Sequence[BaselineRow]) -> np.ndarray:
    """Per row: whether it computes at its dtype's peak times
    ``compute_fraction``: not an op at the dtype's ``vector_ops_per_s``, nor a
    product the framework's own kernel runs at its own times."""
    out = np.ones(len(rows), dtype=bool)
    for i, r in enumerate(rows):
        out[i] = not spec.runs_at_vector_rate(r.dtype, registry.op(r.op).gemm_dims is not None)
    library = _library_rows(registry, spec, rows)
    for dtype, index, _gemm, _op in _product_batches(registry, rows):
        if spec.runs_reference(dtype):
            out[index] = library[index]
    return out


#: The framework kernel's products of one layout a fit needs before it times
#: that layout, and the distinct K among them (one K alone cannot tell a time
#: per output from one per multiply-add).
REFERENCE_ROWS, REFERENCE_KS = 3, 2


@frozen
class OwnKernelRows:
    """The products the framework's own kernel runs: per (dtype, B stored
    transposed) the K of each, and how many column walks span more than the
    TLB's reach."""

    walks: dict[tuple[str, bool], list[float]]
    beyond: int

    def enough(self, key: tuple[str, bool]) -> bool:
        """Whether the layout's times are fitted: :data:`REFERENCE_ROWS`
        products or more, of :data:`REFERENCE_KS` values of K."""
        ks = self.walks.get(key, [])
        return len(ks) >= REFERENCE_ROWS and len(set(ks)) >= REFERENCE_KS


def own_kernel_rows(registry: Any, spec: TargetSpec, rows: Sequence[BaselineRow]) -> OwnKernelRows:
    """The rows of products the framework's own kernel runs (see :class:`OwnKernelRows`)."""
    library = _library_rows(registry, spec, rows)
    walks: dict[tuple[str, bool], list[float]] = {}
    beyond = 0
    for dtype, index, gemm, op in _product_batches(registry, rows):
        if not spec.runs_reference(dtype):
            continue
        own = ~library[index]
        if own.any():
            walks.setdefault((dtype, op.b_transposed), []).extend(gemm[own, 1].tolist())
        if not op.b_transposed:
            beyond += int(np.sum(own & (tlb_misses(spec, gemm, bytes_per_element(dtype)) > 0)))
    return OwnKernelRows(walks, beyond)


def _reference(registry: Any, spec: TargetSpec, rows: Sequence[BaselineRow]) -> list[Param]:
    """The framework kernel's times (see module doc): per dtype the spec
    times it at, per layout with :data:`REFERENCE_ROWS` products or more of
    :data:`REFERENCE_KS` values of K, and ``page_walk_s`` from two or more
    column walks beyond the TLB's reach."""
    counts = own_kernel_rows(registry, spec, rows)
    out = []
    for (dtype, dot), ks in sorted(counts.walks.items()):
        if not counts.enough((dtype, dot)):
            continue
        layout = "dot" if dot else "column-walk"
        prefix = "reference_dot_" if dot else "reference_"
        for what in ("output", "mac"):
            name = f"{prefix}{what}_s"
            start = getattr(spec, name)[dtype]
            # a multiply-add no faster than the dtype's peak allows one unit
            least = spec.fastest_mac_s(dtype) * (1 + 1e-6) if what == "mac" else 0.0
            out.append(
                Param(
                    f"{name}.{dtype}",
                    start,
                    max(start / 100, least),
                    start * 100,
                    f"{len(ks)} {dtype} {layout} products in the framework's own kernel",
                )
            )
    if spec.page_walk_s is not None and counts.beyond >= 2:
        out.append(
            Param(
                "page_walk_s",
                spec.page_walk_s,
                spec.page_walk_s / 100,
                spec.page_walk_s * 100,
                f"{counts.beyond} column-walk products in the framework's own kernel whose walk "
                "spans more than the TLB's reach",
            )
        )
    return out


def _first_touch(registry: Any, spec: TargetSpec, rows: Sequence[BaselineRow]) -> list[Param]:
    """The first-touch rates a CPU's rows with fresh outputs (32 MiB or more)
    measure: ``vector_first_touch_bps.<dtype>`` for each dtype with two such
    rows of ops with no matrix product, and ``first_touch_bps`` from the rows
    that take fresh pages at it (the products, and the ops of a dtype without
    a rate of its own), when there are two. The shared rate needs its own
    rows: with fewer than two fresh products, the dtype with the most fresh
    rows of ops with no product (unless the spec gives it a rate of its own)
    sets the shared rate, and the others get theirs; with no such dtype left,
    the shared rate is not fitted (it would be one constant fitted twice)."""
    if spec.architecture != "cpu":
        return []
    big = [r for r in rows if _output_bytes(registry, spec, r) >= FIRST_TOUCH_MIN_BYTES]
    products = [r for r in big if registry.op(r.op).gemm_dims is not None]
    streams: dict[str, list[BaselineRow]] = {}
    for r in big:
        if registry.op(r.op).gemm_dims is None:
            streams.setdefault(r.dtype, []).append(r)
    own = {d for d, found in streams.items() if len(found) >= 2}
    if len(products) < 2:
        # the dtype with the most such rows (the first by name on a tie) measures the
        # shared rate, unless the spec already gives it a rate of its own
        free = sorted(own - set(spec.vector_first_touch_bps), key=lambda d: (-len(streams[d]), d))
        if free:
            own.discard(free[0])
    shared = [r for d, found in sorted(streams.items()) if d not in own for r in found]
    out = []
    if len(products) + len(shared) >= 2:
        parts = [f"{len(products)} matmul/linear rows"] if products else []
        if shared:
            dtypes = "/".join(sorted({r.dtype for r in shared}))
            parts.append(f"{len(shared)} {dtypes} rows of ops with no matrix product")
        out.append(
            Param(
                "first_touch_bps",
                10e9,
                1e8,
                1e12,
                f"{' and '.join(parts)} with a fresh output of 32 MiB or more",
            )
        )
    for dtype in sorted(own):
        out.append(
            Param(
                f"vector_first_touch_bps.{dtype}",
                spec.vector_first_touch_bps.get(dtype, 10e9),
                1e8,
                1e12,
                f"{len(streams[dtype])} {dtype} rows of ops with no matrix product "
                "with a fresh output of 32 MiB or more",
            )
        )
    return out


def _private_middle(spec: TargetSpec, k: int) -> bool:
    """Whether tier ``k`` is a private (per-unit) cache other than the
    innermost tier (a CPU core's own L2): the kind of tier whose products'
    share is fitted apart from the dtype's ``product_bandwidth_fraction``,
    which sets the products' rate in the innermost tier, the shared ones and
    memory (a share for every tier would leave the dtype's own undetermined)."""
    return 0 < k < len(spec.tiers) - 1 and spec.tiers[k].is_per_unit


def _product_fraction(
    registry: Any,
    spec: TargetSpec,
    rows: Sequence[BaselineRow],
    exercised: np.ndarray,
    k: int,
    gate: ShareGate,
) -> list[Param]:
    """``tiers.<tier k>.product_fraction`` where the rows can tell it from the
    library shares (see module doc): tier ``k`` is a private cache other than
    the innermost, it bounds two or more vector_add rows (its own rate) and,
    for a dtype whose share is fitted, two or more of its product rows, while
    two or more of that dtype's product rows are bound by another tier only
    (else the tier's share and the dtype's appear only as their product).
    ``exercised`` is ``(n, T)``: which tiers bound each row."""
    if not _private_middle(spec, k):
        return []
    here, elsewhere = exercised[:, k], exercised.any(axis=1) & ~exercised[:, k]
    ops = np.array([r.op for r in rows])
    n_vadd = int(np.sum(here & (ops == "vector_add")))
    product = np.array([registry.op(op).gemm_dims is not None for op in ops], dtype=bool)
    dtypes = np.array([r.dtype for r in rows])
    pinned = [
        d
        for d in gate.products
        if gate.fits(d)
        and np.sum(here & product & (dtypes == d)) >= 2
        and np.sum(elsewhere & product & (dtypes == d)) >= 2
    ]
    if n_vadd < 2 or not pinned:
        return []
    tier = spec.tiers[k]
    n_products = int(np.sum(here & product))
    return [
        Param(
            f"tiers.{tier.name}.product_fraction",
            tier.product_fraction,
            1e-2,
            MAX_PRODUCT_SHARE,
            f"{n_products} matmul/linear rows this private tier bounds, against "
            f"{n_vadd} vector_add rows that set its own rate",
        )
    ]


@frozen
class ShareGate:
    """What the gate of ``product_bandwidth_fraction`` counted: the stream rows
    (ops with no matrix product) a memory tier bounds, and per dtype the
    matrix-product rows one bounds (see module doc)."""

    streams: int
    products: dict[str, int]

    def fits(self, dtype: str) -> bool:
        """Whether the share of ``dtype`` is fitted: enough streams pin the
        tiers and at least two of its product rows are bound by a tier."""
        return self.streams >= STREAM_ROWS and self.products.get(dtype, 0) >= 2


def tiers_bound(latency: np.ndarray, tier_time: np.ndarray) -> np.ndarray:
    """``(n, T)``: whether each tier bounds each row, its time at least
    :data:`EXERCISED_SHARE` of the row's ``latency`` (launch included: tiny
    launch-bound rows exercise no tier)."""
    return tier_time >= EXERCISED_SHARE * latency[:, None]


def share_gate(
    registry: Any,
    rows: Sequence[BaselineRow],
    latency: np.ndarray,
    tier_time: np.ndarray,
) -> ShareGate:
    """The counts the share's gate judges, from the spec's uncalibrated
    ``latency`` and ``tier_time`` of ``rows``: a row is bound by a memory tier
    when one takes at least :data:`EXERCISED_SHARE` of its latency."""
    bound = np.any(tiers_bound(latency, tier_time), axis=1)
    product = np.array([registry.op(r.op).gemm_dims is not None for r in rows], dtype=bool)
    products = {
        dtype: int(np.sum(bound & product & np.array([r.dtype == dtype for r in rows])))
        for dtype in sorted({r.dtype for r in rows})
    }
    return ShareGate(int(np.sum(bound & ~product)), products)


def _product_shares(spec: TargetSpec, gate: ShareGate) -> list[Param]:
    """``product_bandwidth_fraction.<dtype>`` where streams pin the tiers (see
    module doc)."""
    return [
        Param(
            f"product_bandwidth_fraction.{dtype}",
            spec.bandwidth_share(dtype),
            1e-2,
            _top("product_bandwidth_fraction"),
            f"{count} {dtype} matmul/linear rows a memory tier bounds, "
            f"against {gate.streams} vector_add rows that set the tiers' own rates",
        )
        for dtype, count in gate.products.items()
        if gate.fits(dtype)
    ]


def _in_place_shares(
    registry: Any, spec: TargetSpec, rows: Sequence[BaselineRow], gate: ShareGate
) -> list[Param]:
    """``in_place_fraction.<dtype>`` for each dtype the spec gives one, where
    the dtype's products' share is fitted (streams pin the tiers) and at
    least :data:`IN_PLACE_ROWS` of its rows may read B in place: B outgrows
    what the caches keep, with a shared last cache (a VM's share of an L3,
    whose usable capacity is itself fitted) at the least the fit may give it."""
    if not spec.in_place_fraction or len(spec.tiers) < 2:
        return []
    kept = float(inner_capacities(spec.tiers)[-1])
    last = len(spec.tiers) - 2  # the last cache
    if last > 0 and spec.tiers[last].shared_with_tenants:  # its capacity is fitted, from the L1's
        least = spec.tiers[0].total_capacity_bytes
        kept += least - spec.tiers[last].effective_capacity_bytes
    counts = dict.fromkeys(sorted(spec.in_place_fraction), 0)
    for dtype, _index, gemm, op in _product_batches(registry, rows):
        if dtype in counts:
            bpe = bytes_per_element(dtype)
            own = reads_b_in_place(spec, dtype, gemm, bpe, op.b_transposed, kept)
            counts[dtype] += int(np.sum(own))
    return [
        Param(
            f"in_place_fraction.{dtype}",
            spec.in_place_fraction[dtype],
            1e-2,
            _top("in_place_fraction"),
            f"{count} {dtype} rows that may read B in place (a linear's transposed weight "
            "beyond the caches, under few enough rows of A)",
        )
        for dtype, count in counts.items()
        if count >= IN_PLACE_ROWS and gate.fits(dtype)
    ]


def gemv_stream_rows_bound(
    registry: Any,
    spec: TargetSpec,
    rows: Sequence[BaselineRow],
    bound: np.ndarray,
) -> dict[str, int]:
    """Per dtype the spec gives a ``gemv_fraction``, the distinct rows of it on
    the library's level-2 path (a GEMV, or fewer rows of A than it packs
    from: :func:`gemv_stream_rows`) that a tier beyond the innermost bounds
    (``bound``: :func:`tiers_bound` of each row)."""
    if not spec.gemv_fraction or len(spec.tiers) < 2:
        return {}

    def own(dtype: str, gemm: np.ndarray, library: np.ndarray, op: OpSpec) -> np.ndarray:
        return gemv_stream_rows(spec, dtype, gemm, library, op.b_transposed)

    outer = np.any(bound[:, 1:], axis=1)
    return _distinct_rows(registry, spec, rows, spec.gemv_fraction, own, outer)


def _distinct_rows(
    registry: Any,
    spec: TargetSpec,
    rows: Sequence[BaselineRow],
    dtypes: Any,
    own: Any,
    keep: np.ndarray,
) -> dict[str, int]:
    """Per dtype of ``dtypes``, the distinct (op, shape) rows its GEMM library
    runs that ``own(dtype, gemm, library, op)`` picks in their (op, dtype)
    batch and ``keep`` (one flag a row of ``rows``) keeps."""
    seen: dict[str, set[tuple[str, tuple[int, ...]]]] = {d: set() for d in dtypes}
    for dtype, index, gemm, op in _product_batches(registry, rows):
        if dtype not in seen:
            continue
        picked = own(dtype, gemm, library_rows(spec, dtype, gemm, len(index)), op)
        for j, i in enumerate(index):
            if picked[j] and keep[i]:
                seen[dtype].add((rows[i].op, tuple(rows[i].dims)))
    return {d: len(shapes) for d, shapes in sorted(seen.items())}


def _gemv_shares(
    registry: Any,
    spec: TargetSpec,
    rows: Sequence[BaselineRow],
    bound: np.ndarray,
    gate: ShareGate,
) -> list[Param]:
    """``gemv_fraction.<dtype>`` for each dtype the spec gives one, where the
    dtype's products' share is fitted (streams pin the tiers) and at least
    :data:`GEMV_STREAM_ROWS` distinct rows of it on the library's level-2
    path are bound by a tier beyond the innermost
    (:func:`gemv_stream_rows_bound`)."""
    return [
        Param(
            f"gemv_fraction.{dtype}",
            spec.gemv_fraction[dtype],
            1e-2,
            _top("gemv_fraction"),
            f"{count} {dtype} GEMVs (M or N of 1, or A too short to pack) a tier beyond the "
            f"{spec.tiers[0].name} bounds, against the tiers' own rates",
        )
        for dtype, count in gemv_stream_rows_bound(registry, spec, rows, bound).items()
        if count >= GEMV_STREAM_ROWS and gate.fits(dtype)
    ]


def narrow_kernel_rows(
    registry: Any,
    spec: TargetSpec,
    rows: Sequence[BaselineRow],
    regime: np.ndarray,
    transposed_share: bool = False,
) -> dict[str, int]:
    """Per dtype the spec gives a ``narrow_n_fraction`` (with
    ``transposed_share``: a ``transposed_narrow_n_fraction``), the distinct
    rows its library runs in the narrow kernel that share times
    (:func:`narrow_rows`; a linear's where its kernel has a share of its
    own) that are not launch-bound (``regime``: each row's under the spec's
    values): a call its launch hides says nothing of the kernel's rate."""
    shares = spec.transposed_narrow_n_fraction if transposed_share else spec.narrow_n_fraction
    if not shares:
        return {}

    def own(dtype: str, gemm: np.ndarray, library: np.ndarray, op: OpSpec) -> np.ndarray:
        apart = op.b_transposed and dtype in spec.transposed_narrow_n_fraction
        if apart != transposed_share:
            return np.zeros(len(library), dtype=bool)
        unpacked = unpacked_rows(spec, dtype, gemm, library, op.b_transposed)
        narrow = narrow_rows(spec, dtype, gemm, library, unpacked, op.b_transposed)
        return np.zeros(len(library), dtype=bool) if narrow is None else narrow

    shown = np.asarray(regime) != "launch_bound"
    return _distinct_rows(registry, spec, rows, shares, own, shown)


def _narrow_shares(
    registry: Any, spec: TargetSpec, rows: Sequence[BaselineRow], regime: np.ndarray
) -> list[Param]:
    """``narrow_n_fraction.<dtype>`` for each dtype the spec gives one, with at
    least :data:`NARROW_ROWS` distinct rows in its library's narrow kernel
    that are not launch-bound (:func:`narrow_kernel_rows`)."""
    return [
        Param(
            f"narrow_n_fraction.{dtype}",
            spec.narrow_n_fraction[dtype],
            1e-2,
            _top("narrow_n_fraction"),
            f"{count} {dtype} "
            + ("matmul" if dtype in spec.transposed_narrow_n_fraction else "matmul/linear")
            + " rows of a narrow N (the library's narrow kernel) that are not launch-bound",
        )
        for dtype, count in narrow_kernel_rows(registry, spec, rows, regime).items()
        if count >= NARROW_ROWS
    ] + [
        Param(
            f"transposed_narrow_n_fraction.{dtype}",
            spec.transposed_narrow_n_fraction[dtype],
            1e-2,
            _top("transposed_narrow_n_fraction"),
            f"{count} {dtype} linear rows of a narrow N (the library's narrow kernel for a "
            "linear's weight) that are not launch-bound",
        )
        for dtype, count in narrow_kernel_rows(registry, spec, rows, regime, True).items()
        if count >= NARROW_ROWS
    ]


def _pack_a(registry: Any, spec: TargetSpec, rows: Sequence[BaselineRow]) -> list[Param]:
    """``pack_a_bps.<dtype>``, for each dtype the spec gives a rate (its
    library packs A: MKL's fp32 on a CPU), with at least two rows of that dtype
    whose N is above ``PACK_A_MIN_COLUMNS`` and whose A outgrows the caches
    inside the last level (whether it also outgrows the last level, often a
    VM's share of an L3 whose usable capacity is itself fitted, is the fit's
    to say); it starts at the spec's rate."""
    if spec.architecture != "cpu" or len(spec.tiers) < 3:
        return []
    private = float(inner_capacities(spec.tiers)[-2])
    counts = dict.fromkeys(sorted({r.dtype for r in rows} & set(spec.pack_a_bps)), 0)
    for dtype, _index, gemm, _op in _product_batches(registry, rows):
        if dtype not in counts:
            continue
        tall = gemm[:, 0] * gemm[:, 1] * bytes_per_element(dtype) > private
        counts[dtype] += int(np.sum((gemm[:, 2] > PACK_A_MIN_COLUMNS) & tall))
    out = []
    for dtype, count in counts.items():
        if count >= 2:
            start = spec.pack_a_bps[dtype]
            out.append(
                Param(
                    f"pack_a_bps.{dtype}",
                    start,
                    start / 1000,
                    start * 1000,
                    f"{count} {dtype} matmul/linear rows of more than {PACK_A_MIN_COLUMNS} "
                    "columns whose A outgrows the caches inside the last level",
                )
            )
    return out


def _output_bytes(registry: Any, spec: TargetSpec, row: BaselineRow) -> float:
    """Bytes of the row's output operand (0 for an op without one)."""
    op = registry.op(row.op)
    if not op.output_operand:
        return 0.0
    elements = op.operand_elements(np.array([row.dims]))
    width = bytes_per_element(row.dtype)
    if op.gemm_dims:
        width = product_output_bytes(row.dtype, spec.architecture)
    return float(elements[op.output_operand][0]) * width
