"""Acting when steering is ignored: the circuit breaker, the pause, and resuming."""

from __future__ import annotations

import json

import pytest

from conftest import fail

from org.replay import replay

TOOL = "code_execution_tool"
MISSING = 'Traceback (most recent call last):\n  File "app.py", line 1, in <module>\nModuleNotFoundError: No module named \'flask\'\n'


def run_app(output: str = MISSING, **extra) -> dict:
    return {"tool": TOOL, "args": {"runtime": "terminal", "code": "python app.py"}, "output": output, **extra}


def actions(session) -> list[tuple[int, str]]:
    seen = []
    for r in session.results:
        if r.blocked:
            seen.append((r.turn, "block"))
        seen += [(r.turn, f"steer:{a}") for a, _ in r.steering]
        if r.paused:
            seen.append((r.turn, "pause"))
    return seen


def ran(session) -> int:
    """How many times the call really ran (a blocked one returns the supervisor's text)."""
    return sum(1 for r in session.results if not r.blocked)


def test_a_call_that_keeps_failing_the_same_way_is_blocked_once_the_agent_was_told(make_session, era):
    session = make_session(era=era)
    session.run(*[run_app()] * 4)
    assert actions(session)[:2] == [(3, "steer:loop"), (4, "block")]
    blocked = session.agent.history[-1].content
    assert blocked["tool_result"].startswith("[SUPERVISOR] Blocked: `python app.py` was not run")
    assert any(item.heading == "Supervisor: blocked" for item in session.agent.context.log.items)


def test_ignoring_steering_ends_in_a_pause_with_the_call_run_at_most_four_times(make_session):
    session = make_session()
    for turn in range(1, 16):
        session.run(run_app())
        if session.results[-1].paused:
            break
    assert session.results[-1].paused and session.results[-1].turn < 15
    assert sum(1 for r in session.results if not r.blocked) <= 4
    paused = [item for item in session.agent.context.log.items if item.heading == "Supervisor: paused"]
    assert len(paused) == 1 and "resume" in paused[0].content


def test_the_breaker_half_opens_after_its_turns_and_closes_on_success(make_session):
    session = make_session(doctrine={"breaker": {"half_open_turns": 2}, "escalation": {"pause": False}})
    session.run(*[run_app()] * 3)  # told at 3
    session.run(run_app())  # 4: blocked
    assert session.results[-1].blocked
    session.run(run_app(output="Serving on :8000"))  # 5: half-open, runs, succeeds: closed
    assert not session.results[-1].blocked
    session.run(run_app())  # 6: runs again (closed), fails
    assert not session.results[-1].blocked


def test_a_different_call_is_never_blocked_and_lets_the_same_call_try_again(make_session):
    session = make_session()
    session.run(*[run_app()] * 3)
    session.run({"tool": TOOL, "args": {"runtime": "terminal", "code": "pip install flask"}, "output": "Successfully installed flask-3.0.2"})
    assert not session.results[-1].blocked
    session.run(run_app(output="Serving on :8000"))
    assert not session.results[-1].blocked


def test_exempt_tools_and_a_switched_off_breaker_never_block(make_session):
    exempt = make_session(doctrine={"loop": {"exempt_tools": [TOOL]}})
    exempt.run(*[run_app()] * 6)
    assert not any(r.blocked for r in exempt.results)
    off = make_session(doctrine={"breaker": {"enabled": False}, "escalation": {"pause": False}})
    off.run(*[run_app()] * 8)
    assert not any(r.blocked for r in off.results) and not any(r.paused for r in off.results)


def test_resuming_the_chat_starts_the_ladder_over(make_session):
    session = make_session()
    while not (session.results and session.results[-1].paused):
        session.run(run_app())
    paused_at = session.results[-1].turn
    session.run(run_app(output="Serving on :8000"))  # the user resumed; the agent changed course
    assert not session.agent.context.paused
    assert any(item.heading == "Supervisor: resumed" for item in session.agent.context.log.items)
    session.run(*[fail(TOOL)] * 3)
    assert (paused_at + 4, "steer:loop") in actions(session)  # a new episode starts with a plain steering


def retry(n: int, **extra) -> dict:
    """Another way of starting the app that fails like the others: the task does not move."""
    return {"tool": TOOL, "args": {"runtime": "terminal", "code": f"python app.py --attempt {n}"}, "output": MISSING, **extra}


def test_working_on_after_pace_emergency_without_progress_pauses(make_session):
    session = make_session(doctrine={"breaker": {"enabled": False}})
    session.run(run_app(), *[retry(n) for n in range(3)], retry(3, pace="emergency"))
    assert actions(session) == [(5, "steer:pace")]
    session.run(retry(4, pace="emergency"))  # told to stop, it goes on to the same failure: once
    assert not session.results[-1].paused
    session.run(retry(5, pace="emergency"))  # and twice: the proof
    assert session.results[-1].paused and "you did the same twice more" in session.results[-1].pause_text
    assert "after the steering about the PACE level (the latest failure: " in session.results[-1].pause_text


def test_going_round_the_same_looks_after_pace_emergency_pauses_on_more_proof(make_session):
    session = make_session(doctrine={"breaker": {"enabled": False}})
    session.run(view(72), view(90), run_app(), *[retry(n) for n in range(3)], retry(3, pace="emergency"))
    looks = [dict(view(n), pace="emergency") for n in (72, 90)]
    session.run(*looks, looks[0])  # told to stop, it goes round looks it had already made: three
    assert actions(session) == [(7, "steer:pace")]
    session.run(looks[1])  # the fourth: the proof a call that works needs
    assert session.results[-1].paused
    assert "after the steering about the PACE level (`goto 90` made again, with the same output), you did the same 4 times more" in session.results[-1].pause_text


def test_a_new_look_or_a_wait_after_pace_emergency_is_not_ignoring_it(make_session):
    session = make_session(doctrine={"breaker": {"enabled": False}})
    session.run(run_app(), *[retry(n) for n in range(3)], retry(3, pace="emergency"))
    session.run(*[dict(view(n), pace="emergency") for n in range(100, 106)])  # each look a new place
    poll = {"tool": TOOL, "args": {"runtime": "output"}, "output": "still building...", "pace": "emergency"}
    session.run(*[poll] * 5)  # waiting on what runs
    assert not any(r.paused for r in session.results)


@pytest.mark.parametrize("check", [
    {"code": "ps -p 4242", "output": "    PID TTY          TIME CMD\n   4242 ?        00:03:10 python\n"},
    {"code": "sleep 10 && curl -s localhost:8000/health", "output": "curl: (7) Failed to connect to localhost port 8000: Connection refused"},
])
def test_checking_on_something_running_after_pace_emergency_is_not_ignoring_it(make_session, check):
    """A check on a job or a server still starting shows that thing's time, not the agent's: after
    "stop now" as after a loop steering, it is never the proof for a pause."""
    session = make_session(doctrine={"breaker": {"enabled": False}})
    session.run(run_app(), *[retry(n) for n in range(3)], retry(3, pace="emergency"))
    call = {"tool": TOOL, "args": {"runtime": "terminal", "code": check["code"]}, "output": check["output"], "pace": "emergency"}
    session.run(*[call] * 10)  # (the first shows something new: the emergency is said again, on the checks after it)
    assert not any(r.paused for r in session.results)


def test_answering_after_pace_emergency_is_not_ignoring_it(make_session):
    session = make_session()
    session.run(run_app(), *[retry(n) for n in range(3)], retry(3, pace="emergency"),
                {"tool": "response", "args": {"text": "Stopped: here is what works."}, "output": "Stopped", "pace": "emergency"})
    assert not any(r.paused for r in session.results)


def view(n: int = 72) -> dict:
    return {"tool": TOOL, "args": {"runtime": "terminal", "code": f"goto {n}"}, "output": f"[File: /repo/a.py (300 lines total)]\n{n}: x = 1\n"}


def test_a_call_that_works_repeated_after_steering_pauses_on_more_proof_and_is_never_blocked(make_session):
    session = make_session()
    session.run(*[view()] * 3)  # the loop steering
    session.run(*[view()] * 3)  # ignored three times: a working call needs more proof than a failing one
    assert actions(session) == [(3, "steer:loop")]
    session.run(view())  # the fourth: the proof
    assert session.results[-1].paused and not any(r.blocked for r in session.results)
    assert "Paused: after the steering about `goto 72` (the same output, no error), you did the same 4 times more." in session.results[-1].pause_text


def test_an_edit_applied_again_and_again_after_steering_pauses(make_session):
    """SWE-agent's `edit 1:1` replaces line 1 with the whole new text: each time the file grows."""
    session = make_session()
    for n in range(1, 9):
        session.run({"tool": TOOL, "args": {"runtime": "terminal", "code": "edit 1:1\nimport os\nprint(os.sep)\nend_of_edit"},
                     "output": f"[File: /repo/reproduce.py ({2 * n} lines total)]\n1:import os\n2:print(os.sep)\n"})
    assert [a for a in actions(session) if a[1] != "steer:stall"] == [(3, "steer:loop"), (7, "pause")]


@pytest.mark.parametrize("calls", [
    [view(134), view(470), run_app()],
    [run_app(), run_app(MISSING.replace("flask", "django")) | {"args": {"runtime": "terminal", "code": "python b.py"}}, view(470)],
    [view(10), view(172), view(200), run_app(), view(1), view(300)],
], ids=["failing-last", "working-last", "a-round-of-six"])
def test_going_round_a_cycle_again_after_steering_pauses_once_the_round_is_complete(make_session, calls):
    session = make_session()
    session.run(*calls * 2)  # the cycle steering at the end of the second round
    session.run(*calls[:-1])
    assert actions(session) == [(2 * len(calls), "steer:loop")]
    session.run(calls[-1])  # once round again after it, whatever its last call gave: the proof
    assert session.results[-1].paused and not any(r.blocked for r in session.results)
    text = session.results[-1].pause_text
    assert f"taken in turns, you did the same {len(calls)} times more" in text, text
    assert all(f"`{c['args']['code']}`" in text for c in calls)


def test_checking_on_a_background_process_is_never_paused(make_session):
    poll = {"tool": TOOL, "args": {"runtime": "terminal", "code": "sleep 60 && tail -2 build.log"},
            "output": "[INFO] Compiling 812 source files\n[INFO] Compiling module core\n"}
    session = make_session()
    session.run(*[poll] * 10)
    assert not any(r.paused or r.blocked for r in session.results)


def test_checking_on_a_background_process_with_a_wait_between_is_never_paused(make_session):
    """The same check with Agent-Zero's `wait` tool between (exempt in the shipped roles): the
    wait and the look, two calls, are what `sleep 60 && tail` is in one."""
    look = {"tool": TOOL, "args": {"runtime": "terminal", "code": "tail -2 build.log"}, "output": "[INFO] Compiling module core\n"}
    session = make_session()
    session.run(*[call for n in range(10) for call in (look, {"tool": "wait", "args": {"seconds": 60},
                                                             "output": f"Wait complete. Reached 2026-11-27T18:{n:02d}:00+00:00."})])
    assert not any(r.paused or r.blocked for r in session.results)
    session = make_session()  # with nothing between, the same look after its steering takes the proof as before
    session.run(*[look] * 8)
    assert any(r.paused for r in session.results)


def test_the_proof_a_working_call_needs_is_set_per_doctrine(make_session):
    session = make_session(doctrine={"escalation": {"pause_after_ignored_working": 5}})
    session.run(*[view()] * 7)  # steered at 3, then ignored four times
    assert not any(r.paused for r in session.results)
    session.run(view())
    assert session.results[-1].paused and "you did the same 5 times more" in session.results[-1].pause_text


def test_pauses_can_be_switched_off_per_doctrine(make_session):
    session = make_session(doctrine={"escalation": {"pause": False, "pause_after_emergency": False}})
    session.run(*[run_app()] * 15)
    assert not any(r.paused for r in session.results)
    assert sum(1 for r in session.results if r.blocked) > 0


def test_replay_reports_blocks_and_the_pause_on_their_turns(tmp_path):
    trace = tmp_path / "loop.jsonl"
    trace.write_text("\n".join(json.dumps({"turn": n, **run_app()}) for n in range(1, 11)) + "\n", encoding="utf-8")
    lines = replay(trace)
    assert [(line["turn"], line["action"]) for line in lines][:3] == [(3, "steer"), (4, "block"), (5, "block")]
    assert any(line["action"] == "pause" for line in lines)


def test_a_pause_names_what_the_unanswered_steering_was_about():
    from org.contracts import Finding
    from org.supervisor.escalation import pause_finding
    from org.supervisor.steering import SteeringBook

    book = SteeringBook()
    loop = Finding(anomaly="loop", template="loop_repeat", turn=9, evidence={"action": "`cd src/`", "outcome": "cd: src/: No such file or directory"})
    assert "Paused: steering about `cd src/` (cd: src/: No such file or directory) went unanswered twice." in book.render(pause_finding(loop, 2))
    turns = Finding(anomaly="loop", template="loop_oscillation", turn=9, evidence={"tool_a": "`open a.py`", "tool_b": "`open b.py`", "cycles": 2})
    assert "Paused: steering about `open a.py` and `open b.py` taken in turns went unanswered twice." in book.render(pause_finding(turns, 2))
    stall = Finding(anomaly="stall", template="stall", turn=9, evidence={"turns": 13})
    assert "Paused: steering about the stall went unanswered 5 times." in book.render(pause_finding(stall, 5))
    # on proof, the count is of what the agent did again after the steering, not of steering sent
    assert "Paused: after the steering about `cd src/` (cd: src/: No such file or directory), you did the same twice more." in book.render(
        pause_finding(loop, 2, on_proof=True))
