"""What the XO sends to a unit, given what it remembers of the unit and its latest report
or its silence. Decisions only: these functions change the unit's state in memory and
log what they decide, and leave every file to the XO and its outbox.

Escalation: ``nudges`` counts the steering sent in the current episode; it words the
next one as a hint, a warning, then critical. A report that proves the steering is ignored
(the radio check's ``pause``, as the unit's own supervisor decides it), or
``pause_after_nudges`` unanswered nudges, make the XO send one pause instead and wait until
the unit reports a later turn (it was resumed). A radio check that finds nothing on a fresh report ends the episode.

Heartbeats: a unit's freshness is the age of its last report. A silent unit that was
busy gets a heartbeat nudge on the same ladder, again every ``stale_after_seconds``;
a very stale unit is logged once per silence and its health is unknown.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable, Literal

from org.contracts import Finding
from org.contracts.common import AnomalyType, NudgeSeverity
from org.contracts.salute import SaluteReport, SaluteSignals
from org.contracts.steering_message import MAX_TEXT_CHARS
from org.kernel.log import logger
from org.lazy_patterns import lazy_pattern
from org.supervisor.escalation import nudge_severity, pause_due, pause_finding
from org.supervisor.radio_check import SupervisorState, radio_check
from org.supervisor.signals import snapshot_from_signals

from .state import UnitState, freshness, shared

_CALL_SIGNATURE = lazy_pattern(r"[0-9a-f]{1,64}")
#: How far a unit's clock may run ahead of the XO's before its steering is stamped in its time.
CLOCK_TOLERANCE_SECONDS = 60.0
#: How often the same message is sent again (refused, expired or gone): a unit that refuses
#: everything (a key it will never have) is not sent an endless stream.
MAX_RESENDS = 3

#: Report states in which a unit is expected to keep reporting.
BUSY_STATES = frozenset({"active", "waiting", "error_recovery", "escalating"})

#: Words a finding as steering text: ``SteeringBook.render(finding, repeated)``.
Render = Callable[[Finding, bool], str]


@dataclass(frozen=True)
class Steering:
    """One steering the XO decided to send to a unit, before it is a signed message."""

    kind: Literal["steer", "pause", "inform"]
    anomaly: AnomalyType | None
    severity: NudgeSeverity
    text: str
    nudge: int  # steering already sent in this episode
    turn: int | None  # the unit's turn it answers
    sources: tuple[str, ...] = ()  # inform: the units the relayed learnings come from
    call: str | None = None  # loop steering: the signature of the call repeated with the same failure


@dataclass
class Verdict:
    """What judging one report, or one silence, decided."""

    steering: Steering | None = None
    changed: bool = False  # something the XO decides on changed: the state is to be written
    checked: bool = False  # a radio check ran
    recovered: bool = False  # a clean check ended an episode
    very_stale: bool = False  # the silence became very stale
    resumed: bool = False  # a paused unit reported a later turn
    paused_itself: bool = False  # the unit's report says its own supervisor paused it
    again: bool = False  # the steering is the last message sent again (send_again)


def silence(age_seconds: float) -> str:
    """How long a unit has been silent, in words: "45 seconds", "1 minute", "7 minutes"."""
    if age_seconds < 120:
        seconds = int(age_seconds)
        return f"{seconds} second{'s' if seconds != 1 else ''}" if age_seconds < 60 else "1 minute"
    return f"{int(age_seconds // 60)} minutes"


def not_taken(signals: SaluteSignals, state: UnitState) -> bool:
    """The unit's report says it has not yet taken the XO's latest steering from its inbox.

    A unit drains its inbox before each prompt, so a report written before the XO's answer
    arrived (the usual case: the unit goes on while the XO judges) still shows the older seq.
    Reports without ``steering_seq`` (older units) are taken at their word: never waiting.
    """
    return signals.steering_seq is not None and signals.steering_seq < state.seq


def check_due(turn: int, checked_turn: int | None, interval: int) -> bool:
    """A radio check runs on the first report, then whenever a check boundary was crossed."""
    interval = max(1, interval)
    return checked_turn is None or turn // interval > checked_turn // interval


def report_seconds(moment: datetime) -> float:
    return (moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)).timestamp()


#: The parts of a saved SupervisorState that change what steers (not its counters).
_COUNTERS = frozenset({"turn", "checks", "health_corrected"})


def _decides_differently(saved: dict[str, Any], before: dict[str, Any]) -> bool:
    return any(before.get(k) != v for k, v in saved.items() if k not in _COUNTERS) or any(
        k not in saved for k in before if k not in _COUNTERS)


def judge_report(state: UnitState, report: SaluteReport, now: float, render: Render,
                 gone: Callable[[], bool] = lambda: False, written: float | None = None) -> Verdict:
    """Take in a new report of the unit, and decide whether a radio check runs and what it sends.

    ``gone()``: the last message is in none of the unit's folders (taken out of its inbox);
    ``written``: the report's time, when the caller has it already."""
    verdict = Verdict()
    unit = state.unit
    signals = report.signals
    turn = signals.turn if signals is not None else report.time.turns_elapsed
    written = report_seconds(report.time.timestamp) if written is None else written
    report_time = _unit_clock(state, written, now, verdict)
    if (state.report_time is None or report_time > state.report_time) and (state.heartbeat_at is not None or state.very_stale_logged):
        logger.info("unit reporting again: unit=%s turn=%s after %.0f s of silence", unit, turn, report_time - (state.report_time or report_time))
        state.heartbeat_at = None
        state.very_stale_logged = False
        verdict.changed = True
    earlier = max((t for t in (state.last_turn, state.checked_turn, state.paused_turn) if t is not None), default=None)
    state.note(role_id=report.unit.role_id, report_time=report_time, report_state=report.status.state,
               report_health=report.status.health, last_turn=turn)
    if signals is None:
        return verdict
    if signals.doctrine.heartbeat != state.heartbeat or signals.doctrine.escalation != state.escalation:
        state.heartbeat = shared(signals.doctrine.heartbeat)
        state.escalation = shared(signals.doctrine.escalation)
        verdict.changed = True
    if earlier is not None and turn < earlier:
        logger.info("unit started over: unit=%s turn=%s after turn %s", unit, turn, earlier)
        _new_episode(state, verdict)
        supervisor = SupervisorState.from_dict(state.supervisor)
        supervisor.forget_episodes()  # a new chat: what was said belongs to the old one
        state.supervisor = supervisor.to_dict()
        state.checked_turn = None
    if not state.outbox:
        verdict.steering = send_again(state, signals, now, gone)
        if verdict.steering is not None:
            verdict.changed = verdict.again = True
            return verdict
    if signals.paused_turn is not None and state.paused_turn is None:
        # its breaker's blocks went unanswered: paused on the proof the XO would pause on; nothing to send
        logger.warning("unit paused itself: unit=%s turn=%s", unit, signals.paused_turn)
        state.paused_turn, state.paused_itself = signals.paused_turn, True
        verdict.changed = verdict.paused_itself = True
        return verdict
    if state.paused_turn is not None:
        if turn <= state.paused_turn or not_taken(signals, state):
            return verdict  # paused (or not yet: the pause waits in its inbox): nothing more until someone resumes it
        logger.info("unit resumed: unit=%s turn=%s (paused at turn %s)", unit, turn, state.paused_turn)
        _new_episode(state, verdict)
        supervisor = SupervisorState.from_dict(state.supervisor)
        supervisor.start_over()  # as the unit's own supervisor does on a resume: the user has decided
        state.supervisor = supervisor.to_dict()
        verdict.resumed = True
    if state.outbox:
        return verdict  # a steering still waits for the inbox: no more until it is delivered
    if check_due(turn, state.checked_turn, signals.doctrine.radio_check_interval_turns):
        _radio_check(state, report, signals, now, render, verdict)
    return verdict


def _unit_clock(state: UnitState, report_time: float, now: float, verdict: Verdict) -> float:
    """The report's time by the XO's clock: never later than now. A unit whose clock runs ahead
    (past :data:`CLOCK_TOLERANCE_SECONDS`) is logged once, and its steering is stamped in its time."""
    ahead = report_time - now
    if ahead > CLOCK_TOLERANCE_SECONDS:
        if state.clock_ahead is None or abs(ahead - state.clock_ahead) > CLOCK_TOLERANCE_SECONDS:
            logger.warning("unit clock ahead: unit=%s its report is %.0f s ahead of the XO's clock; its steering is stamped "
                           "in its time so that it is not refused as expired (keep the hosts' clocks in sync)", state.unit, ahead)
            state.clock_ahead = ahead
            verdict.changed = True
        return now
    if state.clock_ahead is not None:
        state.clock_ahead = None
        verdict.changed = True
    return min(report_time, now)


def send_again(state: UnitState, signals: SaluteSignals, now: float, gone: Callable[[], bool]) -> Steering | None:
    """The last message once more, with a new seq, when the unit cannot take it: it refused it
    (expired by its clock, or signed with a key it does not hold yet), or it was never taken and
    has expired or is gone from the inbox. The new one is above it, so the old one put back
    later is refused; at most :data:`MAX_RESENDS` times."""
    last = state.last_steering
    if last is None or last.get("seq") != state.seq or state.resent >= MAX_RESENDS:
        return None
    refused = signals.steering_refused
    if refused is not None and refused.seq == state.seq:
        why = f"refused by the unit ({refused.reason}: {refused.detail})"
    elif signals.steering_seq is not None and signals.steering_seq < state.seq:
        if now > float(last.get("expires") or now):
            why = "expired before the unit took it"
        elif gone():
            why = "gone from the unit's inbox before the unit took it"
        else:
            return None
    else:
        return None
    state.resent += 1
    logger.warning("steering sent again: unit=%s seq=%s %s", state.unit, state.seq, why)
    fields = {k: last[k] for k in ("kind", "anomaly", "severity", "text", "nudge", "turn")}
    return Steering(**fields, sources=tuple(last.get("sources") or ()))


def _new_episode(state: UnitState, verdict: Verdict) -> None:
    state.nudges = 0
    state.paused_turn, state.paused_itself = None, False
    verdict.changed = True


def _radio_check(state: UnitState, report: SaluteReport, signals: SaluteSignals, now: float, render: Render, verdict: Verdict) -> None:
    supervisor = SupervisorState.from_dict(state.supervisor)
    supervisor.turn = signals.turn
    check = radio_check(snapshot_from_signals(signals), supervisor)
    verdict.checked = True
    # a unit that has not taken the last steering from its inbox yet has not answered it
    # either: the next nudge waits, so the ladder climbs only on nudges the agent has seen.
    # And a report that ends a task is not steered: the unit would drop advice about a task
    # that is over, and the nudge would count as unanswered.
    busy = report.status.state in BUSY_STATES
    due = check.steering if busy and not not_taken(signals, state) else []
    # every anomaly that is due reaches the agent, in one message: one nudge on the ladder
    finding = due[0] if due else None
    repeated = {f.anomaly: supervisor.repeated(f.anomaly) for f in due}
    for steered in due:
        supervisor.record(steered)
    saved = supervisor.to_dict()
    if _decides_differently(saved, state.supervisor):
        verdict.changed = True
    # a check that changed no cooldown or episode is not written: after a crash the
    # report is checked again with the same state, and reaches the same verdict
    state.note(supervisor=saved, checked_turn=signals.turn)
    if not check.findings and state.nudges and state.freshness(now) == "fresh":
        logger.info("unit recovered: unit=%s turn=%s after %s nudge(s)", state.unit, signals.turn, state.nudges)
        state.nudges = 0
        verdict.changed = True
        verdict.recovered = True
    if check.pause is not None and busy and not not_taken(signals, state):
        verdict.steering = _pause_on_proof(state, check.pause, check.ignored, signals.turn, render)
    elif finding is not None:
        verdict.steering = _next_step(state, due, repeated, signals.turn, render, repeated_call(due, signals))


def repeated_call(due: list[Finding], signals: SaluteSignals) -> str | None:
    """The call a loop steering is about (the unit's breaker opens on it), as the unit's own
    supervisor takes it: the last outcome, when it failed."""
    last = signals.outcomes[-1] if signals.outcomes else None
    if last is None or last.ok or not any(f.template == "loop_repeat" for f in due):
        return None
    return last.signature if _CALL_SIGNATURE.fullmatch(last.signature) else None  # a report is the unit's word: checked


def judge_silence(state: UnitState, now: float, render: Render, last_waiting: Callable[[], bool]) -> Verdict:
    """For a unit whose last report is older than ``stale_after_seconds``: log a very stale
    one once, and nudge a busy one, once per ``stale_after_seconds``.

    Not while ``last_waiting()``: the last steering still lies in the unit's inbox, unseen,
    and the ladder climbs only on nudges the agent has seen (a unit that is gone gets one
    nudge, not a pile of them ending in a pause)."""
    verdict = Verdict()
    age = state.age(now) or 0.0
    if freshness(age, state.heartbeat) == "very_stale" and not state.very_stale_logged:
        logger.warning("unit very stale: unit=%s last report %.0f s ago; health unknown", state.unit, age)
        state.very_stale_logged = True
        verdict.changed = True
        verdict.very_stale = True
    if state.report_state not in BUSY_STATES or state.paused_turn is not None or state.outbox:
        return verdict
    if state.heartbeat_at is not None and now - state.heartbeat_at < state.heartbeat.stale_after_seconds:
        return verdict
    if last_waiting():
        return verdict
    if state.heartbeat.pause_when_very_stale and freshness(age, state.heartbeat) == "very_stale":
        return _pause_now(state, verdict, age, render)
    repeated = state.heartbeat_at is not None
    state.heartbeat_at = now
    turn = state.last_turn or 0
    finding = Finding(anomaly="heartbeat", template="heartbeat_stale", turn=turn, evidence={"silence": silence(age)})
    verdict.steering = _next_step(state, [finding], {finding.anomaly: repeated}, turn, render)
    return verdict


def _pause_now(state: UnitState, verdict: Verdict, age: float, render: Render) -> Verdict:
    """The doctrine says a busy unit must not run unwatched: a very stale one is paused at once."""
    turn = state.last_turn or 0
    pause = pause_finding(Finding(anomaly="heartbeat", template="heartbeat_stale", turn=turn), state.nudges)
    state.paused_turn = turn
    logger.warning("unit paused: unit=%s silent for %.0f s, and its doctrine pauses a very stale busy unit", state.unit, age)
    verdict.steering = Steering("pause", "heartbeat", "critical", render(pause, False), state.nudges, turn)
    verdict.changed = True
    return verdict


def _pause_on_proof(state: UnitState, finding: Finding, ignored: int, turn: int, render: Render) -> Steering:
    """The report proves the steering is ignored (``radio_check.ignored``, as the unit's own
    supervisor decides it): the pause, without waiting for the rest of the ladder."""
    pause = pause_finding(finding, max(ignored, 1), on_proof=True)
    state.paused_turn = turn
    return Steering("pause", finding.anomaly, "critical", render(pause, False), state.nudges, turn)


def _next_step(state: UnitState, due: list[Finding], repeated: dict[str, bool], turn: int, render: Render,
               call: str | None = None) -> Steering:
    """The next step of the ladder: a steer worded by its severity (the texts of every due
    finding, most severe first), or the pause."""
    finding = due[0]
    before = state.nudges
    if pause_due(before, state.escalation):
        pause = pause_finding(finding, before)
        state.paused_turn = turn
        return Steering("pause", finding.anomaly, "critical", render(pause, False), before, turn)
    state.nudges = before + 1
    text = " ".join(render(f, repeated.get(f.anomaly, False)) for f in due)[:MAX_TEXT_CHARS]
    return Steering("steer", finding.anomaly, nudge_severity(before), text, before, turn, call=call)
