#!/usr/bin/env python
"""Benchmarks for the LLM-backed supervisors' hooks: what they cost the agent per turn and per task.

``python bench/llm_supervisors.py`` prints one JSON object per line, as ``bench/run.py``
does (``name``, ``value``, ``unit``; ``repeats``/``iterations``/``p95`` on timings).
``--quick`` uses smaller counts. The model is a scripted server on 127.0.0.1, so the
figures are the pack's own cost, not a model's. The script never asserts on a timing.
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
for entry in (str(ROOT), str(Path(__file__).resolve().parent)):
    if entry not in sys.path:
        sys.path.insert(0, entry)

from run import emit, percentile, r, set_home, temp_root  # noqa: E402

from org.a0 import hooks  # noqa: E402
from org.contracts.supervisor_outputs import CodeStyleOutput, DesignOutput, InternaliserOutput  # noqa: E402
from org.kernel.redact import MARK, redact  # noqa: E402
from org.knowledge import directives, selection  # noqa: E402
from org.knowledge.directives import DirectiveQueue  # noqa: E402
from org.llm_supervisors.agent_prompt import SECTIONS_KEY  # noqa: E402
from org.llm_supervisors.runner import runner_for  # noqa: E402
from org.replay import prepare_organization  # noqa: E402
from org.standin.agent import LoopData, Response, StandInAgent  # noqa: E402
from org.standin.model_server import For, Reply, ScriptedServer, Slow  # noqa: E402

DOCUMENT = """---
schema_version: 1
title: Convention {n}
category: conventions
status: established
author: code_style
last_updated_by: code_style
created_at: '2026-01-01T00:00:00Z'
updated_at: '2026-01-01T00:00:00Z'
---
# Convention {n}

## Rules

1. Rule one of convention {n}: do this, never that.
2. Rule two of convention {n}: name things for what they hold.
"""


def time_calls(call: Callable[[], Any], iterations: int, repeats: int) -> dict[str, Any]:
    """Median over repeats of the mean µs per call, and the p95 over repeat means."""
    for _ in range(min(iterations, 200)):
        call()
    means = []
    for _ in range(repeats):
        started = time.perf_counter_ns()
        for _ in range(iterations):
            call()
        means.append((time.perf_counter_ns() - started) / iterations / 1000)
    return {"value": r(statistics.median(means)), "p95_of_repeats": r(percentile(means, 95)),
            "repeats": repeats, "iterations": iterations}


def store_with(home: Path, documents: int, directives: int) -> None:
    prepare_organization(home, None)  # the supervisors work for an active organization
    folder = home / "knowledge" / "conventions"
    folder.mkdir(parents=True, exist_ok=True)
    for n in range(documents):
        (folder / f"convention_{n}.md").write_text(DOCUMENT.format(n=n), encoding="utf-8")
    DirectiveQueue(home / "supervisors" / "directives.json").add(
        [{"type": "cleanup", "source": "code_style", "description": f"Clean up module {n}"} for n in range(directives)])


def write_config(home: Path, base_url: str, budget: float = 120.0) -> None:
    prepare_organization(home, None)  # the supervisors work for an active organization
    (home / "supervisors.yaml").write_text(
        f"model: {{base_url: '{base_url}', model: bench, api_key_env: null, backoff_seconds: 0.01}}\n"
        f"supervisors:\n  code_style: {{every_tasks: 1, time_budget_seconds: {budget}}}\n"
        "  design: {enabled: false}\n  internaliser: {enabled: false}\n", encoding="utf-8")


def bench_prompt_hook(base: Path, quick: bool) -> Callable[[], None]:
    """The prompt hook's cost; returns the first-turn call (on a store of 20 documents and 10 directives)."""
    iterations, repeats = (500, 5) if quick else (5_000, 11)
    agent, loop_data = StandInAgent(), LoopData()
    home = base / "none"
    home.mkdir()
    set_home(home)
    emit("prompt_hook_without_config", unit="us/turn",
         what="message_loop_prompts_after with no supervisors.yaml: one stat, nothing else",
         **time_calls(lambda: hooks.message_loop_prompts_after(agent, loop_data=loop_data), iterations, repeats))

    home = base / "store"
    home.mkdir()
    set_home(home)
    write_config(home, "http://127.0.0.1:9/v1")
    store_with(home, documents=20, directives=10)

    def first_turn() -> None:
        fresh = LoopData()
        hooks.message_loop_prompts_after(agent, loop_data=fresh)
        assert "org_knowledge" in fresh.extras_temporary and "org_directives" in fresh.extras_temporary

    emit("prompt_hook_first_turn_of_a_task", unit="us/task",
         what="building PROJECT KNOWLEDGE (20 documents) and ACTIVE DIRECTIVES (10) on a task's first turn",
         **time_calls(first_turn, max(20, iterations // 50), repeats))
    hooks.message_loop_prompts_after(agent, loop_data=loop_data)
    assert SECTIONS_KEY in loop_data.params_persistent
    emit("prompt_hook_later_turns", unit="us/turn",
         what="the same sections on later turns of the task (built once a task, then reused)",
         **time_calls(lambda: hooks.message_loop_prompts_after(agent, loop_data=loop_data), iterations, repeats))
    return first_turn


# The redactor before detect-secrets (token shapes, bearer, URL passwords, assignments): the baseline.
_OLD_TOKENS = re.compile("|".join((
    r"\bsk-[A-Za-z0-9_\-]{16,}", r"\bgh[pousr]_[A-Za-z0-9]{20,}", r"\bgithub_pat_[A-Za-z0-9_]{20,}", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
    r"\bxox[abposre]-[A-Za-z0-9\-]{10,}", r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}", r"\bAIza[0-9A-Za-z_\-]{35}",
    r"\bglpat-[A-Za-z0-9_\-]{20,}")))
_OLD_PEM = re.compile(r"-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY( BLOCK)?-----.*?(?:-----END \1PRIVATE KEY( BLOCK)?-----|\Z)", re.DOTALL)
_OLD_BEARER = re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/\-]{16,}=*")
_OLD_URL = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://[^\s:/@]+:)([^\s@/]+)(@)")
_OLD_ASSIGNMENT = re.compile(
    r"(?i)(?<![A-Za-z0-9])([A-Za-z0-9_.\-]*?(?:password|passwd|passphrase|secret|secret[_\-]?key|token|api[_\-]?key|apikey"
    r"|access[_\-]?key|private[_\-]?key|credentials?)[\"']?\s*(?:=|:)\s*)(\"[^\"\n]*\"|'[^'\n]*'|[^\s,;\"'`)\]}]+)")


def old_redact(text: str) -> str:
    if not text:
        return text
    text = _OLD_TOKENS.sub(MARK, _OLD_PEM.sub(MARK, text))
    text = _OLD_URL.sub(lambda m: m.group(1) + MARK + m.group(3), _OLD_BEARER.sub(lambda m: m.group(1) + MARK, text))
    return _OLD_ASSIGNMENT.sub(lambda m: m.group(1) + MARK if len(m.group(2)) >= 3 else m.group(0), text)


def bench_redactor(first_turn: Callable[[], None], quick: bool) -> None:
    """The redactor alone, and the prompt hook's first turn with the old and the new redactor, in the same run."""
    iterations, repeats = (20, 5) if quick else (100, 11)
    code = (ROOT / "org" / "llm_supervisors" / "supervisors.py").read_text(encoding="utf-8")[:9000]
    new = time_calls(lambda: redact(code), iterations, repeats)
    old = time_calls(lambda: old_redact(code), iterations, repeats)
    emit("redact_9kb_of_code", unit="us/call", what="redact() on 9,000 characters of Python (a full FILES section)",
         baseline_old_redactor=old["value"], ratio=r(new["value"] / old["value"]), **new)

    count = max(20, (500 if quick else 5_000) // 50)
    figures = {}
    for label, function in (("old", old_redact), ("new", redact)):
        selection.redact, directives.redact = function, function
        figures[label] = time_calls(first_turn, count, repeats)
    selection.redact, directives.redact = redact, redact
    emit("prompt_hook_first_turn_redactor", unit="us/task",
         what="the prompt hook's first turn of a task (20 documents, 10 directives) with the new redactor; baseline: the old one",
         baseline_old_redactor=figures["old"]["value"], ratio=r(figures["new"]["value"] / figures["old"]["value"]), **figures["new"])


def bench_task_boundaries(base: Path, quick: bool) -> None:
    tasks = 20 if quick else 200
    home = base / "tasks"
    home.mkdir()
    set_home(home)
    with ScriptedServer() as server:
        write_config(home, server.base_url)
        config = (home / "supervisors.yaml").read_text().replace("every_tasks: 1,", "every_tasks: 1000,")
        (home / "supervisors.yaml").write_text(config)
        agent = StandInAgent()
        starts, ends = [], []
        for n in range(tasks):
            loop_data = LoopData(user_message={"user_message": f"task {n}"})
            began = time.perf_counter_ns()
            runner_for(home).task_start(agent, loop_data)
            starts.append((time.perf_counter_ns() - began) / 1e6)
            hooks.tool_execute_after(agent, response=Response(message="done", break_loop=True), tool_name="response")
            began = time.perf_counter_ns()
            hooks.monologue_end(agent, loop_data=loop_data)
            ends.append((time.perf_counter_ns() - began) / 1e6)
        assert runner_for(home).state.load().tasks_completed == tasks, "the tasks were not counted"
    emit("task_start_no_run_in_flight", r(statistics.median(starts)), "ms/task", p95=r(percentile(starts, 95)), iterations=tasks,
         what="monologue_start when no supervisor run is in flight: collect results, start the task's trace")
    emit("task_end_no_run_due", r(statistics.median(ends)), "ms/task", p95=r(percentile(ends, 95)), iterations=tasks,
         what="monologue_end: digest written, counters updated under the lock, queue aged, store noted; no run due")


def bench_wait(base: Path) -> None:
    """The bounded wait at a task's start: a stalled endpoint, and three supervisors due together."""
    home = base / "wait"
    home.mkdir()
    set_home(home)
    wait, slow = 1.0, 5.0
    answer = Reply.valid(CodeStyleOutput, {"summary": "nothing"})
    with ScriptedServer(Slow(slow, answer)) as server:
        write_config(home, server.base_url)
        (home / "supervisors.yaml").write_text((home / "supervisors.yaml").read_text() + f"wait_seconds: {wait}\n")
        agent = StandInAgent()
        runner = runner_for(home)
        runner.task_start(agent, LoopData())
        hooks.tool_execute_after(agent, response=Response(message="ok", break_loop=True), tool_name="response")
        runner.task_end(agent, LoopData())
        waited = runner.wait_for_runs()
    emit("wait_at_task_start_stalled_endpoint", r(waited), "s", wait_seconds=wait, budget=120.0, answer_after=slow,
         what="how long the next task start waited for a run whose answer takes longer than wait_seconds")

    home = base / "wait3"
    home.mkdir()
    set_home(home)
    each = 1.0
    answers = [For(schema.__name__, Slow(each, Reply.valid(schema, data))) for schema, data in (
        (CodeStyleOutput, {"summary": "ok"}), (DesignOutput, {"summary": "ok"}), (InternaliserOutput, {"summary": "ok"}))]
    with ScriptedServer(*answers) as server:
        (home / "supervisors.yaml").write_text(
            f"model: {{base_url: '{server.base_url}', model: bench, api_key_env: null}}\nmilestone_every_tasks: 1\n", encoding="utf-8")
        agent = StandInAgent()
        runner = runner_for(home)
        runner.task_start(agent, LoopData())
        hooks.tool_execute_after(agent, response=Response(message="ok", break_loop=True), tool_name="response")
        runner.task_end(agent, LoopData())
        waited = runner.wait_for_runs()
        applied = [run.supervisor for run in runner.collect() if run.outcome == "applied"]
    emit("wait_for_three_supervisors_due_together", r(waited), "s", answer_after_each=each, applied=len(applied),
         what="a milestone makes all three due at a task's end; they run side by side, so the next start waits about one answer")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller counts: a smoke check")
    parser.add_argument("--tmp", help="scratch folder (default: /dev/shm when there is one)")
    args = parser.parse_args()
    base = temp_root(args.tmp)
    try:
        bench_redactor(bench_prompt_hook(base, args.quick), args.quick)
        bench_task_boundaries(base, args.quick)
        bench_wait(base)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
