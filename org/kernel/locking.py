"""One writer at a time for a file the pack shares: threads and processes alike.

Supervisors write the knowledge store, the directive queue, their counters and the usage
ledger from a background thread while the agent's hooks note finished tasks, and a
person may run ``a0org knowledge review`` at the same time. Each change is
read-modify-write under an exclusive lock on a sidecar ``.lock`` file (``flock``; where
that does not exist, a lock within this process only).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

try:
    import fcntl
except ImportError:  # not on Linux (Agent-Zero's container is)
    fcntl = None  # type: ignore[assignment]

_registry_lock = threading.Lock()
_locks: dict[str, threading.RLock] = {}
_held = threading.local()


def _thread_lock(key: str) -> threading.RLock:
    with _registry_lock:
        return _locks.setdefault(key, threading.RLock())


@contextmanager
def exclusive(lock_file: Path) -> Iterator[None]:
    """Hold the lock on ``lock_file`` (created if missing); re-entrant within a thread."""
    key = str(lock_file.resolve())
    depths: dict[str, int] = _held.__dict__.setdefault("depths", {})
    with _thread_lock(key):
        if depths.get(key):
            depths[key] += 1
            try:
                yield
            finally:
                depths[key] -= 1
            return
        lock_file.parent.mkdir(parents=True, exist_ok=True)
        with open(lock_file, "a+") as handle:
            if fcntl is not None:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            depths[key] = 1
            try:
                yield
            finally:
                depths[key] = 0
                if fcntl is not None:
                    fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
