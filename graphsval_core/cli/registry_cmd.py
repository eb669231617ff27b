"""``graphsval registry lookup``: the measured row of one shape, never a guess."""

from __future__ import annotations

import click

from graphsval_core.cli.context import AppContext, InputError, Subgroup, pass_app, shown_path
from graphsval_core.cli.output import echo_json
from graphsval_core.cli.params import refuse_unknown_dtype, shape_flag


@click.group(cls=Subgroup)
def registry() -> None:
    """Look up measured ground truth in the installed and workspace (or given) baselines."""


@registry.command()
@click.option(
    "--hw",
    required=True,
    metavar="KEY",
    help="Target key (host_cpu resolves to the named target captured on this machine).",
)
@click.option("--op", required=True, metavar="OP")
@click.option("--shape", required=True, metavar="S")
@click.option("--dtype", required=True, metavar="D")
@click.option(
    "--baseline",
    "baselines",
    multiple=True,
    metavar="FILE",
    help="Look in these files instead of the installed and workspace baselines.",
)
@click.option("--json", "as_json", is_flag=True)
@pass_app
def lookup(
    app: AppContext,
    hw: str,
    op: str,
    shape: str,
    dtype: str,
    baselines: tuple[str, ...],
    as_json: bool,
) -> None:
    """Print the measured row (latency, energy, verdict) of one shape."""
    from graphsval_core.files.baseline import BaselineFileError
    from graphsval_core.plugins.registry import UnknownNameError
    from graphsval_core.validate.measured import find_measured, measured_dict

    reg = app.registry
    try:
        key = reg.resolve(hw).key
    except UnknownNameError as exc:
        raise click.BadParameter(str(exc), param_hint="'--hw'") from None
    try:
        op_spec = reg.op(op)
    except UnknownNameError as exc:
        raise click.BadParameter(str(exc), param_hint="'--op'") from None
    dims = shape_flag(op_spec, shape)
    refuse_unknown_dtype(dtype)
    try:
        found = find_measured(reg, key, op, dims, dtype, baselines)
    except BaselineFileError as exc:
        raise InputError(str(exc)) from None
    if found is None:
        where = (
            ", ".join(shown_path(b) for b in baselines)
            if baselines
            else "the installed and workspace baselines"
        )
        raise InputError(
            f"{key} {op} {op_spec.format_shape(dims)} {dtype} was not measured (looked in {where})"
        )
    data = measured_dict(*found)
    if as_json:  # the file where it lies, as every warning names it (JSON escapes it)
        echo_json(data)
        return
    data["file"] = shown_path(data["file"])  # a control character of its name, escaped
    for name, value in data.items():
        click.echo(f"{name}: {'' if value is None else value}")
