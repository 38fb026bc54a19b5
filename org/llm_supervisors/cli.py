"""``a0org supervisors stats | log | run``: the LLM-backed supervisors from the command line."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Iterable

from typing import TYPE_CHECKING

from org.contracts.vocabulary import SUPERVISOR_NAMES

if TYPE_CHECKING:
    from org.contracts.supervisor_outputs import SupervisorRun


def _home(org_dir: str | None) -> Path:
    """The organizations folder ``--org-dir`` names, else the current one."""
    from org.kernel.paths import organizations_dir

    return Path(org_dir) if org_dir else organizations_dir()


def _runs(home: Path) -> list[SupervisorRun]:
    from .records import RunLog
    from .runs import Files

    return RunLog(Files(home).runs).runs()


# --------------------------------------------------------------------------- stats


def _sum(runs: Iterable[SupervisorRun]) -> dict[str, Any]:
    runs = list(runs)
    return {
        "runs": len(runs),
        "applied": sum(r.outcome == "applied" for r in runs),
        "prompt_tokens": sum(r.prompt_tokens for r in runs),
        "completion_tokens": sum(r.completion_tokens for r in runs),
        "cost_usd": round(sum(r.cost_usd for r in runs), 6),
    }


def stats(home: Path) -> dict[str, Any]:
    """Tokens and cost per run, per supervisor, today and in total; and the usage ledger's figures."""
    from org.llm.budget import LedgerError, UsageLedger
    from org.llm.config import load_config

    from .records import day_of, today

    runs = _runs(home)
    day = today()
    by_supervisor = {name: _sum(r for r in runs if r.supervisor == name) for name in SUPERVISOR_NAMES}
    result: dict[str, Any] = {
        "today": {"date": day, **_sum(r for r in runs if day_of(r) == day)},
        "total": _sum(runs),
        "by_supervisor": by_supervisor,
        "runs": [{"started": r.started.isoformat(), "supervisor": r.supervisor, "trigger": r.trigger, "outcome": r.outcome,
                  "prompt_tokens": r.prompt_tokens, "completion_tokens": r.completion_tokens, "cost_usd": r.cost_usd}
                 for r in runs],
    }
    ledger = UsageLedger.for_organizations(home)
    config = load_config(home)
    budget = config.model.daily_budget_usd if config is not None and config.model is not None else None
    if not ledger.path.exists():  # a read-only command: no lock file is made for a ledger that is not there
        result["ledger"] = {"path": str(ledger.path), "today_usd": 0.0, "today_calls": 0, "total_usd": 0.0, "total_calls": 0,
                            "total_tokens": 0, "daily_budget_usd": budget}
        return result
    try:
        today_usage, total_usage = ledger.today(), ledger.totals()
        result["ledger"] = {"path": str(ledger.path), "today_usd": today_usage.cost_usd, "today_calls": today_usage.calls,
                            "total_usd": total_usage.cost_usd, "total_calls": total_usage.calls,
                            "total_tokens": total_usage.tokens, "daily_budget_usd": budget}
    except LedgerError as exc:
        result["ledger"] = {"path": str(ledger.path), "error": str(exc)}
    return result


def _money(value: float) -> str:
    return f"${value:.4f}"


def _row(label: str, figures: dict[str, Any]) -> str:
    tokens = f"{figures['prompt_tokens']:,} + {figures['completion_tokens']:,}"
    return f"  {label:<22} {figures['runs']:>5} {figures['applied']:>8}   {tokens:>21}   {_money(figures['cost_usd']):>10}"


def render_stats(data: dict[str, Any], last: int) -> str:
    lines = ["Supervisor runs", f"  {'':<22} {'runs':>5} {'applied':>8}   {'tokens (in + out)':>21}   {'cost':>10}",
             _row(f"today ({data['today']['date']})", data["today"]), _row("total", data["total"]), "", "By supervisor (total)"]
    lines += [_row(name, figures) for name, figures in data["by_supervisor"].items()]
    runs = data["runs"][-last:] if last else []
    if runs:
        lines += ["", f"Per run (last {len(runs)})"]
        for run in runs:
            lines.append(f"  {run['started'][:19].replace('T', ' ')}  {run['supervisor']:<12} {run['trigger']:<9} {run['outcome']:<9} "
                         f"{run['prompt_tokens']:>7,} + {run['completion_tokens']:<7,} {_money(run['cost_usd'])}")
    ledger = data["ledger"]
    lines.append("")
    if "error" in ledger:
        lines.append(f"Usage ledger: {ledger['error']}")
    else:
        budget = f" of the {_money(ledger['daily_budget_usd'])} daily budget" if ledger["daily_budget_usd"] is not None else ""
        lines.append(f"Usage ledger ({ledger['path']}): today {_money(ledger['today_usd'])}{budget} in {ledger['today_calls']} call(s); "
                     f"total {_money(ledger['total_usd'])} in {ledger['total_calls']} call(s), {ledger['total_tokens']:,} tokens")
    return "\n".join(lines)


def _missing(home: Path) -> bool:
    """Say so when the organizations folder does not exist (read-only commands create nothing)."""
    if home.is_dir():
        return False
    print(f"error: the organizations folder {home} does not exist (give another with --org-dir, or set $A0ORG_HOME)",
          file=sys.stderr)
    return True


def _stats(args: argparse.Namespace) -> int:
    home = _home(args.org_dir)
    if _missing(home):
        return 1
    data = stats(home)
    print(json.dumps(data, indent=2) if args.json else render_stats(data, args.last))
    return 0


# --------------------------------------------------------------------------- log


def render_run(run: SupervisorRun) -> list[str]:
    from .records import outcome_line

    when = run.started.strftime("%Y-%m-%d %H:%M:%S")
    head = (f"{when}  {run.supervisor:<12} {run.trigger:<9} {run.outcome:<9} {run.duration_seconds:6.1f} s  "
            f"{run.prompt_tokens + run.completion_tokens:>6,} tokens  {_money(run.cost_usd)}  (task {run.task}, {run.source}"
            + (f", project {run.project})" if run.project else ")"))
    lines = [head, f"    {outcome_line(run)}"]
    if run.summary:
        lines.append(f"    summary: {run.summary}")
    lines += [f"    wrote {path}" for path in run.documents]
    lines += [f"    directive {entry}" for entry in run.directives]
    if run.outcome == "applied" and run.reason:
        lines.append(f"    note: {run.reason}")
    if run.converging:
        lines.append(f"    converging: interval now {run.interval_tasks} tasks")
    if run.response_format or run.answer_notes:
        lines.append(f"    answer ({run.response_format or 'no answer'}): " + ("; ".join(run.answer_notes) or "clean JSON"))
    return lines


def _log(args: argparse.Namespace) -> int:
    home = _home(args.org_dir)
    if _missing(home):
        return 1
    runs = _runs(home)
    if args.supervisor:
        runs = [r for r in runs if r.supervisor == args.supervisor]
    runs = runs[-args.limit:] if args.limit else runs
    if args.json:
        for run in runs:
            print(run.model_dump_json())
        return 0
    if not runs:
        print("No supervisor runs recorded yet.")
        return 0
    answers = {}
    if args.raw:
        from .answers import AnswerLog
        from .runs import Files

        answers = AnswerLog(Files(_home(args.org_dir)).answers).of({run.run_id for run in runs})
    for run in runs:
        print("\n".join(render_run(run)))
        for number, text in enumerate(answers[run.run_id].answers if run.run_id in answers else [], start=1):
            print(f"    raw answer {number} of run {run.run_id}:")
            print("\n".join(f"      | {line}" for line in text.splitlines() or [""]))
    return 0


# --------------------------------------------------------------------------- run


def _run(args: argparse.Namespace) -> int:
    from .records import outcome_line
    from .runner import SupervisorRunner

    runner = SupervisorRunner(_home(args.org_dir), args.project)
    if runner.active_config() is None:
        print(f"error: no usable {runner.files.config} (missing, invalid or every supervisor switched off); "
              "see docs/supervisors-llm.md", file=sys.stderr)
        return 2
    runs = runner.run_now(args.supervisor or None, milestone=args.milestone)
    if not runs:
        print("No supervisor runs on a milestone; nothing ran." if args.milestone else "No supervisor is enabled; nothing ran.")
        return 2
    for run in runs:
        print(outcome_line(run))
        if run.summary:
            print(f"    {run.summary}")
    if all(run.outcome == "skipped" for run in runs):
        return 2  # nothing could run (no key, endpoint down, budget spent): the same as no supervisor at all
    return 0 if all(run.outcome == "applied" for run in runs) else 1


# --------------------------------------------------------------------------- commands


def add_commands(sub: Any) -> None:
    parser = sub.add_parser("supervisors", help="the LLM-backed supervisors: usage and cost, run log, run now")
    commands = parser.add_subparsers(dest="supervisors_command", required=True)

    def org_dir(p: argparse.ArgumentParser) -> None:
        p.add_argument("--org-dir", help="the organizations folder (default: $A0ORG_HOME, else <Agent-Zero>/usr/organizations)")

    p = commands.add_parser("stats", help="tokens and cost per run, per supervisor, today and in total")
    org_dir(p)
    p.add_argument("--last", type=int, default=20, metavar="N", help="list the last N runs (default 20; 0: none)")
    p.add_argument("--json", action="store_true", help="print JSON for scripts")
    p.set_defaults(func=_stats)

    p = commands.add_parser("log", help="the recorded runs: trigger, outcome, tokens, cost, what each wrote")
    org_dir(p)
    p.add_argument("--limit", type=int, default=20, metavar="N", help="the last N runs (default 20; 0: all)")
    p.add_argument("--supervisor", choices=SUPERVISOR_NAMES, help="only this supervisor's runs")
    p.add_argument("--json", action="store_true", help="one JSON line per run (the run records as stored)")
    p.add_argument("--raw", action="store_true", help="also print each run's raw answers, as received (secrets redacted)")
    p.set_defaults(func=_log)

    p = commands.add_parser("run", help="run the supervisors now and apply their results")
    org_dir(p)
    p.add_argument("--milestone", action="store_true",
                   help="mark a milestone: run the supervisors that run on milestones (on_milestone in supervisors.yaml)")
    p.add_argument("--supervisor", action="append", choices=SUPERVISOR_NAMES, help="only this one (repeatable)")
    p.add_argument("--project", metavar="NAME", help="for an Agent-Zero project: its tasks, store and queue (default: the global ones)")
    p.set_defaults(func=_run)


__all__ = ["add_commands", "stats"]
