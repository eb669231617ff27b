"""``graphsval explain`` and ``graphsval predict``: the model's answer for one
shape with its explanation, or for many shapes as a table, CSV or JSON."""

from __future__ import annotations

import sys
from typing import Any

import click
import numpy as np

from graphsval_core.cli.context import AppContext, InputError, pass_app, shown_path
from graphsval_core.cli.output import echo_json
from graphsval_core.cli.params import refuse_unknown_dtype, shape_flag
from graphsval_core.cli.predict_table import CSV_COLUMNS, gather, rows, write_csv
from graphsval_core.datamodel.errors import warn_input
from graphsval_core.datamodel.tables import format_table


def _resolve(app: AppContext, hw: str, op: str) -> tuple[Any, Any]:
    from graphsval_core.plugins.registry import UnknownNameError

    registry = app.registry
    try:
        target = registry.target(hw)
    except UnknownNameError as exc:
        raise click.BadParameter(str(exc), param_hint="'--hw'") from None
    _warn_placeholder(app, target)
    try:
        op_spec = registry.op(op)
    except UnknownNameError as exc:
        raise click.BadParameter(str(exc), param_hint="'--op'") from None
    return target, op_spec


def _warn_placeholder(app: AppContext, target: Any) -> None:
    """A detected target this machine cannot probe (``host_gpu`` with no GPU)
    has placeholder figures: say so once, so that its predictions never read
    as a part's."""
    note = app.registry.placeholder_note(target)
    if note:
        warn_input(note)


def _check_dtype(target: Any, dtype: str) -> None:
    refuse_unknown_dtype(dtype)
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
@click.option(
    "--baseline",
    "baselines",
    multiple=True,
    metavar="CSV",
    help="Find the measured row in these files (default: the installed and workspace baselines).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
def explain(
    app: AppContext,
    hw: str,
    op: str,
    shape: str,
    dtype: str,
    predictor: str,
    baselines: tuple[str, ...],
    as_json: bool,
) -> None:
    """Predict one shape and explain the prediction: the tile and the tier it
    lives in, the tier it streams from, memory and compute time, the verdict.

    Beside the prediction: the measured row, when an installed or workspace
    baseline (or a --baseline file) has the shape, with the prediction's
    errors and the regime the measurement implies. Then where the latency
    goes (launch, compute, memory, first touch, packing; each tier's bytes
    and time) and where the energy goes (the operations, each tier's
    traffic, the static power over the latency), in words and numbers.
    """
    from graphsval_core.cli.explain_view import energy_split, explain_lines, measured_view
    from graphsval_core.files.baseline import BaselineFileError
    from graphsval_core.model.predict import predict_shapes
    from graphsval_core.validate.measured import find_measured
    from graphsval_core.validate.terminal import Screen

    target, op_spec = _resolve(app, hw, op)
    _check_dtype(target, dtype)
    _predictor(app, predictor)
    dims = shape_flag(op_spec, shape)
    pred = predict_shapes(app.registry, target, op_spec, [dims], dtype, predictor)
    data = pred.row(0)
    data["energy_split"] = energy_split(data, target.idle_power_w)
    try:
        found = find_measured(app.registry, target.key, op_spec.name, dims, dtype, baselines)
    except BaselineFileError as exc:
        raise InputError(str(exc)) from None
    data["measured"] = (
        measured_view(app.registry, target, op_spec, dims, dtype, pred, found) if found else None
    )
    if as_json:
        echo_json(data)
        return
    where = (
        ", ".join(shown_path(b) for b in baselines)
        if baselines
        else "no installed or workspace baseline has it"
    )
    data["measured_looked_in"] = f"looked in {where}" if baselines else where
    width = Screen.detect().width  # the terminal's, COLUMNS, else 80, as validate -v
    click.echo("\n".join(explain_lines(data, predictor, width)))


__all__ = ["CSV_COLUMNS", "explain", "predict"]


def _read_shapes_file(path: str, op_spec: Any) -> list[tuple[int, ...]]:
    from graphsval_core.files.shapes import read_shapes_file

    return read_shapes_file(path, op_spec)


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
    from graphsval_core.files.sweep import MIXED, SweepFileError, load_sweep
    from graphsval_core.model.predict import predict_shapes
    from graphsval_core.plugins.registry import UnknownNameError

    sources = [s for s in (shape, shapes_file, sweep_file) if s is not None]
    if len(sources) != 1:
        raise click.UsageError("give exactly one of --shape, --shapes FILE, --sweep FILE")
    if rollup and sweep_file is None:
        raise click.UsageError("--rollup needs --sweep FILE")
    if rollup and fmt == "csv":  # phases are nested, not rows: it printed the table instead
        raise click.UsageError("--rollup prints a table or --format json, not csv")
    if rollup and (op is not None or dtype is not None):  # it priced a part as the whole pass
        flag = "--op" if op is not None else "--dtype"
        raise click.UsageError(
            f"--rollup prices a whole forward pass: {flag} would leave out the pass's other "
            "calls and call what is left a pass (filter the sweep's file instead)"
        )
    _predictor(app, predictor)
    # (op, dims, dtype, extra) per requested shape, in input order
    items: list[tuple[str, tuple[int, ...], str, dict[str, Any]]] = []
    sweep = None
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
            flags = [f"{f} {v}" for f, v in (("--op", op), ("--dtype", dtype)) if v is not None]
            held = sorted({(e.op, e.dtype) for e in sweep.entries})
            has = ", ".join(f"{o} {d}" for o, d in held[:6]) + (", ..." if len(held) > 6 else "")
            raise InputError(
                f"{sweep_file}: no entry matches {' '.join(flags)} (its entries: {has})"
                if flags
                else f"{sweep_file}: the sweep holds no entry"
            )
    else:
        if op is None:
            raise click.UsageError("--op is required with --shape or --shapes")
        if dtype is None:
            raise click.UsageError("--dtype is required with --shape or --shapes")
        _, op_spec = _resolve(app, hw, op)
        if shape is not None:
            dims_list = [shape_flag(op_spec, shape)]
        else:
            dims_list = _read_shapes_file(shapes_file or "", op_spec)
        items = [(op, d, dtype, {}) for d in dims_list]

    try:
        target = app.registry.target(hw)
    except UnknownNameError as exc:
        raise click.BadParameter(str(exc), param_hint="'--hw'") from None
    _warn_placeholder(app, target)
    parts = []
    for op_name, dt in dict.fromkeys((o, d) for o, _, d, _ in items):
        try:
            op_spec = app.registry.op(op_name)
        except UnknownNameError as exc:
            if sweep_file is None:
                raise click.BadParameter(str(exc), param_hint="'--op'") from None
            raise InputError(f"{sweep_file}: an entry's op: {exc}") from None
        if sweep_file is not None and dtype is None and dt not in target.dtypes:
            # a rollup prices the whole pass (--dtype is refused with it): the sweep's own dtype
            how = (
                "sweep the model again with sweep from-config --dtype"
                if rollup
                else "choose one with --dtype"
            )
            raise InputError(
                f"{sweep_file}: entries of dtype {dt!r}, which target {target.key} does not "
                f"support (it supports {', '.join(target.dtypes)}); {how}"
            )
        _check_dtype(target, dt)
        index = [i for i, (o, _, d, _) in enumerate(items) if o == op_name and d == dt]
        want = len(op_spec.dims)
        for i in index:  # a sweep's entries may each have their own count
            if len(items[i][1]) != want:
                shown = "x".join(str(d) for d in items[i][1])
                raise InputError(
                    f"{sweep_file}: {op_name} shape {shown} has {len(items[i][1])} dims; "
                    f"a {op_name} shape needs {want}"
                )
        dims = np.array([items[i][1] for i in index], dtype=np.int64)
        pred = predict_shapes(app.registry, target, op_spec, dims, dt, predictor)
        parts.append((np.array(index, dtype=np.int64), pred))
    table = gather(len(items), parts)
    if rollup:
        _emit_rollup(app, target, predictor, items, table, sweep, fmt)
        return
    _emit(table, fmt)


def _emit_rollup(
    app: AppContext,
    target: Any,
    predictor: str,
    items: list[tuple[str, tuple[int, ...], str, dict[str, Any]]],
    table: dict[str, Any],
    sweep: Any,
    fmt: str,
) -> None:
    """One forward pass per phase (:mod:`graphsval_core.sweep.rollup`)."""
    from graphsval_core.model.predict import predict_shapes
    from graphsval_core.sweep.rollup import (
        Call,
        Site,
        combined_shape,
        rollup,
        rollup_lines,
        weights_floor_tier,
    )
    from graphsval_core.sweep.rollup_checks import RollupInputError, check_rollup

    source = sweep.meta.get("source") or {}
    calls = []
    for op_name, dims, dt, extra in items:
        sites = extra.get("used_in")
        if not sites:
            if "count" not in extra:
                shape = "x".join(map(str, dims))
                raise InputError(f"{sweep.path}: entry {shape} has no count to roll up")
            sites = [{"phase": "pass", "count": extra["count"]}]
        calls.append(
            Call(
                op_name,
                tuple(dims),
                dt,
                [
                    Site(str(s.get("phase", "pass")), str(s.get("site", "-")), int(s["count"]),
                         int(s.get("batch", 1)))
                    for s in sites
                ],
            )
        )  # fmt: skip
    try:  # whole passes of one model, not a hand-edited part (sweep.rollup_checks)
        check_rollup(str(sweep.path), calls, source)
    except RollupInputError as exc:
        raise InputError(str(exc)) from None
    # each batched call site's heads stacked into one product: its compute and first touch
    stacked_of: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for i, call in enumerate(calls):
        for site in call.sites:
            if site.batch > 1:
                stacked_of.setdefault((call.op, call.dtype), []).append((i, site.batch))
    stacked: dict[tuple[int, int], dict[str, float]] = {}
    for (op_name, dt), keys in stacked_of.items():
        keys = list(dict.fromkeys(keys))
        shapes = np.array([combined_shape(calls[i].shape, b) for i, b in keys], dtype=np.int64)
        op_spec = app.registry.op(op_name)
        pred = predict_shapes(app.registry, target, op_spec, shapes, dt, predictor)
        part = gather(len(keys), [(np.arange(len(keys)), pred)])
        for k, key in enumerate(keys):
            stacked[key] = {name: _plain(part[name][k]) for name in ROLLUP_TERMS}
    rows = [
        {name: _plain(table[name][i]) for name in ("regime", *ROLLUP_TERMS)}
        | {"binding": f"{table['binding_tier'][i]}_bound"}
        for i in range(len(items))
    ]
    batch = int(source.get("batch", 1))  # the sweep file's reader checked it
    floor = weights_floor_tier(app.registry.memory_hierarchy(target))
    phases = rollup(calls, rows, stacked, batch=batch, floor_bandwidth=floor)
    if fmt == "json":
        echo_json(phases)
        return
    click.echo(f"{target.key}: one forward pass per phase of {sweep.path}")
    click.echo("\n".join(rollup_lines(phases, batch)))


#: The terms a rollup reads of each prediction.
ROLLUP_TERMS = (
    "latency_s",
    "energy_j",
    "launch_s",
    "compute_s",
    "memory_s",
    "hidden_s",
    "first_touch_s",
    "pack_s",
    "energy_static_j",
)


def _plain(value: Any) -> Any:
    """A table cell as a plain value: a float (an absent term 0.0) or a string."""
    if isinstance(value, str):
        return value
    number = float(value)
    return 0.0 if number != number else number


def _emit(table: dict[str, Any], fmt: str) -> None:
    if fmt == "json":
        echo_json(list(rows(table)))
    elif fmt == "csv":
        write_csv(table, sys.stdout)
    else:
        from graphsval_core.datamodel.units import fmt_joules, fmt_seconds

        lines = [
            [
                r["shape"],
                r["dtype"],
                fmt_seconds(r["latency_s"]),
                fmt_joules(r["energy_j"]),
                r["regime"],
                r["binding_tier"],
            ]
            for r in rows(table)
        ]
        click.echo(
            format_table(["SHAPE", "DTYPE", "LATENCY", "ENERGY", "REGIME", "BINDING"], lines)
        )
