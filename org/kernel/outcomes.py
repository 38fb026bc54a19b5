"""Tool outcomes: the record of each call and its result, and the ledger the detectors read.

Two records are kept on the agent:

* ``agent.get_data("_tool_failures")`` in the shape other layers already read:
  ``{"consecutive": {tool: n}, "history": [{"tool", "error_type", "message_preview"}]}``
  (history capped at 20 and cleared by any success of a tool other than ``response``;
  a tool's count is dropped, i.e. back to 0, when it succeeds).
* ``agent.get_data("_org_tool_ledger")``: the pack's own bounded history of every
  outcome of the current task, successes included: a canonical signature of tool and
  arguments, what kind of action it was, a hash of the output, the error's line and
  signature (:mod:`.classify`), plus the pack's progress signal. The detectors read this one.

Both are scoped to the current task: a new task starts them afresh.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from .classify import action_kind, classify_output, error_signature, short_command
from .log import warn_once
from .values import is_int

FAILURES_KEY = "_tool_failures"
#: Agent-Zero's final-answer tool: the turn it runs ends the task.
RESPONSE_TOOL = "response"
LEDGER_KEY = "_org_tool_ledger"
FAILURE_HISTORY_LIMIT = 20
PREVIEW_CHARS = 150
CONSECUTIVE_LIMIT = 64
LEDGER_LIMIT = 64
SEEN_LIMIT = 512
def _normalised(value: Any) -> Any:
    if isinstance(value, str):
        return " ".join(value.split())
    if isinstance(value, dict):
        return {str(k): _normalised(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_normalised(v) for v in value]
    return value


def canonical_signature(tool: str, args: Any) -> str:
    """What a call does: same tool and same arguments (in any key order, whitespace in
    strings normalised) give the same signature."""
    try:
        encoded = json.dumps(_normalised(args), sort_keys=True, separators=(",", ":"), default=str, ensure_ascii=False)
    except Exception:  # arguments that cannot be printed: same tool, unknown arguments
        try:
            encoded = repr(args)
        except Exception:
            encoded = f"<{type(args).__name__}>"
    return hashlib.sha256(f"{tool}\x00{encoded}".encode("utf-8", "replace")).hexdigest()[:16]


_DURATION = re.compile(r"\b\d+(?:\.\d+)?\s?(?:s|ms|sec|seconds)\b|0x[0-9a-fA-F]+")


def output_hash(text: str | None) -> str:
    """The output's identity: whitespace, durations and addresses do not make two outputs differ."""
    normalized = _DURATION.sub("#", " ".join((text or "").split()))
    return hashlib.sha256(normalized.encode("utf-8", "replace")).hexdigest()[:16]


def preview(text: str | None) -> str:
    return " ".join((text or "").split())[:PREVIEW_CHARS]


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    turn: int
    tool: str
    ok: bool
    error_type: str | None
    signature: str
    output_hash: str
    message_preview: str
    #: this call moved the task forward (see :class:`ToolLedger`)
    novel: bool = False
    kind: str = "run"  # inspect, edit or run (classify.action_kind)
    error_line: str | None = None  # the line naming the error, also for failing tests
    error_signature: str | None = None  # the error's identity (classify.error_signature)
    command: str | None = None  # the command the call ran, shortened, for steering to name

    @property
    def result(self) -> str:
        """The result's identity: the error's signature when there is one, else the output's hash."""
        return self.error_signature or self.output_hash


@dataclass
class ToolLedger:
    """The current task's outcome history and the pack's own progress signal.

    Progress, when no HTN plan reports it, is something new learned or achieved, not any
    new output: a look at something not looked at before in the task; a run whose result
    is new for that call and whose error (if any) has not been seen in the task; the
    final answer. Edits, repeated looks, reruns with the same result and known errors
    coming back are not progress, so an agent that keeps editing without the result
    changing stalls.
    """

    turn: int = 0
    last_progress_turn: int = 0
    #: a tool outcome was ever recorded: where none can be (no tool hooks), there is no progress signal
    recorded: bool = False
    outcomes: deque = field(default_factory=lambda: deque(maxlen=LEDGER_LIMIT))
    seen: dict = field(default_factory=dict)

    def tick(self, new_task: bool) -> None:
        """Called once per turn, before the model is asked."""
        self.turn += 1
        if new_task:
            self.last_progress_turn = self.turn
            self.seen.clear()
            self.outcomes.clear()

    def _first(self, key: tuple) -> bool:
        if key in self.seen:
            return False
        if len(self.seen) >= SEEN_LIMIT:
            self.seen.pop(next(iter(self.seen)))
        self.seen[key] = None
        return True

    def _progress(self, tool: str, ok: bool, kind: str, signature: str, result: str, error: str | None) -> bool:
        if tool == RESPONSE_TOOL:
            return ok
        if kind == "inspect":
            return self._first(("look", signature)) and ok
        if kind == "edit":
            return False
        new_result = self._first(("result", signature, result))
        new_error = error is None or self._first(("error", error))
        return new_result and new_error

    def record(self, tool: str, ok: bool, error_type: str | None, signature: str, out_hash: str, message: str,
               kind: str = "run", error_line: str | None = None, command: str | None = None) -> ToolOutcome:
        self.recorded = True
        error = error_signature(error_line)
        progress = self._progress(tool, ok, kind, signature, error or out_hash, error)
        if progress:
            self.last_progress_turn = self.turn
        outcome = ToolOutcome(self.turn, tool, ok, error_type, signature, out_hash, preview(message), progress,
                              kind, error_line, error, command)
        self.outcomes.append(outcome)
        return outcome

    @property
    def latest(self) -> ToolOutcome | None:
        """The outcome recorded this turn, if a tool ran."""
        return self.outcomes[-1] if self.outcomes and self.outcomes[-1].turn == self.turn else None

    @property
    def turns_since_progress(self) -> int | None:
        """None until an outcome was recorded: on Agent-Zero without tool hooks (v0.9.3, v0.9.4)
        outcomes cannot be seen, and a count of turns alone is no progress signal."""
        return max(0, self.turn - self.last_progress_turn) if self.recorded else None


def ledger_of(data: dict) -> ToolLedger:
    ledger = data.get(LEDGER_KEY)
    if not isinstance(ledger, ToolLedger):
        if ledger is not None:
            warn_once(f"agent.data[{LEDGER_KEY!r}]: expected the pack's tool ledger, found {type(ledger).__name__}; started afresh", key=LEDGER_KEY)
        ledger = ToolLedger()
        data[LEDGER_KEY] = ledger
    return ledger


def update_failure_record(data: dict, tool: str, ok: bool, error_type: str | None, message: str) -> None:
    """Keep ``_tool_failures`` in the shape the seed and other layers read (failures only:
    failing tests reported by a test run that worked are not a failure of the tool)."""
    record = data.get(FAILURES_KEY)
    if not isinstance(record, dict) or not isinstance(record.get("consecutive"), dict) or not isinstance(record.get("history"), list):
        if record is not None:
            warn_once(f"agent.data[{FAILURES_KEY!r}]: not in the {{consecutive: {{}}, history: []}} shape; started afresh", key=FAILURES_KEY)
        record = {"consecutive": {}, "history": []}
        data[FAILURES_KEY] = record
    counts = record["consecutive"]
    if ok:
        counts.pop(tool, None)  # back to zero (read with .get(tool, 0)); keeps the dict small
        if tool != RESPONSE_TOOL:
            record["history"].clear()
        return
    previous = counts.pop(tool, 0)
    counts[tool] = (previous if is_int(previous) else 0) + 1
    while len(counts) > CONSECUTIVE_LIMIT:  # model-invented tool names must not grow it without bound
        counts.pop(next(iter(counts)))
    record["history"].append({"tool": tool, "error_type": error_type or "execution", "message_preview": preview(message)})
    del record["history"][:-FAILURE_HISTORY_LIMIT]


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


def record_outcome(data: dict, tool: str, args: Any, output: str | None, ok: bool | None = None, error_type: str | None = None) -> ToolOutcome:
    """Record one tool outcome in both records. ``ok`` None means: the output decides
    (:func:`.classify.classify_output`); a verdict given by another layer wins, and the
    output still names the error."""
    verdict = classify_output(output)
    if ok is None:
        ok = not verdict.failed
        error_type = error_type or verdict.error_type
    elif not ok:
        error_type = error_type or (verdict.error_type if verdict.failed else None) or "execution"
    elif verdict.failed:
        error_type = None  # the other layer says it worked: keep the line, not the failure
    else:
        error_type = verdict.error_type  # "test": failing tests reported by a run that worked
    error_line = verdict.error_line if verdict.error_line or ok else preview(output)
    signature, out_hash = canonical_signature(tool, args), output_hash(output)
    update_failure_record(data, tool, ok, error_type, output or "")
    return ledger_of(data).record(tool, ok, error_type, signature, out_hash, output or "",
                                  action_kind(tool, args), error_line, short_command(args))


def record_blocked(data: dict, tool: str, args: Any, blocked: Any) -> ToolOutcome:
    """Record a call the breaker did not run as the failure it would have repeated, so the
    pattern it belongs to stays visible to the detectors."""
    update_failure_record(data, tool, False, blocked.error_type or "execution", blocked.error_line or "")
    ledger = ledger_of(data)
    outcome = ToolOutcome(ledger.turn, tool, False, blocked.error_type or "execution", canonical_signature(tool, args),
                          blocked.output_hash, "blocked by the supervisor", False, action_kind(tool, args),
                          blocked.error_line, blocked.error_signature, short_command(args))
    ledger.outcomes.append(outcome)
    return outcome


def start_task(data: dict) -> None:
    """A new task: the failure record starts afresh, like the ledger's outcomes."""
    record = data.get(FAILURES_KEY)
    if isinstance(record, dict):
        data[FAILURES_KEY] = {"consecutive": {}, "history": []}
