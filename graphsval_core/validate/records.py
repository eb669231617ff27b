"""Validation records: one typed schema, stored column by column.

One record per baseline row (DESIGN.md section 6), counted, flagged or
excluded, never dropped. :class:`Records` holds them as one numpy array per
field, so a batch of shapes stays a batch from the prediction to the report;
the fields, their kinds and their order are declared once, here, and every
format (``report.json``, ``records.csv``, the Markdown and text reports) is
written from this schema.

Kinds of column: ``text`` (strings, None where absent), ``number`` (float64,
NaN where absent), ``flag`` (True, False or None: a verdict not made) and
``count`` (integers). A record's ``status`` is ``checked``, ``excluded``
(failed capture or correctness check: not predicted) or ``suspect`` (predicted,
but its latency is physically implausible: out of pass/fail; an implausible
energy only skips the energy verdict, see
:mod:`graphsval_core.model.plausibility`). The last fields are the
prediction's structured terms: launch, compute, memory and their overlap,
first touch, packing, and per tier (l1, l2, l3, dram: the only tier names)
the bytes it serves, its memory time and its traffic's energy, with the
energy of compute and the static energy. :class:`Terms` holds, for the same records, the model's
terms that drift attribution needs (not part of the public schema).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import attrs
import numpy as np
from attrs import field, frozen

TEXT = "text"
NUMBER = "number"
FLAG = "flag"
COUNT = "count"

CHECKED = "checked"
EXCLUDED = "excluded"
#: judged, but its latency is physically implausible: excluded from pass/fail
SUSPECT = "suspect"


def column(kind: str, doc: str) -> Any:
    """A public field of the record schema."""
    return field(metadata={"kind": kind, "doc": doc, "public": True})


def _empty(kind: str, n: int) -> np.ndarray:
    if kind == NUMBER:
        return np.full(n, np.nan)
    if kind == COUNT:
        return np.zeros(n, dtype=np.int64)
    return np.full(n, None, dtype=object)


def _array(kind: str, values: Any, n: int) -> np.ndarray:
    """``values`` (a sequence, an array or one scalar for every record) as a column."""
    if values is None:
        return _empty(kind, n)
    if kind == NUMBER:
        out = np.asarray(values, dtype=np.float64)
    elif kind == COUNT:
        out = np.asarray(values, dtype=np.int64)
    else:
        out = np.empty(n, dtype=object)
        if isinstance(values, np.ndarray):
            out[:] = values.tolist()  # plain Python str, bool and None, never numpy scalars
        elif isinstance(values, str | bool) or not isinstance(values, Sequence):
            out[:] = [values] * n
        else:
            out[:] = list(values)
    return np.broadcast_to(out, (n,)).copy() if out.shape != (n,) else out


@frozen(kw_only=True)
class Terms:
    """What drift attribution needs of each record's prediction (NaN: the
    predictor did not report that term, or the record was excluded)."""

    launch_s: np.ndarray
    #: the dtype's own dispatch overhead where the call's first kernel pays it
    #: (a matrix product at a dtype with a dispatch path of its own), else NaN
    dispatch_s: np.ndarray
    #: the dtype's library call where it accumulates onto C and costs more for
    #: it (its dispatch plus the dtype's ``accumulate_overhead_s``), else NaN
    accumulating_call_s: np.ndarray
    #: the target's launch overhead: the first kernel of every other call
    launch_overhead_s: np.ndarray
    #: the dtype's GEMV team cost where the call is a GEMV above the grain that
    #: pays one of its own (``TargetSpec.gemv_fork_join_s``), else NaN
    gemv_team_s: np.ndarray
    #: launch, first touch and packing: the time outside compute and memory
    fixed_s: np.ndarray
    compute_s: np.ndarray
    memory_s: np.ndarray
    energy_compute_j: np.ndarray
    energy_static_j: np.ndarray
    energy_traffic_j: np.ndarray
    flops: np.ndarray
    #: the binding tier's effective bandwidth
    tier_bandwidth_bps: np.ndarray
    #: the compute rate the model used: the dtype's vector rate for an op with no
    #: matrix product where the spec gives one (``vector_rate`` 1), the framework's
    #: own product kernel's, its ops over its time (``vector_rate`` 2: a product no
    #: GEMM library runs, timed per output and per multiply-add), else the
    #: achievable peak (``vector_rate`` 0)
    achievable_ops_per_s: np.ndarray
    vector_rate: np.ndarray
    static_power_w: np.ndarray

    @classmethod
    def empty(cls, n: int) -> Terms:
        return cls(**{a.name: np.full(n, np.nan) for a in attrs.fields(cls)})

    def take(self, index: Any) -> Terms:
        return Terms(**{a.name: getattr(self, a.name)[index] for a in attrs.fields(Terms)})

    @classmethod
    def concat(cls, parts: Sequence[Terms]) -> Terms:
        return cls(
            **{
                a.name: np.concatenate([getattr(p, a.name) for p in parts])
                for a in attrs.fields(cls)
            }
        )


@frozen(kw_only=True)
class Records:
    """Validation records, one array per field (see module doc)."""

    hardware: np.ndarray = column(TEXT, "target key")
    op: np.ndarray = column(TEXT, "op name")
    shape: np.ndarray = column(TEXT, "shape string, dims joined by x")
    dtype: np.ndarray = column(TEXT, "data type")
    status: np.ndarray = column(
        TEXT,
        "checked, excluded (failed capture or check, unsupported dtype) or suspect "
        "(implausible latency)",
    )
    passed: np.ndarray = column(FLAG, "every verdict made passed (None when excluded)")
    regime_predicted: np.ndarray = column(TEXT, "the model's own regime, never ambiguous")
    near_boundary: np.ndarray = column(FLAG, "within 20% of a regime boundary")
    regime_measured: np.ndarray = column(TEXT, "inferred from the measurement, or ambiguous")
    latency_predicted_s: np.ndarray = column(NUMBER, "predicted latency (s)")
    latency_measured_s: np.ndarray = column(NUMBER, "measured latency (s)")
    latency_error: np.ndarray = column(NUMBER, "(predicted - measured) / measured")
    energy_predicted_j: np.ndarray = column(NUMBER, "predicted energy (J)")
    energy_measured_j: np.ndarray = column(NUMBER, "measured energy (J), None when absent")
    energy_error: np.ndarray = column(NUMBER, "(predicted - measured) / measured")
    pass_regime: np.ndarray = column(FLAG, "regimes agree (None: near a boundary or unplaced)")
    pass_latency: np.ndarray = column(FLAG, "latency within the regime's tolerance")
    pass_energy: np.ndarray = column(FLAG, "energy within tolerance (None: skipped)")
    energy_skip_reason: np.ndarray = column(TEXT, "why energy was not judged")
    tolerance_latency: np.ndarray = column(NUMBER, "the predicted regime's latency tolerance")
    tolerance_energy: np.ndarray = column(NUMBER, "the predicted regime's energy tolerance")
    binding_tier: np.ndarray = column(TEXT, "the tier the model streams from")
    explanation: np.ndarray = column(TEXT, "the model's explanation in one sentence")
    excluded_reason: np.ndarray = column(TEXT, "why the row was excluded")
    suspect: np.ndarray = column(TEXT, "implausible quantities: 'latency: why; energy: why'")
    in_sample: np.ndarray = column(FLAG, "calibration rows validated for want of others")
    purpose: np.ndarray = column(TEXT, "calibration or validation")
    file: np.ndarray = column(TEXT, "the baseline file")
    line: np.ndarray = column(COUNT, "the row's line in that file")
    notes: np.ndarray = column(TEXT, "the baseline row's notes")
    # --- the prediction's structured terms (absent: the predictor does not report it)
    launch_s: np.ndarray = column(NUMBER, "launch: the call's kernels and thread team (s)")
    compute_s: np.ndarray = column(NUMBER, "compute time (s)")
    memory_s: np.ndarray = column(NUMBER, "memory time: the binding tier's (s)")
    exposed_compute_s: np.ndarray = column(NUMBER, "compute time not hidden under memory (s)")
    exposed_memory_s: np.ndarray = column(NUMBER, "memory time not hidden under compute (s)")
    hidden_s: np.ndarray = column(NUMBER, "the overlapped time (s)")
    first_touch_s: np.ndarray = column(NUMBER, "first touch of a fresh output (s)")
    pack_s: np.ndarray = column(
        NUMBER, "packing B (and an A from main memory) for the GEMM library (s)"
    )
    flops: np.ndarray = column(NUMBER, "operations of the call (FLOP or OP)")
    working_set_bytes: np.ndarray = column(NUMBER, "operands and output (B)")
    residency_tier: np.ndarray = column(TEXT, "the tier the reused tile lives in")
    bytes_l1: np.ndarray = column(NUMBER, "bytes the l1 tier serves (B)")
    bytes_l2: np.ndarray = column(NUMBER, "bytes the l2 tier serves (B)")
    bytes_l3: np.ndarray = column(NUMBER, "bytes the l3 tier serves (B)")
    bytes_dram: np.ndarray = column(NUMBER, "bytes dram serves (B)")
    memory_l1_s: np.ndarray = column(NUMBER, "the l1 tier's memory time (s)")
    memory_l2_s: np.ndarray = column(NUMBER, "the l2 tier's memory time (s)")
    memory_l3_s: np.ndarray = column(NUMBER, "the l3 tier's memory time (s)")
    memory_dram_s: np.ndarray = column(NUMBER, "dram's memory time (s)")
    energy_compute_j: np.ndarray = column(NUMBER, "energy of the operations (J)")
    energy_l1_j: np.ndarray = column(NUMBER, "energy of the l1 tier's traffic (J)")
    energy_l2_j: np.ndarray = column(NUMBER, "energy of the l2 tier's traffic (J)")
    energy_l3_j: np.ndarray = column(NUMBER, "energy of the l3 tier's traffic (J)")
    energy_dram_j: np.ndarray = column(NUMBER, "energy of dram's traffic (J)")
    energy_static_j: np.ndarray = column(NUMBER, "static (idle) power over the latency (J)")
    terms: Terms = field(metadata={"public": False})

    def __len__(self) -> int:
        return int(self.hardware.shape[0])

    # --- building -----------------------------------------------------------------

    @classmethod
    def build(cls, n: int, terms: Terms | None = None, **values: Any) -> Records:
        """``n`` records: each named field from a sequence, an array or one value
        for all; unnamed fields absent (None, NaN)."""
        kwargs: dict[str, Any] = {}
        for name, kind in PUBLIC_KINDS.items():
            kwargs[name] = _array(kind, values.pop(name, None), n)
        if values:
            raise TypeError(f"not record fields: {', '.join(sorted(values))}")
        return cls(**kwargs, terms=terms if terms is not None else Terms.empty(n))

    @classmethod
    def concat(cls, parts: Sequence[Records]) -> Records:
        """The records of ``parts``, in order."""
        if not parts:
            return cls.build(0)
        return cls(
            **{name: np.concatenate([getattr(p, name) for p in parts]) for name in PUBLIC_KINDS},
            terms=Terms.concat([p.terms for p in parts]),
        )

    def take(self, index: Any) -> Records:
        """The records at ``index`` (an index array or a boolean mask)."""
        return Records(
            **{name: getattr(self, name)[index] for name in PUBLIC_KINDS},
            terms=self.terms.take(index),
        )

    # --- reading ------------------------------------------------------------------

    @property
    def checked(self) -> np.ndarray:
        """Mask of the records that were checked (not excluded, not suspect)."""
        return self.status == CHECKED

    @property
    def predicted(self) -> np.ndarray:
        """Mask of the records the predictor ran on: checked or suspect."""
        return self.status != EXCLUDED

    def value(self, name: str, i: int) -> Any:
        """Field ``name`` of record ``i`` as a plain Python value (None where absent)."""
        return _plain(PUBLIC_KINDS[name], getattr(self, name)[i])

    def row(self, i: int) -> dict[str, Any]:
        """Record ``i`` as a JSON-ready dict of the public fields, in schema order."""
        return {name: self.value(name, i) for name in PUBLIC_KINDS}

    def rows(self) -> Iterator[dict[str, Any]]:
        """Every record as :meth:`row` gives it."""
        for i in range(len(self)):
            yield self.row(i)


def _plain(kind: str, value: Any) -> Any:
    if kind == NUMBER:
        return None if np.isnan(value) else float(value)
    if kind == COUNT:
        return int(value)
    return value


#: The public fields of a record and their kinds, in schema order.
PUBLIC_KINDS: dict[str, str] = {
    a.name: a.metadata["kind"] for a in attrs.fields(Records) if a.metadata.get("public")
}
#: The public fields' names, in the order ``report.json`` and ``records.csv`` use.
RECORD_FIELDS: tuple[str, ...] = tuple(PUBLIC_KINDS)
