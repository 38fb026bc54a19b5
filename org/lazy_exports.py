"""A package's public names, each imported from its module on first use (PEP 562).

A package that re-exports from many modules would otherwise load them all, and what they
import, whenever any one of them is needed: every command's start would pay for them.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable


def lazy_exports(package: str, homes: dict[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``: ``homes`` maps each public name to the
    module that defines it (``.module`` relative to the package, or an absolute module name)."""

    def __getattr__(name: str) -> Any:
        if name not in homes:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(homes[name], package), name)
        setattr(importlib.import_module(package), name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(importlib.import_module(package))) | set(homes))

    return __getattr__, __dir__
