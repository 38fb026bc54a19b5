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

from .files import exclusive, lock_file_for
from .log import warn_once

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


def record(organizations: Path, *events: tuple[str, dict[str, Any]]) -> None:
    """Append events ``(kind, fields)``, all in one write: one validated line each. Problems
    are logged once, never raised."""
    try:
        now = datetime.now(timezone.utc)
        lines = "".join(SupervisionEvent(time=now, type=kind, **fields).model_dump_json(exclude_defaults=True) + "\n"
                        for kind, fields in events)
        append(log_path(organizations), lines)
    except Exception as exc:  # the agent's turn goes on without its events
        warn_once(f"{log_path(organizations)}: cannot record a supervision event ({type(exc).__name__}: {exc})",
                  key=f"events {organizations}")


def append(path: Path, line: str) -> None:
    """One ``O_APPEND`` write per line, which writers in other processes cannot tear; the lock
    is taken only to rotate, and the size is checked again under it."""
    data = line.encode("utf-8")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except FileNotFoundError:  # the first event: the folder is made once
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        if os.fstat(fd).st_size + len(data) > MAX_BYTES:
            os.close(fd)
            fd = -1
            _rotate(path, len(data))
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
        os.write(fd, data)
    finally:
        if fd >= 0:
            os.close(fd)


def _rotate(path: Path, incoming: int) -> None:
    with exclusive(lock_file_for(path)):
        try:
            if path.stat().st_size + incoming <= MAX_BYTES:
                return  # another writer rotated it meanwhile
        except FileNotFoundError:
            return
        files = rotated(path)
        for older, newer in zip(files, files[1:]):
            if newer.exists():
                os.replace(newer, older)


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
