"""The microcosm adapter: the supervisor of its own agent.

It sees the agent as a value: the hooks read it once per call into
:class:`~org.kernel.turn_readings.TurnReadings` and act on it only through an
:class:`~org.kernel.agent_zero.AgentPort` (a history message, a UI log line, a pause, a blocked
tool, and the chat's saved state). From them it builds the snapshot, runs the radio check,
injects the steering, and raises the SALUTE report's health when it sees worse than the
dispatcher did.

In a unit linked to a shared volume, agent 0 also hands that snapshot to the unit's
publisher (given by the caller, see :mod:`org.macrocosm.unit`); while an XO is running
there, the radio check and the steering are left to it, so the agent is not nagged twice.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable

from org.contracts import Finding, RoleProfile
from org.contracts.common import PACE_LEVELS
from org.kernel import salute
from org.kernel.agent_scope import HANDOFF_KEY
from org.kernel.agent_zero import AgentPort
from org.kernel.cascade import project_steering
from org.kernel.dispatcher import PACE_ATTR, ROLE_ATTR
from org.kernel.files import first_error
from org.kernel.layers import NO_LAYERS, AgentReadings
from org.kernel.log import warn_once
from org.kernel.outcomes import LEDGER_KEY, ToolLedger, ToolOutcome, canonical_signature, named, record_blocked, record_outcome
from org.kernel.paths import OrganizationLayout
from org.kernel.turn_readings import TurnReadings

from . import handoff
from .breaker import failing_run
from .escalation import pause_due, pause_finding
from .events import note, note_progress, write_turn
from .radio_check import RadioCheckResult, SupervisorState, is_check_turn, radio_check
from .snapshot import Snapshot
from .steering import SteeringBook

#: Saved with the chat (no leading underscore), so the turn counter and cooldowns survive a reload.
STATE_KEY = "org_supervisor"
#: UI log heading of each injection: "Supervisor: <anomaly>".
STEERING_HEADING = "Supervisor: "
#: The state object the saved one was made from (not saved with the chat): spares parsing it again.
PARSED_STATE_KEY = "_org_supervisor_parsed"
#: The HTN layer's count when last read and the turn it put progress at (saved with the chat).
HTN_PROGRESS_KEY = "org_htn_progress"
#: The call the breaker blocked this turn, until its outcome is recorded (not saved with the chat).
BLOCKED_KEY = "_org_blocked_call"

_roles: dict[int, tuple[dict, RoleProfile]] = {}


def role_profile(role_dict: Any) -> RoleProfile | None:
    """The validated role behind ``agent._org_active_role``, cached per dict object."""
    cached = _roles.get(id(role_dict))
    if cached is not None and cached[0] is role_dict:
        return cached[1]
    try:
        role = RoleProfile.model_validate(role_dict)
    except Exception as exc:
        warn_once(f"agent.{ROLE_ATTR}: not a valid role profile ({first_error(exc)}); supervisor skipped", key=f"agent.{ROLE_ATTR}")
        return None
    if len(_roles) > 64:
        _roles.clear()
    _roles[id(role_dict)] = (role_dict, role)
    return role


#: Publishes agent 0's turn when the unit is linked to a volume: called with its role, this
#: turn's snapshot and the readings it was built from (the hooks bind it to the agent). True
#: when a running XO steers the agent, so its own radio check stays quiet; False when the agent's own must.
#: ``publisher(role, snapshot, paused_turn=None)``: publish the unit's report; True
#: when a running XO steers. ``paused_turn``: the chat was paused by this supervisor at that turn.
Publisher = Callable[..., bool]


def htn_turns_since_progress(data: dict, counted: int, turn: int) -> int:
    """Turns since progress by the HTN layer's count, kept in this chat's turns: progress is the
    count going down. A count that stays the same or grows slower than the turns (a layer that
    counts its own steps, or one not updated) moved nothing, so the stall and the PACE episode
    it began do not begin anew each turn (and are not said again each turn)."""
    last = data.get(HTN_PROGRESS_KEY)
    kept = isinstance(last, list) and len(last) == 2 and all(type(value) is int for value in last)
    if kept and counted >= last[0] and last[1] <= turn:
        progress_at = last[1]
    else:  # the first count read (or what was kept is not ours), or one that went down
        progress_at = turn - counted
    data[HTN_PROGRESS_KEY] = [counted, progress_at]
    return turn - progress_at


def build_snapshot(data: dict, pace_level: Any, role: RoleProfile, turn: int, native_repeat: bool, readings: AgentReadings) -> Snapshot:
    """The snapshot the detectors read, from the chat's state (its tool ledger) and the readings."""
    htn, bst, fill = readings.htn, readings.bst, readings.fill
    ledger = data.get(LEDGER_KEY)
    if ledger is not None and not isinstance(ledger, ToolLedger):
        warn_once(f"agent.data[{LEDGER_KEY!r}]: expected the pack's tool ledger, found {type(ledger).__name__}; tool history ignored", key=LEDGER_KEY)
        ledger = None
    level = pace_level
    if level is not None and level not in PACE_LEVELS:
        warn_once(f"agent.{PACE_ATTR}: unknown PACE level {str(level)[:40]!r}; ignored", key=f"agent.{PACE_ATTR}")
        level = None
    if htn is not None:
        turns, source = htn_turns_since_progress(data, htn.turns_since_progress, turn), "htn"
    elif ledger is not None:
        turns, source = ledger.turns_since_progress, "pack"
    else:
        turns, source = None, None
    return Snapshot(
        turn=turn,
        role_id=role.role_id,
        doctrine=role.doctrine,
        pace_level=level,
        pace_plan=role.pace_plan,
        turns_since_progress=turns,
        turns_without_tool=ledger.turns_without_tool if ledger is not None else None,
        progress_source=source,
        current_step=htn.current_step if htn else None,
        plan_name=htn.plan_name if htn else None,
        bst_domain=bst.domain if bst else None,
        bst_confidence=bst.confidence if bst else None,
        outcomes=tuple(ledger.outcomes) if ledger is not None else (),
        context_fill=fill.fill if fill else None,
        native_repeat_warning=native_repeat,
    )


def counted_from_resume(snapshot: Snapshot, resumed_at: int | None) -> Snapshot:
    """The snapshot the unit's own check reads after the user resumed the chat: supervision
    started over there (the pause notice says so), so turns without progress, and with them a
    stall and its looks that found nothing, count from the resume, not from before the pause."""
    stopped = snapshot.turns_since_progress
    if resumed_at is None or stopped is None or snapshot.turn - stopped >= resumed_at:
        return snapshot
    return replace(snapshot, turns_since_progress=snapshot.turn - resumed_at)


def _role_id(role: Any) -> str | None:
    return role.get("role_id") if isinstance(role, dict) else None


def still_paused(readings: TurnReadings, port: AgentPort, state: SupervisorState) -> bool:
    """Whether the chat the supervisor paused is still paused; once resumed, supervision starts over."""
    if state.paused_turn is None:
        return False
    if readings.paused:
        return True
    state.start_over()
    port.log(type="info", heading=f"{STEERING_HEADING}resumed", content="The chat was resumed; supervision starts over.")
    note(port.data, "resume", _role_id(readings.role), state.turn)
    return False


def steered_about_call(role_dict: Any, port: AgentPort, call: str) -> bool:
    """The XO's loop steering about ``call`` reached the agent: counted and acted on as the
    supervisor's own loop steering (a nudge in the loop episode, the breaker opened on the
    unit's own evidence). True when the breaker opened."""
    role = role_profile(role_dict)
    data = port.data
    ledger = data.get(LEDGER_KEY)
    if role is None or not isinstance(ledger, ToolLedger):
        return False
    found = failing_run(ledger.outcomes, call, role.doctrine.loop.exempt_tools)
    if found is None:
        return False  # not a call this chat repeated and failed: nothing to open
    last, times = found
    outcomes = list(ledger.outcomes)
    state = SupervisorState.from_dict(data.get(STATE_KEY))
    finding = Finding(anomaly="loop", template="loop_repeat", turn=state.turn, evidence={"times": times, "action": named(last)})
    state.record(finding)
    opened = state.breakers.open_for(finding, outcomes[:outcomes.index(last) + 1], role.doctrine)
    if opened and last is not ledger.outcomes[-1]:
        state.breakers.open[last.signature].other_since = True  # the agent did something else since: half-open
    data[STATE_KEY] = state.to_dict()
    if opened:
        port.log(type="info", heading=f"{STEERING_HEADING}breaker open",
                 content=f"{finding.evidence['action']} will not be run again while it keeps failing the same way.")
    return opened


def _saved_state(data: dict) -> SupervisorState:
    """The supervisor's state saved with the chat; the object the last turn saved it from while
    that saved dict is still the one there (anything that changes the state saves a new one)."""
    saved = data.get(STATE_KEY)
    parsed = data.get(PARSED_STATE_KEY)
    if isinstance(parsed, tuple) and len(parsed) == 2 and parsed[0] is saved and isinstance(parsed[1], SupervisorState):
        return parsed[1]
    return SupervisorState.from_dict(saved)


class MicrocosmSupervisor:
    """Runs the radio check for one agent at the end of each of its turns."""

    def __init__(self, layout_provider, steering: SteeringBook | None = None):
        self._layout_provider = layout_provider
        self._steering = steering
        self._books: dict[tuple[Any, ...], SteeringBook] = {}
        self._last_book: tuple[OrganizationLayout, str | None, SteeringBook] | None = None

    def steering(self, layout: OrganizationLayout, project: str | None) -> SteeringBook:
        """The organization's texts, with those of the chat's project over them (one book per pair of files)."""
        if self._steering is not None:
            return self._steering
        last = self._last_book
        if last is not None and last[0] is layout and last[1] == project:
            return last[2]  # the same organizations folder and project as the last steering: no paths to build
        paths = (layout.steering_file, project_steering(layout, project))
        if paths not in self._books:
            self._books[paths] = SteeringBook(*paths)
        self._last_book = (layout, project, self._books[paths])
        return self._books[paths]

    async def _steer(self, readings: TurnReadings, port: AgentPort, finding: Finding, state: SupervisorState,
                     layout: OrganizationLayout, checked: bool = False) -> bool:
        """Inject one steering; only one that reached the agent starts its cooldown. ``checked``: the
        steering texts' files were looked at for an earlier steering of this check."""
        finding.text = self.steering(layout, readings.project).render(finding, repeated=state.repeated(finding.anomaly), checked=checked)
        try:
            await port.warn(finding.text)
        except Exception as exc:
            warn_once(f"agent.hist_add_warning failed ({type(exc).__name__}: {exc}); the {finding.anomaly} steering was not injected and will be tried again",
                      key=f"agent.hist_add_warning {type(exc).__name__}")
            return False
        state.record(finding)
        port.log(type="warning", heading=f"{STEERING_HEADING}{finding.anomaly}", content=finding.text)
        note(port.data, "steering", _role_id(readings.role), state.turn, anomaly=finding.anomaly, template=finding.template)
        return True

    async def turn_end(self, readings: TurnReadings, port: AgentPort, publisher: Publisher | None = None) -> RadioCheckResult | None:
        """The radio check at a turn's end (``readings`` with its layers); ``publisher``: agent 0 of a linked unit's."""
        if readings.role is None:
            return None  # no organization active: nothing to do
        role = role_profile(readings.role)
        if role is None:
            return None
        data = port.data
        layers = readings.layers or NO_LAYERS
        state = _saved_state(data)
        state.turn += 1
        try:
            snapshot = None
            if publisher is not None:
                snapshot = build_snapshot(data, readings.pace_level, role, state.turn, readings.native_repeat, layers)
                if publisher(role, snapshot):
                    # the XO runs the radio check on the report and steers; the breaker it opened runs here
                    if not still_paused(readings, port, state):
                        await self._breaker_pause(readings, port, snapshot, state)
                        if state.paused_turn == state.turn:  # paused itself: the XO is told, and waits for a resume
                            publisher(role, snapshot, paused_turn=state.paused_turn)
                    return None
            if still_paused(readings, port, state):
                return None
            layout: OrganizationLayout = self._layout_provider()
            if not is_check_turn(state.turn, role.doctrine.radio_check_interval_turns):
                return None
            snapshot = snapshot or build_snapshot(data, readings.pace_level, role, state.turn, readings.native_repeat, layers)
            note_progress(data, role.role_id, state.turn, snapshot.turns_since_progress)
            own = counted_from_resume(snapshot, state.resumed_at)  # (what an XO is sent stays as read)
            result = radio_check(own, state)
            if result.findings:
                note(data, "radio_check", role.role_id, state.turn, findings=[f.anomaly for f in result.findings])
            await self._act(readings, port, own, result, state, layout)
            if publisher is not None and state.paused_turn == state.turn:  # an XO that starts finds it paused
                publisher(role, snapshot, paused_turn=state.paused_turn)
            if readings.number == 0 and (result.findings or state.health_corrected):
                # corrected while anomalies are there, and once more when they clear (back down)
                salute.correct_health(layout, role.role_id, result.health, [f.anomaly for f in result.findings], state.turn)
                state.health_corrected = bool(result.findings)
            return result
        finally:
            saved = data[STATE_KEY] = state.to_dict()
            data[PARSED_STATE_KEY] = (saved, state)
            write_turn(data, readings.chat, readings.project, self._layout_provider)

    async def _act(self, readings: TurnReadings, port: AgentPort, snapshot: Snapshot, result: RadioCheckResult,
                   state: SupervisorState, layout: OrganizationLayout) -> None:
        """Steer what is due, open breakers, and pause when steering keeps going unanswered."""
        last = snapshot.outcomes[-1] if snapshot.outcomes else None
        if result.pause is not None:  # the proof that steering is ignored (radio_check.ignored)
            await self._pause(readings, port, result.pause, max(result.ignored, 1), state, layout, on_proof=True)
            return
        for index, finding in enumerate(result.steering):
            if await self._steer(readings, port, finding, state, layout, checked=index > 0) and last is not None:
                if finding.template == "pace_emergency":
                    state.emergency_turn = last.turn
                elif state.breakers.open_for(finding, snapshot.outcomes, snapshot.doctrine):
                    port.log(type="info", heading=f"{STEERING_HEADING}breaker open",
                             content=f"{finding.evidence.get('action')} will not be run again while it keeps failing the same way.")

    async def _breaker_pause(self, readings: TurnReadings, port: AgentPort, snapshot: Snapshot, state: SupervisorState) -> None:
        """While the XO steers: pause when the calls the breaker blocked, with the XO's loop
        steering, went unanswered as often as the escalation allows, as the supervisor's own
        ladder does; the loop episode ends once no breaker is open."""
        if not state.breakers.open:
            state.episode.pop("loop", None)
            return
        last = snapshot.outcomes[-1] if snapshot.outcomes else None
        nudges = state.episode.get("loop", 0)
        if last is None or last.signature not in state.breakers.open or not pause_due(nudges, snapshot.doctrine.escalation):
            return
        breaker = state.breakers.open[last.signature]
        finding = Finding(anomaly="loop", template="loop_repeat", turn=state.turn,
                          evidence={"action": breaker.action, "outcome": breaker.error_line or "the same error"})
        await self._pause(readings, port, finding, nudges, state, self._layout_provider())

    async def _pause(self, readings: TurnReadings, port: AgentPort, finding: Finding, nudges: int, state: SupervisorState,
                     layout: OrganizationLayout, on_proof: bool = False) -> None:
        """Pause the chat as Agent-Zero's pause button does, saying why, once (``on_proof``:
        ``nudges`` counts what the agent did again after the steering, not steering unanswered)."""
        text = self.steering(layout, readings.project).render(pause_finding(finding, nudges, on_proof))
        try:
            await port.warn(text)
        except Exception as exc:
            warn_once(f"agent.hist_add_warning failed ({type(exc).__name__}: {exc}); the pause is announced in the UI log only")
        if not port.pause():
            warn_once("agent.context.paused cannot be set; the supervisor cannot pause this chat and keeps steering")
            return
        state.paused_turn = state.turn
        note(port.data, "pause", _role_id(readings.role), state.turn, anomaly=finding.anomaly, template="pause")
        port.log(type="warning", heading=f"{STEERING_HEADING}paused",
                 content=f"{text} The supervisor paused this chat; resume it when you have looked, and supervision starts over.",
                 kvps={"anomaly": finding.anomaly})

    def tool_start(self, readings: TurnReadings, port: AgentPort, tool_name: str, tool_args: Any, handed_down: Any = None) -> bool:
        """Before a tool runs: block it when its breaker is open, or when it relays a task down a
        chain of subordinates none of which began it (``handed_down``: the superior's record of
        the delegation that gave this agent its task). True when it was blocked."""
        data = port.data
        if tool_name == handoff.DELEGATION_TOOL and self._hand_on(readings, port, tool_args, handed_down):
            return True
        saved = data.get(STATE_KEY)
        if not isinstance(saved, dict) or not saved.get("breakers"):
            return False  # no open breaker: the common case costs one dict look-up
        role = role_profile(readings.role)
        ledger = data.get(LEDGER_KEY)
        if role is None or not isinstance(ledger, ToolLedger):
            return False
        state = SupervisorState.from_dict(saved)
        still_paused(readings, port, state)
        signature = canonical_signature(tool_name, tool_args)
        breaker = state.breakers.check(signature, ledger.turn, role.doctrine)
        if breaker is not None:
            finding = Finding(anomaly="loop", template="blocked", turn=state.turn, evidence={
                "action": breaker.action, "times": breaker.times, "outcome": breaker.error_line or "the same error",
                "error_type": breaker.error_type or ""})
            text = self.steering(self._layout_provider(), readings.project).render(finding)
            if port.block_tool(text):
                state.nudged("loop")
                data[BLOCKED_KEY] = (signature, breaker)
                port.log(type="warning", heading=f"{STEERING_HEADING}blocked", content=text)
                note(data, "block", role.role_id, state.turn, anomaly="loop", template="blocked")
            else:
                breaker = None
        data[STATE_KEY] = state.to_dict()
        write_turn(data, readings.chat, readings.project, self._layout_provider)
        return breaker is not None

    def _hand_on(self, readings: TurnReadings, port: AgentPort, tool_args: Any, handed_down: Any) -> bool:
        """Record what a delegation hands on; block it when it is the second relay in a row (:mod:`.handoff`)."""
        data = port.data
        ledger = data.get(LEDGER_KEY)
        own_work = isinstance(ledger, ToolLedger) and any(o.tool != handoff.DELEGATION_TOOL for o in ledger.outcomes)
        message = handoff.message_of(tool_args)
        relays = handoff.relays(readings.number, handed_down, message, own_work)
        data[HANDOFF_KEY] = handoff.record(message, relays)
        role = role_profile(readings.role)
        if relays < handoff.RELAYS_BLOCKED or role is None or not role.doctrine.breaker.enabled:
            return False
        if handoff.DELEGATION_TOOL in role.doctrine.loop.exempt_tools:
            return False
        state = SupervisorState.from_dict(data.get(STATE_KEY))
        finding = Finding(anomaly="loop", template="blocked_handoff", turn=state.turn, evidence={
            "superiors": handoff.relayed_by(readings.number, relays), "task": message or ""})
        text = self.steering(self._layout_provider(), readings.project).render(finding)
        if not port.block_tool(text):
            return False
        state.nudged("loop")
        port.log(type="warning", heading=f"{STEERING_HEADING}blocked", content=text)
        note(data, "block", role.role_id, state.turn, anomaly="loop", template="blocked_handoff")
        data[STATE_KEY] = state.to_dict()
        write_turn(data, readings.chat, readings.project, self._layout_provider)
        return True

    def tool_done(self, data: dict, tool_name: str, tool_args: Any, output: str, verdict: Any) -> ToolOutcome:
        """After a tool ran (or was blocked): record its outcome in the chat's state ``data`` and let the breakers see it."""
        blocked = data.pop(BLOCKED_KEY, None)
        ok, error_type = verdict if verdict is not None else (None, None)
        if isinstance(blocked, tuple) and blocked[0] == canonical_signature(tool_name, tool_args):
            outcome = record_blocked(data, tool_name, tool_args, blocked[1])
        else:
            blocked = None
            outcome = record_outcome(data, tool_name, tool_args, output, ok, error_type)
        saved = data.get(STATE_KEY)
        if isinstance(saved, dict) and saved.get("breakers"):
            state = SupervisorState.from_dict(saved)
            state.breakers.observe(outcome, blocked is not None)
            data[STATE_KEY] = state.to_dict()
        return outcome
