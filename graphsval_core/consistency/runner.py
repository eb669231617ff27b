"""Running the consistency checks: every check collected for a target, its
outcomes gathered into a :class:`TargetResult` (DESIGN.md section 1, item 5).

A check is a :class:`~graphsval_core.plugins.records.ConsistencyCheck` collected
through the ``graphsval_consistency_checks`` hook (the built-in ones come from
:mod:`graphsval_core.builtin.checks`, registered like any plugin's) and run as
``run(target, context)`` with a :class:`~graphsval_core.consistency.context.CheckContext`.
A check that raises, or returns something other than outcomes, fails naming its
plugin. Detected targets that cannot be probed here (``host_gpu`` on a machine
with no GPU) are skipped with the probe's reason.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from attrs import evolve, frozen

from graphsval_core.consistency.context import CheckContext
from graphsval_core.datamodel.outcome import (
    FAIL,
    PASS,
    SKIP,
    XFAIL,
    XPASS,
    Outcome,
    outcome,
    skipped,
)
from graphsval_core.plugins.registry import HookError

if TYPE_CHECKING:
    from graphsval_core.datamodel.target import TargetSpec
    from graphsval_core.plugins.registry import Registry

SCHEMA_VERSION = 1


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


def run_target(context: CheckContext, target: TargetSpec) -> TargetResult:
    """Run every check collected for ``target``."""
    registry = context.registry
    plugin = registry.target_plugin(target.key).name
    base = {"target": target.key, "ground_truth": target.ground_truth, "plugin": plugin}
    reason = probe_skip_reason(registry, target)
    if reason:
        return TargetResult(**base, skip_reason=reason)
    outcomes: list[Outcome] = []
    for owner, check in registry.consistency_checks(target):
        try:
            produced = list(check.run(target, context))
        except HookError as exc:  # a plugin failed under the check (an op, a hook)
            if registry.strict:
                raise
            reason = f"a plugin failed under the check (a plugin problem, named below): {exc}"
            produced = [skipped(check.name, target.key, reason)]
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
            outcomes.append(item if item.plugin else evolve(item, plugin=owner))
    return TargetResult(**base, outcomes=tuple(outcomes))


def run_consistency(
    registry: Registry,
    targets: Iterable[TargetSpec] | None = None,
    context: CheckContext | None = None,
) -> list[TargetResult]:
    """Run the checks for ``targets`` (default: every registered target), by
    key, with ``context`` (default: one comparing with the plugins' snapshots)."""
    context = context if context is not None else CheckContext(registry)
    chosen = list(targets) if targets is not None else list(registry.targets().values())
    return [run_target(context, t) for t in sorted(chosen, key=lambda t: t.key)]


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
