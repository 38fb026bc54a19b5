"""Running the supervisors beside the agent, never in its way.

At a task's end (``monologue_end``) the task's digest is written, the counters are
updated and every supervisor that is due starts in a background thread with a time
budget, which the model client gets as its deadline. At the next task's start
(``monologue_start``) the agent waits for runs still going, but at most for the rest of
their budgets; then it applies the results that are in. A result that arrives later is
applied at the following task's start (or end). Applying is all or nothing: every
document is checked against the supervisor's part of the store before anything is
written, and a write that fails puts back what was written before it.

Without ``supervisors.yaml``, with ``enabled: false``, without a key, with the endpoint
unreachable or the budget spent, runs are skipped with one log line and the agent runs
exactly as it would without them.
"""

from __future__ import annotations

import os
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from org.contracts.supervisor_outputs import SupervisorRun, SupervisorsState, TaskDigest
from org.contracts.supervisors import SupervisorsConfig
from org.kernel.agent_zero import agent_number, read_attr, ui_log
from org.kernel.files import atomic_write_text
from org.kernel.layers import read_bst, read_htn
from org.kernel.log import logger, warn_once
from org.kernel.paths import organizations_dir
from org.kernel.redact import remember_secret
from org.knowledge.directives import DirectiveQueue
from org.knowledge.selection import project_knowledge_section
from org.knowledge.store import KnowledgeStore, OwnershipError, check_owner
from org.llm.answer import ModelOutputInvalid
from org.llm.budget import UsageLedger
from org.llm.client import ChatClient
from org.llm.config import CONFIG_NAME, load_config
from org.llm.transport import ModelUnavailable

from . import digests
from .records import LABELS, RunLog, outcome_line
from .supervisors import MAX_TASKS, MIN_TASKS, SPECS, RunInput, build_messages, changes_from, read_touched_files, split_documents
from .triggers import StateFile, TriggerSettings, converge, counter_of, due, interval, note_task, started

FOLDER = "supervisors"
#: Extras keys of the two prompt sections (Agent-Zero renders extras as a final [EXTRAS] message).
KNOWLEDGE_EXTRA = "org_knowledge"
DIRECTIVES_EXTRA = "org_directives"
#: Per task, in ``loop_data.params_persistent``: the sections are built once a task.
SECTIONS_KEY = "_org_knowledge_sections"
#: A run still going this long after its deadline is given up (its thread is left to end on its own).
ABANDON_AFTER_SECONDS = 60.0

Status = Literal["ok", "skipped", "discarded", "failed"]


class Files:
    """Where the supervisors keep their files in one organizations folder."""

    def __init__(self, home: Path):
        self.home = home
        self.folder = home / FOLDER
        self.config = home / CONFIG_NAME
        self.state = self.folder / "state.json"
        self.runs = self.folder / "runs.jsonl"
        self.digests = self.folder / "digests.jsonl"
        self.directives = self.folder / "directives.json"


@dataclass
class Request:
    supervisor: str
    trigger: str
    reasons: list[str]
    task: int
    recent: int
    previous_findings: list[str]
    budget: float
    source: Literal["agent", "cli"] = "agent"
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    started: datetime = field(default_factory=lambda: datetime.now(timezone.utc))
    clock: float = field(default_factory=time.monotonic)

    @property
    def deadline(self) -> float:
        return self.clock + self.budget

    def restart_clock(self) -> None:
        self.started, self.clock = datetime.now(timezone.utc), time.monotonic()


@dataclass
class Outcome:
    """What came back from the model, before anything is applied."""

    request: Request
    status: Status
    reason: str = ""
    parsed: BaseModel | None = None
    run_input: RunInput | None = None
    model: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    attempts: int = 0
    seconds: float = 0.0


@dataclass
class Flight:
    """A run from the moment it is due until its result is applied."""

    request: Request
    config: SupervisorsConfig
    running: bool = False
    done: threading.Event = field(default_factory=threading.Event)
    outcome: Outcome | None = None


def store_for(config: SupervisorsConfig, files: Files) -> KnowledgeStore:
    return KnowledgeStore(config.knowledge_root(files.home), establish_after_tasks=config.knowledge.establish_after_tasks)


def queue_for(config: SupervisorsConfig, files: Files) -> DirectiveQueue:
    return DirectiveQueue(files.directives, cleanup_max_age_tasks=config.directives.cleanup_max_age_tasks,
                          cleanup_cap=config.directives.cleanup_cap)


# --------------------------------------------------------------------------- one run


def execute(request: Request, config: SupervisorsConfig, files: Files) -> Outcome:
    """Ask the supervisor's model (blocking, bounded by the request's deadline). Never raises."""
    name = request.supervisor
    client: ChatClient | None = None
    run_input: RunInput | None = None
    try:
        spec = SPECS[name]
        store = store_for(config, files)
        own, other = split_documents(spec, store.documents())
        recent = digests.DigestLog(files.digests).recent(request.recent)
        pending = [f"{d.id} [{d.priority} {d.type}, from {d.source}]: {d.description}" for d in queue_for(config, files).pending()]
        touched = read_touched_files(recent, skip_under=(files.home.resolve(), store.root.resolve())) if spec.reads_files else []
        run_input = RunInput(recent, own, other, pending, touched, request.previous_findings)
        client = ChatClient(config.model_for(name), UsageLedger.for_organizations(files.home), supervisor=name)
        result = client.complete(build_messages(spec, run_input), schema=spec.schema, deadline=request.deadline)
        return _outcome(request, client, run_input, "ok", parsed=result.parsed, model=result.model, attempts=result.attempts)
    except ModelUnavailable as exc:
        return _outcome(request, client, run_input, "skipped", exc.reason)
    except ModelOutputInvalid as exc:
        return _outcome(request, client, run_input, "discarded", f"invalid answer: {exc.reason}")
    except Exception as exc:  # a bug or a broken file must not end in the agent's loop
        logger.debug("supervisor %s failed", name, exc_info=True)
        return _outcome(request, client, run_input, "failed", f"{type(exc).__name__}: {exc}")


def _outcome(request: Request, client: ChatClient | None, run_input: RunInput | None, status: Status, reason: str = "",
             *, parsed: BaseModel | None = None, model: str = "", attempts: int = 0) -> Outcome:
    outcome = Outcome(request, status, reason, parsed, run_input, model, seconds=round(time.monotonic() - request.clock, 3))
    if client is not None:  # every answered call was paid for, usable or not
        outcome.model = model or client.config.model
        outcome.prompt_tokens, outcome.completion_tokens = client.run_prompt_tokens, client.run_completion_tokens
        outcome.cost_usd, outcome.attempts = round(client.run_cost_usd, 8), attempts or client.run_calls
    return outcome


# --------------------------------------------------------------------------- applying a result


class FileSnapshot:
    """Files as they were, to put back when applying fails half way."""

    def __init__(self, paths: list[Path], folders: list[Path]):
        self.files = {path: path.read_bytes() if path.is_file() else None for path in dict.fromkeys(paths)}
        self.folders = {folder: set(folder.glob("*")) if folder.is_dir() else set() for folder in folders}

    def restore(self) -> None:
        for path, content in self.files.items():
            try:
                if content is None:
                    path.unlink(missing_ok=True)
                elif path.read_bytes() != content:  # only what changed: never rewrite a file needlessly
                    atomic_write_text(path, content.decode("utf-8"))
            except (OSError, ValueError) as exc:
                logger.warning("%s: could not be put back after a failed supervisor run: %s", path, exc)
        for folder, before in self.folders.items():
            for path in set(folder.glob("*")) - before if folder.is_dir() else ():
                if path.is_file():
                    path.unlink(missing_ok=True)


@dataclass
class Applied:
    documents: list[str]
    directives: list[str]
    review_items: int
    findings: list[str]
    finding_count: int
    notes: list[str]
    summary: str


def apply_changes(outcome: Outcome, config: SupervisorsConfig, files: Files) -> Applied:
    """Write one valid answer to the store and the queue: all of it, or (raising) none of it."""
    request, spec = outcome.request, SPECS[outcome.request.supervisor]
    assert outcome.parsed is not None and outcome.run_input is not None
    store, queue = store_for(config, files), queue_for(config, files)
    existing = {d.path: d for d in store.documents()}
    changes = changes_from(spec, outcome.parsed, outcome.run_input, existing)
    for draft in changes.documents + changes.reviews:
        check_owner(spec.name, draft.category)  # OwnershipError (logged by the store) refuses the whole answer
    targets = [store.root / draft.category / f"{draft.name}.md" for draft in changes.documents]
    snapshot = FileSnapshot([*targets, store.index_path, queue.path], [store.review_dir])
    own_pending = {d.id for d in queue.pending() if d.source == spec.name}
    try:
        written = [store.write(draft, spec.name, task=request.task) for draft in changes.documents]
        reviews = [store.queue_for_review(draft, spec.name, reason="flagged by the internaliser for a person to confirm",
                                          task=request.task) for draft in changes.reviews]
        added = queue.add(changes.directives)
        resolved = [i for i in getattr(outcome.parsed, "resolved", []) if i in own_pending]
        queue.mark_addressed(resolved, by=spec.name)
    except BaseException:
        snapshot.restore()
        raise
    return Applied(
        documents=[w.path for w in written if w.action in ("created", "updated")],
        directives=[f"{d.type}/{d.priority}: {d.description}" for d in added],
        review_items=len(reviews) + sum(w.action == "queued_for_review" for w in written),
        findings=changes.findings, finding_count=changes.finding_count,
        notes=changes.notes + ([f"resolved {', '.join(resolved)}"] if resolved else []), summary=changes.summary,
    )


# --------------------------------------------------------------------------- the runner


class SupervisorRunner:
    """The supervisors of one organizations folder: triggers, background runs, results."""

    def __init__(self, home: Path):
        self.files = Files(home)
        self.state = StateFile(self.files.state)
        self.log = RunLog(self.files.runs)
        self.digest_log = digests.DigestLog(self.files.digests)
        self._lock = threading.Lock()
        self._flights: dict[str, Flight] = {}
        self._queue: list[Flight] = []
        self._worker: int = 0  # generation of the worker thread that may take from the queue
        self._working = False
        self._config_key: tuple[int, int] | None = None
        self._config: SupervisorsConfig | None = None
        #: seconds the last task start waited for runs (for tests and benchmarks)
        self.last_wait_seconds = 0.0

    # -- configuration (a stat per call; parsed again only when the file changed)

    def config(self) -> SupervisorsConfig | None:
        try:
            stat = self.files.config.stat()
        except OSError:
            self._config_key = self._config = None
            return None
        key = (stat.st_mtime_ns, stat.st_size)
        if key != self._config_key:
            self._config_key, self._config = key, load_config(self.files.config)
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
        with self._lock:
            return list(self._flights.values())

    def wait_for_runs(self) -> float:
        """Block until the running runs are done, never past the end of their time budgets.

        Runs still queued behind them have not started their budgets: they are not waited
        for, and their results are applied at a later task start. Returns the seconds waited.
        """
        began = time.monotonic()
        for flight in [f for f in self.in_flight() if f.running]:
            remaining = flight.request.deadline - time.monotonic()
            if remaining > 0:
                flight.done.wait(remaining)
        self.last_wait_seconds = time.monotonic() - began
        return self.last_wait_seconds

    def collect(self, agent: Any = None) -> list[SupervisorRun]:
        """Apply every run that has finished; give up on runs far past their deadline."""
        now = time.monotonic()
        finished, abandoned = [], []
        with self._lock:
            for name, flight in list(self._flights.items()):
                if flight.done.is_set():
                    finished.append(self._flights.pop(name))
                elif flight.running and now > flight.request.deadline + ABANDON_AFTER_SECONDS:
                    abandoned.append(self._flights.pop(name))
            if abandoned:  # the stuck thread keeps running; a new one takes over the queue
                self._worker += 1
                self._working = False
        if not finished and not abandoned:
            return []
        if abandoned:
            self._start_worker()
        config = self.config()
        runs = []
        for flight in finished:
            outcome = flight.outcome or Outcome(flight.request, "failed", "the run's thread ended without a result")
            runs.append(self.apply(outcome, config, agent))
        for flight in abandoned:
            reason = f"no answer {ABANDON_AFTER_SECONDS:.0f} s after its {flight.request.budget:.0f} s time budget; given up"
            runs.append(self.apply(Outcome(flight.request, "failed", reason, seconds=now - flight.request.clock), config, agent))
        return runs

    def task_start(self, agent: Any, loop_data: Any) -> list[SupervisorRun]:
        """``monologue_start`` (after :meth:`wait_for_runs`): apply results, start the task's digest.

        Results that came in after the supervisors were switched off are recorded as skipped.
        """
        if agent_number(agent) != 0:
            return []
        runs = self.collect(agent)
        if self.active_config() is not None:
            digests.begin(agent, loop_data)
        return runs

    def task_end(self, agent: Any, loop_data: Any) -> list[Request]:
        """``monologue_end``: record the task, count it, start the supervisors that are due."""
        if agent_number(agent) != 0:
            return []
        config = self.active_config()
        trace = digests.current(agent)
        if config is None or trace is None:
            return []
        self.collect(agent)
        settings = TriggerSettings.from_config(config)
        busy = {flight.request.supervisor for flight in self.in_flight()}

        def count_and_pick(state: SupervisorsState):
            digest = digests.finish(agent, state.tasks_completed + state.tasks_aborted + 1)
            assert digest is not None
            signals = note_task(state, settings, digest)
            ready = {name: reasons for name, reasons in due(state, settings).items() if name not in busy}
            requests = [self._request(state, config, name, reasons, "agent") for name, reasons in ready.items()]
            if ready:
                started(state, ready)
            return digest, signals, requests

        _, (digest, signals, requests) = self.state.update(count_and_pick)
        self.digest_log.append(digest)
        self._note_task_in_store(config, digest, trace.final_response, signals)
        for request in requests:
            self._launch(request, config)
        return requests

    def _note_task_in_store(self, config: SupervisorsConfig, digest: TaskDigest, response: str, signals: list[str]) -> None:
        """Directives marked done and aged; provisional documents one task closer to established."""
        try:
            queue_for(config, self.files).note_task_completed(response)
        except Exception as exc:
            warn_once(f"{self.files.directives}: the directive queue could not be updated: {exc}", key=f"{self.files.directives}:note")
        try:
            problems = digest.outcome == "aborted" or "qa_failure" in signals
            store_for(config, self.files).note_task_completed(problems)
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

    def _launch(self, request: Request, config: SupervisorsConfig) -> None:
        """Queue a run for the background worker; runs go one at a time, in the order they were due."""
        flight = Flight(request, config)
        with self._lock:
            self._flights[request.supervisor] = flight
            self._queue.append(flight)
        self._start_worker()

    def _start_worker(self) -> None:
        with self._lock:
            if self._working or not self._queue:
                return
            self._working = True
            generation = self._worker
            _begin(self._queue[0])  # the new worker takes it first: it is going from now on
        threading.Thread(target=self._work, args=(generation,), name="a0org-supervisors", daemon=True).start()

    def _work(self, generation: int) -> None:
        while True:
            with self._lock:
                if generation != self._worker or not self._queue:
                    if generation == self._worker:
                        self._working = False
                    return
                flight = self._queue.pop(0)
                if not flight.running:
                    _begin(flight)
            try:
                flight.outcome = execute(flight.request, flight.config, self.files)
            finally:
                flight.done.set()

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
        runs = []
        for request in requests:
            request.restart_clock()
            runs.append(self.apply(execute(request, config, self.files), config, None))
        return runs

    # -- results

    def apply(self, outcome: Outcome, config: SupervisorsConfig | None, agent: Any) -> SupervisorRun:
        """Apply one outcome (when valid and the config still allows it), record it, log one line."""
        request, status, reason = outcome.request, outcome.status, outcome.reason
        applied: Applied | None = None
        if status == "ok" and (config is None or request.supervisor not in config.enabled_supervisors()):
            status, reason = "skipped", "switched off before the answer arrived; nothing of it was applied"
        elif status == "ok":
            assert config is not None
            try:
                applied = apply_changes(outcome, config, self.files)
            except OwnershipError as exc:
                status, reason = "refused", f"{exc}; nothing of the answer was applied"
            except Exception as exc:
                status, reason = "failed", f"could not apply the answer ({type(exc).__name__}: {exc}); nothing was kept"
        converging, every = False, None
        if applied is not None and config is not None:
            settings = TriggerSettings.from_config(config)
            name = request.supervisor
            state, converging = self.state.update(lambda s: converge(counter_of(s, name), applied.findings))
            every = interval(settings, counter_of(state, name), name)
        run = SupervisorRun(
            run_id=request.run_id, supervisor=request.supervisor, trigger=request.trigger, reasons=request.reasons,  # type: ignore[arg-type]
            started=request.started, duration_seconds=max(0.0, outcome.seconds), model=outcome.model,
            prompt_tokens=outcome.prompt_tokens, completion_tokens=outcome.completion_tokens, cost_usd=outcome.cost_usd,
            attempts=outcome.attempts, outcome="applied" if applied else status,  # type: ignore[arg-type]
            reason=("; ".join(applied.notes) if applied else reason)[:1000],
            summary=(applied.summary if applied else "")[:500], findings=applied.finding_count if applied else 0,
            directives=applied.directives if applied else [], documents=applied.documents if applied else [],
            review_items=applied.review_items if applied else 0,
            bootstrap=bool(outcome.run_input and outcome.run_input.bootstrap), converging=bool(converging),
            interval_tasks=every, task=request.task, source=request.source,
        )
        self._report(run, agent)
        return run

    def _report(self, run: SupervisorRun, agent: Any) -> None:
        try:
            self.log.append(run)
        except OSError as exc:
            warn_once(f"{self.files.runs}: cannot record supervisor runs: {exc.strerror or exc}", key=f"{self.files.runs}:append")
        line = outcome_line(run)
        if run.outcome == "applied":
            logger.info("%s", line)
        elif run.outcome == "skipped":
            logger.warning("%s skipped: %s", LABELS[run.supervisor], run.reason)
        else:
            logger.warning("%s", line)
        if agent is not None and run.outcome != "skipped":
            details = [run.summary] + [f"wrote {d}" for d in run.documents] + [f"directive {d}" for d in run.directives]
            ui_log(agent, type="info" if run.outcome == "applied" else "warning", heading=line,
                   content="\n".join(d for d in details if d))

    # -- the prompt

    def prompt_sections(self, agent: Any, loop_data: Any) -> None:
        """``message_loop_prompts_after``: put PROJECT KNOWLEDGE and ACTIVE DIRECTIVES into the prompt's extras."""
        config = self.active_config()
        if config is None:
            return
        top = agent_number(agent) == 0
        if top:
            digests.note_turn(agent, loop_data)
        persistent = read_attr(loop_data, "params_persistent")
        cached = persistent.get(SECTIONS_KEY) if isinstance(persistent, dict) else None
        if not isinstance(cached, tuple):
            cached = self._sections(agent, config, top)
            if isinstance(persistent, dict):
                persistent[SECTIONS_KEY] = cached
        extras = read_attr(loop_data, "extras_temporary")
        if extras is None:
            return
        knowledge, directives = cached
        if knowledge:
            extras[KNOWLEDGE_EXTRA] = knowledge
        if directives:
            extras[DIRECTIVES_EXTRA] = directives

    def _sections(self, agent: Any, config: SupervisorsConfig, top: bool) -> tuple[str, str]:
        bst, htn, trace = read_bst(agent), read_htn(agent), digests.current(agent)
        plan = " ".join(p for p in (htn.plan_name if htn else None, htn.current_step if htn else None,
                                    trace.user_message[:500] if trace else None) if p)
        knowledge = project_knowledge_section(store_for(config, self.files), bst.domain if bst else None, plan or None,
                                              config.knowledge.injection_token_budget, recent_lessons=config.knowledge.recent_lessons)
        directives = queue_for(config, self.files).active_directives_section() if top else ""
        return knowledge, directives


def _begin(flight: Flight) -> None:
    """A run is going: its time budget starts now (the runner's lock is held)."""
    flight.request.restart_clock()
    flight.running = True


def _remember_keys(config: SupervisorsConfig | None) -> None:
    """The supervisors' API keys are redacted from digests and the store whatever their shape."""
    for name in config.enabled_supervisors() if config is not None else ():
        variable = config.model_for(name).api_key_env
        if variable:
            remember_secret(os.environ.get(variable, "").strip())


def _with_first(first: str, reasons: list[str]) -> list[str]:
    return [first] + [r for r in reasons if r != first]


_runners: dict[Path, SupervisorRunner] = {}
_runners_lock = threading.Lock()


def runner_for(home: Path | None = None) -> SupervisorRunner:
    """The runner of an organizations folder (default: the current one), kept for the process."""
    home = home or organizations_dir()
    with _runners_lock:
        runner = _runners.get(home)
        if runner is None:
            runner = _runners[home] = SupervisorRunner(home)
        return runner


def note_tool(agent: Any, tool_name: Any, args: Any, output: str, verdict: tuple[bool, str | None] | None, ends_task: bool) -> None:
    """``tool_execute_after``: one tool call into the running task's digest (only while a task is traced)."""
    trace = digests.current(agent)
    if trace is None:
        return
    ok, error_type = verdict if verdict is not None else (None, None)
    trace.note_tool(tool_name if isinstance(tool_name, str) and tool_name else "unknown", args, output, ok, error_type, ends_task)
