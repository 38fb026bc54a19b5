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
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from org.lazy_patterns import lazy_pattern

from .bounded import drop_oldest
from .classify import (
    BUSY_TERMINAL,
    GENERIC_FAILURE,
    NEW_TEXT_KEYS,
    OK,
    WAITS_IN_INTERPRETER,
    Verdict,
    action_kind,
    carries_program,
    checks_a_process,
    classify_output,
    classify_report,
    command_of,
    did_not_run,
    edit_refused,
    error_signature,
    filter_sets_status,
    found_nothing,
    instant,
    leaves_code,
    line_keys,
    message_kind,
    missing_program,
    no_match_notice,
    old_text_refused,
    only_sleeps,
    opening_exit_code,
    prints_only,
    programs_run,
    reports_content,
    run_text,
    runs_what_it_writes,
    says_only,
    short_command,
    shows_nothing,
    telling_line,
    waits_first,
    waits_on_process,
    waits_then_looks,
    without_running_notice,
)
from .copies import ADDED_LINES, WRITTEN_LIMIT, added_lines, path_tail, ran_other_copy, written_paths
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
#: lines of the task's successful outputs remembered (banners, warnings printed at every start)
KNOWN_LINES_LIMIT = 2048
#: programs remembered as having run (see ``ToolLedger.programs_seen``)
PROGRAMS_LIMIT = 256
#: the error type of a program that ran here before and a shell did not find ("bash -lc go": a login shell's PATH)
LOST_PROGRAM = "lost_program"
_WHITESPACE = lazy_pattern(r"\s+")


def _normalised(value: Any, squeeze: bool) -> Any:
    if isinstance(value, str):
        return _WHITESPACE.sub("", value) if squeeze else value.strip()
    if isinstance(value, dict):
        return {str(k): _normalised(v, squeeze) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_normalised(v, squeeze) for v in value]
    return value


#: arguments that label a command for people (Claude Code's Bash `description`), not what it runs
_LABEL_KEYS = frozenset({"description", "explanation", "thought", "thoughts"})


def _action_args(args: Any) -> Any:
    """A command call's arguments without its labels: the same command described anew is the same action."""
    if isinstance(args, dict) and not _LABEL_KEYS.isdisjoint(args) and command_of(args) is not None:
        return {k: v for k, v in args.items() if k not in _LABEL_KEYS}
    return args


def _signature(tool: str, args: Any, squeeze: bool) -> str:
    try:
        encoded = json.dumps(_normalised(_action_args(args), squeeze), sort_keys=True, separators=(",", ":"), default=str, ensure_ascii=False)
    except Exception:  # arguments that cannot be printed: same tool, unknown arguments
        try:
            encoded = repr(args)
        except Exception:
            encoded = f"<{type(args).__name__}>"
    return hashlib.sha256(f"{tool}\x00{encoded}".encode("utf-8", "replace")).hexdigest()[:16]


def canonical_signature(tool: str, args: Any) -> str:
    """What a call does: same tool and same arguments, in any key order, give the same
    signature; a command's labels (Claude Code's `description`) are no part of it. Whitespace
    inside an argument counts (two `sed` patterns that differ in their spaces are two
    actions); only leading and trailing whitespace is ignored."""
    return _signature(tool, args, False)


def shape_signature(tool: str, args: Any) -> str:
    """A call with all whitespace in its arguments ignored: an edit retried with only its
    indentation changed has the same shape."""
    return _signature(tool, args, True)


def call_shape(tool: str, args: Any, kind: str, signature: str, error_line: str | None) -> str:
    """A call's shape: an edit's arguments with whitespace ignored, and for one refused for its
    text to replace (not found, or not unique) without its new text, since whatever it would
    put there, that old text is refused again; any other call's is its signature."""
    if kind != "edit":
        return signature
    if old_text_refused(error_line) and isinstance(args, dict):
        args = {k: v for k, v in args.items() if k not in NEW_TEXT_KEYS}
    return shape_signature(tool, args)


def output_hash(text: str | None, error_type: str | None = None) -> str:
    """The output's identity: whitespace, times, durations, addresses, temporary paths and
    process ids do not make two outputs differ; a failure's error type does."""
    normalized = run_text(text or "")
    if error_type:
        normalized = f"{error_type}\x00{normalized}"
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
    command: str | None = None  # the command the call ran (a file tool: its name and path), shortened, for steering to name
    shape: str = ""  # the call with whitespace ignored (call_shape)
    baseline: bool = False  # its error was there before the agent's first edit of the task
    blocked: bool = False  # the breaker did not run it: it stands for the failure it would have repeated
    waits: bool = False  # it polled a process already running (waits_on_process) or only slept: never a loop
    prints: bool = False  # it only printed text the agent wrote (a farewell `echo`, prints_only): a reply sent as a command
    #: a look that found nothing: it showed nothing (no text, a search's notice that nothing
    #: matched: shows_nothing), or what it looked at is not there (`cat a.py`: No such file)
    empty: bool = False
    program: bool = False  # its code is the program it runs, written in the call (classify.carries_program)
    ran: bool = False  # an edit that ran what it wrote, in the same call (classify.runs_what_it_writes)
    #: its traceback went through ``ran_copy``, another copy of ``edited_copy``, a file the task's
    #: edits wrote: those edits do not run (:func:`.copies.other_copy`)
    ran_copy: str | None = None
    edited_copy: str | None = None

    @property
    def worked(self) -> bool:
        """It worked and names no error (a test run that reported failures worked, but names them)."""
        return self.ok and not self.error_type

    @property
    def result(self) -> str:
        """The result's identity: the error's signature when there is one, else the output's hash."""
        return self.error_signature or self.output_hash


@dataclass
class ToolLedger:
    """The current task's outcome history and the pack's own progress signal.

    Progress, when no HTN plan reports it, is something new learned or achieved, not any
    new output: a look that shows content not seen before in the task, at something not
    looked at before or, other than right after an edit, at a place looked at before (paging
    through a file); a call made before whose result is new for it and whose error (if any)
    has not been seen in the task; a call not made before whose output is new to the task (it
    tested something new); the final answer. Edits, repeated looks, looks that found nothing
    (an empty listing, a search with no match) or only what an earlier look showed, reruns
    with the same result, known errors coming back and text the agent prints itself (a
    farewell `echo`) are not progress, so an agent that keeps editing without the result
    changing, or keeps searching where nothing is, stalls.
    """

    turn: int = 0
    last_progress_turn: int = 0
    #: a tool outcome was ever recorded: where none can be (no tool hooks), there is no progress signal
    recorded: bool = False
    outcomes: deque = field(default_factory=lambda: deque(maxlen=LEDGER_LIMIT))
    seen: dict = field(default_factory=dict)
    #: keys of lines the task's successful outputs printed: they name no failure
    known_lines: dict = field(default_factory=dict)
    #: errors seen before the agent's first edit of the task, and whether it edited yet
    before_edit: set = field(default_factory=set)
    edited: bool = False
    last_tool_turn: int = 0
    task_start_turn: int = 0
    #: tools whose failing outputs open with their exit status (``Exit code 1``): an output of
    #: theirs without it exited 0, whatever it printed (kept across tasks: it is the tool's way)
    failures_state_exit: set = field(default_factory=set)
    #: programs that ran here by name in a command that worked: one later "not found" is not
    #: missing but not on that shell's PATH (kept across tasks: what is installed stays)
    programs_seen: dict = field(default_factory=dict)
    #: terminal sessions whose latest answer ended at an interactive interpreter's prompt, with
    #: the line naming it: Agent-Zero's later "might be still running" notes no longer show it
    #: (kept across tasks: the terminal stays where it is)
    interpreters: dict = field(default_factory=dict)
    #: the absolute paths the task's edits wrote, with the lines they added (see :mod:`.copies`)
    written: dict = field(default_factory=dict)

    def tick(self, new_task: bool) -> None:
        """Called once per turn, before the model is asked."""
        self.turn += 1
        if new_task:
            self.last_progress_turn = self.turn
            self.task_start_turn = self.turn - 1
            self.seen.clear()
            self.outcomes.clear()
            self.known_lines.clear()
            self.before_edit = set()
            self.edited = False
            self.written.clear()

    def learn_lines(self, text: str) -> None:
        """Remember the lines of a successful output."""
        known = self.known_lines
        for key in line_keys(text):
            known[key] = None
        drop_oldest(known, KNOWN_LINES_LIMIT)

    def learn_written(self, paths: list[str], added: frozenset[str]) -> None:
        """Remember the files an edit wrote, and the lines it added to them."""
        for path in paths:
            lines = self.written.pop(path, frozenset())  # the latest edit last: a copy names the file edited last
            self.written[path] = added if not lines else frozenset(sorted(lines | added)[:ADDED_LINES])
        drop_oldest(self.written, WRITTEN_LIMIT)

    def learn_programs(self, command: str | None) -> None:
        """Remember the programs a command that worked ran."""
        for name in programs_run(command):
            self.programs_seen[name] = None
        drop_oldest(self.programs_seen, PROGRAMS_LIMIT)

    def _baseline(self, ok: bool, kind: str, error: str | None) -> bool:
        """Whether this error was there before the agent's first edit (then it did not cause it)."""
        if self.edited:
            return error is not None and error in self.before_edit
        if kind == "edit":
            self.edited = True  # the first edit: the errors seen so far are the baseline
            return False
        if error is not None and len(self.before_edit) < SEEN_LIMIT:
            self.before_edit.add(error)
        return error is not None

    def _first(self, key: tuple) -> bool:
        if key in self.seen:
            return False
        self.seen[key] = None
        drop_oldest(self.seen, SEEN_LIMIT)
        return True

    def _progress(self, tool: str, ok: bool, kind: str, signature: str, out_hash: str, error: str | None, said: bool,
                  polls: bool, shown: bool, ran: bool) -> bool:
        """Whether the call moved the task (see the class): ``shown``, its output shows something."""
        if tool == RESPONSE_TOOL:
            return ok
        if polls:  # what the program printed anew
            return shown and self._first(("output", out_hash))
        if said:
            return False  # a farewell or status `echo` looks at nothing
        if kind == "inspect":  # new content: at a new place, or where the agent did not just edit (paging a file)
            if not shown:
                return False  # a look that found nothing learned only where not to look
            new_look = self._first(("look", signature))
            new_view = self._first(("view", out_hash))
            after_edit = bool(self.outcomes) and self.outcomes[-1].kind == "edit"
            return ok and new_view and (new_look or not after_edit)
        if kind == "edit" and not ran:
            return False  # (one that ran what it wrote is judged by what the run showed)
        new_result = self._first(("result", signature, error or out_hash))
        new_error = error is None or self._first(("error", error))
        new_call = self._first(("call", signature))
        new_output = self._first(("output", out_hash))
        # a call made before: a new result, with no error seen before; a new call: new output
        return new_output if new_call else new_result and new_error

    def record(self, tool: str, ok: bool, error_type: str | None, signature: str, out_hash: str, message: str,
               kind: str = "run", error_line: str | None = None, command: str | None = None, *,
               identity: str | None = None, shape: str = "", said: bool = False, leaves_code: bool = False,
               waits: bool = False, polls: bool = False, prints: bool = False, program: bool = False, ran: bool = False,
               echo: str | None = None, copy: tuple[str, str] | None = None) -> ToolOutcome:
        """Record one outcome. ``identity`` is the text naming the error (:attr:`.classify.Verdict.identity`);
        without it the error has no signature. ``leaves_code``: the edit changes none of the code
        under work (a script of the agent's own, a checkout): the baseline goes on. ``waits``: the
        call waited (never a loop). ``polls``: it polled a process already running; what the
        process printed anew is progress, and a turn spent waiting on it counts toward no stall
        (the time is the process's). ``prints``: the call only printed the agent's own text (a
        reply sent as a command). ``program``: the call's code is the program it ran. ``ran``: an
        edit that ran what it wrote, in the same call. ``echo``: the command a terminal may have
        echoed before its output (an output of nothing else shows nothing). ``copy``: the file its
        traceback went through and the edited file it is another copy of."""
        self.recorded = True
        self.last_tool_turn = self.turn
        error = error_signature(identity)
        shown = not shows_nothing(message, echo)
        progress = self._progress(tool, ok, kind, signature, out_hash, error, said, polls, shown, ran)
        if progress:
            self.last_progress_turn = self.turn
        elif polls:
            self.last_progress_turn = min(self.turn, self.last_progress_turn + 1)
        baseline = self._baseline(ok, "run" if leaves_code else kind, None if ok else error)
        outcome = ToolOutcome(self.turn, tool, ok, error_type, signature, out_hash, preview(message), progress,
                              kind, error_line, error, command, shape or signature, baseline, waits=waits, prints=prints,
                              empty=kind == "inspect" and (not shown if ok else error_type == "not_found"), program=program, ran=ran,
                              ran_copy=path_tail(copy[0]) if copy else None, edited_copy=path_tail(copy[1]) if copy else None)
        self.outcomes.append(outcome)
        return outcome

    @property
    def latest(self) -> ToolOutcome | None:
        """The outcome recorded this turn, if a tool ran."""
        return self.outcomes[-1] if self.outcomes and self.outcomes[-1].turn == self.turn else None

    @property
    def turns_without_tool(self) -> int | None:
        """Turns in a row, up to this one, in which the model called no tool (None: no outcome
        can be seen here)."""
        return self.turn - max(self.last_tool_turn, self.task_start_turn) if self.recorded else None

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


#: Commands that change the environment a run depends on: installs and builds.
_INSTALL_OR_BUILD = lazy_pattern(r"(?:^|[;&|]\s*|\s)(?:pip3?|python3? -m pip|uv pip|conda|mamba|apt(?:-get)?|yum|dnf|apk|brew|npm|yarn|pnpm|"
                               r"gem|cargo|go|mvn|gradle|poetry)\s+(?:install|add|build|get|update|upgrade)\b"
                               r"|setup\.py\s+(?:install|develop|build\w*)|(?:^|[;&|]\s*)(?:make|cmake|ninja)\b")


def installed(outcome: Any) -> bool:
    """An install or build that worked (its output kept in a log or not)."""
    return outcome.ok and outcome.command is not None and _INSTALL_OR_BUILD.search(outcome.command) is not None


def fix_attempt(outcome: Any) -> bool:
    """A call that tried to fix something: an edit the editor did not refuse (a command that
    edits and then runs fails when the run does), or an install or build that worked."""
    if outcome.kind == "edit" and not edit_refused(outcome.error_line):
        return True
    return installed(outcome)


def failures_in_a_row(outcomes: Any) -> int:
    """How many of the latest outcomes failed, back to the last one that worked."""
    count = 0
    for outcome in reversed(outcomes):
        if outcome.ok:
            break
        count += 1
    return count


def last_in_a_row(outcomes: Any, alike: Any) -> int:
    """How many of the last outcomes, in a row, are ``alike`` (polls and exempt tools may come
    between them, so their turns need not be consecutive)."""
    return next((i for i, o in enumerate(reversed(outcomes)) if not alike(o)), len(outcomes))


def named(outcome: Any) -> str:
    """The call as steering names it (a unit's outcome or one an XO read): its command when it
    has one, else the tool."""
    return f"`{outcome.command}`" if outcome.command else outcome.tool


def worked_command(outcome: Any) -> bool:
    """A command that worked without changing files: what a way around a failure looks like."""
    return outcome.ok and outcome.kind != "edit" and bool(outcome.command)


def streak_neutral(ok: bool, kind: str, error_type: str | None, error_line: str | None) -> bool:
    """A failure that is no step of a failing approach, so not counted in the failure streak
    PACE escalates on (nor does it end one): a look that found nothing (an answer: the file is
    not there), an edit the editor refused (its linter's finding, the text to replace not
    found: nothing changed, and the tool said exactly why), or a call that ran nothing (a
    terminal still running an earlier command, a tool that is not there). The same call sent
    again is still a loop, calls that ran nothing are one too, and turns of them on end a
    stall; each says so precisely."""
    return not ok and ((kind == "inspect" and error_type == "not_found") or did_not_run(error_type, error_line)
                       or edit_refused(error_line))


def ran_nothing(outcome: Any) -> bool:
    """A call that failed without running anything (:func:`classify.did_not_run`)."""
    return not outcome.ok and did_not_run(outcome.error_type, outcome.error_line)


def never_a_loop(outcome: Any, tools: Any) -> bool:
    """Never counted as looping nor blocked: a poll of a process already running, or one of the
    doctrine's exempt tools (``loop.exempt_tools``: pollers, waits)."""
    return outcome.waits or outcome.tool in tools


def checks_on_something_running(outcomes: Any, tools: Any) -> bool:
    """The latest call checks on something running in the background (a job, a server still
    starting): it came right after a wait (:func:`never_a_loop`: Agent-Zero's `wait`, a `sleep`,
    a poll) or waited first itself, and it looked (`sleep 60 && tail build.log`) or failed in a
    way waiting can change (a server not answering yet, a file a job has not written yet); or it
    checked whether a process still runs (`ps -p 6149`), which worked. Its
    unchanged result is that thing's time, not the agent's: never blocked, never the proof for a pause."""
    if not outcomes:
        return False
    last = outcomes[-1]
    after_a_wait = len(outcomes) > 1 and never_a_loop(outcomes[-2], tools)
    if last.worked:
        return after_a_wait or waits_then_looks(last.command) or checks_a_process(last.command)
    in_time = last.error_type == "network" or (last.error_type == "not_found" and not missing_program(last.error_line))
    return in_time and (after_a_wait or waits_first(last.command))


def watched_for_loops(outcomes: Any, tools: Any) -> list:
    """The outcomes that are not :func:`never_a_loop`, in one pass (read at every check: the
    rule written out, not called once per outcome)."""
    return [o for o in outcomes if not (o.waits or o.tool in tools)]


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
    drop_oldest(counts, CONSECUTIVE_LIMIT)  # model-invented tool names must not grow it without bound
    record["history"].append({"tool": tool, "error_type": error_type or "execution", "message_preview": preview(message)})
    del record["history"][:-FAILURE_HISTORY_LIMIT]


#: terminal sessions remembered at an interpreter's prompt (a model may number them as it likes)
INTERPRETERS_LIMIT = 8


def _terminal_state(ledger: ToolLedger, args: Any, verdict: Verdict) -> Verdict:
    """A command's verdict with what is known of its terminal session: a note that the session
    still runs something, after its last answer ended at an interpreter's prompt, is that
    interpreter waiting (its prompt is not shown again); an answer that is no such note (the
    session reset, the interpreter left) forgets it."""
    session = args.get("session", 0) if isinstance(args, dict) else 0
    session = session if is_int(session) else repr(session)
    if verdict.error_type != "busy":
        ledger.interpreters.pop(session, None)
    elif verdict.identity is not None and verdict.identity.startswith(WAITS_IN_INTERPRETER):
        ledger.interpreters[session] = verdict.identity
        drop_oldest(ledger.interpreters, INTERPRETERS_LIMIT)
    elif verdict.identity == BUSY_TERMINAL and session in ledger.interpreters:
        waits = ledger.interpreters[session]
        return Verdict(True, "busy", waits, waits)
    return verdict


def record_outcome(data: dict, tool: str, args: Any, output: str | None, ok: bool | None = None, error_type: str | None = None) -> ToolOutcome:
    """Record one tool outcome in both records. ``ok`` None means: the output decides
    (:func:`.classify.classify_output`); a verdict given by another layer wins, and the
    output still names the error."""
    ledger = ledger_of(data)
    polls = waits_on_process(tool, args)
    if polls:
        output = without_running_notice(output)  # "still running" is no result of the poll
    reports = reports_content(tool, args)
    command = command_of(args)
    filter_status = filter_sets_status(command)  # a status of 0 (or none) is the filter's: the text decides
    verdict = classify_report(output) if reports else classify_output(output, ledger.known_lines, filter_status)
    code = opening_exit_code(output)
    if code:
        ledger.failures_state_exit.add(tool)
    elif (code is None and verdict.failed and verdict.error_type != "timeout" and tool in ledger.failures_state_exit
          and not filter_status):
        verdict = OK  # this tool marks its failures, and did not: what it printed is what it was asked to print
    if verdict.error_type == "timeout" and instant(command):
        verdict = Verdict(True, "busy", verdict.error_line, BUSY_TERMINAL)  # it never ran: the terminal is busy, or gone
    if command is not None and not polls:
        verdict = _terminal_state(ledger, args, verdict)
    kind = action_kind(tool, args)
    no_match = kind == "inspect" and no_match_notice(output)
    if verdict.failed and (no_match or found_nothing(command, output)):
        verdict = OK  # a search that found nothing answered its question
    if ok is None:
        ok = not verdict.failed
        error_type = error_type or verdict.error_type
    elif ok:
        # the other layer says it worked: keep the line, not the failure ("test": failing tests
        # reported by a run that worked)
        error_type = None if verdict.failed else verdict.error_type
    error_line = verdict.error_line if verdict.error_line or ok else telling_line(output, ledger.known_lines, command)
    if not ok and error_type in (None, GENERIC_FAILURE):
        # the other layer said no more than "failed": the kind is what the output names (Claude
        # Code's "<tool_use_error>File does not exist.</tool_use_error>", or with no mark)
        error_type = verdict.error_type if verdict.failed else message_kind(error_line or "")
    if not ok and no_match:
        error_type = "not_found"  # a look that found nothing, though the scaffold counts the search failed
    if not ok and error_type == "not_found" and missing_program(error_line) in ledger.programs_seen:
        error_type = LOST_PROGRAM  # it ran here before: installed, and this call's shell does not find it
    signature, out_hash = canonical_signature(tool, args), output_hash(output, None if ok else error_type)
    if not streak_neutral(ok, kind, error_type, error_line):
        update_failure_record(data, tool, ok, error_type, output or "")
    if ok and output and not reports:  # a page quoting the error must not make the error's line a known one
        ledger.learn_lines(output)
    if ok and command:
        ledger.learn_programs(command)
    if ok and kind == "edit":
        ledger.learn_written(written_paths(args), added_lines(args))
    # a run through another copy of a file the task edited (read once an edit wrote a file)
    copy = ran_other_copy(command, output, ledger.written) if ledger.written and kind != "inspect" else None
    said = says_only(args, tool)
    identity = verdict.identity
    if identity and verdict.error_type == "timeout" and command:
        # what ran out of time, and how far it got: two commands timing out are two failures, and
        # so are two runs of one build that each got further (a hanging command prints the same);
        # the output by its hash, whose letters keep two outputs apart that differ in a number only
        identity += " " + " ".join(command.split()) + " " + out_hash
    return ledger.record(tool, ok, error_type, signature, out_hash, output or "", kind, error_line, short_command(args, tool),
                         identity=identity, shape=call_shape(tool, args, kind, signature, error_line),
                         said=said, leaves_code=kind == "edit" and leaves_code(args), waits=polls or only_sleeps(args), polls=polls,
                         prints=ok and said and prints_only(args),  # a call that prints is one that says
                         program=carries_program(args), ran=kind == "edit" and runs_what_it_writes(args), echo=command, copy=copy)


def record_blocked(data: dict, tool: str, args: Any, blocked: Any) -> ToolOutcome:
    """Record a call the breaker did not run as the failure it would have repeated, so the
    pattern it belongs to stays visible to the detectors."""
    kind = action_kind(tool, args)
    if not streak_neutral(False, kind, blocked.error_type, blocked.error_line):
        update_failure_record(data, tool, False, blocked.error_type or "execution", blocked.error_line or "")
    ledger = ledger_of(data)
    ledger.last_tool_turn = ledger.turn
    signature = canonical_signature(tool, args)
    outcome = ToolOutcome(ledger.turn, tool, False, blocked.error_type or "execution", signature,
                          blocked.output_hash, "blocked by the supervisor", False, kind,
                          blocked.error_line, blocked.error_signature, short_command(args, tool),
                          call_shape(tool, args, kind, signature, blocked.error_line), blocked=True)
    ledger.outcomes.append(outcome)
    return outcome


def start_task(data: dict) -> None:
    """A new task: the failure record starts afresh, like the ledger's outcomes."""
    record = data.get(FAILURES_KEY)
    if isinstance(record, dict):
        data[FAILURES_KEY] = {"consecutive": {}, "history": []}
