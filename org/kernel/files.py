"""File primitives every part of the pack builds on; standard library only.

* :func:`atomic_write_text`, :func:`atomic_write_bytes`: a reader sees the old file or the new
  one, never half of either.
* :func:`remove_stale_temp_files`: what a writer killed mid-write left behind.
* :func:`read_capped`: a regular file's bytes, never through a symbolic link, never a FIFO,
  never more than a limit.
* :func:`json_object`, :func:`validated`, :func:`first_error`: bytes to a validated model,
  and a validation error as one line naming the field.
* :func:`exclusive`: one writer at a time for a shared file, threads and processes alike
  (``flock`` on a sidecar ``.lock`` file; where that does not exist, within this process only).
* :func:`update_json_file`: a locked read-modify-write of a JSON document.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

try:
    import fcntl
except ImportError:  # not on Linux (Agent-Zero's container is)
    fcntl = None  # type: ignore[assignment]

T = TypeVar("T")
M = TypeVar("M")  # a pydantic model; only its model_validate is called


class FileRefused(Exception):
    """A file that cannot be used; the message names the path and the reason."""

    def __init__(self, path: Path | str, reason: str):
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


def atomic_write_text(path: Path, text: str, *, durable: bool = True) -> None:
    """Write ``text`` as UTF-8 the way :func:`atomic_write_bytes` writes bytes."""
    atomic_write_bytes(path, text.encode("utf-8"), durable=durable)


def atomic_write_bytes(path: Path, data: bytes, mode: int | None = None, *, durable: bool = True) -> None:
    """Write via a temporary file in the same folder, flushed and fsync-ed, then renamed.

    A reader sees the old file or the new one, never half of either. The temporary name
    starts with a dot and ends in ``.tmp``, so no extension loader picks it up. ``mode``
    sets the file's permission bits; without it the file is readable by its owner only.
    ``durable=False`` skips the fsync, for a file rewritten so often that losing the last
    version to a power cut costs nothing (a sync costs milliseconds on a disk).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            if mode is not None:
                os.fchmod(handle.fileno(), mode)
            if durable:
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


#: The name :func:`atomic_write_bytes` gives its temporary file: ``.<target>.<8 random>.tmp``
#: (``tempfile.mkstemp``'s random part is 8 lower-case letters, digits or ``_``).
TEMP_NAME_RE = re.compile(r"\.(?P<target>.+)\.[a-z0-9_]{8}\.tmp")
#: A temporary file older than this belongs to no live writer: a write takes milliseconds.
STALE_TEMP_SECONDS = 600.0


def remove_stale_temp_files(folder: Path, target: re.Pattern[str], older_than: float = STALE_TEMP_SECONDS) -> list[Path]:
    """Remove the temporary files a killed writer left in ``folder``: only names
    :func:`atomic_write_bytes` gives (for a file whose name ``target`` fully matches), only
    regular files, and only those not changed for ``older_than`` seconds. The paths removed.

    ``folder`` itself is not followed if it is a symbolic link: nothing is removed elsewhere.
    """
    removed: list[Path] = []
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return removed  # missing, not a folder, or a link
    limit = time.time() - older_than
    try:
        with os.scandir(fd) as entries:
            names = [e.name for e in entries if (m := TEMP_NAME_RE.fullmatch(e.name)) and target.fullmatch(m.group("target"))]
        for name in names:
            try:
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                if stat.S_ISREG(st.st_mode) and st.st_mtime < limit:
                    os.unlink(name, dir_fd=fd)
                    removed.append(Path(folder) / name)
            except OSError:
                continue  # gone meanwhile, or not ours to remove
    except OSError:
        pass
    finally:
        os.close(fd)
    return removed


def new_file_mode() -> int:
    """The permission bits ``open()`` gives a new file: 0666 less the process umask.

    Reading the umask means setting it for a moment, so call this from a single-threaded
    command (the installer), not from the agent's threads.
    """
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o666 & ~umask


def read_capped(path: Path | str, limit: int) -> bytes:
    """The file's bytes, refusing symbolic links, anything but a regular file (a FIFO
    would block the reader), and anything over ``limit`` bytes."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise FileRefused(path, "is a symbolic link; refused") from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise FileRefused(path, "not a regular file")
        size = st.st_size
        if size > limit:
            raise FileRefused(path, f"{size} bytes, over the {limit}-byte limit")
        # read what is there and one byte more, until the end: a buffer of the limit's size
        # (256 KB for a report) costs more than reading a few kilobytes
        chunks, total = [], 0
        want = size + 1
        while total <= limit:
            asked = min(want, limit + 1 - total)
            chunk = os.read(fd, asked)
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if len(chunk) < asked:
                break  # a short read of a regular file is its end: no second call to learn it
            want = 65536
    finally:
        os.close(fd)
    if total > limit:
        raise FileRefused(path, f"grew past the {limit}-byte limit while being read")
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def parse_json_object(path: Path, data: bytes) -> dict[str, Any]:
    try:
        value = json.loads(data)
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
        raise FileRefused(path, f"not valid JSON ({exc})") from None
    except RecursionError:
        raise FileRefused(path, "not valid JSON (nested too deeply)") from None
    if not isinstance(value, dict):
        raise FileRefused(path, f"expected a JSON object, found {type(value).__name__}")
    return value


def check_version(path: Path, value: dict[str, Any], supported: int = 1) -> None:
    version = value.get("schema_version")
    if type(version) is int and version > supported:  # not a bool
        raise FileRefused(path, f"schema_version {version} is newer than this pack reads ({supported}); update the pack")


def json_object(path: Path | str, data: bytes) -> dict[str, Any]:
    """The JSON object in ``data`` from a format version this pack reads, or :class:`FileRefused`."""
    value = parse_json_object(path, data)
    check_version(path, value)
    return value


def validated(path: Path | str, model: Any, value: dict[str, Any], what: str) -> M:
    """``value`` as a ``model``, or :class:`FileRefused` naming the first wrong field."""
    try:
        return model.model_validate(value)
    except Exception as exc:
        raise FileRefused(path, f"not a valid {what}: {first_error(exc)}") from None


def first_error(exc: Exception, top: str = "(top level)") -> str:
    """One line for a validation error: the field path (``top`` when it is the whole
    value) and the reason, and how many more errors there are."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            found = errors()
            where = ".".join(str(p) for p in found[0].get("loc", ())) or top
            more = len(found) - 1
            return f"{where}: {found[0].get('msg')}" + (f" (and {more} more)" if more else "")
        except Exception:
            pass
    return (str(exc).splitlines() or [type(exc).__name__])[0]


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


def lock_file_for(path: Path) -> Path:
    """The sidecar lock file of ``path``."""
    return path.with_name(path.name + ".lock")


def update_json_file(path: Path, load: Callable[[Path], T], change: Callable[[T], T | None], dump: Callable[[T], str],
                     *, on_write_error: Callable[[OSError], None] | None = None) -> T:
    """Read ``path`` with ``load``, apply ``change`` and write the result atomically, under
    the file's exclusive lock. ``change`` returning None means: nothing to write.

    ``change`` may return the value it was given after changing it in place. A failed
    write raises, unless ``on_write_error`` takes the :class:`OSError` (to log it, or to
    raise the caller's own error); then the changed value is returned all the same. Errors
    of ``load`` and ``change`` pass through, and nothing is written.
    """
    with exclusive(lock_file_for(path)):
        value = load(path)
        changed = change(value)
        if changed is None:
            return value
        try:
            atomic_write_text(path, dump(changed))
        except OSError as exc:
            if on_write_error is None:
                raise
            on_write_error(exc)
        return changed
