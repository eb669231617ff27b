"""``graphsval explain`` and ``graphsval predict``: the model's answer for one
shape with its explanation, or for many shapes as a table, CSV or JSON."""

from __future__ import annotations

import csv
import io
import sys
from pathlib import Path
from typing import Any

import click

from graphsval_core.cli.main import AppContext, InputError, pass_app
from graphsval_core.cli.output import echo_json, format_table


def _resolve(app: AppContext, hw: str, op: str) -> tuple[Any, Any]:
    from graphsval_core.plugin_manager import UnknownNameError

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
    from graphsval_core.plugin_manager import UnknownNameError

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
    from graphsval_core.op_spec import ShapeError

    target, op_spec = _resolve(app, hw, op)
    _check_dtype(target, dtype)
    model = _predictor(app, predictor)
    try:
        dims = op_spec.parse_shape(shape)
    except ShapeError as exc:
        raise click.BadParameter(str(exc), param_hint="'--shape'") from None
    row = model.predict(app.registry, target, op_spec, [dims], dtype).row(0)
    if as_json:
        echo_json(row)
        return
    click.echo(row["explanation"])
    terms = row["terms"]
    lines = [f"  {name}: {value:.6g}" for name, value in terms.items()]
    click.echo("terms:\n" + "\n".join(lines))


def _read_shapes_file(path: str, op_spec: Any) -> list[tuple[int, ...]]:
    from graphsval_core.op_spec import ShapeError

    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    shapes = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        try:
            shapes.append(op_spec.parse_shape(line))
        except ShapeError as exc:
            raise InputError(f"{path}:{lineno}: {exc}") from None
    if not shapes:
        raise InputError(f"{path}: no shapes in the file")
    return shapes


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
    "hidden_s",
    "compute_s",
    "memory_s",
)


@click.command()
@click.option("--hw", required=True, metavar="KEY", help="Target key.")
@click.option("--op", required=True, metavar="OP", help="Op name.")
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
@pass_app
def predict(
    app: AppContext,
    hw: str,
    op: str,
    dtype: str | None,
    shape: str | None,
    shapes_file: str | None,
    sweep_file: str | None,
    predictor: str,
    fmt: str,
) -> None:
    """Predict latency, energy and regime for one shape, a file of shapes, or a sweep."""
    import numpy as np

    from graphsval_core.op_spec import ShapeError
    from graphsval_core.sweep_file import SweepFileError, load_sweep

    sources = [s for s in (shape, shapes_file, sweep_file) if s is not None]
    if len(sources) != 1:
        raise click.UsageError("give exactly one of --shape, --shapes FILE, --sweep FILE")
    target, op_spec = _resolve(app, hw, op)
    model = _predictor(app, predictor)
    if sweep_file is not None:
        try:
            sweep = load_sweep(sweep_file, len(op_spec.dims))
        except SweepFileError as exc:
            raise InputError(str(exc)) from None
        if sweep.op != op_spec.name:
            raise InputError(f"{sweep_file}: sweep is for op {sweep.op!r}, not {op_spec.name!r}")
        pairs = [(e.shape, e.dtype) for e in sweep.entries if dtype is None or e.dtype == dtype]
        if not pairs:
            raise InputError(f"{sweep_file}: no entry with dtype {dtype!r}")
    else:
        if dtype is None:
            raise click.UsageError("--dtype is required with --shape or --shapes")
        if shape is not None:
            try:
                dims_list = [op_spec.parse_shape(shape)]
            except ShapeError as exc:
                raise click.BadParameter(str(exc), param_hint="'--shape'") from None
        else:
            dims_list = _read_shapes_file(shapes_file or "", op_spec)
        pairs = [(d, dtype) for d in dims_list]
    for dt in dict.fromkeys(dt for _, dt in pairs):
        _check_dtype(target, dt)

    # one batch call per dtype, results put back in input order
    rows: list[dict[str, Any] | None] = [None] * len(pairs)
    for dt in dict.fromkeys(dt for _, dt in pairs):
        index = [i for i, (_, d) in enumerate(pairs) if d == dt]
        batch = np.array([pairs[i][0] for i in index], dtype=np.int64)
        pred = model.predict(app.registry, target, op_spec, batch, dt)
        for j, i in enumerate(index):
            rows[i] = _flat_row(pred, j)
    _emit(rows, fmt)  # type: ignore[arg-type]


def _flat_row(pred: Any, j: int) -> dict[str, Any]:
    row: dict[str, Any] = {
        "hardware": pred.target,
        "op": pred.op,
        "shape": pred.shape_string(j),
        "dtype": pred.dtype,
        "latency_s": float(pred.latency_s[j]),
        "energy_j": float(pred.energy_j[j]),
        "regime": str(pred.regime[j]),
        "binding_tier": str(pred.binding_tier[j]),
    }
    for name in CSV_COLUMNS[8:]:
        value = getattr(pred, name, None)
        row[name] = float(value[j]) if value is not None else None
    return row


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
        from graphsval_core.units import fmt_joules, fmt_seconds

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
