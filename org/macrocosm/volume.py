"""The shared volume's layout, and reading its files defensively.

::

    <volume>/
      units/<unit>/salute.json              the unit's latest SALUTE report (written by the unit)
      units/<unit>/inbox/<seq>-<id>.json    steering from the XO, waiting to be applied
      units/<unit>/inbox/processed/         steering the unit applied (its acknowledgement)
      units/<unit>/inbox/rejected/          steering the unit refused, with a .reason file
      xo/heartbeat                          renewed by the running XO: units steer themselves without it

Nothing else: what the XO knows and decides (its memory of each unit, its events, its pid)
is in its home, off the volume. Every byte the XO reads here is untrusted: regular files only,
opened without following a link or blocking, with a size cap, and only what a unit says about
itself.

Every file is written atomically (temporary file in the same folder, fsync, rename), and
every write is confined to the volume at the moment it happens: the folders on the way
are opened one by one from the volume's own folder, never following a symbolic link, and
the file is created and renamed inside the last one (``dir_fd``). A process that pinned
the volume (the XO) walks from the folder it opened at start, so a volume unmounted or
replaced meanwhile gets nothing written through its old path.
Unit ids are checked before they reach a path, and reports and messages are read only
from regular files (never through a symbolic link).
"""

from __future__ import annotations

import errno
import os
import stat
import uuid
from pathlib import Path

from org.contracts import SaluteReport
from org.contracts.common import is_identifier
from org.kernel.files import FileRefused, json_object, read_capped, validated
from org.kernel.paths import UnsafePathError, checked_id, safe_child
from org.kernel.salute import MAX_REPORT_BYTES
from org.lazy_patterns import lazy_pattern

from .environment import ENV_UNIT, ENV_VOLUME  # noqa: F401  (re-exported: the link and views name them from here)

#: The running XO renews ``xo/heartbeat`` this often; a unit counts it gone once the file is older
#: than ``XO_SILENT_AFTER`` (or missing: an XO that stops cleanly removes it).
XO_BEAT_SECONDS = 5.0
XO_SILENT_AFTER = 60.0

REPORT_NAME = "salute.json"
MESSAGE_SUFFIX = ".json"
#: ``<seq, 10 ASCII digits>-<id, 32 hex>.json``: the name of every steering file.
MESSAGE_NAME_RE = lazy_pattern(r"([0-9]{10})-([0-9a-f]{32})\.json")  # use with fullmatch


_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_NEW_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


class VolumeLayout:
    def __init__(self, root: Path | str):
        self.root = Path(root)
        #: the volume's folder as opened by :meth:`pin`; every write then walks from it
        self.root_fd: int | None = None

    @property
    def units_dir(self) -> Path:
        return self.root / "units"

    @property
    def xo_dir(self) -> Path:
        return self.root / "xo"

    @property
    def xo_heartbeat(self) -> Path:
        return self.xo_dir / "heartbeat"

    def unit_dir(self, unit: str) -> Path:
        return safe_child(self.units_dir, checked_id(unit, "unit id"))

    def report(self, unit: str) -> Path:
        return self.unit_dir(unit) / REPORT_NAME

    def inbox(self, unit: str) -> Path:
        return self.unit_dir(unit) / "inbox"

    def processed(self, unit: str) -> Path:
        return self.inbox(unit) / "processed"

    def rejected(self, unit: str) -> Path:
        return self.inbox(unit) / "rejected"

    def message_file(self, unit: str, seq: int, message_id: str) -> Path:
        return self.inbox(unit) / message_name(seq, message_id)

    def unit_ids(self) -> tuple[list[str], list[str]]:
        """Entries of ``units/``: (unit folders, the others: invalid ids, symbolic links, files)."""
        valid, invalid = [], []
        try:
            entries = os.scandir(self.units_dir)
        except OSError:
            return valid, invalid
        with entries:
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                if is_identifier(entry.name) and entry.is_dir(follow_symlinks=False):
                    valid.append(entry.name)
                else:
                    invalid.append(entry.name)
        return valid, invalid

    # ----- confined writes -------------------------------------------------------

    def pin(self) -> int:
        """Open the volume's folder for good: later writes walk from this one."""
        if self.root_fd is None:
            self.root_fd = os.open(self.root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
        return self.root_fd

    def unpin(self) -> None:
        if self.root_fd is not None:
            os.close(self.root_fd)
            self.root_fd = None

    def still_pinned(self) -> str | None:
        """Why the volume's path no longer leads to the folder pinned at start, or None."""
        if self.root_fd is None:
            return None
        try:
            now, pinned = os.stat(self.root), os.fstat(self.root_fd)
        except OSError as exc:
            return f"{self.root}: the volume's folder cannot be reached ({exc.strerror or exc})"
        if (now.st_dev, now.st_ino) != (pinned.st_dev, pinned.st_ino):
            return f"{self.root}: no longer the folder this XO opened at start (unmounted or replaced)"
        return None

    def _parts(self, folder: Path) -> tuple[str, ...]:
        try:
            parts = Path(folder).relative_to(self.root).parts
        except ValueError:
            raise UnsafePathError(f"{folder} is not inside the volume {self.root}") from None
        for part in parts:
            if part in ("", ".", ".."):
                raise UnsafePathError(f"{folder}: '{part}' in a path on the volume")
        return parts

    def open_folder(self, folder: Path, create: bool = True) -> int:
        """A descriptor of ``folder``, reached from the volume's folder one step at a time
        without following a symbolic link (created on the way when ``create``)."""
        fd = os.dup(self.root_fd) if self.root_fd is not None else os.open(self.root, _DIR_FLAGS & ~getattr(os, "O_NOFOLLOW", 0))
        try:
            walked = self.root
            for part in self._parts(folder):
                walked = walked / part
                try:
                    child = os.open(part, _DIR_FLAGS, dir_fd=fd)
                except FileNotFoundError:
                    if not create:
                        raise
                    try:
                        os.mkdir(part, dir_fd=fd)
                    except FileExistsError:
                        pass
                    child = os.open(part, _DIR_FLAGS, dir_fd=fd)
                except OSError as exc:
                    if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                        raise UnsafePathError(f"{walked} is a symbolic link or not a folder; nothing is written through it") from None
                    raise
                os.close(fd)
                fd = child
            return fd
        except BaseException:
            os.close(fd)
            raise

    def ensure_inside(self, folder: Path) -> Path:
        """Create ``folder`` (and those on the way) inside the volume; refused through a link."""
        os.close(self.open_folder(folder))
        return folder

    def write_file(self, path: Path, data: bytes) -> None:
        """Write ``path`` atomically, confined to the volume (see the module's description)."""
        fd = self.open_folder(path.parent)
        try:
            write_at(fd, path.name, data)
        finally:
            os.close(fd)

    def move_file(self, path: Path, folder: Path) -> Path:
        """Move ``path`` into ``folder`` (created), both reached without following a link."""
        source = self.open_folder(path.parent, create=False)
        try:
            target = self.open_folder(folder)
            try:
                os.rename(path.name, path.name, src_dir_fd=source, dst_dir_fd=target)
            finally:
                os.close(target)
        finally:
            os.close(source)
        return folder / path.name

    def remove_file(self, path: Path) -> None:
        fd = self.open_folder(path.parent, create=False)
        try:
            os.unlink(path.name, dir_fd=fd)
        finally:
            os.close(fd)


def write_at(dir_fd: int, name: str, data: bytes) -> None:
    """Temporary dot file beside ``name`` in the folder ``dir_fd``, fsync-ed, renamed over it."""
    tmp = f".{name}.{uuid.uuid4().hex[:8]}.tmp"
    fd = os.open(tmp, _NEW_FILE_FLAGS, 0o600, dir_fd=dir_fd)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=dir_fd)
        except OSError:
            pass
        raise


def xo_silence(layout: VolumeLayout, now: float) -> float | None:
    """Seconds since the running XO last renewed its heartbeat; None when there is none."""
    try:
        st = os.lstat(layout.xo_heartbeat)
    except OSError:
        return None
    return max(0.0, now - st.st_mtime) if stat.S_ISREG(st.st_mode) else None


def xo_running(layout: VolumeLayout, now: float) -> bool:
    silence = xo_silence(layout, now)
    return silence is not None and silence < XO_SILENT_AFTER


def message_name(seq: int, message_id: str) -> str:
    return f"{seq:010d}-{message_id}{MESSAGE_SUFFIX}"


def message_seq(name: str) -> int | None:
    """The seq in a steering file's name, or None when the name is not one."""
    match = MESSAGE_NAME_RE.fullmatch(name)
    return int(match.group(1)) if match else None


def unit_entry_problem(name: str, st: os.stat_result) -> str:
    """Why an entry of ``units/`` (its ``lstat``) is not a unit folder."""
    if not is_identifier(name):
        return "not a valid unit id (lower-case letters, digits, '_' and '-', at most 64); folder ignored"
    if stat.S_ISLNK(st.st_mode):
        return "is a symbolic link; a unit folder must be a real folder inside the volume"
    return "not a folder; ignored"


def read_report(path: Path | str, unit: str | None = None, data: bytes | None = None) -> SaluteReport:
    """A validated SALUTE report (of ``unit`` when given; from ``data`` when read already),
    or :class:`FileRefused` saying why not.

    ``FileNotFoundError`` passes through: a unit that has not reported yet is not an error.
    """
    if data is None:
        data = read_capped(path, MAX_REPORT_BYTES)
    try:
        report = SaluteReport.model_validate_json(data)  # the common case, straight from the bytes
    except ValueError:  # read it again step by step, to say why it is refused
        report = validated(path, SaluteReport, json_object(path, data), "SALUTE report")
    named = report.unit.unit_id
    if unit is not None and named is not None and named != unit:
        raise FileRefused(Path(path), f"unit.unit_id: '{named}' is not the unit of this folder ('{unit}')")
    return report
