"""mini-swe-agent trajectories (``*.traj.json``) on SWE-bench Verified, from github.com/wudi-alex/mini-swe-agent-CaM.

RAW is the repository at fae95e425f7ab1e3cfbb3eea3f784515fdcc208f (it holds ``run_results/``);
OUT receives one folder per source, one run folder each (``SOURCES``). Only the plain
baselines are read (stock mini-swe-agent 1.17.3 and its SWE-bench prompts); the "CaM" and
prompt variants are not.

Decisions (why):

* One turn per model reply: mini-swe-agent runs at most one command a reply. The turn count
  must equal ``model_stats.api_calls``.
* The command is what mini-swe-agent ran: the trajectory's own ``action_regex``, taken when
  it matches exactly once (its ``parse_action``), as tool ``bash`` with ``{"command"}``.
* A reply without exactly one command block got mini-swe-agent's format error and ran
  nothing: a turn with no tool call, as an unreadable reply is in Agent-Zero.
* No ``response``: the replay makes one, so Agent-Zero's repeat check does not fire on
  replies mini-swe-agent did not refuse.
* The output is the observation as the model saw it, ``<returncode>`` and ``<output>`` tags
  included: the pack's classifier reads the tag itself, so no ``ok``.
* ``exit_code`` is the stated ``<returncode>``; none for a timeout, for the submission (its
  output is the patch mini-swe-agent recorded) and for a last command whose observation a
  crash cut off (no output either).
* ``LimitsExceeded``'s empty closing message answers no reply: not a turn.
* ``thought`` is the text before the first fence, ``THOUGHT:`` removed.
* The task (first user message) is turn 1's ``user``; no header (the default role).
* Labels: resolved when in the run's sb-cli report ``resolved_ids``, else false.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

from .traces import TraceLine, read_json, text_of, write_labels, write_session

RAW_HELP = "the repository at fae95e4 (holding run_results/)"
OUT_HELP = "the corpus folder: one folder per source is written in it"

#: source name -> the run folders under run_results/ that make it
SOURCES: dict[str, tuple[str, ...]] = {
    "mini-gpt-5-swebench": ("gpt5-output",),
    "mini-gpt-5-mini-swebench": ("mini-output",),
    "mini-gpt-5-mini-effort-swebench": (
        "mini-reasoning-minimal-res-api",
        "mini-reasoning-low-res-api",
        "mini-reasoning-medium-res-api",
        "mini-reasoning-high-res-api",
    ),
    "mini-gpt-5-nano-swebench": ("nano-output",),
}

TOOL = "bash"
#: mini-swe-agent 1.17.3's default; each trajectory's own config is used when it has one
DEFAULT_ACTION_REGEX = r"```bash\s*\n(.*?)\n```"
RETURNCODE = re.compile(r"\A<returncode>(-?\d+)</returncode>")
TIMEOUT = re.compile(r"\AThe last command <command>.*?</command> timed out and has been killed\.", re.DOTALL)
FORMAT_ERROR = re.compile(r"\APlease always provide EXACTLY ONE action in triple backticks, found \d+ actions\.")
THOUGHT_PREFIX = re.compile(r"\A\s*THOUGHT:\s*", re.IGNORECASE)


def add_options(parser: argparse.ArgumentParser) -> None:
    """Some of the sources only (the effort source alone is four runs)."""
    parser.add_argument("--source", dest="sources", action="append", choices=sorted(SOURCES),
                        help="only these sources (default: all four)")


def thought_of(reply: str) -> str:
    """The reasoning before the command block."""
    head = reply.split("```", 1)[0]
    return THOUGHT_PREFIX.sub("", head).strip()


def convert_trajectory(trajectory: dict[str, Any]) -> list[TraceLine]:
    """The turns of one trajectory; a ``ValueError`` for an observation mini-swe-agent would not give."""
    info = trajectory.get("info") or {}
    agent_config = (info.get("config") or {}).get("agent") or {}
    action_regex = re.compile(agent_config.get("action_regex") or DEFAULT_ACTION_REGEX, re.DOTALL)
    messages = trajectory["messages"]
    task = next((text_of(m["content"]) for m in messages if m["role"] == "user"), None)
    turns: list[TraceLine] = []
    for index, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        reply = text_of(message["content"])
        following = messages[index + 1] if index + 1 < len(messages) else None
        observation = text_of(following["content"]) if following is not None and following["role"] == "user" else None
        turn: TraceLine = {"turn": len(turns) + 1}
        if not turns and task is not None:
            turn["user"] = task
        actions = action_regex.findall(reply)
        refused = observation is not None and FORMAT_ERROR.match(observation) is not None
        if len(actions) == 1 and not refused:
            turn["tool"] = TOOL
            turn["args"] = {"command": actions[0].strip()}
            if observation is not None:
                turn["output"] = observation
                code = RETURNCODE.match(observation)
                if code is not None:
                    turn["exit_code"] = int(code.group(1))
                elif not TIMEOUT.match(observation) and not (following is messages[-1] and info.get("exit_status") == "Submitted"):
                    raise ValueError(f"turn {turn['turn']}: unknown observation {observation[:80]!r}")
        elif observation is not None and not refused:
            raise ValueError(f"turn {turn['turn']}: {len(actions)} actions but no format error: {observation[:80]!r}")
        turn["thought"] = thought_of(reply)
        turns.append(turn)
    calls = (info.get("model_stats") or {}).get("api_calls")
    if calls is not None and calls != len(turns):
        raise ValueError(f"{len(turns)} replies but {calls} model calls")
    return turns


def resolved_ids(run_dir: Path) -> set[str]:
    """The instances the run's sb-cli report (``*_eval.json``) names resolved."""
    reports = sorted(run_dir.glob("*_eval.json"))
    if len(reports) != 1:
        raise SystemExit(f"{run_dir}: expected one sb-cli report (*_eval.json), found {len(reports)}")
    return set(read_json(reports[0])["resolved_ids"])


def convert_run(run_dir: Path, out_dir: Path) -> tuple[int, int, int]:
    """Write one run's traces and labels; returns (sessions, turns, resolved)."""
    resolved = resolved_ids(run_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    labels: dict[str, bool | None] = {}
    total_turns = 0
    for path in sorted(run_dir.glob("*/*.traj.json")):
        trajectory = read_json(path)
        session = trajectory.get("instance_id") or path.name.removesuffix(".traj.json")
        try:
            turns = convert_trajectory(trajectory)
        except ValueError as error:
            raise SystemExit(f"{path}: {error}") from None
        write_session(out_dir / f"{session}.jsonl", turns, sort_keys=True)
        labels[session] = session in resolved
        total_turns += len(turns)
    unknown = resolved - set(labels)
    if unknown:
        raise SystemExit(f"{run_dir}: resolved instances without a trajectory: {sorted(unknown)}")
    write_labels(out_dir, labels)
    return len(labels), total_turns, sum(bool(v) for v in labels.values())


def run(raw: Path, out: Path, sources: list[str] | None = None) -> None:
    """Write each source's run folders."""
    results = raw / "run_results"
    if not results.is_dir():
        raise SystemExit(f"{results} is not a folder")
    for source in sources or sorted(SOURCES):
        sessions = turns = resolved = 0
        for run_name in SOURCES[source]:
            s, t, r = convert_run(results / run_name, out / source / run_name)
            sessions, turns, resolved = sessions + s, turns + t, resolved + r
        print(f"{source}: {sessions} sessions, {turns} turns, {resolved} resolved", file=sys.stderr)
