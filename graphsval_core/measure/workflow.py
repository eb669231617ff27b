"""The capture workflow (``graphsval capture``): measure a sweep of one op on
this machine into a baseline CSV, at the noise floor and resumably.

:func:`capture_sweep` resolves the target and op, checks that the target can
be measured here, loads the sweep (the shipped ``<op>_<purpose>.json`` or a
given file), keeps the entries the target runs (of the dtypes asked for; with
a limit, a sample across regimes and sizes), freezes a detected target
(``host_cpu``) into the named snapshot target its rows are recorded under
(writing its spec into the workspace, where every command finds it), refuses
a busy machine unless allowed, then runs
:func:`graphsval_core.measure.capture.capture` with a watch on the machine's
load and the plausibility check of each row. A recapture (the validation set
a second time, in another order, into ``recapture/``) then settles the shapes
whose two captures disagree (:mod:`graphsval_core.measure.recapture`).

By default the CSV goes into the workspace
(``baselines/<key>_<op>.<purpose>.csv``). The caller sees the plan before the
measuring starts and may wrap the visits in a progress display; the workflow
itself draws nothing.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager, ExitStack
from pathlib import Path

from attrs import field, frozen

from graphsval_core.datamodel.errors import UserInputError, shown_path
from graphsval_core.datamodel.op import OpSpec
from graphsval_core.datamodel.target import TargetSpec
from graphsval_core.files.baseline import recapture_path
from graphsval_core.files.outputs import check_output_file
from graphsval_core.files.sweep import load_sweep
from graphsval_core.files.target_spec import write_spec
from graphsval_core.measure.capture import CaptureItem, CaptureSummary, capture
from graphsval_core.measure.capture_file import read_capture
from graphsval_core.measure.protocol import CaptureSettings
from graphsval_core.measure.quiet import QuietWatch
from graphsval_core.measure.recapture import Reconciled, reconcile
from graphsval_core.measure.sample import spread_sample
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
    re-measure everything. ``recapture``: the validation set a second time,
    into ``recapture/`` beside the baseline, then the disagreements settled.
    ``allow_busy``: start on a busy machine; ``max_wait_s``: the longest wait
    for quiet before a round is measured anyway. ``workspace``: the folder
    (None: :func:`~graphsval_core.workspace.location.locate_workspace`)."""

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
    recapture: bool = False
    allow_busy: bool = False
    max_wait_s: float = 60.0
    workspace: str | None = None


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
    #: with ``recapture``: the baseline the recapture is compared with
    main: Path | None = None


@frozen(eq=False)
class CaptureResult:
    """A finished (or interrupted, or timed-out) capture: its plan, the
    summary of the run and the seconds it took."""

    plan: CapturePlan
    summary: CaptureSummary
    elapsed_s: float
    reconciled: Reconciled | None = None

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
    a detected target into the workspace.

    Raises :class:`~graphsval_core.plugins.registry.UnknownNameError` for an
    unknown target or op, :class:`UnsupportedDtypeError` for a dtype the
    target lacks, :class:`~graphsval_core.files.sweep.SweepFileError` for a
    bad sweep file and :class:`CaptureError` otherwise."""
    from graphsval_core.workspace.location import (
        baseline_path,
        ensure_parent,
        target_path,
        workspace_dir,
    )

    hw, op = options.target, options.op
    if options.recapture and options.purpose != "validation":
        raise CaptureError(
            "--recapture captures the validation set again; use --purpose validation"
        )
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
    if not items:
        at = f" at {', '.join(options.dtypes)}" if options.dtypes else ""
        raise CaptureError(f"no entry of {sweep.path} runs on {hw}{at}")
    threads = options.settings.threads
    if target.detected and target.family == "cpu" and threads and threads > target.compute_units:
        raise CaptureError(
            f"--threads {threads}: {hw} has {target.compute_units} usable CPU(s); "
            f"use at most {target.compute_units}"
        )
    record_as = target
    if target.detected:
        snap = registry.snapshot_target(target, {"threads": options.settings.threads})
        if snap is not None:
            record_as = snap
    if options.limit is not None:
        items = sample_items(registry, record_as, op_spec, items, options.limit)
    workspace = workspace_dir(options.workspace)
    main = None
    if options.out:
        out = Path(options.out)
        if options.recapture:
            main, out = out, recapture_path(out)
    else:
        out = baseline_path(workspace, record_as.key, op, options.purpose, options.recapture)
        if options.recapture:
            main = baseline_path(workspace, record_as.key, op, options.purpose)
    check_output_file(out, CaptureError, f"--out {shown_path(out)}")
    if main is not None and not main.is_file():
        raise CaptureError(
            f"--recapture: no capture {main} to compare with; capture the validation set first"
        )
    if main is not None:  # another target's or op's file: refused before measuring
        read_capture(main, record_as.key, op, repair=False)
    if options.out and main is None and not out.parent.is_dir():
        raise CaptureError(f"--out {shown_path(out)}: no such folder {shown_path(out.parent)}")
    ensure_parent(out)
    spec_path = None
    if record_as is not target and not (options.out and _installed(registry, record_as.key)):
        # a capture written elsewhere (--out) of a machine an installed plugin ships as a
        # target records as that target: a workspace copy would replace it, and its
        # calibration, for every command after
        spec_path = ensure_parent(target_path(workspace, record_as.key))
        write_spec(record_as, spec_path)
    return CapturePlan(options, target, record_as, op_spec, tuple(items), out, spec_path, main)


@frozen
class _Predicted:
    """What the model says of one item: its regime and latency (None where the
    model cannot predict the target) and its working set."""

    regime: str | None
    latency_s: float | None
    working_set_bytes: float


def _predictions(
    registry: Registry, target: TargetSpec, op: OpSpec, items: Sequence[CaptureItem]
) -> dict[tuple[str, str], _Predicted]:
    """The model's word on each item, one batch per dtype."""
    from graphsval_core.model.predict import predict_shapes

    by_dtype: dict[str, list[CaptureItem]] = {}
    for item in items:
        by_dtype.setdefault(item.dtype, []).append(item)
    out: dict[tuple[str, str], _Predicted] = {}
    for dtype, group in by_dtype.items():
        try:
            pred = predict_shapes(registry, target, op, [it.dims for it in group], dtype)
        except Exception:  # a target the model cannot predict
            out.update((it.key, _Predicted(None, None, 0.0)) for it in group)
            continue
        sizes = pred.working_set_bytes
        for n, it in enumerate(group):
            size = float(sizes[n]) if sizes is not None else 0.0
            out[it.key] = _Predicted(str(pred.regime[n]), float(pred.latency_s[n]), size)
    return out


def _installed(registry: Registry, key: str) -> bool:
    """Whether an installed plugin, not the workspace, registers target ``key``."""
    from graphsval_core.workspace.plugin import owns_target

    return key in registry.targets() and not owns_target(registry, key)


def sample_items(
    registry: Registry,
    target: TargetSpec,
    op: OpSpec,
    items: list[CaptureItem],
    limit: int,
) -> list[CaptureItem]:
    """``limit`` items spread over the regimes the model predicts on ``target``
    (per dtype) and over sizes (:func:`spread_sample`)."""
    predicted = _predictions(registry, target, op, items)
    groups = [f"{it.dtype} {predicted[it.key].regime or '?'}" for it in items]
    sizes = [float(math.prod(it.dims)) for it in items]
    return spread_sample(items, groups, sizes, limit)


def _tolerance_of(
    registry: Registry, target: TargetSpec, op: OpSpec, items: Sequence[CaptureItem]
) -> Callable[[CaptureItem], float]:
    """The latency tolerance of each item's predicted regime on ``target``
    (where the model cannot predict, DRAM's: the loosest memory band)."""
    from graphsval_core.files.tolerances import band, load_tolerances

    tolerances = load_tolerances()
    predicted = _predictions(registry, target, op, items)

    def tolerance(item: CaptureItem) -> float:
        return band(tolerances, predicted[item.key].regime or "dram_bound")["latency"]

    return tolerance


def _plausibility(
    registry: Registry, target: TargetSpec, op: OpSpec
) -> Callable[[CaptureItem, Measurement], list[str]]:
    """The ``suspect`` entries of a finished shape against the datasheet spec."""
    from graphsval_core.model.plausibility import check_measurement

    try:
        datasheet = registry.datasheet_target(target.key)
    except Exception:  # a snapshot not registered yet: its spec is the detected one
        datasheet = target

    def check(item: CaptureItem, m: Measurement) -> list[str]:
        flags = check_measurement(datasheet, op, item.dims, item.dtype, m.latency_s, m.energy_j)
        return [flag.text() for flag in flags]

    return check


def capture_sweep(
    registry: Registry,
    options: CaptureOptions,
    *,
    progress: ProgressFactory | None = None,
    echo: Callable[[str], None] = print,
    on_plan: Callable[[CapturePlan], None] | None = None,
    watch: QuietWatch | None = None,
) -> CaptureResult:
    """Plan the capture (:func:`plan_capture`, which names the errors), refuse
    a busy machine (unless ``allow_busy``), hand the plan to ``on_plan``, then
    measure its items into its CSV, watching the machine's load (``watch``:
    None builds one) and checking each row's plausibility; ``echo`` prints
    the capture's warnings. A recapture then settles its disagreements. A
    Ctrl-C ends the run with every finished row kept (``summary.interrupted``)."""
    plan = plan_capture(registry, options)
    if watch is None:
        watch = QuietWatch(max_wait_s=options.max_wait_s)
    load = watch.load_now()
    busy_warning = ""
    if load is not None and load.busy:
        if not options.allow_busy:
            raise CaptureError(
                f"machine busy: {load.text()}; timings would be noise. Wait for it to "
                "settle (stop builds, tests, other captures) or pass --allow-busy"
            )
        busy_warning = f"machine busy at the start ({load.text()}); --allow-busy given"
        echo(f"warning: {busy_warning}")
    if on_plan is not None:
        on_plan(plan)

    def measure(item: CaptureItem, settings: CaptureSettings) -> Measurement | None:
        return registry.measure(plan.record_as, plan.op, item.dims, item.dtype, settings)

    started = time.monotonic()
    seed = options.seed + 1_000_003 if options.recapture else options.seed  # another order
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
            seed=seed,
            max_total_time_s=options.max_total_time_s,
            progress=None if progress is None else _opening(displays, plan, progress),
            echo=echo,
            watch=watch,
            check=_plausibility(registry, plan.record_as, plan.op),
        )
    summary.busy_warning = summary.busy_warning or busy_warning
    reconciled = None
    if plan.main is not None and not summary.interrupted and not summary.out_of_time:

        def remeasure(item: CaptureItem) -> float | None:
            return _measure_row(plan, options, measure, watch, item)

        try:
            reconciled = reconcile(
                plan.main,
                plan.out,
                plan.record_as.key,
                options.op,
                plan.items,
                _tolerance_of(registry, plan.record_as, plan.op, plan.items),
                remeasure,
            )
        except KeyboardInterrupt:
            summary.interrupted = True
    return CaptureResult(plan, summary, time.monotonic() - started, reconciled)


def _measure_row(
    plan: CapturePlan,
    options: CaptureOptions,
    measure: Callable[[CaptureItem, CaptureSettings], Measurement | None],
    watch: QuietWatch,
    item: CaptureItem,
) -> float | None:
    """One shape measured again, every round, through a scratch capture."""
    import tempfile

    from graphsval_core.files.baseline import read_baseline

    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "remeasure.csv"
        done = capture(
            hardware=plan.record_as.key,
            op=options.op,
            purpose=options.purpose,
            items=[item],
            out=out,
            measure=measure,
            settings=options.settings,
            rounds=options.rounds,
            seed=options.seed + 7,
            watch=watch,
        )
        if done.interrupted:
            raise KeyboardInterrupt
        rows = read_baseline(out).rows if out.exists() else ()
    return rows[0].latency_s if rows else None


def _opening(
    displays: ExitStack, plan: CapturePlan, factory: ProgressFactory
) -> Callable[[Sequence[Visit]], Iterable[Visit]]:
    """The capture's progress hook: opens ``factory``'s display over the
    visits, to be closed with ``displays``."""
    return lambda visits: displays.enter_context(factory(plan, visits))


#: Seconds a visit costs beyond its timed blocks (workload build, correctness check).
VISIT_OVERHEAD_S = 0.05
#: Timed blocks a visit typically takes (warm-up and samples until the CI is met).
VISIT_BLOCKS = 45
#: The shortest block the sampling times (CaptureSettings.min_block_s, with dispatch).
VISIT_BLOCK_S = 1.2e-3
#: Bytes of operands a visit builds per second (allocation and random fill): a
#: 160M-element vector_add spends seconds here, every round.
BUILD_BPS = 0.35e9


def estimate_seconds(registry: Registry, plan: CapturePlan) -> float:
    """About how long the plan's capture takes, from the model's prediction of
    each shape: every round of a shape costs a fixed overhead plus its timed
    blocks (at least ``VISIT_BLOCK_S`` each), within the per-round budget."""
    options = plan.options
    rounds = max(options.rounds, 1)
    budget = options.settings.max_time_per_shape_s / rounds
    try:  # a rerun resumes: what is measured already costs nothing
        done = {
            key
            for key, row in read_capture(
                plan.out, plan.record_as.key, options.op, repair=False
            ).items()
            if row["latency_s"]
        }
    except UserInputError:
        done = set()
    if options.force:
        done = set()
    todo = [item for item in plan.items if item.key not in done]
    total = 0.0
    for p in _predictions(registry, plan.record_as, plan.op, todo).values():
        latency = 1e-3 if p.latency_s is None else p.latency_s
        # the budget ends sampling, but never before 2 warm-up calls and 3 samples
        timed = max(min(budget, VISIT_BLOCKS * max(VISIT_BLOCK_S, latency)), 5 * latency)
        build = VISIT_OVERHEAD_S + p.working_set_bytes / BUILD_BPS
        total += rounds * (build + timed) + 3 * latency  # the check: in one round
    if options.recapture:
        total *= 1.15  # the disagreeing shapes measured again
    return total
