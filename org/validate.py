"""``a0org validate``: check doctrines, organizations, ``active.json``, ``steering.yaml``, ``supervisors.yaml`` and SALUTE reports."""

from __future__ import annotations

from pathlib import Path

from org.contracts import SCHEMAS
from org.kernel import loading
from org.kernel.loading import DocumentError, Problem

_SUFFIXES = {".yaml", ".yml", ".json"}
#: Folders of machine-written state (the supervisors' ledger and counters, the knowledge review
#: queue), not documents a person edits.
_SKIPPED_FOLDERS = {"schemas", "supervisors", "_review"}
#: Files the pack reads by name, wherever they are: steering.yaml, also the XO's copy.
_KIND_BY_NAME = {"steering.yaml": "steering", "supervisors.yaml": "supervisors_config", "active.json": "active_organization",
                 "salute.json": "salute_report"}
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
    if kind is None or kind not in SCHEMAS:
        return [Problem(str(path), None, "", "cannot tell what this file is: add the schema modeline, or check it is a role, organization, active.json, steering.yaml, supervisors.yaml or SALUTE report")]
    try:
        document = loading.validate(SCHEMAS[kind], data, path, lines)
        if kind in _FOUND_BY_NAME:
            loading.check_named_for_file(getattr(document, _FOUND_BY_NAME[kind]), _FOUND_BY_NAME[kind], path, lines)
    except DocumentError as exc:
        return exc.problems
    return []


def validate_paths(paths: list[Path]) -> tuple[list[Problem], int]:
    files, problems = _files(paths)
    for path in files:
        problems.extend(validate_file(path))
    return problems, len(files)


__all__ = ["validate_paths", "validate_file"]
