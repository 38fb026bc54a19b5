"""The unit's side of the macrocosm: publish SALUTE reports, apply the XO's steering.

A unit is one Agent-Zero container linked to a shared volume by ``$A0ORG_VOLUME``
(``$A0ORG_UNIT`` names it; the host name by default). Each turn its agent 0 writes
``units/<unit>/salute.json``, and leaves the steering to the XO while one runs there
(``xo/heartbeat`` is fresh), to its own supervisor otherwise. Before each prompt it
drains ``units/<unit>/inbox/``:

* messages are applied in sequence order, each at most once (by id): injected with
  ``hist_add_warning`` as ``<text> (XO <sender>, <severity>)``, logged in the UI,
  recorded as applied in ``agent.data`` (saved with the chat), then moved to
  ``inbox/processed/``, which is the acknowledgement the XO looks for;
* a message already applied (the XO delivers at least once) is only acknowledged, and
  so is one about a task that has ended since (its ``report_turn`` is not after the
  turn the unit reported the end of its last task): it would steer the next task with
  advice about the previous one;
* a message that is oversized, malformed, from a newer format, for another unit, or
  (with an organization key configured) unsigned or wrongly signed is moved to
  ``inbox/rejected/`` beside a ``<name>.reason`` file, with one log line;
* a ``pause`` message is injected, then pauses the chat the way Agent-Zero's own
  pause button does (``context.paused = True``).

Without a volume nothing here touches the disk; with an empty inbox a drain is one
directory listing.
"""

from __future__ import annotations

import os
import re
import socket
import time
from dataclasses import dataclass, field
from logging import INFO, WARNING
from pathlib import Path
from typing import Any

from org.contracts import RoleProfile, SaluteReport
from org.contracts.common import is_identifier
from org.contracts.steering_message import MAX_MESSAGE_BYTES, SteeringMessage
from org.kernel.agent_zero import add_warning, read_attr, ui_log
from org.kernel.dispatcher import unit_report
from org.kernel.files import FileRefused, atomic_write_text, json_object, read_capped, validated
from org.kernel.layers import AgentReadings
from org.kernel.log import logger, warn_once
from org.kernel.paths import UnsafePathError
from org.kernel.salute import MAX_REPORT_BYTES
from org.kernel.values import count_or
from org.supervisor.microcosm import Publisher
from org.supervisor.signals import signals_from_snapshot
from org.supervisor.snapshot import Snapshot

from .signing import ENV_KEY, ENV_KEY_FILE, OrganizationKeyError, load_key, verify
from .volume import (
    ENV_UNIT,
    ENV_VOLUME,
    MESSAGE_NAME_RE,
    XO_SILENT_AFTER,
    VolumeLayout,
    message_seq,
    xo_running,
)

#: Saved with the chat (no leading underscore): the ids already applied, oldest first.
APPLIED_KEY = "org_unit_inbox"
#: Far more than the XO can have in flight for one unit; older ids are long acknowledged.
APPLIED_LIMIT = 1024
#: Saved with the chat: the unit's turn at the end of its latest task.
TASK_END_KEY = "org_unit_task_end"
REASON_SUFFIX = ".reason"
#: Applied and refused messages kept on the volume, for people (``a0org tail``) and for the
#: XO's check that an outbox message was delivered; far more than can be in flight.
KEPT_PER_FOLDER = 500


def xo_heading(sender_role: str) -> str:
    """UI log heading prefix of XO steering: "Supervisor (XO <sender>): "."""
    return f"Supervisor (XO {sender_role}): "


def host_unit_id(hostname: str | None = None) -> str:
    """The host name made into a unit id: lower case, other characters become "-"."""
    name = (hostname if hostname is not None else socket.gethostname()).lower()
    name = re.sub(r"[^a-z0-9_-]", "-", name)
    return re.sub(r"^[^a-z0-9]+", "", name)[:64]


@dataclass(frozen=True)
class UnitLink:
    """This unit's place on the shared volume, and the key its steering must carry."""

    layout: VolumeLayout
    unit: str
    key: bytes | None = field(default=None, repr=False)

    @classmethod
    def from_env(cls) -> UnitLink | None:
        """The link ``$A0ORG_VOLUME``/``$A0ORG_UNIT`` and the organization key describe.

        None when no volume is configured, and when the unit id or the key is unusable
        (logged once): a unit that cannot check signatures must not take steering.
        """
        env = os.environ
        volume = env.get(ENV_VOLUME)
        if not volume:
            return None
        unit = env.get(ENV_UNIT) or host_unit_id()
        if not is_identifier(unit):
            warn_once(
                f"${ENV_UNIT}: {unit[:80]!r} is not a valid unit id (lower-case letters, digits, '_' and '-', "
                f"at most 64, starting with a letter or digit); this unit is not linked to the volume {volume}",
                key=f"unit id {unit[:80]!r}",
            )
            return None
        try:
            key = load_key()
        except OrganizationKeyError as exc:
            warn_once(f"organization key: {exc}; this unit is not linked to the volume {volume}")
            return None
        return cls(VolumeLayout(volume), unit, key)

    @property
    def report(self) -> Path:
        return self.layout.report(self.unit)

    @property
    def inbox(self) -> Path:
        return self.layout.inbox(self.unit)


#: (the environment that made it, the link): ``current_link`` rebuilds only when it changes.
_current: tuple[tuple[str | None, ...], UnitLink | None] | None = None


def current_link() -> UnitLink | None:
    """The link of this process, built once per distinct environment (the key file is read once)."""
    global _current
    marker = tuple(os.environ.get(name) for name in (ENV_VOLUME, ENV_UNIT, ENV_KEY, ENV_KEY_FILE))
    if _current is None or _current[0] != marker:
        _current = (marker, UnitLink.from_env() if marker[0] else None)
    return _current[1]


# --------------------------------------------------------------------------- publishing


def note_task_end(data: dict, turn: int) -> None:
    """Remember the turn a task ended: steering about it or earlier turns is outdated from now on."""
    data[TASK_END_KEY] = turn


def outdated(data: dict, message: SteeringMessage) -> bool:
    ended = data.get(TASK_END_KEY)
    return message.report_turn is not None and isinstance(ended, int) and message.report_turn <= ended


#: ``agent.data`` (not saved with the chat): the supervision mode last shown in the UI log.
MODE_KEY = "_org_supervision_mode"
XO_STEERS, OWN_SUPERVISOR, NO_VOLUME = "xo", "own", "no volume"


def supervision_mode(link: UnitLink, now: float) -> str:
    """Who steers a linked unit's agent: a running XO, or (no XO, no volume) its own supervisor."""
    if not link.layout.root.is_dir():
        return NO_VOLUME
    return XO_STEERS if xo_running(link.layout, now) else OWN_SUPERVISOR


def mode_in_words(link: UnitLink, mode: str) -> str:
    volume, unit = link.layout.root, link.unit
    if mode == XO_STEERS:
        return f"Unit '{unit}' reports to the XO running on {volume}; the XO steers this agent."
    if mode == NO_VOLUME:
        return (f"The shared volume {volume} (${ENV_VOLUME}) does not exist (not mounted?); this agent's own "
                "supervisor steers it until the volume is there.")
    return (f"No XO is running on {volume} (no heartbeat for {XO_SILENT_AFTER:g} s); unit '{unit}' keeps publishing "
            "its reports and this agent's own supervisor steers it until an XO runs.")


def announce_mode(agent: Any, link: UnitLink, mode: str) -> None:
    """One UI log line (and one log line) each time the mode changes, so the user sees who steers."""
    if agent.data.get(MODE_KEY) == mode:
        return
    agent.data[MODE_KEY] = mode
    words = mode_in_words(link, mode)
    ui_log(agent, type="info", heading=f"Supervisor: {'XO' if mode == XO_STEERS else 'own supervision'}", content=words)
    logger.log(WARNING if mode == NO_VOLUME else INFO, "%s", words)


def publish_turn(agent: Any, link: UnitLink, role: RoleProfile, snapshot: Snapshot, readings: AgentReadings) -> bool:
    """Publish the unit's report for this turn, carrying the snapshot a radio check reads.

    True when a running XO steers the agent; False when its own supervisor must (the report
    is published all the same when the volume is there, so an XO that starts has it).
    """
    mode = supervision_mode(link, time.time())
    announce_mode(agent, link, mode)
    if mode == NO_VOLUME:
        return False
    signals = signals_from_snapshot(snapshot).model_copy(update={"steering_seq": taken_seq(agent.data)})
    report = unit_report(agent, role, link.unit, signals, readings)
    if report is not None:
        if report.reason == "task_end":
            note_task_end(agent.data, snapshot.turn)
        publish(link, report)
    return mode == XO_STEERS


def current_publisher() -> Publisher | None:
    """What agent 0 does at a turn's end while linked to a volume (see :func:`publish_turn`)."""
    link = current_link()
    if link is None:
        return None
    return lambda agent, role, snapshot, readings: publish_turn(agent, link, role, snapshot, readings)


def publish(link: UnitLink, report: SaluteReport) -> Path | None:
    """Write ``units/<unit>/salute.json`` atomically; the path, or None when it could not be (logged)."""
    path = link.report
    text = report.model_dump_json() + "\n"
    if len(text.encode("utf-8")) > MAX_REPORT_BYTES:
        warn_once(f"{path}: the SALUTE report would be over the {MAX_REPORT_BYTES}-byte limit readers accept; not published")
        return None
    if not link.layout.root.is_dir():
        warn_once(f"{link.layout.root}: the shared volume folder does not exist (not mounted?); SALUTE report not published")
        return None
    try:
        link.layout.ensure_inside(path.parent)
        atomic_write_text(path, text)
    except (OSError, UnsafePathError) as exc:
        warn_once(f"{path}: cannot publish the SALUTE report: {getattr(exc, 'strerror', None) or exc}", key=f"publish {path}")
        return None
    return path


# --------------------------------------------------------------------------- the inbox


def pending_files(link: UnitLink) -> list[os.DirEntry]:
    """Entries of the inbox that are (or pretend to be) messages: one directory listing.

    Folders, the names of processed/ and rejected/ whatever they are, and dot files (a
    writer's temporary files) are not.
    """
    inbox, layout = link.inbox, link.layout
    reserved = (layout.processed(link.unit).name, layout.rejected(link.unit).name)
    try:
        with os.scandir(inbox) as entries:
            return [e for e in entries if not e.name.startswith(".") and e.name not in reserved
                    and not e.is_dir(follow_symlinks=False)]
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as exc:
        warn_once(f"{inbox}: cannot list the steering inbox: {exc.strerror or exc}", key=f"inbox {inbox}")
        return []


def sequence_key(entry: os.DirEntry) -> tuple[int, str]:
    return (message_seq(entry.name) or 0, entry.name)


def read_message(link: UnitLink, entry: os.DirEntry) -> SteeringMessage:
    """The validated message in ``entry``, or :class:`FileRefused` saying why it is refused."""
    path = Path(entry.path)
    if entry.is_symlink():
        raise FileRefused(path, "is a symbolic link; refused")
    if not entry.is_file(follow_symlinks=False):
        raise FileRefused(path, "is not a regular file")
    match = MESSAGE_NAME_RE.fullmatch(entry.name)
    if match is None:
        raise FileRefused(path, "not a steering message name (<seq, 10 digits>-<id, 32 hex>.json)")
    value = json_object(path, read_capped(path, MAX_MESSAGE_BYTES))
    if link.key is not None:
        bad_signature = verify(value, link.key)
        if bad_signature:
            raise FileRefused(path, bad_signature)
    message = validated(path, SteeringMessage, value, "steering message")
    if message.unit != link.unit:
        raise FileRefused(path, f"addressed to unit '{message.unit}', not to this unit '{link.unit}'")
    if (message.seq, message.id) != (int(match.group(1)), match.group(2)):
        raise FileRefused(path, f"the file name does not match the message's seq {message.seq} and id {message.id}")
    return message


def steering_text(message: SteeringMessage) -> str:
    """What the agent reads: the XO's text first, so its [SUPERVISOR] tag leads."""
    return f"{message.text} (XO {message.sender_role}, {message.severity})"


class AppliedIds:
    """The ids this chat has applied, and the highest seq it has taken from the inbox,
    kept in ``agent.data`` so they are saved with the chat."""

    def __init__(self, data: dict):
        record = data.get(APPLIED_KEY)
        ids = record.get("applied") if isinstance(record, dict) else None
        if not isinstance(ids, list):
            if record is not None:
                warn_once(f"agent.data[{APPLIED_KEY!r}]: not in the {{applied: [ids]}} shape; started afresh", key=APPLIED_KEY)
            ids = []
        self._data = data
        self._ids = [i for i in ids if isinstance(i, str)]
        self._known = set(self._ids)
        self._seq = taken_seq(data)

    def __contains__(self, message_id: str) -> bool:
        return message_id in self._known

    def add(self, message_id: str) -> None:
        self._ids.append(message_id)
        self._known.add(message_id)
        del self._ids[:-APPLIED_LIMIT]
        self._save()

    def taken(self, seq: int | None) -> None:
        """A message left the inbox (applied, acknowledged or refused): the XO may send the next."""
        if seq is not None and (self._seq is None or seq > self._seq):
            self._seq = seq
            self._save()

    def _save(self) -> None:
        self._data[APPLIED_KEY] = {"version": 1, "applied": list(self._ids), "seq": self._seq}


def taken_seq(data: dict) -> int | None:
    """The highest seq this chat has taken from its inbox, reported to the XO in ``signals.steering_seq``."""
    record = data.get(APPLIED_KEY)
    seq = record.get("seq") if isinstance(record, dict) else None
    return count_or(seq, None)


def move_into(layout: VolumeLayout, path: Path, folder: Path) -> Path:
    """Move ``path`` into ``folder`` (created, and refused when it leads out of the volume)."""
    layout.ensure_inside(folder)
    target = folder / path.name
    os.replace(path, target)
    prune(folder)
    return target


def prune(folder: Path) -> None:
    """Keep the newest :data:`KEPT_PER_FOLDER` files of processed/ or rejected/ (names start with the seq)."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return
    for name in names[: max(0, len(names) - KEPT_PER_FOLDER)]:
        try:
            os.unlink(folder / name)
        except OSError:
            pass


def acknowledge(link: UnitLink, path: Path) -> bool:
    try:
        move_into(link.layout, path, link.layout.processed(link.unit))
        return True
    except (OSError, UnsafePathError) as exc:
        warn_once(f"{path}: applied, but cannot be moved to processed/ ({getattr(exc, 'strerror', None) or exc}); "
                  "it will be recognised as applied and moved later", key=f"ack {path}")
        return False


def reject(link: UnitLink, error: FileRefused) -> None:
    """Move a refused file to ``rejected/`` with its reason beside it; one log line."""
    path, folder = error.path, link.layout.rejected(link.unit)
    try:
        target = move_into(link.layout, path, folder)
        atomic_write_text(target.with_name(target.name + REASON_SUFFIX), error.reason + "\n")
    except (OSError, UnsafePathError) as exc:
        warn_once(f"{path}: refused steering ({error.reason}), and it cannot be moved to {folder}: "
                  f"{getattr(exc, 'strerror', None) or exc}", key=f"reject {path}")
        return
    warn_once(f"{path}: refused steering: {error.reason}; moved to {folder}", key=f"reject {path}")


async def inject(agent: Any, message: SteeringMessage) -> bool:
    """Put the message into the agent's history and the UI log; False when history refused it."""
    text = steering_text(message)
    try:
        await add_warning(agent, text)
    except Exception as exc:
        warn_once(f"agent.hist_add_warning failed ({type(exc).__name__}: {exc}); the XO's steering stays in the inbox "
                  "and is tried again next turn")
        return False
    ui_log(agent, type="warning", heading=xo_heading(message.sender_role) + message.anomaly, content=text)
    return True


def pause(agent: Any, message: SteeringMessage) -> None:
    """Pause the chat as Agent-Zero's pause button does; it waits until someone resumes it."""
    context = read_attr(agent, "context")
    try:
        context.paused = True
    except Exception as exc:
        warn_once(f"agent.context.paused cannot be set ({type(exc).__name__}: {exc}); the XO's pause was not applied")
        return
    logger.warning("paused by XO %s after %d unanswered nudge(s) about %s", message.sender_role, message.nudge, message.anomaly)
    ui_log(agent, type="warning", heading=xo_heading(message.sender_role) + "paused",
           content=f"The XO paused this agent ({message.anomaly}, {message.nudge} unanswered nudges). Resume it to continue.")


async def drain_inbox(agent: Any, link: UnitLink) -> list[SteeringMessage]:
    """Apply the unit's waiting steering (see the module docstring); the messages applied now."""
    entries = pending_files(link)
    if not entries:
        return []
    try:
        link.layout.ensure_inside(link.inbox)
    except (OSError, UnsafePathError) as exc:
        warn_once(f"{link.inbox}: steering inbox refused: {exc}", key=f"inbox {link.inbox}")
        return []
    applied_ids = AppliedIds(agent.data)
    applied: list[SteeringMessage] = []
    for entry in sorted(entries, key=sequence_key):
        seq = message_seq(entry.name)
        try:
            message = read_message(link, entry)
        except FileRefused as error:
            reject(link, error)
            applied_ids.taken(seq)
            continue
        except OSError as exc:  # gone meanwhile, or unreadable: nothing to apply
            warn_once(f"{entry.path}: cannot read the steering message: {exc.strerror or exc}", key=f"read {entry.path}")
            continue
        except Exception as exc:  # a file nobody foresaw must not block the messages behind it
            reject(link, FileRefused(Path(entry.path), f"cannot be read as a steering message ({type(exc).__name__}: {exc})"))
            applied_ids.taken(seq)
            continue
        if outdated(agent.data, message):
            logger.info("%s: steering about turn %s of a task that has ended; acknowledged without applying it",
                        entry.path, message.report_turn)
        elif message.id not in applied_ids:
            if not await inject(agent, message):
                break  # keep the order: the rest waits for the next turn too
            applied_ids.add(message.id)
            applied.append(message)
            if message.kind == "pause":
                pause(agent, message)
        applied_ids.taken(message.seq)
        acknowledge(link, Path(entry.path))
    return applied
