"""The registry: the typed facade over the plugins' hooks.

A :class:`Registry` holds what the installed plugins registered (targets, ops,
predictors), the calibrated specs, and the problems met; the rest of the code
asks it, never ``pm.hook`` directly. Every method calls the hook through
pluggy's own call loop (``pm.hook.<name>(...)``) on a
:class:`~graphsval_core.plugins.guards.GuardedPluginManager`, whose guards turn
an implementation that raises or answers garbage into "no answer" from that
plugin and tell the registry, which records the problem once per plugin, hook
and message (or, in strict mode once loading is over, raises
:class:`HookError`). Build one with
:func:`graphsval_core.plugins.loader.build_registry`.
"""

from __future__ import annotations

import difflib
import functools
import os
from collections.abc import Callable, Iterable
from typing import Any, NoReturn

from attrs import define, field, frozen

from graphsval_core import PROJECT_NAME
from graphsval_core.datamodel.errors import UserInputError, clip, input_error
from graphsval_core.datamodel.op import OpSpec
from graphsval_core.datamodel.target import MemoryTier, TargetSpec
from graphsval_core.plugins import hookspecs
from graphsval_core.plugins.answers import file_ref_name, read_file_ref
from graphsval_core.plugins.first_party import (
    CORE_DISTRIBUTION,
    FIRST_PARTY_DISTRIBUTIONS,
    is_first_party,
)
from graphsval_core.plugins.guards import GuardedPluginManager
from graphsval_core.plugins.interrupts import describe, is_plugin_fault
from graphsval_core.plugins.ops import guarded as guarded_op, probe as probe_op
from graphsval_core.plugins.predictors import guarded
from graphsval_core.plugins.records import (
    ConsistencyCheck,
    Measurement,
    PredictorConstant,
    PredictorSpec,
    ProbeResult,
)

#: The built-in plugin of the user's workspace, whose files are the user's input.
WORKSPACE = "workspace"

#: The registration hooks and what each registers: a plugin whose
#: implementation of one raises or answers garbage is rejected whole.
REGISTRATION_HOOKS: dict[str, str] = {
    "graphsval_register_targets": "target",
    "graphsval_register_ops": "op",
    "graphsval_register_predictors": "predictor",
}

#: Hooks whose implementation raising is an outcome, not a plugin problem: a
#: measurement that fails (out of memory, a kernel error) is recorded by the
#: capture as the row's reason, and never stops a strict run.
MEASUREMENT_HOOKS = frozenset({"graphsval_measure"})

#: How many specs' memory hierarchies the registry keeps (the checks predict
#: many short-lived variants of a spec: the cache is emptied when full).
_HIERARCHIES_KEPT = 1024

#: Fingerprint keys that describe a snapshot, not the machine.
_SNAPSHOT_ONLY = frozenset({"snapshot_of", "threads", "captured_at"})


class HookError(RuntimeError):
    """A hook failed: in strict mode, an implementation raised or answered
    garbage; in any mode, a hook nobody answered where an answer is required.
    The message names the plugin and the hook."""

    def __init__(
        self, plugin: str, hook: str, error: BaseException, detail: str | None = None
    ) -> None:
        self.plugin = plugin
        self.hook = hook
        self.error = error
        super().__init__(f"plugin {plugin} failed in hook {hook}: {detail or describe(error)}")


class PredictorFailed(HookError):
    """A predictor of a plugin raised, or answered against the contract, in
    ``predict`` or ``constants``; the problem is recorded. The harness leaves
    the rows it could not predict out with this reason (strict mode: it
    stops); a command that predicts one batch stops with this one line."""

    def __init__(self, plugin: str, predictor: str, what: str, error: BaseException) -> None:
        self.plugin = plugin
        self.hook = "graphsval_register_predictors"
        self.error = error
        RuntimeError.__init__(
            self, f"predictor {predictor!r} of plugin {plugin} failed in {what}: {describe(error)}"
        )


class OpFailed(PredictorFailed):
    """A function of a plugin's op (``flops``, ``operand_elements``,
    ``gemm_dims``) raised or answered against the contract
    (:mod:`graphsval_core.plugins.ops`); the problem is recorded. Like a
    failed predictor, the harness leaves the rows of that batch out."""

    def __init__(self, plugin: str, op: str, function: str, error: BaseException) -> None:
        from graphsval_core.plugins.ops import describe_failure

        self.plugin = plugin
        self.hook = "graphsval_register_ops"
        self.error = error
        RuntimeError.__init__(
            self, f"op {op!r} of plugin {plugin} failed: {function} {describe_failure(error)}"
        )


class PredictorRowsFailed(PredictorFailed):
    """A predictor of a plugin gave invalid values in some rows of a batch
    (:func:`~graphsval_core.plugins.predictors.row_problems`): ``bad`` is the
    mask of those rows, ``reasons`` says per row what was wrong ("" for a
    good row). The harness leaves those rows out and validates the others."""

    def __init__(
        self, plugin: str, predictor: str, fields: list[str], bad: Any, reasons: list[str]
    ) -> None:
        self.plugin = plugin
        self.hook = "graphsval_register_predictors"
        self.error = ValueError(", ".join(fields))
        self.bad = bad
        self.reasons = reasons
        RuntimeError.__init__(
            self,
            f"predictor {predictor!r} of plugin {plugin} returned an invalid "
            f"{' and '.join(fields)} for {int(bad.sum())} of {len(bad)} shapes",
        )


class _PredictorFaults:
    """What the registry does with the faults of one plugin's predictors
    (:class:`~graphsval_core.plugins.predictors.Faults`)."""

    def __init__(self, registry: Registry, plugin: str) -> None:
        self.registry = registry
        self.plugin = plugin

    def fail(self, predictor: str, what: str, error: BaseException) -> NoReturn:
        self.registry._predictor_failed(self.plugin, predictor, what, error)

    def rows(self, predictor: str, problems: list[tuple[str, str, Any, list[str]]]) -> NoReturn:
        import numpy as np

        registry = self.registry
        hook = "graphsval_register_predictors"
        for _, message, _, _ in problems:
            registry._record_once(
                self.plugin, hook, f"predictor {predictor!r}: {message}: those rows are left out"
            )
        bad = np.zeros(len(problems[0][2]), dtype=bool)
        for _, _, mask, _ in problems:
            bad |= np.asarray(mask, dtype=bool)
        reasons = [
            "; ".join(why[i] for _, _, mask, why in problems if mask[i]) for i in range(len(bad))
        ]
        fields = [name for name, _, _, _ in problems]
        raise PredictorRowsFailed(registry._label(self.plugin), predictor, fields, bad, reasons)

    def warn(self, predictor: str, field: str, message: str) -> None:
        line = f"predictor {predictor!r}: {message}"
        self.registry._hook_problem(
            self.plugin, "graphsval_register_predictors", line, ValueError(line), line
        )


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
    :class:`UnknownNameError` with close matches; a hook that nobody answers
    where an answer is required, or (strict mode) a failing implementation,
    raises :class:`HookError` naming the plugin and the hook.
    """

    def __init__(self, infos: dict[str, PluginInfo]) -> None:
        self.pm = GuardedPluginManager(PROJECT_NAME, self._hook_failed)
        self.pm.may_shape = self._may_shape
        self.pm.add_hookspecs(hookspecs)
        self.infos = infos
        self.problems: list[PluginProblem] = []
        self._targets: dict[str, TargetSpec] = {}
        self._target_plugin: dict[str, str] = {}
        self._ops: dict[str, OpSpec] = {}
        self._predictors: dict[str, PredictorSpec] = {}
        self._datasheet: dict[str, TargetSpec] = {}
        self.calibration_files: dict[str, str] = {}
        #: ``key -> one line``: a target whose workspace file (its target or its
        #: calibration) is broken; every use of the key is that error, never the
        #: datasheet's answer in its place
        self.workspace_errors: dict[str, str] = {}
        #: per calibrated target, the sha256 of each baseline file its fit read
        #: (its calibration file's provenance): those rows are in sample
        self.calibration_sources: dict[str, frozenset[str]] = {}
        #: per calibrated target fitted on validation rows, the file and the reason given
        self.calibration_overrides: dict[str, str] = {}
        #: per calibrated target, how well its fit pins each constant (``+- 4%``, ``at its
        #: floor``, ``not identified``: :func:`graphsval_core.files.calibration.fit_notes`)
        self.calibration_notes: dict[str, dict[str, str]] = {}
        #: key -> the out-of-sample figures its calibration file holds (grouped CV,
        #: the validation set; :func:`~graphsval_core.files.calibration.out_of_sample`)
        self.calibration_out_of_sample: dict[str, dict[str, dict[str, dict[str, float]]]] = {}
        #: ``plugin -> how notes name it``: plugins whose registrations replace
        #: any other plugin's of the same key (the workspace)
        self.overriding: dict[str, str] = {}
        #: ``key -> plugins whose registration of it an overriding plugin replaced``
        self.replaced: dict[str, list[str]] = {}
        #: What a user should know of the run, in one line each (not problems).
        self.notes: list[str] = []
        self._failures: set[tuple[str, str, str]] = set()
        #: ``op -> plugin``: ops refused at registration (a function failed on small shapes)
        self.refused_ops: dict[str, str] = {}
        self._raise_hook_errors = False
        self._loaded_problems: int | None = None
        #: ``id(spec) -> (spec, tiers)``: the hierarchy each spec object answered
        self._hierarchies: dict[int, tuple[TargetSpec, tuple[MemoryTier, ...]]] = {}

    # --- building, and the problems met (the loader's interface) -----------------

    def record_problem(self, plugin: str, message: str) -> None:
        """Record one problem of ``plugin``, in one line naming it."""
        info = self.infos.get(plugin)
        label = info.label if info else repr(plugin)
        line = " ".join(f"plugin {label}: {message}".split())  # one line, always
        self.problems.append(PluginProblem(plugin, line))
        if info is not None:
            info.errors.append(message)

    def reject(self, plugin: str, message: str) -> None:
        """Record a problem and take the plugin out of every hook."""
        self.record_problem(plugin, message)
        module = self.pm.get_plugin(plugin)
        if module is not None:
            self.pm.unregister(module, name=plugin)
        info = self.infos.get(plugin)
        if info is not None:
            info.loaded = False
            info.targets.clear()
            info.ops.clear()
            info.predictors.clear()

    def _hook_failed(self, plugin: str, hook: str, error: BaseException, malformed: bool) -> None:
        """A guarded implementation raised or answered garbage (``malformed``).

        A registration hook rejects the plugin whole. Any other hook records
        one problem per (plugin, hook, message); in strict mode, once loading
        is over, it raises :class:`HookError`.
        """
        self.pm.calls.fail(hook, plugin, error)
        if hook in MEASUREMENT_HOOKS and isinstance(error, Exception) and not malformed:
            return  # a failed measurement (out of memory, a kernel error) is the row's reason
        what = REGISTRATION_HOOKS.get(hook)
        if what is not None:  # the line names the hook, and what it raised or returned
            why = f"{error}" if malformed else f"{hook} raised {describe(error)}"
            self.reject(plugin, f"invalid {what} registration: {why}")
            return
        message = f"hook {error}" if malformed else f"hook {hook} raised {describe(error)}"
        # a malformed answer's message varies with the call (the batch's size):
        # one line per plugin and hook, the first
        self._hook_problem(plugin, hook, message, error, once="malformed" if malformed else None)

    def _hook_problem(
        self,
        plugin: str,
        hook: str,
        message: str,
        error: BaseException,
        detail: str | None = None,
        once: str | None = None,
    ) -> None:
        """Record a problem of ``plugin`` in ``hook`` once, however often it
        recurs (``once``: a key standing for the message, so that messages
        differing only in their numbers make one line); in strict mode once
        loading is over, raise :class:`HookError`."""
        self._record_once(plugin, hook, message, once)
        if self._raise_hook_errors:
            raise HookError(self._label(plugin), hook, error, detail)

    def _record_once(self, plugin: str, hook: str, message: str, key: str | None = None) -> None:
        if (plugin, hook, key or message) not in self._failures:
            self._failures.add((plugin, hook, key or message))
            self.record_problem(plugin, message)

    def contribution_problem(self, plugin: str, hook: str, message: str) -> None:
        """Something ``plugin`` contributed through ``hook`` cannot be used (a
        shipped file that does not parse, rows of a target nobody registers):
        recorded once, in one line; in strict mode once loading is over,
        :class:`HookError` is raised."""
        self._hook_problem(plugin, hook, message, ValueError(message), message)

    @property
    def strict(self) -> bool:
        """Whether a plugin problem met after loading stops the command."""
        return self._raise_hook_errors

    def _predictor_failed(
        self, plugin: str, name: str, what: str, error: BaseException
    ) -> NoReturn:
        """A guarded predictor failed: record it once, raise :class:`PredictorFailed`."""
        hook = "graphsval_register_predictors"
        self._record_once(plugin, hook, f"predictor {name!r} failed in {what}: {describe(error)}")
        raise PredictorFailed(self._label(plugin), name, what, error)

    def _op_failed(self, plugin: str, op: str, function: str, error: BaseException) -> NoReturn:
        """A guarded op's function failed: record it once, raise :class:`OpFailed`."""
        from graphsval_core.plugins.ops import describe_failure

        message = f"op {op!r}: {function} {describe_failure(error)}: its rows are left out"
        self._record_once(plugin, "graphsval_register_ops", message)
        raise OpFailed(self._label(plugin), op, function, error)

    def _label(self, plugin: str) -> str:
        info = self.infos.get(plugin)
        return info.label if info else repr(plugin)

    def loading_done(self, strict: bool) -> None:
        """Loading is over: later problems are run-time problems, and in strict
        mode a failing hook implementation raises :class:`HookError`."""
        self._loaded_problems = len(self.problems)
        self._raise_hook_errors = strict

    @property
    def runtime_problems(self) -> list[PluginProblem]:
        """The problems recorded after loading was over (hook failures at run time)."""
        if self._loaded_problems is None:
            return []
        return self.problems[self._loaded_problems :]

    # --- answers and who gave them ------------------------------------------------

    def _answers(self, hook: str, results: list[Any]) -> list[tuple[str, Any]]:
        """``(plugin, answer)`` for each answer of the call of ``hook`` that just
        returned ``results``."""
        return self.pm.calls.attribute(hook, results)

    def _items(self, hook: str, results: list[Any]) -> list[tuple[str, Any]]:
        """``(plugin, item)`` for each item of a collecting hook's answers."""
        return [
            (plugin, item) for plugin, answer in self._answers(hook, results) for item in answer
        ]

    def _is_first_party(self, plugin: str) -> bool:
        info = self.infos.get(plugin)
        return info is not None and is_first_party(info.distribution)

    def _is_builtin(self, plugin: str) -> bool:
        info = self.infos.get(plugin)
        return info is not None and info.builtin

    def _live(self, plugin: str) -> bool:
        info = self.infos.get(plugin)
        return info is None or info.loaded

    # --- registration -----------------------------------------------------------

    def _gather(
        self, hook: str, results: list[Any], key_of: Callable[[Any], str]
    ) -> dict[str, tuple[str, Any]]:
        """The records of a registration hook's answers: ``key -> (plugin, record)``.

        A key registered by an overriding plugin (the workspace) is its, and
        every other plugin's registration of it is replaced, in one note each.
        Otherwise a key registered by a first-party plugin and by a plugin of another
        distribution stays with the first-party one (the other's registration
        of it is dropped, naming both); a key registered more than once by
        plugins of the same standing is withdrawn, naming every registrant.
        """
        what = REGISTRATION_HOOKS[hook]
        owners: dict[str, list[tuple[str, Any]]] = {}
        for plugin, item in self._items(hook, results):
            if self._live(plugin):
                owners.setdefault(key_of(item), []).append((plugin, item))
        out: dict[str, tuple[str, Any]] = {}
        for key, entries in owners.items():
            entries = self._override(what, key, entries)
            first = [(p, item) for p, item in entries if self._is_first_party(p)]
            if first and len(first) < len(entries):
                names = self._names(entries)
                others = {p for p, _ in entries} - {p for p, _ in first}
                for plugin in sorted(others, key=self._load_order):
                    self.record_problem(
                        plugin,
                        f"{what} {key!r} is registered by {names}; first-party plugins take "
                        f"precedence, so the registration of {plugin!r} is dropped",
                    )
                entries = first
            if len(entries) > 1:
                names = self._names(entries)
                for plugin in sorted({p for p, _ in entries}, key=self._load_order):
                    self.record_problem(
                        plugin, f"{what} {key!r} is registered by {names}; the key is withdrawn"
                    )
                continue
            out[key] = entries[0]
        return out

    def _override(
        self, what: str, key: str, entries: list[tuple[str, Any]]
    ) -> list[tuple[str, Any]]:
        """``entries`` of ``key``, or only the overriding plugin's when there is
        one: each other plugin's registration is replaced, and noted."""
        mine = [(p, item) for p, item in entries if p in self.overriding]
        if not mine or len(mine) == len(entries):
            return entries
        plugin = mine[0][0]
        for other in sorted({p for p, _ in entries} - {plugin}, key=self._load_order):
            self.replaced.setdefault(key, []).append(other)
            self.notes.append(
                f"{what} {key} from {self.overriding[plugin]} replaces the one of plugin "
                f"{other!r} (its calibration and known findings no longer apply; a "
                "calibration in the workspace's calibration/ does)"
            )
        return mine

    def _load_order(self, plugin: str) -> int:
        order = list(self.infos)
        return order.index(plugin) if plugin in order else len(order)

    def _names(self, entries: list[tuple[str, Any]]) -> str:
        """``'a' and 'b'``: the plugins of ``entries`` in load order."""
        return " and ".join(repr(p) for p in sorted({p for p, _ in entries}, key=self._load_order))

    def register_all(self) -> None:
        """Gather every loaded plugin's targets, ops and predictors (clashes
        settled by first-party precedence)."""
        targets = self._gather(
            "graphsval_register_targets",
            self.pm.hook.graphsval_register_targets(),
            lambda t: t.key,
        )
        ops = self._gather(
            "graphsval_register_ops", self.pm.hook.graphsval_register_ops(), lambda o: o.name
        )
        predictors = self._gather(
            "graphsval_register_predictors",
            self.pm.hook.graphsval_register_predictors(),
            lambda p: p.name,
        )
        # a plugin rejected while gathering a later hook loses everything it registered
        for gathered, store, listing in (
            (targets, self._targets, "targets"),
            (ops, self._ops, "ops"),
            (predictors, self._predictors, "predictors"),
        ):
            for key, (plugin, record) in gathered.items():
                if self._live(plugin):
                    third_party = not self._is_builtin(plugin) and not self._is_first_party(plugin)
                    if listing == "ops" and third_party:  # (no numpy for the core's own)
                        reason = probe_op(record)
                        if reason is not None:
                            self.record_problem(plugin, f"op {key!r} is not registered: {reason}")
                            self.refused_ops[key] = plugin
                            continue
                        record = guarded_op(record, functools.partial(self._op_failed, plugin))
                    if listing == "predictors" and not self._is_builtin(plugin):
                        record = guarded(record, _PredictorFaults(self, plugin))
                    store[key] = record
                    if plugin in self.infos:
                        getattr(self.infos[plugin], listing).append(key)
                    if listing == "targets":
                        self._target_plugin[key] = plugin

    def _may_shape(self, plugin: str, key: str) -> bool:
        """Whether ``plugin`` may answer a model hook for target ``key``: the
        core's built-in plugins for every target, a plugin for those it
        registers, and for those it registered that the workspace replaces
        (an edited copy of the same device: the KPU's weight-stationary window
        still shapes it); a target nobody registers: anyone, e.g. a test's spec."""
        info = self.infos.get(plugin)
        owner = self._target_plugin.get(key)
        if bool(info is not None and info.builtin) or owner is None or owner == plugin:
            return True
        return plugin in self.replaced.get(key, ())

    def apply_calibrations(self) -> None:
        """Replace each calibrated target's spec by its calibrated copy."""
        from graphsval_core.files.calibration import apply_file, fit_notes, out_of_sample
        from graphsval_core.files.jsonfile import parse_json

        results = self.pm.hook.graphsval_calibrations()
        for plugin, item in self._items("graphsval_calibrations", results):
            name = file_ref_name(item)
            stem = os.path.basename(name).removesuffix(".calibration.json")
            key = None
            try:
                data = parse_json(read_file_ref(item), name)
                key = data.get("target") if isinstance(data, dict) else None
                if plugin == WORKSPACE and not isinstance(key, str):
                    raise ValueError("names no target (a 'target' key is required)")
                if plugin == WORKSPACE and key != stem:  # else silently the datasheet's answers
                    raise ValueError(
                        f"calibrates {key!r}, but its file name says {stem!r}: name the file "
                        f"{key}.calibration.json or set its target"
                    )
                if plugin == WORKSPACE and key not in self._targets:
                    raise ValueError(f"calibrates {key!r}, a target no plugin or workspace has")
                if key not in self._targets or plugin in self.replaced.get(key, ()):
                    continue  # a replaced plugin's calibration no longer applies
                if self._target_plugin.get(key) != plugin:
                    owner = self._target_plugin.get(key)
                    if plugin == WORKSPACE:  # say how to make it apply
                        raise ValueError(
                            f"calibrates {key!r}, a target of plugin {owner!r}, and a workspace "
                            "calibration applies only to a workspace target: put its target "
                            f"file in the workspace's targets/{key}.target.json (it then "
                            "replaces the installed one)"
                        )
                    raise ValueError(f"calibrates {key!r}, a target of another plugin")
                self._datasheet[key] = self._targets[key]
                self._targets[key] = apply_file(self._datasheet[key], data, name)
                self.calibration_files[key] = name
                self.calibration_sources[key] = _fitted_hashes(data)
                self.calibration_notes[key] = fit_notes(data)
                self.calibration_out_of_sample[key] = out_of_sample(data)
                override = (data.get("provenance") or {}).get("validation_rows_override")
                if isinstance(override, str) and override:
                    self.calibration_overrides[key] = f"{name}: {override}"
            except Exception as exc:
                if plugin == WORKSPACE:  # the user's own file: an error for the target it names
                    text = str(exc).removeprefix(f"{name}: ")
                    self.workspace_error(
                        stem, f"workspace calibration {name}: {text}; fix or remove it"
                    )
                why = input_error(exc).removeprefix(f"{name}: ")
                self.record_problem(plugin, f"invalid calibration {name}: {why}")

    # --- public API ---------------------------------------------------------------

    @property
    def plugins(self) -> list[PluginInfo]:
        """Every plugin seen, loaded or not, in load order."""
        return list(self.infos.values())

    def targets(self) -> dict[str, TargetSpec]:
        """Every registered target by key."""
        return dict(self._targets)

    def workspace_error(self, key: str, message: str) -> None:
        """Target ``key`` of the workspace is unusable: its file (target or
        calibration) is broken, as ``message`` says (the first one kept)."""
        self.workspace_errors.setdefault(key, message)

    def target(self, key: str) -> TargetSpec:
        """The target ``key``; :class:`UnknownNameError` names close keys and the
        first-party distributions that are not installed (one may provide it).
        A target whose workspace file is broken raises
        :class:`~graphsval_core.datamodel.errors.UserInputError` saying why."""
        if key in self.workspace_errors:
            raise UserInputError(self.workspace_errors[key])
        if key in self._targets:
            return self._targets[key]
        loaded = {i.distribution for i in self.infos.values() if i.loaded}
        missing = sorted(FIRST_PARTY_DISTRIBUTIONS - loaded - {CORE_DISTRIBUTION})
        hint = f" (first-party plugins not loaded: {', '.join(missing)})" if missing else ""
        raise UnknownNameError(f"unknown target {clip(key)}{_suggest(key, self._targets)}{hint}")

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
        raise UnknownNameError(f"unknown op {clip(name)}{_suggest(name, self._ops)}")

    def predictors(self) -> dict[str, PredictorSpec]:
        return dict(self._predictors)

    def predictor(self, name: str) -> PredictorSpec:
        """The predictor ``name``; a plugin's has its ``predict`` and
        ``constants`` guarded (:class:`PredictorFailed` names the plugin)."""
        if name in self._predictors:
            return self._predictors[name]
        raise UnknownNameError(f"unknown predictor {clip(name)}{_suggest(name, self._predictors)}")

    def predictor_constants(
        self, predictor: PredictorSpec, target: TargetSpec, op: OpSpec, dtype: str
    ) -> tuple[PredictorConstant, ...] | None:
        """The constants ``predictor`` declares for ``target``, ``op`` and
        ``dtype``; None when it declares none (no ``constants`` function)."""
        if predictor.constants is None:
            return None
        return tuple(predictor.constants(self, target, op, dtype))

    def memory_hierarchy(self, target: TargetSpec) -> tuple[MemoryTier, ...]:
        """The target's tiers, innermost first (first-result hook). A spec is
        immutable, so each spec object's answer is asked for once."""
        known = self._hierarchies.get(id(target))
        if known is not None and known[0] is target:
            return known[1]
        tiers = self.pm.hook.graphsval_memory_hierarchy(target=target)
        if tiers is None:
            raise HookError("'graphsval'", "graphsval_memory_hierarchy", LookupError("no answer"))
        if len(self._hierarchies) >= _HIERARCHIES_KEPT:
            self._hierarchies.clear()
        self._hierarchies[id(target)] = (target, tuple(tiers))
        return self._hierarchies[id(target)][1]

    def residency_window(
        self, target: TargetSpec, op: OpSpec, shapes: Any, dtype: str, tier: MemoryTier
    ) -> Any:
        """The tile of its matrix product each shape keeps alive in ``tier``
        (first-result hook); :class:`HookError` when no implementation answers
        for an op with a matrix product (the built-in default always does)."""
        tiles = self.pm.hook.graphsval_residency_window(
            target=target, op=op, shapes=shapes, dtype=dtype, tier=tier
        )
        if tiles is None and op.gemm_dims is not None:
            raise HookError("'graphsval'", "graphsval_residency_window", LookupError("no answer"))
        return tiles

    def placeholder_note(self, target: TargetSpec) -> str | None:
        """Why ``target``'s figures are placeholders (a target detected from
        this machine, which cannot probe it: ``host_gpu`` with no GPU), as one
        sentence; None when they are a part's."""
        if not target.detected:
            return None
        probe = self.measurer_probe(target)
        if probe.available:
            return None
        return (
            f"{target.key} is detected from this machine, which it cannot probe "
            f"({probe.reason}): its figures are placeholders, not a part's"
        )

    def measurer_probe(self, target: TargetSpec) -> ProbeResult:
        """Whether ``target`` can be measured here; never raises for a plugin
        bug: a probe that failed is the reason it cannot."""
        try:
            result: ProbeResult | None = self.pm.hook.graphsval_measurer_probe(target=target)
        except HookError as exc:
            return ProbeResult(False, str(exc))
        if result is None:
            failed = self.pm.calls.failures("graphsval_measurer_probe")
            if failed:
                plugin, error = failed[0]
                hook_error = HookError(self._label(plugin), "graphsval_measurer_probe", error)
                return ProbeResult(False, str(hook_error))
            return ProbeResult(False, "no installed plugin measures this target")
        return result

    def measure(
        self, target: TargetSpec, op: OpSpec, shape: tuple[int, ...], dtype: str, settings: Any
    ) -> Measurement | None:
        """One measurement of ``shape`` on this machine (first-result hook).

        A measurer that raises an error (out of memory, a kernel error) is no
        plugin problem but a failed measurement: when no other plugin measures
        the shape, its error is raised again here, for the capture to record
        as the row's reason. A malformed answer, ``sys.exit`` or a
        KeyboardInterrupt with no Ctrl-C is a plugin problem, and the row's
        reason names it (a :class:`RuntimeError`); in strict mode the guard
        raises :class:`HookError` instead, which stops the capture."""
        result: Measurement | None = self.pm.hook.graphsval_measure(
            target=target, op=op, shape=shape, dtype=dtype, settings=settings
        )
        if result is None:
            failed = self.pm.calls.failures("graphsval_measure")
            if failed:
                plugin, error = failed[0]
                if isinstance(error, Exception) and not isinstance(error, TypeError):
                    raise error
                raise RuntimeError(str(HookError(self._label(plugin), "graphsval_measure", error)))
        return result

    def snapshot_target(self, target: TargetSpec, settings: Any) -> TargetSpec | None:
        """The named target a capture of detected ``target`` records under."""
        result: TargetSpec | None = self.pm.hook.graphsval_snapshot_target(
            target=target, settings=settings
        )
        return result

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
        return self._items("graphsval_baselines", self.pm.hook.graphsval_baselines())

    def floors_files(self) -> dict[str, Any]:
        """``plugin -> floors path`` of every plugin that has one."""
        return dict(self._answers("graphsval_floors", self.pm.hook.graphsval_floors()))

    def prediction_snapshots(self) -> dict[str, Any]:
        """``plugin -> prediction snapshot path`` of every plugin that has one."""
        results = self.pm.hook.graphsval_prediction_snapshot()
        return dict(self._answers("graphsval_prediction_snapshot", results))

    def expected_failures(self, target: TargetSpec) -> dict[str, str]:
        """The known findings about ``target``, ``check -> reason``, as the plugin
        that registered it declares them; another plugin's declarations about it
        are refused (recorded as a problem), so no plugin silences another's
        target. The plugin whose registration of the key the workspace replaced
        is not asked: its findings were about its own spec."""
        results = self.pm.hook.graphsval_expected_failures(target=target)
        owner = self._target_plugin.get(target.key)
        out: dict[str, str] = {}
        for plugin, answer in self._answers("graphsval_expected_failures", results):
            if not answer or plugin in self.replaced.get(target.key, ()):
                continue
            if plugin != owner:
                message = (
                    f"declares known findings about {target.key!r}, a target of plugin "
                    f"{owner!r}; only a target's own plugin may, so they are ignored"
                )
                self.contribution_problem(plugin, "graphsval_expected_failures", message)
                continue
            out.update(answer)
        return out

    def sweep_overlays(self) -> list[tuple[str, Any]]:
        """``(plugin, path_or_traversable)`` of every shipped sweep-label overlay."""
        return self._items("graphsval_sweep_overlays", self.pm.hook.graphsval_sweep_overlays())

    def consistency_checks(self, target: TargetSpec) -> list[tuple[str, ConsistencyCheck]]:
        """``(plugin, check)`` pairs for ``target``; a plugin's check has its
        ``run`` guarded (:meth:`_guarded_check`)."""
        results = self.pm.hook.graphsval_consistency_checks(target=target)
        return [
            (plugin, check if self._is_builtin(plugin) else self._guarded_check(plugin, check))
            for plugin, check in self._items("graphsval_consistency_checks", results)
        ]

    def _guarded_check(self, plugin: str, check: ConsistencyCheck) -> ConsistencyCheck:
        """``check`` whose ``run`` never fails the run for a plugin's fault: one
        that raises (any error, ``sys.exit``, a KeyboardInterrupt that is no
        Ctrl-C) or returns anything but outcomes is a problem of ``plugin``,
        recorded once in one line (strict mode: :class:`HookError`), and
        gives one skipped outcome saying so: a plugin problem, never a target
        failure."""
        from attrs import evolve

        from graphsval_core.datamodel.outcome import Outcome, skipped

        hook = "graphsval_consistency_checks"
        run = check.run

        def guarded(target: TargetSpec, context: Any) -> list[Any]:
            try:
                produced = list(run(target, context))
                for item in produced:
                    if not isinstance(item, Outcome):
                        raise TypeError(f"returned {type(item).__name__}, expected Outcome records")
            except HookError:  # strict mode: a hook failed under the check
                raise
            except BaseException as exc:
                if not is_plugin_fault(exc):
                    raise
                what = str(exc) if isinstance(exc, TypeError) else f"raised {describe(exc)}"
                if isinstance(exc, TypeError) and not str(exc).startswith("returned "):
                    what = f"raised {describe(exc)}"
                message = f"consistency check {check.name!r} {what}"
                self._hook_problem(plugin, hook, message, exc, message)
                reason = f"the check of plugin {plugin!r} failed (a plugin problem, named below)"
                return [skipped(check.name, target.key, reason)]
            return produced

        return evolve(check, run=guarded)


def _suggest(name: str, known: Iterable[str]) -> str:
    """``; did you mean ...?`` with the close names (one that differs only in
    case first), else ``; known: ...`` (or that none is installed)."""
    known = sorted(known)
    case = [k for k in known if k.casefold() == name.casefold()]
    near = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
    close = (case + [k for k in near if k not in case])[:3]
    if close:
        return f"; did you mean {', '.join(close)}?"
    return f"; known: {', '.join(known)}" if known else "; none is installed"


def _fitted_hashes(data: Any) -> frozenset[str]:
    """The sha256 of every baseline file a calibration file says its fit read
    (``provenance.sources[].sha256``; none where it names none)."""
    provenance = data.get("provenance") if isinstance(data, dict) else None
    sources = provenance.get("sources") if isinstance(provenance, dict) else None
    if not isinstance(sources, list):
        return frozenset()
    return frozenset(
        s["sha256"] for s in sources if isinstance(s, dict) and isinstance(s.get("sha256"), str)
    )
