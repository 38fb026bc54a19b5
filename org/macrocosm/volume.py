"""The shared volume's layout, and reading its files defensively.

::

    <volume>/
      units/<unit>/salute.json              the unit's latest SALUTE report (written by the unit)
      units/<unit>/inbox/<seq>-<id>.json    steering from the XO, waiting to be applied
      units/<unit>/inbox/processed/         steering the unit applied (its acknowledgement)
      units/<unit>/inbox/rejected/          steering the unit refused, with a .reason file
      xo/units/<unit>.json                  the XO's state for the unit (cooldowns, escalation, outbox)
      xo/xo.lock                            held by the running XO
      xo/heartbeat                          renewed by the running XO: units steer themselves without it
      xo/steering.yaml                      optional: the XO's own wording of the steering texts

Every file is written atomically (temporary file in the same folder, fsync, rename).
Unit ids are checked before they reach a path, reports and messages are read only
from regular files (never through a symbolic link), and no folder is created or
written through a symbolic link that leads out of the volume.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from org.contracts import SaluteReport
from org.contracts.common import is_identifier
from org.kernel.files import FileRefused, json_object, read_capped, validated
from org.kernel.paths import UnsafePathError, checked_id, safe_child
from org.kernel.salute import MAX_REPORT_BYTES

#: The running XO renews ``xo/heartbeat`` this often; a unit counts it gone once the file is older
#: than ``XO_SILENT_AFTER`` (or missing: an XO that stops cleanly removes it).
XO_BEAT_SECONDS = 5.0
XO_SILENT_AFTER = 60.0

ENV_VOLUME = "A0ORG_VOLUME"
ENV_UNIT = "A0ORG_UNIT"

REPORT_NAME = "salute.json"
MESSAGE_SUFFIX = ".json"
#: ``<seq, 10 ASCII digits>-<id, 32 hex>.json``: the name of every steering file.
MESSAGE_NAME_RE = re.compile(r"([0-9]{10})-([0-9a-f]{32})\.json")  # use with fullmatch


class VolumeLayout:
    def __init__(self, root: Path | str):
        self.root = Path(root)

    @property
    def units_dir(self) -> Path:
        return self.root / "units"

    @property
    def xo_dir(self) -> Path:
        return self.root / "xo"

    @property
    def xo_lock(self) -> Path:
        return self.xo_dir / "xo.lock"

    @property
    def xo_heartbeat(self) -> Path:
        return self.xo_dir / "heartbeat"

    @property
    def xo_units_dir(self) -> Path:
        return self.xo_dir / "units"

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

    def xo_state(self, unit: str) -> Path:
        return safe_child(self.xo_units_dir, checked_id(unit, "unit id") + ".json")

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

    def ensure_inside(self, folder: Path) -> Path:
        """Create ``folder`` if needed and refuse it when it resolves outside the volume.

        Checked before anything is created too, so a symbolic link on the way (``units``
        leading elsewhere) never gets folders made at its far end.
        """
        root = os.path.realpath(self.root)
        self._check_inside(folder, root)
        folder.mkdir(parents=True, exist_ok=True)
        self._check_inside(folder, root)
        return folder

    @staticmethod
    def _check_inside(folder: Path, root: str) -> None:
        real = os.path.realpath(folder)
        if real != root and not real.startswith(root + os.sep):
            raise UnsafePathError(f"{folder} resolves to {real}, outside the volume {root}")


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


def read_report(path: Path | str, unit: str | None = None) -> SaluteReport:
    """A validated SALUTE report (of ``unit`` when given), or :class:`FileRefused` saying why not.

    ``FileNotFoundError`` passes through: a unit that has not reported yet is not an error.
    """
    data = read_capped(path, MAX_REPORT_BYTES)
    try:
        report = SaluteReport.model_validate_json(data)  # the common case, straight from the bytes
    except ValueError:  # read it again step by step, to say why it is refused
        report = validated(path, SaluteReport, json_object(path, data), "SALUTE report")
    named = report.unit.unit_id
    if unit is not None and named is not None and named != unit:
        raise FileRefused(Path(path), f"unit.unit_id: '{named}' is not the unit of this folder ('{unit}')")
    return report
