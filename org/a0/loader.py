"""Agent-Zero's extension loader contract, in one place (docs/agent-zero.md).

As ``helpers/modules.py::load_classes_from_folder`` and ``helpers/extension.py`` do it:

* a file is executed with ``spec_from_file_location(<basename>, path)`` and
  ``exec_module``, and never registered in ``sys.modules``;
* of the ``Extension`` subclasses in its namespace, the one whose name sorts last is kept
  (the loader walks ``inspect.getmembers`` backwards and takes the first);
* folders are searched in priority order and the first file of a given name wins;
* the survivors are sorted by file name (plain string order).

``doctor`` loads installed hooks through it to prove they load; the stand-in Agent-Zero
(:mod:`org.standin.loader`) runs the pack's hooks through it. Standard library only.
"""

from __future__ import annotations

import importlib.util
import inspect
from pathlib import Path
from types import ModuleType
from typing import Iterable


class UnloadableFile(ImportError):
    """Python has no loader for the file (not a ``.py`` file)."""


def load_module(path: Path) -> ModuleType:
    """Execute ``path`` under its bare file name, without putting it in ``sys.modules``."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    if spec is None or spec.loader is None:
        raise UnloadableFile(f"Python cannot load {path} as a module")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def extension_classes(module: ModuleType, base: type) -> list[type]:
    """The module's subclasses of ``base``, sorted by name: the loader keeps the last."""
    return [cls for _, cls in inspect.getmembers(module, inspect.isclass) if cls is not base and issubclass(cls, base)]


def kept_class(classes: list[type]) -> type | None:
    return classes[-1] if classes else None


def load_folders(folders: Iterable[Path], base: type) -> list[type]:
    """The classes that run from ``folders`` (highest priority first), in running order."""
    chosen: dict[str, type] = {}
    for folder in folders:
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.py")):
            if path.name in chosen:
                continue  # a folder earlier in priority order already provides this file
            cls = kept_class(extension_classes(load_module(path), base))
            if cls is not None:
                chosen[path.name] = cls
    return [chosen[name] for name in sorted(chosen)]
