"""``graphsval calibrate``: fit a target's constants on calibration rows only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from graphsval_core.cli.context import InputError, pass_app


def _validation_shapes() -> set[tuple[str, tuple[int, ...], str]]:
    """(op, shape, dtype) of every entry of the project's validation sweeps."""
    from graphsval_core.sweep.labels import load_shipped

    out = set()
    for sweep in load_shipped(None).values():
        if sweep.purpose == "validation":
            out |= {(e.op or sweep.op, e.shape, e.dtype) for e in sweep.entries}
    return out


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
@click.option("--out", metavar="FILE", help="Calibration file (default: <hw>.calibration.json).")
@click.option("--report", "report_dir", metavar="DIR", help="Write plots of the fit here.")
@click.option(
    "--allow-validation-rows",
    "override",
    metavar="REASON",
    help="Use rows the project holds out for validation anyway; the reason is "
    "recorded loudly in the calibration file.",
)
@click.option("--no-loo", is_flag=True, help="Skip the leave-one-out cross-validation.")
@pass_app
def calibrate(
    app: Any,
    hw: str,
    baselines: tuple[str, ...],
    out: str | None,
    report_dir: str | None,
    override: str | None,
    no_loo: bool,
) -> None:
    """Fit launch overhead, compute and tier fractions, shared-tier capacity,
    first-touch cost and energy coefficients from calibration rows, and write
    a calibration file the target's plugin can ship.

    Refuses rows whose file says they are validation data (purpose column or
    file-name suffix) and rows whose (op, shape, dtype) is in one of the
    project's validation sweeps, unless --allow-validation-rows REASON.
    """
    from graphsval_core.calibrate.energy import fit_energy
    from graphsval_core.calibrate.evaluate import leave_one_out, model_regime
    from graphsval_core.calibrate.file import build_file, dump, sha256_of
    from graphsval_core.calibrate.fit import fit_latency
    from graphsval_core.calibrate.rows import predict_rows
    from graphsval_core.files.baseline import BaselineFileError, read_baseline
    from graphsval_core.files.calibration import CalibrationError, apply_constants
    from graphsval_core.files.tolerances import load_tolerances
    from graphsval_core.plugins.registry import UnknownNameError

    registry = app.registry
    try:
        spec = registry.datasheet_target(registry.target(hw).key)
    except UnknownNameError as exc:
        raise click.BadParameter(str(exc), param_hint="'--hw'") from None
    held_out = _validation_shapes()
    rows, used, refused = [], [], []
    for path in baselines:
        try:
            text = Path(path).read_text(encoding="utf-8")
            baseline = read_baseline(path, text)
        except (OSError, BaselineFileError) as exc:
            raise InputError(
                str(exc) if isinstance(exc, BaselineFileError) else f"{path}: cannot read: {exc}"
            ) from None
        mine = [r for r in baseline.rows if r.hardware == spec.key]
        for r in mine:
            try:
                op_spec = registry.op(r.op)
            except UnknownNameError as exc:
                raise InputError(f"{path}:{r.line}: {exc}") from None
            if len(r.dims) != len(op_spec.dims):
                raise InputError(
                    f"{path}:{r.line}: shape {r.shape} has {len(r.dims)} dims; "
                    f"{r.op} takes {len(op_spec.dims)} ({'x'.join(op_spec.dims)})"
                )
        for r in mine:
            if r.purpose == "validation":
                refused.append(f"{path}:{r.line}: a validation row ({baseline.purpose_source})")
            elif (r.op, r.dims, r.dtype) in held_out:
                refused.append(
                    f"{path}:{r.line}: {r.op} {r.shape} {r.dtype} is in a validation "
                    "sweep of the project"
                )
        take = [
            r
            for r in mine
            if r.latency_s and r.extras.get("verdict", "") != "FAIL" and r.dtype in spec.dtypes
        ]
        rows += take
        used.append((baseline, sha256_of(text)))
    if refused and not override:
        more = f" (and {len(refused) - 1} more)" if len(refused) > 1 else ""
        raise InputError(
            f"refusing validation data: {refused[0]}{more}; calibrate on "
            "calibration rows only, or pass --allow-validation-rows REASON"
        )
    if len(rows) < 3:
        raise InputError(
            f"{len(rows)} usable {spec.key} rows in the given baselines; "
            "calibration needs at least 3"
        )
    tolerances = load_tolerances()
    try:
        fit = fit_latency(registry, spec, rows)
        energy = fit_energy(registry, apply_constants(spec, fit.values, "fit"), rows)
        loo = None if no_loo else leave_one_out(registry, spec, rows, fit.params, tolerances)
    except CalibrationError as exc:
        raise InputError(str(exc)) from None
    calibrated = apply_constants(spec, {**fit.values, **energy.values}, "fit")
    predicted, _ = predict_rows(registry, calibrated, rows)
    inside = sum(
        abs(p - r.latency_s) / r.latency_s
        <= tolerances[model_regime(registry, calibrated, r)]["latency"]
        for p, r in zip(predicted, rows, strict=True)
    )
    data = build_file(spec, used, fit, energy, loo, override, inside / len(rows))
    path = Path(out or f"{spec.key}.calibration.json")
    path.write_text(dump(data))
    click.echo(
        f"wrote {path}: {len(fit.params)} latency constants from {len(rows)} rows"
        + (
            f", energy from {energy.rows} rows"
            if energy.fitted
            else f"; energy not fitted ({energy.skipped})"
        )
    )

    def num(value: Any) -> str:
        return "-" if value is None else f"{value:.6g}"

    for name, entry in data["constants"].items():
        unc = entry.get("relative_uncertainty")
        spread = "" if unc is None else f" +- {unc:.1%}"
        click.echo(
            f"  {name}: {num(entry['value'])} (was {num(entry['datasheet'])}){spread}"
            f"  [{entry['from']}]"
        )
    for name in data["fit"]["not_identifiable"]:
        click.echo(f"  {name}: not identifiable from these rows; the spec's value stays")
    f = data["fit"]
    click.echo(
        f"  in sample: median |error| {f['median_abs_error']:.1%}, "
        f"{f['within_band']:.0%} within the regime's band"
    )
    if loo is not None:
        click.echo(
            f"  leave-one-out: median |error| {loo.median_abs_error:.1%}, "
            f"{loo.within_band:.0%} within the band, p90 {loo.p90_abs_error:.1%}"
        )
    if override:
        click.echo(f"  WARNING: validation rows used ({len(refused)}): {override}")
    if report_dir:
        _plots(Path(report_dir), spec.key, rows, predicted, fit)
        click.echo(f"  plots in {report_dir}/")


def _plots(folder: Path, key: str, rows: Any, predicted: Any, fit: Any) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder.mkdir(parents=True, exist_ok=True)
    measured = [r.latency_s for r in rows]
    fig, ax = plt.subplots(figsize=(6, 5))
    for op in sorted({r.op for r in rows}):
        idx = [i for i, r in enumerate(rows) if r.op == op]
        ax.scatter([measured[i] for i in idx], [predicted[i] for i in idx], s=14, label=op)
    lo, hi = min(measured) / 2, max(measured) * 2
    ax.plot([lo, hi], [lo, hi], "k-", lw=0.8)
    ax.set(
        xscale="log",
        yscale="log",
        xlabel="measured (s)",
        ylabel="calibrated model (s)",
        title=f"calibration fit: {key}",
    )
    ax.legend(fontsize=7)
    fig.savefig(folder / f"{key}_fit.png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.bar(range(len(rows)), [100 * e for e in fit.residuals])
    ax.set(xlabel="calibration row", ylabel="error (%)", title=f"residuals: {key}")
    fig.savefig(folder / f"{key}_residuals.png", dpi=110, bbox_inches="tight")
    plt.close(fig)
