"""The project's shipped sweeps with their labels: loading, overlays, relabelling.

First-party labels live inline in the shipped sweep files. A third-party plugin
ships an *overlay* (``graphsval sweep label --hw KEY --out FILE``) through the
``graphsval_sweep_overlays`` hook; overlays are merged at load time and only
ever add labels for the targets they declare, so labelling a target never
changes another target's labels and no core file is edited.

Overlay format::

    {"schema_version": 1, "kind": "graphsval-sweep-labels", "targets": ["acme_npu1"],
     "labels": {"matmul_validation.json": {"64x64x64 fp32": {"acme_npu1": "l1_bound"}}}}
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from attrs import evolve, frozen

from graphsval_core.datamodel.regimes import LABELS
from graphsval_core.files.outputs import special_kind, write_texts_atomic
from graphsval_core.files.overlay import OVERLAY_KIND, overlay_from, read_overlay
from graphsval_core.files.sweep import (
    SCHEMA_VERSION,
    Sweep,
    SweepEntry,
    SweepFileError,
    dump_sweep,
    load_sweep,
)
from graphsval_core.model.classifier import classify
from graphsval_core.plugins.resources import sweep_files

if TYPE_CHECKING:
    from graphsval_core.plugins.registry import Registry


@frozen
class LabelChange:
    sweep: str
    op: str
    key: str
    target: str
    old: str | None
    new: str

    def __str__(self) -> str:
        old = "(unlabelled)" if self.old is None else self.old
        return f"{self.sweep}: {self.op} {self.key} {self.target}: {old} -> {self.new}"


def load_shipped(
    registry: Registry | None = None, folder: str | Path | None = None, overlays: bool = True
) -> dict[str, Sweep]:
    """The shipped sweeps by file name (from ``folder`` if given), overlays merged."""
    sweeps: dict[str, Sweep] = {}
    if folder is not None:
        for path in sorted(Path(folder).glob("*.json")):
            kind = special_kind(path)
            if kind:  # never opened: a FIFO with no writer would hold the command
                raise SweepFileError(f"{path}: is {kind}, not a sweep file; move it out")
            sweeps[path.name] = load_sweep(path)
    else:
        for item in sweep_files():
            sweeps[item.name] = load_sweep(item.name, text=item.read_bytes())
    if registry is not None:
        for sweep in sweeps.values():
            _check_dims(registry, sweep)
    if overlays and registry is not None:
        # a plugin's overlay that cannot be read or merged is its plugin's
        # problem, in one line (strict mode: an error); the others still merge
        problem = getattr(registry, "contribution_problem", None)
        for plugin, item in registry.sweep_overlays():
            try:
                sweeps = _merged(sweeps, plugin, item)
            except SweepFileError as exc:
                if problem is None:
                    raise
                problem(plugin, "graphsval_sweep_overlays", f"sweep-label overlay left out: {exc}")
    return sweeps


def _check_dims(registry: Registry, sweep: Sweep) -> None:
    """Every entry of an installed op has that op's number of dims: one line
    naming the file and the entry otherwise (a sweep whose op names no
    installed op, a plugin's that is not installed, is left as it is)."""
    for entry in sweep.entries:
        name = entry.op or sweep.op
        try:
            op = registry.op(name)
        except LookupError:  # UnknownNameError: no installed op of that name
            continue
        if len(entry.shape) != len(op.dims):
            raise SweepFileError(
                f"{sweep.path}: {name} shape {entry.shape_string} has {len(entry.shape)} "
                f"dims; a {name} shape needs {len(op.dims)} ({'x'.join(op.dims)})"
            )


def _merged(sweeps: dict[str, Sweep], plugin: str, item: Any) -> dict[str, Sweep]:
    """``sweeps`` with the overlay ``item`` of ``plugin`` merged."""
    where = f"plugin {plugin}: {getattr(item, 'name', item)}"
    try:
        raw = Path(item).read_bytes() if isinstance(item, str | Path) else item.read_bytes()
    except OSError as exc:
        raise SweepFileError(f"{where}: cannot read: {exc.strerror or exc}") from None
    except (AttributeError, TypeError):
        raise SweepFileError(f"{where}: not a file ({type(item).__name__})") from None
    return merge_overlay(sweeps, read_overlay(raw, where), where)


def merge_overlay(
    sweeps: dict[str, Sweep], overlay: dict[str, Any], where: str
) -> dict[str, Sweep]:
    """Add an overlay's labels for its own targets; other labels are untouched."""
    overlay = overlay_from(overlay, where)
    declared = set(overlay.get("targets", []))
    out = dict(sweeps)
    for name, labels in overlay.get("labels", {}).items():
        if name not in out:
            raise SweepFileError(f"{where}: labels for unknown sweep {name!r}")
        sweep = out[name]
        known = {e.key for e in sweep.entries}
        for key, per_hw in labels.items():
            if key not in known:
                raise SweepFileError(f"{where}: {name}: no entry {key!r} in the sweep")
            for hw, regime in per_hw.items():
                if regime not in LABELS:
                    raise SweepFileError(
                        f"{where}: {name} {key}: {hw} label {regime!r} is not a regime "
                        f"({', '.join(LABELS)})"
                    )
        entries = []
        for entry in sweep.entries:
            extra = labels.get(entry.key, {})
            for hw in extra:
                if hw not in declared:
                    raise SweepFileError(
                        f"{where}: {name} {entry.key}: label for {hw!r}, which the overlay "
                        f"does not declare"
                    )
            if extra:
                merged = dict(entry.regime_per_hw)
                merged.update({hw: r for hw, r in extra.items() if hw not in entry.regime_per_hw})
                entry = evolve(entry, regime_per_hw=merged)
            entries.append(entry)
        out[name] = evolve(sweep, entries=tuple(entries))
    return out


def classify_entries(
    registry: Registry, sweep: Sweep, hw: str, entries: Sequence[SweepEntry] | None = None
) -> list[str]:
    """The classifier's label of every entry of ``sweep`` on target ``hw`` (batched per dtype)."""
    entries = list(sweep.entries if entries is None else entries)
    target = registry.target(hw)
    labels: list[str] = [""] * len(entries)
    groups: dict[tuple[str, str], list[int]] = {}
    for i, e in enumerate(entries):
        groups.setdefault((e.op or sweep.op, e.dtype), []).append(i)
    for (op_name, dtype), index in groups.items():
        op = registry.op(op_name)
        shapes = np.array([entries[i].shape for i in index], dtype=np.int64)
        for i, label in zip(index, classify(registry, target, op, shapes, dtype), strict=True):
            labels[i] = str(label)
    return labels


def label_inline(
    registry: Registry, sweeps: dict[str, Sweep], hws: Iterable[str], update_only: bool = False
) -> tuple[dict[str, Sweep], list[LabelChange]]:
    """Set the labels of ``hws`` in every sweep; returns the new sweeps and what moved.

    With ``update_only``, only targets that already have labels are relabelled.
    """
    out: dict[str, Sweep] = {}
    changes: list[LabelChange] = []
    hws = list(hws)
    for name, sweep in sweeps.items():
        entries = list(sweep.entries)
        for hw in hws:
            if update_only and not any(hw in e.regime_per_hw for e in entries):
                continue
            labels = classify_entries(registry, sweep, hw, entries)
            for i, (entry, label) in enumerate(zip(entries, labels, strict=True)):
                old = entry.regime_per_hw.get(hw)
                if old != label:
                    changes.append(
                        LabelChange(name, entry.op or sweep.op, entry.key, hw, old, label)
                    )
                    merged = dict(entry.regime_per_hw)
                    merged[hw] = label
                    entries[i] = evolve(entry, regime_per_hw=merged)
        out[name] = evolve(sweep, entries=tuple(entries))
    return out, changes


def overlay_for(registry: Registry, sweeps: dict[str, Sweep], hws: Sequence[str]) -> dict[str, Any]:
    """An overlay with the labels of ``hws`` for every shipped sweep."""
    labels: dict[str, dict[str, dict[str, str]]] = {}
    for name, sweep in sorted(sweeps.items()):
        per_entry: dict[str, dict[str, str]] = {}
        for hw in hws:
            for entry, label in zip(
                sweep.entries, classify_entries(registry, sweep, hw), strict=True
            ):
                per_entry.setdefault(entry.key, {})[hw] = label
        labels[name] = per_entry
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": OVERLAY_KIND,
        "targets": sorted(hws),
        "labels": labels,
    }


def write_overlay(overlay: dict[str, Any], path: str | Path) -> None:
    """Write an overlay: one line per sweep entry, stable order."""
    lines = ["{"]
    for key in ("schema_version", "kind", "targets"):
        lines.append(f"  {json.dumps(key)}: {json.dumps(overlay[key])},")
    lines.append('  "labels": {')
    sweeps = []
    for name, per_entry in overlay["labels"].items():
        body = ",\n".join(
            f"      {json.dumps(key)}: {json.dumps(dict(sorted(v.items())))}"
            for key, v in per_entry.items()
        )
        sweeps.append(f"    {json.dumps(name)}: {{\n{body}\n    }}")
    lines.append(",\n".join(sweeps))
    lines.append("  }")
    lines.append("}")
    from graphsval_core.files.outputs import write_text_atomic

    write_text_atomic(path, "\n".join(lines) + "\n", SweepFileError)


def write_all(sweeps: dict[str, Sweep], folder: str | Path) -> set[str]:
    """Write every sweep into ``folder``, all or none (a calibration sweep of
    a new draw never lands beside the validation sweep of an old one), but
    for a file that already holds those bytes, which is left as it is.
    Returns the names written."""
    texts = {name: dump_sweep(sweep) for name, sweep in sweeps.items()}
    changed = {name for name, text in texts.items() if not _holds(Path(folder) / name, text)}
    write_texts_atomic(
        [(Path(folder) / n, texts[n], None) for n in texts if n in changed], SweepFileError
    )
    return changed


def _holds(path: Path, text: str) -> bool:
    """Whether the regular file at ``path`` holds ``text`` as UTF-8 already."""
    try:
        return path.is_file() and path.read_bytes() == text.encode("utf-8")
    except OSError:
        return False
