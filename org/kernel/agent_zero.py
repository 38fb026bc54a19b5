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


def ui_log(agent: Any, *, type: str, heading: str, content: str = "") -> Any:
    """Write one item to the Agent-Zero UI log; never raises."""
    try:
        log = agent.context.log
    except Exception:
        return None
    try:
        return log.log(type=type, heading=heading, content=content)
    except Exception as exc:  # a UI log problem must never stop the agent
        logger.debug("UI log failed: %s", exc)
        return None


async def add_warning(agent: Any, text: str) -> Any:
    """Append a warning to the agent's history, the way Agent-Zero's own warnings go in."""
    result = agent.hist_add_warning(text)
    if inspect.isawaitable(result):
        result = await result
    return result
