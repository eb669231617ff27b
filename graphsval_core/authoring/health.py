"""The health check of installed plugins: every hook each one implements,
called with realistic arguments, and every file it ships, read.

``graphsval plugins`` runs it, so a plugin whose hook raises, exits or
answers garbage is listed with status ``problem`` and the line naming it
before any command needs that hook; ``--strict-plugins`` runs it before the
command, so a broken plugin stops a strict run whichever hooks the command
calls; ``graphsval validate`` runs it on the third-party plugins, so each
broken one is named at the end of the main job; the conformance class of
:mod:`graphsval_core.testing` runs it on the plugin under test.

Every implementation of a plugin that is not built into the core is called on
its own, through the registry's guard (an implementation that a first-result
hook would never reach is called too), and what goes wrong is recorded in the
registry as that plugin's problem (strict mode: :class:`HookError` at the
first):

- the hooks without arguments, and the files they return read as the
  commands read them: baselines (each must parse, and name registered targets
  and ops), the floors file, the prediction snapshot, the sweep-label
  overlays (merged into the shipped sweeps); calibrations were applied while
  loading;
- for every registered target: ``graphsval_memory_hierarchy``,
  ``graphsval_residency_window`` (each op with a matrix product, each tier,
  the target's first dtype, three shapes), ``graphsval_measurer_probe``,
  ``graphsval_consistency_checks`` (collected; each check is then run
  once, on the plugin's own target or else a first-party one) and
  ``graphsval_expected_failures``; for a detected target,
  ``graphsval_snapshot_target`` with one thread;
- every predictor the plugin registers, over three shapes of each op on each
  target at its first dtype, with the constants it declares.

``graphsval_measure`` is never called: it needs the hardware.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from graphsval_core.datamodel.target import TargetSpec
from graphsval_core.plugins.registry import PredictorFailed, Registry

#: Hooks a health check never calls: measuring needs the hardware.
NOT_CALLED = frozenset({"graphsval_measure"})
#: Collecting hooks whose answers are files, each read by :func:`_read_files`.
FILE_LISTS = ("graphsval_baselines", "graphsval_sweep_overlays", "graphsval_calibrations")
#: Hooks answering one file.
ONE_FILE = ("graphsval_floors", "graphsval_prediction_snapshot")
#: Registration hooks: called while loading, never again.
REGISTRATION = frozenset(
    {"graphsval_register_targets", "graphsval_register_ops", "graphsval_register_predictors"}
)


def checked_plugins(registry: Registry, only: Collection[str] | None = None) -> list[str]:
    """The loaded plugins a health check exercises: those not built into the
    core (``only``: these alone)."""
    return [
        info.name
        for info in registry.plugins
        if info.loaded and not info.builtin and (only is None or info.name in only)
    ]


def third_party(registry: Registry) -> list[str]:
    """The loaded plugins of distributions other than the first-party ones:
    ``graphsval validate`` checks these before validating, so each broken one
    is named at the end even when the run needs none of its hooks."""
    from graphsval_core.plugins.first_party import is_first_party

    return [
        name
        for name in checked_plugins(registry)
        if not is_first_party(registry.infos[name].distribution)
    ]


def exercise(registry: Registry, only: Collection[str] | None = None) -> None:
    """Run the health check (see module doc) on every loaded plugin that is
    not built in, or on the plugins named in ``only``."""
    names = checked_plugins(registry, only)
    targets = list(registry.targets().values())
    for name in names:
        impls = _impls(registry, name)
        for hook in (*FILE_LISTS, *ONE_FILE):
            for impl in impls.get(hook, ()):
                _read_files(registry, name, hook, _call(impl))
        for target in targets:
            _per_target(registry, impls, target)
        if "graphsval_consistency_checks" in impls:
            _run_checks(registry, name, targets)
        for predictor in registry.infos[name].predictors:
            _predictor(registry, predictor, targets)


def _impls(registry: Registry, name: str) -> dict[str, list[Any]]:
    """``hook -> the plugin's plain implementations`` (wrappers are exercised
    by the registry's own calls)."""
    plugin = registry.pm.get_plugin(name)
    out: dict[str, list[Any]] = {}
    for caller in registry.pm.get_hookcallers(plugin) or []:
        if caller.name in NOT_CALLED or caller.name in REGISTRATION:
            continue
        for impl in caller.get_hookimpls():
            if impl.plugin_name == name and not (impl.hookwrapper or impl.wrapper):
                out.setdefault(caller.name, []).append(impl)
    return out


def _call(impl: Any, **kwargs: Any) -> Any:
    """An implementation called through its guard with the arguments it takes."""
    return impl.function(**{name: kwargs[name] for name in impl.argnames})


def _shapes(ndims: int) -> np.ndarray:
    """Three shapes of ``ndims`` dims: 64, 1024 and 16384 in every dim."""
    return np.array([[64] * ndims, [1024] * ndims, [16384] * ndims], dtype=np.int64)


def _per_target(registry: Registry, impls: Mapping[str, list[Any]], target: TargetSpec) -> None:
    for hook in (
        "graphsval_memory_hierarchy",
        "graphsval_measurer_probe",
        "graphsval_consistency_checks",
        "graphsval_expected_failures",
    ):
        for impl in impls.get(hook, ()):
            _call(impl, target=target)
    if target.detected:
        for impl in impls.get("graphsval_snapshot_target", ()):
            _call(impl, target=target, settings={"threads": 1})
    window = impls.get("graphsval_residency_window", ())
    if not window:
        return
    tiers = registry.memory_hierarchy(target)
    for op in registry.ops().values():
        if op.gemm_dims is None:
            continue  # the model asks only for ops with a matrix product
        for tier in tiers:
            for impl in window:
                _call(
                    impl,
                    target=target,
                    op=op,
                    shapes=_shapes(len(op.dims)),
                    dtype=target.dtypes[0],
                    tier=tier,
                )


def _run_checks(registry: Registry, plugin: str, targets: list[TargetSpec]) -> None:
    """Run each consistency check of ``plugin`` once, through its guard, on
    the first target it is collected for: the plugin's own targets first,
    then the first-party plugins', then the others'."""
    from graphsval_core.consistency.context import CheckContext

    own = set(registry.infos[plugin].targets)

    def rank(target: TargetSpec) -> int:
        if target.key in own:
            return 0
        return 1 if registry._is_first_party(registry._target_plugin.get(target.key, "")) else 2

    context = None
    done: set[str] = set()
    for target in sorted(targets, key=rank):
        for owner, check in registry.consistency_checks(target):
            if owner != plugin or check.name in done:
                continue
            done.add(check.name)
            context = context or CheckContext(registry)
            check.run(target, context)


def _predictor(registry: Registry, name: str, targets: list[TargetSpec]) -> None:
    """The predictor over three shapes of each op on each target (its first
    dtype); the first failure is its problem."""
    predictor = registry.predictor(name)
    try:
        for target in targets:
            dtype = target.dtypes[0]
            for op in registry.ops().values():
                predictor.predict(registry, target, op, _shapes(len(op.dims)), dtype)
                registry.predictor_constants(predictor, target, op, dtype)
    except PredictorFailed:
        if registry.strict:
            raise


def _read_files(registry: Registry, plugin: str, hook: str, answer: Any) -> None:
    """Read the files a hook answered, as the commands do."""
    from graphsval_core.validate.selection import shipped_baseline

    if answer is None:
        return
    items = [answer] if hook in ONE_FILE else list(answer)
    for item in items:
        if hook == "graphsval_baselines":
            # a broken workspace target's rows: left out, its file named already
            shipped_baseline(registry, plugin, item, hws=set())
        elif hook == "graphsval_sweep_overlays":
            _overlay(registry, plugin, item)
        elif hook in ONE_FILE:
            _one_file(registry, plugin, hook, item)


def _one_file(registry: Registry, plugin: str, hook: str, item: Any) -> None:
    """A floors file or a prediction snapshot parses (one not written yet is fine)."""
    from graphsval_core.files.floors import FloorsError, read_floors
    from graphsval_core.files.snapshot import SnapshotError, read_snapshot

    path = Path(item) if isinstance(item, str) else item
    read, error, what = (
        (read_floors, FloorsError, "floors file")
        if hook == "graphsval_floors"
        else (read_snapshot, SnapshotError, "prediction snapshot")
    )
    try:
        read(path)
    except error as exc:
        registry.contribution_problem(plugin, hook, f"{what} left out: {exc}")


class _OneOverlay:
    """What :func:`~graphsval_core.sweep.labels.load_shipped` asks of a
    registry, holding one plugin's overlay."""

    def __init__(self, plugin: str, item: Any) -> None:
        self._overlays = [(plugin, item)]

    def sweep_overlays(self) -> list[tuple[str, Any]]:
        return self._overlays

    def op(self, name: str) -> Any:
        """No op: the shipped sweeps' shapes are checked against their ops
        where a whole registry loads them, not for each overlay."""
        raise LookupError(name)


def _overlay(registry: Registry, plugin: str, item: Any) -> None:
    """A sweep-label overlay reads and merges into the shipped sweeps."""
    from graphsval_core.files.sweep import SweepFileError
    from graphsval_core.sweep.labels import load_shipped

    try:
        load_shipped(_OneOverlay(plugin, item))  # type: ignore[arg-type]
    except SweepFileError as exc:
        registry.contribution_problem(
            plugin, "graphsval_sweep_overlays", f"sweep-label overlay left out: {exc}"
        )
