"""Replay trace: a recorded session as JSON lines, run by ``a0org replay``.

The first line may be a header naming the role and doctrine overrides; every other
line is one turn, or a further call of the turn before when it repeats its number.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from .common import Contract, Identifier, PaceLevel


class TraceHeader(Contract):
    kind: Literal["header"]
    role: Identifier | None = None
    doctrine: dict[str, Any] = Field(default_factory=dict, description="Overrides merged into the role's doctrine.")
    organization: Identifier | None = None


class TraceHtn(Contract):
    turns_since_progress: int = Field(ge=0)
    current_step: str | None = None
    plan_name: str | None = None


class TraceBst(Contract):
    domain: str
    confidence: float | None = Field(None, ge=0, le=1)


class TraceTurn(Contract):
    turn: int = Field(ge=0, description=(
        "The model reply's number. A line with the turn of the line before is a further call of that reply, sent "
        "with it before any result was seen (parallel tool calls); the reply's other fields go on its first line."))
    user: str | None = Field(None, description="A new user message (a new task) before this turn's action.")
    tool: str | None = None
    args: dict[str, Any] | None = None
    ok: bool | None = Field(None, description="When absent, the failure classifier decides from output.")
    error_type: str | None = None
    output: str | None = None
    response: str | None = Field(None, description="The model's raw response text this turn.")
    htn: TraceHtn | None = None
    bst: TraceBst | None = None
    pace: PaceLevel | None = Field(None, description="When absent, the dispatcher computes it.")
    context_fill: float | None = Field(None, ge=0, description=(
        "Share of the context window this turn's prompt used: 1.0 is full, more when the prompt was larger than the window."))
