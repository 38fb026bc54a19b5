"""The raw answers of the supervisors' runs, kept for inspection (``a0org supervisors log --raw``).

Every run that got an answer from its model, usable or not, leaves one line in
``<organizations>/supervisors/answers.jsonl``: the answer as received and, after a
repair round, the repaired one. Secrets are redacted before anything is written. The
file keeps the last :data:`ANSWER_LIMIT` runs.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from org.contracts.supervisor_outputs import SupervisorAnswers
from org.kernel.log import warn_once
from org.kernel.redact import redact

from .records import JsonLinesLog

ANSWER_LIMIT = 200
#: Characters of one answer kept (a 8,000-token answer is about 32,000).
ANSWER_CHARS = 100_000


class AnswerLog(JsonLinesLog[SupervisorAnswers]):
    """``answers.jsonl``: one :class:`SupervisorAnswers` per run that got an answer."""

    def __init__(self, path: Path, limit: int = ANSWER_LIMIT):
        super().__init__(path, SupervisorAnswers, limit, "those answers")

    def keep(self, run_id: str, supervisor: str, started: datetime, answers: list[str]) -> None:
        """Record a run's raw answers, redacted; a file that cannot be written is logged once."""
        if not answers:
            return
        kept = [redact(text[: ANSWER_CHARS * 2])[:ANSWER_CHARS] for text in answers[:2]]
        try:
            self.append(SupervisorAnswers(run_id=run_id, supervisor=supervisor, started=started, answers=kept))  # type: ignore[arg-type]
        except OSError as exc:
            warn_once(f"{self.path}: cannot keep the supervisors' raw answers: {exc.strerror or exc}", key=f"{self.path}:append")

    def of(self, run_ids: set[str]) -> dict[str, SupervisorAnswers]:
        """The kept answers of these runs, by run id."""
        return {entry.run_id: entry for entry in self.recent() if entry.run_id in run_ids}


__all__ = ["ANSWER_LIMIT", "AnswerLog"]
