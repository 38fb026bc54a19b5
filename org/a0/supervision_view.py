"""What the supervision page in Agent-Zero's UI shows for one chat and its project.

Read from what the pack already writes in the organizations folder: the supervision events
(the timeline of checks, steering, blocks, pauses and the progress that followed), the SALUTE
reports (the PACE level over turns), the knowledge store and directive queue of the chat's
project, and the doctrine in force with where each value came from (as ``a0org explain``).
It writes nothing. Each part that cannot be read is an ``error`` in its place, not a failure
of the page. Text written by a model (titles, directives) passes the redactor.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

from org.contracts import SaluteReport
from org.kernel import events
from org.kernel.files import FileRefused, read_capped
from org.kernel.loading import load_yaml
from org.kernel.paths import OrganizationLayout, organizations_dir
from org.kernel.redact import redact
from org.stats import WITHIN_TURNS, followed_by_progress

#: At most this many of the chat's latest events, and of its reports.
MAX_EVENTS = 500
MAX_REPORTS = 200
MAX_REPORT_BYTES = 1_000_000


def _part(read: Callable[[], Any]) -> Any:
    try:
        return read()
    except Exception as exc:  # one unreadable part leaves the others on the page
        return {"error": redact(f"{type(exc).__name__}: {exc}")}


def _of_chat(chat: str | None, context_id: str) -> bool:
    """The chat's own events and its subordinates' (a replayed subordinate is ``<chat>/A1``)."""
    return chat is not None and (chat == context_id or chat.startswith(context_id + "/"))


def latest_chat(home: Path) -> str | None:
    """The chat the newest event belongs to: the page's chat when it is opened without one."""
    return next((e.chat for e in reversed(list(events.read(home))) if e.chat), None)


def timeline(home: Path, context_id: str) -> list[dict[str, Any]]:
    log = [e for e in events.read(home) if _of_chat(e.chat, context_id)][-MAX_EVENTS:]
    followed = {id(e): turns for e, turns in followed_by_progress(log, WITHIN_TURNS)}
    latest = max((e.turn for e in log if e.turn is not None), default=0)
    items = []
    for event in log:
        item = event.model_dump(mode="json", exclude_defaults=True, exclude={"schema_version", "chat"})
        if event.type in ("steering", "block"):
            turns = followed.get(id(event))
            item["followed_by"] = (f"progress after {turns} turn(s)" if turns is not None else
                                   f"no progress within {WITHIN_TURNS} turns" if latest - (event.turn or 0) > WITHIN_TURNS else
                                   "no progress yet")
        items.append(item)
    return items


def pace_over_turns(layout: OrganizationLayout, context_id: str) -> list[dict[str, Any]]:
    """Each SALUTE report of the chat kept in ``reports/`` (the latest per role and the archive): turn, PACE, health."""
    paths = sorted(layout.archive_dir.glob("*.json"))[-MAX_REPORTS:] + sorted(layout.reports_dir.glob("*_latest.json"))
    seen: dict[tuple[int, str], dict[str, Any]] = {}
    for path in paths:
        try:
            report = SaluteReport.model_validate(json.loads(read_capped(path, MAX_REPORT_BYTES)))
        except (OSError, FileRefused, ValueError):
            continue
        if report.unit.context_id != context_id:
            continue
        turn = report.signals.turn if report.signals is not None else report.time.turns_elapsed
        seen[(turn, report.unit.role_id)] = {"turn": turn, "role": report.unit.role_id, "pace": report.status.pace_level,
                                             "health": report.status.health, "time": report.time.timestamp.isoformat()}
    return sorted(seen.values(), key=lambda r: (r["turn"], r["time"]))


def knowledge(home: Path, project: str | None) -> dict[str, Any]:
    from org.knowledge import locations
    from org.knowledge.directives import DirectiveQueue
    from org.knowledge.store import KnowledgeStore
    from org.llm.config import load_config

    config = load_config(OrganizationLayout(home))
    store = KnowledgeStore(locations.knowledge_root(home, project, config.knowledge.root if config else None))
    documents = [{"path": d.path, "status": d.status, "title": redact(d.title), "hand_written": d.hand_written,
                  "quarantined": False} for d in store.documents()]
    queue = DirectiveQueue(locations.directives_path(home, project))
    directives = [{"id": d.id, "priority": d.priority, "type": d.type, "source": d.source, "age": d.age,
                   "description": redact(d.description), "quarantined": False} for d in queue.pending()]
    # what the supervisors' model wrote and screening held for a person: shown marked, never in force
    for item in store.review_items():
        if not item.quarantined:
            continue
        why = redact("; ".join(item.quarantined))
        if item.directive is not None:
            directives.append({"id": item.id, "priority": item.directive.priority, "type": item.directive.type,
                               "source": item.source, "age": None, "description": redact(item.directive.description),
                               "quarantined": True, "why": why})
        elif item.draft is not None:
            documents.append({"path": f"{item.draft.category}/{item.draft.name}.md", "status": "quarantined",
                              "title": redact(item.draft.title), "hand_written": False, "quarantined": True, "why": why})
    return {"scope": locations.describe(project), "documents": documents, "directives": directives}


def doctrine(home: Path, role: str | None, project: str | None) -> dict[str, Any]:
    from org.explain import active_organization, explain

    layout = OrganizationLayout(home)
    if role is None:
        _, path = active_organization(layout)
        if path is None:
            return {"error": "no active organization (usr/organizations/active.json)"}
        role = (load_yaml(path.read_text(encoding="utf-8")) or {}).get("default_role")
    return explain(home, str(role), project).relative_to(home).as_json()


def supervision_view(context_id: str | None, project: str | None = None, home: Path | None = None) -> dict[str, Any]:
    """The page's document for chat ``context_id`` (default: the chat of the newest event) in ``project``."""
    home = home or organizations_dir()
    layout = OrganizationLayout(home)
    context_id = context_id or _part(lambda: latest_chat(home))
    if not isinstance(context_id, str):
        context_id = None
    pace = _part(lambda: pace_over_turns(layout, context_id)) if context_id else []
    role = pace[-1]["role"] if isinstance(pace, list) and pace else None
    return {
        "chat": context_id,
        "project": project,
        "timeline": _part(lambda: timeline(home, context_id)) if context_id else [],
        "pace": pace,
        "knowledge": _part(lambda: knowledge(home, project)),
        "doctrine": _part(lambda: doctrine(home, role, project)),
    }
