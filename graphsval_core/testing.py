"""Fixtures and the conformance class for plugin authors: an opt-in pytest plugin.

Enable it in a test module (or the root ``conftest.py``)::

    pytest_plugins = ["graphsval_core.testing"]

or on the command line with ``-p graphsval_core.testing``. It has no ``pytest11``
entry point, so installing graphsval changes nobody's test run.

Fixtures:

- ``graphsval_registry``: a fresh registry of the installed plugins (strict).
- ``graphsval_register_plugin(*plugins, strict=True, autoload=False)``: a fresh
  registry of the built-ins and the given in-process plugins (modules, import
  paths or ``(name, object)`` pairs).
- ``graphsval_cli(*args, plugins=(), env=None)``: run the ``graphsval`` command
  in-process (click's ``CliRunner``), optionally with in-process plugins.

Helpers: ``make_registry`` (what ``graphsval_register_plugin`` returns) and
``target_field(output, name)``, one field of ``graphsval targets --hw KEY``'s
listing as its cells and where its value comes from, whatever the width
wrapped.

The conformance class, :class:`PluginConformance`, proves a plugin honours the
contract of :mod:`graphsval_core.plugins.hookspecs`: every hook it implements
is called as the tool calls it, and a predictor it registers validates a tiny
baseline through the real harness (on its own targets, else on a toy target
the class registers); subclass it once::

    from graphsval_core.testing import PluginConformance

    class TestAcmeConformance(PluginConformance):
        plugin_module = "graphsval_acme.plugin"
        entry_point_name = "acme"

PYTEST_DONT_REWRITE: test modules import this module before pytest registers it
as a plugin, so its asserts carry explicit messages instead of being rewritten.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import re
import sys
import time
import types
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar

import pytest

from graphsval_core import PLUGIN_API_VERSION, PROJECT_NAME
from graphsval_core.plugins.guards import original_function
from graphsval_core.plugins.loader import PluginLoadError, build_registry
from graphsval_core.plugins.registry import Registry

PluginArg = types.ModuleType | str | tuple[str, Any]


def _plugin_pair(plugin: PluginArg) -> tuple[str, Any]:
    """``(name, object)`` of a module, an import path or a pair."""
    if isinstance(plugin, tuple):
        return plugin
    if isinstance(plugin, str):
        return plugin, importlib.import_module(plugin)
    return plugin.__name__, plugin


def make_registry(*plugins: PluginArg, strict: bool = True, autoload: bool = False) -> Registry:
    """A fresh registry: the built-ins, the given plugins, and (with
    ``autoload``) every installed entry point."""
    return build_registry(
        strict=strict, autoload=autoload, extra_plugins=[_plugin_pair(p) for p in plugins]
    )


def target_field(output: str, name: str) -> tuple[list[str], str]:
    """One field of ``graphsval targets --hw KEY``'s listing (``output``), or
    one target of ``graphsval targets``': its cells after the name (VALUE,
    DATASHEET, and FIT where shown; a cell the width wrapped joined into
    one line, one that spans the empty cells after it read whole) and the
    note beneath it (where its value comes from; the indented lines,
    joined; empty where none). The name may be wrapped too."""
    lines = output.splitlines()
    for k, line in enumerate(lines):
        if not line.strip() or set(line) - {"-", " "}:
            continue  # a table's rule: its rows follow
        spans = [(m.start(), m.end()) for m in re.finditer(r"-+", line)]
        for row, note in _table_rows(lines[k + 1 :]):
            cells = _row_cells(row, spans)
            if cells[0] == name:
                return cells[1:], note
    raise AssertionError(f"no field {name!r} in the listing")


def _table_rows(lines: list[str]) -> Iterator[tuple[list[str], str]]:
    """The rows of a table after its rule: each row's lines (it starts at a
    line that does not start with a space) and its note (the lines indented
    four spaces beneath it, joined), up to the table's end."""
    row: list[str] = []
    note: list[str] = []
    for line in lines:
        if line.startswith("    ") and line[4:5].strip() and row:
            note.append(line.strip())
        elif line.startswith(" ") and row and not note:
            row.append(line)  # the row's wrapped cells
        elif line.strip() and not line.startswith(" "):
            if row:
                yield row, " ".join(note)
            row, note = [line], []
        else:
            break
    if row:
        yield row, " ".join(note)


def _row_cells(row: list[str], spans: list[tuple[int, int]]) -> list[str]:
    """The cells of one row's lines under the rule's ``spans``: each cell's
    wrapped lines joined; a cell whose text crosses the gap after its column
    spans the rest of the row (the empty cells after it)."""
    last = len(spans) - 1
    for j in range(1, len(spans) - 1):
        if any(line[spans[j][1] : spans[j + 1][0]].strip() for line in row):
            last = j
            break
    ends: list[int | None] = [b for _, b in spans[:last]] + [None]
    cells = [
        " ".join(" ".join(line[a:b].strip() for line in row).split())
        for (a, _), b in zip(spans[: last + 1], ends, strict=True)
    ]
    return cells + [""] * (len(spans) - 1 - last)


# --- fixtures -----------------------------------------------------------------


@pytest.fixture(scope="session", autouse=True)
def graphsval_empty_workspace(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Every test runs with an empty workspace (``GRAPHSVAL_WORKSPACE``: a
    temporary folder, not created), never the user's data directory. Autouse
    wherever this module is loaded; a plugin's ``conftest.py`` imports it to
    cover all its tests."""
    from graphsval_core.workspace.location import ENV_WORKSPACE

    folder = tmp_path_factory.getbasetemp() / "workspace"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(ENV_WORKSPACE, str(folder))
        yield folder


@pytest.fixture
def graphsval_registry() -> Registry:
    """A fresh registry of the installed plugins, built strictly."""
    return build_registry(strict=True, autoload=True)


@pytest.fixture
def graphsval_register_plugin() -> Callable[..., Registry]:
    """Factory: a fresh registry of the built-ins and the given in-process plugins."""
    return make_registry


@pytest.fixture
def graphsval_cli(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> Callable[..., Any]:
    """Factory: run ``graphsval ARGS...`` in-process; returns click's ``Result``.

    ``plugins`` are registered in-process on top of the installed ones;
    ``env`` adds environment variables for the run. The workspace is an empty
    temporary folder (``GRAPHSVAL_WORKSPACE``), never the user's own, unless
    ``env`` names one.
    """
    from graphsval_core.workspace.location import ENV_WORKSPACE

    workspace = tmp_path_factory.mktemp("workspace") / "ws"
    from click.testing import CliRunner

    from graphsval_core.cli.main import cli
    from graphsval_core.plugins import loader

    real_build = loader.build_registry

    def run(
        *args: str, plugins: Sequence[PluginArg] = (), env: Mapping[str, str] | None = None
    ) -> Any:
        extra = [_plugin_pair(p) for p in plugins]

        def build(**kwargs: Any) -> Registry:
            kwargs["extra_plugins"] = [*kwargs.get("extra_plugins", ()), *extra]
            return real_build(**kwargs)

        monkeypatch.setattr(loader, "build_registry", build)
        run_env = {ENV_WORKSPACE: str(workspace), **dict(env or {})}
        return CliRunner().invoke(cli, [str(a) for a in args], env=run_env)

    return run


# --- guards used by the conformance checks -------------------------------------


def _under(name: str, roots: Sequence[str]) -> bool:
    return any(name == r or name.startswith(r + ".") for r in roots)


class _ImportRecorder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Refuses, and records, any import of the ``forbidden`` modules."""

    def __init__(self, forbidden: Sequence[str]) -> None:
        self.forbidden = tuple(forbidden)
        self.attempts: list[str] = []

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if not _under(name, self.forbidden):
            return None
        for finder in sys.meta_path:  # presence checks (find_spec) still see the truth
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            if finder.find_spec(name, path, target) is not None:
                return importlib.machinery.ModuleSpec(name, self)
        return None

    def create_module(self, spec: Any) -> Any:
        self.attempts.append(spec.name)
        raise ImportError(f"graphsval conformance: importing {spec.name} is forbidden here")

    def exec_module(self, module: Any) -> None:  # pragma: no cover - never reached
        raise ImportError(module.__name__)


@contextmanager
def forbid_imports(forbidden: Sequence[str], fresh: Sequence[str] = ()) -> Iterator[list[str]]:
    """Within the block, importing ``forbidden`` (and submodules) fails and is
    recorded in the yielded list, even when they were imported before; the
    ``fresh`` packages are re-imported on first use, so their import-time work
    runs again. ``sys.modules`` is restored afterwards."""
    roots = (*forbidden, *fresh)
    saved = {n: m for n, m in sys.modules.items() if _under(n, roots)}
    for name in saved:
        del sys.modules[name]
    recorder = _ImportRecorder(forbidden)
    sys.meta_path.insert(0, recorder)
    try:
        yield recorder.attempts
    finally:
        sys.meta_path.remove(recorder)
        for name in [n for n in sys.modules if _under(n, roots)]:
            del sys.modules[name]
        sys.modules.update(saved)


def _listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def _is_file_like(item: Any) -> bool:
    if isinstance(item, str | os.PathLike):
        return Path(item).is_file()
    return hasattr(item, "read_text") and hasattr(item, "is_file") and item.is_file()


def _items(hook: str, result: Any) -> list[Any]:
    """The items of a collecting hook's result (None is no item)."""
    if result is None:
        return []
    if isinstance(result, str | bytes) or not hasattr(result, "__iter__"):
        raise AssertionError(f"{hook} returned {type(result).__name__}, not an iterable")
    return list(result)


def _fresh_roots(module: types.ModuleType) -> list[str]:
    """The plugin's top-level package, re-imported fresh by the guards (never the core)."""
    top = module.__name__.split(".")[0]
    return [] if top == "graphsval_core" else [top]


# --- a toy target and a tiny baseline, for predictor plugins --------------------

#: The target a predictor plugin with no target of its own is validated on.
TOY_TARGET = "graphsval_conformance_toy"


def _toy_plugin() -> types.ModuleType:
    """An in-process plugin registering :data:`TOY_TARGET`: a small CPU-like
    part with fp32 and fp16, an L1, an L2 and DRAM."""
    from graphsval_core import hookimpl
    from graphsval_core.plugin_api import MemoryTier, TargetSpec, datasheet

    def tier(name: str, capacity: float, bandwidth: float, shared: bool = False) -> MemoryTier:
        return MemoryTier(
            name,
            datasheet(capacity, "conformance toy"),
            not shared,
            1 if shared else 8,
            datasheet(bandwidth, "conformance toy"),
            datasheet(5.0, "conformance toy"),
            energy_per_byte_j=datasheet(5e-12, "conformance toy"),
        )

    def toy() -> TargetSpec:
        source = "conformance toy"
        return TargetSpec(
            key=TOY_TARGET,
            name="graphsval conformance toy target",
            family="graphsval_conformance",
            architecture="cpu",
            compute_units=datasheet(8, source),
            clock_hz=datasheet(2e9, source),
            peak_ops_per_s={"fp32": datasheet(5e11, source), "fp16": datasheet(1e12, source)},
            energy_per_op_j={"fp32": datasheet(5e-12, source), "fp16": datasheet(3e-12, source)},
            launch_overhead_s=datasheet(5e-6, source),
            idle_power_w=datasheet(5.0, source),
            tdp_w=datasheet(65.0, source),
            ground_truth="measured",
            tiers=[
                tier("l1", 32 * 1024, 2e12),
                tier("l2", 1024 * 1024, 8e11),
                tier("dram", 16 * 1024**3, 5e10, shared=True),
            ],
        )

    module = types.ModuleType(TOY_TARGET)
    module.graphsval_api_version = PLUGIN_API_VERSION  # type: ignore[attr-defined]
    module.graphsval_register_targets = hookimpl(lambda: [toy()])  # type: ignore[attr-defined]
    return module


def _tiny_baseline(registry: Registry, target: Any, path: Path) -> Path:
    """A validation baseline of three shapes of every op on ``target`` at its
    first dtype, measured 30% slower (and costlier) than the reference model
    predicts: enough records for every verdict, failing cells for attribution."""
    import numpy as np

    dtype = target.dtypes[0]
    lines = ["hardware,op,shape,dtype,latency_s,energy_j,trial_count,notes,purpose"]
    reference = registry.predictor("reference")
    for op in registry.ops().values():
        shapes = np.array([[n] * len(op.dims) for n in (64, 512, 2048)], dtype=np.int64)
        pred = reference.predict(registry, target, op, shapes, dtype)
        for i, dims in enumerate(shapes):
            shape = "x".join(str(int(d)) for d in dims)
            latency, energy = 1.3 * pred.latency_s[i], 1.3 * pred.energy_j[i]
            lines.append(
                f"{target.key},{op.name},{shape},{dtype},{latency:.6e},{energy:.6e},5,,validation"
            )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# --- the conformance class ------------------------------------------------------

_REGISTRIES: dict[type, Registry] = {}
_TOY_REGISTRIES: dict[type, Registry] = {}


class PluginConformance:
    """Subclass once per plugin to prove it honours the plugin contract.

    Set :attr:`plugin_module` (the entry-point module or its import path) and,
    for an installed plugin, :attr:`entry_point_name` (the name in the
    ``graphsval`` entry-point group): the plugin is then loaded through its
    installed entry point. The checks run on a registry holding the built-ins
    and this plugin alone, built strictly.

    Every hook the plugin implements is called as the tool calls it, through
    the registry's guards (:mod:`graphsval_core.authoring.health`), so a
    plugin that would crash or be refused by the tool fails here; each
    predictor it registers validates a tiny baseline through the real
    harness and reports. ``graphsval_measure`` is never called: it needs the
    hardware.
    """

    #: The plugin's entry-point module, or its import path.
    plugin_module: ClassVar[types.ModuleType | str | None] = None
    #: The plugin's name in the ``graphsval`` entry-point group, if installed.
    entry_point_name: ClassVar[str | None] = None
    #: A probe of one target must take less than this (fastest of three calls).
    probe_budget_s: ClassVar[float] = 0.1
    #: Modules a probe (and the entry-point module's import) must not import.
    forbidden_imports: ClassVar[tuple[str, ...]] = ("torch",)

    # --- helpers ----------------------------------------------------------------

    def module(self) -> types.ModuleType:
        """The plugin's entry-point module."""
        if self.plugin_module is None:
            raise AssertionError(f"{type(self).__name__}: set plugin_module")
        if isinstance(self.plugin_module, str):
            return importlib.import_module(self.plugin_module)
        return self.plugin_module

    def plugin_name(self) -> str:
        """The plugin's name in the registry."""
        return self.entry_point_name or self.module().__name__

    def registry(self) -> Registry:
        """The built-ins and this plugin alone, built strictly (cached per class)."""
        cls = type(self)
        if cls not in _REGISTRIES:
            _REGISTRIES[cls] = self._build_registry()
        return _REGISTRIES[cls]

    def _build_registry(self) -> Registry:
        module = self.module()
        try:
            if self.entry_point_name is None:
                return build_registry(
                    strict=True, autoload=False, extra_plugins=[(self.plugin_name(), module)]
                )
            from graphsval_core.plugins.loader import _entry_points

            eps = {ep.name: ep for ep in _entry_points()}
            ep = eps.get(self.entry_point_name)
            assert ep is not None, (
                f"no entry point {self.entry_point_name!r} in group {PROJECT_NAME!r}: "
                f"install the plugin (pip install -e .)"
            )
            assert ep.value.split(":")[0] == module.__name__, (
                f"entry point {self.entry_point_name!r} names {ep.value!r}, not {module.__name__!r}"
            )
            return build_registry(strict=True, autoload=False, plugin_args=[ep.name])
        except PluginLoadError as exc:
            raise AssertionError(str(exc)) from None

    def own_targets(self) -> list[Any]:
        """The targets this plugin registers."""
        registry = self.registry()
        return [registry.target(k) for k in registry.infos[self.plugin_name()].targets]

    def own_impls(self, hook: str) -> list[Any]:
        """This plugin's implementations of ``hook``."""
        caller = getattr(self.registry().pm.hook, hook)
        return [i for i in caller.get_hookimpls() if i.plugin_name == self.plugin_name()]

    @staticmethod
    def call(impl: Any, **kwargs: Any) -> Any:
        """Call a hook implementation's own function (without the registry's
        guard, so its answer is checked as the plugin gives it) with the
        keyword arguments it accepts."""
        function = original_function(impl)
        return function(**{name: kwargs[name] for name in impl.argnames})

    # --- the contract -----------------------------------------------------------

    def test_plugin_loads_strictly(self) -> None:
        """The plugin declares a compatible API version, loads with no problem,
        marks every ``graphsval_*`` function as a hook implementation of a known
        hook, implements at least one, and imports nothing heavy at import time."""
        module = self.module()
        declared = getattr(module, "graphsval_api_version", None)
        assert declared is not None, f"{module.__name__} declares no graphsval_api_version"
        assert str(declared).split(".")[0] == PLUGIN_API_VERSION.split(".")[0], (
            f"{module.__name__} is built for plugin API {declared}; the core implements "
            f"{PLUGIN_API_VERSION}"
        )
        registry = self.registry()
        info = registry.infos.get(self.plugin_name())
        assert info is not None and info.loaded, f"plugin {self.plugin_name()!r} did not load"
        from graphsval_core.plugins import hookspecs

        marker = f"{PROJECT_NAME}_impl"
        for name in dir(module):
            obj = getattr(module, name)
            if not name.startswith("graphsval_") or not callable(obj):
                continue
            assert hasattr(obj, marker), f"{module.__name__}.{name} is not marked @hookimpl"
            assert hasattr(hookspecs, name), f"{module.__name__}.{name} is no graphsval hook"
        hooks = registry.pm.get_hookcallers(registry.pm.get_plugin(self.plugin_name()))
        assert hooks, f"plugin {self.plugin_name()!r} implements no hook"
        if isinstance(self.plugin_module, str):
            with forbid_imports(self.forbidden_imports, _fresh_roots(module)) as attempts:
                importlib.import_module(module.__name__)
            assert not attempts, f"importing {module.__name__} imports {', '.join(attempts)}"

    def test_hooks_answer_as_the_tool_expects(self) -> None:
        """Every hook the plugin implements (measuring aside), called by the
        tool's own health check with realistic arguments, answers what its
        spec promises, and every file it ships parses: what ``graphsval
        plugins`` and ``--strict-plugins`` would find."""
        from graphsval_core.authoring.health import exercise
        from graphsval_core.plugins.registry import HookError

        registry = self.predictor_registry()
        try:
            exercise(registry, only=[self.plugin_name()])
        except HookError as exc:
            raise AssertionError(str(exc)) from None
        mine = [str(p) for p in registry.problems if p.plugin == self.plugin_name()]
        assert not mine, "plugin problems:\n  " + "\n  ".join(mine)

    def test_predictors_validate_a_baseline(self, tmp_path: Path) -> None:
        """Each predictor the plugin registers validates a tiny baseline (three
        shapes of every op on one target, measured 30% slower than the
        reference model predicts) through the real harness, explains a shape,
        and renders every report, attribution included."""
        registry = self.predictor_registry()
        names = registry.infos[self.plugin_name()].predictors
        if not names:
            pytest.skip("the plugin registers no predictor")
        from graphsval_core.model.predict import predict_shapes
        from graphsval_core.plugins.registry import HookError
        from graphsval_core.validate.report import render
        from graphsval_core.validate.workflow import ValidateOptions, reports, validate

        target = self.predictor_target(registry)
        csv = _tiny_baseline(registry, target, tmp_path / f"{target.key}.validation.csv")
        for name in names:
            try:
                result = validate(registry, ValidateOptions(baselines=[str(csv)], predictor=name))
                op = next(iter(registry.ops().values()))
                dims = tuple([64] * len(op.dims))
                predict_shapes(registry, target, op, [dims], target.dtypes[0], name).row(0)
            except HookError as exc:
                raise AssertionError(str(exc)) from None
            assert result.summary is not None and result.validation is not None
            assert result.summary.checked, f"predictor {name!r} validated no record"
            render(result.summary, result.validation)
            assert set(reports(result, registry)) == {
                "report.json",
                "report.md",
                "records.csv",
                "report.html",
            }

    def predictor_target(self, registry: Registry) -> Any:
        """The target the predictors are run on: the plugin's first own target,
        else the conformance class's toy target."""
        own = self.own_targets()
        return own[0] if own else registry.target(TOY_TARGET)

    def predictor_registry(self) -> Registry:
        """This plugin's registry, with the toy target when the plugin has no
        target of its own (cached per class)."""
        cls = type(self)
        if self.own_targets():
            return self.registry()
        if cls not in _TOY_REGISTRIES:
            extra = [("graphsval_conformance_toy", _toy_plugin())]
            try:
                if self.entry_point_name is None:
                    extra.append((self.plugin_name(), self.module()))
                    _TOY_REGISTRIES[cls] = build_registry(
                        strict=True, autoload=False, extra_plugins=extra
                    )
                else:
                    _TOY_REGISTRIES[cls] = build_registry(
                        strict=True,
                        autoload=False,
                        plugin_args=[self.entry_point_name],
                        extra_plugins=extra,
                    )
            except PluginLoadError as exc:
                raise AssertionError(str(exc)) from None
        return _TOY_REGISTRIES[cls]

    def test_target_specs_valid(self) -> None:
        """Every target is a valid spec (it rebuilds from its own fields) and
        every number says where it comes from (a provenance with a source)."""
        from attrs import evolve

        from graphsval_core.datamodel.target import SpecError, TargetSpec

        for target in self.own_targets():
            assert isinstance(target, TargetSpec), f"{target!r} is not a TargetSpec"
            try:
                evolve(target)  # re-runs every validator
            except SpecError as exc:
                raise AssertionError(f"{target.key}: {exc}") from None
            sources = [(name, p) for name, p in target.provenance.items()]
            for tier in target.tiers:
                sources += [(f"{tier.name}.{n}", p) for n, p in tier.provenance.items()]
            for name, prov in sources:
                assert prov.source.strip(), f"{target.key}: {name} has no provenance source"

    def test_hooks_return_right_types(self) -> None:
        """Each hook this plugin implements returns what its spec promises."""
        import numpy as np

        from graphsval_core.datamodel.op import OpSpec
        from graphsval_core.datamodel.target import MemoryTier, TargetSpec
        from graphsval_core.plugins.records import ConsistencyCheck, PredictorSpec, ProbeResult

        records = {
            "graphsval_register_targets": TargetSpec,
            "graphsval_register_ops": OpSpec,
            "graphsval_register_predictors": PredictorSpec,
        }
        for hook, record in records.items():
            for impl in self.own_impls(hook):
                for item in _items(hook, self.call(impl)):
                    assert isinstance(item, record), f"{hook} returned {type(item).__name__}"
        for hook in ("graphsval_baselines", "graphsval_calibrations", "graphsval_sweep_overlays"):
            for impl in self.own_impls(hook):
                for item in _items(hook, self.call(impl)):
                    assert _is_file_like(item), f"{hook} returned {item!r}, not an existing file"
        for hook in ("graphsval_floors", "graphsval_prediction_snapshot"):
            for impl in self.own_impls(hook):
                path = self.call(impl)
                assert (
                    path is None
                    or isinstance(path, str | os.PathLike)
                    or hasattr(path, "read_text")
                ), f"{hook} returned {path!r}"
        registry = self.registry()
        for target in self.own_targets():
            for impl in self.own_impls("graphsval_expected_failures"):
                found = self.call(impl, target=target)
                assert found is None or (
                    isinstance(found, Mapping)
                    and all(isinstance(k, str) and isinstance(v, str) for k, v in found.items())
                ), f"graphsval_expected_failures({target.key}) returned {found!r}"
            for impl in self.own_impls("graphsval_memory_hierarchy"):
                tiers = self.call(impl, target=target)
                assert tiers is None or (
                    len(tiers) > 0 and all(isinstance(t, MemoryTier) for t in tiers)
                ), f"graphsval_memory_hierarchy({target.key}) returned {tiers!r}"
            for impl in self.own_impls("graphsval_measurer_probe"):
                probe = self.call(impl, target=target)
                assert probe is None or isinstance(probe, ProbeResult), (
                    f"graphsval_measurer_probe({target.key}) returned {type(probe).__name__}"
                )
            for impl in self.own_impls("graphsval_consistency_checks"):
                checks = _items("graphsval_consistency_checks", self.call(impl, target=target))
                for check in checks:
                    assert isinstance(check, ConsistencyCheck), (
                        f"graphsval_consistency_checks({target.key}) returned "
                        f"{type(check).__name__}"
                    )
            for impl in self.own_impls("graphsval_residency_window"):
                for op in registry.ops().values():
                    if op.gemm_dims is None:
                        continue  # the model asks only for ops with a matrix product
                    shapes = np.full((3, len(op.dims)), 64, dtype=np.int64)
                    shapes[1] *= 16
                    shapes[2] *= 256
                    for tier in registry.memory_hierarchy(target):
                        tile = self.call(
                            impl,
                            target=target,
                            op=op,
                            shapes=shapes,
                            dtype=target.dtypes[0],
                            tier=tier,
                        )
                        if tile is None:
                            continue
                        where = f"graphsval_residency_window({target.key}, {op.name}, {tier.name})"
                        tile = np.asarray(tile)
                        gemm = np.asarray(op.gemm_dims(shapes)).reshape(len(shapes), 3)
                        assert tile.shape == gemm.shape, f"{where}: shape {tile.shape}"
                        assert np.all(tile >= 1) and np.all(tile <= gemm), (
                            f"{where}: tiles must lie within 1 and the product's extent"
                        )

    def test_memory_hierarchy_ordered(self) -> None:
        """Each target's hierarchy (as the hooks answer it) is innermost first:
        tier names in order l1 < l2 < l3 < dram, usable capacity growing outward."""
        from graphsval_core.datamodel.target import TIER_NAMES

        registry = self.registry()
        for target in self.own_targets():
            tiers = registry.memory_hierarchy(target)
            assert tiers, f"{target.key}: no memory tier"
            for inner, outer in zip(tiers, tiers[1:], strict=False):
                assert TIER_NAMES.index(inner.name) < TIER_NAMES.index(outer.name), (
                    f"{target.key}: tier {outer.name!r} follows {inner.name!r}"
                )
                assert outer.effective_capacity_bytes > inner.effective_capacity_bytes, (
                    f"{target.key}: tier {outer.name!r} is not larger than {inner.name!r}"
                )

    def test_measurer_probe_cheap_and_side_effect_free(self, tmp_path: Path) -> None:
        """Probing each target is fast, writes no file and imports no torch."""
        registry = self.registry()
        targets = self.own_targets()
        fresh = _fresh_roots(self.module())
        before = _listing(tmp_path)
        cwd = Path.cwd()
        os.chdir(tmp_path)
        try:
            with forbid_imports(self.forbidden_imports, fresh) as attempts:
                for target in targets:
                    times = []
                    for _ in range(3):
                        start = time.perf_counter()
                        registry.measurer_probe(target)
                        times.append(time.perf_counter() - start)
                    assert min(times) < self.probe_budget_s, (
                        f"probing {target.key} takes {min(times):.3f} s "
                        f"(budget {self.probe_budget_s} s)"
                    )
        finally:
            os.chdir(cwd)
        assert not attempts, f"the measurer probe imports {', '.join(sorted(set(attempts)))}"
        after = _listing(tmp_path)
        assert after == before, f"the measurer probe wrote {sorted(set(after) - set(before))}"

    def test_baselines_parse(self) -> None:
        """Every shipped baseline parses, and its rows name targets, ops and
        dtypes that are registered; the floors file and the prediction
        snapshot, if any, parse."""
        from graphsval_core.files.baseline import BaselineFileError, read_baseline_file
        from graphsval_core.files.floors import FloorsError, read_floors
        from graphsval_core.files.snapshot import SnapshotError, read_snapshot

        registry = self.registry()
        for impl in self.own_impls("graphsval_baselines"):
            for item in self.call(impl) or []:
                name = str(item)
                try:
                    baseline, _ = read_baseline_file(item)
                except BaselineFileError as exc:
                    raise AssertionError(str(exc)) from None
                for row in baseline.rows:
                    where = f"{name}:{row.line}"
                    assert row.hardware in registry.targets(), (
                        f"{where}: unknown target {row.hardware!r}"
                    )
                    assert row.op in registry.ops(), f"{where}: unknown op {row.op!r}"
                    dtypes = registry.target(row.hardware).dtypes
                    assert row.dtype in dtypes, f"{where}: {row.hardware} has no dtype {row.dtype}"
        for impl in self.own_impls("graphsval_floors"):
            path = self.call(impl)
            if path is not None:
                try:
                    read_floors(Path(path) if isinstance(path, str) else path)
                except FloorsError as exc:
                    raise AssertionError(str(exc)) from None
        for impl in self.own_impls("graphsval_prediction_snapshot"):
            path = self.call(impl)
            if path is not None:
                try:
                    read_snapshot(Path(path) if isinstance(path, str) else path)
                except SnapshotError as exc:
                    raise AssertionError(str(exc)) from None

    def test_consistency_checks_pass(self) -> None:
        """Every consistency check registered for each target (built-in ones
        too) passes or is an expected failure; a known finding that no longer
        fails (an unexpected pass) must be removed from the plugin."""
        from graphsval_core.consistency.runner import run_consistency
        from graphsval_core.datamodel.outcome import FAIL, XPASS

        failures = [
            o.line()
            for result in run_consistency(self.registry(), self.own_targets())
            for o in result.outcomes
            if o.status in (FAIL, XPASS)
        ]
        assert not failures, "consistency checks fail:\n  " + "\n  ".join(failures)

    def test_sweep_labels_present(self) -> None:
        """Every entry of every shipped sweep has a label for each of this
        plugin's targets, inline or from the plugin's overlays (detected
        targets, which differ per machine, are exempt)."""
        from graphsval_core.files.sweep import SweepFileError
        from graphsval_core.sweep.labels import load_shipped

        try:
            sweeps = load_shipped(self.registry())
        except SweepFileError as exc:
            raise AssertionError(str(exc)) from None
        for target in self.own_targets():
            if target.detected:
                continue
            missing = [
                f"{name} {entry.key}"
                for name, sweep in sorted(sweeps.items())
                for entry in sweep.entries
                if target.key not in entry.regime_per_hw
            ]
            assert not missing, (
                f"{target.key}: {len(missing)} sweep entries have no label (first: "
                f"{missing[0]}); ship an overlay made with `graphsval sweep label --hw "
                f"{target.key} --out FILE` through graphsval_sweep_overlays"
            )
