"""A stand-in Agent-Zero agent: the attributes and methods the pack touches, shaped
as Agent-Zero has them (see docs/agent-zero.md for the versions)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

REPEAT_WARNING = "You have sent the same message again. You have to do something else!"


@dataclass
class LogItem:
    type: str
    heading: str | None = None
    content: str | None = None
    kvps: dict | None = None
    id: str | None = None

    def update(self, type: str | None = None, heading: str | None = None, content: str | None = None,
               kvps: dict | None = None, **kwargs: Any) -> None:
        """``LogItem.update``: the fields given replace the item's."""
        self.type = type if type is not None else self.type
        self.heading = heading if heading is not None else self.heading
        self.content = content if content is not None else self.content
        if kvps or kwargs:
            self.kvps = {**(self.kvps or {}), **(kvps or {}), **kwargs}


class Log:
    """``context.log``: ``log(type, heading=None, content=None, kvps=None, update_progress=None, id=None, **kwargs)``."""

    def __init__(self) -> None:
        self.items: list[LogItem] = []

    def log(self, type: str, heading: str | None = None, content: str | None = None, kvps: dict | None = None,
            update_progress: Any = None, id: str | None = None, **kwargs: Any) -> LogItem:
        item = LogItem(type=type, heading=heading, content=content, kvps={**(kvps or {}), **kwargs} or None, id=id)
        self.items.append(item)
        return item


@dataclass
class Message:
    ai: bool
    content: Any
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:8])
    kind: str = "message"  # message, warning, tool_result


class Context:
    def __init__(self) -> None:
        self.id = uuid.uuid4().hex[:8]
        self.log = Log()
        self.paused = False
        self.data: dict[str, Any] = {}  # Agent-Zero: the chat's data; "project" names its project
        self.agent0: Any = None


@dataclass
class ModelConfig:
    """v0.9.8.x ``agent.config.chat_model``."""

    provider: str = "other"
    name: str = "stand-in-model"
    ctx_length: int = 32000


class Config:
    def __init__(self, era: str, ctx_length: int):
        # v0.9.9+ AgentConfig has no chat_model: the _model_config plugin answers instead
        if era == "C":
            self.chat_model = ModelConfig(ctx_length=ctx_length)
        self.profile = "agent0"


@dataclass
class LoopData:
    iteration: int = -1
    user_message: Any = None  # Agent-Zero: the history message that started the monologue
    last_response: str = ""
    params_temporary: dict = field(default_factory=dict)
    params_persistent: dict = field(default_factory=dict)
    extras_temporary: dict = field(default_factory=dict)
    extras_persistent: dict = field(default_factory=dict)
    current_tool: Any = None


@dataclass
class Tool:
    name: str
    args: dict
    method: str | None = None
    output: str = ""  # what running it returns

    async def execute(self, **kwargs: Any) -> "Response":
        return Response(message=self.output, break_loop=self.name == "response")


@dataclass
class Response:
    """``helpers.tool.Response``."""

    message: str
    break_loop: bool
    additional: dict | None = None


class StandInAgent:
    def __init__(self, era: str = "D", number: int = 0, ctx_length: int = 32000):
        self.era = era
        self.number = number
        self.agent_name = f"A{number}"
        self.data: dict[str, Any] = {}
        self.history: list[Message] = []
        self.context = Context()
        self.config = Config(era, ctx_length)
        self.ctx_length = ctx_length
        self.loop_data = LoopData()
        if number == 0:
            self.context.agent0 = self

    def subordinate(self) -> "StandInAgent":
        """A subordinate the way ``call_subordinate`` makes one: the next number, the same chat, its superior in data."""
        agent = StandInAgent(self.era, self.number + 1, self.ctx_length)
        agent.context = self.context
        agent.data["_superior"] = self
        return agent

    def get_data(self, field: str) -> Any:
        return self.data.get(field, None)

    def set_data(self, field: str, value: Any) -> None:
        self.data[field] = value

    def hist_add_message(self, ai: bool, content: Any, kind: str = "message") -> Message:
        message = Message(ai=ai, content=content, kind=kind)
        self.history.append(message)
        return message

    def hist_add_ai_response(self, message: str) -> Message:
        self.loop_data.last_response = message
        return self.hist_add_message(True, message)

    def hist_add_warning(self, message: Any, id: str = "") -> Message:
        # rendered through fw.warning.md as {"system_warning": message}, a user-role message
        return self.hist_add_message(False, {"system_warning": message}, kind="warning")

    def hist_add_tool_result(self, tool_name: str, tool_result: str, **kwargs: Any) -> Message:
        return self.hist_add_message(False, {"tool_name": tool_name, "tool_result": tool_result}, kind="tool_result")

    def warnings(self) -> list[str]:
        return [m.content["system_warning"] for m in self.history if m.kind == "warning"]
