"""bench/real_agent_zero.py: what the pack's hooks cost a turn inside a real Agent-Zero."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import ROOT
from test_real_agent_zero import A0_PYTHON, A0_ROOT

sys.path.insert(0, str(ROOT / "bench"))
from real_agent_zero import WARM_UP_TURNS, figures  # noqa: E402


def test_the_figures_leave_out_the_first_turns_and_take_each_hook_s_median():
    calls = [("before_main_llm_call", 0, 50_000_000), ("message_loop_end", 0, 9_000_000)]  # the first turn loads everything
    for turn in range(1, 6):
        calls += [("before_main_llm_call", turn, 200_000), ("tool_execute_after", turn, 300_000 + turn),
                  ("message_loop_end", turn, 400_000)]
    calls.append(("monologue_end", 6, 5_000))  # after the last turn: not a turn's
    out = figures({"calls": calls, "model_config_calls": [0, 0, 3], "turns": 6})
    measured = 6 - WARM_UP_TURNS
    assert out["real_a0_first_turn_us"] == 59_000
    assert out["real_a0_turn_us"] == pytest.approx(sum(200 + 300 + turn / 1000 + 400 for turn in range(WARM_UP_TURNS, 6)) / measured)
    assert out["real_a0_model_config_calls_per_turn"] == 1 / measured
    assert out["real_a0_tool_execute_after_us"] == pytest.approx(300 + 3.5 / 1000)
    assert "real_a0_monologue_end_us" not in out


@pytest.mark.real_a0
@pytest.mark.skipif(not (A0_ROOT and A0_PYTHON), reason="set A0ORG_TEST_A0_ROOT and A0ORG_TEST_A0_PYTHON to run against a real Agent-Zero")
def test_the_bench_times_the_pack_in_a_real_agent_zero_and_the_model_s_settings_are_not_read_each_turn():
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "real_agent_zero.py"), "--a0-root", A0_ROOT,
                           "--a0-python", A0_PYTHON, "--turns", "6"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    out = {line["name"]: line["value"] for line in map(json.loads, done.stdout.splitlines())}
    for hook in ("before_main_llm_call", "tool_execute_before", "tool_execute_after", "message_loop_end"):
        assert out[f"real_a0_{hook}_us"] > 0, hook
    assert out["real_a0_turn_us"] > 0
    # v0.9.9+ read the window and the model's name through the _model_config plugin, which reads
    # its files each time: four calls a turn before its answer was kept for some seconds (a slow
    # machine may take longer than those over the chat); v0.9.8.x has no plugin
    assert out["real_a0_model_config_calls_per_turn"] < 1
