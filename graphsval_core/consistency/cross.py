"""Built-in checks that compare targets (issue 8, checks 6 and 7).

6. **Ranking within a family**, in the same power mode: a newer or bigger part
   is not slower than the one below it on large matmuls at every shared dtype.
7. **Energy per op across architectures** for a large int8 matmul, at a
   comparable process node and power class (hardware-facts.md): systolic and
   domain-flow below GPU below CPU. Where datasheet figures contradict this
   expectation the check reports an expected failure with its reason
   (:mod:`graphsval_core.consistency.expected`); coefficients are never bent.

Each pair is reported once, on the target expected to be faster (6) or
cheaper (7); the other target need not be installed (the pair is then absent).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from attrs import frozen

from graphsval_core.consistency.expected import expected
from graphsval_core.consistency.runner import (
    MATMULS,
    Outcome,
    outcome,
    predict,
    skipped,
    workload_name,
)

if TYPE_CHECKING:
    from graphsval_core.datamodel.target import TargetSpec
    from graphsval_core.plugins.registry import Registry

#: Relative slack of "not slower" (the two may be equal: H200 and H100 share a die).
SLACK = 1e-9

#: Families, slowest first (issue 8): each part must not be slower than the one before it.
FAMILY_LADDERS: tuple[tuple[str, ...], ...] = (
    ("a100_sxm4_80gb", "h100_sxm5_80gb", "h200_sxm_141gb"),
    ("kpu_t64", "kpu_t256", "kpu_t768"),
    ("jetson_orin_nano_8gb", "jetson_orin_nx_16gb", "jetson_orin_agx_64gb"),
)

#: Power modes that are the same mode across a family's parts: each Orin part's
#: maximum-performance mode (the AGX has no Super mode; its MAXN is its top mode,
#: as MAXN_SUPER is the Nano's and NX's; hardware-facts.md compares them there).
MODE_CLASSES: dict[str, str] = {"MAXN": "max", "MAXN_SUPER": "max", "max": "max"}

#: The large matmul of the comparisons.
LARGE = MATMULS["large"]


@frozen
class PowerClass:
    """Targets at a comparable process node and power class (hardware-facts.md)."""

    name: str
    members: tuple[str, ...]


#: Where the cross-architecture energy comparison is meaningful. TPU v4 is not
#: compared with H100 (7 nm vs 4 nm, see hardware-facts.md).
POWER_CLASSES: tuple[PowerClass, ...] = (
    PowerClass("7 nm datacenter", ("tpu_v4", "a100_sxm4_80gb")),
    PowerClass("edge, tens of watts", ("kpu_t256", "jetson_orin_agx_64gb", "i7_12700k")),
)

#: Expected energy order of architectures: lower is cheaper per op.
ARCHITECTURE_ORDER: dict[str, int] = {"systolic": 0, "domain_flow": 0, "gpu": 1, "cpu": 2}


def _mode(target: TargetSpec) -> str | None:
    mode = target.power_mode
    return MODE_CLASSES.get(mode, mode) if mode else None


def ranking(target: TargetSpec, registry: Registry) -> list[Outcome]:
    """``target`` is not slower than the part below it in its family."""
    out: list[Outcome] = []
    installed = registry.targets()
    for ladder in FAMILY_LADDERS:
        if target.key not in ladder or ladder.index(target.key) == 0:
            continue
        below = installed.get(ladder[ladder.index(target.key) - 1])
        if below is None:
            continue
        check = f"ranking:{below.key}"
        if _mode(target) != _mode(below):
            reason = (
                f"power modes differ ({target.key} {target.power_mode}, "
                f"{below.key} {below.power_mode})"
            )
            out.append(skipped(check, target.key, reason))
            continue
        shared = [d for d in target.dtypes if d in below.dtypes]
        if not shared:
            out.append(skipped(check, target.key, f"no dtype shared with {below.key}"))
            continue
        numbers: dict[str, dict[str, float]] = {}
        slower = []
        for dtype in shared:
            mine = float(predict(registry, target, "matmul", [LARGE], dtype).latency_s[0])
            theirs = float(predict(registry, below, "matmul", [LARGE], dtype).latency_s[0])
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
        out.append(
            outcome(
                check,
                target.key,
                not slower,
                message,
                numbers={"latency_s": numbers, "power_mode": target.power_mode},
                workload=workload,
                coefficient="peak_ops_per_s / tier bandwidths" if slower else None,
                expected=expected(check, target.key),
            )
        )
    return out


def _shape() -> str:
    return "x".join(map(str, LARGE))


def energy_per_op(registry: Registry, target: TargetSpec, dtype: str = "int8") -> float:
    """Predicted joules per op of the large matmul."""
    p = predict(registry, target, "matmul", [LARGE], dtype)
    return float(p.energy_j[0] / p.flops[0])


def energy_ranking(target: TargetSpec, registry: Registry) -> list[Outcome]:
    """``target`` spends less energy per int8 op on a large matmul than every
    target of a more expensive architecture in its power class."""
    out: list[Outcome] = []
    installed = registry.targets()
    mine_rank = ARCHITECTURE_ORDER.get(target.architecture)
    for power_class in POWER_CLASSES:
        if target.key not in power_class.members or mine_rank is None:
            continue
        for other_key in power_class.members:
            other = installed.get(other_key)
            if other is None or ARCHITECTURE_ORDER.get(other.architecture, -1) <= mine_rank:
                continue
            check = f"energy_ranking:{other.key}"
            lacking = [t.key for t in (target, other) if "int8" not in t.dtypes]
            if lacking:
                reason = f"{' and '.join(lacking)} declare(s) no int8 peak; not compared"
                out.append(skipped(check, target.key, reason))
                continue
            mine, theirs = energy_per_op(registry, target), energy_per_op(registry, other)
            ok = mine < theirs
            relation = "below" if ok else "not below"
            out.append(
                outcome(
                    check,
                    target.key,
                    ok,
                    f"{target.architecture} {target.key} {mine * 1e12:.3g} pJ/op {relation} "
                    f"{other.architecture} {other.key} {theirs * 1e12:.3g} pJ/op "
                    f"({power_class.name})",
                    numbers={
                        "workload": workload_name("matmul", LARGE, "int8"),
                        "joules_per_op": {target.key: mine, other.key: theirs},
                        "energy_per_op_j": {
                            target.key: target.energy_per_op_j["int8"],
                            other.key: other.energy_per_op_j["int8"],
                        },
                        "power_class": power_class.name,
                    },
                    workload=workload_name("matmul", LARGE, "int8"),
                    coefficient="energy_per_op_j.int8",
                    expected=expected(check, target.key),
                )
            )
    return out
