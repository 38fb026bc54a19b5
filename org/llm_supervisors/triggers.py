"""When each supervisor runs: task counters, milestone and abort triggers, urgency, convergence.

Counters live in ``<organizations>/supervisors/state.json`` (:class:`SupervisorsState`)
and are read and written under a lock, so the agent and ``a0org supervisors run`` can
update them at the same time, and they survive a restart.

A task whose PACE level reached ``contingent`` gave up its plan for another one: that is
the seed's *scope re-plan*, and it queues a ``replan`` run for the supervisors with
``on_replan`` (the design supervisor by default).

Urgency, the seed's pull-forward, mapped to Agent-Zero (see docs/supervisors-llm.md):

===================  ======  ================================================================
signal (weight key)  weight  an Agent-Zero task that ...
===================  ======  ================================================================
qa_failure           +0.3    had three or more failed tool calls
task_abort           +1.0    reached PACE emergency, or ended without a successful response
carry_forward_churn  +0.2    switched plans: its PACE level went to alternate or contingent
assessor_drift       +0.5    was steered by the radio check (the XO is the assessor here)
===================  ======  ================================================================

At or above the threshold (1.0) every enabled supervisor runs, whatever its counter;
urgency goes back to 0 when those runs start.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterable, TypeVar

from org.contracts.supervisor_outputs import SUPERVISOR_NAMES, SupervisorCounter, SupervisorsState, TaskDigest
from org.contracts.supervisors import SupervisorsConfig
from org.kernel import loading
from org.kernel.files import update_json_file
from org.kernel.log import logger, warn_once
from org.lazy_patterns import lazy_pattern

#: A task with this many failed tool calls counts as "tools failed repeatedly".
REPEATED_FAILURES = 3
#: PACE levels that mean the task switched to another plan.
CHURN_LEVELS = ("alternate", "contingent")
#: A converging supervisor's interval doubles up to this many times its configured value.
MAX_INTERVAL_MULTIPLIER = 8
#: Findings whose words overlap at least this much are the same finding, reworded.
SAME_FINDING = 0.6
#: Reasons in the order they name a run's trigger.
REASON_ORDER = ("abort", "replan", "milestone", "urgency", "periodic", "manual")
#: The PACE level at which a task has abandoned its plan for another: the seed's scope re-plan.
REPLAN_LEVEL = "contingent"

R = TypeVar("R")


@dataclass(frozen=True)
class Schedule:
    """One supervisor's triggers."""

    enabled: bool
    every_tasks: int | None
    on_milestone: bool
    on_abort: bool
    on_replan: bool = False


@dataclass(frozen=True)
class TriggerSettings:
    """Every supervisor's schedule and the urgency rule, from ``supervisors.yaml``."""

    schedules: dict[str, Schedule]
    weights: dict[str, float]
    threshold: float
    milestone_every_tasks: int | None = None

    def schedule(self, name: str) -> Schedule:
        return self.schedules.get(name) or Schedule(False, None, False, False, False)

    @classmethod
    def from_config(cls, config: SupervisorsConfig) -> "TriggerSettings":
        enabled = set(config.enabled_supervisors())
        schedules = {}
        for name in SUPERVISOR_NAMES:
            settings = config.settings_for(name)
            schedules[name] = Schedule(name in enabled, settings.every_tasks, settings.on_milestone, settings.on_abort,
                                       settings.on_replan)
        return cls(schedules, config.urgency.weights.model_dump(), config.urgency.threshold, config.milestone_every_tasks)


# --------------------------------------------------------------------------- urgency signals


def task_signals(digest: TaskDigest) -> list[str]:
    """The urgency signals one finished task raises."""
    signals = []
    if sum(not call.ok for call in digest.tools) >= REPEATED_FAILURES or len(digest.errors) >= REPEATED_FAILURES:
        signals.append("qa_failure")
    if digest.outcome == "aborted":
        signals.append("task_abort")
    if any(level in CHURN_LEVELS for level in digest.pace_levels):
        signals.append("carry_forward_churn")
    if digest.steering:
        signals.append("assessor_drift")
    return signals


# --------------------------------------------------------------------------- counting tasks


def note_task(state: SupervisorsState, settings: TriggerSettings, digest: TaskDigest) -> list[str]:
    """Count a finished task into ``state``; returns the urgency signals it raised."""
    if digest.outcome == "completed":
        state.tasks_completed += 1
        for counter in state.supervisors.values():
            counter.tasks_since_run += 1
        every = settings.milestone_every_tasks
        if every and state.tasks_completed % every == 0:
            mark(state, settings, "milestone")
    else:
        state.tasks_aborted += 1
        mark(state, settings, "abort")
    if REPLAN_LEVEL in digest.pace_levels:
        mark(state, settings, "replan")
    signals = task_signals(digest)
    for signal in signals:
        state.urgency = round(state.urgency + max(0.0, settings.weights.get(signal, 0.0)), 6)
        state.urgency_signals = (state.urgency_signals + [f"task {digest.task}: {signal}"])[-50:]
    return signals


def mark(state: SupervisorsState, settings: TriggerSettings, trigger: str) -> list[str]:
    """Queue a milestone, abort or re-plan for every supervisor that runs on it; returns their names."""
    marked = []
    for name in SUPERVISOR_NAMES:
        schedule = settings.schedule(name)
        wanted = {"milestone": schedule.on_milestone, "abort": schedule.on_abort, "replan": schedule.on_replan}.get(trigger, False)
        if schedule.enabled and wanted:
            counter = counter_of(state, name)
            if trigger not in counter.pending:
                counter.pending.append(trigger)  # type: ignore[arg-type]
            marked.append(name)
    return marked


def counter_of(state: SupervisorsState, name: str) -> SupervisorCounter:
    counter = state.supervisors.get(name)  # type: ignore[call-overload]
    if counter is None:
        counter = state.supervisors[name] = SupervisorCounter()  # type: ignore[index]
    return counter


def interval(settings: TriggerSettings, counter: SupervisorCounter, name: str) -> int | None:
    every = settings.schedule(name).every_tasks
    return every * counter.interval_multiplier if every else None


def due(state: SupervisorsState, settings: TriggerSettings) -> dict[str, list[str]]:
    """Supervisor -> the reasons it is due now (first reason first); only those that are due."""
    result: dict[str, list[str]] = {}
    urgent = state.urgency >= settings.threshold
    for name in SUPERVISOR_NAMES:
        schedule = settings.schedule(name)
        if not schedule.enabled:
            continue
        counter = counter_of(state, name)
        reasons = set(counter.pending)
        every = interval(settings, counter, name)
        if every and counter.tasks_since_run >= every:
            reasons.add("periodic")
        if urgent:
            reasons.add("urgency")
        if reasons:
            result[name] = sorted(reasons, key=REASON_ORDER.index)
    return result


def started(state: SupervisorsState, names: Iterable[str], now: datetime | None = None) -> None:
    """Runs started for ``names``: their counters restart; urgency is spent."""
    for name in names:
        counter = counter_of(state, name)
        counter.tasks_since_run = 0
        counter.pending = []
        counter.runs += 1
        counter.last_run = now or datetime.now(timezone.utc)
    state.urgency = 0.0
    state.urgency_signals = []


# --------------------------------------------------------------------------- convergence

_WORD_RE = lazy_pattern(r"[a-z0-9_]+")


def normalized(finding: str) -> str:
    return " ".join(_WORD_RE.findall(finding.lower()))[:300]


def _words(finding: str) -> frozenset[str]:
    return frozenset(finding.split())


def _same(a: frozenset[str], b: frozenset[str]) -> bool:
    if not a and not b:
        return True
    return len(a & b) / len(a | b) >= SAME_FINDING


def findings_change(previous: list[str], current: list[str]) -> int:
    """How many findings are new, plus how many of the previous ones are gone (rewording aside)."""
    old = [_words(normalized(f)) for f in previous]
    new = [_words(normalized(f)) for f in current]
    added = sum(not any(_same(n, o) for o in old) for n in new)
    gone = sum(not any(_same(o, n) for n in new) for o in old)
    return added + gone


def barely_changed(previous: list[str], current: list[str]) -> bool:
    """At most one finding, or a fifth of them, new or gone."""
    tolerance = max(1, math.ceil(0.2 * max(len(previous), len(current))))
    return findings_change(previous, current) <= tolerance


def converge(counter: SupervisorCounter, findings: list[str]) -> bool:
    """Record an applied run's findings; double the interval while they barely change from
    the previous applied run's, back to the configured one when they do change.

    Returns True when the supervisor is converging.
    """
    converging = counter.applied_runs > 0 and barely_changed(counter.last_findings, findings)
    counter.interval_multiplier = min(counter.interval_multiplier * 2, MAX_INTERVAL_MULTIPLIER) if converging else 1
    counter.last_findings = [" ".join(f.split())[:300] for f in findings][:60]  # as written: the prompt shows them back
    counter.applied_runs += 1
    return converging


# --------------------------------------------------------------------------- the file


class StateFile:
    """``state.json``, read-modify-written under a lock."""

    def __init__(self, path: Path):
        self.path = path

    def load(self) -> SupervisorsState:
        if not self.path.exists():
            return SupervisorsState()
        try:
            state = loading.load(SupervisorsState, self.path)
        except loading.DocumentError as exc:
            warn_once(f"{exc.problems[0]}; the supervisors' counters start again from zero", key=f"{self.path}:state")
            return SupervisorsState()
        for name in SUPERVISOR_NAMES:
            counter_of(state, name)
        return state

    def update(self, change: Callable[[SupervisorsState], R]) -> tuple[SupervisorsState, R]:
        """Apply ``change`` to the stored state and save it; returns the state and what ``change`` returned.

        A state that cannot be saved is logged and the counting goes on in memory.
        """
        results: list[R] = []

        def apply(state: SupervisorsState) -> SupervisorsState:
            results.append(change(state))
            return state

        state = update_json_file(self.path, lambda _: self.load(), apply, _dump, on_write_error=self._not_saved)
        return state, results[0]

    def _not_saved(self, exc: OSError) -> None:
        logger.warning("%s: cannot save the supervisors' counters: %s", self.path, exc.strerror or exc)


def _dump(state: SupervisorsState) -> str:
    return state.model_dump_json(indent=2) + "\n"
