"""The agent as a value for the LLM-backed supervisors: what they read of their Agent-Zero
agent, read once per hook call at the hook boundary (``org/a0/hooks.py``).

Below the hooks, the runner, the task digests and the prompt sections see these values and
the chat's state (the top agent's ``agent.data``, where the running task's trace is kept, and
the task's ``params_persistent`` and ``extras_temporary`` dicts); what they do to the agent
(a UI log line, a lesson noted for the relay) goes through an
:class:`~org.kernel.agent_zero.AgentPort`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from org.kernel.agent_scope import agent_workdir, last_thoughts, top_agent
from org.kernel.agent_zero import agent_number, read_attr
from org.kernel.dispatcher import PACE_ATTR
from org.kernel.layers import read_bst, read_htn
from org.kernel.values import count_or

#: The radio check's saved state (org.supervisor.microcosm.STATE_KEY); its injection count.
RADIO_CHECK_KEY = "org_supervisor"


@dataclass(frozen=True, slots=True)
class TaskReadings:
    """The agent at one hook call, as the supervisors' task trace needs it: plain values, read once."""

    number: int  # agent.number: 0 for the top agent, whose task a subordinate's calls are part of
    task_data: dict | None  # the top agent's ``agent.data``: the running task's trace is kept there
    pace_level: Any = None  # agent._org_pace_level, as the dispatcher set it
    steering: int = 0  # steering the supervisor injected in the chat so far (the top agent's radio check)
    workdir: str = ""  # the folder the agent's shell starts in (relative file names are taken from it)
    thoughts: tuple[str, ...] = ()  # the thoughts of the agent's last answer
    user_message: str = ""  # the text of loop_data.user_message
    iteration: int | None = None  # loop_data.iteration: 0 on a task's first turn
    bst_domain: str | None = None  # the BST layer's domain, when it runs
    plan: str | None = None  # the HTN layer's plan and current step, when it runs


def read_task(agent: Any, loop_data: Any = None, *, start: bool = False, thoughts: bool = False, layers: bool = False) -> TaskReadings:
    """Read what the supervisors' task trace needs of ``agent`` now; ``start`` also what a task's
    start records (the user's message, the working folder), ``thoughts`` the thoughts of its
    last answer (with a tool call), ``layers`` the BST domain and HTN plan (the prompt sections
    select knowledge by them): each only where it is used, not at every call."""
    number = agent_number(agent)
    top = agent if number == 0 else top_agent(agent)
    data = read_attr(top, "data")
    data = data if isinstance(data, dict) else None
    iteration = read_attr(loop_data, "iteration")
    htn, bst = (read_htn(agent), read_bst(agent)) if layers else (None, None)
    plan = " ".join(p for p in (htn.plan_name, htn.current_step) if p) if htn else ""
    return TaskReadings(
        number=number,
        task_data=data,
        pace_level=read_attr(agent, PACE_ATTR),
        steering=steering_count(data),
        workdir=str(agent_workdir(agent)) if start else "",
        thoughts=tuple(last_thoughts(agent)) if thoughts else (),
        user_message=message_text(read_attr(loop_data, "user_message")) if start else "",
        iteration=iteration if isinstance(iteration, int) and not isinstance(iteration, bool) else None,
        bst_domain=bst.domain if bst else None,
        plan=plan or None,
    )


def message_text(message: Any) -> str:
    """The text of Agent-Zero's user message, whichever shape it has."""
    content = read_attr(message, "content") if message is not None and not isinstance(message, (str, dict)) else message
    if isinstance(content, dict):
        for key in ("user_message", "message", "text", "content"):
            if isinstance(content.get(key), str):
                return content[key]
        return json.dumps(content, default=str)  # cut by the digest's clean(), after redaction
    return "" if content is None else str(content)


def steering_count(data: dict | None) -> int:
    """The radio check's count of steering injected in the chat (0 when it has none)."""
    try:
        state = data.get(RADIO_CHECK_KEY) if data is not None else None
        injections = state.get("injections", 0) if isinstance(state, dict) else getattr(state, "injections", 0)
    except Exception:
        return 0
    return count_or(injections)


__all__ = ["RADIO_CHECK_KEY", "TaskReadings", "message_text", "read_task", "steering_count"]
