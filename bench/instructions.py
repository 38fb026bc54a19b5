#!/usr/bin/env python
"""Instructions per hook turn, counted by valgrind: a figure that does not drift with the machine.

``python bench/instructions.py`` prints one JSON object per line, like ``bench/run.py``:
``active_hook_turn_instructions`` (the troubled agent of ``bench/run.py``, every detector
firing and steering every turn) and ``active_hook_turn_quiet_instructions`` (the quiet agent).
``--baseline-tree DIR`` counts another commit's tree the same way and adds ``<figure>_vs_baseline``
(this tree / that tree). On a shared virtual machine the µs figures of ``bench/run.py`` varied by
half from one run to the next; these counts repeat to a few instructions.

How: for each tree and scenario, the scenario is set up with that tree's own ``bench/run.py``
helpers and code, then run for ``--turns`` turns and for 4 times as many, each in a process of
its own under ``valgrind --tool=callgrind`` (``PYTHONHASHSEED=0``); the difference of the two
totals, divided by the difference in turns, is the instructions of one turn (setup and imports
cancel out). Counts are the interpreter's machine instructions: a turn's Python, pydantic's
Rust, the regular expressions and the system calls' user-space side, not the time a system call
or a cache miss costs. Two counts run at a time. Needs valgrind; without it the script says so
and exits 0. What each scenario is: bench/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = {"active_hook_turn_instructions": "troubled", "active_hook_turn_quiet_instructions": "quiet"}
WARM_UP_TURNS = 100


def emit(name: str, value, unit: str, **fields) -> None:
    print(json.dumps({"name": name, "value": value, "unit": unit, **fields}), flush=True)


def child(tree: Path, scenario: str, turns: int) -> None:
    """Set up ``scenario`` with ``tree``'s own bench helpers, then run ``turns`` hook turns after the warm-up."""
    sys.path[:0] = [str(tree), str(tree / "bench")]
    import run as bench  # the tree's own bench/run.py, found on the path set above

    from org.contracts import TraceHeader
    from org.replay import prepare_organization

    scratch = Path(tempfile.mkdtemp(dir="/dev/shm" if os.path.isdir("/dev/shm") else None))
    try:
        home = scratch / "organization"
        home.mkdir()
        bench.set_home(home)
        doctrine = {"radio_check_interval_turns": 1}
        try:  # no pause: a paused chat would stop being checked (a tree older than the pause has no such field)
            prepare_organization(home, TraceHeader(kind="header", role="codegen", doctrine={
                **doctrine, "escalation": {"pause": False, "pause_after_emergency": False}}))
        except Exception:
            prepare_organization(home, TraceHeader(kind="header", role="codegen", doctrine=doctrine))
        hook = bench.load_point([bench.extensions_dir()], bench.POINT, bench.ERA)
        agent = bench.new_agent()
        plugin = getattr(bench, "model_config_plugin", None)
        with plugin(agent.ctx_length) if plugin is not None else nullcontext():
            (bench.fill_troubled_agent if scenario == "troubled" else bench.fill_quiet_agent)(agent)
            # what the tree's bench/run.py does to the plan each turn of the scenario (older trees: nothing)
            plan = getattr(bench, "plan_read_afresh" if scenario == "troubled" else "plan_moving", None)
            asyncio.run(_turns(bench, hook, agent, WARM_UP_TURNS + turns, plan))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


async def _turns(bench, hook, agent, turns: int, plan) -> None:
    loop_data = agent.loop_data
    for i in range(turns):
        loop_data.last_response = bench.RESPONSES[i & 1]  # a new response each turn, as bench/run.py does
        if plan is not None:
            plan(agent, i)
        await bench.call_point(hook, bench.ERA, agent, loop_data=loop_data)
        if i % 100 == 0:  # Agent-Zero's own history and UI log are not the pack's to bound
            agent.history.clear()
            agent.context.log.items.clear()


def callgrind_total(out_file: Path) -> int:
    """The instructions callgrind counted in the whole run (its ``summary:`` line)."""
    for line in out_file.read_text(encoding="utf-8", errors="replace").splitlines():
        if line.startswith(("summary:", "totals:")):
            return int(line.split()[1])
    raise ValueError(f"{out_file}: no summary line")


def count(which: str, tree: Path, scenario: str, turns: int, scratch: Path) -> int:
    """Instructions of ``turns`` hook turns of ``scenario`` (plus setup and warm-up) in ``tree``."""
    out_file = scratch / f"callgrind.{which}.{scenario}.{turns}"
    env = dict(os.environ, PYTHONHASHSEED="0", PYTHONPATH=os.pathsep.join([str(tree), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    done = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}", sys.executable, __file__,
                           "--child", str(tree), scenario, str(turns)], cwd=scratch, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{tree}: {scenario} with {turns} turns exited {done.returncode}: {done.stderr[-1500:]}")
    return callgrind_total(out_file)


def per_turn(which: str, tree: Path, scenario: str, turns: int, scratch: Path, pool: ThreadPoolExecutor) -> int:
    short, long = pool.map(lambda n: count(which, tree, scenario, n, scratch), (turns, 4 * turns))
    return round((long - short) / (3 * turns))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline-tree", type=Path, help="another commit's tree (e.g. a git worktree), counted the same way")
    parser.add_argument("--turns", type=int, default=100, help="turns of the shorter run (the longer runs 4 times as many)")
    parser.add_argument("--child", nargs=3, metavar=("TREE", "SCENARIO", "TURNS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(Path(args.child[0]), args.child[1], int(args.child[2]))
        return 0
    if shutil.which("valgrind") is None:
        emit("instructions_skipped", 1, "", reason="valgrind is not installed (Debian: apt-get install valgrind)")
        return 0
    trees = [("this", ROOT)] + ([("baseline", args.baseline_tree.resolve())] if args.baseline_tree else [])
    with tempfile.TemporaryDirectory() as scratch, ThreadPoolExecutor(max_workers=2) as pool:
        for name, scenario in SCENARIOS.items():
            figures = {which: per_turn(which, tree, scenario, max(1, args.turns), Path(scratch), pool) for which, tree in trees}
            emit(name, figures["this"], "instructions", tree=str(ROOT), turns=args.turns)
            if "baseline" in figures:
                emit(f"{name}_vs_baseline", round(figures["this"] / figures["baseline"], 3), "ratio",
                     this=figures["this"], baseline=figures["baseline"], baseline_tree=str(args.baseline_tree.resolve()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
