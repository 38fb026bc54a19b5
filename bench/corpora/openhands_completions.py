"""An OpenHands CodeActAgent run read from its LLM-call logs (``llm_completions/``): GLM-4.6 on SWE-bench Lite, from github.com/ergt10/openhands_swebench.

RAW holds ``RUN_DIR`` at its repository path (commit 3f8ba937f9e1; later commits deleted it);
OUT is the source folder, which receives ``glm-4.6-fp8-maxiter135/<instance_id>.jsonl`` and
``labels.json``. Each log file is one model call: ``fncall_messages`` (the conversation sent)
and ``fncall_response`` (the reply with its tool call). The repository holds no evaluation of
the run, so every label is null.

Decisions (why):

* One turn per logged model call, in the order of the time in the file name: each reply holds
  at most one tool call. Its output is what the next call's conversation added after the
  reply: the ``tool`` message as the model read it, or, for a call OpenHands refused after
  logging it, the error the model was shown.
* Tool and arguments are the model's function call as sent (``security_risk`` included).
* Calls OpenHands refused before logging them (``... [Error occurred in processing last
  action]`` with no logged call before it) are not turns: neither their arguments nor their
  text is recorded, only the refusal, as OpenHands' ``error`` observations in
  ``openhands_examples``. The converter counts them.
* ``finish`` is a turn without output; a last call whose result was never logged has no
  output; a reply without a tool call is a turn without a tool, and the harness's automatic
  "Please continue working on the task ..." is the next turn's ``user``.
* Turn 1's ``user`` is the task; ``exit_code`` for ``execute_bash`` is the last stated exit
  code in the output (-1, "no code", left out); ``thought`` is the reply's text without
  GLM's empty ``<think></think>``. No ``response``: the logged text is OpenHands' conversion
  of the reply, not a raw reply Agent-Zero would save.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from .traces import TraceLine, read_json, text_of, write_labels, write_session

RAW_HELP = "a folder holding the run folder at its repository path"
OUT_HELP = "the source folder: the run folder is written in it"

RUN_DIR = "continuum32/princeton-nlp__SWE-bench_Lite-test/CodeActAgent/GLM-4.6-FP8_maxiter_135"
RUN_NAME = "glm-4.6-fp8-maxiter135"
REFUSED = "[Error occurred in processing last action]"
EXIT_RE = re.compile(r"\[The command completed with exit code (-?\d+)\.\]|\[Command finished with exit code (-?\d+)\]")
THINK_RE = re.compile(r"<think>\s*</think>")


def call_time(path: Path) -> float:
    """The unix time at the end of the file name (``...-1767710386.8368769.json``)."""
    return float(path.stem.rsplit("-", 1)[1])


def exit_code_of(output: str) -> int | None:
    """The last exit code OpenHands stated in a command's output; -1 means it had none."""
    codes = [int(a or b) for a, b in EXIT_RE.findall(output)]
    return codes[-1] if codes and codes[-1] != -1 else None


def refusals(messages: list[dict[str, Any]]) -> int:
    """OpenHands' answers to calls it refused before logging them."""
    return sum(REFUSED in text_of(m.get("content")) for m in messages if m["role"] == "user")


def session_turns(files: list[Path], counts: dict[str, int]) -> list[TraceLine]:
    """One instance's turns; ``counts`` gets its refused calls, logged and not logged."""
    calls = [read_json(f) for f in sorted(files, key=call_time)]
    first = calls[0]["fncall_messages"]
    pending_user: str | None = next(text_of(m.get("content")) for m in first if m["role"] == "user")
    counts["refused_not_logged"] += refusals(first)
    turns: list[TraceLine] = []
    for k, call in enumerate(calls):
        reply = call["fncall_response"]["choices"][0]["message"]
        added = calls[k + 1]["fncall_messages"][len(call["fncall_messages"]):] if k + 1 < len(calls) else None
        turn: TraceLine = {"turn": len(turns) + 1}
        if pending_user is not None:
            turn["user"] = pending_user
            pending_user = None
        tool_calls = reply.get("tool_calls") or []
        if len(tool_calls) > 1:
            raise ValueError(f"{files[0].parent.name}: a reply with {len(tool_calls)} tool calls")
        if tool_calls:
            function = tool_calls[0]["function"]
            turn["tool"] = function["name"]
            turn["args"] = json.loads(function["arguments"] or "{}")
        if added is not None and turn.get("tool") != "finish":
            accepted = bool(added) and added[0]["role"] == "assistant"
            rest = added[1:] if accepted else added
            if tool_calls:
                answer = next((m for m in rest if m["role"] == "tool"), None)
                if answer is None:  # refused after it was logged: the model read the error
                    answer = next(m for m in rest if m["role"] == "user")
                    counts["refused_logged"] += 1
                output = text_of(answer.get("content"))
                turn["output"] = output
                if turn["tool"] == "execute_bash":
                    code = exit_code_of(output)
                    if code is not None:
                        turn["exit_code"] = code
                rest = [m for m in rest if m is not answer]
            else:
                auto = [text_of(m.get("content")) for m in rest if m["role"] == "user" and REFUSED not in text_of(m.get("content"))]
                if auto:
                    pending_user = auto[-1]
            counts["refused_not_logged"] += refusals(rest)
        thought = THINK_RE.sub("", text_of(reply.get("content"))).strip()
        if thought:
            turn["thought"] = thought
        turns.append(turn)
    return turns


def run(raw: Path, out: Path) -> None:
    """Write the run folder; an instance with no logged call is no session."""
    completions = raw / RUN_DIR / "llm_completions"
    folder = out / RUN_NAME
    folder.mkdir(parents=True, exist_ok=True)
    counts = {"refused_not_logged": 0, "refused_logged": 0}
    labels: dict[str, bool | None] = {}
    total = 0
    for instance in sorted(p.name for p in completions.iterdir() if p.is_dir()):
        files = list((completions / instance).glob("*.json"))
        if not files:
            continue
        turns = session_turns(files, counts)
        write_session(folder / f"{instance}.jsonl", turns)
        labels[instance] = None
        total += len(turns)
    write_labels(folder, labels)
    print(f"{RUN_NAME}: {len(labels)} sessions, {total} turns; refused calls: {counts['refused_logged']} "
          f"logged (turns), {counts['refused_not_logged']} not logged (left out)", file=sys.stderr)
