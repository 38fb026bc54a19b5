"""One radio check: detectors over a snapshot, then restraint and the cooldown rule decide
what steers, and whether the proof that steering is ignored is there (a pause); what only the
words of the findings said need is worked out for those alone (``detectors.WORDING``).

Restraint: a finding names its episode (``evidence["episode"]``: the call and its result,
the error, the turn progress stopped, the PACE level…). One message per anomaly per
episode: while the evidence is the same, nothing more is said, on cooldown or not; new
evidence (a new result, a new error, the task moving) is a new episode. A stall is the one
exception: still there after its cooldown, it is said once more, firmly (it has lasted
longer). The task moving elsewhere does not change a rerun's or churn's evidence: said again
after it, with its count grown, it is said only once the count has doubled (3, then 6, then
12). The context's fill is not the task: its level is said once and not again as the task
moves, until the fill has grown by a band (5 points) or fell (history compressed) and came
back. Nor is an edited file that is not the copy that runs: said once in the task for each
pair of copies, and once more, with its count, when three more runs (``loop.rerun_threshold``)
have gone through that copy. Two findings of one check about the same call say it once (the first, most severe);
a stall is not said when another steering already told the agent it is stuck since the
task last moved; nor is PACE below emergency. A finding may name the episode of another
anomaly that said the same (``evidence["said_as"]``): a rerun with nothing changed in between
says what a loop steering about the same call and result said, and calls in a row sent to a
terminal still busy say what a churn about that busy terminal said (or what the user resumed on).
After the user resumed the chat, PACE at any level is not said until the task has moved: the
failures it climbed on came before the user let the agent go on.

The cooldown rule, per anomaly type and independent across types:

* a type that steered at turn ``t`` may steer again from turn ``t + cooldown`` on;
* a finding more severe than the one that started the cooldown (context 80% -> 90%)
  is not held back by it;
* PACE emergency is exempt;
* every anomaly whose cooldown allows it steers, so none can starve another; they
  reach the agent most severe first.

The proof that steering is ignored (:func:`ignored`): after a loop steering, the agent does
the very action again with the same failing result (a blocked attempt counts)
``escalation.pause_after_ignored`` times, or with the same result of a call that worked (the
same output, the same edit going in again) ``escalation.pause_after_ignored_working`` times
(not a wait, then a look, in one call or two: checking on a background process) or of a call
that ran nothing (sent to a terminal still busy, to a tool that is not there, or refused for its
arguments); after a steering about calls taken in turns (an oscillation, a cycle), once round
them again; after PACE emergency steering, it goes on to a failure it already had, as many
times as a failing action, or to a call it already made with the same output, as many times as
a call that works (not a wait, nor a check on something running);
after Agent-Zero's own warning about a message sent again unchanged, or told that its replies
call no tool, it sends such a message ``escalation.pause_after_ignored_working`` times more
(like a call that worked, it is never blocked). Never while the progress
signal moves, and after the user resumed the chat, not again until the task has moved since.
Nothing is said or paused on the turn of the final answer: the task is over.

The state is a plain JSON-able dict so it survives a chat reload with ``agent.data``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from org.contracts import Finding
from org.contracts.common import HEALTH_ORDER
from org.contracts.finding import SEVERITY_ORDER
from org.contracts.role import Doctrine
from org.kernel.bounded import drop_oldest
from org.kernel.outcomes import RESPONSE_TOOL, ToolOutcome, checks_on_something_running, named, never_a_loop, ran_nothing
from org.kernel.values import count_or, is_int

from .breaker import Breakers
from .detectors import context_rank, repeats, run_detectors, word
from .snapshot import Snapshot

#: anomalies whose episode is about one action, so repeating it after steering is proof it was ignored
PROVABLE = frozenset({"loop"})
#: anomalies that tell the agent it is stuck: after one of them, a stall says nothing new
STUCK = frozenset({"loop", "churn", "rerun", "cascade", "pace"})
#: episodes said are remembered until the task moves, the latest this many
SAID_KEPT = 64
#: episodes whose evidence the task moving does not change: the context's fill, and an edited
#: file that is not the copy that runs
LASTING_EPISODES = ("context:", "copy:")
#: episodes the user resumed are remembered, the latest this many
RESUMED_KEPT = 32
#: Agent-Zero's own warnings about the same message sent again, in a row, counted among the ignored
SAME_MESSAGE = "same_message"

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
    #: the evidence (``episode``) steered about since the task last moved, and by which anomaly
    said: dict[str, str] = field(default_factory=dict)
    #: the count (``times``) each episode was last said with, kept when the task moves
    told: dict[str, int] = field(default_factory=dict)
    #: per anomaly: the ledger turn of the last outcome looked at, and how often the agent
    #: repeated what the steering was about since it was said
    watched: dict[str, int] = field(default_factory=dict)
    ignored_times: dict[str, int] = field(default_factory=dict)
    #: episodes the user resumed the chat on: no new pause for them; and the turn of the last resume
    resumed: list[str] = field(default_factory=list)
    resumed_at: int | None = None

    def nudged(self, anomaly: str) -> None:
        """A nudge that is not a steering (a blocked call) counts in the anomaly's episode."""
        self.episode[anomaly] = self.episode.get(anomaly, 0) + 1

    def start_over(self) -> None:
        """The chat was resumed: the user has decided. The ladder, the emergency and the
        breakers start afresh; the episodes said so far are neither said nor paused again."""
        self.resumed = (self.resumed + [k for k in self.said if k not in self.resumed])[-RESUMED_KEPT:]
        self.episode.clear()
        self.ignored_times.clear()
        self.breakers = Breakers()
        self.paused_turn = self.emergency_turn = None
        self.resumed_at = self.turn

    def forget_episodes(self) -> None:
        """A new chat: nothing said or resumed in the old one holds any more."""
        self.said.clear()
        self.told.clear()
        self.resumed.clear()
        self.ignored_times.clear()
        self.resumed_at = None

    def record(self, steered: Finding) -> None:
        """Start the cooldown of a steering that reached the agent."""
        self.last_fired[steered.anomaly] = steered.turn
        self.last_severity[steered.anomaly] = steered.severity
        self.episode[steered.anomaly] = self.episode.get(steered.anomaly, 0) + 1
        key = steered.evidence.get("episode")
        if isinstance(key, str):
            if key not in self.said:
                self.ignored_times.pop(steered.anomaly, None)
            self.said[key] = steered.anomaly
            # the context's are kept: its fill holds across tasks, and a band forgotten would be said again
            drop_oldest(self.said, SAID_KEPT, keep=lambda anomaly: anomaly == "context")
            times = steered.evidence.get("times")
            if is_int(times):
                self.told.pop(key, None)
                self.told[key] = times
                drop_oldest(self.told, SAID_KEPT)
            at = steered.evidence.get("at")
            if is_int(at):
                self.watched[steered.anomaly] = at
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
            "said": dict(self.said),
            "told": dict(self.told),
            "watched": dict(self.watched),
            "ignored_times": dict(self.ignored_times),
            "resumed": list(self.resumed),
            "resumed_at": self.resumed_at,
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

        def texts(value: Any) -> dict[str, str]:
            if not isinstance(value, dict):
                return {}
            return {str(k): v[:400] for k, v in value.items() if isinstance(v, str)}

        severities = data.get("last_severity")
        resumed = data.get("resumed")
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
            said=texts(data.get("said")),
            told=ints(data.get("told")),
            watched=ints(data.get("watched")),
            ignored_times=ints(data.get("ignored_times")),
            resumed=[k[:400] for k in resumed if isinstance(k, str)][-RESUMED_KEPT:] if isinstance(resumed, list) else [],
            resumed_at=count_or(data.get("resumed_at"), None),
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
    #: the proof that steering is ignored was found: the finding to pause on, with how often
    pause: Finding | None = None
    ignored: int = 0


def _rank(finding: Finding) -> tuple[int, int]:
    return (-SEVERITY_ORDER.index(finding.severity), _PRIORITY[finding.anomaly])


def _restrained(finding: Finding, state: SupervisorState, subjects: set[str]) -> bool:
    """Whether saying this finding now would say nothing new (see the module's docstring)."""
    evidence = finding.evidence
    key = evidence.get("episode")
    if key is not None and key in state.resumed:
        return True  # the user resumed the chat on this very evidence: they have decided
    said_as = evidence.get("said_as")
    if said_as is not None and (said_as in state.said or said_as in state.resumed):
        return True  # said already by another anomaly's steering about the same evidence
    since = evidence.get("since")
    if finding.anomaly == "pace" and state.resumed_at is not None and is_int(since) and since <= state.resumed_at:
        return True  # PACE climbed on failures from before the user let the agent go on: not said until the task has moved
    if key is not None and key in state.said:
        # said already, and the evidence has not changed: nothing more, except that a stall
        # still there after its cooldown is said once more, firmly (it has lasted longer)
        return finding.anomaly != "stall" or state.episode.get("stall", 0) != 1
    told, times = state.told.get(key) if key is not None else None, evidence.get("times")
    if finding.anomaly not in PROVABLE and is_int(told) and is_int(times) and times < 2 * told:
        return True  # said before the task last moved, with this count or near it: again once it has doubled
    subject = evidence.get("subject")
    if isinstance(subject, str):
        if subject in subjects:
            return True  # another finding of this check is about the same call
        subjects.add(subject)
    if _echoes_stuck(finding) and is_int(since):
        # steered since progress stopped by another anomaly that says "stuck" (its cooldown's
        # turn tells, a handful of types); then whether that steering is still said (of many)
        later = {anomaly for anomaly in STUCK if anomaly != finding.anomaly and state.last_fired.get(anomaly, -1) > since}
        return bool(later) and any(anomaly in later and not _no_tool(said) for said, anomaly in state.said.items())
    return False


def _no_tool(episode: Any) -> bool:
    """A loop of replies without a tool call: it says "call a tool", not "you are stuck"."""
    return isinstance(episode, str) and episode.startswith("no_tool:")


def _echoes_stuck(finding: Finding) -> bool:
    """A stall, or PACE below emergency: they say "you are stuck, change approach", which a
    loop, churn, rerun or cascade steering has already said (the emergency says: stop)."""
    return finding.anomaly == "stall" or (finding.anomaly == "pace" and finding.severity != "emergency")


def _context_fell(findings: list[Finding], state: SupervisorState) -> None:
    """The context episodes above the fill now (it fell: the history was compressed) are no
    longer said, so coming back up is news; the one it fell to is said with them (85% after
    90% was said is no news)."""
    now = next((f.evidence.get("episode") for f in findings if f.anomaly == "context"), None)
    rank = context_rank(now)
    fell = [key for key, anomaly in state.said.items() if anomaly == "context"  # the said keys are many; few are the context's
            and (said := context_rank(key)) is not None and (rank is None or said > rank)]
    for key in fell:
        del state.said[key]
    if fell and rank is not None:
        state.said[now] = "context"


def decide(findings: list[Finding], state: SupervisorState, doctrine: Doctrine) -> RadioCheckResult:
    """Apply restraint and the cooldown rule to one check's findings.

    Ends the episodes of anomalies that cleared; the caller calls
    ``state.record`` once a steering has really reached the agent.
    """
    findings = sorted(findings, key=_rank)
    present = {f.anomaly for f in findings}
    for anomaly in list(state.episode):
        if anomaly not in present:
            del state.episode[anomaly]  # the anomaly cleared: its next steering starts afresh
    _context_fell(findings, state)
    subjects: set[str] = set()
    steering = [f for f in findings
                if not _restrained(f, state, subjects) and may_steer(f, state, doctrine.cooldown_for(f.anomaly))]
    # "you are stuck" is said once: by a precise steering of this check if there is one, else by
    # the first of PACE contingent and a stall (findings without a "since" are not judged so)
    echoes = [f for f in steering if _echoes_stuck(f) and "since" in f.evidence]
    precise = any(f.anomaly in STUCK and not _echoes_stuck(f) and not _no_tool(f.evidence.get("episode")) for f in steering)
    dropped = {id(f) for f in (echoes if precise else echoes[1:])}
    steering = [f for f in steering if id(f) not in dropped]
    health = max((_HEALTH_FOR_SEVERITY[f.severity] for f in findings), key=HEALTH_ORDER.index, default="nominal")
    return RadioCheckResult(findings=findings, steering=steering, health=health)


def ignored(snapshot: Snapshot, result: RadioCheckResult, state: SupervisorState) -> tuple[Finding | None, int]:
    """The proof that steering is being ignored, if this check holds it: the finding to
    pause on and how often it was ignored (see the module's docstring)."""
    escalation = snapshot.doctrine.escalation
    last = snapshot.outcomes[-1] if snapshot.outcomes else None
    moved_at = snapshot.turn - snapshot.turns_since_progress if snapshot.turns_since_progress is not None else None
    if not snapshot.native_repeat_warning:
        state.ignored_times.pop(SAME_MESSAGE, None)  # Agent-Zero's warnings, counted in a row
    if state.resumed_at is not None and (moved_at is None or moved_at <= state.resumed_at):
        return None, 0  # the user resumed the chat and the task has not moved since: they have decided
    replies = _replies_unheard(result, state, snapshot)
    if replies is not None:
        return replies
    if last is None or moved_at == snapshot.turn:
        return None, 0  # nothing done, or the task just moved
    if snapshot.native_repeat_warning:
        # Agent-Zero warned that the model sent the same message again (and ran no tool): its
        # warning is the steering, the same message after it the proof that it went unheard. It
        # runs nothing, so it needs the proof a call that works needs: on real chats models sent
        # it 3 to 5 times in a row and went on by themselves, and Agent-Zero after v1.7 itself
        # stops the monologue at its fifth warning
        warned = state.ignored_times[SAME_MESSAGE] = state.ignored_times.get(SAME_MESSAGE, 0) + 1
        if escalation.pause and warned > escalation.pause_after_ignored_working:
            return _unheard(snapshot, "the message you keep sending unchanged", SAME_MESSAGE), warned - 1
        return None, 0
    for finding in result.findings:
        anomaly, key = finding.anomaly, finding.evidence.get("episode")
        if anomaly not in PROVABLE or not isinstance(key, str) or key not in state.said:
            continue
        if last.turn <= state.watched.get(anomaly, last.turn) or not repeats(last, key):
            continue
        if checks_on_something_running(snapshot.outcomes, snapshot.doctrine.loop.exempt_tools):
            continue  # waiting is its time
        # a call that worked is never blocked, so each repeat really runs: it takes more proof; so
        # does a call that ran nothing (a terminal busy, a tool not there, arguments refused): like
        # a reply without a tool call, it harms nothing, and its form is what the model gets wrong
        needed = escalation.pause_after_ignored_working if last.worked or ran_nothing(last) else escalation.pause_after_ignored
        period = count_or(finding.evidence.get("count"))
        if period:  # calls taken in turns, one of them failing: once round them again
            needed = max(escalation.pause_after_ignored, period)
        state.watched[anomaly] = last.turn
        times = state.ignored_times[anomaly] = state.ignored_times.get(anomaly, 0) + 1
        if escalation.pause and times >= needed and key not in state.resumed:
            return finding, times
    emergency = next((f for f in result.findings if f.anomaly == "pace" and f.severity == "emergency"), None)
    if emergency is None:
        state.emergency_turn = None  # the emergency is over (or the task is moving): nothing to ignore
    elif (escalation.pause_after_emergency and state.emergency_turn is not None and last.turn > state.emergency_turn
            and state.watched.get("pace", -1) < last.turn and last.tool != RESPONSE_TOOL and not last.novel
            and emergency.evidence.get("episode") not in state.resumed and _had_before(snapshot.outcomes, snapshot.doctrine.loop.exempt_tools)):
        # told to stop, it went on to a failure it already had, or to a call it already made with the same output
        state.watched["pace"] = last.turn
        times = state.ignored_times["pace"] = state.ignored_times.get("pace", 0) + 1
        if not last.ok and times >= escalation.pause_after_ignored:
            return emergency, times
        if last.ok and times >= escalation.pause_after_ignored_working:
            return emergency.model_copy(update={"evidence": {**emergency.evidence, "latest": None, "again": named(last)}}), times
    return None, 0


def _had_before(outcomes: Sequence[ToolOutcome], tools: Any) -> bool:
    """What an agent told to stop went on to do was there before: the same failure (by any
    call), or the very call with the same output (a look going round: 8 read-only cycles on
    SWE-agent went on 16 to 38 turns after PACE emergency). Not a wait, nor a check on something
    running (a job, a server starting): as after a loop steering, that is its time, not the agent's."""
    last = outcomes[-1]
    if never_a_loop(last, tools) or checks_on_something_running(outcomes, tools):
        return False
    if not last.ok:
        return any(o.result == last.result for o in outcomes[:-1])
    return any(o.signature == last.signature and o.result == last.result for o in outcomes[:-1])


def _unheard(snapshot: Snapshot, what: str, episode: str) -> Finding:
    """What to pause on when the steering unheard named no call: ``what`` the model kept doing."""
    return Finding(anomaly="loop", template="loop_no_tool", turn=snapshot.turn, evidence={"action": what, "episode": episode})


def _replies_unheard(result: RadioCheckResult, state: SupervisorState, snapshot: Snapshot) -> tuple[Finding | None, int] | None:
    """Told that its replies called no tool, the model replied without one again: each further
    reply is the steering unheard (in Agent-Zero every reply must call a tool, the answer too;
    one that does not is a message it could not read). Such a reply runs nothing, so it needs the
    proof a call that works needs: models that cannot get the format right try another way each
    time, and on real sessions some found it after 5 or 6 replies and went on to succeed. None
    when there is no such steering."""
    finding = next((f for f in result.findings if f.template == "loop_no_tool"), None)
    key = finding.evidence.get("episode") if finding is not None else None
    if not isinstance(key, str) or key not in state.said or key in state.resumed:
        return None
    times = finding.evidence.get("times")
    unheard = times - snapshot.doctrine.loop.no_tool_threshold if is_int(times) else 0
    if snapshot.doctrine.escalation.pause and unheard >= snapshot.doctrine.escalation.pause_after_ignored_working:
        return _unheard(snapshot, "your replies that call no tool", key), unheard
    return None, 0


def radio_check(snapshot: Snapshot, state: SupervisorState) -> RadioCheckResult:
    """Run the detectors over a snapshot, decide what steers (see :func:`decide`) and whether
    the proof that steering is ignored is there (:func:`ignored`), and word what is said."""
    state.checks += 1
    last = snapshot.outcomes[-1] if snapshot.outcomes else None
    findings = run_detectors(snapshot)
    for finding in findings:
        if last is not None and "episode" in finding.evidence:
            finding.evidence["at"] = last.turn  # the outcome the steering answers: later ones show whether it was heard
    if snapshot.turns_since_progress == 0:
        # the task moved: what was said belongs to episodes that are over (not those it does not change)
        state.said = {key: anomaly for key, anomaly in state.said.items() if key.startswith(LASTING_EPISODES)}
    result = decide(findings, state, snapshot.doctrine)
    if last is not None and last.tool == RESPONSE_TOOL and last.turn == snapshot.turn:
        result.steering = []  # the agent gave its answer: steering now would greet the user's next message
    elif state.paused_turn is None:
        result.pause, result.ignored = ignored(snapshot, result, state)
    word(snapshot, (*result.steering, result.pause))
    return result


def is_check_turn(turn: int, interval: int) -> bool:
    return turn % max(1, interval) == 0
