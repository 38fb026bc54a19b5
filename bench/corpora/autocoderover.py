"""AutoCodeRover's GPT-4 runs on SWE-bench Lite, from github.com/nus-apr/auto-code-rover.

RAW holds the repository's ``results/acr-*`` folders (commit 3536ac292e30); OUT is the corpus
folder, which receives ``autocoderover-gpt4-lite/<run>/`` (runs 1-3, no validation) and
``autocoderover-gpt4-lite-val/<run>/`` (ACR validating its patches with tests; ``sbfl`` adds
fault localisation). ``results/swe-agent-results`` is not read.

Per task folder (``<run>/<category>/<instance_id>_<date>/``): the last
``conversation_round_N.json`` (the main thread), ``tool_call_layers.json`` (ACR's calls per
round, with ``call_ok``), ``agent_proxy_N.json`` (what ACR's proxy extracted from round N's
reply; its last try is the one used), ``extract_status.json`` and the last
``debug_agent_write_patch_N.json`` (the patch tries), ``problem_statement.txt``.

Decisions (why):

* One line per search call, and one turn per reply: a reply asks for several and ACR runs them
  all, each with its own result, and answers with them together, so the reply's calls share its
  turn (the trace's further calls of a turn). Tool, arguments and ``ok`` are ACR's record; the
  output is the call's part of ACR's collated answer (``Result of <call>:`` up to the next
  call's header).
* A reply from which the proxy reads no valid call ("The search API calls seem not valid")
  ran nothing: a turn without a tool, its ``response`` the raw reply, so identical replies in
  a row fire Agent-Zero's own repeat check as they would there.
* Bug locations are one ``search_bug_locations`` call (ACR v1 has no such tool) with the
  locations the proxy extracted as arguments: failed with ACR's rejection ("The buggy
  locations is not precise") as output, or succeeded with its answer.
* The analysis ACR asks for after each search round decides no call: not a turn.
* Each patch try (up to 3) is a ``write_patch`` turn whose argument is the raw reply (each try
  is another patch, not the same call again); output is ACR's answer; ``ok`` is an applicable
  patch that, when validated, passed ACR's tests.
* ``ok`` is ACR's own verdict throughout; no ``error_type``, no exit code (ACR runs no
  commands), no header. Turn 1's ``user`` is the issue; ``thought`` is the reply a search,
  rejection or bug-location turn came from.
* Labels: resolved when in the run's ``new_eval_results/report.json`` ``resolved`` list, else
  false (every task of the run ran).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any, cast

from .traces import TraceLine, next_turn, read_json, write_labels, write_session

RAW_HELP = "the repository's files (holding results/acr-*)"
OUT_HELP = "the corpus folder: one folder per source is written in it"

SOURCES = {
    "autocoderover-gpt4-lite": ["acr-run-1", "acr-run-2", "acr-run-3"],
    "autocoderover-gpt4-lite-val": ["acr-val-only", "acr-val-sbfl"],
}
INVALID = "The search API calls seem not valid"
NOT_PRECISE = "The buggy locations is not precise"
BUG_CODE = "Here are the code in buggy locations"
ANALYZE = "Let's analyze collected context first"
NEXT_QUESTION = "Based on your analysis, answer below questions"
PATCH_PROMPT = "Write a patch for the issue, based on the retrieved context"
NOT_RESOLVED = "Written an applicable patch, but it did not resolve the issue"


def numbered(folder: Path, stem: str, suffix: str) -> list[Path]:
    """``stem_N.suffix`` files of a folder, by N (not by name: 10 comes after 9)."""
    pattern = re.compile(rf"{re.escape(stem)}_(\d+){re.escape(suffix)}$")
    found = [(int(m.group(1)), p) for p in folder.iterdir() if (m := pattern.match(p.name))]
    return [p for _, p in sorted(found)]


def proxy_answer(folder: Path, round_no: int) -> dict[str, Any]:
    """The JSON ACR's proxy gave for a round's reply (its last try is the one used)."""
    threads = read_json(folder / f"agent_proxy_{round_no}.json")
    try:
        data = json.loads(threads[-1][-1]["content"])
    except (IndexError, KeyError, json.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def split_results(text: str, calls: list[str]) -> list[str]:
    """Each call's part of ACR's collated answer ``Result of <call>:\\n<output>\\n\\n...``."""
    starts = []
    position = 0
    for call in calls:
        header = f"Result of {call}:\n"
        found = text.find(header, position)
        if found < 0:
            raise ValueError(f"no result header for {call!r}")
        starts.append((found, found + len(header)))
        position = found + len(header)
    outputs = []
    for k, (_, body) in enumerate(starts):
        end = starts[k + 1][0] if k + 1 < len(starts) else len(text)
        outputs.append(text[body:end].removesuffix("\n\n"))
    return outputs


def rounds_of(thread: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rounds of the main thread: each selection reply and what ACR answered it with."""
    rounds = []
    i = next(k for k, m in enumerate(thread) if m["role"] == "assistant")
    while i < len(thread):
        reply = thread[i]["content"]
        answer = thread[i + 1]["content"] if i + 1 < len(thread) else None
        if answer is None:
            raise ValueError("a reply without ACR's answer")
        if answer.startswith(INVALID):
            rounds.append({"kind": "invalid", "reply": reply, "answer": answer})
            i += 2
        elif answer.startswith(NOT_PRECISE):
            rounds.append({"kind": "not_precise", "reply": reply, "answer": answer})
            i += 2
        elif answer.startswith(BUG_CODE):
            rounds.append({"kind": "bug_code", "reply": reply, "answer": answer})
            i += 2
        elif answer.startswith("Result of "):
            if not (thread[i + 2]["content"].startswith(ANALYZE) and thread[i + 3]["role"] == "assistant"):
                raise ValueError("search results not followed by the analysis ACR asks for")
            rounds.append({"kind": "search", "reply": reply, "answer": answer})
            i += 4
        else:
            raise ValueError(f"unknown answer: {answer[:80]!r}")
        if i < len(thread) and thread[i]["role"] == "user" and thread[i]["content"].startswith(NEXT_QUESTION):
            i += 1
    return rounds


def patch_tries(folder: Path) -> list[dict[str, Any]]:
    """Each patch try: the raw patch, ACR's answer to it and its extract status."""
    statuses = read_json(folder / "extract_status.json")["extract_status"]
    thread = read_json(folder / f"debug_agent_write_patch_{len(statuses)}.json")
    start = max(k for k, m in enumerate(thread) if m["role"] == "user" and m["content"].startswith(PATCH_PROMPT))
    tail = thread[start + 1:]
    pairs = [(tail[k]["content"], tail[k + 1]["content"]) for k in range(0, len(tail) - 1, 2)]
    if len(pairs) != len(statuses) or any(tail[k]["role"] != "assistant" for k in range(0, len(tail), 2)):
        raise ValueError(f"{len(pairs)} patch replies answered for {len(statuses)} extract statuses")
    return [{"patch": patch, "answer": answer, "status": status} for (patch, answer), status in zip(pairs, statuses)]


def convert_task(folder: Path) -> list[TraceLine]:
    """One task's turns: the rounds of searches, then the patch tries."""
    thread = read_json(numbered(folder, "conversation_round", ".json")[-1])
    layers = read_json(folder / "tool_call_layers.json")
    rounds = rounds_of(thread)
    if len(layers) != len(rounds) + 1:
        raise ValueError(f"{len(layers)} call layers for {len(rounds)} rounds")
    problem = (folder / "problem_statement.txt").read_text(encoding="utf-8")
    turns: list[TraceLine] = []

    def add(further: bool = False, **fields: Any) -> None:
        """The next turn (``further``: the next call of the turn before), its fields that are not
        None; the first carries the problem statement."""
        turn = {"turn": next_turn(turns, further), "user": None if turns else problem, **fields}
        turns.append(cast(TraceLine, {k: v for k, v in turn.items() if v is not None}))

    for round_no, (item, layer) in enumerate(zip(rounds, layers)):
        if item["kind"] == "invalid":
            add(response=item["reply"], thought=item["reply"])
        elif item["kind"] == "search":
            outputs = split_results(item["answer"], proxy_answer(folder, round_no).get("API_calls", []))
            if len(outputs) != len(layer):
                raise ValueError(f"round {round_no}: {len(outputs)} results for {len(layer)} calls")
            for n, (call, output) in enumerate(zip(layer, outputs)):
                add(further=n > 0, tool=call["func_name"], args=call["arguments"], output=output, ok=bool(call["call_ok"]),
                    thought=None if n else item["reply"])
        else:
            locations = proxy_answer(folder, round_no).get("bug_locations", [])
            add(tool="search_bug_locations", args={"bug_locations": locations}, output=item["answer"],
                ok=item["kind"] == "bug_code", thought=item["reply"])
    for attempt in patch_tries(folder):
        ok = attempt["status"] == "APPLICABLE_PATCH" and not attempt["answer"].startswith(NOT_RESOLVED)
        add(tool="write_patch", args={"patch": attempt["patch"]}, output=attempt["answer"], ok=ok)
    return turns


def task_folders(run_dir: Path) -> dict[str, Path]:
    """instance_id -> its folder, over the run's result categories."""
    found: dict[str, Path] = {}
    for category in sorted(p for p in run_dir.iterdir() if p.is_dir() and not p.name.endswith("eval_results")):
        for folder in sorted(p for p in category.iterdir() if p.is_dir()):
            instance = read_json(folder / "meta.json")["task_id"]
            if instance in found:
                raise ValueError(f"{instance} twice in {run_dir}")
            found[instance] = folder
    return found


def run(raw: Path, out: Path) -> None:
    """Write both sources, one run folder per ACR run, with the run's labels."""
    for source, runs in SOURCES.items():
        for run_name in runs:
            run_dir = raw / "results" / run_name
            resolved = set(read_json(run_dir / "new_eval_results" / "report.json")["resolved"])
            target = out / source / run_name
            target.mkdir(parents=True, exist_ok=True)
            labels: dict[str, bool | None] = {}
            for instance, folder in sorted(task_folders(run_dir).items()):
                write_session(target / f"{instance}.jsonl", convert_task(folder), sort_keys=True)
                labels[instance] = instance in resolved
            write_labels(target, labels)
            print(f"{source}/{run_name}: {len(labels)} sessions, {sum(bool(v) for v in labels.values())} resolved", file=sys.stderr)
