"""Shared fixtures of the core tests: valid specs to break, fake plugins, and
an empty workspace for every test (none reads the user's data directory)."""

from __future__ import annotations

import itertools
import signal
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from graphsval_core import PLUGIN_API_VERSION, PROJECT_NAME, hookimpl
from graphsval_core.datamodel.provenance import datasheet, estimated
from graphsval_core.datamodel.target import MemoryTier, TargetSpec
from graphsval_core.workspace.location import ENV_WORKSPACE

_WORKSPACES = itertools.count()


@pytest.fixture(scope="session", autouse=True)
def _ctrl_c_reaches_the_suite() -> Iterator[None]:
    """Run as if started from a terminal: a shell that starts a job in the
    background (``cmd &``) sets SIGINT to be ignored, and Python then never
    installs its KeyboardInterrupt handler, so the tests of what a Ctrl-C
    does (tests/plugins/test_interrupts.py and others) would fail for how
    the suite was launched. Python's default handler is put back for the
    session, and the ignored disposition restored after."""
    previous = signal.getsignal(signal.SIGINT)
    if previous is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    if previous is signal.SIG_IGN:
        signal.signal(signal.SIGINT, previous)


@pytest.fixture(scope="session", autouse=True)
def _session_workspace(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The workspace of the whole session (and of session- and module-scoped
    fixtures): an empty temporary folder, never the user's data directory.
    Not created: a command that writes creates it."""
    folder = tmp_path_factory.getbasetemp() / "workspaces" / "session"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(ENV_WORKSPACE, str(folder))
        yield folder


@pytest.fixture(autouse=True)
def empty_workspace(
    _session_workspace: Path,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> Path:
    """Each test's own empty workspace (``GRAPHSVAL_WORKSPACE``): what one test
    writes there (a capture, a calibration) no other test sees. Not created."""
    folder = tmp_path_factory.getbasetemp() / "workspaces" / f"test{next(_WORKSPACES)}"
    monkeypatch.setenv(ENV_WORKSPACE, str(folder))
    return folder


def tier(name: str = "l1", capacity: float = 32 * 1024, **kw: Any) -> MemoryTier:
    args: dict[str, Any] = {
        "is_per_unit": True,
        "num_units": 4,
        "peak_bandwidth_bps": datasheet(1e12, "test"),
        "access_latency_ns": estimated(1.0, "test"),
        "energy_per_byte_j": estimated(1e-12, "test"),
    }
    args.update(kw)
    return MemoryTier(
        name,
        datasheet(capacity, "test") if isinstance(capacity, int | float) else capacity,
        args.pop("is_per_unit"),
        args.pop("num_units"),
        args.pop("peak_bandwidth_bps"),
        args.pop("access_latency_ns"),
        **args,
    )


def target(key: str = "toy_target", **kw: Any) -> TargetSpec:
    args: dict[str, Any] = {
        "key": key,
        "name": "Toy target",
        "family": "toy",
        "architecture": "cpu",
        "compute_units": datasheet(4, "test"),
        "clock_hz": datasheet(2e9, "test"),
        "peak_ops_per_s": {"fp32": datasheet(256e9, "test")},
        "energy_per_op_j": {"fp32": estimated(1e-12, "test")},
        "launch_overhead_s": estimated(2e-6, "test"),
        "idle_power_w": estimated(5.0, "test"),
        "tdp_w": datasheet(65.0, "test"),
        "ground_truth": "measured",
        "tiers": [
            tier("l1", 32 * 1024),
            tier("l2", 1024 * 1024, peak_bandwidth_bps=datasheet(5e11, "test")),
            tier(
                "dram",
                16 * 1024**3,
                is_per_unit=False,
                num_units=1,
                peak_bandwidth_bps=datasheet(5e10, "test"),
            ),
        ],
    }
    args.update(kw)
    return TargetSpec(**args)


def l2_product_share(share: float, **kw: Any) -> list[MemoryTier]:
    """The toy target's tiers with its L2's ``product_fraction`` set to
    ``share`` (as a calibration gives it), the other fields as :func:`target`'s."""
    from attrs import evolve

    tiers = list(target(**kw).tiers)
    tiers[1] = evolve(tiers[1], product_fraction=estimated(share, "fitted"))
    return tiers


@pytest.fixture
def l2_share() -> Callable[..., list[MemoryTier]]:
    return l2_product_share


@pytest.fixture
def make_tier() -> Callable[..., MemoryTier]:
    return tier


@pytest.fixture
def make_target() -> Callable[..., TargetSpec]:
    return target


def plugin_module(name: str, targets: Callable[[], list[TargetSpec]] | None = None, **hooks: Any):
    """An in-memory plugin module declaring this core's plugin API with the given hooks (a
    function already marked with ``hookimpl(...)`` keeps its options)."""
    module = types.ModuleType(name)
    module.graphsval_api_version = PLUGIN_API_VERSION  # type: ignore[attr-defined]
    if targets is not None:

        @hookimpl
        def graphsval_register_targets() -> list[TargetSpec]:
            return targets()

        module.graphsval_register_targets = graphsval_register_targets  # type: ignore[attr-defined]
    for hook_name, fn in hooks.items():
        marked = hasattr(fn, f"{PROJECT_NAME}_impl")  # already marked: keep its options
        setattr(module, hook_name, fn if marked else hookimpl(fn))
    return module


class FakeDist:
    def __init__(self, name: str, version: str) -> None:
        self.metadata = {"Name": name}
        self.version = version


class FakeEntryPoint:
    """Stands in for importlib.metadata.EntryPoint: name, value, dist, load()."""

    def __init__(self, name: str, loader: Callable[[], Any], dist: str, version: str = "1.2.3"):
        self.name = name
        self.value = f"{name}_module"
        self.dist = FakeDist(dist, version)
        self._loader = loader

    def load(self) -> Any:
        return self._loader()


@pytest.fixture
def fake_entry_points(monkeypatch: pytest.MonkeyPatch) -> Callable[..., None]:
    """Replace the installed entry points with the given fakes."""

    def install(*eps: FakeEntryPoint) -> None:
        monkeypatch.setattr("graphsval_core.plugins.loader._entry_points", lambda: list(eps))

    monkeypatch.delenv("GRAPHSVAL_STRICT_PLUGINS", raising=False)
    monkeypatch.delenv("GRAPHSVAL_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    return install


@pytest.fixture
def make_plugin() -> Callable[..., types.ModuleType]:
    return plugin_module


@pytest.fixture
def make_entry_point() -> Callable[..., FakeEntryPoint]:
    return FakeEntryPoint
