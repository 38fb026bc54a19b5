"""Snapshot <-> SALUTE signals: the radio check's inputs, carried in the report.

A unit writes :func:`signals_from_snapshot` of the very snapshot its own radio check
read; the XO rebuilds it with :func:`snapshot_from_signals`. Both then run the same
detectors, so the XO reaches the unit's own verdict (a property test checks it).
"""

from __future__ import annotations

import hashlib
import json

from org.contracts.role import Doctrine, PacePlan
from org.contracts.salute import OutcomeSignal, SaluteSignals
from org.kernel.outcomes import LEDGER_LIMIT, ToolOutcome, failures_in_a_row, fix_attempt, installed, never_a_loop, worked_command
from org.supervisor.detectors import CYCLE_PERIODS, stalled_since
from org.supervisor.learnings import learnings_from
from org.supervisor.snapshot import Snapshot

_versions: dict[tuple[int, int], tuple[Doctrine, PacePlan | None, str]] = {}


def doctrine_version(doctrine: Doctrine, pace_plan: PacePlan | None) -> str:
    """A digest of the doctrine and PACE plan: equal numbers give an equal version."""
    key = (id(doctrine), id(pace_plan))
    cached = _versions.get(key)
    if cached is not None and cached[0] is doctrine and cached[1] is pace_plan:
        return cached[2]
    payload = {"doctrine": doctrine.model_dump(mode="json"), "pace_plan": pace_plan.model_dump(mode="json") if pace_plan else None}
    digest = hashlib.sha256(json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:16]
    if len(_versions) > 256:
        _versions.clear()
    _versions[key] = (doctrine, pace_plan, digest)
    return digest


def needed_outcomes(outcomes: tuple[ToolOutcome, ...], doctrine: Doctrine, stalled_since: int | None = None) -> tuple[ToolOutcome, ...]:
    """The outcomes the detectors read, for this doctrine, so that a report carries no more.

    Kept whole: the latest outcomes the repeat, oscillation, printing (calls that only print
    the agent's own text) and cascade detectors look at.
    From earlier in the task (the ledger keeps at most 64): the failures with the latest
    error (churn), the edits of the latest failed edit's shape (an edit retried), the latest
    edit's run of applications and the edit before it (an edit applied again), the runs of
    the latest call (reruns), those through the same other copy of an edited file as the latest
    (its steering counts them), and the failures in a row up to now with the call that worked
    before them (PACE steering counts them), and in a stall (``stalled_since``: the turn
    progress stopped) every outcome since, whose repeated calls its steering names. What lies
    between two such runs or failures matters only as "something was done, whether it changed
    files, tried a fix, worked, showed something new": each stretch of it is carried as at
    most five of its outcomes.
    """
    outcomes = outcomes[-LEDGER_LIMIT:]
    loop = doctrine.loop
    watched = [i for i, o in enumerate(outcomes) if not never_a_loop(o, loop.exempt_tools)]
    tail = max(loop.repeat_threshold, loop.no_tool_threshold, max(CYCLE_PERIODS) * loop.oscillation_cycles)
    start = max(0, len(outcomes) - doctrine.cascade.window)
    if watched:
        start = min(start, watched[-tail] if len(watched) >= tail else 0)
    if start == 0:
        return outcomes
    keep = set() if stalled_since is None else {i for i in range(start) if outcomes[i].turn > stalled_since}
    streak = len(outcomes) - failures_in_a_row(outcomes)
    if streak < start:  # the failures in a row reach back before the tail
        keep.update(range(max(0, streak - 1), start))  # and the call that worked before them, which ends the streak
    if not watched:  # only calls no loop is judged on: the rest reads the latest watched call
        return tuple(outcomes[i] for i in sorted(keep)) + outcomes[start:]
    last = outcomes[watched[-1]]
    if not last.ok and last.error_signature is not None:
        failures = [i for i in watched if i < start and not outcomes[i].ok and outcomes[i].error_signature == last.error_signature]
        keep.update(failures)
        if failures:  # whether a fix was tried between two of them (churn)
            keep.update(_one_per_stretch(outcomes, [i for i in watched if failures[0] < i < start], keep))
    if last.kind == "edit" and not last.ok:  # the same edit retried, whatever came between
        shape = last.shape or last.signature
        keep.update(i for i in watched if i < start and outcomes[i].kind == "edit" and (outcomes[i].shape or outcomes[i].signature) == shape)
    if last.kind == "edit" and last.ok:  # the same edit applied again, up to the other edit before it
        for i in reversed([i for i in watched if i < start and outcomes[i].kind == "edit"]):
            keep.add(i)
            if outcomes[i].signature != last.signature or not outcomes[i].ok:
                break
    if last.ran_copy:  # the runs that went through the same other copy (counted by its steering)
        keep.update(i for i in watched if i < start and outcomes[i].ran_copy == last.ran_copy and outcomes[i].edited_copy == last.edited_copy)
    if last.kind == "run" and last.command is not None:
        runs = [i for i in watched if i < start and outcomes[i].signature == last.signature]
        keep.update(runs)
        if runs:
            keep.update(_one_per_stretch(outcomes, [i for i in watched if runs[0] < i < start], keep))
    return tuple(outcomes[i] for i in sorted(keep)) + outcomes[start:]


def _one_per_stretch(outcomes: tuple[ToolOutcome, ...], between: list[int], kept: set[int]) -> list[int]:
    """For each run of consecutive indexes of ``between`` that are not ``kept``: its first
    edit (or first outcome), its first fix attempt, its first install, its first success (a
    command that worked without changing files, if one did: a detour, as the repeated-mistake
    detector takes it) and its first novel outcome, so that whether it changed files, tried a
    fix, installed, worked (and what worked) and showed something new are carried."""
    chosen: list[int] = []
    stretch: list[int] = []
    for i in between + [-1]:
        if i != -1 and i not in kept:
            stretch.append(i)
            continue
        if stretch:
            chosen.extend(sorted({next((j for j in stretch if outcomes[j].kind == "edit"), stretch[0]),
                                  next((j for j in stretch if fix_attempt(outcomes[j])), stretch[0]),
                                  next((j for j in stretch if installed(outcomes[j])), stretch[0]),
                                  next((j for j in stretch if worked_command(outcomes[j])),
                                       next((j for j in stretch if outcomes[j].ok), stretch[0])),
                                  next((j for j in stretch if outcomes[j].novel), stretch[0])}))
            stretch = []
    return chosen


def signals_from_snapshot(s: Snapshot) -> SaluteSignals:
    outcomes = needed_outcomes(s.outcomes, s.doctrine, stalled_since(s))
    return SaluteSignals(
        turn=s.turn,
        role_id=s.role_id,
        doctrine_version=doctrine_version(s.doctrine, s.pace_plan),
        doctrine=s.doctrine,
        pace_plan=s.pace_plan,
        pace_level=s.pace_level,
        turns_since_progress=s.turns_since_progress,
        turns_without_tool=s.turns_without_tool,
        progress_source=s.progress_source,
        current_step=_bounded(s.current_step),
        plan_name=_bounded(s.plan_name),
        bst_domain=_bounded(s.bst_domain),
        bst_confidence=s.bst_confidence,
        outcomes=[
            OutcomeSignal(
                turn=o.turn, tool=o.tool[:200], ok=o.ok, error_type=o.error_type[:64] if o.error_type else o.error_type,
                signature=o.signature, output_hash=o.output_hash, novel=o.novel,
                kind=o.kind, error_line=_bounded(o.error_line), error_signature=o.error_signature, command=_bounded(o.command),
                shape=o.shape, baseline=o.baseline, blocked=o.blocked, waits=o.waits, prints=o.prints, empty=o.empty,
                program=o.program, ran=o.ran, ran_copy=o.ran_copy, edited_copy=o.edited_copy,
            )
            for o in outcomes
        ],
        context_fill=s.context_fill,
        native_repeat_warning=s.native_repeat_warning,
        learnings=learnings_from(s.outcomes, _bounded(s.bst_domain)),
    )


def snapshot_from_signals(signals: SaluteSignals) -> Snapshot:
    return Snapshot(
        turn=signals.turn,
        role_id=signals.role_id,
        doctrine=signals.doctrine,
        pace_level=signals.pace_level,
        pace_plan=signals.pace_plan,
        turns_since_progress=signals.turns_since_progress,
        turns_without_tool=signals.turns_without_tool,
        progress_source=signals.progress_source,
        current_step=signals.current_step,
        plan_name=signals.plan_name,
        bst_domain=signals.bst_domain,
        bst_confidence=signals.bst_confidence,
        outcomes=tuple(signals.outcomes),  # read by the detectors as they are, like ToolOutcome
        context_fill=signals.context_fill,
        native_repeat_warning=signals.native_repeat_warning,
    )


def _bounded(text: str | None) -> str | None:
    return text[:200] if isinstance(text, str) else None
