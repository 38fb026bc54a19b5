"""The supervision event log: ``events/events.jsonl`` (in the organizations folder for an
agent's own supervisor, in ``xo/`` on a shared volume for the XO), one JSON line per event,
appended; rotated to ``events.1.jsonl`` … ``events.<KEEP>.jsonl`` once it passes
``MAX_BYTES``. Writing never raises (fail open: a full disk loses events, never a turn)."""

from __future__ import annotations

import json
import os
import stat
from contextlib import nullcontext
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

from org.contracts import SupervisionEvent

from .files import FileRefused, exclusive, lock_file_for, read_capped
from .log import warn_once

FOLDER = "events"
NAME = "events.jsonl"
MAX_BYTES = 5_000_000
KEEP = 4
#: A line longer than this is not an event of ours (skipped).
MAX_LINE = 20_000
#: never through a link, never waiting on a FIFO
_APPEND = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)


def log_path(folder: Path) -> Path:
    return folder / FOLDER / NAME


def rotated_names() -> list[str]:
    """The log's file names, oldest first."""
    return [f"events.{n}.jsonl" for n in range(KEEP, 0, -1)] + [NAME]


def lines_of(events: tuple[tuple[str, dict[str, Any]], ...]) -> bytes:
    """One JSON line per event, validated against the contract (pydantic's own validator and
    serialiser, called directly: written at every turn with findings; the contract is built on
    first use)."""
    validate = SupervisionEvent.__pydantic_validator__.validate_python
    serialise = SupervisionEvent.__pydantic_serializer__.to_json
    now = datetime.now(timezone.utc)
    return b"".join(serialise(validate({"time": now, "type": kind, **fields}), exclude_defaults=True) + b"\n"
                    for kind, fields in events)


_FOLDER_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
#: folder -> (its log, the log's folder as text, the log's lock): the paths of a folder written every turn
_known_places: dict[Path, tuple[Path, str, Path]] = {}


def _places(folder: Path) -> tuple[Path, str, Path]:
    places = _known_places.get(folder)
    if places is None:
        path = log_path(folder)
        places = (path, str(path.parent), lock_file_for(path))
        if len(_known_places) >= 64:
            _known_places.clear()
        _known_places[folder] = places
    return places


def record(folder: Path, *events: tuple[str, dict[str, Any]]) -> None:
    """Append events ``(kind, fields)`` to ``folder``'s log, all in one write. Problems are
    logged once, never raised."""
    try:
        path, parent, lock = _places(folder)
        data = lines_of(events)
        try:
            fd, size = _checked(os.open(path, _APPEND, 0o600))
        except FileNotFoundError:  # the first event: the folder is made once, not at every turn
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, size = _checked(os.open(path, _APPEND, 0o600))
        try:
            if size + len(data) <= MAX_BYTES:
                os.write(fd, data)  # the common case: one open, one write
                return
        finally:
            os.close(fd)
        dir_fd = os.open(parent, _FOLDER_FLAGS)  # full: rotated in the folder, under the lock
        try:
            append_at(dir_fd, data, lock=lock)
        finally:
            os.close(dir_fd)
    except Exception as exc:  # the agent's turn goes on without its events
        warn_once(f"{log_path(folder)}: cannot record a supervision event ({type(exc).__name__}: {exc})", key=f"events {folder}")


def append_at(dir_fd: int, data: bytes, lock: Path | None = None) -> None:
    """One ``O_APPEND`` write in the folder ``dir_fd``, which writers in other processes cannot
    tear; rotation only under ``lock`` (none: the caller is the log's only writer)."""
    fd, size = _open_log(dir_fd)
    try:
        if size + len(data) > MAX_BYTES:
            os.close(fd)
            fd = -1
            with exclusive(lock) if lock is not None else nullcontext():
                _rotate(dir_fd, len(data))
            fd, _ = _open_log(dir_fd)
        os.write(fd, data)
    finally:
        if fd >= 0:
            os.close(fd)


def _open_log(dir_fd: int) -> tuple[int, int]:
    return _checked(os.open(NAME, _APPEND, 0o600, dir_fd=dir_fd))


def _checked(fd: int) -> tuple[int, int]:
    """``fd`` and the log's size when it is the log opened for appending: a regular file with no
    other name (a hard link would append into whatever file it shares); else closed, and
    :class:`FileRefused`. (The size comes from the same look: a turn's events cost one ``fstat``.)"""
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
        os.close(fd)
        raise FileRefused(NAME, "not a regular file" if not stat.S_ISREG(st.st_mode) else "has another name (a hard link); nothing appended")
    return fd, st.st_size


def _rotate(dir_fd: int, incoming: int) -> None:
    try:
        if os.stat(NAME, dir_fd=dir_fd, follow_symlinks=False).st_size + incoming <= MAX_BYTES:
            return  # another writer rotated it meanwhile
    except FileNotFoundError:
        return
    names = rotated_names()
    for older, newer in zip(names, names[1:]):
        try:
            os.replace(newer, older, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except FileNotFoundError:
            continue


def read(folder: Path) -> Iterator[SupervisionEvent]:
    """Every event still kept, oldest first; a line that is not an event is skipped, and so is
    a file that is not a regular file (it may sit on a volume others write to)."""
    for name in rotated_names():
        try:
            data = read_capped(log_path(folder).with_name(name), MAX_BYTES + MAX_LINE)
        except (OSError, FileRefused):
            continue
        for line in data.decode("utf-8", errors="replace").splitlines():
            if len(line) > MAX_LINE or not line.strip():
                continue
            try:
                yield SupervisionEvent.model_validate(json.loads(line))
            except ValueError:
                continue
