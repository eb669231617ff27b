"""The target data model: a target's spec and its memory tiers.

Records are frozen attrs classes validated at construction; every error names
the field (``SpecError.field``). Numeric fields accept either a plain number or
a :class:`~graphsval_core.datamodel.provenance.Sourced` value (``datasheet(...)``,
``derived(...)``, ...): the record stores the number and files the provenance
under the field's name in ``provenance``. A number a target spec needs without
provenance is an error, so every figure of a shipped spec says where it came from.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

from attrs import field, frozen

from graphsval_core.datamodel.dtypes import KNOWN_DTYPES
from graphsval_core.datamodel.errors import UserInputError, control_character
from graphsval_core.datamodel.op import MAX_DIM
from graphsval_core.datamodel.provenance import Provenance, Sourced
from graphsval_core.datamodel.regimes import TIER_NAMES, tier_regime

#: Architecture classes (used by cross-architecture consistency checks).
ARCHITECTURES: tuple[str, ...] = ("cpu", "gpu", "systolic", "domain_flow")

#: Where a target's ground truth comes from.
GROUND_TRUTH_KINDS: tuple[str, ...] = ("measured", "consistency_only")

_KEY_RE = re.compile(r"[a-z][a-z0-9_]*")

_DEFAULT_FRACTION = Provenance("estimated", "default 1.0: not calibrated")


#: How a spec error about a number with no provenance begins.
NO_PROVENANCE = "has no provenance"


class SpecError(UserInputError):
    """A target spec or memory tier is invalid; ``field`` names the culprit."""

    def __init__(self, field_name: str, message: str) -> None:
        self.field = field_name
        self.message = message
        super().__init__(f"field {field_name!r}: {message}")


def _set(obj: Any, name: str, value: Any) -> None:
    object.__setattr__(obj, name, value)


def _unwrap(value: Any, name: str, prov: dict[str, Provenance]) -> Any:
    """Return the plain number of ``value``; file its provenance under ``name``."""
    if isinstance(value, Sourced):
        prov[name] = value.provenance
        return value.value
    return value


def _shown(value: Any) -> str:
    """``value`` as a file would have it: JSON's ``null``, ``true`` and
    ``false``, a quoted string, a float in the fewest digits that read back
    as it (``1.0000000001``, not a rounded ``1``)."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, float):
        return repr(value).removesuffix(".0") if value.is_integer() else repr(value)
    return json.dumps(value) if isinstance(value, str) else repr(value)


def _refuse_control(where: str, text: object) -> None:
    """Refuse free text (a description, a label, a provenance's source) that
    holds a control character: printed as it is, an escape sequence would
    drive the user's terminal (retitle it, hide lines)."""
    bad = control_character(text) if isinstance(text, str) else None
    if bad is not None:
        raise SpecError(where, f"holds a control character ({bad}): give plain text")


def _refuse_control_sources(prefix: str, prov: Mapping[str, Any]) -> None:
    """:func:`_refuse_control` of each provenance's source, named
    ``<prefix>provenance.<key>.source``."""
    for key, source in prov.items():
        _refuse_control(f"{prefix}provenance.{key}.source", getattr(source, "source", None))


def _number(where: str, value: Any, *, minimum: float = 0.0, strict: bool = True) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise SpecError(where, f"must be a number, got {_shown(value)}")
    value = float(value)
    if not math.isfinite(value):
        raise SpecError(where, f"must be finite, got {_shown(value)}")
    if strict and value <= minimum:
        raise SpecError(where, f"must be > {minimum:g}, got {_shown(value)}")
    if not strict and value < minimum:
        raise SpecError(where, f"must be >= {minimum:g}, got {_shown(value)}")
    return value


def _count(where: str, value: Any) -> int:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise SpecError(where, f"must be a positive integer, got {_shown(value)}")
    return value


def _require_provenance(prefix: str, names: Iterable[str], prov: Mapping[str, Any]) -> None:
    for name in names:
        if name not in prov:
            raise SpecError(
                f"{prefix}{name}",
                f"{NO_PROVENANCE}; write it as datasheet(...), derived(...), "
                "estimated(...), detected(...) or calibrated(...)",
            )
        if not isinstance(prov[name], Provenance):
            raise SpecError(
                f"{prefix}{name}", f"provenance must be a Provenance, got {prov[name]!r}"
            )


@frozen
class MemoryTier:
    """One level of a target's memory hierarchy (the seeds' V5 ``MemoryTier``).

    ``capacity_bytes`` is per unit when ``is_per_unit`` (an L1 per core), else
    for the whole tier; ``peak_bandwidth_bps`` is always aggregate over units.
    ``shared_with_tenants`` marks a tier other tenants also use (a VM's L3); its
    usable capacity (``usable_capacity_bytes``) is then left for calibration.
    ``product_fraction`` is the share of the tier's effective bandwidth a
    matrix product's library draws, relative to a stream's (1 unless
    calibrated; the dtype's ``product_bandwidth_fraction`` scales it again):
    a stream reads a private L2 through its streaming prefetcher, while a
    GEMM micro-kernel reads its packed panels from it in short bursts.
    """

    name: str
    capacity_bytes: float
    is_per_unit: bool
    num_units: int
    peak_bandwidth_bps: float
    access_latency_ns: float
    achievable_fraction: float = 1.0
    energy_per_byte_j: float = field(kw_only=True)
    label: str = field(default="", kw_only=True)
    shared_with_tenants: bool = field(default=False, kw_only=True)
    usable_capacity_bytes: float | None = field(default=None, kw_only=True)
    non_inclusive: bool = field(default=False, kw_only=True)
    product_fraction: float = field(default=1.0, kw_only=True)
    provenance: Mapping[str, Provenance] = field(factory=dict, kw_only=True)

    #: Numeric fields that must carry provenance.
    PROVENANCED = (
        "capacity_bytes",
        "peak_bandwidth_bps",
        "access_latency_ns",
        "achievable_fraction",
        "energy_per_byte_j",
    )

    def __attrs_post_init__(self) -> None:
        prov = dict(self.provenance)
        for name in (*self.PROVENANCED, "num_units", "usable_capacity_bytes", "product_fraction"):
            _set(self, name, _unwrap(getattr(self, name), name, prov))
        where = f"tier {self.name!r}: "
        _refuse_control(where + "label", self.label)
        _refuse_control_sources(where, prov)
        if self.name not in TIER_NAMES:
            raise SpecError(
                where + "name", f"tier name {self.name!r} is not one of {', '.join(TIER_NAMES)}"
            )
        _set(self, "capacity_bytes", _number(where + "capacity_bytes", self.capacity_bytes))
        _set(self, "num_units", _count(where + "num_units", self.num_units))
        if not isinstance(self.non_inclusive, bool):
            raise SpecError(
                where + "non_inclusive", f"must be true or false, got {_shown(self.non_inclusive)}"
            )
        if not isinstance(self.is_per_unit, bool):
            raise SpecError(
                where + "is_per_unit", f"must be true or false, got {_shown(self.is_per_unit)}"
            )
        _set(
            self,
            "peak_bandwidth_bps",
            _number(where + "peak_bandwidth_bps", self.peak_bandwidth_bps),
        )
        _set(
            self,
            "access_latency_ns",
            _number(where + "access_latency_ns", self.access_latency_ns, strict=False),
        )
        fraction = _number(where + "achievable_fraction", self.achievable_fraction)
        if fraction > 1.0:
            raise SpecError(
                where + "achievable_fraction", f"must be in (0, 1], got {_shown(fraction)}"
            )
        _set(self, "achievable_fraction", fraction)
        _set(
            self,
            "energy_per_byte_j",
            _number(where + "energy_per_byte_j", self.energy_per_byte_j, strict=False),
        )
        if self.usable_capacity_bytes is not None:
            usable = _number(where + "usable_capacity_bytes", self.usable_capacity_bytes)
            if usable > self.total_capacity_bytes * (1 + 1e-9):
                raise SpecError(
                    where + "usable_capacity_bytes",
                    f"{usable:g} exceeds the tier's total capacity {self.total_capacity_bytes:g}",
                )
            _set(self, "usable_capacity_bytes", usable)
        share = _number(where + "product_fraction", self.product_fraction)
        if share > MAX_PRODUCT_SHARE:
            raise SpecError(
                where + "product_fraction",
                f"must be in (0, {MAX_PRODUCT_SHARE:g}], got {_shown(share)}",
            )
        _set(self, "product_fraction", share)
        prov.setdefault("achievable_fraction", _DEFAULT_FRACTION)
        required = list(self.PROVENANCED)
        if self.usable_capacity_bytes is not None:
            required.append("usable_capacity_bytes")
        if share != 1.0:
            required.append("product_fraction")
        _require_provenance(where, required, prov)
        _set(self, "provenance", MappingProxyType(prov))

    @property
    def regime(self) -> str:
        """The regime this tier validates, e.g. ``l2_bound``."""
        return tier_regime(self.name)

    @property
    def total_capacity_bytes(self) -> float:
        """Capacity of the whole tier (all units together)."""
        return self.capacity_bytes * self.num_units if self.is_per_unit else self.capacity_bytes

    @property
    def effective_capacity_bytes(self) -> float:
        """Usable capacity: the calibrated one for a shared tier, else the total."""
        if self.usable_capacity_bytes is not None:
            return self.usable_capacity_bytes
        return self.total_capacity_bytes

    @property
    def effective_bandwidth_bps(self) -> float:
        """Achievable bandwidth: peak times the achievable fraction."""
        return self.peak_bandwidth_bps * self.achievable_fraction

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready description, provenance included."""
        return {
            "name": self.name,
            "label": self.label,
            "capacity_bytes": self.capacity_bytes,
            "is_per_unit": self.is_per_unit,
            "num_units": self.num_units,
            "total_capacity_bytes": self.total_capacity_bytes,
            "usable_capacity_bytes": self.usable_capacity_bytes,
            "shared_with_tenants": self.shared_with_tenants,
            "non_inclusive": self.non_inclusive,
            "peak_bandwidth_bps": self.peak_bandwidth_bps,
            "achievable_fraction": self.achievable_fraction,
            "effective_bandwidth_bps": self.effective_bandwidth_bps,
            "product_fraction": self.product_fraction,
            "access_latency_ns": self.access_latency_ns,
            "energy_per_byte_j": self.energy_per_byte_j,
            "provenance": {k: str(v) for k, v in self.provenance.items()},
        }


def _dtype_map(where: str, value: Any, prov: dict[str, Provenance]) -> Mapping[str, float]:
    if not isinstance(value, Mapping) or not value:
        raise SpecError(where, "must be a non-empty mapping of dtype to number")
    out: dict[str, float] = {}
    for dtype, raw in value.items():
        name = f"{where}.{dtype}"
        if dtype not in KNOWN_DTYPES:
            raise SpecError(name, f"unknown dtype {dtype!r}; known: {', '.join(KNOWN_DTYPES)}")
        out[dtype] = _number(name, _unwrap(raw, name, prov))
    return MappingProxyType(out)


#: The largest ``product_bandwidth_fraction``: a matrix product streams a tier
#: no faster than the tier's achievable rate (what an elementwise op reaches),
#: so the share never lifts a tier above its peak.
MAX_PRODUCT_SHARE = 1.0
#: The widest accumulator a spec may give a GEMM library's micro-kernel, in
#: lanes (AVX-512 and AMX hold 16 32-bit accumulators per register or tile
#: row; 64 leaves room for a wider unit, not for a typo of a byte count).
MAX_ACCUMULATOR_LANES = 64

#: The widest N at which a CPU GEMM library streams A unpacked: up to half an
#: AVX-512 fp32 micro-tile (16 of its 32 columns) MKL takes its skinny-N path,
#: and the host's products of N = 4, 8 and 16 read an A in main memory at
#: the memory's own rate; from N = 30 up they pay the packing of A.
PACK_A_MIN_COLUMNS = 16
#: glibc's largest dynamic mmap threshold (DEFAULT_MMAP_THRESHOLD_MAX, 32 MiB
#: on 64-bit): an allocation this large or larger is mapped afresh on every call.
FIRST_TOUCH_MIN_BYTES = 32 * 2**20
#: The page a TLB entry maps (x86's and Arm's base page): a column walk of a
#: B whose rows are this long or longer lands on a new page at every element.
PAGE_BYTES = 4096
#: The least share of a dtype's peak one compute unit may have (ops/s): a
#: 1 MHz microcontroller does more.
MIN_UNIT_OPS_PER_S = 1e6
#: The most compute units a target may have: past it no part exists, and the
#: predictions overflow.
MAX_UNITS = 10**9


def first_touch_threshold() -> Sourced:
    """:data:`FIRST_TOUCH_MIN_BYTES` with its provenance, as a spec's
    ``first_touch_min_bytes`` (a CPU running on glibc)."""
    return Sourced(
        float(FIRST_TOUCH_MIN_BYTES),
        Provenance(
            "estimated",
            "glibc's largest dynamic mmap threshold (DEFAULT_MMAP_THRESHOLD_MAX, 32 MiB on "
            "64-bit): larger allocations are mapped afresh on every call",
        ),
    )


def _per_dtype(
    where: str,
    value: Mapping[str, Any],
    peaks: Mapping[str, float],
    prov: dict[str, Provenance],
    strict: bool = True,
    most: float | None = None,
    least: float | None = None,
) -> Mapping[str, float]:
    """An optional per-dtype mapping: every dtype must have a peak, every value
    a number (above zero when ``strict``, else at least zero; a share with
    ``most`` in (0, most], or in [least, most] with ``least``, said as one
    range either side)."""
    out: dict[str, float] = {}
    for dtype, raw in dict(value).items():
        name = f"{where}.{dtype}"
        if dtype not in peaks:
            raise SpecError(
                name,
                f"dtype {dtype!r} has no peak_ops_per_s (the target's dtypes: "
                f"{', '.join(peaks) or 'none'})",
            )
        if most is None:
            out[dtype] = _number(name, _unwrap(raw, name, prov), strict=strict)
            continue
        share = _number(name, _unwrap(raw, name, prov), minimum=-math.inf, strict=False)
        if least is None and not 0 < share <= most:
            raise SpecError(name, f"must be in (0, {most:g}], got {_shown(share)}")
        if least is not None and not least <= share <= most:
            raise SpecError(name, f"must be in [{least:g}, {most:g}], got {_shown(share)}")
        out[dtype] = share
    return MappingProxyType(out)


def output_passes_phrase(passes: float) -> str:
    """How a GEMM library with ``passes`` of C (``TargetSpec.product_output_passes``)
    stores it: as if the product accumulated (two), at part of an accumulation's
    cost (between one and two), or nothing to say (one: stored whole)."""
    if passes >= 2:
        return "as if it accumulated"
    return "at part of an accumulation's cost" if passes > 1 else ""


@frozen(kw_only=True)
class TargetSpec:
    """One hardware configuration: compute, memory tiers, power, provenance.

    ``peak_ops_per_s`` and ``energy_per_op_j`` are per dtype (dense figures, one
    "op" being one FLOP or one integer operation); the dtypes of
    ``peak_ops_per_s`` are the dtypes the target supports;
    ``compute_fraction`` is the achievable fraction of each peak (1.0, flagged
    as uncalibrated, where not given). ``register_tile_bytes`` is the per-unit
    register footprint of an output tile (the tile of the innermost boundary,
    compute <-> L1); the model uses a per-architecture default when None.
    ``accumulator_lanes`` (per dtype, a CPU's only) is the width, in output
    columns, of one row of the accumulators of the dtype's GEMM-library
    micro-kernel: the kernel broadcasts each row of A against vectors of B's
    columns, so it pads C's N to a multiple of the lanes and takes any number
    of rows (oneDNN's bf16 and int8 kernels on AVX-512 or AMX: 16 lanes of
    32-bit accumulators; MKL's AVX2 sgemm: two registers of 8 fp32, 16).
    Where given, the compute of a product the library runs is that of
    ``M * ceil(N / lanes) * lanes`` outputs for an N of two or more (an N
    narrower than the lanes takes a whole vector, as a masked vector costs a
    whole one) and of ``M`` for an N of one (the library's GEMV) instead of
    the square register tile's padding of both M and N.
    ``tail_piece_vectors`` (per dtype, a dtype with ``accumulator_lanes``)
    says that the dtype's library covers the columns of N beyond its whole
    vectors in power-of-two pieces (8, 4, 2, 1 columns of 16 lanes), each a
    kernel of its own costing this many whole vectors (from 0.5: the largest
    piece, half the lanes, costs no less than its own columns; to 1). Where
    given, an N of two or more is computed as
    ``floor(N / lanes) + pieces * tail_piece_vectors`` vectors, ``pieces``
    the set bits of ``N mod lanes``, instead of ``ceil(N / lanes)``: the
    Zen 4's int8 products (oneDNN's s8 GEMM, ``torch._int_mm``) take 1.65
    vectors' time for N = 5, 2.3 for N = 7, 3.0 for N = 15, where 4, 8 and
    16 take one (never less than one vector in all).
    ``product_output_passes`` (per dtype, a CPU's GEMM library) is how many
    times C crosses each tier in a product that does not accumulate
    (``beta = 0``, as ``matmul``) where that library runs it through its
    GEMM kernel (M, K and N of two or more; an M or N of one is its GEMV, a
    K of one its rank-1 update, which store C whole): from 1 (unset: it
    stores C's lines whole, the model's rule) to 2 (it stores C no cheaper
    than a product that accumulates onto it, as ``linear`` does onto the
    bias broadcast into C: two passes in the model). A freshly mapped
    output and a product that accumulates keep their own passes (one and
    two). The AMD hosts' fp32 products (MKL's AVX2 sgemm) take two; on the Zen 4
    ``matmul`` of 2048 x 3 x 2048 takes what ``linear`` onto its bias
    takes, and ``torch.mm`` into one C (``beta = 0``) 1.4-1.7 times what
    ``addmm_`` into it takes (``beta = 1``;
    ``benchmarks/bench_output_passes.py``).
    ``first_touch_bps`` is the rate at which the OS hands out freshly mapped,
    zeroed pages: an output of at least ``first_touch_min_bytes`` allocated
    afresh on every call (glibc serves allocations of 32 MiB and more with a
    new mmap) costs ``output bytes / first_touch_bps`` on top of the kernel.
    ``vector_first_touch_bps`` is, per dtype, that rate for an op with no
    matrix product, where its kernel takes fresh pages at a rate of its own
    (PyTorch's bf16 binary kernels on a CPU fault each page in at a third
    to a half of the rate its fill, its unary kernels and its fp32 kernels do;
    unset: ``first_touch_bps``); it needs ``first_touch_bps``.
    ``vector_ops_per_s`` is, per dtype, the rate of an op with no matrix
    product (an elementwise add) where it differs from the dtype's peak: a
    CPU's bf16 peak is its AMX tiles', while a bf16 add runs on the vector
    units, converting each element to fp32 and back; its fp32 peak is the
    FMA units', while an fp32 add issues two loads and a store per vector, a
    loop slower than its L2 and L3 feed it (unset: the peak times
    ``compute_fraction``). ``product_bandwidth_fraction`` is, per dtype, the
    share of each tier's bandwidth a matrix product's library achieves (its
    packed panels and strided rows stream less well than an elementwise op,
    whose rate the tiers' ``achievable_fraction`` is); unset: 1.
    ``product_overlap`` is, per dtype, the share of the shorter of a matrix
    product's compute time and its memory time beyond the innermost tier
    that runs under the longer (in (0, 1]; unset: 1, the roofline's max): a
    GEMM library alternates packing, streaming its operands and its
    micro-kernel block by block, so part of the shorter adds to the latency,
    while the innermost tier (the L1) feeds the micro-kernel in its own
    pipeline.
    The software around the arithmetic: ``dispatch_overhead_s`` is the call
    cost of each dtype's GEMM library (matrix products only);
    ``accumulate_overhead_s`` (per dtype, one a library runs; unset: 0)
    what the call costs beyond that where the product accumulates onto C
    (beta = 1: linear onto the bias it broadcast; oneDNN's bf16 call with its
    sum post-op takes 3-4 us more than one that writes C on the Zen 4 and the
    Intel host: ``benchmarks/bench_linear_call.py``); and
    ``library_min_macs`` (per dtype; unset: 0) the size, in multiply-adds
    ``M*K*N``, at or below which the framework runs a product in its own
    kernel instead, dispatched at ``launch_overhead_s`` (PyTorch hands a bf16
    or fp16 product to oneDNN only above 16 x 16 x 16);
    ``kernel_overhead_s`` the cost of each further kernel of a multi-kernel op
    (None: a whole framework dispatch, as on a CPU); ``parallel_grain_ops``
    the work at or below which an op runs on one unit and ``fork_join_s`` what
    waking and joining the thread team costs above it; ``gemv_fork_join_s``
    (per dtype, a CPU's only; unset: ``fork_join_s``) what it costs a product
    on the dtype's GEMM library's level-2 path instead (one row of A or one
    column of B: MKL hands such an fp32 call to its sgemv, which wakes its
    threads its own way); ``pack_bps`` and
    ``pack_min_rows`` (per dtype, as each dtype's GEMM library packs its own
    way: MKL for fp32, oneDNN's reorders for bf16 and int8 on a CPU) the rate
    at which the library packs B on every call and from how many rows of A it
    does; ``in_place_max_rows`` (per dtype, a dtype with ``pack_bps``; unset:
    never) the most rows of A at which the library reads a transposed B (a
    linear's weight, K-contiguous) where it lies instead of packing it, once
    B outgrows what the caches keep (oneDNN's bf16 linear with up to 64 rows
    and a weight in main memory takes about the weight's memory time alone);
    ``pack_read_overlap`` (per dtype, a dtype with ``pack_bps``; a share in
    (0, 1]; unset: none) the share of its packing copy's read of a row-major B
    (a matmul's) through the caches that the library's kernel does in its own
    stream, of the part of B the caches keep; what main memory serves is read
    whatever the kernel does (MKL's fp32 on the Intel host: a matmul of a few
    rows of A and a B of 2-19 MB takes about one stream of B, its linear twin
    1.4-2.1 times as long);
    ``in_place_fraction`` (per dtype, a dtype with ``in_place_max_rows``;
    unset: the products' share) the share of each tier's bandwidth at which
    such a product streams the part of B the caches do not keep: its kernel
    reads the weight's rows as they lie, not packed panels;
    ``transposed_pack_min_rows`` (per dtype, a dtype with ``pack_bps``;
    unset: ``pack_min_rows``) from how many rows of A the library packs a
    transposed B (a linear's weight, K-contiguous), and
    ``transposed_pass_rows`` (per dtype, a dtype with
    ``transposed_pack_min_rows``) how many rows of A its unpacked kernel
    takes per pass over such a B below that: B is read once a pass (MKL's
    fp32 on the Intel host: a linear of 3 rows reads its weight once, of 4
    twice, of 7 or 8 three times, of 10 four times, one of 16 packs: the
    CPU plugin gives an Intel CPU with AVX-512 12 and 3,
    docs/model-fidelity.md, sessions 59 and 67);
    ``narrow_n_columns`` (per dtype, a dtype a CPU GEMM library runs) the
    most columns of N, from 2, for which the library runs a product of a
    row-major B (a matmul's) in a narrow kernel of its own rather than its
    lane micro-kernel, and ``transposed_narrow_n_columns`` the same for a
    transposed B (a linear's weight); ``narrow_n_fraction`` (per dtype, a
    dtype with either) the share of the compute rate such a product reaches
    (MKL's fp32 on AVX2: a matmul of 2 to 11 columns takes 1.8 to 3.8 times
    what 16 take, ``benchmarks/bench_narrow_n.py`` on the Zen 3 host: a chain
    of dependent multiply-adds, one a step of K per row of C, bound by their
    latency); unset: the lane kernel's padding alone; such a kernel computes
    every N as its most columns, but a linear's computes N in whole groups of
    ``transposed_narrow_n_group`` of the weight's rows where given (per
    dtype, 1 to its ``transposed_narrow_n_columns``: MKL's fp32 linear of 2
    to 15 columns on an AMD CPU takes dot products along K, four of the
    weight's rows a pass, its time going with N rounded up to 4), at
    ``transposed_narrow_n_fraction`` of the rate where given (per dtype, a
    dtype with ``transposed_narrow_n_columns``; unset: ``narrow_n_fraction``);
    ``gemv_fraction`` (per dtype, a dtype some GEMM library runs, a target
    of more than one memory tier; unset: the products' share) the share of
    each tier's bandwidth beyond the innermost at which the library's
    level-2 path streams its matrix: a GEMV (M or N of 1), and a product
    with fewer rows of A than ``pack_min_rows``, which it runs as one GEMV
    per row of A (B read once a row); it packs nothing and reads the
    matrix front to back, as a stream's prefetchers follow it, where a
    micro-kernel reads packed panels in short bursts (MKL's fp32 on the AMD
    hosts: calibrated at 0.73 and 0.50 of each tier's rate on the Zen 3 and
    the Zen 4, their packed products at 0.28 and 0.24); the innermost tier,
    which feeds the registers, keeps the products' share;
    ``pack_a_bps`` (per dtype; unset: no such cost) the rate at which it
    packs an A its last-level cache does not hold, serially with its compute,
    once N is above ``PACK_A_MIN_COLUMNS`` (main memory's rows reach the
    packing in short strided runs). A tier marked ``non_inclusive``
    holds lines the tier inside it does not, so their capacities add up.
    ``tiers`` are
    innermost first and must grow in capacity outward. ``ground_truth`` is
    ``measured`` for targets with silicon baselines, ``consistency_only`` for
    targets checked only by invariants.

    The framework's own product kernel (a product no GEMM library runs: one
    at or below ``library_min_macs``, or any product of a dtype listed in
    ``no_gemm_library``, as PyTorch's bf16 on an x86 CPU without AVX-512)
    forms one output at a time: ``reference_output_s`` and
    ``reference_mac_s`` (per dtype) are its time per output element and per
    multiply-add when it walks down a column of B stored ``K x N``
    (``matmul``), ``reference_dot_output_s`` and ``reference_dot_mac_s``
    when each output is a dot of two contiguous rows (B stored ``N x K``,
    ``linear``: ``OpSpec.b_transposed``); the four come together or not at
    all (unset: the kernel is modelled at the dtype's compute rate, as a
    library's). A column walk that crosses a page per element and spans
    more than the TLB's reach (``tlb_reach_bytes``, the second-level
    TLB's entries times :data:`PAGE_BYTES`) misses the TLB on each element
    it crosses a page at, at ``page_walk_s`` each (the two together or not
    at all).

    What the cross-target consistency checks compare a part with, written by
    its plugin: ``family_rank`` is the part's place in its ``family``, slowest
    first (a ranked part must not be slower than the ranked part just below it,
    when both run in power modes of the same class); ``power_mode_class`` says
    which of the family's power modes compare (each Orin part's top mode, say;
    None: the mode itself); ``power_class`` names the process node and power
    class it is compared within for energy per operation across architectures
    (systolic and domain-flow below GPU below CPU).
    """

    key: str
    name: str
    family: str
    architecture: str
    compute_units: int
    compute_unit_name: str = "core"
    clock_hz: float
    peak_ops_per_s: Mapping[str, float]
    launch_overhead_s: float
    energy_per_op_j: Mapping[str, float]
    idle_power_w: float
    tdp_w: float
    tiers: tuple[MemoryTier, ...] = field(converter=tuple)
    ground_truth: str
    power_mode: str | None = None
    power_mode_class: str | None = None
    family_rank: int | None = None
    power_class: str | None = None
    process_node_nm: float | None = None
    compute_fraction: Mapping[str, float] = field(factory=dict)
    dispatch_overhead_s: Mapping[str, float] = field(factory=dict)
    accumulate_overhead_s: Mapping[str, float] = field(factory=dict)
    vector_ops_per_s: Mapping[str, float] = field(factory=dict)
    product_bandwidth_fraction: Mapping[str, float] = field(factory=dict)
    product_overlap: Mapping[str, float] = field(factory=dict)
    pack_a_bps: Mapping[str, float] = field(factory=dict)
    vector_first_touch_bps: Mapping[str, float] = field(factory=dict)
    library_min_macs: Mapping[str, float] = field(factory=dict)
    no_gemm_library: tuple[str, ...] = field(factory=tuple, converter=tuple)
    reference_output_s: Mapping[str, float] = field(factory=dict)
    reference_mac_s: Mapping[str, float] = field(factory=dict)
    reference_dot_output_s: Mapping[str, float] = field(factory=dict)
    reference_dot_mac_s: Mapping[str, float] = field(factory=dict)
    tlb_reach_bytes: float | None = None
    page_walk_s: float | None = None
    register_tile_bytes: float | None = None
    accumulator_lanes: Mapping[str, float] = field(factory=dict)
    tail_piece_vectors: Mapping[str, float] = field(factory=dict)
    product_output_passes: Mapping[str, float] = field(factory=dict)
    first_touch_bps: float | None = None
    first_touch_min_bytes: float | None = None
    fork_join_s: float | None = None
    gemv_fork_join_s: Mapping[str, float] = field(factory=dict)
    kernel_overhead_s: float | None = None
    #: per dtype (a number given for either applies to every dtype)
    pack_bps: Mapping[str, float] = field(factory=dict)
    pack_min_rows: Mapping[str, float] = field(factory=dict)
    in_place_max_rows: Mapping[str, float] = field(factory=dict)
    in_place_fraction: Mapping[str, float] = field(factory=dict)
    pack_read_overlap: Mapping[str, float] = field(factory=dict)
    transposed_pack_min_rows: Mapping[str, float] = field(factory=dict)
    transposed_pass_rows: Mapping[str, float] = field(factory=dict)
    narrow_n_columns: Mapping[str, float] = field(factory=dict)
    transposed_narrow_n_columns: Mapping[str, float] = field(factory=dict)
    narrow_n_fraction: Mapping[str, float] = field(factory=dict)
    transposed_narrow_n_group: Mapping[str, float] = field(factory=dict)
    transposed_narrow_n_fraction: Mapping[str, float] = field(factory=dict)
    gemv_fraction: Mapping[str, float] = field(factory=dict)
    parallel_grain_ops: float | None = None
    detected: bool = False
    description: str = ""
    fingerprint: Mapping[str, str] = field(factory=dict)
    provenance: Mapping[str, Provenance] = field(factory=dict)

    #: Scalar numeric fields that must carry provenance.
    PROVENANCED = ("compute_units", "clock_hz", "launch_overhead_s", "idle_power_w", "tdp_w")
    #: Optional numbers: provenance required when given.
    OPTIONAL_NUMBERS = (
        "process_node_nm",
        "register_tile_bytes",
        "first_touch_bps",
        "first_touch_min_bytes",
        "fork_join_s",
        "parallel_grain_ops",
        "kernel_overhead_s",
        "tlb_reach_bytes",
        "page_walk_s",
    )
    #: Per-dtype times of the framework's own product kernel (given together).
    REFERENCE = (
        "reference_output_s",
        "reference_mac_s",
        "reference_dot_output_s",
        "reference_dot_mac_s",
    )
    #: Per-dtype packing of a CPU GEMM library (each dtype's library packs its own way).
    PACKING = ("pack_bps", "pack_min_rows")

    @staticmethod
    def valid_key(key: object) -> bool:
        """Whether ``key`` is a target key: ``[a-z][a-z0-9_]*``, nothing else."""
        return isinstance(key, str) and _KEY_RE.fullmatch(key) is not None

    def __attrs_post_init__(self) -> None:
        prov = dict(self.provenance)
        for name in (*self.PROVENANCED, *self.OPTIONAL_NUMBERS):
            _set(self, name, _unwrap(getattr(self, name), name, prov))
        if not isinstance(self.key, str) or not _KEY_RE.fullmatch(self.key):
            raise SpecError("key", f"{self.key!r} must match [a-z][a-z0-9_]*")
        _refuse_control("description", self.description)
        _refuse_control("compute_unit_name", self.compute_unit_name)
        _refuse_control_sources("", prov)
        for name in ("name", "family"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name).strip():
                raise SpecError(name, "must be a non-empty string")
            bad = control_character(getattr(self, name))
            if bad is not None:  # printed in tables and one-line errors
                raise SpecError(
                    name,
                    f"{ascii(getattr(self, name))} holds a control character ({bad}): give "
                    "one line of text",
                )
        if self.architecture not in ARCHITECTURES:
            raise SpecError(
                "architecture", f"{self.architecture!r} is not one of {', '.join(ARCHITECTURES)}"
            )
        if self.family_rank is not None:
            _set(self, "family_rank", _count("family_rank", self.family_rank))
        for name in ("power_mode_class", "power_class"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, str) or not value):
                raise SpecError(name, f"must be a non-empty string or null, got {_shown(value)}")
        if self.ground_truth not in GROUND_TRUTH_KINDS:
            raise SpecError(
                "ground_truth",
                f"{self.ground_truth!r} is not one of {', '.join(GROUND_TRUTH_KINDS)}",
            )
        _set(self, "compute_units", _count("compute_units", self.compute_units))
        _set(self, "clock_hz", _number("clock_hz", self.clock_hz))
        _set(
            self,
            "launch_overhead_s",
            _number("launch_overhead_s", self.launch_overhead_s, strict=False),
        )
        _set(self, "idle_power_w", _number("idle_power_w", self.idle_power_w, strict=False))
        _set(self, "tdp_w", _number("tdp_w", self.tdp_w))
        if self.idle_power_w > self.tdp_w:
            raise SpecError(
                "idle_power_w", f"{self.idle_power_w:g} W exceeds tdp_w {self.tdp_w:g} W"
            )
        if self.process_node_nm is not None:
            _set(self, "process_node_nm", _number("process_node_nm", self.process_node_nm))
        for name in self.OPTIONAL_NUMBERS:
            if getattr(self, name) is not None:
                _set(self, name, _number(name, getattr(self, name)))
        if (self.first_touch_bps is None) != (self.first_touch_min_bytes is None):
            raise SpecError(
                "first_touch_bps",
                "give first_touch_bps and first_touch_min_bytes together (or neither)",
            )
        peaks = _dtype_map("peak_ops_per_s", self.peak_ops_per_s, prov)
        energies = _dtype_map("energy_per_op_j", self.energy_per_op_j, prov)
        for dtype in peaks:
            if dtype not in energies:
                raise SpecError(f"energy_per_op_j.{dtype}", "missing (the dtype has a peak)")
        for dtype in energies:
            if dtype not in peaks:
                raise SpecError(
                    f"peak_ops_per_s.{dtype}", "missing (the dtype has an energy per op)"
                )
        _set(self, "peak_ops_per_s", peaks)
        self._check_unit_peaks(peaks)
        _set(self, "energy_per_op_j", energies)
        _set(self, "compute_fraction", self._compute_fractions(peaks, prov))
        for name, strict in (
            ("dispatch_overhead_s", False),
            ("accumulate_overhead_s", False),
            ("gemv_fork_join_s", True),
            ("vector_ops_per_s", True),
            ("pack_a_bps", True),
            ("vector_first_touch_bps", True),
            ("library_min_macs", False),
            ("accumulator_lanes", True),
            *((name, True) for name in self.REFERENCE),
        ):
            _set(self, name, _per_dtype(name, getattr(self, name), peaks, prov, strict))
        self._check_reference(peaks)
        self._check_gemv_team()
        self._check_lanes()
        if self.vector_first_touch_bps and self.first_touch_bps is None:
            raise SpecError(
                "vector_first_touch_bps",
                "needs first_touch_bps (the rate the products take fresh pages at, given "
                "with first_touch_min_bytes)",
            )
        # a piece of N's tail costs at least its own columns (the largest, half
        # the lanes, half a vector) and at most a whole vector
        _set(
            self,
            "tail_piece_vectors",
            _per_dtype(
                "tail_piece_vectors", self.tail_piece_vectors, peaks, prov, most=1.0, least=0.5
            ),
        )
        # C crosses once (stored whole) to twice (stored as if the product accumulated)
        _set(
            self,
            "product_output_passes",
            _per_dtype(
                "product_output_passes",
                self.product_output_passes,
                peaks,
                prov,
                most=2.0,
                least=1.0,
            ),
        )
        self._check_output_passes()
        for name, most in (
            ("product_bandwidth_fraction", MAX_PRODUCT_SHARE),
            ("product_overlap", 1.0),
            ("in_place_fraction", MAX_PRODUCT_SHARE),
            ("pack_read_overlap", 1.0),
            ("gemv_fraction", MAX_PRODUCT_SHARE),
            ("narrow_n_fraction", MAX_PRODUCT_SHARE),
            ("transposed_narrow_n_fraction", MAX_PRODUCT_SHARE),
        ):
            _set(self, name, _per_dtype(name, getattr(self, name), peaks, prov, most=most))
        packing = {name: self._packing(name, peaks, prov) for name in self.PACKING}
        rates, counts = set(packing["pack_bps"]), set(packing["pack_min_rows"])
        if rates != counts:
            dtype = sorted(rates ^ counts)[0]
            has, lacks = ("pack_bps", "pack_min_rows")[:: 1 if dtype in rates else -1]
            if dtype in self.no_gemm_library:  # the cause, not the missing twin
                raise SpecError(
                    f"{has}.{dtype}",
                    f"{dtype} runs in no GEMM library (no_gemm_library), so nothing packs its "
                    "B: drop it",
                )
            raise SpecError(
                f"{has}.{dtype}",
                f"{lacks} gives no {dtype}: give pack_bps and pack_min_rows for the same dtypes "
                "(or neither)",
            )
        for dtype, rows in packing["pack_min_rows"].items():
            if rows != int(rows) or rows > MAX_DIM:
                raise SpecError(
                    f"pack_min_rows.{dtype}",
                    f"must be a whole number of rows of A from 1 to {MAX_DIM:,} (a shape's "
                    f"largest dimension), got {_shown(rows)}",
                )
        for name, values in packing.items():
            _set(self, name, values)
        _set(
            self,
            "in_place_max_rows",
            _per_dtype("in_place_max_rows", self.in_place_max_rows, peaks, prov),
        )
        for name in (
            "transposed_pack_min_rows",
            "transposed_pass_rows",
            "narrow_n_columns",
            "transposed_narrow_n_columns",
            "transposed_narrow_n_group",
        ):
            _set(self, name, _per_dtype(name, getattr(self, name), peaks, prov))
        self._check_in_place()
        self._check_transposed()
        self._check_narrow()
        self._check_tiers()
        self._check_overlap()
        self._check_gemv_fraction()
        self._check_library_constants()
        required = [
            *self.PROVENANCED,
            *(f"peak_ops_per_s.{d}" for d in peaks),
            *(f"energy_per_op_j.{d}" for d in energies),
            *(f"dispatch_overhead_s.{d}" for d in self.dispatch_overhead_s),
            *(f"accumulate_overhead_s.{d}" for d in self.accumulate_overhead_s),
            *(f"gemv_fork_join_s.{d}" for d in self.gemv_fork_join_s),
            *(f"vector_ops_per_s.{d}" for d in self.vector_ops_per_s),
            *(f"product_bandwidth_fraction.{d}" for d in self.product_bandwidth_fraction),
            *(f"product_overlap.{d}" for d in self.product_overlap),
            *(f"pack_a_bps.{d}" for d in self.pack_a_bps),
            *(f"vector_first_touch_bps.{d}" for d in self.vector_first_touch_bps),
            *(f"library_min_macs.{d}" for d in self.library_min_macs),
            *(f"accumulator_lanes.{d}" for d in self.accumulator_lanes),
            *(f"tail_piece_vectors.{d}" for d in self.tail_piece_vectors),
            *(f"product_output_passes.{d}" for d in self.product_output_passes),
            *(f"{name}.{d}" for name in self.REFERENCE for d in getattr(self, name)),
            *(f"{name}.{d}" for name in self.PACKING for d in getattr(self, name)),
            *(f"in_place_max_rows.{d}" for d in self.in_place_max_rows),
            *(f"in_place_fraction.{d}" for d in self.in_place_fraction),
            *(f"pack_read_overlap.{d}" for d in self.pack_read_overlap),
            *(f"transposed_pack_min_rows.{d}" for d in self.transposed_pack_min_rows),
            *(f"transposed_pass_rows.{d}" for d in self.transposed_pass_rows),
            *(f"narrow_n_columns.{d}" for d in self.narrow_n_columns),
            *(f"transposed_narrow_n_columns.{d}" for d in self.transposed_narrow_n_columns),
            *(f"narrow_n_fraction.{d}" for d in self.narrow_n_fraction),
            *(f"transposed_narrow_n_group.{d}" for d in self.transposed_narrow_n_group),
            *(f"transposed_narrow_n_fraction.{d}" for d in self.transposed_narrow_n_fraction),
            *(f"gemv_fraction.{d}" for d in self.gemv_fraction),
        ]
        for optional in self.OPTIONAL_NUMBERS:
            if getattr(self, optional) is not None:
                required.append(optional)
        _require_provenance("", required, prov)
        _set(self, "provenance", MappingProxyType(prov))
        _set(self, "fingerprint", MappingProxyType(dict(self.fingerprint)))

    def _check_unit_peaks(self, peaks: Mapping[str, float]) -> None:
        """At most :data:`MAX_UNITS` compute units (past it no part exists),
        and each unit's share of every dtype's peak at least
        :data:`MIN_UNIT_OPS_PER_S`: a smaller share of a peak that is not
        itself that small is a ``compute_units`` in the wrong unit (a count
        of lanes or transistors), and the checks that divide the peak by it
        would blame another field. A peak too small by itself is left to the
        rate checks of a target file, which name the peak."""
        units = self.compute_units
        if units > MAX_UNITS:
            raise SpecError(
                "compute_units", f"{units:,} is above {MAX_UNITS:.0e} (a billion units)"
            )
        for dtype, peak in peaks.items():
            share = peak / units
            if share < MIN_UNIT_OPS_PER_S <= peak:
                raise SpecError(
                    "compute_units",
                    f"{units:,} {self.compute_unit_name}s share the {dtype} peak of "
                    f"{peak:.6g} ops/s: {share:.6g} ops/s each, below "
                    f"{MIN_UNIT_OPS_PER_S:.0e} (a 1 MHz part does more; compute_units counts "
                    "the cores, SMs or tiles that run in parallel)",
                )

    def _check_reference(self, peaks: Mapping[str, float]) -> None:
        """The reference kernel's four per-dtype times come for the same
        dtypes; ``tlb_reach_bytes`` and ``page_walk_s`` together; every dtype
        of ``no_gemm_library`` has a peak, once."""
        given = {name: set(getattr(self, name)) for name in self.REFERENCE}
        first = self.REFERENCE[0]
        for name in self.REFERENCE[1:]:
            if given[name] != given[first]:
                raise SpecError(
                    name,
                    f"give {', '.join(self.REFERENCE)} for the same dtypes (or none): "
                    f"{name} has {', '.join(sorted(given[name])) or 'none'}, {first} "
                    f"{', '.join(sorted(given[first])) or 'none'}",
                )
        if (self.tlb_reach_bytes is None) != (self.page_walk_s is None):
            raise SpecError(
                "tlb_reach_bytes", "give tlb_reach_bytes and page_walk_s together (or neither)"
            )
        if self.tlb_reach_bytes is not None:
            if not given[first]:
                raise SpecError(
                    "tlb_reach_bytes",
                    "the TLB's reach times only the framework's own product kernel: give "
                    f"its times ({', '.join(self.REFERENCE)}) too, or neither",
                )
            if self.tlb_reach_bytes < PAGE_BYTES:
                raise SpecError(
                    "tlb_reach_bytes",
                    f"{self.tlb_reach_bytes:.6g} B is less than one {PAGE_BYTES} B page "
                    "(a TLB maps whole pages: its reach is its entries x the page)",
                )
        for name in ("reference_mac_s", "reference_dot_mac_s"):
            for dtype, seconds in getattr(self, name).items():
                least = self.fastest_mac_s(dtype, peaks)
                if seconds < least:
                    raise SpecError(
                        f"{name}.{dtype}",
                        f"{seconds:.6g} s a multiply-add is faster than the {dtype} peak "
                        f"allows one {self.compute_unit_name} ({least:.6g} s: 2 ops at "
                        "peak_ops_per_s / compute_units; the kernel runs on one)",
                    )
        seen: set[str] = set()
        for i, dtype in enumerate(self.no_gemm_library):
            if not isinstance(dtype, str) or dtype not in peaks:
                raise SpecError(
                    f"no_gemm_library[{i}]", f"dtype {_shown(dtype)} has no peak_ops_per_s"
                )
            if dtype in seen:
                raise SpecError(f"no_gemm_library[{i}]", f"dtype {dtype!r} is listed twice")
            seen.add(dtype)

    def _library_runs(self, name: str, dtype: str, what: str) -> None:
        """Refuse ``name``, a GEMM library's constant, for a dtype in
        ``no_gemm_library`` ("no library ``what``")."""
        if dtype in self.no_gemm_library:
            raise SpecError(name, f"{dtype} is in no_gemm_library: no library {what}")

    def _check_library_constants(self) -> None:
        """A GEMM library's call cost, its packing of A and of B and the
        size it takes a product from are its own: refused for a dtype no
        library runs (``no_gemm_library``), where they would change nothing."""
        for name, what in (
            ("dispatch_overhead_s", "dispatches its products"),
            ("accumulate_overhead_s", "dispatches its products"),
            ("pack_bps", "packs its B"),
            ("pack_min_rows", "packs its B"),
            ("pack_a_bps", "packs its A"),
            ("library_min_macs", "takes its products"),
        ):
            for dtype in getattr(self, name):
                self._library_runs(f"{name}.{dtype}", dtype, what)

    def _cpu_library(self, name: str, dtype: str, elsewhere: str, what: str) -> None:
        """Refuse ``name``, a CPU GEMM library's constant, on another
        architecture ("a <architecture> target's library ``elsewhere``") and
        for a dtype no library runs (:meth:`_library_runs`)."""
        if self.architecture != "cpu":
            raise SpecError(name, f"a {self.architecture} target's library {elsewhere}")
        self._library_runs(name, dtype, what)

    def _check_overlap(self) -> None:
        """A product's overlap is a GEMM library's, for a dtype some library
        runs (not one of ``no_gemm_library``), and it hides only time beyond
        the innermost tier: a target of one tier has none to hide."""
        for dtype in self.product_overlap:
            self._library_runs(f"product_overlap.{dtype}", dtype, "runs its products")
        if self.product_overlap and len(self.tiers) < 2:
            raise SpecError(
                f"product_overlap.{next(iter(self.product_overlap))}",
                "a target of one memory tier has no time beyond its innermost tier for a "
                "library to overlap",
            )

    def _check_gemv_fraction(self) -> None:
        """A GEMV's own share of the tiers beyond the innermost is a GEMM
        library's level-2 path's, which packs nothing: for a dtype some library
        runs (not one of ``no_gemm_library``) and, where it packs B, from more
        than one row of A (``pack_min_rows``; a library that packs for one row
        packs its GEMVs too), on a target with a tier beyond the innermost."""
        for dtype in self.gemv_fraction:
            self._library_runs(f"gemv_fraction.{dtype}", dtype, "runs its products")
            least = self.pack_min_rows.get(dtype)
            if least is not None and least <= 1:
                raise SpecError(
                    f"gemv_fraction.{dtype}",
                    f"{dtype}'s library packs B from {_shown(least)} row of A "
                    f"(pack_min_rows.{dtype}): it packs a GEMV's B too, so its GEMVs stream "
                    "at the products' share, not a level-2 path's own",
                )
        if self.gemv_fraction and len(self.tiers) < 2:
            raise SpecError(
                f"gemv_fraction.{next(iter(self.gemv_fraction))}",
                "a target of one memory tier has no tier beyond its innermost for a GEMV "
                "to stream from",
            )

    def _check_gemv_team(self) -> None:
        """A GEMV's team cost replaces a CPU team's: it needs ``fork_join_s``,
        the ``cpu`` architecture and more than one unit, and a dtype some GEMM
        library runs (not one of ``no_gemm_library``)."""
        if not self.gemv_fork_join_s:
            return
        for dtype in self.gemv_fork_join_s:
            self._library_runs(f"gemv_fork_join_s.{dtype}", dtype, "runs its GEMVs")
        first = f"gemv_fork_join_s.{next(iter(self.gemv_fork_join_s))}"
        if self.compute_units == 1:
            raise SpecError(
                first, "a one-unit target has no thread team: a GEMV's team cost needs two or more"
            )
        if self.architecture != "cpu":
            raise SpecError(
                first,
                f"a {self.architecture} target has no CPU thread team: a GEMV's team cost "
                "is a CPU GEMM library's",
            )
        if self.fork_join_s is None:
            raise SpecError(
                first,
                "needs fork_join_s (a GEMV's team cost replaces the team's, which the "
                "target must have)",
            )

    def _check_lanes(self) -> None:
        """A GEMM library's accumulator lanes: a CPU's micro-kernel, a whole
        number of lanes (at most :data:`MAX_ACCUMULATOR_LANES`), for a dtype
        some GEMM library runs (not one of ``no_gemm_library``)."""
        for dtype, lanes in self.accumulator_lanes.items():
            name = f"accumulator_lanes.{dtype}"
            self._cpu_library(
                name,
                dtype,
                "picks its own tiles: accumulator lanes are a CPU GEMM library's micro-kernel",
                "kernel runs it",
            )
            if lanes != int(lanes) or lanes > MAX_ACCUMULATOR_LANES:
                raise SpecError(
                    name,
                    f"must be a whole number of lanes from 1 to {MAX_ACCUMULATOR_LANES}, "
                    f"got {_shown(lanes)}",
                )
        for dtype in self.tail_piece_vectors:
            name = f"tail_piece_vectors.{dtype}"
            self._cpu_library(
                name,
                dtype,
                "picks its own tiles: the pieces of N's tail are a CPU GEMM library's micro-kernel",
                "kernel runs it",
            )
            if dtype not in self.accumulator_lanes:
                raise SpecError(
                    name,
                    f"needs accumulator_lanes.{dtype} (the pieces are of N's remainder "
                    "below the micro-kernel's lanes)",
                )

    def _check_output_passes(self) -> None:
        """The passes of C a GEMM library makes: a CPU's (a write-allocate
        cache's), for a dtype some GEMM library runs."""
        for dtype in self.product_output_passes:
            self._cpu_library(
                f"product_output_passes.{dtype}",
                dtype,
                "writes C without reading it: a library storing C as if it accumulated is a "
                "CPU's (write-allocate caches)",
                "kernel writes C",
            )

    def _check_in_place(self) -> None:
        """Reading B in place skips a packing a CPU GEMM library does: only for
        a dtype some library runs (not one of ``no_gemm_library``) and packs
        B for (``pack_bps``), from a whole number of rows at least its
        ``pack_min_rows`` (``transposed_pack_min_rows`` where given: below it
        the library reads such a B unpacked), on a target with caches for B to
        outgrow (more
        than one memory tier); ``in_place_fraction`` only for a dtype that
        reads B in place. ``pack_read_overlap`` likewise for a dtype whose
        library packs B (``pack_bps``), on a target with caches to hold B."""
        for dtype in self.pack_read_overlap:
            name = f"pack_read_overlap.{dtype}"
            self._cpu_library(name, dtype, "does not pack B on the call", "packs its B")
            if dtype not in self.pack_bps:
                raise SpecError(
                    name, f"{dtype} has no pack_bps: only a library that packs B reads it to pack"
                )
            if len(self.tiers) < 2:
                raise SpecError(
                    name, "a target of one memory tier has no caches to hold B while it packs"
                )
        for dtype, rows in self.in_place_max_rows.items():
            name = f"in_place_max_rows.{dtype}"
            self._cpu_library(
                name,
                dtype,
                "does not pack B on the call: reading it in place instead is a CPU GEMM library's",
                "packs its B",
            )
            if len(self.tiers) < 2:
                raise SpecError(
                    name,
                    "a target of one memory tier has no caches for B to outgrow",
                )
            if dtype not in self.pack_bps:
                raise SpecError(
                    name,
                    f"{dtype} has no pack_bps: only a library that packs B can read it in place "
                    "instead",
                )
            least = self.packs_from(dtype, True)  # below it the library reads B unpacked
            which = (
                "transposed_pack_min_rows"
                if dtype in self.transposed_pack_min_rows
                else "pack_min_rows"
            )
            if rows != int(rows) or not least <= rows <= MAX_DIM:
                raise SpecError(
                    name,
                    f"must be a whole number of rows of A from {which}.{dtype} "
                    f"({_shown(least)}) to {MAX_DIM:,} (a shape's largest dimension), "
                    f"got {_shown(rows)}",
                )
        for dtype in self.in_place_fraction:
            if dtype not in self.in_place_max_rows:
                raise SpecError(
                    f"in_place_fraction.{dtype}",
                    f"{dtype} has no in_place_max_rows: the share is that of the products "
                    "that read B in place",
                )

    def _check_transposed(self) -> None:
        """A transposed B's own packing threshold is a CPU GEMM library's that
        packs B (``pack_bps``) from more than one row (``pack_min_rows``; a
        library that packs from one row, as oneDNN's bf16 and int8, has no
        unpacked kernel): a whole number of rows of A from 2 to a shape's
        largest dimension (``MAX_DIM``); its rows per pass a whole number from
        1 up to the rows it runs unpacked, for a dtype with such a threshold
        and without a GEMV per row of A (``gemv_fraction``, which reads B once
        a row already)."""
        for dtype, rows in self.transposed_pack_min_rows.items():
            name = f"transposed_pack_min_rows.{dtype}"
            self._cpu_library(
                name,
                dtype,
                "does not pack B on the call: a transposed B's own threshold is a CPU GEMM "
                "library's",
                "packs its B",
            )
            if dtype not in self.pack_bps:
                raise SpecError(
                    name, f"{dtype} has no pack_bps: only a library that packs B has a threshold"
                )
            least = self.pack_min_rows[dtype]
            if least <= 1:
                raise SpecError(
                    name,
                    f"{dtype}'s library packs B from {_shown(least)} row of A "
                    f"(pack_min_rows.{dtype}): it has no unpacked kernel to read a transposed "
                    "B with",
                )
            if rows != int(rows) or not 2 <= rows <= MAX_DIM:
                raise SpecError(
                    name,
                    f"must be a whole number of rows of A from 2 to {MAX_DIM:,} (a shape's "
                    f"largest dimension), got {_shown(rows)}",
                )
        for dtype, rows in self.transposed_pass_rows.items():
            name = f"transposed_pass_rows.{dtype}"
            least = self.transposed_pack_min_rows.get(dtype)
            if least is None:
                raise SpecError(
                    name,
                    f"{dtype} has no transposed_pack_min_rows: the passes are those of the "
                    "rows it runs unpacked",
                )
            if dtype in self.gemv_fraction:
                raise SpecError(
                    name,
                    f"{dtype} has a gemv_fraction: its level-2 path runs a GEMV per row of A "
                    "(one row a pass)",
                )
            if rows != int(rows) or not 1 <= rows < least:
                raise SpecError(
                    name,
                    f"must be a whole number of rows of A from 1 to below "
                    f"transposed_pack_min_rows.{dtype} ({_shown(least)}), got {_shown(rows)}",
                )

    def _check_narrow(self) -> None:
        """A narrow kernel is a CPU GEMM library's: its columns a whole
        number from 2 (an N of one is the library's GEMV) to the dtype's
        ``accumulator_lanes`` (or :data:`MAX_ACCUMULATOR_LANES` where it has
        none), for a dtype some library runs; a linear's group of the
        weight's rows (1 to its columns) and its own share only beside its
        columns; ``narrow_n_fraction`` given exactly for the dtypes with a
        matmul's kernel or a linear's without a share of its own."""
        for name in ("narrow_n_columns", "transposed_narrow_n_columns"):
            for dtype, columns in getattr(self, name).items():
                where = f"{name}.{dtype}"
                self._cpu_library(
                    where,
                    dtype,
                    "picks its kernels otherwise: a narrow kernel is a CPU GEMM library's",
                    "runs its products",
                )
                most = self.accumulator_lanes.get(dtype, MAX_ACCUMULATOR_LANES)
                widest = (
                    f"its accumulator_lanes.{dtype}"
                    if dtype in self.accumulator_lanes
                    else "the widest accumulator a spec may give"
                )
                if columns != int(columns) or not 2 <= columns <= most:
                    raise SpecError(
                        where,
                        f"must be a whole number of columns of N from 2 (an N of 1 is a GEMV) "
                        f"to {_shown(most)} ({widest}: a narrow kernel runs an N no wider "
                        f"than the lane kernel's), got {_shown(columns)}",
                    )
        for name in ("transposed_narrow_n_group", "transposed_narrow_n_fraction"):
            for dtype in getattr(self, name):  # the linear's own kernel: it needs one
                if dtype not in self.transposed_narrow_n_columns:
                    raise SpecError(
                        f"{name}.{dtype}",
                        f"{dtype} has no transposed_narrow_n_columns: no linear runs in a "
                        "narrow kernel for it to describe",
                    )
        for dtype, group in self.transposed_narrow_n_group.items():
            most = self.transposed_narrow_n_columns[dtype]
            if group != int(group) or not 1 <= group <= most:
                raise SpecError(
                    f"transposed_narrow_n_group.{dtype}",
                    f"must be a whole number of the weight's rows from 1 to "
                    f"transposed_narrow_n_columns.{dtype} ({_shown(most)}), got {_shown(group)}",
                )
        own = set(self.transposed_narrow_n_fraction)
        narrow = set(self.narrow_n_columns) | (set(self.transposed_narrow_n_columns) - own)
        unused = sorted(set(self.narrow_n_fraction) - narrow)
        if unused:
            raise SpecError(
                f"narrow_n_fraction.{unused[0]}",
                f"{unused[0]} has no narrow_n_columns, nor transposed_narrow_n_columns "
                "without a transposed_narrow_n_fraction of its own: no product runs in a "
                "narrow kernel to take that share",
            )
        unshared = sorted(narrow - set(self.narrow_n_fraction))
        if unshared:
            dtype = unshared[0]
            which = (
                "narrow_n_columns"
                if dtype in self.narrow_n_columns
                else "transposed_narrow_n_columns"
            )
            raise SpecError(
                f"{which}.{dtype}",
                f"give narrow_n_fraction.{dtype} too: the share of the compute rate its "
                "narrow kernel reaches",
            )

    def narrow_n_share(self, dtype: str, transposed: bool) -> float | None:
        """The share of the compute rate the dtype's narrow kernel for this
        layout of B reaches: a linear's own (``transposed_narrow_n_fraction``)
        where given, else ``narrow_n_fraction``; None where it has none."""
        if transposed and dtype in self.transposed_narrow_n_fraction:
            return self.transposed_narrow_n_fraction[dtype]
        return self.narrow_n_fraction.get(dtype)

    def narrow_n_max(self, dtype: str, transposed: bool) -> float | None:
        """The most columns of N the dtype's library runs a product of this
        layout of B (``transposed``: a linear's weight) in its narrow kernel
        for (``narrow_n_columns`` or ``transposed_narrow_n_columns``); None
        where it has none."""
        columns = self.transposed_narrow_n_columns if transposed else self.narrow_n_columns
        return columns.get(dtype)

    def fastest_mac_s(self, dtype: str, peaks: Mapping[str, float] | None = None) -> float:
        """The least time a multiply-add of ``dtype`` takes on one compute
        unit at the dtype's peak (2 ops): the floor of the framework
        kernel's ``reference_mac_s`` and ``reference_dot_mac_s``."""
        peak = (self.peak_ops_per_s if peaks is None else peaks)[dtype]
        return 2.0 * self.compute_units / peak

    def runs_reference(self, dtype: str) -> bool:
        """Whether the spec times the framework's own product kernel at
        ``dtype`` (its ``reference_*`` times are given for it)."""
        return dtype in self.reference_mac_s

    def _packing(
        self, name: str, peaks: Mapping[str, float], prov: dict[str, Provenance]
    ) -> Mapping[str, float]:
        """``pack_bps`` or ``pack_min_rows`` per dtype: a mapping of dtype to
        number, or one number (with the provenance filed under ``name``) for
        every dtype of the spec some GEMM library runs (not one of
        ``no_gemm_library``)."""
        raw = getattr(self, name)
        if raw is None:
            return MappingProxyType({})
        if isinstance(raw, Mapping):
            return _per_dtype(name, raw, peaks, prov)
        out: dict[str, float] = {}
        value = _number(name, _unwrap(raw, name, prov))
        if all(dtype in self.no_gemm_library for dtype in peaks):
            raise SpecError(name, "every dtype is in no_gemm_library: no library packs a B")
        source = prov.pop(name, None)
        for dtype in peaks:
            if dtype in self.no_gemm_library:
                continue
            out[dtype] = value
            if source is not None:
                prov[f"{name}.{dtype}"] = source
        return MappingProxyType(out)

    def _compute_fractions(
        self, peaks: Mapping[str, float], prov: dict[str, Provenance]
    ) -> Mapping[str, float]:
        """Achievable fraction of peak per dtype; 1.0 (flagged) where not given."""
        out: dict[str, float] = {}
        for dtype, raw in dict(self.compute_fraction).items():
            name = f"compute_fraction.{dtype}"
            if dtype not in peaks:
                raise SpecError(name, f"dtype {dtype!r} has no peak_ops_per_s")
            value = _number(name, _unwrap(raw, name, prov))
            if value > 1.0:
                raise SpecError(name, f"must be in (0, 1], got {_shown(value)}")
            out[dtype] = value
        for dtype in peaks:
            if dtype not in out:
                out[dtype] = 1.0
                prov.setdefault(f"compute_fraction.{dtype}", _DEFAULT_FRACTION)
        return MappingProxyType(out)

    def _check_tiers(self) -> None:
        if not self.tiers:
            raise SpecError("tiers", "a target needs at least one memory tier")
        previous: MemoryTier | None = None
        for i, tier in enumerate(self.tiers):
            if not isinstance(tier, MemoryTier):
                raise SpecError(f"tiers[{i}]", f"must be a MemoryTier, got {type(tier).__name__}")
            if previous is not None:
                if TIER_NAMES.index(tier.name) <= TIER_NAMES.index(previous.name):
                    raise SpecError(
                        f"tiers[{i}].name",
                        f"tier {tier.name!r} follows {previous.name!r}: tiers must be listed "
                        f"innermost first ({' < '.join(TIER_NAMES)})",
                    )
                if tier.total_capacity_bytes <= previous.total_capacity_bytes:
                    raise SpecError(
                        f"tiers[{i}].capacity_bytes",
                        f"tier {tier.name!r} ({tier.total_capacity_bytes:g} B) is not larger "
                        f"than the tier inside it, {previous.name!r} "
                        f"({previous.total_capacity_bytes:g} B)",
                    )
            previous = tier

    def packs_from(self, dtype: str, transposed: bool) -> float | None:
        """From how many rows of A the dtype's GEMM library packs B: its
        ``pack_min_rows``, or for a ``transposed`` B (a linear's weight) its
        ``transposed_pack_min_rows`` where the spec gives one. None where the
        library packs nothing (no count)."""
        least = self.pack_min_rows.get(dtype)
        if transposed:
            return self.transposed_pack_min_rows.get(dtype, least)
        return least

    def bandwidth_share(self, dtype: str, product: bool = True) -> float:
        """The share of each tier's bandwidth an op at ``dtype`` gets: a matrix
        product (``product``) its library's ``product_bandwidth_fraction``
        (1 where unset), any other op the tier's whole effective bandwidth."""
        return self.product_bandwidth_fraction.get(dtype, 1.0) if product else 1.0

    def first_touch_rate(self, dtype: str, product: bool) -> float | None:
        """The rate at which an op at ``dtype`` takes a fresh output's pages:
        the dtype's ``vector_first_touch_bps`` for an op with no matrix product
        where the spec gives one, else ``first_touch_bps`` (None: no such cost)."""
        if not product and dtype in self.vector_first_touch_bps:
            return self.vector_first_touch_bps[dtype]
        return self.first_touch_bps

    def runs_at_vector_rate(self, dtype: str, product: bool) -> bool:
        """Whether an op at ``dtype`` computes at the dtype's ``vector_ops_per_s``:
        one with no matrix product (``product`` False) where the spec gives one
        (a CPU's bf16 add converts on the vector units, not the matrix ones)."""
        return not product and dtype in self.vector_ops_per_s

    def achievable_ops(self, dtype: str, product: bool) -> float:
        """The compute rate of an op at ``dtype``: its vector rate where it
        :meth:`runs_at_vector_rate`, else the peak times ``compute_fraction``."""
        if self.runs_at_vector_rate(dtype, product):
            return self.vector_ops_per_s[dtype]
        return self.peak_ops_per_s[dtype] * self.compute_fraction[dtype]

    def tier_share(self, tier: MemoryTier, dtype: str, product: bool = True) -> float:
        """The share of ``tier``'s effective bandwidth an op at ``dtype`` gets:
        :meth:`bandwidth_share` times, for a matrix product, the tier's own
        ``product_fraction``."""
        share = self.bandwidth_share(dtype, product)
        return share * tier.product_fraction if product else share

    def launch_for(self, dtype: str) -> float:
        """The launch/dispatch overhead of a call at ``dtype``: the dtype's own
        dispatch path when the spec has one (a CPU's bf16 calls go through
        another library than its fp32 ones), else ``launch_overhead_s``."""
        return self.dispatch_overhead_s.get(dtype, self.launch_overhead_s)

    def dispatch_for(self, dtype: str, accumulates: bool) -> float:
        """The GEMM library's call for a product at ``dtype``: the dtype's
        dispatch (:meth:`launch_for`: the framework's launch where the spec
        gives the dtype none), and where the product accumulates onto C (beta
        = 1, as linear does onto its bias) the dtype's
        ``accumulate_overhead_s`` on top (0 where the spec gives none)."""
        extra = self.accumulate_overhead_s.get(dtype, 0.0) if accumulates else 0.0
        return self.launch_for(dtype) + extra

    @property
    def dtypes(self) -> tuple[str, ...]:
        """The dtypes this target supports."""
        return tuple(self.peak_ops_per_s)

    def tier(self, name: str) -> MemoryTier:
        """The tier called ``name`` (``KeyError`` naming the tiers if absent)."""
        for tier in self.tiers:
            if tier.name == name:
                return tier
        raise KeyError(
            f"{self.key} has no tier {name!r}; tiers: {', '.join(t.name for t in self.tiers)}"
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready description, provenance included."""
        return {
            "key": self.key,
            "name": self.name,
            "family": self.family,
            "architecture": self.architecture,
            "ground_truth": self.ground_truth,
            "detected": self.detected,
            "power_mode": self.power_mode,
            "power_mode_class": self.power_mode_class,
            "family_rank": self.family_rank,
            "power_class": self.power_class,
            "process_node_nm": self.process_node_nm,
            "description": self.description,
            "compute_units": self.compute_units,
            "compute_unit_name": self.compute_unit_name,
            "clock_hz": self.clock_hz,
            "dtypes": list(self.dtypes),
            "peak_ops_per_s": dict(self.peak_ops_per_s),
            "energy_per_op_j": dict(self.energy_per_op_j),
            "compute_fraction": dict(self.compute_fraction),
            "dispatch_overhead_s": dict(self.dispatch_overhead_s),
            "accumulate_overhead_s": dict(self.accumulate_overhead_s),
            "vector_ops_per_s": dict(self.vector_ops_per_s),
            "product_bandwidth_fraction": dict(self.product_bandwidth_fraction),
            "product_overlap": dict(self.product_overlap),
            "pack_a_bps": dict(self.pack_a_bps),
            "vector_first_touch_bps": dict(self.vector_first_touch_bps),
            "library_min_macs": dict(self.library_min_macs),
            "no_gemm_library": list(self.no_gemm_library),
            **{name: dict(getattr(self, name)) for name in self.REFERENCE},
            "tlb_reach_bytes": self.tlb_reach_bytes,
            "page_walk_s": self.page_walk_s,
            "register_tile_bytes": self.register_tile_bytes,
            "accumulator_lanes": dict(self.accumulator_lanes),
            "tail_piece_vectors": dict(self.tail_piece_vectors),
            "product_output_passes": dict(self.product_output_passes),
            "first_touch_bps": self.first_touch_bps,
            "first_touch_min_bytes": self.first_touch_min_bytes,
            "fork_join_s": self.fork_join_s,
            "gemv_fork_join_s": dict(self.gemv_fork_join_s),
            "parallel_grain_ops": self.parallel_grain_ops,
            "kernel_overhead_s": self.kernel_overhead_s,
            "pack_bps": dict(self.pack_bps),
            "pack_min_rows": dict(self.pack_min_rows),
            "in_place_max_rows": dict(self.in_place_max_rows),
            "in_place_fraction": dict(self.in_place_fraction),
            "pack_read_overlap": dict(self.pack_read_overlap),
            "transposed_pack_min_rows": dict(self.transposed_pack_min_rows),
            "transposed_pass_rows": dict(self.transposed_pass_rows),
            "narrow_n_columns": dict(self.narrow_n_columns),
            "transposed_narrow_n_columns": dict(self.transposed_narrow_n_columns),
            "narrow_n_fraction": dict(self.narrow_n_fraction),
            "gemv_fraction": dict(self.gemv_fraction),
            "launch_overhead_s": self.launch_overhead_s,
            "idle_power_w": self.idle_power_w,
            "tdp_w": self.tdp_w,
            "fingerprint": dict(self.fingerprint),
            "tiers": [t.to_dict() for t in self.tiers],
            "provenance": {k: str(v) for k, v in self.provenance.items()},
        }
