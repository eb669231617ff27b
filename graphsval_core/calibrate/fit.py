"""The latency fit: the constants :func:`~graphsval_core.calibrate.params.choose_params`
picks, fitted jointly by robust non-linear least squares on
``log(predicted / measured)`` (scipy's ``least_squares``, soft-L1 loss).

The fit holds each tier at least as fast as the tier outside it (a penalty
residual that is zero while bandwidth falls outward): a cache slower than the
memory behind it would explain rows by a constant that means nothing. A tier
the rows never make bind keeps its spec value unless that would make it faster
than the fitted tier inside it; then it is held at that tier's bandwidth.

Everything is deterministic: the rows are fitted in a canonical order, from
fixed starting points, so the same rows give the same constants whatever the
order of the files.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from attrs import define, field

from graphsval_core.calibrate.params import SHARES, Param, choose_params
from graphsval_core.calibrate.rows import canonical, predict_rows
from graphsval_core.datamodel.target import TargetSpec
from graphsval_core.files.baseline import BaselineRow
from graphsval_core.files.calibration import apply_constants, is_fraction

#: How hard the fit holds each tier at least as fast as the one outside it.
HIERARCHY_WEIGHT = 10.0
#: The finite-difference step of the Jacobian, in log terms (a 0.01% change).
JACOBIAN_STEP = 1e-4
#: Where the extra starts put a shared cache's usable capacity, as a share of
#: its usual start (a quarter of the capacity the spec gives): the host's VM
#: reports a 480 MiB L3, and its fit has optima near 30 MB and near 140 MB.
CAPACITY_START = 1 / 8
#: The soft-L1 loss's scale: rows off by more than this count linearly (robust to outliers).
F_SCALE = 0.05
#: Another start's optimum whose cost is within this share of the best one's
#: fits the rows as well: the rows do not choose between the two.
RIVAL_COST = 0.01
#: A constant that differs between two such optima by more than this factor
#: (a share: by more than :data:`RIVAL_SHARE` of its range from 0 to 1) is not
#: pinned by the rows, however small its uncertainty at the chosen optimum.
RIVAL_RATIO = 1.25
RIVAL_SHARE = 0.25


@define
class Rival:
    """A constant's value at another start's optimum that fits the rows as
    well as the chosen one (as :attr:`Fit.values` holds it: a fraction as a
    multiplier of the spec's value), and that optimum's cost over the chosen
    one's (at least 1, at most ``1 + RIVAL_COST``)."""

    value: float
    cost_ratio: float


@define
class Fit:
    """A latency fit: the fitted values (fractions as multipliers of the spec's
    value) and their relative uncertainty, the rows in canonical order with
    the fitted model's latency and relative error of each, the constants
    tried, those the rows do not move, and those held by the hierarchy."""

    values: dict[str, float]
    uncertainty: dict[str, float]
    residuals: np.ndarray
    params: list[Param]
    rows: list[BaselineRow]
    predicted: np.ndarray = field(factory=lambda: np.zeros(0))
    x: np.ndarray = field(factory=lambda: np.zeros(0))
    not_identifiable: list[str] = field(factory=list)
    held: dict[str, str] = field(factory=dict)
    #: per constant, where another optimum of (almost) the same cost puts it
    rivals: dict[str, Rival] = field(factory=dict)
    #: each start's end, in the order started: its cost and log values (as :attr:`x`)
    ends: list[tuple[float, np.ndarray]] = field(factory=list)


def _values(params: Sequence[Param], x: np.ndarray) -> dict[str, float]:
    return {p.name: float(math.exp(v)) for p, v in zip(params, x, strict=True)}


def apart(name: str, a: float, b: float) -> float:
    """How far apart two fitted values of constant ``name`` are, in units of
    what the rows must tell apart: a share (:data:`SHARES`) by the part of
    its range between them over :data:`RIVAL_SHARE`, any other constant by
    the log of their ratio over that of :data:`RIVAL_RATIO`. Above 1: apart."""
    if name.startswith(SHARES):
        return abs(a - b) / RIVAL_SHARE
    return abs(math.log(a / b)) / math.log(RIVAL_RATIO)


def _rivals(params: Sequence[Param], ends: Sequence[Any], best: Any) -> dict[str, Rival]:
    """Per constant, the farthest value (beyond :func:`apart`'s 1) that
    another start's optimum gives it, among those whose cost is within
    :data:`RIVAL_COST` of the ``best`` one's (``ends``: each start's result)."""
    out: dict[str, Rival] = {}
    for end in ends:
        if end is best or not end.cost <= best.cost * (1 + RIVAL_COST):
            continue  # (a cost that is not a number is no rival either)
        for i, p in enumerate(params):
            ours, theirs = math.exp(best.x[i]), math.exp(end.x[i])
            gap = apart(p.name, ours, theirs)
            known = out.get(p.name)
            if gap > 1 and (known is None or gap > apart(p.name, ours, known.value)):
                out[p.name] = Rival(theirs, float(end.cost / best.cost) if best.cost else 1.0)
    return out


def _hierarchy_penalty(spec: TargetSpec) -> np.ndarray:
    """A tier slower than the one outside it is not a cache: one residual per
    adjacent pair, zero while bandwidth falls outward, growing steeply (in
    log terms) when an inner tier's fitted bandwidth drops below the outer's."""
    bw = np.array([t.effective_bandwidth_bps for t in spec.tiers])
    return HIERARCHY_WEIGHT * np.maximum(0.0, np.log(bw[1:] / bw[:-1]))


def _hold_hierarchy(
    spec: TargetSpec, values: dict[str, float]
) -> tuple[dict[str, float], dict[str, str]]:
    """A tier whose bandwidth the fit did not set (the rows never make it bind)
    keeps its spec value unless that leaves it faster than the tier inside it
    was fitted to be: then it is held at the inner tier's bandwidth, the most
    a cache behind that one can deliver. A fitted tier the soft hierarchy
    penalty left faster than the tier inside it is held there too."""
    values = dict(values)
    held: dict[str, str] = {}
    for k in range(1, len(spec.tiers)):
        name = f"tiers.{spec.tiers[k].name}.achievable_fraction"
        fitted = apply_constants(spec, values, "fit")
        inner = fitted.tiers[k - 1].effective_bandwidth_bps
        if fitted.tiers[k].effective_bandwidth_bps <= inner:
            continue
        if name in values:
            values[name] *= inner / fitted.tiers[k].effective_bandwidth_bps
            held[name] = (
                f"held at the fitted {spec.tiers[k - 1].name} bandwidth: the fit left it "
                "faster than the tier inside it (its penalty is soft)"
            )
            continue
        values[name] = inner / spec.tiers[k].effective_bandwidth_bps
        held[name] = (
            f"held at the fitted {spec.tiers[k - 1].name} bandwidth: the rows do not "
            "move it, and its spec value would make it faster than the tier inside it"
        )
    return values, held


def _starts(params: Sequence[Param]) -> list[np.ndarray]:
    """Where :func:`fit_latency` starts (log values): the spec's values and
    fractions (and :data:`SHARES`) of a half and a quarter of them, and, where a shared cache's
    usable capacity is fitted, the first two again with that capacity at
    :data:`CAPACITY_START` of its start."""
    base = np.log([p.value for p in params])
    fraction = np.array([is_fraction(p.name) or p.name.startswith(SHARES) for p in params])
    starts = [base + np.where(fraction, np.log(scale), 0.0) for scale in (1.0, 0.5, 0.25)]
    capacity = np.array([p.name.endswith("usable_capacity_bytes") for p in params])
    if capacity.any():  # a shared cache's usable capacity has optima far apart
        starts += [s + np.where(capacity, np.log(CAPACITY_START), 0.0) for s in starts[:2]]
    return starts


def _keep_shared_first_touch(
    spec: TargetSpec, values: dict[str, float], all_values: dict[str, float]
) -> None:
    """An op's own first-touch rate needs the shared one beside it: where
    these rows do not move ``first_touch_bps`` (a refit without the family
    that held every fresh product) and the spec gives none, it keeps the
    value the fit started from (for a refit, the full fit's) rather than
    leaving a spec the rates cannot be applied to."""
    own = any(name.startswith("vector_first_touch_bps.") for name in values)
    shared = all_values.get("first_touch_bps")
    kept = "first_touch_bps" in values or spec.first_touch_bps is not None
    if own and shared is not None and not kept:
        values["first_touch_bps"] = shared


def _dtype_of(name: str, dtypes: set[str]) -> str | None:
    """The dtype a per-dtype constant ``<name>.<dtype>`` belongs to, where
    ``dtypes`` (the rows') hold it; None for any other constant."""
    head, _, tail = name.rpartition(".")
    if not head or name.startswith("tiers."):
        return None
    return tail if tail in dtypes else None


class Objective:
    """The fit's residuals over ``rows`` (canonical order) as functions of the
    log values ``x`` of ``params``: log(predicted / measured) per row, then
    the hierarchy penalty; and their Jacobian."""

    def __init__(
        self, registry: Any, spec: TargetSpec, rows: Sequence[BaselineRow], params: Sequence[Param]
    ) -> None:
        self.registry, self.spec, self.rows, self.params = registry, spec, list(rows), params
        self.measured = np.array([r.latency_s for r in rows], dtype=np.float64)
        self.hi = np.log([p.upper for p in params])
        #: the positions of each dtype's rows, and the rows themselves
        self.index = {
            d: np.array([i for i, r in enumerate(rows) if r.dtype == d])
            for d in sorted({r.dtype for r in rows})
        }
        self.of_dtype = {d: [self.rows[i] for i in where] for d, where in self.index.items()}
        #: per constant, the dtype whose rows alone it moves (None: any row)
        self.owners = [_dtype_of(p.name, set(self.index)) for p in params]

    def _spec(self, x: np.ndarray) -> TargetSpec:
        return apply_constants(self.spec, _values(self.params, x), "fit")

    def residuals(self, x: np.ndarray) -> np.ndarray:
        candidate = self._spec(x)
        latency, _ = predict_rows(self.registry, candidate, self.rows)
        return np.concatenate([np.log(latency / self.measured), _hierarchy_penalty(candidate)])

    def jacobian(self, x: np.ndarray, sparse: bool = True) -> np.ndarray:
        """Forward differences with an absolute step in log terms (scipy's
        relative step would vanish for a multiplier near 1, whose log is
        near 0, and wrongly call that constant unidentifiable); backward
        where the forward step would leave the bounds. A constant of one
        dtype moves only that dtype's rows and no tier: with ``sparse``, its
        column predicts those rows alone, and the others keep the zeros a
        whole evaluation gives them (the same columns, a third of the work
        on a host of three dtypes)."""
        f0 = self.residuals(x)
        n = len(self.rows)
        jac = np.zeros((f0.size, x.size))
        for i in range(x.size):
            h = JACOBIAN_STEP if x[i] + JACOBIAN_STEP <= self.hi[i] else -JACOBIAN_STEP
            moved = x.copy()
            moved[i] += h
            dtype = self.owners[i]
            if dtype is None or not sparse:
                jac[:, i] = (self.residuals(moved) - f0) / h
                continue
            candidate = self._spec(moved)
            latency, _ = predict_rows(self.registry, candidate, self.of_dtype[dtype])
            where = self.index[dtype]
            jac[where, i] = (np.log(latency / self.measured[where]) - f0[where]) / h
            jac[n:, i] = (_hierarchy_penalty(candidate) - f0[n:]) / h
        return jac


def fit_latency(
    registry: Any,
    spec: TargetSpec,
    rows: Sequence[BaselineRow],
    params: Sequence[Param] | None = None,
    x_start: np.ndarray | None = None,
) -> Fit:
    """Robust least squares on log(predicted / measured) over ``rows``.

    The rows are put in a canonical order first and, unless ``x_start`` is
    given, the fit starts from the spec's values and from fractions of a half
    and a quarter of them (and, where a shared cache's usable capacity is
    fitted, from two of those with that capacity an eighth as large),
    keeping the best: the objective has several optima and the answer must
    not depend on the order of the files. A constant the
    rows do not move (a zero column of the Jacobian) is not identifiable: it
    is left out of the values and keeps its spec value.
    """
    from scipy.optimize import least_squares

    rows = canonical(rows)
    params = list(params if params is not None else choose_params(registry, spec, rows))
    objective = Objective(registry, spec, rows, params)
    measured = objective.measured
    residuals, jacobian = objective.residuals, objective.jacobian
    lo = np.log([p.lower for p in params])
    hi = objective.hi

    starts = [x_start] if x_start is not None else _starts(params)
    best = None
    ends = []
    for start in starts:
        result = least_squares(
            residuals,
            np.clip(start, lo, hi),
            bounds=(lo, hi),
            loss="soft_l1",
            f_scale=F_SCALE,
            x_scale=1.0,
            jac=jacobian,
            max_nfev=400,
        )
        ends.append(result)
        if best is None or result.cost < best.cost - 1e-12:
            best = result
    assert best is not None
    jac = best.jac[: len(rows)]  # the rows' part (the hierarchy penalty follows)
    fun = best.fun[: len(rows)]
    columns = np.linalg.norm(jac, axis=0)
    identifiable = columns > 1e-6 * max(float(columns.max()), 1e-300)
    scale = 1.4826 * float(np.median(np.abs(fun))) if len(fun) else 0.0
    sigma = np.full(len(params), np.inf)
    if identifiable.any():
        sub = jac[:, identifiable]
        cov = np.linalg.pinv(sub.T @ sub) * scale**2
        sigma[identifiable] = np.sqrt(np.clip(np.diag(cov), 0, None))
    all_values = _values(params, best.x)
    values = {
        p.name: v for p, v, ok in zip(params, all_values.values(), identifiable, strict=True) if ok
    }
    uncertainty = {p.name: float(sg) for p, sg in zip(params, sigma, strict=True)}
    _keep_shared_first_touch(spec, values, all_values)
    values, held = _hold_hierarchy(spec, values)
    fitted = apply_constants(spec, values, "fit")
    predicted, _ = predict_rows(registry, fitted, rows)
    return Fit(
        values,
        uncertainty,
        (predicted - measured) / measured,
        params,
        list(rows),
        predicted,
        x=best.x,
        not_identifiable=[
            p.name
            for p, ok in zip(params, identifiable, strict=True)
            if not ok and p.name not in held
        ],
        held=held,
        rivals={n: r for n, r in _rivals(params, ends, best).items() if n in values},
        ends=[(float(end.cost), np.array(end.x)) for end in ends],
    )
