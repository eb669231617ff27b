"""The nine built-in consistency checks, registered through the
``graphsval_consistency_checks`` hook like any plugin's checks, for every target.

1. decomposition, 2. monotonicity, 3. precision scaling, 4. coefficient
sensitivity, 5. physical bounds (:mod:`graphsval_core.consistency.model_checks`);
6. ranking within a family, 7. energy per op across architectures
(:mod:`graphsval_core.consistency.cross`); 8. snapshot regression
(:mod:`graphsval_core.consistency.snapshot`); 9. provenance audit (here).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from graphsval_core import hookimpl
from graphsval_core.datamodel.target import TargetSpec
from graphsval_core.plugins.records import ConsistencyCheck

if TYPE_CHECKING:
    from graphsval_core.consistency.context import CheckContext
    from graphsval_core.datamodel.outcome import Outcome


def provenance(target: TargetSpec, ctx: CheckContext) -> list[Outcome]:
    """Every peak, bandwidth, energy per op and energy per byte carries
    provenance of a known kind with a source."""
    from graphsval_core.datamodel.outcome import outcome
    from graphsval_core.datamodel.provenance import PROVENANCE_KINDS, Provenance

    fields: list[tuple[str, Any]] = []
    for dtype in target.dtypes:
        for name in (f"peak_ops_per_s.{dtype}", f"energy_per_op_j.{dtype}"):
            fields.append((name, target.provenance.get(name)))
    for tier in ctx.memory_hierarchy(target):
        for name in ("peak_bandwidth_bps", "energy_per_byte_j"):
            fields.append((f"tiers.{tier.name}.{name}", tier.provenance.get(name)))
    kinds: dict[str, int] = {}
    missing = []
    for name, prov in fields:
        if not isinstance(prov, Provenance) or prov.kind not in PROVENANCE_KINDS or not prov.source:
            missing.append(name)
        else:
            kinds[prov.kind] = kinds.get(prov.kind, 0) + 1
    summary = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
    message = f"{len(fields)} coefficients sourced ({summary})"
    if missing:
        message = f"{len(missing)} coefficients carry no provenance with a source: " + ", ".join(
            missing
        )
    return [
        outcome(
            "provenance",
            target.key,
            not missing,
            message,
            numbers={"kinds": kinds, "missing": missing},
            coefficient=missing[0] if missing else None,
            expected=ctx.expected("provenance", target),
        )
    ]


def _lazy(module: str, name: str) -> Any:
    """A check's ``run`` that imports its module on first use (loading the
    built-in plugins stays cheap)."""

    def run(target: TargetSpec, ctx: CheckContext) -> Any:
        import importlib

        return getattr(importlib.import_module(module), name)(target, ctx)

    return run


_MODEL = "graphsval_core.consistency.model_checks"
CHECKS: tuple[tuple[str, str, str, str], ...] = (
    ("decomposition", _MODEL, "decomposition", "energy and latency terms sum to the totals"),
    ("monotonicity", _MODEL, "monotonicity", "nothing gets cheaper as a dimension grows"),
    ("precision", _MODEL, "precision", "int8 energy < fp16/bf16 < fp32 for the same shape"),
    ("sensitivity", _MODEL, "sensitivity", "a coefficient raised by 10% moves its own term"),
    ("bounds", _MODEL, "bounds", "never above peak, bandwidth or TDP; no NaN or negative"),
    (
        "ranking",
        "graphsval_core.consistency.cross",
        "ranking",
        "a family's bigger part is not slower, in the same power mode",
    ),
    (
        "energy_ranking",
        "graphsval_core.consistency.cross",
        "energy_ranking",
        "systolic/domain-flow < GPU < CPU energy per int8 op, at a comparable node and class",
    ),
    (
        "snapshot",
        "graphsval_core.consistency.snapshot",
        "snapshot",
        "predictions within 1% of the committed snapshot",
    ),
    ("provenance", __name__, "provenance", "every coefficient carries provenance"),
)


@hookimpl
def graphsval_consistency_checks(target: TargetSpec) -> Iterable[ConsistencyCheck]:
    """The nine built-in checks, for every target."""
    return [
        ConsistencyCheck(name=name, description=description, run=_lazy(module, function))
        for name, module, function, description in CHECKS
    ]
