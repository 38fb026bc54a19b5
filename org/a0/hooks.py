"""What the hook files under ``extensions/`` call. Every entry point fails open:
whatever goes wrong is logged and the agent's loop carries on untouched.
"""

from __future__ import annotations

import traceback
from typing import Any

from org.kernel import dispatcher
from org.kernel.outcomes import diagnosed_verdict, record_outcome
from org.kernel.report import logger, warn_once
from org.kernel.store import OrganizationStore
from org.supervisor.microcosm import MicrocosmSupervisor

store = OrganizationStore()
supervisor = MicrocosmSupervisor(lambda: store.layout)


def _failed(where: str, exc: BaseException) -> None:
    warn_once(f"{where} failed and was skipped: {type(exc).__name__}: {exc}")
    logger.debug("%s", traceback.format_exc())


def before_main_llm_call(agent: Any, loop_data: Any = None, **_: Any) -> None:
    """``before_main_llm_call``: role, PACE and SALUTE."""
    try:
        dispatcher.dispatch(agent, loop_data, store)
    except Exception as exc:
        _failed("org dispatcher", exc)


def tool_execute_after(agent: Any, response: Any = None, tool_name: Any = None, **_: Any) -> None:
    """``tool_execute_after``: record the tool's outcome for the detectors and other layers."""
    try:
        if not dispatcher.is_active(agent):
            return
        tool = tool_name if isinstance(tool_name, str) and tool_name else "unknown"
        verdict = diagnosed_verdict(agent, tool)
        ok, error_type = verdict if verdict is not None else (None, None)
        record_outcome(agent.data, tool, _tool_args(agent), _response_text(response), ok, error_type)
    except Exception as exc:
        _failed("org tool-outcome recorder", exc)


def _response_text(response: Any) -> str:
    """The tool's response text; one that cannot be read is recorded as empty, not lost."""
    try:
        message = getattr(response, "message", response)
        return message if isinstance(message, str) else ("" if message is None else str(message))
    except Exception:
        warn_once(f"tool_execute_after: the tool response could not be read as text ({type(response).__name__}); recorded as empty")
        return ""


def _tool_args(agent: Any) -> Any:
    """The running tool's arguments (``loop_data.current_tool.args``, v0.9.7+), else None."""
    try:
        return getattr(getattr(getattr(agent, "loop_data", None), "current_tool", None), "args", None)
    except Exception:
        return None


async def message_loop_end(agent: Any, loop_data: Any = None, **_: Any) -> None:
    """``message_loop_end``: the supervisor's radio check."""
    try:
        if getattr(agent, dispatcher.ROLE_ATTR, None) is None:
            return
        await supervisor.turn_end(agent, loop_data)
    except Exception as exc:
        _failed("org supervisor", exc)
