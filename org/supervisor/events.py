"""What the in-process supervisor writes to the event log (org/kernel/events.py): the events of
a turn are gathered and written together at its end, in one write."""

from __future__ import annotations

from typing import Any, Callable

from org.kernel import events
from org.kernel.paths import OrganizationLayout

#: ``agent.data`` (not saved with the chat): steered or blocked since the last progress.
STEERED_KEY = "_org_steered_since_progress"
#: ``agent.data`` (not saved): this turn's events, until :func:`write_turn`.
PENDING_KEY = "_org_pending_events"


def note(data: dict, kind: str, role: str | None, turn: int, **fields: Any) -> None:
    """One event of this chat (``data``: its saved state), written at the turn's end; steering
    and blocks also wait for the progress that follows them."""
    data.setdefault(PENDING_KEY, []).append((kind, {"role": role, "turn": turn, **fields}))
    if kind in ("steering", "block"):
        data[STEERED_KEY] = True


def note_progress(data: dict, role: str, turn: int, turns_since_progress: int | None) -> None:
    """The agent made progress again after steering or a block: the event that says steering helped."""
    if turns_since_progress == 0 and data.get(STEERED_KEY):
        data[STEERED_KEY] = False
        note(data, "progress", role, turn)


def write_turn(data: dict, chat: str | None, project: str | None, layout: Callable[[], OrganizationLayout]) -> None:
    """Write what :func:`note` gathered, if anything (the organizations folder is asked for only then)."""
    pending = data.pop(PENDING_KEY, None)
    if not pending:
        return
    scope = {"chat": chat, "project": project}
    events.record(layout().root, *((kind, {**scope, **fields}) for kind, fields in pending))
