"""What ``status``, ``watch`` and ``tail`` share: a unit's files read (only again when they
changed), its status row computed the way the XO judges it, and the table of rows.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from org.contracts import SaluteReport
from org.contracts.role import HeartbeatDoctrine
from org.kernel.files import FileRefused
from org.kernel.log import printable  # noqa: F401  (the views' name for it)
from org.kernel.paths import checked_id

from ..state import UnitState, freshness
from ..store import STORE_NAME, read_states
from ..volume import MESSAGE_SUFFIX, VolumeLayout, read_report, unit_entry_problem

#: The keys of one ``status --json`` row, in order. Documented in docs/macrocosm.md.
STATUS_KEYS: tuple[str, ...] = (
    "unit", "role", "state", "pace", "health", "context_fill", "turn", "age_seconds",
    "freshness", "pending", "nudges", "paused", "paused_by", "error", "degraded",
)

_DEFAULT_HEARTBEAT = HeartbeatDoctrine()


# --------------------------------------------------------------------------- reading


def stamp_of(path: Path | str) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path, follow_symlinks=False)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def attempt(read: Callable[[Path], Any], path: Path, missing: str) -> tuple[Any, str | None]:
    """(``read(path)``, None), or (None, why the file cannot be used); ``missing`` when it is not there."""
    try:
        return read(path), None
    except FileNotFoundError:
        return None, missing
    except FileRefused as exc:
        return None, exc.reason
    except OSError as exc:
        return None, f"cannot read: {exc.strerror or type(exc).__name__}"


def load_report(path: Path, unit: str | None = None) -> tuple[SaluteReport | None, str | None]:
    """(report, None), or (None, why it cannot be used, as the XO sees it); a missing report is ``no report yet``."""
    return attempt(lambda p: read_report(p, unit), path, "no report yet")


@dataclass
class FileCache:
    """Files read again only when they changed: ``watch`` redraws every second."""

    entries: dict[str, tuple[tuple[int, int, int], Any]] = field(default_factory=dict)
    touched: set[str] = field(default_factory=set)

    def get(self, path: str, load: Callable[[], Any]) -> Any:
        self.touched.add(path)
        stamp = stamp_of(path)
        if stamp is None:
            self.entries.pop(path, None)
            return load()
        hit = self.entries.get(path)
        if hit is not None and hit[0] == stamp:
            return hit[1]
        value = load()
        self.entries[path] = (stamp, value)
        return value

    def forget_untouched(self) -> None:
        """Drop the files of units that are gone; called after each full round."""
        for path in [p for p in self.entries if p not in self.touched]:
            del self.entries[path]
        self.touched.clear()


def _read(path: str, load: Callable[[], Any], cache: FileCache | None) -> Any:
    return cache.get(path, load) if cache is not None else load()


def is_message(entry: os.DirEntry) -> bool:
    """A steering file: not a folder (processed/, rejected/), not a writer's temporary dot file."""
    return entry.name.endswith(MESSAGE_SUFFIX) and not entry.name.startswith(".") and entry.is_file(follow_symlinks=False)


def pending_steering(inbox: Path | str) -> int:
    """Steering files waiting in the inbox (not yet applied or refused by the unit)."""
    try:
        entries = os.scandir(inbox)
    except OSError:
        return 0
    with entries:
        return sum(1 for e in entries if is_message(e))


def heartbeat_of(report: SaluteReport) -> HeartbeatDoctrine:
    """The unit's own freshness thresholds (its doctrine travels in the report), as the XO uses them."""
    return report.signals.doctrine.heartbeat if report.signals is not None else _DEFAULT_HEARTBEAT


def context_fill_of(report: SaluteReport) -> float | None:
    if report.signals is not None and report.signals.context_fill is not None:
        return report.signals.context_fill
    return report.environment.context_fill_pct


def epoch_seconds(moment: datetime) -> float:
    """Seconds since the epoch; a time written without a zone is UTC, as the XO reads it."""
    return (moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)).timestamp()


def utc_text(moment: datetime) -> str:
    """``YYYY-MM-DDTHH:MM:SSZ``; a time whose UTC is outside the years 1 to 9999 (9999-12-31
    at -05:00) is shown as written."""
    aware = moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)
    try:
        return aware.astimezone(timezone.utc).replace(tzinfo=None).isoformat(timespec="seconds") + "Z"
    except (OverflowError, ValueError):
        return moment.isoformat(timespec="seconds")


def turn_of(report: SaluteReport) -> int:
    return report.signals.turn if report.signals is not None else report.time.turns_elapsed


class _Places:
    """The paths of a unit's files as plain strings: a status round builds 30,000 of
    them for 10,000 units, and pathlib would be most of its time."""

    def __init__(self, layout: VolumeLayout, sample: str = "unit"):
        # the names come from the layout, so the two cannot drift apart
        self.units = str(layout.unit_dir(sample).parent) + os.sep
        self.report_tail = os.sep + layout.report(sample).name
        self.inbox_tail = os.sep + layout.inbox(sample).name

    def report(self, unit: str) -> str:
        return self.units + unit + self.report_tail

    def inbox(self, unit: str) -> str:
        return self.units + unit + self.inbox_tail


@dataclass(frozen=True)
class ReportSummary:
    """What a status row needs from a report; ``watch`` keeps this, not the whole report."""

    role: str
    state: str
    pace: str
    health: str
    context_fill: float | None
    turn: int
    time: float
    heartbeat: HeartbeatDoctrine


def summarize(path: Path, unit: str) -> tuple[ReportSummary | None, str | None]:
    report, error = load_report(path, unit)
    if report is None:
        return None, error
    fill = context_fill_of(report)
    return ReportSummary(
        role=report.unit.role_id, state=report.status.state, pace=report.status.pace_level, health=report.status.health,
        context_fill=round(fill, 4) if fill is not None else None, turn=turn_of(report),
        time=epoch_seconds(report.time.timestamp), heartbeat=heartbeat_of(report),
    ), None


def xo_knowledge(home: Path | str | None, cache: FileCache | None = None, volume: Path | str | None = None) -> dict[str, UnitState]:
    """What the XO knows of each unit, from its store in its home (read only); empty without
    a home. The views show the XO's nudges, pauses and thresholds from it, never from the volume."""
    if home is None:
        return {}
    if cache is None:
        return read_states(home, volume)
    path = os.path.join(home, STORE_NAME)
    # a commit changes the write-ahead log, not always the database file
    stamp = (stamp_of(path), stamp_of(path + "-wal"))
    cache.touched.add(path)
    hit = cache.entries.get(path)
    if hit is not None and hit[0] == stamp:
        return hit[1]
    states = read_states(home, volume)
    cache.entries[path] = (stamp, states)  # type: ignore[assignment]
    return states


def unit_row(layout: VolumeLayout, unit: str, now: float, cache: FileCache | None = None, places: _Places | None = None,
             knowledge: dict[str, UnitState] | None = None) -> dict[str, Any]:
    """A unit's status row; ``knowledge`` (:func:`xo_knowledge`) adds what the XO knows of it."""
    places = places or _Places(layout)
    report_path = places.report(checked_id(unit, "unit id"))
    summary, error = _read(report_path, lambda: summarize(Path(report_path), unit), cache)
    state = (knowledge or {}).get(unit)
    nudges, paused, degraded = (state.nudges, state.paused_turn is not None, state.degraded) if state else (None, None, None)
    row: dict[str, Any] = dict.fromkeys(STATUS_KEYS)
    row.update(unit=unit, health="unknown", pending=pending_steering(places.inbox(unit)), nudges=nudges, paused=paused, paused_by=_paused_by(state),
               error=error, degraded=degraded)
    if summary is None:
        return row
    age = now - summary.time
    # the XO's thresholds (its own copy of the unit's role) once it knows the unit
    fresh = freshness(age, state.heartbeat if state is not None else summary.heartbeat)
    row.update(
        role=state.role_id if state is not None and state.role_id else summary.role,  # the XO's choice once it judged the unit
        state=summary.state,
        pace=summary.pace,
        # neither a silent unit's last word nor a report the XO cannot use counts
        health="unknown" if fresh == "very_stale" or degraded else summary.health,
        context_fill=summary.context_fill,
        turn=summary.turn,
        age_seconds=round(max(age, 0.0), 3),
        freshness=fresh,
    )
    return row


def _invalid_row(layout: VolumeLayout, name: str) -> dict[str, Any]:
    """The row of an entry of ``units/`` that is not a unit folder, saying why."""
    try:
        error = unit_entry_problem(name, os.lstat(layout.units_dir / name))
    except OSError as exc:  # gone since the listing
        error = f"cannot be read: {exc.strerror or type(exc).__name__}"
    row: dict[str, Any] = dict.fromkeys(STATUS_KEYS)
    row.update(unit=name, health="unknown", pending=0, error=error)
    return row


def status_rows(layout: VolumeLayout, now: float | None = None, cache: FileCache | None = None,
                home: Path | str | None = None) -> list[dict[str, Any]]:
    """One row per unit folder on the volume, sorted by unit id (keys: :data:`STATUS_KEYS`);
    with the XO's ``home``, what the XO knows of each."""
    now = time.time() if now is None else now
    valid, invalid = layout.unit_ids()
    places = _Places(layout)
    knowledge = xo_knowledge(home, cache, layout.root)
    rows = [unit_row(layout, unit, now, cache, places, knowledge) for unit in valid]
    if cache is not None:
        cache.forget_untouched()
    rows.extend(_invalid_row(layout, name) for name in invalid)
    rows.sort(key=lambda r: r["unit"])
    return rows


# --------------------------------------------------------------------------- the table


def format_age(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    s = int(seconds)
    if s < 120:
        return f"{s}s"
    if s < 7200:
        return f"{s // 60}m{s % 60:02d}s"
    if s < 172800:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    return f"{s // 86400}d{s % 86400 // 3600:02d}h"


def format_fill(fill: float | None) -> str:
    return "-" if fill is None else f"{fill * 100:.0f}%"


def _paused_by(state: UnitState | None) -> str | None:
    """Who paused the unit: "the XO" or "its own supervisor"; None while it runs."""
    if state is None or state.paused_turn is None:
        return None
    return "its own supervisor" if state.paused_itself else "the XO"


def _note(row: dict[str, Any]) -> str:
    if row["error"]:
        return row["error"]
    if row["degraded"]:
        return f"XO: heartbeat only ({row['degraded']})"
    return f"paused by {row['paused_by']}" if row["paused"] else ""


def _dash(value: Any) -> str:
    return "-" if value is None else str(value)


_COLUMNS: tuple[tuple[str, Callable[[dict[str, Any]], str]], ...] = (
    ("UNIT", lambda r: r["unit"]),
    ("ROLE", lambda r: _dash(r["role"])),
    ("STATE", lambda r: _dash(r["state"])),
    ("PACE", lambda r: _dash(r["pace"])),
    ("HEALTH", lambda r: r["health"]),
    ("FILL", lambda r: format_fill(r["context_fill"])),
    ("TURN", lambda r: _dash(r["turn"])),
    ("AGE", lambda r: format_age(r["age_seconds"])),
    ("FRESHNESS", lambda r: _dash(r["freshness"]).replace("_", " ")),
    ("PENDING", lambda r: str(r["pending"])),
    ("NUDGES", lambda r: _dash(r["nudges"])),
    ("NOTE", _note),
)


#: Dropped first, in this order, when the terminal is too narrow for every column; UNIT,
#: HEALTH and NOTE stay (what is wrong with which unit).
_DROPPED_FIRST = ("TURN", "ROLE", "PACE", "FILL", "AGE", "NUDGES", "PENDING", "STATE", "FRESHNESS")
#: Room NOTE keeps on a narrow terminal before more columns are dropped for it.
_NOTE_ROOM = 16
#: The sign at the end of a line cut to the terminal's width.
CUT = "…"


def format_table(rows: list[dict[str, Any]], width: int | None = None) -> tuple[list[str], list[str]]:
    """The rows as aligned text lines, a header first, and the names of the columns left out
    so that the table fits ``width`` characters (none without ``width``)."""
    names = [name for name, _ in _COLUMNS]
    cells = [names] + [[printable(cell(row)) for _, cell in _COLUMNS] for row in rows]
    widths = {name: max(len(line[i]) for line in cells) for i, name in enumerate(names)}
    hidden: list[str] = []
    if width is not None:
        def needed() -> int:
            kept = [n for n in names if n not in hidden]
            return sum(min(widths[n], _NOTE_ROOM) if n == "NOTE" else widths[n] for n in kept) + 2 * (len(kept) - 1)
        for name in _DROPPED_FIRST:
            if needed() <= width:
                break
            hidden.append(name)
    shown = [i for i, name in enumerate(names) if name not in hidden]
    lines = ["  ".join(line[i].ljust(widths[names[i]]) for i in shown).rstrip() for line in cells]
    return lines, hidden


def urgency(row: dict[str, Any]) -> int:
    """How soon a person should look at a unit: 0 first (unusable or lost), 5 last (nominal)."""
    if row["error"] or row["freshness"] == "very_stale":
        return 0
    if row["paused"] or row["health"] in ("critical", "unknown"):
        return 1
    if row["freshness"] == "stale":
        return 2
    if row["health"] == "degraded" or row["nudges"]:
        return 3
    return 4 if row["pending"] else 5


def _summary(layout: VolumeLayout, rows: list[dict[str, Any]], now: float) -> str:
    """The counts first: on a narrow terminal the volume's path is what gets cut."""
    stamp = datetime.fromtimestamp(now, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    silent = sum(1 for r in rows if r["freshness"] in ("stale", "very_stale"))
    pending = sum(r["pending"] for r in rows)
    return f"units: {len(rows)}  stale: {silent}  pending steering: {pending}  {stamp}  {printable(str(layout.root))}"


def status_lines(layout: VolumeLayout, now: float, cache: FileCache | None = None, max_rows: int | None = None,
                 width: int | None = None, problems_first: bool = False, home: Path | str | None = None) -> list[str]:
    """The summary line and the table, by unit id or ``problems_first``. With ``max_rows`` only
    the rows a screen can show; with ``width`` the columns that fit, and a line naming the others."""
    rows = status_rows(layout, now, cache, home)
    if problems_first:
        rows.sort(key=urgency)  # stable: by unit id within each level
    lines = [_summary(layout, rows, now), ""]
    shown = rows if max_rows is None else rows[:max_rows]
    if not rows:
        lines.append("(no units on this volume yet)")
    else:
        table, hidden = format_table(shown, width)
        if hidden:
            lines[1] = f"hidden on this narrow terminal: {', '.join(hidden)}"
        lines.extend(table)
    if len(shown) < len(rows):
        lines.append(f"... {len(rows) - len(shown)} more units")
    return lines


def open_volume(volume: str | Path) -> VolumeLayout | None:
    """The volume's layout, or None (said on standard error) when the folder is not there."""
    layout = VolumeLayout(volume)
    if not layout.root.is_dir():
        print(f"{layout.root}: not a folder; pass the shared volume with --volume", file=sys.stderr)
        return None
    return layout


def pipe_closed() -> int:
    """The reader went away (``a0org status | head``): stop quietly, as other tools do."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return 0
