"""``a0org xo --volume DIR``: the XO as a long-running process.

One XO per volume: it holds an ``flock`` on the volume's folder itself, opened once at start,
so no file a unit can remove or replace decides it; and every sweep checks that the volume's
path still leads to that folder (else it stops rather than write elsewhere). Reports are noticed through
watchdog's native observer and swept at once; during a burst, reports are gathered so
that there is at most one sweep per ``--debounce`` seconds. Native events do not reach
every volume (a network share, a folder bind-mounted from another machine): a probe
file at start, and a safety scan every ``--rescan`` seconds that finds a changed report
no event announced, switch the XO to polling by itself; ``--polling`` starts there.
Heartbeats are evaluated even when nothing happens: every second with native events,
at every scan when polling. SIGTERM and SIGINT stop it cleanly: the sweep in progress
ends and every unit state is written.
"""

from __future__ import annotations

import dataclasses
import errno
import fcntl
import logging
import os
import signal
import sys
import threading
import time
import uuid
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from org.contracts.common import is_identifier
from org.kernel.files import FileRefused, atomic_write_bytes, read_capped
from org.kernel.log import logger
from org.kernel.paths import UnsafePathError

from .keys import XOHome
from .signing import OrganizationKeyError, legacy_key_problem
from .volume import REPORT_NAME, XO_BEAT_SECONDS, VolumeLayout
from .xo import XO, SweepResult

#: Exit code when the XO cannot start (another XO holds the volume, bad key, no volume).
EXIT_UNUSABLE = 2
#: Name prefix of the file the XO writes at start to see whether native events arrive.
PROBE_PREFIX = ".xo-probe-"
#: The running XO's pid, in its home.
PID_NAME = "xo.pid"
#: Longest wait between two looks at the stop flag.
_TICK = 0.2


#: The XO's home (keys, steering texts, roles), outside the volume.
ENV_XO_HOME = "A0ORG_XO_HOME"


@dataclass
class DaemonOptions:
    role: str = "xo"
    home: XOHome | None = None
    polling: bool = False
    poll_interval: float = 1.0
    debounce: float = 0.02
    rescan: float = 5.0
    once: bool = False
    heartbeat_interval: float = 1.0
    probe_timeout: float = 2.0
    #: how long a change a scan found may wait for its event before events count as missing
    event_grace: float = 0.5
    clock: Callable[[], float] = time.time
    relay_interval: float | None = 300.0  # the learning relay's rate limit per unit; None: off


class XOAlreadyRunning(Exception):
    """Another XO holds the volume's lock."""


class Heartbeat:
    """``xo/heartbeat``, renewed while the XO runs and removed when it stops: without it a
    unit's own supervisor steers its agent rather than leave it to an XO that is not there."""

    def __init__(self, layout: VolumeLayout):
        self.layout = layout
        self.path = layout.xo_heartbeat
        self._last: float | None = None

    def beat(self) -> None:
        now = time.monotonic()
        if self._last is not None and now - self._last < XO_BEAT_SECONDS:
            return
        self._last = now
        try:
            self.layout.write_file(self.path, b"")  # a fresh modification time, confined to the volume
        except (OSError, UnsafePathError) as exc:
            logger.warning("cannot renew %s (%s); units will steer themselves", self.path, getattr(exc, "strerror", None) or exc)

    def stop(self) -> None:
        try:
            self.layout.remove_file(self.path)
        except (OSError, UnsafePathError):
            pass


def _flock(folder: Path) -> int | None:
    """A descriptor of ``folder`` holding an exclusive ``flock``; None when another holds it."""
    # a descriptor of its own, so that two locks in one process conflict as two processes do
    fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        os.close(fd)
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            return None
        raise
    return fd


class XOLock:
    """An exclusive ``flock`` on the volume's folder, pinned for the XO's lifetime, and one on
    its home (with a home).

    No file on the volume decides it (a lock file can be removed or replaced by any unit),
    and it goes with the process: a killed XO never leaves a stale lock behind.
    ``<home>/xo.pid`` only says who holds it; nothing the XO reads about it is on the volume.
    """

    def __init__(self, layout: VolumeLayout, home: Path | None = None):
        self.layout = layout
        self.home = home
        self._fds: list[int] = []

    @property
    def pid_file(self) -> Path | None:
        return self.home / PID_NAME if self.home is not None else None

    def acquire(self) -> "XOLock":
        for folder, what in ((self.layout.root, "volume"), (self.home, "home")):
            if folder is None:
                continue
            fd = _flock(folder)
            if fd is None:
                self.release()
                holder = self._holder()
                who = f" (pid {holder})" if holder else ""
                raise XOAlreadyRunning(f"another XO is already running on this {what}{who}: {folder} is locked; only one XO may steer a volume") from None
            self._fds.append(fd)
        if self.layout.root_fd is None:
            self.layout.root_fd = self._fds[0]  # every write walks from the folder locked
        if self.pid_file is not None:
            try:
                atomic_write_bytes(self.pid_file, f"{os.getpid()}\n".encode(), mode=0o600)
            except OSError as exc:
                logger.warning("%s: cannot write the XO's pid (%s)", self.pid_file, exc)
        return self

    def _holder(self) -> str:
        if self.pid_file is None:
            return ""
        try:  # never blocks, never follows a link
            text = read_capped(self.pid_file, 32).decode("ascii", "replace").strip()
        except (OSError, FileRefused):
            return ""
        return text if text.isdigit() else ""

    def release(self) -> None:
        if self._fds and self.layout.root_fd == self._fds[0]:
            self.layout.root_fd = None
        for fd in self._fds:
            os.close(fd)  # closing drops the flock
        self._fds = []

    def __enter__(self) -> "XOLock":
        return self.acquire()

    def __exit__(self, *exc: Any) -> None:
        self.release()


class ReportEvents:
    """Collects, from the observer's thread, the units whose report changed."""

    def __init__(self, units_dir: Path):
        self.prefix = str(units_dir) + os.sep
        self.wake = threading.Event()
        self.probe_seen = threading.Event()
        self._lock = threading.Lock()
        self._pending: set[str] = set()
        self._announced: set[str] = set()

    def dispatch(self, event: Any) -> None:
        """watchdog's handler entry point (duck-typed, so any observer can feed it)."""
        # a new unit folder, or its report written (an atomic write ends in a rename to it)
        new_folder = event.is_directory and event.event_type in ("created", "moved")
        for raw in (event.src_path, getattr(event, "dest_path", "")):
            path = os.fsdecode(raw) if raw else ""
            if path.startswith(self.prefix):
                self._note(path[len(self.prefix):].split(os.sep), new_folder)

    def _note(self, parts: list[str], new_folder: bool) -> None:
        if parts[0].startswith(PROBE_PREFIX):
            self.probe_seen.set()
            return
        announces = (len(parts) == 1 and new_folder) or (len(parts) == 2 and parts[1] == REPORT_NAME)
        if announces and is_identifier(parts[0]):
            with self._lock:
                self._pending.add(parts[0])
                self._announced.add(parts[0])
            self.wake.set()

    def take(self) -> set[str]:
        """The units named since the last call."""
        with self._lock:
            units, self._pending = self._pending, set()
            self.wake.clear()
        return units

    def take_announced(self) -> set[str]:
        """Every unit named since the last call (swept or not)."""
        with self._lock:
            units, self._announced = self._announced, set()
        return units


class BoundedLog(logging.Filter):
    """At most ``limit`` records per ``window`` seconds from a library's logger, then one line
    saying the rest is left out: a unit can make the file watcher complain once per folder it
    creates (30,000 folders were 110 MB of warnings), and the XO's log must stay readable."""

    def __init__(self, limit: int = 5, window: float = 600.0, clock: Callable[[], float] = time.monotonic):
        super().__init__()
        self.limit, self.window, self.clock = limit, window, clock
        self._start, self._count = -window, 0

    def filter(self, record: logging.LogRecord) -> bool:
        now = self.clock()
        if now - self._start >= self.window:
            self._start, self._count = now, 0
        self._count += 1
        if self._count <= self.limit:
            return True
        if self._count == self.limit + 1:
            record.msg, record.args = "%s (further messages of %s left out for %g s)", (record.getMessage(), record.name, self.window)
            return True
        return False


def bound_library_log(name: str) -> None:
    """Every record of the library's loggers (``name`` and below) through one :class:`BoundedLog`."""
    library = logging.getLogger(name)
    if any(isinstance(f, BoundedLog) for h in library.handlers for f in h.filters):
        return
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter(f"[{name}] %(levelname)s %(message)s"))
    handler.addFilter(BoundedLog())
    library.addHandler(handler)
    library.propagate = False


class Watcher:
    """watchdog's native observer on the units folder, recursive."""

    def __init__(self, layout: VolumeLayout, events: ReportEvents):
        # imported here: without watchdog the XO still runs, by polling
        from watchdog.events import FileSystemEventHandler
        from watchdog.observers import Observer

        class Handler(FileSystemEventHandler):
            def dispatch(self, event: Any) -> None:
                events.dispatch(event)

        bound_library_log("watchdog")
        # its warning about a watch added twice prints every watched folder: MBs per line under a flood
        warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"watchdog(\.|$)")
        self.observer = Observer()
        self.observer.schedule(Handler(), str(layout.units_dir), recursive=True)

    def start(self) -> None:
        self.observer.start()

    def stop(self) -> None:
        try:
            self.observer.stop()
            self.observer.join(timeout=5)
        except Exception as exc:  # stopping must not hide why the XO is stopping
            logger.warning("the file-system observer did not stop cleanly (%s)", exc)


def probe(layout: VolumeLayout, events: ReportEvents, timeout: float) -> bool:
    """Write a file into the units folder and wait for its event."""
    path = layout.units_dir / f"{PROBE_PREFIX}{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        layout.write_file(path, b"probe\n")
        return events.probe_seen.wait(timeout)
    except (OSError, UnsafePathError) as exc:
        logger.warning("cannot write the event probe %s (%s)", path, getattr(exc, "strerror", None) or exc)
        return False
    finally:
        try:
            layout.remove_file(path)
        except (OSError, UnsafePathError):
            pass


def unannounced(result: SweepResult, announced: set[str]) -> set[str]:
    """Units whose report a scan found changed although no event named them."""
    return set(result.changed) - announced


class Daemon:
    """The XO's loop: native events with a safety scan, or polling."""

    def __init__(self, layout: VolumeLayout, options: DaemonOptions, stop_event: threading.Event):
        self.layout = layout
        self.options = options
        self.stop_event = stop_event
        self.xo = XO(layout, options.role, options.home, clock=options.clock, relay_interval=options.relay_interval)
        self.events = ReportEvents(layout.units_dir)
        self.watcher: Watcher | None = None
        self.lost: str | None = None
        self.heartbeat = Heartbeat(layout)

    def sweep(self, units: set[str] | None = None) -> SweepResult:
        lost = self.layout.still_pinned()
        if lost:
            if self.lost is None:
                logger.error("%s; the XO stops rather than write anywhere else", lost)
            self.lost = lost
            self.stop_event.set()
            return SweepResult()
        self.heartbeat.beat()
        try:
            return self.xo.sweep(units)
        except Exception as exc:  # the XO keeps going; one line says why a sweep failed
            logger.warning("sweep failed (%s: %s); trying again", type(exc).__name__, exc)
            return SweepResult()

    def start_native(self) -> bool:
        try:
            self.watcher = Watcher(self.layout, self.events)
            self.watcher.start()
        except Exception as exc:
            logger.warning("native file-system events unavailable on %s (%s); polling every %g s", self.layout.units_dir, exc, self.options.poll_interval)
            self.watcher = None
            return False
        if probe(self.layout, self.events, self.options.probe_timeout):
            return True
        logger.warning("no file-system event arrived for a probe in %s within %g s; polling every %g s", self.layout.units_dir, self.options.probe_timeout, self.options.poll_interval)
        self.stop_native()
        return False

    def stop_native(self) -> None:
        if self.watcher is not None:
            self.watcher.stop()
            self.watcher = None

    def run(self) -> int:
        self.xo.recover()
        native = not self.options.once and not self.options.polling and self.start_native()
        first = self.sweep()
        self.events.take_announced()
        if self.options.once:
            logger.info("XO %s swept %d unit(s) once: %d steering sent, %d file(s) skipped", self.xo.sender_role, first.units, len(first.sent), len(first.skipped))
            return 0
        if native:
            logger.info("XO %s watching %s with native file-system events", self.xo.sender_role, self.layout.root)
            self._native_loop()
        if not self.stop_event.is_set():
            logger.info("XO %s polling %s every %g s", self.xo.sender_role, self.layout.root, self.options.poll_interval)
            self._polling_loop()
        return 0

    def _native_loop(self) -> None:
        """Until stopped, or until events turn out not to arrive (then polling takes over)."""
        clock = time.monotonic
        next_scan = clock() + self.options.rescan
        next_beat = clock() + self.options.heartbeat_interval
        last_sweep = 0.0
        while not self.stop_event.is_set():
            wait = max(0.0, min(next_scan, next_beat, clock() + _TICK) - clock())
            if self.events.wake.wait(wait):
                # a report after a quiet spell is swept at once; the rest of a burst is
                # gathered so that there is at most one sweep per debounce interval
                self.stop_event.wait(max(0.0, last_sweep + self.options.debounce - clock()))
                self.sweep(self.events.take())
                last_sweep = next_beat = clock()
                next_beat += self.options.heartbeat_interval
            if clock() >= next_scan:
                if not self._events_arrive():
                    self.stop_native()
                    return
                next_scan = clock() + self.options.rescan
                next_beat = clock() + self.options.heartbeat_interval
            elif clock() >= next_beat:
                self.sweep(set())
                next_beat = clock() + self.options.heartbeat_interval
        self.stop_native()

    def _events_arrive(self) -> bool:
        """A safety scan; False when it found a changed report that no event announced."""
        announced = self.events.take_announced()
        missed = unannounced(self.sweep(), announced)
        if not missed:
            return True
        self.stop_event.wait(self.options.event_grace)  # an event may be on its way
        missed -= self.events.take_announced()
        if not missed:
            return True
        example = self.layout.units_dir / sorted(missed)[0] / REPORT_NAME
        logger.warning(
            "no file-system event announced %d changed report(s) (e.g. %s): this volume does not deliver native events; polling every %g s",
            len(missed), example, self.options.poll_interval,
        )
        return False

    def _polling_loop(self) -> None:
        while not self.stop_event.is_set():
            self.sweep()
            until = time.monotonic() + self.options.poll_interval
            while not self.stop_event.wait(max(0.0, min(XO_BEAT_SECONDS, until - time.monotonic()))) and time.monotonic() < until:
                self.heartbeat.beat()  # a long poll interval must not look like a stopped XO


def run(layout: VolumeLayout, options: DaemonOptions, stop_event: threading.Event) -> int:
    """Hold the volume's lock and supervise until ``stop_event`` is set (or once)."""
    with XOLock(layout, options.home.layout.root if options.home is not None else None):
        for folder in (layout.units_dir, layout.xo_dir):
            layout.ensure_inside(folder)
        daemon = Daemon(layout, options, stop_event)
        try:
            code = daemon.run()
            return EXIT_UNUSABLE if daemon.lost else code
        finally:
            daemon.heartbeat.stop()
            daemon.stop_native()
            daemon.xo.flush()
            daemon.xo.store.close()
            logger.info("XO %s stopped", daemon.xo.sender_role)


def main(volume: str | Path, home: str | None, options: DaemonOptions, insecure: bool = False) -> int:
    """``a0org xo``: 0 after a clean stop, 2 when the XO cannot start (or lost its volume).

    The XO's home is loaded here from ``home`` (else ``$A0ORG_XO_HOME``); ``options.home`` is
    replaced. Without one the XO runs only when ``insecure`` says so.
    """
    root = Path(volume)
    if not root.is_dir():
        print(f"a0org xo: {root}: the volume folder does not exist", file=sys.stderr)
        return EXIT_UNUSABLE
    if not is_identifier(options.role):
        print(f"a0org xo: --role {options.role!r} is not a valid role id (lower-case letters, digits, '_' and '-')", file=sys.stderr)
        return EXIT_UNUSABLE
    legacy = legacy_key_problem()
    if legacy:
        print(f"a0org xo: {legacy}", file=sys.stderr)
        return EXIT_UNUSABLE
    home = home or os.environ.get(ENV_XO_HOME) or None
    loaded: XOHome | None = None
    if home is not None:
        try:
            loaded = XOHome.load(home, root)
        except OrganizationKeyError as exc:
            print(f"a0org xo: {exc}", file=sys.stderr)
            return EXIT_UNUSABLE
        logger.info("XO signing with key %s (epoch %d); %d unit report key(s) registered", loaded.signing.key_id, loaded.epoch, len(loaded.unit_keys))
    elif not insecure:
        print(f"a0org xo: no XO home (--home DIR or ${ENV_XO_HOME}): without keys, anyone who can write to the volume "
              "could steer every unit. Create them with `a0org keys init --dir DIR` (docs/security.md), "
              "or pass --insecure for a trial on a machine you alone use", file=sys.stderr)
        return EXIT_UNUSABLE
    else:
        logger.warning("INSECURE: no XO home; steering is unsigned and reports are not authenticated: anyone who can write to the volume can steer every unit")
    stop_event = threading.Event()

    def stop(signum: int, _frame: Any) -> None:
        # the stop first: the handler runs between two steps of the sweep, and a log line written
        # here can fail inside a write it interrupted (a reentrant write to the same stream)
        stop_event.set()
        try:
            logger.info("XO stopping (%s)", signal.Signals(signum).name)
        except Exception:  # noqa: BLE001 - the stop is what matters
            pass

    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, stop)
    try:
        return run(VolumeLayout(root), dataclasses.replace(options, home=loaded), stop_event)
    except XOAlreadyRunning as exc:
        print(f"a0org xo: {exc}", file=sys.stderr)
        return EXIT_UNUSABLE
    except (UnsafePathError, OSError) as exc:
        print(f"a0org xo: {root}: cannot use the volume ({exc})", file=sys.stderr)
        return EXIT_UNUSABLE
