"""``a0org dashboard``: what the XO page shows, as JSON documents the page polls.

Every unit's row (as ``status`` computes it, through :mod:`.rows`), the last steering it got
and what followed, the steering over time, and one unit's events. Text that comes from files
on the volume passes the redactor; the page sets it as text, never as markup.
"""

from __future__ import annotations

import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from org.contracts import SupervisionEvent
from org.kernel import events as event_log
from org.kernel.paths import UnsafePathError, checked_id
from org.kernel.redact import redact
from org.stats import WITHIN_TURNS, followed_by_progress

from ..volume import VolumeLayout
from .rows import stamp_of, status_rows, urgency
from .tail import list_steering, peek_message

#: The chart's bars, and how far back it looks at most.
CHART_BARS = 30
CHART_SPAN_SECONDS = 24 * 3600
#: A unit's events on click: the latest ones.
UNIT_EVENTS = 200
#: Steering text shown on the page, at most.
TEXT_CHARS = 400
CHART_TYPES = ("steering", "block", "pause")


class EventCache:
    """The XO's event log, read again only when one of its files changed (the page polls every few seconds)."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.stamps: tuple = ()
        self.log: list[SupervisionEvent] = []

    def read(self) -> list[SupervisionEvent]:
        path = event_log.log_path(self.folder)
        stamps = tuple(stamp_of(path.with_name(name)) for name in event_log.rotated_names())
        if stamps != self.stamps:
            self.log, self.stamps = list(event_log.read(self.folder)), stamps
        return self.log


def _time(event: SupervisionEvent) -> float:
    moment = event.time if event.time.tzinfo else event.time.replace(tzinfo=timezone.utc)
    return moment.timestamp()


def last_steering(layout: VolumeLayout, unit: str, steered: SupervisionEvent | None, turns: int | None) -> dict[str, Any] | None:
    """The unit's latest steering file (its kind, anomaly, text and where it is: waiting in the
    inbox, applied, refused) and what followed the unit's latest steering event ``steered``."""
    latest = max(list_steering(layout, unit).values(), key=lambda f: f.seq, default=None)
    message = peek_message(latest.path)[0] if latest is not None else None
    if steered is None and message is None:
        return None
    out: dict[str, Any] = {"where": {"inbox": "waiting", "processed": "applied", "rejected": "refused"}[latest.where] if latest else None}
    if message is not None:
        out.update(kind=message.kind, anomaly=message.anomaly, severity=message.severity, seq=message.seq,
                   text=redact(message.text)[:TEXT_CHARS], time=message.created_at.isoformat())
    if steered is not None:
        out.update(event=steered.type, anomaly=out.get("anomaly") or steered.anomaly, turn=steered.turn,
                   outcome=(f"progress after {turns} turn(s)" if turns is not None else
                            "paused" if steered.type == "pause" else "no progress yet"))
    return out


def latest_steering(log: list[SupervisionEvent]) -> dict[str, tuple[SupervisionEvent, int | None]]:
    """Each unit's latest steering, block or pause, with the turns until progress followed (None: not yet)."""
    followed = {id(e): turns for e, turns in followed_by_progress(log, WITHIN_TURNS)}
    return {e.unit: (e, followed.get(id(e))) for e in log if e.unit and e.type in ("steering", "block", "pause")}


def chart(log: list[SupervisionEvent], now: float) -> dict[str, Any]:
    """Steering, blocks and pauses per bar, over the span the log covers (at most a day)."""
    times = [(t, e.type) for e in log if e.type in CHART_TYPES and (t := _time(e)) >= now - CHART_SPAN_SECONDS]
    start = min((t for t, _ in times), default=now - 3600)
    width = max((now - start) / CHART_BARS, 1.0)
    bars = [dict.fromkeys(CHART_TYPES, 0) for _ in range(CHART_BARS)]
    for t, kind in times:
        bars[min(int((t - start) / width), CHART_BARS - 1)][kind] += 1
    return {"start": datetime.fromtimestamp(start, timezone.utc).isoformat(), "bar_seconds": round(width, 3), "bars": bars}


def units_document(layout: VolumeLayout, cache: EventCache, now: float | None = None,
                   home: Path | str | None = None) -> dict[str, Any]:
    """Every unit's row, with what the XO knows of it when its ``home`` is given (pauses, nudges)."""
    now = time.time() if now is None else now
    log = cache.read()
    latest = latest_steering(log)
    rows = status_rows(layout, now, home=home)
    rows.sort(key=lambda r: (not r["paused"], urgency(r)))  # paused first, then what needs a look; stable by unit id
    units = []
    for row in rows:
        units.append({**row, "error": redact(row["error"]) if row["error"] else None,
                      "last_steering": last_steering(layout, row["unit"], *latest.get(row["unit"], (None, None)))
                      if not row["error"] else None})
    return {
        "generated_at": datetime.fromtimestamp(now, timezone.utc).isoformat(),
        "units": units,
        "paused": sum(bool(r["paused"]) for r in rows),
        "chart": chart(log, now),
    }


def unit_events(cache: EventCache, unit: str) -> dict[str, Any]:
    """The unit's latest events; only names, numbers and times (an event never quotes text)."""
    try:
        checked_id(unit, "unit id")
    except UnsafePathError as exc:
        return {"unit": None, "error": str(exc), "events": []}
    found = [e for e in cache.read() if e.unit == unit][-UNIT_EVENTS:]
    return {"unit": unit, "events": [e.model_dump(mode="json", exclude_defaults=True, exclude={"schema_version"}) for e in found]}
