"""``graphsval capture-machine``: bring your own machine, in one command."""

from __future__ import annotations

import time
from typing import Any

import click
from attrs import evolve

from graphsval_core.cli.capture_cmd import (
    check_threads,
    machine_options,
    plugin_distribution,
    progress_bar,
    render_summary,
)
from graphsval_core.cli.context import AppContext, pass_app, shown_path
from graphsval_core.cli.params import Whole
from graphsval_core.extras import require, require_plugin_extra


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.0f} min" if seconds >= 90 else f"{seconds:.0f} s"


@click.command("capture-machine")
@click.option(
    "--hw", default="host_cpu", show_default=True, metavar="KEY", help="Target to capture."
)
@click.option(
    "--quick",
    is_flag=True,
    help="A sample across regimes and sizes, fewer and shorter rounds: about 10 minutes "
    "on 2 cores, longer where bf16 products have no GEMM library (an AMD EPYC Zen 3 VM: "
    "about 45); the estimate is printed first (default: the whole sweeps).",
)
@click.option(
    "--op", "ops", multiple=True, metavar="OP", help="Only this op (repeatable; default: all)."
)
@machine_options
@click.option(
    "--rounds",
    type=Whole(1, 1000),
    help="Interleaved rounds per shape (default: 3 with --quick, else 5).",
)
@click.option("--no-calibrate", is_flag=True, help="Capture only; do not fit the target.")
@pass_app
def capture_machine(
    app: AppContext,
    hw: str,
    quick: bool,
    ops: tuple[str, ...],
    threads: int,
    rounds: int | None,
    allow_busy: bool,
    max_wait: float,
    no_calibrate: bool,
) -> None:
    """Capture this machine into the workspace and calibrate it.

    For each op: the calibration set, the validation set and its recapture
    (in another order; disagreements measured again), then a calibration
    fitted on the calibration rows only. Everything goes into the workspace
    (--workspace, GRAPHSVAL_WORKSPACE or your user data folder), where
    `graphsval validate`, `targets`, `registry lookup`, `predict`, `explain`
    and `calibrate` find it. Rerun the same command to resume.
    """
    from graphsval_core.measure.campaign import (
        FULL,
        OPS,
        QUICK,
        campaign_options,
        plan_campaign,
        run_campaign,
    )

    require_plugin_extra("graphsval capture-machine", plugin_distribution(app, hw))
    check_threads(threads)
    if not no_calibrate:
        require("calibrate", "graphsval capture-machine (its calibration; --no-calibrate skips it)")
    registry = app.registry
    for op in ops:
        registry.op(op)  # an unknown op: one line naming the close ones
    workspace = app.workspace.path
    size = QUICK if quick else FULL
    if rounds is not None:
        size = evolve(size, rounds=rounds)
    options = campaign_options(
        hw,
        ops or OPS,
        size,
        threads=threads,
        workspace=str(workspace),
        allow_busy=allow_busy,
        max_wait_s=max_wait,
    )
    steps = plan_campaign(registry, options)
    record_as = steps[0].plan.record_as
    total = sum(s.estimate_s for s in steps)
    shapes = sum(len(s.plan.items) for s in steps)
    click.echo(
        f"capturing {record_as.key} into {workspace} ({app.workspace.source}): "
        f"{len(steps)} captures, {shapes} shapes, about {_minutes(total)} "
        f"({'quick' if quick else 'full'}); rerun to resume after an interruption"
    )
    started = time.monotonic()

    def on_step(n: int, step: object) -> None:
        s = steps[n]
        click.echo(f"[{n + 1}/{len(steps)}] {s.label}: {len(s.plan.items)} shapes, about "
                   f"{_minutes(s.estimate_s)}")  # fmt: skip

    results = run_campaign(
        registry,
        steps,
        progress=progress_bar,
        echo=lambda s: click.echo(s, err=True),
        on_step=on_step,
    )
    for result in results:
        render_summary(result)
    last = results[-1].summary
    if last.interrupted or last.out_of_time:
        click.echo("interrupted: every finished row is kept; rerun the same command to resume")
        raise SystemExit(130)
    click.echo(f"captured in {_minutes(time.monotonic() - started)}")
    if no_calibrate:
        return
    from graphsval_core.calibrate.workflow import CalibrateOptions, calibrate
    from graphsval_core.plugins.loader import build_registry
    from graphsval_core.workspace.location import calibration_path, ensure_parent

    fresh = build_registry(
        strict=app.strict, plugin_args=app.plugin_args, workspace=workspace, calibrated=True
    )  # the workspace's new target spec registered
    calibration = [str(r.out) for r in results if r.plan.options.purpose == "calibration"]
    result = calibrate(
        fresh,
        CalibrateOptions(
            target=record_as.key,
            baselines=tuple(calibration),
            out=str(ensure_parent(calibration_path(workspace, record_as.key))),
            leave_one_out=False,  # a refit per row: minutes; graphsval calibrate runs it
        ),
    )
    click.echo(calibrated_line(record_as.key, result))
    click.echo(f"next: graphsval validate --hw {record_as.key}")


def calibrated_line(key: str, result: Any) -> str:
    """What the calibration of a capture came to: its file, and its out-of-sample
    figures (grouped CV, and the validation set just captured, never fitted)."""
    figures = []
    if result.grouped is not None:
        figures.append(f"grouped CV median |error| {result.grouped.median_abs_error:.1%}")
    held = result.validation
    if held is not None and held.rows:
        figures.append(
            f"validation set median |error| {held.whole.median_abs_error:.1%}, "
            f"{held.within:.0%} within 10% ({held.rows} rows never fitted)"
        )
    written = shown_path(result.path)
    return f"calibrated {key} on {len(result.rows)} calibration rows: {written}" + (
        f" ({'; '.join(figures)})" if figures else ""
    )
