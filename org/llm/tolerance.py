"""Schema tolerance: the harmless repairs made to a model's JSON before it is given up.

Decided per kind of field, from the supervisor's own pydantic schema (nothing restated):

=============================  =====================================================
the answer has ...             what happens
=============================  =====================================================
a field the schema lacks       ignored (dropped), noted
free text over its limit       cut at the limit, ending in "…", noted; free text is a
                               string with a length limit and no pattern or fixed
                               values (summary, rationale, description, title, rules,
                               examples, findings, knowledge items)
a list over its limit          the first items kept, noted (the queue and the store
                               cap them anyway)
a fixed value in another case  lower-cased when that is one of the allowed values
                               ("Cleanup" -> "cleanup"), noted
anything else                  not changed: a wrong type, a missing field, an
                               identifier (document name, topic, directive id, file
                               name, category, keyword) that breaks its pattern; the
                               answer goes to the repair round
=============================  =====================================================
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from org.lazy_patterns import lazy_pattern

#: Rounds of fixes before the remaining errors are reported (each round fixes every fixable error).
MAX_ROUNDS = 5
_QUOTED = lazy_pattern(r"'([^']*)'")


@dataclass
class Tolerated:
    """The validated value with notes, or the errors that remain."""

    value: BaseModel | None
    notes: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def where(loc: tuple[Any, ...]) -> str:
    return ".".join(str(part) for part in loc) or "(object)"


def tolerate(data: dict[str, Any], schema: type[BaseModel]) -> Tolerated:
    """``data`` validated against ``schema`` after the harmless repairs in the module doc."""
    data = copy.deepcopy(data)
    notes: list[str] = []
    json_schema = schema.model_json_schema()
    for _ in range(MAX_ROUNDS):
        try:
            return Tolerated(schema.model_validate_json(json.dumps(data)), notes)  # JSON rules, as the answer came
        except ValidationError as exc:
            errors = exc.errors()
        fixed = [note for error in errors if (note := _fix(data, error, json_schema)) is not None]
        if not fixed:
            return Tolerated(None, notes, [f"{where(tuple(e.get('loc', ())))}: {e.get('msg')}" for e in errors])
        notes += fixed
    try:
        return Tolerated(schema.model_validate_json(json.dumps(data)), notes)
    except ValidationError as exc:
        return Tolerated(None, notes, [f"{where(tuple(e.get('loc', ())))}: {e.get('msg')}" for e in exc.errors()])


def _fix(data: Any, error: dict[str, Any], json_schema: dict[str, Any]) -> str | None:
    loc, kind, ctx = tuple(error.get("loc", ())), error.get("type"), error.get("ctx") or {}
    if not loc:
        return None
    parent, key = _parent(data, loc)
    if parent is None:
        return None
    if kind == "extra_forbidden" and isinstance(parent, dict) and key in parent:
        del parent[key]
        return f"unknown field {where(loc)} ignored"
    value = parent[key]
    if kind == "string_too_long" and isinstance(value, str) and _free_text(_node(json_schema, loc, json_schema)):
        limit = int(ctx.get("max_length", 0))
        if limit < 1:
            return None
        parent[key] = value[: limit - 1].rstrip() + "…"
        return f"{where(loc)} cut from {len(value)} to {limit} characters"
    if kind == "too_long" and isinstance(value, list):
        limit = int(ctx.get("max_length", 0))
        parent[key] = value[:limit]
        return f"{where(loc)}: first {limit} of {len(value)} items kept"
    if kind == "literal_error" and isinstance(value, str):
        allowed = _QUOTED.findall(str(ctx.get("expected", "")))
        lowered = value.strip().lower()
        if lowered != value and lowered in allowed:
            parent[key] = lowered
            return f"{where(loc)}: {value!r} read as {lowered!r}"
    return None


def _parent(data: Any, loc: tuple[Any, ...]) -> tuple[Any, Any]:
    """The container holding ``loc``'s value, and its key or index; (None, None) when it is not there."""
    node = data
    for part in loc[:-1]:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return None, None
    last = loc[-1]
    if isinstance(node, dict) and last in node or isinstance(node, list) and isinstance(last, int) and -len(node) <= last < len(node):
        return node, last
    return None, None


def _node(node: dict[str, Any], loc: tuple[Any, ...], root: dict[str, Any]) -> dict[str, Any]:
    """The JSON Schema that applies at ``loc`` ({} when it cannot be followed)."""
    for part in loc:
        node = _resolved(node, root)
        if isinstance(part, int):
            node = node.get("items", {}) if isinstance(node.get("items"), dict) else {}
        else:
            node = (node.get("properties") or {}).get(part, {})
    return _resolved(node, root)


def _resolved(node: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    for _ in range(10):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            node = (root.get("$defs") or {}).get(ref.rsplit("/", 1)[1], {})
            continue
        variants = [v for v in node.get("anyOf", []) if isinstance(v, dict) and v.get("type") != "null"]
        if len(variants) == 1 and "type" not in node:
            node = variants[0]
            continue
        return node
    return node


def _free_text(node: dict[str, Any]) -> bool:
    """A string whose only rule is its length: cutting it loses words, never meaning of an identifier."""
    return node.get("type") == "string" and not any(k in node for k in ("pattern", "enum", "const", "format"))


__all__ = ["Tolerated", "tolerate"]
