"""mini-swe-agent 1.x runs recorded step by step, from github.com/amanmehta-maniac/agent-consistency.

RAW is the repository's ``swe-bench/`` folder at 3e7f58d37abbb7250c479f9eddcdf22fc3921c54;
OUT is the corpus folder, which receives ``<source>/run<N>/<instance>.jsonl`` and
``<source>/run<N>/labels.json``. ``runner.py`` there runs mini-swe-agent's ``DefaultAgent``
(submodule at 6f779e2b, 1.17.3+28) through a subclass, ``TrackedAgent``, that records every
step, with the stock ``config/extra/swebench.yaml`` prompts, step limit 250, a 30 s command
timeout, temperature 0.5; the authors changed only the format-error message and the cost
limit. The same 10 SWE-bench Verified astropy instances, 5 runs each, per model:

* ``mini-claude-sonnet-4.5-astropy``: ``results_claude_10/``, reports ``claude.claude-local-run{1..5}.json``;
* ``mini-llama-3.1-70b-astropy``: ``results_llama_10/``, reports ``llama.llama-local-run{1..5}.json``.

Each ``results_*/<instance>.json`` holds its 5 runs (``run_id`` ``<instance>_run_0N``); a run's
``steps`` are TrackedAgent's records: ``thought``, ``action`` (the parsed command),
``observation`` (the command's raw output), ``returncode``, ``raw_response`` (the reply).

Decisions (why), the mini-swe-agent 1.x converter's where they apply:

* One turn per recorded step (one command a reply): tool ``bash``, ``{"command": action}``.
* The output is the observation as the model read it: TrackedAgent kept the raw output and
  return code, and the model was given the config's ``action_observation_template`` rendered
  on them, which is rendered again here (``<returncode>``, then ``<output>``, or from 10,000
  characters the ``<warning>``/``<output_head>``/``<elided_chars>``/``<output_tail>`` form).
  No ``ok``: the pack's classifier reads the tags. ``exit_code`` is the step's ``returncode``.
* ``thought`` is the reply's text before its command block, ``THOUGHT:`` removed.
* A step with ``action`` ``[ERROR]`` kept the message the model was sent, not its reply: a
  format error is a turn without a tool call and without ``thought`` (the reply is lost); a
  timeout is tool ``bash`` with the command its message quotes, the message as output and no
  exit code.
* The submitting reply is not recorded (``Submitted`` is raised before TrackedAgent records
  the step): no turn. Every run ended ``Submitted`` with one model call more than its steps
  (checked).
* Turn 1's ``user`` is the task as the run recorded it (the issue text). No ``response``, no header.
* Labels: ``resolved`` when in the run's harness report ``resolved_ids``, else false.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

from .mini_swe_agent import TOOL, thought_of
from .traces import TraceLine, read_json, write_labels, write_session

RAW_HELP = "the repository's swe-bench/ folder at 3e7f58d (holding results_*_10/ and the harness reports)"
OUT_HELP = "the corpus folder: one folder per source is written in it"

SOURCES = {
    "mini-claude-sonnet-4.5-astropy": ("results_claude_10", "claude.claude-local-run{n}.json"),
    "mini-llama-3.1-70b-astropy": ("results_llama_10", "llama.llama-local-run{n}.json"),
}
#: the timeout's message quotes the command that ran out of time
TIMEOUT = re.compile(r"\AThe last command <command>(.*?)</command> timed out and has been killed\.", re.DOTALL)
#: the authors' own format-error message
FORMAT_ERROR = re.compile(r"\AFORMAT ERROR: You provided \d+ actions instead of exactly ONE\.")
RUN_ID = re.compile(r"\A(?P<instance>.+)_run_(?P<n>\d+)\Z")
#: mini-swe-agent 1.17.3's stock template, for an output of 10,000 characters or more
LONG_OUTPUT_WARNING = (
    "<warning>\n"
    "The output of your last command was too long.\n"
    "Please try a different command that produces less output.\n"
    "If you're looking at a file you can try use head, tail or sed to view a smaller number of lines selectively.\n"
    "If you're using grep or find and it produced too much output, you can use a more selective search pattern.\n"
    "If you really need to see something from the full command's output, you can redirect output to a file and then search in that file.\n"
    "</warning>"
)


def observation(returncode: int, output: str) -> str:
    """The observation as the stock ``action_observation_template`` renders it."""
    head = f"<returncode>{returncode}</returncode>\n"
    if len(output) < 10000:
        return f"{head}<output>\n{output}</output>"
    return (f"{head}{LONG_OUTPUT_WARNING}<output_head>\n{output[:5000]}\n</output_head>\n"
            f"<elided_chars>\n{len(output) - 10000} characters elided\n</elided_chars>\n"
            f"<output_tail>\n{output[-5000:]}\n</output_tail>")


def convert_run(run: dict[str, Any]) -> list[TraceLine]:
    """The turns of one run; a ``ValueError`` for a step TrackedAgent would not record."""
    turns: list[TraceLine] = []
    for step in run["steps"]:
        turn: TraceLine = {"turn": len(turns) + 1}
        if not turns:
            turn["user"] = run["task"]
        action = step["action"]
        if action == "[ERROR]":
            message = step["observation"]
            timeout = TIMEOUT.match(message)
            if timeout is not None:
                turn.update(tool=TOOL, args={"command": timeout.group(1)}, output=message)
            elif FORMAT_ERROR.match(message) is None:
                raise ValueError(f"step {step['step_number']}: unknown error {message[:80]!r}")
        elif action.startswith("["):
            raise ValueError(f"step {step['step_number']}: pseudo-action {action[:40]!r}")
        else:
            turn.update(tool=TOOL, args={"command": action}, output=observation(step["returncode"], step["observation"]),
                        exit_code=step["returncode"], thought=thought_of(step["raw_response"]))
        turns.append(turn)
    if run["exit_status"] != "Submitted":
        raise ValueError(f"exit status {run['exit_status']!r}")
    if run["n_calls"] != len(turns) + 1:
        raise ValueError(f"{len(turns)} steps but {run['n_calls']} model calls")
    return turns


def convert_source(raw: Path, out: Path, folder: str, report: str) -> tuple[int, int, int]:
    """Write one source's run folders; returns (sessions, turns, resolved)."""
    runs: dict[int, dict[str, list[TraceLine]]] = {}
    for path in sorted((raw / folder).glob("*.json")):
        results = read_json(path)
        for one in results["runs"]:
            match = RUN_ID.match(one["run_id"])
            if match is None or match["instance"] != results["task_id"]:
                raise SystemExit(f"{path}: unexpected run id {one['run_id']!r}")
            try:
                runs.setdefault(int(match["n"]), {})[match["instance"]] = convert_run(one)
            except ValueError as error:
                raise SystemExit(f"{path}: {one['run_id']}: {error}") from None
    sessions = total_turns = total_resolved = 0
    for n in sorted(runs):
        resolved = set(read_json(raw / report.format(n=n))["resolved_ids"])
        unknown = resolved - set(runs[n])
        if unknown:
            raise SystemExit(f"run{n}: resolved instances without a run: {sorted(unknown)}")
        run_dir = out / f"run{n}"
        run_dir.mkdir(parents=True, exist_ok=True)
        for instance, turns in sorted(runs[n].items()):
            write_session(run_dir / f"{instance}.jsonl", turns, sort_keys=True)
            total_turns += len(turns)
        write_labels(run_dir, {instance: instance in resolved for instance in sorted(runs[n])})
        sessions += len(runs[n])
        total_resolved += len(resolved)
    return sessions, total_turns, total_resolved


def run(raw: Path, out: Path) -> None:
    """Write both sources."""
    if not raw.is_dir():
        raise SystemExit(f"{raw} is not a folder")
    for source, (folder, report) in sorted(SOURCES.items()):
        sessions, turns, resolved = convert_source(raw, out / source, folder, report)
        print(f"{source}: {sessions} sessions, {turns} turns, {resolved} resolved", file=sys.stderr)
