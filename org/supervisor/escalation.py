"""The escalation policy: what happens when steering goes unanswered.

One policy for the in-process supervisor and the XO alike. Within one episode of an
anomaly (from its first steering until a radio check no longer finds it) every nudge
counts: each steering, and each call the circuit breaker blocked. Nudges are worded
as a hint, then a warning, then critical; once ``pause_after_nudges`` went unanswered
the next step is a pause, the way Agent-Zero's own pause button pauses a chat. After
PACE emergency steering the agent is expected to stop and report: a further tool call
other than the final answer is an ignored emergency, and pauses too. Resuming the chat
starts the ladder over. ``escalation.pause`` and ``escalation.pause_after_emergency``
switch the pauses off per doctrine.
"""

from __future__ import annotations

from org.contracts.common import NudgeSeverity
from org.contracts.role import EscalationDoctrine


def nudge_severity(nudges: int) -> NudgeSeverity:
    """How firmly the next nudge is worded after ``nudges`` went unanswered."""
    if nudges <= 0:
        return "hint"
    return "warning" if nudges <= 2 else "critical"


def pause_due(nudges: int, doctrine: EscalationDoctrine) -> bool:
    """Whether the next step of an episode with ``nudges`` unanswered nudges is a pause."""
    return doctrine.pause and nudges >= doctrine.pause_after_nudges


def emergency_ignored(emergency_turn: int | None, acted_turn: int | None, final_answer: bool,
                      doctrine: EscalationDoctrine) -> bool:
    """The agent ran a tool (not the final answer) after it was told to stop at PACE emergency."""
    return (doctrine.pause_after_emergency and emergency_turn is not None and acted_turn is not None
            and acted_turn > emergency_turn and not final_answer)


def times_in_words(n: int) -> str:
    """"once", "twice", "5 times": how the pause steering counts unanswered nudges."""
    return {1: "once", 2: "twice"}.get(n, f"{n} times")
