"""The calibrate workflow (``graphsval calibrate``): fit a target's constants
on calibration rows only and write the calibration file its plugin can ship.

:func:`calibrate` reads the baselines, refuses validation rows unless given a
reason, skips suspect measurements (a row whose latency is physically
implausible takes part in neither fit, since the energy fit regresses on the
measured time; a row whose energy is implausible only leaves the energy fit),
refuses rows that cannot pin the latency constants (fewer distinct
shapes than constants), fits the latency constants and then the energy
ones, cross-validates (leave-one-out, and grouped by family: an
out-of-sample figure), judges the fit on the target's validation set where
there is one (rows held out, never fitted; see
:mod:`~graphsval_core.calibrate.validation`), diagnoses the fit (constants at a bound, ones the
rows cannot identify, a thread count other than the spec's; see
:mod:`~graphsval_core.calibrate.diagnostics`), writes the file and, when
asked, plots of the fit; its :class:`CalibrateResult` holds everything
there is to report.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from attrs import field, frozen

from graphsval_core.calibrate.diagnostics import Diagnostic, diagnose, require_distinct_rows
from graphsval_core.calibrate.energy import EnergyFit, fit_energy
from graphsval_core.calibrate.evaluate import (
    ErrorFigures,
    OutOfSample,
    Progress,
    grouped_cv,
    grouped_warning,
    judge,
    leave_one_out,
    per_op,
)
from graphsval_core.calibrate.file import build_file, dump
from graphsval_core.calibrate.fit import Fit, fit_latency
from graphsval_core.calibrate.inputs import SuspectRow, read_rows, unlabelled_warnings
from graphsval_core.calibrate.params import (
    accumulate_rows,
    choose_params,
    gemv_stream_rows_bound,
    gemv_team_rows,
    own_kernel_rows,
    share_gate,
    tiers_bound,
)
from graphsval_core.calibrate.rows import canonical, predict_rows
from graphsval_core.calibrate.validation import (
    HeldOut,
    ValidationFigures,
    held_out_rows,
    judge_validation,
    unjudged_warning,
    validation_warning,
)
from graphsval_core.datamodel.errors import UserInputError, shown_path
from graphsval_core.datamodel.target import TargetSpec
from graphsval_core.files.baseline import BaselineRow
from graphsval_core.files.calibration import CalibrationError, apply_constants
from graphsval_core.files.inputs import read_input
from graphsval_core.files.jsonfile import parse_json
from graphsval_core.files.outputs import (
    check_output_files,
    check_output_in_folder,
    check_output_temp,
    write_text_atomic,
)
from graphsval_core.files.tolerances import load_tolerances
from graphsval_core.plugins.registry import Registry

#: The fewest usable rows a calibration accepts.
MIN_ROWS = 3


@frozen
class CalibrateOptions:
    """What to calibrate: the target's key, its baselines (CSV paths), the
    calibration file to write (default ``<key>.calibration.json`` here), the
    reason to use validation rows anyway (None: refuse them), whether to run
    leave-one-out cross-validation (None: only up to :data:`LOO_MAX_ROWS`
    rows, one refit each), a folder for plots (None: no plots),
    whether to run the grouped cross-validation (a family left out at a time),
    and the baselines holding the validation set to judge the fit on (empty:
    the target's installed and workspace validation rows)."""

    target: str
    baselines: tuple[str, ...]
    out: str | None = None
    allow_validation_rows: str | None = None
    leave_one_out: bool | None = None
    report_dir: str | None = None
    grouped_cv: bool = True
    validation_baselines: tuple[str, ...] = ()
    #: told ``(what, refits done, refits in all)`` as each cross-validation
    #: runs ("leave-one-out", "grouped CV"): minutes on a rich host's rows
    progress: Callable[[str, int, int], None] | None = field(default=None, eq=False)


@frozen(eq=False)
class CalibrateResult:
    """A calibration: the datasheet spec it started from, the rows it used (in
    file order; suspect latencies left out) and those refused as validation
    data, the rows skipped as suspect (by one fit or both), the latency and
    energy fits, the leave-one-out figures (None when skipped), the calibrated
    model's latency of each row and the share within its regime's band, the
    file's content, where it was written, the reason validation rows were
    used (None when they were not; ``override_unused`` when a reason was
    given with no validation row to excuse), the folder of the plots (None when
    none were drawn), the grouped cross-validation (None when skipped), the
    in-sample figures of each op, the warnings about the fit, and the
    diagnostics of its constants and rows (one ``warning:`` line each), the
    validation set it was judged on (no rows: none found) and its figures
    (None: no row to judge)."""

    spec: TargetSpec
    rows: tuple[BaselineRow, ...]
    refused: tuple[str, ...]
    suspect: tuple[SuspectRow, ...]
    fit: Fit
    energy: EnergyFit
    loo: OutOfSample | None
    predicted: np.ndarray
    in_band: float
    content: dict[str, Any]
    path: Path
    override: str | None
    report_dir: str | None
    grouped: OutOfSample | None = None
    in_sample: dict[str, ErrorFigures] = field(factory=dict)
    warnings: tuple[str, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()
    #: why the leave-one-out was skipped when it was not asked to be
    loo_skipped: str | None = None
    held_out: HeldOut = HeldOut((), ())
    validation: ValidationFigures | None = None
    #: --allow-validation-rows was given but no row was a validation row:
    #: nothing was allowed and ``override`` (recorded in the file) is None
    override_unused: bool = False


#: Above this many rows leave-one-out (one refit per row) is skipped unless
#: asked for: it flatters a fit anyway, and grouped CV is the figure to trust.
LOO_MAX_ROWS = 150


def _refuse_unreadable(content: dict[str, Any], spec: TargetSpec, rows: list[BaselineRow]) -> None:
    """Never write a calibration every command would refuse to load: the fit
    may take an estimated peak up to 4 times over (a VM reports its base
    clock), a calibration file holds a fraction of at most 2 (its value must
    stay a physical reading). Rows that ask for more describe something the
    spec does not (a clock far off, or latencies that are not the op's)."""
    from graphsval_core.files.calibration_file import CalibrationFileError, check_calibration

    try:
        check_calibration(content, "the fitted calibration", spec)
    except CalibrationFileError as exc:
        raise CalibrationError(
            f"{exc}: these {len(rows)} rows ask for a constant no calibration of {spec.key} "
            "may hold (check the spec's clock and peaks, or the rows' latencies); "
            "nothing written"
        ) from None


def _refuse_foreign(path: Path, key: str) -> None:
    """Refuse to overwrite a file that is not a calibration of ``key``: one
    that is not a regular file is refused before it is read (a device would
    never end), a regular one is read through the bounded reader; a path in
    no folder, or in one no file can be made in (probed), and a temp file's
    place (``<path>.tmp``) taken by something else than a file."""
    label = f"--out {shown_path(path)}"  # the file ./-: "--out ./-", not "--out -"
    check_output_in_folder(path, CalibrationError, label)  # before the fit's minutes
    check_output_temp(path, CalibrationError, label)
    if not path.exists():
        return
    try:
        data = parse_json(read_input(path, CalibrationError, "a calibration file"), str(path))
    except UserInputError:
        data = None
    if not isinstance(data, dict) or data.get("target") != key:
        raise CalibrationError(
            f"{label}: not a calibration file of {key}; refusing to overwrite it"
        )


def _refuse_report(report_dir: str, out: Path, key: str) -> None:
    """Refuse, before the fit, a ``--report`` folder its plots cannot go
    in: one that is a file or a device, one naming the calibration file's
    own path, one whose plot files (:func:`plot_paths`) are there but are no
    regular files, or one under a folder no file can be made in (the nearest
    folder that exists is probed; the plots create the rest)."""
    from graphsval_core.calibrate.plots import plot_paths

    label = f"--report {shown_path(report_dir)}"
    plots = plot_paths(Path(report_dir), key)
    check_output_files(report_dir, [plot.name for plot in plots], CalibrationError, "--report")
    folder = Path(report_dir).resolve()
    if out.resolve() in (folder, *folder.parents):
        raise CalibrationError(
            f"{label}: the calibration file's own path, or under it (--out {shown_path(out)}); "
            "--report names a folder for the plots"
        )
    if out.resolve() in {plot.resolve() for plot in plots}:  # the plot would overwrite it
        raise CalibrationError(f"{label}: a plot would be written over --out {out}")


def calibrate(registry: Registry, options: CalibrateOptions) -> CalibrateResult:
    """Calibrate ``options.target`` (see module doc) and write its file.

    Raises :class:`~graphsval_core.plugins.registry.UnknownNameError` for an
    unknown target, and another
    :class:`~graphsval_core.datamodel.errors.UserInputError` for any other bad
    input (a baseline that cannot be read or names an unknown op, validation
    rows without a reason, fewer than ``MIN_ROWS`` usable rows, fewer
    distinct (op, shape, dtype) than free latency constants, an ``--out`` or
    ``--report`` that could not be written: each refused before the fit), each
    in one line naming the file and line where there is one."""
    spec = registry.datasheet_target(registry.target(options.target).key)
    if spec.ground_truth == "consistency_only":  # no silicon: no measured row to fit on
        raise CalibrationError(
            f"--hw {spec.key}: a consistency-only target (no silicon to measure) has no "
            "measured rows to calibrate on; `graphsval check` judges it"
        )
    path = Path(options.out or f"{spec.key}.calibration.json")
    _refuse_foreign(path, spec.key)
    if options.report_dir:
        _refuse_report(options.report_dir, path, spec.key)
    found = read_rows(registry, spec, options.baselines)
    refused = found.refused
    # a reason with nothing to excuse is not recorded: the file would say
    # validation rows were fitted when none was
    override = options.allow_validation_rows if refused else None
    if refused and not override:
        more = f" (and {len(refused) - 1} more row(s))" if len(refused) > 1 else ""
        raise UserInputError(
            f"refusing validation data: {refused[0]}{more}; calibrate on "
            "calibration rows only, or pass --allow-validation-rows REASON"
        )
    skip_energy = {id(s.row) for s in found.suspect}
    rows = found.trusted
    if len(rows) < MIN_ROWS:
        skipped = len(found.rows) - len(rows)
        suspect = f" ({skipped} more with a suspect latency)" if skipped else ""
        raise UserInputError(
            f"{len(rows)} usable {spec.key} rows in the given baselines{suspect}; "
            f"calibration needs at least {MIN_ROWS}"
        )
    require_distinct_rows(spec, rows, choose_params(registry, spec, canonical(rows)))
    held = held_out_rows(registry, spec, options.validation_baselines)
    tolerances = load_tolerances()
    fit = fit_latency(registry, spec, rows)
    energy_rows = [r for r in found.rows if id(r) not in skip_energy]
    energy = fit_energy(registry, apply_constants(spec, fit.values, "fit"), energy_rows)
    run_loo = options.leave_one_out
    loo_skipped = None
    if run_loo is None:
        run_loo = len(rows) <= LOO_MAX_ROWS
        if not run_loo:
            loo_skipped = f"{len(rows)} rows, one refit each; --loo runs it"

    def told(what: str) -> Progress | None:
        tell = options.progress
        return None if tell is None else lambda done, total: tell(what, done, total)

    loo = leave_one_out(registry, spec, fit, tolerances, told("leave-one-out")) if run_loo else None
    grouped = (
        grouped_cv(registry, spec, fit, tolerances, told("grouped CV"))
        if options.grouped_cv
        else None
    )
    calibrated = apply_constants(spec, {**fit.values, **energy.values}, "fit")
    predicted, terms = predict_rows(registry, calibrated, rows)
    errors, inside = judge(rows, predicted, terms["regime"], tolerances)
    in_band = float(np.mean(inside))
    in_sample = per_op(rows, errors, inside)
    validation = judge_validation(registry, calibrated, held, rows, tolerances)
    median = float(np.median(np.abs(errors)))
    # the validation set against the fitted rows of the ops it judges
    its_ops = [r.op in (validation.per_op if validation else {}) for r in rows]
    same = float(np.median(np.abs(errors[its_ops]))) if any(its_ops) else median
    warned = (
        grouped_warning(median, grouped),
        validation_warning(same, validation),
        unjudged_warning(validation),
    )
    warnings = unlabelled_warnings(found) + tuple(w for w in warned if w)
    used = {id(r) for r in rows}
    files = [(b.path, [r for r in b.rows if id(r) in used]) for b, _ in found.sources]
    # the gates' counts, judged under the spec's own predictions (as the fit chose them)
    latency_s, spec_terms = predict_rows(registry, spec, fit.rows)
    gate = share_gate(registry, fit.rows, latency_s, spec_terms["tier_time"])
    own = own_kernel_rows(registry, spec, fit.rows)
    gemv = gemv_team_rows(registry, spec, fit.rows, spec_terms["regime"])
    bound = tiers_bound(latency_s, spec_terms["tier_time"])
    streams = gemv_stream_rows_bound(registry, spec, fit.rows, bound)
    calls = accumulate_rows(registry, spec, fit.rows, spec_terms["regime"])
    diagnostics = diagnose(spec, fit, energy, files, gate, own, gemv, streams, calls)
    content = build_file(
        spec,
        found.sources,
        fit,
        energy,
        loo,
        override,
        in_band,
        grouped,
        in_sample,
        warnings,
        diagnostics,
        validation,
    )
    _refuse_unreadable(content, spec, rows)
    _refuse_foreign(path, spec.key)
    if options.report_dir:
        _refuse_report(options.report_dir, path, spec.key)
    write_text_atomic(path, dump(content), CalibrationError, f"--out {shown_path(path)}")
    if options.report_dir:
        from graphsval_core.calibrate.plots import plot_fit

        try:
            plot_fit(Path(options.report_dir), spec.key, rows, predicted, fit)
        except OSError as exc:
            label = f"--report {shown_path(options.report_dir)}"
            raise CalibrationError(
                f"{label}: cannot write the plots: {exc.strerror or exc}"
            ) from None
    return CalibrateResult(
        spec=spec,
        rows=tuple(rows),
        refused=refused,
        suspect=found.suspect,
        fit=fit,
        energy=energy,
        loo=loo,
        predicted=predicted,
        in_band=in_band,
        content=content,
        path=path,
        override=override,
        override_unused=bool(options.allow_validation_rows) and not refused,
        report_dir=options.report_dir or None,
        grouped=grouped,
        in_sample=in_sample,
        warnings=warnings,
        diagnostics=diagnostics,
        loo_skipped=loo_skipped,
        held_out=held,
        validation=validation,
    )
