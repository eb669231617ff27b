"""Output helpers shared by commands: JSON (tables: :mod:`graphsval_core.datamodel.tables`)."""

from __future__ import annotations

import json
from typing import Any

import click


def echo_json(data: Any) -> None:
    """Print ``data`` as indented JSON."""
    click.echo(json.dumps(data, indent=2, sort_keys=False, default=str))
