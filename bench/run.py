#!/usr/bin/env python
"""Benchmarks for the organization kernel's per-turn cost and memory.

``python bench/run.py`` prints one JSON object per line: ``name``, ``value``, ``unit``,
``target`` and ``met`` where there is a target, ``baseline``/``ratio`` where a figure is
compared with a baseline measured in the same run, and a few descriptive fields.
``--quick`` runs far fewer iterations (a smoke check of a few seconds). ``--baseline-tree DIR``
then runs ``DIR/bench/run.py`` (another commit's tree, e.g. a ``git worktree``) right after, on
the same machine, and prints each timed figure of both with their ratio: a target in µs holds
on one machine, a ratio to a commit measured beside it holds on any. ``--rounds N`` runs each
tree N times, in turns, and compares their medians.

What each figure means and how it is measured: bench/README.md. The script never
asserts on a timing; it only reports.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import math
import os
import pickle
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from types import FunctionType, ModuleType
from typing import Any, Awaitable, Callable

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from org.a0 import hooks  # noqa: E402
from org.contracts import TraceHeader  # noqa: E402
from org.kernel import salute  # noqa: E402
from org.kernel.classify import REPORTING_TOOLS  # noqa: E402
from org.kernel.dispatcher import ROLE_ATTR  # noqa: E402
from org.kernel.log import forget_logged  # noqa: E402
from org.kernel.outcomes import FAILURE_HISTORY_LIMIT, FAILURES_KEY, LEDGER_KEY, LEDGER_LIMIT, SEEN_LIMIT  # noqa: E402
from org.kernel.paths import ENV_HOME  # noqa: E402
from org.kernel.turn_readings import read_turn  # noqa: E402
from org.replay import prepare_organization  # noqa: E402
from org.resources import extensions_dir  # noqa: E402
from org.standin.agent import LoopData, Response, StandInAgent, Tool  # noqa: E402
from org.standin.loader import call_point, load_point  # noqa: E402
from org.standin.session import model_config_plugin  # noqa: E402
from org.supervisor import microcosm  # noqa: E402
from org.supervisor.radio_check import SupervisorState, is_check_turn, radio_check  # noqa: E402

ERA = "D"
POINT = "message_loop_end"
IDLE_TARGET_US = 2.0
ACTIVE_TARGET_US = 200.0

NOOP_HOOK = '''\
# A no-op message_loop_end extension: the same shape as the pack's hook file, doing nothing.
try:
    from helpers.extension import Extension  # Agent-Zero v0.9.9 and later
except ImportError:
    from python.helpers.extension import Extension  # Agent-Zero up to v0.9.8.x


class NoopLoop(Extension):
    async def execute(self, loop_data=None, **kwargs):
        return None
'''


# --------------------------------------------------------------------------- output


#: the first value printed under each name, for --baseline-tree to compare
EMITTED: dict[str, float] = {}


def emit(name: str, value: Any, unit: str, **fields: Any) -> None:
    record: dict[str, Any] = {"name": name, "value": value, "unit": unit}
    record.update(fields)
    if isinstance(value, (int, float)):
        EMITTED.setdefault(name, value)
    print(json.dumps(record), flush=True)


def r(value: float, digits: int = 3) -> float:
    return round(value, digits)


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def with_target(value: float, target: float) -> dict[str, Any]:
    return {"target": target, "met": value <= target}


# --------------------------------------------------------------------------- set-up


class Config:
    def __init__(self, quick: bool):
        self.quick = quick
        # idle hook: batches of `idle_iterations` calls, timed as a whole
        self.idle_iterations = 2_000 if quick else 20_000
        self.idle_repeats = 5 if quick else 21
        # active hook: every call timed on its own (a call is ~10-200 us, the timer ~0.1 us)
        self.active_iterations = 100 if quick else 1_000
        self.active_repeats = 3 if quick else 9
        self.warmup = 50 if quick else 300
        # memory run
        self.memory_checkpoints = (1_000, 2_000, 3_000, 5_000) if quick else (1_000, 10_000, 50_000, 100_000)
        #: the state's deep size is sampled this often for its peak
        self.memory_sample_every = 250
        #: growth is measured from this checkpoint to the last one
        self.memory_growth_from = self.memory_checkpoints[1]


def temp_root(requested: str | None) -> Path:
    """A scratch folder; tmpfs when there is one, so the dispatcher's fsync-ed SALUTE
    writes do not dominate the 100,000-turn run (they are not what is measured)."""
    if requested:
        base = requested
    elif os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK):
        base = "/dev/shm"
    else:
        base = None
    return Path(tempfile.mkdtemp(prefix="a0org-bench-", dir=base))


def set_home(home: Path) -> None:
    os.environ[ENV_HOME] = str(home)
    forget_logged()


def new_agent() -> StandInAgent:
    return StandInAgent(era=ERA)


NO_VERDICT = object()


def run_tool(agent: StandInAgent, tool: str, args: dict, output: str, error_class: Any = NO_VERDICT) -> None:
    """``tool_execute_after`` as the stand-in session calls it (current_tool set, optional
    error-comprehension verdict on ``agent._error_diagnosis``: ``error_class`` None means
    "no error", a string names the error)."""
    agent.loop_data.current_tool = Tool(name=tool, args=args)
    verdict = error_class is not NO_VERDICT
    if verdict:
        agent._error_diagnosis = {"tool": tool, "error_class": error_class}  # type: ignore[attr-defined]
    try:
        hooks.tool_execute_after(agent, response=Response(message=output, break_loop=tool == "response"), tool_name=tool)
    finally:
        agent.loop_data.current_tool = None
        if verdict:
            del agent._error_diagnosis  # type: ignore[attr-defined]


def dispatch(agent: StandInAgent) -> None:
    agent.loop_data.iteration += 1
    agent.loop_data.params_temporary = {}
    hooks.before_main_llm_call(agent, loop_data=agent.loop_data)


def take_turn(agent: StandInAgent, tool: str, args: dict, output: str, error_class: Any = NO_VERDICT) -> None:
    """One turn of Agent-Zero's loop as the histories record it: the dispatcher, then the reply's one call."""
    dispatch(agent)
    run_tool(agent, tool, args, output, error_class)


# --------------------------------------------------------------------------- 1. idle hook


async def time_batch(classes: list, agent: Any, loop_data: Any, n: int) -> float:
    """Mean ns per call over ``n`` calls of the extension point, as Agent-Zero awaits it."""
    start = time.perf_counter_ns()
    for _ in range(n):
        await call_point(classes, ERA, agent, loop_data=loop_data)
    return (time.perf_counter_ns() - start) / n


async def bench_idle(cfg: Config, scratch: Path) -> None:
    empty_home = scratch / "no-organization"
    empty_home.mkdir()
    set_home(empty_home)

    noop_dir = scratch / "noop-extensions"
    (noop_dir / POINT).mkdir(parents=True)
    (noop_dir / POINT / "_50_noop_loop.py").write_text(NOOP_HOOK, encoding="utf-8")
    real = load_point([extensions_dir()], POINT, ERA)
    noop = load_point([noop_dir], POINT, ERA)
    assert [c.__name__ for c in real] == ["SupervisorLoop"], real
    assert [c.__name__ for c in noop] == ["NoopLoop"], noop

    agent = new_agent()
    dispatch(agent)  # the dispatcher ran and found no organization: nothing set on the agent
    assert getattr(agent, ROLE_ATTR, None) is None
    loop_data = agent.loop_data

    for classes in (noop, real):  # warm-up
        await time_batch(classes, agent, loop_data, cfg.idle_iterations // 4)
    noop_ns: list[float] = []
    real_ns: list[float] = []
    for repeat in range(cfg.idle_repeats):
        # alternate the order so that drift (frequency, other load) hits both alike
        order = ((noop, noop_ns), (real, real_ns)) if repeat % 2 == 0 else ((real, real_ns), (noop, noop_ns))
        for classes, out in order:
            out.append(await time_batch(classes, agent, loop_data, cfg.idle_iterations))
    diffs = [a - b for a, b in zip(real_ns, noop_ns)]

    common = {"repeats": cfg.idle_repeats, "iterations": cfg.idle_iterations}
    noop_us = statistics.median(noop_ns) / 1000
    real_us = statistics.median(real_ns) / 1000
    diff_us = statistics.median(diffs) / 1000
    emit("idle_hook_noop_us", r(noop_us), "us", p95_of_repeats=r(percentile(noop_ns, 95) / 1000), **common,
         what="no-op message_loop_end extension, loaded and awaited like the real one")
    emit("idle_hook_supervisor_us", r(real_us), "us", p95_of_repeats=r(percentile(real_ns, 95) / 1000),
         baseline=r(noop_us), ratio=r(real_us / noop_us, 2), **common,
         what="extensions/message_loop_end/_50_supervisor_loop.py, no organization active")
    emit("idle_hook_overhead_us", r(diff_us), "us", **with_target(diff_us, IDLE_TARGET_US),
         p95_of_repeats=r(percentile(diffs, 95) / 1000), baseline=r(noop_us), supervisor=r(real_us), **common,
         what="supervisor hook minus no-op hook per turn (median of paired repeats)")


# --------------------------------------------------------------------------- 2. active radio check

ERRORS = (
    ("timeout", "TimeoutError: the request timed out after 30s"),
    ("not_found", "cat: /src/app/config.yaml: No such file or directory"),
    ("permission", "bash: /etc/hosts: Permission denied"),
    ("syntax", '  File "main.py", line 3\n    def f(:\nSyntaxError: invalid syntax'),
    ("network", "curl: (7) Failed to connect: Connection refused"),
    ("dependency", "Traceback (most recent call last):\nModuleNotFoundError: No module named 'requests'"),
    ("execution", "Traceback (most recent call last):\n  File \"x.py\", line 9\nValueError: bad value"),
)
TOOLS = ("code_execution_tool", "text_editor", "search_engine", "browser_agent", "knowledge_tool", "call_subordinate")


def fill_troubled_agent(agent: StandInAgent) -> None:
    """Every history full and every detector firing:

    * tool ledger at its bound (LEDGER_LIMIT) with successes, failures of every error type,
      pollers (``wait``) and responses; failure history at its bound (FAILURE_HISTORY_LIMIT);
    * the last five outcomes are failures of three different tools (cascade), the last
      three the very same failure (loop);
    * HTN plan with no progress for 20 turns (stall), BST domain set, context 92% full
      (context critical); the dispatcher then computes PACE emergency (pace).
    """
    rng = random.Random(7)
    dispatch(agent)  # first turn of the task: the dispatcher sets agent._org_active_role
    agent._htn_state = {"plan_name": "add export command", "current_step": "write the CSV writer tests", "turns_since_progress": 20}  # type: ignore[attr-defined]
    agent._bst_store = {"__bst_belief_state__": {"domain": "codegen", "confidence": 0.82}}  # type: ignore[attr-defined]
    agent.data["ctx_window"] = {"text": "", "tokens": int(0.92 * agent.ctx_length)}
    # an edit first: the failures that follow are the agent's own (churn judges only those)
    take_turn(agent, "text_editor", {"op": "write", "path": "/src/export.py", "content": "def export():\n    pass\n"}, "written")
    mixed = LEDGER_LIMIT - FAILURE_HISTORY_LIMIT
    for i in range(mixed):
        kind = i % 6
        if kind in (0, 1):
            take_turn(agent, "code_execution_tool", {"runtime": "python", "code": f"print(compute({i}))"}, f"{rng.random():.12f}\n")
        elif kind == 2:
            _, text = ERRORS[i % len(ERRORS)]
            take_turn(agent, TOOLS[i % len(TOOLS)], {"n": i}, f"[{i}]\n{text}")
        elif kind == 3:
            take_turn(agent, "wait", {"seconds": 5}, "still running")
        elif kind == 4:
            take_turn(agent, "text_editor", {"op": "read", "path": f"/src/m{i}.py"}, "def f():\n    return 1\n" * 20)
        else:
            take_turn(agent, "response", {"text": "progress report"}, "sent")
    # the failure streak, after an edit (so its errors are the agent's, not the baseline): history
    # fills up to its bound, then cascade, churn and loop at the end
    take_turn(agent, "code_execution_tool", {"runtime": "terminal", "code": "sed -i 's/old/new/' /src/app/main.py"}, "")
    streak = FAILURE_HISTORY_LIMIT  # (looks that find nothing are no step of a streak: more attempts than the bound)
    for i in range(streak):
        _, text = ERRORS[i % len(ERRORS)]
        tool = TOOLS[i % 4]
        # a search or a browser fails in a line of its own (more than that is what it found)
        take_turn(agent, tool, {"attempt": i}, text.splitlines()[-1] if tool in REPORTING_TOOLS else f"attempt {i}:\n{text}")
    broken = "Traceback (most recent call last):\nImportError: cannot import name 'Writer' from 'app.export'"
    take_turn(agent, "code_execution_tool", {"runtime": "terminal", "code": "python -m app"}, broken)
    take_turn(agent, "search_engine", {"query": "csv writer"}, "Connection refused")
    take_turn(agent, "browser_agent", {"url": "http://docs"}, "Temporary failure in name resolution")
    for _ in range(3):
        take_turn(agent, "code_execution_tool", {"runtime": "terminal", "code": "python /src/app/main.py"}, broken)
    dispatch(agent)  # the dispatcher sees the full histories and sets PACE
    ledger = agent.data[LEDGER_KEY]
    assert len(ledger.outcomes) == LEDGER_LIMIT, len(ledger.outcomes)
    assert len(agent.data[FAILURES_KEY]["history"]) == FAILURE_HISTORY_LIMIT


def fill_quiet_agent(agent: StandInAgent) -> None:
    """Organization active, histories full of healthy work, nothing to report."""
    rng = random.Random(11)
    dispatch(agent)
    agent._htn_state = {"plan_name": "add export command", "current_step": "write the CSV writer", "turns_since_progress": 1}  # type: ignore[attr-defined]
    agent._bst_store = {"__bst_belief_state__": {"domain": "codegen", "confidence": 0.9}}  # type: ignore[attr-defined]
    agent.data["ctx_window"] = {"text": "", "tokens": int(0.45 * agent.ctx_length)}
    for i in range(LEDGER_LIMIT):
        tool = ("code_execution_tool", "text_editor", "response", "wait")[i % 4]
        take_turn(agent, tool, {"step": i}, f"ok {rng.random():.12f}")
    dispatch(agent)
    assert len(agent.data[LEDGER_KEY].outcomes) == LEDGER_LIMIT


def plan_read_afresh(agent: StandInAgent, i: int) -> None:
    """A troubled turn: the plan layer's count read as if for the first time, so the stall and
    the PACE emergency begin anew and the emergency steers every turn (bench/README.md)."""
    agent.data.pop(microcosm.HTN_PROGRESS_KEY, None)


def plan_moving(agent: StandInAgent, i: int) -> None:
    """A quiet turn: the plan layer counts turns and makes progress every third."""
    agent._htn_state["turns_since_progress"] = i % 3  # type: ignore[attr-defined]


RESPONSES = ('{"thoughts": ["check the config"], "tool_name": "code_execution_tool"}',
             '{"thoughts": ["read the file again"], "tool_name": "text_editor"}')


def radio_check_once(agent: Any, loop_data: Any):
    """The radio check as ``MicrocosmSupervisor.turn_end`` runs it, without what follows
    it (wording and injecting the steering, the SALUTE health correction)."""
    readings = read_turn(agent, loop_data, layers=True)
    role = microcosm.role_profile(readings.role)
    state = SupervisorState.from_dict(agent.data.get(microcosm.STATE_KEY))
    state.turn += 1
    is_check_turn(state.turn, role.doctrine.radio_check_interval_turns)
    snapshot = microcosm.build_snapshot(agent.data, readings.pace_level, role, state.turn, readings.native_repeat, readings.layers)
    result = radio_check(snapshot, state)
    agent.data[microcosm.STATE_KEY] = state.to_dict()
    return result


async def time_each(call: Callable[[int], Awaitable[Any] | Any], n: int, is_async: bool) -> list[int]:
    """ns of each of ``n`` calls."""
    out = [0] * n
    clock = time.perf_counter_ns
    if is_async:
        for i in range(n):
            t = clock()
            await call(i)
            out[i] = clock() - t
    else:
        for i in range(n):
            t = clock()
            call(i)
            out[i] = clock() - t
    return out


async def measure_each(cfg: Config, call: Callable, is_async: bool, after_repeat: Callable[[], None] = lambda: None) -> dict[str, Any]:
    await time_each(call, cfg.warmup, is_async)
    after_repeat()
    means: list[float] = []
    everything: list[int] = []
    for _ in range(cfg.active_repeats):
        samples = await time_each(call, cfg.active_iterations, is_async)
        after_repeat()
        means.append(sum(samples) / len(samples))
        everything.extend(samples)
    return {
        "value": statistics.median(means) / 1000,
        "p95": percentile(everything, 95) / 1000,
        "repeats": cfg.active_repeats,
        "iterations": cfg.active_iterations,
    }


async def bench_active(cfg: Config, scratch: Path) -> None:
    home = scratch / "organization"
    home.mkdir()
    set_home(home)
    # pauses off: a paused chat is not checked, and the figures are for a chat that keeps running
    prepare_organization(home, TraceHeader(kind="header", role="codegen", doctrine={"radio_check_interval_turns": 1,
                                                                                   "escalation": {"pause": False, "pause_after_emergency": False}}))
    real = load_point([extensions_dir()], POINT, ERA)

    agent = new_agent()
    fill_troubled_agent(agent)
    loop_data = agent.loop_data
    role = microcosm.role_profile(getattr(agent, ROLE_ATTR))
    assert role is not None and role.doctrine.radio_check_interval_turns == 1

    def next_response(i: int) -> None:
        loop_data.last_response = RESPONSES[i & 1]  # a new response each turn: no native repeat

    # what the check finds on these histories
    next_response(0)
    probe = radio_check_once(agent, loop_data)
    fired = sorted({f.anomaly for f in probe.findings})
    assert fired == ["cascade", "churn", "context", "loop", "pace", "stall"], fired
    scenario = {"findings": fired, "pace": agent._org_pace_level, "ledger": len(agent.data[LEDGER_KEY].outcomes),  # type: ignore[attr-defined]
                "failure_history": len(agent.data[FAILURES_KEY]["history"])}

    # (a) the radio check itself: snapshot, five detectors, cooldown rule, state load/save
    def check(i: int) -> None:
        next_response(i)
        radio_check_once(agent, loop_data)

    check_fig = await measure_each(cfg, check, is_async=False)
    emit("active_radio_check_us", r(check_fig["value"]), "us", **with_target(check_fig["value"], ACTIVE_TARGET_US),
         p95=r(check_fig["p95"]), repeats=check_fig["repeats"], iterations=check_fig["iterations"], scenario=scenario,
         what="one full radio check on full histories (build_snapshot + radio_check + state load/save)")

    # (b) the full hook turn: the real hook file through the loader, radio check interval 1. The
    # plan layer's count is read afresh each turn (as if first read), so the stall and PACE
    # emergency begin anew each turn and the emergency steers each turn (worded, injected,
    # logged); then (b') the same turns as the supervisor keeps the count: the episode goes on
    # and its steering, said already, is held
    injected: list[int] = []

    def collect() -> None:
        injected.append(sum(1 for m in agent.history if m.kind == "warning"))
        agent.history.clear()  # Agent-Zero's history, not the pack's: keep it from growing
        agent.context.log.items.clear()

    async def hook_turn(i: int) -> None:
        next_response(i)
        plan_read_afresh(agent, i)
        await call_point(real, ERA, agent, loop_data=loop_data)

    async def held_turn(i: int) -> None:
        next_response(i)
        await call_point(real, ERA, agent, loop_data=loop_data)

    def steered_fraction() -> float:
        steered = sum(injected[1:]) / (cfg.active_repeats * cfg.active_iterations)
        injected.clear()
        return r(steered, 3)

    hook_fig = await measure_each(cfg, hook_turn, is_async=True, after_repeat=collect)
    emit("active_hook_turn_us", r(hook_fig["value"]), "us", **with_target(hook_fig["value"], ACTIVE_TARGET_US),
         p95=r(hook_fig["p95"]), repeats=hook_fig["repeats"], iterations=hook_fig["iterations"],
         radio_check_us=r(check_fig["value"]), steered_fraction=steered_fraction(), scenario=scenario,
         what="real message_loop_end hook file, loaded and awaited as Agent-Zero does, organization active, every turn a full check that steers (a PACE emergency begun anew)")
    held_fig = await measure_each(cfg, held_turn, is_async=True, after_repeat=collect)
    emit("active_hook_turn_held_us", r(held_fig["value"]), "us", **with_target(held_fig["value"], ACTIVE_TARGET_US),
         p95=r(held_fig["p95"]), repeats=held_fig["repeats"], iterations=held_fig["iterations"],
         steered_fraction=steered_fraction(),
         what="the same turns after the first: the findings are there and their steering, said already, is held")

    # (c) where the rest of the hook turn goes
    layout = hooks.store.layout
    anomalies = [f.anomaly for f in probe.findings]
    rewrites: list[bool] = []

    def health(i: int) -> None:
        rewrites.append(salute.correct_health(layout, role.role_id, probe.health, anomalies, i))

    health_fig = await measure_each(cfg, health, is_async=False)
    emit("active_health_correction_us", r(health_fig["value"]), "us", p95=r(health_fig["p95"]),
         repeats=health_fig["repeats"], iterations=health_fig["iterations"], rewrites=sum(rewrites),
         share_of_hook_turn=r(health_fig["value"] / hook_fig["value"], 2),
         what="salute.correct_health alone, as each check with findings calls it (stats <role>_latest.json; re-reads and validates it only when it changed)")

    def report_path(i: int) -> None:
        layout.latest_report(role.role_id)

    path_fig = await measure_each(cfg, report_path, is_async=False)
    emit("active_report_path_us", r(path_fig["value"]), "us", p95=r(path_fig["p95"]),
         repeats=path_fig["repeats"], iterations=path_fig["iterations"],
         share_of_health_correction=r(path_fig["value"] / health_fig["value"], 2),
         what="OrganizationLayout.latest_report alone (a lexical safe_child check), the first step of the health correction")

    book = hooks.supervisor.steering(layout, None)
    finding = probe.steering[0] if probe.steering else None
    assert finding is not None

    def render(i: int) -> None:
        book.render(finding, repeated=True)

    render_fig = await measure_each(cfg, render, is_async=False)
    emit("active_steering_render_us", r(render_fig["value"]), "us", p95=r(render_fig["p95"]),
         repeats=render_fig["repeats"], iterations=render_fig["iterations"],
         share_of_hook_turn=r(render_fig["value"] / hook_fig["value"], 2),
         what="SteeringBook.render of the steering finding alone, as at each check while it persists (override-file stat, the wording kept)")

    from org.kernel import events

    steered_turn = (("radio_check", {"role": "codegen", "turn": 3, "findings": ["loop"], "chat": "c1"}),
                    ("steering", {"role": "codegen", "turn": 3, "anomaly": "loop", "template": "loop_repeat", "chat": "c1"}))

    def write_events(i: int) -> None:
        events.record(layout.root, *steered_turn)

    events_fig = await measure_each(cfg, write_events, is_async=False)
    emit("active_event_write_us", r(events_fig["value"]), "us", p95=r(events_fig["p95"]),
         repeats=events_fig["repeats"], iterations=events_fig["iterations"],
         share_of_hook_turn=r(events_fig["value"] / hook_fig["value"], 2),
         what="the events of a steered turn (radio check and steering) written to the event log in one append")

    # (d) organization active, full but healthy histories: nothing found, nothing steers
    quiet = new_agent()
    fill_quiet_agent(quiet)
    quiet_loop = quiet.loop_data
    quiet_loop.last_response = RESPONSES[0]
    assert not radio_check_once(quiet, quiet_loop).findings

    async def quiet_turn(i: int) -> None:
        quiet_loop.last_response = RESPONSES[i & 1]
        plan_moving(quiet, i)
        await call_point(real, ERA, quiet, loop_data=quiet_loop)

    quiet_fig = await measure_each(cfg, quiet_turn, is_async=True)
    assert not radio_check_once(quiet, quiet_loop).findings  # still quiet after all those turns
    emit("active_hook_turn_quiet_us", r(quiet_fig["value"]), "us", **with_target(quiet_fig["value"], ACTIVE_TARGET_US),
         p95=r(quiet_fig["p95"]), repeats=quiet_fig["repeats"], iterations=quiet_fig["iterations"],
         what="real hook turn, organization active, full healthy ledger: a full check that finds nothing")


# --------------------------------------------------------------------------- 3. memory

#: agent.data keys the harness (standing in for Agent-Zero) sets; everything else there is the pack's
HARNESS_KEYS = frozenset({"ctx_window"})
SKIP_TYPES = (type, ModuleType, FunctionType)
DOMAINS = ("codegen", "codegen", "codegen", "coding", "bugfix", "devops", "research")
LONG_OUTPUT = ("line of ordinary build output without problems\n" * 500)
LONG_FAILURE = LONG_OUTPUT + "Traceback (most recent call last):\n  File \"build.py\", line 1\nRuntimeError: build failed\n"


def pack_state(agent: Any) -> dict[str, Any]:
    """Everything the pack keeps on the agent (and on its loop data)."""
    parts: dict[str, Any] = {f"agent.data[{k}]": v for k, v in agent.data.items() if k not in HARNESS_KEYS}
    parts.update({f"agent.{k}": v for k, v in vars(agent).items() if k.startswith("_org_")})
    parts.update({f"loop_data.params_persistent[{k}]": v for k, v in agent.loop_data.params_persistent.items() if k.startswith("_org_")})
    return parts


def deep_size(obj: Any, seen: set[int]) -> int:
    """Bytes of ``obj`` and everything it references, each object counted once.

    An instance's ``__dict__`` is counted as a plain dict of the same items: CPython's
    key-sharing instance dicts report a size that drifts with how many instances of the
    class were ever made, which is not memory this object holds.
    """
    total = 0
    stack = [obj]
    while stack:
        item = stack.pop()
        if id(item) in seen or isinstance(item, SKIP_TYPES):
            continue
        seen.add(id(item))
        total += sys.getsizeof(item)
        if hasattr(item, "__dict__"):
            attributes = vars(item)
            if id(attributes) not in seen:
                seen.add(id(attributes))
                total += sys.getsizeof(dict(attributes))
                stack.extend(attributes.keys())
                stack.extend(attributes.values())
        stack.extend(gc.get_referents(item))
    return total


def clone_size(parts: dict[str, Any]) -> tuple[int | None, int | None]:
    """(tracemalloc bytes of a fresh copy of the state, pickled bytes)."""
    try:
        blob = pickle.dumps(parts, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:
        return None, None
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        clone = pickle.loads(blob)
        size = tracemalloc.get_traced_memory()[0] - before
        del clone
    finally:
        tracemalloc.stop()
    return size, len(blob)


def measure_state(agent: Any) -> dict[str, Any]:
    parts = pack_state(agent)
    seen: set[int] = set()
    by_part = {name: deep_size(value, seen) for name, value in parts.items()}  # shared objects counted once
    traced, pickled = clone_size(parts)
    gc.collect()
    ledger = agent.data.get(LEDGER_KEY)
    failures = agent.data.get(FAILURES_KEY) or {}
    return {
        "value": sum(by_part.values()),
        "bounds": {  # how full the bounded records are: every bound is reached in the run
            "ledger_outcomes": [len(ledger.outcomes), LEDGER_LIMIT],
            "ledger_seen": [len(ledger.seen), SEEN_LIMIT],
            "failure_history": [len(failures.get("history", ())), FAILURE_HISTORY_LIMIT],
            "failure_counters": len(failures.get("consecutive", ())),
        },
        "tracemalloc_bytes": traced,
        "pickle_bytes": pickled,
        "parts": by_part,
        "process_gc_objects": len(gc.get_objects()),
    }


class Workload:
    """Turns of varied work, in a cycle of PERIOD turns that repeats with fresh content.

    Within a cycle: short tasks (new monologues) then one long task; new results
    (progress), the same success again, failures of every error type, the same failure
    again, responses, pollers, error-comprehension verdicts, 20 kB outputs, A-B
    oscillation, turns without a tool, Agent-Zero's own repeat warning, HTN present or
    not, BST domain (and so the role) changing, context filling up over each task.

    The structural choices repeat each cycle (the structure generator is reseeded at
    the start of a cycle) and the content (arguments, outputs) is new every turn but of
    fixed width, so the state at every multiple of PERIOD is in the same phase: a
    bounded state measures the same there, and any difference is growth. The long task
    makes more than SEEN_LIMIT new results and ends in more failures in a row than
    FAILURE_HISTORY_LIMIT, so every bound is reached.
    """

    PERIOD = 1_000
    LONG_TASK = 750
    FAILURE_STORM = 30

    def __init__(self, agent: StandInAgent, seed: int = 2024):
        self.agent = agent
        self.seed = seed
        self.rng = random.Random(seed)  # structure: reseeded every cycle
        self.content = random.Random(seed + 1)  # content: never reseeded
        self.cycle_turn = self.PERIOD
        self.task_left = 0
        self.task_turn = 0
        self.task_length = 1
        self.long_task = False
        self.previous_response = ""

    def hex(self) -> str:
        return f"{self.content.getrandbits(48):012x}"

    def new_task(self) -> None:
        agent, rng = self.agent, self.rng
        agent.loop_data = LoopData()  # a new monologue: iteration 0, the ledger starts a task
        short_left = self.PERIOD - self.LONG_TASK - self.cycle_turn
        self.long_task = short_left <= 0
        self.task_length = self.PERIOD - self.cycle_turn if self.long_task else min(rng.randint(5, 60), short_left)
        self.task_left = self.task_length
        self.task_turn = 0
        domain = "codegen" if self.long_task else rng.choice(DOMAINS)
        agent._bst_store = {"__bst_belief_state__": {"domain": domain, "confidence": round(rng.random(), 2)}}  # type: ignore[attr-defined]
        if rng.random() < 0.5:
            agent._htn_state = {"plan_name": f"plan {self.hex()}", "current_step": "step 1", "turns_since_progress": 0}  # type: ignore[attr-defined]
        elif hasattr(agent, "_htn_state"):
            del agent._htn_state  # type: ignore[attr-defined]

    async def turn(self) -> None:
        agent, rng = self.agent, self.rng
        if self.cycle_turn >= self.PERIOD:
            self.cycle_turn = 0
            rng.seed(self.seed)
            self.task_left = 0
        if self.task_left <= 0:
            self.new_task()
        self.cycle_turn += 1
        self.task_left -= 1
        self.task_turn += 1
        htn = getattr(agent, "_htn_state", None)
        if htn is not None:
            progressed = rng.random() < 0.4
            htn["turns_since_progress"] = 0 if progressed else htn["turns_since_progress"] + 1
            if progressed:
                htn["current_step"] = f"step {self.task_turn}"
        fill = 0.1 + 0.85 * self.task_turn / self.task_length
        agent.data["ctx_window"] = {"text": "", "tokens": int(fill * agent.ctx_length)}

        dispatch(agent)
        loop_data = agent.loop_data
        if rng.random() < 0.04 and self.previous_response:
            response = self.previous_response  # Agent-Zero warns on its own and runs no tool
            agent.hist_add_warning("You have sent the same message again.")
        else:
            response = f'{{"thoughts": ["{self.hex()}"], "tool_name": "x"}}'
            if self.long_task and self.task_left < self.FAILURE_STORM:
                self.tool_call(0.5)  # the cycle ends in a failure storm: failure history at its bound
            else:
                self.tool_call(0.0 if self.long_task and rng.random() < 0.75 else rng.random())
        loop_data.last_response = self.previous_response = response
        await hooks.message_loop_end(agent, loop_data=loop_data)
        agent.history.clear()  # Agent-Zero's own history: not the pack's to bound
        agent.context.log.items.clear()

    def tool_call(self, p: float) -> None:
        agent, rng = self.agent, self.rng
        if p < 0.30:  # new result: progress
            run_tool(agent, rng.choice(TOOLS), {"arg": self.hex()}, f"result {self.hex()}")
        elif p < 0.40:  # the same successful action again
            run_tool(agent, "code_execution_tool", {"code": "ls"}, "a.py b.py")
        elif p < 0.55:  # a classified failure, new arguments
            _, text = rng.choice(ERRORS)
            run_tool(agent, rng.choice(TOOLS), {"arg": self.hex()}, f"{text} {self.hex()}")
        elif p < 0.62:  # the same failure again
            run_tool(agent, "code_execution_tool", {"code": "cat /x"}, ERRORS[1][1])
        elif p < 0.70:
            run_tool(agent, "response", {"text": self.hex()}, "sent")
        elif p < 0.75:
            run_tool(agent, "wait", {"seconds": 5}, f"job {self.hex()} running")
        elif p < 0.80:  # an error-comprehension layer's verdict
            verdict = rng.choice((None, "timeout", "logic_error"))
            run_tool(agent, rng.choice(TOOLS), {"arg": self.hex()}, f"output {self.hex()}", error_class=verdict)
        elif p < 0.84:
            run_tool(agent, "code_execution_tool", {"code": "make", "n": self.hex()}, LONG_FAILURE if rng.random() < 0.5 else LONG_OUTPUT)
        elif p < 0.92:  # A-B oscillation
            if self.task_turn % 2:
                run_tool(agent, "text_editor", {"op": "patch"}, "patched")
            else:
                run_tool(agent, "code_execution_tool", {"code": "pytest"}, "1 failed")
        # else: no tool this turn


async def bench_memory(cfg: Config, scratch: Path) -> None:
    home = scratch / "organization-memory"
    home.mkdir()
    set_home(home)
    prepare_organization(home, TraceHeader(kind="header", role="codegen", doctrine={"radio_check_interval_turns": 1}))
    agent = new_agent()
    workload = Workload(agent)
    assert all(c % Workload.PERIOD == 0 for c in cfg.memory_checkpoints)

    results: dict[int, dict[str, Any]] = {}
    done = 0
    loop_ns = 0
    peak = 0
    for checkpoint in cfg.memory_checkpoints:
        while done < checkpoint:
            start = time.perf_counter_ns()
            stop = min(checkpoint, done + cfg.memory_sample_every)
            while done < stop:
                await workload.turn()
                done += 1
            loop_ns += time.perf_counter_ns() - start
            seen: set[int] = set()
            peak = max(peak, sum(deep_size(v, seen) for v in pack_state(agent).values()))
        state = measure_state(agent)
        state["peak_bytes"] = peak
        results[checkpoint] = state
        emit("memory_agent_state_bytes", state["value"], "bytes", turns=checkpoint,
             **{k: v for k, v in state.items() if k != "value"},
             what="deep size of every agent.data entry and _org_* attribute the pack keeps (peak_bytes: largest sampled so far)")

    first, last = cfg.memory_growth_from, cfg.memory_checkpoints[-1]
    base, end = results[first], results[last]
    growth = end["value"] - base["value"]
    traced = (None if end["tracemalloc_bytes"] is None or base["tracemalloc_bytes"] is None
              else end["tracemalloc_bytes"] - base["tracemalloc_bytes"])
    emit("memory_agent_state_growth_bytes", growth, "bytes", target=0, met=growth <= 0,
         from_turns=first, to_turns=last, baseline=base["value"], ratio=r(end["value"] / base["value"], 4),
         peak_growth_bytes=end["peak_bytes"] - base["peak_bytes"], tracemalloc_growth_bytes=traced,
         pickle_growth_bytes=None if end["pickle_bytes"] is None else end["pickle_bytes"] - base["pickle_bytes"],
         process_gc_objects_growth=end["process_gc_objects"] - base["process_gc_objects"],
         what="the pack's on-agent state at the last checkpoint minus at the growth-from checkpoint, same workload phase")
    emit("memory_run_turn_us", r(loop_ns / done / 1000), "us", turns=done,
         what="mean wall time of one turn of the memory run: dispatcher + recorder + supervisor, direct calls")


#: Outputs made to make a pattern try every place of a long stretch: a prompt then a long run of
#: blanks, one long line of `user@host:` lookalikes, a flood of blank lines. An agent's tool can
#: print anything; each must stay linear in the output's length.
HOSTILE_OUTPUTS = {
    "blanks after a prompt": ">>>" + " " * 8000 + "x",
    "one long line": ">>> " + "a@b:" * 2000,
    "blank lines": ">>> a@b.c:d\n" + "  \n" * 3000,
}


def bench_hostile_outputs(cfg: Config) -> None:
    from org.kernel.classify import classify_output

    times = 5 if cfg.quick else 25  # each takes milliseconds: a few runs give a steady median
    slowest = ("", 0.0)
    for name, text in HOSTILE_OUTPUTS.items():
        classify_output(text)
        samples = []
        for _ in range(times):
            started = time.perf_counter_ns()
            classify_output(text)
            samples.append(time.perf_counter_ns() - started)
        median = statistics.median(samples) / 1000
        slowest = max(slowest, (name, median), key=lambda pair: pair[1])
    emit("classify_hostile_output_us", r(slowest[1]), "us", output=slowest[0], runs=times,
         what="the slowest of outputs made to make a pattern try every place of a long stretch, through classify_output "
              "(once per tool output, when it is recorded); a few milliseconds is linear, hundreds would not be")


# --------------------------------------------------------------------------- main


async def main_async(cfg: Config, scratch: Path) -> None:
    await bench_idle(cfg, scratch)
    await bench_active(cfg, scratch)
    await bench_memory(cfg, scratch)
    bench_hostile_outputs(cfg)


#: the figures a baseline tree's run is compared on: the per-turn costs
COMPARED = ("idle_hook_supervisor_us", "active_radio_check_us", "active_hook_turn_us", "active_hook_turn_held_us", "active_hook_turn_quiet_us")


def bench_figures(tree: Path, quick: bool) -> tuple[dict[str, float], subprocess.CompletedProcess]:
    """``tree``'s own bench run in a process of its own (its code: ``tree`` first on PYTHONPATH,
    so an editable install of another tree does not stand in for it): the first value of each figure."""
    command = [sys.executable, str(tree / "bench" / "run.py")] + (["--quick"] if quick else [])
    env = {**os.environ, "PYTHONPATH": str(tree) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True)
    figures: dict[str, float] = {}
    for line in done.stdout.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and isinstance(record.get("value"), (int, float)):
            figures.setdefault(record.get("name"), record["value"])
    return figures, done


def compare_with_baseline(tree: Path, quick: bool, ours: dict[str, float], rounds: int = 1, this_tree: Path = ROOT) -> None:
    """Run ``tree``'s bench after this run, and with ``rounds`` over 1 this tree's and that one's
    again in turns (a machine that drifts then drifts under both), and print, per compared figure,
    the median of each tree's runs and their ratio."""
    runs: tuple[list[dict[str, float]], list[dict[str, float]]] = ([ours], [])
    for index in range(2 * rounds - 1):  # theirs, ours, theirs, …: this run was the first of ours
        which = tree if index % 2 == 0 else this_tree
        figures, done = bench_figures(which, quick)
        if done.returncode != 0 or not figures:
            emit("baseline_tree_failed", done.returncode, "exit status", tree=str(which), stderr=done.stderr[-2000:])
            return
        runs[index % 2 == 0].append(figures)
    mine, theirs = runs
    for name in COMPARED:
        this = [run[name] for run in mine if run.get(name)]
        that = [run[name] for run in theirs if run.get(name)]
        if len(this) == len(mine) and len(that) == len(theirs):
            ratios = [a / b for a, b in zip(this, that)]
            emit(f"{name}_vs_baseline", r(statistics.median(this) / statistics.median(that)), "ratio",
                 this=r(statistics.median(this)), baseline=r(statistics.median(that)), rounds=rounds,
                 round_ratios=[r(x) for x in ratios], baseline_tree=str(tree),
                 what=f"median {name} of this tree / of the baseline tree, the two run in turns")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="far fewer iterations: a smoke check of a few seconds")
    parser.add_argument("--tmp", help="scratch folder for the organizations (default: /dev/shm when present, else the system temp dir)")
    parser.add_argument("--baseline-tree", type=Path, help="another commit's tree: run its bench right after and print the ratios")
    parser.add_argument("--rounds", type=int, default=1, help="with --baseline-tree: run each tree this many times, in turns (medians)")
    args = parser.parse_args(argv)
    cfg = Config(args.quick)

    started = time.perf_counter()
    previous_home = os.environ.get(ENV_HOME)
    scratch = temp_root(args.tmp)
    try:
        with model_config_plugin(StandInAgent().ctx_length):  # v0.9.9+: window size from the _model_config plugin
            asyncio.run(main_async(cfg, scratch))
    finally:
        if previous_home is None:
            os.environ.pop(ENV_HOME, None)
        else:
            os.environ[ENV_HOME] = previous_home
        shutil.rmtree(scratch, ignore_errors=True)
    emit("run_seconds", r(time.perf_counter() - started, 2), "s", quick=cfg.quick, python=platform.python_version(),
         cpus=os.cpu_count(), scratch=str(scratch.parent))
    if args.baseline_tree is not None:
        compare_with_baseline(args.baseline_tree.resolve(), cfg.quick, EMITTED, max(1, args.rounds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
