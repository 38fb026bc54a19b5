"""One supervisor run: where its files are, what it is asked, and what comes back.

:func:`execute` asks the supervisor's model, blocking, within the request's time budget
(the model client's deadline), and never raises: every way it can end is an
:class:`Outcome`. Nothing is written to the store or the queue here; that is
:mod:`org.llm_supervisors.results`.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from org.contracts.supervisors import SupervisorsConfig
from org.kernel.log import logger
from org.kernel.redact import redact_model
from org.knowledge import locations
from org.knowledge.directives import DirectiveQueue
from org.knowledge.store import KnowledgeStore
from org.llm.answer import ModelOutputInvalid
from org.llm.budget import UsageLedger
from org.llm.client import ChatClient
from org.llm.config import CONFIG_NAME
from org.llm.transport import ModelUnavailable

from . import codebase, digests
from .supervisors import SPECS, RunInput, build_messages, read_touched_files, readable_file, split_documents

FOLDER = "supervisors"

Status = Literal["ok", "skipped", "discarded", "failed"]


class Files:
    """Where the supervisors keep their files: the organizations folder's, or one Agent-Zero project's.

    A project has its own store, queue, digests and counters (:mod:`org.knowledge.locations`);
    the config, the run records and the usage ledger are the organizations folder's.
    """

    def __init__(self, home: Path, project: str | None = None):
        self.home = home
        self.project = locations.project_name(project)
        self.scope = locations.scope_folder(home, self.project)
        self.folder = self.scope / FOLDER
        self.config = home / CONFIG_NAME
        #: a project's own settings, laid over the organizations folder's (org/llm/config.py)
        self.project_config = self.scope / CONFIG_NAME if self.project else None
        self.state = self.folder / "state.json"
        self.runs = home / FOLDER / "runs.jsonl"
        self.digests = self.folder / "digests.jsonl"
        self.directives = locations.directives_path(home, self.project)
        self.answers = home / FOLDER / "answers.jsonl"  # beside the run records, whose run ids it carries


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
    answers: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    repairs: int = 0
    response_format: str = ""


def store_for(config: SupervisorsConfig, files: Files) -> KnowledgeStore:
    root = locations.knowledge_root(files.home, files.project, config.knowledge.root)
    return KnowledgeStore(root, establish_after_tasks=config.knowledge.establish_after_tasks, directives=files.directives)


def queue_for(config: SupervisorsConfig, files: Files) -> DirectiveQueue:
    return DirectiveQueue(files.directives, config.directives)


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
        skip = (files.home.resolve(), store.root.resolve())
        never_read = tuple(config.never_read)
        touched = read_touched_files(recent, skip_under=skip, never_read=never_read) if spec.reads_files else []
        base = None
        if spec.reads_files and not own:  # a bootstrap run: the code base as it is, not only what was touched
            base = codebase.scan(recent, lambda path: readable_file(path, skip, never_read), skip, {name for name, _ in touched})
        run_input = RunInput(recent, own, other, pending, touched, request.previous_findings, base)
        client = ChatClient(config.model_for(name), UsageLedger.for_organizations(files.home), supervisor=name)
        result = client.complete(build_messages(spec, run_input), schema=spec.schema, deadline=request.deadline)
        # the model may repeat a secret it was shown (or invent one): nothing of its answer is kept unredacted
        outcome = _outcome(request, client, run_input, "ok", parsed=redact_model(result.parsed), model=result.model,
                           attempts=result.attempts)
        outcome.answers, outcome.notes, outcome.repairs = list(result.answers), list(result.notes), result.repairs
        outcome.response_format = result.response_format
        return outcome
    except ModelUnavailable as exc:
        return _outcome(request, client, run_input, "skipped", exc.reason)
    except ModelOutputInvalid as exc:
        outcome = _outcome(request, client, run_input, "discarded", f"invalid answer: {exc.reason}")
        outcome.answers, outcome.notes, outcome.repairs = list(exc.answers), list(exc.notes), exc.repairs
        return outcome
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
        outcome.answers = list(client.raw_answers)  # whatever the failure; a valid or invalid answer sets its own
    return outcome
