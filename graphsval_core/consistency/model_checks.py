"""The built-in invariants of one target's predictions (checks 1-5 of the
README's list): decomposition, monotonicity, precision scaling, coefficient
sensitivity and physical bounds, over the reference workload set of
:mod:`graphsval_core.consistency.reference_shapes`.

Each function takes ``(target, context)`` and returns
:class:`~graphsval_core.datamodel.outcome.Outcome` records, one per aspect of the
check, deciding over every workload and dtype of the target and naming the
worst case on failure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from attrs import evolve

from graphsval_core.consistency.context import Batches, CheckContext
from graphsval_core.consistency.reference_shapes import workload_name
from graphsval_core.datamodel.outcome import Outcome, outcome, skipped
from graphsval_core.model.prediction import LATENCY_TERMS

if TYPE_CHECKING:
    from graphsval_core.datamodel.target import TargetSpec
    from graphsval_core.model.prediction import Prediction

#: Relative tolerance of sums and proportions (the issue's 0.1%).
REL = 1e-3
#: Relative slack of relations that hold exactly but for rounding.
EXACT = 1e-9
#: How much the sensitivity check raises a coefficient.
RAISE = 1.1


def shapes_of(batches: Batches) -> dict[str, dict[str, list[Any]]]:
    """The ``dtype -> op -> shapes`` a set of batches was predicted on."""
    out: dict[str, dict[str, list[Any]]] = {}
    for (op, dtype), (array, _) in batches.items():
        out.setdefault(dtype, {})[op] = array.tolist()
    return out


def one_dtype_per_size(target: TargetSpec) -> tuple[str, ...]:
    """The first dtype of each element size: a tier's coefficients see a dtype
    only through its bytes per element, so these cover every traffic pattern."""
    from graphsval_core.datamodel.dtypes import bytes_per_element

    seen: dict[float, str] = {}
    for dtype in target.dtypes:
        seen.setdefault(bytes_per_element(dtype), dtype)
    return tuple(seen.values())


def rows(batches: Batches, dtypes: tuple[str, ...] | None = None) -> Any:
    """``(op, dtype, i, workload name, prediction)`` for every workload (of ``dtypes``)."""
    for (op, dtype), (shapes, p) in batches.items():
        if dtypes is not None and dtype not in dtypes:
            continue
        for i in range(len(shapes)):
            yield op, dtype, i, workload_name(op, shapes[i], dtype), p


class Verdict:
    """Collects the cases of one invariant and keeps the worst violation."""

    def __init__(self, check: str, target: TargetSpec, ctx: CheckContext) -> None:
        self.check = check
        self.target = target
        self.ctx = ctx
        self.cases = 0
        self.violations = 0
        self.worst: dict[str, Any] | None = None
        self._score = -np.inf
        self.numbers: dict[str, Any] = {}

    def case(self, ok: bool, score: float = 0.0, **detail: Any) -> None:
        """One case; a violation with the largest ``score`` becomes the worst.
        ``detail`` holds ``text`` (one line), ``workload``, ``coefficient`` and
        the numbers of the case."""
        self.cases += 1
        if ok:
            return
        self.violations += 1
        if self.worst is None or score > self._score:
            self._score = score
            self.worst = detail

    def outcome(self, passed: str) -> Outcome:
        """Pass (``passed`` is the message) or fail naming the worst case."""
        numbers = {**self.numbers, "cases": self.cases}
        if self.worst is None:
            return outcome(
                self.check,
                self.target.key,
                True,
                passed,
                numbers=numbers,
                expected=self.ctx.expected(self.check, self.target.key),
            )
        worst = dict(self.worst)
        text = worst.pop("text")
        numbers.update(violations=self.violations, worst=worst)
        return outcome(
            self.check,
            self.target.key,
            False,
            f"{self.violations} of {self.cases} cases violate it; worst: {text}",
            numbers=numbers,
            workload=worst.get("workload"),
            coefficient=worst.get("coefficient"),
            expected=self.ctx.expected(self.check, self.target.key),
        )


def rel(a: float, b: float) -> float:
    """``|a - b|`` relative to the larger magnitude (0 when both are 0)."""
    scale = max(abs(a), abs(b))
    return abs(a - b) / scale if scale > 0 else 0.0


# --- 1. decomposition -------------------------------------------------------------


def decomposition(target: TargetSpec, ctx: CheckContext) -> list[Outcome]:
    """Energy terms sum to the energy within 0.1%; the latency terms sum to the
    latency, and compute + memory = exposed compute + exposed memory + hidden
    overlap (which is reported)."""
    batches = ctx.predict_all(target)
    first = next(iter(batches.values()))[1]
    if first.energy_compute_j is None or first.exposed_compute_s is None:
        reason = f"predictor {first.predictor!r} reports no terms"
        return [skipped("decomposition", target.key, reason)]
    energy = Verdict("decomposition.energy", target, ctx)
    latency = Verdict("decomposition.latency", target, ctx)
    hidden = 0.0
    for _, _, i, name, p in rows(batches):
        parts = float(p.energy_compute_j[i] + p.energy_per_tier_j[i].sum() + p.energy_static_j[i])
        total = float(p.energy_j[i])
        err = rel(parts, total)
        energy.case(
            err <= REL,
            err,
            text=f"{name}: terms sum to {parts:.6g} J, total {total:.6g} J ({err:.3%} apart)",
            workload=name,
            terms_j=parts,
            total_j=total,
        )
        terms = float(sum(getattr(p, t)[i] for t in LATENCY_TERMS if getattr(p, t) is not None))
        both = float(p.compute_s[i] + p.memory_s[i])
        split = float(p.exposed_compute_s[i] + p.exposed_memory_s[i] + p.hidden_s[i])
        err = max(rel(terms, float(p.latency_s[i])), rel(both, split))
        latency.case(
            err <= EXACT,
            err,
            text=f"{name}: latency terms sum to {terms:.6g} s, latency {p.latency_s[i]:.6g} s; "
            f"compute + memory {both:.6g} s, exposed + hidden {split:.6g} s",
            workload=name,
            terms_s=terms,
            latency_s=float(p.latency_s[i]),
        )
        hidden = max(hidden, float(p.hidden_s[i] / p.latency_s[i]))
    latency.numbers["hidden_overlap_max_share"] = hidden
    return [
        energy.outcome("compute + per-tier traffic + static energy = total (within 0.1%)"),
        latency.outcome(
            f"{' + '.join(t.removesuffix('_s') for t in LATENCY_TERMS)} = latency; hidden "
            f"overlap up to {hidden:.1%} of a latency"
        ),
    ]


# --- 2. monotonicity --------------------------------------------------------------


def _grown(op: str, shape: list[int]) -> list[tuple[int, list[int]]]:
    """``(axis, bigger shape)``: each dimension doubled and plus one."""
    out = []
    for axis in range(len(shape)):
        for bigger in (shape[axis] * 2, shape[axis] + 1):
            grown = list(shape)
            grown[axis] = bigger
            out.append((axis, grown))
    return out


def _leaves_narrow(p: Any, i: int, q: Any, j: int) -> bool:
    """Whether row ``i`` of ``p`` runs in its library's narrow kernel
    (``narrow_n_columns``) and its grown shape, row ``j`` of ``q``, does not:
    the step out to the lane kernel is faster (MKL's fp32 matmul of 11
    columns on the Zen 3 takes 2.8 times what 12 take), the one fall the
    model allows as N grows."""
    return bool(
        p.narrow_n is not None and p.narrow_n[i] and not (q.narrow_n is not None and q.narrow_n[j])
    )


def monotonicity(target: TargetSpec, ctx: CheckContext) -> list[Outcome]:
    """Latency and energy never fall as a dimension grows; memory time is
    linear in bytes above the latency floor at a fixed tier; adding a tier's
    traffic never lowers energy."""
    batches = ctx.predict_all(target)
    grow_latency = Verdict("monotonicity.latency", target, ctx)
    grow_energy = Verdict("monotonicity.energy", target, ctx)
    for (op, dtype), (shapes, p) in batches.items():
        pairs = [(i, axis, g) for i, s in enumerate(shapes.tolist()) for axis, g in _grown(op, s)]
        q = ctx.predict(target, op, [g for _, _, g in pairs], dtype)
        dims = ctx.op(op).dims
        for j, (i, axis, g) in enumerate(pairs):
            if _leaves_narrow(p, i, q, j):
                continue  # leaving the library's narrow kernel for its lane kernel: faster
            name = workload_name(op, shapes[i], dtype)
            to = f"{name} -> {'x'.join(map(str, g))} ({dims[axis]} grown)"
            for verdict, old, new, unit in (
                (grow_latency, p.latency_s[i], q.latency_s[j], "s"),
                (grow_energy, p.energy_j[i], q.energy_j[j], "J"),
            ):
                drop = float((old - new) / old) if old > 0 else 0.0
                verdict.case(
                    new >= old * (1 - EXACT),
                    drop,
                    text=f"{to}: {old:.6g} {unit} -> {new:.6g} {unit}",
                    workload=name,
                    grown_to="x".join(map(str, g)),
                    before=float(old),
                    after=float(new),
                )
    return [
        grow_latency.outcome(
            "latency never falls as M, K, N, B, IN, OUT or N grows (but out of a narrow kernel)"
        ),
        grow_energy.outcome("energy never falls as any dimension grows"),
        _memory_linear(target, ctx, batches),
        _tier_traffic(target, ctx, batches),
    ]


def _memory_linear(target: TargetSpec, ctx: CheckContext, batches: Batches) -> Outcome:
    """At a fixed tier, time / bytes is one constant wherever the time is above
    the tier's access-latency floor, once a matrix product's time is scaled by
    its library's share of the bandwidth (``product_bandwidth_fraction`` and the
    tier's ``product_fraction``), or by the row's own where the prediction
    gives one (a product reading B in place: ``in_place_fraction``; a GEMV
    beyond the innermost tier: ``gemv_fraction``)."""
    verdict = Verdict("monotonicity.memory_linear", target, ctx)
    tiers = ctx.memory_hierarchy(target)
    per_byte: dict[str, list[tuple[float, str]]] = {}
    for op, dtype, i, name, p in rows(batches):
        product = ctx.op(op).gemm_dims is not None
        for k, tier in enumerate(tiers):
            share = target.tier_share(tier, dtype, product)
            if p.row_bandwidth_bps is not None:  # a row at its own rate (in place, a GEMV)
                share = float(p.row_bandwidth_bps[i, k]) / tier.effective_bandwidth_bps
            moved, time = float(p.bytes_per_tier[i, k]), float(p.time_per_tier_s[i, k])
            if moved > 0 and time > tier.access_latency_ns * 1e-9 * (1 + EXACT):
                per_byte.setdefault(tier.name, []).append((time * share / moved, name))
    for tier in tiers:
        seen = per_byte.get(tier.name, [])
        if not seen:
            continue
        lo, hi = min(seen), max(seen)
        err = rel(lo[0], hi[0])
        verdict.case(
            err <= EXACT,
            err,
            text=f"tier {tier.name}: {lo[1]} moves a byte in {lo[0]:.6g} s, {hi[1]} in "
            f"{hi[0]:.6g} s",
            workload=hi[1],
            coefficient=f"tiers.{tier.name}.peak_bandwidth_bps",
        )
        verdict.numbers[f"{tier.name}_implied_bandwidth_bps"] = 1.0 / hi[0]
    return verdict.outcome("memory time is bytes / effective bandwidth at every tier")


def _tier_traffic(target: TargetSpec, ctx: CheckContext, batches: Batches) -> Outcome:
    """Each tier's traffic adds energy: its term is >= 0, and predicting with
    that tier's traffic free of charge never gives more energy."""
    verdict = Verdict("monotonicity.tier_traffic", target, ctx)
    shapes = shapes_of(batches)
    sizes = one_dtype_per_size(target)
    for k, tier in enumerate(target.tiers):
        free = list(target.tiers)
        free[k] = evolve(tier, energy_per_byte_j=0.0)
        without = ctx.predict_all(evolve(target, tiers=free), shapes, sizes)
        for op, dtype, i, name, p in rows(batches, sizes):
            term = float(p.energy_per_tier_j[i, k])
            less = float(without[(op, dtype)][1].energy_j[i])
            ok = term >= 0 and less <= float(p.energy_j[i]) * (1 + EXACT)
            verdict.case(
                ok,
                less - float(p.energy_j[i]) - term,
                text=f"{name}: tier {tier.name}'s traffic term {term:.6g} J; energy "
                f"{p.energy_j[i]:.6g} J with it, {less:.6g} J without",
                workload=name,
                coefficient=f"tiers.{tier.name}.energy_per_byte_j",
            )
    return verdict.outcome("every tier's traffic adds energy, never removes it")


# --- 3. precision scaling -----------------------------------------------------------

#: Cheaper to more expensive: int8 < fp16/bf16 < fp32.
PRECISION_LADDER: tuple[tuple[str, ...], ...] = (("int8",), ("fp16", "bf16"), ("fp32",))


def precision(target: TargetSpec, ctx: CheckContext) -> list[Outcome]:
    """For the same shape, int8 energy < fp16/bf16 < fp32 where the target has them."""
    levels = [[d for d in level if d in target.dtypes] for level in PRECISION_LADDER]
    levels = [level for level in levels if level]
    if len(levels) < 2:
        return [
            skipped(
                "precision",
                target.key,
                f"fewer than two of int8, fp16/bf16, fp32 (dtypes: {', '.join(target.dtypes)})",
            )
        ]
    union: dict[str, list[Any]] = {}
    for dtype in target.dtypes:
        for op, shapes in ctx.reference_shapes(target, dtype).items():
            union.setdefault(op, [])
            union[op] += [s for s in shapes if s not in union[op]]
    energy = {
        (op, dtype): ctx.predict(target, op, shapes, dtype).energy_j
        for op, shapes in union.items()
        for level in levels
        for dtype in level
    }
    verdict = Verdict("precision", target, ctx)
    for cheap_level, dear_level in zip(levels, levels[1:], strict=False):
        for cheap in cheap_level:
            for dear in dear_level:
                for op, shapes in union.items():
                    for i, shape in enumerate(shapes):
                        a, b = float(energy[(op, cheap)][i]), float(energy[(op, dear)][i])
                        name = workload_name(op, shape, cheap)
                        verdict.case(
                            a < b,
                            a / b if b > 0 else np.inf,
                            text=f"{op} {'x'.join(map(str, shape))}: {cheap} {a:.6g} J is not "
                            f"below {dear} {b:.6g} J",
                            workload=name,
                            coefficient=f"energy_per_op_j.{cheap}",
                            cheap_j=a,
                            dear_j=b,
                        )
    ladder = " < ".join("/".join(level) for level in levels)
    return [verdict.outcome(f"energy {ladder} for every shape")]


# --- 4. coefficient sensitivity -------------------------------------------------------


def _raise_tier(target: TargetSpec, k: int, name: str) -> TargetSpec:
    tiers = list(target.tiers)
    tiers[k] = evolve(tiers[k], **{name: getattr(tiers[k], name) * RAISE})
    return evolve(target, tiers=tiers)


def _energy_term(p: Prediction, what: str, i: int) -> float:
    if what == "compute":
        return float(p.energy_compute_j[i])
    if what == "static":
        return float(p.energy_static_j[i])
    return float(p.energy_per_tier_j[i, int(what)])


def sensitivity(target: TargetSpec, ctx: CheckContext) -> list[Outcome]:
    """An energy coefficient raised by 10% raises its own term by 10% (within
    0.1%) and the total by no more than that; a peak or bandwidth raised by 10%
    divides its own time term by 1.1 where the term is above its latency floor,
    and the latency moves by no more than the term did."""
    base = ctx.predict_all(target)
    shapes = shapes_of(base)
    passed = {
        "sensitivity.energy_per_op": "each dtype's energy per op",
        "sensitivity.static_power": "the idle power",
        "sensitivity.energy_per_byte": "each tier's energy per byte",
    }
    energy_checks = {
        "sensitivity.energy_per_op": [
            (
                f"energy_per_op_j.{d}",
                d,
                "compute",
                evolve(
                    target,
                    energy_per_op_j={
                        **target.energy_per_op_j,
                        d: target.energy_per_op_j[d] * RAISE,
                    },
                ),
            )
            for d in target.dtypes
        ],
        "sensitivity.static_power": [
            (
                "idle_power_w",
                None,
                "static",
                evolve(
                    target,
                    idle_power_w=target.idle_power_w * RAISE,
                    tdp_w=max(target.tdp_w, target.idle_power_w * RAISE),
                ),
            )
        ],
        "sensitivity.energy_per_byte": [
            (
                f"tiers.{t.name}.energy_per_byte_j",
                None,
                str(k),
                _raise_tier(target, k, "energy_per_byte_j"),
            )
            for k, t in enumerate(target.tiers)
        ],
    }
    out = []
    for check, cases in energy_checks.items():
        verdict = Verdict(check, target, ctx)
        for coefficient, only_dtype, term_name, raised in cases:
            dtypes = (only_dtype,) if only_dtype else one_dtype_per_size(target)
            moved = ctx.predict_all(raised, shapes, dtypes)
            for op, dtype, i, name, p in rows(base, dtypes):
                q = moved[(op, dtype)][1]
                before, after = _energy_term(p, term_name, i), _energy_term(q, term_name, i)
                ratio = after / before if before > 0 else (RAISE if after == 0 else np.inf)
                delta = float(q.energy_j[i] - p.energy_j[i])
                share = (RAISE - 1) * before
                ok = abs(ratio - RAISE) <= REL * RAISE and abs(delta) <= share * (1 + REL) + 1e-30
                verdict.case(
                    ok,
                    abs(ratio - RAISE) + abs(delta) / max(share, 1e-300),
                    text=f"{name}: {coefficient} x{RAISE}: its term {before:.6g} -> {after:.6g} J "
                    f"(x{ratio:.4f}), total moved {delta:.6g} J (its share {share:.6g} J)",
                    workload=name,
                    coefficient=coefficient,
                    term_ratio=ratio,
                    total_delta_j=delta,
                    term_share_j=share,
                )
        out.append(
            verdict.outcome(
                f"{passed[check]} x1.1 raises its own term by 10% and the total by that much"
            )
        )
    out += _throughput_sensitivity(target, ctx, base, shapes)
    return out


def _throughput_sensitivity(
    target: TargetSpec, ctx: CheckContext, base: Batches, shapes: dict
) -> list[Outcome]:
    tiers = ctx.memory_hierarchy(target)
    peak = Verdict("sensitivity.peak", target, ctx)
    for d in target.dtypes:
        # the dtype's compute rate: its peak, and its vector rate where the spec
        # gives one (an op with no product runs at that instead)
        vector = dict(target.vector_ops_per_s)
        if d in vector:
            vector[d] *= RAISE
        # ... and the framework's own product kernel, timed per output and per
        # multiply-add (a TLB miss of its column walk included), 1.1 x as fast
        own = {
            name: {**getattr(target, name), d: getattr(target, name)[d] / RAISE}
            for name in target.REFERENCE
            if d in getattr(target, name)
        }
        walk = target.page_walk_s
        raised = evolve(
            target,
            peak_ops_per_s={**target.peak_ops_per_s, d: target.peak_ops_per_s[d] * RAISE},
            vector_ops_per_s=vector,
            **own,
            page_walk_s=walk / RAISE if own and walk is not None else walk,
        )
        moved = ctx.predict_all(raised, shapes, (d,))
        for op, dtype, i, name, p in rows(base, (d,)):
            q = moved[(op, dtype)][1]
            rate = "vector_ops_per_s" if p.vector_rate else "peak_ops_per_s"
            if p.reference_kernel is not None and p.reference_kernel[i]:
                rate = "reference_*_s"
            _time_case(
                peak,
                name,
                f"{rate}.{d}",
                p.compute_s[i],
                q.compute_s[i],
                0.0,
                p.latency_s[i],
                q.latency_s[i],
            )
    bandwidth = Verdict("sensitivity.bandwidth", target, ctx)
    for k, tier in enumerate(target.tiers):
        sizes = one_dtype_per_size(target)
        moved = ctx.predict_all(_raise_tier(target, k, "peak_bandwidth_bps"), shapes, sizes)
        floor = tiers[k].access_latency_ns * 1e-9
        for op, dtype, i, name, p in rows(base, sizes):
            q = moved[(op, dtype)][1]
            _time_case(
                bandwidth,
                name,
                f"tiers.{tier.name}.peak_bandwidth_bps",
                p.time_per_tier_s[i, k],
                q.time_per_tier_s[i, k],
                floor,
                p.latency_s[i],
                q.latency_s[i],
                # packing reads B through the same tier: its drop moves the latency too
                max(float(p.pack_s[i] - q.pack_s[i]), 0.0),
            )
    return [
        peak.outcome(
            "peak (or vector rate) x1.1 divides compute time by 1.1; latency moves by at most "
            "as much"
        ),
        bandwidth.outcome(
            "bandwidth x1.1 divides a tier's time by 1.1 above its latency floor; latency moves "
            "by at most as much, plus what packing B through the tier gains"
        ),
    ]


def _time_case(
    verdict: Verdict,
    name: str,
    coefficient: str,
    before: float,
    after: float,
    floor: float,
    latency_before: float,
    latency_after: float,
    also_moved: float = 0.0,
) -> None:
    before, after = float(before), float(after)
    if before / RAISE > floor * (1 + EXACT):
        want = before / RAISE
    elif before <= floor * (1 + EXACT):
        want = before  # at the floor: raising the bandwidth changes nothing
    else:
        want = max(before / RAISE, floor)  # crosses down onto the floor
    err = rel(after, want)
    moved = abs(float(latency_after) - float(latency_before))
    allowed = (before - after + also_moved) * (1 + REL) + 1e-18
    verdict.case(
        err <= REL and moved <= allowed,
        err + moved / max(allowed, 1e-300),
        text=f"{name}: {coefficient} x{RAISE}: its term {before:.6g} -> {after:.6g} s "
        f"(expected {want:.6g} s), latency moved {moved:.6g} s (its term moved "
        f"{before - after:.6g} s)",
        workload=name,
        coefficient=coefficient,
        term_before_s=before,
        term_after_s=after,
        latency_delta_s=moved,
    )


# --- 5. physical bounds ------------------------------------------------------------------

_ARRAYS = (
    "latency_s",
    "energy_j",
    "launch_s",
    "compute_s",
    "memory_s",
    "exposed_compute_s",
    "exposed_memory_s",
    "first_touch_s",
    "pack_s",
    "hidden_s",
    "bytes_per_tier",
    "time_per_tier_s",
    "energy_compute_j",
    "energy_per_tier_j",
    "energy_static_j",
    "utilisation",
)


def bounds(target: TargetSpec, ctx: CheckContext) -> list[Outcome]:
    """Achieved FLOP/s and per-tier bandwidth never above peak, average power
    never above TDP, no negative, NaN or infinite output."""
    batches = ctx.predict_all(target)
    tiers = ctx.memory_hierarchy(target)
    flops = Verdict("bounds.flops", target, ctx)
    bandwidth = Verdict("bounds.bandwidth", target, ctx)
    power = Verdict("bounds.power", target, ctx)
    finite = Verdict("bounds.finite", target, ctx)
    highest = 0.0
    for _, p in batches.values():
        _finite(finite, p)
    for _, dtype, i, name, p in rows(batches):
        latency = float(p.latency_s[i])
        if p.flops is not None:
            achieved, ceiling = float(p.flops[i]) / latency, target.peak_ops_per_s[dtype]
            flops.case(
                achieved <= ceiling * (1 + EXACT),
                achieved / ceiling,
                text=f"{name}: {achieved:.6g} op/s above the {dtype} peak {ceiling:.6g}",
                workload=name,
                coefficient=f"peak_ops_per_s.{dtype}",
                achieved=achieved,
                peak=ceiling,
            )
        if p.bytes_per_tier is not None:
            for k, tier in enumerate(tiers):
                achieved = float(p.bytes_per_tier[i, k]) / latency
                bandwidth.case(
                    achieved <= tier.peak_bandwidth_bps * (1 + EXACT),
                    achieved / tier.peak_bandwidth_bps,
                    text=f"{name}: {achieved:.6g} B/s from {tier.name}, above its peak "
                    f"{tier.peak_bandwidth_bps:.6g}",
                    workload=name,
                    coefficient=f"tiers.{tier.name}.peak_bandwidth_bps",
                    achieved=achieved,
                    peak=tier.peak_bandwidth_bps,
                )
        watts = float(p.energy_j[i]) / latency
        highest = max(highest, watts)
        culprit = _largest_energy_term(p, i, dtype, tiers)
        power.case(
            watts <= target.tdp_w * (1 + EXACT),
            watts / target.tdp_w,
            text=f"{name}: average power {watts:.4g} W above TDP {target.tdp_w:g} W "
            f"(largest term: {culprit})",
            workload=name,
            coefficient=culprit,
            watts=watts,
            tdp_w=target.tdp_w,
        )
    power.numbers.update(highest_average_power_w=highest, tdp_w=target.tdp_w)
    return [
        flops.outcome("achieved op/s never above the dtype's peak"),
        bandwidth.outcome("bytes per second from every tier never above its peak"),
        power.outcome(f"average power at most {highest:.4g} W, within TDP {target.tdp_w:g} W"),
        finite.outcome("no negative, NaN or infinite output"),
    ]


def _finite(verdict: Verdict, p: Prediction) -> None:
    """One case per output array of a batch: every value finite and >= 0."""
    for array in _ARRAYS:
        values = getattr(p, array)
        if values is None:
            continue
        v = np.asarray(values, dtype=np.float64).reshape(len(p), -1)
        good = np.all(np.isfinite(v) & (v >= 0), axis=1)
        i = int(np.argmin(good))
        name = workload_name(p.op, p.shapes[i], p.dtype)
        verdict.case(
            bool(good.all()),
            float((~good).sum()),
            text=f"{name}: {array} = {v[i].tolist()}",
            workload=name,
        )


def _largest_energy_term(p: Prediction, i: int, dtype: str, tiers: Any) -> str:
    """The coefficient behind the largest energy term of workload ``i``."""
    if p.energy_compute_j is None:
        return "energy_j"
    terms = {
        f"energy_per_op_j.{dtype}": float(p.energy_compute_j[i]),
        "idle_power_w": float(p.energy_static_j[i]),
    }
    for k, tier in enumerate(tiers):
        terms[f"tiers.{tier.name}.energy_per_byte_j"] = float(p.energy_per_tier_j[i, k])
    return max(terms, key=terms.__getitem__)
