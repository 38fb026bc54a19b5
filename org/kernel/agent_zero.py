"""The few Agent-Zero calls the pack makes, written once for every supported era.

* ``hist_add_warning`` is sync from v0.8.2 on but was async before; its result is
  awaited when it is awaitable.
* ``context.log.log`` is called with keyword arguments only: v0.8-v0.9.7 had a
  positional ``temp`` parameter where later versions do not.
"""

from __future__ import annotations

import inspect
from typing import Any

from org.kernel.log import logger
from org.kernel.values import count_or


def read_attr(obj: Any, name: str) -> Any:
    """An attribute of an Agent-Zero object, or None when it is missing or cannot be read."""
    try:
        return getattr(obj, name, None)
    except Exception:
        return None


def agent_number(agent: Any) -> int:
    """``agent.number``: 0 for the top-level agent, 1 and up for subordinates."""
    number = read_attr(agent, "number")
    return count_or(number)


def ui_log(agent: Any, *, type: str, heading: str, content: str = "", kvps: dict | None = None) -> Any:
    """Write one item to the Agent-Zero UI log; never raises."""
    try:
        log = agent.context.log
    except Exception:
        return None
    try:
        if kvps:
            return log.log(type=type, heading=heading, content=content, kvps=kvps)
        return log.log(type=type, heading=heading, content=content)
    except Exception as exc:  # a UI log problem must never stop the agent
        logger.debug("UI log failed: %s", exc)
        return None


def ui_update(item: Any, **fields: Any) -> None:
    """Change a UI log item written by :func:`ui_log` (``LogItem.update``, keywords only); never raises."""
    if item is None:
        return
    try:
        item.update(**fields)
    except Exception as exc:
        logger.debug("UI log update failed: %s", exc)


async def add_warning(agent: Any, text: str) -> Any:
    """Append a warning to the agent's history, the way Agent-Zero's own warnings go in."""
    result = agent.hist_add_warning(text)
    if hasattr(type(result), "__await__"):  # a coroutine (before v0.8.2); cheaper than inspect.isawaitable
        result = await result
    return result


async def add_information(agent: Any, key: str, text: str) -> Any:
    """Append information (not a warning) to the agent's history: a user-role message whose
    content is ``{key: text}``, which Agent-Zero renders as JSON, as it does its warnings."""
    result = agent.hist_add_message(False, content={key: text})
    if inspect.isawaitable(result):
        result = await result
    return result


def is_paused(agent: Any) -> bool:
    """``agent.context.paused``: the chat waits in ``handle_intervention`` until resumed."""
    return read_attr(read_attr(agent, "context"), "paused") is True


def pause_chat(agent: Any) -> bool:
    """Pause the chat the way Agent-Zero's pause button does; False when it cannot be."""
    try:
        agent.context.paused = True
        return agent.context.paused is True
    except Exception:
        return False


_chat_saver: list[Any] = []


def save_chat(agent: Any) -> bool:
    """Save the agent's chat now, as Agent-Zero does after a turn (``persist_chat.save_tmp_chat``).

    False when this Agent-Zero has no such helper or the save failed (logged): nothing saved.
    """
    if not _chat_saver:
        found = None
        for module_name in ("helpers.persist_chat", "python.helpers.persist_chat"):
            try:
                found = getattr(__import__(module_name, fromlist=["save_tmp_chat"]), "save_tmp_chat", None)
            except Exception:  # not inside Agent-Zero, or another era
                continue
            if found is not None:
                break
        _chat_saver.append(found)
    saver, context = _chat_saver[0], read_attr(agent, "context")
    if saver is None or context is None:
        return False
    try:
        saver(context)
        return True
    except Exception as exc:
        logger.warning("saving the chat failed (%s: %s)", type(exc).__name__, exc)
        return False


class ReplacedResponse:
    """Shaped like Agent-Zero's ``helpers.tool.Response``: what the tool call returns instead."""

    def __init__(self, message: str):
        self.message = message
        self.break_loop = False
        self.additional = None


def replace_tool_run(agent: Any, text: str) -> bool:
    """Make the tool about to run (``loop_data.current_tool``, v0.9.7+) return ``text``
    instead of running. Agent-Zero calls ``tool.execute`` right after the
    ``tool_execute_before`` extensions, so the call is not made; the text reaches the
    agent as the tool's result. False where there is no current tool to replace."""
    tool = read_attr(read_attr(agent, "loop_data"), "current_tool")
    if tool is None:
        return False

    async def execute(**_: Any) -> ReplacedResponse:
        return ReplacedResponse(text)

    try:
        tool.execute = execute
    except Exception:
        return False
    return True


class AgentPort:
    """Everything the supervisor does to its agent, and the chat's saved state (``agent.data``):
    the one way out of the supervisor's core, which otherwise sees only values
    (:class:`org.kernel.turn_readings.TurnReadings`)."""

    def __init__(self, agent: Any):
        self._agent = agent
        #: the chat's state, saved with it by Agent-Zero (keys without a leading ``_``)
        self.data: dict = agent.data

    async def warn(self, text: str) -> None:
        """A warning in the agent's history; raises when history refuses it."""
        await add_warning(self._agent, text)

    async def inform(self, key: str, text: str) -> None:
        """Information (not a warning) in the agent's history; raises when history refuses it."""
        await add_information(self._agent, key, text)

    def log(self, *, type: str, heading: str, content: str = "", kvps: dict | None = None) -> Any:
        """One item in the Agent-Zero UI log (returned, for :func:`ui_update`; None when there is none); never raises."""
        return ui_log(self._agent, type=type, heading=heading, content=content, kvps=kvps)

    def pause(self) -> bool:
        """Pause the chat as the pause button does; False when it cannot be."""
        return pause_chat(self._agent)

    def block_tool(self, text: str) -> bool:
        """The tool about to run returns ``text`` instead of running; False when it cannot be replaced."""
        return replace_tool_run(self._agent, text)

    def save(self) -> bool:
        """Save the chat now, as Agent-Zero does after a turn."""
        return save_chat(self._agent)

    def mark(self, **attributes: Any) -> None:
        """Set the dispatcher's marks on the agent (its role, PACE level, organization), which
        the pack's other hooks and other layers read."""
        for name, value in attributes.items():
            setattr(self._agent, name, value)

    def clear(self, *names: str) -> None:
        """Remove the marks (set them to None where they are set), so every reader switches off."""
        for name in names:
            if getattr(self._agent, name, None) is not None:
                setattr(self._agent, name, None)
