"""One supervision event: a line of ``<organizations folder>/events/events.jsonl``."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from .common import AnomalyType, Contract, Identifier, SchemaVersion, Timestamp

#: What happened. ``progress``: the agent made progress again after steering or a block.
EventType = Literal["radio_check", "steering", "block", "pause", "resume", "progress"]
EVENT_TYPES: tuple[str, ...] = EventType.__args__  # type: ignore[attr-defined]
#: Text kept in an event (steering is at most three sentences).
MAX_EVENT_TEXT = 2000


class SupervisionEvent(Contract):
    """What the supervisor did or saw, for ``a0org events`` and ``a0org stats``. Never a
    secret: its text is redacted before it is written."""

    schema_version: SchemaVersion = 1
    time: Timestamp
    type: EventType
    chat: str | None = Field(None, max_length=200, description="Agent-Zero's chat (context) id.")
    project: str | None = Field(None, max_length=200, description="The chat's Agent-Zero project, if any.")
    role: Identifier | None = None
    turn: int | None = Field(None, ge=0, description="The supervisor's turn count in that chat.")
    anomaly: AnomalyType | None = None
    findings: list[AnomalyType] = Field(default_factory=list, description="radio_check: what it found.")
    text: str | None = Field(None, max_length=MAX_EVENT_TEXT)
