"""``graphsval validate``: the main job. Predictions against baselines, per shape
and per regime, with drift attribution, reports and floors."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import click

from graphsval_core.cli.context import InputError, pass_app


def _sha256(item: Any) -> str:
    data = item.read_bytes() if hasattr(item, "read_bytes") else Path(item).read_bytes()
    return hashlib.sha256(data).hexdigest()


def _selections(
    registry: Any,
    explicit: tuple[str, ...],
    hws: set[str] | None,
    ops: set[str] | None,
    purpose: str,
    hw_override: str | None,
) -> tuple[list[Any], list[tuple[Any, Any]], dict[str, str]]:
    """Which rows count, per file; the (main, recapture) pairs; file hashes."""
    from graphsval_core.files.baseline import read_baseline
    from graphsval_core.validate.harness import RECAPTURE_DIR, Selection, recapture_of

    items = list(explicit) if explicit else [item for _, item in registry.baseline_files()]
    parsed = {}
    hashes = {}
    for item in items:
        text = None if isinstance(item, str | Path) else item.read_text(encoding="utf-8")
        baseline = read_baseline(str(item), text)
        if hw_override:
            from attrs import evolve

            baseline = evolve(
                baseline, rows=tuple(evolve(r, hardware=hw_override) for r in baseline.rows)
            )
        parsed[str(item)] = baseline
        hashes[str(item)] = _sha256(item)
    recaptures = (
        {p for p in parsed if Path(p).parent.name == RECAPTURE_DIR} if not explicit else set()
    )
    pairs = []
    for path in parsed:
        twin = recapture_of(path, list(recaptures))
        if twin:
            pairs.append((parsed[path], parsed[twin]))
    # which targets have rows of the requested purpose at all (installed baselines)
    has_purpose: set[tuple[str, str]] = set()
    for path, b in parsed.items():
        if path in recaptures:
            continue
        for r in b.select(purpose):
            has_purpose.add((r.hardware, r.op))
    selections = []
    for path, b in parsed.items():
        if path in recaptures:
            continue

        def wanted(r: Any) -> bool:
            return (hws is None or r.hardware in hws) and (ops is None or r.op in ops)

        if b.purpose_source == "none":
            rows = [r for r in b.rows if wanted(r)]
            warning = f"{path}: no purpose column or suffix: every row counts"
            selections.append(Selection(b, rows, False, warning if rows else ""))
            continue
        rows = [r for r in b.select(purpose) if wanted(r)]
        in_sample = False
        if not rows and purpose == "validation" and not explicit:
            other = [
                r
                for r in b.select("calibration")
                if wanted(r) and (r.hardware, r.op) not in has_purpose
            ]
            if other:
                rows, in_sample = other, True
        if rows:
            selections.append(Selection(b, rows, in_sample))
    return selections, pairs, hashes


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
@click.option("--tolerances", "tolerances_file", metavar="FILE", help="Per-regime tolerances.")
@click.option("--check-floors", is_flag=True, help="Exit by the pass-count floors.")
@click.option("--update-floors", is_flag=True, help="Raise the floors to the current counts.")
@click.option("--reason", metavar="TEXT", help="Why a floor is lowered (with --update-floors).")
@pass_app
def validate(
    app: Any,
    hws: tuple[str, ...],
    ops: tuple[str, ...],
    purpose: str,
    baselines: tuple[str, ...],
    predictor: str,
    out_dir: str | None,
    fmt: str,
    tolerances_file: str | None,
    check_floors: bool,
    update_floors: bool,
    reason: str | None,
) -> None:
    """Compare predictions with baselines shape by shape; for every failing cell,
    say which hardware assumption drifted.

    With no arguments: every installed target with shipped baselines, every op,
    purpose validation (targets that ship only calibration rows are validated
    on them and marked in-sample only). Exit 0 when every record passes (with
    --check-floors: when every floor holds), 1 otherwise, 2 on bad input.
    """
    from graphsval_core import __version__
    from graphsval_core.consistency.runner import for_validate
    from graphsval_core.files.baseline import BaselineFileError
    from graphsval_core.files.floors import FloorsError, read_floors, write_floors
    from graphsval_core.files.floors import check_floors as run_checks
    from graphsval_core.files.floors import update_floors as raise_floors
    from graphsval_core.files.tolerances import TolerancesError, load_tolerances
    from graphsval_core.plugins.registry import UnknownNameError
    from graphsval_core.validate.harness import recapture_agreement
    from graphsval_core.validate.harness import validate as run
    from graphsval_core.validate.report import build_summary, render, report_json

    registry = app.registry
    if (check_floors or update_floors) and (
        baselines or purpose != "validation" or tolerances_file or predictor != "reference"
    ):
        raise click.UsageError(
            "floors hold for the shipped baselines' validation rows under the reference "
            "predictor and the shipped tolerances: drop --baseline, --purpose, --tolerances "
            "and --predictor to check or update them (--hw and --op may narrow the run)"
        )
    try:
        tolerances = load_tolerances(tolerances_file)
        model = registry.predictor(predictor)
        wanted_hws = {registry.resolve(h).key for h in hws} if hws else None
        for op in ops:
            registry.op(op)
    except (TolerancesError, UnknownNameError) as exc:
        raise InputError(str(exc)) from None
    hw_override = None
    if baselines and len(hws) == 1:
        hw_override = next(iter(wanted_hws or []))
    try:
        selections, pairs, hashes = _selections(
            registry, baselines, wanted_hws, set(ops) if ops else None, purpose, hw_override
        )
    except BaselineFileError as exc:
        raise InputError(str(exc)) from None
    explicit = bool(hws or ops or baselines)
    if not selections:
        if explicit:
            raise InputError(
                "the selection (--hw/--op/--baseline/--purpose) matches no baseline rows"
            )
        click.echo(
            "note: the installed plugins ship no baselines; nothing to validate "
            "(see `graphsval plugins`); running the consistency checks only"
        )
        from graphsval_core.consistency.report import report_lines
        from graphsval_core.consistency.runner import run_consistency

        results = run_consistency(registry)
        click.echo("\n".join(report_lines(results)))
        if any(r.failed for r in results):
            raise SystemExit(1)
        return
    try:
        validation = run(registry, selections, model, tolerances)
    except UnknownNameError as exc:
        raise InputError(str(exc)) from None
    validation.recapture = recapture_agreement(validation, pairs)
    header = {
        "graphsval_version": __version__,
        "plugins": [
            {"name": i.name, "distribution": i.distribution, "version": i.version}
            for i in registry.plugins
            if i.loaded and not i.builtin
        ],
        "baselines": [
            {
                "path": s.baseline.path,
                "sha256": hashes[s.baseline.path],
                "rows": len(s.rows),
                "selection": "in-sample only (calibration rows)"
                if s.in_sample
                else s.baseline.purpose_source,
            }
            for s in selections
        ],
        "tolerances": tolerances,
    }
    consistency, inconsistent, consistency_failed = for_validate(registry, wanted_hws)
    for line in inconsistent:
        click.echo(line, err=True)
    summary = build_summary(validation, header, consistency)
    if fmt == "json":
        click.echo(report_json(summary, validation), nl=False)
    else:
        click.echo(render(summary, validation, markdown=fmt == "markdown"), nl=False)
    if out_dir:
        _write_reports(Path(out_dir), summary, validation, registry)

    counts = {f"{t['hardware']}/{t['op']}": (t["passed"], t["checked"]) for t in summary["targets"]}
    floors_by_plugin = registry.floors_files()
    owner = {key: registry.target_plugin(key.split("/")[0]).name for key in counts}
    failed_floor = False
    if check_floors or update_floors:
        try:
            for plugin, path in sorted(floors_by_plugin.items()):
                keys = [k for k in counts if owner[k] == plugin]
                if not keys:
                    continue
                floors = read_floors(path)
                if update_floors:
                    floors, changes = raise_floors(counts, floors, keys, reason)
                    write_floors(Path(path), floors)
                    for line in changes:
                        click.echo(f"floors ({path}): {line}")
                for check in run_checks({k: counts[k] for k in keys}, floors):
                    click.echo(f"floor {check.text()}")
                    failed_floor |= not check.ok
        except FloorsError as exc:
            raise InputError(str(exc)) from None
        for key in counts:
            if owner[key] not in floors_by_plugin:
                click.echo(f"floor {key}: its plugin ships no floors file")
    if check_floors:
        if failed_floor or consistency_failed:
            raise SystemExit(1)
        return
    if summary["failed"] or consistency_failed:
        raise SystemExit(1)


def _write_reports(folder: Path, summary: dict[str, Any], validation: Any, registry: Any) -> None:
    from graphsval_core.validate.html import render_html
    from graphsval_core.validate.report import records_csv, render, report_json

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "report.json").write_text(report_json(summary, validation))
    (folder / "report.md").write_text(render(summary, validation, markdown=True, per_shape="all"))
    (folder / "records.csv").write_text(records_csv(validation))
    (folder / "report.html").write_text(render_html(summary, validation, registry))
    click.echo(
        f"reports written to {folder}/ (report.json, report.md, records.csv, report.html)", err=True
    )
