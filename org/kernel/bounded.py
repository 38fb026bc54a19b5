"""Dicts kept as bounded memories: a dict keeps its insertion order, so its oldest entries are its first."""

from __future__ import annotations

from typing import Any, Callable


def drop_oldest(memory: dict[Any, Any], most: int, keep: Callable[[Any], bool] | None = None) -> None:
    """Drop the oldest entries until at most ``most`` remain (an entry re-inserted is new again);
    never one whose value ``keep`` accepts (then more may remain)."""
    while len(memory) > most:
        oldest = next(iter(memory)) if keep is None else next((k for k, v in memory.items() if not keep(v)), None)
        if oldest is None:
            return
        memory.pop(oldest)
