"""Running the supervisors beside the agent, never in its way.

At a task's end (``monologue_end``) the task's digest is written, the counters are
updated and every supervisor that is due starts at once in a background thread of its
own with a time budget, which the model client gets as its deadline. At the next task's
start (``monologue_start``) the agent waits for runs still going, at most
``wait_seconds`` (and never past their budgets), with a line in Agent-Zero's UI saying
so; then it applies the results that are in. A result that arrives later is applied at
the following task's start (or end).

The parts: one run is :mod:`.runs`, the background thread :mod:`.worker`, applying and
recording a result :mod:`.results`, the prompt sections :mod:`.agent_prompt`; when a
supervisor is due is :mod:`.triggers`.

Without ``supervisors.yaml``, with ``enabled: false``, without a key, with the endpoint
unreachable or the budget spent, runs are skipped with one log line and the agent runs
exactly as it would without them.
"""


from __future__ import annotations

import math
import os
import threading
import time
from pathlib import Path
from typing import Any, Literal

from org.contracts.supervisor_outputs import SupervisorRun, SupervisorsState, TaskDigest
from org.contracts.supervisors import SupervisorsConfig
from org.kernel import events
from org.kernel.agent_zero import AgentPort
from org.kernel.log import warn_once
from org.kernel.paths import organizations_dir
from org.kernel.redact import remember_secret
from org.knowledge.locations import project_name
from org.llm.config import load_config

from . import agent_prompt, digests
from .records import RunLog
from .results import apply_outcome
from .runs import Files, Outcome, Request, execute, queue_for, store_for
from .supervisors import MAX_TASKS, MIN_TASKS
from .task_readings import TaskReadings
from .triggers import StateFile, TriggerSettings, counter_of, due, note_task, started
from .waiting import wait_ended, waiting_line
from .worker import ABANDON_AFTER_SECONDS, Flight, Worker


class SupervisorRunner:
    """The supervisors of one organizations folder: triggers, background runs, results."""

    def __init__(self, home: Path, project: str | None = None):
        self.files = Files(home, project)
        self.state = StateFile(self.files.state)
        self.log = RunLog(self.files.runs)
        self.digest_log = digests.DigestLog(self.files.digests)
        self.worker = Worker(lambda request, config: execute(request, config, self.files))
        self._config_key: tuple | None = None
        self._config: SupervisorsConfig | None = None
        #: seconds the last task start waited for runs (for tests and benchmarks)
        self.last_wait_seconds = 0.0

    # -- configuration (a stat per call; parsed again only when the file changed)

    def config(self) -> SupervisorsConfig | None:
        key = tuple(_stamp(path) for path in (self.files.config, self.files.project_config))
        if key == (None, None):
            self._config_key = self._config = None
            return None
        if key != self._config_key:
            self._config_key, self._config = key, load_config(self.files.config, self.files.project_config)
            _remember_keys(self._config)
        return self._config

    def active_config(self) -> SupervisorsConfig | None:
        config = self.config()
        if config is None:
            return None
        if not config.enabled_supervisors():
            warn_once(f"{self.files.config}: every supervisor is switched off (enabled: false); they are skipped",
                      key=f"{self.files.config}:disabled")
            return None
        return config


    # -- the agent's side

    def in_flight(self) -> list[Flight]:
        return self.worker.in_flight()

    def wait_for_runs(self, port: AgentPort | None = None) -> float:
        """Block until the runs going now are done, at most ``wait_seconds`` and never past their budgets.

        With the agent's ``port``, a line in Agent-Zero's UI says what the task waits for, and
        is updated when the wait ends. Returns the seconds waited.
        """
        config = self.config()
        limit = config.wait_seconds if config is not None else None
        began = time.monotonic()
        going = self.worker.running()
        if going:
            item = waiting_line(port, going, limit)
            self.worker.wait(limit)
            wait_ended(item, self.worker.running(), time.monotonic() - began)
        self.last_wait_seconds = time.monotonic() - began
        return self.last_wait_seconds

    def collect(self, port: AgentPort | None = None) -> list[SupervisorRun]:
        """Apply every run that has finished; give up on runs far past their deadline."""
        now = time.monotonic()
        finished, abandoned = self.worker.take_ended(now)
        if not finished and not abandoned:
            return []
        config = self.config()
        runs = []
        for flight in finished:
            outcome = flight.outcome or Outcome(flight.request, "failed", "the run's thread ended without a result")
            runs.append(self.apply(outcome, config, port))
        for flight in abandoned:
            reason = f"no answer {ABANDON_AFTER_SECONDS:.0f} s after its {flight.request.budget:.0f} s time budget; given up"
            runs.append(self.apply(Outcome(flight.request, "failed", reason, seconds=now - flight.request.clock), config, port))
        return runs

    def task_start(self, readings: TaskReadings, port: AgentPort | None) -> list[SupervisorRun]:
        """``monologue_start`` (after :meth:`wait_for_runs`): apply results, start the task's digest.

        Results that came in after the supervisors were switched off are recorded as skipped.
        """
        if readings.number != 0:
            return []
        runs = self.collect(port)
        if self.active_config() is not None:
            digests.begin(readings)
        return runs

    def task_end(self, readings: TaskReadings, port: AgentPort | None, persistent: Any = None) -> list[Request]:
        """``monologue_end``: record the task, count it, start the supervisors that are due
        (``persistent``: the task's ``params_persistent``, which holds the prompt sections it showed)."""
        if readings.number != 0:
            return []
        config = self.active_config()
        trace = digests.current(readings)
        if config is None or trace is None:
            return []
        self.collect(port)
        settings = TriggerSettings.from_config(config)
        busy = {flight.request.supervisor for flight in self.in_flight()}

        def count_and_pick(state: SupervisorsState):
            digest = digests.finish(readings, state.tasks_completed + state.tasks_aborted + 1)
            assert digest is not None
            signals = note_task(state, settings, digest)
            ready = {name: reasons for name, reasons in due(state, settings).items() if name not in busy}
            requests = [self._request(state, config, name, reasons, "agent") for name, reasons in ready.items()]
            if ready:
                started(state, ready)
            return digest, signals, requests

        _, (digest, signals, requests) = self.state.update(count_and_pick)
        self.digest_log.append(digest)
        self._note_task_in_store(config, digest, trace.final_response, signals, agent_prompt.shown_documents(persistent))
        for request in requests:
            self.worker.launch(request, config)
        return requests

    def _note_task_in_store(self, config: SupervisorsConfig, digest: TaskDigest, response: str, signals: list[str],
                            shown: str) -> None:
        """Directives marked done and aged; the provisional documents the task was shown one task closer to established."""
        try:
            done = queue_for(config, self.files).note_task_completed(response).addressed
            if done:
                events.record(self.files.home, *(("directive_done", {"directive": d, "project": self.files.project}) for d in done))
        except Exception as exc:
            warn_once(f"{self.files.directives}: the directive queue could not be updated: {exc}", key=f"{self.files.directives}:note")
        try:
            problems = digest.outcome == "aborted" or "qa_failure" in signals
            store = store_for(config, self.files)
            store.note_task_completed(problems, used={d.path for d in store.documents() if f"({d.path}, " in shown})
        except Exception as exc:
            warn_once(f"knowledge store: the finished task could not be counted: {exc}", key="knowledge:note_task")

    def _request(self, state: SupervisorsState, config: SupervisorsConfig, name: str, reasons: list[str],
                 source: Literal["agent", "cli"]) -> Request:
        counter = counter_of(state, name)
        return Request(
            supervisor=name, trigger=reasons[0], reasons=reasons, task=state.tasks_completed,
            recent=max(MIN_TASKS, min(MAX_TASKS, counter.tasks_since_run)), previous_findings=list(counter.last_findings),
            budget=config.settings_for(name).time_budget_seconds, source=source,
        )

    # -- the command line's side

    def run_now(self, names: list[str] | None = None, milestone: bool = False) -> list[SupervisorRun]:
        """Run supervisors now, one after the other, in this process (``a0org supervisors run``)."""
        config = self.active_config()
        if config is None:
            return []
        settings = TriggerSettings.from_config(config)
        enabled = config.enabled_supervisors()
        wanted = [n for n in enabled if names is None or n in names]

        def pick(state: SupervisorsState) -> list[Request]:
            chosen = [n for n in wanted if settings.schedule(n).on_milestone] if milestone else wanted
            pending = due(state, settings)
            requests = [self._request(state, config, name, _with_first("milestone" if milestone else "manual", pending.get(name, [])), "cli")
                        for name in chosen]
            if chosen:
                started(state, chosen)
            return requests

        _, requests = self.state.update(pick)
        flights = [self.worker.launch(request, config) for request in requests]  # all at once, as at a task's end
        for flight in flights:
            flight.done.wait(max(0.0, flight.request.deadline - time.monotonic()) + ABANDON_AFTER_SECONDS)
        self.worker.take_ended(math.inf)  # every one of them is out of the worker's hands now
        runs = []
        for flight in flights:  # in running order, whatever order they ended in
            outcome = flight.outcome if flight.outcome is not None else Outcome(
                flight.request, "failed", f"no answer {ABANDON_AFTER_SECONDS:.0f} s after its time budget; given up",
                seconds=time.monotonic() - flight.request.clock)
            runs.append(self.apply(outcome, config, None))
        return runs

    # -- results

    def apply(self, outcome: Outcome, config: SupervisorsConfig | None, port: AgentPort | None) -> SupervisorRun:
        """Apply one outcome (when valid and the config still allows it), record it, log one line."""
        return apply_outcome(outcome, config, port, files=self.files, state=self.state, log=self.log)

    # -- the prompt

    def prompt_sections(self, readings: TaskReadings, persistent: Any, extras: Any) -> None:
        """``message_loop_prompts_after``: put PROJECT KNOWLEDGE and ACTIVE DIRECTIVES into the
        prompt's ``extras`` (the task's ``extras_temporary``; ``persistent``: its ``params_persistent``)."""
        config = self.active_config()
        if config is None:
            return
        if readings.number == 0:
            digests.note_turn(readings)
        agent_prompt.add_sections(readings, persistent, extras, config, self.files)


def _remember_keys(config: SupervisorsConfig | None) -> None:
    """The supervisors' API keys are redacted from digests and the store whatever their shape."""
    for name in config.enabled_supervisors() if config is not None else ():
        variable = config.model_for(name).api_key_env
        if variable:
            remember_secret(os.environ.get(variable, "").strip())


def _with_first(first: str, reasons: list[str]) -> list[str]:
    return [first] + [r for r in reasons if r != first]


_runners: dict[tuple[Path, str | None], SupervisorRunner] = {}
_runners_lock = threading.Lock()


def _stamp(path: Path | None) -> tuple[int, int] | None:
    try:
        stat = path.stat() if path is not None else None
    except OSError:
        return None
    return (stat.st_mtime_ns, stat.st_size) if stat is not None else None


def runner_for(home: Path | None = None, project: str | None = None) -> SupervisorRunner:
    """The runner of an organizations folder (default: the current one) and Agent-Zero project, kept for the process."""
    key = (home or organizations_dir(), project_name(project))
    with _runners_lock:
        runner = _runners.get(key)
        if runner is None:
            runner = _runners[key] = SupervisorRunner(*key)
        return runner


def note_tool(readings: TaskReadings, tool_name: Any, args: Any, output: str, verdict: tuple[bool, str | None] | None,
              ends_task: bool) -> None:
    """``tool_execute_after``: one tool call into the running task's digest (only while a task is traced)."""
    ok, error_type = verdict if verdict is not None else (None, None)
    digests.note_tool(readings, tool_name if isinstance(tool_name, str) and tool_name else "unknown", args, output, ok, error_type, ends_task)
