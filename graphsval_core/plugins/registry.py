"""The registry: the typed facade over the plugins' hooks.

A :class:`Registry` holds what the installed plugins registered (targets, ops,
predictors), the calibrated specs, and the problems met while loading; the
rest of the code asks it, never ``pm.hook`` directly, and it names the plugin
and the hook when an implementation fails. Build one with
:func:`graphsval_core.plugins.loader.build_registry`.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable
from typing import Any

import pluggy
from attrs import define, field, frozen

from graphsval_core.datamodel.errors import UserInputError
from graphsval_core.datamodel.op import OpSpec
from graphsval_core.datamodel.target import MemoryTier, TargetSpec
from graphsval_core.plugins.records import (
    ConsistencyCheck,
    Measurement,
    PredictorSpec,
    ProbeResult,
)

#: Known first-party plugins: which distribution provides which target keys'
#: family, so an error about a missing target can say what to install.
KNOWN_DISTRIBUTIONS: dict[str, str] = {
    "i7_": "graphsval-cpu",
    "host_cpu": "graphsval-cpu",
    "h100": "graphsval-cuda",
    "h200": "graphsval-cuda",
    "a100": "graphsval-cuda",
    "host_gpu": "graphsval-cuda",
    "jetson_": "graphsval-jetson",
    "kpu_": "graphsval-kpu",
    "tpu_": "graphsval-tpu",
    "coral_": "graphsval-tpu",
}


#: Fingerprint keys that describe a snapshot, not the machine.
_SNAPSHOT_ONLY = frozenset({"snapshot_of", "threads", "captured_at"})


class HookError(RuntimeError):
    """A hook implementation raised; the message names the plugin and the hook."""

    def __init__(self, plugin: str, hook: str, error: BaseException) -> None:
        self.plugin = plugin
        self.hook = hook
        self.error = error
        super().__init__(f"plugin {plugin} failed in hook {hook}: {type(error).__name__}: {error}")


class UnknownNameError(UserInputError, LookupError):
    """An unknown target, op or predictor name; the message suggests close names."""


@frozen
class PluginProblem:
    """One thing that went wrong while loading plugins, in one line."""

    plugin: str
    message: str

    def __str__(self) -> str:
        return self.message


@define
class PluginInfo:
    """What the registry knows about one plugin."""

    name: str
    module: str
    distribution: str | None = None
    version: str | None = None
    builtin: bool = False
    loaded: bool = False
    targets: list[str] = field(factory=list)
    ops: list[str] = field(factory=list)
    predictors: list[str] = field(factory=list)
    errors: list[str] = field(factory=list)

    @property
    def label(self) -> str:
        """``name (distribution version)`` for messages."""
        if self.distribution:
            return f"{self.name!r} ({self.distribution} {self.version or '?'})"
        return repr(self.name)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "module": self.module,
            "distribution": self.distribution,
            "version": self.version,
            "builtin": self.builtin,
            "loaded": self.loaded,
            "targets": list(self.targets),
            "ops": list(self.ops),
            "predictors": list(self.predictors),
            "errors": list(self.errors),
        }


class Registry:
    """The installed plugins and everything they registered.

    Build one with :func:`build_registry`. Lookups raise
    :class:`UnknownNameError` with close matches; hook calls raise
    :class:`HookError` naming the plugin and the hook.
    """

    def __init__(self, pm: pluggy.PluginManager, infos: dict[str, PluginInfo]) -> None:
        self.pm = pm
        self.infos = infos
        self.problems: list[PluginProblem] = []
        self._targets: dict[str, TargetSpec] = {}
        self._target_plugin: dict[str, str] = {}
        self._ops: dict[str, OpSpec] = {}
        self._predictors: dict[str, PredictorSpec] = {}
        self._datasheet: dict[str, TargetSpec] = {}
        self.calibration_files: dict[str, str] = {}

    # --- problems -------------------------------------------------------------

    def _problem(self, plugin: str, message: str) -> None:
        info = self.infos.get(plugin)
        label = info.label if info else repr(plugin)
        line = f"plugin {label}: {message}"
        self.problems.append(PluginProblem(plugin, line))
        if info is not None:
            info.errors.append(message)

    def _reject(self, plugin: str, message: str) -> None:
        """Record a problem and take the plugin out of every hook."""
        self._problem(plugin, message)
        module = self.pm.get_plugin(plugin)
        if module is not None:
            self.pm.unregister(module, name=plugin)
        info = self.infos.get(plugin)
        if info is not None:
            info.loaded = False
            info.targets.clear()
            info.ops.clear()
            info.predictors.clear()

    # --- calling hooks ----------------------------------------------------------

    def _impls(self, hook_name: str) -> list[Any]:
        """Hook implementations in call order (tryfirst first, trylast last)."""
        return list(reversed(getattr(self.pm.hook, hook_name).get_hookimpls()))

    @staticmethod
    def _invoke(impl: Any, kwargs: dict[str, Any]) -> Any:
        return impl.function(**{name: kwargs[name] for name in impl.argnames})

    def _collect(self, hook_name: str, **kwargs: Any) -> list[tuple[str, Any]]:
        """Call every implementation; a raising one is a :class:`HookError`."""
        out = []
        for impl in self._impls(hook_name):
            try:
                result = self._invoke(impl, kwargs)
                items = list(result) if result is not None else []
            except Exception as exc:
                raise HookError(self._label(impl.plugin_name), hook_name, exc) from exc
            out.extend((impl.plugin_name, item) for item in items)
        return out

    def _collect_guarded(self, hook_name: str, **kwargs: Any) -> list[tuple[str, Any]]:
        """Like :meth:`_collect`, but a raising plugin is recorded as a problem and
        skipped, so one broken plugin cannot stop the others (used at start-up)."""
        out = []
        for impl in self._impls(hook_name):
            try:
                result = self._invoke(impl, kwargs)
                items = list(result) if result is not None else []
            except Exception as exc:
                self._problem(
                    impl.plugin_name, f"hook {hook_name} raised {type(exc).__name__}: {exc}"
                )
                continue
            out.extend((impl.plugin_name, item) for item in items)
        return out

    def _first(self, hook_name: str, **kwargs: Any) -> Any:
        """Ask implementations in turn; stop at the first non-None result."""
        for impl in self._impls(hook_name):
            try:
                result = self._invoke(impl, kwargs)
            except Exception as exc:
                raise HookError(self._label(impl.plugin_name), hook_name, exc) from exc
            if result is not None:
                return result
        return None

    def _label(self, plugin: str) -> str:
        info = self.infos.get(plugin)
        return info.label if info else repr(plugin)

    # --- registration -----------------------------------------------------------

    def _gather(
        self, hook_name: str, record_type: type, key_of: Callable[[Any], str], what: str
    ) -> dict[str, tuple[str, Any]]:
        """Collect records plugin by plugin: ``key -> (plugin, record)``.

        A plugin whose hook raises or returns a wrong type is rejected whole;
        a key registered more than once is withdrawn, naming every registrant.
        """
        owners: dict[str, list[tuple[str, Any]]] = {}
        for impl in self._impls(hook_name):
            plugin = impl.plugin_name
            try:
                items = list(self._invoke(impl, {}) or [])
                for item in items:
                    if not isinstance(item, record_type):
                        raise TypeError(
                            f"{hook_name} returned {type(item).__name__}, "
                            f"expected {record_type.__name__}"
                        )
            except Exception as exc:
                self._reject(plugin, f"invalid {what}: {type(exc).__name__}: {exc}")
                continue
            for item in items:
                owners.setdefault(key_of(item), []).append((plugin, item))
        out: dict[str, tuple[str, Any]] = {}
        for key, entries in owners.items():
            if len(entries) > 1:
                order = list(self.infos)
                plugins = sorted({plugin for plugin, _ in entries}, key=order.index)
                names = " and ".join(repr(p) for p in plugins)
                for plugin in plugins:
                    self._problem(
                        plugin, f"{what} {key!r} is registered by {names}; the key is withdrawn"
                    )
                continue
            out[key] = entries[0]
        return out

    def _register_all(self) -> None:
        targets = self._gather("graphsval_register_targets", TargetSpec, lambda t: t.key, "target")
        ops = self._gather("graphsval_register_ops", OpSpec, lambda o: o.name, "op")
        predictors = self._gather(
            "graphsval_register_predictors", PredictorSpec, lambda p: p.name, "predictor"
        )
        # a plugin rejected while gathering a later hook loses everything it registered
        live = {name for name, info in self.infos.items() if info.loaded}
        for gathered, store, listing in (
            (targets, self._targets, "targets"),
            (ops, self._ops, "ops"),
            (predictors, self._predictors, "predictors"),
        ):
            for key, (plugin, record) in gathered.items():
                if plugin in live:
                    store[key] = record
                    getattr(self.infos[plugin], listing).append(key)
                    if listing == "targets":
                        self._target_plugin[key] = plugin

    def _apply_calibrations(self) -> None:
        """Replace each calibrated target's spec by its calibrated copy."""
        import json

        from graphsval_core.files.calibration import apply_file

        for plugin, item in self._collect_guarded("graphsval_calibrations"):
            name = getattr(item, "name", str(item))
            try:
                data = json.loads(item.read_text())
                key = data.get("target")
                if key not in self._targets:
                    continue
                if self._target_plugin.get(key) != plugin:
                    raise ValueError(f"calibrates {key!r}, a target of another plugin")
                self._datasheet[key] = self._targets[key]
                self._targets[key] = apply_file(self._datasheet[key], data, name)
                self.calibration_files[key] = name
            except Exception as exc:
                self._problem(plugin, f"invalid calibration {name}: {type(exc).__name__}: {exc}")

    # --- public API ---------------------------------------------------------------

    @property
    def plugins(self) -> list[PluginInfo]:
        """Every plugin seen, loaded or not, in load order."""
        return list(self.infos.values())

    def targets(self) -> dict[str, TargetSpec]:
        """Every registered target by key."""
        return dict(self._targets)

    def target(self, key: str) -> TargetSpec:
        """The target ``key``; :class:`UnknownNameError` names close keys and,
        for a first-party key, the distribution to install."""
        if key in self._targets:
            return self._targets[key]
        hint = _suggest(key, self._targets)
        for prefix, dist in KNOWN_DISTRIBUTIONS.items():
            if key.startswith(prefix) and not any(
                (i.distribution == dist and i.loaded) for i in self.infos.values()
            ):
                hint += f" (install {dist} to get it)"
                break
        raise UnknownNameError(f"unknown target {key!r}{hint}")

    def datasheet_target(self, key: str) -> TargetSpec:
        """The target's spec as its plugin wrote it, before any calibration."""
        return self._datasheet.get(key) or self.target(key)

    def target_plugin(self, key: str) -> PluginInfo:
        """The plugin that registered target ``key``."""
        return self.infos[self._target_plugin[self.target(key).key]]

    def ops(self) -> dict[str, OpSpec]:
        return dict(self._ops)

    def op(self, name: str) -> OpSpec:
        if name in self._ops:
            return self._ops[name]
        raise UnknownNameError(f"unknown op {name!r}{_suggest(name, self._ops)}")

    def predictors(self) -> dict[str, PredictorSpec]:
        return dict(self._predictors)

    def predictor(self, name: str) -> PredictorSpec:
        if name in self._predictors:
            return self._predictors[name]
        raise UnknownNameError(f"unknown predictor {name!r}{_suggest(name, self._predictors)}")

    def memory_hierarchy(self, target: TargetSpec) -> tuple[MemoryTier, ...]:
        """The target's tiers, innermost first (first-result hook)."""
        tiers = self._first("graphsval_memory_hierarchy", target=target)
        if tiers is None:
            raise HookError("'graphsval'", "graphsval_memory_hierarchy", LookupError("no answer"))
        return tuple(tiers)

    def residency_window(
        self, target: TargetSpec, op: OpSpec, shapes: Any, dtype: str, tier: MemoryTier
    ) -> Any:
        """The tile each shape keeps alive in ``tier`` (first-result hook)."""
        return self._first(
            "graphsval_residency_window",
            target=target,
            op=op,
            shapes=shapes,
            dtype=dtype,
            tier=tier,
        )

    def measurer_probe(self, target: TargetSpec) -> ProbeResult:
        """Whether ``target`` can be measured here; never raises for a plugin bug."""
        try:
            result = self._first("graphsval_measurer_probe", target=target)
        except HookError as exc:
            return ProbeResult(False, str(exc))
        if result is None:
            return ProbeResult(False, "no installed plugin measures this target")
        return result

    def measure(
        self, target: TargetSpec, op: OpSpec, shape: tuple[int, ...], dtype: str, settings: Any
    ) -> Measurement | None:
        return self._first(
            "graphsval_measure", target=target, op=op, shape=shape, dtype=dtype, settings=settings
        )

    def snapshot_target(self, target: TargetSpec, settings: Any) -> TargetSpec | None:
        """The named target a capture of detected ``target`` records under."""
        return self._first("graphsval_snapshot_target", target=target, settings=settings)

    def resolve(self, key: str) -> TargetSpec:
        """The target ``key``; for a detected target (``host_cpu``), the named
        snapshot target captured on this very machine when exactly one matches
        (its fingerprint agrees with this machine's on every shared key)."""
        target = self.target(key)
        if not target.detected:
            return target
        here = {k: v for k, v in target.fingerprint.items() if k not in _SNAPSHOT_ONLY}
        matches = [
            t
            for t in self._targets.values()
            if t.fingerprint.get("snapshot_of") == key
            and all(t.fingerprint.get(k) == v for k, v in here.items() if k in t.fingerprint)
        ]
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            names = ", ".join(sorted(t.key for t in matches))
            raise UnknownNameError(f"{key} matches several captured targets: {names}; name one")
        return target

    def baseline_files(self) -> list[tuple[str, Any]]:
        """``(plugin, path_or_traversable)`` of every shipped baseline."""
        return self._collect("graphsval_baselines")

    def _per_plugin(self, hook_name: str, **kwargs: Any) -> dict[str, Any]:
        """``plugin -> answer`` of every plugin that answers ``hook_name``."""
        out = {}
        for impl in self._impls(hook_name):
            try:
                answer = self._invoke(impl, kwargs)
            except Exception as exc:
                raise HookError(self._label(impl.plugin_name), hook_name, exc) from exc
            if answer is not None:
                out[impl.plugin_name] = answer
        return out

    def floors_files(self) -> dict[str, Any]:
        """``plugin -> floors path`` of every plugin that has one."""
        return self._per_plugin("graphsval_floors")

    def prediction_snapshots(self) -> dict[str, Any]:
        """``plugin -> prediction snapshot path`` of every plugin that has one."""
        return self._per_plugin("graphsval_prediction_snapshot")

    def expected_failures(self, target: TargetSpec) -> dict[str, str]:
        """The known findings about ``target``, ``check -> reason``, every plugin's merged."""
        out: dict[str, str] = {}
        for answer in self._per_plugin("graphsval_expected_failures", target=target).values():
            out.update({str(check): str(reason) for check, reason in dict(answer).items()})
        return out

    def sweep_overlays(self) -> list[tuple[str, Any]]:
        """``(plugin, path_or_traversable)`` of every shipped sweep-label overlay."""
        return self._collect("graphsval_sweep_overlays")

    def consistency_checks(self, target: TargetSpec) -> list[tuple[str, ConsistencyCheck]]:
        """``(plugin, check)`` pairs for ``target``."""
        return self._collect("graphsval_consistency_checks", target=target)


def _suggest(name: str, known: Iterable[str]) -> str:
    known = sorted(known)
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
    if close:
        return f"; did you mean {', '.join(close)}?"
    return f"; known: {', '.join(known)}" if known else "; none is installed"
