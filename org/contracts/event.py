"""One supervision event: a line of ``<organizations folder>/events/events.jsonl``."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from .common import AnomalyType, Contract, Identifier, SchemaVersion, Timestamp

#: What happened. ``progress``: the agent made progress again after steering or a block (for
#: the XO: the unit recovered). ``heartbeat``: a unit went very stale; ``degraded``: the XO
#: cannot use a unit's report and supervises it by heartbeat alone; ``relay``: the XO sent a
#: unit what other units learned (``sources``); ``supervisor_run``: an LLM-backed supervisor's
#: run ended (``supervisor``, ``outcome``, ``tokens``, ``cost_usd``); ``directive_done``: the
#: agent marked a directive as dealt with (``directive``).
EventType = Literal["radio_check", "steering", "block", "pause", "resume", "progress", "heartbeat", "degraded", "relay",
                    "supervisor_run", "directive_done"]
EVENT_TYPES: tuple[str, ...] = EventType.__args__  # type: ignore[attr-defined]


class SupervisionEvent(Contract):
    """What the supervisor did or saw, for ``a0org events`` and ``a0org stats``. It names the
    steering text (its template) rather than quoting it: the text quotes the agent's commands,
    and is in the chat already."""

    schema_version: SchemaVersion = 1
    time: Timestamp
    type: EventType
    chat: str | None = Field(None, max_length=200, description="Agent-Zero's chat (context) id.")
    unit: Identifier | None = Field(None, description="The unit, for an event the XO wrote.")
    project: str | None = Field(None, max_length=200, description="The chat's Agent-Zero project, if any.")
    role: Identifier | None = None
    turn: int | None = Field(None, ge=0, description="The supervisor's turn count in that chat.")
    anomaly: AnomalyType | None = None
    findings: list[AnomalyType] = Field(default_factory=list, description="radio_check: what it found.")
    template: str | None = Field(None, max_length=80, description="The steering text's key (org/supervisor/steering.yaml).")
    sources: list[Identifier] = Field(default_factory=list, max_length=8, description="relay: the units the learnings came from.")
    supervisor: Identifier | None = Field(None, description="supervisor_run: the LLM-backed supervisor.")
    outcome: str | None = Field(None, max_length=20, description="supervisor_run: applied, failed, refused, skipped, ...")
    tokens: int | None = Field(None, ge=0, description="supervisor_run: prompt and completion tokens.")
    cost_usd: float | None = Field(None, ge=0, description="supervisor_run: what the run cost, when the model's prices are known.")
    directive: str | None = Field(None, pattern=r"^D[1-9][0-9]{0,8}$", description="directive_done: the directive's id.")
