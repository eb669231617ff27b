"""The user's Ctrl-C, told apart from a KeyboardInterrupt that plugin code
raises: a SIGINT the core's handler saw stops the command wherever it lands
(a capture keeps every finished row and resumes); one raised with no SIGINT,
or ``sys.exit``, is the plugin's fault and is contained."""

from __future__ import annotations

import csv
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from graphsval_core import hookimpl
from graphsval_core.measure.capture import CaptureItem, capture
from graphsval_core.measure.protocol import CaptureSettings
from graphsval_core.plugins import interrupts
from graphsval_core.plugins.loader import build_registry
from graphsval_core.plugins.records import Measurement
from graphsval_core.plugins.registry import HookError, Registry

FAST = CaptureSettings(target_ci=0.2, max_time_per_shape_s=0.05, min_block_s=1e-4, threads=1)
ITEMS = [CaptureItem((n,), "fp32") for n in (1024, 2048, 4096)]


@pytest.fixture
def watching(monkeypatch: pytest.MonkeyPatch) -> None:
    """The core's SIGINT handler in place, no SIGINT seen yet (and forgotten after)."""
    assert interrupts.install(), "the core's SIGINT handler could not be installed"
    monkeypatch.setattr(interrupts._State, "seen", 0)


def _ctrl_c() -> None:
    """What the user's Ctrl-C does: a SIGINT to this process."""
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(2)  # the handler raises before this ends


def _world(make_plugin, make_target, strict: bool = False, **hooks: Any) -> Registry:
    plugin = make_plugin("measurer", lambda: [make_target("toy_target")], **hooks)
    return build_registry(strict=strict, autoload=False, extra_plugins=[("measurer", plugin)])


def _capture(registry: Registry, out: Path):
    target, op = registry.target("toy_target"), registry.op("vector_add")
    return capture(
        hardware="toy_target",
        op="vector_add",
        purpose="validation",
        items=ITEMS,
        out=out,
        measure=lambda item, opts: registry.measure(target, op, item.dims, item.dtype, opts),
        settings=FAST,
    )


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def _measure_then(fault: Any) -> Any:
    """A measure hook that measures the first shape, then does ``fault``."""
    calls: list[int] = []

    @hookimpl
    def graphsval_measure(target, op, shape, dtype, settings):
        calls.append(1)
        if len(calls) > 1:
            fault()
        return Measurement(latency_s=1e-3 * shape[0] / 1024, energy_j=None, trial_count=5)

    return graphsval_measure


def test_what_is_the_plugins_fault(watching, monkeypatch):
    assert interrupts.is_plugin_fault(RuntimeError("x"))
    assert interrupts.is_plugin_fault(SystemExit(3))
    assert interrupts.is_plugin_fault(KeyboardInterrupt())  # no SIGINT came
    assert not interrupts.is_plugin_fault(GeneratorExit())
    monkeypatch.setattr(interrupts._State, "seen", 1)
    assert not interrupts.is_plugin_fault(KeyboardInterrupt())  # the user's Ctrl-C


def test_without_the_handler_every_keyboard_interrupt_is_the_users(watching):
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        assert not interrupts.watching()
        assert not interrupts.is_plugin_fault(KeyboardInterrupt())
    finally:
        signal.signal(signal.SIGINT, previous)


def test_an_applications_own_handler_is_left_alone(monkeypatch):
    mine = signal.signal(signal.SIGINT, lambda signum, frame: None)
    try:
        assert not interrupts.install()
        assert signal.getsignal(signal.SIGINT) is not interrupts._handler
    finally:
        signal.signal(signal.SIGINT, mine)
    assert interrupts.install()


def test_a_ctrl_c_inside_a_hook_stops_the_call(watching, make_plugin, make_target):
    @hookimpl(specname="graphsval_memory_hierarchy")
    def hierarchy(target):
        _ctrl_c()

    registry = _world(make_plugin, make_target, graphsval_memory_hierarchy=hierarchy)
    with pytest.raises(KeyboardInterrupt):
        registry.memory_hierarchy(registry.target("toy_target"))
    assert interrupts.user_interrupted() and registry.problems == []


def test_a_plugins_keyboard_interrupt_in_a_hook_is_contained(watching, make_plugin, make_target):
    @hookimpl(specname="graphsval_memory_hierarchy")
    def hierarchy(target):
        raise KeyboardInterrupt

    registry = _world(make_plugin, make_target, graphsval_memory_hierarchy=hierarchy)
    target = registry.target("toy_target")
    assert registry.memory_hierarchy(target) == target.tiers  # the built-in default answers
    (problem,) = registry.problems
    assert str(problem).endswith(
        "hook graphsval_memory_hierarchy raised KeyboardInterrupt "
        "(raised by the plugin: no Ctrl-C was pressed)"
    )


def test_a_ctrl_c_inside_a_measurer_keeps_the_finished_rows(
    watching, make_plugin, make_target, tmp_path
):
    registry = _world(make_plugin, make_target, graphsval_measure=_measure_then(_ctrl_c))
    out = tmp_path / "toy.csv"
    summary = _capture(registry, out)
    assert summary.interrupted
    assert [r["shape"] for r in _rows(out)] == ["1024"]  # kept; a rerun resumes from here
    assert registry.problems == []


@pytest.mark.parametrize(
    "fault, says",
    [
        (lambda: (_ for _ in ()).throw(KeyboardInterrupt), "KeyboardInterrupt (raised by the"),
        (lambda: sys.exit(5), "SystemExit: 5 (the plugin called sys.exit)"),
    ],
    ids=["interrupt", "exit"],
)
def test_a_measurer_that_interrupts_or_exits_fails_its_rows_only(
    watching, make_plugin, make_target, tmp_path, fault, says
):
    registry = _world(make_plugin, make_target, graphsval_measure=_measure_then(fault))
    out = tmp_path / "toy.csv"
    summary = _capture(registry, out)
    assert not summary.interrupted
    rows = {r["shape"]: r for r in _rows(out)}
    assert rows["1024"]["latency_s"] and not rows["4096"]["latency_s"]
    assert "plugin 'measurer' failed in hook graphsval_measure" in rows["4096"]["notes"]
    assert says in rows["4096"]["notes"]
    (problem,) = {str(p) for p in registry.problems}
    assert "hook graphsval_measure raised" in problem and says in problem


def test_strict_mode_stops_a_capture_at_a_measurer_that_exits(
    watching, make_plugin, make_target, tmp_path
):
    registry = _world(
        make_plugin, make_target, strict=True, graphsval_measure=_measure_then(lambda: sys.exit(5))
    )
    out = tmp_path / "toy.csv"
    with pytest.raises(HookError, match="failed in hook graphsval_measure: SystemExit: 5"):
        _capture(registry, out)
    assert [r["shape"] for r in _rows(out)] == ["1024"]  # what was measured is kept


def test_a_measurer_raising_an_error_is_the_rows_reason_not_a_problem(
    watching, make_plugin, make_target, tmp_path
):
    def oom() -> None:
        raise MemoryError("CUDA out of memory")

    registry = _world(make_plugin, make_target, strict=True, graphsval_measure=_measure_then(oom))
    out = tmp_path / "toy.csv"
    summary = _capture(registry, out)  # strict, yet the capture goes on
    assert not summary.interrupted and registry.problems == []
    rows = {r["shape"]: r for r in _rows(out)}
    assert "out of memory" in rows["2048"]["notes"]
