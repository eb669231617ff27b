"""Provenance: where every number of a target spec comes from.

Each numeric field of a spec carries a :class:`Provenance`: its kind
(``datasheet``, ``derived``, ``estimated``, ``detected`` or ``calibrated``) and a
free-text source (the datasheet, the formula, the file that was read).

Spec authors write a value together with its source, e.g.
``datasheet(3.35e12, "NVIDIA H100 datasheet: HBM3 3.35 TB/s")``; the spec
record keeps the plain number and files the provenance under the field name.
"""

from __future__ import annotations

from typing import Any

from attrs import field, frozen

PROVENANCE_KINDS: tuple[str, ...] = (
    "datasheet",
    "derived",
    "estimated",
    "detected",
    "calibrated",
)


def _check_kind(instance: Any, attribute: Any, value: str) -> None:
    if value not in PROVENANCE_KINDS:
        raise ValueError(f"provenance kind {value!r} is not one of {', '.join(PROVENANCE_KINDS)}")


@frozen
class Provenance:
    """Where one number comes from."""

    kind: str = field(validator=_check_kind)
    source: str = ""

    def __str__(self) -> str:
        return f"{self.kind}: {self.source}" if self.source else self.kind


@frozen
class Sourced:
    """A number paired with its provenance, used while writing a spec."""

    value: float
    provenance: Provenance


def datasheet(value: float, source: str) -> Sourced:
    """A figure published by the vendor."""
    return Sourced(value, Provenance("datasheet", source))


def derived(value: float, source: str) -> Sourced:
    """A figure computed from datasheet figures; ``source`` states the formula."""
    return Sourced(value, Provenance("derived", source))


def estimated(value: float, source: str) -> Sourced:
    """An order-of-magnitude figure that calibration is expected to refine."""
    return Sourced(value, Provenance("estimated", source))


def detected(value: float, source: str) -> Sourced:
    """A figure read from the machine this runs on."""
    return Sourced(value, Provenance("detected", source))


def calibrated(value: float, source: str) -> Sourced:
    """A figure fitted from calibration rows."""
    return Sourced(value, Provenance("calibrated", source))
