"""What a calibration must say about itself beside its numbers: which
constants the rows did not really measure, and input it refuses.

- a latency constant whose fitted value sits at a bound of its range (within
  ``BOUND_TOLERANCE`` in log terms): the rows pushed it there, so its value
  is the bound, not a measurement;
- an energy coefficient at its floor (``ENERGY_FLOOR`` of the datasheet's;
  held there by the fit, or within ``BOUND_TOLERANCE`` of it): the rows
  leave it no share beside the other terms;
- a constant the rows cannot identify: a relative uncertainty above
  ``UNCERTAINTY_LIMIT``, or one they do not move at all (its spec value stays);
- a constant another of the fit's starts puts far elsewhere (beyond
  :data:`~.fit.RIVAL_RATIO`, a share beyond :data:`~.fit.RIVAL_SHARE`) at a
  cost within :data:`~.fit.RIVAL_COST` of the chosen optimum's: the rows do
  not choose between the two, however small its uncertainty at the chosen one
  (which only sees the slope around it);
- a cache tier fitted (or held) slower than ``SLOW_CACHE_RATIO`` times main
  memory's peak: no cache of a real part is that slow, so the fit is using the
  tier's bandwidth for some other cost the rows share (a library's
  matrix-vector streaming rate, say); the value describes these rows, not the
  cache;
- a GEMM library's bandwidth share (``product_bandwidth_fraction``) left
  unfitted while matrix-product rows are bound by a memory tier: too few
  stream rows to tell it from the tiers' own fractions (which then take the
  products' rates), or too few product rows of that dtype;
- an accumulating call's overhead (``accumulate_overhead_s``) left unfitted
  beside a fitted dispatch: too few launch-bound products of one kind;
- rows measured on a thread count other than the CPU target's compute units:
  the constants describe that run, not the machine the spec describes;
- a fit that reproduces its rows exactly (as many rows as constants, or rows
  a model made): its uncertainties read 0 and say nothing.

Each finding is one :class:`Diagnostic` (one ``warning:`` line, and a record
in the calibration file). :func:`require_distinct_rows` refuses rows that
cannot pin the constants at all: fewer distinct (op, shape, dtype) than free
latency constants (copies of one row fit anything exactly).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
from attrs import frozen

from graphsval_core.calibrate.energy import ALL_TIERS_PER_BYTE, ENERGY_FLOOR, EnergyFit
from graphsval_core.calibrate.fit import Fit
from graphsval_core.calibrate.params import (
    ACCUMULATE_ROWS,
    GEMV_STREAM_ROWS,
    GEMV_TEAM_ROWS,
    REFERENCE_KS,
    REFERENCE_ROWS,
    SHARES,
    STREAM_ROWS,
    GemvTeam,
    OwnKernelRows,
    Param,
    ShareGate,
)
from graphsval_core.datamodel.errors import UserInputError
from graphsval_core.datamodel.target import TargetSpec
from graphsval_core.datamodel.units import fmt_seconds
from graphsval_core.files.baseline import BaselineRow
from graphsval_core.files.calibration import (
    apply_constants,
    is_fraction,
    relative_words,
    resolved,
    share_spread,
    share_words,
)

#: How close (in log terms: |log(value / bound)|) a fitted latency constant
#: may come to a bound of its range before it counts as sitting at it (~1%).
BOUND_TOLERANCE = 0.01
#: The relative uncertainty above which the rows do not identify a constant.
UNCERTAINTY_LIMIT = 1.0
#: The largest spread allowed a share (:data:`~.params.SHARES`) the rows identify.
SHARE_SPREAD_LIMIT = 0.25
#: A fit whose median |error| is below this reproduces its rows exactly.
EXACT_ERROR = 1e-6
#: A cache fitted to deliver less than this many times main memory's peak
#: bandwidth is not describing the cache (caches of real CPUs and GPUs run
#: several times faster than their DRAM; hardware-facts.md).
SLOW_CACHE_RATIO = 2.0


@frozen
class Diagnostic:
    """One finding about a calibration: its kind (``at_bound``, ``at_floor``,
    ``uncertain``, ``not_identifiable``, ``rival_optimum``, ``slow_cache``, ``not_fitted``,
    ``threads`` or ``exact_fit``), what
    it is about (a constant's name, ``ALL_TIERS_PER_BYTE``, or ``threads``), the bound it sits
    at (``lower``, ``upper`` or ``floor``; None for the other kinds) and the
    sentence that says it."""

    kind: str
    subject: str
    message: str
    bound: str | None = None

    @property
    def line(self) -> str:
        """The ``warning: ...`` line the command prints."""
        return f"warning: {self.message}"

    def record(self) -> dict[str, str]:
        """The calibration file's record of it."""
        out = {"kind": self.kind, "subject": self.subject, "message": self.message}
        if self.bound is not None:
            out["bound"] = self.bound
        return out


def _quantity(name: str, value: float) -> str:
    """``value`` with the unit its name ends in."""
    units = (("_ops_per_s", " ops/s"), ("_bps", " B/s"), ("_bytes", " B"), ("_s", " s"))
    for suffix, unit in units:  # (a rate per second before a time in seconds)
        if name.endswith(suffix) or f"{suffix}." in name:
            return f"{value:.3g}{unit}"
    return f"{value:.3g}"


def _bound_words(spec: TargetSpec, p: Param, side: str) -> str:
    """The bound ``side`` of ``p``'s range, in the constant's own terms."""
    bound = p.upper if side == "upper" else p.lower
    if not is_fraction(p.name):
        return _quantity(p.name, bound)
    value = resolved(spec, p.name, bound)
    if side == "lower":
        return f"{value:.3g}, {bound:g} x the spec's value"
    if math.isclose(value, 1.0, rel_tol=1e-9):
        return "1, the spec's full peak"
    return f"{value:.3g} x the spec's peak"


def latency_at_bounds(spec: TargetSpec, fit: Fit) -> list[Diagnostic]:
    """The fitted latency constants within ``BOUND_TOLERANCE`` (in log terms)
    of a bound of their range; constants held by the hierarchy or not
    identifiable were not fitted and are left out."""
    out = []
    for p in fit.params:
        if p.name not in fit.values or p.name in fit.held:
            continue
        x = math.log(fit.values[p.name])
        if x - math.log(p.lower) <= BOUND_TOLERANCE:
            side, want = "lower", "less"
        elif math.log(p.upper) - x <= BOUND_TOLERANCE:
            side, want = "upper", "more"
        else:
            continue
        why = f"the fit presses it against its range (the rows may ask for {want})"
        if p.name.startswith(SHARES):
            why = (
                "on these rows the library's compute and its traffic beyond the innermost "
                "tier add up, none hidden (0 is the physical limit)"
                if side == "lower"
                else "these rows hide the shorter time whole, as the roofline does (1 is the "
                "physical limit)"
            )
        if p.name.startswith("pack_bps.") and side == "upper":
            why = (
                "these rows' packing is all the reading of B from the tier that holds it, "
                "the copy's own writes too fast to show"
            )
        out.append(
            Diagnostic(
                "at_bound",
                p.name,
                f"{p.name} sits at the {side} bound of its range ({_bound_words(spec, p, side)}): "
                f"{why}; its value is a bound, not a measurement",
                side,
            )
        )
    return out


def _rate(bps: float) -> str:
    """A bandwidth in GB/s or TB/s."""
    return f"{bps / 1e12:.3g} TB/s" if bps >= 1e12 else f"{bps / 1e9:.3g} GB/s"


def slow_caches(spec: TargetSpec, fit: Fit) -> list[Diagnostic]:
    """The cache tiers (every tier but main memory, the last) whose fitted or
    held bandwidth is under ``SLOW_CACHE_RATIO`` times main memory's peak in
    the spec: the fit has used the tier for another cost of these rows."""
    fitted = apply_constants(spec, fit.values, "fit")
    memory = spec.tiers[-1]
    limit = SLOW_CACHE_RATIO * memory.peak_bandwidth_bps
    out = []
    for k, tier in enumerate(fitted.tiers[:-1]):
        name = f"tiers.{tier.name}.achievable_fraction"
        if name not in fit.values:
            continue
        rate = tier.effective_bandwidth_bps
        if rate >= limit:
            continue
        how = "held" if name in fit.held else "fitted"
        nominal = spec.tiers[k].peak_bandwidth_bps
        out.append(
            Diagnostic(
                "slow_cache",
                name,
                f"{tier.name} is {how} at {_rate(rate)} ({rate / nominal:.3g} of its "
                f"{_rate(nominal)} nominal), under {SLOW_CACHE_RATIO:g}x "
                f"{memory.name}'s {_rate(memory.peak_bandwidth_bps)} peak: no cache is that "
                "slow, so the fit uses it for another cost these rows share (a library's "
                "streaming rate, say); it describes these rows, not the cache",
            )
        )
    return out + _slow_product_shares(fitted, fit)


def _slow_product_shares(fitted: TargetSpec, fit: Fit) -> list[Diagnostic]:
    """The tiers whose fitted ``product_fraction`` gives a matrix product less
    of them than of the tier behind them (the fit's hierarchy penalty holds
    the streams' rates only): a product would read its panels faster from
    further out, so the share stands for another cost of these rows."""
    out = []
    tiers = fitted.tiers
    for k, tier in enumerate(tiers[:-1]):
        name = f"tiers.{tier.name}.product_fraction"
        if name not in fit.values:
            continue
        here = tier.effective_bandwidth_bps * tier.product_fraction
        outer = tiers[k + 1]
        behind = outer.effective_bandwidth_bps * outer.product_fraction
        if here >= behind:
            continue
        out.append(
            Diagnostic(
                "slow_cache",
                name,
                f"{tier.name} gives a matrix product {_rate(here)} ({tier.product_fraction:.3g} "
                f"of its {_rate(tier.effective_bandwidth_bps)} for a stream, before the "
                f"library's share), less than {outer.name}'s {_rate(behind)}: a product would "
                "read its panels faster from further out, so the share stands for another "
                "cost these rows share; it describes these rows, not the cache",
            )
        )
    return out


def _near_floor(spec: TargetSpec, energy: EnergyFit) -> list[str]:
    """The energy coefficients within ``BOUND_TOLERANCE`` (in log terms) of their
    floor, by the names of ``EnergyFit.at_floor``: the fit's own test is all
    but exact, and a coefficient at 1.00003 x its floor sits there as much."""
    if not energy.fitted:
        return []
    fitted: list[tuple[str, float | None, float]] = [
        (n, energy.values.get(n), spec.energy_per_op_j[n.split(".", 1)[1]])
        for n in energy.values
        if n.startswith("energy_per_op_j.")
    ]
    fitted.append((ALL_TIERS_PER_BYTE, energy.traffic_scale, 1.0))
    fitted.append(("idle_power_w", energy.values.get("idle_power_w"), max(spec.idle_power_w, 1e-3)))
    return [
        name
        for name, value, datasheet in fitted
        if value is not None
        and value > 0
        and math.log(value / (ENERGY_FLOOR * datasheet)) <= BOUND_TOLERANCE
    ]


def energy_at_floor(spec: TargetSpec, energy: EnergyFit) -> list[Diagnostic]:
    """The energy coefficients at their floor: held there by the fit
    (``EnergyFit.at_floor``) or within ``BOUND_TOLERANCE`` of it."""
    floored = set(energy.at_floor) | set(_near_floor(spec, energy))
    order = [*sorted(n for n in floored if n.startswith("energy_per_op_j.")), ALL_TIERS_PER_BYTE]
    names = [n for n in [*order, "idle_power_w"] if n in floored]
    names += sorted(floored - set(names))  # any other name the fit may give
    out = []
    for name in names:
        if name == ALL_TIERS_PER_BYTE:
            tiers = ", ".join(f"tiers.{t.name}" for t in spec.tiers)
            what = f"energy_per_byte_j of every tier ({tiers}: one scale)"
        else:
            what = name
        if name == "idle_power_w":
            beside = "the per-op and per-byte energy"
        elif "idle_power_w" in floored:
            beside = "the other terms"
        else:
            beside = "idle power"
        out.append(
            Diagnostic(
                "at_floor",
                name,
                f"{what} sits at its floor ({ENERGY_FLOOR:g} x the datasheet): the rows leave "
                f"it no share beside {beside}; its value is a bound, not a measurement",
                "floor",
            )
        )
    return out


def unidentified(fit: Fit) -> list[Diagnostic]:
    """The fitted constants whose relative uncertainty is above
    ``UNCERTAINTY_LIMIT``, then those the rows do not move at all."""
    out = []
    for p in fit.params:
        if p.name not in fit.values or p.name in fit.held:
            continue
        sigma = fit.uncertainty.get(p.name, 0.0)
        spread = share_spread(p.name, fit.values[p.name], sigma)
        if spread is not None:  # a share of at most 1: judged by its own spread
            if spread > SHARE_SPREAD_LIMIT:
                out.append(
                    Diagnostic(
                        "uncertain",
                        p.name,
                        f"{p.name} is not identified by these rows: {fit.values[p.name]:.3g} "
                        f"{share_words(spread)} (above +- {SHARE_SPREAD_LIMIT:g} of a share from 0 "
                        f"to 1), so its value means little; it rests on {p.exercised_by}: "
                        "add rows of that kind",
                    )
                )
            continue
        if sigma > UNCERTAINTY_LIMIT:
            words = relative_words(sigma).removeprefix("+- ")  # as targets says it
            size = words if math.isfinite(sigma) else "unbounded"
            out.append(
                Diagnostic(
                    "uncertain",
                    p.name,
                    f"{p.name} is not identified by these rows: relative uncertainty {size} "
                    f"(above {UNCERTAINTY_LIMIT:.0%}), so its value means little; it rests on "
                    f"{p.exercised_by}: add rows of that kind",
                )
            )
    out += [
        Diagnostic(
            "not_identifiable",
            name,
            f"{name} is not identifiable from these rows (they do not move it): "
            "the spec's value stays",
        )
        for name in fit.not_identifiable
    ]
    return out


def exact_fit(fit: Fit) -> list[Diagnostic]:
    """A fit that reproduces its rows exactly (median |error| below
    :data:`EXACT_ERROR`): no scatter is left to size the uncertainties, so
    they read 0 whatever the rows pin (as many rows as constants, or rows
    made by a model)."""
    if not len(fit.residuals) or float(np.median(np.abs(fit.residuals))) >= EXACT_ERROR:
        return []
    rows = _distinct(fit.rows)
    return [
        Diagnostic(
            "exact_fit",
            "fit",
            f"the fit reproduces its {rows} distinct rows exactly (median |error| below "
            f"{EXACT_ERROR:.0e}) with {len(fit.params)} latency constants: no scatter is left "
            "to size their uncertainties (+- 0%) or to judge them out of sample, so those "
            "figures say nothing of what the rows pin: add rows of other shapes",
        )
    ]


def _cost_gap(ratio: float) -> str:
    """How much worse a rival optimum's cost is, in words."""
    if ratio - 1 < 5e-5:
        return "at the same cost as this one"
    return f"at a cost {ratio - 1:.2%} above this one's"


def rival_optima(spec: TargetSpec, fit: Fit, reported: set[str]) -> list[Diagnostic]:
    """The constants another of the fit's starts put far elsewhere at (almost)
    the same cost (:attr:`Fit.rivals`), but for those already ``reported``
    as unidentified and those the hierarchy held."""
    out = []
    for name, rival in fit.rivals.items():
        if name in reported or name in fit.held or name not in fit.values:
            continue
        ours = _quantity(name, resolved(spec, name, fit.values[name]))
        theirs = _quantity(name, resolved(spec, name, rival.value))
        out.append(
            Diagnostic(
                "rival_optimum",
                name,
                f"{name} is not pinned by these rows: another start of the fit ends "
                f"{_cost_gap(rival.cost_ratio)} with it at {theirs} (this fit: {ours}), so "
                "the rows do not choose between the two; its uncertainty only sees the "
                "slope around this fit: add rows that tell them apart",
            )
        )
    return out


def share_not_fitted(spec: TargetSpec, gate: ShareGate | None) -> list[Diagnostic]:
    """Why ``product_bandwidth_fraction`` was not fitted for a dtype whose
    matrix-product rows a memory tier bounds (``gate``, the counts the fit's
    gate judged): one line for too few stream rows (every such dtype), one per
    dtype with a single product row. Nothing when no product row is bound."""
    if gate is None:
        return []
    waiting = {d: n for d, n in gate.products.items() if n and not gate.fits(d)}
    if not waiting:
        return []
    if gate.streams < STREAM_ROWS:
        rows = ", ".join(f"{n} {d}" for d, n in waiting.items())
        dtypes = "/".join(waiting)
        return [
            Diagnostic(
                "not_fitted",
                "product_bandwidth_fraction",
                f"product_bandwidth_fraction.{dtypes} is not fitted: {gate.streams} vector_add "
                f"row{'' if gate.streams == 1 else 's'} bound by a memory tier, "
                f"{STREAM_ROWS} needed to tell a GEMM library's share of a tier from the "
                f"tier's own rate; the tiers' fractions take the memory-bound matmul/linear "
                f"rows' rates instead ({rows} such rows): add vector_add rows across the tiers",
            )
        ]
    return [
        Diagnostic(
            "not_fitted",
            f"product_bandwidth_fraction.{d}",
            f"product_bandwidth_fraction.{d} is not fitted: only {n} {d} matmul/linear row "
            f"is bound by a memory tier (2 needed); {d} products keep "
            f"{spec.bandwidth_share(d):.3g} of each tier's rate (the spec's; times a "
            "tier's own share for products, where it has one)",
        )
        for d, n in waiting.items()
    ]


def reference_not_fitted(spec: TargetSpec, own: OwnKernelRows | None) -> list[Diagnostic]:
    """Why the framework kernel's times of a layout, or ``page_walk_s``,
    were not fitted where some rows run in that kernel (``own``): too few
    products of the layout, or of K, or too few walks beyond the TLB's
    reach. The spec's times stay."""
    if own is None:
        return []
    out = []
    for (dtype, dot), ks in sorted(own.walks.items()):
        if own.enough((dtype, dot)):
            continue
        prefix = "reference_dot_" if dot else "reference_"
        layout = "dot" if dot else "column-walk"
        names = f"{prefix}output_s.{dtype} and {prefix}mac_s.{dtype}"
        out.append(
            Diagnostic(
                "not_fitted",
                f"{prefix}mac_s.{dtype}",
                f"{names} are not fitted: {len(ks)} {dtype} {layout} product"
                f"{'' if len(ks) == 1 else 's'} of {len(set(ks))} value"
                f"{'' if len(set(ks)) == 1 else 's'} of K run in the framework's own kernel "
                f"({REFERENCE_ROWS} of {REFERENCE_KS} values of K needed); they keep the "
                "spec's times",
            )
        )
    walked = any(not dot for _d, dot in own.walks)
    if spec.page_walk_s is not None and walked and own.beyond < 2:
        out.append(
            Diagnostic(
                "not_fitted",
                "page_walk_s",
                f"page_walk_s is not fitted: {own.beyond} column walk"
                f"{'' if own.beyond == 1 else 's'} in the framework's own kernel span more "
                f"than the TLB's reach ({spec.tlb_reach_bytes:.4g} B; 2 needed); it keeps "
                "the spec's time",
            )
        )
    return out


def gemv_team_not_fitted(spec: TargetSpec, gemv: Mapping[str, GemvTeam]) -> list[Diagnostic]:
    """Why ``gemv_fork_join_s`` of a dtype was not fitted where the rows hold
    GEMVs of it above the grain (``gemv``: their counts per dtype), too few
    of them launch-bound to time the team. The spec's cost stays."""
    return [
        Diagnostic(
            "not_fitted",
            f"gemv_fork_join_s.{d}",
            f"gemv_fork_join_s.{d} is not fitted: {n.launch_bound} of the {n.above_grain} "
            f"{d} GEMV{'' if n.above_grain == 1 else 's'} (M or N of 1) above the grain "
            f"{'is' if n.launch_bound == 1 else 'are'} launch-bound ({GEMV_TEAM_ROWS} needed: "
            "a larger GEMV's team is lost in its stream of B); it keeps the spec's "
            f"{spec.gemv_fork_join_s[d]:.3g} s",
        )
        for d, n in gemv.items()
        if n.above_grain and n.launch_bound < GEMV_TEAM_ROWS
    ]


def accumulate_not_fitted(
    spec: TargetSpec, fit: Fit, calls: Mapping[str, tuple[int, int]]
) -> list[Diagnostic]:
    """Why ``accumulate_overhead_s`` of a dtype was not fitted where the rows
    hold launch-bound products of it (``calls``: per dtype the spec gives
    one, the distinct launch-bound products that accumulate onto C and that
    write it): too few of either kind. The spec's overhead stays, on top of
    the dtype's call."""
    return [
        Diagnostic(
            "not_fitted",
            f"accumulate_overhead_s.{d}",
            f"accumulate_overhead_s.{d} is not fitted: {acc} launch-bound {d} "
            f"product{'s' if acc != 1 else ''} accumulate{'s' if acc == 1 else ''} onto C "
            f"(linear) and {plain} write{'s' if plain == 1 else ''} it ({ACCUMULATE_ROWS} of "
            f"each needed); it keeps the spec's {fmt_seconds(spec.accumulate_overhead_s[d])} "
            "on top of the dtype's call",
        )
        for d, (acc, plain) in calls.items()
        if acc + plain and f"accumulate_overhead_s.{d}" not in fit.values
    ]


def gemv_share_not_fitted(
    spec: TargetSpec, streams: Mapping[str, int], gate: ShareGate | None, fit: Fit
) -> list[Diagnostic]:
    """Why ``gemv_fraction`` of a dtype was not fitted where some of its rows
    stream their matrix on the library's level-2 path beyond the innermost
    tier (``streams``: the distinct such rows per dtype): too few of them, or
    the dtype's products' share itself unfitted (``gate``). The spec's share
    stays, beside whatever the products' share became."""
    out = []
    for d, n in streams.items():
        if not n or f"gemv_fraction.{d}" in fit.values:
            continue
        inner = spec.tiers[0].name
        if n < GEMV_STREAM_ROWS:
            why = (
                f"only {n} {d} GEMV{'' if n == 1 else 's'} (M or N of 1, or A too short to "
                f"pack) {'is' if n == 1 else 'are'} bound by a tier beyond the {inner} "
                f"({GEMV_STREAM_ROWS} needed)"
            )
            add = f"add GEMVs whose matrix outgrows the {inner}"
        elif gate is not None and not gate.fits(d):
            why = (
                f"the {d} products' share of the tiers is not fitted ({STREAM_ROWS} vector_add "
                f"rows and 2 {d} products bound by a memory tier needed), and a GEMV's share "
                "is fitted only beside it"
            )
            add = "add vector_add rows across the tiers"
        else:
            continue
        out.append(
            Diagnostic(
                "not_fitted",
                f"gemv_fraction.{d}",
                f"gemv_fraction.{d} is not fitted: {why}; {d} GEMVs keep the spec's "
                f"{spec.gemv_fraction[d]:.3g} of each tier's rate beyond the {inner}: {add}",
            )
        )
    return out


def _threads(row: BaselineRow) -> int | None:
    """The row's ``threads`` column as a count (None when absent or not a count)."""
    text = row.extras.get("threads", "").strip()
    try:
        count = int(text)
    except ValueError:
        return None
    return count if count > 0 else None


def thread_mismatch(
    spec: TargetSpec, files: Sequence[tuple[str, Sequence[BaselineRow]]]
) -> list[Diagnostic]:
    """One line when rows of a CPU target ran on a thread count other than
    the spec's compute units, naming the files of each count seen and, where
    only some of a file's rows ran so, how many (``files``: each baseline's
    path and its rows used). A GPU's compute units are its SMs, not the host
    threads a ``threads`` column counts: no line for it."""
    if spec.architecture != "cpu":
        return []
    by_count: dict[int, list[str]] = {}
    for path, rows in files:
        counts = [_threads(r) for r in rows]
        for count in sorted({c for c in counts if c is not None}):
            if count != spec.compute_units:
                some = counts.count(count)
                part = "" if some == len(rows) else f" ({some} of its {len(rows)} rows)"
                by_count.setdefault(count, []).append(path + part)
    if not by_count:
        return []

    def ran(count: int, paths: list[str]) -> str:
        return f"{', '.join(paths)} ran on {count} thread{'s' if count != 1 else ''}"

    seen = "; ".join(ran(c, p) for c, p in sorted(by_count.items()))
    units = spec.compute_units
    return [
        Diagnostic(
            "threads",
            "threads",
            f"the rows of {seen}, but {spec.key} has {units} compute "
            f"unit{'s' if units != 1 else ''}: the fitted constants describe the run "
            "measured, not the machine the spec describes",
        )
    ]


def _distinct(rows: Sequence[BaselineRow]) -> int:
    """How many distinct (op, shape, dtype) ``rows`` measure."""
    return len({(r.op, r.dims, r.dtype) for r in rows})


def require_distinct_rows(
    spec: TargetSpec, rows: Sequence[BaselineRow], params: Sequence[Param]
) -> None:
    """Refuse rows with fewer distinct (op, shape, dtype) than free latency
    constants (``params``): copies of one row fit any constants exactly.

    Raises :class:`~graphsval_core.datamodel.errors.UserInputError` in one line."""
    distinct = _distinct(rows)
    if distinct >= len(params):
        return
    names = ", ".join(p.name for p in params)
    raise UserInputError(
        f"{len(rows)} usable {spec.key} rows but only {distinct} distinct (op, shape, dtype); "
        f"the fit has {len(params)} free latency constants ({names}) and needs at least "
        f"{len(params)} distinct rows: add rows of other shapes (launch-, memory- and "
        "compute-bound ones), not copies of the same"
    )


def diagnose(
    spec: TargetSpec,
    fit: Fit,
    energy: EnergyFit,
    files: Sequence[tuple[str, Sequence[BaselineRow]]] = (),
    gate: ShareGate | None = None,
    own: OwnKernelRows | None = None,
    gemv: Mapping[str, GemvTeam] | None = None,
    streams: Mapping[str, int] | None = None,
    calls: Mapping[str, tuple[int, int]] | None = None,
) -> tuple[Diagnostic, ...]:
    """Every finding about a calibration, in the order printed: a fit that
    reproduces its rows exactly, latency constants at a bound, cache tiers
    slower than main memory allows, energy coefficients at their floor,
    constants the rows cannot identify (their uncertainty, then another
    optimum as good), a bandwidth share left unfitted (``gate``: the counts
    its gate judged), the framework kernel's times left unfitted (``own``:
    its rows), a GEMV's team cost left unfitted (``gemv``: the GEMVs above
    the grain), a GEMV's share left unfitted (``streams``: the level-2 rows
    beyond the innermost tier), an accumulating call's overhead left unfitted
    (``calls``: the launch-bound products of each kind), a thread-count
    mismatch."""
    unknown = unidentified(fit)
    return (
        *exact_fit(fit),
        *latency_at_bounds(spec, fit),
        *slow_caches(spec, fit),
        *energy_at_floor(spec, energy),
        *unknown,
        *rival_optima(spec, fit, {d.subject for d in unknown}),
        *share_not_fitted(spec, gate),
        *reference_not_fitted(spec, own),
        *gemv_team_not_fitted(spec, gemv or {}),
        *gemv_share_not_fitted(spec, streams or {}, gate, fit),
        *accumulate_not_fitted(spec, fit, calls or {}),
        *thread_mismatch(spec, files),
    )
