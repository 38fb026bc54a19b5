"""The XO: one executive officer supervising every unit on a shared volume.

For each unit the XO reads ``units/<unit>/salute.json`` when it changed, rebuilds the
radio check's snapshot from the report's signals and runs the same detectors and
cooldown rule as the in-process supervisor, with one :class:`SupervisorState` per unit.
What steers becomes a steering file in the unit's inbox.

Escalation: ``nudges`` counts the steering sent in the current episode; it words the
next one as a hint, a warning, then critical, and after ``pause_after_nudges`` the XO
sends one pause instead and waits until the unit reports a later turn (it was
resumed). A radio check that finds nothing on a fresh report ends the episode.

Heartbeats: a unit's freshness is the age of its last report. A silent unit that was
busy gets a heartbeat nudge on the same ladder, again every ``stale_after_seconds``;
a very stale unit is logged once per silence and its health is unknown.

Delivery is write-ahead: a new message goes into the unit's saved outbox (fsync-ed)
before its inbox file is written, and leaves the outbox once the file exists. After
a crash, :meth:`XO.recover` writes again, with the same id and seq, every outbox
message whose file is in neither ``inbox/``, ``processed/`` nor ``rejected/``; the
unit applies each id once. So nothing is lost and nothing is applied twice.
"""

from __future__ import annotations

import json
import os
import stat
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable

from pydantic import Field

from org.contracts import Finding, SteeringMessage
from org.contracts.common import AnomalyType, Contract, Freshness, Health, Identifier, NudgeSeverity, SchemaVersion, is_identifier
from org.contracts.role import EscalationDoctrine, HeartbeatDoctrine
from org.contracts.salute import SaluteReport, SaluteSignals
from org.contracts.steering_message import MAX_MESSAGE_BYTES
from org.kernel.files import FileRefused, atomic_write_text, first_error, json_object, read_capped, validated
from org.kernel.log import logger, warn_once
from org.kernel.paths import UnsafePathError, checked_id
from org.supervisor.escalation import nudge_severity, pause_due, times_in_words
from org.supervisor.radio_check import SupervisorState, radio_check
from org.supervisor.signals import snapshot_from_signals
from org.supervisor.steering import SteeringBook

from .signing import signature
from .volume import REPORT_NAME, VolumeLayout, message_name, message_seq, read_report, unit_entry_problem

#: A saved unit state bigger than this is refused (its outbox is small: nothing new is sent
#: to a unit while a message for it waits there).
MAX_STATE_BYTES = 1_000_000
#: Steering kept in a unit's state for the views; older ones are only in the unit's folders.
RECENT_KEPT = 8
#: Bad files remembered so each version is logged once (oldest forgotten first).
MAX_BAD_REMEMBERED = 10_000
#: Report states in which a unit is expected to keep reporting.
BUSY_STATES = frozenset({"active", "waiting", "error_recovery", "escalating"})
#: The steering templates an XO may override: ``<volume>/xo/steering.yaml``.
STEERING_OVERRIDES = "steering.yaml"


class SentSteering(Contract):
    """One steering the XO wrote, as the views show it."""

    seq: int = Field(ge=1)
    id: str
    anomaly: AnomalyType
    severity: NudgeSeverity
    kind: str
    sent_at: float


class UnitState(Contract):
    """The XO's memory of one unit: ``<volume>/xo/units/<unit>.json``.

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
    report_time: float | None = Field(None, description="The last report's time, seconds since the epoch.")
    report_state: str | None = None
    report_health: Health | None = None
    last_turn: int | None = None
    heartbeat: HeartbeatDoctrine = Field(default_factory=HeartbeatDoctrine)
    escalation: EscalationDoctrine = Field(default_factory=EscalationDoctrine)
    checked_turn: int | None = Field(None, description="The turn of the last radio check.")
    supervisor: dict[str, Any] = Field(default_factory=dict, description="SupervisorState.to_dict(): the cooldowns.")
    nudges: int = Field(0, ge=0, description="Steering sent in the current episode.")
    paused_turn: int | None = Field(None, description="Turn at which a pause was sent; nothing is sent until a later turn.")
    heartbeat_at: float | None = Field(None, description="When the last heartbeat nudge of this silence was sent.")
    very_stale_logged: bool = False
    seq: int = Field(0, ge=0, description="The last sequence number given to a steering for this unit.")
    outbox: list[dict[str, Any]] = Field(default_factory=list, description="Signed messages not yet written to the inbox.")
    recent: list[SentSteering] = Field(default_factory=list)

    def age(self, now: float) -> float | None:
        return None if self.report_time is None else now - self.report_time

    def freshness(self, now: float) -> Freshness | None:
        age = self.age(now)
        return None if age is None else freshness(age, self.heartbeat)

    def effective_health(self, now: float) -> str:
        """The last reported health while the unit is heard from; "unknown" once it is very stale."""
        if self.report_health is None or self.freshness(now) == "very_stale":
            return "unknown"
        return self.report_health


@dataclass
class SweepResult:
    units: int = 0  # unit folders looked at
    parsed: int = 0  # reports read because they changed
    checked: int = 0  # radio checks run
    sent: list[SteeringMessage] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # "<path>: <reason>", first time each version is seen
    recovered: list[str] = field(default_factory=list)
    very_stale: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)  # units whose report changed since it was last seen


def silence(age_seconds: float) -> str:
    """How long a unit has been silent, in words: "45 seconds", "1 minute", "7 minutes"."""
    if age_seconds < 120:
        seconds = int(age_seconds)
        return f"{seconds} second{'s' if seconds != 1 else ''}" if age_seconds < 60 else "1 minute"
    return f"{int(age_seconds // 60)} minutes"


def freshness(age_seconds: float, heartbeat_doctrine: HeartbeatDoctrine) -> Freshness:
    """fresh <= stale_after < stale <= very_stale_after < very_stale."""
    if age_seconds <= heartbeat_doctrine.stale_after_seconds:
        return "fresh"
    if age_seconds <= heartbeat_doctrine.very_stale_after_seconds:
        return "stale"
    return "very_stale"


def _not_taken(signals: SaluteSignals, state: UnitState) -> bool:
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


def load_unit_state(layout: VolumeLayout, unit: str) -> UnitState:
    """The saved state, or :class:`FileRefused`; ``FileNotFoundError`` passes through."""
    path = layout.xo_state(unit)
    state = validated(path, UnitState, json_object(path, read_capped(path, MAX_STATE_BYTES)), "XO unit state")
    if state.unit != unit:
        raise FileRefused(path, f"unit: {state.unit!r} does not match the file name")
    for index, payload in enumerate(state.outbox):  # what delivery relies on, checked once here
        try:
            SteeringMessage.model_validate(payload)
        except Exception as exc:
            raise FileRefused(path, f"outbox.{index}: not a steering message: {first_error(exc)}") from None
    return state


def unit_state(layout: VolumeLayout, unit: str) -> UnitState | None:
    """The XO's saved state for a unit, or None when there is none or it cannot be used (logged)."""
    try:
        return load_unit_state(layout, unit)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except (FileRefused, UnsafePathError) as exc:
        warn_once(f"{exc}; ignored")
    except OSError as exc:
        warn_once(f"{layout.root}: cannot read the XO state of unit '{unit}' ({exc.strerror or exc})")
    return None


def _epoch(moment: datetime) -> float:
    return (moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)).timestamp()


_shared_models: dict[tuple, Contract] = {}
_ALL_FIELDS = set(UnitState.model_fields)


def _shared(model: Any) -> Any:
    """One instance per distinct small doctrine model: thousands of units share a few.

    Safe because the XO never changes these models in place.
    """
    key = (type(model), tuple(model.__dict__.items()))
    shared = _shared_models.get(key)
    if shared is None:
        if len(_shared_models) >= 256:
            _shared_models.clear()
        shared = _shared_models[key] = model
    return shared


def _decides(supervisor: dict[str, Any]) -> dict[str, Any]:
    """The part of a saved SupervisorState that changes what steers (not its turn counter)."""
    return {k: v for k, v in supervisor.items() if k != "turn"}


class XO:
    """Supervises every unit on a volume; see the module's description."""

    def __init__(
        self,
        layout: VolumeLayout,
        sender_role: str,
        key: bytes | None,
        clock: Callable[[], float] = time.time,
        steering: SteeringBook | None = None,
    ):
        self.layout = layout
        self.sender_role = checked_id(sender_role, "XO role id")
        self.key = key
        self.clock = clock
        self.steering = steering or SteeringBook(layout.xo_dir / STEERING_OVERRIDES)
        self._units: dict[str, UnitState] = {}
        self._stamps: dict[str, tuple[int, int, int]] = {}  # last report version seen, good or bad
        self._dirty: set[str] = set()  # states changed since they were last written
        self._undelivered: set[str] = set()  # units whose outbox is not empty
        self._bad: dict[str, tuple[int, ...] | None] = {}  # path -> version already logged
        # plain strings on the hot path: a sweep stats every report
        self._units_prefix = str(layout.units_dir) + os.sep
        self._report_suffix = os.sep + REPORT_NAME

    # ----- public -------------------------------------------------------------------

    def units(self) -> dict[str, UnitState]:
        """The units the XO knows, with their current state (read only)."""
        return dict(self._units)

    def recover(self) -> SweepResult:
        """Load every saved unit state and write again what its outbox still holds."""
        result = SweepResult()
        try:
            with os.scandir(self.layout.xo_units_dir) as entries:
                names = sorted(e.name for e in entries if e.name.endswith(".json"))
        except OSError:
            names = []
        for name in names:
            unit = name.removesuffix(".json")
            if is_identifier(unit):
                self._state(unit)
        self._deliver_pending(result)
        self.flush()
        return result

    def sweep(self, units: Iterable[str] | None = None, now: float | None = None) -> SweepResult:
        """Read the reports that changed (every unit's when ``units`` is None), steer, and
        evaluate the heartbeat of every known unit."""
        now = self.clock() if now is None else now
        result = SweepResult()
        names = self._all_units(result) if units is None else [u for u in units if self._is_unit_folder(u)]
        result.units = len(names)
        for unit in names:
            self._guarded(unit, self._observe, unit, now, result)
        for unit, state in list(self._units.items()):
            if state.report_time is not None and now - state.report_time > state.heartbeat.stale_after_seconds:
                self._guarded(unit, self._heartbeat, unit, state, now, result)
        self._deliver_pending(result)
        self.flush()
        return result

    def flush(self) -> None:
        """Write every changed unit state."""
        for unit in list(self._dirty):
            state = self._units.get(unit)
            if state is None or self._persist(unit, state):
                self._dirty.discard(unit)

    # ----- reading reports ----------------------------------------------------------

    def _all_units(self, result: SweepResult) -> list[str]:
        valid, invalid = self.layout.unit_ids()
        for name in invalid:
            self._skip_entry(self.layout.units_dir / name, result)
        present = set(valid)
        for unit in [u for u in self._units if u not in present and u not in self._undelivered]:
            self._forget(unit)  # the unit's folder is gone
        return valid

    def _skip_entry(self, path: Path, result: SweepResult) -> None:
        try:
            st = os.lstat(path)
        except OSError:
            return
        self._skip(path, (st.st_ino, st.st_mtime_ns), unit_entry_problem(path.name, st), result)

    def _is_unit_folder(self, unit: str) -> bool:
        if not is_identifier(unit):
            return False
        try:
            return stat.S_ISDIR(os.lstat(self.layout.units_dir / unit).st_mode)
        except OSError:
            return False

    def _forget(self, unit: str) -> None:
        self._units.pop(unit, None)
        self._stamps.pop(unit, None)
        self._dirty.discard(unit)

    def _observe(self, unit: str, now: float, result: SweepResult) -> None:
        name = self._units_prefix + unit + self._report_suffix  # unit ids are checked before
        try:
            st = os.stat(name, follow_symlinks=False)
        except (FileNotFoundError, NotADirectoryError):
            return  # no report yet
        stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        if self._stamps.get(unit) == stamp:
            return
        self._stamps[unit] = stamp
        result.changed.append(unit)
        if stat.S_ISLNK(st.st_mode):
            return self._skip(Path(name), stamp, "is a symbolic link; refused", result)
        if not stat.S_ISREG(st.st_mode):
            return self._skip(Path(name), stamp, "not a regular file", result)
        try:
            report = read_report(name)
        except FileNotFoundError:
            self._stamps.pop(unit, None)
            return
        except FileRefused as exc:
            return self._skip(Path(name), stamp, exc.reason, result)
        except OSError as exc:
            return self._skip(Path(name), stamp, f"cannot be read ({exc.strerror or type(exc).__name__})", result)
        if report.unit.unit_id is not None and report.unit.unit_id != unit:
            return self._skip(Path(name), stamp, f"unit.unit_id: '{report.unit.unit_id}' is not the unit of this folder ('{unit}')", result)
        result.parsed += 1
        state = self._state(unit)
        state.report_stamp = list(stamp)
        self._judge(unit, state, report, now, result)
        self._bad.pop(name, None)  # keyed as str(Path(name)), which is name
        if report.signals is None:
            warn_once(f"{name}: has no signals (a unit on a shared volume writes them); heartbeat only, no radio check", key=f"signals:{unit}")

    def _skip(self, path: Path, version: tuple[int, ...] | None, reason: str, result: SweepResult) -> None:
        """Log a file that cannot be used, once per version of it."""
        key = str(path)
        if key in self._bad and self._bad[key] == version:
            return
        if len(self._bad) >= MAX_BAD_REMEMBERED:
            self._bad.pop(next(iter(self._bad)))
        self._bad[key] = version
        logger.warning("skipped %s: %s", path, reason)
        result.skipped.append(f"{path}: {reason}")

    def _guarded(self, unit: str, step: Callable[..., None], *args: Any) -> None:
        """One unit's problem never stops the XO."""
        try:
            step(*args)
        except Exception as exc:
            warn_once(f"{self.layout.units_dir / unit}: unexpected {type(exc).__name__} while supervising ({exc}); unit skipped for now")

    # ----- judging ------------------------------------------------------------------

    def _judge(self, unit: str, state: UnitState, report: SaluteReport, now: float, result: SweepResult) -> None:
        signals = report.signals
        turn = signals.turn if signals is not None else report.time.turns_elapsed
        report_time = _epoch(report.time.timestamp)
        if (state.report_time is None or report_time > state.report_time) and (state.heartbeat_at is not None or state.very_stale_logged):
            logger.info("unit reporting again: unit=%s turn=%s after %.0f s of silence", unit, turn, report_time - (state.report_time or report_time))
            state.heartbeat_at = None
            state.very_stale_logged = False
            self._dirty.add(unit)
        state.role_id = report.unit.role_id
        state.report_time = report_time
        state.report_state = report.status.state
        state.report_health = report.status.health
        earlier = max((t for t in (state.last_turn, state.checked_turn, state.paused_turn) if t is not None), default=None)
        state.last_turn = turn
        if signals is None:
            return
        if signals.doctrine.heartbeat != state.heartbeat or signals.doctrine.escalation != state.escalation:
            state.heartbeat = _shared(signals.doctrine.heartbeat)
            state.escalation = _shared(signals.doctrine.escalation)
            self._dirty.add(unit)
        if earlier is not None and turn < earlier:
            logger.info("unit started over: unit=%s turn=%s after turn %s", unit, turn, earlier)
            self._new_episode(unit, state)
            state.checked_turn = None
        if state.paused_turn is not None:
            if turn <= state.paused_turn or _not_taken(signals, state):
                return  # paused (or not yet: the pause waits in its inbox): nothing more until someone resumes it
            logger.info("unit resumed: unit=%s turn=%s (paused at turn %s)", unit, turn, state.paused_turn)
            self._new_episode(unit, state)
        if state.outbox:
            return  # a steering still waits for the inbox: no more until it is delivered
        if not check_due(turn, state.checked_turn, signals.doctrine.radio_check_interval_turns):
            return
        self._radio_check(unit, state, report, now, result)

    def _new_episode(self, unit: str, state: UnitState) -> None:
        state.nudges = 0
        state.paused_turn = None
        self._dirty.add(unit)

    def _radio_check(self, unit: str, state: UnitState, report: SaluteReport, now: float, result: SweepResult) -> None:
        signals = report.signals
        assert signals is not None
        supervisor = SupervisorState.from_dict(state.supervisor)
        supervisor.turn = signals.turn
        check = radio_check(snapshot_from_signals(signals), supervisor)
        state.checked_turn = signals.turn
        result.checked += 1
        # a unit that has not taken the last steering from its inbox yet has not answered it
        # either: the next nudge waits, so the ladder climbs only on nudges the agent has seen.
        # And a report that ends a task is not steered: the unit would drop advice about a task
        # that is over, and the nudge would count as unanswered.
        busy = report.status.state in BUSY_STATES
        finding = check.steering[0] if check.steering and busy and not _not_taken(signals, state) else None
        repeated = finding is not None and supervisor.repeated(finding.anomaly)
        if finding is not None:
            supervisor.record(finding)
        saved = supervisor.to_dict()
        if _decides(saved) != _decides(state.supervisor):
            self._dirty.add(unit)
        # a check that changed no cooldown or episode is not written: after a crash the
        # report is checked again with the same state, and reaches the same verdict
        state.supervisor = saved
        if not check.findings and state.nudges and state.freshness(now) == "fresh":
            logger.info("unit recovered: unit=%s turn=%s after %s nudge(s)", unit, signals.turn, state.nudges)
            state.nudges = 0
            self._dirty.add(unit)
            result.recovered.append(unit)
        if finding is not None:
            self._nudge(unit, state, finding, repeated, signals.turn, now, result)

    def _heartbeat(self, unit: str, state: UnitState, now: float, result: SweepResult) -> None:
        """Called for a unit whose last report is older than ``stale_after_seconds``."""
        age = now - (state.report_time or now)
        if freshness(age, state.heartbeat) == "very_stale" and not state.very_stale_logged:
            logger.warning("unit very stale: unit=%s last report %.0f s ago; health unknown", unit, age)
            state.very_stale_logged = True
            self._dirty.add(unit)
            result.very_stale.append(unit)
        if state.report_state not in BUSY_STATES or state.paused_turn is not None or state.outbox:
            return
        if state.heartbeat_at is not None and now - state.heartbeat_at < state.heartbeat.stale_after_seconds:
            return
        repeated = state.heartbeat_at is not None
        state.heartbeat_at = now
        turn = state.last_turn or 0
        finding = Finding(anomaly="heartbeat", template="heartbeat_stale", turn=turn, evidence={"silence": silence(age)})
        self._nudge(unit, state, finding, repeated, turn, now, result)

    def _nudge(self, unit: str, state: UnitState, finding: Finding, repeated: bool, turn: int, now: float, result: SweepResult) -> None:
        """Send the next step of the ladder: a steer worded by its severity, or the pause."""
        before = state.nudges
        if pause_due(before, state.escalation):
            pause = Finding(anomaly=finding.anomaly, template="pause", turn=finding.turn,
                            evidence={"nudges": times_in_words(before), "anomaly": finding.anomaly})
            state.paused_turn = turn
            self._send(unit, state, "pause", finding.anomaly, "critical", self.steering.render(pause), before, turn, now, result)
            return
        state.nudges = before + 1
        text = self.steering.render(finding, repeated=repeated)
        self._send(unit, state, "steer", finding.anomaly, nudge_severity(before), text, before, turn, now, result)

    # ----- delivery -----------------------------------------------------------------

    def _send(self, unit: str, state: UnitState, kind: str, anomaly: str, severity: str, text: str, nudge: int, turn: int | None, now: float, result: SweepResult) -> None:
        message = SteeringMessage(
            id=uuid.uuid4().hex,
            seq=state.seq + 1,
            unit=unit,
            sender_role=self.sender_role,
            kind=kind,  # type: ignore[arg-type]
            anomaly=anomaly,  # type: ignore[arg-type]
            severity=severity,  # type: ignore[arg-type]
            text=text[:2000],
            nudge=nudge,
            report_turn=turn if turn is not None and turn >= 0 else None,
            created_at=datetime.fromtimestamp(now, timezone.utc),
        )
        payload = message.model_dump(mode="json")
        if self.key is not None:
            payload["signature"] = signature(payload, self.key)
        state.seq = message.seq
        state.outbox.append(payload)
        self._undelivered.add(unit)
        self._dirty.add(unit)
        self._deliver(unit, state, result, new_id=message.id)

    def _deliver_pending(self, result: SweepResult) -> None:
        for unit in sorted(self._undelivered):
            state = self._units.get(unit)
            if state is None:
                self._undelivered.discard(unit)
            else:
                self._guarded(unit, self._deliver, unit, state, result)

    def _deliver(self, unit: str, state: UnitState, result: SweepResult, new_id: str | None = None) -> None:
        """Write the outbox's messages into the inbox, in seq order; the outbox is on disk first.

        A message other than the one just made (``new_id``) may have been written before a
        crash: it is written again only when its file is in none of the unit's folders.
        """
        if unit in self._dirty:
            if not self._persist(unit, state):
                return  # not written ahead: try again at the next sweep
            self._dirty.discard(unit)
        inbox = self._deliverable(unit)
        if inbox is None:
            return
        done = 0
        for payload in state.outbox:
            name = message_name(payload["seq"], payload["id"])
            fresh = payload["id"] == new_id
            if fresh or not self._already_delivered(unit, name):
                text = json.dumps(payload, ensure_ascii=False, indent=2) + "\n"
                size = len(text.encode("utf-8"))
                try:
                    if size > MAX_MESSAGE_BYTES:
                        raise ValueError(f"{size} bytes, over the {MAX_MESSAGE_BYTES}-byte message limit")
                    atomic_write_text(inbox / name, text)
                except (OSError, ValueError) as exc:
                    # the later ones wait too, so that the unit still receives them in seq order
                    warn_once(f"{inbox / name}: cannot write the steering ({exc}); it stays in the XO's outbox", key=f"deliver:{unit}")
                    break
                self._sent(unit, state, payload, "sent" if fresh else "redelivered", result)
            done += 1
        del state.outbox[:done]
        if not state.outbox:
            self._undelivered.discard(unit)
        self._dirty.add(unit)

    def _deliverable(self, unit: str) -> Path | None:
        """The unit's inbox, when it is a folder inside the volume (created if missing)."""
        try:
            if not stat.S_ISDIR(os.lstat(self.layout.unit_dir(unit)).st_mode):
                raise UnsafePathError(f"{self.layout.unit_dir(unit)} is not a folder")
            return self.layout.ensure_inside(self.layout.inbox(unit))
        except FileNotFoundError:
            warn_once(f"{self.layout.units_dir / unit}: the unit's folder is gone; its steering waits in the XO's outbox", key=f"deliver:{unit}")
        except (UnsafePathError, OSError) as exc:
            warn_once(f"skipped {self.layout.units_dir / unit}: cannot deliver steering ({exc}); it waits in the XO's outbox", key=f"deliver:{unit}")
        return None

    def _already_delivered(self, unit: str, name: str) -> bool:
        for folder in (self.layout.inbox(unit), self.layout.processed(unit), self.layout.rejected(unit)):
            if os.path.lexists(folder / name):
                return True
        return False

    def _sent(self, unit: str, state: UnitState, payload: dict[str, Any], verb: str, result: SweepResult) -> None:
        logger.info(
            "steering %s: unit=%s seq=%s anomaly=%s severity=%s kind=%s",
            verb, unit, payload["seq"], payload["anomaly"], payload["severity"], payload["kind"],
        )
        result.sent.append(SteeringMessage.model_validate(payload))
        state.recent.append(SentSteering(
            seq=payload["seq"], id=payload["id"], anomaly=payload["anomaly"], severity=payload["severity"],
            kind=payload["kind"], sent_at=self.clock(),
        ))
        del state.recent[:-RECENT_KEPT]

    # ----- state --------------------------------------------------------------------

    def _state(self, unit: str) -> UnitState:
        state = self._units.get(unit)
        if state is not None:
            return state
        try:
            state = load_unit_state(self.layout, unit)
        except (FileNotFoundError, NotADirectoryError, FileRefused, OSError) as exc:
            if not isinstance(exc, (FileNotFoundError, NotADirectoryError)):
                warn_once(f"{exc}; the unit's XO state starts afresh")
            state = UnitState(unit=unit, seq=self._highest_seq(unit))
            self._dirty.add(unit)  # every unit seen has a state file, for the views
        state.heartbeat = _shared(state.heartbeat)
        state.escalation = _shared(state.escalation)
        # pydantic keeps a set of the fields given, per instance (2 KB here); every field of
        # a unit state is always written, so all units can share one set naming them all
        object.__setattr__(state, "__pydantic_fields_set__", _ALL_FIELDS)
        self._units[unit] = state
        if state.report_stamp is not None and len(state.report_stamp) == 3:
            self._stamps.setdefault(unit, tuple(state.report_stamp))  # type: ignore[arg-type]
        if state.outbox:
            self._undelivered.add(unit)
        return state

    def _highest_seq(self, unit: str) -> int:
        """The highest seq already on the volume, so a lost state never reuses one."""
        highest = 0
        for folder in (self.layout.inbox(unit), self.layout.processed(unit), self.layout.rejected(unit)):
            try:
                with os.scandir(folder) as entries:
                    highest = max([highest, *(message_seq(e.name) or 0 for e in entries)])
            except OSError:
                continue
        return highest

    def _persist(self, unit: str, state: UnitState) -> bool:
        path = self.layout.xo_state(unit)
        try:
            atomic_write_text(path, state.model_dump_json() + "\n")
        except OSError as exc:
            warn_once(f"{path}: cannot write the XO state ({exc.strerror or exc}); will try again", key=f"persist:{unit}")
            return False
        return True
