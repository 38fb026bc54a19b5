"""``a0org validate``: check doctrines, organizations, ``active.json``, ``steering.yaml``, ``supervisors.yaml`` and SALUTE reports."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from org.contracts import schema_model
from org.kernel import cascade, loading
from org.kernel.loading import DocumentError, Problem
from org.kernel.paths import OrganizationLayout
from org.schema_export import ROLE_LAYER

_SUFFIXES = {".yaml", ".yml", ".json"}
#: Folders of machine-written state (the supervisors' ledger and counters, the knowledge review
#: queue), not documents a person edits.
_SKIPPED_FOLDERS = {"schemas", "supervisors", "_review"}
#: Files the pack reads by name, wherever they are: steering.yaml, also the XO's copy.
_KIND_BY_NAME = {"steering.yaml": "steering", "supervisors.yaml": "supervisors_config", "active.json": "active_organization",
                 "salute.json": "salute_report", cascade.OVERRIDES_NAME: "organization_overrides"}
#: Documents the kernel finds by file name, and the field that must match it.
_FOUND_BY_NAME = {"role_profile": "role_id", "organization": "org_id"}


def _files(paths: list[Path]) -> tuple[list[Path], list[Problem]]:
    files, problems = [], []
    for path in paths:
        if path.is_dir():
            files.extend(sorted(p for p in path.rglob("*") if p.suffix in _SUFFIXES and p.is_file() and ".a0org-manifest" not in p.name and not _SKIPPED_FOLDERS.intersection(p.relative_to(path).parts[:-1])))
        elif path.is_file():
            files.append(path)
        else:
            problems.append(Problem(str(path), None, "", "no such file or folder"))
    return files, problems


def kind_by_location(path: Path) -> str | None:
    """The contract a file's name or folder gives it, whatever it holds (a misspelt key included)."""
    return _KIND_BY_NAME.get(path.name) or ("role_profile" if path.parent.name == "roles" and path.suffix in {".yaml", ".yml"} else None)


def validate_file(path: Path) -> list[Problem]:
    try:
        text = loading.read_text(path)
        data, lines = loading.parse(path, text)
    except DocumentError as exc:
        return exc.problems
    except UnicodeDecodeError:
        return [Problem(str(path), None, "", "not UTF-8 text")]
    kind = loading.schema_named_in_modeline(text) or kind_by_location(path) or loading.guess_kind(data, text)
    if kind == ROLE_LAYER or (kind == "role_profile" and isinstance(data, dict) and "extends" in data):
        return _problems_of(lambda: cascade.resolve_role(OrganizationLayout(path.parent.parent), path.stem, roles_dir=path.parent))
    if kind == "supervisors_config" and path.parent.parent.name == cascade.PROJECTS_FOLDER:
        # a project's settings are laid over the organizations folder's: checked merged
        from org.llm.config import read_config

        return _problems_of(lambda: read_config(path.parent.parent.parent / path.name, path))
    model = schema_model(kind) if kind else None
    if model is None:
        return [Problem(str(path), None, "", "cannot tell what this file is: add the schema modeline, or check it is a role, organization, active.json, steering.yaml, supervisors.yaml or SALUTE report")]
    try:
        document = loading.validate(model, data, path, lines)
        if kind in _FOUND_BY_NAME:
            loading.check_named_for_file(getattr(document, _FOUND_BY_NAME[kind]), _FOUND_BY_NAME[kind], path, lines)
    except DocumentError as exc:
        return exc.problems
    return _cascades_through(kind, document, path)


def _cascades_through(kind: str, document: Any, path: Path) -> list[Problem]:
    """A file that gives a part of other roles (the user's overrides, an organization's
    role_defaults): each role it reaches, checked with it merged in."""
    if kind == "role_profile" and path.parent.name == "roles":
        return _problems_of(lambda: cascade.resolve_role(OrganizationLayout(path.parent.parent), path.stem))
    if kind == "organization_overrides":
        folder = path.parent.parent.parent if path.parent.parent.name == cascade.PROJECTS_FOLDER else path.parent
        project = path.parent.name if folder != path.parent else None
        role_ids = sorted({p.stem for p in (folder / "roles").glob("*.yaml")} if document.every_role else set(document.roles))
        return [p for rid in role_ids
                for p in _problems_of(lambda rid=rid: cascade.resolve_role(OrganizationLayout(folder), rid, project=project))]
    if kind == "organization" and document.role_defaults:
        layout = OrganizationLayout(path.parent)
        return [p for rid in document.role_ids() if layout.role_file(rid).is_file()
                for p in _problems_of(lambda rid=rid: cascade.resolve_role(layout, rid, org_path=path))]
    return []


def _problems_of(check: Callable[[], Any]) -> list[Problem]:
    try:
        check()
    except DocumentError as exc:
        return exc.problems
    return []


def validate_paths(paths: list[Path]) -> tuple[list[Problem], int]:
    """Every problem once: a role's own mistake is also met through the overrides that reach it."""
    files, problems = _files(paths)
    for path in files:
        problems.extend(validate_file(path))
    return list(dict.fromkeys(problems)), len(files)


__all__ = ["validate_paths", "validate_file"]
