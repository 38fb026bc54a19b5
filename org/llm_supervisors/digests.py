"""Task digests: what one task was, short enough to put many in a supervisor's prompt.

While a task runs, a :class:`TaskTrace` on the top agent (``agent.data["_org_task_trace"]``;
the leading underscore keeps it out of Agent-Zero's saved chats) collects the user's
message, each tool call with shortened arguments and the start of its output (also the
calls of subordinate agents, numbered), the agent's thoughts, the files named in the
calls (relative names taken from the agent's working directory), errors and the PACE
levels seen. At the task's end it becomes a :class:`TaskDigest`, redacted, and
is appended to ``<organizations>/supervisors/digests.jsonl``, which keeps the last
:data:`DIGEST_LIMIT` tasks.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from org.contracts.supervisor_outputs import TaskDigest, ToolCall
from org.kernel.agent_scope import resolve_in
from org.kernel.classify import classify_output
from org.kernel.redact import redact
from org.lazy_patterns import lazy_pattern

from .records import JsonLinesLog
from .task_readings import TaskReadings

TRACE_KEY = "_org_task_trace"
DIGEST_LIMIT = 50
MAX_TOOLS = 40
MAX_FILES = 30
MAX_ERRORS = 10
TEXT_CHARS = 1200
ARG_CHARS = 80
ARGS_CHARS = 400
ERROR_CHARS = 200
OUTPUT_CHARS = 300
THOUGHT_CHARS = 300
MAX_THOUGHTS = 12
#: Argument names that hold a file or folder.
PATH_ARGS = ("path", "file", "file_path", "filepath", "filename", "document", "target", "destination", "paths", "files")
#: File names inside code or shell commands: something/with.an_extension
_FILE_IN_CODE = lazy_pattern(
    r"(?<![\w/.-])((?:\.{0,2}/)?[\w.-]+(?:/[\w.-]+)*\.(?:py|js|ts|tsx|jsx|md|yaml|yml|json|toml|ini|cfg|conf|env|properties|xml|tf|txt|sh|go|rs|java|kt|swift|cs|c|h|cc|cpp|hpp|rb|php|html|css|scss|vue|sql))\b"
)


def shorten(text: Any, limit: int) -> str:
    """One line, whitespace collapsed, at most ``limit`` characters (ending in an ellipsis when cut)."""
    flat = " ".join(str(text if text is not None else "").split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def bounded(text: Any, limit: int) -> str:
    """Text kept as written (line breaks too), at most ``limit`` characters."""
    raw = str(text if text is not None else "").strip()
    return raw if len(raw) <= limit else raw[: limit - 1] + "…"


def clean(text: Any, limit: int, one_line: bool = True) -> str:
    """Secrets redacted first, then cut: a secret cut short first could slip past redaction."""
    redacted = redact(str(text if text is not None else "")[: 8 * limit + 2000])
    return shorten(redacted, limit) if one_line else bounded(redacted, limit)


def short_args(args: Any) -> str:
    if not isinstance(args, dict):
        return clean(args, ARG_CHARS) if args else ""
    # name and value redacted together: ``password=...`` is a secret only with its name
    parts = [clean(f"{key}={value}", ARG_CHARS) for key, value in args.items()]
    return shorten(", ".join(parts), ARGS_CHARS)


def files_in(args: Any) -> list[str]:
    """File names a tool call's arguments mention."""
    if not isinstance(args, dict):
        return []
    found: list[str] = []
    for key, value in args.items():
        values = value if isinstance(value, (list, tuple)) else [value]
        for item in values:
            if not isinstance(item, str) or not item.strip():
                continue
            if str(key).lower() in PATH_ARGS and len(item) < 300 and "\n" not in item:
                found.append(item.strip())
            else:
                found += _FILE_IN_CODE.findall(item[:20_000])
    return found


@dataclass
class TaskTrace:
    """One task in progress."""

    started: datetime = field(default_factory=lambda: datetime.now(timezone.utc))
    clock: float = field(default_factory=time.monotonic)
    user_message: str = ""
    tools: list[ToolCall] = field(default_factory=list)
    tool_calls: int = 0
    files: dict[str, None] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    final_response: str = ""
    responded: bool = False
    pace_levels: list[str] = field(default_factory=list)
    turns: int = 0
    steering_at_start: int = 0
    #: the agent's working directory: relative file names are taken from it, not from this process's
    workdir: str = ""
    reasoning: list[str] = field(default_factory=list)
    unresolved: dict[str, None] = field(default_factory=dict)

    def note_pace(self, level: Any) -> None:
        if isinstance(level, str) and level and level not in self.pace_levels and len(self.pace_levels) < 4:
            self.pace_levels.append(level)

    def note_thoughts(self, thoughts: list[str]) -> None:
        """The agent's reasoning before a call, bounded: :data:`MAX_THOUGHTS` entries, redacted."""
        text = clean(" ".join(thoughts), THOUGHT_CHARS)
        if text and text not in self.reasoning and len(self.reasoning) < MAX_THOUGHTS:
            self.reasoning.append(text)

    def note_tool(self, tool: str, args: Any, output: str, ok: bool | None, error_type: str | None, ends_task: bool,
                  agent: int = 0) -> None:
        """One tool call; ``agent`` is the caller's number (a subordinate's calls are part of the task too)."""
        answer = tool == "response" or ends_task  # an agent's own answer, not a tool's output
        if answer:
            ok, error_type = True, None
        elif ok is None:
            verdict = classify_output(output)
            ok, error_type = not verdict.failed, verdict.error_type
        self.tool_calls += 1
        if len(self.tools) < MAX_TOOLS:
            shown = clean(output, OUTPUT_CHARS) if ok and not (answer and agent == 0) else ""
            self.tools.append(ToolCall(tool=shorten(tool, 100), args=short_args(args), ok=ok, error_type=None if ok else error_type or "execution",
                                       agent=max(0, agent), output=shown))
        for name in [] if answer else files_in(args):
            resolved = resolve_in(Path(self.workdir) if self.workdir else None, name)
            if resolved is None:
                if len(self.unresolved) < MAX_FILES:
                    self.unresolved.setdefault(name, None)
            elif len(self.files) < MAX_FILES:
                self.files.setdefault(resolved, None)
        if not ok and len(self.errors) < MAX_ERRORS:
            self.errors.append(clean(f"{tool}: {output}", ERROR_CHARS))
        if ok and ends_task and agent == 0:
            self.responded = True
            text = args.get("text") or args.get("message") if isinstance(args, dict) else None
            self.final_response = str(text if text is not None else output)


def begin(readings: TaskReadings) -> TaskTrace | None:
    """Start the task's trace in the top agent's state (None when the agent keeps none)."""
    if readings.task_data is None:
        return None
    trace = TaskTrace(user_message=readings.user_message, steering_at_start=readings.steering, workdir=readings.workdir)
    trace.note_pace(readings.pace_level)
    readings.task_data[TRACE_KEY] = trace
    return trace


def current(readings: TaskReadings) -> TaskTrace | None:
    """The running task's trace: on the top agent, also when the readings are of one of its subordinates."""
    trace = readings.task_data.get(TRACE_KEY) if readings.task_data is not None else None
    return trace if isinstance(trace, TaskTrace) else None


def note_tool(readings: TaskReadings, tool: str, args: Any, output: str, ok: bool | None, error_type: str | None, ends_task: bool) -> None:
    """One tool call of the agent or of a subordinate into the running task (only while a task is traced)."""
    trace = current(readings)
    if trace is None:
        return
    trace.note_thoughts(list(readings.thoughts))
    trace.note_tool(tool, args, output, ok, error_type, ends_task and readings.number == 0, agent=readings.number)


def note_turn(readings: TaskReadings) -> None:
    trace = current(readings)
    if trace is None:
        return
    if readings.iteration is not None:
        trace.turns = max(trace.turns, readings.iteration + 1)
    trace.note_pace(readings.pace_level)


def finish(readings: TaskReadings, task: int) -> TaskDigest | None:
    """The task's digest (redacted); removes the trace from the agent's state. None when no task was traced."""
    trace = current(readings)
    if trace is None or readings.task_data is None:
        return None
    readings.task_data.pop(TRACE_KEY, None)
    trace.note_pace(readings.pace_level)
    emergency = "emergency" in trace.pace_levels
    aborted = emergency or not trace.responded
    reason = ""
    if aborted:
        reason = "reached PACE emergency" if emergency else "ended without a successful response"
    return TaskDigest(
        task=task,
        started=trace.started,
        duration_seconds=round(max(0.0, time.monotonic() - trace.clock), 3),
        user_message=clean(trace.user_message, TEXT_CHARS, one_line=False),
        tools=list(trace.tools),
        tool_calls=trace.tool_calls,
        files_touched=[clean(name, 300) for name in trace.files],
        errors=list(trace.errors),
        final_response=clean(trace.final_response, TEXT_CHARS, one_line=False),
        pace_levels=list(trace.pace_levels),
        turns=trace.turns,
        outcome="aborted" if aborted else "completed",
        abort_reason=reason,
        steering=max(0, readings.steering - trace.steering_at_start),
        reasoning=list(trace.reasoning),
        workdir=clean(trace.workdir, 500),
        files_unresolved=[clean(name, 300) for name in trace.unresolved],
    )


# --------------------------------------------------------------------------- the file


class DigestLog(JsonLinesLog[TaskDigest]):
    """``digests.jsonl``: one :class:`TaskDigest` per line, the last ``limit`` kept."""

    def __init__(self, path: Path, limit: int = DIGEST_LIMIT):
        super().__init__(path, TaskDigest, limit, "that task")
