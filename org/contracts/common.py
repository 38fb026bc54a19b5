"""Pieces shared by every contract."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StringConstraints

from org.lazy_patterns import lazy_pattern

#: Identifiers that may become part of a file name (role ids, organization ids, units).
#: Lower case, digits, ``_`` and ``-``; no dots or slashes, so nothing can leave its folder.
IDENTIFIER_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,63}$"
_IDENTIFIER_RE = lazy_pattern(IDENTIFIER_PATTERN)

Identifier = Annotated[str, StringConstraints(pattern=IDENTIFIER_PATTERN)]

PaceLevel = Literal["primary", "alternate", "contingent", "emergency"]
PACE_LEVELS: tuple[str, ...] = ("primary", "alternate", "contingent", "emergency")

Health = Literal["nominal", "degraded", "critical"]
HEALTH_ORDER: tuple[str, ...] = ("nominal", "degraded", "critical")

#: "heartbeat" is the macrocosm's own: a unit whose reports stopped arriving.
AnomalyType = Literal["stall", "loop", "churn", "rerun", "context", "cascade", "pace", "heartbeat"]

#: How firmly the XO words a nudge; it rises while nudges go unanswered.
NudgeSeverity = Literal["hint", "warning", "critical"]

#: How recent a unit's last SALUTE report is, by its doctrine's heartbeat thresholds.
Freshness = Literal["fresh", "stale", "very_stale"]


def is_identifier(value: object) -> bool:
    return isinstance(value, str) and bool(_IDENTIFIER_RE.fullmatch(value))  # match() would let a trailing newline through


class Contract(BaseModel):
    """Base of every file contract.

    Unknown fields are mistakes, not extensions; and types are strict, as the JSON
    Schemas say: YAML's ``yes`` is not the number 1, and ``"3"`` is not 3. No number is
    NaN or infinite (YAML's ``.inf``, Python's JSON ``Infinity``): JSON has no way to write
    one back, and every comparison or sum with one goes wrong somewhere downstream.
    """

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False, defer_build=True)


def _not_a_bool(value: object) -> object:
    # Literal[1] alone lets True through, even in strict mode
    if isinstance(value, bool):
        raise ValueError("must be the number 1, not a boolean")
    return value


#: The version of a file format; only 1 exists.
SchemaVersion = Annotated[Literal[1], BeforeValidator(_not_a_bool)]

#: Times are ISO 8601 text in files, so they are parsed from text even in strict mode.
Timestamp = Annotated[datetime, Field(strict=False)]
