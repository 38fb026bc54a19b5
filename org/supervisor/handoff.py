"""A delegation chain: subordinates handing their task on as they got it, before doing any of it.

Agent-Zero's ``call_subordinate`` sets no limit on depth (v0.9.8, v1.7): a model that delegates
whatever it is given makes A1 hand the task to A2, A2 to A3, and so on, each link a new agent
and a model call, until the user stops it or Python's recursion limit does (agent0ai/agent-zero
issues 24 and 72). Each agent has its own ledger, so no loop shows in any one of them; the
evidence is across the links: what each was handed and what it handed on.

A *relay* is a subordinate (agent 1 and up) whose call hands on the task it was handed, as it
got it (its words, at least :data:`SAME_TASK` of them), with none of its own work before it in
the task (its calls so far are delegations). Agent 0 handing the user's task to a subordinate
is an ordinary choice and no relay. Each delegation records, on the caller, what it hands on
and how many relays in a row it ends; the subordinate reads that from its superior at its own
delegation. The second relay in a row is blocked: two agents down the chain, nobody has begun.
"""

from __future__ import annotations

from typing import Any

from org.kernel.values import count_or
from org.lazy_patterns import lazy_pattern

#: Agent-Zero's tool that hands a task to a subordinate agent.
DELEGATION_TOOL = "call_subordinate"
#: Relays in a row whose last one is not run.
RELAYS_BLOCKED = 2
#: The share of the words handed down that the message handed on repeats, for the same task.
SAME_TASK = 0.6
#: What a record keeps of the message it hands on (a task's words are in its first part).
KEPT_CHARS = 4000

_WORD = lazy_pattern(r"[^\W_]{3,}")


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def same_task(handed_down: str, handed_on: str) -> bool:
    """``handed_on`` repeats most words of ``handed_down``: the task as it came, whatever it adds."""
    given = _words(handed_down)
    return bool(given) and len(given & _words(handed_on)) >= SAME_TASK * len(given)


def message_of(tool_args: Any) -> str | None:
    """The message a ``call_subordinate`` call hands on, or None."""
    message = tool_args.get("message") if isinstance(tool_args, dict) else None
    return message if isinstance(message, str) and message.strip() else None


def relays(number: int, handed_down: Any, handed_on: str | None, own_work: bool) -> int:
    """How many relays in a row end with this delegation (0: it is none).

    ``handed_down`` is the superior's record (:func:`record`) of the delegation that made this
    agent's task; ``own_work``: the agent made a call other than a delegation in this task."""
    if number < 1 or own_work or handed_on is None or not isinstance(handed_down, dict):
        return 0
    given = handed_down.get("message")
    if not isinstance(given, str) or not same_task(given, handed_on):
        return 0
    return count_or(handed_down.get("relays")) + 1


def record(handed_on: str | None, relay_count: int) -> dict[str, Any]:
    """What the caller keeps of its delegation, for its subordinate to read."""
    return {"message": (handed_on or "")[:KEPT_CHARS], "relays": relay_count}


def relayed_by(number: int, relay_count: int) -> str:
    """The agents before this one that relayed the task, by name: "A1", "A1 and A2", "A1, A2 and A3"."""
    names = [f"A{n}" for n in range(max(1, number - relay_count + 1), number)]
    if len(names) < 2:
        return names[0] if names else "your superior"
    return ", ".join(names[:-1]) + " and " + names[-1]
