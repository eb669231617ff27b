"""Option types every command shares: finite numbers within bounds.

click's ``FloatRange`` lets ``nan`` and ``inf`` through (no comparison with
NaN is false); :class:`Seconds` refuses both, so that a time limit is always
a number of seconds.
"""

from __future__ import annotations

import math
from typing import Any

import click


class Seconds(click.FloatRange):
    """A finite number of seconds in ``[low, high]``."""

    name = "seconds"

    def __init__(self, low: float, high: float) -> None:
        super().__init__(min=low, max=high)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number of seconds", param, ctx)
        return number
