"""Reading doctrine, organization and SALUTE files, with errors a person can act on.

Every problem names the file, the line, the field path and the reason, e.g.::

    roles/codegen.yaml:31: pace_plan.alternate.trigger.metric: Input should be ...
"""

from __future__ import annotations

import copy
import difflib
import functools
import json
import re
import types as types_module
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from org.lazy_patterns import lazy_pattern

#: the C loader when PyYAML has it (several times faster on a doctrine), else the same in Python
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

from org.contracts.steering import PLACEHOLDERS, base_key

M = TypeVar("M", bound=BaseModel)


def load_yaml(text: str) -> Any:
    """YAML text to data, safely, with the C loader when PyYAML has it."""
    return yaml.load(text, Loader=_LOADER)


#: Files larger than this are refused before parsing: a doctrine is a page, not a novel.
MAX_DOCUMENT_BYTES = 1_000_000

_MODELINE_RE = lazy_pattern(r"yaml-language-server:\s*\$schema=\S*?([a-z_]+)\.schema\.json")


@dataclass(frozen=True)
class Problem:
    """One thing wrong with one file."""

    path: str
    line: int | None
    field: str
    reason: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.field or '(document)'}: {self.reason}"


class DocumentError(Exception):
    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


def _line_map(root: yaml.Node) -> dict[tuple, int]:
    """Map each field path in a YAML document to the line it starts on (1-based).

    Iterative, and each node is walked once: a deeply nested file cannot exhaust the
    stack, and aliases (shared nodes) cannot multiply the work.
    """
    lines: dict[tuple, int] = {}
    seen: set[int] = set()
    stack: list[tuple[yaml.Node, tuple]] = [(root, ())]
    while stack:
        node, prefix = stack.pop()
        lines.setdefault(prefix, node.start_mark.line + 1)
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                path = prefix + (key_node.value,)
                lines[path] = key_node.start_mark.line + 1
                stack.append((value_node, path))
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                stack.append((item, prefix + (index,)))
    return lines


def _data_path(loc: tuple, data: Any) -> tuple:
    """Drop pydantic's union tags from an error location, keeping only real keys."""
    path: list = []
    current = data
    for part in loc:
        if isinstance(current, dict) and part in current:
            path.append(part)
            current = current[part]
        elif isinstance(current, list) and isinstance(part, int) and 0 <= part < len(current):
            path.append(part)
            current = current[part]
        elif isinstance(current, dict) and isinstance(part, str) and part not in current and not path_is_tag(part):
            path.append(part)  # a missing or unknown field: still worth naming
            current = None
    return tuple(path)


def path_is_tag(part: str) -> bool:
    """Pydantic's names for the trigger shapes (see org/contracts/role.py), not data keys."""
    return part in {"Condition", "AnyOf", "AllOf"}


def _field_name(path: tuple) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def nearest_line(lines: dict[tuple, int], path: tuple) -> int | None:
    while True:
        if path in lines:
            return lines[path]
        if not path:
            return None
        path = path[:-1]


def read_text(path: Path) -> str:
    size = path.stat().st_size
    if size > MAX_DOCUMENT_BYTES:
        raise DocumentError([Problem(str(path), None, "", f"file is {size} bytes, over the {MAX_DOCUMENT_BYTES}-byte limit")])
    return path.read_text(encoding="utf-8")


def parse(path: Path | str, text: str | None = None) -> tuple[Any, dict[tuple, int]]:
    """Parse YAML or JSON, returning the data and a field-path -> line map."""
    try:
        text = read_text(Path(path)) if text is None else text
    except UnicodeDecodeError as exc:
        raise DocumentError([Problem(str(path), None, "", f"not UTF-8 text ({exc.reason})")]) from None
    except OSError as exc:
        raise DocumentError([Problem(str(path), None, "", f"cannot read: {exc.strerror or exc}")]) from None
    if not text.strip():
        return None, {}  # validate() reports "the file is empty"
    try:
        if str(path).endswith(".json"):
            return _parse_json(path, text)
        if len(text) > _REMEMBERED_TEXT_CHARS:
            return _parse_yaml(text)
        data, lines = _remembered_yaml(text)
        return copy.deepcopy(data), dict(lines)  # the caller may change what it gets
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        reason = getattr(exc, "problem", None) or str(exc)
        raise DocumentError([Problem(str(path), line, "", f"not valid YAML: {reason}")]) from None
    except RecursionError:
        raise DocumentError([Problem(str(path), None, "", "nested too deeply to be a doctrine or report")]) from None


#: YAML up to this size is parsed once per text: every unit's doctrine is the same few files,
#: read again by each store, each XO check and each validation, and a copy of the parsed data
#: costs under a tenth of parsing it
_REMEMBERED_TEXT_CHARS = 64_000


def _parse_yaml(text: str) -> tuple[Any, dict[tuple, int]]:
    node, data = _compose_and_construct(text)
    return data, (_line_map(node) if node is not None else {})


_remembered_yaml = functools.lru_cache(maxsize=64)(_parse_yaml)


def _compose_and_construct(text: str) -> tuple[Any, Any]:
    """The node tree (for line numbers) and the data, from one parse of ``text``."""
    loader = _LOADER(text)
    try:
        node = loader.get_single_node()
        return node, (loader.construct_document(node) if node is not None else None)
    finally:
        loader.dispose()


def _parse_json(path: Path | str, text: str) -> tuple[Any, dict[tuple, int]]:
    """JSON is read as JSON (tabs and all); lines come from the YAML view when it has one."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DocumentError([Problem(str(path), exc.lineno, "", f"not valid JSON: {exc.msg}")]) from None
    try:
        # raw tabs in valid JSON are only ever indentation, which YAML refuses; spaces keep the lines
        node = yaml.compose(text.replace("\t", " "), Loader=_LOADER)
    except (yaml.YAMLError, RecursionError):
        return data, {}
    return data, (_line_map(node) if node is not None else {})


def validate(model: type[M], data: Any, path: Path | str, lines: dict[tuple, int] | None = None) -> M:
    """Validate parsed data against a contract, raising :class:`DocumentError` with located problems."""
    lines = lines or {}
    if data is None:
        raise DocumentError([Problem(str(path), None, "", "the file is empty")])
    return validate_located(model, data, lambda field_path: (str(path), nearest_line(lines, field_path)))


def validate_located(model: type[M], data: Any, locate: Callable[[tuple], tuple[str, int | None]]) -> M:
    """Validate data merged from several files: ``locate`` says which file and line gave a field."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            field_path = _data_path(error["loc"], data)
            reason = error["msg"]
            if error["type"] == "missing":
                reason = "required field is missing"
            elif error["type"] == "value_error":
                reason = reason.removeprefix("Value error, ")
            elif error["type"] == "extra_forbidden":
                reason = unknown_field(model, field_path)
            elif error["type"] in ("literal_error", "enum") and isinstance(error["input"], str):
                reason = not_allowed(error["input"], re.findall(r"'([^']*)'", str((error.get("ctx") or {}).get("expected", ""))))
            problems.append(Problem(*locate(field_path), _field_name(field_path), reason))
        raise DocumentError(problems) from None


def did_you_mean(written: str, allowed: list[str]) -> str:
    # two characters swapped ('=>' for '>=') first: difflib's ratio would rather drop one
    close = [a for a in allowed if sorted(a) == sorted(written)] or difflib.get_close_matches(written, allowed, n=1, cutoff=0.6)
    return f"; did you mean '{close[0]}'?" if close else ""


def not_allowed(written: str, allowed: list[str]) -> str:
    """``got 'consecutive_tool_failure'; did you mean 'consecutive_tool_failures'? (allowed: ...)``"""
    return f"got {written!r}{did_you_mean(written, allowed)} (allowed: {', '.join(allowed)})"


def unknown_field(model: type[BaseModel], path: tuple) -> str:
    allowed = sorted(fields_at(model, path[:-1]) - {path[-1]}) if path else []
    hint = did_you_mean(str(path[-1]), allowed) if allowed else ""
    return f"unknown field{hint or ' (check the spelling against the schema)'}"


def fields_at(model: Any, path: tuple) -> set[str]:
    """The field names a mapping at ``path`` inside ``model`` may have (empty when unknown)."""
    types = [model]
    for part in path:
        inner = []
        for kind in _models_in(types):
            field = kind.model_fields.get(part) if isinstance(part, str) else None
            inner.extend([field.annotation] if field is not None else [])
        for kind in types:  # list items and dict values
            inner.extend(arg for arg in typing.get_args(kind) if typing.get_origin(kind) in (list, dict, tuple))
        types = inner
    return {name for kind in _models_in(types) for name in kind.model_fields}


def _models_in(types: list[Any]) -> list[type[BaseModel]]:
    found: list[type[BaseModel]] = []
    for kind in types:
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            found.append(kind)
        elif typing.get_origin(kind) in (typing.Union, types_module.UnionType, typing.Annotated):
            found.extend(_models_in(list(typing.get_args(kind))))
    return found


def load(model: type[M], path: Path, id_field: str | None = None) -> M:
    """Parse and validate ``path``; with ``id_field``, that id must also be the file's name."""
    data, lines = parse(path)
    document = validate(model, data, path, lines)
    if id_field is not None:
        check_named_for_file(getattr(document, id_field), id_field, path, lines)
    return document


def check_named_for_file(document_id: str, id_field: str, path: Path | str, lines: dict[tuple, int] | None = None) -> None:
    """The kernel finds roles and organizations by file name: an id that differs is refused."""
    stem = Path(path).stem
    if document_id != stem:
        raise DocumentError([Problem(str(path), (lines or {}).get((id_field,)), id_field,
                                     f"is '{document_id}' but the file is named for '{stem}'; rename one of them so they agree")])


def schema_named_in_modeline(text: str) -> str | None:
    """The schema stem a YAML file's modeline points at, e.g. ``role_profile``."""
    for line in text.splitlines()[:5]:
        match = _MODELINE_RE.search(line)
        if match:
            return match.group(1)
    return None


def guess_kind(data: Any, text: str) -> str | None:
    """Which contract a file holds: from its modeline, else from its keys."""
    named = schema_named_in_modeline(text)
    if named:
        return named
    if not isinstance(data, dict):
        return None
    if "role_id" in data and ("doctrine" in data or "pace_plan" in data):
        return "role_profile"
    if "hierarchy" in data and "org_id" in data:
        return "organization"
    if "status" in data and data.keys() & {"unit", "activity", "time", "environment"}:
        return "salute_report"
    if set(data) <= {"schema_version", "org_id", "activated_at", "activated_by"} and "org_id" in data:
        return "active_organization"
    if data.get("kind") == "header":
        return "trace_header"
    if data and all(isinstance(key, str) and base_key(key) in PLACEHOLDERS for key in data):
        return "steering"
    if isinstance(data.get("model"), dict) or isinstance(data.get("supervisors"), dict):
        return "supervisors_config"
    return None
