"""mini-swe-agent 2.x tool-calling trajectories on SWE-bench Verified, from github.com/arifmohamedkhan/mini-swe-agent.

RAW is the repository at 09c41a7bfd5242274e65ecfe011ba01aea02f5ed (it holds ``results_full/``
and ``logs/run_evaluation/``); OUT is the source folder, which receives
``results_full/<instance>.jsonl`` and ``labels.json``. The run: ``results_full/instance_N.json``,
mini-swe-agent 2.3.0 with its stock ``benchmarks/swebench.yaml`` prompts, tool calling (one
``bash`` tool, parallel calls allowed), model ``deepseek/deepseek-chat`` answered by
``deepseek-v4-flash``, step limit 250, cost limit $3; its SWE-bench evaluation is
``logs/run_evaluation/deepseek/deepseek-chat/<instance>/report.json``.

Decisions (why), the mini-swe-agent 1.x converter's where they apply:

* One line per tool call, one turn per reply: v2's model may call ``bash`` several times in
  one reply and every call ran and got its own observation, seen together with the others'
  (v1 ran one command a reply). A reply's calls share its turn (the trace's further calls of a
  turn); the reply's text is the first call's ``thought``.
* A reply without a tool call got mini-swe-agent's format error (a ``user`` message with
  ``extra.interrupt_type == "FormatError"``); v2 does not keep such a reply: a turn without a
  tool call and without ``thought``. Tool-call replies plus format errors must equal
  ``model_stats.api_calls`` unless a crash (empty ``exit_status``) cut the last call off.
* Tool ``bash``, ``{"command": ...}`` as the model called it (``extra.actions``).
* The output is the tool message as the model read it (``<exception>``, ``<returncode>``,
  ``<output>`` tags included); no ``ok``: the pack's classifier reads the tags.
* ``exit_code`` is the stated ``<returncode>``; none when the observation carries an
  ``<exception>`` (timeouts and environment errors: v2 writes -1 there as a placeholder).
* The submission: v2 records the submitting call's observation as "action was not executed"
  and ends with an ``exit`` message holding the patch: that turn's output is the patch, no
  exit code (as in v1). The ``exit`` message is no turn.
* Turn 1's ``user`` is the task (first user message). No ``response``, no header.
* Labels: ``resolved`` from the instance's ``report.json``; sessions without one (not
  submitted: a crash or ``LimitsExceeded``; or submitted and no report written) false.
* Session name: the SWE-bench instance id, read from the environment image
  (``sweb.eval.x86_64.<owner>_1776_<name>``); an empty trajectory file is skipped.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from .mini_swe_agent import TOOL
from .traces import TraceLine, next_turn, read_json, text_of, turn_count, write_labels, write_session

RAW_HELP = "the repository at 09c41a7 (holding results_full/ and logs/run_evaluation/)"
OUT_HELP = "the source folder: the run folder (results_full) is written in it"

RUN = "results_full"
REPORTS = Path("logs/run_evaluation/deepseek/deepseek-chat")
RETURNCODE = re.compile(r"\A(?:<exception>.*?</exception>\n)?<returncode>(-?\d+)</returncode>", re.DOTALL)
EXCEPTION = re.compile(r"\A<exception>")
NOT_EXECUTED = "action was not executed"
IMAGE = re.compile(r"sweb\.eval\.x86_64\.(.+?)_1776_(.+?):latest$")


def session_name(trajectory: dict[str, Any]) -> str:
    """The SWE-bench instance id, from the environment's docker image."""
    image = trajectory["info"]["config"]["environment"]["image"]
    match = IMAGE.search(image)
    if match is None:
        raise ValueError(f"no instance id in image {image!r}")
    return f"{match.group(1)}__{match.group(2)}"


def convert_trajectory(trajectory: dict[str, Any]) -> list[TraceLine]:
    """The turns of one trajectory; a ``ValueError`` for a message mini-swe-agent would not write."""
    info = trajectory["info"]
    messages = trajectory["messages"]
    users = [m for m in messages if m["role"] == "user"]
    task = text_of(users[0]["content"])
    observations = {m["tool_call_id"]: m for m in messages if m["role"] == "tool"}
    exit_message = messages[-1] if messages[-1]["role"] == "exit" else None
    turns: list[TraceLine] = []
    calls = 0

    def new_turn(further: bool = False) -> TraceLine:
        """The next turn's line (``further``: the next call of the turn before)."""
        turn: TraceLine = {"turn": next_turn(turns, further)}
        if not turns:
            turn["user"] = task
        return turn

    for message in messages:
        role = message["role"]
        if role == "user" and message is not users[0]:
            if (message.get("extra") or {}).get("interrupt_type") != "FormatError":
                raise ValueError(f"unknown user message {text_of(message['content'])[:80]!r}")
            calls += 1
            turns.append(new_turn())  # a reply mini-swe-agent refused: nothing ran
            continue
        if role != "assistant":
            continue
        calls += 1
        actions = (message.get("extra") or {}).get("actions") or []
        tool_calls = message.get("tool_calls") or []
        if not actions or len(actions) != len(tool_calls):
            raise ValueError(f"reply with {len(tool_calls)} tool calls and {len(actions)} actions")
        thought = text_of(message.get("content")).strip()
        for k, action in enumerate(actions):
            turn = new_turn(further=k > 0)
            turn["tool"] = TOOL
            turn["args"] = {"command": action["command"]}
            observation = observations.get(action["tool_call_id"])
            if observation is not None:
                output = text_of(observation["content"])
                if (observation.get("extra") or {}).get("exception_info") == NOT_EXECUTED and exit_message is not None:
                    turn["output"] = text_of(exit_message["content"])  # the submission: the patch recorded
                else:
                    turn["output"] = output
                    code = RETURNCODE.match(output)
                    if code is None:
                        raise ValueError(f"unknown observation {output[:80]!r}")
                    if not EXCEPTION.match(output):
                        turn["exit_code"] = int(code.group(1))
            elif info.get("exit_status"):
                raise ValueError("a call without observation in a finished run")
            if k == 0 and thought:
                turn["thought"] = thought
            turns.append(turn)
    api_calls = (info.get("model_stats") or {}).get("api_calls")
    if api_calls is not None and api_calls != calls and info.get("exit_status"):
        raise ValueError(f"{calls} model calls read but {api_calls} recorded")
    return turns


def resolved(raw: Path, session: str) -> bool:
    """The instance's SWE-bench ``report.json`` verdict; false without a report."""
    report = raw / REPORTS / session / "report.json"
    return bool(read_json(report)[session]["resolved"]) if report.exists() else False


def run(raw: Path, out: Path) -> None:
    """Write the run folder in the source folder, with its labels."""
    trajectories = raw / RUN
    if not trajectories.is_dir():
        raise SystemExit(f"{trajectories} is not a folder")
    folder = out / RUN
    folder.mkdir(parents=True, exist_ok=True)
    labels: dict[str, bool | None] = {}
    total = 0
    for path in sorted(trajectories.glob("instance_*.json"), key=lambda p: int(p.stem.removeprefix("instance_"))):
        text = path.read_text(encoding="utf-8")
        if not text.strip():
            print(f"{path}: empty, skipped", file=sys.stderr)
            continue
        trajectory = json.loads(text)
        try:
            session = session_name(trajectory)
            turns = convert_trajectory(trajectory)
        except ValueError as error:
            raise SystemExit(f"{path}: {error}") from None
        if session in labels:
            raise SystemExit(f"{path}: a second trajectory of {session}")
        write_session(folder / f"{session}.jsonl", turns, sort_keys=True, ascii_only=True)
        labels[session] = resolved(raw, session)
        total += turn_count(turns)
    write_labels(folder, labels)
    print(f"{folder}: {len(labels)} sessions, {total} turns, {sum(bool(v) for v in labels.values())} resolved", file=sys.stderr)
