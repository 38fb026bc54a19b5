"""Steering that is ignored changes the outcome in a real Agent-Zero: the circuit breaker
stops a failing command from running again and the chat is paused; an agent that changes
course, and one that works well, are left alone.

Runs like tests/test_real_agent_zero.py (skipped unless ``A0ORG_TEST_A0_ROOT`` and
``A0ORG_TEST_A0_PYTHON`` are set), with the shipped doctrine: no override.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT
from test_real_agent_zero import install_pack, pytestmark, run_chat, tree, unit_keys, warnings  # noqa: F401 (fixture, marks)
from test_xo_processes import xo_home

from org.contracts.steering_message import SteeringMessage
from org.macrocosm.volume import ENV_UNIT, ENV_VOLUME, VolumeLayout

FINAL = {"thoughts": ["Done."], "headline": "Reporting", "tool_name": "response", "tool_args": {"text": "Done."}}


def command(headline: str, code: str) -> dict:
    return {"thoughts": [headline], "headline": headline, "tool_name": "code_execution_tool",
            "tool_args": {"runtime": "terminal", "session": 0, "reset": False, "code": code}}


def counted(counter: Path) -> str:
    """A failing command that leaves a mark each time it really runs."""
    return f"echo ran >> {counter} && cat /nonexistent/config.yml"


def times_run(counter: Path) -> int:
    return len(counter.read_text().splitlines()) if counter.exists() else 0


def log_headings(result: dict) -> list[str]:
    return [item["heading"] for item in result["log"]]


def test_a_model_that_ignores_steering_is_blocked_and_paused(tree, tmp_path):  # noqa: F811
    install_pack(tree, activate=True)
    counter = tmp_path / "runs.txt"
    script = [command(f"attempt {i}", counted(counter)) for i in range(1, 16)] + [FINAL]
    result = run_chat(tree, script, tmp_path, harness_args=("--stop-when-paused",))
    assert times_run(counter) <= 4, times_run(counter)
    assert result["paused"] and result["script_left"] > 0, (result["paused"], result["script_left"])
    headings = log_headings(result)
    assert "Supervisor: blocked" in headings and "Supervisor: paused" in headings
    blocked = [m["content"] for m in result["history"] if "[SUPERVISOR] Blocked" in m["content"]]
    assert blocked, warnings(result)
    (tmp_path / "figures.json").write_text(json.dumps({"ran": times_run(counter), "main_calls": result["main_calls"]}))


def test_a_model_that_keeps_sending_the_same_message_is_paused_after_agent_zero_s_own_warnings(tree, tmp_path):  # noqa: F811
    """Agent-Zero v1.7 and older warn about a message sent again unchanged, run no tool, and warn
    again for as long as the model goes on (its users' best-known loop). At the fifth warning in a
    row (where Agent-Zero after v1.7 stops the monologue itself) the chat is paused."""
    install_pack(tree, activate=True)
    counter = tmp_path / "runs.txt"
    call = command("Check the config", counted(counter))
    result = run_chat(tree, [call] * 12 + [FINAL], tmp_path, harness_args=("--stop-when-paused",))
    warned = [m for m in result["history"] if "You have sent the same message again" in m["content"]]
    assert times_run(counter) == 1 and len(warned) == 5, (times_run(counter), len(warned))
    assert result["paused"] and result["script_left"] > 0 and "Supervisor: paused" in log_headings(result)
    assert any("Paused: after the steering about the message you keep sending unchanged, you did the same 4 times more" in w for w in warnings(result))


def test_a_model_that_goes_on_replying_without_a_tool_call_after_steering_is_paused(tree, tmp_path):  # noqa: F811
    """Every reply must call a tool in Agent-Zero, the answer too: one that does not is a message
    it could not read ("misformat"), and a model that cannot write one goes on for ever (a local
    model's best-known loop). Told at the third, paused when it goes on four times more (such a
    reply runs nothing: the proof a call that works needs)."""
    install_pack(tree, activate=True)
    replies = [f"I am still thinking about step {n} of the plan." for n in range(1, 11)]
    result = run_chat(tree, [command("Look", "ls /tmp | head -3"), *replies, FINAL], tmp_path, harness_args=("--stop-when-paused",))
    steering = [w for w in warnings(result) if "[SUPERVISOR]" in w]
    assert any("Loop: your last 3 replies called no tool" in w for w in steering), steering
    assert result["paused"] and result["script_left"] > 0 and "Supervisor: paused" in log_headings(result)
    assert any("Paused: after the steering about your replies that call no tool, you did the same 4 times more" in w for w in steering)


def test_after_the_user_resumes_a_paused_chat_supervision_starts_over(tree, tmp_path):  # noqa: F811
    """Paused on replies without a tool call, then resumed as the UI's button does: the pause
    notice says supervision starts over, so the turns before it are not counted into a stall
    the moment the agent calls tools again (checks that show nothing new, none repeated)."""
    install_pack(tree, activate=True)
    replies = [f"I am still thinking about step {n} of the plan." for n in range(1, 8)]
    checks = [command(f"Check {n}", f"true # check {n}") for n in range(1, 9)]
    result = run_chat(tree, [command("Look", "true # start"), *replies, *checks, FINAL], tmp_path,
                      harness_args=("--resume-when-paused",))
    assert "resumed_after" in result, result.get("results")
    before, after = result["history"][:result["resumed_after"]], result["history"][result["resumed_after"]:]
    assert any("Paused: after the steering about your replies that call no tool" in m["content"] for m in before)
    steering_after = [m["content"] for m in after if not m["ai"] and "[SUPERVISOR]" in m["content"]]
    assert steering_after == [], steering_after
    assert not result["paused"] and result["script_left"] == 0
    assert sum("true # check" in m["content"] for m in after if m["ai"]) == 8


def chat_under_a_real_xo(tree: Path, tmp_path: Path, script: list[dict]) -> tuple[dict, str, VolumeLayout, str, float]:  # noqa: F811
    """The script run in a unit linked to a real `a0org xo` process on a volume: the chat's result,
    the XO's log, the volume, the unit's id and the chat's seconds."""
    install_pack(tree, activate=True)
    layout, unit_id = VolumeLayout(tmp_path / "volume"), "unit-a"
    layout.units_dir.mkdir(parents=True)
    xo_log = tmp_path / "xo.log"
    with xo_log.open("w") as log:
        xo = subprocess.Popen([sys.executable, "-m", "org", "xo", "--volume", str(layout.root), "--home", str(xo_home(tmp_path / "keys"))],
                              cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while "watching" not in xo_log.read_text() and "polling" not in xo_log.read_text():
            assert xo.poll() is None and time.monotonic() < deadline, xo_log.read_text()
            time.sleep(0.05)
        started = time.monotonic()
        result = run_chat(tree, script, tmp_path, harness_args=("--stop-when-paused",),
                          env_extra={ENV_VOLUME: str(layout.root), ENV_UNIT: unit_id, **unit_keys(tmp_path, unit_id)})
        seconds = time.monotonic() - started
    finally:
        xo.terminate()
        xo.wait(timeout=30)
    return result, xo_log.read_text(), layout, unit_id, seconds


def test_under_a_real_xo_a_model_that_ignores_steering_is_blocked_and_paused(tree, tmp_path):  # noqa: F811
    """The unit's own supervisor is silent while the XO steers; the XO's loop steering names the
    call, and the unit's breaker blocks it and pauses the chat as it does on its own."""
    counter = tmp_path / "runs.txt"
    script = [command(f"attempt {i}", counted(counter)) for i in range(1, 16)] + [FINAL]
    result, log_text, layout, unit_id, seconds = chat_under_a_real_xo(tree, tmp_path, script)
    assert times_run(counter) <= 4, (times_run(counter), log_headings(result), log_text[-3000:])
    assert result["paused"] and result["script_left"] > 0, (result["paused"], result["script_left"], log_text[-3000:])
    headings = log_headings(result)
    assert "Supervisor: breaker open" in headings and "Supervisor: blocked" in headings
    assert {"Supervisor: paused", "Supervisor (XO xo): paused"} & set(headings)  # the unit's breaker, or the XO on proof
    assert "Supervisor: loop" not in headings  # the XO steers, not the unit's own supervisor
    assert any("(XO xo, " in w and "[SUPERVISOR] Loop" in w for w in warnings(result)), warnings(result)
    applied = [SteeringMessage.model_validate_json(p.read_text()) for p in layout.processed(unit_id).glob("*.json")]
    assert any(m.call for m in applied if m.anomaly == "loop" and m.kind == "steer")
    (tmp_path / "figures.json").write_text(json.dumps({"ran": times_run(counter), "main_calls": result["main_calls"],
                                                       "seconds": round(seconds, 1)}))


def test_a_model_that_repeats_a_working_command_after_steering_is_paused_never_blocked(tree, tmp_path):  # noqa: F811
    """A call that works is never blocked: steered at its third run, the chat is paused once it
    was repeated ``pause_after_ignored_working`` (4) more times, so it runs at most 7 times."""
    install_pack(tree, activate=True)
    script = [command(f"check {i}", "printf 'probe-%s\\n' ok && ls /etc | head -3") for i in range(1, 16)] + [FINAL]
    result = run_chat(tree, script, tmp_path, harness_args=("--stop-when-paused",))
    ran = sum("probe-ok" in m["content"] for m in result["history"])  # only a run's output says it
    assert 3 <= ran <= 7, (ran, log_headings(result))
    assert result["paused"] and result["script_left"] > 0, (result["paused"], result["script_left"], log_headings(result))
    headings = log_headings(result)
    assert "Supervisor: paused" in headings and "Supervisor: blocked" not in headings
    steering = [w for w in warnings(result) if "[SUPERVISOR]" in w]
    assert "got the same output each time" in steering[0] and "you did the same 4 times more" in steering[-1], steering
    (tmp_path / "figures.json").write_text(json.dumps({"ran": ran, "main_calls": result["main_calls"]}))


def test_under_a_real_xo_a_model_that_repeats_a_working_command_after_steering_is_paused_never_blocked(tree, tmp_path):  # noqa: F811
    script = [command(f"check {i}", "printf 'probe-%s\\n' ok && ls /etc | head -3") for i in range(1, 16)] + [FINAL]
    result, log_text, _layout, _unit, _seconds = chat_under_a_real_xo(tree, tmp_path, script)
    ran = sum("probe-ok" in m["content"] for m in result["history"])
    assert result["paused"] and result["script_left"] > 0, (result["paused"], result["script_left"], log_text[-3000:])
    # 3 runs, 4 repeats after the steering, and the XO's latency (it answers reports as it polls)
    # before its steering and its pause arrive: a turn or two each
    assert ran <= 11, (ran, log_headings(result))
    headings = log_headings(result)
    assert "Supervisor (XO xo): paused" in headings and "Supervisor: blocked" not in headings, headings
    (tmp_path / "figures.json").write_text(json.dumps({"ran": ran, "main_calls": result["main_calls"]}))


@pytest.mark.parametrize("round_", [
    ["cat /etc/hostname", "python3 -c 'import nosuchmodule_xyz'", "head -2 /etc/passwd"],
    ["cat /etc/hostname", "ls /etc/apt", "head -2 /etc/passwd", "python3 -c 'import nosuchmodule_xyz'", "uname -s", "ls /"],
], ids=["three", "six"])
def test_a_model_going_round_the_same_commands_is_told_once_and_paused_after_one_more_round(tree, tmp_path, round_):  # noqa: F811
    """Looks and a failing run, round and round: no call repeats in a row, so nothing is
    blocked; the cycle is said after its second round and the chat paused once the model has
    gone round it again."""
    install_pack(tree, activate=True)
    script = [command(f"step {i}", round_[i % len(round_)]) for i in range(5 * len(round_))] + [FINAL]
    result = run_chat(tree, script, tmp_path, harness_args=("--stop-when-paused",))
    ran = sum("No module named 'nosuchmodule_xyz'" in m["content"] for m in result["history"])
    steering = [w for w in warnings(result) if "[SUPERVISOR]" in w]
    assert f"[SUPERVISOR] Cycle: you went round the same {len(round_)} calls (`cat /etc/hostname`" in steering[0], steering
    assert result["paused"] and result["script_left"] > 0, (result["paused"], result["script_left"], log_headings(result))
    assert f"taken in turns, you did the same {len(round_)} times more" in steering[-1], steering
    assert "Supervisor: blocked" not in log_headings(result)
    assert ran <= 4, (ran, result["main_calls"])  # two rounds, the steering, one more round: then the pause
    (tmp_path / "figures.json").write_text(json.dumps({"ran": ran, "main_calls": result["main_calls"]}))


def test_a_model_sending_java_source_as_the_command_is_told_to_put_it_in_a_file(tree, tmp_path):  # noqa: F811
    """Agent-Zero's shell runs a Java class sent as the command line by line (`bash: class: command
    not found`, then `syntax error near unexpected token`): no program is missing, and quoting is
    not what to fix."""
    install_pack(tree, activate=True)
    java = "class Parent {\n    public Child child;\n}"
    script = [command(f"declare the class {i}", java) for i in range(1, 8)] + [FINAL]
    result = run_chat(tree, script, tmp_path, harness_args=("--stop-when-paused",))
    steering = [w for w in warnings(result) if "[SUPERVISOR]" in w]
    assert steering and "[SUPERVISOR] Loop" in steering[0], (steering, [m["content"][-300:] for m in result["history"]][:6])
    assert "source code, not a shell command" in steering[0], steering
    assert "quoting" not in steering[0] and "not installed" not in steering[0], steering
    assert result["paused"], log_headings(result)


def test_a_model_sending_its_reasoning_as_commands_is_told_so_at_the_pace_level(tree, tmp_path):  # noqa: F811
    """Five different paragraphs of reasoning sent as the command: every call fails, so PACE
    goes to contingent; its steering says what was wrong with them, not "switch to a
    fundamentally different method"."""
    install_pack(tree, activate=True)
    script = [command(f"think {i}", f"DISCUSSION\nThe file may be somewhere else, attempt {i}. Let us look again.")
              for i in range(1, 7)] + [FINAL]
    result = run_chat(tree, script, tmp_path, harness_args=("--stop-when-paused",))
    steering = [w for w in warnings(result) if "[SUPERVISOR]" in w]
    pace = [w for w in steering if "[SUPERVISOR] PACE contingent" in w]
    assert pace, (steering, [m["content"][-300:] for m in result["history"]][:6])
    assert "what you sent was text, not a command" in pace[0] and "fundamentally different method" not in pace[0], pace


def test_a_model_hunting_where_nothing_is_stalls_and_is_told_its_looks_found_nothing(tree, tmp_path):  # noqa: F811
    """A missing compiler, then a search for it in one new folder after another: every look is
    new, none finds anything, so the task does not move; the sixth is a stall, and it says so."""
    install_pack(tree, activate=True)
    script = [command("compile", "nosuch_compiler_xyz Repro.java")]
    script += [command(f"hunt {i}", f"find /tmp/no_jdk_here_{i} -name javac 2>/dev/null") for i in range(1, 15)] + [FINAL]
    result = run_chat(tree, script, tmp_path, harness_args=("--stop-when-paused",))
    steering = [w for w in warnings(result) if "[SUPERVISOR]" in w]
    stall = [w for w in steering if "[SUPERVISOR] Stall:" in w]
    assert stall, (steering, [m["content"][-200:] for m in result["history"]][-4:])
    assert "Stall: 6 turns without progress (6 looks that found nothing)" in stall[0], stall
    assert not result["paused"] and "Supervisor: blocked" not in log_headings(result)


def test_a_model_saying_goodbye_through_echo_is_told_once_and_never_blocked(tree, tmp_path):  # noqa: F811
    """A model that gave up and prints a new farewell each turn: no call repeats, and each
    output is new, but nothing is done; it is told so once, on the third."""
    install_pack(tree, activate=True)
    script = [command("check", "python3 -c 'import nosuchmodule_xyz'")]
    script += [command(f"farewell {i}", f"echo 'I could not fix it, attempt {i}. Goodbye.'") for i in range(1, 8)] + [FINAL]
    result = run_chat(tree, script, tmp_path, harness_args=("--stop-when-paused",))
    steering = [w for w in warnings(result) if "[SUPERVISOR]" in w]
    assert len(steering) == 1 and "your last 3 calls only printed text you wrote" in steering[0], steering
    assert not result["paused"] and "Supervisor: blocked" not in log_headings(result)
    assert sum("Goodbye." in m["content"] for m in result["history"] if "echo" not in m["content"]) >= 7


def test_a_model_that_changes_course_after_the_first_steering_is_not_blocked_or_paused(tree, tmp_path):  # noqa: F811
    install_pack(tree, activate=True)
    counter = tmp_path / "runs.txt"
    script = [command(f"attempt {i}", counted(counter)) for i in range(1, 4)]
    script += [command("look around", "ls /"), command("find the file", "find /etc -maxdepth 1 -name 'host*'"),
               command("read it", "cat /etc/hostname"), FINAL]
    result = run_chat(tree, script, tmp_path, harness_args=("--stop-when-paused",))
    steering = [w for w in warnings(result) if "[SUPERVISOR]" in w]
    assert len(steering) == 1 and "[SUPERVISOR] Loop" in steering[0], steering
    assert times_run(counter) == 3
    assert not result["paused"]
    assert "Supervisor: blocked" not in log_headings(result)


#: Different commands that all work: an agent doing well
VARIED_COMMANDS = ("pwd", "ls /", "echo hello", "date +%Y", "uname -s", "whoami", "ls /etc | head -3", "echo $((2+3))",
                   "printf 'a\\nb\\n' | sort", "cat /etc/hostname", "env | grep -c PATH", "python3 -c 'print(6*7)'")


def working(n: int) -> list[dict]:
    """The first ``n`` of them, one a turn, then the answer."""
    return [command(f"step {i}", c) for i, c in enumerate(VARIED_COMMANDS[:n], start=1)] + [FINAL]


@pytest.mark.parametrize("n", [12])
def test_varied_successful_commands_draw_no_steering(tree, tmp_path, n):  # noqa: F811
    install_pack(tree, activate=True)
    script = working(n)
    result = run_chat(tree, script, tmp_path, harness_args=("--stop-when-paused",))
    assert [w for w in warnings(result) if "[SUPERVISOR]" in w] == []
    assert not result["paused"]
    assert not any(h.startswith("Supervisor") for h in log_headings(result))


HEALTHY_APP = '''from http.server import BaseHTTPRequestHandler, HTTPServer
import json, sys

def total(items):
    return sum(int(i) for i in items)

class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        body = json.dumps({"total": total(["1", "2"])}).encode()
        self.send_response(200)
        self.end_headers()
        self.wfile.write(body)

if __name__ == "__main__":
    HTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
'''
HEALTHY_TEST = '''import unittest
from app import total

class TotalTest(unittest.TestCase):
    def test_total(self):
        self.assertEqual(total(["1", "2"]), 3)

    def test_empty(self):
        self.assertEqual(total([]), 0)

    def test_floats(self):
        self.assertEqual(total(["1.5"]), 1.5)

if __name__ == "__main__":
    unittest.main()
'''


def test_a_healthy_development_session_draws_nothing(tree, tmp_path):  # noqa: F811
    """An app written, compiled, tested (one test fails), fixed, tested again, served in the
    background and checked after a wait, committed: the arc of a session going well, with one
    failure fixed on the way. Nothing is said, blocked or paused."""
    install_pack(tree, activate=True)
    w = tmp_path / "work"
    w.mkdir()
    steps = [
        command("Look around", f"cd {w} && ls -la"),
        command("Python version", "python3 --version"),
        command("Write the app", f"cat > {w}/app.py <<'EOF'\n{HEALTHY_APP}EOF"),
        command("Syntax check", f"cd {w} && python3 -m py_compile app.py && echo compiled"),
        command("Write the tests", f"cat > {w}/test_app.py <<'EOF'\n{HEALTHY_TEST}EOF"),
        command("Run the tests", f"cd {w} && python3 -m unittest -v 2>&1 | tail -15"),
        command("Read the function", f"grep -n 'def total' -A2 {w}/app.py"),
        command("Fix floats", f"sed -i 's/return sum(int(i) for i in items)/return sum(float(i) for i in items)/' {w}/app.py"),
        command("Run the tests again", f"cd {w} && python3 -m unittest -v 2>&1 | tail -15"),
        command("Start the server", f"cd {w} && (python3 app.py 8799 > server.log 2>&1 &)"),
        command("Wait", "sleep 1"),
        command("Check the server", "curl -sS http://127.0.0.1:8799/"),
        command("Server log", f"cat {w}/server.log"),
        command("Stop the server", "pkill -f 'app.py 8799'; echo stopped"),
        command("Init git", f"cd {w} && git init -q && git add -A && git -c user.email=a@b -c user.name=a commit -qm init && git log --oneline"),
        command("Show the diff stat", f"cd {w} && git show --stat HEAD | tail -3"),
        FINAL,
    ]
    result = run_chat(tree, steps, tmp_path, harness_args=("--workdir", str(w), "--stop-when-paused"))
    shown = "".join(m["content"] for m in result["history"] if '"tool_result"' in m["content"])
    assert "Ran 3 tests" in shown and "OK" in shown and "3.0}" in shown, shown[-2000:]  # the tests pass after the fix; the server answered
    assert not [w for w in warnings(result) if "[SUPERVISOR]" in w], warnings(result)
    assert not result["paused"] and not any(h.startswith("Supervisor") for h in log_headings(result))


#: A plan layer whose count of turns without progress is never updated: 20 each turn
FROZEN_PLAN = """try:
    from helpers.extension import Extension
except ImportError:
    from python.helpers.extension import Extension


class FrozenPlanLayer(Extension):
    async def execute(self, **kwargs):
        self.agent._htn_state = {"plan_name": "ship", "current_step": "deploy", "turns_since_progress": 20}
"""


def install_frozen_plan(root: Path) -> None:
    for folder in ("usr/extensions/message_loop_start", "usr/extensions/python/message_loop_start"):  # each era reads one
        (root / folder).mkdir(parents=True, exist_ok=True)
        (root / folder / "_10_frozen_plan.py").write_text(FROZEN_PLAN)


def test_a_plan_layer_whose_count_is_not_updated_draws_the_emergency_once_not_each_turn(tree, tmp_path):  # noqa: F811
    """20 turns without progress puts the plan over 1.5 times its budget: PACE emergency, said
    once. The count stays 20 while the agent works on; that moved nothing, so nothing new is said."""
    install_pack(tree, activate=True)
    install_frozen_plan(tree)
    result = run_chat(tree, working(8), tmp_path, harness_args=("--stop-when-paused",))
    steering = [w for w in warnings(result) if "[SUPERVISOR]" in w]
    assert len(steering) == 1 and "[SUPERVISOR] PACE emergency" in steering[0], steering
    assert not result["paused"] and result["script_left"] == 0, (result["paused"], result["script_left"])


def test_a_model_going_round_the_same_reads_after_the_emergency_is_paused(tree, tmp_path):  # noqa: F811
    """Told to stop (the plan 20 turns without progress: PACE emergency), a model reads the same
    two files by turns, each with the same output as before: the fourth read it had already made
    is the proof that the emergency went unheard, and the chat is paused."""
    install_pack(tree, activate=True)
    install_frozen_plan(tree)
    for name in ("a", "b"):
        (tmp_path / f"{name}.cfg").write_text(f"name = {name}\n")
    reads = [command(f"Read {name}", f"cat {tmp_path}/{name}.cfg") for name in ("a", "b")]
    result = run_chat(tree, reads * 5 + [FINAL], tmp_path, harness_args=("--stop-when-paused",))
    steering = [w for w in warnings(result) if "[SUPERVISOR]" in w]
    assert "[SUPERVISOR] PACE emergency" in steering[0], steering
    assert result["paused"] and result["script_left"] > 0 and "Supervisor: paused" in log_headings(result)
    paused = [w for w in steering if "Paused: after the steering about the PACE level (`cat " in w]
    assert paused and "made again, with the same output), you did the same 4 times more" in paused[0], steering
    assert sum(f"cat {tmp_path}/" in m["content"] for m in result["history"] if m["ai"]) == 6  # two new reads, then four made again


def test_a_model_checking_on_its_background_job_after_the_emergency_is_not_paused(tree, tmp_path):  # noqa: F811
    """Told to stop (PACE emergency), a model checks whether the job it started still runs, the
    same `ps -p` check with the same answer turn after turn: the job's time, not the agent's. Never
    the proof that "stop now" went unheard, as after a loop steering."""
    install_pack(tree, activate=True)
    install_frozen_plan(tree)
    result = checking_a_background_job(tree, tmp_path, checks=8)
    steering = [w for w in warnings(result) if "[SUPERVISOR]" in w]
    assert any("[SUPERVISOR] PACE emergency" in w for w in steering), steering
    assert not result["paused"] and result["script_left"] == 0, (result["paused"], steering)
    shown = [m["content"] for m in result["history"] if '"tool_result"' in m["content"] and "ALIVE" in m["content"]]
    assert len(shown) == 8 and "Supervisor: blocked" not in log_headings(result)  # every check ran


def checking_a_background_job(tree: Path, tmp_path: Path, checks: int) -> dict:  # noqa: F811
    """A chat that starts `sleep 120` in the background, then checks `checks` times whether it
    still runs (`ps -p`, the same answer each time), then answers; the job is killed after."""
    pid_file = tmp_path / "job.pid"
    check = [command(f"Is it still running? (check {n})", f"ps -p $(cat {pid_file}) > /dev/null && echo ALIVE || echo DONE") for n in range(checks)]
    script = [command("Start the job", f"nohup sleep 120 > /dev/null 2>&1 & echo $! > {pid_file}; echo started"), *check, FINAL]
    try:
        return run_chat(tree, script, tmp_path, harness_args=("--stop-when-paused",))
    finally:
        if pid_file.exists():
            subprocess.run(["kill", pid_file.read_text().strip()], capture_output=True)


def test_a_context_that_stays_full_while_the_agent_works_is_said_once_per_band(tree, tmp_path):  # noqa: F811
    """A window barely larger than Agent-Zero's own prompt, the history compressed each turn: the
    fill stays about the same (v1.7: 91-92%; v0.9.8.2, whose prompt is larger: over 100%) while
    the agent works. Said once, not at every cooldown: no band of the fill (5 points, 100 for
    anything over) is said twice."""
    install_pack(tree, activate=True)
    result = run_chat(tree, working(12), tmp_path, harness_args=("--stop-when-paused", "--ctx-length", "5300", "--ctx-history", "0.05"))
    said = [item["content"] for item in result["log"] if item["heading"] == "Supervisor: context"]  # the history is compressed: the log keeps them
    bands = [min(int(text.split("Context is ")[1].split("%")[0]), 100) // 5 for text in said]
    assert said and len(bands) == len(set(bands)), said
    assert not result["paused"] and result["script_left"] == 0


def test_a_model_checking_on_a_background_process_back_to_back_is_told_to_wait_and_not_paused(tree, tmp_path):  # noqa: F811
    """A job started in the background, then the same `ps -p` check turn after turn: told once
    to wait between checks (its answer changes on the job's time), never blocked nor paused."""
    install_pack(tree, activate=True)
    result = checking_a_background_job(tree, tmp_path, checks=8)
    shown = [m["content"] for m in result["history"] if '"tool_result"' in m["content"] and "ALIVE" in m["content"]]
    assert len(shown) == 8, [m["content"][-200:] for m in result["history"]]  # every check ran
    steering = [w for w in warnings(result) if "[SUPERVISOR]" in w]
    assert len(steering) == 1 and "it checks on a process, which runs on its own time. Wait before checking again" in steering[0], steering
    assert not result["paused"] and result["script_left"] == 0 and "Supervisor: blocked" not in log_headings(result)


def test_a_model_polling_a_long_running_command_is_left_alone(tree, tmp_path):  # noqa: F811
    """Agent-Zero hands control back while a command runs on ("Returning control to agent after N
    seconds with no output") and its prompt teaches polling with `runtime: output`: the same poll
    with the same answer, again and again, is the program at work. (v1.x only: its timeouts are
    plugin settings, here 2 s; v0.9.8's are fixed at 30 s for a command and 90 s for a poll.)"""
    if not (Path(os.environ["A0ORG_TEST_A0_ROOT"]) / "plugins" / "_code_execution").is_dir():
        pytest.skip("the code-execution timeouts are settings from v0.9.9 on (plugins); v0.9.8's poll waits 90 s")
    install_pack(tree, activate=True)
    done = tmp_path / "done.txt"
    polls = [{"thoughts": [f"Still running after check {n}; waiting."], "headline": "Waiting for the install",
              "tool_name": "code_execution_tool", "tool_args": {"runtime": "output", "session": 0}} for n in range(1, 7)]
    script = [command("Long install", f"sleep 25; echo finished > {done}"), *polls, FINAL]
    result = run_chat(tree, script, tmp_path, harness_args=("--code-timeout", "2", "--output-timeout", "2", "--stop-when-paused"))
    waits = [m["content"] for m in result["history"] if "Returning control to agent after 2 seconds" in m["content"]]
    assert len(waits) == 7, [m["content"][-200:] for m in result["history"]]  # the command and six polls, each ran
    assert not [w for w in warnings(result) if "[SUPERVISOR]" in w], warnings(result)
    assert not result["paused"] and "Supervisor: blocked" not in log_headings(result)


def test_a_model_sending_commands_to_a_terminal_still_running_an_earlier_one_is_told_they_did_not_run(tree, tmp_path):  # noqa: F811
    """Agent-Zero runs no command in a terminal session still running an earlier one ("Terminal
    session 0 might be still running"): a model that keeps sending commands there gets nothing
    done. The third is told why, and what to do about the terminal; then it is left to act. The
    service's file was edited first, so the notes are no error from before the agent's changes:
    still one steering, not a churn about the same notes beside it."""
    install_pack(tree, activate=True)
    marks = tmp_path / "ran.txt"
    service = tmp_path / "service.sh"
    script = [command("Write the service", f"printf 'echo started; sleep 300' > {service}"),
              command("Start the service", f"bash {service}")]
    script += [command(f"Check {n}", f"echo check{n} >> {marks}; ls /tmp | head -{n}") for n in range(1, 6)]
    plugins = (Path(os.environ["A0ORG_TEST_A0_ROOT"]) / "plugins" / "_code_execution").is_dir()
    timeouts = ("--code-timeout", "2", "--output-timeout", "2") if plugins else ()  # v0.9.8: 15 s between outputs
    result = run_chat(tree, [*script, FINAL], tmp_path, harness_args=(*timeouts, "--stop-when-paused"))
    busy = [m["content"] for m in result["history"] if "tool_result" in m["content"] and "Terminal session 0 might be still running" in m["content"]]
    assert len(busy) == 5 and not marks.exists(), (len(busy), result["paused"], [m["content"][-160:] for m in result["history"]][-6:])
    steering = [w for w in warnings(result) if "[SUPERVISOR]" in w]
    assert len(steering) == 1, "\n".join(steering)
    assert "Loop: your last 3 calls ran nothing" in steering[0] and "that terminal is still running an earlier command" in steering[0]
    (tmp_path / "figures.json").write_text(json.dumps({"steering": steering, "paused": result["paused"]}))


def test_a_model_asking_for_a_runtime_agent_zero_does_not_have_is_told_it_ran_nothing(tree, tmp_path):  # noqa: F811
    """`runtime: bash` runs nothing: Agent-Zero answers with a warning. Sent again and again, it is
    a loop about that warning, not "you have that result already"."""
    install_pack(tree, activate=True)
    calls = [{**command(f"List, try {n}", "ls /tmp"), "tool_args": {"runtime": "bash", "session": 0, "code": "ls /tmp"}} for n in range(4)]
    result = run_chat(tree, [*calls, FINAL], tmp_path, harness_args=("--stop-when-paused",))
    steering = [w for w in warnings(result) if "[SUPERVISOR]" in w]
    assert steering and "Loop: you ran" in steering[0] and "The runtime 'bash' is not supported" in steering[0], steering
    assert not any("You have that result already" in w for w in steering)


def test_a_model_reading_the_same_lines_after_its_script_failed_is_told_the_task_is_not_done(tree, tmp_path):  # noqa: F811
    """The script fails; the model reads the same lines of it three times. Told to act on what it
    read, and not to finish: the run that failed is named with its error."""
    install_pack(tree, activate=True)
    script = tmp_path / "app.py"
    script.write_text("def total(items):\n    return sum(items) + undefined_offset\n\nprint(total([1, 2]))\n")
    run = command("Run the app", f"python3 {script}")
    reads = [command(f"Read the function again ({n})", f"sed -n 1,2p {script}") for n in range(3)]
    result = run_chat(tree, [run, *reads, FINAL], tmp_path, harness_args=("--stop-when-paused",))
    steering = [w for w in warnings(result) if "[SUPERVISOR]" in w]
    assert len(steering) == 1, steering
    assert "Loop: you ran `sed -n 1,2p " in steering[0] and "3 times and got the same output each time" in steering[0]
    assert "act on it, as the task is not done: `python3 " in steering[0]  # (the long path is shortened in the quote)
    assert "failed when it last ran (NameError: name 'undefined_offset' is not defined)." in steering[0], steering
    assert "or finish" not in steering[0] and not result["paused"] and result["script_left"] == 0


def test_a_model_calling_tools_that_are_not_there_is_told_they_ran_nothing(tree, tmp_path):  # noqa: F811
    """Agent-Zero answers a tool it does not have with its whole list of tools. Three such calls
    ran nothing: the third is told so, and it is no cascade of failing tools."""
    install_pack(tree, activate=True)
    calls = [{"thoughts": [f"Use {name}."], "headline": f"Trying {name}", "tool_name": name, "tool_args": {"command": "ls /tmp"}}
             for name in ("bash", "shell", "terminal")]
    result = run_chat(tree, [*calls, FINAL], tmp_path, harness_args=("--stop-when-paused",))
    assert sum("not found. Available tools" in m["content"] for m in result["history"]) == 3
    steering = [w for w in warnings(result) if "[SUPERVISOR]" in w and "Context is" not in w]  # each answer lists every tool
    assert len(steering) == 1 and "Loop: your last 3 calls ran nothing (Tool terminal not found)" in steering[0], steering
    assert "there is no tool by that name here" in steering[0]


def test_a_model_checking_on_a_build_with_agent_zero_s_wait_tool_between_is_never_paused(tree, tmp_path):  # noqa: F811
    """A look, Agent-Zero's own `wait`, the same look, and again: checking on something running,
    as `sleep 60 && tail log` is in one call. The unchanged look may be said once; never paused."""
    install_pack(tree, activate=True)
    log = tmp_path / "build.log"
    log.write_text("[INFO] Compiling module core\n")
    look = command("Check the build", f"tail -1 {log}")
    checks = [call for n in range(1, 8) for call in (
        {**look, "thoughts": [f"Check {n} on the build."]},
        {"thoughts": [f"Wait before check {n + 1}."], "headline": "Waiting", "tool_name": "wait", "tool_args": {"seconds": 1}})]
    result = run_chat(tree, [*checks, FINAL], tmp_path, harness_args=("--stop-when-paused",))
    assert sum("Compiling module core" in m["content"] and "tool_result" in m["content"] for m in result["history"]) == 7
    assert not result["paused"] and "Supervisor: paused" not in log_headings(result)
    assert "Supervisor: blocked" not in log_headings(result)


@pytest.mark.parametrize("form", ["sleep", "wait tool", "in the call"])
def test_a_model_waiting_for_a_server_to_come_up_is_told_once_never_blocked_or_paused(tree, tmp_path, form):  # noqa: F811
    """A server is started in the background (one that never comes up) and checked with `curl` after each wait (a `sleep`,
    Agent-Zero's `wait`, or `sleep 1 && curl …` in one call) while it does not answer yet: the
    check's unchanged failure is the server's time. Said once; no oscillation with the wait, no
    block, no pause."""
    install_pack(tree, activate=True)
    check = "curl -sS -o /dev/null -w '%{http_code}\\n' http://127.0.0.1:9/"
    wait = {"thoughts": ["Give it time."], "headline": "Waiting", "tool_name": "wait", "tool_args": {"seconds": 1}}
    polls = {"sleep": [step for n in range(6) for step in (command(f"Check {n}", check), command(f"Wait {n}", "sleep 1"))],
             "wait tool": [step for n in range(6) for step in (command(f"Check {n}", check), wait)],
             "in the call": [command(f"Check {n}", f"sleep 1 && {check}") for n in range(6)]}[form]
    script = [command("Start the server", "(sleep 1; exit 1) > /dev/null 2>&1 &"), *polls, FINAL]
    result = run_chat(tree, script, tmp_path, harness_args=("--stop-when-paused",))
    checks = sum("Couldn't connect to server" in m["content"] for m in result["history"] if '"tool_result"' in m["content"])
    steering = [w for w in warnings(result) if "[SUPERVISOR]" in w]
    assert checks == 6, (checks, log_headings(result))
    assert len(steering) == 1 and "[SUPERVISOR] Loop: you ran" in steering[0] and "Couldn't connect to server" in steering[0], steering
    assert not result["paused"] and "Supervisor: blocked" not in log_headings(result)


def test_looking_back_to_back_at_a_log_a_job_writes_is_told_to_wait_between_looks(tree, tmp_path):  # noqa: F811
    """A job started in the background writes its log; the model looks at it with the same command,
    once before the job's next line and then back to back after it: the look changed by itself
    before, so the same line three times in a row is told to wait between looks."""
    install_pack(tree, activate=True)
    log = tmp_path / "job.log"
    start = command("Start the job", f"(echo 'step 1' >> {log}; sleep 4; echo 'step 2' >> {log}) > /dev/null 2>&1 &")
    look = command("Check the job", f"tail -1 {log}")
    pause = {"thoughts": ["Give the job time."], "headline": "Waiting", "tool_name": "wait", "tool_args": {"seconds": 7}}
    script = [start, {**look, "thoughts": ["First look."]}, pause,
              *[{**look, "thoughts": [f"Look {n}."]} for n in (2, 3, 4)], FINAL]
    result = run_chat(tree, script, tmp_path)
    shown = [m["content"] for m in result["history"] if '"tool_result"' in m["content"] and "step " in m["content"]]
    assert any("step 1" in s for s in shown) and sum("step 2" in s for s in shown) == 3, shown  # the job really moved, once
    steering = [w for w in warnings(result) if "[SUPERVISOR]" in w]
    assert len(steering) == 1 and "Wait before looking again" in steering[0], steering


def test_a_model_reading_a_file_between_patches_with_the_text_editor_is_left_alone(tree, tmp_path):  # noqa: F811
    """Agent-Zero v1.x's own `text_editor`: `text_editor:read` and `:patch` reach the hooks as
    `text_editor`; reading the same file after each patch of another is a look, and the words
    of the file shown (here "Connection refused") are no failure."""
    if not (Path(os.environ["A0ORG_TEST_A0_ROOT"]) / "plugins" / "_text_editor").is_dir():
        pytest.skip("Agent-Zero's text_editor came with its plugins (v0.9.9)")
    install_pack(tree, activate=True)
    work = tmp_path / "work"
    work.mkdir()
    (work / "net.py").write_text("import socket\n# retried when: Connection refused\nTIMEOUT = 3\n")
    (work / "app.py").write_text("".join(f"x{n} = 0\n" for n in range(1, 10)))

    def call(method: str, n: int, **args) -> dict:
        return {"thoughts": [f"Step {n}: {method}."], "headline": f"{method} {n}", "tool_name": f"text_editor:{method}", "tool_args": args}

    script = [call("read", 0, path=str(work / "app.py"))]
    for n in range(1, 5):
        script += [call("read", n, path=str(work / "net.py")),
                   call("patch", n, path=str(work / "app.py"), edits=[{"from": n, "to": n, "content": f"x{n} = {n}\n"}])]
    script += [call("read", 5, path=str(work / "net.py")), FINAL]
    result = run_chat(tree, script, tmp_path, harness_args=("--workdir", str(work)))
    assert (work / "app.py").read_text().startswith("x1 = 1\nx2 = 2\nx3 = 3\nx4 = 4\n")  # the patches went in
    shown = [m for m in result["history"] if '"tool_result"' in m["content"] and "Connection refused" in m["content"]]
    assert len(shown) == 5, [m["content"][-200:] for m in result["history"]]
    assert not [w for w in warnings(result) if "[SUPERVISOR]" in w], warnings(result)


def test_a_subordinate_quoting_the_error_is_no_failure_of_the_delegation(tree, tmp_path):  # noqa: F811
    """The run fails, a subordinate reports back quoting the traceback, and the run is tried
    again through the terminal's `input`: three tools, but only the runs failed (the
    subordinate's reply is its account, not a failure of `call_subordinate`), so no cascade."""
    if not (Path(os.environ["A0ORG_TEST_A0_ROOT"]) / "plugins").is_dir():
        pytest.skip("v0.9.8's subordinate takes its model from the default settings, which the harness cannot point at the script")
    install_pack(tree, activate=True)
    work = tmp_path / "work"
    work.mkdir()
    (work / "app.py").write_text("import cv2_missing_module\n")
    run = command("Run the app", f"cd {work} && python3 app.py")
    delegate = {"thoughts": ["Ask a subordinate."], "headline": "Delegating", "tool_name": "call_subordinate",
                "tool_args": {"message": "Find out why app.py fails.", "reset": "true"}}
    report = {"thoughts": ["Report back."], "headline": "Reporting", "tool_name": "response", "tool_args": {"text": (
        "It fails on import:\nTraceback (most recent call last):\n  File \"app.py\", line 1, in <module>\n"
        "ModuleNotFoundError: No module named 'cv2_missing_module'\nThe module is not installed.")}}
    again = {"thoughts": ["Try once more."], "headline": "Running again", "tool_name": "input",
             "tool_args": {"keyboard": f"cd {work} && python3 app.py", "session": 0}}
    result = run_chat(tree, [run, delegate, report, again, FINAL], tmp_path, harness_args=("--workdir", str(work)))
    failures = [m["content"] for m in result["history"] if "No module named 'cv2_missing_module'" in m["content"] and not m["ai"]]
    assert len(failures) >= 2, [m["content"][-200:] for m in result["history"]]  # the two runs really failed
    assert not [w for w in warnings(result) if "[SUPERVISOR]" in w], warnings(result)


def test_a_chain_of_subordinates_handing_the_task_on_is_stopped_at_the_second_relay(tree, tmp_path):  # noqa: F811
    """A model that delegates whatever it is given: A0 hands the task to A1, A1 hands it on to
    A2 as it came, and A2 would hand it to A3 (agent0ai/agent-zero issue 72). The second relay is
    not run: A2 is told, does the task itself, and the answers go back up; no A3 is made."""
    if not (Path(os.environ["A0ORG_TEST_A0_ROOT"]) / "plugins").is_dir():
        pytest.skip("v0.9.8's subordinate takes its model from the default settings, which the harness cannot point at the script")
    install_pack(tree, activate=True)
    poem = tmp_path / "poem.txt"
    task = f"Write a short poem about programmers and save it to {poem}."

    def delegation(agent: str, message: str) -> dict:
        return {"thoughts": [f"{agent}: a subordinate can do this."], "headline": "Delegating", "tool_name": "call_subordinate",
                "tool_args": {"message": message, "reset": "true"}}

    def answer(agent: str) -> dict:
        return {"thoughts": [f"{agent}: report."], "headline": "Reporting", "tool_name": "response",
                "tool_args": {"text": f"{agent}: the poem is in {poem}."}}

    script = [delegation("A0", task), delegation("A1", f"Please do this task: {task}"), delegation("A2", f"{task} Keep it short."),
              command("Write the poem", f"printf 'Code and coffee\\n' > {poem}"), answer("A2"), answer("A1"), FINAL]
    result = run_chat(tree, script, tmp_path)
    assert poem.read_text() == "Code and coffee\n"  # the work was done, by A2
    headings = log_headings(result)
    assert "Supervisor: blocked" in headings, headings
    assert not [h for h in headings if "A3" in h], headings  # no third subordinate was made
    blocked = next(item["content"] for item in result["log"] if item["heading"] == "Supervisor: blocked")
    assert blocked.startswith("[SUPERVISOR] Blocked: A1 passed this task down to you as it came"), blocked
    assert result["script_left"] == 0, result["script_left"]  # each agent answered its superior


def test_a_program_debugged_bug_after_bug_is_not_told_to_change_approach(tree, tmp_path):  # noqa: F811
    """Five programs run with `runtime: python`, each failing with another bug (as a model writing
    a scraper anew in each call does): PACE rises from the failures in a row, but each fix went in
    and uncovered the next bug, so no "change the design" is said."""
    install_pack(tree, activate=True)
    bugs = ['print(f"{1")', "for i in range(3):\nprint(i)", "print({}['odds'])", "print({1}[0])", "print([].get('a'))"]

    def version(n: int, code: str) -> dict:
        return {"thoughts": [f"Version {n} of the scraper."], "headline": f"Version {n}", "tool_name": "code_execution_tool",
                "tool_args": {"runtime": "python", "session": 0, "reset": False, "code": f"# version {n}\n{code}"}}

    result = run_chat(tree, [*[version(n, code) for n, code in enumerate(bugs, start=1)], FINAL], tmp_path)
    errors = ("SyntaxError", "IndentationError", "KeyError", "TypeError", "AttributeError")
    outputs = [m["content"] for m in result["history"] if '"tool_result"' in m["content"]]
    assert all(any(e in o for o in outputs) for e in errors), outputs  # each version really failed with its own bug
    assert not [w for w in warnings(result) if "PACE" in w], warnings(result)


def test_researching_the_error_through_mcp_tools_is_no_cascade(tree, tmp_path):  # noqa: F811
    """The run fails, the agent searches for the error and fetches a page about it through an MCP
    server's tools (Agent-Zero calls them `docs.search` and `docs.fetch`), and runs it again: the
    pages quote the traceback, but only the runs failed, so no cascade."""
    install_pack(tree, activate=True)
    work = tmp_path / "work"
    work.mkdir()
    (work / "app.py").write_text("import cv2_missing_module\n")
    server = ROOT / "tests" / "real_a0" / "docs_server.py"
    servers = {"mcpServers": {"docs": {"command": os.environ["A0ORG_TEST_A0_PYTHON"], "args": [str(server)]}}}
    run = command("Run the app", f"cd {work} && python3 app.py")

    def research(tool: str, **args) -> dict:
        return {"thoughts": [f"Look it up: {tool}."], "headline": tool, "tool_name": f"docs.{tool}", "tool_args": args}

    script = [run, research("search", query="No module named cv2_missing_module"),
              research("fetch", url="https://stackoverflow.com/q/1"), run, FINAL]
    result = run_chat(tree, script, tmp_path, harness_args=("--workdir", str(work), "--mcp-servers", json.dumps(servers)))
    found = [m["content"] for m in result["history"] if not m["ai"] and ("Stack Overflow" in m["content"] or "guard the import" in m["content"])]
    assert len(found) >= 2, [m["content"][-200:] for m in result["history"]]  # both MCP tools answered
    failures = [m["content"] for m in result["history"] if not m["ai"] and "/app.py" in m["content"] and "cv2_missing_module" in m["content"]]
    assert len(failures) >= 2, [m["content"][-200:] for m in result["history"]]  # the two runs really failed
    assert not [w for w in warnings(result) if "[SUPERVISOR]" in w], warnings(result)


@pytest.mark.parametrize(("writes", "said"), [(True, "No effect: you ran"), (False, "Rerun: you ran")], ids=["rewrites", "compares"])
def test_python_code_is_judged_as_a_program_between_failing_runs(tree, tmp_path, writes, said):  # noqa: F811
    """Agent-Zero's `runtime: python` runs code, not shell: code that rewrites a file is an edit,
    so the failing run repeated after it is "no effect" (changes that did not reach it); code
    that only compares (`if n > 0`) changes nothing, so the run was repeated with nothing changed."""
    install_pack(tree, activate=True)
    work = tmp_path / "work"
    work.mkdir()
    (work / "app.py").write_text("import lib\nprint('total: ' + lib.LIMIT)\n")
    (work / "lib.py").write_text("LIMIT = 0\nTIMEOUT = 0\n")
    run = command("Run the app", f"cd {work} && python3 app.py")

    def python(n: int) -> dict:
        path = str(work / "lib.py")
        code = (f"open({path!r}, 'w').write('LIMIT = 0\\nTIMEOUT = {n}\\n')\nprint('written')" if writes
                else f"timeout = int(open({path!r}).read().split()[-1])\nprint(timeout > {n})")
        return {"thoughts": [f"Look at the timeout, step {n}."], "headline": f"Python {n}", "tool_name": "code_execution_tool",
                "tool_args": {"runtime": "python", "session": 1, "reset": False, "code": code}}

    script = [run, python(1), run, python(2), run, python(3), run, FINAL]
    result = run_chat(tree, script, tmp_path, harness_args=("--workdir", str(work)))
    assert (work / "lib.py").read_text() == ("LIMIT = 0\nTIMEOUT = 3\n" if writes else "LIMIT = 0\nTIMEOUT = 0\n")
    steering = [w for w in warnings(result) if "[SUPERVISOR]" in w]
    assert len(steering) == 1 and said in steering[0], steering


def test_a_model_sending_commands_to_a_terminal_left_in_python_is_told_to_leave_it(tree, tmp_path):  # noqa: F811
    """A bare `python3` leaves Agent-Zero's terminal at Python's `>>>` prompt, which no shell
    prompt pattern of Agent-Zero's matches: every command after it is refused as sent to a
    terminal still running. The third is told the terminal waits at a Python prompt, and how to
    leave it; none of the commands ran."""
    install_pack(tree, activate=True)
    marks = tmp_path / "ran.txt"
    script = [command("Open Python", "python3")]
    script += [command(f"Check {n}", f"echo check{n} >> {marks}; ls /tmp | head -{n}") for n in range(1, 6)]
    plugins = (Path(os.environ["A0ORG_TEST_A0_ROOT"]) / "plugins" / "_code_execution").is_dir()
    timeouts = ("--code-timeout", "2", "--output-timeout", "2") if plugins else ()  # v0.9.8: 15 s between outputs
    result = run_chat(tree, [*script, FINAL], tmp_path, harness_args=(*timeouts, "--stop-when-paused"))
    results = [m["content"] for m in result["history"] if "tool_result" in m["content"]]
    (tmp_path / "results.json").write_text(json.dumps(results, indent=1))
    assert not marks.exists(), results
    steering = [w for w in warnings(result) if "[SUPERVISOR]" in w]
    (tmp_path / "figures.json").write_text(json.dumps({"steering": steering, "paused": result["paused"]}))
    assert len(steering) == 1, "\n".join(steering)
    assert "Loop: your last 3 calls ran nothing (the terminal waits at an interactive Python prompt (`>>>`))" in steering[0], steering[0]
    assert "send it `exit()`" in steering[0]
