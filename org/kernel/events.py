"""The supervision event log: ``<organizations folder>/events/events.jsonl``, one JSON line
per event, appended; rotated to ``events.1.jsonl`` … ``events.<KEEP>.jsonl`` once it passes
``MAX_BYTES``. Writing never raises (fail open: a full disk loses events, never a turn)."""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

from org.contracts import SupervisionEvent
from org.contracts.event import MAX_EVENT_TEXT

from .files import exclusive, lock_file_for
from .log import warn_once
from .redact import redact

FOLDER = "events"
NAME = "events.jsonl"
MAX_BYTES = 5_000_000
KEEP = 4
#: A line longer than this is not an event of ours (read with a cap, skipped).
MAX_LINE = 20_000


def log_path(organizations: Path) -> Path:
    return organizations / FOLDER / NAME


def rotated(path: Path) -> list[Path]:
    """The log's files, oldest first."""
    return [path.with_name(f"events.{n}.jsonl") for n in range(KEEP, 0, -1)] + [path]


def record(organizations: Path, kind: str, **fields: Any) -> None:
    """Append one event (its text redacted). Problems are logged once, never raised."""
    try:
        text = fields.get("text")
        if isinstance(text, str):
            fields["text"] = redact(text)[:MAX_EVENT_TEXT]
        event = SupervisionEvent(time=datetime.now(timezone.utc), type=kind, **fields)
        append(log_path(organizations), event.model_dump_json(exclude_defaults=True) + "\n")
    except Exception as exc:  # the agent's turn goes on without its event
        warn_once(f"{log_path(organizations)}: cannot record a supervision event ({type(exc).__name__}: {exc})",
                  key=f"events {organizations}")


def append(path: Path, line: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with exclusive(lock_file_for(path)):
        try:
            if path.stat().st_size + len(line) > MAX_BYTES:
                files = rotated(path)
                for older, newer in zip(files, files[1:]):
                    if newer.exists():
                        os.replace(newer, older)
        except FileNotFoundError:
            pass
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
        try:
            os.write(fd, line.encode("utf-8"))
        finally:
            os.close(fd)


def read(organizations: Path) -> Iterator[SupervisionEvent]:
    """Every event still kept, oldest first; a line that is not an event is skipped."""
    for path in rotated(log_path(organizations)):
        try:
            handle = open(path, encoding="utf-8", errors="replace")
        except OSError:
            continue
        with handle:
            for line in handle:
                if len(line) > MAX_LINE or not line.strip():
                    continue
                try:
                    yield SupervisionEvent.model_validate(json.loads(line))
                except ValueError:
                    continue
