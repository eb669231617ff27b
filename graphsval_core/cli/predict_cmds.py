"""``graphsval explain`` and ``graphsval predict``: the model's answer for one
shape with its explanation, or for many shapes as a table, CSV or JSON."""

from __future__ import annotations

import csv
import io
import sys
from typing import Any

import click

from graphsval_core.cli.context import AppContext, InputError, pass_app
from graphsval_core.cli.output import echo_json
from graphsval_core.datamodel.tables import format_table


def _resolve(app: AppContext, hw: str, op: str) -> tuple[Any, Any]:
    from graphsval_core.plugins.registry import UnknownNameError

    registry = app.registry
    try:
        target = registry.target(hw)
    except UnknownNameError as exc:
        raise click.BadParameter(str(exc), param_hint="'--hw'") from None
    try:
        op_spec = registry.op(op)
    except UnknownNameError as exc:
        raise click.BadParameter(str(exc), param_hint="'--op'") from None
    return target, op_spec


def _check_dtype(target: Any, dtype: str) -> None:
    if dtype not in target.dtypes:
        raise click.BadParameter(
            f"target {target.key} does not support dtype {dtype!r} "
            f"(it supports {', '.join(target.dtypes)})",
            param_hint="'--dtype'",
        )


def _predictor(app: AppContext, name: str) -> Any:
    """The predictor ``name``; an unknown one is a bad ``--predictor``."""
    from graphsval_core.plugins.registry import UnknownNameError

    try:
        return app.registry.predictor(name)
    except UnknownNameError as exc:
        raise click.BadParameter(str(exc), param_hint="'--predictor'") from None


@click.command()
@click.option("--hw", required=True, metavar="KEY", help="Target key (see `graphsval targets`).")
@click.option("--op", required=True, metavar="OP", help="Op: matmul, linear, vector_add, ...")
@click.option("--shape", required=True, metavar="S", help="Shape string, e.g. 1024x1024x1024.")
@click.option("--dtype", required=True, metavar="D", help="Data type, e.g. fp32.")
@click.option("--predictor", default="reference", show_default=True, help="Predictor name.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
def explain(
    app: AppContext, hw: str, op: str, shape: str, dtype: str, predictor: str, as_json: bool
) -> None:
    """Predict one shape and explain the prediction: the tile and the tier it
    lives in, the tier it streams from, memory and compute time, the verdict."""
    from graphsval_core.datamodel.op import ShapeError
    from graphsval_core.model.predict import predict_shapes

    target, op_spec = _resolve(app, hw, op)
    _check_dtype(target, dtype)
    _predictor(app, predictor)
    try:
        dims = op_spec.parse_shape(shape)
    except ShapeError as exc:
        raise click.BadParameter(str(exc), param_hint="'--shape'") from None
    row = predict_shapes(app.registry, target, op_spec, [dims], dtype, predictor).row(0)
    if as_json:
        echo_json(row)
        return
    click.echo(row["explanation"])
    terms = row["terms"]
    if not terms:
        click.echo(
            f"terms: none: predictor {predictor!r} reports no breakdown (compute, memory or "
            "per-tier times), only its totals"
        )
        return
    lines = [f"  {name}: {value:.6g}" for name, value in terms.items()]
    click.echo("terms:\n" + "\n".join(lines))


def _read_shapes_file(path: str, op_spec: Any) -> list[tuple[int, ...]]:
    from graphsval_core.files.shapes import read_shapes_file

    return read_shapes_file(path, op_spec)


CSV_COLUMNS = (
    "hardware",
    "op",
    "shape",
    "dtype",
    "latency_s",
    "energy_j",
    "regime",
    "binding_tier",
    "launch_s",
    "exposed_compute_s",
    "exposed_memory_s",
    "first_touch_s",
    "pack_s",
    "hidden_s",
    "compute_s",
    "memory_s",
)


@click.command()
@click.option("--hw", required=True, metavar="KEY", help="Target key.")
@click.option("--op", metavar="OP", help="Op name (with --sweep: the sweep's, or a filter).")
@click.option("--dtype", metavar="D", help="Data type (default: the sweep's, else required).")
@click.option("--shape", "shape", metavar="S", help="One shape string.")
@click.option("--shapes", "shapes_file", metavar="FILE", help="Text file: one shape per line.")
@click.option("--sweep", "sweep_file", metavar="FILE", help="Sweep JSON file (V4 schema).")
@click.option("--predictor", default="reference", show_default=True, help="Predictor name.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "csv", "json"]),
    default="table",
    show_default=True,
    help="Output format.",
)
@click.option(
    "--rollup",
    is_flag=True,
    help="With a sweep whose entries carry counts (sweep from-config): sum count x "
    "prediction per forward pass.",
)
@pass_app
def predict(
    app: AppContext,
    hw: str,
    op: str | None,
    dtype: str | None,
    shape: str | None,
    shapes_file: str | None,
    sweep_file: str | None,
    predictor: str,
    fmt: str,
    rollup: bool,
) -> None:
    """Predict latency, energy and regime for one shape, a file of shapes, or a sweep."""
    from graphsval_core.datamodel.op import ShapeError
    from graphsval_core.files.sweep import MIXED, SweepFileError, load_sweep
    from graphsval_core.model.predict import predict_shapes
    from graphsval_core.plugins.registry import UnknownNameError

    sources = [s for s in (shape, shapes_file, sweep_file) if s is not None]
    if len(sources) != 1:
        raise click.UsageError("give exactly one of --shape, --shapes FILE, --sweep FILE")
    if rollup and sweep_file is None:
        raise click.UsageError("--rollup needs --sweep FILE")
    _predictor(app, predictor)
    # (op, dims, dtype, extra) per requested shape, in input order
    items: list[tuple[str, tuple[int, ...], str, dict[str, Any]]] = []
    if sweep_file is not None:
        try:
            sweep = load_sweep(sweep_file)
        except SweepFileError as exc:
            raise InputError(str(exc)) from None
        if op is not None and sweep.op not in (MIXED, op):
            raise InputError(f"{sweep_file}: sweep is for op {sweep.op!r}, not {op!r}")
        for e in sweep.entries:
            if (op is None or e.op == op) and (dtype is None or e.dtype == dtype):
                items.append((e.op, e.shape, e.dtype, e.extra))
        if not items:
            raise InputError(f"{sweep_file}: no entry matches --op/--dtype")
    else:
        if op is None:
            raise click.UsageError("--op is required with --shape or --shapes")
        if dtype is None:
            raise click.UsageError("--dtype is required with --shape or --shapes")
        _, op_spec = _resolve(app, hw, op)
        if shape is not None:
            try:
                dims_list = [op_spec.parse_shape(shape)]
            except ShapeError as exc:
                raise click.BadParameter(str(exc), param_hint="'--shape'") from None
        else:
            dims_list = _read_shapes_file(shapes_file or "", op_spec)
        items = [(op, d, dtype, {}) for d in dims_list]

    try:
        target = app.registry.target(hw)
    except UnknownNameError as exc:
        raise click.BadParameter(str(exc), param_hint="'--hw'") from None
    rows: list[dict[str, Any] | None] = [None] * len(items)
    for op_name, dt in dict.fromkeys((o, d) for o, _, d, _ in items):
        try:
            op_spec = app.registry.op(op_name)
        except UnknownNameError as exc:
            if sweep_file is None:
                raise click.BadParameter(str(exc), param_hint="'--op'") from None
            raise InputError(f"{sweep_file}: an entry's op: {exc}") from None
        if sweep_file is not None and dtype is None and dt not in target.dtypes:
            raise InputError(
                f"{sweep_file}: entries of dtype {dt!r}, which target {target.key} does not "
                f"support (it supports {', '.join(target.dtypes)}); choose one with --dtype"
            )
        _check_dtype(target, dt)
        index = [i for i, (o, _, d, _) in enumerate(items) if o == op_name and d == dt]
        dims = [items[i][1] for i in index]
        if any(len(d) != len(op_spec.dims) for d in dims):
            raise InputError(f"{sweep_file}: a {op_name} shape needs {len(op_spec.dims)} dims")
        pred = predict_shapes(app.registry, target, op_spec, dims, dt, predictor)
        for i, row in zip(index, _flat_rows(pred), strict=True):
            rows[i] = row
    if rollup:
        _emit_rollup(items, rows, sweep_file or "", fmt)  # type: ignore[arg-type]
        return
    _emit(rows, fmt)  # type: ignore[arg-type]


def _emit_rollup(
    items: list[tuple[str, tuple[int, ...], str, dict[str, Any]]],
    rows: list[dict[str, Any]],
    sweep_file: str,
    fmt: str,
) -> None:
    """Sum count x prediction per phase (forward pass) over the sweep's call sites."""
    from graphsval_core.datamodel.units import fmt_joules, fmt_seconds

    totals: dict[str, dict[str, float]] = {}
    for (_, _, _, extra), row in zip(items, rows, strict=True):
        sites = extra.get("used_in")
        if not sites:
            if "count" not in extra:
                raise InputError(f"{sweep_file}: entry {row['shape']} has no count to roll up")
            sites = [{"phase": "pass", "count": extra["count"]}]
        for site in sites:
            slot = totals.setdefault(
                str(site.get("phase", "pass")), {"latency_s": 0.0, "energy_j": 0.0, "calls": 0}
            )
            slot["latency_s"] += site["count"] * row["latency_s"]
            slot["energy_j"] += site["count"] * row["energy_j"]
            slot["calls"] += site["count"]
    if fmt == "json":
        echo_json([{"phase": k, **v} for k, v in totals.items()])
        return
    table = [
        [k, int(v["calls"]), fmt_seconds(v["latency_s"]), fmt_joules(v["energy_j"])]
        for k, v in totals.items()
    ]
    click.echo(format_table(["PASS", "CALLS", "LATENCY", "ENERGY"], table))


def _flat_rows(pred: Any) -> list[dict[str, Any]]:
    """One row per shape of a batch, the columns of ``predict --format csv`` (a term
    the predictor does not report is None)."""
    columns = pred.columns()
    batch = {"hardware": pred.target, "op": pred.op, "dtype": pred.dtype}
    out = []
    for j in range(len(pred)):
        row: dict[str, Any] = {}
        for name in CSV_COLUMNS:
            if name in batch:
                row[name] = batch[name]
            elif name not in columns:
                row[name] = None
            else:
                value = columns[name][j]
                row[name] = value if isinstance(value, str) else float(value)
        out.append(row)
    return out


def _emit(rows: list[dict[str, Any]], fmt: str) -> None:
    if fmt == "json":
        echo_json(rows)
    elif fmt == "csv":
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=list(CSV_COLUMNS), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        sys.stdout.write(buf.getvalue())
    else:
        from graphsval_core.datamodel.units import fmt_joules, fmt_seconds

        table = [
            [
                r["shape"],
                r["dtype"],
                fmt_seconds(r["latency_s"]),
                fmt_joules(r["energy_j"]),
                r["regime"],
                r["binding_tier"],
            ]
            for r in rows
        ]
        click.echo(
            format_table(["SHAPE", "DTYPE", "LATENCY", "ENERGY", "REGIME", "BINDING"], table)
        )
