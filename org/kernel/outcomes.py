"""Tool outcomes: classifying a tool's response, and the ledger the detectors read.

Two records are kept on the agent:

* ``agent.get_data("_tool_failures")`` in the shape other layers already read:
  ``{"consecutive": {tool: n}, "history": [{"tool", "error_type", "message_preview"}]}``
  (history capped at 20 and cleared by any success of a tool other than ``response``;
  a tool's count is dropped, i.e. back to 0, when it succeeds).
* ``agent.get_data("_org_tool_ledger")``: the pack's own bounded history of every
  outcome, successes included, with a canonical signature of tool and arguments and a
  hash of the output, plus the pack's progress signal. The detectors read this one.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from .log import warn_once
from .values import is_int

FAILURES_KEY = "_tool_failures"
LEDGER_KEY = "_org_tool_ledger"
FAILURE_HISTORY_LIMIT = 20
PREVIEW_CHARS = 150
CONSECUTIVE_LIMIT = 64
LEDGER_LIMIT = 64
SEEN_LIMIT = 512
#: Only the head and tail of long outputs are scanned for error markers.
SCAN_CHARS = 4000

# Ordered: the first matching pattern names the error type. Patterns look for the
# shapes errors take in tool output (exception lines, shell diagnostics), not for the
# bare word "error", which ordinary file contents contain all the time.
ERROR_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern, re.IGNORECASE | re.MULTILINE))
    for name, pattern in (
        ("timeout", r"\b(timed? ?out|TimeoutError|deadline exceeded)\b"),
        ("not_found", r"(No such file or directory|FileNotFoundError|command not found|not found:|\b404\b.*not found|does not exist|cannot find|can't open file)"),
        ("permission", r"(Permission denied|PermissionError|Operation not permitted|\bEACCES\b|access denied|\b403 Forbidden\b)"),
        ("syntax", r"(SyntaxError|IndentationError|syntax error|unexpected token|unterminated string)"),
        ("network", r"(Connection (refused|reset|aborted)|ConnectionError|Name or service not known|Temporary failure in name resolution|Network is unreachable|getaddrinfo failed|\bECONNREFUSED\b|SSL(Error| certificate))"),
        ("resource", r"(MemoryError|Out of memory|No space left on device|Killed\s*$|Too many open files|disk quota exceeded)"),
        ("dependency", r"(ModuleNotFoundError|ImportError|No module named|cannot import name|package .* is not installed|unable to locate package)"),
        ("execution", r"(^Traceback \(most recent call last\)|^[ \t]*\w*(Error|Exception): |^error: |^fatal: |^ERROR[: ]|exit (code|status) [1-9]|returned non-zero exit status)"),
    )
)


def classify_output(text: str | None) -> str | None:
    """The error type a tool's output shows, or None when it looks like a success."""
    if not text:
        return None
    sample = text if len(text) <= 2 * SCAN_CHARS else text[:SCAN_CHARS] + "\n" + text[-SCAN_CHARS:]
    for name, pattern in ERROR_PATTERNS:
        if pattern.search(sample):
            return name
    return None


def canonical_signature(tool: str, args: Any) -> str:
    """Same tool and same arguments (in any key order) give the same signature."""
    try:
        encoded = json.dumps(args, sort_keys=True, separators=(",", ":"), default=str, ensure_ascii=False)
    except Exception:  # arguments that cannot be printed: same tool, unknown arguments
        try:
            encoded = repr(args)
        except Exception:
            encoded = f"<{type(args).__name__}>"
    return hashlib.sha256(f"{tool}\x00{encoded}".encode("utf-8", "replace")).hexdigest()[:16]


def output_hash(text: str | None) -> str:
    normalized = " ".join((text or "").split())
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
    novel: bool = False


@dataclass
class ToolLedger:
    """Bounded outcome history and the pack's own progress signal.

    Progress, when no HTN plan reports it: a turn makes progress when a tool succeeds
    with a result not seen before in the current task (a new (signature, output) pair),
    or when the agent answers with ``response``. Turns of failures, repeated results or
    no tool at all do not.
    """

    turn: int = 0
    last_progress_turn: int = 0
    outcomes: deque = field(default_factory=lambda: deque(maxlen=LEDGER_LIMIT))
    seen: dict = field(default_factory=dict)

    def tick(self, new_task: bool) -> None:
        """Called once per turn, before the model is asked."""
        self.turn += 1
        if new_task:
            self.last_progress_turn = self.turn
            self.seen.clear()

    def record(self, tool: str, ok: bool, error_type: str | None, signature: str, out_hash: str, message: str) -> ToolOutcome:
        novel = False
        if ok:
            key = (signature, out_hash)
            novel = key not in self.seen
            if novel:
                if len(self.seen) >= SEEN_LIMIT:
                    self.seen.pop(next(iter(self.seen)))
                self.seen[key] = None
        if novel or (ok and tool == "response"):
            self.last_progress_turn = self.turn
        outcome = ToolOutcome(self.turn, tool, ok, error_type, signature, out_hash, preview(message), novel)
        self.outcomes.append(outcome)
        return outcome

    @property
    def turns_since_progress(self) -> int:
        return max(0, self.turn - self.last_progress_turn)


def ledger_of(data: dict) -> ToolLedger:
    ledger = data.get(LEDGER_KEY)
    if not isinstance(ledger, ToolLedger):
        if ledger is not None:
            warn_once(f"agent.data[{LEDGER_KEY!r}]: expected the pack's tool ledger, found {type(ledger).__name__}; started afresh", key=LEDGER_KEY)
        ledger = ToolLedger()
        data[LEDGER_KEY] = ledger
    return ledger


def update_failure_record(data: dict, tool: str, ok: bool, error_type: str | None, message: str) -> None:
    """Keep ``_tool_failures`` in the shape the seed and other layers read."""
    record = data.get(FAILURES_KEY)
    if not isinstance(record, dict) or not isinstance(record.get("consecutive"), dict) or not isinstance(record.get("history"), list):
        if record is not None:
            warn_once(f"agent.data[{FAILURES_KEY!r}]: not in the {{consecutive: {{}}, history: []}} shape; started afresh", key=FAILURES_KEY)
        record = {"consecutive": {}, "history": []}
        data[FAILURES_KEY] = record
    counts = record["consecutive"]
    if ok:
        counts.pop(tool, None)  # back to zero (read with .get(tool, 0)); keeps the dict small
        if tool != "response":
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
    """Record one tool outcome in both records. ``ok`` None means: classify from output."""
    if ok is None:
        error_type = error_type or classify_output(output)
        ok = error_type is None
    elif not ok and not error_type:
        error_type = classify_output(output) or "execution"
    if ok:
        error_type = None
    signature, out_hash = canonical_signature(tool, args), output_hash(output)
    update_failure_record(data, tool, ok, error_type, output or "")
    return ledger_of(data).record(tool, ok, error_type, signature, out_hash, output or "")
