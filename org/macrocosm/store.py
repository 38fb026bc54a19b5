"""The XO's memory of every unit: one sqlite3 database in its home (``<home>/xo.sqlite3``).

Trust follows ownership: what the XO decides on (cooldowns, the escalation ladder, pauses,
sequence numbers, the outbox, the relay's queue) lives where only the XO can write, never on
the shared volume, where any unit could edit it. One row per unit and volume (its real path:
a home used with another volume does not mistake those units for these) holds its
:class:`~.state.UnitState` as JSON; a sweep writes every state it changed in one transaction
(one sync for the whole sweep, not one per unit). The views read the same rows, read only.

Without a home (``--insecure``, a trial) the memory is kept in the process only.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Iterable

from org.kernel.log import warn_once

from .state import UnitState, salvage_unit_state

STORE_NAME = "xo.sqlite3"
_SCHEMA = "CREATE TABLE IF NOT EXISTS unit_states (volume TEXT NOT NULL, unit TEXT NOT NULL, state TEXT NOT NULL, PRIMARY KEY (volume, unit))"


def volume_key(volume: Path | str | None) -> str:
    """How the store names a volume: its real path ("" without one)."""
    return os.path.realpath(volume) if volume is not None else ""


def store_path(home_root: Path | str) -> Path:
    return Path(home_root) / STORE_NAME


class XOStore:
    """The database, opened by the XO for writing (the views use :func:`read_states`)."""

    def __init__(self, path: Path | None = None, volume: Path | str | None = None):
        self.path = path
        self.volume = volume_key(volume)
        if path is not None:
            # created owner-only before sqlite opens it (sqlite would follow the umask)
            fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0), 0o600)
            os.close(fd)
        self.db = sqlite3.connect(str(path) if path is not None else ":memory:", isolation_level=None, check_same_thread=False)
        if path is not None:
            self.db.execute("PRAGMA journal_mode=WAL")  # the views read while the XO writes
            self.db.execute("PRAGMA synchronous=FULL")  # a committed sweep survives a power cut
        self.db.execute(_SCHEMA)

    @classmethod
    def for_home(cls, home_root: Path | None, volume: Path | str | None = None) -> "XOStore":
        """The store of ``volume``'s units in the home when it is a folder; else kept in memory."""
        if home_root is not None and Path(home_root).is_dir():
            return cls(store_path(home_root), volume)
        return cls(None, volume)

    def load(self) -> dict[str, UnitState]:
        """Every saved unit state of the volume; a damaged one loses only its damaged parts (logged)."""
        return _states(self.db.execute("SELECT unit, state FROM unit_states WHERE volume = ?", (self.volume,)), self.path)

    def save(self, states: Iterable[UnitState]) -> bool:
        """Write the states in one transaction; False (logged once) when it could not be."""
        rows = [(self.volume, s.unit, s.model_dump_json()) for s in states]
        if not rows:
            return True
        try:
            self.db.execute("BEGIN IMMEDIATE")
            self.db.executemany("INSERT OR REPLACE INTO unit_states (volume, unit, state) VALUES (?, ?, ?)", rows)
            self.db.execute("COMMIT")
        except sqlite3.Error as exc:
            try:
                self.db.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            warn_once(f"{self.path or 'the XO memory'}: cannot write the XO's unit states ({exc}); will try again", key="store write")
            return False
        return True

    def close(self) -> None:
        self.db.close()


def _states(rows: Iterable[tuple[str, str]], where: Path | None) -> dict[str, UnitState]:
    states: dict[str, UnitState] = {}
    for unit, text in rows:
        label = f"{where or 'XO memory'} [{unit}]"
        try:
            value = json.loads(text)
            if not isinstance(value, dict):
                raise ValueError("not a JSON object")
            state, dropped = salvage_unit_state(label, value, unit)
        except Exception as exc:  # a row nothing can be saved of starts afresh
            warn_once(f"{label}: {exc}; the unit's XO state starts afresh")
            continue
        for part in dropped:
            warn_once(f"{label}: {part}; the rest of the unit's XO state is kept", key=f"dropped {label} {part.split(':', 1)[0]}")
        states[unit] = state
    return states


def read_states(home_root: Path | str, volume: Path | str | None = None) -> dict[str, UnitState]:
    """What the XO knows of each unit of ``volume`` (of every volume when None: the latest row per
    unit), read only (for the views); empty when there is no store."""
    path = store_path(home_root)
    if not path.is_file():
        return {}
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            if volume is None:
                rows = db.execute("SELECT unit, state FROM unit_states ORDER BY rowid").fetchall()
            else:
                rows = db.execute("SELECT unit, state FROM unit_states WHERE volume = ?", (volume_key(volume),)).fetchall()
            return _states(rows, path)
        finally:
            db.close()
    except sqlite3.Error as exc:
        warn_once(f"{path}: cannot read the XO's unit states ({exc})", key=f"store read {path}")
        return {}
