"""``graphsval capture``: measure a sweep on this machine into a baseline CSV."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import click

from graphsval_core.cli.context import AppContext, InputError, pass_app


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
    from graphsval_core.datamodel.target_json import write_spec
    from graphsval_core.files.baseline import BaselineFileError
    from graphsval_core.files.sweep import SweepFileError, load_sweep
    from graphsval_core.measure.capture import CaptureItem
    from graphsval_core.measure.capture import capture as run_capture
    from graphsval_core.measure.protocol import CaptureSettings
    from graphsval_core.plugins.registry import UnknownNameError
    from graphsval_core.plugins.resources import sweeps_dir

    registry = app.registry
    try:
        target = registry.target(hw)
        op_spec = registry.op(op)
    except UnknownNameError as exc:
        raise click.BadParameter(str(exc)) from None
    for dtype in dtypes:
        if dtype not in target.dtypes:
            raise click.BadParameter(
                f"{hw} has no {dtype} (it has {', '.join(target.dtypes)})", param_hint="'--dtype'"
            )
    probe = registry.measurer_probe(target)
    if not probe.available:
        raise InputError(f"cannot measure {hw} on this machine: {probe.reason}")
    settings = CaptureSettings(
        target_ci=_percent(target_ci),
        max_time_per_shape_s=max_time_per_shape,
        threads=threads,
        preallocate=preallocate,
    )
    try:
        if sweep_file is None:
            item = sweeps_dir().joinpath(f"{op}_{purpose}.json")
            sweep = load_sweep(item.name, len(op_spec.dims), text=item.read_text())
        else:
            sweep = load_sweep(sweep_file, len(op_spec.dims))
    except (SweepFileError, FileNotFoundError) as exc:
        raise InputError(str(exc)) from None
    items = [
        CaptureItem(e.shape, e.dtype)
        for e in sweep.entries
        if (e.op or sweep.op) == op
        and e.dtype in target.dtypes
        and (not dtypes or e.dtype in dtypes)
    ]
    if limit is not None:
        items = items[:limit]
    if not items:
        at = f" at {', '.join(dtypes)}" if dtypes else ""
        raise InputError(f"no entry of {sweep.path} runs on {hw}{at}")

    record_as = target
    if target.detected:
        snap = registry.snapshot_target(target, {"threads": threads})
        if snap is not None:
            record_as = snap
    path = Path(out) if out else Path(f"{record_as.key}_{op}.csv")
    if record_as is not target:
        spec_path = path.with_name(f"{record_as.key}.target.json")
        write_spec(record_as, spec_path)
        click.echo(f"{hw} is detected: recording as {record_as.key} (spec: {spec_path})")

    def measure(item: CaptureItem, opts: CaptureSettings) -> Any:
        return registry.measure(record_as, op_spec, item.dims, item.dtype, opts)

    started = time.monotonic()

    def progress(visits: Any) -> Any:
        def show(visit: Any) -> str:
            if visit is None:
                return ""
            it, r = visit
            elapsed = time.monotonic() - started
            rnd = f" round {r + 1}/{rounds}" if rounds > 1 else ""
            return f"{it.shape} {it.dtype}{rnd} ({elapsed:.0f}s elapsed)"

        return click.progressbar(
            visits,
            label=f"{record_as.key} {op}",
            item_show_func=show,
            show_eta=True,
            show_pos=True,
            file=click.get_text_stream("stderr"),
        )

    try:
        with_bar = _BarAdapter(progress)
        summary = run_capture(
            hardware=record_as.key,
            op=op,
            purpose=purpose,
            items=items,
            out=path,
            measure=measure,
            settings=settings,
            force=force,
            rounds=rounds,
            seed=seed,
            max_total_time_s=max_total_time,
            progress=with_bar,
            echo=lambda s: click.echo(s, err=True),
        )
    except BaselineFileError as exc:
        raise InputError(str(exc)) from None
    finally:
        _BarAdapter.close_all()
    elapsed = time.monotonic() - started
    click.echo(
        f"{path}: {summary.rows} rows; this run measured {summary.measured}, failed "
        f"{summary.failed}, incorrect {summary.incorrect}, skipped {summary.skipped} already "
        f"measured, in {elapsed:.0f} s"
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


class _BarAdapter:
    """Opens a click progress bar around the visit list and closes it at the end."""

    _open: list[Any] = []

    def __init__(self, factory: Any) -> None:
        self.factory = factory

    def __call__(self, visits: Any) -> Any:
        bar = self.factory(visits)
        bar.__enter__()
        _BarAdapter._open.append(bar)
        return bar

    @classmethod
    def close_all(cls) -> None:
        while cls._open:
            cls._open.pop().__exit__(None, None, None)
