"""``a0org tail UNIT``: a unit's reports and steering, one line each, as they arrive."""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from org.contracts import SaluteReport
from org.contracts.steering_message import MAX_MESSAGE_BYTES, SteeringMessage
from org.kernel.files import FileRefused, json_object, read_capped, validated
from org.kernel.paths import UnsafePathError, checked_id

from ..volume import VolumeLayout, message_seq
from .rows import (
    attempt,
    context_fill_of,
    format_fill,
    is_message,
    load_report,
    open_volume,
    pipe_closed,
    printable,
    stamp_of,
    turn_of,
    utc_text,
)


def _short(text: str, limit: int = 160) -> str:
    text = printable(" ".join(text.split()))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def latest_outcome(report: SaluteReport) -> str:
    if report.signals is not None and report.signals.outcomes:
        last = report.signals.outcomes[-1]
        return _short(f"{last.tool} {'ok' if last.ok else 'failed' + (f' ({last.error_type})' if last.error_type else '')}")
    return _short(report.activity.current_tool or "-")


def report_line(report: SaluteReport) -> str:
    return (
        f"{utc_text(report.time.timestamp)}  report  turn {turn_of(report)}  PACE {report.status.pace_level}"
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
    return attempt(_read_message, path, "moved away while being read")


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
        line = f"{'-' * 20}  steer   #{item.seq} {item.where:<9}  {_short(item.name)}: {_short(problem or '')}"
    else:
        line = (
            f"{utc_text(message.created_at)}  steer   #{message.seq} {item.where:<9}  {message.severity:<8}"
            f" {message.anomaly or 'learning':<9} {message.kind:<5}  {_short(message.text)}"
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
                if is_message(e):
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
        stamp = stamp_of(path)
        if stamp is None or stamp == self.report_stamp:
            return []
        report, problem = load_report(path, self.unit)
        self.report_stamp = stamp
        if report is None:
            if problem == self.report_problem:
                return []
            self.report_problem = problem
            return [f"{'-' * 20}  report  {path.name}: {_short(problem or '')}"]
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


def main(
    volume: str | Path,
    unit: str,
    last: int = 10,
    interval: float = 0.5,
    out: TextIO | None = None,
    max_lines: int | None = None,
    seconds: float | None = None,
) -> int:
    """Print the latest ``last`` steering, then follow until Ctrl-C, or until ``max_lines``
    lines were printed or ``seconds`` went by."""
    out = out or sys.stdout
    try:
        unit = checked_id(unit, "unit id")
    except UnsafePathError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    layout = open_volume(volume)
    if layout is None:
        return 2
    if not layout.unit_dir(unit).is_dir():
        print(f"{layout.unit_dir(unit)}: no such unit yet; waiting for it", file=sys.stderr)
    interval = max(float(interval), 0.01)
    deadline = None if seconds is None else time.monotonic() + seconds
    tail = Tail(layout, unit)
    shown = 0
    first = True
    try:
        while True:
            lines = tail.poll(last=max(last, 0) if first else None)
            first = False
            for line in lines:
                out.write(line + "\n")
                shown += 1
                if max_lines is not None and shown >= max_lines:
                    out.flush()
                    return 0
            out.flush()
            if deadline is not None and time.monotonic() >= deadline:
                return 0
            time.sleep(interval)
    except KeyboardInterrupt:
        return 0
    except BrokenPipeError:
        return pipe_closed()
