"""Claude Code CLI runs with their verdicts, from github.com/StepanchukYI/agent-benchmarks-runs.

RAW is the repository's ``results/`` folder at ac595370b817d0251117f92dc32a3a3c2a16e5a0; OUT
is the corpus folder, which receives ``claude-code-ab-l0smoke/<model>-<prompt>-<effort>/<task>.jsonl``
and each run folder's ``labels.json``. The agent-benchmarks harness ran ``claude-code-cli@2.1.141``
on its ``L0_smoke`` suite (104 small file, shell and answer tasks) with five models (Claude Opus
4.7, Sonnet 4.6 and Haiku 4.5, GLM-4.6, MiniMax-M2), a CLAUDE.md variant or none, and low or high
reasoning effort: 14 configurations, one run of each task each. One folder per run:

* ``metadata.yaml``: ``task_id``, ``model``, ``prompt_label`` (null: no CLAUDE.md);
* ``trajectory.jsonl``: the harness's log: ``run_start`` (with ``reasoning.effort``), one
  ``turn`` line per block Claude Code streamed (an assistant's text in ``model_output`` or one
  tool call in ``tool_calls``; the tools' results in ``tool_returns`` with ``tool_use_id``,
  ``is_error`` and the text ``detail``), then the scorers' lines;
* ``scores.json``: the verdicts, the task's own checks and four scorers every run has
  (privacy, tool errors, tokens, latency).

Decisions (why):

* One line per tool call, in the log's order, its tool and arguments as Claude Code sent them
  (``Bash``, ``Read``, ``Edit``, ``Write``, ``Grep``, ``Glob``, the harness's MCP stubs). Claude
  Code sends a reply's parallel calls as consecutive blocks, then their results: a call made
  while an earlier one still waits for its result is a further call of the same turn (the
  trace's lines that share a turn), as the model saw none of their results before sending them.
* The output is the result's text, matched by ``tool_use_id``; ``ok`` is ``not is_error``,
  Claude Code's own flag. ``exit_code`` (``Bash`` only): 0 for a result that is no error, else
  the N of the ``Exit code N`` line Claude Code puts first, none without it (a timeout).
* ``thought`` is the text the model wrote since its previous call. Text after the last call is
  a last turn without a tool (the answer); a run that called no tool is that one turn.
  Thinking blocks are empty in the log and dropped.
* No ``user``: the task's text is not in the runs. No ``response``, no header.
* Labels: resolved when every verdict but the four pillar scorers passed. The harness's own
  ``pass`` also fails a run for its latency, tokens or tool errors: efficiency, not the task.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

from .traces import TraceLine, next_turn, read_json, read_jsonl, turn_count, write_labels, write_session

RAW_HELP = "the repository's results/ folder at ac59537 (one folder per run)"
OUT_HELP = "the corpus folder: claude-code-ab-l0smoke/ is written in it"

SOURCE = "claude-code-ab-l0smoke"
#: scorers every run has, of its efficiency and privacy rather than of its task
PILLARS = frozenset({"privacy_check", "tool_skill", "context_efficiency", "latency_cost"})
EXIT_CODE = re.compile(r"\AExit code (-?\d+)")
FIELDS = ("turn", "tool", "args", "output", "ok", "exit_code", "thought")


def metadata(path: Path) -> dict[str, str]:
    """``metadata.yaml`` is flat ``key: value`` lines (a value quoted, or ``null``)."""
    meta = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        key, colon, value = line.partition(": ")
        if colon and not line.startswith(" "):
            meta[key.strip()] = value.strip().strip("'\"")
    return meta


def resolved(scores: dict[str, Any]) -> bool:
    checks = [verdict for verdict in scores["verdicts"] if verdict["scorer_name"] not in PILLARS]
    return bool(checks) and all(verdict["pass"] for verdict in checks)


def convert_log(events: list[dict[str, Any]]) -> list[TraceLine]:
    """The turns of one run's log; a ``ValueError`` for a block or result the log should not hold."""
    turns: list[dict[str, Any]] = []
    calls: dict[str, dict[str, Any]] = {}
    texts: list[str] = []
    for event in events:
        if event.get("event") != "turn":
            continue
        if event["role"] == "assistant":
            if len(event.get("tool_calls") or []) > 1:
                raise ValueError("a block with more than one tool call")
            if event.get("model_output"):
                texts.append(event["model_output"])
            for call in event.get("tool_calls") or []:
                turn = calls[call["id"]] = {"turn": next_turn(turns, further=bool(calls)), "tool": call["name"], "args": call.get("args") or {}}
                if texts:
                    turn["thought"], texts = "\n\n".join(texts), []
                turns.append(turn)
            continue
        for result in event.get("tool_returns") or []:
            turn = calls.pop(result["tool_use_id"])
            turn["output"], turn["ok"] = result["detail"], not result["is_error"]
            if turn["tool"] != "Bash":
                continue
            if not result["is_error"]:
                turn["exit_code"] = 0
            elif code := EXIT_CODE.match(result["detail"]):
                turn["exit_code"] = int(code.group(1))
    if calls:
        raise ValueError(f"{len(calls)} calls without a result")
    if texts:
        turns.append({"turn": next_turn(turns), "thought": "\n\n".join(texts)})
    return [{key: turn[key] for key in FIELDS if key in turn} for turn in turns]  # type: ignore[misc]


def run(raw: Path, out: Path) -> None:
    """Write the source: one run folder per configuration."""
    if not raw.is_dir():
        raise SystemExit(f"{raw} is not a folder")
    labels: dict[str, dict[str, bool]] = {}
    turns = 0
    for folder in sorted(path for path in raw.iterdir() if path.is_dir()):
        meta = metadata(folder / "metadata.yaml")
        events = read_jsonl(folder / "trajectory.jsonl")
        start = next((event for event in events if event.get("event") == "run_start"), {})
        effort = (start.get("reasoning") or {}).get("effort") or "default"
        prompt = meta.get("prompt_label", "null")
        name = f"{meta['model']}-{'vanilla' if prompt == 'null' else prompt}-{effort}"
        task = meta["task_id"]
        if task in labels.setdefault(name, {}):
            raise SystemExit(f"{folder}: a second run of {task} in {name}")
        try:
            lines = convert_log(events)
        except (KeyError, ValueError) as error:
            raise SystemExit(f"{folder}: {error}") from None
        (out / SOURCE / name).mkdir(parents=True, exist_ok=True)
        write_session(out / SOURCE / name / f"{task}.jsonl", lines)
        labels[name][task] = resolved(read_json(folder / "scores.json"))
        turns += turn_count(lines)
    for name, run_labels in sorted(labels.items()):
        write_labels(out / SOURCE / name, run_labels)
    sessions = sum(len(run_labels) for run_labels in labels.values())
    good = sum(sum(run_labels.values()) for run_labels in labels.values())
    print(f"{SOURCE}: {sessions} sessions, {turns} turns, {good} resolved", file=sys.stderr)
