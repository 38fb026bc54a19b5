"""Run records: every supervisor run, one JSON line in ``<organizations>/supervisors/runs.jsonl``.

``a0org supervisors log`` lists them and ``a0org supervisors stats`` sums their tokens
and cost. Lines are appended under a lock, so the agent and the command line can both
write; a damaged line is skipped with one log line naming the file and line number.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from org.contracts.supervisor_outputs import SupervisorRun
from org.kernel.report import warn_once
from org.knowledge.locking import exclusive

M = TypeVar("M", bound=BaseModel)

#: The UI's and the log's name of each supervisor.
LABELS = {"code_style": "Code style supervisor", "design": "Design supervisor", "internaliser": "Internaliser"}


class RunLog:
    def __init__(self, path: Path):
        self.path = path
        self.lock_file = path.with_name(path.name + ".lock")

    def append(self, run: SupervisorRun) -> None:
        with exclusive(self.lock_file):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "a", encoding="utf-8") as handle:
                handle.write(run.model_dump_json() + "\n")

    def __iter__(self) -> Iterator[SupervisorRun]:
        try:
            handle = open(self.path, encoding="utf-8")
        except FileNotFoundError:
            return
        with handle:
            yield from parsed_lines(self.path, enumerate(handle, start=1), SupervisorRun, "that run")

    def runs(self) -> list[SupervisorRun]:
        return list(self)


def parsed_lines(path: Path, numbered: Iterable[tuple[int, str]], model: type[M], what: str) -> Iterator[M]:
    """JSON lines validated against ``model``; a bad one is skipped with one log line naming the file and line."""
    for number, line in numbered:
        if not line.strip():
            continue
        try:
            yield model.model_validate_json(line)
        except ValidationError as exc:
            error = exc.errors()[0]
            where = ".".join(str(part) for part in error["loc"]) or "(line)"
            warn_once(f"{path}:{number}: {where}: {error['msg']}; {what} is left out", key=f"{path}:{number}")


def plural(count: int, word: str, many: str | None = None) -> str:
    return f"{count} {word if count == 1 else many or word + 's'}"


def outcome_line(run: SupervisorRun) -> str:
    """The one line shown in the Agent-Zero UI and printed by ``a0org supervisors run``."""
    label = LABELS.get(run.supervisor, run.supervisor)
    if run.bootstrap:
        label += " (bootstrap)"
    if run.outcome != "applied":
        return f"{label}: {run.outcome}: {run.reason}"
    return f"{label}: {_details(run)}"


def _details(run: SupervisorRun) -> str:
    directive_types: dict[str, int] = {}
    for entry in run.directives:
        kind = entry.split("/", 1)[0]
        directive_types[kind] = directive_types.get(kind, 0) + 1
    directives = [plural(count, f"{kind} directive") for kind, count in sorted(directive_types.items(), key=lambda kv: kv[0] != "functional")]
    if run.supervisor == "code_style":
        parts = [plural(run.findings, "inconsistency", "inconsistencies")] + (directives or ["0 cleanup directives"])
        parts += [plural(len(run.documents), "convention") + " written"] if run.documents else []
    elif run.supervisor == "design":
        parts = [plural(run.findings, "divergence")] + (directives or ["0 directives"])
        parts += [plural(len(run.documents), "design document") + " updated"] if run.documents else []
    else:
        parts = [plural(run.findings, "knowledge item")]
        parts += [plural(len(run.documents), "document") + " updated"] if run.documents else []
        parts += [f"{run.review_items} for review"] if run.review_items else []
    return ", ".join(parts)


def day_of(run: SupervisorRun) -> str:
    started = run.started if run.started.tzinfo else run.started.replace(tzinfo=timezone.utc)
    return started.astimezone(timezone.utc).date().isoformat()


def today() -> str:
    return datetime.now(timezone.utc).date().isoformat()
