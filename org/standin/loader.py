"""A stand-in for Agent-Zero's extension loader, following its contract.

Files are loaded and classes picked by :mod:`org.a0.loader`, the one emulation of
Agent-Zero's loader contract (see docs/agent-zero.md). Calls are as Agent-Zero makes them:
a new instance per call, ``cls(agent=agent).execute(**kwargs)``. Up to v0.9.8.x every
``execute`` is awaited (a sync one fails); from v0.9.9 a returned awaitable is awaited.

The ``Extension`` base class the hook files import (``helpers.extension`` from v0.9.9,
``python.helpers.extension`` before) is provided for the duration of the load.
"""

from __future__ import annotations

import inspect
import sys
import types
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from org.a0.loader import load_folders

ERAS = ("C", "D")  # C: v0.9.8.x layout and API; D: v0.9.9+ / v1.x


class Extension:
    """The base class hook files subclass (same constructor as Agent-Zero's)."""

    def __init__(self, agent: Any, **kwargs: Any):
        self.agent = agent
        self.kwargs = kwargs

    def execute(self, **kwargs: Any) -> Any:  # pragma: no cover - overridden
        raise NotImplementedError


def base_module_name(era: str) -> str:
    return "helpers.extension" if era == "D" else "python.helpers.extension"


@contextmanager
def provided_modules(name: str, **attributes: Any) -> Iterator[None]:
    """Make module ``name`` (and its parent packages) importable, with ``attributes``,
    for the duration of the block; whatever was there before is put back."""
    parts = name.split(".")
    names = [".".join(parts[:i]) for i in range(1, len(parts) + 1)]
    saved = {n: sys.modules.get(n) for n in names}
    try:
        for i, module_name in enumerate(names):
            module = types.ModuleType(module_name)
            module.__path__ = []  # type: ignore[attr-defined]
            sys.modules[module_name] = module
            if i:
                setattr(sys.modules[names[i - 1]], parts[i], module)
        for attribute, value in attributes.items():
            setattr(sys.modules[name], attribute, value)
        yield
    finally:
        for module_name, module in saved.items():
            if module is None:
                sys.modules.pop(module_name, None)
            else:
                sys.modules[module_name] = module


def provided_base_class(era: str):
    """Make ``helpers.extension`` (or ``python.helpers.extension``) importable while loading."""
    return provided_modules(base_module_name(era), Extension=Extension)


def load_point(folders: list[Path], point: str, era: str) -> list[type[Extension]]:
    """The extension classes that run at ``point``, in order."""
    with provided_base_class(era):
        return load_folders([folder / point for folder in folders], Extension)


async def call_point(classes: list[type[Extension]], era: str, agent: Any, **kwargs: Any) -> None:
    for cls in classes:
        result = cls(agent=agent).execute(**kwargs)
        if era == "C":
            await result  # v0.9.8.x awaits every execute; a sync one fails here, as it would there
        elif inspect.isawaitable(result):
            await result
