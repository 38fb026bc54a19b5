"""Times the pack's hooks inside a real Agent-Zero, for bench/real_agent_zero.py.

Python imports this module at start-up when its folder is first on ``PYTHONPATH`` and
``A0ORG_BENCH_TIMINGS`` names the file to write. It wraps the hook functions of
``org.a0.hooks`` (what the pack's extension files call) and counts the calls to the
``_model_config`` plugin's ``get_chat_model_config``. A hook called from inside another
(the inbox, from the breaker's hook) is part of the outer one's time. The figures are
written after each turn: the harness ends its process with ``os._exit``.
"""

from __future__ import annotations

import functools
import inspect
import json
import os
import time

HOOKS = ("before_main_llm_call", "message_loop_prompts_before", "message_loop_prompts_after", "tool_execute_before",
         "tool_execute_after", "message_loop_end", "monologue_start", "monologue_end")
#: (hook, turn, ns) of each outermost hook call; the turn is the count of message_loop_end calls before it
calls: list[tuple[str, int, int]] = []
model_config_calls: list[int] = []  # the turn of each call to the plugin
state = {"depth": 0, "turn": 0}
#: taken out of the environment, so that the programs the agent runs do not time themselves
OUT = os.environ.pop("A0ORG_BENCH_TIMINGS", None)


def _write() -> None:
    with open(OUT, "w", encoding="utf-8") as out:
        json.dump({"calls": calls, "model_config_calls": model_config_calls, "turns": state["turn"]}, out)


def _timed(name: str, hook):
    def begin() -> int:
        state["depth"] += 1
        return time.perf_counter_ns()

    def end(started: int) -> None:
        took = time.perf_counter_ns() - started
        state["depth"] -= 1
        if state["depth"] == 0:
            calls.append((name, state["turn"], took))
        if name == "message_loop_end":
            state["turn"] += 1
        if name in ("message_loop_end", "monologue_end"):
            _write()  # after the figure was taken: not timed

    if inspect.iscoroutinefunction(hook):
        @functools.wraps(hook)
        async def timed(*args, **kwargs):
            started = begin()
            try:
                return await hook(*args, **kwargs)
            finally:
                end(started)
    else:
        @functools.wraps(hook)
        def timed(*args, **kwargs):
            started = begin()
            try:
                return hook(*args, **kwargs)
            finally:
                end(started)
    return timed


def _install() -> None:
    from org.a0 import hooks
    from org.kernel import context_fill

    for name in HOOKS:
        if hasattr(hooks, name):
            setattr(hooks, name, _timed(name, getattr(hooks, name)))
    find = getattr(context_fill, "_model_config_plugin", None)
    if find is None:
        return  # an older tree: its calls to the plugin are not counted

    def counted_plugin():
        lookup = find()
        if lookup is None:
            return None

        def counted(agent):
            model_config_calls.append(state["turn"])
            return lookup(agent)
        return counted
    context_fill._model_config_plugin = counted_plugin


if OUT:
    _install()
