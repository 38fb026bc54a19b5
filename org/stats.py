"""``a0org events`` and ``a0org stats``: what supervision did, and whether it helped.

The number that answers "does supervision help?" is how often steering (or a blocked call)
was followed by progress within a few turns, and how many turns that took (docs/supervisor.md#events-and-stats).
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections import defaultdict
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Iterable

from org.contracts import SupervisionEvent
from org.contracts.event import EVENT_TYPES
from org.kernel import events
from org.lazy_patterns import lazy_pattern

#: Progress within this many turns after steering counts as steering followed by progress.
WITHIN_TURNS = 5
_AGO = lazy_pattern(r"^(\d+)([smhd])$")


def parse_since(text: str | None, now: datetime) -> datetime | None:
    """``30m``, ``2h``, ``1d`` ago, or an ISO time (UTC when it has no zone); ValueError otherwise."""
    if not text:
        return None
    match = _AGO.match(text.strip())
    if match:
        return now - timedelta(**{{"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}[match.group(2)]: int(match.group(1))})
    moment = datetime.fromisoformat(text.strip())
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def selected(all_events: Iterable[SupervisionEvent], types: list[str] | None = None, role: str | None = None,
             since: datetime | None = None, unit: str | None = None) -> list[SupervisionEvent]:
    return [e for e in all_events if (not types or e.type in types) and (role is None or e.role == role)
            and (unit is None or e.unit == unit) and (since is None or _aware(e.time) >= since)]


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def event_line(event: SupervisionEvent) -> str:
    what = event.anomaly or ", ".join(event.findings) or _other(event)
    text = f"  ({event.template})" if event.template else ""
    return (f"{_aware(event.time).strftime('%Y-%m-%d %H:%M:%S')}  {event.type:<14} {event.unit or event.role or '-':<14} "
            f"turn {event.turn if event.turn is not None else '-':<4} {what}{text}")


def _other(event: SupervisionEvent) -> str:
    if event.type == "supervisor_run":
        cost = f", ${event.cost_usd:.4f}" if event.cost_usd else ""
        return f"{event.supervisor}: {event.outcome} ({event.tokens or 0} tokens{cost})"
    if event.type == "directive_done":
        return f"{event.directive} done"
    if event.type == "relay":
        return "learnings from " + ", ".join(event.sources)
    return ""


# --------------------------------------------------------------------------- stats


def followed_by_progress(log: list[SupervisionEvent], within: int) -> list[tuple[SupervisionEvent, int | None]]:
    """Each steering and block with the turns until the chat's next progress (None: not within ``within``)."""
    out: list[tuple[SupervisionEvent, int | None]] = []
    waiting: dict[tuple, list[int]] = defaultdict(list)  # (chat, unit) -> steering not yet followed by an outcome
    for event in log:  # one pass: a full log holds tens of thousands of events
        key = (event.chat, event.unit)
        if event.type in ("steering", "block") and event.turn is not None:
            waiting[key].append(len(out))
            out.append((event, None))
        elif event.type in ("progress", "resume", "pause"):
            for index in waiting.pop(key, ()):
                steered = out[index][0]
                turns = event.turn - steered.turn if event.type == "progress" and event.turn is not None else None
                out[index] = (steered, turns if turns is not None and 0 <= turns <= within else None)
    return out


def _figures(pairs: list[tuple[SupervisionEvent, int | None]]) -> dict[str, Any]:
    delays = [t for _, t in pairs if t is not None]
    return {
        "steered": sum(e.type == "steering" for e, _ in pairs),
        "blocked": sum(e.type == "block" for e, _ in pairs),
        "followed_by_progress": len(delays),
        "share_followed": round(len(delays) / len(pairs), 3) if pairs else None,
        "median_turns_to_progress": statistics.median(delays) if delays else None,
    }


def stats(log: list[SupervisionEvent], within: int = WITHIN_TURNS, llm: dict[str, Any] | None = None) -> dict[str, Any]:
    pairs = followed_by_progress(log, within)
    by_role: dict[str, list] = defaultdict(list)
    by_anomaly: dict[str, list] = defaultdict(list)
    for event, turns in pairs:
        by_role[event.role or "-"].append((event, turns))
        by_anomaly[event.anomaly or "-"].append((event, turns))
    return {
        "within_turns": within,
        "events": len(log),
        "chats": len({(e.chat, e.unit) for e in log}),
        "total": {**_figures(pairs), "pauses": sum(e.type == "pause" for e in log), "resumes": sum(e.type == "resume" for e in log),
                  "relays": sum(e.type == "relay" for e in log), "directives_done": sum(e.type == "directive_done" for e in log)},
        "by_role": {role: {**_figures(p), "pauses": sum(e.type == "pause" and (e.role or "-") == role for e in log)}
                    for role, p in sorted(by_role.items())},
        "by_anomaly": {anomaly: _figures(p) for anomaly, p in sorted(by_anomaly.items())},
        "llm_supervisors": llm,
    }


def _share(figures: dict[str, Any]) -> str:
    share = figures["share_followed"]
    median = figures["median_turns_to_progress"]
    return "-" if share is None else f"{share * 100:.0f}%" + (f" (median {median:g} turns)" if median is not None else "")


def render(data: dict[str, Any]) -> str:
    total = data["total"]
    lines = [f"{data['events']} event(s) in {data['chats']} chat(s) or unit(s); progress counted within {data['within_turns']} turns",
             f"steered {total['steered']}, blocked {total['blocked']}, followed by progress: {_share(total)}; "
             f"paused {total['pauses']}, resumed {total['resumes']}"
             + (f"; learnings relayed {total['relays']}" if total["relays"] else "")
             + (f"; directives marked done {total['directives_done']}" if total["directives_done"] else ""), ""]
    for title, key in (("by role", "by_role"), ("by anomaly", "by_anomaly")):
        rows = data[key]
        if not rows:
            continue
        lines.append(f"{title.upper():<16} STEERED  BLOCKED  FOLLOWED BY PROGRESS")
        lines += [f"{name:<16} {f['steered']:>7}  {f['blocked']:>7}  {_share(f)}" for name, f in rows.items()]
        lines.append("")
    llm = data.get("llm_supervisors")
    if llm and llm.get("total", {}).get("runs"):
        t = llm["total"]
        lines.append(f"LLM supervisors: {t['runs']} run(s), {t['prompt_tokens'] + t['completion_tokens']} tokens, "
                     f"${t['cost_usd']:.4f} (a0org supervisors stats for more)")
        lines.append(f"{'SUPERVISOR':<16} {'RUNS':>5} {'TOKENS':>8} {'COST':>9}")
        lines += [f"{name:<16} {f['runs']:>5} {f['prompt_tokens'] + f['completion_tokens']:>8} ${f['cost_usd']:>8.4f}"
                  for name, f in sorted((llm.get("by_supervisor") or {}).items()) if f.get("runs")]
    return "\n".join(lines).rstrip() + "\n"


# --------------------------------------------------------------------------- commands


def _llm_figures(home: Path) -> dict[str, Any] | None:
    from org.llm_supervisors.cli import stats as llm_stats

    try:
        data = llm_stats(home)
    except Exception:  # no supervisors configured, or their records cannot be read: not part of this report
        return None
    return {"total": data["total"], "by_supervisor": data["by_supervisor"]}


def stats_main(home: Path, within: int, as_json: bool) -> int:
    if not home.is_dir():
        print(f"a0org stats: the organizations folder {home} does not exist", file=sys.stderr)
        return 1
    data = stats(list(events.read(home)), within, _llm_figures(home))
    print(json.dumps(data, indent=2) if as_json else render(data), end="" if not as_json else "\n")
    return 0


def events_main(home: Path, types: list[str] | None, role: str | None, since: str | None, follow: bool, as_json: bool,
                interval: float = 1.0, unit: str | None = None) -> int:
    if not home.is_dir():
        print(f"a0org events: the organizations folder {home} does not exist", file=sys.stderr)
        return 1
    unknown = sorted(set(types or ()) - set(EVENT_TYPES))
    if unknown:
        print(f"a0org events: unknown --type {', '.join(unknown)} (known: {', '.join(EVENT_TYPES)})", file=sys.stderr)
        return 2
    try:
        after = parse_since(since, datetime.now(timezone.utc))
    except ValueError:
        print(f"a0org events: --since {since!r}: give 30m, 2h, 1d or an ISO time", file=sys.stderr)
        return 2
    last: SupervisionEvent | None = None
    while True:
        log = list(events.read(home))
        if last is not None:  # what came after the last one shown (the log may have rotated since)
            index = next((i for i in range(len(log) - 1, -1, -1) if log[i] == last), None)
            log = log[index + 1:] if index is not None else [e for e in log if _aware(e.time) > _aware(last.time)]
        for event in selected(log, types, role, after, unit):
            print(event.model_dump_json(exclude_defaults=True) if as_json else event_line(event), flush=True)
        last = log[-1] if log else last
        if not follow:
            return 0
        try:
            time.sleep(interval)
        except KeyboardInterrupt:
            return 0
