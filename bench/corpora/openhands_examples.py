"""The OpenHands CodeAct sessions committed in github.com/All-Hands-AI/OpenHands (``output.jsonl`` event histories).

RAW holds the three files at their repository paths (``RUNS``); OUT is the source folder,
which receives one run folder per file, each with ``<session>.jsonl`` and ``labels.json``:

* Multi-SWE-bench ponyc (CodeActAgent v0.35, function calling, Llama-4-Maverick): unlabelled;
* the resolver's mock output (mid-2024 CodeAct, ``<execute_bash>``): labelled by ``success``;
* ProntoQA (gpt-4o, mid-2024): labelled by ``test_result.result``.

Decisions (why):

* One turn per action the agent took (each is one model reply holding one call): ``run``,
  ``read``, ``edit``, ``think``, ``run_ipython``, a plain ``message`` (a turn without a tool)
  and ``finish`` (tool ``finish``, no output, as Agent-Zero's ``response`` tool). The
  ``system`` prompt and recall events are not turns.
* OpenHands' ``error`` observations are not turns: OpenHands refused a call whose arguments
  did not validate before making an action of it, so neither tool nor arguments are recorded.
* Tool and arguments are what the model called: with function calling, the function's name and
  its JSON from ``tool_call_metadata`` (the action's ``args`` add defaults and the thought the
  model never sent); in the 2024 files ``run`` / ``run_ipython`` become ``execute_bash``
  ``{command}`` / ``execute_ipython_cell`` ``{code}``, the names OpenHands later gave them.
* The output is the text OpenHands gave the model: a v0.35 command as
  ``CmdOutputObservation.to_agent_observation`` shows it (prefix, content, suffix, working
  directory, ``[Command finished with exit code N]``), a 2024 command with ``[Command -1
  finished with exit code N]``, other observations' ``content``.
* ``exit_code`` for commands (-1, "no code", left out); ``thought`` from the action's thought
  or a ``message``'s text; ``user``: the task on turn 1 and ProntoQA's automatic "Please
  continue working…" on the turn after it. No ``response``: these files hold no raw reply.
* Sessions are named by ``instance_id``, ``<owner>__<repo>-<issue>`` and ProntoQA's ``id``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from .traces import TraceLine, read_jsonl, write_labels, write_session

RAW_HELP = "a folder holding the three output.jsonl files at their repository paths"
OUT_HELP = "the source folder: one run folder per file is written in it"

PONYC = Path("evaluation/benchmarks/multi_swe_bench/examples/output.jsonl")
RESOLVER = Path("tests/unit/resolver/mock_output/output.jsonl")
PRONTOQA = Path("evaluation/evaluation_outputs/outputs/logic_reasoning/CodeActAgent/ProntoQA/"
                "gpt-4o-2024-05-13_maxiter_10_N_v1.5/output.jsonl")

#: (run folder written, file read, its format)
RUNS = (
    ("multi-swe-bench-ponyc-llama-4-maverick", PONYC, "ponyc"),
    ("resolver-mock-output", RESOLVER, "resolver"),
    ("prontoqa-gpt-4o", PRONTOQA, "prontoqa"),
)

#: the 2024 actions' tools, by the names OpenHands' function calling later gave them
OLD_TOOLS = {"run": ("execute_bash", "command"), "run_ipython": ("execute_ipython_cell", "code")}


def command_output(obs: dict[str, Any]) -> tuple[str, int | None]:
    """A v0.35 command's output as ``CmdOutputObservation.to_agent_observation`` gave it to the model."""
    meta = (obs.get("extras") or {}).get("metadata") or {}
    code = meta.get("exit_code", -1)
    text = f"{meta.get('prefix') or ''}{obs.get('content') or ''}{meta.get('suffix') or ''}"
    if meta.get("working_dir"):
        text += f"\n[Current working directory: {meta['working_dir']}]"
    if meta.get("py_interpreter_path"):
        text += f"\n[Python interpreter: {meta['py_interpreter_path']}]"
    if code != -1:
        text += f"\n[Command finished with exit code {code}]"
    return text, (code if code != -1 else None)


def function_call(event: dict[str, Any]) -> tuple[str | None, dict[str, Any] | None]:
    """The function the model called for this action, and its arguments as it sent them."""
    meta = event.get("tool_call_metadata")
    if not meta:
        return None, None
    call_id = meta.get("tool_call_id")
    for choice in (meta.get("model_response") or {}).get("choices") or []:
        for call in (choice.get("message") or {}).get("tool_calls") or []:
            if call.get("id") == call_id:
                return call["function"]["name"], json.loads(call["function"]["arguments"] or "{}")
    return meta.get("function_name"), None


def ponyc_turns(row: dict[str, Any]) -> list[TraceLine]:
    """v0.35 events: actions and the observations that name them by ``cause``."""
    history = row["history"]
    answers = {e["cause"]: e for e in history if "observation" in e and "cause" in e}
    task = next(e["message"] for e in history if e.get("source") == "user" and e.get("action") == "message")
    turns: list[TraceLine] = []
    for event in history:
        action = event.get("action")
        if event.get("source") != "agent" or not action or action == "system":
            continue
        tool, args = function_call(event)
        if tool is None:
            raise ValueError(f"{row['instance_id']}: action {event['id']} has no function call")
        turn: TraceLine = {"turn": len(turns) + 1}
        if not turns:
            turn["user"] = task
        turn["tool"], turn["args"] = tool, args
        obs = answers.get(event["id"])
        if obs is not None:
            if obs["observation"] == "run":
                turn["output"], code = command_output(obs)
                if code is not None:
                    turn["exit_code"] = code
            else:
                turn["output"] = obs.get("content") or ""
        thought = (event.get("args") or {}).get("thought")
        if thought:
            turn["thought"] = thought
        turns.append(turn)
    return turns


def old_turns(history: list[Any]) -> list[TraceLine]:
    """The 2024 format: ``[action, observation]`` pairs (ProntoQA) or a flat list where each
    action is followed by its observation (resolver)."""
    if history and isinstance(history[0], list):
        pairs = [(a, o) for a, o in history]
    else:
        pairs, i = [], 0
        while i < len(history):
            action = history[i]
            nxt = history[i + 1] if i + 1 < len(history) else None
            if nxt is not None and "observation" in nxt and "action" not in nxt:
                pairs.append((action, nxt))
                i += 2
            else:
                pairs.append((action, None))
                i += 1
    turns: list[TraceLine] = []
    pending_user: str | None = None
    for action, obs in pairs:
        kind = action.get("action")
        args = action.get("args") if isinstance(action.get("args"), dict) else action
        # ProntoQA marks the user's messages ``source: user``; the resolver's list opens with the
        # task as a ``message`` that names no source
        if action.get("source") == "user" or (kind == "message" and not turns and pending_user is None):
            pending_user = args.get("content") or action.get("message") or ""
            continue
        turn: TraceLine = {"turn": len(turns) + 1}
        if pending_user is not None:
            turn["user"], pending_user = pending_user, None
        if kind in OLD_TOOLS:
            tool, key = OLD_TOOLS[kind]
            turn["tool"], turn["args"] = tool, {key: args.get(key) or ""}
            content = (obs or {}).get("content") or ""
            if kind == "run":
                code = (obs or {}).get("exit_code", (obs or {}).get("extras", {}).get("exit_code"))
                command_id = (obs or {}).get("command_id", (obs or {}).get("extras", {}).get("command_id", -1))
                if code is not None:
                    content += f"\n[Command {command_id} finished with exit code {code}]"
                    turn["exit_code"] = code
            turn["output"] = content
        elif kind == "finish":
            turn["tool"], turn["args"] = "finish", {}
        elif kind != "message":  # a message is a reply without a tool call
            raise ValueError(f"unknown action {kind!r}")
        thought = args.get("thought") or (args.get("content") if kind == "message" else None)
        if thought:
            turn["thought"] = thought
        turns.append(turn)
    return turns


def sessions_of(path: Path, kind: str) -> dict[str, tuple[list[TraceLine], bool | None]]:
    """Each session of one file: its turns and its label (None: unlabelled)."""
    out: dict[str, tuple[list[TraceLine], bool | None]] = {}
    for row in read_jsonl(path):
        if kind == "ponyc":
            out[row["instance_id"]] = (ponyc_turns(row), None)
        elif kind == "resolver":
            issue = row["issue"]
            out[f"{issue['owner']}__{issue['repo']}-{issue['number']}"] = (old_turns(row["history"]), bool(row["success"]))
        else:
            out[row["id"]] = (old_turns(row["history"]), bool(row["test_result"]["result"]))
    return out


def run(raw: Path, out: Path) -> None:
    """Write one run folder per file, with its labels."""
    total_sessions = total_turns = 0
    for run_name, path, kind in RUNS:
        sessions = sessions_of(raw / path, kind)
        folder = out / run_name
        folder.mkdir(parents=True, exist_ok=True)
        for name in sorted(sessions):
            write_session(folder / f"{name}.jsonl", sessions[name][0])
        write_labels(folder, {name: resolved for name, (_, resolved) in sessions.items()})
        turns = sum(len(t) for t, _ in sessions.values())
        print(f"{run_name}: {len(sessions)} sessions, {turns} turns", file=sys.stderr)
        total_sessions += len(sessions)
        total_turns += turns
    print(f"total: {total_sessions} sessions, {total_turns} turns", file=sys.stderr)
