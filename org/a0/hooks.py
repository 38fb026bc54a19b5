"""What the hook files under ``extensions/`` call. Every entry point fails open:
whatever goes wrong is logged and the agent's loop carries on untouched.
"""

from __future__ import annotations

import importlib
import traceback
from dataclasses import replace
from types import ModuleType
from typing import Any

from org.kernel import dispatcher
from org.kernel.agent_scope import chat_project, handed_down, top_agent
from org.kernel.agent_zero import AgentPort, agent_number, read_attr
from org.kernel.log import logger, warn_once
from org.kernel.store import OrganizationStore
from org.kernel.turn_readings import diagnosed_verdict, organization_active, read_turn
from org.macrocosm import unit
from org.supervisor.handoff import DELEGATION_TOOL
from org.supervisor.microcosm import MicrocosmSupervisor

store = OrganizationStore()
supervisor = MicrocosmSupervisor(lambda: store.layout)


def _failed(where: str, exc: BaseException) -> None:
    warn_once(f"{where} failed and was skipped: {type(exc).__name__}: {exc}")
    logger.debug("%s", traceback.format_exc())


async def message_loop_prompts_before(agent: Any, loop_data: Any = None, **_: Any) -> None:
    """``message_loop_prompts_before``: a unit applies its XO's steering before the prompt is built."""
    try:
        if agent_number(agent) != 0:
            return  # the XO judges agent 0's reports, so agent 0 takes its steering
        link = unit.current_link()
        if link is not None:
            await unit.drain_inbox(read_turn(agent), AgentPort(agent), link)
    except Exception as exc:
        _failed("org unit inbox", exc)


def before_main_llm_call(agent: Any, loop_data: Any = None, **_: Any) -> None:
    """``before_main_llm_call``: role, PACE and SALUTE."""
    try:
        dispatcher.dispatch(lambda: read_turn(agent, loop_data, layers=True, repeat_check=False), AgentPort(agent), store)
    except Exception as exc:
        _failed("org dispatcher", exc)


async def tool_execute_before(agent: Any, tool_args: Any = None, tool_name: Any = None, **_: Any) -> None:
    """``tool_execute_before``: the circuit breaker; a call it blocks is not run.

    A unit first takes the XO's steering that arrived while the model answered: the XO judges
    a turn's report while the next turn runs, and its loop steering about this very call
    opens the breaker before the call is made again, not one run later."""
    try:
        if not organization_active(agent):
            return
        await message_loop_prompts_before(agent)
        tool = tool_name if isinstance(tool_name, str) and tool_name else "unknown"
        # read after the inbox, whose steering may have changed the agent (a pause)
        handed = handed_down(agent) if tool == DELEGATION_TOOL else None
        supervisor.tool_start(read_turn(agent), AgentPort(agent), tool, tool_args if tool_args is not None else _tool_args(agent), handed)
    except Exception as exc:
        _failed("org circuit breaker", exc)


def tool_execute_after(agent: Any, response: Any = None, tool_name: Any = None, **_: Any) -> None:
    """``tool_execute_after``: record the tool's outcome for the detectors and other layers."""
    _note_tool_for_supervisors(agent, response, tool_name)
    try:
        if not organization_active(agent):
            return
        tool = tool_name if isinstance(tool_name, str) and tool_name else "unknown"
        supervisor.tool_done(agent.data, tool, _tool_args(agent), _response_text(response), diagnosed_verdict(agent, tool))
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
    """``message_loop_end``: the supervisor's radio check, or a unit's SALUTE report to its XO."""
    try:
        if not organization_active(agent):
            return
        readings = read_turn(agent, loop_data, layers=True)  # the agent, read once: below here, values
        port = AgentPort(agent)
        level = dispatcher.judge_after_tool(readings, port)
        if level is not None:
            readings = replace(readings, pace_level=level)
        publisher = unit.publisher_for(readings, port) if readings.number == 0 else None
        await supervisor.turn_end(readings, port, publisher)
    except Exception as exc:
        _failed("org supervisor", exc)


# --------------------------------------------------------------------------- LLM-backed supervisors
# Imported on first use, so a problem in them can never take the kernel's hooks down. Below
# these hooks they see the agent as values (org.llm_supervisors.task_readings) and act through
# an AgentPort, as the supervisor's core does.

_TASK_TRACE_KEY = "_org_task_trace"  # org.llm_supervisors.digests.TRACE_KEY


def _llm_runner(agent: Any) -> Any:
    """The supervisors' runner of the agent's project, or None with no active organization (then nothing is imported or read)."""
    if store.active() is None:
        return None
    runner_module: ModuleType = importlib.import_module("org.llm_supervisors.runner")
    return runner_module.runner_for(project=chat_project(agent))


def _read_task(agent: Any, loop_data: Any = None, **parts: bool) -> Any:
    return importlib.import_module("org.llm_supervisors.task_readings").read_task(agent, loop_data, **parts)


async def monologue_start(agent: Any, loop_data: Any = None, **_: Any) -> None:
    """``monologue_start``: wait (at most ``wait_seconds``, shown in the UI) for supervisor runs, apply their results."""
    try:
        if agent_number(agent) != 0:
            return  # a subordinate's monologue is part of its superior's task
        runner = _llm_runner(agent)
        if runner is None:
            return
        port = AgentPort(agent)
        if runner.in_flight() and runner.active_config() is not None:
            import asyncio  # Agent-Zero has it loaded; the doctor and the command line need not load it
            await asyncio.to_thread(runner.wait_for_runs, port)  # the event loop stays free while we wait
        runner.task_start(_read_task(agent, loop_data, start=True), port)  # read after the wait: results may have changed the chat
    except Exception as exc:
        _failed("org LLM supervisors (task start)", exc)


def monologue_end(agent: Any, loop_data: Any = None, **_: Any) -> None:
    """``monologue_end``: the task's digest, the trigger counters, and the runs that are due."""
    try:
        runner = _llm_runner(agent)
        if runner is not None:
            runner.task_end(_read_task(agent, loop_data), AgentPort(agent), read_attr(loop_data, "params_persistent"))
    except Exception as exc:
        _failed("org LLM supervisors (task end)", exc)


def message_loop_prompts_after(agent: Any, loop_data: Any = None, **_: Any) -> None:
    """``message_loop_prompts_after``: the PROJECT KNOWLEDGE and ACTIVE DIRECTIVES prompt sections."""
    try:
        runner = _llm_runner(agent)
        if runner is not None:
            runner.prompt_sections(_read_task(agent, loop_data, layers=True), read_attr(loop_data, "params_persistent"),
                                   read_attr(loop_data, "extras_temporary"))
    except Exception as exc:
        _failed("org LLM supervisors (prompt sections)", exc)


def _note_tool_for_supervisors(agent: Any, response: Any, tool_name: Any) -> None:
    """A tool call into the running task's digest; nothing at all unless the supervisors trace the task."""
    try:
        top = agent if agent_number(agent) == 0 else top_agent(agent)  # a subordinate's calls are part of its superior's task
        data = getattr(top, "data", None)
        if not isinstance(data, dict) or _TASK_TRACE_KEY not in data:
            return
        tool = tool_name if isinstance(tool_name, str) and tool_name else "unknown"
        runner_module = importlib.import_module("org.llm_supervisors.runner")
        runner_module.note_tool(_read_task(agent, thoughts=True), tool, _tool_args(agent), _response_text(response), diagnosed_verdict(agent, tool),
                                bool(getattr(response, "break_loop", False)))
    except Exception as exc:
        _failed("org LLM supervisors (tool record)", exc)
