"""What the in-process supervisor writes to the event log (org/kernel/events.py), and the
one piece of memory that needs: whether the agent was steered since it last made progress."""

from __future__ import annotations

from typing import Any

from org.kernel import events
from org.kernel.agent_scope import chat_project
from org.kernel.agent_zero import read_attr
from org.kernel.paths import OrganizationLayout

#: ``agent.data`` (not saved with the chat): steered or blocked since the last progress.
STEERED_KEY = "_org_steered_since_progress"


def note(agent: Any, layout: OrganizationLayout, kind: str, role: str, turn: int, **fields: Any) -> None:
    """One event of this chat; steering and blocks also wait for the progress that follows them."""
    chat = read_attr(read_attr(agent, "context"), "id")
    events.record(layout.root, kind, chat=str(chat)[:200] if chat is not None else None, project=chat_project(agent),
                  role=role, turn=turn, **fields)
    if kind in ("steering", "block"):
        agent.data[STEERED_KEY] = True


def note_progress(agent: Any, layout: OrganizationLayout, role: str, turn: int, turns_since_progress: int | None) -> None:
    """The agent made progress again after steering or a block: the event that says steering helped."""
    if turns_since_progress == 0 and agent.data.get(STEERED_KEY):
        agent.data[STEERED_KEY] = False
        note(agent, layout, "progress", role, turn)
