"""Applying a run's result: to the store and the queue, all or nothing; then recording it.

Every document is checked against the supervisor's part of the store before anything is
written, and a write that fails puts back what was written before it. Whatever the
outcome, the run is recorded in ``runs.jsonl``, logged in one line and, during a task,
shown in Agent-Zero's UI.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from org.contracts.supervisor_outputs import SupervisorRun
from org.contracts.supervisors import SupervisorsConfig
from org.kernel import events
from org.kernel.agent_zero import AgentPort
from org.kernel.files import atomic_write_text
from org.kernel.log import logger, warn_once
from org.kernel.redact import redact_model
from org.knowledge.screening import screen
from org.knowledge.store import OwnershipError, check_owner
from org.supervisor.learnings import note_lesson

from .answers import AnswerLog
from .records import LABELS, RunLog, outcome_line
from .runs import Files, Outcome, queue_for, store_for
from .supervisors import SPECS, changes_from, existing_rules
from .triggers import StateFile, TriggerSettings, converge, counter_of, interval
from .trust import document_texts, held_line, hold_back, project_bounds


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
    quarantined: list[str] = field(default_factory=list)  #: held for a person: "R3: directive '...' quarantined: why"
    lessons: list[tuple[str, str, str, list[str]]] = field(default_factory=list)  # new lessons: (path, title, rule, domains)


def apply_changes(outcome: Outcome, config: SupervisorsConfig, files: Files) -> Applied:
    """Write one valid answer to the store and the queue: all of it, or (raising) none of it."""
    request, spec = outcome.request, SPECS[outcome.request.supervisor]
    assert outcome.parsed is not None and outcome.run_input is not None
    store, queue = store_for(config, files), queue_for(config, files)
    existing = {d.path: d for d in store.documents()}
    changes = changes_from(spec, outcome.parsed, outcome.run_input, existing)
    for draft in changes.documents + changes.reviews:
        check_owner(spec.name, draft.category)  # OwnershipError (logged by the store) refuses the whole answer
    bounds = project_bounds(outcome.run_input)
    held = hold_back(changes, bounds, config.directives.require_approval)
    targets = [store.root / draft.category / f"{draft.name}.md" for draft in changes.documents]
    snapshot = FileSnapshot([*targets, store.index_path, queue.path], [store.review_dir])
    own_pending = {d.id for d in queue.pending() if d.source == spec.name}
    try:
        written = [store.write(draft, spec.name, task=request.task) for draft in changes.documents]
        reviews = [store.queue_for_review(draft, spec.name, reason="flagged by the internaliser for a person to confirm",
                                          task=request.task, quarantined=screen(document_texts(draft), bounds))
                   for draft in changes.reviews]  # held anyway; the person sees what screening would have said
        added = queue.add(changes.directives)
        quarantined = [held_line(store.queue_for_review(draft, spec.name, reason=why, task=request.task, quarantined=reasons).id,
                                 f"document {draft.category}/{draft.name}.md", draft.title, why)
                       for draft, why, reasons in held.documents]
        quarantined += [held_line(store.hold_directive(draft, spec.name, why, reasons, task=request.task).id,
                                  f"{draft.priority} {draft.type} directive", draft.description, why)
                        for draft, why, reasons in held.directives]
        resolved = [i for i in getattr(outcome.parsed, "resolved", []) if i in own_pending]
        queue.mark_addressed(resolved, by=spec.name)
    except BaseException:
        snapshot.restore()
        raise
    return Applied(
        documents=[w.path for w in written if w.action in ("created", "updated")],
        directives=[f"{d.type}/{d.priority}: {d.description}" for d in added],
        review_items=len(reviews) + sum(w.action == "queued_for_review" for w in written),
        quarantined=quarantined,
        findings=changes.findings, finding_count=changes.finding_count,
        notes=changes.notes + ([f"resolved {', '.join(resolved)}"] if resolved else []), summary=changes.summary,
        lessons=[(w.path, d.title, rule, list(d.domains))
                 for w, d in zip(written, changes.documents) if d.category == "lessons" and w.action in ("created", "updated")
                 for rule in d.rules if rule not in existing_rules(existing.get(w.path))],
    )


def apply_outcome(outcome: Outcome, config: SupervisorsConfig | None, port: AgentPort | None, *, files: Files, state: StateFile,
                  log: RunLog) -> SupervisorRun:
    """Apply one outcome (when valid and the config still allows it), record it, log one line
    (also in the agent's UI through ``port``, when an agent's task start applies it)."""
    request, status, reason = outcome.request, outcome.status, outcome.reason
    applied: Applied | None = None
    if status == "ok" and (config is None or request.supervisor not in config.enabled_supervisors()):
        status, reason = "skipped", "switched off before the answer arrived; nothing of it was applied"
    elif status == "ok":
        assert config is not None
        try:
            applied = apply_changes(outcome, config, files)
        except OwnershipError as exc:
            status, reason = "refused", f"{exc}; nothing of the answer was applied"
        except Exception as exc:
            status, reason = "failed", f"could not apply the answer ({type(exc).__name__}: {exc}); nothing was kept"
    converging, every = False, None
    if applied is not None and config is not None:
        settings = TriggerSettings.from_config(config)
        name = request.supervisor
        stored, converging = state.update(lambda s: converge(counter_of(s, name), applied.findings))
        every = interval(settings, counter_of(stored, name), name)
    run = SupervisorRun(
        run_id=request.run_id, supervisor=request.supervisor, trigger=request.trigger, reasons=request.reasons,  # type: ignore[arg-type]
        started=request.started, duration_seconds=max(0.0, outcome.seconds), model=outcome.model,
        prompt_tokens=outcome.prompt_tokens, completion_tokens=outcome.completion_tokens, cost_usd=outcome.cost_usd,
        attempts=outcome.attempts, outcome="applied" if applied else status,  # type: ignore[arg-type]
        reason=("; ".join(applied.notes) if applied else reason)[:1000],
        summary=(applied.summary if applied else "")[:500], findings=applied.finding_count if applied else 0,
        directives=applied.directives if applied else [], documents=applied.documents if applied else [],
        review_items=applied.review_items if applied else 0, quarantined=applied.quarantined[:60] if applied else [],
        bootstrap=bool(outcome.run_input and outcome.run_input.bootstrap), converging=bool(converging),
        interval_tasks=every, task=request.task, source=request.source, project=files.project,
        response_format=outcome.response_format if outcome.response_format in ("json_schema", "json_object", "none") else "",  # type: ignore[arg-type]
        repairs=min(1, outcome.repairs), answer_notes=[n[:300] for n in outcome.notes][:30],
    )
    run = redact_model(run)  # reasons quote the model's answer and errors; the record, the log and the UI get it redacted
    if applied is not None and port is not None:
        for path, title, rule, domains in applied.lessons:  # published to other units (the learning relay), redacted there
            note_lesson(port.data, path, title, rule, domains)
    AnswerLog(files.answers).keep(run.run_id, run.supervisor, run.started, outcome.answers)
    events.record(files.home, ("supervisor_run", {
        "supervisor": run.supervisor, "outcome": run.outcome, "tokens": run.prompt_tokens + run.completion_tokens,
        "cost_usd": run.cost_usd, "project": files.project}))
    _report(run, port, log)
    return run


def _report(run: SupervisorRun, port: AgentPort | None, log: RunLog) -> None:
    try:
        log.append(run)
    except OSError as exc:
        warn_once(f"{log.path}: cannot record supervisor runs: {exc.strerror or exc}", key=f"{log.path}:append")
    line = outcome_line(run)
    for held in run.quarantined:
        logger.warning("%s: held for a person (a0org knowledge review): %s", LABELS[run.supervisor], held)
    if run.outcome == "applied":
        logger.info("%s", line)
    elif run.outcome == "skipped":
        logger.warning("%s skipped: %s", LABELS[run.supervisor], run.reason)
    else:
        logger.warning("%s", line)
    if port is not None and run.outcome != "skipped":
        details = ([run.summary] + [f"wrote {d}" for d in run.documents] + [f"directive {d}" for d in run.directives]
                   + [f"held for a person (a0org knowledge review) {q}" for q in run.quarantined])
        port.log(type="info" if run.outcome == "applied" and not run.quarantined else "warning", heading=line,
                 content="\n".join(d for d in details if d))
