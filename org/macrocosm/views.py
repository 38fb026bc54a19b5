"""What the XO sees, for people: ``a0org status``, ``watch`` and ``tail``.

The views only read the volume, so they are safe to run beside a running XO and its
units, as often as wanted. Each unit's row is computed the way the XO judges it: the
same freshness thresholds (the unit's own doctrine), and a unit whose reports stopped
shows health ``unknown``, never the health it last reported.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, TextIO

from org.contracts import SaluteReport
from org.contracts.role import HeartbeatDoctrine
from org.contracts.steering_message import MAX_MESSAGE_BYTES, SteeringMessage
from org.kernel.files import FileRefused, json_object, read_capped, validated
from org.kernel.paths import UnsafePathError, checked_id

from .volume import MESSAGE_SUFFIX, VolumeLayout, message_seq, read_report, unit_entry_problem
from .xo import freshness, unit_state

#: The keys of one ``status --json`` row, in order. Documented in docs/macrocosm.md.
STATUS_KEYS: tuple[str, ...] = (
    "unit", "role", "state", "pace", "health", "context_fill", "turn", "age_seconds",
    "freshness", "pending", "nudges", "paused", "error",
)
STATUS_JSON_VERSION = 1

_DEFAULT_HEARTBEAT = HeartbeatDoctrine()
_CLEAR_LINE = "\x1b[K"
_HOME = "\x1b[H"
_CLEAR_BELOW = "\x1b[J"
_CLEAR_SCREEN = "\x1b[2J"
_HIDE_CURSOR = "\x1b[?25l"
_SHOW_CURSOR = "\x1b[?25h"


# --------------------------------------------------------------------------- reading


def _stamp(path: Path | str) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path, follow_symlinks=False)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def _attempt(read: Callable[[Path], Any], path: Path, missing: str) -> tuple[Any, str | None]:
    """(``read(path)``, None), or (None, why the file cannot be used); ``missing`` when it is not there."""
    try:
        return read(path), None
    except FileNotFoundError:
        return None, missing
    except FileRefused as exc:
        return None, exc.reason
    except OSError as exc:
        return None, f"cannot read: {exc.strerror or type(exc).__name__}"


def load_report(path: Path) -> tuple[SaluteReport | None, str | None]:
    """(report, None), or (None, why it cannot be used); a missing report is ``no report yet``."""
    return _attempt(read_report, path, "no report yet")


@dataclass
class FileCache:
    """Files read again only when they changed: ``watch`` redraws every second."""

    entries: dict[str, tuple[tuple[int, int, int], Any]] = field(default_factory=dict)
    touched: set[str] = field(default_factory=set)

    def get(self, path: str, load: Callable[[], Any]) -> Any:
        self.touched.add(path)
        stamp = _stamp(path)
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


def _is_message(entry: os.DirEntry) -> bool:
    """A steering file: not a folder (processed/, rejected/), not a writer's temporary dot file."""
    return entry.name.endswith(MESSAGE_SUFFIX) and not entry.name.startswith(".") and entry.is_file(follow_symlinks=False)


def pending_steering(inbox: Path | str) -> int:
    """Steering files waiting in the inbox (not yet applied or refused by the unit)."""
    try:
        entries = os.scandir(inbox)
    except OSError:
        return 0
    with entries:
        return sum(1 for e in entries if _is_message(e))


def heartbeat_of(report: SaluteReport) -> HeartbeatDoctrine:
    """The unit's own freshness thresholds (its doctrine travels in the report), as the XO uses them."""
    return report.signals.doctrine.heartbeat if report.signals is not None else _DEFAULT_HEARTBEAT


def context_fill_of(report: SaluteReport) -> float | None:
    if report.signals is not None and report.signals.context_fill is not None:
        return report.signals.context_fill
    return report.environment.context_fill_pct


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
        state = layout.xo_state(sample)
        self.states = str(state.parent) + os.sep
        self.state_suffix = state.name.removeprefix(sample)

    def report(self, unit: str) -> str:
        return self.units + unit + self.report_tail

    def inbox(self, unit: str) -> str:
        return self.units + unit + self.inbox_tail

    def state(self, unit: str) -> str:
        return self.states + unit + self.state_suffix


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


def summarize(path: Path) -> tuple[ReportSummary | None, str | None]:
    report, error = load_report(path)
    if report is None:
        return None, error
    fill = context_fill_of(report)
    return ReportSummary(
        role=report.unit.role_id, state=report.status.state, pace=report.status.pace_level, health=report.status.health,
        context_fill=round(fill, 4) if fill is not None else None, turn=turn_of(report),
        time=report.time.timestamp.timestamp(), heartbeat=heartbeat_of(report),
    ), None


def _xo_view(layout: VolumeLayout, unit: str, path: str, cache: FileCache | None) -> tuple[int | None, bool | None]:
    """(nudges, paused) from the XO's saved state; (None, None) without one."""
    # a damaged state file is logged once and reads as none
    state = _read(path, lambda: unit_state(layout, unit), cache)
    if state is None:
        return None, None
    return state.nudges, state.paused_turn is not None


def unit_row(layout: VolumeLayout, unit: str, now: float, cache: FileCache | None = None, places: _Places | None = None) -> dict[str, Any]:
    places = places or _Places(layout)
    report_path = places.report(checked_id(unit, "unit id"))
    summary, error = _read(report_path, lambda: summarize(Path(report_path)), cache)
    nudges, paused = _xo_view(layout, unit, places.state(unit), cache)
    row: dict[str, Any] = dict.fromkeys(STATUS_KEYS)
    row.update(unit=unit, health="unknown", pending=pending_steering(places.inbox(unit)), nudges=nudges, paused=paused, error=error)
    if summary is None:
        return row
    age = now - summary.time
    fresh = freshness(age, summary.heartbeat)
    row.update(
        role=summary.role,
        state=summary.state,
        pace=summary.pace,
        health="unknown" if fresh == "very_stale" else summary.health,  # a silent unit's last word does not count
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


def status_rows(layout: VolumeLayout, now: float | None = None, cache: FileCache | None = None) -> list[dict[str, Any]]:
    """One row per unit folder on the volume, sorted by unit id (keys: :data:`STATUS_KEYS`)."""
    now = time.time() if now is None else now
    valid, invalid = layout.unit_ids()
    places = _Places(layout)
    rows = [unit_row(layout, unit, now, cache, places) for unit in valid]
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


def _note(row: dict[str, Any]) -> str:
    if row["error"]:
        return row["error"]
    return "paused by the XO" if row["paused"] else ""


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


def format_table(rows: list[dict[str, Any]]) -> list[str]:
    """The rows as aligned text lines, a header first."""
    cells = [[name for name, _ in _COLUMNS]] + [[cell(row) for _, cell in _COLUMNS] for row in rows]
    widths = [max(len(line[i]) for line in cells) for i in range(len(_COLUMNS))]
    return ["  ".join(text.ljust(width) for text, width in zip(line, widths)).rstrip() for line in cells]


def _summary(layout: VolumeLayout, rows: list[dict[str, Any]], now: float) -> str:
    stamp = datetime.fromtimestamp(now, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    silent = sum(1 for r in rows if r["freshness"] in ("stale", "very_stale"))
    pending = sum(r["pending"] for r in rows)
    return f"{layout.root}  {stamp}  units: {len(rows)}  stale: {silent}  pending steering: {pending}"


def status_lines(layout: VolumeLayout, now: float, cache: FileCache | None = None, max_rows: int | None = None) -> list[str]:
    """The summary line and the table; with ``max_rows``, only the rows a screen can show are formatted."""
    rows = status_rows(layout, now, cache)
    lines = [_summary(layout, rows, now), ""]
    shown = rows if max_rows is None else rows[:max_rows]
    lines.extend(format_table(shown) if rows else ["(no units on this volume yet)"])
    if len(shown) < len(rows):
        lines.append(f"... {len(rows) - len(shown)} more units")
    return lines


def status_document(layout: VolumeLayout, now: float) -> dict[str, Any]:
    return {
        "schema_version": STATUS_JSON_VERSION,
        "volume": str(layout.root),
        "generated_at": datetime.fromtimestamp(now, timezone.utc).isoformat(),
        "units": status_rows(layout, now),
    }


def _pipe_closed() -> int:
    """The reader went away (``a0org status | head``): stop quietly, as other tools do."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return 0


def _open_volume(args: argparse.Namespace) -> VolumeLayout | None:
    layout = VolumeLayout(args.volume)
    if not layout.root.is_dir():
        print(f"{layout.root}: not a folder; pass the shared volume with --volume", file=sys.stderr)
        return None
    return layout


def status_main(args: argparse.Namespace) -> int:
    layout = _open_volume(args)
    if layout is None:
        return 2
    now = time.time()
    try:
        if args.json:
            sys.stdout.write(json.dumps(status_document(layout, now), indent=2) + "\n")
        else:
            sys.stdout.write("\n".join(status_lines(layout, now)) + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        return _pipe_closed()
    return 0


# --------------------------------------------------------------------------- watch


def frame(lines: list[str], tty: bool) -> str:
    """One redraw: on a terminal, over the previous one from the top left, each line
    cleared to its end and everything below cleared after, in a single write, so the
    screen never shows a blank moment; elsewhere, the table and a blank line."""
    if not tty:
        return "\n".join(lines) + "\n\n"
    return _HOME + "".join(line + _CLEAR_LINE + "\n" for line in lines) + _CLEAR_BELOW


def fit(lines: list[str], columns: int, rows: int) -> list[str]:
    """Lines cut to the terminal, keeping the last one (the footer): a frame that wrapped
    or scrolled could no longer be drawn over from the top."""
    limit = max(rows - 1, 3)  # the cursor rests on the line after the frame
    if len(lines) > limit:
        kept = lines[: limit - 2]
        lines = kept + [f"... {len(lines) - 1 - len(kept)} more lines; a taller terminal shows them", lines[-1]]
    width = max(columns - 1, 20)  # a line filling the last column would wrap on some terminals
    return [line[:width] for line in lines]


def _terminal_size(out: TextIO) -> tuple[int, int]:
    """(columns, lines); a terminal that reports no size (0 x 0) is taken as 80 x 24."""
    try:
        size = os.get_terminal_size(out.fileno())
    except (OSError, ValueError):
        size = shutil.get_terminal_size()
    return (size.columns or 80, size.lines or 24)


def watch_main(args: argparse.Namespace, out: TextIO | None = None) -> int:
    layout = _open_volume(args)
    if layout is None:
        return 2
    out = out or sys.stdout
    tty = out.isatty()
    interval = max(float(args.interval), 0.05)
    iterations = getattr(args, "iterations", None)
    cache = FileCache()
    drawn = 0
    if tty:
        out.write(_HIDE_CURSOR + _HOME + _CLEAR_SCREEN)
    try:
        while iterations is None or drawn < iterations:
            if tty:
                columns, height = _terminal_size(out)
                # summary, blank line, header, "... more", footer and the cursor's line
                lines = status_lines(layout, time.time(), cache, max_rows=max(height - 6, 1))
                lines = fit(lines + [f"every {interval:g}s; Ctrl-C to stop"], columns, height)
            else:
                lines = status_lines(layout, time.time(), cache)
            out.write(frame(lines, tty))
            out.flush()
            drawn += 1
            if iterations is None or drawn < iterations:
                time.sleep(interval)
    except KeyboardInterrupt:
        pass
    except BrokenPipeError:
        return _pipe_closed()
    finally:
        if tty:
            try:
                out.write(_SHOW_CURSOR)
                out.flush()
            except OSError:  # the terminal is gone; nothing to give the cursor back to
                pass
    return 0


# --------------------------------------------------------------------------- tail


def _iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _short(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def latest_outcome(report: SaluteReport) -> str:
    if report.signals is not None and report.signals.outcomes:
        last = report.signals.outcomes[-1]
        return f"{last.tool} {'ok' if last.ok else 'failed' + (f' ({last.error_type})' if last.error_type else '')}"
    return report.activity.current_tool or "-"


def report_line(report: SaluteReport) -> str:
    return (
        f"{_iso(report.time.timestamp)}  report  turn {turn_of(report)}  PACE {report.status.pace_level}"
        f"  health {report.status.health}  state {report.status.state}  tool {latest_outcome(report)}"
        f"  context {format_fill(context_fill_of(report))}"
    )


@dataclass(frozen=True)
class SteeringFile:
    """A steering file seen in one of the inbox folders: ``where`` is inbox, processed or rejected."""

    name: str
    where: str
    path: Path

    @property
    def seq(self) -> int:
        return message_seq(self.name) or 0


def _read_message(path: Path) -> SteeringMessage:
    return validated(path, SteeringMessage, json_object(path, read_capped(path, MAX_MESSAGE_BYTES)), "steering message")


def peek_message(path: Path) -> tuple[SteeringMessage | None, str | None]:
    """The message for display (its signature is the unit's to check), or why it cannot be shown."""
    return _attempt(_read_message, path, "moved away while being read")


def _rejection_reason(item: SteeringFile) -> str | None:
    try:
        data = read_capped(item.path.with_name(item.name + ".reason"), 4096)
    except (OSError, FileRefused):
        return None
    return _short(data.decode("utf-8", "replace"), 200) or None


def steering_line(item: SteeringFile) -> str:
    message, problem = peek_message(item.path)
    if message is None:
        # the file moved on between the listing and the read: show where it was, and why not more
        line = f"{'-' * 20}  steer   #{item.seq} {item.where:<9}  {item.name}: {problem}"
    else:
        line = (
            f"{_iso(message.created_at)}  steer   #{message.seq} {item.where:<9}  {message.severity:<8}"
            f" {message.anomaly:<9} {message.kind:<5}  {_short(message.text)}"
        )
    if item.where == "rejected":
        reason = _rejection_reason(item)
        if reason:
            line += f"  [rejected: {reason}]"
    return line


def list_steering(layout: VolumeLayout, unit: str) -> dict[str, SteeringFile]:
    """Every steering file of the unit by name; processed/rejected win over a stale inbox listing."""
    found: dict[str, SteeringFile] = {}
    for where, folder in (("inbox", layout.inbox(unit)), ("processed", layout.processed(unit)), ("rejected", layout.rejected(unit))):
        try:
            entries = os.scandir(folder)
        except OSError:
            continue
        with entries:
            for e in entries:
                if _is_message(e):
                    found[e.name] = SteeringFile(e.name, where, folder / e.name)
    return found


@dataclass
class Tail:
    """What ``tail`` has shown: new lines come from comparing the volume with it."""

    layout: VolumeLayout
    unit: str
    report_key: tuple[Any, ...] | None = None
    report_stamp: tuple[int, int, int] | None = None
    report_problem: str | None = None
    steering: dict[str, str] = field(default_factory=dict)

    def _report_lines(self) -> list[str]:
        path = self.layout.report(self.unit)
        stamp = _stamp(path)
        if stamp is None or stamp == self.report_stamp:
            return []
        report, problem = load_report(path)
        self.report_stamp = stamp
        if report is None:
            if problem == self.report_problem:
                return []
            self.report_problem = problem
            return [f"{'-' * 20}  report  {path.name}: {problem}"]
        self.report_problem = None
        key = (report.time.timestamp, turn_of(report), report.status.state)
        if key == self.report_key:
            return []
        self.report_key = key
        return [report_line(report)]

    def _steering_lines(self, last: int | None) -> list[str]:
        current = list_steering(self.layout, self.unit)
        # remember only the files still there, not every name a long tail ever saw
        self.steering = {name: where for name, where in self.steering.items() if name in current}
        news = [item for name, item in current.items() if self.steering.get(name) != item.where]
        news.sort(key=lambda item: (item.seq, item.name))
        if last is not None:
            for item in news[: max(len(news) - last, 0)]:
                self.steering[item.name] = item.where
            news = news[-last:] if last else []
        lines = []
        for item in news:
            self.steering[item.name] = item.where
            lines.append(steering_line(item))
        return lines

    def poll(self, last: int | None = None) -> list[str]:
        """New lines since the last poll; the first poll passes ``last`` to start with the latest few."""
        return self._report_lines() + self._steering_lines(last)


def tail_main(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    try:
        unit = checked_id(args.unit, "unit id")
    except UnsafePathError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    layout = _open_volume(args)
    if layout is None:
        return 2
    if not layout.unit_dir(unit).is_dir():
        print(f"{layout.unit_dir(unit)}: no such unit yet; waiting for it", file=sys.stderr)
    interval = max(float(getattr(args, "interval", 0.5)), 0.01)
    max_events = getattr(args, "max_events", None)
    deadline = None if getattr(args, "timeout", None) is None else time.monotonic() + args.timeout
    tail = Tail(layout, unit)
    shown = 0
    first = True
    try:
        while True:
            lines = tail.poll(last=max(args.last, 0) if first else None)
            first = False
            for line in lines:
                out.write(line + "\n")
                shown += 1
                if max_events is not None and shown >= max_events:
                    out.flush()
                    return 0
            out.flush()
            if deadline is not None and time.monotonic() >= deadline:
                return 0
            time.sleep(interval)
    except KeyboardInterrupt:
        return 0
    except BrokenPipeError:
        return _pipe_closed()
