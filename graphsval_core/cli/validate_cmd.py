"""``graphsval validate``: the main job. Parses options, runs
:func:`graphsval_core.validate.workflow.validate` and renders its result."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from graphsval_core.cli.context import AppContext, InputError, one_line, pass_app, shown_path

if TYPE_CHECKING:
    from graphsval_core.validate.workflow import ValidateResult


def _words(text: str) -> bool:
    """Whether ``text`` says something a reader sees: a letter or digit, and
    no control or format character (an ANSI escape, a zero-width space)."""
    import unicodedata

    visible = any(ch.isalnum() and ch not in _FILLERS for ch in text)
    hidden = ("C", "Zl", "Zp")  # controls, format characters, line and paragraph separators
    return visible and not any(unicodedata.category(ch).startswith(hidden) for ch in text)


#: Letters that draw nothing (the Hangul fillers).
_FILLERS = frozenset("\u115f\u1160\u3164\uffa0")


@click.command()
@click.option("--hw", "hws", multiple=True, metavar="KEY", help="Only these targets.")
@click.option("--op", "ops", multiple=True, metavar="OP", help="Only these ops.")
@click.option(
    "--purpose",
    type=click.Choice(["validation", "calibration"]),
    default="validation",
    show_default=True,
)
@click.option(
    "--baseline",
    "baselines",
    multiple=True,
    metavar="CSV",
    help="Validate these files (any V4 baseline) instead of the installed ones.",
)
@click.option("--predictor", default="reference", show_default=True)
@click.option(
    "--out",
    "out_dir",
    metavar="DIR",
    help="Write report.json, report.md, records.csv and report.html here.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "markdown", "json"]),
    default="text",
    show_default=True,
)
@click.option(
    "-v",
    "--verbose",
    count=True,
    help="Text: the full report (-v: every failing record, flagged and suspect row; "
    "-vv: every record with the model's explanation).",
)
@click.option("-q", "--quiet", is_flag=True, help="Text: the verdict line only (not with -v).")
@click.option("--tolerances", "tolerances_file", metavar="FILE", help="Per-regime tolerances.")
@click.option("--check-floors", is_flag=True, help="Exit by the pass-count floors.")
@click.option("--update-floors", is_flag=True, help="Raise the floors to the current counts.")
@click.option("--reason", metavar="TEXT", help="Why a floor is lowered (with --update-floors).")
@click.option(
    "--floors",
    "floors_file",
    metavar="FILE",
    help="Floors file to check (implies --check-floors; its keys must name installed "
    "targets and ops and floor a validated pair) and update (default: each plugin's own).",
)
@pass_app
def validate(
    app: AppContext,
    hws: tuple[str, ...],
    ops: tuple[str, ...],
    purpose: str,
    baselines: tuple[str, ...],
    predictor: str,
    out_dir: str | None,
    fmt: str,
    verbose: int,
    quiet: bool,
    tolerances_file: str | None,
    check_floors: bool,
    update_floors: bool,
    reason: str | None,
    floors_file: str | None,
) -> None:
    """Compare predictions with baselines shape by shape; for every failing cell,
    say which hardware assumption drifted.

    With no arguments: every installed target with shipped baselines, every op,
    purpose validation (targets that ship only calibration rows are validated
    on them and marked in-sample only). Exit 0 when every record passes (with
    --check-floors: when every floor holds), 1 otherwise, 2 on bad input.

    Suspect measurements are listed under their own heading, counted per
    target and op, and kept out of pass/fail with the reason: a row whose
    suspect column says so (latency: why; energy: why), or whose measurement
    is physically implausible against its target's uncalibrated spec (the
    datasheet's or the detected peaks, never calibrated fractions). Its
    latency is suspect above 2x the dtype's peak ops/s, above 2x the fastest
    tier's peak bandwidth for its operands' bytes, or above 1000x the
    slowest plausible time (10 ms, plus its operands at the slowest tier,
    plus its ops at 1% of peak); its energy above 2x the TDP in average
    power. A suspect latency takes the record out of pass/fail; a suspect
    energy skips only the energy verdict. The margins leave room for turbo
    clocks and power bursts (the shipped data reach 1.25x a detected peak
    and 1.6x a TDP).

    A file named is read and judged a block of rows at a time. The default
    summary and -q keep the figures they show, not the records: a 200 MB
    baseline (4 million rows) validates in about 30 s and 0.5 GB on two
    cores. -v, --format and --out list every record, and so hold them all.
    """
    from graphsval_core.consistency.report import report_lines
    from graphsval_core.datamodel.errors import UserInputError
    from graphsval_core.extras import require
    from graphsval_core.validate.report import render, report_json
    from graphsval_core.validate.workflow import ValidateOptions, reports, validate as run

    if quiet and verbose:
        raise click.UsageError(
            "-q and -v contradict each other (the verdict alone, or more); give one"
        )
    if reason is not None and not _words(reason):
        raise click.BadParameter(
            "give a reason in words: letters or digits, no control or invisible characters",
            param_hint="'--reason'",
        )
    if reason is not None and not update_floors:
        raise click.UsageError("--reason says why a floor is lowered: give it with --update-floors")
    if quiet and fmt != "text":
        raise click.UsageError(
            f"-q prints the verdict alone, in text; --format {fmt} writes the whole report: "
            "give one"
        )
    try:
        options = ValidateOptions(
            hws=hws,
            ops=ops,
            purpose=purpose,
            baselines=baselines,
            predictor=predictor,
            tolerances_file=tolerances_file,
            check_floors=check_floors or bool(floors_file and not update_floors),
            update_floors=update_floors,
            reason=reason,
            floors_file=floors_file,
            # the sentence a record is only read by the reports, JSON, Markdown and -vv
            explanations=bool(out_dir) or fmt != "text" or verbose > 1,
            # every record only for what lists them all: the terminal summary
            # and -q keep figures, whatever the baseline's size
            records=bool(out_dir) or fmt != "text" or verbose > 0,
        )
    except UserInputError as exc:
        raise click.UsageError(str(exc)) from None
    if out_dir:  # before any work: nothing is written when a part is missing
        require("report", "validate --out (report.html's pictures)")
        _refuse_out(Path(out_dir))
    registry = app.registry
    if not registry.strict:  # (strict: every plugin was checked before the command)
        from graphsval_core.authoring.health import exercise, third_party

        exercise(registry, only=third_party(registry))  # each broken one named at the end
    _known_names(registry, hws, ops)
    result = run(registry, options)
    summary, validation = result.summary, result.validation
    if result.floors is not None and result.floors.error:  # before any verdict is printed
        raise InputError(result.floors.error)
    if summary is None or validation is None:
        why = (
            "their baselines hold no row of an installed target and op (the warnings "
            "name what was left out)"
            if registry.baseline_files()
            else "the installed plugins ship no baselines"
        )
        click.echo(
            f"note: {why}; nothing to validate (see `graphsval plugins`); running the "
            "consistency checks only"
        )
        click.echo("\n".join(report_lines(list(result.consistency))))
        if result.failed:
            raise SystemExit(1)
        return
    if options.explicit and summary.checked == 0 and not result.no_prediction:
        raise InputError(_nothing_validated(summary, validation.size))
    if fmt == "json":
        for line in result.consistency_lines:
            click.echo(line, err=True)
        click.echo(report_json(summary, validation), nl=False)
    elif fmt == "markdown":
        for line in result.consistency_lines:
            click.echo(line, err=True)
        click.echo(render(summary, validation, markdown=True), nl=False)
    else:
        _echo_text(result, verbose, quiet)
    if out_dir:
        _write_reports(Path(out_dir), reports(result, registry))
    floors = result.floors
    if floors is not None:
        # stdout holds the JSON document alone, or -q's verdict line alone
        aside = fmt == "json" or quiet
        for plugin in floors.plugins:
            for line in plugin.changes:
                click.echo(f"floors ({shown_path(plugin.path)}): {line}", err=aside)
            for check in plugin.checks:
                click.echo(f"floor {check.text()}", err=aside)
        for line in floors.recaptures:
            click.echo(f"floor {line}", err=aside)
        if floors.error:
            raise InputError(floors.error)
        for key in floors.unfloored:
            click.echo(f"floor {key}: no floors file (its plugin or workspace has none)", err=aside)
    if result.no_prediction:  # a predictor that produced nothing failed its validation
        if fmt != "text":
            click.echo(f"FAILED: {result.no_prediction}", err=True)
        raise SystemExit(1)
    if result.failed:
        raise SystemExit(1)


def _known_names(registry: Any, hws: tuple[str, ...], ops: tuple[str, ...]) -> None:
    """Each ``--hw`` and ``--op`` names an installed target or op; else the
    flag is a bad parameter, as in every command that takes them."""
    from graphsval_core.plugins.registry import UnknownNameError

    for flag, names, look in (("--hw", hws, registry.resolve), ("--op", ops, registry.op)):
        for name in names:
            try:
                look(name)
            except UnknownNameError as exc:
                raise click.BadParameter(str(exc), param_hint=f"'{flag}'") from None


def _nothing_validated(summary: Any, selected: int) -> str:
    """Why a validation of named files checked nothing (before any verdict is
    printed: "0/0 records pass" is no success): no row matched the selection,
    or each selected row was excluded, a few reasons named (in file order
    among those kept; this ends the command before any listing, so no "-v
    lists them")."""
    if selected == 0:
        return (
            "nothing was validated: no row of the given baseline(s) matches the selection "
            "(--hw, --op, --dtype or --purpose)"
        )
    first = sorted(summary.excluded, key=lambda f: (str(f.file), f.line))[:3]
    why = [f"{f.file}:{f.line}: {f.reason}" for f in first]
    more = summary.total("excluded") - len(why)
    if more > 0:
        why = ["e.g. " + why[0], *why[1:], f"and {more} more"]
    reasons = "; ".join(why) if why else "each is marked suspect (its measurement failed a check)"
    return (
        f"nothing was validated: none of the {selected} selected row(s) could be checked: {reasons}"
    )


def _echo_text(result: ValidateResult, verbose: int, quiet: bool) -> None:
    """The terminal summary (default), the verdict alone (``-q``) or the full
    report after the verdict (``-v``, ``-vv``)."""
    from graphsval_core.validate.report import render
    from graphsval_core.validate.terminal import Screen, summary_lines, verdict

    summary, validation = result.summary, result.validation
    assert summary is not None and validation is not None
    screen = Screen.detect()
    colour = None if screen.colour else False  # click strips the style off a pipe itself
    consistency = result.consistency_lines
    if quiet or verbose:
        top = verdict(summary, result.failed, len(consistency), result.floors, result.no_prediction)
        style = {"fg": "red" if result.failed else "green", "bold": True}
        if quiet:  # one line, for a script's `head -1`; what the data warn of, on stderr
            click.echo(screen.paint(top, **style), color=colour)
            for warning in summary.warnings:
                click.echo(f"warning: {one_line(warning)}", err=True)
            return
        for line in screen.wrap(top, "", "  "):
            click.echo(screen.paint(line, **style), color=colour)
        click.echo("")
        for line in consistency:
            click.echo(line)
        per_shape = "all" if verbose > 1 else "failing"
        click.echo(render(summary, validation, per_shape=per_shape, width=screen.width), nl=False)
        return
    lines = summary_lines(
        summary,
        validation,
        screen,
        failed=result.failed,
        consistency=consistency,
        floors=result.floors,
        reason=result.no_prediction,
    )
    click.echo("\n".join(lines), color=colour)


def _refuse_out(folder: Path) -> None:
    """Refuse, before validating, an ``--out`` its reports cannot go in: one
    that is a file or a device, one whose report files are there but are no
    regular files, or one under a folder no file can be made in (the nearest
    folder that exists is probed; the reports create the rest)."""
    from graphsval_core.files.outputs import check_output_files
    from graphsval_core.validate.workflow import REPORT_FILES

    _refuse_links(folder, REPORT_FILES)  # first: the reports' own line, a dangling link too
    check_output_files(folder, REPORT_FILES, InputError, "--out")


def _refuse_links(folder: Path, names: Iterable[str]) -> None:
    """The reports are this command's own files: a link of a report's name
    in ``folder`` is refused, never written through (``ln -s /etc/hostname
    report.json`` had it overwrite the file the link leads to)."""
    for name in names:
        if (folder / name).is_symlink():
            link = shown_path(folder / name)
            raise InputError(
                f"--out {link}: is a link (to {os.readlink(folder / name)}); the "
                "reports are written into the folder itself: remove the link or give another "
                "folder"
            )


def _write_reports(folder: Path, files: dict[str, str]) -> None:
    """Write the reports into ``folder``, all or none."""
    from graphsval_core.files.outputs import check_output_files, write_texts_atomic

    _refuse_links(folder, files)
    check_output_files(folder, files, InputError, "--out")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(
            f"--out {shown_path(folder)}: cannot make it: {exc.strerror or exc}"
        ) from None
    write_texts_atomic(
        [
            (folder / name, text, f"--out {shown_path(folder / name)}")
            for name, text in files.items()
        ],
        InputError,
    )
    click.echo(f"reports written to {shown_path(folder)}/ ({', '.join(files)})", err=True)
