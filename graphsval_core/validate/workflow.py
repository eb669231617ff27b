"""``graphsval validate`` as a function: options in, a typed result out.

:func:`validate` selects the baseline rows (:mod:`graphsval_core.validate.selection`),
predicts and judges every row (:mod:`graphsval_core.validate.harness`), pairs
recaptures, summarises (:mod:`graphsval_core.validate.summary`), runs the
consistency checks of the targets concerned, and checks or raises the
pass-count floors. It prints nothing: the command renders the result.

A file named is read and judged a block of rows at a time; with
``ValidateOptions.records`` False (what the terminal summary and ``-q``
need) no record is kept, only their figures, so a baseline of millions of
rows validates in bounded memory. Whether the files named held the
``--hw`` targets, or any selected row, is known once they are read.
"""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

from attrs import evolve, field, frozen

from graphsval_core import __version__
from graphsval_core.consistency.runner import (
    TargetResult,
    failure_lines,
    heatmap_counts,
    run_consistency,
)
from graphsval_core.datamodel.errors import UserInputError, shown_path, warn_input
from graphsval_core.files.floors import (
    FloorCheck,
    FloorsError,
    check_floors,
    read_floors,
    update_floors,
    write_floors,
)
from graphsval_core.files.outputs import check_output_in_folder
from graphsval_core.files.tolerances import load_tolerances
from graphsval_core.plugins.registry import Registry
from graphsval_core.plugins.resources import in_installed_package
from graphsval_core.validate.harness import (
    AGREEMENT_BAND,
    Recapture,
    Validation,
    recapture_agreement,
    validate as judge,
)
from graphsval_core.validate.selection import (
    Baselines,
    check_selected,
    select,
    targets_with_baselines,
    why_none,
)
from graphsval_core.validate.summary import (
    BaselineInfo,
    Header,
    PluginVersion,
    Summary,
    build_summary,
)

PURPOSES = ("validation", "calibration")

FLOORS_SCOPE = (
    "floors hold for the shipped baselines' validation rows under the reference "
    "predictor and the shipped tolerances: drop --baseline, --purpose, --tolerances "
    "and --predictor to check or update them (--hw and --op may narrow the run)"
)


#: How many records of each list apart (excluded, near a boundary, unplaced,
#: suspect) a run that keeps no record (``ValidateOptions.records`` False) holds;
#: the summary counts them all.
LISTED_KEPT = 20

NOTHING_SELECTED = "the selection (--hw/--op/--baseline/--purpose) matches no baseline rows"


def _unmeasured(registry: Registry, wanted: set[str] | None) -> str:
    """What to say of selected targets that have no baselines by their
    nature (consistency-only ones: no silicon to capture): where their
    checks run. Empty where there is none."""
    if not wanted:
        return ""
    keys = sorted(k for k in wanted if registry.target(k).ground_truth == "consistency_only")
    if not keys:
        return ""
    listed = ", ".join(keys)
    return (
        f"; {listed} {'is a' if len(keys) == 1 else 'are'} consistency-only "
        f"target{'' if len(keys) == 1 else 's'} (no silicon, no baselines): "
        f"`graphsval check {' '.join(f'--hw {k}' for k in keys)}` runs "
        f"{'its' if len(keys) == 1 else 'their'} checks"
    )


def _uncaptured(registry: Registry, wanted: set[str] | None, named: bool) -> str:
    """What to say of selected measured targets that no installed or
    workspace baseline has a row of: how one is made, and which targets have
    baselines. Empty where files were named or every target has some."""
    if not wanted or named:
        return ""
    measured = {k for k in wanted if registry.target(k).ground_truth != "consistency_only"}
    if not measured:
        return ""
    have = targets_with_baselines(registry)
    keys = sorted(measured - have)
    if not keys:
        return ""
    one = len(keys) == 1
    others = ", ".join(sorted(have)) or "none"
    return (
        f"; {', '.join(keys)} {'has' if one else 'have'} no baselines installed or in the "
        f"workspace (targets with baselines: {others}): "
        f"{_capture_hint(keys[0] if one else 'KEY')} makes {'one' if one else 'them'}"
    )


def _capture_hint(key: str) -> str:
    """How a baseline of target ``key`` is made."""
    return (
        f"`graphsval capture --hw {key} --op OP --purpose calibration` (or validation), "
        "run on the hardware,"
    )


def _unjudged(
    registry: Registry,
    wanted: set[str] | None,
    judged: Validation,
    baselines: Baselines,
    named: bool,
) -> list[str]:
    """A warning for each measured target ``--hw`` asked for of which no row
    was judged while others' were (a target that is not there must not pass
    for one that passed); consistency-only ones have their own line.
    ``named``: the run reads files named (whose selections say what they hold)."""
    if not wanted:
        return []
    counts = judged.tally.targets
    seen = {hw for hw, _ in counts}
    missing = sorted(
        k for k in wanted - seen if registry.target(k).ground_truth != "consistency_only"
    )
    # rows there, none of them judged (every one suspect or excluded: listed apart)
    unchecked = sorted(
        k for k in wanted & seen if not any(t.checked for (hw, _), t in counts.items() if hw == k)
    )
    notes = [
        f"--hw {key}: not validated: every row of it is suspect or excluded (listed apart)"
        for key in unchecked
    ]
    if not missing:
        return notes
    if named:
        have = set().union(*(s.held for s in baselines.selections))
    else:
        have = targets_with_baselines(registry)
    out = []
    for key in missing:
        if key in have:
            why = "none of its baseline rows matches --op/--purpose"
        elif named:
            why = "no row of the baseline(s) named is of it"
        else:
            why = (
                "it has no baselines installed or in the workspace "
                f"({_capture_hint(key)} makes one)"
            )
        out.append(f"--hw {key}: not validated: {why}")
    return out + notes


@frozen(kw_only=True)
class ValidateOptions:
    """What to validate, against what, and what to do with the floors."""

    hws: tuple[str, ...] = field(default=(), converter=tuple)
    ops: tuple[str, ...] = field(default=(), converter=tuple)
    purpose: str = "validation"
    baselines: tuple[str, ...] = field(default=(), converter=tuple)
    predictor: str = "reference"
    tolerances_file: str | None = None
    check_floors: bool = False
    update_floors: bool = False
    #: why a floor is lowered (with ``update_floors``)
    reason: str | None = None
    #: one floors file for every target/op instead of each plugin's own
    floors_file: str | None = None
    #: each record's explanation (False: left out, for a summary that shows none)
    explanations: bool = True
    #: keep every record (the reports listing them all need them: ``--out``,
    #: JSON, Markdown, ``-v``); False keeps the figures the terminal summary
    #: shows (counts, cells, the worst failures, the first :data:`LISTED_KEPT`
    #: of each list apart), in memory of a few numbers a record
    records: bool = True

    def __attrs_post_init__(self) -> None:
        if self.purpose not in PURPOSES:
            raise UserInputError(f"purpose {self.purpose!r} is not one of {', '.join(PURPOSES)}")
        if (self.check_floors or self.update_floors) and (
            self.baselines
            or self.purpose != "validation"
            or self.tolerances_file
            or self.predictor != "reference"
        ):
            raise UserInputError(FLOORS_SCOPE)

    @property
    def explicit(self) -> bool:
        """Whether the user narrowed the selection (an empty one is then an error)."""
        return bool(self.hws or self.ops or self.baselines)


@frozen
class PluginFloors:
    """The floors of one plugin's target/op pairs: what ``--update-floors``
    changed in its file, and each pair's check."""

    plugin: str
    path: str
    changes: tuple[str, ...]
    checks: tuple[FloorCheck, ...]


@frozen
class FloorsVerdict:
    """Every plugin's floors, the pairs whose plugin ships no floors file, and
    the error that stopped the floors (a malformed file, a floor lowered without
    a reason), reported after the report."""

    plugins: tuple[PluginFloors, ...]
    unfloored: tuple[str, ...]
    error: str | None = None
    #: ``<target>/<op> recapture: floor ...: BELOW its floor`` for each capture
    #: whose agreement with its recapture is below the floor its floors give it
    recaptures: tuple[str, ...] = ()
    #: the floors were written at this run's counts (``--update-floors``)
    updated: bool = False

    @property
    def failed(self) -> bool:
        """A floor is not met (a count of passing records, or a capture's
        agreement with its recapture)."""
        return bool(self.recaptures) or any(not c.ok for p in self.plugins for c in p.checks)


@frozen
class ValidateResult:
    """What a validation found: the rows it counted, the records and their
    summary, the consistency checks, and the floors (when asked for)."""

    options: ValidateOptions
    baselines: Baselines
    validation: Validation | None
    summary: Summary | None
    consistency: tuple[TargetResult, ...]
    floors: FloorsVerdict | None = None

    @property
    def consistency_failed(self) -> bool:
        return any(r.failed for r in self.consistency)

    @property
    def consistency_lines(self) -> list[str]:
        """One line per failed check or unexpected pass."""
        return failure_lines(self.consistency)

    @property
    def no_prediction(self) -> str | None:
        """Why nothing was judged, when no record was checked because the
        selected predictor failed on every row it was asked for (its problem
        is named at the end); None otherwise. A validation of a predictor
        that produced nothing has failed (exit 1), never passed with 0/0."""
        summary = self.summary
        if summary is None or summary.checked:
            return None
        if not summary.counts.get("no_prediction"):
            return None
        return f"predictor {self.options.predictor!r} produced no prediction, so nothing was judged"

    @property
    def failed(self) -> bool:
        """The run fails: a record fails (with ``check_floors``: a floor is not
        met), a consistency check fails, or the predictor produced nothing
        (:attr:`no_prediction`)."""
        if self.consistency_failed:
            return True
        if self.summary is None:
            return False
        if self.no_prediction:
            return True
        if self.options.check_floors:
            return self.floors is not None and self.floors.failed
        return self.summary.failed > 0


def validate(registry: Registry, options: ValidateOptions) -> ValidateResult:
    """Validate the selected baselines against the predictor (see module doc).

    Bad input (an unknown name, an unreadable or malformed file, a selection
    that matches no row) raises :class:`~graphsval_core.datamodel.errors.UserInputError`.
    """
    enabled = gc.isenabled()
    # a record holds no cycle: the collector would only rescan every row and
    # record built so far (a large baseline's seconds)
    gc.disable()
    try:
        return _validate(registry, options)
    finally:
        if enabled:
            gc.enable()


def _validate(registry: Registry, options: ValidateOptions) -> ValidateResult:
    tolerances = load_tolerances(options.tolerances_file)
    model = registry.predictor(options.predictor)
    wanted = {registry.resolve(h).key for h in options.hws} if options.hws else None
    for op in options.ops:
        registry.op(op)
    baselines = select(
        registry,
        options.baselines,
        wanted,
        set(options.ops) if options.ops else None,
        options.purpose,
    )
    if not baselines.selections:
        if options.explicit:
            raise UserInputError(
                NOTHING_SELECTED
                + _unmeasured(registry, wanted)
                + _uncaptured(registry, wanted, bool(options.baselines))
            )
        # nothing ships baselines: the consistency checks are all there is to run
        return ValidateResult(options, baselines, None, None, tuple(run_consistency(registry)))
    judged = judge(
        registry,
        baselines.selections,
        model,
        tolerances,
        options.explanations,
        keep=options.records,
        listed=None if options.records else LISTED_KEPT,
        recapture_files=[main.path for main, _ in baselines.pairs],
    )
    check_selected(baselines, bool(options.baselines), wanted)
    if not any(s.counts for s in baselines.selections):  # files named, of which no row matched
        why = why_none(baselines.selections, options.purpose)
        raise UserInputError(f"nothing was validated: {why}" if why else NOTHING_SELECTED)
    agreement = recapture_agreement(judged, baselines.pairs)
    validation = evolve(
        judged,
        # the floors are the shipped baselines' (files named are never held to them)
        recapture=(
            agreement
            if options.baselines
            else _with_floors(registry, agreement, options.floors_file)
        ),
        warnings=[
            *judged.warnings,
            *_unjudged(registry, wanted, judged, baselines, bool(options.baselines)),
        ],
    )
    consistency = tuple(
        run_consistency(registry, [registry.target(k) for k in wanted] if wanted else None)
    )
    summary = build_summary(
        validation, _header(registry, baselines, tolerances), heatmap_counts(consistency)
    )
    floors = None
    if options.check_floors or options.update_floors:
        floors = _floors(registry, summary, options)
        below = tuple(
            f"{hw}/{op} recapture: {rec.floor_text().removeprefix('floor ')} (median "
            f"{rec.median_diff:.1%}, {rec.within_band:.0%} within {AGREEMENT_BAND:.0%})"
            for (hw, op), rec in sorted(validation.recapture.items())
            if rec.below_floor
        )
        floors = evolve(floors, recaptures=below)
    return ValidateResult(options, baselines, validation, summary, consistency, floors)


def _with_floors(
    registry: Registry,
    agreement: dict[tuple[str, str], Recapture],
    floors_file: str | None = None,
) -> dict[tuple[str, str], Recapture]:
    """Each recapture agreement with the floors its target's plugin ships for
    it, or those of ``floors_file`` (``--floors FILE``) where one is named (a
    floors file that cannot be read adds none: ``--check-floors`` says
    why)."""
    owner = {hw: registry.target_plugin(hw).name for hw, _ in agreement}
    files = registry.floors_files() if agreement else {}
    if floors_file is not None and agreement:  # the file named holds every pair's floors
        owner = dict.fromkeys(owner, "")
        # a regular file only (a FIFO would wait here): the floors' own check names the rest
        files = {"": Path(floors_file)} if Path(floors_file).is_file() else {}
    floors: dict[str, dict[str, Any]] = {}  # plugin -> its floors: each file read once
    for plugin in set(owner.values()) & set(files):
        try:
            floors[plugin] = read_floors(files[plugin])
        except Exception:
            floors[plugin] = {}
    out = {}
    for (hw, op), rec in agreement.items():
        entry = floors.get(owner[hw], {}).get(f"{hw}/{op}", {})
        out[(hw, op)] = evolve(
            rec,
            floor_median=entry.get("recapture_median_max"),
            floor_within=entry.get("recapture_within_min"),
        )
    return out


def _header(
    registry: Registry, baselines: Baselines, tolerances: dict[str, dict[str, float]]
) -> Header:
    return Header(
        graphsval_version=__version__,
        plugins=[
            PluginVersion(i.name, i.distribution, i.version)
            for i in registry.plugins
            if i.loaded and not i.builtin
        ],
        baselines=[
            BaselineInfo(
                path=s.path,
                sha256=s.sha256,
                rows=s.rows,
                selection="in-sample only (calibration rows)" if s.in_sample else s.purpose_source,
            )
            for s in baselines.selections
            if s.counts
        ],
        tolerances=tolerances,
    )


def _floors(registry: Registry, summary: Summary, options: ValidateOptions) -> FloorsVerdict:
    """Check (and with ``update_floors`` raise) each plugin's floors, or those
    of the file the options name. A plugin's file is only written in a source
    tree, never inside an installed package."""
    counts = {f"{t.hardware}/{t.op}": (t.passed, t.checked) for t in summary.targets}
    if options.floors_file:
        named = Path(options.floors_file)
        if options.update_floors:  # refused before it is read or written
            try:
                check_output_in_folder(named, FloorsError, f"--floors {shown_path(named)}")
            except FloorsError as exc:
                return FloorsVerdict((), (), str(exc))
        if not options.update_floors and not named.exists():
            return FloorsVerdict(
                (), (), f"{named}: no such floors file (--update-floors writes one)"
            )
        files: dict[str, Any] = {"": named}
        owner = dict.fromkeys(counts, "")
    else:
        files = registry.floors_files()
        owner = {key: registry.target_plugin(key.split("/")[0]).name for key in counts}
    done: list[PluginFloors] = []
    error = None
    try:
        for plugin, path in sorted(files.items()):
            keys = [k for k in counts if owner[k] == plugin]
            if not keys:
                continue
            if options.update_floors and plugin and in_installed_package(path):
                raise FloorsError(
                    f"{path} lies in an installed package; graphsval writes there only from a "
                    "source tree (pip install -e): name a file to write with --floors FILE"
                )
            floors = read_floors(path)
            if not plugin:  # the file the user named: its keys are checked
                _check_named_floors(registry, path, floors, keys, options.update_floors)
            changes: list[str] = []
            if options.update_floors:
                try:
                    floors, changes = update_floors(counts, floors, keys, options.reason)
                except FloorsError as exc:  # which file's floor it is
                    raise FloorsError(f"{path}: {exc}") from None
                if changes:  # "floors unchanged" leaves the file as it is, its layout too
                    write_floors(Path(path), floors)
            checks = check_floors({k: counts[k] for k in keys}, floors)
            done.append(PluginFloors(plugin, str(path), tuple(changes), tuple(checks)))
    except FloorsError as exc:
        error = str(exc)
    lowered = any("(lowered: " in change for floors_of in done for change in floors_of.changes)
    if options.update_floors and options.reason and not error and not lowered:
        warn_input(
            f"--reason {options.reason[:60]!r}: no floor was lowered (every count is at or "
            "above its floor), so the reason is recorded nowhere"
        )
    unfloored = tuple(key for key in counts if owner[key] not in files)
    return FloorsVerdict(tuple(done), unfloored, error, updated=options.update_floors)


def _check_named_floors(
    registry: Registry,
    path: Any,
    floors: dict[str, dict[str, Any]],
    keys: list[str],
    updating: bool,
) -> None:
    """A floors file the user named names installed targets and ops, and
    (when only checked) floors at least one of the validated pairs: a file
    that floors none of them would say "floors hold" having checked nothing."""
    for key in floors:
        hw, _, op = key.partition("/")
        what = "target" if hw not in registry.targets() else "op"
        if hw not in registry.targets() or op not in registry.ops():
            raise FloorsError(
                f"{path}: floors.{key}: unknown {what} {hw if what == 'target' else op!r}"
            )
    if not updating and not set(floors) & set(keys):
        held = ", ".join(sorted(floors)[:5]) or "no floors"
        raise FloorsError(
            f"{path}: floors none of the validated target/op pairs ({', '.join(sorted(keys))}); "
            f"it holds {held}"
        )


#: The files :func:`reports` gives, by name.
REPORT_FILES = ("report.json", "report.md", "records.csv", "report.html")


def reports(result: ValidateResult, registry: Registry) -> dict[str, str]:
    """The report files of a validation, ``name -> text``: report.json,
    report.md, records.csv and report.html (:data:`REPORT_FILES`)."""
    from graphsval_core.validate.html import render_html
    from graphsval_core.validate.report import records_csv, render, report_json

    summary, validation = result.summary, result.validation
    if summary is None or validation is None:
        return {}
    if not validation.kept:
        raise ValueError("the reports list every record: validate with ValidateOptions.records")
    return {
        "report.json": report_json(summary, validation),
        "report.md": render(summary, validation, markdown=True, per_shape="all"),
        "records.csv": records_csv(validation),
        "report.html": render_html(summary, validation, registry),
    }
