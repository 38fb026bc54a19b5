"""PACE level from a role's structured triggers.

The level is recomputed every turn from the metrics: the highest level whose trigger
holds wins, else primary. A metric that is unknown this turn (say, context fill before
the first prompt) makes every comparison on it false.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any

from org.contracts.role import AllOf, AnyOf, Condition, PacePlan

_COMPARE = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le, "==": operator.eq, "!=": operator.ne}
_ESCALATION = ("emergency", "contingent", "alternate")


@dataclass(frozen=True, slots=True)
class PaceMetrics:
    consecutive_tool_failures: int = 0
    recent_tool_failures: int = 0
    distinct_failing_tools: int = 0
    turns_without_progress: int = 0
    progress_budget_used: float = 0.0
    context_fill: float | None = None


def metrics_from(failures: Any, turns_without_progress: int, max_turns_without_progress: int, context_fill: float | None) -> PaceMetrics:
    """Metrics from the ``_tool_failures`` record.

    Failure counts come from its history, which a success clears, so they describe the
    current failure streak. (Its per-tool ``consecutive`` counters are only reset by a
    success of the same tool, and a tool abandoned after two failures would otherwise
    hold PACE up for the rest of the session.)
    """
    history: list = []
    if isinstance(failures, dict) and isinstance(failures.get("history"), list):
        history = [entry for entry in failures["history"] if isinstance(entry, dict)]
    per_tool: dict[str, int] = {}
    for entry in history:
        tool = entry.get("tool")
        key = tool if isinstance(tool, str) else repr(tool)  # another layer may have written anything
        per_tool[key] = per_tool.get(key, 0) + 1
    return PaceMetrics(
        consecutive_tool_failures=max(per_tool.values(), default=0),
        recent_tool_failures=len(history),
        distinct_failing_tools=len(per_tool),
        turns_without_progress=turns_without_progress,
        progress_budget_used=turns_without_progress / max(1, max_turns_without_progress),
        context_fill=context_fill,
    )


def holds(trigger: Any, metrics: PaceMetrics) -> bool:
    if isinstance(trigger, Condition):
        value = getattr(metrics, trigger.metric)
        return value is not None and _COMPARE[trigger.comparison](value, trigger.value)
    if isinstance(trigger, AnyOf):
        return any(holds(t, metrics) for t in trigger.any_of)
    if isinstance(trigger, AllOf):
        return all(holds(t, metrics) for t in trigger.all_of)
    return False


def pace_level(plan: PacePlan, metrics: PaceMetrics) -> str:
    for level in _ESCALATION:
        trigger = getattr(plan, level).trigger
        if trigger is not None and holds(trigger, metrics):
            return level
    return "primary"
