"""The unit's inbox: apply the XO's steering exactly once, and refuse everything else.

Before each prompt agent 0 drains ``units/<unit>/inbox/``, in sequence order:

* a message is taken only when it is signed by a key of ``steering.pub`` (with keys
  configured), addressed to this unit, named after its seq and id, not expired, and above the
  highest (epoch, seq) this unit has taken, which is kept in a file of the unit's own
  (``UnitLink.state_file``): neither a new chat nor a file copied back into the inbox can make
  an old message count again;
* it is **applied** (injected with ``hist_add_warning`` as ``<text> (XO <sender>, <severity>)``,
  logged in the UI, its id recorded in ``agent.data``; a pause also pauses the chat; a loop
  steering naming its ``call`` opens the unit's circuit breaker as the unit's own would), the chat is
  **saved** (Agent-Zero's own ``save_tmp_chat``), and only then **acknowledged**: the high mark
  is written and the file moved to ``inbox/processed/``. A crash before the save loses the
  injection and the id together, so the message is applied again; after it, the id is in the
  saved chat and the message is only acknowledged. Each takes effect exactly once;
* a message about a task that has ended since is acknowledged without being applied;
* anything refused goes to ``inbox/rejected/`` beside a ``<name>.reason`` file. Only an
  authentic message (an expired one included) moves the seq the unit reports to the XO; junk,
  whatever its name, never does.

A drain handles at most :data:`MAX_PER_TURN` files and :data:`DRAIN_SECONDS` of work, logs the
first few refusals and then one summary line: a flooded inbox costs a turn a bounded moment.
"""

from __future__ import annotations

import heapq
import json
import os
import time
from datetime import timezone
from pathlib import Path
from typing import Any

from org.contracts.steering_message import MAX_MESSAGE_BYTES, SteeringMessage
from org.kernel.agent_zero import AgentPort
from org.kernel.files import FileRefused, atomic_write_text, json_object, read_capped, validated
from org.kernel.log import logger, warn_once
from org.kernel.paths import UnsafePathError
from org.kernel.turn_readings import TurnReadings
from org.kernel.values import count_or
from org.supervisor.microcosm import steered_about_call

from .link import UnitLink
from .volume import MESSAGE_NAME_RE, message_seq

#: Saved with the chat (no leading underscore): the ids already applied, oldest first.
APPLIED_KEY = "org_unit_inbox"
#: Far more than the XO can have in flight for one unit; older ids are long acknowledged.
APPLIED_LIMIT = 1024
#: Saved with the chat: the unit's turn at the end of its latest task.
TASK_END_KEY = "org_unit_task_end"
REASON_SUFFIX = ".reason"
#: The key of the information message relayed learnings become in the chat's history.
INFORMATION_KEY = "information_from_other_units"
#: Applied and refused messages kept on the volume, for people (``a0org tail``) and for the
#: XO's check that an outbox message was delivered; far more than can be in flight.
KEPT_PER_FOLDER = 500
#: Files handled per drain, and the time one drain may take; the rest waits for the next turn.
MAX_PER_TURN = 100
DRAIN_SECONDS = 0.25
#: Refusals logged one by one per drain; beyond, one summary line.
REFUSALS_LOGGED = 3


def xo_heading(sender_role: str) -> str:
    """UI log heading prefix of XO steering: "Supervisor (XO <sender>): "."""
    return f"Supervisor (XO {sender_role}): "


def note_task_end(data: dict, turn: int) -> None:
    """Remember the turn a task ended: steering about it or earlier turns is outdated from now on."""
    data[TASK_END_KEY] = turn


def outdated(data: dict, message: SteeringMessage) -> bool:
    ended = data.get(TASK_END_KEY)
    return message.report_turn is not None and isinstance(ended, int) and message.report_turn <= ended


def pending_files(link: UnitLink, first: int | None = None) -> tuple[list[os.DirEntry], int]:
    """Entries of the inbox that are (or pretend to be) messages, in :func:`sequence_key` order,
    only the ``first`` ones when given, and how many there are: one directory listing.

    Folders, the names of processed/ and rejected/ whatever they are, and dot files (a
    writer's temporary files) are not. A flooded inbox costs the listing, not a sort of it.
    """
    inbox, layout = link.inbox, link.layout
    reserved = (layout.processed(link.unit).name, layout.rejected(link.unit).name)
    try:
        with os.scandir(inbox) as entries:
            found = (e for e in entries if not e.name.startswith(".") and e.name not in reserved
                     and not e.is_dir(follow_symlinks=False))
            counted = _Counted(found)
            chosen = sorted(counted, key=sequence_key) if first is None else heapq.nsmallest(first, counted, key=sequence_key)
            return chosen, counted.count
    except (FileNotFoundError, NotADirectoryError):
        return [], 0
    except OSError as exc:
        warn_once(f"{inbox}: cannot list the steering inbox: {exc.strerror or exc}", key=f"inbox {inbox}")
        return [], 0


class _Counted:
    """An iterable that counts what went through it."""

    def __init__(self, items: Any):
        self.items, self.count = items, 0

    def __iter__(self) -> Any:
        for item in self.items:
            self.count += 1
            yield item


def sequence_key(entry: os.DirEntry) -> tuple[int, int, str]:
    """Steering names first, by seq; any other name after them."""
    seq = message_seq(entry.name)
    return (0 if seq is not None else 1, seq or 0, entry.name)


def read_message(link: UnitLink, entry: os.DirEntry) -> SteeringMessage:
    """The validated, authentic message in ``entry``, or :class:`FileRefused` saying why not."""
    path = Path(entry.path)
    if entry.is_symlink():
        raise FileRefused(path, "is a symbolic link; refused")
    if not entry.is_file(follow_symlinks=False):
        raise FileRefused(path, "is not a regular file")
    match = MESSAGE_NAME_RE.fullmatch(entry.name)
    if match is None:
        raise FileRefused(path, "not a steering message name (<seq, 10 digits>-<id, 32 hex>.json)")
    value = json_object(path, read_capped(path, MAX_MESSAGE_BYTES))
    keyring = link.current_keyring()
    if keyring is not None:
        bad_signature = keyring.verify(value)
        if bad_signature:
            raise SignatureRefused(path, bad_signature)
    message = validated(path, SteeringMessage, value, "steering message")
    if message.unit != link.unit:
        raise FileRefused(path, f"addressed to unit '{message.unit}', not to this unit '{link.unit}'")
    if (message.seq, message.id) != (int(match.group(1)), match.group(2)):
        raise FileRefused(path, f"the file name does not match the message's seq {message.seq} and id {message.id}")
    return message


class SignatureRefused(FileRefused):
    """Not signed by a key of this unit's ``steering.pub`` (reported to the XO: it may have a new key)."""


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
        refused = record.get("refused") if isinstance(record, dict) else None
        self._refused = refused if isinstance(refused, dict) else None

    def __contains__(self, message_id: str) -> bool:
        return message_id in self._known

    def add(self, message_id: str) -> None:
        self._ids.append(message_id)
        self._known.add(message_id)
        del self._ids[:-APPLIED_LIMIT]
        self._save()

    def taken(self, seq: int | None) -> None:
        """An authentic message left the inbox: the XO may send the next."""
        if seq is not None and (self._seq is None or seq > self._seq):
            self._seq = seq
            self._save()

    def refused(self, seq: int, reason: str, detail: str) -> None:
        """A steering file of this unit refused (expired, or a key it does not hold): the XO
        sends it again rather than wait for it. The lowest refused seq above the highest taken is
        kept, so junk with a huge seq in its name cannot hide the XO's own message."""
        taken = self._seq or 0
        kept = count_or(self._refused.get("seq"), 0) if self._refused else 0
        if seq > taken and (kept <= taken or seq <= kept):
            self._refused = {"seq": seq, "reason": reason, "detail": detail[:200]}
            self._save()

    def _save(self) -> None:
        self._data[APPLIED_KEY] = {"version": 1, "applied": list(self._ids), "seq": self._seq, "refused": self._refused}


def refused_steering(data: dict) -> dict | None:
    """The latest steering this chat refused that the XO should send again, reported in ``signals.steering_refused``."""
    record = data.get(APPLIED_KEY)
    refused = record.get("refused") if isinstance(record, dict) else None
    return refused if isinstance(refused, dict) else None


def taken_seq(data: dict) -> int | None:
    """The highest seq this chat has taken from its inbox, reported to the XO in ``signals.steering_seq``."""
    record = data.get(APPLIED_KEY)
    seq = record.get("seq") if isinstance(record, dict) else None
    return count_or(seq, None)


class HighMark:
    """The highest (epoch, seq) this unit has taken, in the unit's own file (not the chat, not the volume)."""

    def __init__(self, path: Path | None):
        self.path = path
        self.mark = (-1, 0)
        if path is None:
            return
        try:
            value = json.loads(read_capped(path, 4096))
            self.mark = (count_or(value.get("epoch"), -1), count_or(value.get("seq"), 0))
        except FileNotFoundError:
            pass
        except (FileRefused, OSError, ValueError, AttributeError) as exc:
            warn_once(f"{path}: cannot read the unit's steering mark ({exc}); starting from none", key=f"mark {path}")

    def taken_before(self, message: SteeringMessage) -> bool:
        return (message.epoch, message.seq) <= self.mark

    def take(self, message: SteeringMessage) -> None:
        if (message.epoch, message.seq) <= self.mark:
            return
        self.mark = (message.epoch, message.seq)
        if self.path is None:
            return
        try:
            atomic_write_text(self.path, json.dumps({"epoch": self.mark[0], "seq": self.mark[1]}) + "\n")
        except OSError as exc:
            warn_once(f"{self.path}: cannot keep the unit's steering mark ({exc.strerror or exc}); an old message "
                      "could be taken again until it expires", key=f"mark write {self.path}")


def prune(link: UnitLink, folder: Path) -> None:
    """Keep the newest :data:`KEPT_PER_FOLDER` files of processed/ or rejected/ (names start with the seq)."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return
    for name in names[: max(0, len(names) - KEPT_PER_FOLDER)]:
        try:
            link.layout.remove_file(folder / name)
        except (OSError, UnsafePathError):
            pass


def move_into(link: UnitLink, path: Path, folder: Path) -> Path:
    """Move ``path`` into ``folder``, confined to the volume (created; never through a link)."""
    target = link.layout.move_file(path, folder)
    prune(link, folder)
    return target


def acknowledge(link: UnitLink, path: Path) -> bool:
    try:
        move_into(link, path, link.layout.processed(link.unit))
        return True
    except (OSError, UnsafePathError) as exc:
        warn_once(f"{path}: applied, but cannot be moved to processed/ ({getattr(exc, 'strerror', None) or exc}); "
                  "it will be recognised as applied and moved later", key=f"ack {path}")
        return False


def reject(link: UnitLink, error: FileRefused, quiet: bool = False) -> None:
    """Move a refused file to ``rejected/`` with its reason beside it; one log line unless ``quiet``."""
    path, folder = Path(error.path), link.layout.rejected(link.unit)
    try:
        target = move_into(link, path, folder)
        link.layout.write_file(target.with_name(target.name + REASON_SUFFIX), (error.reason + "\n").encode("utf-8"))
    except (OSError, UnsafePathError) as exc:
        warn_once(f"{path}: refused steering ({error.reason}), and it cannot be moved to {folder}: "
                  f"{getattr(exc, 'strerror', None) or exc}", key=f"reject {path}")
        return
    if not quiet:
        warn_once(f"{path}: refused steering: {error.reason}; moved to {folder}", key=f"reject {path}")


async def inject(port: AgentPort, message: SteeringMessage) -> bool:
    """Put the message into the agent's history and the UI log; False when history refused it.
    Relayed learnings go in as information, steering as a warning."""
    inform = message.kind == "inform"
    text = message.text if inform else steering_text(message)
    try:
        if inform:
            await port.inform(INFORMATION_KEY, text)
        else:
            await port.warn(text)
    except Exception as exc:
        warn_once(f"agent.{'hist_add_message' if inform else 'hist_add_warning'} failed ({type(exc).__name__}: {exc}); "
                  "the XO's message stays in the inbox and is tried again next turn")
        return False
    if inform:
        port.log(type="info", heading=f"XO {message.sender_role}: learned by unit {', '.join(message.sources)}", content=text)
    else:
        port.log(type="warning", heading=xo_heading(message.sender_role) + str(message.anomaly), content=text)
    return True


def open_breaker(readings: TurnReadings, port: AgentPort, call: str) -> None:
    """A loop steering about one call reached the agent: the unit's breaker takes it as its own."""
    try:
        steered_about_call(readings.role, port, call)
    except Exception as exc:  # the message is applied all the same
        warn_once(f"the circuit breaker could not take the XO's loop steering ({type(exc).__name__}: {exc})")


def pause(port: AgentPort, message: SteeringMessage) -> None:
    """Pause the chat as Agent-Zero's pause button does; it waits until someone resumes it."""
    if not port.pause():
        warn_once("agent.context.paused cannot be set; the XO's pause was not applied")
        return
    logger.warning("paused by XO %s after %d unanswered nudge(s) about %s", message.sender_role, message.nudge, message.anomaly)
    port.log(type="warning", heading=xo_heading(message.sender_role) + "paused",
             content=f"The XO paused this agent ({message.anomaly}, {message.nudge} unanswered nudges). Resume it to continue.")


class _Drain:
    """One drain's bookkeeping: what was refused (logged up to a point), what is left."""

    def __init__(self, link: UnitLink):
        self.link = link
        self.refused = 0
        self.started = time.monotonic()

    def refuse(self, error: FileRefused) -> None:
        self.refused += 1
        reject(self.link, error, quiet=self.refused > REFUSALS_LOGGED)

    def out_of_time(self, handled: int) -> bool:
        return handled >= MAX_PER_TURN or time.monotonic() - self.started > DRAIN_SECONDS

    def summary(self, left: int) -> None:
        if self.refused > REFUSALS_LOGGED or left:
            logger.warning("%s: %d file(s) refused this turn (moved to rejected/, the first %d logged); %d left for the next turns",
                           self.link.inbox, self.refused, min(self.refused, REFUSALS_LOGGED), left)


async def drain_inbox(readings: TurnReadings, port: AgentPort, link: UnitLink, now: float | None = None) -> list[SteeringMessage]:
    """Apply the unit's waiting steering (see the module's description) to the agent read as
    ``readings``, through ``port``; the messages applied now."""
    entries, total = pending_files(link, MAX_PER_TURN)
    if not entries:
        return []
    try:  # the inbox itself, reached without following a link (a unit folder linked elsewhere is refused)
        os.close(link.layout.open_folder(link.inbox, create=False))
    except (OSError, UnsafePathError) as exc:
        warn_once(f"{link.inbox}: steering inbox refused: {getattr(exc, 'strerror', None) or exc}", key=f"inbox {link.inbox}")
        return []
    now = time.time() if now is None else now
    applied_ids = AppliedIds(port.data)
    mark = HighMark(link.state_file)
    drain = _Drain(link)
    applied: list[SteeringMessage] = []
    handled = 0
    for entry in entries:
        if drain.out_of_time(handled):
            break
        handled += 1
        try:
            message = read_message(link, entry)
        except SignatureRefused as error:
            drain.refuse(error)
            seq = message_seq(entry.name)
            if seq is not None:
                applied_ids.refused(seq, "key", error.reason)
            continue
        except FileRefused as error:
            drain.refuse(error)
            continue
        except OSError as exc:  # gone meanwhile, or unreadable: nothing to apply
            warn_once(f"{entry.path}: cannot read the steering message: {exc.strerror or exc}", key=f"read {entry.path}")
            continue
        except Exception as exc:  # a file nobody foresaw must not block the messages behind it
            drain.refuse(FileRefused(Path(entry.path), f"cannot be read as a steering message ({type(exc).__name__}: {exc})"))
            continue
        path = Path(entry.path)
        if message.id not in applied_ids and mark.taken_before(message):
            drain.refuse(FileRefused(path, f"epoch {message.epoch} seq {message.seq} is not above the highest this unit has "
                                           f"taken (epoch {mark.mark[0]} seq {mark.mark[1]}): an old message put back"))
            continue
        expires = message.expires_at if message.expires_at.tzinfo else message.expires_at.replace(tzinfo=timezone.utc)
        if message.id not in applied_ids and expires.timestamp() < now:
            drain.refuse(FileRefused(path, f"expired at {expires.isoformat()}"))
            applied_ids.refused(message.seq, "expired", f"expired at {expires.isoformat()}; this unit's clock said {now:.0f}")
            mark.take(message)
            applied_ids.taken(message.seq)  # authentic: the XO may go on
            continue
        if outdated(port.data, message):
            logger.info("%s: steering about turn %s of a task that has ended; acknowledged without applying it",
                        entry.path, message.report_turn)
        elif message.id not in applied_ids:
            if not await inject(port, message):
                break  # keep the order: the rest waits for the next turn too
            applied_ids.add(message.id)
            applied.append(message)
            if message.kind == "steer" and message.call:
                open_breaker(readings, port, message.call)
            if message.kind == "pause":
                pause(port, message)
            applied_ids.taken(message.seq)
            port.save()  # the injection and its id on disk together, before the acknowledgement
        applied_ids.taken(message.seq)
        mark.take(message)
        acknowledge(link, path)
    drain.summary(total - handled)
    return applied
