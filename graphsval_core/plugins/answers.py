"""What each hook may answer: the check applied to every implementation's answer.

A hook implementation's answer is either None ("no answer") or what its spec
in :mod:`graphsval_core.plugins.hookspecs` promises. :func:`materialise` turns
a collecting hook's iterable into a fresh list (so an error raised while
iterating a generator happens inside the plugin's guard), and
:func:`check_answer` raises :class:`TypeError`, naming the hook, what it
returned and what was expected, for anything else.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from graphsval_core.datamodel.op import OpSpec
from graphsval_core.datamodel.target import MemoryTier, TargetSpec
from graphsval_core.plugins.records import (
    ConsistencyCheck,
    Measurement,
    PredictorSpec,
    ProbeResult,
)

#: A file a plugin ships: a path, or an importlib.resources Traversable.
FileRef = Any


def is_file_ref(item: object) -> bool:
    """A ``str``, an ``os.PathLike`` or an object with a ``read_text`` method."""
    return isinstance(item, str | os.PathLike) or hasattr(item, "read_text")


def read_file_ref(item: FileRef) -> str:
    """The text of a shipped file (a path or a Traversable)."""
    if isinstance(item, str | os.PathLike):
        if os.path.isdir(item):  # a folder of a file's name: say so, not "[Errno 21]"
            raise ValueError(f"{os.fspath(item)}: is a folder, not a file")
        try:
            with open(item, encoding="utf-8") as handle:
                return handle.read()
        except OSError as exc:  # unreadable: say so, not "[Errno 13] ... '<path>'"
            raise ValueError(f"{os.fspath(item)}: cannot read: {exc.strerror or exc}") from None
    return str(item.read_text(encoding="utf-8"))


def file_ref_name(item: FileRef) -> str:
    """A ``str`` path as given; the file name of a path object or a Traversable."""
    if isinstance(item, str):
        return item
    if isinstance(item, os.PathLike):
        return os.path.basename(os.fspath(item))
    return str(item.name)


def _is_iterable(value: object) -> bool:
    return isinstance(value, Iterable) and not isinstance(value, str | bytes)


#: Collecting hooks whose answer is an iterable: the check every item must pass
#: and what the message calls an item.
ITEM_CHECKS: dict[str, tuple[Callable[[object], bool], str]] = {
    "graphsval_register_targets": (lambda x: isinstance(x, TargetSpec), "TargetSpec"),
    "graphsval_register_ops": (lambda x: isinstance(x, OpSpec), "OpSpec"),
    "graphsval_register_predictors": (lambda x: isinstance(x, PredictorSpec), "PredictorSpec"),
    "graphsval_baselines": (is_file_ref, "a path or a Traversable"),
    "graphsval_calibrations": (is_file_ref, "a path or a Traversable"),
    "graphsval_sweep_overlays": (is_file_ref, "a path or a Traversable"),
    "graphsval_consistency_checks": (
        lambda x: isinstance(x, ConsistencyCheck),
        "ConsistencyCheck",
    ),
}

#: First-result hooks answering one record: its type.
RECORD_TYPES: dict[str, type] = {
    "graphsval_measurer_probe": ProbeResult,
    "graphsval_measure": Measurement,
    "graphsval_snapshot_target": TargetSpec,
}


#: Hooks whose answer is one file a plugin ships (or None).
FILE_HOOKS = ("graphsval_floors", "graphsval_prediction_snapshot")


def materialise(hook: str, value: Any) -> Any:
    """A collecting hook's iterable answer as a fresh list, a mapping of known
    findings as a fresh dict; any other answer as is."""
    if hook in ITEM_CHECKS and _is_iterable(value):
        return list(value)
    if hook == "graphsval_expected_failures" and isinstance(value, Mapping):
        return dict(value)
    return value


def check_answer(hook: str, value: Any, call: Mapping[str, Any]) -> None:
    """Raise :class:`TypeError` unless ``value`` is None or what ``hook`` promises.

    :param call: the keyword arguments of the hook call (the residency window
        is checked against the shapes it was given).
    """
    if value is None:
        return
    returned = type(value).__name__
    if hook in ITEM_CHECKS:
        ok, item = ITEM_CHECKS[hook]
        if not isinstance(value, list):
            raise TypeError(f"{hook} returned {returned}, expected an iterable of {item}")
        for element in value:
            if not ok(element):
                raise TypeError(f"{hook} returned {type(element).__name__}, expected {item}")
    elif hook in RECORD_TYPES:
        if not isinstance(value, RECORD_TYPES[hook]):
            raise TypeError(f"{hook} returned {returned}, expected {RECORD_TYPES[hook].__name__}")
    elif hook in FILE_HOOKS:
        if isinstance(value, str):  # a str would be read relative to the user's folder
            raise TypeError(
                f"{hook} returned str {value[:60]!r}, expected a pathlib.Path (e.g. "
                "Path(__file__).with_name(...)), a Traversable or None"
            )
        if not is_file_ref(value):
            raise TypeError(f"{hook} returned {returned}, expected a path, a Traversable or None")
    elif hook == "graphsval_expected_failures":
        expected = "a mapping of check names to reasons (str -> str)"
        if not isinstance(value, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items()
        ):
            raise TypeError(f"{hook} returned {returned}, expected {expected}")
    elif hook == "graphsval_memory_hierarchy":
        _check_tiers(hook, value)
    elif hook == "graphsval_residency_window":
        _check_window(hook, value, call)


def _check_tiers(hook: str, value: Any) -> None:
    expected = "a non-empty sequence of MemoryTier"
    if not isinstance(value, Sequence) or isinstance(value, str | bytes) or not value:
        raise TypeError(f"{hook} returned {type(value).__name__}, expected {expected}")
    for tier in value:
        if not isinstance(tier, MemoryTier):
            raise TypeError(f"{hook} returned a {type(tier).__name__} tier, expected {expected}")


def _check_window(hook: str, value: Any, call: Mapping[str, Any]) -> None:
    import numpy as np  # not at import time: `graphsval --help` imports no numpy

    try:
        tiles = np.asarray(value)
    except Exception as exc:
        raise TypeError(f"{hook} returned {type(value).__name__}, not an array: {exc}") from exc
    if tiles.dtype.kind not in "iuf":
        raise TypeError(f"{hook} returned an array of {tiles.dtype}, expected numbers")
    if "shapes" in call:
        # one (Mt, Kt, Nt) tile of the op's matrix product per shape
        expected = (int(np.shape(call["shapes"])[0]), 3)
        if tiles.shape != expected:
            raise TypeError(
                f"{hook} returned an array of shape {tiles.shape}, expected {expected} "
                f"(one tile of the matrix product per shape)"
            )
    elif tiles.ndim != 2 or tiles.shape[1] != 3:
        raise TypeError(f"{hook} returned an array of shape {tiles.shape}, expected (n, 3)")
    finite = np.isfinite(tiles)
    if not finite.all() or (tiles < 1).any():
        bad = tiles[~finite] if not finite.all() else tiles[tiles < 1]
        raise TypeError(
            f"{hook} returned a tile of {bad.flat[0]:g} elements along a dimension, "
            "expected finite numbers of at least 1"
        )
