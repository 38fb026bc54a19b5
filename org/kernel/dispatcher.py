"""The dispatcher: each turn, before the model is asked, it picks the role, sets the
PACE level and writes the SALUTE report.

Attributes it sets on the agent (through the hook's :class:`~org.kernel.agent_zero.AgentPort`),
for the supervisor and any other layer to read: ``_org_active_role`` (the role profile as a
dict), ``_org_pace_level`` (primary, alternate, contingent or emergency) and
``_org_active_org_id``. With no active organization it removes them, so every reader
switches off too. What it reads of the agent comes as values
(:class:`~org.kernel.turn_readings.TurnReadings`), read once by the hook.

It also builds the report a unit on a shared volume publishes at the end of every
turn (:func:`unit_report`): the same fields, plus the radio check's inputs.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Callable

from org.contracts import RoleProfile, SaluteReport
from org.contracts.common import PACE_LEVELS
from org.contracts.salute import SaluteSignals
from org.lazy_patterns import lazy_pattern

from . import salute
from .layers import NO_LAYERS, AgentReadings
from .log import warn_once
from .outcomes import FAILURES_KEY, LEDGER_KEY, RESPONSE_TOOL, ToolLedger, ledger_of, start_task
from .pace import PaceMetrics, metrics_from, pace_level
from .salute import health_for
from .store import OrganizationStore, select_role

if TYPE_CHECKING:
    from .agent_zero import AgentPort
    from .turn_readings import TurnReadings

ROLE_ATTR = "_org_active_role"
PACE_ATTR = "_org_pace_level"
ORG_ATTR = "_org_active_org_id"
STATE_KEY = "_org_dispatch"

#: A user's message that only tells the agent to go on with its task: "continue", "keep going",
#: OpenHands' automatic "Please continue working on the task on whatever approach you think is
#: suitable." sent after a reply without a tool call. Longer than this, it says more than that.
_GOES_ON = lazy_pattern(r"\A\W*(?:please\s+)?(?:continue|keep going|go on|go ahead|carry on|proceed|resume)\b", re.IGNORECASE)
GOES_ON_CHARS = 600


def goes_on(user_message: str | None) -> bool:
    """The message continues the task in hand, so its evidence (the tool ledger, the failures)
    carries on: an agent that answered without a tool call and was told to go on, and does it
    again, is not starting afresh."""
    return user_message is not None and len(user_message) <= GOES_ON_CHARS and _GOES_ON.match(user_message) is not None


@dataclass
class DispatchState:
    turn: int = 0
    last_report_turn: int | None = None
    #: what this turn's dispatch chose (the organization as loaded, the role, the BST reading),
    #: so the judgement after the tool reads nothing again
    chosen: tuple[Any, RoleProfile, Any] | None = None


def state_for(level: str) -> str:
    return {"primary": "active", "alternate": "error_recovery"}.get(level, "escalating")


def dispatch(read: Callable[[], TurnReadings], port: AgentPort, store: OrganizationStore) -> str | None:
    """Run one turn of the dispatcher. Returns the PACE level, or None when inactive.
    ``read()`` reads the agent (with its layers), only when an organization is active."""
    loaded = store.active()
    if loaded is None:
        port.clear(ROLE_ATTR, PACE_ATTR, ORG_ATTR)
        return None
    readings = read()
    data = port.data
    new_task = readings.iteration == 0 and not goes_on(readings.user_message)
    ledger = ledger_of(data)
    ledger.tick(new_task=new_task)
    if new_task:
        start_task(data)
    state = data.get(STATE_KEY)
    if not isinstance(state, DispatchState):
        state = data[STATE_KEY] = DispatchState()
    state.turn += 1
    bst = readings.layers.bst if readings.layers else None
    role = select_role(loaded, bst.domain if bst else None, store.roles_for(loaded, readings.project))
    port.mark(**{ROLE_ATTR: loaded.role_dict(role), ORG_ATTR: loaded.organization.org_id})
    state.chosen = (loaded, role, bst)
    return _judge(readings, port, loaded, role, state)


def judge_after_tool(readings: TurnReadings, port: AgentPort) -> str | None:
    """PACE judged again once the turn's tool has run, so the level (and the steering it
    draws) follows this turn's outcome rather than lagging a turn behind it. Only when a tool
    ran this turn: otherwise nothing the triggers read has changed. Returns the level set."""
    state = port.data.get(STATE_KEY)
    ledger = port.data.get(LEDGER_KEY)
    if not isinstance(state, DispatchState) or state.chosen is None or not isinstance(ledger, ToolLedger):
        return None
    if ledger.latest is None:
        return None
    loaded, role, _ = state.chosen
    return _judge(readings, port, loaded, role, state)


def _judge(readings: TurnReadings, port: AgentPort, loaded: Any, role: RoleProfile, state: DispatchState) -> str:
    """Set the PACE level from the role's triggers; log a change and write the SALUTE report when due."""
    data = port.data
    ledger = ledger_of(data)
    layers = _layers(readings, state)
    metrics = turn_metrics(data, role, layers.htn, layers.fill, ledger)
    level = pace_level(role.pace_plan, metrics)
    previous = readings.pace_level
    port.mark(**{PACE_ATTR: level})
    changed = previous in PACE_LEVELS and previous != level
    if changed:
        direction = "escalated" if PACE_LEVELS.index(level) > PACE_LEVELS.index(previous) else "restored"
        port.log(type="info", heading=f"[ORG] PACE {direction} {previous} -> {level} ({role.role_id})")
    if readings.number == 0:
        reason = None
        if state.last_report_turn is None:
            reason = "first"
        elif changed:
            reason = "pace_change"
        elif state.turn - state.last_report_turn >= role.doctrine.salute_interval_turns:
            reason = "interval"
        if reason is not None:
            report = build_report(readings, loaded.organization.org_id, role, level, metrics, layers, ledger, reason)
            if salute.write_report(loaded.layout, report, role.doctrine.report_archive_limit):
                state.last_report_turn = state.turn
    return level


def _layers(readings: TurnReadings, state: DispatchState) -> AgentReadings:
    """HTN and the context fill as read now; BST as the dispatch read it (the role follows it)."""
    layers = readings.layers or NO_LAYERS
    bst = state.chosen[2] if state.chosen is not None else layers.bst
    return layers if layers.bst is bst else AgentReadings(layers.htn, bst, layers.fill)


def turn_metrics(data: dict, role: RoleProfile, htn, fill, ledger: ToolLedger) -> PaceMetrics:
    turns_without_progress = htn.turns_since_progress if htn else (ledger.turns_since_progress or 0)
    return metrics_from(data.get(FAILURES_KEY), turns_without_progress, role.doctrine.max_turns_without_progress, fill.fill if fill else None)


def task_ended(ledger: ToolLedger) -> bool:
    """Whether this turn ran the final-answer tool, which ends the task."""
    return ledger.latest is not None and ledger.latest.tool == RESPONSE_TOOL


def unit_report(readings: TurnReadings, data: dict, role: RoleProfile, unit_id: str, signals: SaluteSignals) -> SaluteReport | None:
    """A unit's end-of-turn report: the dispatcher's view as it is now, and the radio check's inputs.

    None (logged once) when the dispatcher has not named the organization this turn.
    """
    org_id = readings.org_id
    if not isinstance(org_id, str):
        warn_once(f"agent.{ORG_ATTR}: no organization id ({type(org_id).__name__}); the unit's SALUTE report is skipped", key=f"agent.{ORG_ATTR}")
        return None
    layers = readings.layers or NO_LAYERS
    ledger = ledger_of(data)
    metrics = turn_metrics(data, role, layers.htn, layers.fill, ledger)
    ended = task_ended(ledger)
    return build_report(
        readings, org_id, role, signals.pace_level or "primary", metrics, layers, ledger, "task_end" if ended else "turn",
        unit_id=unit_id, signals=signals, state="idle" if ended else None,
    )


def build_report(readings: TurnReadings, org_id: str, role: RoleProfile, level, metrics, layers: AgentReadings, ledger: ToolLedger, reason, *,
                 unit_id: str | None = None, signals: SaluteSignals | None = None, state: str | None = None) -> SaluteReport:
    current_tool = ledger.outcomes[-1].tool if ledger.outcomes else None
    htn, bst, fill = layers.htn, layers.bst, layers.fill
    return SaluteReport.model_validate(
        {
            "reason": reason,
            "status": {
                "state": state or state_for(level),
                "pace_level": level,
                "health": health_for(level, metrics.consecutive_tool_failures),
            },
            "activity": {
                "current_task": (htn.plan_name if htn and htn.plan_name else None) or (bst.domain if bst else None) or "general",
                "bst_domain": bst.domain if bst else None,
                "bst_confidence": bst.confidence if bst else None,
                "htn_plan": htn.plan_name if htn else None,
                "htn_step": htn.current_step if htn else None,
                "current_tool": current_tool,
                "progress_source": "htn" if htn else "pack",
            },
            "location": {"working_directory": _cwd()},
            "unit": {
                "unit_id": unit_id,
                "role_id": role.role_id,
                "role_name": role.role_name,
                "role_type": role.role_type,
                "reports_to": role.chain_of_command.reports_to,
                "organization": org_id,
                "agent_number": readings.number,
                "agent_name": readings.agent_name,
                "context_id": readings.chat,
            },
            "time": {
                "timestamp": datetime.now(timezone.utc),
                "turns_elapsed": ledger.turn,
                "turns_since_progress": metrics.turns_without_progress,
            },
            "environment": {
                "model": readings.model,
                "context_fill_pct": round(fill.fill, 4) if fill else None,
                "context_tokens_used": fill.tokens if fill else None,
                "context_tokens_max": fill.window if fill else None,
                "tool_failures_consecutive": metrics.consecutive_tool_failures,
                "tool_failures_total": metrics.recent_tool_failures,
            },
            "signals": signals,
        }
    )


def _cwd() -> str | None:
    try:
        return os.getcwd()
    except OSError:
        return None
