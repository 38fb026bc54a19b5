"""The XO: one executive officer supervising every unit on a shared volume.

For each unit the XO reads ``units/<unit>/salute.json`` when it changed, rebuilds the
radio check's snapshot from the report's signals and runs the same detectors and
cooldown rule as the in-process supervisor, with one :class:`SupervisorState` per unit.
What steers becomes a steering file in the unit's inbox.

Who may speak: with an XO home (:class:`~.keys.XOHome`), a report counts only when it is
sealed with the key registered for the unit of its folder and is not older than the last
one taken (a copy put back is refused); the doctrine and PACE plan it is judged by are
the XO's own (:mod:`.roles`), and report text is quoted into steering only sanitised.

This module is the sweep: which reports to read, and bad files logged once. What to
send is decided in :mod:`.policy` (the escalation ladder, heartbeats), the message goes
through the write-ahead :class:`~.outbox.Outbox`, and the XO's memory of each unit is
:mod:`.state`, kept in its home by :mod:`.store` (never on the volume, where units write),
written once per sweep for the units where something it decides on changed.
"""

from __future__ import annotations

import os
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from org.contracts import SteeringMessage
from org.contracts.common import is_identifier
from org.contracts.salute import SaluteReport
from org.kernel import events
from org.kernel.files import FileRefused, read_capped, remove_stale_temp_files
from org.kernel.log import logger, warn_once
from org.kernel.paths import UnsafePathError, checked_id
from org.kernel.salute import MAX_REPORT_BYTES
from org.resources import roles_dir
from org.supervisor.steering import SteeringBook

from . import relay
from .keys import XOHome
from .outbox import Outbox
from .policy import Steering, Verdict, judge_report, judge_silence, report_seconds
from .roles import UNITS_FILE, RoleBook, UnitRoles, sanitised
from .signing import seal_problem
from .state import UnitState, prepared
from .store import XOStore
from .volume import MESSAGE_NAME_RE, REPORT_NAME, VolumeLayout, message_name, read_report, unit_entry_problem

#: Bad entries of ``units/`` logged one line each per sweep; the rest of a flood is one summary line.
BAD_ENTRIES_LISTED = 20


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


class XO:
    """Supervises every unit on a volume; see the module's description."""

    def __init__(
        self,
        layout: VolumeLayout,
        sender_role: str,
        home: XOHome | None = None,
        clock: Callable[[], float] = time.time,
        steering: SteeringBook | None = None,
        roles: RoleBook | None = None,
        relay_interval: float | None = relay.RELAY_INTERVAL_SECONDS,
        store: XOStore | None = None,
    ):
        self.layout = layout
        self.sender_role = checked_id(sender_role, "XO role id")
        self.clock = clock
        self.home = home
        self.relay_interval = relay_interval  # None: the learning relay is off
        self.learning_relay = relay.Relay()
        # the XO's configuration lives in its home, never on the volume units write to
        self.steering = steering or SteeringBook(home.layout.steering_file if home is not None else None)
        self.roles = roles or RoleBook(([home.layout.roles_dir] if home is not None else []) + [roles_dir()])
        #: which role each unit is, as the XO decides (<home>/units.yaml)
        self.unit_roles = UnitRoles(home.layout.root / UNITS_FILE if home is not None else None)
        self.store = store or XOStore.for_home(home.layout.root if home is not None else None, layout.root)
        self.outbox = Outbox(layout, self.sender_role, home.signing if home else None, self._written_ahead, clock,
                             epoch=home.epoch if home else 0)
        self._units: dict[str, UnitState] = {}
        self._saved = self.store.load()  # states in the store the XO has not taken up yet
        self._stamps: dict[str, tuple[int, int, int]] = {}  # last report version seen, good or bad
        self._dirty: set[str] = set()  # states changed since they were last written
        self._events: list[tuple[str, dict[str, Any]]] = []  # this sweep's, written with the states
        self._undelivered: set[str] = set()  # units whose outbox is not empty
        self._recorded: set[str] = set()  # ids of the messages recorded this sweep (not yet written anywhere)
        # bad things already logged, by version, so each is logged once: the entries of
        # units/ that are not unit folders (as many as there are, no more), and reports
        self._bad_entries: set[str] = set()
        self._bad_reports: dict[str, tuple[int, ...]] = {}
        # plain strings on the hot path: a sweep stats every report
        self._units_prefix = str(layout.units_dir) + os.sep
        self._report_suffix = os.sep + REPORT_NAME

    # ----- public -------------------------------------------------------------------

    def units(self) -> dict[str, UnitState]:
        """The units the XO knows, with their current state (read only)."""
        return dict(self._units)

    def recover(self) -> SweepResult:
        """Remove what a killed XO left half-written, load every saved unit state and write
        again what its outbox still holds."""
        result = SweepResult()
        self._remove_stale_temp_files()
        if os.path.lexists(self.layout.xo_dir / "units"):
            logger.warning("%s: not read; the XO keeps what it knows of each unit in its home, and a folder on the "
                           "volume, where any unit can write, is not trusted (it can be removed)", self.layout.xo_dir / "units")
        for unit in sorted(self._saved):
            self._state(unit)
        self._deliver_pending(result)
        self.flush()
        self._write_events()
        return result

    def _remove_stale_temp_files(self) -> None:
        """The XO's temporary files of a write a kill interrupted: the steering in each inbox.
        Only names it writes, and only old ones (see the primitive)."""
        removed: list[Path] = []
        for unit in self.layout.unit_ids()[0]:
            try:
                removed += remove_stale_temp_files(self.layout.inbox(unit), MESSAGE_NAME_RE)
            except UnsafePathError:
                continue
        if removed:
            logger.info("removed %d temporary file(s) an interrupted write left (e.g. %s)", len(removed), removed[0])

    def sweep(self, units: Iterable[str] | None = None, now: float | None = None) -> SweepResult:
        """Read the reports that changed (every unit's when ``units`` is None), steer, and
        evaluate the heartbeat of every known unit."""
        now = self.clock() if now is None else now
        result = SweepResult()
        if self.home is not None and units is None:
            self.home.refresh_units()  # a unit registered meanwhile
        self.unit_roles.refresh()  # one stat: an operator's change applies at once
        names = self._all_units(result) if units is None else [u for u in units if self._is_unit_folder(u)]
        result.units = len(names)
        for unit in names:
            self._guarded(unit, self._observe, unit, now, result)
        if self.relay_interval is not None:
            for unit, state in list(self._units.items()):
                if state.relay_queue:
                    self._guarded(unit, self._relay, unit, state, now, result)
        for unit, state in list(self._units.items()):
            age = state.age(now)
            if age is not None and age > state.heartbeat.stale_after_seconds:
                self._guarded(unit, self._heartbeat, unit, state, now, result)
        self.flush()  # one transaction: every state this sweep changed, new outbox messages with them
        self._deliver_pending(result)
        self.flush()  # the delivered messages out of the outbox (none: nothing to write)
        self._write_events()
        return result

    def flush(self) -> None:
        """Write every changed unit state, in one transaction."""
        states = [state for state in (self._units.get(u) or self._saved.get(u) for u in self._dirty) if state is not None]
        if self.store.save(states):
            self._dirty.clear()

    # ----- reading reports ----------------------------------------------------------

    def _all_units(self, result: SweepResult) -> list[str]:
        valid, invalid = self.layout.unit_ids()
        self._note_bad_entries(invalid, result)
        present = set(valid)
        for unit in [u for u in self._units if u not in present and u not in self._undelivered]:
            self._forget(unit)  # the unit's folder is gone; what the XO knows of it stays in its store
        return valid

    def _note_bad_entries(self, names: list[str], result: SweepResult) -> None:
        """Log each entry of ``units/`` that is not a unit folder once while it is there; only
        the entries there now are remembered (by name: a flood of them costs a listing, not a
        look at each one every sweep)."""
        known, self._bad_entries = self._bad_entries, set(names)
        new: list[tuple[Path, str]] = []
        for name in names:
            if name in known:
                continue
            path = self.layout.units_dir / name
            try:
                new.append((path, unit_entry_problem(name, os.lstat(path))))
            except OSError:
                continue  # gone since the listing
            if len(new) > BAD_ENTRIES_LISTED:
                break  # the rest of a flood: counted, not looked at
        fresh = len(self._bad_entries - known)
        for path, reason in new[:BAD_ENTRIES_LISTED]:
            logger.warning("skipped %s: %s", path, reason)
        if fresh > BAD_ENTRIES_LISTED:
            path, reason = new[-1]
            logger.warning("skipped %d more entries of %s that are not unit folders (e.g. %s: %s); each is logged once",
                           fresh - BAD_ENTRIES_LISTED, self.layout.units_dir, path.name, reason)
        result.skipped.extend(f"{path}: {reason}" for path, reason in new)

    def _is_unit_folder(self, unit: str) -> bool:
        if not is_identifier(unit):
            return False
        try:
            return stat.S_ISDIR(os.lstat(self.layout.units_dir / unit).st_mode)
        except OSError:
            return False

    def _forget(self, unit: str) -> None:
        """Drop a unit from memory, not from the store: a folder hidden for a sweep must not
        reset the XO's memory of the unit (its nudges, pause, sequence numbers)."""
        self.learning_relay.forget(unit)
        state = self._units.pop(unit, None)
        if state is not None:
            self._saved[unit] = state  # taken up again as it is if the folder comes back
        self._stamps.pop(unit, None)
        self._bad_reports.pop(unit, None)

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
            return self._skip(unit, name, stamp, "is a symbolic link; refused", result)
        if not stat.S_ISREG(st.st_mode):
            return self._skip(unit, name, stamp, "not a regular file", result)
        try:
            report = read_report(name, unit, self._authentic(unit, name))
        except FileNotFoundError:
            self._stamps.pop(unit, None)
            return
        except FileRefused as exc:
            return self._skip(unit, name, stamp, exc.reason, result)
        except OSError as exc:
            return self._skip(unit, name, stamp, f"cannot be read ({exc.strerror or type(exc).__name__})", result)
        state = self._state(unit)
        written = report_seconds(report.time.timestamp)
        if self.home is not None and state.report_clock is not None and written < state.report_clock:
            return self._skip(unit, name, stamp, "older than the last report taken from this unit (a copy put back?); refused", result)
        result.parsed += 1
        state.note(report_stamp=list(stamp), report_clock=written)
        if state.degraded is not None:
            logger.info("unit back to full checks: unit=%s", unit)
            state.degraded = state.alive_at = None
            self._dirty.add(unit)
        self._judge(unit, state, report, now, result)
        self._bad_reports.pop(unit, None)
        if report.signals is None:
            warn_once(f"{name}: has no signals (a unit on a shared volume writes them); heartbeat only, no radio check", key=f"signals:{unit}")

    def _authentic(self, unit: str, name: str) -> bytes:
        """The report's bytes; with an XO home, only when sealed with this unit's own key."""
        data = read_capped(name, MAX_REPORT_BYTES)
        if self.home is None:
            return data
        key = self.home.unit_keys.get(unit)
        if key is None:
            raise FileRefused(name, f"no report key is registered for unit '{unit}'; run `a0org keys unit {unit}` and give the unit its key")
        problem = seal_problem(data, key)
        if problem:
            raise FileRefused(name, problem)
        return data

    def _skip(self, unit: str, path: str, version: tuple[int, ...], reason: str, result: SweepResult) -> None:
        """Log a report that cannot be used, once per version of it; the unit is supervised by
        heartbeat alone (the report being written at all) until one can be used again."""
        if self._bad_reports.get(unit) == version:
            return
        self._bad_reports[unit] = version
        logger.warning("skipped %s: %s", path, reason)
        result.skipped.append(f"{path}: {reason}")
        state = self._state(unit)
        if state.degraded is None:
            logger.warning("unit degraded: unit=%s its report cannot be used (%s); supervised by heartbeat alone until it can", unit, reason)
            self._event("degraded", unit, state)
        state.degraded = reason[:300]
        state.alive_at = version[0] / 1e9  # the report's mtime: the unit is writing
        self._dirty.add(unit)

    def _guarded(self, unit: str, step: Callable[..., None], *args: Any) -> None:
        """One unit's problem never stops the XO."""
        try:
            step(*args)
        except Exception as exc:
            warn_once(f"{self.layout.units_dir / unit}: unexpected {type(exc).__name__} while supervising ({exc}); unit skipped for now")

    # ----- acting on verdicts ---------------------------------------------------------

    def _judge(self, unit: str, state: UnitState, report: SaluteReport, now: float, result: SweepResult) -> None:
        # the role the XO judges the unit by is its own choice, not the report's claim
        role = self.unit_roles.role(unit, report.unit.role_id)
        report.unit.role_id = role
        if report.signals is not None:
            report.signals.role_id = role
            self.roles.signals(report.signals)
            if self.relay_interval is not None:
                self._dirty.update(s.unit for s in self.learning_relay.take(state, report.signals, self._units))
        self._act(unit, state, judge_report(state, report, now, self._render, lambda: self._gone(unit, state), state.report_clock), now, result)

    def _relay(self, unit: str, state: UnitState, now: float, result: SweepResult) -> None:
        message = relay.due(state, now, self.relay_interval or 0.0)
        if message is not None:  # else the rate limit holds it: nothing changed
            self._dirty.add(unit)
            self._event("relay", unit, state, sources=list(message.sources))
            self._send(unit, state, message, now, result)

    def _heartbeat(self, unit: str, state: UnitState, now: float, result: SweepResult) -> None:
        """Called for a unit whose last report is older than ``stale_after_seconds``."""
        self._act(unit, state, judge_silence(state, now, self._render, lambda: self._waiting(unit, state)), now, result)

    def _render(self, finding: Any, repeated: bool) -> str:
        return self.steering.render(sanitised(finding), repeated)

    def _gone(self, unit: str, state: UnitState) -> bool:
        """The last steering delivered to the unit is in none of its folders: taken out of its inbox."""
        last = state.recent[-1] if state.recent else None
        return last is not None and last.seq == state.seq and not self.outbox.delivered(unit, message_name(last.seq, last.id))

    def _waiting(self, unit: str, state: UnitState) -> bool:
        """The last steering sent to the unit still lies in its inbox: the agent has not seen it."""
        last = state.recent[-1] if state.recent else None
        return last is not None and os.path.lexists(self.layout.message_file(unit, last.seq, last.id))

    def _act(self, unit: str, state: UnitState, verdict: Verdict, now: float, result: SweepResult) -> None:
        if verdict.changed:
            self._dirty.add(unit)
        if verdict.checked:
            result.checked += 1
        if verdict.recovered:
            result.recovered.append(unit)
            self._event("progress", unit, state)
        if verdict.very_stale:
            result.very_stale.append(unit)
            self._event("heartbeat", unit, state)
        if verdict.resumed:
            self._event("resume", unit, state)
        if verdict.paused_itself:
            self._event("pause", unit, state, anomaly="loop")
        if verdict.steering is not None:
            steering = verdict.steering
            kind = {"steer": "steering", "pause": "pause", "inform": "relay"}[steering.kind]  # an inform only when sent again
            self._event(kind, unit, state, anomaly=steering.anomaly)
            self._send(unit, state, steering, now, result, again=verdict.again)

    def _event(self, kind: str, unit: str, state: UnitState, **fields: Any) -> None:
        self._events.append((kind, {"unit": unit, "role": state.role_id, "turn": state.last_turn, **fields}))

    def _write_events(self) -> None:
        """This sweep's events in one append to ``<home>/events/events.jsonl``: the XO's own
        log, in its home (docs/supervisor.md#events-and-stats); without a home none is kept."""
        if not self._events:
            return
        pending, self._events = self._events, []
        if self.home is not None and self.home.layout.root.is_dir():
            folder = self.home.layout.root / events.FOLDER
            if not folder.exists():
                folder.mkdir(mode=0o700, exist_ok=True)  # private, as everything in the home
            events.record(self.home.layout.root, *pending)

    # ----- delivery -----------------------------------------------------------------

    def _send(self, unit: str, state: UnitState, steering: Steering, now: float, result: SweepResult, again: bool = False) -> None:
        """Into the unit's outbox; written to its inbox once the sweep's states are saved."""
        if not again:
            state.resent = 0
        self._recorded.add(self.outbox.record(state, steering, now))
        self._undelivered.add(unit)
        self._dirty.add(unit)

    def _deliver_pending(self, result: SweepResult) -> None:
        for unit in sorted(self._undelivered):
            state = self._units.get(unit)
            if state is None:
                self._undelivered.discard(unit)
            else:
                self._guarded(unit, self._deliver, unit, state, result)
        self._recorded.clear()

    def _deliver(self, unit: str, state: UnitState, result: SweepResult) -> None:
        written = self.outbox.deliver(state, self._recorded)
        if written is None:
            return
        result.sent.extend(written)
        if not state.outbox:
            self._undelivered.discard(unit)
        self._dirty.add(unit)

    def _written_ahead(self, state: UnitState) -> bool:
        """The state with its outbox is in the store (nothing of it waits to be written)."""
        return state.unit not in self._dirty

    # ----- state --------------------------------------------------------------------

    def _state(self, unit: str) -> UnitState:
        state = self._units.get(unit)
        if state is not None:
            return state
        state = self._saved.pop(unit, None)
        if state is None:
            # a unit the XO has not known: a new epoch started with this XO, so its seq starts afresh
            state = UnitState(unit=unit)
            self._dirty.add(unit)  # every unit seen has a row, for the views
        state = self._units[unit] = prepared(state)
        self.learning_relay.index(state)  # what a unit works on outlives an XO restart
        if state.report_stamp is not None and len(state.report_stamp) == 3:
            self._stamps.setdefault(unit, tuple(state.report_stamp))  # type: ignore[arg-type]
        if state.outbox:
            self._undelivered.add(unit)
        return state
