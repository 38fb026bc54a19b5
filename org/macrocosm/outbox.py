"""Write-ahead delivery of the XO's steering to the units' inboxes.

A new message goes into the unit's saved outbox (fsync-ed) before its inbox file is
written, and leaves the outbox once the file exists. After a crash, delivering again
writes, with the same id and seq, every outbox message whose file is in neither
``inbox/``, ``processed/`` nor ``rejected/``; the unit applies each id once. So nothing
is lost and nothing is applied twice.

Every message is signed with the XO's key (when it has one), carries the XO's epoch and
expires :data:`MESSAGE_TTL_SECONDS` after it was made: a unit never takes it later, nor
after a message of a higher (epoch, seq).
"""

from __future__ import annotations

import dataclasses
import json
import os
import stat
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable, Container

from org.contracts import SteeringMessage
from org.contracts.steering_message import MAX_MESSAGE_BYTES
from org.kernel.log import logger, warn_once
from org.kernel.paths import UnsafePathError

from .policy import Steering
from .signing import SigningKey
from .state import SentSteering, UnitState
from .volume import VolumeLayout, message_name

#: How long a unit may take a message after the XO made it. Long enough for a unit busy in a
#: long tool call; short enough that an old message copied back is refused.
MESSAGE_TTL_SECONDS = 3600.0
#: A pause is the message a unit most wants to be applied at a time of its own choosing (taken out
#: of another unit's inbox and put back later): it lives a shorter time. One the unit did not take
#: in time is sent again (policy.send_again).
PAUSE_TTL_SECONDS = 600.0


class Outbox:
    """The steering on its way to the units; each unit's outbox is kept in its :class:`UnitState`.

    ``write_ahead(state)`` saves the state and says whether it is on disk: nothing is
    written into an inbox before the message is in the saved outbox.
    """

    def __init__(
        self,
        layout: VolumeLayout,
        sender_role: str,
        signer: SigningKey | None,
        write_ahead: Callable[[UnitState], bool],
        clock: Callable[[], float] = time.time,
        epoch: int = 0,
        ttl: float = MESSAGE_TTL_SECONDS,
    ):
        self.layout = layout
        self.sender_role = sender_role
        self.signer = signer
        self.write_ahead = write_ahead
        self.clock = clock
        self.epoch = epoch
        self.ttl = ttl

    def record(self, state: UnitState, steering: Steering, now: float) -> str:
        """Put the signed message into the unit's outbox with the next seq; its id.

        Its times are the unit's (the XO's plus ``state.clock_ahead``): a unit whose clock runs
        ahead would otherwise refuse everything as expired."""
        ttl = min(self.ttl, PAUSE_TTL_SECONDS) if steering.kind == "pause" else self.ttl
        stamped = now + (state.clock_ahead or 0.0)
        message = SteeringMessage(
            id=uuid.uuid4().hex,
            seq=state.seq + 1,
            unit=state.unit,
            sender_role=self.sender_role,
            kind=steering.kind,
            anomaly=steering.anomaly,
            sources=list(steering.sources),
            severity=steering.severity,
            text=steering.text[:2000],
            nudge=steering.nudge,
            report_turn=steering.turn if steering.turn is not None and steering.turn >= 0 else None,
            call=steering.call,
            created_at=datetime.fromtimestamp(stamped, timezone.utc),
            expires_at=datetime.fromtimestamp(stamped, timezone.utc) + timedelta(seconds=ttl),
            epoch=self.epoch,
            key_id=self.signer.key_id if self.signer is not None else None,
        )
        payload = message.model_dump(mode="json")
        if self.signer is not None:
            payload["signature"] = self.signer.sign(payload)
        state.seq = message.seq
        state.outbox.append(payload)
        state.last_steering = {**dataclasses.asdict(steering), "seq": message.seq, "expires": now + ttl}
        return message.id

    def deliver(self, state: UnitState, recorded: Container[str] = ()) -> list[SteeringMessage] | None:
        """Write the outbox's messages into the inbox, in seq order, and acknowledge them.

        The outbox is saved first; None when it was not, or when the inbox cannot be
        used (nothing was tried). A message other than those just recorded (ids in ``recorded``)
        may have been written before a crash: it is written again only when its file is in
        none of the unit's folders. The messages written, in order.
        """
        if not self.write_ahead(state):
            return None  # not written ahead: try again later
        unit = state.unit
        inbox = self._deliverable(unit)
        if inbox is None:
            return None
        written: list[SteeringMessage] = []
        done = 0
        for payload in state.outbox:
            name = message_name(payload["seq"], payload["id"])
            fresh = payload["id"] in recorded
            if fresh or not self.delivered(unit, name):
                text = json.dumps(payload, ensure_ascii=False, indent=2) + "\n"
                size = len(text.encode("utf-8"))
                try:
                    if size > MAX_MESSAGE_BYTES:
                        raise ValueError(f"{size} bytes, over the {MAX_MESSAGE_BYTES}-byte message limit")
                    self.layout.write_file(inbox / name, text.encode("utf-8"))
                except (OSError, ValueError) as exc:
                    # the later ones wait too, so that the unit still receives them in seq order
                    warn_once(f"{inbox / name}: cannot write the steering ({exc}); it stays in the XO's outbox", key=f"deliver:{unit}")
                    break
                written.append(self._sent(state, payload, "sent" if fresh else "redelivered"))
            done += 1
        del state.outbox[:done]  # acknowledged: their files exist
        return written

    def delivered(self, unit: str, name: str) -> bool:
        """The message file is in the unit's inbox, or the unit already applied or refused it."""
        return any(os.path.lexists(folder / name) for folder in self._folders(unit))

    def _folders(self, unit: str) -> tuple[Path, Path, Path]:
        return (self.layout.inbox(unit), self.layout.processed(unit), self.layout.rejected(unit))

    def _deliverable(self, unit: str) -> Path | None:
        """The unit's inbox, when it is a folder inside the volume (created if missing).

        Only a first check: every write is confined again at the moment it happens.
        """
        try:
            if not stat.S_ISDIR(os.lstat(self.layout.unit_dir(unit)).st_mode):
                raise UnsafePathError(f"{self.layout.unit_dir(unit)} is not a folder")
            return self.layout.ensure_inside(self.layout.inbox(unit))
        except FileNotFoundError:
            warn_once(f"{self.layout.units_dir / unit}: the unit's folder is gone; its steering waits in the XO's outbox", key=f"deliver:{unit}")
        except (UnsafePathError, OSError) as exc:
            warn_once(f"skipped {self.layout.units_dir / unit}: cannot deliver steering ({exc}); it waits in the XO's outbox", key=f"deliver:{unit}")
        return None

    def _sent(self, state: UnitState, payload: dict[str, Any], verb: str) -> SteeringMessage:
        if payload["kind"] == "inform":
            logger.info("learnings %s: unit=%s seq=%s from=%s", verb, state.unit, payload["seq"], ",".join(payload.get("sources") or ()))
        else:
            logger.info(
                "steering %s: unit=%s seq=%s anomaly=%s severity=%s kind=%s",
                verb, state.unit, payload["seq"], payload["anomaly"], payload["severity"], payload["kind"],
            )
        state.remember(SentSteering(
            seq=payload["seq"], id=payload["id"], anomaly=payload["anomaly"], severity=payload["severity"],
            kind=payload["kind"], sent_at=self.clock(),
        ))
        return SteeringMessage.model_validate(payload)
