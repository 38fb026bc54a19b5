"""Run records: every supervisor run, one JSON line in ``<organizations>/supervisors/runs.jsonl``.

``a0org supervisors log`` lists them and ``a0org supervisors stats`` sums their tokens
and cost. Lines are appended under a lock, so the agent and the command line can both
write; a damaged line is skipped with one log line naming the file and line number. The
file keeps the last :data:`RUN_LIMIT` runs (the usage ledger keeps the all-time totals).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Generic, TypeVar

from pydantic import BaseModel, ValidationError

from org.contracts.supervisor_outputs import SupervisorRun
from org.kernel.files import atomic_write_text, exclusive, first_error, lock_file_for
from org.kernel.log import warn_once
from org.kernel.redact import redact, redact_model

M = TypeVar("M", bound=BaseModel)

#: The UI's and the log's name of each supervisor.
LABELS = {"code_style": "Code style supervisor", "design": "Design supervisor", "internaliser": "Internaliser"}
#: Runs kept in ``runs.jsonl``.
RUN_LIMIT = 2000


class JsonLinesLog(Generic[M]):
    """A JSON-lines file of one contract: appended under a lock, the last ``limit`` lines kept.

    The file is trimmed back to ``limit`` lines once it holds twice as many, so most
    appends only append.
    """

    def __init__(self, path: Path, model: type[M], limit: int, what: str):
        self.path = path
        self.model = model
        self.limit = limit
        self.what = what  #: how a skipped line is named in the log, e.g. "that run"
        self.lock_file = lock_file_for(path)

    def append(self, item: M) -> None:
        line = redact_model(item).model_dump_json() + "\n"  # whatever the caller did: no secret reaches the file
        with exclusive(self.lock_file):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "a", encoding="utf-8") as handle:
                handle.write(line)
            lines = self._lines()
            if len(lines) > 2 * self.limit:
                atomic_write_text(self.path, "".join(kept + "\n" for kept in lines[-self.limit:]))

    def _lines(self) -> list[str]:
        try:
            return [line for line in self.path.read_text(encoding="utf-8").splitlines() if line.strip()]
        except FileNotFoundError:
            return []
        except (OSError, UnicodeDecodeError) as exc:
            warn_once(f"{self.path}: cannot be read: {exc}", key=f"{self.path}:read")
            return []

    def recent(self, count: int | None = None) -> list[M]:
        """The last ``count`` items (all when None), oldest first; bad lines are skipped with one log line each."""
        if not self.path.exists():
            return []
        try:
            with exclusive(self.lock_file):  # never half of a line being appended
                lines = self._lines()
        except OSError:  # no lock file can be made (a read-only folder): read as it is
            lines = self._lines()
        first = 0 if count is None else max(0, len(lines) - count)
        return list(parsed_lines(self.path, enumerate(lines[first:], start=first + 1), self.model, self.what))


class RunLog(JsonLinesLog[SupervisorRun]):
    """``runs.jsonl``: one :class:`SupervisorRun` per line."""

    def __init__(self, path: Path, limit: int = RUN_LIMIT):
        super().__init__(path, SupervisorRun, limit, "that run")

    def runs(self) -> list[SupervisorRun]:
        return self.recent()


def parsed_lines(path: Path, numbered: Iterable[tuple[int, str]], model: type[M], what: str) -> Iterator[M]:
    """JSON lines validated against ``model``; a bad one is skipped with one log line naming the file and line."""
    for number, line in numbered:
        if not line.strip():
            continue
        try:
            yield model.model_validate_json(line)
        except ValidationError as exc:
            warn_once(f"{path}:{number}: {first_error(exc, '(line)')}; {what} is left out", key=f"{path}:{number}")


def plural(count: int, word: str, many: str | None = None) -> str:
    return f"{count} {word if count == 1 else many or word + 's'}"


def outcome_line(run: SupervisorRun) -> str:
    """The one line shown in the Agent-Zero UI and printed by ``a0org supervisors run``."""
    label = LABELS.get(run.supervisor, run.supervisor)
    if run.bootstrap:
        label += " (bootstrap)"
    if run.outcome != "applied":
        return redact(f"{label}: {run.outcome}: {run.reason}")
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
    if run.quarantined:
        parts.append(f"{len(run.quarantined)} held for a person")
    return ", ".join(parts)


def day_of(run: SupervisorRun) -> str:
    started = run.started if run.started.tzinfo else run.started.replace(tzinfo=timezone.utc)
    return started.astimezone(timezone.utc).date().isoformat()


def today() -> str:
    return datetime.now(timezone.utc).date().isoformat()
