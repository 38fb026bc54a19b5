"""Agent-Zero's saved chats read as replay turns (docs/replay.md, "Agent-Zero's saved chats").

Agent-Zero saves every chat after each turn as one JSON file: ``usr/chats/<id>/chat.json``
from v0.9.8, ``tmp/chats/<id>/chat.json`` from v0.8.1 to v0.9.7, ``tmp/chats/<id>.json``
in v0.8.0. The shape has not changed since v0.8: ``{"id", "name", "agents": [{"number",
"data", "history"}], "log", ...}`` where ``history`` is itself a JSON string of the agent's
history: ``bulks`` (older topics merged), ``topics`` and the ``current`` topic, each a list of
messages ``{"ai", "content", "summary", "tokens"}`` (v0.9.9+ adds a message ``id``). The
model's replies are the ``ai`` messages (its raw text); the others are the user's messages
(``{"user_message": ...}``), tool results (``{"tool_name", "tool_result"}``), warnings
(``{"system_warning": ...}``) and summaries of messages Agent-Zero compressed away
(``{"messages_summary": ...}``).

The turns a summary replaced are still in the chat's UI log (``log.logs``, its last 1000 items,
each content cut to 15,000 characters): an ``agent`` item is a reply (``kvps``: its
``tool_name`` and ``tool_args``), the next tool item of the same agent (``agentno``) is what the
tool answered, a ``user`` item is the user's message to agent 0 and a ``subagent`` item of agent N
is the message that starts agent N+1's task. An agent whose history lost turns to summaries is
read from the log when the log holds more of its turns.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from org.contracts import TraceTurn
from org.kernel.files import FileRefused, read_capped
from org.lazy_patterns import lazy_pattern

#: A saved chat larger than this is not read (a long chat with big tool outputs is a few MB).
MAX_CHAT_BYTES = 64_000_000
CHAT_FILE = "chat.json"
#: Where a tree keeps them: v0.9.8 and newer, then v0.8.1 to v0.9.7.
CHAT_FOLDERS = ("usr/chats", "tmp/chats")
SUPERVISOR_MARK = "[SUPERVISOR]"
#: log items that hold what a tool answered (a tool of its own kind, or ``tool`` for the others)
LOG_TOOL_ITEMS = frozenset({"code_exe", "tool", "response", "subagent", "browser", "mcp", "error"})
#: what the terminal's log item shows before the output: the runtime and the command
_TERMINAL_PREFIX = lazy_pattern(r"^(?:bash>|PS>|python> |nodejs> |node> )[^\n]*\n\n")


class ChatError(Exception):
    """A file that is not a saved chat, or a saved chat that cannot be read: the reason says which part."""


@dataclass
class AgentTurns:
    """One agent of the chat (0: the one the user talks to; 1, 2, ...: its subordinates)."""

    number: int
    turns: list[TraceTurn]
    #: messages Agent-Zero replaced by a summary (their turns are not in the file any more)
    summarised: int = 0
    #: supervisor warnings already in the history (the chat ran with the pack)
    recorded_steering: int = 0
    #: the turns were read from the UI log (the history had lost some to summaries)
    from_log: bool = False


@dataclass
class SavedChat:
    path: Path
    id: str
    name: str
    #: the stand-in API to replay it with: "D" (v0.9.9+, messages have ids) or "C"
    era: str
    project: str | None
    agents: list[AgentTurns] = field(default_factory=list)

    @property
    def turns(self) -> int:
        return sum(len(a.turns) for a in self.agents)


def chat_files(path: Path) -> list[Path]:
    """The saved chats at ``path``: a chat file, a chat's folder, a folder of chats
    (``usr/chats``, ``tmp/chats``, or any folder holding them), an Agent-Zero tree, or else
    every ``chat.json`` below ``path`` (chats gathered from several installations)."""
    if path.is_file():
        return [path]
    if (path / CHAT_FILE).is_file():
        return [path / CHAT_FILE]
    roots = [path / folder for folder in CHAT_FOLDERS if (path / folder).is_dir()] or [path]
    found: list[Path] = []
    for root in roots:
        found += sorted(root.glob(f"*/{CHAT_FILE}")) + sorted(p for p in root.glob("*.json") if p.is_file())
    return found or sorted(path.rglob(CHAT_FILE))


def looks_like_chat(path: Path) -> bool:
    """A saved chat rather than a replay trace: a ``.json`` file, a folder."""
    return path.is_dir() or path.suffix.lower() == ".json"


def read_chat(path: Path) -> SavedChat:
    try:
        data = json.loads(read_capped(path, MAX_CHAT_BYTES).decode("utf-8", errors="replace"))
    except (OSError, FileRefused) as exc:
        raise ChatError(f"cannot read: {exc}") from None
    except ValueError as exc:
        raise ChatError(f"not valid JSON ({exc}); a chat Agent-Zero was still writing is cut short") from None
    if not isinstance(data, dict) or not isinstance(data.get("agents"), list):
        raise ChatError("agents: missing; not an Agent-Zero saved chat")
    agents, ids = [], False
    logged: dict[int, list[TraceTurn]] | None = None
    for index, agent in enumerate(data["agents"]):
        where = f"agents[{index}]"
        if not isinstance(agent, dict):
            raise ChatError(f"{where}: not an object")
        messages, has_ids = history_messages(agent.get("history"), where)
        ids = ids or has_ids
        number = agent.get("number") if isinstance(agent.get("number"), int) else index
        turns = turns_of(messages, number)
        if turns.summarised:
            logged = log_turns(data.get("log")) if logged is None else logged
            if len(logged.get(number, ())) > len(turns.turns):
                turns.turns, turns.from_log = logged[number], True
        agents.append(turns)
    project = (data.get("data") or {}).get("project") if isinstance(data.get("data"), dict) else None
    fallback = path.parent.name if path.name == CHAT_FILE else path.stem  # <id>/chat.json, or v0.8.0's <id>.json
    return SavedChat(path=path, id=str(data.get("id") or fallback)[:200], name=str(data.get("name") or ""),
                     era="D" if ids else "C", project=project if isinstance(project, str) else None, agents=agents)


def history_messages(history: Any, where: str) -> tuple[list[dict[str, Any]], bool]:
    """The agent's messages in order (bulks, topics, current topic), and whether they carry ids."""
    if history in (None, ""):
        return [], False
    if isinstance(history, str):
        try:
            history = json.loads(history)
        except ValueError as exc:
            raise ChatError(f"{where}.history: not valid JSON ({exc})") from None
    if not isinstance(history, dict):
        raise ChatError(f"{where}.history: not an object")
    messages = list(_messages(history))
    return messages, any("id" in m for m in messages)


def _messages(record: Any) -> Iterator[dict[str, Any]]:
    if not isinstance(record, dict):
        return
    kind = record.get("_cls")
    if kind == "Message" or ("ai" in record and "content" in record):
        yield record
    elif kind == "History":
        for part in (*(record.get("bulks") or []), *(record.get("topics") or []), record.get("current")):
            yield from _messages(part)
    elif kind == "Bulk":
        for part in record.get("records") or []:
            yield from _messages(part)
    elif kind == "Topic":
        for message in record.get("messages") or []:
            yield from _messages(message)


def _content(message: dict[str, Any]) -> Any:
    content = message.get("content")
    if isinstance(content, str) and not message.get("ai"):
        try:
            parsed = json.loads(content)
        except ValueError:
            return content
        return parsed if isinstance(parsed, dict) else content
    return content


def tool_call(text: str) -> tuple[str | None, dict[str, Any] | None]:
    """The tool the model asked for in its reply: its JSON object, or the outermost braces in it."""
    for candidate in (text, text[text.find("{"):text.rfind("}") + 1] if "{" in text else ""):
        try:
            data = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(data, dict):
            name = data.get("tool_name") or data.get("tool")
            args = data.get("tool_args") or data.get("args")
            return (str(name) if name else None), (args if isinstance(args, dict) else {})
    return None, None


def turns_of(messages: list[dict[str, Any]], number: int) -> AgentTurns:
    """Each of the model's replies is a turn; the user's message before it starts a task, and
    the tool result after it is its output. Replies before the first user message (v1.x greets
    every new chat with one) are not turns."""
    agent = AgentTurns(number=number, turns=[])
    pending_user: str | None = None
    started = False
    for message in messages:
        content = _content(message)
        if message.get("ai"):
            if not started:
                continue
            text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
            tool, args = tool_call(text)
            agent.turns.append(TraceTurn(turn=len(agent.turns) + 1, user=pending_user, tool=tool, args=args, response=text))
            pending_user = None
            continue
        if isinstance(content, dict):
            if "user_message" in content:
                started, pending_user = True, str(content.get("user_message") or "")
            elif "tool_result" in content and agent.turns and agent.turns[-1].tool and agent.turns[-1].output is None:
                agent.turns[-1].output = str(content.get("tool_result") or "")
            elif "messages_summary" in content:
                agent.summarised += 1
            elif SUPERVISOR_MARK in str(content.get("system_warning") or ""):
                agent.recorded_steering += 1
        elif isinstance(content, str) and not started:
            started, pending_user = True, content  # a user message saved as plain text
    return agent


def log_turns(log: Any) -> dict[int, list[TraceTurn]]:
    """Each agent's turns as the chat's UI log shows them (see the module's docstring)."""
    items = log.get("logs") if isinstance(log, dict) else log
    turns: dict[int, list[TraceTurn]] = {}
    task: dict[int, str] = {}  # agent -> the message that starts its next task
    waiting: dict[int, TraceTurn] = {}  # agent -> its latest turn, until its tool's item comes
    for item in items if isinstance(items, list) else ():
        if not isinstance(item, dict):
            continue
        kind, agent = item.get("type"), item.get("agentno")
        agent = agent if isinstance(agent, int) else 0
        content = item.get("content") if isinstance(item.get("content"), str) else ""
        kvps = item.get("kvps") if isinstance(item.get("kvps"), dict) else {}
        if kind == "user":
            task[0] = content
        elif kind == "agent" and (kvps or content.strip()):  # no content, no kvps: a model call that failed
            tool = kvps.get("tool_name")
            args = kvps.get("tool_args")
            mine = turns.setdefault(agent, [])
            turn = TraceTurn(turn=len(mine) + 1, user=task.pop(agent, None), tool=str(tool) if tool else None,
                             args=args if isinstance(args, dict) else {} if tool else None,
                             response=content.strip() or json.dumps(kvps, ensure_ascii=False, sort_keys=True, default=str))
            mine.append(turn)
            waiting[agent] = turn
        elif kind in LOG_TOOL_ITEMS:
            if kind == "subagent" and isinstance(kvps.get("message"), str):
                task[agent + 1] = kvps["message"]
            turn = waiting.pop(agent, None)
            if turn is not None and turn.tool and kind != "response":  # the answer is no tool result in the history either
                turn.output = _TERMINAL_PREFIX.sub("", content, count=1) if kind == "code_exe" else content
    return turns
