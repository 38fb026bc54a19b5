"""SALUTE report: status, activity, location, unit, time, environment."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, ValidationInfo, ValidatorFunctionWrapHandler, WrapValidator

from .common import AnomalyType, Contract, Health, Identifier, PaceLevel, SchemaVersion, Timestamp
from .learning import MAX_LEARNINGS, Learning
from .role import Doctrine, PacePlan

SALUTE_SCHEMA_VERSION = 1


class SaluteStatus(Contract):
    state: Literal["idle", "active", "waiting", "error_recovery", "escalating", "complete", "aborted"]
    pace_level: PaceLevel
    health: Health
    health_source: Literal["dispatcher", "supervisor"] = "dispatcher"
    progress: float | None = Field(None, ge=0, le=1)


class SaluteActivity(Contract):
    current_task: str = "idle"
    bst_domain: str | None = None
    bst_confidence: float | None = None
    htn_plan: str | None = None
    htn_step: str | None = None
    current_tool: str | None = None
    progress_source: Literal["htn", "pack"] = "pack"


class SaluteLocation(Contract):
    working_directory: str | None = None


class SaluteUnit(Contract):
    unit_id: Identifier | None = Field(None, description="The unit's id on a shared volume (macrocosm); None in a single container.")
    role_id: Identifier
    role_name: str
    role_type: Literal["commander", "executive", "specialist"]
    reports_to: str
    organization: Identifier
    agent_number: int = 0
    agent_name: str | None = None
    context_id: str | None = None


class SaluteTime(Contract):
    timestamp: Timestamp
    turns_elapsed: int = Field(ge=0)
    turns_since_progress: int = Field(ge=0)


class SaluteEnvironment(Contract):
    model: str | None = None
    context_fill_pct: float | None = Field(None, ge=0)
    context_tokens_used: int | None = Field(None, ge=0)
    context_tokens_max: int | None = Field(None, ge=0)
    tool_failures_consecutive: int = Field(0, ge=0)
    tool_failures_total: int = Field(0, ge=0)


class SupervisorAssessment(Contract):
    """Added by the supervisor when its view of health differs from the dispatcher's."""

    turn: int = Field(ge=0)
    health: Health
    anomalies: list[AnomalyType] = Field(default_factory=list)
    assessed_at: Timestamp


class OutcomeSignal(Contract):
    """One tool outcome as the detectors see it."""

    turn: int = Field(ge=0)
    tool: str = Field(max_length=200)
    ok: bool
    error_type: str | None = Field(None, max_length=64)
    signature: str = Field(max_length=64, description="Hash of the tool and its canonical arguments.")
    output_hash: str = Field(max_length=64)
    message_preview: str = Field("", max_length=200, description="Not written any more (no detector reads a tool's output); accepted from older units.")
    novel: bool = Field(False, description="The call moved the task forward (the pack's progress signal).")
    kind: Literal["inspect", "edit", "run"] = Field("run", description="Whether the call looked, changed files or ran something.")
    error_line: str | None = Field(None, max_length=200, description="The line naming the error, also for failing tests.")
    error_signature: str | None = Field(None, max_length=64, description="The error's identity: its line with volatile parts normalised, hashed.")
    command: str | None = Field(None, max_length=200, description="The command the call ran, shortened.")
    shape: str = Field("", max_length=64, description="Hash of the call with all whitespace in its arguments ignored (edits only; else the signature).")
    baseline: bool = Field(False, description="Its error was there before the agent's first edit of the task.")
    blocked: bool = Field(False, description="The breaker did not run the call: it stands for the failure it would have repeated.")
    waits: bool = Field(False, description="The call polled a process already running (Agent-Zero's `runtime: output`) or only slept (`sleep 5`): never a loop.")
    prints: bool = Field(False, description="The call only printed text the agent wrote (a farewell `echo`): a reply sent as a command.")
    empty: bool = Field(False, description="A look that found nothing: it showed nothing (no text, a search's notice that nothing matched), or what it looked at is not there.")
    program: bool = Field(False, description="The call's code is the program it ran, written in the call (Agent-Zero's `runtime: python`, a heredoc).")
    ran: bool = Field(False, description="An edit that ran what it wrote, in the same call (a script written from a heredoc, then run).")
    ran_copy: str | None = Field(None, max_length=200, description="A file its traceback went through that is another copy of `edited_copy` (its path, cut at the start).")
    edited_copy: str | None = Field(None, max_length=200, description="The file the task's edits wrote that `ran_copy` copies: those edits do not run.")

    @property
    def result(self) -> str:
        """The result's identity, as ``ToolOutcome.result``: the detectors read either."""
        return self.error_signature or self.output_hash

    @property
    def worked(self) -> bool:
        """It worked and names no error, as ``ToolOutcome.worked``."""
        return self.ok and not self.error_type


#: (field, doctrine_version) -> (the raw value, its validated model). An XO reads thousands
#: of reports whose doctrine and PACE plan are the same few roles', and validating a PACE
#: plan costs as much as the rest of a report; identical content is validated once and shared.
_validated: dict[tuple[str, str], tuple[Any, Any]] = {}
_VALIDATED_KEPT = 128


def _once_per_content(value: Any, handler: ValidatorFunctionWrapHandler, info: ValidationInfo) -> Any:
    key = (info.field_name or "", str(info.data.get("doctrine_version")))
    known = _validated.get(key)
    if known is not None and type(value) is dict and known[0] == value:
        return known[1]
    result = handler(value)
    if type(value) is dict:
        if len(_validated) >= _VALIDATED_KEPT:
            _validated.pop(next(iter(_validated)))
        _validated[key] = (value, result)
    return result


SharedDoctrine = Annotated[Doctrine, WrapValidator(_once_per_content)]
SharedPacePlan = Annotated[PacePlan | None, WrapValidator(_once_per_content)]


class SteeringRefusal(Contract):
    """The latest steering file named for this unit that it refused, so the XO can send it again
    (under its current key, in the unit's time) rather than wait for it."""

    seq: int = Field(ge=1, le=9_999_999_999, description="The seq in the refused file's name.")
    reason: Literal["expired", "key", "other"] = Field(
        description="expired: past its expires_at by the unit's clock; key: not signed by a key of the unit's steering.pub; other: anything else.")
    detail: str = Field("", max_length=200)


class SaluteSignals(Contract):
    """Everything a radio check reads, so that an XO reading this report reaches the
    verdict the unit's own supervisor reached from the live agent."""

    turn: int = Field(ge=0, description="The unit supervisor's turn counter at this report.")
    role_id: Identifier
    doctrine_version: str = Field(pattern=r"^[0-9a-f]{16}$", description="Digest of the doctrine and PACE plan below.")
    doctrine: SharedDoctrine
    pace_plan: SharedPacePlan = None
    pace_level: PaceLevel | None = None
    turns_since_progress: int | None = Field(None, ge=0)
    turns_without_tool: int | None = Field(None, ge=0, description="Turns in a row, up to this one, in which the model called no tool.")
    progress_source: Literal["htn", "pack"] | None = None
    current_step: str | None = Field(None, max_length=200)
    plan_name: str | None = Field(None, max_length=200)
    bst_domain: str | None = Field(None, max_length=200)
    bst_confidence: float | None = None
    outcomes: list[OutcomeSignal] = Field(
        default_factory=list, max_length=64,
        description="The tool outcomes of the current task the detectors read for this doctrine, oldest first (see org.supervisor.signals.needed_outcomes).",
    )
    context_fill: float | None = Field(None, ge=0)
    native_repeat_warning: bool = False
    steering_seq: int | None = Field(
        None, ge=0,
        description="The highest seq of the XO's steering this unit has taken from its inbox (applied, acknowledged or refused).",
    )
    steering_refused: SteeringRefusal | None = Field(
        None, description="The latest steering the unit refused (expired, or signed with a key it does not hold), if any.")
    paused_turn: int | None = Field(
        None, ge=0,
        description="The turn at which the unit's own supervisor paused its chat (its breaker's blocks went unanswered), "
                    "until someone resumes it; None while it runs.")
    learnings: list[Learning] = Field(
        default_factory=list, max_length=MAX_LEARNINGS,
        description="What the unit found out in the current task that other units may need, newest last (the learning relay).",
    )


class SaluteReport(Contract):
    """``reports/<role_id>_latest.json``, and ``units/<unit>/salute.json`` on a shared volume."""

    schema_version: SchemaVersion = SALUTE_SCHEMA_VERSION
    reason: Literal["interval", "pace_change", "first", "supervisor", "turn", "task_end"] = "interval"
    status: SaluteStatus
    activity: SaluteActivity
    location: SaluteLocation = Field(default_factory=SaluteLocation)
    unit: SaluteUnit
    time: SaluteTime
    environment: SaluteEnvironment
    supervisor: SupervisorAssessment | None = None
    signals: SaluteSignals | None = Field(None, description="The radio check's inputs; written by units on a shared volume.")
    signature: str | None = Field(
        None, pattern=r"^[0-9a-f]{64}$",
        description="On a shared volume: HMAC-SHA256 of the report's bytes before this field, with the unit's own key; always the last field.",
    )
