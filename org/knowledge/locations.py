"""Where a project's knowledge and directives live: one store and one queue per Agent-Zero project.

A chat in an Agent-Zero project (``usr/projects/<name>/``) gets the store and the
directive queue of that project, ``<organizations>/projects/<name>/``; a chat without a
project (or an Agent-Zero without projects) gets the global ones, ``<organizations>/``.
The conventions of one code base never reach the prompt of another.

::

    <organizations>/
    ├── knowledge/              the global store (knowledge.root in supervisors.yaml moves it)
    ├── supervisors/            directives.json, digests.jsonl, state.json of chats without a project;
    │                           runs.jsonl and usage.json of every run
    └── projects/<name>/
        ├── knowledge/          that project's store
        └── supervisors/        its directives.json, digests.jsonl, state.json
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

PROJECTS = "projects"
SUPERVISORS = "supervisors"
KNOWLEDGE = "knowledge"
MAX_PROJECT_CHARS = 120


def project_name(value: Any) -> str | None:
    """An Agent-Zero project name usable as a folder name, else None (a chat without a project)."""
    if not isinstance(value, str):
        return None
    name = value.strip()
    if not name or len(name) > MAX_PROJECT_CHARS or name.startswith(".") or any(c in name for c in "/\\\x00"):
        return None
    return name


def scope_folder(organizations: Path, project: str | None) -> Path:
    """The folder holding one project's ``knowledge/`` and ``supervisors/`` (the organizations folder for none)."""
    name = project_name(project)
    return organizations if name is None else organizations / PROJECTS / name


def knowledge_root(organizations: Path, project: str | None, configured: str | None = None) -> Path:
    """The store of ``project``; ``configured`` (``knowledge.root``) moves only the global store."""
    if project_name(project) is None and configured:
        path = Path(configured)
        return path if path.is_absolute() else organizations / path
    return scope_folder(organizations, project) / KNOWLEDGE


def directives_path(organizations: Path, project: str | None) -> Path:
    return scope_folder(organizations, project) / SUPERVISORS / "directives.json"


def directives_beside(store_root: Path) -> Path:
    """The queue that belongs with a store given by its folder (``--root``): ``<store>/../supervisors/directives.json``."""
    return store_root.parent / SUPERVISORS / "directives.json"


def projects_with_stores(organizations: Path) -> list[str]:
    """Projects that have a store or a queue of their own, by name."""
    folder = organizations / PROJECTS
    try:
        return sorted(p.name for p in folder.iterdir() if p.is_dir() and project_name(p.name) is not None)
    except OSError:
        return []


def describe(project: str | None) -> str:
    name = project_name(project)
    return f"project {name!r}" if name else "the global store (no project)"


__all__ = ["describe", "directives_beside", "directives_path", "knowledge_root", "project_name", "projects_with_stores",
           "scope_folder"]
