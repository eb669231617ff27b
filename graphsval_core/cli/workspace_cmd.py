"""``graphsval workspace``: where the workspace is, and what it holds."""

from __future__ import annotations

from pathlib import Path

import click

from graphsval_core.cli.context import AppContext, InputError, one_line, pass_app
from graphsval_core.cli.output import echo_json
from graphsval_core.datamodel.tables import screen_width, wrap_line

#: How each source of the folder is said.
_SOURCES = {
    "--workspace": "from --workspace",
    "GRAPHSVAL_WORKSPACE": "from GRAPHSVAL_WORKSPACE",
    "user data dir": "the user data directory",
}


@click.command()
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print JSON instead of text: keys `workspace`, `source`, `exists`, `targets`, "
    "`baselines`, `calibrations`, `problems`, `left_out` and `not_read` (the files no "
    "command reads, each a `file` and its `why`).",
)
@pass_app
def workspace(app: AppContext, as_json: bool) -> None:
    """Show the workspace: its folder and where that came from (--workspace,
    GRAPHSVAL_WORKSPACE, or the user data directory), its targets, baselines
    (rows per file) and calibrations, and under "not read" every other file
    or folder in it and in those parts (a .bak copy, a name with no
    extension, a hidden .x.csv), with why no command reads it.

    The workspace holds your own machine's snapshot targets, captures and
    calibrations; every command finds them as it finds an installed plugin's
    (`targets`, `registry lookup`, `predict`, `explain`, `check`,
    `calibrate`, and `validate`, which with no arguments validates the
    workspace's baselines too, each paired with its recapture). Nothing is
    written into an installed package, and the folder is created only when
    something is written into it. Its layout is a plugin package's, so a
    workspace becomes a plugin by copying its folders:
    targets/<key>.target.json, baselines/<key>_<op>.<purpose>.csv,
    baselines/recapture/<key>_<op>.validation.csv (a validation set captured
    again), calibration/<key>.calibration.json.

    A workspace target whose key an installed plugin registers too replaces
    it for every command, said in one `note:` line; that plugin's calibration,
    known findings, floors and prediction snapshot of the key then no longer
    apply, while its model hooks still shape the copy (the same device,
    edited: a KPU's weight-stationary window). `graphsval targets --hw KEY
    --target-file --out FILE` writes an installed target's file to start from.
    `graphsval calibrate --hw KEY` of a workspace target writes its
    calibration here unless --out names a file. A file that cannot be read
    is one warning naming it, and so is a part of the workspace that is
    there but is no folder (a file named `baselines`); the rest keep
    working. A folder that cannot be created (a file stands where one of its
    folders must be) is an error: one line, exit 2. `-p no:workspace` leaves
    the workspace out (as `sweep generate` of the project's frozen sweeps
    should).
    """
    from graphsval_core.workspace.summary import summarise

    location = app.workspace
    there = location.path.exists() or location.path.is_symlink()
    blocker = None if there else _blocker(location.path)
    if blocker is not None:  # it can never be a workspace: refused before the plugins load
        raise InputError(
            f"workspace {location.path} ({_SOURCES.get(location.source, location.source)}) "
            f"cannot be created: {blocker} is not a folder; point --workspace or "
            "GRAPHSVAL_WORKSPACE at a folder"
        )
    summary = summarise(location, app.registry)
    if as_json:
        echo_json(summary.to_dict())
        return
    width = screen_width()

    def say(line: str) -> None:
        """``line`` wrapped to the screen (a path is never cut), each control
        character in it escaped (a file's name with a newline in an error)."""
        click.echo("\n".join(wrap_line(one_line(line), width)))

    state = "" if there else "; it does not exist yet (created when something is written)"
    if summary.left_out:  # each line says so too
        state += "; left out of this run by -p no:workspace"
    say(f"workspace: {summary.path} ({_SOURCES.get(summary.source, summary.source)}){state}")
    for problem in summary.problems:  # something there that is no folder: nothing in it is read
        say(f"  problem: {problem}")
    # why a readable file is not in use, where no error of its own says so
    unused = ": -p no:workspace leaves the workspace out" if summary.left_out else ""
    say(f"targets ({len(summary.targets)}):")
    for t in summary.targets:
        if t.error:
            status = f"NOT LOADED: {t.error}"
        elif not t.registered:
            status = f"not registered{unused}"
        else:
            status = "".join(f"; replaces the one of plugin {p!r}" for p in t.replaces)
        say(
            f"  {t.key or '?'}  {shown_name(t.file)}"
            + (f"  {status.lstrip('; ')}" if status else "")
        )
    say(f"baselines ({len(summary.baselines)}):")
    for b in summary.baselines:
        if b.error:
            say(f"  {shown_name(b.file)}  NOT READ: {b.error}")
            continue
        what = f"{b.rows} rows" + (f", {b.purpose}" if b.purpose else "")
        say(f"  {shown_name(b.file)}  {what}" + ("  (recapture)" if b.recapture else ""))
    say(f"calibrations ({len(summary.calibrations)}):")
    for c in summary.calibrations:
        if c.error:
            say(f"  {shown_name(c.file)}  NOT READ: {c.error}")
            continue
        state = "applied" if c.applied else f"not applied{unused}"
        say(f"  {shown_name(c.file)}  {c.target}: {state}")
    if summary.not_read:
        say(f"not read ({len(summary.not_read)}):")
        for o in summary.not_read:
            say(f"  {shown_name(o.file)}  {o.why}")


def _blocker(path: Path) -> Path | None:
    """The nearest existing ancestor of the absent folder ``path`` when it is
    no folder (a file where a folder must be made); None otherwise."""
    for parent in path.parents:
        if parent.exists() or parent.is_symlink():
            return None if parent.is_dir() else parent
    return None


def shown_name(name: str) -> str:
    """A workspace file's name as printed: quoted as Python writes it where
    the name hides something (a trailing space, a control character), so
    ``x.target.json `` does not read as the name that is read."""
    hidden = name != name.strip() or not name.isprintable()
    return ascii(name) if hidden else name
