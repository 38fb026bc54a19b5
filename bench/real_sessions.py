"""Judge the supervisor on real agent sessions: how often it steers, and where.

    python bench/real_sessions.py CORPUS [--events FILE] [--json FILE] [--doctrine JSON] [--org-dir DIR]
                                         [--sample N --seed S --sample-file FILE]
    python bench/real_sessions.py SOURCES --source-summary [--json FILE] [--sample N ...]

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

Last it prints the goal figures: the share of succeeded sessions steered (goal at most 10%),
succeeded sessions paused (goal 0; how many of them the recorded agent went on to change the
code in after the pause, an edit that went in: the ones a pause could have cost the success), pairs of pauses within 5 turns of each other (goal 0,
counted over the whole replay: a turn after a pause is the user resuming), and the waste
sessions (``bench/waste_sessions.py``: 5 or more turns of the same failure or of no-effect
reruns, read from the raw trace alone) and the share of them steered at least once (goal at
least 3 of 4), also counting only steering inside a stretch of waste or a pause before its
end. ``--sample N --seed S`` writes N random steering, block and pause events with the turns around them to
``--sample-file`` (Markdown) for reading by hand. ``--source-summary`` takes a folder of
corpora (one per source) and prints one row of goal figures per source.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from org.contracts import SupervisionEvent, TraceHeader, TraceTurn  # noqa: E402
from org.kernel import events as event_log  # noqa: E402
from org.replay import organization_home, run_session  # noqa: E402
from org.standin.session import replies  # noqa: E402
from org.stats import WITHIN_TURNS, followed_by_progress  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from waste_sessions import changes, waste_in  # noqa: E402

TRACE_FIELDS = set(TraceTurn.model_fields)
#: Two pauses closer than this (in turns) are one episode paused twice.
PAUSE_PAIR_TURNS = 5
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


def replay_session(path: Path, doctrine: dict[str, Any]) -> tuple[
        list[TraceTurn], list[dict[str, Any]], list[dict[str, Any]], list[SupervisionEvent], list[dict[str, Any]]]:
    """The turns, the raw lines, the events up to the first pause, its event log, and every
    event of the whole replay (a turn after a pause is the user resuming the chat)."""
    header, turns, raw = read_session(path)
    if doctrine:
        header = TraceHeader.model_validate({**(header.model_dump() if header else {"kind": "header"}), "doctrine": doctrine})
    with organization_home(None) as home:
        results = run_session(header, turns, home)
        log = list(event_log.read(home))
    pause = next((i for i, e in enumerate(log) if e.type == "pause"), None)
    log = log if pause is None else log[:pause + 1]  # as below: a paused chat waits for its user
    every = []
    for r in results:
        if r.blocked:
            every.append({"turn": r.turn, "anomaly": r.blocked[0], "action": "block", "text": r.blocked[1]})
        every += [{"turn": r.turn, "anomaly": anomaly, "action": "steer", "text": text} for anomaly, text in r.steering]
        if r.paused:
            every.append({"turn": r.turn, "anomaly": getattr(r, "pause_reason", None) or "pause", "action": "pause",
                          "text": getattr(r, "pause_text", None) or ""})
    first_pause = next((i for i, e in enumerate(every) if e["action"] == "pause"), None)
    events = every if first_pause is None else every[:first_pause + 1]  # up to the pause: a paused chat waits for its user
    return turns, raw, events, log, every


def pause_pairs(events: list[dict[str, Any]], within: int = PAUSE_PAIR_TURNS) -> int:
    """Pauses that come within ``within`` turns of the pause before them."""
    turns = [e["turn"] for e in events if e["action"] == "pause"]
    return sum(b - a <= within for a, b in zip(turns, turns[1:]))


def followed_figures(pairs: list[tuple[SupervisionEvent, int | None]]) -> dict[str, Any]:
    delays = sorted(t for _, t in pairs if t is not None)
    return {"steered_or_blocked": len(pairs), "followed_by_progress": len(delays),
            "share_followed_pct": round(100 * len(delays) / len(pairs), 1) if pairs else None,
            "median_turns": delays[len(delays) // 2] if delays else None,
            "within_1_turn": sum(t <= 1 for t in delays)}


def shown_turn(item: dict[str, Any], width: int = 300) -> dict[str, Any]:
    args = item.get("args") or {}
    command = args.get("code") or args.get("command") or json.dumps(args)[:width] if isinstance(args, dict) else str(args)
    output = item.get("output") or ""
    return {
        "turn": item.get("turn"), "tool": item.get("tool"), "command": str(command)[:width],
        "output": output[:width] + (" … " + output[-width:] if len(output) > 2 * width else output[width:2 * width]),
        "exit_code": item.get("exit_code"), "thought": (item.get("thought") or "")[:width],
    }


def context_of(raw: list[dict[str, Any]], turn: int, before: int = 4, after: int = 0) -> list[dict[str, Any]]:
    index = max((i for i, t in enumerate(raw) if t.get("turn") == turn), default=len(raw) - 1)  # a reply's last call
    return [shown_turn(item) for item in raw[max(0, index - before):index + 1 + after]]


def sample_markdown(picked: list[dict[str, Any]]) -> str:
    """Events with the turns around them, for reading by hand: one section per event."""
    out = ["# Sampled events\n", "Verdict per event: justified / harmless / false, and one line why.\n"]
    for n, e in enumerate(picked, 1):
        out.append(f"## {n}. {e['source']} {e['run']}/{e['session']} ({e['group']}) turn {e['turn']}: "
                   f"{e['action']} {e['anomaly']}\n")
        out.append("```text\n" + (e["text"] or "(no text)")[:1200] + "\n```\n")
        for t in e["context"]:
            mark = ">>" if t["turn"] == e["turn"] else "  "
            out.append(f"{mark} turn {t['turn']} [{t['tool'] or 'no tool'}] exit={t['exit_code']}\n")
            if t["thought"]:
                out.append(f"   thought: {t['thought']!r}\n")
            out.append(f"   $ {t['command']!r}\n   -> {t['output']!r}\n")
        out.append("\nVerdict: \n")
    return "\n".join(out)


def group_of(label: Any) -> str:
    resolved = label.get("resolved") if isinstance(label, dict) else None
    return {True: "succeeded", False: "failed"}.get(resolved, "unlabelled")


def goal_figures(counts: Counter) -> dict[str, Any]:
    """The figures the judgement is held to, from one corpus's counters."""
    succeeded = counts["succeeded sessions"]
    waste = counts["waste sessions"]
    pct = lambda part, whole: round(100 * part / whole, 1) if whole else None  # noqa: E731
    return {
        "succeeded_sessions": succeeded,
        "succeeded_steered": counts["succeeded steered"], "succeeded_steered_pct": pct(counts["succeeded steered"], succeeded),
        "succeeded_paused": counts["succeeded paused"],
        "succeeded_paused_before_a_change": counts["succeeded paused before a change"],
        "pauses": counts["pauses"], "paused_sessions": counts["paused sessions"], "pause_pairs_within_5": counts["pause pairs"],
        "waste_sessions": waste, "waste_steered": counts["waste steered"], "waste_steered_pct": pct(counts["waste steered"], waste),
        "waste_steered_in_stretch": counts["waste steered in stretch"],
        "waste_steered_in_stretch_pct": pct(counts["waste steered in stretch"], waste),
    }


def show(percent: float | None) -> str:
    return "-" if percent is None else f"{percent:.1f}%"


def print_goals(g: dict[str, Any]) -> None:
    print(f"\ngoals: succeeded sessions steered {g['succeeded_steered']}/{g['succeeded_sessions']} "
          f"({show(g['succeeded_steered_pct'])}, goal <= 10%); succeeded paused {g['succeeded_paused']} (goal 0), "
          f"{g['succeeded_paused_before_a_change']} of them before an edit that went in; "
          f"pauses {g['pauses']} in {g['paused_sessions']} sessions, pairs within {PAUSE_PAIR_TURNS} turns "
          f"{g['pause_pairs_within_5']} (goal 0)")
    print(f"waste sessions (5+ turns of the same failure or no-effect reruns) {g['waste_sessions']}: steered "
          f"{g['waste_steered']} ({show(g['waste_steered_pct'])}, goal >= 75%), steered inside the stretch "
          f"{g['waste_steered_in_stretch']} ({show(g['waste_steered_in_stretch_pct'])})")


def measure(corpus: Path, args: argparse.Namespace, doctrine: dict[str, Any], events_out: Any = None,
            pool: list[dict[str, Any]] | None = None, quiet: bool = False) -> dict[str, Any]:
    """Replay one corpus; print its figures unless ``quiet``; add every event to ``pool``."""
    say = (lambda *a, **k: None) if quiet else print
    groups: dict[str, Counter] = {}
    anomalies: dict[str, Counter] = {}
    struggle = Counter()
    goals = Counter()
    named: dict[str, list[str]] = {}  # which sessions make the goal figures, for finding them again
    followed: dict[str, list] = {}
    followed_by_anomaly: dict[str, list] = {}
    for run in sorted(p for p in corpus.iterdir() if p.is_dir()):
        labels_path = run / "labels.json"
        labels = json.loads(labels_path.read_text(encoding="utf-8")) if labels_path.exists() else {}
        sessions = sorted(run.glob("*.jsonl"))
        if args.limit:
            sessions = sessions[:args.limit]
        for path in sessions:
            group = group_of(labels.get(path.stem))
            turns, raw, events, log, every = replay_session(path, doctrine)
            pairs = followed_by_progress(log, WITHIN_TURNS)
            followed.setdefault(group, []).extend(pairs)
            for pair in pairs:
                followed_by_anomaly.setdefault(pair[0].anomaly or "-", []).append(pair)
            if args.org_dir:
                with event_log.log_path(args.org_dir).open("a", encoding="utf-8") as out:
                    out.writelines(e.model_dump_json(exclude_defaults=True) + "\n" for e in log)
            counts = groups.setdefault(group, Counter())
            counts["sessions"] += 1
            counts["turns"] += len(replies(turns))
            counts["events"] += len(events)
            counts["steered sessions"] += bool(events)
            for event in events:
                anomalies.setdefault(group, Counter())[f"{event['action']}:{event['anomaly']}"] += 1
            if any(STRUGGLE_RE.search(t.get("thought") or "") for t in raw):
                struggle["sessions"] += 1
                struggle["steered"] += bool(events)
            pauses = sum(e["action"] == "pause" for e in every)
            goals["pauses"] += pauses
            goals["paused sessions"] += bool(pauses)
            goals["pause pairs"] += pause_pairs(every)
            name = f"{run.name}/{path.stem}"
            if group == "succeeded":
                goals["succeeded sessions"] += 1
                goals["succeeded steered"] += bool(events)
                goals["succeeded paused"] += bool(pauses)
                named.setdefault("succeeded_steered", []).extend([name] if events else [])
                named.setdefault("succeeded_paused", []).extend([name] if pauses else [])
                first_pause = next((e["turn"] for e in every if e["action"] == "pause"), None)
                if first_pause is not None and any(t > first_pause for t in changes(raw)):
                    goals["succeeded paused before a change"] += 1
                    named.setdefault("succeeded_paused_before_a_change", []).append(name)
            if pause_pairs(every):
                named.setdefault("paused_within_5_turns", []).append(name)
            waste = waste_in(raw)
            if waste:
                goals["waste sessions"] += 1
                goals["waste steered"] += bool(every)
                goals["waste steered in stretch"] += any(w.met_by(e) for w in waste for e in every)
                if not every:
                    named.setdefault("waste_not_steered", []).append(f"{name} ({waste[0].kind}: turns {waste[0].first}-{waste[0].last})")
            if events_out:
                for event in events:
                    events_out.write(json.dumps({"run": run.name, "session": path.stem, "group": group, **event,
                                                 "context": context_of(raw, event["turn"])}) + "\n")
            if pool is not None:
                pool.extend({"source": corpus.name, "run": run.name, "session": path.stem, "group": group, **e,
                             "context": context_of(raw, e["turn"], before=4, after=3)} for e in every)

    figures: dict[str, Any] = {}
    say(f"{'group':<11} {'sessions':>8} {'turns':>7} {'events':>6} {'per 100 turns':>13} {'sessions steered':>16}")
    for group, counts in sorted(groups.items()):
        per100 = 100 * counts["events"] / max(1, counts["turns"])
        share = 100 * counts["steered sessions"] / max(1, counts["sessions"])
        figures[group] = {**counts, "per_100_turns": round(per100, 3), "share_steered_pct": round(share, 1),
                          "by_anomaly": dict(anomalies.get(group, {}))}
        say(f"{group:<11} {counts['sessions']:>8} {counts['turns']:>7} {counts['events']:>6} {per100:>13.2f} {share:>15.1f}%")
        say("            " + ", ".join(f"{k} {v}" for k, v in sorted(anomalies.get(group, {}).items())))
    say(f"\nsteering or a block followed by progress within {WITHIN_TURNS} turns (the agent never read it: "
        "the share it got out of by itself)")
    for name, pairs in [*sorted(followed.items()), *sorted(followed_by_anomaly.items())]:
        f = followed_figures(pairs)
        figures.setdefault("followed_by_progress", {})[name] = f
        share = "-" if f["share_followed_pct"] is None else f"{f['share_followed_pct']:.1f}%"
        say(f"  {name:<24} {f['steered_or_blocked']:>5} steered/blocked, followed {f['followed_by_progress']:>5} ({share}), "
            f"median {f['median_turns']} turns, within 1 turn {f['within_1_turn']}")
    figures["struggling"] = dict(struggle)
    say(f"sessions where the agent wrote it was struggling: {struggle['sessions']}, steered: {struggle['steered']}")
    figures["goals"] = goal_figures(goals)
    figures["sessions"] = named
    if not quiet:
        print_goals(figures["goals"])
    return figures


def summary_row(name: str, figures: dict[str, Any]) -> str:
    g = figures["goals"]
    sessions = sum(v["sessions"] for k, v in figures.items() if k in ("succeeded", "failed", "unlabelled"))
    turns = sum(v["turns"] for k, v in figures.items() if k in ("succeeded", "failed", "unlabelled"))
    events = sum(v["events"] for k, v in figures.items() if k in ("succeeded", "failed", "unlabelled"))
    return (f"{name:<38} {sessions:>5} {turns:>6} {100 * events / max(1, turns):>6.2f} "
            f"{g['succeeded_steered']:>3}/{g['succeeded_sessions']:<3} {show(g['succeeded_steered_pct']):>6} "
            f"{g['succeeded_paused']:>4} {g['succeeded_paused_before_a_change']:>6} {g['pauses']:>6} {g['pause_pairs_within_5']:>5} "
            f"{g['waste_steered']:>3}/{g['waste_sessions']:<3} {show(g['waste_steered_pct']):>6} {show(g['waste_steered_in_stretch_pct']):>6}")


SUMMARY_HEADER = (f"{'source':<38} {'sess':>5} {'turns':>6} {'ev/100':>6} {'succ steered':>13} {'paused':>4} "
                  f"{'before':>6} {'pauses':>6} {'pairs':>5} {'waste steered':>13} {'in stretch':>10}")


def write_sample(args: argparse.Namespace, pool: list[dict[str, Any]] | None, path: Path) -> None:
    """``--sample N`` random events of ``pool`` (the same seed picks the same events)."""
    if pool is None:
        return
    picked = random.Random(args.seed).sample(pool, min(args.sample, len(pool)))
    path.write_text(sample_markdown(picked), encoding="utf-8")
    path.with_suffix(".jsonl").write_text("".join(json.dumps(e) + "\n" for e in picked), encoding="utf-8")
    print(f"{len(picked)} of {len(pool)} events written to {path} (and as JSON lines to {path.with_suffix('.jsonl')})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--events", type=Path, help="write every steering event with its context (JSON lines)")
    parser.add_argument("--json", type=Path, help="write the figures as JSON")
    parser.add_argument("--doctrine", default="{}", help="doctrine overrides as JSON, merged into every session's role")
    parser.add_argument("--limit", type=int, default=0, help="at most N sessions per run (0: all)")
    parser.add_argument("--org-dir", type=Path, help="keep every session's supervision events in DIR/events/events.jsonl")
    parser.add_argument("--source-summary", action="store_true",
                        help="CORPUS is a folder of corpora, one per source: one row of goal figures per source")
    parser.add_argument("--sample", type=int, default=0, help="write N random events with the turns around them")
    parser.add_argument("--seed", type=int, default=0, help="seed of --sample")
    parser.add_argument("--sample-file", type=Path, default=Path("sampled_events.md"),
                        help="where --sample writes (with --source-summary: FILE-<source>.md, N per source)")
    args = parser.parse_args(argv)
    doctrine = json.loads(args.doctrine)
    if args.org_dir:
        event_log.log_path(args.org_dir).parent.mkdir(parents=True, exist_ok=True)
        event_log.log_path(args.org_dir).write_bytes(b"")

    events_out = args.events.open("w", encoding="utf-8") if args.events else None
    try:
        if args.source_summary:
            figures = {}
            print(SUMMARY_HEADER)
            for source in sorted(p for p in args.corpus.iterdir() if p.is_dir()):
                pool: list[dict[str, Any]] | None = [] if args.sample else None
                figures[source.name] = measure(source, args, doctrine, events_out, pool, quiet=True)
                print(summary_row(source.name, figures[source.name]), flush=True)
                write_sample(args, pool, args.sample_file.with_name(f"{args.sample_file.stem}-{source.name}.md"))
        else:
            pool = [] if args.sample else None
            figures = measure(args.corpus, args, doctrine, events_out, pool)
            write_sample(args, pool, args.sample_file)
    finally:
        if events_out:
            events_out.close()
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
