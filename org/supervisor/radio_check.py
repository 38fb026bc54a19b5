"""One radio check: detectors over a snapshot, then the cooldown rule decides what steers.

The rule, per anomaly type and independent across types:

* a type that steered at turn ``t`` may steer again from turn ``t + cooldown`` on;
* a finding more severe than the one that started the cooldown (context 80% -> 90%)
  is not held back by it;
* PACE emergency is exempt and always steers;
* every anomaly whose cooldown allows it steers, so none can starve another; they
  reach the agent most severe first.

The state is a plain JSON-able dict so it survives a chat reload with ``agent.data``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from org.contracts import Finding
from org.contracts.common import HEALTH_ORDER
from org.contracts.finding import SEVERITY_ORDER
from org.contracts.role import Doctrine
from org.kernel.values import count_or, is_int

from .breaker import Breakers
from .detectors import run_detectors
from .snapshot import Snapshot

_PRIORITY = {name: index for index, name in enumerate(("pace", "context", "cascade", "loop", "churn", "rerun", "stall"))}
_HEALTH_FOR_SEVERITY = {"warning": "degraded", "critical": "critical", "emergency": "critical"}


@dataclass
class SupervisorState:
    turn: int = 0
    last_fired: dict[str, int] = field(default_factory=dict)
    last_severity: dict[str, str] = field(default_factory=dict)
    #: nudges (steering, and calls the breaker blocked) while each anomaly persisted: its episode
    episode: dict[str, int] = field(default_factory=dict)
    injections: int = 0
    checks: int = 0  # radio checks run
    health_corrected: bool = False  # the last check corrected the SALUTE report's health
    breakers: Breakers = field(default_factory=Breakers)
    #: the turn the supervisor paused the chat, until it is resumed
    paused_turn: int | None = None
    #: the ledger turn of the PACE emergency steering the agent has yet to act on
    emergency_turn: int | None = None

    def nudged(self, anomaly: str) -> None:
        """A nudge that is not a steering (a blocked call) counts in the anomaly's episode."""
        self.episode[anomaly] = self.episode.get(anomaly, 0) + 1

    def start_over(self) -> None:
        """The chat was resumed: the ladder, the emergency and the breakers start afresh."""
        self.episode.clear()
        self.breakers = Breakers()
        self.paused_turn = self.emergency_turn = None

    def record(self, steered: Finding) -> None:
        """Start the cooldown of a steering that reached the agent."""
        self.last_fired[steered.anomaly] = steered.turn
        self.last_severity[steered.anomaly] = steered.severity
        self.episode[steered.anomaly] = self.episode.get(steered.anomaly, 0) + 1
        self.injections += 1

    def repeated(self, anomaly: str) -> bool:
        """Whether this anomaly already steered in its current episode."""
        return self.episode.get(anomaly, 0) > 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": 1,
            "turn": self.turn,
            "last_fired": dict(self.last_fired),
            "last_severity": dict(self.last_severity),
            "episode": dict(self.episode),
            "injections": self.injections,
            "checks": self.checks,
            "health_corrected": self.health_corrected,
            "breakers": self.breakers.to_dict(),
            "paused_turn": self.paused_turn,
            "emergency_turn": self.emergency_turn,
        }

    @classmethod
    def from_dict(cls, data: Any) -> "SupervisorState":
        """Rebuild from saved data; anything malformed starts that part afresh."""
        if not isinstance(data, dict):
            return cls()

        def ints(value: Any) -> dict[str, int]:
            if not isinstance(value, dict):
                return {}
            return {str(k): int(v) for k, v in value.items() if is_int(v)}

        severities = data.get("last_severity")
        return cls(
            turn=count_or(data.get("turn")),
            last_fired=ints(data.get("last_fired")),
            last_severity={str(k): v for k, v in severities.items() if v in SEVERITY_ORDER} if isinstance(severities, dict) else {},
            episode=ints(data.get("episode")),
            injections=count_or(data.get("injections")),
            checks=count_or(data.get("checks")),
            health_corrected=data.get("health_corrected") is True,
            breakers=Breakers.from_dict(data.get("breakers")),
            paused_turn=count_or(data.get("paused_turn"), None),
            emergency_turn=count_or(data.get("emergency_turn"), None),
        )


def may_steer(finding: Finding, state: SupervisorState, cooldown: int) -> bool:
    """The cooldown rule for one finding."""
    if finding.cooldown_exempt:
        return True
    last = state.last_fired.get(finding.anomaly)
    if last is None or finding.turn - last >= cooldown or finding.turn < last:
        return True
    previous = state.last_severity.get(finding.anomaly, "warning")
    return SEVERITY_ORDER.index(finding.severity) > SEVERITY_ORDER.index(previous)


@dataclass
class RadioCheckResult:
    findings: list[Finding]
    steering: list[Finding]  # the findings that steer now, most severe first
    health: str  # what the supervisor thinks of the unit's health


def _rank(finding: Finding) -> tuple[int, int]:
    return (-SEVERITY_ORDER.index(finding.severity), _PRIORITY[finding.anomaly])


def decide(findings: list[Finding], state: SupervisorState, doctrine: Doctrine) -> RadioCheckResult:
    """Apply the cooldown rule to one check's findings.

    Ends the episodes of anomalies that cleared; the caller calls ``state.record`` once
    a steering has really reached the agent.
    """
    findings = sorted(findings, key=_rank)
    present = {f.anomaly for f in findings}
    for anomaly in list(state.episode):
        if anomaly not in present:
            del state.episode[anomaly]  # the anomaly cleared: its next steering starts a new episode
    steering = [f for f in findings if may_steer(f, state, doctrine.cooldown_for(f.anomaly))]
    health = max((_HEALTH_FOR_SEVERITY[f.severity] for f in findings), key=HEALTH_ORDER.index, default="nominal")
    return RadioCheckResult(findings=findings, steering=steering, health=health)


def radio_check(snapshot: Snapshot, state: SupervisorState) -> RadioCheckResult:
    """Run the detectors over a snapshot and decide what steers (see :func:`decide`)."""
    state.checks += 1
    return decide(run_detectors(snapshot), state, snapshot.doctrine)


def is_check_turn(turn: int, interval: int) -> bool:
    return turn % max(1, interval) == 0
