"""The LLM-backed supervisors' files: what each supervisor's model must answer, and
what the supervisors keep on disk.

* ``CodeStyleOutput``, ``DesignOutput``, ``InternaliserOutput``: the JSON a
  supervisor's model must return (documents in the knowledge store's draft form). An
  answer that does not validate is discarded whole.
* ``SupervisorRun``: one line of ``<organizations>/supervisors/runs.jsonl`` per run.
* ``SupervisorAnswers``: one line of ``<organizations>/supervisors/answers.jsonl`` per run
  that got an answer: the raw answers as received, redacted.
* ``SupervisorsState``: ``<organizations>/supervisors/state.json``, the trigger counters.
* ``TaskDigest``: one line of ``<organizations>/supervisors/digests.jsonl`` per task.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from .common import Contract, SchemaVersion, Timestamp
from .knowledge import DIRECTIVE_ID_PATTERN, KnowledgeDraft
from .supervisors import SUPERVISOR_NAMES, SupervisorName

Trigger = Literal["periodic", "milestone", "abort", "replan", "urgency", "manual"]
Priority = Literal["critical", "normal", "low"]

Line = Annotated[str, StringConstraints(min_length=1, max_length=300)]
ShortText = Annotated[str, StringConstraints(max_length=300)]
FileName = Annotated[str, StringConstraints(min_length=1, max_length=300)]
DirectiveId = Annotated[str, StringConstraints(pattern=DIRECTIVE_ID_PATTERN)]
_RESOLVED_HELP = "Ids of pending directives (yours) that the recent work has resolved."


# --------------------------------------------------------------------------- model outputs


class _DirectiveFields(Contract):
    description: Line = Field(description="What needs to be done (about 200 characters).")
    rationale: ShortText = Field("", description="Why it needs to be done (about 200 characters).")
    files: list[FileName] = Field(default_factory=list, max_length=20)


class CleanupDirective(_DirectiveFields):
    type: Literal["cleanup"]
    priority: Priority = "low"


class DesignDirective(_DirectiveFields):
    type: Literal["functional", "cleanup"]
    priority: Priority = "normal"


class ConventionDraft(KnowledgeDraft):
    """A convention document: the code style supervisor's only category."""

    category: Literal["conventions"] = Field("conventions", description="Always conventions: the code style supervisor's folder.")


class DesignDraft(KnowledgeDraft):
    """A design document: the design supervisor's only category."""

    category: Literal["design"] = Field("design", description="Always design: the design supervisor's folder.")


class CodeStyleOutput(Contract):
    """Code style supervisor: conventions written or updated, cleanup directives."""

    conventions_updated: list[ConventionDraft] = Field(default_factory=list, max_length=6,
                                                      description="Convention documents written or updated (category conventions).")
    inconsistencies: list[Line] = Field(default_factory=list, max_length=30,
                                        description="Each place the recent code breaks a convention, one line each.")
    directives: list[CleanupDirective] = Field(default_factory=list, max_length=10)
    resolved: list[DirectiveId] = Field(default_factory=list, max_length=20, description=_RESOLVED_HELP)
    summary: str = Field(max_length=500)


class DesignOutput(Contract):
    """Design supervisor: design documents written or updated, directives for approach changes."""

    design_updates: list[DesignDraft] = Field(default_factory=list, max_length=6,
                                                 description="Design documents written or updated (category design).")
    divergences: list[Line] = Field(default_factory=list, max_length=30,
                                    description="Where what was built diverges from the design, one line each.")
    directives: list[DesignDirective] = Field(default_factory=list, max_length=10)
    resolved: list[DirectiveId] = Field(default_factory=list, max_length=20, description=_RESOLVED_HELP)
    summary: str = Field(max_length=500)


class KnowledgeItem(Contract):
    category: Literal["lesson", "domain"]
    topic: str = Field("", pattern=r"^([a-z0-9][a-z0-9_-]{0,63})?$",
                       description="The document it belongs in (lessons/<topic>.md or domain/<topic>.md); empty: the default one.")
    content: Annotated[str, StringConstraints(min_length=1, max_length=400)]
    source_task: str = Field("", max_length=64)
    confidence: Literal["high", "medium", "low"] = "medium"
    needs_user_review: bool = False


class InternaliserOutput(Contract):
    """Internaliser: facts and observations captured from recent tasks."""

    knowledge_items: list[KnowledgeItem] = Field(default_factory=list, max_length=12)
    summary: str = Field(max_length=500)


# --------------------------------------------------------------------------- files on disk


class SupervisorRun(Contract):
    """One supervisor run, as recorded in ``supervisors/runs.jsonl``."""

    schema_version: SchemaVersion = 1
    run_id: str = Field(pattern=r"^[0-9a-f]{12}$")
    supervisor: SupervisorName
    trigger: Trigger
    reasons: list[str] = Field(default_factory=list, description="Every reason it was due (the trigger is the first).")
    started: Timestamp
    duration_seconds: float = Field(ge=0)
    model: str = ""
    prompt_tokens: int = Field(0, ge=0)
    completion_tokens: int = Field(0, ge=0)
    cost_usd: float = Field(0.0, ge=0)
    attempts: int = Field(0, ge=0)
    outcome: Literal["applied", "skipped", "discarded", "refused", "failed"] = Field(
        description="applied; skipped (no model, budget spent, deadline passed); discarded (invalid output); "
                    "refused (it wrote outside its part of the store); failed (could not be applied).")
    reason: str = Field("", max_length=1000)
    summary: str = Field("", max_length=500)
    findings: int = Field(0, ge=0)
    directives: list[str] = Field(default_factory=list, description="Directives queued, as '<type>/<priority>: <description>'.")
    documents: list[str] = Field(default_factory=list, description="Knowledge documents written, relative to the store.")
    review_items: int = Field(0, ge=0)
    quarantined: list[ShortText] = Field(default_factory=list, max_length=60,
                                         description="Directives and documents held for a person instead of reaching the agent: "
                                                     "'R3: directive ...: why'.")
    bootstrap: bool = False
    converging: bool = False
    interval_tasks: int | None = Field(None, ge=1, description="Its periodic interval after this run, convergence applied.")
    task: int = Field(0, ge=0, description="Completed tasks counted when it was triggered.")
    source: Literal["agent", "cli"] = "agent"
    project: str | None = Field(None, description="The Agent-Zero project whose store and queue it used; null: the global ones.")
    response_format: Literal["json_schema", "json_object", "none", ""] = Field(
        "", description="The structured-output level the endpoint answered at; empty: no answer.")
    repairs: int = Field(0, ge=0, le=1, description="Repair rounds (the problems sent back to the model).")
    answer_notes: list[ShortText] = Field(default_factory=list, max_length=30,
                                          description="What was done to get a usable answer: fallbacks, JSON found in prose, fields cut, the repair.")


class SupervisorAnswers(Contract):
    """The raw answers of one run, redacted, as ``a0org supervisors log --raw`` shows them."""

    schema_version: SchemaVersion = 1
    run_id: str = Field(pattern=r"^[0-9a-f]{12}$")
    supervisor: SupervisorName
    started: Timestamp
    answers: list[Annotated[str, StringConstraints(max_length=200_000)]] = Field(
        max_length=2, description="The answer, and the repaired one when there was a repair round.")


class SupervisorCounter(Contract):
    tasks_since_run: int = Field(0, ge=0)
    interval_multiplier: int = Field(1, ge=1, description="Doubles while its findings barely change; back to 1 when they do.")
    runs: int = Field(0, ge=0, description="Runs started.")
    applied_runs: int = Field(0, ge=0, description="Runs whose answer was applied; their findings are compared.")
    last_findings: list[str] = Field(default_factory=list, max_length=60)
    last_run: Timestamp | None = None
    pending: list[Literal["milestone", "abort", "replan", "urgency"]] = Field(
        default_factory=list, max_length=4, description="Triggers waiting for its next run (kept while a run is in flight).")


def _counters() -> dict[str, SupervisorCounter]:
    return {name: SupervisorCounter() for name in SUPERVISOR_NAMES}


class SupervisorsState(Contract):
    """``supervisors/state.json``: the trigger counters, kept across restarts."""

    schema_version: SchemaVersion = 1
    tasks_completed: int = Field(0, ge=0)
    tasks_aborted: int = Field(0, ge=0)
    urgency: float = Field(0.0, ge=0)
    urgency_signals: list[str] = Field(default_factory=list, max_length=50)
    supervisors: dict[SupervisorName, SupervisorCounter] = Field(default_factory=_counters)


class ToolCall(Contract):
    tool: str = Field(max_length=100)
    args: str = Field("", max_length=400, description="Arguments, shortened.")
    ok: bool
    error_type: str | None = None
    agent: int = Field(0, ge=0, description="The agent that called it: 0 the top agent, 1 and up its subordinates.")
    output: str = Field("", max_length=300, description="The start of a successful call's output (failures are in errors).")


class TaskDigest(Contract):
    """What one task was, bounded and redacted: what the supervisors read."""

    schema_version: SchemaVersion = 1
    task: int = Field(ge=1, description="The task's number among completed and aborted tasks.")
    started: Timestamp
    duration_seconds: float = Field(ge=0)
    user_message: str = Field("", max_length=1200)
    tools: list[ToolCall] = Field(default_factory=list, max_length=40)
    tool_calls: int = Field(0, ge=0, description="All tool calls, also those beyond the ones listed.")
    files_touched: list[str] = Field(default_factory=list, max_length=30)
    errors: list[str] = Field(default_factory=list, max_length=10)
    final_response: str = Field("", max_length=1200)
    pace_levels: list[str] = Field(default_factory=list, max_length=4)
    turns: int = Field(0, ge=0)
    outcome: Literal["completed", "aborted"]
    abort_reason: str = Field("", max_length=300)
    steering: int = Field(0, ge=0, description="Radio-check steering messages the task received.")
    reasoning: list[Annotated[str, Field(max_length=300)]] = Field(
        default_factory=list, max_length=12, description="The agent's thoughts before its tool calls, shortened.")
    workdir: str = Field("", max_length=500, description="The agent's working directory, against which relative file names were resolved.")
    files_unresolved: list[str] = Field(default_factory=list, max_length=30,
                                        description="Relative file names that could not be resolved (no working directory known).")
