"""Role profile: who a role is, its doctrine (the numbers) and its PACE plan.

PACE triggers are structured data (metric, comparison, value; ``any_of``/``all_of``)
so that validation can reject an unknown metric instead of a trigger silently never
firing.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import Discriminator, Field, Tag, ValidationInfo, field_validator

from .common import Contract, Identifier, SchemaVersion

TriggerMetric = Literal[
    "consecutive_tool_failures",
    "recent_tool_failures",
    "distinct_failing_tools",
    "turns_without_progress",
    "progress_budget_used",
    "context_fill",
]
Comparison = Literal[">", ">=", "<", "<=", "==", "!="]

METRIC_HELP: dict[str, str] = {
    "consecutive_tool_failures": "most failures of any one tool since the last successful tool call",
    "recent_tool_failures": "failures among the tool outcomes kept in the failure history",
    "distinct_failing_tools": "how many different tools failed in the current failure streak",
    "turns_without_progress": "turns since the plan (HTN) or the pack's own progress signal last advanced",
    "progress_budget_used": "turns_without_progress divided by doctrine.max_turns_without_progress",
    "context_fill": "share of the model's context window the last prompt used: 1.0 is full, more when the prompt was larger than the window",
}


class Condition(Contract):
    """One comparison of a metric against a value, e.g. consecutive_tool_failures >= 3."""

    metric: TriggerMetric = Field(description="; ".join(f"{name}: {meaning}" for name, meaning in METRIC_HELP.items()))
    comparison: Comparison
    value: float


class AnyOf(Contract):
    any_of: list["Trigger"] = Field(min_length=1)


class AllOf(Contract):
    all_of: list["Trigger"] = Field(min_length=1)


def _trigger_kind(value: Any) -> str | None:
    """Pick the trigger shape from its keys, so an error names one shape, not three."""
    keys = value.keys() if isinstance(value, dict) else vars(value).keys() if hasattr(value, "__dict__") else ()
    if "any_of" in keys:
        return "AnyOf"
    if "all_of" in keys:
        return "AllOf"
    if "metric" in keys or "comparison" in keys or "value" in keys:
        return "Condition"
    return None


Trigger = Annotated[
    Union[
        # tags are class names, so they never collide with the data's own keys in error paths
        Annotated[Condition, Tag("Condition")],
        Annotated[AnyOf, Tag("AnyOf")],
        Annotated[AllOf, Tag("AllOf")],
    ],
    Discriminator(
        _trigger_kind,
        custom_error_type="trigger_shape",
        custom_error_message="a trigger is {metric, comparison, value}, {any_of: [...]} or {all_of: [...]}",
    ),
]


class PrimaryTier(Contract):
    """The default level: normal work, no trigger."""

    description: str = Field(min_length=1, description="What this level means for the role.")
    action: Literal["normal_execution", "fallback_chain", "escalate", "abort_and_report"] = "normal_execution"
    trigger: None = Field(None, description="Primary is where the role starts; it takes no trigger.")


class PaceTier(Contract):
    """A level above primary, entered when its trigger holds."""

    description: str = Field(min_length=1, description="What this level means for the role; quoted in steering.")
    action: Literal["normal_execution", "fallback_chain", "escalate", "abort_and_report"] = "normal_execution"
    trigger: Trigger
    escalate_to: Identifier | None = None


class PacePlan(Contract):
    primary: PrimaryTier
    alternate: PaceTier
    contingent: PaceTier
    emergency: PaceTier


def _not_below(lower: str, upper: str) -> Any:
    """A validator for two thresholds of one scale: ``upper`` must not be below ``lower``."""

    def check(cls: type, value: float, info: ValidationInfo) -> float:
        bound = info.data.get(lower)
        if bound is not None and value < bound:
            raise ValueError(f"must not be below {lower} ({bound})")
        return value

    return field_validator(upper)(classmethod(check))


class ContextThresholds(Contract):
    warning: float = Field(0.80, gt=0, le=1)
    critical: float = Field(0.90, gt=0, le=1)

    _ordered = _not_below("warning", "critical")


class LoopDoctrine(Contract):
    repeat_threshold: int = Field(3, ge=2, description="Same action with the same outcome this many times in a row is a loop.")
    oscillation_cycles: int = Field(2, ge=2, description=(
        "Times a cycle of two to six identical calls with the same results goes round (A-B-A-B or A-B-C-A-B-C for 2), "
        "one of them failing, that make a loop."))
    churn_threshold: int = Field(3, ge=2, description="The same error this many times in a task, from different actions, is churn.")
    rerun_threshold: int = Field(3, ge=1, description="The same run giving the same result again after other work this many times: the work has no effect.")
    no_tool_threshold: int = Field(3, ge=2, description=(
        "The model answering this many times in a row without calling a tool, or calling one only to print its own text "
        "(`echo 'Done.'`), is a loop."))
    exempt_tools: list[str] = Field(default_factory=list, description="Tools never counted as looping, such as pollers.")


class CascadeDoctrine(Contract):
    distinct_tools: int = Field(3, ge=2, description="Failures of this many different tools in a row is a cascade.")
    window: int = Field(5, ge=2, description="How many of the latest tool outcomes are looked at.")


class HeartbeatDoctrine(Contract):
    """How old a unit's last SALUTE report may be before the XO treats it as silent."""

    stale_after_seconds: float = Field(120, gt=0, description="Older than this: stale, and an active unit gets a nudge.")
    very_stale_after_seconds: float = Field(300, gt=0, description="Older than this: very stale, reported as lost rather than healthy.")
    pause_when_very_stale: bool = Field(False, description=(
        "A busy unit that has been very stale gets a pause from the XO at once, without the rest of the nudge ladder "
        "(for units that must not run unwatched)."))

    _ordered = _not_below("stale_after_seconds", "very_stale_after_seconds")


class EscalationDoctrine(Contract):
    """Nudges grow firmer while they go unanswered: hint, warning, critical, then a pause."""

    pause_after_nudges: int = Field(5, ge=1, description="Steering sent by an XO in one episode after which it pauses the unit.")
    pause_after_ignored: int = Field(2, ge=1, description=(
        "Times the agent repeated the very action and result a loop steering was about (a blocked attempt counts) "
        "after which the chat is paused."))
    pause_after_ignored_working: int = Field(4, ge=1, description=(
        "The same for a call that worked (the same output again, or the same edit going in again): it is never blocked, "
        "so it needs more proof; each repeat still wastes a turn, and an edit applied again changes the file again. "
        "Also for a message that runs nothing: a reply without a tool call, the same message after Agent-Zero's warning, "
        "a call that ran nothing (sent to a terminal still busy, to a tool that is not there, or refused for its arguments)."))
    pause: bool = Field(True, description="Pause the chat when steering goes unanswered; false: keep steering only.")
    pause_after_emergency: bool = Field(True, description="Pause the chat when the agent keeps working after PACE emergency steering.")


class BreakerDoctrine(Contract):
    """The circuit breaker: a call that keeps failing the same way is not run again."""

    enabled: bool = Field(True, description="Block a call once it failed the same way `failures` times and the agent was told.")
    failures: int = Field(3, ge=2, description="Identical failures in a row (same call, same error) that open the breaker.")
    half_open_turns: int = Field(3, ge=1, description="Turns after which one more identical call is let through to try again.")


class Doctrine(Contract):
    salute_interval_turns: int = Field(5, ge=1)
    max_turns_without_progress: int = Field(12, ge=1)
    max_looks_finding_nothing: int = Field(5, ge=1, description="A stall is also more looks than this that found nothing (an empty listing, "
                                           "a search with no match) since progress stopped: a hunt where nothing is. Looks sent together in one "
                                           "reply (a scaffold's parallel calls) count once.")
    radio_check_interval_turns: int = Field(1, ge=1, description="The supervisor checks every N turns; 1 steers a pattern on the turn it completes.")
    cooldown_turns: int = Field(3, ge=0)
    cooldown_overrides: dict[Literal["stall", "loop", "churn", "rerun", "context", "cascade", "pace"], int] = Field(default_factory=dict)
    context_thresholds: ContextThresholds = Field(default_factory=ContextThresholds)
    loop: LoopDoctrine = Field(default_factory=LoopDoctrine)
    cascade: CascadeDoctrine = Field(default_factory=CascadeDoctrine)
    report_archive_limit: int = Field(50, ge=0, description="SALUTE reports kept in reports/archive per role.")
    heartbeat: HeartbeatDoctrine = Field(default_factory=HeartbeatDoctrine)
    escalation: EscalationDoctrine = Field(default_factory=EscalationDoctrine)
    breaker: BreakerDoctrine = Field(default_factory=BreakerDoctrine)
    autonomous_retry_limit: int = Field(2, ge=0)
    report_on_completion: bool = True
    report_on_failure: bool = True

    def cooldown_for(self, anomaly: str) -> int:
        return self.cooldown_overrides.get(anomaly, self.cooldown_turns)  # type: ignore[arg-type]


class ChainOfCommand(Contract):
    reports_to: Identifier | Literal["user"] = "user"
    authority_level: int = Field(1, ge=1, le=3)
    can_delegate: bool = False


class Capabilities(Contract):
    bst_domains: list[str] = Field(default_factory=list)
    htn_plans: list[str] = Field(default_factory=list)
    tools_primary: list[str] = Field(default_factory=list)
    tools_secondary: list[str] = Field(default_factory=list)


class RoleProfile(Contract):
    """A role and its doctrine: the file ``roles/<role_id>.yaml`` (with the roles it extends
    and the overrides merged in: org/kernel/cascade.py)."""

    schema_version: SchemaVersion = 1
    role_id: Identifier
    extends: Identifier | None = Field(None, description=(
        "Another role in the same folder this one starts from: mappings merge key by key, lists and other values "
        "replace, and null removes an inherited entry."))
    role_name: str = Field(min_length=1)
    role_type: Literal["commander", "executive", "specialist"]
    description: str = ""
    chain_of_command: ChainOfCommand = Field(default_factory=ChainOfCommand)
    capabilities: Capabilities = Field(default_factory=Capabilities)
    doctrine: Doctrine = Field(default_factory=Doctrine)
    pace_plan: PacePlan
