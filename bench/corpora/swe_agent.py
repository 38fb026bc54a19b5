"""A SWE-agent 1.x run (``.traj`` files) as published in SWE-bench/experiments, from github.com/lgetter/swe-agent-trajectory-analysis.

RAW is one run folder (``trajs/`` and ``results/results.json``); OUT is the source folder,
which receives ``<name of RAW>/<instance>.jsonl`` and ``labels.json``. Nothing else of the run
(``.pred``, ``.patch``, ``.config.yaml``, logs) is read.

Decisions (why):

* One session per ``.traj``, named by the instance id (the file's stem).
* One turn per tool call: a step with a non-empty ``action``. SWE-agent's exits (cost limit,
  autosubmission) and replies with text and no call ran nothing, so they are not turns.
* Tool and arguments are the model's call, not SWE-agent's rendered shell line, so the pack
  sees a tool name and a dict as from Agent-Zero: function-calling runs (``tool_calls`` in
  ``history``) give the call's JSON arguments, matched to the steps in order (each call's
  ``action`` must equal its step's); XML-call runs are parsed with SWE-agent's own patterns,
  values kept as text (``view_range`` ``"[373, 402]"``, the form the pack reads).
* ``output`` is the step's ``observation`` unchanged (``\\r\\n`` kept).
* No ``response`` (the replay makes one), no ``ok`` and no exit code (SWE-agent records none:
  the pack's classifier decides), no header and no ``user`` (the default role; the task is
  not replayed). ``thought`` is the step's ``thought``.
* Labels: resolved when in ``results.json``'s ``resolved`` list, else false (the run was
  evaluated on every instance).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from .traces import TraceLine, read_json, write_labels, write_session

RAW_HELP = "one run folder (trajs/, results/results.json)"
OUT_HELP = "the source folder: the run folder is written in it"

#: SWE-agent 1.x's XML function-call patterns (sweagent/tools/parsing.py, XMLFunctionCallingParser).
FN_REGEX = re.compile(r"<function=([^>]+)>\n(.*?)</function>", re.DOTALL)
FN_PARAM_REGEX = re.compile(r"<parameter=([^>]+)>(.*?)</parameter>", re.DOTALL)
#: SWE-gym's tool names, as SWE-agent maps them
TOOL_NAMES = {"execute_bash": "bash", "finish": "submit"}


def xml_call(response: str) -> tuple[str, dict[str, Any]]:
    """The tool and arguments of an XML function call, as SWE-agent parses them."""
    match = FN_REGEX.search(response)
    if not match:
        raise ValueError(f"no <function=...> call in response: {response[-200:]!r}")
    name = match.group(1).strip()
    args = {key: re.sub(r"^\n|\n$", "", value) for key, value in FN_PARAM_REGEX.findall(match.group(2))}
    return TOOL_NAMES.get(name, name), args


def function_calls(history: list[dict[str, Any]]) -> list[tuple[str, str, dict[str, Any]]]:
    """(action, tool, arguments) of every tool call in a function-calling run's history."""
    calls = []
    for message in history:
        if message.get("role") != "assistant" or not message.get("tool_calls"):
            continue
        if len(message["tool_calls"]) != 1:
            raise ValueError(f"{len(message['tool_calls'])} tool calls in one message")
        function = message["tool_calls"][0]["function"]
        arguments = function.get("arguments") or "{}"
        args = json.loads(arguments) if isinstance(arguments, str) else dict(arguments)
        calls.append((message.get("action") or "", function["name"], args))
    return calls


def convert_trajectory(data: dict[str, Any]) -> list[TraceLine]:
    """The turns of one trajectory; a ``ValueError`` when its history and its steps disagree."""
    steps = [step for step in data["trajectory"] if (step.get("action") or "").strip()]
    calls = function_calls(data.get("history") or [])
    if calls and len(calls) != len(steps):
        raise ValueError(f"{len(steps)} steps with an action but {len(calls)} tool calls in history")
    turns: list[TraceLine] = []
    for number, step in enumerate(steps, 1):
        if calls:
            action, tool, args = calls[number - 1]
            if action != step["action"]:
                raise ValueError(f"turn {number}: history's action {action[:80]!r} is not the step's {step['action'][:80]!r}")
        else:
            tool, args = xml_call(step.get("response") or "")
        turn: TraceLine = {"turn": number, "tool": tool, "args": dict(sorted(args.items())), "output": step.get("observation") or ""}
        if (step.get("thought") or "").strip():
            turn["thought"] = step["thought"]
        turns.append(turn)
    return turns


def run(raw: Path, out: Path) -> None:
    """Write the run folder in the source folder, with its labels."""
    resolved = set(read_json(raw / "results" / "results.json").get("resolved", []))
    folder = out / raw.name
    folder.mkdir(parents=True, exist_ok=True)
    labels: dict[str, bool | None] = {}
    total = 0
    for path in sorted(raw.glob("trajs/**/*.traj")):
        try:
            turns = convert_trajectory(read_json(path))
        except ValueError as error:
            raise SystemExit(f"{path}: {error}") from None
        write_session(folder / f"{path.stem}.jsonl", turns, ascii_only=True)
        labels[path.stem] = path.stem in resolved
        total += len(turns)
    write_labels(folder, labels)
    print(f"{folder}: {len(labels)} sessions, {total} turns, {sum(bool(v) for v in labels.values())} resolved", file=sys.stderr)
