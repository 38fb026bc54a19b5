"""The circuit breaker (seed 001's, adapted): a call that keeps failing the same way is
not run again.

It acts only on the surest pattern: the very same call (tool and normalised arguments)
failed ``breaker.failures`` times in a row with the same error, and a loop steering
about it reached the agent. The next identical call is then not executed; the agent
gets a short ``[SUPERVISOR] Blocked: …`` result instead. The breaker half-opens (lets
one identical call through to try again) after ``breaker.half_open_turns`` turns or
once the agent has done something else in between; that call closes it when it
succeeds or fails differently, and opens it again when it fails the same way. A
different call is never blocked, nor are the doctrine's exempt tools, nor a check after a
wait whose failure waiting can change (``outcomes.checks_on_something_running``).

The loop steering that opens it comes from the unit's own supervisor or, while the unit is
linked to a running XO, from the XO: its message names the call it is about
(``SteeringMessage.call``) and the unit's inbox hands it to :func:`failing_run`, so both open
the breaker on the same evidence, the unit's own ledger.

The state is plain JSON-able data, kept with the supervisor's state in the chat.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from org.contracts import Finding
from org.contracts.role import Doctrine
from org.kernel.bounded import drop_oldest
from org.kernel.outcomes import ToolOutcome, checks_on_something_running, never_a_loop, watched_for_loops
from org.kernel.values import count_or

#: at most this many open breakers are kept (the oldest are forgotten)
KEPT = 16


@dataclass
class OpenBreaker:
    """One open breaker: the call and the failure it keeps producing."""

    opened_turn: int  # ledger turn it (re)opened at
    times: int
    error_type: str | None
    error_line: str | None
    error_signature: str | None
    output_hash: str
    action: str
    probing: bool = False  # one identical call was let through to try again
    other_since: bool = False  # the agent did something else since it opened

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @classmethod
    def from_dict(cls, data: Any) -> OpenBreaker | None:
        if not isinstance(data, dict):
            return None
        try:
            return cls(
                opened_turn=count_or(data.get("opened_turn")), times=count_or(data.get("times")),
                error_type=_text(data.get("error_type")), error_line=_text(data.get("error_line")),
                error_signature=_text(data.get("error_signature")), output_hash=_text(data.get("output_hash")) or "",
                action=_text(data.get("action")) or "the same call", probing=data.get("probing") is True,
                other_since=data.get("other_since") is True,
            )
        except Exception:
            return None


def failing_run(outcomes: Sequence[ToolOutcome], signature: str, exempt: Sequence[str]) -> tuple[ToolOutcome, int] | None:
    """The latest outcome of the call ``signature`` and how many times in a row (ignoring
    exempt calls) it failed that same way; None when it did not fail or is not there."""
    watched = watched_for_loops(outcomes, exempt)
    at = next((i for i in range(len(watched) - 1, -1, -1) if watched[i].signature == signature), None)
    if at is None or watched[at].ok:
        return None
    last, times = watched[at], 1
    while at - times >= 0 and (watched[at - times].signature, watched[at - times].result) == (signature, last.result):
        times += 1
    return last, times


def _text(value: Any) -> str | None:
    return value[:200] if isinstance(value, str) else None


@dataclass
class Breakers:
    """The open breakers of one agent, by call signature."""

    open: dict[str, OpenBreaker] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {signature: b.to_dict() for signature, b in self.open.items()}

    @classmethod
    def from_dict(cls, data: Any) -> Breakers:
        breakers = cls()
        if isinstance(data, dict):
            for signature, value in list(data.items())[-KEPT:]:
                breaker = OpenBreaker.from_dict(value)
                if isinstance(signature, str) and breaker is not None:
                    breakers.open[signature] = breaker
        return breakers

    def open_for(self, finding: Finding, outcomes: Sequence[ToolOutcome], doctrine: Doctrine) -> bool:
        """Open the breaker for the call a loop steering was about (the last of ``outcomes``, the
        chat's up to that call), when it is the surest pattern: not one checking on something
        running after a wait, whose failure waiting can change."""
        last = outcomes[-1]
        exempt = doctrine.loop.exempt_tools
        if (not doctrine.breaker.enabled or finding.template != "loop_repeat" or last.ok
                or finding.evidence.get("times", 0) < doctrine.breaker.failures or never_a_loop(last, exempt)
                or checks_on_something_running(outcomes, exempt)):
            return False
        self.open[last.signature] = OpenBreaker(
            opened_turn=last.turn, times=int(finding.evidence.get("times", 0)), error_type=last.error_type,
            error_line=last.error_line, error_signature=last.error_signature, output_hash=last.output_hash,
            action=finding.evidence.get("action") or last.tool,
        )
        drop_oldest(self.open, KEPT)
        return True

    def check(self, signature: str, turn: int, doctrine: Doctrine) -> OpenBreaker | None:
        """The open breaker that blocks this call now, or None (it may run; a half-open one lets it through once)."""
        breaker = self.open.get(signature)
        if breaker is None or not doctrine.breaker.enabled:
            return None
        if breaker.probing:
            return None
        if breaker.other_since or turn - breaker.opened_turn >= doctrine.breaker.half_open_turns:
            breaker.probing = True  # half-open: this one call tries again
            return None
        return breaker

    def observe(self, outcome: ToolOutcome, blocked: bool) -> None:
        """After a call: a probe's result closes or reopens its breaker; any other call counts as doing something else."""
        for signature, breaker in list(self.open.items()):
            if signature != outcome.signature:
                breaker.other_since = True
                continue
            if blocked or not breaker.probing:
                continue
            if not outcome.ok and outcome.result == (breaker.error_signature or breaker.output_hash):
                breaker.probing, breaker.other_since, breaker.opened_turn = False, False, outcome.turn
                breaker.times += 1
            else:
                del self.open[signature]  # it worked, or failed differently: the call is no longer the same dead end
