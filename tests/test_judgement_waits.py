"""Waiting on a program that is still running is the program's time, not a loop of the agent's.

Agent-Zero hands control back while a long command runs ("Returning control to agent after 90
seconds with no output. Process might be still running.") and its prompt teaches the agent to
poll with ``runtime: output``; a long install or a training run is polled many times with the
same answer. Turns in, steering out, as in the other judgement tests.
"""

from __future__ import annotations

import pytest
from test_escalation import actions
from test_judgement import TOOL, sh, traceback

from org.kernel.outcomes import LEDGER_KEY

NOTE = ("[SYSTEM: Returning control to agent after {} seconds {}. Process might be still running. Check previous outputs "
        "and decide whether to reset and continue or wait for more output is needed.]")
SILENT = NOTE.format(90, "with no output")


def poll(output: str = SILENT) -> dict:
    return {"tool": TOOL, "args": {"runtime": "output", "session": 0}, "output": output}


def long_command(command: str, printed: str) -> dict:
    return sh(command, f"{printed}\n\n" + NOTE.format(300, "of execution"))


def test_polling_a_long_install_is_never_steered_blocked_or_paused(make_session):
    session = make_session()
    session.run(long_command("pip install torch", "Collecting torch\n  Downloading torch-2.5.1 (906.4 MB)"),
                *[poll()] * 20, poll("Successfully installed torch-2.5.1\nroot@a0:~# "), sh("python -c 'import torch'"))
    assert actions(session) == []


def test_a_poll_that_shows_the_program_moving_is_progress(make_session):
    session = make_session(doctrine={"max_turns_without_progress": 4})
    session.run(long_command("python train.py", "epoch 1 loss 2.31"),
                *[poll(f"epoch {n} loss {2.3 - n / 10:.2f}\n\n" + NOTE.format(45, "since last output update")) for n in range(2, 12)])
    ledger = session.agent.data[LEDGER_KEY]
    assert [o.novel for o in ledger.outcomes][1:] == [True] * 10
    assert actions(session) == []


def test_a_poll_that_shows_the_program_failing_is_a_failure(make_session):
    session = make_session()
    session.run(long_command("python train.py", "loading data"), poll(traceback("ModuleNotFoundError: No module named 'torch'")))
    latest = session.agent.data[LEDGER_KEY].outcomes[-1]
    assert (latest.ok, latest.error_type, latest.waits) == (False, "dependency", True)


def test_the_same_command_run_again_while_it_keeps_timing_out_is_still_a_loop(make_session):
    session = make_session()
    session.run(*[long_command("python server.py", "Serving on :8000")] * 3)
    assert (3, "steer:loop") in actions(session)


def test_openhands_empty_command_and_claude_code_bash_output_are_polls_too(make_session):
    session = make_session()
    still = ("[The command has no new output after 30 seconds. You may wait longer to see additional output by sending "
             "empty command '', send other commands to interact with the current process, or send keys to interrupt/kill the command.]")
    session.run(*[{"tool": "execute_bash", "args": {"command": "", "is_input": "true"}, "output": still}] * 6,
                *[{"tool": "BashOutput", "args": {"bash_id": "0b5701"}, "output": "<status>running</status>"}] * 6)
    assert actions(session) == []


def test_looking_back_to_back_at_a_log_that_moves_by_itself_is_told_to_wait_between_looks(make_session):
    """A job writes its log while the agent looks at it with the same command: the look showed other
    lines before, with no change of the agent's between, so the same line three times in a row is
    the job's pace, not a result to act on (real Agent-Zero chats: `tail -1 gchat-debug.log`)."""
    session = make_session()
    look = "tail -1 /a0/usr/workdir/job.log"
    session.run(sh(look, "[Summarizing 11/61] #alerts"), sh(look, "[Summarizing 12/61] #team"), *[sh(look, "[Summarizing 13/61] #ads")] * 3)
    [(turn, anomaly, text)] = session.steering()
    assert (turn, anomaly) == (5, "loop") and f"you ran `{look}` 3 times in a row" in text
    assert "Wait before looking again" in text and "You have that result already" not in text

    # the same look showing something else only after the agent's own edit: a result to act on
    session = make_session()
    session.run(sh("cat config.yml", "port: 80"), sh("sed -i 's/80/8080/' config.yml"), *[sh("cat config.yml", "port: 8080")] * 3)
    [(turn, anomaly, text)] = session.steering()
    assert (turn, anomaly) == (5, "loop") and "You have that result already" in text


CURL = "curl -sS http://127.0.0.1:8000/health"
DOWN = "curl: (7) Failed to connect to 127.0.0.1 port 8000 after 0 ms: Couldn't connect to server"
WAIT = {"tool": "wait", "args": {"seconds": 5}, "output": "Waited 5 seconds."}


@pytest.mark.parametrize("form", ["sleep", "wait tool", "in the call"])
def test_polling_a_server_that_is_still_starting_is_said_once_never_blocked_or_paused(make_session, form):
    """Waiting for a server to come up: the same check fails the same way after each wait (a
    `sleep`, Agent-Zero's `wait`, or `sleep 5 && curl …` in one call). A wait is no call of a
    cycle with the check, and the check's unchanged failure is the server's time: said once as
    a loop, never blocked or paused."""
    polls = {"sleep": [call for _ in range(8) for call in (sh(CURL, DOWN), sh("sleep 5", ""))],
             "wait tool": [call for _ in range(8) for call in (sh(CURL, DOWN), WAIT)],
             "in the call": [sh(f"sleep 5 && {CURL}", DOWN)] * 8}[form]
    session = make_session()
    session.run(sh("nohup python -m http.server 8000 > server.log 2>&1 &", "[1] 4242"), *polls, sh(CURL, '{"status": "ok"}'))
    seen = [action for _, action in actions(session)]
    assert seen.count("steer:loop") == 1 and "block" not in seen and "pause" not in seen, seen
    assert "steer:oscillation" not in seen


def test_a_failing_program_run_after_a_wait_is_still_blocked(make_session):
    """Waiting does not change a program's own error: `sleep 5 && python app.py` failing with the
    same TypeError is a loop like any other, blocked after its steering."""
    session = make_session()
    session.run(*[sh("sleep 5 && python app.py", traceback("TypeError: unsupported operand type(s) for +: 'int' and 'str'"))] * 5)
    seen = [action for _, action in actions(session)]
    assert seen[0] == "steer:loop" and "block" in seen, seen


def test_sleeping_with_nothing_shown_is_no_loop_but_no_progress_either(make_session):
    """`sleep 30` again and again after a failure: a wait is never a loop (it shows nothing to act
    on), but unlike a poll it shows nothing of what runs, so its turns count toward the stall."""
    session = make_session(doctrine={"max_turns_without_progress": 6})
    session.run(sh("python app.py", traceback("TypeError: unsupported operand type(s) for +: 'int' and 'str'")), *[sh("sleep 30", "")] * 8)
    seen = [action for _, action in actions(session)]
    assert seen == ["steer:stall"], seen


def test_checking_whether_a_process_still_runs_back_to_back_is_told_to_wait_and_never_paused(make_session):
    """A real Agent-Zero chat: a blog generator started in the background, then `ps -p 6149 …`
    sent turn after turn with the same answer. Its answer changes on the process's time: the
    advice is to wait between checks, not "act on it, or finish"; and it is never the proof for
    a pause (the job goes on whatever the chat does)."""
    session = make_session()
    check = sh("ps -p 6149 > /dev/null && echo 'Process 6149: ALIVE' || echo 'Process 6149: COMPLETED'", "Process 6149: ALIVE")
    session.run(sh("nohup python generate.py > gen.log 2>&1 & echo $!", "6149"), *[check] * 9)
    [(turn, anomaly, text)] = session.steering()
    assert (turn, anomaly) == (4, "loop")
    assert text.startswith("[SUPERVISOR] Loop: you ran `ps -p 6149 > /dev/null && echo 'Process 6149: ALIVE' || echo 'Process 6149: COM…` 3 times "
                           "in a row and got the same answer each time: it checks on a process, which runs on its own time. Wait before checking again")
    assert not any(r.paused or r.blocked for r in session.results)


@pytest.mark.parametrize("command, checks", [
    ("ps -p 6149", True), ("ps aux | grep train.py | grep -v grep", True), ("pgrep -f 'python train.py'", True),
    ('kill -0 "$PID" && echo running', True), ("cd /app && pidof node", True), ("sleep 5; ps -ef | grep build", True),
    ("ps", False), ("grep -rn 'ps -p' docs/", False), ("python apps -p 3", False), ("kill -9 6149", False), ("cat /proc/6149/status", False),
])
def test_a_check_on_a_process_is_known_by_its_command(command, checks):
    from org.kernel.classify import checks_a_process
    assert checks_a_process(command) is checks
