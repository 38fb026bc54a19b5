"""What the pack costs a turn inside a real Agent-Zero.

    python bench/real_agent_zero.py --a0-root TREE --a0-python PYTHON [--turns N] [--rounds R]
                                    [--baseline-tree DIR]

TREE is an unpacked Agent-Zero release and PYTHON a Python with its requirements (what
``tests/real_a0/run.sh`` builds, and keeps with ``A0ORG_A0_CACHE``). For each round, a copy
of TREE gets the pack installed from this tree (``install_all.sh --no-library --activate
software_dev``), and one chat runs in it through ``tests/real_a0/harness.py``: a scripted model
sends N different working commands, one a turn, then the answer. Nothing is steered.
``bench/real_a0_timing/sitecustomize.py`` times every call of the pack's hooks in that process.

``bench/run.py`` times the hooks on the stand-in agent, whose model settings, history and log
cost nothing. Here what Agent-Zero does when the pack asks it something is counted too: the
chat model's settings from v0.9.9 on come from the ``_model_config`` plugin, which reads and
parses its files at each call.

Prints one JSON object per line (``name``, ``value``, ``unit``), as ``bench/run.py`` does:

* ``real_a0_turn_us``: the pack's hooks in one turn, all together (the mean over the turns
  after the first two: the first loads the organization and builds the contracts);
* ``real_a0_<hook>_us``: the median call of each hook after the first two turns;
* ``real_a0_model_config_calls_per_turn``: the calls to ``get_chat_model_config`` a turn;
* ``real_a0_first_turn_us``: the first turn.

With ``--baseline-tree DIR`` the same chat runs with DIR's pack (another commit, checked out
beside this one) right after, and ``<figure>_vs_baseline`` gives this tree's figure divided by
that one's. With ``--rounds R`` each tree runs R times, in turns, and the figures are medians.
No figure has a target; the script never asserts on a timing.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TIMING = Path(__file__).resolve().parent / "real_a0_timing"
HARNESS = ROOT / "tests" / "real_a0" / "harness.py"
WARM_UP_TURNS = 2
COMMANDS = ("pwd", "ls /", "echo hello", "date +%Y", "uname -s", "whoami", "ls /etc | head -3", "echo $((2+3))",
            "printf 'a\\nb\\n' | sort", "cat /etc/hostname", "env | grep -c PATH", "python3 -c 'print(6*7)'")
FINAL = {"thoughts": ["Done."], "headline": "Reporting", "tool_name": "response", "tool_args": {"text": "Done."}}


def emit(name: str, value, unit: str, **fields) -> None:
    print(json.dumps({"name": name, "value": value, "unit": unit, **fields}), flush=True)


def script(turns: int) -> list[dict]:
    """``turns`` different working commands, one a turn, then the answer."""
    def command(i: int) -> dict:
        code = COMMANDS[i % len(COMMANDS)] + (f" # {i}" if i >= len(COMMANDS) else "")
        return {"thoughts": [f"step {i + 1}"], "headline": f"step {i + 1}", "tool_name": "code_execution_tool",
                "tool_args": {"runtime": "terminal", "session": 0, "reset": False, "code": code}}
    return [command(i) for i in range(turns)] + [FINAL]


def one_chat(pack: Path, a0_root: Path, a0_python: str, turns: int, scratch: Path) -> dict[str, float]:
    """Install ``pack`` into a copy of the tree, run the chat, and read the timings."""
    tree = scratch / "a0"
    shutil.rmtree(tree, ignore_errors=True)
    shutil.copytree(a0_root, tree, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
    installed = subprocess.run(["bash", str(pack / "install_all.sh"), "--python", a0_python, "--a0-root", str(tree),
                                "--no-library", "--activate", "software_dev"], capture_output=True, text=True, cwd=pack.parent)
    if installed.returncode != 0:
        raise RuntimeError(f"installing {pack} failed: {installed.stdout[-2000:]}{installed.stderr[-2000:]}")
    script_file, timings = scratch / "script.json", scratch / "timings.json"
    script_file.write_text(json.dumps(script(turns)))
    timings.unlink(missing_ok=True)
    env = {**os.environ, "PYTHONPATH": f"{TIMING}{os.pathsep}{pack}", "A0ORG_BENCH_TIMINGS": str(timings)}
    env.pop("A0ORG_HOME", None)  # the pack finds the organizations folder through Agent-Zero
    done = subprocess.run([a0_python, str(HARNESS), "--script", str(script_file), "--message", "Run the steps"],
                          cwd=tree, env=env, capture_output=True, text=True, timeout=900)
    results = [line for line in done.stdout.splitlines() if line.startswith("{")]
    result = json.loads(results[-1]) if results else {}
    if not result.get("ok") or not timings.exists():
        raise RuntimeError(f"the chat in {tree} failed: {result.get('error')} {done.stderr[-2000:]}")
    if any("[SUPERVISOR]" in message.get("content", "") for message in result.get("history", [])):
        raise AssertionError("the working chat was steered: the scenario is not what it claims to be")
    return figures(json.loads(timings.read_text()))


def figures(timings: dict) -> dict[str, float]:
    calls, turns = timings["calls"], timings["turns"]
    counted = [(hook, turn, ns) for hook, turn, ns in calls if WARM_UP_TURNS <= turn < turns]
    measured_turns = max(1, turns - WARM_UP_TURNS)
    out = {"real_a0_turn_us": sum(ns for _, _, ns in counted) / measured_turns / 1000,
           "real_a0_first_turn_us": sum(ns for _, turn, ns in calls if turn == 0) / 1000,
           "real_a0_model_config_calls_per_turn": sum(1 for turn in timings["model_config_calls"]
                                                       if WARM_UP_TURNS <= turn < turns) / measured_turns}
    for hook in sorted({hook for hook, _, _ in counted}):
        out[f"real_a0_{hook}_us"] = statistics.median(ns for h, _, ns in counted if h == hook) / 1000
    return out


def medians(runs: list[dict[str, float]]) -> dict[str, float]:
    return {name: statistics.median(run[name] for run in runs) for name in runs[0] if all(name in run for run in runs)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--a0-root", required=True, type=Path, help="an unpacked Agent-Zero release")
    ap.add_argument("--a0-python", required=True, help="a Python with that release's requirements")
    ap.add_argument("--turns", type=int, default=24, help="working commands in the chat (default 24)")
    ap.add_argument("--rounds", type=int, default=1, help="chats per tree, in turns; the figures are medians")
    ap.add_argument("--baseline-tree", type=Path, help="another checkout of the pack, run right after for ratios")
    args = ap.parse_args(argv)
    trees = [ROOT] + ([args.baseline_tree.resolve()] if args.baseline_tree else [])
    runs: dict[Path, list[dict[str, float]]] = {tree: [] for tree in trees}
    with tempfile.TemporaryDirectory() as scratch:
        for _ in range(args.rounds):
            for tree in trees:
                runs[tree].append(one_chat(tree, args.a0_root.resolve(), args.a0_python, args.turns, Path(scratch)))
    ours = medians(runs[ROOT])
    units = {"real_a0_model_config_calls_per_turn": "calls"}
    for name, value in ours.items():
        emit(name, round(value, 3), units.get(name, "us"), a0_root=str(args.a0_root), turns=args.turns, rounds=args.rounds)
    if args.baseline_tree:
        base = medians(runs[trees[1]])
        for name, value in ours.items():
            if base.get(name):
                emit(f"{name}_vs_baseline", round(value / base[name], 3), "ratio", this=round(value, 3),
                     baseline=round(base[name], 3), baseline_tree=str(trees[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
