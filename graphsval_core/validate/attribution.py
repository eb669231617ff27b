"""Drift attribution for failing heatmap cells (:mod:`graphsval_core.validate.cells`).

For a failing cell the attribution names the constant that regime validates,
the direction and median size of the latency error, and the value of that
constant the measurements imply (the model's value scaled by the ratio of the
model's term to the measured time less launch):

- ``alu_bound``: the achievable peak of the cell's dtype (its vector rate for
  an op with no matrix product, where the spec gives one);
- a tier regime: that tier's effective bandwidth;
- ``launch_bound``: the dtype's GEMV team cost over the GEMVs that pay one
  of their own (``gemv_fork_join_s``), the dtype's dispatch overhead over
  the other calls that pay it (a matrix product its dtype's library runs;
  a product that accumulates onto C, its accumulating call, the dispatch
  and the dtype's ``accumulate_overhead_s``, where the spec gives one),
  and the launch overhead over the rest (a product too small for the
  library, an op with no library): one drift per constant; the measured time
  less everything else the model puts in the call falls on that one constant;
- energy failures: the static power (measured energy less the model's dynamic
  energy, over the measured time).

A failing cell whose median signed error is *centred* (within a quarter of
the cell's band, :data:`CENTRED_FRACTION`) names no moved constant: the
constant is right on average and the rows scatter around it (a term the model
lacks, not a drifted constant), so the sentence gives the spread instead:
p10..p90 of the signed errors and how many rows lie beyond the band on each
side. An off-centre cell whose implied constant is within
:data:`HOLDS_CHANGE` of the model's says the constant holds and the error
comes from another term (for energy, most often the predicted latency).

A record whose predictor does not report the term a constant is inferred from
(a predictor with no compute or memory breakdown) adds nothing to that figure.

The constants above are the target spec's, which the reference model uses.
Another predictor's cells are attributed to the constants it declares
(:class:`~graphsval_core.plugins.records.PredictorConstant`, per target, op
and dtype): each constant of the cell's regime (or of every regime) that
governs the failing quantity, with the value the measurements imply by its
unit (:func:`implied_declared`). A failing cell for which the predictor
declares no such constant names the error and its spread, and says that no
constant can be named.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from attrs import frozen

from graphsval_core.datamodel.regimes import ALU_BOUND, LAUNCH_BOUND, regime_tier
from graphsval_core.datamodel.units import fmt_seconds, fmt_si
from graphsval_core.plugins.records import PredictorConstant
from graphsval_core.validate.cells import (
    PER_DTYPE,
    VERDICTS,
    Cell,
    add_cells,
    build_cells,
    cell_label,
    cell_order,
    dtype_order,
    split_label,
)

__all__ = [
    "CENTRED_FRACTION",
    "HOLDS_CHANGE",
    "PER_DTYPE",
    "VERDICTS",
    "Cell",
    "Drift",
    "add_cells",
    "attribute",
    "build_cells",
    "cell_label",
    "cell_order",
    "dtype_order",
    "implied_declared",
    "split_label",
]

#: A failing cell's median signed error is centred when within this share of
#: its band: the constant holds on average, the rows scatter.
CENTRED_FRACTION = 0.25
#: A constant whose implied value is within this share of the model's holds:
#: an off-centre cell's error then comes from another term.
HOLDS_CHANGE = 0.02


@frozen
class Drift:
    """The value of one constant that a cell's measurements imply, and the
    spread of the cell's signed errors (``error_kind``: latency or energy)
    around their median: p10 and p90, and how many of the ``rows`` judged lie
    beyond the ``band`` on the over- and the under-predicting side."""

    constant: str
    unit: str
    model: float
    implied: float
    shapes: int
    median_error: float
    error_kind: str = "latency"
    band: float = float("nan")
    p10: float = float("nan")
    p90: float = float("nan")
    over: int = 0
    under: int = 0
    rows: int = 0
    #: the drift times some of the cell's calls only (a launch cell's GEMVs, its
    #: library's calls, its products too small for the library): the spread is theirs
    part: bool = False
    #: a cell pooling dtypes (a memory tier's): per dtype, the median value its
    #: records imply and how many imply one, so a drift of one dtype's share of
    #: the tier shows apart from a drift of the tier
    by_dtype: tuple[tuple[str, float, int], ...] = ()

    @property
    def change(self) -> float:
        return self.implied / self.model - 1.0 if self.model else float("nan")

    @property
    def centred(self) -> bool:
        """The median error is within :data:`CENTRED_FRACTION` of the band:
        no constant moved, the rows scatter around a right one."""
        return bool(abs(self.median_error) <= CENTRED_FRACTION * self.band)

    def _fmt(self, v: float) -> str:
        return fmt_seconds(v) if self.unit == "s" else fmt_si(v, self.unit)

    @property
    def holds(self) -> bool:
        """The implied constant is within :data:`HOLDS_CHANGE` of the model's:
        the cell's error does not come from this constant."""
        return bool(abs(self.change) < HOLDS_CHANGE)

    def _by_dtype_text(self, head: str = "; by dtype ", tail: str = "") -> str:
        """``; by dtype fp32 -9%, bf16 -15%``: each dtype's implied value
        against the model's (+: its rows imply a faster rate), for a cell
        that pools two or more ("" for any other)."""
        if len(self.by_dtype) < 2 or not self.model:
            return ""
        each = ", ".join(f"{d} {v / self.model - 1:+.0%}" for d, v, _ in self.by_dtype)
        return f"{head}{each}{tail}"

    def text(self) -> str:
        if not self.constant:
            return self._unnamed_text()
        if not self.shapes or not np.isfinite(self.implied):
            return (
                f"{self.constant} (model {self._fmt(self.model)}): no shape implies a value "
                f"(its predictions or measurements are not finite and positive numbers), so "
                f"no drift can be named over {self.rows} shape{'s' if self.rows != 1 else ''}"
            )
        if self.centred:
            return self._centred_text()
        direction = "over" if self.median_error > 0 else "under"
        if self.holds:
            return (
                f"{self.constant} (model {self._fmt(self.model)}) holds: the measurements "
                f"imply {self._fmt(self.implied)} ({self.change:+.1%}{self._by_dtype_text()}) "
                f"over {self.shapes} "
                f"shape{'s' if self.shapes != 1 else ''}, yet the model {direction}-predicts "
                f"{self.error_kind} by {abs(self.median_error):.0%} (median): the error comes "
                "from another term (for energy, most often the latency the model predicts), "
                "not from this constant"
            )
        direction = "over" if self.median_error > 0 else "under"
        return (
            f"{self.constant}: model {self._fmt(self.model)}, measurements imply "
            f"{self._fmt(self.implied)} ({self.change:+.0%}{self._by_dtype_text()}) over "
            f"{self.shapes} shape{'s' if self.shapes != 1 else ''}; the model {direction}-predicts "
            f"{self.error_kind} by {abs(self.median_error):.0%} (median)"
        )

    def _unnamed_text(self) -> str:
        """A cell whose predictor declares no constant for it."""
        direction = "over" if self.median_error > 0 else "under"
        return (
            f"the predictor declares no {self.error_kind} constant for this cell, so no "
            f"constant can be named: the model {direction}-predicts {self.error_kind} by "
            f"{abs(self.median_error):.0%} (median) over {self.rows} "
            f"shape{'s' if self.rows != 1 else ''} (p10..p90 {self.p10:+.0%}..{self.p90:+.0%})"
        )

    def _centred_text(self) -> str:
        spread = f"p10..p90 {self.p10:+.0%}..{self.p90:+.0%}"
        if self.over or self.under:
            tail = (
                f"the rows scatter ({spread}; {self.over} over- and {self.under} "
                f"under-predicted beyond the band, of {self.rows}): a missing term, "
                "not a drifted constant"
            )
        elif self.part:
            tail = (
                f"every row it times is within the band ({spread}): the cell fails on its "
                "other calls"
            )
        else:
            tail = f"every row is within the band ({spread}): the cell fails on its regime verdict"
        return (
            f"{self.constant} (model {self._fmt(self.model)}) holds on average"
            f"{self._by_dtype_text(' (by dtype the rows imply ', ')')}: median "
            f"{self.error_kind} error {self.median_error:+.0%}, centred (within a quarter of "
            f"the {self.band:.0%} band); {tail}"
        )


def _median(values: Any) -> float:
    values = np.asarray(values, dtype=np.float64)
    return float(np.median(values)) if values.size else float("nan")


def _spread(errors: Any, bands: Any) -> dict[str, Any]:
    """What :class:`Drift` says of the signed ``errors`` (NaN: not judged)
    against their ``bands``: the median, the band, p10, p90, the rows beyond
    the band on each side."""
    errors = np.asarray(errors, dtype=np.float64)
    bands = np.asarray(bands, dtype=np.float64)
    judged = np.isfinite(errors)
    errors, bands = errors[judged], bands[judged]
    if not errors.size:
        return {"median_error": float("nan"), "rows": 0}
    p10, p90 = np.percentile(errors, [10, 90])
    return {
        "median_error": float(np.median(errors)),
        "band": _median(bands),
        "p10": float(p10),
        "p90": float(p90),
        "over": int(np.sum(errors > bands)),
        "under": int(np.sum(errors < -bands)),
        "rows": int(errors.size),
    }


def _latency_spread(cell: Cell, rows: np.ndarray | None = None) -> dict[str, Any]:
    """The spread of the cell's latency errors (of ``rows`` only, a mask, where given)."""
    error, band = cell.column("latency_error"), cell.column("tolerance_latency")
    if rows is not None:
        error, band = error[rows], band[rows]
    return _spread(error, band)


def _compute_drifts(cell: Cell) -> list[Drift]:
    """The achievable peak of the cell's dtype, or its vector rate where the
    model ran the cell's op (one with no matrix product) at it, or the rate of
    the framework's own product kernel where no GEMM library runs the product
    (its ops over its time: the ``reference_*_s`` times scale inversely). A
    cell holding products of both kernels (a library's, and those too small
    for it) gives one drift for each, as each tells its own rate."""
    implied = cell.implied()
    if not implied.size:
        return []
    dtype = cell.dtype or ""
    kinds, implied_kinds = cell.column("vector_rate"), cell.implied_kinds()
    present = sorted(set(implied_kinds.tolist()))
    several = len(present) > 1
    out = []
    for kind in present:
        rows = kinds == kind
        # an elementwise op's rate counts its ops (one an element), as `targets` shows it
        unit = "OP/s" if dtype.startswith("int") or kind == 1.0 else "FLOP/s"
        rate = {1.0: "vector rate", 2.0: "own kernel rate"}.get(kind, "achievable peak")
        # the own kernel's rate differs from shape to shape: its records' median
        models = cell.column("achievable_ops_per_s")[rows]
        model = _median(models) if kind == 2.0 or several else cell.first["model"]
        out.append(
            Drift(
                f"{rate} {dtype}",
                unit,
                model,
                _median(implied[implied_kinds == kind]),
                int(np.sum(implied_kinds == kind)),
                **_latency_spread(cell, rows if several else None),
                part=several,
            )
        )
    return out


def _launch_drifts(cell: Cell) -> list[Drift]:
    """The launch constant of the cell's dtype: its dispatch overhead over the
    calls that pay one, and the launch overhead over the others (products too
    small for the library; every call of an op with no library): the
    measured time less compute or memory and the rest of the fixed time, less
    the launch the model adds beyond that one constant (further kernels, a
    thread team). A GEMV that pays a team cost of its own (MKL's sgemv) is
    that cost's call instead. One drift for each constant some calls pay."""
    dispatch = cell.column("dispatch_s")
    accumulate = cell.column("accumulating_call_s")
    gemv_team = cell.column("gemv_team_s")
    gemv = np.isfinite(gemv_team)
    paid = np.isfinite(dispatch) & ~gemv
    accumulating = np.isfinite(accumulate) & ~gemv
    rest = ~paid & ~accumulating & ~gemv
    known = cell.column("known").astype(bool)
    launch = cell.column("launch_overhead_s")
    if not np.isfinite(launch[rest]).all():  # records built without the constants
        launch = cell.column("launch_s")
    out = []
    # then each drift tells its own calls' errors
    several = sum(bool(group.any()) for group in (gemv, paid, accumulating, rest)) > 1
    # beside the library's calls, the others are products too small for it: say so, or a
    # line of the same cell reads as if the cell's launch overhead had moved
    # (a GEMV the library runs pays its dispatch too: it counts among the library's calls)
    library = bool(np.isfinite(dispatch).any() or np.isfinite(accumulate).any())
    small = f" (products too small for the {cell.dtype} library)" if library and rest.any() else ""
    for rows, constant, name in (
        (known & gemv, gemv_team, f"GEMV fork/join {cell.dtype}"),
        (known & paid, dispatch, f"dispatch overhead {cell.dtype}"),
        (
            known & accumulating,
            accumulate,
            f"accumulating call {cell.dtype} (dispatch + accumulate_overhead_s)",
        ),
        (known & rest, launch, f"launch overhead{small}"),
    ):
        implied = np.maximum(0.0, (cell.column("rest") + constant)[rows])
        if implied.size:
            out.append(
                Drift(
                    name,
                    "s",
                    _median(constant[rows]),
                    _median(implied),
                    int(implied.size),
                    **_latency_spread(cell, rows if several else None),
                    part=several,
                )
            )
    return out


def _tier_drifts(cell: Cell) -> list[Drift]:
    """The binding tier's effective bandwidth; every dtype's share of it
    scales with it, so the cell pools dtypes, and the median bandwidth each
    dtype's rows imply goes beside it (one dtype's share that drifted alone
    shows there)."""
    tier = regime_tier(cell.regime) or cell.regime
    implied = cell.implied()
    if not implied.size:
        return []
    return [
        Drift(
            f"{tier.upper()} bandwidth",
            "B/s",
            cell.first["model"],
            _median(implied),
            int(implied.size),
            **_latency_spread(cell),
            by_dtype=_by_dtype(cell),
        )
    ]


def _by_dtype(cell: Cell) -> tuple[tuple[str, float, int], ...]:
    """Per dtype of the cell (in the usual dtype order), the median value its
    records imply and how many imply one."""
    implied, dtypes = cell.implied(), cell.implied_dtypes()
    assert len(dtypes) == len(implied), "a tier's cell keeps the dtype of each implied rate"
    return tuple(
        (d, _median(implied[dtypes == d]), int(np.sum(dtypes == d)))
        for d in sorted(set(dtypes.tolist()), key=dtype_order)
    )


def _energy_drifts(cell: Cell) -> list[Drift]:
    """The static power: measured energy less the model's dynamic energy, over
    the measured time."""
    implied = cell.energy("implied")
    return [
        Drift(
            "static power",
            "W",
            cell.first["static_power_w"],
            _median(implied),
            int(implied.size),
            error_kind="energy",
            **_spread(cell.energy("energy_error"), cell.energy("tolerance_energy")),
        )
    ]


#: A predictor's declared constants per (hardware, op, dtype); None: it declares none.
Declared = Mapping[tuple[str, str, str], "tuple[PredictorConstant, ...] | None"]


def implied_declared(columns: Mapping[str, np.ndarray], constant: PredictorConstant) -> np.ndarray:
    """The value of a declared constant each record's measurement implies
    (``columns``: the fields a cell keeps of its records for a declared
    predictor, by name).

    A rate (unit ending in ``/s``) scales inversely with the time it governs:
    the term the predictor reports for the regime where it has one (compute
    for ``alu_bound``, memory for a tier), else its whole predicted latency.
    A time (``s``) adds to the latency; a power (``W``) adds the energy the
    model misses over the measured time; any other unit scales with the
    quantity (measured over predicted)."""
    value = float(constant.value)
    if constant.quantity == "energy":
        measured, predicted = columns["energy_measured_j"], columns["energy_predicted_j"]
    else:
        measured, predicted = columns["latency_measured_s"], columns["latency_predicted_s"]
    ok = np.isfinite(measured) & np.isfinite(predicted) & (measured > 0) & (predicted > 0)
    latency = constant.quantity == "latency"
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # huge: not finite, left
        if latency and constant.unit.endswith("/s"):
            term = columns["compute_s"] if constant.regime == ALU_BOUND else columns["memory_s"]
            rest = measured - np.nan_to_num(columns["fixed_s"])
            reported = np.isfinite(term) & (rest > 0)
            implied = np.where(reported, value * term / rest, value * predicted / measured)
        elif latency and constant.unit == "s":
            implied = value + (measured - predicted)
        elif constant.unit == "W":
            implied = value + (measured - predicted) / columns["latency_measured_s"]
        else:
            implied = value * measured / predicted
    return implied[ok & np.isfinite(implied)]


def _declared_drifts(cell: Cell, declared: Declared) -> list[Drift]:
    """A failing cell of a predictor other than the reference: one drift per
    declared constant that governs the failing quantity in the cell's regime,
    and one that names no constant for the dtypes it declares none for."""
    out: list[Drift] = []
    kinds = []
    if cell.fails("latency") or cell.fails("regime"):
        kinds.append("latency")
    if cell.fails("energy"):
        kinds.append("energy")
    every = {name: cell.column(name) for name in cell.kept()}
    for kind in kinds:
        recs = every
        if kind == "energy":
            judged = cell.column("judged").astype(bool)
            recs = {name: values[judged] for name, values in every.items()}
        by_constant: dict[PredictorConstant, list[str]] = {}
        unnamed: list[str] = []
        for dtype in sorted(set(recs["dtype"].tolist()), key=dtype_order):
            mine = [
                c
                for c in declared.get((cell.hardware, cell.op, dtype)) or ()
                if c.quantity == kind and c.regime in (None, cell.regime)
            ]
            for constant in mine:
                by_constant.setdefault(constant, []).append(dtype)
            if not mine:
                unnamed.append(dtype)
        errors = "energy_error" if kind == "energy" else "latency_error"
        bands = "tolerance_energy" if kind == "energy" else "tolerance_latency"
        for constant, dtypes in by_constant.items():
            sub = _of_dtypes(recs, dtypes)
            implied = implied_declared(sub, constant)
            out.append(
                Drift(
                    constant.name,
                    constant.unit,
                    float(constant.value),
                    _median(implied),
                    int(implied.size),
                    error_kind=kind,
                    **_spread(sub[errors], sub[bands]),
                )
            )
        if unnamed:
            sub = _of_dtypes(recs, unnamed)
            spread = _spread(sub[errors], sub[bands])
            nan = float("nan")
            out.append(Drift("", "", nan, nan, spread["rows"], error_kind=kind, **spread))
    return out


def _of_dtypes(columns: dict[str, np.ndarray], dtypes: list[str]) -> dict[str, np.ndarray]:
    mask = np.isin(columns["dtype"].astype(str), dtypes)
    return {name: values[mask] for name, values in columns.items()}


def attribute(cell: Cell, declared: Declared | None = None) -> list[Drift]:
    """The drifted constant(s) of a cell (empty for a passing cell).

    ``declared``: the constants a predictor other than the reference declares
    (see the module doc); None for the reference model, whose constants are
    the target spec's."""
    if cell.ok:
        return []
    if declared is not None:
        return _declared_drifts(cell, declared)
    drifts: list[Drift] = []
    if cell.fails("latency") or cell.fails("regime"):
        if cell.regime == ALU_BOUND:
            drifts += _compute_drifts(cell)
        elif cell.regime == LAUNCH_BOUND:
            drifts += _launch_drifts(cell)
        else:
            drifts += _tier_drifts(cell)
    if cell.fails("energy"):
        drifts += _energy_drifts(cell)
    return drifts
