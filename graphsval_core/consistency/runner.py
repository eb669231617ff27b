"""Consistency checks: invariants a target's predictions must satisfy, with or
without ground truth (DESIGN.md section 1, item 5; issue 8).

A check is a :class:`~graphsval_core.plugins.records.ConsistencyCheck` collected
through the ``graphsval_consistency_checks`` hook (the built-in ones come from
:mod:`graphsval_core.builtin.checks`, registered like any plugin). Its
``run(target, registry)`` returns :class:`Outcome` records: pass or fail, with
the numbers that decided it and, on failure, the workload and coefficient at
fault. A check that knows of a finding it cannot fix (a datasheet figure that
contradicts an expectation) passes the reason as ``expected``: a failure then
reads *expected failure* and does not fail the run, and a pass reads
*unexpected pass*, reported so that the expectation can be removed.

:func:`run_consistency` runs every check for a set of targets. Detected targets
that cannot be probed here (``host_gpu`` on a machine with no GPU) are skipped
with the probe's reason.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from attrs import field, frozen

if TYPE_CHECKING:
    import numpy as np

    from graphsval_core.datamodel.target import TargetSpec
    from graphsval_core.model.prediction import Prediction
    from graphsval_core.plugins.registry import Registry

SCHEMA_VERSION = 1

PASS = "pass"
FAIL = "fail"
XFAIL = "expected_failure"
XPASS = "unexpected_pass"
SKIP = "skip"
STATUSES = (PASS, FAIL, XFAIL, XPASS, SKIP)

#: The predictor whose invariants are checked.
PREDICTOR = "reference"

#: Reference matmul shapes (M, K, N): tiny (launch-bound), medium, large.
MATMULS: dict[str, tuple[int, int, int]] = {
    "tiny": (32, 32, 32),
    "medium": (512, 512, 512),
    "large": (8192, 8192, 8192),
}
#: The reference linear layer (B, IN, OUT): a batch of 32 through a 4096-wide layer.
LINEAR: tuple[int, int, int] = (32, 4096, 4096)


@frozen(kw_only=True)
class Outcome:
    """One verdict of one check on one target.

    ``numbers`` are the figures that decided it; a failure names the
    ``workload`` (``op shape dtype``) and the ``coefficient`` at fault where
    one is. ``reason`` explains an expected failure, an unexpected pass or a skip.
    """

    check: str
    target: str
    status: str
    message: str
    numbers: Mapping[str, Any] = field(factory=dict)
    workload: str | None = None
    coefficient: str | None = None
    reason: str = ""
    plugin: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "target": self.target,
            "status": self.status,
            "message": self.message,
            "workload": self.workload,
            "coefficient": self.coefficient,
            "reason": self.reason or None,
            "plugin": self.plugin or None,
            "numbers": _jsonable(dict(self.numbers)),
        }

    def line(self, reason: bool = True) -> str:
        """One line for people: status, check, message, and the reason if any
        (``reason=False`` leaves it out, for a caller that prints it apart)."""
        label = {
            PASS: "pass",
            FAIL: "FAIL",
            XFAIL: "expected failure",
            XPASS: "UNEXPECTED PASS",
            SKIP: "skip",
        }[self.status]
        text = f"{label} {self.check}: {self.message}"
        if self.status == XPASS:
            text += " (it was expected to fail: remove the expectation)"
        if reason and self.reason and self.status != SKIP:
            text += f" ({self.reason})"
        return text


def outcome(
    check: str,
    target: str,
    ok: bool,
    message: str,
    *,
    numbers: Mapping[str, Any] | None = None,
    workload: str | None = None,
    coefficient: str | None = None,
    expected: str | None = None,
) -> Outcome:
    """Build an outcome; ``expected`` (a reason) turns a failure into an expected
    failure and a pass into an unexpected pass."""
    status = (XPASS if ok else XFAIL) if expected else (PASS if ok else FAIL)
    return Outcome(
        check=check,
        target=target,
        status=status,
        message=message,
        numbers=dict(numbers or {}),
        workload=None if ok else workload,
        coefficient=None if ok else coefficient,
        reason=expected or "",
    )


def skipped(check: str, target: str, reason: str) -> Outcome:
    """A check that does not apply here, with its reason."""
    return Outcome(check=check, target=target, status=SKIP, message=reason, reason=reason)


def _jsonable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if hasattr(value, "item"):  # numpy scalars
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


# --- the reference workload set ------------------------------------------------


def vector_add_sizes(registry: Registry, target: TargetSpec, dtype: str) -> dict[str, int]:
    """One vector_add per tier, ``tier -> N``: its working set lies inside that
    tier and outside the tier within it (half of L1; the geometric mean of the
    capacities on either side of any other tier's boundary)."""
    from graphsval_core.datamodel.dtypes import bytes_per_element

    bpe = bytes_per_element(dtype)
    tiers = registry.memory_hierarchy(target)
    out: dict[str, int] = {}
    for k, tier in enumerate(tiers):
        if k == 0:
            working_set = 0.5 * tier.effective_capacity_bytes
        else:
            working_set = math.sqrt(
                tiers[k - 1].effective_capacity_bytes * tier.effective_capacity_bytes
            )
        out[tier.name] = max(1, int(working_set / (3 * bpe)))
    return out


def reference_shapes(registry: Registry, target: TargetSpec, dtype: str) -> dict[str, list[Any]]:
    """The reference workload set of one dtype: ``op -> shapes``."""
    return {
        "matmul": [list(s) for s in MATMULS.values()],
        "linear": [list(LINEAR)],
        "vector_add": [[n] for n in vector_add_sizes(registry, target, dtype).values()],
    }


def workload_name(op: str, shape: Sequence[int], dtype: str) -> str:
    """``op shape dtype``, e.g. ``matmul 8192x8192x8192 int8``."""
    return f"{op} {'x'.join(str(int(d)) for d in shape)} {dtype}"


def predict(registry: Registry, target: TargetSpec, op: str, shapes: Any, dtype: str) -> Prediction:
    """The checked predictor's batch prediction."""
    import numpy as np

    op_spec = registry.op(op)
    array = np.asarray(shapes, dtype=np.int64).reshape(-1, len(op_spec.dims))
    return registry.predictor(PREDICTOR).predict(registry, target, op_spec, array, dtype)


def shapes_array(shapes: Sequence[Any]) -> np.ndarray:
    import numpy as np

    return np.asarray(shapes, dtype=np.int64)


# --- running ---------------------------------------------------------------------


@frozen(kw_only=True)
class TargetResult:
    """Every outcome of every check on one target, or why it was skipped."""

    target: str
    ground_truth: str
    plugin: str
    outcomes: tuple[Outcome, ...] = ()
    skip_reason: str = ""

    def count(self, *statuses: str) -> int:
        return sum(1 for o in self.outcomes if o.status in statuses)

    @property
    def checks(self) -> int:
        """Outcomes that were decided (skips excluded)."""
        return self.count(PASS, FAIL, XFAIL, XPASS)

    @property
    def passed(self) -> int:
        return self.count(PASS, XPASS)

    @property
    def failed(self) -> bool:
        return self.count(FAIL) > 0

    @property
    def status(self) -> str:
        if self.skip_reason:
            return SKIP
        return FAIL if self.failed else PASS

    def counts(self) -> dict[str, int]:
        """``passed``/``checks`` and the breakdown, as the report's heatmap wants."""
        return {
            "passed": self.passed,
            "checks": self.checks,
            "failed": self.count(FAIL),
            "expected_failures": self.count(XFAIL),
            "unexpected_passes": self.count(XPASS),
            "skipped": self.count(SKIP),
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "hardware": self.target,
            "ground_truth": self.ground_truth,
            "plugin": self.plugin,
            "status": self.status,
            "skip_reason": self.skip_reason or None,
            **self.counts(),
            "outcomes": [o.to_dict() for o in self.outcomes],
        }

    def headline(self) -> str:
        """``key (ground truth): n/m checks pass[, extras]`` or the skip reason."""
        head = f"{self.target} ({self.ground_truth.replace('_', '-')})"
        if self.skip_reason:
            return f"{head}: skipped: {self.skip_reason}"
        c = self.counts()
        extras = [
            f"{c[name]} {plural if c[name] > 1 else singular}"
            for name, singular, plural in (
                ("failed", "FAILED", "FAILED"),
                ("expected_failures", "expected failure", "expected failures"),
                ("unexpected_passes", "UNEXPECTED PASS", "UNEXPECTED PASSES"),
                ("skipped", "skipped", "skipped"),
            )
            if c[name]
        ]
        tail = f" ({', '.join(extras)})" if extras else ""
        return f"{head}: {c['passed']}/{c['checks']} checks pass{tail}"


def probe_skip_reason(registry: Registry, target: TargetSpec) -> str:
    """Why a target cannot be checked here: a detected target whose probe fails
    is a placeholder (``host_gpu`` with no GPU); "" when it can be checked."""
    if not target.detected:
        return ""
    probe = registry.measurer_probe(target)
    if probe.available:
        return ""
    return f"detected target that cannot be probed here: {probe.reason}"


def run_target(registry: Registry, target: TargetSpec) -> TargetResult:
    """Run every check collected for ``target``."""
    plugin = registry.target_plugin(target.key).name
    base = {"target": target.key, "ground_truth": target.ground_truth, "plugin": plugin}
    reason = probe_skip_reason(registry, target)
    if reason:
        return TargetResult(**base, skip_reason=reason)
    outcomes: list[Outcome] = []
    for owner, check in registry.consistency_checks(target):
        try:
            produced = list(check.run(target, registry))
        except Exception as exc:  # a broken check fails, naming its plugin
            produced = [
                outcome(
                    check.name,
                    target.key,
                    False,
                    f"the check of plugin {owner!r} raised {type(exc).__name__}: {exc}",
                )
            ]
        for item in produced:
            if not isinstance(item, Outcome):
                item = outcome(
                    check.name,
                    target.key,
                    False,
                    f"the check of plugin {owner!r} returned {type(item).__name__}, not Outcome",
                )
            outcomes.append(item if item.plugin else _with_plugin(item, owner))
    return TargetResult(**base, outcomes=tuple(outcomes))


def _with_plugin(item: Outcome, plugin: str) -> Outcome:
    from attrs import evolve

    return evolve(item, plugin=plugin)


def run_consistency(
    registry: Registry, targets: Iterable[TargetSpec] | None = None
) -> list[TargetResult]:
    """Run the checks for ``targets`` (default: every registered target), by key."""
    chosen = list(targets) if targets is not None else list(registry.targets().values())
    return [run_target(registry, t) for t in sorted(chosen, key=lambda t: t.key)]


def heatmap_counts(results: Iterable[TargetResult]) -> dict[str, dict[str, int]]:
    """``hardware -> counts`` of the consistency-only targets, for the report's
    heatmap (``consistency: n/m``); measured targets keep their validated cells."""
    return {
        r.target: r.counts()
        for r in results
        if r.ground_truth == "consistency_only" and not r.skip_reason
    }


def failure_lines(results: Iterable[TargetResult]) -> list[str]:
    """One line per failed check or unexpected pass, for a report of another
    command (``graphsval validate``)."""
    return [
        f"consistency {r.target}: {o.line(reason=False)}"
        for r in results
        for o in r.outcomes
        if o.status in (FAIL, XPASS)
    ]
