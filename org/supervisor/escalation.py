"""The escalation ladder's wording, and the XO's pause after unanswered nudges.

Within one episode of an anomaly every nudge counts: each steering, and each call the
circuit breaker blocked. Nudges are worded as a hint, then a warning, then critical. The
in-process supervisor pauses only on proof that its steering is ignored
(:func:`org.supervisor.radio_check.ignored`); an XO, which sees the unit only through its
reports, also pauses once ``pause_after_nudges`` steering went unanswered in an episode.
``escalation.pause`` and ``escalation.pause_after_emergency`` switch the pauses off per doctrine.
"""

from __future__ import annotations

from org.contracts import Finding
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


def times_in_words(n: int) -> str:
    """"once", "twice", "5 times": how the pause steering counts unanswered nudges."""
    return {1: "once", 2: "twice"}.get(n, f"{n} times")


def pause_finding(finding: Finding, nudges: int, on_proof: bool = False) -> Finding:
    """The pause after ``nudges`` unanswered steering about ``finding``, or, ``on_proof``, after
    the agent did what it was about ``nudges`` times more: its wording names what that steering
    was about, the call and its result when it named one (``$about``)."""
    evidence = {"repeats" if on_proof else "nudges": times_in_words(nudges), "anomaly": finding.anomaly}
    evidence.update((k, finding.evidence[k]) for k in ("action", "outcome", "tool_a", "tool_b", "round", "latest", "again") if finding.evidence.get(k))
    return Finding(anomaly=finding.anomaly, template="pause_on_proof" if on_proof else "pause", turn=finding.turn, evidence=evidence)
