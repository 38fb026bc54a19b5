"""The five anomaly detectors: small pure functions from a snapshot to a finding.

Each takes its thresholds from the role's doctrine. :data:`DETECTORS` lists them in
priority order; when several fire in one radio check, the first one steers.
"""

from __future__ import annotations

from typing import Callable

from org.contracts import Finding
from org.kernel.outcomes import ToolOutcome

from .snapshot import Snapshot

Detector = Callable[[Snapshot], Finding | None]


def _action_key(outcome: ToolOutcome) -> tuple:
    """What "doing the same thing again" means.

    A success is the same action when the tool, its arguments and its output all
    repeat; a failure when the same tool fails with the same kind of error. So an
    edit-then-rerun cycle (new arguments, new output) is not a repeat, and polling a
    job whose output changes is not either.
    """
    if outcome.ok:
        return ("ok", outcome.signature, outcome.output_hash)
    return ("fail", outcome.tool, outcome.error_type)


def _watched(snapshot: Snapshot) -> list[ToolOutcome]:
    exempt = snapshot.doctrine.loop.exempt_tools
    return [o for o in snapshot.outcomes if o.tool not in exempt] if exempt else list(snapshot.outcomes)


def _is_iteration(run: list[ToolOutcome]) -> bool:
    """Failures with different arguments AND different messages each time: the agent is
    trying new things (debugging), not repeating itself."""
    return (
        len({o.signature for o in run}) == len(run)
        and len({o.message_preview for o in run}) == len(run)
    )


def detect_loop(s: Snapshot) -> Finding | None:
    if s.native_repeat_warning:
        return None  # Agent-Zero already warned about this repetition this turn
    outcomes = _watched(s)
    repeat = s.doctrine.loop.repeat_threshold
    if len(outcomes) >= repeat:
        run = outcomes[-repeat:]
        keys = {_action_key(o) for o in run}
        if len(keys) == 1 and not (not run[0].ok and _is_iteration(run)):
            last = run[-1]
            return Finding(
                anomaly="loop",
                template="loop_repeat",
                turn=s.turn,
                evidence={
                    "pattern": "repeat",
                    "tool": last.tool,
                    "times": repeat,
                    "outcome": last.error_type if not last.ok else "the same result",
                },
            )
    width = 2 * s.doctrine.loop.oscillation_cycles
    if len(outcomes) >= width:
        window = [_action_key(o) for o in outcomes[-width:]]
        if window[0] != window[1] and all(window[i] == window[i + 2] for i in range(width - 2)):
            tail = outcomes[-width:]
            return Finding(
                anomaly="loop",
                template="loop_oscillation",
                turn=s.turn,
                evidence={"pattern": "oscillation", "tool_a": tail[-2].tool, "tool_b": tail[-1].tool, "cycles": width // 2},
            )
    return None


def detect_stall(s: Snapshot) -> Finding | None:
    if s.turns_since_progress is None:
        return None
    limit = s.doctrine.max_turns_without_progress
    if s.turns_since_progress <= limit:
        return None
    return Finding(
        anomaly="stall",
        template="stall",
        turn=s.turn,
        evidence={
            "turns": s.turns_since_progress,
            "limit": limit,
            "step": s.current_step,
            "plan": s.plan_name,
            "domain": s.bst_domain,
            "source": s.progress_source,
        },
    )


def detect_context(s: Snapshot) -> Finding | None:
    if s.context_fill is None:
        return None
    thresholds = s.doctrine.context_thresholds
    percent = round(s.context_fill * 100)
    if s.context_fill >= thresholds.critical:
        return Finding(anomaly="context", severity="critical", template="context_critical", turn=s.turn, evidence={"percent": percent})
    if s.context_fill >= thresholds.warning:
        return Finding(anomaly="context", template="context_warning", turn=s.turn, evidence={"percent": percent})
    return None


def detect_cascade(s: Snapshot) -> Finding | None:
    """Different tools failing back to back: the environment or an assumption is wrong."""
    cascade = s.doctrine.cascade
    streak: list[ToolOutcome] = []
    for outcome in reversed(s.outcomes[-cascade.window:]):
        if outcome.ok:
            break
        streak.append(outcome)
    tools = list(dict.fromkeys(o.tool for o in reversed(streak)))
    if len(tools) < cascade.distinct_tools:
        return None
    return Finding(anomaly="cascade", severity="critical", template="cascade", turn=s.turn, evidence={"tools": tools, "count": len(tools)})


def detect_pace(s: Snapshot) -> Finding | None:
    if s.pace_level not in ("contingent", "emergency"):
        return None
    description = getattr(s.pace_plan, s.pace_level).description if s.pace_plan else ""
    if s.pace_level == "emergency":
        return Finding(
            anomaly="pace", severity="emergency", template="pace_emergency", turn=s.turn,
            evidence={"level": "emergency", "description": description}, cooldown_exempt=True,
        )
    return Finding(anomaly="pace", severity="critical", template="pace_contingent", turn=s.turn, evidence={"level": "contingent", "description": description})


#: Priority order: when more than one fires in the same radio check, the first steers.
DETECTORS: dict[str, Detector] = {
    "pace": detect_pace,
    "context": detect_context,
    "cascade": detect_cascade,
    "loop": detect_loop,
    "stall": detect_stall,
}


def run_detectors(snapshot: Snapshot) -> list[Finding]:
    findings = []
    for detector in DETECTORS.values():
        finding = detector(snapshot)
        if finding is not None:
            findings.append(finding)
    return findings
