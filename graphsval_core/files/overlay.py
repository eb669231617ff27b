"""Sweep-label overlay files: the schema a plugin's overlay is checked against.

An overlay (``graphsval sweep label --hw KEY --out FILE``) holds the labels of
the targets it declares for the entries of the shipped sweeps::

    {"schema_version": 1, "kind": "graphsval-sweep-labels", "targets": ["acme_npu1"],
     "labels": {"matmul_validation.json": {"64x64x64 fp32": {"acme_npu1": "l1_bound"}}}}

:func:`overlay_from` checks the layout alone (known keys, types, labels from
the regime vocabulary, declared targets listed once); whether each sweep and
entry exists is checked when the overlay is merged
(:func:`graphsval_core.sweep.labels.merge_overlay`).
"""

from __future__ import annotations

from typing import Any

from graphsval_core.datamodel.regimes import LABELS
from graphsval_core.files import schema
from graphsval_core.files.jsonfile import parse_json
from graphsval_core.files.sweep import SweepFileError

SCHEMA_VERSION = 1
OVERLAY_KIND = "graphsval-sweep-labels"
_ERR = SweepFileError


def read_overlay(data: bytes | str, where: str) -> dict[str, Any]:
    """The checked overlay of the bytes or text of file ``where``."""
    return overlay_from(parse_json(data, where, SweepFileError), where)


def overlay_from(data: Any, where: str) -> dict[str, Any]:
    """``data`` (a parsed overlay file), checked (see the module doc)."""
    top = schema.obj(data, where, _ERR)
    if top.get("kind") != OVERLAY_KIND:
        raise SweepFileError(
            f"{where}: not a sweep-label overlay (kind {top.get('kind')!r}, "
            f"expected {OVERLAY_KIND!r})"
        )
    schema.keys(
        top, where, _ERR, required=("kind", "targets", "labels"), optional=("schema_version",)
    )
    schema.schema_version(top, where, _ERR, SCHEMA_VERSION)
    targets = top["targets"]
    if not isinstance(targets, list):
        raise SweepFileError(f"{where}: 'targets' must be a list of target keys")
    for i, key in enumerate(targets):
        schema.string(key, f"{where}: targets[{i}]", _ERR)
        if targets.index(key) != i:
            raise SweepFileError(f"{where}: targets[{i}]: {key!r} is listed twice")
    labels = schema.obj(top["labels"], f"{where}: labels", _ERR)
    for name, per_entry in labels.items():
        at = f"{where}: labels.{name}"
        for key, per_hw in schema.obj(per_entry, at, _ERR).items():
            for hw, label in schema.obj(per_hw, f"{at}.{key}", _ERR).items():
                if not isinstance(label, str) or label not in LABELS:
                    raise SweepFileError(
                        f"{at}.{key}.{hw}: label {label!r} is not a regime ({', '.join(LABELS)})"
                    )
    return top
