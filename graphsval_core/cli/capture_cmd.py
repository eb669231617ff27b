"""``graphsval capture``: measure a sweep on this machine into a baseline CSV."""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import click

from graphsval_core.cli.context import AppContext, pass_app

if TYPE_CHECKING:
    from graphsval_core.measure.workflow import CapturePlan, Visit


def _percent(value: str) -> float:
    text = value.strip().rstrip("%")
    try:
        number = float(text)
    except ValueError:
        raise click.BadParameter(
            f"{value!r} is not a percentage", param_hint="'--target-ci'"
        ) from None
    if not 0 < number < 100:
        raise click.BadParameter("must be between 0 and 100 (percent)", param_hint="'--target-ci'")
    return number / 100.0


@click.command()
@click.option("--hw", required=True, metavar="KEY", help="Target to measure (must run here).")
@click.option("--op", required=True, metavar="OP", help="Op to measure.")
@click.option("--purpose", required=True, type=click.Choice(["calibration", "validation"]))
@click.option(
    "--sweep",
    "sweep_file",
    metavar="FILE",
    help="Sweep JSON (default: the shipped <op>_<purpose>.json).",
)
@click.option("--limit", type=click.IntRange(min=1), help="Only the first N runnable entries.")
@click.option("--out", metavar="FILE", help="Output CSV (default: <hw>_<op>.csv here).")
@click.option(
    "--dtype", "dtypes", multiple=True, metavar="D", help="Only entries of this dtype (repeatable)."
)
@click.option(
    "--max-time-per-shape",
    type=click.FloatRange(min=0.01),
    default=10.0,
    show_default=True,
    help="Seconds of sampling per shape (all rounds together).",
)
@click.option("--max-total-time", type=click.FloatRange(min=1), help="Stop after S seconds.")
@click.option(
    "--target-ci",
    default="2",
    show_default=True,
    metavar="PCT",
    help="Stop sampling when the 95%% CI half-width of the median is under PCT%%.",
)
@click.option("--threads", type=click.IntRange(min=1), help="Pin the CPU thread count.")
@click.option(
    "--rounds",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Interleaved rounds: every round visits every shape in a shuffled order.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the round orders.")
@click.option("--preallocate", is_flag=True, help="Write into a preallocated output (out=).")
@click.option("--force", is_flag=True, help="Re-measure everything (drops the existing file).")
@pass_app
def capture(
    app: AppContext,
    hw: str,
    op: str,
    purpose: str,
    sweep_file: str | None,
    limit: int | None,
    out: str | None,
    dtypes: tuple[str, ...],
    max_time_per_shape: float,
    max_total_time: float | None,
    target_ci: str,
    threads: int | None,
    rounds: int,
    seed: int,
    preallocate: bool,
    force: bool,
) -> None:
    """Capture ground truth for a sweep on this machine, resumably.

    Rows are appended as each shape finishes; a rerun skips measured shapes and
    retries failed ones. A shape that fails becomes a row with empty latency
    and a note. Capturing a detected target (host_cpu) records the rows under a
    named snapshot target and writes its spec beside the CSV.
    """
    from graphsval_core.measure.protocol import CaptureSettings
    from graphsval_core.measure.workflow import CaptureOptions, capture_sweep
    from graphsval_core.model.reference import UnsupportedDtypeError
    from graphsval_core.plugins.registry import UnknownNameError

    options = CaptureOptions(
        target=hw,
        op=op,
        purpose=purpose,
        sweep_file=sweep_file,
        limit=limit,
        out=out,
        dtypes=dtypes,
        settings=CaptureSettings(
            target_ci=_percent(target_ci),
            max_time_per_shape_s=max_time_per_shape,
            threads=threads,
            preallocate=preallocate,
        ),
        max_total_time_s=max_total_time,
        rounds=rounds,
        seed=seed,
        force=force,
    )

    def announce(plan: CapturePlan) -> None:
        if plan.spec_path is not None:
            click.echo(
                f"{hw} is detected: recording as {plan.record_as.key} (spec: {plan.spec_path})"
            )

    try:
        result = capture_sweep(
            app.registry,
            options,
            progress=_progress_bar,
            echo=lambda s: click.echo(s, err=True),
            on_plan=announce,
        )
    except UnknownNameError as exc:
        raise click.BadParameter(str(exc)) from None
    except UnsupportedDtypeError as exc:
        raise click.BadParameter(str(exc), param_hint="'--dtype'") from None
    summary = result.summary
    click.echo(
        f"{result.out}: {summary.rows} rows; this run measured {summary.measured}, failed "
        f"{summary.failed}, incorrect {summary.incorrect}, skipped {summary.skipped} already "
        f"measured, in {result.elapsed_s:.0f} s"
    )
    for failure in summary.failures:
        click.echo(f"  failed: {failure}")
    if summary.busy_warning:
        click.echo(f"  note: {summary.busy_warning}")
    if summary.out_of_time:
        click.echo("  stopped at --max-total-time; rerun the same command to resume")
    if summary.interrupted:
        click.echo(
            "interrupted: every finished row is kept; rerun the same command to resume", err=True
        )
        raise SystemExit(130)


def _progress_bar(plan: CapturePlan, visits: Sequence[Visit]) -> Any:
    """A click progress bar on stderr over the visits, naming each as it runs."""
    started = time.monotonic()
    rounds = plan.options.rounds

    def show(visit: Visit | None) -> str:
        if visit is None:
            return ""
        it, r = visit
        elapsed = time.monotonic() - started
        rnd = f" round {r + 1}/{rounds}" if rounds > 1 else ""
        return f"{it.shape} {it.dtype}{rnd} ({elapsed:.0f}s elapsed)"

    return click.progressbar(
        visits,
        label=f"{plan.record_as.key} {plan.options.op}",
        item_show_func=show,
        show_eta=True,
        show_pos=True,
        file=sys.stderr,
    )
