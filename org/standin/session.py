"""Runs turns through the real hook files in a stand-in agent, the way Agent-Zero's
message loop calls them: ``message_loop_prompts_before`` (prompt building starts),
``before_main_llm_call``, the model's response, Agent-Zero's own repeat check,
``tool_execute_before`` and ``tool_execute_after`` for a tool call, then ``message_loop_end``.
The prompt's extras set by ``message_loop_prompts_after`` are taken (and the temporary ones
cleared) before ``before_main_llm_call``, as Agent-Zero renders them into the prompt's last
message. A reply that made several calls at once (trace lines that share a turn: scaffolds
with parallel tool calls; Agent-Zero runs one per reply) runs each of them in its one turn.
:meth:`StandInSession.run_task` wraps turns in ``monologue_start`` and ``monologue_end``.
"""

from __future__ import annotations

import asyncio
import json
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence
from unittest import mock

from org.contracts import TraceTurn
from org.kernel import context_fill, dispatcher
from org.lazy_patterns import lazy_pattern
from org.resources import HOOK_POINTS, extensions_dir
from org.supervisor.microcosm import STEERING_HEADING

from .agent import REPEAT_WARNING, LoopData, StandInAgent, Tool
from .loader import call_point, load_point, provided_modules

MODEL_CONFIG_MODULE = "plugins._model_config.helpers.model_config"
XO_HEADING_RE = lazy_pattern(r"^Supervisor \(XO [^)]*\): (.+)$")


@dataclass
class TurnResult:
    turn: int
    steering: list[tuple[str, str]]  # (anomaly, text) injected this turn
    native_warnings: list[str]  # Agent-Zero's own warnings this turn
    pace: str | None
    #: the chat is paused: Agent-Zero would now wait in handle_intervention until it is resumed
    paused: bool = False
    #: the prompt extras of this turn (Agent-Zero renders them as a final [EXTRAS] message)
    extras: dict[str, Any] = field(default_factory=dict)
    #: (anomaly, text) when the circuit breaker blocked this turn's call
    blocked: tuple[str, str] | None = None
    #: when the supervisor paused the chat this turn: the anomaly and the notice
    pause_reason: str | None = None
    pause_text: str | None = None


@contextmanager
def model_config_plugin(agent_ctx_length: int) -> Iterator[None]:
    """v0.9.9+: the chat model's settings come from the _model_config plugin."""

    def get_chat_model_config(agent: Any) -> dict:
        return {"name": "stand-in-model", "ctx_length": getattr(agent, "ctx_length", agent_ctx_length), "ctx_history": 0.7}

    context_fill.reset_lookups()
    try:
        with provided_modules(MODEL_CONFIG_MODULE, get_chat_model_config=get_chat_model_config):
            yield
    finally:
        context_fill.reset_lookups()


def replies(turns: Iterable[TraceTurn]) -> list[list[TraceTurn]]:
    """The trace's lines by model reply: a line with the turn of the line before is a further
    call of that reply (sent at once, before any of their results was seen)."""
    grouped: list[list[TraceTurn]] = []
    for turn in turns:
        if grouped and grouped[-1][0].turn == turn.turn:
            grouped[-1].append(turn)
        else:
            grouped.append([turn])
    return grouped


def render_extras(extras: dict[str, Any]) -> str:
    """The extras as Agent-Zero puts them at the end of the prompt: ``[EXTRAS]`` and the extras as JSON."""
    return "[EXTRAS]\n" + json.dumps(extras, ensure_ascii=False) if extras else ""


def steering_anomaly(heading: str | None) -> str | None:
    """The anomaly a supervisor's UI log heading names: "Supervisor: loop", "Supervisor (XO xo): loop"."""
    if not heading:
        return None
    if heading.startswith(STEERING_HEADING):
        return heading[len(STEERING_HEADING):]
    match = XO_HEADING_RE.match(heading)
    return match.group(1) if match else None


class StandInSession:
    """One agent, one monologue, the pack's hook files loaded as Agent-Zero loads them."""

    def __init__(self, era: str = "D", extension_folders: list[Path] | None = None, ctx_length: int = 32000,
                 agent: StandInAgent | None = None):
        """``agent``: the agent to run (a subordinate, ``StandInAgent.subordinate()``), else a new agent 0."""
        self.era = era
        self.agent = agent if agent is not None else StandInAgent(era=era, ctx_length=ctx_length)
        self.loop_data = self.agent.loop_data
        folders = extension_folders or [extensions_dir()]
        self.points = {point: load_point(folders, point, era) for point in HOOK_POINTS}

    def new_task(self, user_message: str | None = None) -> None:
        self.agent.loop_data = self.loop_data = LoopData()
        if user_message is not None:
            self.loop_data.user_message = self.agent.hist_add_message(False, {"user_message": user_message})

    def _consume_extras(self) -> dict[str, Any]:
        """What this turn's prompt carries as extras; the temporary ones are cleared, as Agent-Zero does."""
        loop_data = self.loop_data
        extras = {**loop_data.extras_persistent, **loop_data.extras_temporary}
        loop_data.extras_temporary.clear()
        return extras

    async def _call(self, point: str, **kwargs: Any) -> None:
        if point in self.points:  # an Agent-Zero version without the point never calls it
            await call_point(self.points[point], self.era, self.agent, **kwargs)

    def _apply_layers(self, turn: TraceTurn) -> None:
        agent = self.agent
        if turn.htn is not None:
            agent._htn_state = {  # type: ignore[attr-defined]
                "plan_name": turn.htn.plan_name, "current_step": turn.htn.current_step,
                "turns_since_progress": turn.htn.turns_since_progress,
            }
        if turn.bst is not None:
            agent._bst_store = {"__bst_belief_state__": {"domain": turn.bst.domain, "confidence": turn.bst.confidence}}  # type: ignore[attr-defined]
        if turn.context_fill is not None:
            agent.data["ctx_window"] = {"text": "", "tokens": int(turn.context_fill * agent.ctx_length)}

    @staticmethod
    def response_text(turn: TraceTurn, parallel: Sequence[TraceTurn] = ()) -> str:
        if turn.response is not None:
            return turn.response
        return "\n".join(json.dumps({
            "thoughts": [f"turn {turn.turn}"],
            "headline": f"turn {turn.turn}",
            "tool_name": call.tool or "",
            "tool_args": call.args or {},
        }) for call in (turn, *parallel))

    async def run_turn(self, turn: TraceTurn, *parallel: TraceTurn) -> TurnResult:
        """One turn; ``parallel``: the further calls of the same reply, run after ``turn``'s."""
        if turn.pace is None:
            return await self._run_turn(turn, parallel)
        # a forced level replaces the dispatcher's judgement for the whole turn (before the
        # model is asked and after the tool ran), as if the role's triggers had said so
        with mock.patch.object(dispatcher, "pace_level", lambda plan, metrics: turn.pace):
            return await self._run_turn(turn, parallel)

    async def _run_turn(self, turn: TraceTurn, parallel: Sequence[TraceTurn]) -> TurnResult:
        if self.agent.context.paused:
            self.agent.context.paused = False  # a turn after a pause means the user resumed the chat
        if turn.user is not None:
            await self._start_task(turn.user)
        agent, loop_data = self.agent, self.loop_data
        loop_data.iteration += 1
        loop_data.params_temporary = {}
        history_start, log_start = len(agent.history), len(agent.context.log.items)
        self._apply_layers(turn)
        await self._call("message_loop_prompts_before", loop_data=loop_data)
        await self._call("message_loop_prompts_after", loop_data=loop_data)
        extras = self._consume_extras()
        await self._call("before_main_llm_call", loop_data=loop_data)
        response = self.response_text(turn, parallel)
        repeated = response == loop_data.last_response
        agent.hist_add_ai_response(response)
        if repeated:
            # Agent-Zero's own repeat check: the response is kept, a warning added, no tool run
            agent.hist_add_warning(REPEAT_WARNING)
            agent.context.log.log(type="warning", content=REPEAT_WARNING)
        else:
            for call in (turn, *parallel):
                if call.tool:
                    await self._run_tool(call)
        await self._call("message_loop_end", loop_data=loop_data)
        warnings = [m.content["system_warning"] for m in agent.history[history_start:] if m.kind == "warning"]
        items = agent.context.log.items[log_start:]
        logged = {item.content: anomaly for item in items if (anomaly := steering_anomaly(item.heading)) is not None}
        blocked = next((("loop", item.content or "") for item in items if item.heading == f"{STEERING_HEADING}blocked"), None)
        pause = next((item for item in items if item.heading == f"{STEERING_HEADING}paused"), None)
        return TurnResult(
            turn=turn.turn,
            steering=[(logged.get(w, "unknown"), w) for w in warnings if w in logged],
            native_warnings=[w for w in warnings if w not in logged],
            pace=getattr(agent, "_org_pace_level", None),
            paused=bool(agent.context.paused),
            extras=extras,
            blocked=blocked,
            pause_reason=(pause.kvps or {}).get("anomaly") if pause else None,
            pause_text=pause.content if pause else None,
        )

    async def _run_tool(self, turn: TraceTurn) -> None:
        agent = self.agent
        tool = Tool(name=turn.tool or "", args=dict(turn.args or {}), output=turn.output or "")
        self.loop_data.current_tool = tool
        if turn.ok is not None:
            # a verdict given by the trace reaches the recorder the way an
            # error-comprehension layer's would: agent._error_diagnosis
            agent._error_diagnosis = {"tool": tool.name, "error_class": None if turn.ok else (turn.error_type or "execution")}  # type: ignore[attr-defined]
        try:
            await self._call("tool_execute_before", tool_args=tool.args, tool_name=tool.name)
            response = await tool.execute(**tool.args)  # an extension may have replaced it
            await self._call("tool_execute_after", response=response, tool_name=tool.name)
            agent.hist_add_tool_result(tool.name, response.message)
        finally:
            self.loop_data.current_tool = None
            if hasattr(agent, "_error_diagnosis"):
                del agent._error_diagnosis  # type: ignore[attr-defined]

    def run(self, turns: list[TraceTurn]) -> list[TurnResult]:
        """One result per turn: lines that share a turn are one reply's calls."""
        async def _all() -> list[TurnResult]:
            return [await self.run_turn(*reply) for reply in replies(turns)]

        return self._run_async(_all)

    async def _start_task(self, user_message: str) -> None:
        """A new user message: the monologue in progress ends and a new one starts."""
        if self.loop_data.iteration >= 0:
            await self._call("monologue_end", loop_data=self.loop_data)
        self.new_task(user_message)
        await self._call("monologue_start", loop_data=self.loop_data)

    def run_task(self, user_message: str, turns: list[TraceTurn]) -> list[TurnResult]:
        """One whole monologue: ``monologue_start``, the turns, then ``monologue_end`` (in a
        ``finally``, as Agent-Zero calls it, also when a turn raised)."""
        async def _task() -> list[TurnResult]:
            self.new_task(user_message)
            await self._call("monologue_start", loop_data=self.loop_data)
            try:
                return [await self.run_turn(*reply) for reply in replies(turns)]
            finally:
                await self._call("monologue_end", loop_data=self.loop_data)

        return self._run_async(_task)

    def _run_async(self, make: Any) -> Any:
        if self.era == "D":
            with model_config_plugin(self.agent.ctx_length):
                return asyncio.run(make())
        return asyncio.run(make())
