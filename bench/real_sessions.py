"""Judge the supervisor on real agent sessions: how often it steers, and where.

    python bench/real_sessions.py CORPUS [--events FILE] [--json FILE] [--doctrine JSON] [--org-dir DIR]

CORPUS holds ``<run>/<session>.jsonl`` traces in the replay format (docs/replay.md) and a
``<run>/labels.json`` mapping each session to ``{"resolved": true|false|null}``. Fields of a
trace line that the replay format does not know (``thought``, ``exit_code``) are read here
and not passed on: Agent-Zero gives the pack no exit code, so the classifier decides, as
it would in Agent-Zero.

Prints, for sessions that succeeded, failed and are unlabelled: sessions, turns, steering
events, steering per 100 turns, the share of sessions steered at least once, and the count
per anomaly and action; then how many sessions in which the agent itself wrote that it was
struggling got any steering. ``--events`` writes every steering event with the turns
before it, for reading by hand.

It also prints how often steering was followed by progress within a few turns, as
``a0org stats`` counts it from the supervision event log. A recorded session does not read
the steering, so on a replay this is the share of steered moments the agent got out of by
itself: the part of the steering that was at best unneeded, and the base rate a live run's
``a0org stats`` figure has to beat. ``--org-dir DIR`` keeps every session's events in
``DIR/events/events.jsonl``, so ``a0org stats --org-dir DIR`` and ``a0org events`` read them.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from org.contracts import SupervisionEvent, TraceHeader, TraceTurn  # noqa: E402
from org.kernel import events as event_log  # noqa: E402
from org.replay import organization_home, run_session  # noqa: E402
from org.stats import WITHIN_TURNS, followed_by_progress  # noqa: E402

TRACE_FIELDS = set(TraceTurn.model_fields)
#: What an agent writes when it knows it is going in circles.
STRUGGLE_RE = re.compile(
    r"same (mistake|error|issue|problem) (again|keeps)|messed up|struggling|going (around )?in circles|"
    r"keep(s)? (getting|failing|making)|still (not working|failing|the same)|not working again",
    re.IGNORECASE,
)


def read_session(path: Path) -> tuple[TraceHeader | None, list[TraceTurn], list[dict[str, Any]]]:
    header, turns, raw = None, [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        data = json.loads(line)
        if data.get("kind") == "header":
            header = TraceHeader.model_validate({k: v for k, v in data.items() if k in TraceHeader.model_fields})
            continue
        raw.append(data)
        turns.append(TraceTurn.model_validate({k: v for k, v in data.items() if k in TRACE_FIELDS}))
    return header, turns, raw


def replay_session(path: Path, doctrine: dict[str, Any]
                   ) -> tuple[list[TraceTurn], list[dict[str, Any]], list[dict[str, Any]], list[SupervisionEvent]]:
    header, turns, raw = read_session(path)
    if doctrine:
        header = TraceHeader.model_validate({**(header.model_dump() if header else {"kind": "header"}), "doctrine": doctrine})
    with organization_home(None) as home:
        results = run_session(header, turns, home)
        log = list(event_log.read(home))
    pause = next((i for i, e in enumerate(log) if e.type == "pause"), None)
    log = log if pause is None else log[:pause + 1]  # as below: a paused chat waits for its user
    events = []
    for r in results:  # up to the pause: a paused chat waits for its user
        if r.blocked:
            events.append({"turn": r.turn, "anomaly": r.blocked[0], "action": "block", "text": r.blocked[1]})
        events += [{"turn": r.turn, "anomaly": anomaly, "action": "steer", "text": text} for anomaly, text in r.steering]
        if r.paused:
            events.append({"turn": r.turn, "anomaly": "pause", "action": "pause", "text": ""})
            break
    return turns, raw, events, log


def followed_figures(pairs: list[tuple[SupervisionEvent, int | None]]) -> dict[str, Any]:
    delays = sorted(t for _, t in pairs if t is not None)
    return {"steered_or_blocked": len(pairs), "followed_by_progress": len(delays),
            "share_followed_pct": round(100 * len(delays) / len(pairs), 1) if pairs else None,
            "median_turns": delays[len(delays) // 2] if delays else None,
            "within_1_turn": sum(t <= 1 for t in delays)}


def context_of(raw: list[dict[str, Any]], turn: int, before: int = 4) -> list[dict[str, Any]]:
    index = next((i for i, t in enumerate(raw) if t.get("turn") == turn), len(raw) - 1)
    shown = []
    for item in raw[max(0, index - before):index + 1]:
        args = item.get("args") or {}
        command = args.get("code") or args.get("command") or json.dumps(args)[:300]
        output = item.get("output") or ""
        shown.append({
            "turn": item.get("turn"), "tool": item.get("tool"), "command": str(command)[:300],
            "output": output[:300] + (" … " + output[-300:] if len(output) > 600 else output[300:600]),
            "exit_code": item.get("exit_code"), "thought": (item.get("thought") or "")[:300],
        })
    return shown


def group_of(label: Any) -> str:
    resolved = label.get("resolved") if isinstance(label, dict) else None
    return {True: "succeeded", False: "failed"}.get(resolved, "unlabelled")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--events", type=Path, help="write every steering event with its context (JSON lines)")
    parser.add_argument("--json", type=Path, help="write the figures as JSON")
    parser.add_argument("--doctrine", default="{}", help="doctrine overrides as JSON, merged into every session's role")
    parser.add_argument("--limit", type=int, default=0, help="at most N sessions per run (0: all)")
    parser.add_argument("--org-dir", type=Path, help="keep every session's supervision events in DIR/events/events.jsonl")
    args = parser.parse_args(argv)
    doctrine = json.loads(args.doctrine)
    if args.org_dir:
        event_log.log_path(args.org_dir).parent.mkdir(parents=True, exist_ok=True)
        event_log.log_path(args.org_dir).write_bytes(b"")

    groups: dict[str, Counter] = {}
    anomalies: dict[str, Counter] = {}
    struggle = Counter()
    followed: dict[str, list] = {}
    followed_by_anomaly: dict[str, list] = {}
    events_out = args.events.open("w", encoding="utf-8") if args.events else None
    for run in sorted(p for p in args.corpus.iterdir() if p.is_dir()):
        labels_path = run / "labels.json"
        labels = json.loads(labels_path.read_text(encoding="utf-8")) if labels_path.exists() else {}
        sessions = sorted(run.glob("*.jsonl"))
        if args.limit:
            sessions = sessions[:args.limit]
        for path in sessions:
            group = group_of(labels.get(path.stem))
            turns, raw, events, log = replay_session(path, doctrine)
            pairs = followed_by_progress(log, WITHIN_TURNS)
            followed.setdefault(group, []).extend(pairs)
            for pair in pairs:
                followed_by_anomaly.setdefault(pair[0].anomaly or "-", []).append(pair)
            if args.org_dir:
                with event_log.log_path(args.org_dir).open("a", encoding="utf-8") as out:
                    out.writelines(e.model_dump_json(exclude_defaults=True) + "\n" for e in log)
            counts = groups.setdefault(group, Counter())
            counts["sessions"] += 1
            counts["turns"] += len(turns)
            counts["events"] += len(events)
            counts["steered sessions"] += bool(events)
            for event in events:
                anomalies.setdefault(group, Counter())[f"{event['action']}:{event['anomaly']}"] += 1
            if any(STRUGGLE_RE.search(t.get("thought") or "") for t in raw):
                struggle["sessions"] += 1
                struggle["steered"] += bool(events)
            if events_out:
                for event in events:
                    events_out.write(json.dumps({"run": run.name, "session": path.stem, "group": group, **event,
                                                 "context": context_of(raw, event["turn"])}) + "\n")
    if events_out:
        events_out.close()

    figures: dict[str, Any] = {}
    print(f"{'group':<11} {'sessions':>8} {'turns':>7} {'events':>6} {'per 100 turns':>13} {'sessions steered':>16}")
    for group, counts in sorted(groups.items()):
        per100 = 100 * counts["events"] / max(1, counts["turns"])
        share = 100 * counts["steered sessions"] / max(1, counts["sessions"])
        figures[group] = {**counts, "per_100_turns": round(per100, 3), "share_steered_pct": round(share, 1),
                          "by_anomaly": dict(anomalies.get(group, {}))}
        print(f"{group:<11} {counts['sessions']:>8} {counts['turns']:>7} {counts['events']:>6} {per100:>13.2f} {share:>15.1f}%")
        print("            " + ", ".join(f"{k} {v}" for k, v in sorted(anomalies.get(group, {}).items())))
    print(f"\nsteering or a block followed by progress within {WITHIN_TURNS} turns (the agent never read it: "
          "the share it got out of by itself)")
    for name, pairs in [*sorted(followed.items()), *sorted(followed_by_anomaly.items())]:
        f = followed_figures(pairs)
        figures.setdefault("followed_by_progress", {})[name] = f
        share = "-" if f["share_followed_pct"] is None else f"{f['share_followed_pct']:.1f}%"
        print(f"  {name:<24} {f['steered_or_blocked']:>5} steered/blocked, followed {f['followed_by_progress']:>5} ({share}), "
              f"median {f['median_turns']} turns, within 1 turn {f['within_1_turn']}")
    figures["struggling"] = dict(struggle)
    print(f"sessions where the agent wrote it was struggling: {struggle['sessions']}, steered: {struggle['steered']}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
