"""The anomaly detectors: small pure functions from a snapshot to a finding.

Each reads the current task's outcomes (the ledger starts afresh with every task) and
takes its thresholds from the role's doctrine. An action's identity is what it did
(tool and normalised arguments, ``signature``); a result's identity is its error
signature when it has one, else its output (``ToolOutcome.result``). :data:`DETECTORS`
lists them; one finding per anomaly type is kept (repeat before oscillation), and the
order steering reaches the agent in is the radio check's.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections import Counter
from operator import attrgetter
from typing import AbstractSet, Callable, Iterable

from org.contracts import Finding
from org.kernel.classify import arguments_refused, checks_a_process, edit_refused, missing_program, moves_relative, reverts
from org.kernel.log import warn_once
from org.kernel.outcomes import ToolOutcome, failures_in_a_row, fix_attempt, installed, last_in_a_row, named, ran_nothing, worked_command
from org.supervisor.learnings import same_job

from .snapshot import Snapshot

Detector = Callable[[Snapshot], Finding | None]
_turn_of = attrgetter("turn")


#: the lengths of a cycle of calls the oscillation detector looks for (A-B-A-B, A-B-C-A-B-C …): up to
#: six, a round of looks around one failing call (open, search, go to, scroll, a `create` that fails, open)
CYCLE_PERIODS = (2, 3, 4, 5, 6)


def _key(o: ToolOutcome) -> tuple[str, str]:
    """Doing the same thing with the same result: same call, same error or same output."""
    return (o.signature, o.result)


def call_key(o: ToolOutcome) -> str:
    """An episode's evidence for one call: the very same call with the same result."""
    return f"call:{o.signature}|{o.result}"


def shape_key(o: ToolOutcome) -> str:
    """The same, with whitespace in the call ignored (an edit retried with only its indentation changed)."""
    return f"shape:{o.shape or o.signature}|{o.result}"


def reapplied_key(o: ToolOutcome) -> str:
    """An episode's evidence for one edit that went in again and again, with no other edit in between."""
    return f"reapplied:{o.signature}"


def repeats(o: ToolOutcome, episode: str) -> bool:
    """Whether an outcome is the action and result a loop episode is about."""
    return (call_key(o) in episode or shape_key(o) in episode
            or (o.kind == "edit" and o.ok and episode == reapplied_key(o)))


def _outcome(o: ToolOutcome) -> str:
    return o.error_line or ("the same error" if not o.ok else "the same output, no error")


def _changed_by_itself(outcomes: list[ToolOutcome], last: ToolOutcome) -> bool:
    """The call showed other output before, with no edit of the agent's between: what it looks at
    (a log, a process, a folder a job writes to) moves on its own time."""
    seen = None
    for o in outcomes:
        if o.kind == "edit":
            seen = None  # a change of the agent's own explains what the look shows next
        elif o.signature == last.signature:
            if seen is not None and o.output_hash != seen:
                return True
            seen = o.output_hash
    return False


def _loop(s: Snapshot, last: ToolOutcome, times: int, pattern: str, episode: str) -> Finding:
    # nothing to fix when it worked: the advice is to use what it gave, or that the edit is in,
    # or, for a look at something that moves by itself, to wait between looks, or, for a look
    # that found nothing, to look elsewhere
    if not last.worked:
        template = "loop_repeat"
    elif last.kind == "edit":
        template = "loop_same_edit"
    elif last.empty:
        template = "loop_found_nothing"  # no result to act on, nor one to finish with
    else:
        template = ("loop_same_look" if _changed_by_itself(s.outcomes, last)
                    else "loop_process_check" if checks_a_process(last.command) else "loop_same_result")
    evidence = {"pattern": pattern, "tool": last.tool, "action": named(last), "times": times, "outcome": _outcome(last),
                "error_type": last.error_type or "", "episode": episode, "subject": last.signature}
    failing = _failing_run(s.watched) if template == "loop_same_result" else None
    if failing is not None:  # "or finish if it is what you needed" would be wrong: nothing works yet
        template = "loop_same_result_unfinished"
        evidence.update(run=named(failing), failure=failing.error_line if failing.error_signature else "")
    return Finding(anomaly="loop", template=template, turn=s.turn, evidence=evidence)


def _failing_run(outcomes: list[ToolOutcome]) -> ToolOutcome | None:
    """The task's latest run, when it failed (a run the breaker blocked, or one that ran nothing,
    is none): a result looked at again after it is no reason to think the task done."""
    run = next((o for o in reversed(outcomes) if o.kind == "run" and not o.blocked and not ran_nothing(o)), None)
    return run if run is not None and not run.worked else None


def detect_repeat(s: Snapshot) -> Finding | None:
    """The same call with the same result N times in a row; or an edit that failed N times
    the same way, retried with only its whitespace changed, whatever was done in between; or
    the very same edit applied N times with no other edit in between (each time it went in
    again: a line range replaced by more lines grows the file, a `sed` finds nothing more), but
    not a revert (`git checkout a.py`), which undoes what changed since, a program run between
    too."""
    if s.native_repeat_warning:
        return None  # Agent-Zero already warned about this repetition this turn
    outcomes = s.watched
    n = s.doctrine.loop.repeat_threshold
    last = outcomes[-1] if outcomes else None
    if last is None or (last.ok and moves_relative(last.command)):
        return None  # `cd ..` that worked, again: each one goes somewhere else
    # a failing edit is one episode whichever way it is seen repeated (the very same call, or
    # retried with only its whitespace changed): said once, and not again after a resume
    edit_key = shape_key(last) if last.kind == "edit" and not last.ok else None
    if len(outcomes) >= n and len({_key(o) for o in outcomes[-n:]}) == 1:
        return _loop(s, last, n, "repeat", edit_key or call_key(last))
    if last.kind == "edit" and not last.ok:
        times = 0
        for o in reversed(outcomes):
            if o.kind == "edit" and (o.shape or o.signature) == (last.shape or last.signature):
                if o.result != last.result:
                    break  # the same edit failed differently, or worked: another episode
                times += 1
        if times >= n:
            return _loop(s, last, times, "retry", edit_key)
    if last.kind == "edit" and last.ok and not reverts(last.command):
        # (a revert done again undoes what changed since, also what a program run in between wrote)
        edits = [o for o in outcomes if o.kind == "edit"]
        times = next((i for i, o in enumerate(reversed(edits)) if o.signature != last.signature or not o.ok), len(edits))
        if times >= n:
            # the same result each time: it changed nothing (a range replaced by the same lines)
            same = len({o.result for o in edits[-times:]}) == 1
            return Finding(anomaly="loop", template="loop_same_edit" if same else "loop_reapplied", turn=s.turn, evidence={
                "pattern": "reapplied", "action": named(last), "times": times,
                "episode": reapplied_key(last), "subject": last.signature})
    return None


def detect_oscillation(s: Snapshot) -> Finding | None:
    """A cycle of two to six calls going round with the same results, A-B-A-B or A-B-C-A-B-C
    (identical calls, not look-alikes), at least one of them failing."""
    outcomes = s.watched
    cycles = s.doctrine.loop.oscillation_cycles
    latest = _key(outcomes[-1]) if outcomes else None
    for period in CYCLE_PERIODS:
        width = period * cycles
        if len(outcomes) < width:
            return None
        if latest != _key(outcomes[-1 - period]):
            continue  # not even the latest call came round
        window = [_key(o) for o in outcomes[-width:]]
        if len(set(window[:period])) < period or any(window[i] != window[i + period] for i in range(width - period)):
            continue
        cycle = outcomes[-period:]
        if all(o.worked for o in cycle):
            return None  # all work (a reproduction and a hand-off, a check and a view): going round is not stuck
        evidence = {"cycles": cycles, "count": period, "episode": " & ".join(sorted(call_key(o) for o in cycle)),
                    "subject": cycle[-1].signature}
        if period == 2:  # two calls keep the oscillation's wording
            tool_a, tool_b = named(cycle[0]), named(cycle[1])
            if tool_b == tool_a:  # one tool with arguments steering does not show (two searches for classes)
                tool_b += " with other arguments"
            evidence.update(pattern="oscillation", tool_a=tool_a, tool_b=tool_b)
        else:
            evidence.update(pattern="cycle", round=[named(o) for o in cycle])
        return Finding(anomaly="loop", template=f"loop_{evidence['pattern']}", turn=s.turn, evidence=evidence)
    return None


def detect_no_tool(s: Snapshot) -> Finding | None:
    """The model answered N times in a row without calling a tool, or its last N calls only
    printed text it wrote (farewell or status `echo`s, each one new), or ran nothing (sent to a
    terminal still running an earlier command, to a tool that is not there): nothing gets done."""
    limit = s.doctrine.loop.no_tool_threshold
    if s.native_repeat_warning:
        return None
    n = s.turns_without_tool
    if n is not None and n >= limit:
        return Finding(anomaly="loop", template="loop_no_tool", turn=s.turn, evidence={
            "pattern": "no_tool", "times": n, "episode": f"no_tool:{s.turn - n}"})
    # an episode of printing or of calls that ran nothing is named by the turn of its first call,
    # so the polls and waits between them do not make the same stretch a new one
    outcomes = s.watched
    printed = last_in_a_row(outcomes, lambda o: o.prints)
    if printed >= limit:
        last = outcomes[-1]
        return Finding(anomaly="loop", template="loop_printing", turn=s.turn, evidence={
            "pattern": "printing", "times": printed, "action": named(last), "episode": f"no_tool:{outcomes[-printed].turn}"})
    refused = s.not_run_in_a_row
    if refused >= limit:
        last = outcomes[-1]
        evidence = {"pattern": "not_run", "times": refused, "action": named(last), "outcome": _outcome(last),
                    "error_type": last.error_type or "", "episode": f"not_run:{outcomes[-refused].turn}"}
        if last.error_signature:  # a churn about the same cause (a terminal still busy) said what this says
            evidence["said_as"] = f"churn:{last.error_signature}"
        return Finding(anomaly="loop", template="loop_not_run", turn=s.turn, evidence=evidence)
    return None


def detect_churn(s: Snapshot) -> Finding | None:
    """The same error coming back N times in the task while the calls change, each time
    after a fix was tried: the fixes are not reaching the cause (a patch corrupting a file
    again, edits breaking the code again, installs that do not reach the interpreter that
    runs). An error that was there before the agent's first change to the code is not one its
    changes caused: it churns only when installs or builds that worked keep leaving it. An
    edit the editor refused changed nothing (its retries are the loop detector's), and a call
    the breaker blocked did not run: no error came back; nor did a call the tool refused for
    its arguments, a slip of that call alone, put right in the next (a terminal still busy
    stays busy across other work until waited on: that does come back). Calls in a row that
    ran nothing are the no-tool loop's to say, once. Its occurrences in one turn (a reply's
    parallel calls) are one."""
    outcomes = s.watched
    last = outcomes[-1] if outcomes else None
    if (last is None or last.ok or last.blocked or last.error_signature is None or edit_refused(last.error_line)
            or arguments_refused(last.error_line)):
        return None  # only failures named by their own line churn; failing tests reported by a working run, refused edits and calls refused for their arguments do not
    if s.not_run_in_a_row >= s.doctrine.loop.no_tool_threshold:
        return None
    error = last.error_signature
    same = _this_episode(outcomes, _once_a_turn(outcomes, [i for i, o in enumerate(outcomes)
                                                           if o.error_signature == error and not o.ok and not o.blocked]))
    if last.baseline:
        # there before the agent changed any code: its edits did not cause it, but installs and
        # builds that worked and left it as it was are fixes missing their cause
        back = [b for a, b in zip(same, same[1:]) if any(installed(o) for o in outcomes[a + 1:b])]
        changed = True
    else:
        # it came back after a fix was tried (an edit, an install or build, also in the failing
        # call itself), or with nothing that worked in between (blocked on it); occurrences
        # apart with only looks, reruns or a detour that worked between them are one. A program
        # that is not installed is tried to be fixed by installs only: no edit brings it.
        tried = installed if missing_program(last.error_line) else fix_attempt
        back, changed = [], False
        for a, b in zip(same, same[1:]):
            fixed = any(tried(o) for o in outcomes[a + 1:b + 1])
            if fixed or not any(o.ok for o in outcomes[a + 1:b]):
                back.append(b)
                changed = changed or fixed
    times = 1 + len(back)
    if times < s.doctrine.loop.churn_threshold and not last.baseline:
        return _detour(s, outcomes, same, len(_actions(outcomes, same)))
    # the actions of the times counted, so "N times across M actions" has no more actions than times
    calls = _actions(outcomes, (same[0], *back))
    if times < s.doctrine.loop.churn_threshold or len(calls) < 2:
        return None
    # with no fix tried between the times counted (only failures: the agent's changes never ran),
    # no change of its own missed the cause
    return Finding(anomaly="churn", template="churn" if changed else "churn_unchanged", turn=s.turn, evidence={
        "error": last.error_line or last.error_type or "the same error", "times": times, "calls": len(calls),
        "action": named(last),  # for the advice: what was sent, when the shell could not take it as a command
        "error_type": last.error_type or "", "episode": f"churn:{last.error_signature}", "subject": last.signature})


def _once_a_turn(outcomes: list, indexes: list[int]) -> list[int]:
    """Of occurrences in one turn, the last: calls a scaffold sent together in one reply (in
    parallel) all failed before the model saw any, so the error came back in no later one."""
    return [i for i, j in zip(indexes, indexes[1:] + [None]) if j is None or outcomes[i].turn != outcomes[j].turn]


#: new results between two occurrences of an error that make them two episodes: the task was worked on elsewhere meanwhile
CHURN_APART = 5


def _this_episode(outcomes: list, same: list[int]) -> list[int]:
    """The occurrences of an error in its current episode. An episode ends when the error was
    fixed: a run that had failed with it ran again and worked (its coming back later, in a script
    or test written since, is another problem, not the same fix missing; an editor's call that
    worked says nothing of the program). It ends too when the task moved on meanwhile:
    CHURN_APART new results between two occurrences (the work in between was on something else,
    such as the task's fix written while a build error waited, no fix that missed this error)."""
    start, failed = 0, set()  # the runs that failed with it in the episode so far
    for k, (a, b) in enumerate(zip(same, same[1:])):
        if outcomes[a].kind == "run":
            failed.add(outcomes[a].signature)
        between = outcomes[a + 1:b]
        if any(o.worked and o.signature in failed for o in between) or sum(o.novel for o in between) >= CHURN_APART:
            start, failed = k + 1, set()
    return same[start:]


def _actions(outcomes: list, indexes: Iterable[int]) -> set[str]:
    """The different actions among some outcomes: an edit retried with only its whitespace changed is one."""
    return {outcomes[i].shape or outcomes[i].signature for i in indexes}


def _detour(s: Snapshot, outcomes: list, same: list[int], calls: int) -> Finding | None:
    """The same mistake made again and again, each time routed around: the error came back
    N times from different calls, and after each of the earlier ones the first run that
    worked did the same job another way (`python -m pytest` failing, `pytest` working, and
    again)."""
    threshold = s.doctrine.loop.churn_threshold
    if len(same) not in (threshold, 2 * threshold) or calls < 2:
        return None  # said when the pattern is plain, and once more if it goes on as long again:
        # each detour that worked moves the task, which ends an episode; the mistake is the same
    worked = []
    for a, b in zip(same, same[1:]):
        failed = outcomes[a].command
        detour = next((o for o in outcomes[a + 1:b] if worked_command(o)), None)
        if failed is None or detour is None or not same_job(failed, detour.command):
            return None
        worked.append(detour)
    last = outcomes[same[-1]]
    return Finding(anomaly="churn", template="churn_detour", turn=s.turn, evidence={
        "action": named(last), "error": last.error_line or last.error_type or "the same error", "times": len(same),
        "working": named(worked[-1]), "episode": f"churn:{last.error_signature}", "subject": last.signature})


def detect_rerun(s: Snapshot) -> Finding | None:
    """The same run giving the same output again, N times, with other work in between: the
    changes made in between have no effect on it (or, with only looks in between, a failing
    run is being repeated). Looks do not reset the count; a changed output does. A run that
    works needs twice as many: its output is often meant to stay the same. A call the breaker
    blocked was not run, nor was one sent to a busy terminal or refused for its arguments."""
    outcomes = s.watched
    last = outcomes[-1] if outcomes else None
    if last is None or last.blocked or last.kind != "run" or last.command is None or ran_nothing(last):
        return None  # only a command that runs something can show whether changes took effect
    signature = last.signature
    runs = [i for i, o in enumerate(outcomes) if o.signature == signature and not o.blocked]
    failing = not last.worked
    reruns, apart, edited = 0, False, False
    for previous, current in zip(runs, runs[1:]):
        between = [o for o in outcomes[previous + 1:current] if not o.blocked]  # a blocked call was no work in between
        if outcomes[previous].output_hash != outcomes[current].output_hash or (not failing and any(o.novel for o in between)):
            # the output changed, or (for a run that works) something new showed in between,
            # such as the file it writes: the work in between did something
            reruns, apart, edited = 0, False, False
            continue
        reruns += 1
        apart = apart or bool(between)
        edited = edited or any(o.kind == "edit" for o in between)
    limit = s.doctrine.loop.rerun_threshold * (1 if failing else 2)
    if reruns < limit or not apart or not (edited or failing):
        return None
    evidence = {"action": named(last), "times": reruns, "outcome": _outcome(last), "error_type": last.error_type or "",
                "episode": f"rerun:{last.signature}|{last.output_hash}", "subject": last.signature}
    if not edited:
        evidence["said_as"] = call_key(last)  # with nothing changed in between it says what a loop steering said
    return Finding(anomaly="rerun", template="rerun" if edited else "rerun_unchanged", turn=s.turn, evidence=evidence)


def detect_other_copy(s: Snapshot) -> Finding | None:
    """A run whose traceback went through another copy of a file the agent edited (`/testbed/…`
    while it edits `/workspace/…`, an installed package while it edits the checkout): its edits
    there never run. Said at the first such run, as it is proof, not a count; and once more when
    ``loop.rerun_threshold`` more runs have gone through that copy (the agent did not hear it:
    agents in real sessions put the unchanged result down to caching)."""
    outcomes = s.watched
    last = outcomes[-1] if outcomes else None
    if last is None or not last.ran_copy or not last.edited_copy:
        return None
    times = sum(o.ran_copy == last.ran_copy and o.edited_copy == last.edited_copy for o in outcomes)
    again = times > s.doctrine.loop.rerun_threshold
    return Finding(anomaly="rerun", template="rerun_other_copy_again" if again else "rerun_other_copy", turn=s.turn, evidence={
        "action": named(last), "copy": last.ran_copy, "edited": last.edited_copy, "outcome": _outcome(last), "times": times,
        "error_type": last.error_type or "", "subject": last.signature,
        "episode": f"copy:{last.edited_copy}|{last.ran_copy}" + (":again" if again else "")})


def stalled_since(s: Snapshot) -> int | None:
    """The turn progress stopped, when that is more turns ago, or more looks that found nothing
    ago, than the doctrine allows; else None."""
    stall = _stall(s)
    return None if stall is None else stall[0]


def _stall(s: Snapshot) -> tuple[int, list[ToolOutcome], int] | None:
    """A stall's turn progress stopped, its outcomes since, and the looks among them that found
    nothing (those of watched calls: a poll of a running process answering nothing is the
    program at work). The doctrine's limit is on the turns that took such looks: looks sent
    together in one reply (a scaffold's parallel calls) were all made before any was seen."""
    if s.turns_since_progress is None:
        return None
    since = s.turn - s.turns_since_progress
    stretch = _after(s.watched, since)
    empty = [o.turn for o in stretch if o.empty]
    if s.turns_since_progress > s.doctrine.max_turns_without_progress or len(set(empty)) > s.doctrine.max_looks_finding_nothing:
        return since, stretch, len(empty)
    return None


#: edits that went in since a stall's last run, from which its steering says to run them
EDITS_NOT_RUN = 3


def detect_stall(s: Snapshot) -> Finding | None:
    """More turns without progress, or more looks that found nothing since it stopped, than the
    doctrine allows. On the first turn over the limit, when its call was an edit that went in,
    the stall waits a turn: the run after it shows whether the fix moved the task."""
    stall = _stall(s)
    if stall is None or (_fix_going_in(s) and s.turns_since_progress == s.doctrine.max_turns_without_progress + 1):
        return None
    since, stretch, found_nothing = stall
    evidence = {
        "turns": s.turns_since_progress, "limit": s.doctrine.max_turns_without_progress, "step": s.current_step, "plan": s.plan_name,
        "domain": s.bst_domain, "source": s.progress_source, "since": since, "episode": f"stall:{since}", "found_nothing": found_nothing}
    template, edits = "stall", _edits_not_run(stretch)
    if edits >= EDITS_NOT_RUN:  # the advice is to run what they are for, not to change approach
        template, evidence["edits"] = "stall_editing", edits
    return Finding(anomaly="stall", template=template, turn=s.turn, evidence=evidence)


def word_stall(s: Snapshot, finding: Finding) -> None:
    """What a stall's steering says its turns went round: the calls made more than once in them,
    and those that repeat calls made before them."""
    stretch = _after(s.watched, finding.evidence["since"])
    repeated, named_calls = repeated_calls(stretch)
    finding.evidence.update(repeated=repeated, made_before=made_before(s.watched, len(stretch), named_calls))


def _edits_not_run(stretch: list[ToolOutcome]) -> int:
    """The edits that went in after the stretch's last run: changes nothing has shown at work yet
    (a script written and run in one call ran; a revert, `git checkout -- a.py`, puts files back
    and is no change to run)."""
    edits = 0
    for o in reversed(stretch):
        if (o.kind == "run" or o.ran) and not o.blocked:
            break
        edits += o.kind == "edit" and o.ok and not reverts(o.command)
    return edits


def _after(outcomes: list[ToolOutcome], turn: int) -> list[ToolOutcome]:
    """The outcomes after ``turn`` (turns only grow along a task's outcomes)."""
    return outcomes[bisect_right(outcomes, turn, key=_turn_of):]


def made_before(watched: list[ToolOutcome], last: int, apart: AbstractSet[str] = frozenset()) -> int:
    """How many of the ``last`` calls repeat one made before them with the same result, but for
    the calls whose signatures are ``apart`` (a stall names them with their counts): a round of
    reads longer than the stall itself (14 views and greps, then the same 14 again) has no call
    twice in the stall's turns, and every one of them made before."""
    start = len(watched) - last
    if not last:
        return 0
    seen = {(o.signature, o.error_signature or o.output_hash) for o in watched[:start]}
    again = 0
    for o in watched[start:]:
        key = (o.signature, o.error_signature or o.output_hash)  # _key, inline: read at every turn of a stall
        again += key in seen and o.signature not in apart
        seen.add(key)
    return again


def repeated_calls(stretch: list[ToolOutcome], most: int = 2) -> tuple[tuple[tuple[str, int], ...], set[str]]:
    """The calls made more than once in a stall's outcomes, each as steering names it with its
    count, the most frequent first (``most`` of them; the first made first among as frequent):
    what the stall's turns went on; and the signatures of the calls they count. Calls one name
    stands for are counted together (ten different edits of one file, named by the editor and
    the file: counted apart, "you ran `str_replace_editor str_replace …/repro.py` twice" would
    deny the other eight); but a name cut short (a long command) stands for that very call
    only: three different scripts that open alike are three calls, not one made three times."""
    # a call as counted: its name, and for a name cut short, its signature too
    keys = [(name, o.signature) if name.endswith("…`") else name for o, name in zip(stretch, map(named, stretch))]
    calls: Counter = Counter(keys)
    top = sorted((call for call, times in calls.items() if times > 1), key=calls.__getitem__, reverse=True)[:most]
    if not top:
        return (), set()
    counted = set(top)
    signatures = {o.signature for o, key in zip(stretch, keys) if key in counted}
    return tuple((call[0] if isinstance(call, tuple) else call, calls[call]) for call in top), signatures


#: the context's fill grown by this many points is news; a fill that holds (Agent-Zero compressing
#: the history as the task goes on) is not
CONTEXT_BAND = 5
CONTEXT_LEVELS = ("warning", "critical")


def detect_context(s: Snapshot) -> Finding | None:
    """The context's fill over a threshold. Its episode is the level and the band of the fill
    (``context:critical:95``): said once while it holds, again once it has grown a band."""
    if s.context_fill is None or not math.isfinite(s.context_fill):
        return None  # no share of a window is infinite; such a reading says nothing
    thresholds = s.doctrine.context_thresholds
    percent = round(s.context_fill * 100)
    band = min(percent, 100) // CONTEXT_BAND * CONTEXT_BAND
    if s.context_fill >= thresholds.critical:
        return Finding(anomaly="context", severity="critical", template="context_critical", turn=s.turn,
                       evidence={"percent": percent, "episode": f"context:critical:{band}"})
    if s.context_fill >= thresholds.warning:
        return Finding(anomaly="context", template="context_warning", turn=s.turn,
                       evidence={"percent": percent, "episode": f"context:warning:{band}"})
    return None


def context_rank(episode: object) -> tuple[int, int] | None:
    """How high a context episode is (its level, then its band); None for any other episode."""
    parts = episode.split(":") if isinstance(episode, str) else ()
    if len(parts) != 3 or parts[0] != "context" or parts[1] not in CONTEXT_LEVELS or not parts[2].isdigit():
        return None
    return CONTEXT_LEVELS.index(parts[1]), int(parts[2])


def detect_cascade(s: Snapshot) -> Finding | None:
    """Different tools failing back to back: the environment or an assumption is wrong. A look
    that found nothing (a search with no match, a file not there) is an answer, no tool failing:
    it neither counts nor ends the streak, as in the failure streak PACE escalates on."""
    cascade = s.doctrine.cascade
    streak: list[ToolOutcome] = []
    for outcome in reversed(s.outcomes[-cascade.window:]):
        if outcome.ok or ran_nothing(outcome):
            break  # a call that ran nothing (a tool that is not there) is no tool failing
        if not outcome.empty:
            streak.append(outcome)
    tools = list(dict.fromkeys(o.tool for o in reversed(streak)))
    if len(tools) < cascade.distinct_tools:
        return None
    return Finding(anomaly="cascade", severity="critical", template="cascade", turn=s.turn, evidence={
        "tools": tools, "count": len(tools), "episode": "cascade:" + ",".join(sorted(tools))})


#: PACE emergency is not steered while the progress signal moved within this many turns: a fix being applied
PACE_QUIET_AFTER_PROGRESS = 2


def _fix_going_in(s: Snapshot) -> bool:
    """The latest call was an edit that applied."""
    last = s.outcomes[-1] if s.outcomes else None
    return last is not None and last.kind == "edit" and last.ok


def _moving(s: Snapshot) -> bool:
    """Progress within the last turns, or a fix going in."""
    return (s.turns_since_progress is not None and s.turns_since_progress <= PACE_QUIET_AFTER_PROGRESS) or _fix_going_in(s)


def detect_pace(s: Snapshot) -> Finding | None:
    """The PACE level the dispatcher set; said only while the task is not visibly moving: not
    while there was progress within the last turns or an edit just applied ("stop, this is
    unrecoverable" is wrong while a working fix goes in, and "change approach" while each
    failure shows something new: the next bug of a program being debugged, a build that gets
    further each time it runs out of time), nor contingent on a turn Agent-Zero itself warned
    about a message sent again."""
    if s.pace_level not in ("contingent", "emergency"):
        return None
    if _moving(s):
        return None
    if s.pace_level == "contingent" and s.native_repeat_warning:
        return None  # Agent-Zero just told it to do something else: "change approach" would say it twice
    description = getattr(s.pace_plan, s.pace_level).description if s.pace_plan else ""
    # one episode per level for as long as the task does not move
    since = s.turn - s.turns_since_progress if s.turns_since_progress is not None else None
    episode = f"pace:{s.pace_level}:{'' if since is None else since}"
    evidence = {"level": s.pace_level, "description": description, **_pace_cause(s), "episode": episode}
    if since is not None:
        evidence["since"] = since
    if s.pace_level == "emergency":
        return Finding(anomaly="pace", severity="emergency", template="pace_emergency", turn=s.turn, evidence=evidence,
                       cooldown_exempt=True)
    return Finding(anomaly="pace", severity="critical", template="pace_contingent", turn=s.turn, evidence=evidence)


def _pace_cause(s: Snapshot) -> dict:
    """What brought the level, for PACE steering to say: the failed calls in a row and the
    latest one's line (with its call and error type, for the advice when its cause is not in
    the code), and the turns without progress."""
    failed = failures_in_a_row(s.outcomes)
    cause = {"failed": failed, "latest": "", "stuck": s.turns_since_progress or 0}
    if failed:
        last = s.outcomes[-1]
        cause.update(latest=last.error_line or "", latest_action=named(last), error_type=last.error_type or "")
    return cause


#: Priority order: the order the steering of one check reaches the agent in.
DETECTORS: dict[str, Detector] = {
    "pace": detect_pace,
    "context": detect_context,
    "cascade": detect_cascade,
    "repeat": detect_repeat,
    "oscillation": detect_oscillation,
    "no_tool": detect_no_tool,
    "churn": detect_churn,
    "other_copy": detect_other_copy,  # before the reruns' count: the same anomaly, on proof
    "rerun": detect_rerun,
    "stall": detect_stall,
}


#: What a finding's steering says beyond the evidence that decides whether it is said, worked out
#: only for the findings said (a stall is found at every turn it lasts, and said once or twice).
WORDING: dict[str, Callable[[Snapshot, Finding], None]] = {"stall": word_stall}


def word(snapshot: Snapshot, findings: Iterable[Finding | None]) -> None:
    """Add to these findings what their steering says (:data:`WORDING`); one that fails is logged
    once and its steering says less."""
    for finding in findings:
        wording = WORDING.get(finding.anomaly) if finding is not None else None
        if wording is None:
            continue
        try:
            wording(snapshot, finding)
        except Exception as exc:
            warn_once(f"wording of {finding.anomaly} failed ({type(exc).__name__}: {exc}); its steering says less", key=f"wording {finding.anomaly}")


def run_detectors(snapshot: Snapshot) -> list[Finding]:
    """Every detector's finding; one that fails is logged once and the others still run."""
    findings: list[Finding] = []
    found: set[str] = set()
    for name, detector in DETECTORS.items():
        try:
            finding = detector(snapshot)
        except Exception as exc:
            warn_once(f"detector {name} failed ({type(exc).__name__}: {exc}); the other detectors still run", key=f"detector {name}")
            continue
        if finding is not None and finding.anomaly not in found:
            found.add(finding.anomaly)
            findings.append(finding)  # one finding per anomaly type: repeat before oscillation
    return findings

