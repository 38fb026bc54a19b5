"""Checks for numbers other layers hand us: they may be anything."""

from __future__ import annotations

import math
from typing import Any


def plain_number(value: Any, low: float, high: float) -> bool:
    """A real number (not a bool, not NaN or infinite) with ``low <= value < high``.

    Integers are compared as integers: ``10**400`` is out of range, not an OverflowError.
    """
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return low <= value < high
    if isinstance(value, float):
        return math.isfinite(value) and low <= value < high
    return False


def is_int(value: Any) -> bool:
    """An int that is not a bool (``True`` is an int to Python, never a count to us)."""
    return isinstance(value, int) and not isinstance(value, bool)


def count_or(value: Any, default: Any = 0) -> Any:
    """``value`` when it is a non-negative int (not a bool), else ``default``."""
    return value if is_int(value) and value >= 0 else default
