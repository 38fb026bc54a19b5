"""Dicts kept as bounded memories: a dict keeps its insertion order, so its oldest entries are its first."""

from __future__ import annotations

from typing import Any


def drop_oldest(memory: dict[Any, Any], most: int) -> None:
    """Drop the oldest entries until at most ``most`` remain (an entry re-inserted is new again)."""
    while len(memory) > most:
        memory.pop(next(iter(memory)))
