"""The agent as a value: what the supervisor reads of its Agent-Zero agent, read once per hook call.

The hooks (``org/a0/hooks.py``) call :func:`read_turn` at their boundary and hand the
dispatcher and the supervisor the :class:`TurnReadings` it returns, with an
:class:`~org.kernel.agent_zero.AgentPort` for everything they do to the agent (a history
message, a UI log line, a pause, a blocked tool, the dispatcher's marks) and the chat's saved
state. Below the hooks, neither reads the live agent (nor do the LLM-backed supervisors:
``org/llm_supervisors/task_readings.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .agent_scope import chat_project
from .agent_zero import agent_number, is_paused, read_attr
from .context_fill import model_name
from .dispatcher import ORG_ATTR, PACE_ATTR, ROLE_ATTR
from .layers import AgentReadings, read_agent

#: Per monologue, like Agent-Zero's own repeat check.
PREVIOUS_RESPONSE_KEY = "_org_previous_response"
#: Newer Agent-Zero's own counter of consecutive unusable responses (read only).
UNUSABLE_RESPONSES_KEY = "_unusable_response_failures"


@dataclass(frozen=True, slots=True)
class TurnReadings:
    """The agent at one hook call: plain values, read once."""

    number: int  # agent.number: 0 for the top-level agent
    role: Any  # agent._org_active_role: the role the dispatcher set (a dict), validated by the supervisor
    pace_level: Any  # agent._org_pace_level, as the dispatcher set it
    paused: bool  # agent.context.paused
    chat: str | None  # the chat's (context's) id
    project: str | None  # the chat's Agent-Zero project
    native_repeat: bool = False  # Agent-Zero warned about a repeated or unusable response this turn
    layers: AgentReadings | None = None  # HTN, BST and context fill (read before the model is asked and at a turn's end)
    iteration: int | None = None  # loop_data.iteration: 0 on a task's first turn
    org_id: Any = None  # agent._org_active_org_id, as the dispatcher set it
    agent_name: str | None = None  # agent.agent_name
    model: str | None = None  # the chat model's name (for the SALUTE report)
    user_message: str | None = None  # on a task's first turn, the user's message that began it (its first USER_MESSAGE_CHARS)


def read_turn(agent: Any, loop_data: Any = None, layers: bool = False, repeat_check: bool = True) -> TurnReadings:
    """Read what the supervisor needs of ``agent`` now; ``layers`` also reads HTN, BST, the
    context fill and the model's name; ``repeat_check`` (at a turn's end) whether Agent-Zero
    warned about a repeated response, which keeps the response for the next turn's check."""
    chat = read_attr(read_attr(agent, "context"), "id")
    name = read_attr(agent, "agent_name")
    iteration = read_attr(loop_data, "iteration") if loop_data is not None else None
    return TurnReadings(
        number=agent_number(agent),
        role=read_attr(agent, ROLE_ATTR),
        pace_level=read_attr(agent, PACE_ATTR),
        paused=is_paused(agent),
        chat=str(chat)[:200] if chat is not None else None,
        project=chat_project(agent),
        native_repeat=native_repeat_fired(loop_data) if loop_data is not None and repeat_check else False,
        layers=read_agent(agent) if layers else None,
        iteration=iteration if isinstance(iteration, int) else None,
        org_id=read_attr(agent, ORG_ATTR),
        agent_name=name if isinstance(name, str) else None,
        model=model_name(agent) if layers else None,
        user_message=user_message_of(loop_data) if iteration == 0 else None,
    )


#: as much of a user's message as the readings keep: enough to tell what kind of message it is
USER_MESSAGE_CHARS = 2000


def user_message_of(loop_data: Any) -> str | None:
    """The text of the user's message the monologue answers: ``loop_data.user_message`` is a
    history message whose content is ``fw.user_message.md`` filled in (``{"user_message": …}``)."""
    content = read_attr(read_attr(loop_data, "user_message"), "content")
    text = content.get("user_message") if isinstance(content, dict) else content
    return text[:USER_MESSAGE_CHARS] if isinstance(text, str) else None


def native_repeat_fired(loop_data: Any) -> bool:
    """True when Agent-Zero itself warned this turn about a repeated or unusable response.

    Agent-Zero compares the new response with ``loop_data.last_response`` (the previous
    one, same monologue) and warns on equality; we keep the previous response the same
    way and compare after the fact. Newer versions also count repeated, misformatted and
    empty responses in ``params_persistent["_unusable_response_failures"]``
    (``{"iteration", "count"}``); an entry for this iteration means one was warned about.
    """
    params = getattr(loop_data, "params_persistent", None)
    if not isinstance(params, dict):
        return False
    response = getattr(loop_data, "last_response", None)
    previous = params.get(PREVIOUS_RESPONSE_KEY)
    if isinstance(response, str):
        params[PREVIOUS_RESPONSE_KEY] = response
    repeated = isinstance(response, str) and bool(response) and previous == response
    breaker = params.get(UNUSABLE_RESPONSES_KEY)
    warned = isinstance(breaker, dict) and breaker.get("iteration") == getattr(loop_data, "iteration", None)
    return repeated or warned


def diagnosed_verdict(agent: Any, tool: str) -> tuple[bool, str | None] | None:
    """An error-comprehension layer's verdict on the tool call just made, if it left one.

    ``agent._error_diagnosis`` (a dict or an object) with ``tool`` equal to this tool and
    an ``error_class``: a string means failed with that error type, None means no error.
    """
    try:
        diagnosis = getattr(agent, "_error_diagnosis", None)
        if diagnosis is None:
            return None
        if isinstance(diagnosis, dict):
            if diagnosis.get("tool") != tool or "error_class" not in diagnosis:
                return None
            error_class = diagnosis["error_class"]
        else:
            if getattr(diagnosis, "tool", None) != tool or not hasattr(diagnosis, "error_class"):
                return None
            error_class = diagnosis.error_class
    except Exception:  # another layer's object misbehaving: use our own classifier
        return None
    if error_class is None:
        return (True, None)
    return (False, error_class) if isinstance(error_class, str) and error_class else None


def organization_active(agent: Any) -> bool:
    """The dispatcher set a role on the agent this turn: an organization is active."""
    return getattr(agent, ROLE_ATTR, None) is not None
