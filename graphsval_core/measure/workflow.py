"""The capture workflow (``graphsval capture``): measure a sweep of one op on
this machine into a baseline CSV, resumably.

:func:`capture_sweep` resolves the target and op, checks that the target can
be measured here, loads the sweep (the shipped ``<op>_<purpose>.json`` or a
given file), keeps the entries the target runs (of the dtypes asked for, up
to a limit), freezes a detected target (``host_cpu``) into the named snapshot
target its rows are recorded under (writing its spec beside the CSV), then
runs :func:`graphsval_core.measure.capture.capture`. The caller sees the
plan before the measuring starts and may wrap the visits in a progress
display; the workflow itself draws nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager, ExitStack
from pathlib import Path

from attrs import field, frozen

from graphsval_core.datamodel.errors import UserInputError
from graphsval_core.datamodel.op import OpSpec
from graphsval_core.datamodel.target import TargetSpec
from graphsval_core.datamodel.target_json import write_spec
from graphsval_core.files.sweep import load_sweep
from graphsval_core.measure.capture import CaptureItem, CaptureSummary, capture
from graphsval_core.measure.protocol import CaptureSettings
from graphsval_core.model.reference import UnsupportedDtypeError
from graphsval_core.plugins.records import Measurement
from graphsval_core.plugins.registry import Registry
from graphsval_core.plugins.resources import sweeps_dir

#: One visit of a capture: an item and the round (from 0) it is measured in.
Visit = tuple[CaptureItem, int]


class CaptureError(UserInputError):
    """A capture cannot run: the target cannot be measured here, the sweep
    cannot be found, or no entry of it runs on the target."""


@frozen
class CaptureOptions:
    """What to capture: the target (key or alias as given) and op, the purpose
    of the rows, a sweep file (None: the shipped ``<op>_<purpose>.json``), at
    most ``limit`` runnable entries, the output CSV (None:
    ``<recorded key>_<op>.csv`` here), only entries of ``dtypes`` (empty:
    all), what to ask of the measurer, a time limit for the whole run,
    interleaved rounds with the seed of their order, and whether to
    re-measure everything."""

    target: str
    op: str
    purpose: str
    sweep_file: str | None = None
    limit: int | None = None
    out: str | None = None
    dtypes: tuple[str, ...] = ()
    settings: CaptureSettings = field(factory=CaptureSettings)
    max_total_time_s: float | None = None
    rounds: int = 1
    seed: int = 0
    force: bool = False


@frozen
class CapturePlan:
    """What a capture will do: the target asked for and the one its rows are
    recorded as (a detected target's snapshot, else the same), the op, the
    items to measure, the CSV, and the snapshot spec written beside it (None
    when the target is recorded as itself)."""

    options: CaptureOptions
    target: TargetSpec
    record_as: TargetSpec
    op: OpSpec
    items: tuple[CaptureItem, ...]
    out: Path
    spec_path: Path | None


@frozen(eq=False)
class CaptureResult:
    """A finished (or interrupted, or timed-out) capture: its plan, the
    summary of the run and the seconds it took."""

    plan: CapturePlan
    summary: CaptureSummary
    elapsed_s: float

    @property
    def record_as(self) -> TargetSpec:
        return self.plan.record_as

    @property
    def out(self) -> Path:
        return self.plan.out

    @property
    def spec_path(self) -> Path | None:
        return self.plan.spec_path


#: Opens a progress display over the visits still to do (called once, with the
#: plan); what its context yields is iterated in their place.
ProgressFactory = Callable[[CapturePlan, Sequence[Visit]], AbstractContextManager[Iterable[Visit]]]


def plan_capture(registry: Registry, options: CaptureOptions) -> CapturePlan:
    """Resolve, check and select (see module doc); writes the snapshot spec of
    a detected target.

    Raises :class:`~graphsval_core.plugins.registry.UnknownNameError` for an
    unknown target or op, :class:`UnsupportedDtypeError` for a dtype the
    target lacks, :class:`~graphsval_core.files.sweep.SweepFileError` for a
    bad sweep file and :class:`CaptureError` otherwise."""
    hw, op = options.target, options.op
    target = registry.target(hw)
    op_spec = registry.op(op)
    for dtype in options.dtypes:
        if dtype not in target.dtypes:
            raise UnsupportedDtypeError(f"{hw} has no {dtype} (it has {', '.join(target.dtypes)})")
    probe = registry.measurer_probe(target)
    if not probe.available:
        raise CaptureError(f"cannot measure {hw} on this machine: {probe.reason}")
    if options.sweep_file is None:
        item = sweeps_dir().joinpath(f"{op}_{options.purpose}.json")
        try:
            text = item.read_text()
        except FileNotFoundError as exc:
            raise CaptureError(str(exc)) from None
        sweep = load_sweep(item.name, len(op_spec.dims), text=text)
    else:
        sweep = load_sweep(options.sweep_file, len(op_spec.dims))
    items = [
        CaptureItem(e.shape, e.dtype)
        for e in sweep.entries
        if (e.op or sweep.op) == op
        and e.dtype in target.dtypes
        and (not options.dtypes or e.dtype in options.dtypes)
    ]
    if options.limit is not None:
        items = items[: options.limit]
    if not items:
        at = f" at {', '.join(options.dtypes)}" if options.dtypes else ""
        raise CaptureError(f"no entry of {sweep.path} runs on {hw}{at}")
    record_as = target
    if target.detected:
        snap = registry.snapshot_target(target, {"threads": options.settings.threads})
        if snap is not None:
            record_as = snap
    out = Path(options.out) if options.out else Path(f"{record_as.key}_{op}.csv")
    if out.is_dir():
        raise CaptureError(f"--out {out} is a folder; name the baseline CSV to write")
    if not out.parent.is_dir():
        raise CaptureError(f"--out {out}: no such folder {out.parent}")
    spec_path = None
    if record_as is not target:
        spec_path = out.with_name(f"{record_as.key}.target.json")
        write_spec(record_as, spec_path)
    return CapturePlan(options, target, record_as, op_spec, tuple(items), out, spec_path)


def capture_sweep(
    registry: Registry,
    options: CaptureOptions,
    *,
    progress: ProgressFactory | None = None,
    echo: Callable[[str], None] = print,
    on_plan: Callable[[CapturePlan], None] | None = None,
) -> CaptureResult:
    """Plan the capture (:func:`plan_capture`, which names the errors), hand
    the plan to ``on_plan``, then measure its items into its CSV; ``echo``
    prints the capture's warnings. A Ctrl-C ends the run with every finished
    row kept (``summary.interrupted``)."""
    plan = plan_capture(registry, options)
    if on_plan is not None:
        on_plan(plan)

    def measure(item: CaptureItem, settings: CaptureSettings) -> Measurement | None:
        return registry.measure(plan.record_as, plan.op, item.dims, item.dtype, settings)

    started = time.monotonic()
    with ExitStack() as displays:
        summary = capture(
            hardware=plan.record_as.key,
            op=options.op,
            purpose=options.purpose,
            items=plan.items,
            out=plan.out,
            measure=measure,
            settings=options.settings,
            force=options.force,
            rounds=options.rounds,
            seed=options.seed,
            max_total_time_s=options.max_total_time_s,
            progress=None if progress is None else _opening(displays, plan, progress),
            echo=echo,
        )
    return CaptureResult(plan, summary, time.monotonic() - started)


def _opening(
    displays: ExitStack, plan: CapturePlan, factory: ProgressFactory
) -> Callable[[Sequence[Visit]], Iterable[Visit]]:
    """The capture's progress hook: opens ``factory``'s display over the
    visits, to be closed with ``displays``."""
    return lambda visits: displays.enter_context(factory(plan, visits))
