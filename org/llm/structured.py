"""Structured output: the strongest ``response_format`` each endpoint accepts.

With ``json_mode`` on, a call first asks for ``json_schema`` (the supervisor's schema, so
a model that supports it cannot answer off-schema); an endpoint that refuses it (HTTP
400, 415 or 422) is asked again at once with ``json_object``, then with no
``response_format`` at all (the prompt asks for JSON either way). The level that worked
is remembered per endpoint and model for the life of the process, so the refusal is paid
for once. With ``json_mode`` off no ``response_format`` is sent.
"""

from __future__ import annotations

import threading
from typing import Any, Literal

from pydantic import BaseModel

from org.contracts.supervisors import ModelConfig

ResponseFormat = Literal["json_schema", "json_object", "none"]
LEVELS: tuple[ResponseFormat, ...] = ("json_schema", "json_object", "none")
#: Statuses with which an endpoint says it does not understand the request's shape.
REFUSED_STATUSES = frozenset({400, 415, 422})

_remembered: dict[tuple[str, str], ResponseFormat] = {}
_lock = threading.Lock()


def _endpoint(config: ModelConfig) -> tuple[str, str]:
    return config.base_url.rstrip("/"), config.model


def first_level(config: ModelConfig) -> ResponseFormat:
    """The format to ask for first: what worked last time, else ``json_schema`` (``none`` without json_mode)."""
    if not config.json_mode:
        return "none"
    with _lock:
        return _remembered.get(_endpoint(config), "json_schema")


def lower_level(level: ResponseFormat) -> ResponseFormat | None:
    """The next weaker format, or None after ``none``."""
    index = LEVELS.index(level)
    return LEVELS[index + 1] if index + 1 < len(LEVELS) else None


def remember(config: ModelConfig, level: ResponseFormat) -> None:
    """The endpoint answered at ``level``: start there next time."""
    with _lock:
        _remembered[_endpoint(config)] = level


def forget_all() -> None:
    """Start over (tests)."""
    with _lock:
        _remembered.clear()


def response_format(level: ResponseFormat, schema: type[BaseModel]) -> dict[str, Any] | None:
    """The request's ``response_format`` for ``level`` (None: leave it out)."""
    if level == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": schema.__name__, "schema": schema.model_json_schema(), "strict": False}}
    if level == "json_object":
        return {"type": "json_object"}
    return None


__all__ = ["LEVELS", "REFUSED_STATUSES", "ResponseFormat", "first_level", "forget_all", "lower_level", "remember", "response_format"]
