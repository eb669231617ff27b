"""What a redraw would change in the frozen sweeps already in a folder.

``graphsval sweep generate`` is seeded, but it does not reproduce the frozen
sets once the calibrations have moved: the draw stratifies by each target's
regime labels, which follow its calibrated constants, and the real-hardware
calibration rows it puts first grow with every capture. A redraw therefore
picks other shapes, and may put a shape of the frozen validation set into the
new calibration set, where a fit would then see it. Before it overwrites a
folder's sweeps, ``sweep generate`` asks :func:`redraw_changes` and refuses
unless told to redraw (``--redraw``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from graphsval_core.files.sweep import Sweep, SweepFileError, load_sweep

Key = tuple[tuple[int, ...], str]


def _keys(sweep: Sweep) -> set[Key]:
    return {(entry.shape, entry.dtype) for entry in sweep.entries}


def _frozen(folder: Path, name: str, op: str, purpose: str | None) -> Sweep | str | None:
    """The sweep file ``name`` in ``folder``: None where there is none; a
    phrase saying why it is no frozen ``op`` ``purpose`` sweep where it cannot
    be read or holds another op's or purpose's (a redraw would replace it,
    so it is a change too)."""
    path = folder / name
    try:
        if not path.is_file():
            return None  # absent, or no file to read: the output check names it
        sweep = load_sweep(path)
    except OSError as exc:  # a folder that cannot be searched
        return f"{name} cannot be read ({exc.strerror or exc})"
    except SweepFileError as exc:
        return f"{name} cannot be read ({str(exc).removeprefix(str(path)).lstrip(': ')})"
    if sweep.op != op or sweep.purpose != purpose:
        return f"{name} holds a {sweep.purpose or 'mixed'} sweep of {sweep.op}, not this one"
    return sweep


def redraw_changes(folder: Path, new: Mapping[str, Sweep]) -> list[str]:
    """One phrase per frozen sweep in ``folder`` that writing ``new`` would
    change: shapes it would drop or add, frozen validation shapes the new
    calibration set would hold, and a file there that cannot be read or is
    another op's or purpose's sweep. Empty when every file is absent or drawn
    again with the same shapes (labels may differ: ``sweep label --update``
    rewrites those)."""
    changes: list[str] = []
    for name, sweep in new.items():
        old = _frozen(folder, name, sweep.op, sweep.purpose)
        after = _keys(sweep)
        if isinstance(old, str):
            changes.append(old)
        elif isinstance(old, Sweep) and _keys(old) != after:
            before = _keys(old)
            changes.append(
                f"{name}: {len(before - after)} of its {len(before)} shapes dropped, "
                f"{len(after - before)} added"
            )
        if sweep.purpose == "calibration":
            other = f"{sweep.op}_validation.json"
            validation = _frozen(folder, other, sweep.op, "validation")
            if isinstance(validation, Sweep):
                leaked = after & _keys(validation)
                if leaked:
                    changes.append(
                        f"{name} would hold {len(leaked)} shape(s) of the frozen validation set"
                    )
    return changes
