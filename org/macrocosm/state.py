"""The XO's memory of each unit (:class:`UnitState`), kept in its home by :mod:`.store`.

Never on the shared volume: a unit could edit it there (a nudge count, a sequence number,
the relay's queue) and so steer the XO's decisions about another unit.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, ValidationError

from org.contracts import SteeringMessage
from org.contracts.common import AnomalyType, Contract, Freshness, Health, Identifier, NudgeSeverity, SchemaVersion
from org.contracts.role import EscalationDoctrine, HeartbeatDoctrine
from org.kernel.files import FileRefused, first_error

#: Steering kept in a unit's state for the views; older ones are only in the unit's folders.
RECENT_KEPT = 8


def freshness(age_seconds: float, heartbeat_doctrine: HeartbeatDoctrine) -> Freshness:
    """fresh <= stale_after < stale <= very_stale_after < very_stale."""
    if age_seconds <= heartbeat_doctrine.stale_after_seconds:
        return "fresh"
    if age_seconds <= heartbeat_doctrine.very_stale_after_seconds:
        return "stale"
    return "very_stale"


class SentSteering(Contract):
    """One steering the XO wrote, as the views show it."""

    seq: int = Field(ge=1)
    id: str
    anomaly: AnomalyType | None = None  # None: relayed learnings
    severity: NudgeSeverity
    kind: str
    sent_at: float


class UnitState(Contract):
    """The XO's memory of one unit (a row of its store, in its home).

    Written when something the XO decides on changes (a steering with its outbox, a
    cooldown or episode, a reset of the nudge count, heartbeat flags), not for every
    report or every radio check; the report fields are those of the last report read
    before that write.
    """

    schema_version: SchemaVersion = 1
    unit: Identifier
    role_id: Identifier | None = None
    #: (mtime_ns, size, inode) of the report last read, so a restart skips an unchanged one
    report_stamp: list[int] | None = None
    report_time: float | None = Field(None, description="The last report's time by the XO's clock (never later than when it was read).")
    report_clock: float | None = Field(None, description="The last report's time as the unit wrote it: an older one is a copy put back.")
    degraded: str | None = Field(None, max_length=300, description=(
        "Why the XO cannot run a full check of the unit (its report cannot be used): it is supervised by heartbeat alone."))
    alive_at: float | None = Field(None, description="When the unit last wrote its report, usable or not (the heartbeat while degraded).")
    report_state: str | None = None
    report_health: Health | None = None
    last_turn: int | None = None
    heartbeat: HeartbeatDoctrine = Field(default_factory=HeartbeatDoctrine)
    escalation: EscalationDoctrine = Field(default_factory=EscalationDoctrine)
    checked_turn: int | None = Field(None, description="The turn of the last radio check.")
    supervisor: dict[str, Any] = Field(default_factory=dict, description="SupervisorState.to_dict(): the cooldowns.")
    nudges: int = Field(0, ge=0, description="Steering sent in the current episode.")
    paused_turn: int | None = Field(None, description="Turn at which a pause was sent (or the unit paused itself); nothing is sent until a later turn.")
    paused_itself: bool = Field(False, description="The pause came from the unit's own supervisor (its report said so), not from the XO.")
    heartbeat_at: float | None = Field(None, description="When the last heartbeat nudge of this silence was sent.")
    very_stale_logged: bool = False
    seq: int = Field(0, ge=0, description="The last sequence number given to a steering for this unit.")
    outbox: list[dict[str, Any]] = Field(default_factory=list, description="Signed messages not yet written to the inbox.")
    recent: list[SentSteering] = Field(default_factory=list)
    # the learning relay (relay.py)
    domain: str | None = Field(None, max_length=200, description="The unit's domain, from its last report.")
    topics: list[str] = Field(default_factory=list, max_length=64, description="File names and programs its recent calls named.")
    learned: list[str] = Field(default_factory=list, max_length=512, description="Digests of learnings it published or was sent (never sent again).")
    relay_queue: list[dict[str, Any]] = Field(default_factory=list, max_length=8, description="Learnings waiting for the relay's rate limit: {source, learning}.")
    relayed_at: float | None = Field(None, description="When learnings were last relayed to it.")
    # sending again what the unit could not take (policy.send_again)
    last_steering: dict[str, Any] | None = Field(None, description=(
        "The last message recorded for the unit, as decided (kind, anomaly, severity, text, nudge, turn, sources), "
        "with its seq and its expiry by the XO's clock: sent again, with a new seq, when the unit refused it or it was lost."))
    resent: int = Field(0, ge=0, description="How often the last message was sent again.")
    clock_ahead: float | None = Field(None, description=(
        "How far the unit's clock runs ahead of the XO's (its report's time against the XO's), when past the tolerance: "
        "its steering is stamped in its time, so that it is not refused as expired."))

    def note(self, **values: Any) -> None:
        """Set several fields at once as plain attributes: a sweep sets a dozen per unit, and
        pydantic's assignment hook (nothing is validated on assignment here) would cost more than
        the rest of the unit's judgement. Only for values of the fields' own types."""
        self.__dict__.update(values)

    def age(self, now: float) -> float | None:
        """Seconds since the unit was last heard from: its last usable report, or while degraded
        the last time it wrote one at all."""
        heard = max((t for t in (self.report_time, self.alive_at if self.degraded else None) if t is not None), default=None)
        return None if heard is None else now - heard

    def freshness(self, now: float) -> Freshness | None:
        age = self.age(now)
        return None if age is None else freshness(age, self.heartbeat)

    def effective_health(self, now: float) -> str:
        """The last reported health while the unit is heard from; "unknown" once it is very stale."""
        if self.report_health is None or self.freshness(now) == "very_stale":
            return "unknown"
        return self.report_health

    def remember(self, sent: SentSteering) -> None:
        """Keep a delivered steering for the views, only the latest :data:`RECENT_KEPT`."""
        self.recent.append(sent)
        del self.recent[:-RECENT_KEPT]


_shared_models: dict[tuple, Contract] = {}
_ALL_FIELDS = set(UnitState.model_fields)


def shared(model: Any) -> Any:
    """One instance per distinct small doctrine model: thousands of units share a few.

    Safe because the XO never changes these models in place.
    """
    key = (type(model), tuple(model.__dict__.items()))
    found = _shared_models.get(key)
    if found is None:
        if len(_shared_models) >= 256:
            _shared_models.clear()
        found = _shared_models[key] = model
    return found


#: Fields without which a saved state is not this unit's: a state missing one is not used at all.
_ESSENTIAL = frozenset({"unit", "schema_version"})
#: Lists whose entries are dropped one by one rather than as a whole.
_BY_ENTRY = frozenset({"outbox", "recent"})


def _outbox_problems(state: UnitState) -> list[tuple[tuple, str]]:
    """(location, reason) of each outbox entry that is not a steering message: what delivery relies on."""
    problems = []
    for index, payload in enumerate(state.outbox):
        try:
            SteeringMessage.model_validate(payload)
        except Exception as exc:
            problems.append((("outbox", index), f"not a steering message: {first_error(exc)}"))
    return problems


def _problems(value: dict[str, Any]) -> tuple[UnitState | None, list[tuple[tuple, str]]]:
    try:
        state = UnitState.model_validate(value)
    except ValidationError as exc:
        return None, [(tuple(e.get("loc", ())), e.get("msg", "invalid")) for e in exc.errors()]
    return state, _outbox_problems(state)


def _drop(value: dict[str, Any], where: tuple) -> str:
    """Remove what ``where`` points at (one list entry, or a whole field); says what went."""
    field = str(where[0])
    if field in _BY_ENTRY and len(where) > 1 and isinstance(where[1], int) and isinstance(value.get(field), list):
        entries = value[field] = list(value[field])  # the caller's list stays as it was
        if where[1] < len(entries):
            entries[where[1]] = None  # marked now, removed after: the other indexes stay right
        return f"{field} entry {where[1]} dropped"
    value.pop(field, None)
    return f"{field} back to its default" if field in UnitState.model_fields else f"{field} dropped"


def salvage_unit_state(path: Any, value: dict[str, Any], unit: str) -> tuple[UnitState, list[str]]:
    """A saved state with what is damaged in it dropped (a field back to its default, a bad
    outbox or recent entry removed), and one line per dropped part saying which and why.

    :class:`FileRefused` when nothing of it can be used: not this unit's, or no unit at all.
    """
    value = dict(value)
    dropped: list[str] = []
    for _ in range(len(UnitState.model_fields) + 2 * len(_BY_ENTRY)):
        state, problems = _problems(value)
        if not problems:
            break
        for where, reason in problems:
            if (str(where[0]) if where else "") in _ESSENTIAL or not where:
                raise FileRefused(path, f"{'.'.join(map(str, where)) or '(top level)'}: {reason}")
            dropped.append(f"{'.'.join(map(str, where))}: {reason} ({_drop(value, where)})")
        for field in _BY_ENTRY:
            if isinstance(value.get(field), list):
                value[field] = [entry for entry in value[field] if entry is not None]
    else:
        raise FileRefused(path, "not a valid XO unit state: cannot be repaired")
    assert state is not None
    if state.unit != unit:
        raise FileRefused(path, f"unit: {state.unit!r} does not match the unit it is saved for")
    return state, dropped


def prepared(state: UnitState) -> UnitState:
    """The state made light for the XO's memory: doctrines shared between units, and so is
    the set of fields given."""
    state.heartbeat = shared(state.heartbeat)
    state.escalation = shared(state.escalation)
    # pydantic keeps a set of the fields given, per instance (2 KB here); every field of
    # a unit state is always written, so all units can share one set naming them all
    object.__setattr__(state, "__pydantic_fields_set__", _ALL_FIELDS)
    return state
