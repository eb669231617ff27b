"""Built-in checks that compare targets.

6. **Ranking within a family**, in power modes of the same class: a ranked
   part (``TargetSpec.family_rank``, written by its plugin) is not slower than
   the installed ranked part just below it in its family on a large matmul, at
   every shared dtype.
7. **Energy per op across architectures** for a large int8 matmul, between
   parts of the same process node and power class (``TargetSpec.power_class``):
   systolic and domain-flow below GPU below CPU. Where datasheet figures
   contradict this, the plugin declares it as a known finding
   (``graphsval_expected_failures``) and the check reports an expected failure
   with the reason; coefficients are never bent.

Each pair is reported once, on the target expected to be faster (6) or
cheaper (7).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from graphsval_core.consistency.reference_shapes import MATMULS, workload_name
from graphsval_core.datamodel.outcome import Outcome, outcome, skipped

if TYPE_CHECKING:
    from graphsval_core.consistency.context import CheckContext
    from graphsval_core.datamodel.target import TargetSpec

#: Relative slack of "not slower" (the two may be equal: H200 and H100 share a die).
SLACK = 1e-9

#: The large matmul of the comparisons.
LARGE = MATMULS["large"]

#: Expected energy order of architectures: lower is cheaper per op.
ARCHITECTURE_ORDER: dict[str, int] = {"systolic": 0, "domain_flow": 0, "gpu": 1, "cpu": 2}


def _mode(target: TargetSpec) -> str | None:
    """The power mode class a part runs in (its mode when the plugin gives no class)."""
    return target.power_mode_class or target.power_mode


def below_in_family(target: TargetSpec, installed: dict[str, TargetSpec]) -> TargetSpec | None:
    """The installed ranked part of ``target``'s family just below it, or None.
    A detected target (this machine's, which follows the machine) is compared
    with no part."""
    if target.family_rank is None or target.detected:
        return None
    lower = [
        t
        for t in installed.values()
        if t.family == target.family
        and not t.detected
        and t.family_rank is not None
        and t.family_rank < target.family_rank
    ]
    return max(lower, key=lambda t: (t.family_rank, t.key), default=None)


def ranking(target: TargetSpec, ctx: CheckContext) -> list[Outcome]:
    """``target`` is not slower than the part below it in its family."""
    below = below_in_family(target, ctx.targets())
    if below is None:
        return []
    check = f"ranking:{below.key}"
    if _mode(target) != _mode(below):
        reason = (
            f"power modes differ ({target.key} {target.power_mode}, {below.key} {below.power_mode})"
        )
        return [skipped(check, target.key, reason)]
    shared = [d for d in target.dtypes if d in below.dtypes]
    if not shared:
        return [skipped(check, target.key, f"no dtype shared with {below.key}")]
    numbers: dict[str, dict[str, float]] = {}
    slower = []
    for dtype in shared:
        mine = float(ctx.predict(target, "matmul", [LARGE], dtype).latency_s[0])
        theirs = float(ctx.predict(below, "matmul", [LARGE], dtype).latency_s[0])
        numbers[dtype] = {target.key: mine, below.key: theirs}
        if mine > theirs * (1 + SLACK):
            slower.append((mine / theirs, dtype, mine, theirs))
    message = f"not slower than {below.key} on matmul {_shape()} at {', '.join(shared)}"
    workload = None
    if slower:
        ratio, dtype, mine, theirs = max(slower)
        workload = workload_name("matmul", LARGE, dtype)
        message = (
            f"{target.key} is slower than {below.key} on {workload}: {mine:.6g} s vs "
            f"{theirs:.6g} s (x{ratio:.3f})"
        )
    return [
        outcome(
            check,
            target.key,
            not slower,
            message,
            numbers={"latency_s": numbers, "power_mode": target.power_mode},
            workload=workload,
            coefficient="peak_ops_per_s / tier bandwidths" if slower else None,
            expected=ctx.expected(check, target),
        )
    ]


def _shape() -> str:
    return "x".join(map(str, LARGE))


def energy_per_op(ctx: CheckContext, target: TargetSpec, dtype: str = "int8") -> float:
    """Predicted joules per op of the large matmul."""
    p = ctx.predict(target, "matmul", [LARGE], dtype)
    return float(p.energy_j[0] / p.flops[0])


def dearer_in_class(target: TargetSpec, installed: dict[str, TargetSpec]) -> list[TargetSpec]:
    """The installed parts of ``target``'s power class whose architecture is
    expected to spend more energy per op, cheapest architecture first."""
    mine = ARCHITECTURE_ORDER.get(target.architecture)
    if target.power_class is None or mine is None or target.detected:
        return []
    dearer = [
        t
        for t in installed.values()
        if t.power_class == target.power_class
        and not t.detected
        and ARCHITECTURE_ORDER.get(t.architecture, -1) > mine
    ]
    return sorted(dearer, key=lambda t: (ARCHITECTURE_ORDER[t.architecture], t.key))


def energy_ranking(target: TargetSpec, ctx: CheckContext) -> list[Outcome]:
    """``target`` spends less energy per int8 op on a large matmul than every
    part of a more expensive architecture in its power class."""
    out: list[Outcome] = []
    for other in dearer_in_class(target, ctx.targets()):
        check = f"energy_ranking:{other.key}"
        lacking = [t.key for t in (target, other) if "int8" not in t.dtypes]
        if lacking:
            reason = f"{' and '.join(lacking)} declare(s) no int8 peak; not compared"
            out.append(skipped(check, target.key, reason))
            continue
        mine, theirs = energy_per_op(ctx, target), energy_per_op(ctx, other)
        ok = mine < theirs
        relation = "below" if ok else "not below"
        out.append(
            outcome(
                check,
                target.key,
                ok,
                f"{target.architecture} {target.key} {mine * 1e12:.3g} pJ/op {relation} "
                f"{other.architecture} {other.key} {theirs * 1e12:.3g} pJ/op "
                f"({target.power_class})",
                numbers={
                    "workload": workload_name("matmul", LARGE, "int8"),
                    "joules_per_op": {target.key: mine, other.key: theirs},
                    "energy_per_op_j": {
                        target.key: target.energy_per_op_j["int8"],
                        other.key: other.energy_per_op_j["int8"],
                    },
                    "power_class": target.power_class,
                },
                workload=workload_name("matmul", LARGE, "int8"),
                coefficient="energy_per_op_j.int8",
                expected=ctx.expected(check, target),
            )
        )
    return out
