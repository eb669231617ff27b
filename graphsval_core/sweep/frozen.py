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


def _frozen(folder: Path, name: str) -> Sweep | None:
    """The sweep file ``name`` in ``folder``; None where there is none or it
    cannot be read (nothing frozen to keep)."""
    path = folder / name
    if not path.is_file():
        return None
    try:
        return load_sweep(path)
    except (SweepFileError, OSError, ValueError):
        return None


def redraw_changes(folder: Path, new: Mapping[str, Sweep]) -> list[str]:
    """One phrase per frozen sweep in ``folder`` that writing ``new`` would
    change: shapes it would drop or add, and frozen validation shapes the new
    calibration set would hold. Empty when every file is absent, unreadable or
    drawn again with the same shapes (labels may differ: ``sweep label
    --update`` rewrites those)."""
    changes: list[str] = []
    for name, sweep in new.items():
        old = _frozen(folder, name)
        if old is None:
            continue
        before, after = _keys(old), _keys(sweep)
        if before != after:
            changes.append(
                f"{name}: {len(before - after)} of its {len(before)} shapes dropped, "
                f"{len(after - before)} added"
            )
        if sweep.purpose == "calibration":
            validation = _frozen(folder, name.replace("_calibration.", "_validation."))
            if validation is not None:
                leaked = after & _keys(validation)
                if leaked:
                    changes.append(
                        f"{name} would hold {len(leaked)} shape(s) of the frozen validation set"
                    )
    return changes
