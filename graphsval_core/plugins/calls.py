"""Hook calls in flight: their arguments, and which plugin gave which answer.

A :class:`CallLog` is installed on a plugin manager as a hook-call monitor
(:meth:`pluggy.PluginManager.add_hookcall_monitoring`), so it opens a
:class:`Call` for every ``pm.hook.<name>(...)`` call, nested ones included,
and closes it when pluggy's call loop returns. The guards of
:mod:`graphsval_core.plugins.guards` read the call's arguments to check
answers and note each answer against the plugin that gave it; the registry
then matches the results pluggy returns to those notes by identity.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

from attrs import define, field


@define
class Call:
    """One hook call: its name, its keyword arguments, the answers noted so far,
    and the implementations that failed (raised, or answered garbage)."""

    hook: str
    kwargs: Mapping[str, Any]
    answers: list[tuple[str, Any]] = field(factory=list)
    failures: list[tuple[str, BaseException]] = field(factory=list)


class _Thread(threading.local):
    """One thread's calls in flight and last returned call."""

    def __init__(self) -> None:
        self.open: list[Call] = []
        self.last: Call | None = None


class CallLog:
    """Per thread: the hook calls in flight, innermost last, and the last one
    that returned."""

    def __init__(self) -> None:
        self._thread = _Thread()

    def before(self, hook_name: str, hook_impls: Sequence[Any], kwargs: Mapping[str, Any]) -> None:
        """Monitor callback: a hook call starts."""
        self._thread.open.append(Call(hook_name, kwargs))

    def after(
        self, outcome: Any, hook_name: str, hook_impls: Sequence[Any], kwargs: Mapping[str, Any]
    ) -> None:
        """Monitor callback: the hook call started last returns (or raises)."""
        self._thread.last = self._thread.open.pop()

    def current(self, hook: str) -> Call | None:
        """The innermost call in flight, if it is a call of ``hook``."""
        open_calls = self._thread.open
        if open_calls and open_calls[-1].hook == hook:
            return open_calls[-1]
        return None

    def note(self, hook: str, plugin: str, answer: Any) -> None:
        """Record that ``plugin`` gave ``answer`` in the current call of ``hook``."""
        call = self.current(hook)
        if call is not None:
            call.answers.append((plugin, answer))

    def fail(self, hook: str, plugin: str, error: BaseException) -> None:
        """Record that ``plugin`` failed with ``error`` in the current call of ``hook``."""
        call = self.current(hook)
        if call is not None:
            call.failures.append((plugin, error))

    def failures(self, hook: str) -> list[tuple[str, BaseException]]:
        """``(plugin, error)`` of every implementation that failed in the last
        call of ``hook`` that returned."""
        call = self._thread.last
        return list(call.failures) if call is not None and call.hook == hook else []

    def attribute(self, hook: str, results: Sequence[Any]) -> list[tuple[str, Any]]:
        """``(plugin, answer)`` for each of ``results``, the list the last call of
        ``hook`` returned, matched to the notes by identity and in order."""
        call = self._thread.last
        if call is None or call.hook != hook:
            raise LookupError(f"no call of {hook} has returned")
        notes = list(call.answers)
        out = []
        for answer in results:
            index = next((i for i, (_, noted) in enumerate(notes) if noted is answer), None)
            if index is None:
                raise LookupError(f"{hook}: an answer that no guarded implementation gave")
            out.append((notes.pop(index)[0], answer))
        return out
