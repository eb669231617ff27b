"""``graphsval calibrate``: fit a target's constants on calibration rows only."""

from __future__ import annotations

import sys
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import click

from graphsval_core.cli.context import pass_app, shown_path
from graphsval_core.datamodel.errors import shell_path


@click.command()
@click.option("--hw", required=True, metavar="KEY", help="Target to calibrate.")
@click.option(
    "--baseline",
    "baselines",
    multiple=True,
    required=True,
    metavar="CSV",
    help="Calibration baseline(s) of that target (repeatable).",
)
@click.option(
    "--out",
    metavar="FILE",
    help="Calibration file (default: the workspace's calibration/<hw>.calibration.json "
    "for a workspace target, which every command then applies; else <hw>.calibration.json "
    "here).",
)
@click.option(
    "--report",
    "report_dir",
    metavar="DIR",
    help="Write plots of the fit in this folder (made if missing; checked before the fit).",
)
@click.option(
    "--allow-validation-rows",
    "override",
    metavar="REASON",
    help="Use rows the project holds out for validation anyway; the reason is "
    "recorded loudly in the calibration file (where some row is one: a reason with "
    "nothing to excuse is not recorded).",
)
@click.option(
    "--loo/--no-loo",
    "loo",
    default=None,
    help="Run (or skip) the leave-one-out cross-validation (default: run it up to 150 "
    "rows; it refits once per row).",
)
@click.option(
    "--no-grouped-cv",
    is_flag=True,
    help="Skip the grouped cross-validation (each family of shapes left out in turn: "
    "an out-of-sample figure, beside the validation set's).",
)
@click.option(
    "--validation-baseline",
    "validation",
    multiple=True,
    metavar="CSV",
    help="Judge the fit on the validation rows of these baselines instead (repeatable; "
    "never fitted). Default: the target's validation rows among the installed and "
    "workspace baselines.",
)
@pass_app
def calibrate(
    app: Any,
    hw: str,
    baselines: tuple[str, ...],
    out: str | None,
    report_dir: str | None,
    override: str | None,
    loo: bool | None,
    no_grouped_cv: bool,
    validation: tuple[str, ...],
) -> None:
    """Fit launch overhead, compute and tier fractions, shared-tier capacity,
    first-touch cost and energy coefficients from calibration rows, and write
    a calibration file the target's plugin can ship.

    Refuses rows whose file says they are validation data (purpose column or
    file-name suffix) and rows whose (op, shape, dtype) is in one of the
    project's validation sweeps, unless --allow-validation-rows REASON.
    Skips, and lists, physically implausible measurements (the row's suspect
    column, or above the spec's peak, fastest tier or TDP, or far beyond any
    plausible time; see `graphsval validate`). Refuses a row of a dtype
    the target does not run, and rows with fewer distinct (op, shape,
    dtype) than latency constants to fit. Checks before the fit that --out
    and --report can be written (a folder a file can be made in; --report
    not the calibration file's own path).

    Judges the fit per op in sample, by leave-one-out, by grouped
    cross-validation and on the target's validation set (rows held out for
    validation, never fitted: the installed and workspace ones, or those of
    --validation-baseline), and records each in the file's fit section;
    warns when grouped CV or the validation set is much worse than in sample,
    or when the validation set judged none of its rows. On a terminal, a
    progress bar on stderr follows each cross-validation's refits (minutes on
    a rich host's rows).

    Under the constants, one `warning:` line each (also recorded in the
    file's fit.diagnostics) for a constant at a bound of its range or an
    energy coefficient at its floor (a bound, not a measurement), one the
    rows cannot identify (relative uncertainty above 100%, or not moved at
    all, or put far elsewhere by another start of the fit that ends within 1%
    of its cost: two optima the rows do not choose between), a cache tier
    fitted slower than twice main memory's peak (it stands in for another
    cost of the rows), a GEMM library's bandwidth
    share left unfitted though products are memory-bound (too few vector_add
    rows bound by a memory tier to tell it from the tiers' own rates),
    rows measured on a thread count other than the CPU target's compute
    units, and a fit that reproduces its rows exactly (no scatter is left to
    size the uncertainties). After the fit's figures, a warning for a
    baseline with neither a purpose column nor a .calibration/.validation
    suffix (every row of it is fitted).
    """
    from graphsval_core.calibrate.workflow import CalibrateOptions, calibrate as run
    from graphsval_core.extras import require
    from graphsval_core.plugins.registry import UnknownNameError
    from graphsval_core.workspace.location import creating_parent

    require("calibrate", "graphsval calibrate")  # before any work: nothing is written
    if override is not None and not override.strip():  # recorded loudly: it must say something
        raise click.BadParameter("give the reason in words", param_hint="'--allow-validation-rows'")
    if override is not None and override.splitlines() != [override]:
        # printed and recorded as one line: a line break would split the warning
        raise click.BadParameter(
            "give the reason on one line", param_hint="'--allow-validation-rows'"
        )
    if report_dir:
        require("report", "calibrate --report (its plots)")

    into = _workspace_out(app, hw) if out is None else None
    progress = RefitProgress() if sys.stderr.isatty() else None  # a terminal's, not a log's
    if out is not None:
        _refuse_foreign_workspace_out(app, hw, out)
    options = CalibrateOptions(
        target=hw,
        baselines=baselines,
        out=str(into) if into is not None else out,
        allow_validation_rows=override,
        leave_one_out=loo,
        report_dir=report_dir,
        grouped_cv=not no_grouped_cv,
        validation_baselines=validation,
        progress=progress,
    )
    try:
        with creating_parent(into) if into is not None else nullcontext():
            try:
                result = run(app.registry, options)
            finally:  # a bar left open (Ctrl-C) would leave the terminal's cursor hidden
                if progress is not None:
                    progress.close()
    except UnknownNameError as exc:  # the workflow's only unknown name is the target
        raise click.BadParameter(str(exc), param_hint="'--hw'") from None
    _render(result)
    if out is None and into is None:
        registry = app.registry
        owner = registry.target_plugin(hw).name
        used = (
            "the calibration that plugin ships"
            if hw in registry.calibration_files
            else "its datasheet spec"
        )
        click.echo(
            f"note: {hw} is a target of plugin {owner!r}: commands use {used}, not this "
            "file. To apply it, make the target a workspace one: its target file in the "
            f"workspace's targets/{hw}.target.json (`graphsval targets --hw {hw} "
            "--target-file --out FILE` writes it), this file in its calibration/ "
            "(`graphsval workspace` shows where)."
        )


class RefitProgress:
    """A progress bar on a terminal's stderr for each cross-validation of a
    calibration (its refits take minutes on a rich host's rows); called
    ``(what, refits done, refits in all)``."""

    def __init__(self) -> None:
        self._bar: Any = None

    def __call__(self, what: str, done: int, total: int) -> None:
        if done == 0:
            self._bar = click.progressbar(
                length=total, label=f"  {what} ({total} refits)", show_eta=True, file=sys.stderr
            )
            self._bar.render_progress()
            return
        if self._bar is None:
            return
        self._bar.update(1)
        if done >= total:
            self.close()

    def close(self) -> None:
        """Finish the bar that is drawing, if one is (its cursor shown again)."""
        if self._bar is not None:
            self._bar.render_finish()
            self._bar = None


def _refuse_foreign_workspace_out(app: Any, hw: str, out: str) -> None:
    """Refuse, before the fit, an ``--out`` into the workspace's calibration
    folder for a target that is not the workspace's: every command would
    then refuse the workspace (a workspace calibration applies only to a
    workspace target)."""
    import os

    from graphsval_core.plugins.registry import UnknownNameError
    from graphsval_core.workspace.location import CALIBRATION_DIR

    folder = os.path.realpath(Path(app.workspace.path) / CALIBRATION_DIR)
    if os.path.dirname(os.path.realpath(out)) != folder:
        return
    try:
        if _workspace_out(app, hw) is not None:
            return  # the workspace's own target: its calibration belongs there
        owner = app.registry.target_plugin(hw).name
    except UnknownNameError:
        return  # calibrate names the unknown target itself
    raise click.BadParameter(
        f"{out} is in the workspace's calibration/, which applies a calibration only to a "
        f"workspace target, and {hw} is a target of plugin {owner!r}: every command would "
        "refuse it. "
        f"Make the target the workspace's first (`graphsval targets --hw {hw} --target-file "
        f"--out {shell_path(Path(app.workspace.path) / 'targets' / (hw + '.target.json'))}`), "
        "or write the file elsewhere",
        param_hint="'--out'",
    )


def _workspace_out(app: Any, hw: str) -> Path | None:
    """Where a workspace target's calibration goes by default: the workspace's
    calibration folder, so the next command applies it. None for any other
    target (its plugin's calibration is not the workspace's to replace)."""
    from graphsval_core.workspace.location import calibration_path
    from graphsval_core.workspace.plugin import owns_target

    if not owns_target(app.registry, hw):
        return None
    return calibration_path(app.workspace.path, hw)


def _render(result: Any) -> None:
    from graphsval_core.files.calibration import uncertainty_words

    energy, data = result.energy, result.content
    fitted = len(result.fit.values)
    kept = len(result.fit.params) - fitted  # not identifiable: the spec's value stays
    click.echo(
        f"wrote {shown_path(result.path)}: {fitted} latency constants"
        + (f" ({kept} more not identifiable, left at the spec's)" if kept > 0 else "")
        + f" from {len(result.rows)} rows"
        + (
            f", energy from {energy.rows} rows"
            if energy.fitted
            else f"; energy not fitted ({energy.skipped})"
        )
    )

    if result.suspect:
        n = len(result.suspect)
        click.echo(
            f"  skipped {n} suspect row{'s' if n != 1 else ''} (a suspect latency leaves "
            "both fits, a suspect energy the energy fit):"
        )
        for row in result.suspect:
            click.echo(f"    {row.text()}")

    def num(value: Any) -> str:
        return "-" if value is None else f"{value:.6g}"

    for name, entry in data["constants"].items():
        unc = entry.get("relative_uncertainty")
        spread = "" if unc is None else f" {uncertainty_words(name, entry['value'], unc)}"
        click.echo(
            f"  {name}: {num(entry['value'])} (was {num(entry['datasheet'])}){spread}"
            f"  [{entry['from']}]"
        )
    for diagnostic in result.diagnostics:
        click.echo(f"  {diagnostic.line}")
    _render_quality(result)
    if result.override:
        click.echo(f"  WARNING: validation rows used ({len(result.refused)}): {result.override}")
    elif result.override_unused:
        click.echo(
            "  note: --allow-validation-rows: none of these rows is a validation row, so "
            "nothing was allowed and no override is recorded in the file"
        )
    if result.report_dir:
        click.echo(f"  plots in {result.report_dir}/")


def _figures(f: Any) -> str:
    """``median |error| M, B within the band (n rows)`` of error figures."""
    return f"median |error| {f.median_abs_error:5.1%}, {f.within_band:4.0%} within the band"


def _rows(n: int) -> str:
    return f"{n} row" + ("" if n == 1 else "s")


def _validation_source(result: Any) -> str:
    """Where the validation set came from, how many of its rows were judged
    and why the others were left out; or why there is none."""
    figures = result.validation
    if figures is None:
        where = (
            "the files named" if result.held_out.named else "the installed and workspace baselines"
        )
        if result.grouped is not None:
            instead = "grouped CV is the only out-of-sample figure"
        elif result.loo is not None:
            instead = (
                "leave-one-out is the only out-of-sample figure, and it flatters "
                "(grouped CV skipped)"
            )
        else:
            instead = "nothing judged the fit out of sample (grouped CV skipped)"
        return (
            f"no validation set of {result.spec.key} in {where}: {instead} "
            "(--validation-baseline CSV names one)"
        )
    held = figures.held
    names = [name for name, _ in held.files]
    files = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    line = (
        f"validation set: {figures.rows} of its {_rows(held.total)} judged, never fitted "
        f"({files}; {' and '.join(held.origins)})"
    )
    why = [
        (held.unmeasured, "with no latency (never measured)"),
        (held.suspect, "with a suspect latency"),
        (held.unusable, "that failed their correctness check or are of a dtype it does not run"),
        (held.repeated, "whose shapes another file measured too"),
        (figures.uncalibrated, "of an op no calibration row is of"),
        (figures.fitted_too, "whose shapes were fitted too"),
    ]
    left = [f"{n} {text}" for n, text in why if n]
    return line + (f"; left out: {', '.join(left)}" if left else "")


def _render_quality(result: Any) -> None:
    """The fit's quality per op: in sample (flattering), leave-one-out,
    grouped cross-validation (a family of shapes left out at a time) and the
    validation set (rows never fitted: the figure to trust where there is
    one), each op with its own count of families, then where the validation
    set came from and any warning; says which cross-validations were skipped."""
    from graphsval_core.calibrate.evaluate import family_of

    why = {"leave-one-out": f" ({result.loo_skipped})" if result.loo_skipped else ""}
    skipped = [
        name + why.get(name, "")
        for name, ran in (("leave-one-out", result.loo), ("grouped CV", result.grouped))
        if ran is None
    ]
    held = result.validation if result.validation and result.validation.rows else None
    head = "in sample"
    if result.grouped is not None or held is not None:
        named = [n for n, f in (("the validation set", held), ("grouped CV", result.grouped)) if f]
        head = "out of sample: " + " and ".join(named)
    click.echo(
        f"  fit quality (latency; {head})"
        + (f"; skipped: {' and '.join(skipped)}" if skipped else "")
        + ":"
    )
    for op in result.in_sample:  # a validation set judges only the ops fitted
        rows = [r for r in result.rows if r.op == op]
        n_families = len({family_of(r) for r in rows})
        click.echo(f"    {op} ({len(rows)} rows, {n_families} families):")
        kinds = [("in sample", result.in_sample)]
        if result.loo is not None:
            kinds.append(("leave-one-out", result.loo.per_op))
        if result.grouped is not None:
            kinds.append(("grouped CV", result.grouped.per_op))
        for label, per_op in kinds:
            if op in per_op:
                click.echo(f"      {label:<14} {_figures(per_op[op])}")
        if held is not None and op in held.per_op:
            f = held.per_op[op]
            click.echo(
                f"      {'validation set':<14} {_figures(f)}, {held.within_per_op[op]:4.0%} "
                f"within 10% ({_rows(f.rows)})"
            )
        elif held is not None:
            click.echo(f"      {'validation set':<14} none of the rows it judges is of {op}")
    click.echo(f"  {_validation_source(result)}")
    for line in result.warnings:
        click.echo(f"  {line}")
