"""The verdict of a consistency check: an :class:`Outcome` per aspect checked.

An outcome passes or fails, with the numbers that decided it and, on failure,
the workload (``op shape dtype``) and the coefficient at fault. A known
finding (a datasheet figure that contradicts an expectation, declared by the
target's plugin through the ``graphsval_expected_failures`` hook) turns a
failure into an *expected failure*, which does not fail the run, and a pass
into an *unexpected pass*, reported so that the expectation can be removed.
Checks build outcomes with :func:`outcome` and :func:`skipped`.

A plain record, so it lives with the data model: the plugin registry (which
turns a failing plugin check into a skipped outcome) and the consistency
runner both import it from here, downward.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from attrs import field, frozen

PASS = "pass"
FAIL = "fail"
XFAIL = "expected_failure"
XPASS = "unexpected_pass"
SKIP = "skip"
STATUSES = (PASS, FAIL, XFAIL, XPASS, SKIP)


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
