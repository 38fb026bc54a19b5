"""The usage ledger: tokens and cost of the supervisors' model calls, per UTC day and in total.

One JSON file (``<organizations>/supervisors/usage.json``), rewritten atomically on every
call, so the daily budget holds across restarts. Days are keyed by their UTC date; each
day and the totals are broken down by supervisor. Several threads or processes may
record at once: every change is a read-modify-write under a lock.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from org.kernel.files import FileRefused, first_error, read_capped, update_json_file

LEDGER_FOLDER = "supervisors"
LEDGER_NAME = "usage.json"
#: Days older than this many are dropped from the file (the totals keep them).
KEEP_DAYS = 400
#: A ledger larger than this is not one of ours.
MAX_LEDGER_BYTES = 5_000_000


class Usage(BaseModel):
    """Calls, tokens and cost, for one day, one supervisor or all time."""

    model_config = ConfigDict(extra="forbid")

    calls: int = Field(0, ge=0)
    prompt_tokens: int = Field(0, ge=0)
    completion_tokens: int = Field(0, ge=0)
    cost_usd: float = Field(0.0, ge=0)

    @property
    def tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens

    def add(self, prompt_tokens: int, completion_tokens: int, cost_usd: float) -> None:
        """Count one more call."""
        self.calls += 1
        self.prompt_tokens += prompt_tokens
        self.completion_tokens += completion_tokens
        self.cost_usd = round(self.cost_usd + cost_usd, 10)  # keep float sums from drifting in the file


class UsageBreakdown(Usage):
    """Usage with the share of each supervisor."""

    by_supervisor: dict[str, Usage] = Field(default_factory=dict)

    def add_for(self, supervisor: str, prompt_tokens: int, completion_tokens: int, cost_usd: float) -> None:
        """Count one call of ``supervisor`` here and in its own entry."""
        self.add(prompt_tokens, completion_tokens, cost_usd)
        self.by_supervisor.setdefault(supervisor, Usage()).add(prompt_tokens, completion_tokens, cost_usd)


class LedgerFile(BaseModel):
    """The ledger file's content."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = 1
    totals: UsageBreakdown = Field(default_factory=UsageBreakdown)
    days: dict[str, UsageBreakdown] = Field(default_factory=dict)


class LedgerError(Exception):
    """The ledger file cannot be read or written; the message names the file and why."""


def utc_day(now: datetime | None = None) -> str:
    """The UTC date as ``YYYY-MM-DD``: the key of a ledger day."""
    moment = now or datetime.now(timezone.utc)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc).date().isoformat()


class UsageLedger:
    """Per-day and total usage of the supervisors' model calls, kept in one JSON file."""

    def __init__(self, path: Path | str):
        self.path = Path(path).absolute()

    @classmethod
    def for_organizations(cls, organizations_root: Path) -> UsageLedger:
        """The ledger of an organizations folder: ``<root>/supervisors/usage.json``."""
        return cls(Path(organizations_root) / LEDGER_FOLDER / LEDGER_NAME)

    def _update(self, change: Callable[[LedgerFile], LedgerFile | None]) -> LedgerFile:
        """The ledger after ``change`` (None: nothing to write), under its lock; every failure is a LedgerError."""
        try:
            return update_json_file(self.path, _read, change, _dump, on_write_error=self._write_failed)
        except OSError as exc:  # reading and writing fail as LedgerErrors: only taking the lock is left
            raise LedgerError(f"{self.path}: cannot lock the usage ledger: {exc.strerror or exc}") from None

    def _write_failed(self, exc: OSError) -> None:
        raise LedgerError(f"{self.path}: cannot write the usage ledger: {exc.strerror or exc}") from None

    def snapshot(self) -> LedgerFile:
        """The whole ledger as it is on disk now (empty when there is no file yet)."""
        return self._update(lambda ledger: None)

    def day(self, date: str) -> UsageBreakdown:
        """Usage on one UTC date (``YYYY-MM-DD``)."""
        return self.snapshot().days.get(date, UsageBreakdown())

    def today(self, now: datetime | None = None) -> UsageBreakdown:
        """Usage on the current UTC day."""
        return self.day(utc_day(now))

    def totals(self) -> UsageBreakdown:
        """Usage since the ledger was started."""
        return self.snapshot().totals

    def spent_today(self, now: datetime | None = None) -> float:
        """US dollars spent on the current UTC day; ``LedgerError`` when the file is unreadable."""
        return self.today(now).cost_usd

    def record(self, *, supervisor: str, prompt_tokens: int, completion_tokens: int, cost_usd: float,
               now: datetime | None = None) -> None:
        """Add one model call to today's entry and the totals, and write the file atomically."""
        prompt_tokens, completion_tokens = max(0, int(prompt_tokens)), max(0, int(completion_tokens))
        cost_usd = max(0.0, float(cost_usd))

        def add(ledger: LedgerFile) -> LedgerFile:
            key = utc_day(now)
            ledger.days.setdefault(key, UsageBreakdown()).add_for(supervisor, prompt_tokens, completion_tokens, cost_usd)
            ledger.totals.add_for(supervisor, prompt_tokens, completion_tokens, cost_usd)
            for old in sorted(ledger.days)[:-KEEP_DAYS]:
                del ledger.days[old]
            return ledger

        self._update(add)


def _read(path: Path) -> LedgerFile:
    try:
        data = read_capped(path, MAX_LEDGER_BYTES)
    except FileNotFoundError:
        return LedgerFile()
    except FileRefused as exc:
        raise LedgerError(f"{path}: the usage ledger cannot be used ({exc.reason}); move it away") from None
    except OSError as exc:
        raise LedgerError(f"{path}: cannot read the usage ledger: {exc.strerror or exc}") from None
    try:
        return LedgerFile.model_validate_json(data)
    except ValidationError as exc:
        raise LedgerError(f"{path}: the usage ledger is damaged ({first_error(exc, '(document)')}); "
                          "fix or delete it to let the supervisors spend again") from None


def _dump(ledger: LedgerFile) -> str:
    return json.dumps(ledger.model_dump(mode="json"), indent=2, sort_keys=True) + "\n"


__all__ = ["LedgerError", "LedgerFile", "Usage", "UsageBreakdown", "UsageLedger", "utc_day"]
