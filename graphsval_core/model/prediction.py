"""Predictions: one record of arrays for a batch of shapes, and its explanations.

Every predictor returns a :class:`Prediction`. The fields every harness needs
(latency, energy, regime, binding tier) are required; the breakdown (per-tier
bytes and times, compute and memory time, tiles, energy terms) is filled by
models that have it, such as the built-in reference model, and feeds the
explanation of each shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from attrs import evolve, field, frozen

from graphsval_core.datamodel.target import output_passes_phrase
from graphsval_core.datamodel.units import fmt_bytes, fmt_joules, fmt_seconds, fmt_share, fmt_si
from graphsval_core.model.terms.latency import unhidden_time

#: Terms that add up to the latency exactly.
LATENCY_TERMS = (
    "launch_s",
    "exposed_compute_s",
    "exposed_memory_s",
    "first_touch_s",
    "pack_s",
)

#: Every time and energy term a prediction may report, in the order ``explain``
#: lists them: the latency terms, the overlap hidden and the unexposed compute and
#: memory times, then the energy of compute and the static energy.
TERM_COLUMNS = (
    *LATENCY_TERMS,
    "hidden_s",
    "compute_s",
    "memory_s",
    "energy_compute_j",
    "energy_static_j",
)


@frozen(kw_only=True)
class Prediction:
    """Predictions for ``n`` shapes of one (target, op, dtype).

    Arrays have length ``n``; per-tier arrays have shape ``(n, len(tier_names))``
    where column ``k`` is the traffic *served by* tier ``k`` (crossing the
    boundary between tier ``k`` and the tier or registers inside it).
    """

    predictor: str
    target: str
    op: str
    dtype: str
    dims: tuple[str, ...]
    shapes: np.ndarray
    latency_s: np.ndarray
    energy_j: np.ndarray
    regime: np.ndarray
    binding_tier: np.ndarray
    # --- breakdown (optional for other predictors) ---
    residency_tier: np.ndarray | None = None
    flops: np.ndarray | None = None
    working_set_bytes: np.ndarray | None = None
    tier_names: tuple[str, ...] = ()
    tier_bandwidth_bps: tuple[float, ...] = ()
    #: ``(n, T)``, where some rows stream at other rates than
    #: ``tier_bandwidth_bps`` (a product reading B in place, part of it at
    #: its ``in_place_fraction``; one whose A is too short to pack, at the
    #: library's share without a tier's ``product_fraction``; a GEMV, beyond
    #: the innermost tier at its ``gemv_fraction``); None: none do
    row_bandwidth_bps: np.ndarray | None = None
    bytes_per_tier: np.ndarray | None = None
    time_per_tier_s: np.ndarray | None = None
    tiles: np.ndarray | None = None
    #: per row: the accumulator lanes of the GEMM library's micro-kernel that
    #: set the compute tile (``TargetSpec.accumulator_lanes``), 0 where none do
    lanes: np.ndarray | None = None
    #: per row: the GEMM library's ``product_overlap`` where it sets how much of
    #: the shorter time is hidden, NaN where the roofline's full overlap holds
    product_overlap: np.ndarray | None = None
    #: per row: the product's N as that micro-kernel computes it (padded to a
    #: multiple of the lanes, or its whole vectors and ``tail_piece_vectors``
    #: a piece of its tail where the library splits it; an N of one as it
    #: is), 0 where no lanes do
    padded_n: np.ndarray | None = None
    #: per row: the columns of N beyond its whole vectors that the library
    #: covers in power-of-two pieces (``TargetSpec.tail_piece_vectors``, the
    #: vectors each piece costs), 0 where it pads the tail to a vector instead
    tail_columns: np.ndarray | None = None
    tail_piece_vectors: float | None = None
    #: per row: C's passes (above one) where the GEMM library stores C no cheaper
    #: than a product that accumulates onto it, though this one does not
    #: (``TargetSpec.product_output_passes``), 0 elsewhere (C crosses once, or
    #: twice for a product that accumulates)
    library_output_passes: np.ndarray | None = None
    launch_s: np.ndarray | None = None
    #: per row: the part of ``launch_s`` that wakes and joins the thread team
    team_s: np.ndarray | None = None
    #: per row: that part is a GEMV's own team cost (``gemv_fork_join_s``)
    gemv_team: np.ndarray | None = None
    #: per row: the part of ``launch_s`` the library's call costs more for
    #: accumulating onto C (``accumulate_overhead_s``), 0 where it does not
    accumulate_s: np.ndarray | None = None
    compute_s: np.ndarray | None = None
    memory_s: np.ndarray | None = None
    exposed_compute_s: np.ndarray | None = None
    exposed_memory_s: np.ndarray | None = None
    first_touch_s: np.ndarray | None = None
    #: the rate the batch's fresh outputs take pages at (the op's dtype's own, or the shared)
    first_touch_bps: float | None = None
    #: the dtype's ``in_place_fraction``: the share of each tier's stream rate
    #: at which a row reading B in place streams what it does not pack
    in_place_fraction: float | None = None
    pack_s: np.ndarray | None = None
    #: per row: the part of ``pack_s`` that packs an A from main memory
    pack_a_s: np.ndarray | None = None
    #: per row: the share of its packing copy's read of B the library does
    #: within its kernel's own stream (``pack_read_overlap``, of the part of a
    #: row-major B the caches keep); 0 where none
    pack_read_hidden: np.ndarray | None = None
    #: per row: the library reads the share of B beyond the caches where it lies
    #: instead of packing it (``TargetSpec.in_place_max_rows``)
    b_in_place: np.ndarray | None = None
    #: per row: A has fewer rows than the library packs from (``pack_min_rows``),
    #: so B streams as it lies, at the library's share of each tier's rate
    b_unpacked: np.ndarray | None = None
    #: the rows of A from which the library packs this op's B (``pack_min_rows``,
    #: or a linear's ``transposed_pack_min_rows``); None: it does not pack
    pack_from_rows: float | None = None
    #: per row: how many passes the library's unpacked kernel makes over a
    #: transposed B, ``transposed_pass_rows`` rows of A a pass (0: not such a
    #: row; explain and the details name them from two passes); None: no row
    #: of the batch takes passes
    b_passes: np.ndarray | None = None
    #: the dtype's ``transposed_pass_rows`` where some row takes passes
    pass_rows: float | None = None
    #: per row: the library's level-2 path (a GEMV, M or N of 1; an A too short to
    #: pack, a GEMV per row of A) streams the matrix from the tiers beyond the
    #: innermost at the dtype's ``gemv_fraction``
    gemv_stream: np.ndarray | None = None
    #: the dtype's ``gemv_fraction`` (None: GEMVs stream at the products' share)
    gemv_fraction: float | None = None
    #: per row: the library computes the product in its narrow kernel (N from 2
    #: to the dtype's ``narrow_n_columns``, or ``transposed_narrow_n_columns``
    #: for a linear's weight) at :attr:`narrow_n_fraction` of the compute rate;
    #: None: no row of the batch does
    narrow_n: np.ndarray | None = None
    #: the share of the rate of the narrow kernel the rows run in (the details'
    #: ``narrow_n_fraction``): the dtype's ``narrow_n_fraction``, or for a
    #: linear its ``transposed_narrow_n_fraction`` where given
    narrow_n_fraction: float | None = None
    #: per row: the columns of N the narrow kernel computes (a matmul's: its
    #: most, whatever N; a linear's with a group: N rounded up to whole groups)
    narrow_n_columns: np.ndarray | None = None
    #: the weight's rows a linear's narrow kernel takes a pass (its
    #: ``transposed_narrow_n_group``); None: it computes a row of C a step of K
    narrow_n_group: float | None = None
    #: per row: the product runs in the framework's own kernel (no GEMM library),
    #: timed per output and per multiply-add (its ``compute_s``)
    reference_kernel: np.ndarray | None = None
    #: why the library leaves those products to the framework's kernel: its
    #: dtype has none on the target (``no_gemm_library``: True), or each is at or
    #: below ``library_min_macs`` multiply-adds (that size; None: neither)
    no_library: bool = False
    library_min_macs: float | None = None
    #: per row: the part of that kernel's time its walk down B spends on TLB misses
    tlb_miss_s: np.ndarray | None = None
    #: per row: the compute units the op runs on (1 at or below the target's grain)
    active_units: np.ndarray | None = None
    hidden_s: np.ndarray | None = None
    utilisation: np.ndarray | None = None
    waves: np.ndarray | None = None
    compute_units: int | None = None
    compute_unit_name: str = ""
    peak_ops_per_s: float | None = None
    achievable_ops_per_s: float | None = None
    #: the rate is the spec's vector_ops_per_s (an op with no product), not a peak's share
    vector_rate: bool = False
    energy_compute_j: np.ndarray | None = None
    energy_per_tier_j: np.ndarray | None = None
    energy_static_j: np.ndarray | None = None
    over_tdp: np.ndarray | None = None
    notes: Mapping[str, str] = field(factory=dict)

    def __len__(self) -> int:
        return int(self.latency_s.shape[0])

    def shape_string(self, i: int) -> str:
        return "x".join(str(int(d)) for d in self.shapes[i])

    def _shape_strings(self) -> np.ndarray:
        """Every shape's string (``shape_string`` of each), as one object array."""
        shapes = np.asarray(self.shapes)
        out = np.empty(len(self), dtype=object)
        if shapes.ndim == 2 and shapes.dtype.kind in "iu":  # one op's dims: plain ints at once
            out[:] = ["x".join(map(str, dims)) for dims in shapes.tolist()]
        else:
            out[:] = [self.shape_string(i) for i in range(len(self))]
        return out

    def bandwidth_of(self, i: int) -> tuple[float, ...]:
        """Each tier's effective bandwidth for shape ``i``: its own where the
        prediction gives rows their own (``row_bandwidth_bps``), else the batch's."""
        if self.row_bandwidth_bps is not None:
            return tuple(float(b) for b in self.row_bandwidth_bps[i])
        return tuple(float(b) for b in self.tier_bandwidth_bps)

    def columns(self) -> dict[str, np.ndarray]:
        """The per-shape quantities of the batch, one array of length ``n`` per name:
        the shape string, the totals (``latency_s``, ``energy_j``), ``regime``,
        ``binding_tier``, then every term this predictor reports (:data:`TERM_COLUMNS`,
        an energy column per tier, ``flops``). A term the predictor does not report is
        absent. Every per-shape view of a prediction (``explain``, ``predict``, the
        validation records) is built from these columns.
        """
        out: dict[str, np.ndarray] = {
            "shape": self._shape_strings(),
            "latency_s": np.asarray(self.latency_s, dtype=np.float64),
            "energy_j": np.asarray(self.energy_j, dtype=np.float64),
            "regime": _names(self.regime),
            "binding_tier": _names(self.binding_tier),
        }
        if self.residency_tier is not None:
            out["residency_tier"] = _names(self.residency_tier)
        for name in TERM_COLUMNS:
            value = getattr(self, name)
            if value is not None:
                out[name] = np.asarray(value, dtype=np.float64)
        if self.energy_per_tier_j is not None:
            per_tier = np.asarray(self.energy_per_tier_j, dtype=np.float64)
            for k, tier in enumerate(self.tier_names):
                out[f"energy_{tier}_j"] = per_tier[:, k]
            out["energy_traffic_j"] = per_tier.sum(axis=1)
        if self.flops is not None:
            out["flops"] = np.asarray(self.flops, dtype=np.float64)
        return out

    def row(self, i: int) -> dict[str, Any]:
        """A JSON-ready record of shape ``i``: totals, terms, explanation."""
        columns = self.columns()
        out: dict[str, Any] = {
            "predictor": self.predictor,
            "hardware": self.target,
            "op": self.op,
            "shape": columns["shape"][i],
            "dtype": self.dtype,
            "latency_s": float(columns["latency_s"][i]),
            "energy_j": float(columns["energy_j"][i]),
            "regime": columns["regime"][i],
            "binding_tier": columns["binding_tier"][i],
        }
        if "residency_tier" in columns:
            out["residency_tier"] = columns["residency_tier"][i]
        names = [*TERM_COLUMNS, *(f"energy_{tier}_j" for tier in self.tier_names)]
        out["terms"] = {name: float(columns[name][i]) for name in names if name in columns}
        out["explanation"] = self.sentence(i)
        out["details"] = self.details(i)
        return out

    def details(self, i: int) -> dict[str, Any]:
        """The structured explanation of shape ``i`` (what the sentence says)."""
        d: dict[str, Any] = {}
        if self.flops is not None:
            d["flops"] = float(self.flops[i])
        if self.working_set_bytes is not None:
            d["working_set_bytes"] = float(self.working_set_bytes[i])
        if self.bytes_per_tier is not None:
            d["bytes_per_tier"] = {
                t: float(self.bytes_per_tier[i, k]) for k, t in enumerate(self.tier_names)
            }
        if self.time_per_tier_s is not None:
            d["time_per_tier_s"] = {
                t: float(self.time_per_tier_s[i, k]) for k, t in enumerate(self.tier_names)
            }
        if self.tier_bandwidth_bps:
            d["effective_bandwidth_bps"] = dict(
                zip(self.tier_names, self.bandwidth_of(i), strict=True)
            )
        if self.tiles is not None:
            d["tiles"] = {
                t: [int(x) for x in self.tiles[i, k]] for k, t in enumerate(self.tier_names)
            }
        for name in ("utilisation", "waves"):
            value = getattr(self, name)
            if value is not None:
                d[name] = float(value[i])
        lanes = self._lanes(i)
        if lanes is not None:
            d["accumulator_lanes"], d["padded_n"] = lanes
            pieces = self._pieces(i)
            if pieces:
                d["tail_columns"], d["tail_pieces"] = sum(pieces), len(pieces)
                d["tail_piece_vectors"] = self.tail_piece_vectors
        if self.product_overlap is not None and np.isfinite(self.product_overlap[i]):
            d["product_overlap"] = float(self.product_overlap[i])
            d["unhidden_s"] = self._unhidden(i)
        if self.b_in_place is not None and self.b_in_place[i]:
            d["b_in_place"] = True
            if self.in_place_fraction is not None:
                d["in_place_fraction"] = float(self.in_place_fraction)
        if self.b_unpacked is not None and self.b_unpacked[i]:
            d["b_unpacked"] = True
        if self._read_hidden(i):
            d["pack_read_hidden"] = self._read_hidden(i)
        if self._passes(i) > 1:
            d["b_passes"] = self._passes(i)
        if self._gemv_streams(i):
            d["gemv_fraction"] = float(self.gemv_fraction)  # type: ignore[arg-type]
        if self._narrow(i):
            d["narrow_n_fraction"] = float(self.narrow_n_fraction)  # type: ignore[arg-type]
            d["narrow_n_columns"] = float(self.narrow_n_columns[i])  # type: ignore[index]
            if self.narrow_n_group:
                d["narrow_n_group"] = float(self.narrow_n_group)
        if self._library_passes(i):
            d["library_output_passes"] = self._library_passes(i)
        if self.team_s is not None and self.team_s[i] > 0:
            d["team_s"] = float(self.team_s[i])
            gemv = self.gemv_team is not None and bool(self.gemv_team[i])
            d["team"] = f"GEMV fork/join {self.dtype}" if gemv else "fork/join"
        if self.accumulate_s is not None and self.accumulate_s[i] > 0:
            d["accumulate_s"] = float(self.accumulate_s[i])
        if self.over_tdp is not None:
            d["over_tdp"] = bool(self.over_tdp[i])
        return d

    def _unhidden(self, i: int) -> float:
        """Row ``i``'s share of the shorter of compute and memory that adds to
        its latency: exposed compute + exposed memory - the longer."""
        terms = (self.exposed_compute_s, self.exposed_memory_s, self.compute_s, self.memory_s)
        if any(term is None for term in terms):
            return 0.0
        return float(unhidden_time(*(term[i] for term in terms)))  # type: ignore[index]

    def _lanes(self, i: int) -> tuple[int, int] | None:
        """Row ``i``'s :attr:`lanes` and :attr:`padded_n`; None where no lanes
        set its compute tile, or where the library's narrow kernel times it
        (which computes its own columns, :attr:`narrow_n_columns`)."""
        if self.lanes is None or self.padded_n is None or self.lanes[i] <= 0 or self._narrow(i):
            return None
        return int(self.lanes[i]), int(self.padded_n[i])

    def _pieces(self, i: int) -> list[int]:
        """Row ``i``'s power-of-two pieces of N's tail, largest first (the
        set bits of :attr:`tail_columns`); none where the tail is padded."""
        if self.tail_columns is None:
            return []
        tail = int(self.tail_columns[i])
        return [1 << b for b in reversed(range(tail.bit_length())) if tail >> b & 1]

    def _library_passes(self, i: int) -> float:
        """Row ``i``'s passes of C where its library stores C no cheaper
        than a product that accumulates (:attr:`library_output_passes`); 0 where it does not."""
        if self.library_output_passes is None:
            return 0.0
        return float(self.library_output_passes[i])

    def _read_hidden(self, i: int) -> float:
        """The share of row ``i``'s packing copy's read of B its library does
        in its kernel's own stream (:attr:`pack_read_hidden`), 0 where none."""
        return 0.0 if self.pack_read_hidden is None else float(self.pack_read_hidden[i])

    def _passes(self, i: int) -> int:
        """Row ``i``'s passes over a transposed B (:attr:`b_passes`), 0 where
        it takes none."""
        return 0 if self.b_passes is None else int(self.b_passes[i])

    def _gemv_streams(self, i: int) -> bool:
        """Whether row ``i`` is a GEMV streaming its matrix at the dtype's
        ``gemv_fraction`` (:attr:`gemv_stream`)."""
        return (
            self.gemv_stream is not None
            and self.gemv_fraction is not None
            and bool(self.gemv_stream[i])
        )

    def _narrow(self, i: int) -> bool:
        """Whether row ``i`` runs in the library's narrow kernel (:attr:`narrow_n`)."""
        return (
            self.narrow_n is not None
            and self.narrow_n_fraction is not None
            and bool(self.narrow_n[i])
        )

    def sentence(self, i: int) -> str:
        """One sentence that reads like a person's explanation of shape ``i``."""
        head = f"{self.op} {self.shape_string(i)} {self.dtype} on {self.target}"
        regime = str(self.regime[i])
        if self.time_per_tier_s is None or self.compute_s is None:
            return (
                f"{head}: {fmt_seconds(self.latency_s[i])}, {fmt_joules(self.energy_j[i])} "
                f"-> {regime}"
            )
        k = self.tier_names.index(str(self.binding_tier[i]))
        parts = [head + ":"]
        # the framework's own kernel forms one output at a time: no tile
        own = self.reference_kernel is not None and bool(self.reference_kernel[i])
        if own:
            pass
        elif self.tiles is not None and self.residency_tier is not None:
            mt, _, nt = (int(x) for x in self.tiles[i, k])
            article = "an" if str(mt).startswith("8") or mt in (11, 18) else "a"
            parts.append(f"{article} {mt}x{nt} output tile lives in {self.residency_tier[i]};")
        elif self.residency_tier is not None:
            parts.append("no reuse;")
        moved = self.bytes_per_tier[i, k] if self.bytes_per_tier is not None else 0.0
        bw = self.bandwidth_of(i)[k] if self.tier_bandwidth_bps else float("nan")
        unpacked = ""
        short_a = self.b_unpacked is not None and bool(self.b_unpacked[i])
        short = "A too short to pack it"
        if self.pack_from_rows is not None:  # the threshold that applies: a linear's own
            short += f" (the library packs from {self.pack_from_rows:g} rows of A)"
        if short_a and self._passes(i) > 1:
            per = "row" if self.pass_rows == 1 else f"{self.pass_rows:g} rows"
            unpacked = (
                f"B unpacked, {short}: B streams as it lies, once per "
                f"{per} of A ({self._passes(i)} passes); "
            )
        elif short_a:
            unpacked = f"B unpacked, {short}: B streams as it lies; "
        if self._gemv_streams(i) and k > 0:
            share = f"{self.gemv_fraction:.2g} of each tier's rate beyond the {self.tier_names[0]}"
            if short_a:
                unpacked += f"a GEMV per row of A, each streaming B at {share}; "
            else:
                unpacked += f"a GEMV: its matrix streams at {share}; "
        reread = self._library_passes(i)
        if reread:
            times = "twice" if reread == 2 else f"{reread:g} times"
            unpacked += f"C crosses {times}: the library stores it {output_passes_phrase(reread)}; "
        parts.append(
            f"it streams {fmt_bytes(moved)} from {self.binding_tier[i]} at "
            f"{fmt_si(bw, 'B/s')} effective ({unpacked}{fmt_seconds(self.memory_s[i])} "
            "memory time),"
        )
        unit = "OP/s" if self.dtype.startswith("int") else "FLOP/s"
        compute = f"compute needs {fmt_seconds(self.compute_s[i])}"
        if own:
            tlb = 0.0 if self.tlb_miss_s is None else float(self.tlb_miss_s[i])
            walks = f", {fmt_seconds(tlb)} of it in TLB misses of its walk down B" if tlb else ""
            if self.no_library:
                why = f"{self.dtype} has no GEMM library here"
            elif self.library_min_macs is not None:
                why = (
                    f"at most {self.library_min_macs:g} multiply-adds, too small for the "
                    f"{self.dtype} GEMM library"
                )
            else:
                why = "no GEMM library runs it"
            parts.append(
                compute + f" in the framework's own product kernel ({why}: "
                f"a time per output and per multiply-add{walks}),"
            )
            compute = ""
        elif self.vector_rate and self.achievable_ops_per_s:
            compute += (  # ops, one an element, as `targets` gives the vector rate
                f" at the vector units' {fmt_si(self.achievable_ops_per_s, 'OP/s')} {self.dtype}"
            )
        elif self.achievable_ops_per_s and self.peak_ops_per_s and self.flops is not None:
            frac = self.achievable_ops_per_s / self.peak_ops_per_s
            compute += (
                f" at {frac:.0%} of the {fmt_si(self.peak_ops_per_s, unit)} {self.dtype} peak"
            )
            if self._narrow(i):
                columns = float(self.narrow_n_columns[i])  # type: ignore[index]
                how = "a row of C a step of K"
                if self.narrow_n_group:
                    passes = columns / self.narrow_n_group
                    how = (
                        f"dot products along K, {self.narrow_n_group:g} of the weight's rows "
                        f"a pass over A ({passes:g} pass{'' if passes == 1 else 'es'})"
                    )
                compute += (
                    f" and {self.narrow_n_fraction:.2g} of that in the library's narrow-N "
                    f"kernel ({how}, N computed as {columns:g}, "
                    f"{float(self.utilisation[i]):.0%} utilisation)"  # type: ignore[index]
                )
        tiled = self.utilisation is not None and self.waves is not None
        if compute and tiled and self.compute_units and not self._narrow(i):
            active = self.compute_units
            if self.active_units is not None:
                active = int(self.active_units[i])
            lanes = self._lanes(i)
            vectors = ""
            if lanes is not None:
                vectors = (
                    f", one column: the library's GEMV, not its {lanes[0]}-lane kernel"
                    if lanes[1] == 1
                    else f", rows of {lanes[0]}-lane vectors: N computed as {lanes[1]}"
                )
                pieces = self._pieces(i)
                if len(pieces) > 1:
                    each = self.tail_piece_vectors
                    cost = "a vector" if each == 1 else f"{each:g} of a vector"
                    vectors += (
                        f"; its {sum(pieces)} columns beyond whole vectors in "
                        f"{len(pieces)} power-of-two pieces, {' + '.join(map(str, pieces))}, "
                        f"{cost} each"
                    )
            compute += (
                f" with {float(self.utilisation[i]):.0%} utilisation "
                f"({_count(float(self.waves[i]))} wave{'s' if self.waves[i] != 1 else ''} over "
                f"{active} {self.compute_unit_name}{'s' if active != 1 else ''}{vectors})"
            )
        if compute:
            parts.append(compute + ",")
        if self.launch_s is not None and self.launch_s[i] > 0:  # none: left out, as packing
            parts.append(f"launch {fmt_seconds(self.launch_s[i])};")
        if self.first_touch_s is not None and self.first_touch_s[i] > 0:
            rate = (
                "" if self.first_touch_bps is None else f" at {fmt_si(self.first_touch_bps, 'B/s')}"
            )
            parts.append(
                f"first touch of the fresh output {fmt_seconds(self.first_touch_s[i])}{rate};"
            )
        if self.pack_s is not None and self.pack_s[i] > 0:
            of_a = 0.0 if self.pack_a_s is None else float(self.pack_a_s[i])
            in_place = self.b_in_place is not None and bool(self.b_in_place[i])
            if self.pack_s[i] > of_a:
                what = "the share of B the caches keep" if in_place else "B"
                rest = " (the rest read in place)" if in_place else ""
                if in_place and self.in_place_fraction is not None:
                    rest = (
                        f" (the rest read in place, at {self.in_place_fraction:.2g} of each "
                        "tier's stream rate)"
                    )
                if self._read_hidden(i):
                    share = self._read_hidden(i)
                    rest += (
                        f" (the kernel's own stream does {fmt_share(share)} of its read of B "
                        "through the caches)"
                    )
                parts.append(f"packing {what} {fmt_seconds(self.pack_s[i] - of_a)}{rest};")
            if of_a > 0:
                parts.append(f"packing A from main memory {fmt_seconds(of_a)};")
        unhidden = self._unhidden(i)
        if unhidden > 0:
            parts.append(f"not overlapped by the library {fmt_seconds(unhidden)};")
        parts.append(
            f"total {fmt_seconds(self.latency_s[i])}, {fmt_joules(self.energy_j[i])} -> {regime}"
        )
        text = " ".join(parts)
        if self.over_tdp is not None and self.over_tdp[i]:
            text += " (predicted average power above TDP)"
        return text


def take(pred: Prediction, index: np.ndarray | int) -> Prediction:
    """The sub-batch of ``pred`` at ``index`` (an int or an index array)."""
    idx = np.atleast_1d(np.asarray(index))
    changes: dict[str, Any] = {}
    for attribute in pred.__attrs_attrs__:  # type: ignore[attr-defined]
        value = getattr(pred, attribute.name)
        if isinstance(value, np.ndarray) and value.ndim >= 1 and value.shape[0] == len(pred):
            changes[attribute.name] = value[idx]
    return evolve(pred, **changes)


def _names(values: Any) -> np.ndarray:
    """``values`` as an object array of ``str``, one string object per distinct
    value (a large batch repeats a few regime names: not one string a shape)."""
    text = np.asarray(values).astype(str)
    uniques, inverse = np.unique(text.reshape(-1), return_inverse=True)
    names = np.empty(len(uniques), dtype=object)
    names[:] = [str(u) for u in uniques]
    return names[inverse.reshape(-1)].reshape(text.shape)


def _count(value: float) -> str:
    """A count as a whole number, or with one decimal where it is not one (the
    waves of a library that costs half a vector a piece of N's tail)."""
    return f"{int(value)}" if value.is_integer() else f"{value:.1f}"
