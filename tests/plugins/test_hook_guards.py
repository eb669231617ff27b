"""Guarded hook implementations, called through pluggy's own call loop.

A hook implementation that raises, exits or answers garbage gives no answer
and is recorded once against its plugin and hook; wrappers, ``firstresult``,
call order and tracing work as pluggy defines them.
"""

from __future__ import annotations

import inspect
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import attrs
import numpy as np
import pytest

from graphsval_core import hookimpl
from graphsval_core.plugins.guards import original_function
from graphsval_core.plugins.loader import build_registry
from graphsval_core.plugins.registry import HookError, Registry


@pytest.fixture
def world(fake_entry_points, make_entry_point, make_plugin, make_target) -> Callable[..., Registry]:
    """Build a registry of the built-ins and toy plugins: each keyword is a
    plugin name and its hooks (a dict); the first plugin also registers the
    target ``toy_target``."""

    def build(strict: bool = False, **plugins: dict[str, Any]) -> Registry:
        eps = []
        for index, (name, hooks) in enumerate(plugins.items()):
            targets = (lambda: [make_target("toy_target")]) if index == 0 else None
            module = make_plugin(name, targets, **hooks)
            eps.append(make_entry_point(name, lambda m=module: m, f"{name}-dist", "1.0"))
        fake_entry_points(*eps)
        return build_registry(strict=strict)

    return build


def _names(tiers: Any) -> list[str]:
    return [t.name for t in tiers]


def _problems(registry: Registry) -> list[str]:
    return [str(p) for p in registry.problems]


# --- wrappers ------------------------------------------------------------------


def test_a_new_style_wrapper_sees_and_can_replace_the_tiers(world):
    seen = []

    @hookimpl(wrapper=True)
    def graphsval_memory_hierarchy(target):
        tiers = yield
        seen.append(_names(tiers))
        return tiers[-1:]  # only the outermost tier

    registry = world(wrap={"graphsval_memory_hierarchy": graphsval_memory_hierarchy})
    target = registry.target("toy_target")
    assert _names(registry.memory_hierarchy(target)) == ["dram"]
    assert seen == [["l1", "l2", "dram"]]
    assert registry.problems == []


def test_the_hierarchy_is_asked_once_per_spec_object(world):
    calls = []

    @hookimpl(wrapper=True)
    def graphsval_memory_hierarchy(target):
        calls.append(target.key)
        return (yield)

    registry = world(wrap={"graphsval_memory_hierarchy": graphsval_memory_hierarchy})
    target = registry.target("toy_target")
    first = registry.memory_hierarchy(target)
    assert registry.memory_hierarchy(target) is first
    assert calls == ["toy_target"]
    variant = attrs.evolve(target)  # an equal but new spec object is asked again
    assert _names(registry.memory_hierarchy(variant)) == _names(first)
    assert calls == ["toy_target", "toy_target"]


def test_a_transparent_new_style_wrapper_gives_the_tiers(world):
    @hookimpl(wrapper=True)
    def graphsval_memory_hierarchy(target):
        return (yield)

    registry = world(wrap={"graphsval_memory_hierarchy": graphsval_memory_hierarchy})
    target = registry.target("toy_target")
    assert _names(registry.memory_hierarchy(target)) == ["l1", "l2", "dram"]
    assert registry.pm.hook.graphsval_memory_hierarchy(target=target) == target.tiers


def test_an_old_style_hookwrapper_sees_and_can_replace_the_tiers(world):
    @hookimpl(hookwrapper=True)
    def graphsval_memory_hierarchy(target):
        outcome = yield
        outcome.force_result(outcome.get_result()[:2])

    registry = world(old={"graphsval_memory_hierarchy": graphsval_memory_hierarchy})
    assert _names(registry.memory_hierarchy(registry.target("toy_target"))) == ["l1", "l2"]
    assert registry.problems == []


@pytest.mark.parametrize("when", ["before", "after"])
@pytest.mark.parametrize("style", ["wrapper", "hookwrapper"])
def test_a_raising_wrapper_is_recorded_and_transparent(world, style, when):
    @hookimpl(**{style: True})
    def graphsval_memory_hierarchy(target):
        if when == "before":
            raise RuntimeError("wrapper broke")
        yield
        raise RuntimeError("wrapper broke")

    registry = world(wrap={"graphsval_memory_hierarchy": graphsval_memory_hierarchy})
    target = registry.target("toy_target")
    for _ in range(2):
        assert _names(registry.memory_hierarchy(target)) == ["l1", "l2", "dram"]
    assert _problems(registry) == [
        "plugin 'wrap' (wrap-dist 1.0): hook graphsval_memory_hierarchy raised "
        "RuntimeError: wrapper broke"
    ]


def test_a_wrapper_that_edits_then_raises_leaves_the_result_as_it_was(world, make_tier):
    @hookimpl(wrapper=True)
    def graphsval_consistency_checks(target):
        answers = yield
        answers.clear()
        raise ValueError("half done")

    registry = world(wrap={"graphsval_consistency_checks": graphsval_consistency_checks})
    target = registry.target("toy_target")
    bare = world()
    assert len(registry.consistency_checks(target)) == len(bare.consistency_checks(target)) > 0
    assert "raised ValueError: half done" in _problems(registry)[0]


def test_a_wrapper_replacing_the_tiers_with_garbage_is_transparent(world):
    @hookimpl(wrapper=True)
    def graphsval_memory_hierarchy(target):
        yield
        return "l1, l2"

    registry = world(wrap={"graphsval_memory_hierarchy": graphsval_memory_hierarchy})
    assert _names(registry.memory_hierarchy(registry.target("toy_target"))) == ["l1", "l2", "dram"]
    assert _problems(registry) == [
        "plugin 'wrap' (wrap-dist 1.0): hook graphsval_memory_hierarchy returned str, "
        "expected a non-empty sequence of MemoryTier"
    ]


@pytest.mark.parametrize("style", ["wrapper", "hookwrapper"])
@pytest.mark.parametrize("yields, problem", [(0, "did not yield"), (2, "yielded twice")])
def test_a_wrapper_yielding_other_than_once_is_recorded_and_transparent(
    world, style, yields, problem
):
    @hookimpl(**{style: True})
    def graphsval_memory_hierarchy(target):
        for _ in range(yields):
            yield

    registry = world(wrap={"graphsval_memory_hierarchy": graphsval_memory_hierarchy})
    assert _names(registry.memory_hierarchy(registry.target("toy_target"))) == ["l1", "l2", "dram"]
    assert _problems(registry) == [
        f"plugin 'wrap' (wrap-dist 1.0): hook graphsval_memory_hierarchy wrapper {problem}"
    ]


def test_a_collecting_wrapper_returning_no_list_is_transparent(world, tmp_path):
    mine = tmp_path / "mine.csv"

    @hookimpl(wrapper=True)
    def graphsval_baselines():
        yield
        return mine  # one path, not the list of answers

    registry = world(
        first={"graphsval_baselines": lambda: [mine]},
        wrap={"graphsval_baselines": graphsval_baselines},
    )
    assert registry.baseline_files() == [("first", mine)]
    assert "wrapper returned PosixPath, expected a list of answers" in _problems(registry)[0]


def test_an_inner_exception_reaches_the_wrapper(world):
    """Strict mode: a failing implementation raises HookError in pluggy's loop,
    and a wrapper outside it sees that exception and may answer instead."""
    caught = []

    def broken(target):
        raise RuntimeError("tier table corrupt")

    @hookimpl(wrapper=True)
    def graphsval_memory_hierarchy(target):
        try:
            return (yield)
        except HookError as exc:
            caught.append(exc)
            return target.tiers[:1]

    registry = world(  # "wrap" registers toy_target: its answer for it stands
        strict=True,
        wrap={"graphsval_memory_hierarchy": graphsval_memory_hierarchy},
        broken={"graphsval_memory_hierarchy": broken},
    )
    assert _names(registry.memory_hierarchy(registry.target("toy_target"))) == ["l1"]
    (error,) = caught
    assert error.hook == "graphsval_memory_hierarchy" and "'broken'" in error.plugin


def test_a_wrapper_adding_an_answer_to_a_collecting_hook_is_credited_with_it(world, tmp_path):
    mine, added = tmp_path / "mine.csv", tmp_path / "added.csv"

    @hookimpl(wrapper=True)
    def graphsval_baselines():
        answers = yield
        return [*answers, [added]]

    registry = world(
        first={"graphsval_baselines": lambda: [mine]},
        wrap={"graphsval_baselines": graphsval_baselines},
    )
    assert registry.baseline_files() == [("first", mine), ("wrap", added)]


# --- order and first results ---------------------------------------------------------


def test_tryfirst_and_trylast_order_is_pluggys(world):
    calls = []

    def answer(name: str) -> Callable[[Any], None]:
        def probe(target):
            calls.append(name)

        return probe

    registry = world(
        plain={"graphsval_measurer_probe": answer("plain")},
        first={"graphsval_measurer_probe": hookimpl(tryfirst=True)(answer("first"))},
        last={"graphsval_measurer_probe": hookimpl(trylast=True)(answer("last"))},
    )
    registry.measurer_probe(registry.target("toy_target"))
    assert calls == ["first", "plain", "last"]


@pytest.mark.parametrize(
    "bad, problem",
    [
        (RuntimeError("no tiers today"), "raised RuntimeError: no tiers today"),
        ("l1,l2,dram", "returned str, expected a non-empty sequence of MemoryTier"),
        ([], "returned list, expected a non-empty sequence of MemoryTier"),
        (["l1"], "returned a str tier, expected a non-empty sequence of MemoryTier"),
    ],
)
def test_a_failing_first_result_is_skipped_for_the_next_and_recorded_once(world, bad, problem):
    def first(target):
        if isinstance(bad, Exception):
            raise bad
        return bad

    registry = world(  # "second" registers toy_target (a model hook answers for its own)
        second={"graphsval_memory_hierarchy": lambda target: target.tiers[1:]},
        first={"graphsval_memory_hierarchy": hookimpl(tryfirst=True)(first)},
    )
    target = registry.target("toy_target")
    for _ in range(3):
        assert _names(registry.memory_hierarchy(target)) == ["l2", "dram"]
    assert _problems(registry) == [
        f"plugin 'first' (first-dist 1.0): hook graphsval_memory_hierarchy {problem}"
    ]
    assert registry.infos["first"].errors == [f"hook graphsval_memory_hierarchy {problem}"]


def test_a_first_result_hook_nobody_answers_still_raises(world):
    registry = world(
        gone={"graphsval_memory_hierarchy": lambda target: 42},
    )
    target = registry.target("toy_target")
    registry.pm.unregister(name="builtin_defaults")
    with pytest.raises(HookError, match="graphsval_memory_hierarchy: LookupError: no answer"):
        registry.memory_hierarchy(target)
    assert "returned int" in _problems(registry)[0]


def test_a_residency_window_of_the_wrong_shape_gives_no_answer(world):
    def window(target, op, shapes, dtype, tier):
        return np.ones((len(shapes), 1))  # one column, whatever the op

    registry = world(bad={"graphsval_residency_window": window})
    target, op = registry.target("toy_target"), registry.op("matmul")
    shapes = np.full((2, 3), 64)
    tile = registry.residency_window(target, op, shapes, "fp32", target.tiers[0])
    assert np.asarray(tile).shape == (2, 3)  # the built-in default's answer
    assert "returned an array of shape (2, 1), expected (2, 3)" in _problems(registry)[0]


@pytest.mark.parametrize(
    ("value", "shown"), [(-1.0, "-1"), (0.0, "0"), (np.nan, "nan"), (np.inf, "inf")]
)
def test_a_residency_window_of_impossible_tiles_gives_no_answer(world, value, shown):
    """A negative, empty or NaN tile would corrupt every prediction of the
    target (negative traffic, negative energy): it is refused and named."""

    def window(target, op, shapes, dtype, tier):
        tiles = np.full((len(shapes), 3), 8.0)
        tiles[-1, 1] = value
        return tiles

    registry = world(bad={"graphsval_residency_window": window})
    target, op = registry.target("toy_target"), registry.op("matmul")
    shapes = np.full((2, 3), 64)
    tile = registry.residency_window(target, op, shapes, "fp32", target.tiers[0])
    assert np.all(np.asarray(tile) >= 1)  # the built-in default's answer
    assert (
        f"returned a tile of {shown} elements along a dimension, expected finite numbers "
        "of at least 1" in _problems(registry)[0]
    )


@pytest.mark.parametrize("hook", ["graphsval_memory_hierarchy", "graphsval_residency_window"])
def test_a_model_hook_answers_only_for_its_own_targets(world, hook):
    """A plugin that answers a model hook for another plugin's target (ten
    times the bandwidth of every tier, a window of its own) would change that
    target's every prediction with no word: it is refused and named, and the
    target keeps its own plugin's (here the built-in default's) answer. The
    plugin that registers the target may answer."""

    def other(target, **_: Any) -> Any:
        if hook == "graphsval_memory_hierarchy":
            return [
                attrs.evolve(t, peak_bandwidth_bps=t.peak_bandwidth_bps * 10) for t in target.tiers
            ]
        return np.full((len(_["shapes"]), 3), 4.0)

    impl = (
        (lambda target: other(target))
        if hook == "graphsval_memory_hierarchy"
        else (lambda target, op, shapes, dtype, tier: other(target, shapes=shapes))
    )
    registry = world(owner={}, meddler={hook: hookimpl(tryfirst=True)(impl)})
    target = registry.target("toy_target")
    shapes = np.full((2, 3), 64)
    if hook == "graphsval_memory_hierarchy":
        tiers = registry.memory_hierarchy(target)
        assert [t.peak_bandwidth_bps for t in tiers] == [t.peak_bandwidth_bps for t in target.tiers]
    else:
        tile = registry.residency_window(
            target, registry.op("matmul"), shapes, "fp32", target.tiers[0]
        )
        assert not np.all(np.asarray(tile) == 4.0)
    (problem,) = _problems(registry)
    assert problem.startswith(f"plugin 'meddler' (meddler-dist 1.0): hook {hook} answered for ")
    assert "target 'toy_target', which another plugin registers" in problem
    own = world(owner={hook: hookimpl(tryfirst=True)(impl)})
    target = own.target("toy_target")
    if hook == "graphsval_memory_hierarchy":
        assert (
            own.memory_hierarchy(target)[0].peak_bandwidth_bps
            == 10 * target.tiers[0].peak_bandwidth_bps
        )
    else:
        tile = own.residency_window(target, own.op("matmul"), shapes, "fp32", target.tiers[0])
        assert np.all(np.asarray(tile) == 4.0)
    assert not _problems(own)


def test_a_probe_returning_garbage_gives_no_answer(world):
    registry = world(bad={"graphsval_measurer_probe": lambda target: "available"})
    probe = registry.measurer_probe(registry.target("toy_target"))
    # the probe's failure is the reason the target cannot be measured here
    assert not probe.available and "failed in hook graphsval_measurer_probe" in probe.reason
    assert "returned str, expected ProbeResult" in probe.reason
    assert (
        "hook graphsval_measurer_probe returned str, expected ProbeResult"
        in (_problems(registry)[0])
    )


# --- raising and exiting ---------------------------------------------------------------


def test_sys_exit_inside_a_hook_is_a_recorded_failure(world):
    def leave(target):
        sys.exit(3)

    registry = world(quitter={"graphsval_memory_hierarchy": leave})
    assert _names(registry.memory_hierarchy(registry.target("toy_target"))) == ["l1", "l2", "dram"]
    assert _problems(registry) == [
        "plugin 'quitter' (quitter-dist 1.0): hook graphsval_memory_hierarchy raised "
        "SystemExit: 3 (the plugin called sys.exit)"
    ]


def test_a_type_error_the_plugin_raises_is_told_from_a_malformed_answer(world):
    def broken(target):
        raise TypeError("unsupported operand")

    registry = world(broken={"graphsval_memory_hierarchy": broken})
    registry.memory_hierarchy(registry.target("toy_target"))
    assert _problems(registry)[0].endswith(
        "hook graphsval_memory_hierarchy raised TypeError: unsupported operand"
    )


def test_a_generator_raising_midway_drops_that_plugins_whole_answer(world, tmp_path):
    good, half = tmp_path / "good.csv", tmp_path / "half.csv"

    def baselines():
        yield half
        raise OSError("disk gone")

    registry = world(
        good={"graphsval_baselines": lambda: [good]}, half={"graphsval_baselines": baselines}
    )
    assert registry.baseline_files() == [("good", good)]
    assert _problems(registry) == [
        "plugin 'half' (half-dist 1.0): hook graphsval_baselines raised OSError: disk gone"
    ]


def test_one_bad_item_drops_the_plugins_whole_answer(world, tmp_path):
    good = tmp_path / "good.csv"
    registry = world(mixed={"graphsval_baselines": lambda: [good, 42]})
    assert registry.baseline_files() == []
    assert (
        "hook graphsval_baselines returned int, expected a path or a Traversable"
        in (_problems(registry)[0])
    )


def test_a_raising_registration_hook_still_rejects_the_plugin_whole(world, make_target):
    def ops():
        raise RuntimeError("no ops")

    registry = world(flaky={"graphsval_register_ops": ops})
    assert "toy_target" not in registry.targets()
    assert not registry.infos["flaky"].loaded
    assert _problems(registry) == [
        "plugin 'flaky' (flaky-dist 1.0): invalid op registration: "
        "graphsval_register_ops raised RuntimeError: no ops"
    ]


def test_problems_at_load_and_at_run_time_are_told_apart(world):
    registry = world(flaky={"graphsval_memory_hierarchy": lambda target: "oops"})
    assert registry.problems == [] and registry.runtime_problems == []
    registry.memory_hierarchy(registry.target("toy_target"))
    assert registry.runtime_problems == registry.problems and len(registry.problems) == 1


def test_strict_mode_raises_a_hook_error_at_run_time(world):
    registry = world(strict=True, flaky={"graphsval_memory_hierarchy": lambda target: "oops"})
    with pytest.raises(HookError) as err:
        registry.memory_hierarchy(registry.target("toy_target"))
    assert str(err.value) == (
        "plugin 'flaky' (flaky-dist 1.0) failed in hook graphsval_memory_hierarchy: "
        "TypeError: graphsval_memory_hierarchy returned str, expected a non-empty sequence "
        "of MemoryTier"
    )


# --- attribution and tracing -------------------------------------------------------------


def test_contributions_are_attributed_to_the_plugin_that_gave_them(world, tmp_path):
    a1, a2, b1 = (tmp_path / f"{n}.csv" for n in ("a1", "a2", "b1"))
    same = tmp_path / "floors.json"  # one object answered by two plugins
    registry = world(
        a={"graphsval_baselines": lambda: [a1, a2], "graphsval_floors": lambda: same},
        b={"graphsval_baselines": lambda: (x for x in [b1]), "graphsval_floors": lambda: same},
        c={"graphsval_baselines": lambda: None},
    )
    assert sorted(registry.baseline_files()) == [("a", a1), ("a", a2), ("b", b1)]
    floors = registry.floors_files()
    assert floors["a"] is same and floors["b"] is same and "c" not in floors


def test_the_answers_returned_by_pm_hook_are_fresh_lists(world, tmp_path):
    shared = [tmp_path / "x.csv"]
    registry = world(a={"graphsval_baselines": lambda: shared})
    (answer,) = [r for r in registry.pm.hook.graphsval_baselines() if r == shared]
    assert answer is not shared


def test_pm_trace_sees_every_call(world):
    lines: list[str] = []
    registry = world(a={"graphsval_memory_hierarchy": lambda target: None})
    registry.pm.trace.root.setwriter(lines.append)
    undo = registry.pm.enable_tracing()
    try:
        target = registry.target("toy_target")
        registry.memory_hierarchy(target)
        registry.consistency_checks(target)
    finally:
        undo()
    text = "".join(lines)
    assert "graphsval_memory_hierarchy" in text and "graphsval_consistency_checks" in text


def test_hookcall_monitoring_sees_each_implementation(world):
    seen: list[tuple[str, list[str]]] = []
    registry = world(a={"graphsval_memory_hierarchy": lambda target: None})
    undo = registry.pm.add_hookcall_monitoring(
        lambda name, impls, kwargs: seen.append((name, [i.plugin_name for i in impls])),
        lambda outcome, name, impls, kwargs: None,
    )
    try:
        registry.memory_hierarchy(registry.target("toy_target"))
    finally:
        undo()
    assert seen == [("graphsval_memory_hierarchy", ["builtin_defaults", "a"])]


def test_the_original_function_stays_reachable_for_conformance_checks(world):
    def tiers(target):
        return "garbage"

    registry = world(a={"graphsval_memory_hierarchy": tiers})
    (impl,) = [
        i
        for i in registry.pm.hook.graphsval_memory_hierarchy.get_hookimpls()
        if i.plugin_name == "a"
    ]
    target = registry.target("toy_target")
    assert original_function(impl)(target=target) == "garbage"
    assert impl.function(target=target) is None  # the guard: no answer
    assert inspect.signature(impl.function) == inspect.signature(tiers)


def test_calls_from_two_threads_are_attributed_apart(world, tmp_path):
    baseline, floors = tmp_path / "a.csv", tmp_path / "floors.json"

    def slow_baselines():
        time.sleep(0.001)  # let the other thread's call interleave
        return [baseline]

    def slow_floors():
        time.sleep(0.001)
        return floors

    registry = world(a={"graphsval_baselines": slow_baselines}, b={"graphsval_floors": slow_floors})
    results: list[Any] = []

    def ask(method: Callable[[], Any]) -> None:
        for _ in range(20):
            results.append(method())

    threads = [
        threading.Thread(target=ask, args=(registry.baseline_files,)),
        threading.Thread(target=ask, args=(registry.floors_files,)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results.count([("a", baseline)]) == 20
    assert results.count({"b": floors}) == 20


def test_an_op_of_four_dims_gets_the_default_tile_of_its_matrix_product(make_plugin, make_target):
    """The residency window is a tile of the op's matrix product (n, 3), whatever
    the op's own dims: a batched product of (B, M, K, N) predicts like its GEMM."""
    import numpy as np

    from graphsval_core.builtin.ops import MATMUL
    from graphsval_core.datamodel.op import OpSpec
    from graphsval_core.model.predict import predict_batch

    def elements(shapes):
        b, m, k, n = (shapes[:, i].astype(float) for i in range(4))
        return {"A": b * m * k, "B": k * n, "C": b * m * n}

    bmm = OpSpec(
        name="bmm",
        dims=("B", "M", "K", "N"),
        operand_elements=elements,
        working_set_operands=("A", "B", "C"),
        output_operand="C",
        flops=lambda s: 2.0 * s[:, 0] * s[:, 1] * s[:, 2] * s[:, 3],
        gemm_dims=lambda s: np.stack([s[:, 0] * s[:, 1], s[:, 2], s[:, 3]], axis=1),
    )
    plugin = make_plugin("toy", lambda: [make_target()], graphsval_register_ops=lambda: [bmm])
    registry = build_registry(autoload=False, strict=True, extra_plugins=[("toy", plugin)])
    batched = predict_batch(registry, "toy_target", "bmm", [[4, 64, 128, 256]], "fp32")
    flat = predict_batch(registry, "toy_target", "matmul", [[256, 128, 256]], "fp32")
    assert MATMUL.gemm_dims is not None
    assert batched.latency_s[0] == pytest.approx(flat.latency_s[0])
    assert registry.problems == []


@pytest.mark.parametrize("style", ["wrapper", "hookwrapper"])
def test_a_wrapper_is_held_to_the_owner_rule_too(world, style):
    """A wrapper that replaces another plugin's target's tiers got around the
    rule (the newcomer's gave every built-in target ten times its bandwidth):
    its answer is refused and named, the target keeps its own."""

    def tenfold(tiers: Any) -> Any:
        return [attrs.evolve(t, peak_bandwidth_bps=t.peak_bandwidth_bps * 10) for t in tiers]

    if style == "wrapper":

        @hookimpl(wrapper=True)
        def graphsval_memory_hierarchy(target):
            tiers = yield
            return tenfold(tiers)

    else:

        @hookimpl(hookwrapper=True)
        def graphsval_memory_hierarchy(target):
            outcome = yield
            outcome.force_result(tenfold(outcome.get_result()))

    registry = world(owner={}, meddler={"graphsval_memory_hierarchy": graphsval_memory_hierarchy})
    target = registry.target("toy_target")
    tiers = registry.memory_hierarchy(target)
    assert [t.peak_bandwidth_bps for t in tiers] == [t.peak_bandwidth_bps for t in target.tiers]
    (problem,) = _problems(registry)
    assert "plugin 'meddler'" in problem and "answered for target 'toy_target'" in problem
