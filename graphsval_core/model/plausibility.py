"""Physical sanity of a measurement: is it possible on this target at all?

A measured row is *suspect* when it implies something the silicon cannot do
(DESIGN.md section 8):

- **compute above peak**: the op's operations over the measured time exceed
  the target's peak ops/s (``peak_ops_per_s``, never times a calibrated
  ``compute_fraction``) by more than :data:`PEAK_MARGIN`;
- **bandwidth above the fastest tier**: the op's compulsory bytes (every
  operand once, the least any kernel moves) over the measured time exceed the
  fastest tier's peak bandwidth (never times a calibrated achievable
  fraction) by more than :data:`BANDWIDTH_MARGIN`;
- **power above TDP**: energy over the measured time exceeds ``tdp_w`` by more
  than :data:`POWER_MARGIN`;
- **far too slow**: the measured time exceeds :data:`SLOW_FACTOR` times the
  slowest plausible time of the shape: :data:`SLOW_OVERHEAD_S`, plus the
  compulsory bytes at the slowest tier's peak bandwidth, plus the operations
  at :data:`SLOW_COMPUTE_FRACTION` of peak.

The first, second and fourth make the *latency* suspect, the third the
*energy*: only the implausible quantity is excluded from a verdict. The
thresholds come from the spec the plugin wrote (the datasheet spec, or the
detected one of a host snapshot): calibration must not move them, since it
is fitted on the very rows being judged.

A row whose rounds (its ``round_latencies_s`` column) fall into two modes far
apart has a suspect latency too: its median is one of two states
(:mod:`graphsval_core.datamodel.round_modes`). The capture writes that flag;
files captured before it are checked when they are read.

A baseline row may also say it is suspect itself, in its ``suspect`` column:
``; ``-separated entries ``<quantity>: <reason>`` (:func:`format_suspect`
writes them, :func:`parse_suspect` reads them; capture and validate share
both). An empty or absent column means nothing is suspect.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np
from attrs import field, frozen

from graphsval_core.datamodel.dtypes import bytes_per_element
from graphsval_core.datamodel.errors import UserInputError
from graphsval_core.datamodel.round_modes import MODES_REASON, round_latencies, two_modes
from graphsval_core.datamodel.units import fmt_seconds, fmt_si
from graphsval_core.model.terms.traffic import operand_bytes

if TYPE_CHECKING:
    from graphsval_core.datamodel.op import OpSpec
    from graphsval_core.datamodel.target import TargetSpec

LATENCY = "latency"
ENERGY = "energy"
#: The quantities a flag can make suspect.
QUANTITIES: tuple[str, ...] = (LATENCY, ENERGY)
#: The baseline column that holds a row's own flags.
SUSPECT_COLUMN = "suspect"
#: The baseline column that holds the latency of each round of a row.
ROUNDS_COLUMN = "round_latencies_s"

#: Achieved ops/s may exceed the spec's peak by this factor before the
#: latency is suspect. A peak is cores x ops per cycle x a clock, and the clock
#: is the least certain figure of a spec: a datasheet states base or all-core
#: turbo, a detected one is the nominal ``cpu MHz`` a VM reports, and a core
#: under load runs at its turbo clock, up to about twice a nominal one. The
#: shipped data reach 1.25x (the Xeon snapshot, whose detected 2.1 GHz peak
#: its calibration raises to 207 GFLOP/s), and a quieter recapture is faster
#: still; a timer that lost calls or a kernel that skipped work is off by far
#: more than 2x.
PEAK_MARGIN = 2.0
#: Compulsory bytes/s may exceed the fastest tier's peak bandwidth by this
#: factor: a tier's bandwidth is bytes per cycle x the same uncertain clock.
BANDWIDTH_MARGIN = 2.0
#: Average power may exceed the TDP by this factor before the energy is
#: suspect: a package draws above its rated TDP in bursts (Intel's PL2 and
#: the higher instantaneous PL4, a GPU's boost), and a short RAPL window can
#: land on one: the shipped i7-12700K data hold a row at 1.6x its 190 W over
#: 0.4 ms. 1570 W (8x) is no burst.
POWER_MARGIN = 2.0
#: A call may take this many times the slowest plausible time of its shape
#: before its latency is suspect (a descheduled thread, a swapped-out
#: buffer): generous, since the plausible time is already a slow one.
SLOW_FACTOR = 1000.0
#: The fixed part of the slowest plausible time: framework dispatch, a
#: thread team's wake-up, a page fault or two, a GPU launch (s).
SLOW_OVERHEAD_S = 10e-3
#: The share of peak the slowest plausible kernel still reaches.
SLOW_COMPUTE_FRACTION = 0.01


class SuspectFormatError(UserInputError):
    """A ``suspect`` column that does not read as ``<quantity>: <reason>`` entries."""


def _no_separator(text: str) -> str:
    """A reason on one line, with no entry separator inside it."""
    return " ".join(str(text).split()).replace("; ", ", ")


@frozen
class Flag:
    """One implausible quantity of a measurement, and why (one line)."""

    quantity: str = field()
    reason: str = field(converter=_no_separator)

    @quantity.validator
    def _check_quantity(self, attribute: object, value: str) -> None:
        if value not in QUANTITIES:
            raise ValueError(f"suspect quantity {value!r} is not one of {', '.join(QUANTITIES)}")

    def text(self) -> str:
        """``<quantity>: <reason>``, as the ``suspect`` column holds it."""
        return f"{self.quantity}: {self.reason}"


_ENTRY = re.compile(r"^\s*(" + "|".join(QUANTITIES) + r")\s*:\s*(.*?)\s*$", re.DOTALL)
_SPLIT = re.compile(r";\s*(?=(?:" + "|".join(QUANTITIES) + r")\s*:)")


def parse_suspect(text: str | None) -> tuple[Flag, ...]:
    """The flags of a ``suspect`` column (empty or None: none). Entries are
    split at a ``;`` that is followed by a quantity, so a reason may itself
    hold a semicolon. Raises :class:`SuspectFormatError` for an entry that
    does not start with ``latency:`` or ``energy:``."""
    if text is None or not text.strip():
        return ()
    out = []
    for entry in _SPLIT.split(text.strip().rstrip(";")):
        match = _ENTRY.match(entry)
        if not match:
            raise SuspectFormatError(
                f"suspect entry {entry.strip()!r} is not '<quantity>: <reason>' "
                f"with quantity {' or '.join(QUANTITIES)}"
            )
        out.append(Flag(match.group(1), match.group(2) or "no reason given"))
    return tuple(out)


def format_suspect(flags: Iterable[Flag]) -> str:
    """The ``suspect`` column of ``flags`` (empty for none)."""
    return "; ".join(f.text() for f in flags)


def merge(*groups: Iterable[Flag]) -> tuple[Flag, ...]:
    """The flags of every group, in order, each once."""
    return tuple(dict.fromkeys(f for group in groups for f in group))


def suspect_of(flags: Iterable[Flag], quantity: str) -> tuple[Flag, ...]:
    """The flags of ``quantity``."""
    return tuple(f for f in flags if f.quantity == quantity)


@frozen(kw_only=True)
class Ratios:
    """Per measurement, what it implies over each bound it must stay under
    (NaN where the bound or the measurement is unknown): above 1 is beyond the
    bound, above the margin is suspect."""

    #: achieved ops/s over the datasheet peak of the dtype
    compute: np.ndarray
    #: compulsory bytes/s over the fastest tier's peak bandwidth
    bandwidth: np.ndarray
    #: average power over the TDP
    power: np.ndarray
    #: measured time over the slowest plausible time of the shape
    slowness: np.ndarray
    achieved_ops_per_s: np.ndarray
    achieved_bps: np.ndarray
    power_w: np.ndarray
    slowest_s: np.ndarray


def _array(values: Sequence[float | None] | np.ndarray, n: int) -> np.ndarray:
    out = np.array([np.nan if v is None else v for v in np.asarray(values, dtype=object)])
    return out.astype(np.float64).reshape(n)


def ratios(
    target: TargetSpec,
    op: OpSpec,
    shapes: np.ndarray | Sequence[Sequence[int]],
    dtype: str,
    latency_s: Sequence[float | None] | np.ndarray,
    energy_j: Sequence[float | None] | np.ndarray,
) -> Ratios:
    """The :class:`Ratios` of a batch of measurements of one (target, op,
    dtype); ``latency_s`` and ``energy_j`` per row, None or NaN where absent."""
    shapes = np.asarray(shapes, dtype=np.int64).reshape(-1, len(op.dims))
    n = len(shapes)
    latency = _array(latency_s, n)
    energy = _array(energy_j, n)
    timed = np.isfinite(latency) & (latency > 0)
    seconds = np.where(timed, latency, np.nan)
    flops = np.asarray(op.flops(shapes), dtype=np.float64)
    moved = operand_bytes(op.operand_elements(shapes), bytes_per_element(dtype))
    peak = float(target.peak_ops_per_s.get(dtype, np.nan))
    bandwidths = [t.peak_bandwidth_bps for t in target.tiers]
    fastest, slowest = max(bandwidths), min(bandwidths)
    slow_compute = flops / (peak * SLOW_COMPUTE_FRACTION) if np.isfinite(peak) else 0.0
    slowest_s = SLOW_OVERHEAD_S + moved / slowest + slow_compute
    achieved_ops = flops / seconds
    achieved_bps = moved / seconds
    power = np.where(np.isfinite(energy) & (energy > 0), energy, np.nan) / seconds
    return Ratios(
        compute=achieved_ops / peak,
        bandwidth=achieved_bps / fastest,
        power=power / target.tdp_w if target.tdp_w > 0 else np.full(n, np.nan),
        slowness=seconds / slowest_s,
        achieved_ops_per_s=achieved_ops,
        achieved_bps=achieved_bps,
        power_w=power,
        slowest_s=slowest_s,
    )


def _sig(value: float) -> str:
    """Three significant digits, in exponent form only from a million on."""
    return f"{float(f'{value:.3g}'):g}"


def _watts(value: float) -> str:
    return f"{_sig(value)} W"


def _kind(target: TargetSpec, name: str) -> str:
    """Where a spec figure comes from (``datasheet``, ``detected``, ...)."""
    provenance = target.provenance.get(name)
    return provenance.kind if provenance is not None else "spec"


def check_batch(
    target: TargetSpec,
    op: OpSpec,
    shapes: np.ndarray | Sequence[Sequence[int]],
    dtype: str,
    latency_s: Sequence[float | None] | np.ndarray,
    energy_j: Sequence[float | None] | np.ndarray,
) -> list[tuple[Flag, ...]]:
    """The flags of every measurement of a batch of one (target, op, dtype)
    (see module doc); ``target`` must be the uncalibrated spec."""
    r = ratios(target, op, shapes, dtype, latency_s, energy_j)
    unit = "OP/s" if dtype.startswith("int") else "FLOP/s"
    fastest = max(target.tiers, key=lambda t: t.peak_bandwidth_bps)
    out: list[tuple[Flag, ...]] = []
    for i in range(len(r.compute)):
        flags = []
        if r.compute[i] > PEAK_MARGIN:
            flags.append(
                Flag(
                    LATENCY,
                    f"implies {fmt_si(r.achieved_ops_per_s[i], unit)}, above {PEAK_MARGIN:g} x "
                    f"the {fmt_si(target.peak_ops_per_s[dtype], unit)} {dtype} peak "
                    f"({_kind(target, f'peak_ops_per_s.{dtype}')})",
                )
            )
        if r.bandwidth[i] > BANDWIDTH_MARGIN:
            flags.append(
                Flag(
                    LATENCY,
                    f"moves its operands at {fmt_si(r.achieved_bps[i], 'B/s')}, above "
                    f"{BANDWIDTH_MARGIN:g} x the {fmt_si(fastest.peak_bandwidth_bps, 'B/s')} "
                    f"of {fastest.name}, the fastest tier "
                    f"({fastest.provenance['peak_bandwidth_bps'].kind})",
                )
            )
        if r.slowness[i] > SLOW_FACTOR:
            flags.append(
                Flag(
                    LATENCY,
                    f"takes {_sig(r.slowness[i])} x the slowest plausible time "
                    f"({fmt_seconds(r.slowest_s[i])}), above {SLOW_FACTOR:g} x",
                )
            )
        if r.power[i] > POWER_MARGIN:
            flags.append(
                Flag(
                    ENERGY,
                    f"implies {_watts(r.power_w[i])}, above {POWER_MARGIN:g} x the "
                    f"{_watts(target.tdp_w)} TDP ({_kind(target, 'tdp_w')})",
                )
            )
        out.append(tuple(flags))
    return out


def check_measurement(
    target: TargetSpec,
    op: OpSpec,
    dims: Sequence[int],
    dtype: str,
    latency_s: float | None,
    energy_j: float | None,
) -> tuple[Flag, ...]:
    """The flags of one measurement of shape ``dims`` (see module doc);
    ``target`` must be the uncalibrated spec (``Registry.datasheet_target``)."""
    return check_batch(target, op, [list(dims)], dtype, [latency_s], [energy_j])[0]


class MeasuredRow(Protocol):
    """What the checks read of a baseline row (a ``BaselineRow``)."""

    @property
    def line(self) -> int: ...
    @property
    def op(self) -> str: ...
    @property
    def dims(self) -> tuple[int, ...]: ...
    @property
    def dtype(self) -> str: ...
    @property
    def latency_s(self) -> float | None: ...
    @property
    def energy_j(self) -> float | None: ...
    @property
    def extras(self) -> Mapping[str, str]: ...


def modes_flags(rounds: str | None, own: Sequence[Flag]) -> tuple[Flag, ...]:
    """A latency flag when a row's rounds (its ``round_latencies_s`` column,
    ``rounds``) fall into two modes (:mod:`graphsval_core.datamodel.round_modes`),
    unless its own flags (``own``) say so already."""
    if any(f.reason.startswith(MODES_REASON) for f in own):
        return ()
    modes = two_modes(round_latencies(rounds))
    return () if modes is None else (Flag(LATENCY, modes.reason()),)


def _modes_flags(row: MeasuredRow, own: Sequence[Flag]) -> tuple[Flag, ...]:
    """:func:`modes_flags` of a row with a latency."""
    if row.latency_s is None:
        return ()
    return modes_flags(row.extras.get(ROUNDS_COLUMN), own)


def row_flags(
    target: TargetSpec,
    op_of: Callable[[str], OpSpec],
    rows: Sequence[MeasuredRow],
    where: str = "",
) -> list[tuple[Flag, ...]]:
    """The flags of every row of ``target`` (the uncalibrated spec): its
    ``suspect`` column's, its rounds' (two modes), then those of the checks,
    each once. Rows of one op and dtype are checked as one batch; a row with
    no latency, of a dtype the target has no peak for or with the wrong
    number of dims has only its column's and its rounds'. A malformed column
    raises :class:`SuspectFormatError` naming ``where`` (the file) and the
    row's line."""
    out: list[tuple[Flag, ...]] = []
    for row in rows:
        try:
            own = parse_suspect(row.extras.get(SUSPECT_COLUMN))
        except SuspectFormatError as exc:
            raise SuspectFormatError(f"{where}:{row.line}: {exc}") from None
        out.append(merge(own, _modes_flags(row, own)))
    groups: dict[tuple[str, str], list[int]] = {}
    for i, row in enumerate(rows):
        if row.latency_s is not None and row.dtype in target.peak_ops_per_s:
            groups.setdefault((row.op, row.dtype), []).append(i)
    for (op_name, dtype), index in groups.items():
        op = op_of(op_name)
        index = [i for i in index if len(rows[i].dims) == len(op.dims)]
        if not index:
            continue
        found = check_batch(
            target,
            op,
            [rows[i].dims for i in index],
            dtype,
            [rows[i].latency_s for i in index],
            [rows[i].energy_j for i in index],
        )
        for i, flags in zip(index, found, strict=True):
            out[i] = merge(out[i], flags)
    return out
