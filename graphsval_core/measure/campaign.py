"""Bring your own machine: capture this machine's calibration, validation and
recapture sets of every op into the workspace, then calibrate its target there.

``graphsval capture-machine`` runs :func:`plan_campaign` (every step's plan,
and the estimate of the whole run, before anything is measured) and
:func:`run_campaign`. Each step is an ordinary resumable capture, so a rerun
after an interruption continues where it stopped. ``--quick`` samples fewer
shapes across regimes and sizes and runs fewer, shorter rounds: about ten
minutes on 2 cores; the full campaign captures the shipped sweeps whole.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from attrs import evolve, frozen

from graphsval_core.files.baseline import recapture_path
from graphsval_core.measure.protocol import CaptureSettings
from graphsval_core.measure.workflow import (
    CaptureOptions,
    CapturePlan,
    CaptureResult,
    ProgressFactory,
    capture_sweep,
    estimate_seconds,
    plan_capture,
)
from graphsval_core.plugins.registry import Registry

#: The ops a campaign captures, in order.
OPS: tuple[str, ...] = ("vector_add", "matmul", "linear")


@frozen
class CampaignSize:
    """How much of each sweep a campaign captures, and how."""

    calibration: int | None  # entries per op (None: the whole sweep)
    validation: int | None
    rounds: int
    max_time_per_shape_s: float


#: ``--quick``: 48 calibration shapes per op, about seven rows for each
#: constant a host's fit has (144 rows, 17-20 constants). With 24 the fit lands in
#: another optimum: on the shipped host's validation rows its median error per
#: op is up to 37% (linear), against at most 20% with 48 and 19% with the whole
#: sweep (``benchmarks/bench_quick_fit.py``). The extra 72 shapes are cheap
#: ones: about 50 s of the ten minutes.
QUICK = CampaignSize(calibration=48, validation=16, rounds=3, max_time_per_shape_s=3.0)
FULL = CampaignSize(calibration=None, validation=None, rounds=5, max_time_per_shape_s=10.0)


@frozen
class Step:
    """One capture of the campaign: its options and its plan."""

    options: CaptureOptions
    plan: CapturePlan
    estimate_s: float

    @property
    def label(self) -> str:
        what = "recapture" if self.options.recapture else self.options.purpose
        return f"{self.options.op} {what}"


def campaign_options(
    target: str,
    ops: Sequence[str],
    size: CampaignSize,
    *,
    threads: int,
    workspace: str,
    allow_busy: bool,
    max_wait_s: float,
) -> list[CaptureOptions]:
    """The captures of a campaign: per op, calibration, validation, recapture."""
    settings = CaptureSettings(max_time_per_shape_s=size.max_time_per_shape_s, threads=threads)
    out = []
    for op in ops:
        base = CaptureOptions(
            target=target,
            op=op,
            purpose="calibration",
            limit=size.calibration,
            settings=settings,
            rounds=size.rounds,
            allow_busy=allow_busy,
            max_wait_s=max_wait_s,
            workspace=workspace,
        )
        validation = evolve(base, purpose="validation", limit=size.validation)
        out += [base, validation, evolve(validation, recapture=True)]
    return out


def plan_campaign(registry: Registry, options: Sequence[CaptureOptions]) -> list[Step]:
    """Every step's plan and its estimate (what is measured already costs
    nothing); a recapture is planned for real once its validation capture
    exists, and estimated like it here."""
    steps: list[Step] = []
    for opts in options:
        if opts.recapture:
            previous = steps[-1].plan
            again = recapture_path(previous.out)
            plan = evolve(previous, options=opts, out=again, main=previous.out)
            steps.append(Step(opts, plan, estimate_seconds(registry, plan)))
            continue
        plan = plan_capture(registry, opts)
        steps.append(Step(opts, plan, estimate_seconds(registry, plan)))
    return steps


def run_campaign(
    registry: Registry,
    steps: Sequence[Step],
    *,
    progress: ProgressFactory | None = None,
    echo: Callable[[str], None] = print,
    on_step: Callable[[int, Step], None] | None = None,
) -> list[CaptureResult]:
    """Run the steps in order; stops at the first interrupted or timed-out one.
    The first step refuses a busy machine (unless allowed); later ones wait
    for quiet as every capture does, without refusing."""
    results = []
    for n, step in enumerate(steps):
        if on_step is not None:
            on_step(n, step)
        options = step.options if n == 0 else evolve(step.options, allow_busy=True)
        result = capture_sweep(registry, options, progress=progress, echo=echo)
        results.append(result)
        if result.summary.interrupted or result.summary.out_of_time:
            break
    return results
