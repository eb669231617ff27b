"""``graphsval capture``: measure a sweep on this machine into a baseline CSV."""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import click

from graphsval_core.cli.context import AppContext, InputError, pass_app, shown_path
from graphsval_core.cli.params import Seconds, Whole, is_decimal
from graphsval_core.extras import require_plugin_extra

F = TypeVar("F", bound=Callable[..., Any])

#: Host captures run on one thread unless told otherwise: two OpenMP threads on
#: a busy 2-vCPU VM spin and get descheduled (a 13 us GEMM measured at 16 ms).
DEFAULT_THREADS = 1
#: The most threads a capture may ask for (and never more than this machine has).
MAX_THREADS = 4096
DAY = 86_400.0

#: Interleaved rounds by default (see docs/runbook-cpu.md for the agreement
#: against time that chose it).
DEFAULT_ROUNDS = 5

if TYPE_CHECKING:
    from graphsval_core.measure.workflow import CapturePlan, CaptureResult, Visit


def machine_options(command: F) -> F:
    """The options of how a capture treats this machine, shared by ``capture``
    and ``capture-machine``: ``--threads``, ``--allow-busy``, ``--max-wait``."""
    for option in reversed(
        (
            click.option(
                "--threads",
                type=Whole(1, MAX_THREADS),
                default=DEFAULT_THREADS,
                show_default=True,
                help="CPU threads (part of the snapshot key; one thread is far steadier on a "
                "shared VM).",
            ),
            click.option(
                "--allow-busy",
                is_flag=True,
                help="Start even when other processes or the hypervisor keep the machine busy.",
            ),
            click.option(
                "--max-wait",
                type=Seconds(0, DAY),
                default=60.0,
                show_default=True,
                help="Seconds to wait for a busy machine to settle before measuring anyway.",
            ),
        )
    ):
        command = option(command)
    return command


def check_threads(threads: int | None) -> None:
    """``--threads`` is at most this machine's CPU threads (more only
    oversubscribe it; far more make the threading library fail at exit)."""
    available = os.cpu_count() or 1
    if threads is not None and threads > available:
        raise click.BadParameter(
            f"{threads} is more than this machine's {available} CPU thread(s)",
            param_hint="'--threads'",
        )


def plugin_distribution(app: AppContext, hw: str) -> str | None:
    """The distribution of the plugin that registers target ``hw`` (None: an
    unknown target, which the capture names itself, or one of no distribution)."""
    from graphsval_core.plugins.registry import UnknownNameError

    try:
        return app.registry.target_plugin(hw).distribution
    except UnknownNameError:
        return None


def _percent(value: str) -> float:
    text = value.removesuffix("%")
    if not is_decimal(text):
        raise click.BadParameter(
            f"{value!r} is not a percentage (digits 0-9, a point, a % at most)",
            param_hint="'--target-ci'",
        ) from None
    number = float(text)
    if not 0 < number < 100:  # NaN too
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
@click.option(
    "--limit",
    type=Whole(1, 10**9),
    help="Only N runnable entries, sampled across regimes and sizes.",
)
@click.option(
    "--out",
    metavar="FILE",
    help="Output CSV (default: the workspace's baselines/<key>_<op>.<purpose>.csv); never "
    "modifies a file that is not a capture of the same target and op.",
)
@click.option(
    "--recapture",
    is_flag=True,
    help="Capture the validation set again, in another order, into recapture/ beside it; "
    "shapes whose two captures disagree are measured again.",
)
@click.option(
    "--dtype", "dtypes", multiple=True, metavar="D", help="Only entries of this dtype (repeatable)."
)
@click.option(
    "--max-time-per-shape",
    type=Seconds(0.01, DAY),
    default=10.0,
    show_default=True,
    help="Seconds of sampling per shape (all rounds together).",
)
@click.option("--max-total-time", type=Seconds(1, 30 * DAY), help="Stop after S seconds.")
@click.option(
    "--target-ci",
    default="2",
    show_default=True,
    metavar="PCT",
    help="Stop sampling when the 95% CI half-width of the median is under PCT%.",
)
@machine_options
@click.option(
    "--rounds",
    type=Whole(1, 1000),
    default=DEFAULT_ROUNDS,
    show_default=True,
    help="Interleaved rounds: every round visits every shape in a shuffled order; a row is "
    "the median of its rounds, an outlier round is measured again.",
)
@click.option(
    "--seed",
    type=Whole(0, 2**63 - 1),
    default=0,
    show_default=True,
    help="Seed of the round orders.",
)
@click.option("--preallocate", is_flag=True, help="Write into a preallocated output (out=).")
@click.option(
    "--force",
    is_flag=True,
    help="Re-measure everything (replaces a capture of the same target and op; nothing else).",
)
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
    recapture: bool,
    allow_busy: bool,
    max_wait: float,
) -> None:
    """Capture ground truth for a sweep on this machine, at the noise floor
    and resumably.

    Refuses a busy machine (--allow-busy), waits for quiet while it runs,
    measures interleaved rounds at one thread, re-measures outlier rounds and
    marks rows that will not settle or that are physically implausible
    `suspect`. Rows are appended as each shape finishes; a rerun skips
    measured shapes and retries failed ones. Capturing a detected target
    (host_cpu) records the rows under a named snapshot target whose spec goes
    into the workspace, where every command finds it.
    """
    from graphsval_core.measure.protocol import CaptureSettings
    from graphsval_core.measure.workflow import CaptureOptions, capture_sweep
    from graphsval_core.model.reference import UnsupportedDtypeError
    from graphsval_core.plugins.registry import UnknownNameError

    require_plugin_extra("graphsval capture", plugin_distribution(app, hw))
    check_threads(threads)

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
        recapture=recapture,
        allow_busy=allow_busy,
        max_wait_s=max_wait,
        workspace=str(app.workspace.path),
    )

    def announce(plan: CapturePlan) -> None:
        if plan.spec_path is not None:
            click.echo(
                f"{hw} is detected: recording as {plan.record_as.key} (spec: {plan.spec_path})"
            )
        elif plan.record_as is not plan.target:
            click.echo(
                f"{hw} is detected: recording as {plan.record_as.key}, the target plugin "
                f"'{app.registry.target_plugin(plan.record_as.key).name}' installs (no "
                "workspace copy is written: it would replace that target and its calibration)"
            )
        from graphsval_core.measure.workflow import estimate_seconds

        eta = estimate_seconds(app.registry, plan)
        click.echo(
            f"writing {shown_path(plan.out)}: {len(plan.items)} shapes x {rounds} round(s), "
            "about " + (f"{eta / 60:.0f} min" if eta >= 90 else f"{eta:.0f} s")
        )

    try:
        result = capture_sweep(
            app.registry,
            options,
            progress=progress_bar,
            echo=lambda s: click.echo(s, err=True),
            on_plan=announce,
        )
    except UnknownNameError as exc:
        flag = {"unknown target": "'--hw'", "unknown op": "'--op'"}
        hint = next((f for start, f in flag.items() if str(exc).startswith(start)), None)
        raise click.BadParameter(str(exc), param_hint=hint) from None
    except UnsupportedDtypeError as exc:
        raise click.BadParameter(str(exc), param_hint="'--dtype'") from None
    except OSError as exc:
        where = exc.filename or out or "the workspace"
        raise InputError(f"cannot write the capture: {where}: {exc.strerror or exc}") from None
    render_summary(result)
    summary = result.summary
    if summary.out_of_time:
        click.echo("  stopped at --max-total-time; rerun the same command to resume")
    if summary.interrupted:
        click.echo(
            "interrupted: every finished row is kept; rerun the same command to resume", err=True
        )
        raise SystemExit(130)


def render_summary(result: CaptureResult) -> None:
    """What a capture did, a few lines: rows, failures, suspects, quiet, recapture."""
    summary = result.summary
    click.echo(
        f"{shown_path(result.out)}: {summary.rows} rows; this run measured "
        f"{summary.measured}, failed {summary.failed}, incorrect {summary.incorrect}, skipped "
        f"{summary.skipped} already measured, in {result.elapsed_s:.0f} s"
    )
    for failure in summary.failures:
        click.echo(f"  failed: {failure}")
    for suspect in summary.suspects:
        click.echo(f"  suspect: {suspect}")
    click.echo(
        f"  quiet: {summary.remeasured_rounds} outlier round(s) measured again, "
        f"{summary.busy_retries} round(s) measured again because the machine was busy, "
        f"{summary.busy_rounds} kept while busy; waited {summary.waits} time(s), "
        f"{summary.waited_s:.0f} s in all"
    )
    if summary.gave_up_waiting:
        click.echo(
            "  the machine did not settle within --max-wait: the run measured on without waiting "
            "(busy rounds are counted in each row's busy column)"
        )
    rec = result.reconciled
    if rec is not None:
        click.echo(
            f"  recapture: {rec.agree_first}/{rec.compared} shapes agree with the capture within "
            f"half their band; {rec.disagreed} disagreed, re-measured {rec.remeasures} time(s), "
            f"{len(rec.unsettled)} still disagree (suspect)"
        )
    if summary.busy_warning:
        click.echo(f"  note: {summary.busy_warning}")


def progress_bar(plan: CapturePlan, visits: Sequence[Visit]) -> Any:
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

    if not sys.stderr.isatty():  # a log, not a terminal: one line, no bar
        click.echo(
            f"{plan.record_as.key} {plan.options.op}: {len(visits)} round(s) to measure", err=True
        )
        return contextlib.nullcontext(visits)
    return click.progressbar(
        visits,
        label=f"{plan.record_as.key} {plan.options.op}",
        item_show_func=show,
        show_eta=True,
        show_pos=True,
        file=sys.stderr,
    )
