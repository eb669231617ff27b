"""``graphsval sweep``: generate, label, show and derive sweep files."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Any

import click

from graphsval_core.cli.context import AppContext, InputError, Subgroup, pass_app, shown_path
from graphsval_core.cli.output import echo_json
from graphsval_core.cli.params import Whole, is_whole
from graphsval_core.datamodel.errors import warn_input
from graphsval_core.datamodel.tables import format_table
from graphsval_core.files.outputs import check_output_files, check_output_in_folder

#: The most tokens ``sweep from-config --tokens`` takes (a context of 2^24).
MAX_TOKENS = 2**24


def _shipped_dir(sweeps_dir: str | None) -> Path:
    if sweeps_dir is not None:
        if not Path(sweeps_dir).is_dir():
            what = "is not a folder" if Path(sweeps_dir).exists() else "does not exist"
            raise InputError(f"--sweeps-dir {sweeps_dir}: {what}; name the folder of the sweeps")
        try:  # a folder it may not list is not one without sweeps
            names = os.listdir(sweeps_dir)
        except OSError as exc:
            raise InputError(
                f"--sweeps-dir {sweeps_dir}: cannot be read ({exc.strerror or exc})"
            ) from None
        if not any(n.endswith(".json") for n in names):  # as the sweeps' reader globs them
            raise InputError(f"--sweeps-dir {sweeps_dir}: no sweep files (*.json) in it")
        return Path(sweeps_dir)
    from graphsval_core.plugins.resources import sweeps_dir as shipped

    return Path(str(shipped()))


def _target(app: AppContext, hw: str) -> Any:
    """The installed target ``hw``; an unknown one is a bad ``--hw``."""
    from graphsval_core.plugins.registry import UnknownNameError

    try:
        return app.registry.target(hw)
    except UnknownNameError as exc:
        raise click.BadParameter(str(exc), param_hint="'--hw'") from None


def _labelled(sweeps: dict[str, Any]) -> set[str]:
    """The targets some entry of ``sweeps`` labels."""
    return {hw for s in sweeps.values() for e in s.entries for hw in e.regime_per_hw}


def _writable(folder: Path, flag: str) -> Path:
    """``folder``, unless it lies in an installed package: graphsval writes the
    shipped sweeps only in a source tree, or where the user names a folder."""
    from graphsval_core.plugins.resources import in_installed_package

    if in_installed_package(folder):
        raise InputError(
            f"{folder} lies in an installed package; graphsval writes the shipped sweeps "
            f"only from a source tree (pip install -e): name a folder with {flag}"
        )
    return folder


def _load(app: AppContext, sweeps_dir: str | None, overlays: bool):  # type: ignore[no-untyped-def]
    from graphsval_core.files.sweep import SweepFileError
    from graphsval_core.sweep.labels import load_shipped

    try:
        return load_shipped(app.registry, _shipped_dir(sweeps_dir), overlays=overlays)
    except SweepFileError as exc:
        raise InputError(str(exc)) from None


@click.group(cls=Subgroup)
def sweep() -> None:
    """Frozen calibration and validation shape sets, and their regime labels."""


@sweep.command()
@click.option("--op", "ops", multiple=True, metavar="OP", help="Only these ops (repeatable).")
@click.option(
    "--seed",
    type=Whole(0, 2**63 - 1),
    default=None,
    help="Generator seed (default: the project's).",
)
@click.option("--out-dir", metavar="DIR", help="Where to write (default: the shipped sweeps).")
@click.option(
    "--redraw",
    is_flag=True,
    help="Replace frozen sweeps in the folder whose shapes the draw would change.",
)
@pass_app
def generate(
    app: AppContext, ops: tuple[str, ...], seed: int | None, out_dir: str | None, redraw: bool
) -> None:
    """Generate <op>_calibration.json and <op>_validation.json deterministically.

    Frozen sweeps already in the folder are kept when the draw would change
    their shapes (another seed, or the same one once the calibrations, whose
    regime labels it stratifies by, or the real-hardware rows it starts from
    moved): name another folder, or pass --redraw to replace them."""
    from graphsval_core.sweep.frozen import redraw_changes
    from graphsval_core.sweep.generator import (
        DEFAULT_SEED,
        OPS,
        SweepGenerationError,
        generate as run,
    )
    from graphsval_core.sweep.labels import write_all

    for op in ops:
        if op not in OPS:
            raise click.BadParameter(f"{op!r} is not one of {', '.join(OPS)}", param_hint="'--op'")
    try:
        sweeps = run(app.registry, ops or OPS, DEFAULT_SEED if seed is None else seed)
    except SweepGenerationError as exc:
        raise InputError(str(exc)) from None
    folder = _writable(Path(out_dir) if out_dir else _shipped_dir(None), "--out-dir DIR")
    # every file's place, before the folder is made or its frozen sweeps judged
    check_output_files(folder, sweeps, InputError, "--out-dir")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise InputError(f"--out-dir {shown_path(folder)}: is a file, not a folder") from None
    except OSError as exc:
        raise InputError(
            f"--out-dir {shown_path(folder)}: cannot create it: {exc.strerror or exc}"
        ) from None
    changes = [] if redraw else redraw_changes(folder, sweeps)
    if changes:
        raise InputError(
            f"{folder} holds frozen sweeps this draw would change ({'; '.join(changes)}); "
            "they are kept: write elsewhere (--out-dir DIR) or replace them (--redraw)"
        )
    written = write_all(sweeps, folder)
    for name, s in sweeps.items():
        dtypes = Counter(e.dtype for e in s.entries)
        counts = ", ".join(f"{dtype} {n}" for dtype, n in dtypes.items())
        done = "wrote" if name in written else "unchanged"
        click.echo(f"{done} {shown_path(folder / name)}: {len(s.entries)} shapes ({counts})")


@sweep.command()
@click.option("--hw", "hws", multiple=True, metavar="KEY", help="Target(s) to label.")
@click.option("--out", metavar="FILE", help="Write an overlay file (third-party plugins).")
@click.option("--update", is_flag=True, help="Relabel every labelled target; print what moved.")
@click.option("--sweeps-dir", metavar="DIR", help="Sweep folder (default: the shipped sweeps).")
@pass_app
def label(
    app: AppContext, hws: tuple[str, ...], out: str | None, update: bool, sweeps_dir: str | None
) -> None:
    """Label targets in the sweeps: inline (first-party), as an overlay file
    (--out, for a plugin to ship), or refresh every label after a recalibration
    (--update)."""
    from graphsval_core.plugins.first_party import is_first_party
    from graphsval_core.sweep.labels import label_inline, overlay_for, write_all, write_overlay

    if not hws and not update:
        raise click.UsageError("give --hw KEY (repeatable) or --update")
    if update and out:
        raise click.UsageError("--update rewrites the shipped labels; it takes no --out")
    for hw in hws:
        target = _target(app, hw)
        note = app.registry.placeholder_note(target)
        if note:  # labels from placeholder figures: said, as predict says it
            warn_input(note)
        plugin = app.registry.target_plugin(hw)
        if out is None and not is_first_party(plugin.distribution):
            raise click.UsageError(
                f"{hw} is a target of {plugin.distribution or plugin.name}, not a first-party "
                "plugin: its labels live in an overlay its plugin ships (--out FILE)"
            )
    sweeps = _load(app, sweeps_dir, overlays=False)
    if not sweeps:
        raise InputError(f"no sweep files in {_shipped_dir(sweeps_dir)}")
    if out is not None:
        check_output_in_folder(out, InputError, f"--out {shown_path(out)}")
        try:
            write_overlay(overlay_for(app.registry, sweeps, hws), out)
        except OSError as exc:
            raise InputError(
                f"--out {shown_path(out)}: cannot write: {exc.strerror or exc}"
            ) from None
        click.echo(f"wrote overlay {shown_path(out)} for {', '.join(hws)}")
        return
    folder = _writable(_shipped_dir(sweeps_dir), "--sweeps-dir DIR (a copy of them)")
    if update:
        labelled = sorted(_labelled(sweeps))
        missing = [hw for hw in labelled if hw not in app.registry.targets()]
        if missing:
            raise InputError(
                f"labelled targets not installed: {', '.join(missing)}; install their plugins "
                f"before --update so their labels are refreshed too"
            )
        hws = tuple(labelled)
    new, changes = label_inline(app.registry, sweeps, hws, update_only=update)
    write_all({name: s for name, s in new.items() if s != sweeps.get(name)}, folder)
    for change in changes:
        click.echo(str(change))
    click.echo(f"{len(changes)} label(s) moved")


@sweep.command()
@click.option("--hw", "hws", multiple=True, metavar="KEY", help="Only these targets.")
@click.option("--sweeps-dir", metavar="DIR", help="Sweep folder (default: the shipped sweeps).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
def show(app: AppContext, hws: tuple[str, ...], sweeps_dir: str | None, as_json: bool) -> None:
    """Counts per regime per target in every sweep (ambiguous and unsupported too)."""
    for hw in hws:  # a typo would print an empty table
        _target(app, hw)
    sweeps = _load(app, sweeps_dir, overlays=True)
    labelled = _labelled(sweeps)
    for hw in hws:
        if hw not in labelled:
            warn_input(f"--hw {hw}: no sweep labels it (`graphsval sweep label --hw {hw}`)")
    counts: dict[tuple[str, str], Counter[str]] = {}
    for name, s in sorted(sweeps.items()):
        for e in s.entries:
            for hw, regime in e.regime_per_hw.items():
                if hws and hw not in hws:
                    continue
                counts.setdefault((name.removesuffix(".json"), hw), Counter())[regime] += 1
    if as_json:
        echo_json(
            [{"sweep": s, "hardware": hw, "counts": dict(c)} for (s, hw), c in counts.items()]
        )
        return
    from graphsval_core.datamodel.regimes import AMBIGUOUS, LABELS, UNSUPPORTED, short

    rows = [[s, hw, *[c.get(r, 0) or "." for r in LABELS]] for (s, hw), c in counts.items()]
    abbreviated = {AMBIGUOUS: "ambig", UNSUPPORTED: "unsup"}
    headings = [abbreviated.get(r, short(r)) for r in LABELS]
    click.echo(format_table(["SWEEP", "TARGET", *headings], rows))


@sweep.command("from-config")
@click.argument("config", metavar="CONFIG.json")
@click.option(
    "--tokens",
    default="1,128,2048",
    show_default=True,
    help="Comma-separated token counts: a prefill of T and a decode step at context T.",
)
@click.option("--batch", type=Whole(1, 2**20), default=1, show_default=True)
@click.option("--dtype", default="bf16", show_default=True)
@click.option(
    "--out",
    metavar="FILE",
    help="Output sweep file (default: <name of the config, less .json>_sweep.json in the "
    "current folder).",
)
def from_config(config: str, tokens: str, batch: int, dtype: str, out: str | None) -> None:
    """Write the linear and matmul shapes of one forward pass of a transformer
    config (Hugging Face style) as a sweep, with call sites and counts.

    A projection is op linear (with a bias) where the config's
    attention_bias or mlp_bias is true, else linear_nobias (no bias: a
    LLaMA's, whose config says false or nothing); a Qwen2's q/k/v carry a
    bias its config does not name; the lm_head has no bias."""
    from graphsval_core.datamodel.dtypes import KNOWN_DTYPES
    from graphsval_core.files.sweep import write_sweep
    from graphsval_core.sweep.model_config import ModelConfigError, sweep_from_config

    parts = [t.strip(" ") for t in tokens.split(",")]  # "1, 128": ASCII spaces after commas
    if not all(is_whole(p) for p in parts):
        raise click.BadParameter(
            f"{tokens[:60]!r} is not a comma-separated list of integers", param_hint="'--tokens'"
        )
    token_list = [int(p) for p in parts]
    if not token_list or not all(1 <= t <= MAX_TOKENS for t in token_list):
        raise click.BadParameter(
            f"token counts must be integers in [1, {MAX_TOKENS}]", param_hint="'--tokens'"
        )
    twice = sorted({t for t in token_list if token_list.count(t) > 1})
    if twice:  # each is a phase of the pass: given twice, a rollup would count it twice
        raise click.BadParameter(
            f"token count {twice[0]} is given twice; give each once", param_hint="'--tokens'"
        )
    if dtype not in KNOWN_DTYPES:
        raise click.BadParameter(f"unknown dtype {dtype!r}", param_hint="'--dtype'")
    try:
        result = sweep_from_config(config, token_list, batch, dtype)
    except ModelConfigError as exc:
        raise InputError(str(exc)) from None
    path = Path(out) if out else Path(f"{Path(config).stem}_sweep.json")
    check_output_in_folder(path, InputError, f"--out {shown_path(path)}")
    if Path(os.path.realpath(path)) == Path(os.path.realpath(config)):  # or a link to it
        raise InputError(
            f"--out {shown_path(path)}: is the config it reads ({config}); name another file"
        )
    write_sweep(result, path)
    calls = sum(e.extra["count"] for e in result.entries)
    click.echo(f"wrote {shown_path(path)}: {len(result.entries)} distinct shapes, {calls} calls")
