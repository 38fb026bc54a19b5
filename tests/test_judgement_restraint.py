"""Restraint once something is said, a pause only on proof, and the waste that went unheard.

Turns in, steering out: each test is one criterion of the design, written as the turns an
agent in Agent-Zero would take.
"""

from __future__ import annotations

import json

from test_escalation import actions
from test_judgement import sh, traceback

from org.contracts.role import Doctrine
from org.supervisor.microcosm import HTN_PROGRESS_KEY, htn_turns_since_progress

TYPE_ERROR = traceback("TypeError: can only concatenate str (not \"int\") to str")


def edit(n: int) -> dict:
    return sh(f"sed -i 's/v{n}/v{n + 1}/' lib/core.py")


# restraint -----------------------------------------------------------------------------

def test_one_message_per_episode_while_nothing_changes(make_session):
    session = make_session(doctrine={"breaker": {"enabled": False}, "cooldown_turns": 1,
                                     "escalation": {"pause": False, "pause_after_emergency": False}})
    session.run(*[sh("python app.py", TYPE_ERROR)] * 14)
    # the loop is said once; PACE contingent would say it again and is left out; the emergency (8
    # failures in a row and the progress budget of 12 turns spent) says something new: stop
    assert actions(session) == [(3, "steer:loop"), (13, "steer:pace")]
    assert session.steering()[1][2].startswith("[SUPERVISOR] PACE emergency")


def test_a_new_error_is_a_new_episode_and_is_said(make_session):
    session = make_session(doctrine={"breaker": {"enabled": False}, "escalation": {"pause": False}})
    session.run(*[sh("python app.py", TYPE_ERROR)] * 3, *[sh("python app.py", traceback("KeyError: 'id'"))] * 3)
    assert [t for t, a in session.anomalies() if a == "loop"] == [3, 6]


def test_two_loops_taken_in_turns_are_each_said_once(make_session):
    session = make_session(doctrine={"breaker": {"enabled": False}, "escalation": {"pause": False, "pause_after_emergency": False}})
    a, b = sh("python app.py", TYPE_ERROR), sh("python app.py --fast", traceback("KeyError: 'id'"))
    session.run(a, b, *[a] * 3, *[b] * 3, *[a] * 3, *[b] * 3)  # both known from the start: the task does not move
    assert [t for t, anomaly in session.anomalies() if anomaly == "loop"] == [5, 8]


def test_no_effect_is_not_said_when_the_output_changed(make_session):
    session = make_session()
    session.run(sh("python debug.py", "value: None\ncount: 0"))
    for n in range(4):
        session.run(edit(n), sh("python debug.py", f"value: None\ncount: {n + 1}"))
    assert "rerun" not in [a for _, a in session.anomalies()]


def test_a_rerun_said_before_the_task_moved_elsewhere_is_said_again_only_once_its_count_has_doubled(make_session):
    """Between reruns of one failing install the agent learns new things elsewhere (the task
    moves), edits and runs it again: the reruns' evidence is the same but for its count."""
    timed_out = "\nEXECUTION TIMED OUT"
    session = make_session(doctrine={"cooldown_turns": 1, "max_turns_without_progress": 50})
    session.run(sh("apt-get install default-jdk", timed_out))
    for n in range(8):
        session.run(sh(f"sed -i 's/mirror{n}/mirror{n + 1}/' /etc/apt/sources.list"),
                    sh("apt-get install default-jdk", timed_out), sh(f"cat /etc/apt/notes{n}", f"note {n}"))
    reruns = [text for _, anomaly, text in session.steering() if anomaly == "rerun"]
    assert len(reruns) == 2
    assert "again 3 times after making changes" in reruns[0] and "again 6 times after making changes" in reruns[1]


def test_no_stall_when_each_run_tests_something_new(make_session):
    session = make_session()
    session.run(*[sh(f"python -c 'from app import f; print(f({n}))'", traceback("ZeroDivisionError: division by zero")
                     if n % 3 == 0 else f"{n * 7}") for n in range(1, 16)])
    assert "stall" not in [a for _, a in session.anomalies()]


def test_a_stall_due_when_a_fix_goes_in_waits_for_the_run_that_shows_it(make_session):
    session = make_session(doctrine={"max_turns_without_progress": 4})
    session.run(sh("python app.py", TYPE_ERROR), *[edit(n) for n in range(5)])  # the 5th edit: 5 turns without progress
    assert session.anomalies() == []
    session.run(sh("python app.py", "ok: 3 rows"))  # the fix worked: the task moved
    assert session.anomalies() == []
    session.run(*[edit(n) for n in range(5, 11)])  # and when edits go on without showing anything, it comes
    assert [a for _, a in session.anomalies()] == ["stall"]


def test_a_stall_says_nothing_new_after_the_agent_was_told_it_is_stuck(make_session):
    session = make_session(doctrine={"max_turns_without_progress": 5})
    session.run(sh("python app.py", TYPE_ERROR))
    for n in range(3):
        session.run(edit(n), sh("python app.py", TYPE_ERROR))
    assert session.anomalies() == [(7, "rerun")]  # the stall due at 7 too is left out: the rerun says it better
    session.run(*[edit(n) for n in range(3, 9)])
    assert session.anomalies() == [(7, "rerun")]


def test_no_pace_emergency_while_a_working_fix_goes_in(make_session):
    session = make_session()
    turns = [sh("python app.py", traceback(f"ValueError: bad value {n}"), pace="emergency") for n in range(3)]
    turns += [edit(n) | {"pace": "emergency"} for n in range(3)]
    session.run(*turns, sh("python app.py", "ok", pace="emergency"))
    assert "pace" not in [a for _, a in session.anomalies()]
    assert not any(r.paused for r in session.results)


# a pause only on proof -----------------------------------------------------------------

def test_an_agent_that_changes_course_after_steering_is_never_paused(make_session):
    session = make_session()
    session.run(*[sh("python app.py", TYPE_ERROR)] * 3)
    session.run(sh("cat app.py", "x = 'a' + 1"), edit(1), sh("python app.py", TYPE_ERROR), edit(2), sh("python app.py", "done"))
    assert not any(r.paused or r.blocked for r in session.results)


def test_the_same_action_with_the_same_result_after_steering_is_the_proof(make_session):
    session = make_session(doctrine={"breaker": {"enabled": False}})
    session.run(*[sh("python app.py", TYPE_ERROR)] * 5)
    assert actions(session) == [(3, "steer:loop"), (5, "pause")]
    # the pause says what the steering was about: the call and its error
    assert "Paused: after the steering about `python app.py` (TypeError: " in session.results[-1].pause_text
    assert "you did the same twice more" in session.results[-1].pause_text


def test_no_pause_while_the_progress_signal_moves(make_session):
    session = make_session(doctrine={"breaker": {"enabled": False}, "escalation": {"pause_after_ignored": 1}})
    session.run(*[sh("python app.py", TYPE_ERROR)] * 3)
    session.run(sh("cat README.md", "# app"))  # something new learned: the task moved
    assert not any(r.paused for r in session.results)


def test_after_the_user_resumes_the_same_episode_is_neither_said_nor_paused_again(make_session):
    session = make_session(doctrine={"breaker": {"enabled": False}})
    session.run(*[sh("python app.py", TYPE_ERROR)] * 5)
    assert session.results[-1].paused
    session.run(*[sh("python app.py", TYPE_ERROR)] * 6)  # the user resumed: they have decided
    assert actions(session) == [(3, "steer:loop"), (5, "pause")]


def test_a_rerun_after_a_loop_about_the_same_call_and_result_says_nothing_new(make_session):
    """Told in a loop steering that running it again will not change the result, blocked, paused
    and resumed, the agent runs it once more: a rerun of it "with nothing changed" is the
    same episode, said already; edits in between that do not take effect are news."""
    missing = sh("javac -cp .:lib/* Repro.java", "/bin/bash: line 50836: javac: command not found")
    session = make_session()
    session.run(missing, sh("/usr/bin/javac Repro.java", "/bin/bash: /usr/bin/javac: No such file or directory"), *[missing] * 5)
    assert session.results[-1].paused
    session.run(missing, sh("ls", "Repro.java lib"), missing)
    assert [a for a in actions(session) if a[1].startswith("steer")] == [(5, "steer:loop")]
    session.run(sh("sed -i 's/a/b/' Repro.java"), missing, sh("sed -i 's/b/c/' Repro.java"), missing,
                sh("sed -i 's/c/d/' Repro.java"), missing)
    assert actions(session)[-1][1] == "steer:rerun" and "No effect" in session.steering()[-1][2]


def test_the_emergency_is_not_raised_again_right_after_a_resume(make_session):
    session = make_session(doctrine={"breaker": {"enabled": False}})
    same = traceback("ConnectionError: registry refused the upload")
    session.run(sh("python deploy.py", "deployed"), *[sh(f"python deploy.py --try {n}", same) for n in range(3)])
    session.run(*[sh(f"python deploy.py --try {n}", same, pace="emergency") for n in range(3, 6)])
    assert session.results[-1].paused
    session.run(*[sh(f"python deploy.py --try {n}", same, pace="emergency") for n in range(6, 10)])
    assert [a for a in actions(session) if a[1] in ("steer:pace", "pause")] == [(5, "steer:pace"), (7, "pause")]


def test_after_a_resume_turns_without_progress_count_from_the_resume(make_session):
    """Paused on replies without a tool call, then resumed: supervision started over, as the
    pause notice says. The turns before the pause are not counted into a stall at once; the
    turns after the resume are, once they pass the doctrine's limit."""
    session = make_session(doctrine={"max_turns_without_progress": 6})
    session.run(sh("ls", "app.py"), *[{}] * 7)
    assert actions(session) == [(4, "steer:loop"), (8, "pause")]
    # resumed: looks that show nothing new, but not yet more than 6 turns since the resume
    session.run(*[sh(f"cat copy{n}.py", "app.py") for n in range(7)])
    assert actions(session)[2:] == []
    session.run(sh("cat copy7.py", "app.py"))
    assert actions(session)[2:] == [(16, "steer:stall")]
    assert session.steering()[-1][2].startswith("[SUPERVISOR] Stall: 7 turns without progress")


def test_an_htn_count_that_is_not_updated_starts_no_new_episode_each_turn(make_session):
    """A plan layer whose count of turns without progress stays the same from turn to turn (it
    counts its own steps, or was not updated) moved no progress: the PACE emergency is said
    once (the stall it holds says nothing new), not again each turn as if the task had moved
    and stopped anew."""
    session = make_session(doctrine={"breaker": {"enabled": False}, "escalation": {"pause": False, "pause_after_emergency": False}})
    plan = {"turns_since_progress": 20, "current_step": "write the CSV writer", "plan_name": "export"}
    session.run(*[sh(f"cat src/part{n}.py", f"# part {n}", htn=plan, pace="emergency") for n in range(12)])
    assert [a for a in actions(session) if a[1].startswith("steer")] == [(1, "steer:pace")]
    # the count going down is progress: a new episode, said once the task has stopped again
    session.run(sh("pytest -q", "3 passed", htn=plan | {"turns_since_progress": 0}))
    session.run(*[sh(f"cat docs/part{n}.md", f"# part {n}", htn=plan | {"turns_since_progress": n}, pace="emergency")
                  for n in range(1, 6)])
    assert [t for t, a in actions(session) if a == "steer:pace"] == [1, 16]


def test_the_plan_s_count_kept_survives_a_reload_and_anything_else_in_its_place_is_a_first_count():
    """Kept with the chat (JSON, as Agent-Zero saves it): after a reload the episode goes on."""
    data: dict = {}
    assert htn_turns_since_progress(data, 20, 5) == 20
    data = json.loads(json.dumps(data))
    assert htn_turns_since_progress(data, 20, 9) == 24  # the count not updated: 4 more turns, no progress
    assert htn_turns_since_progress(data, 0, 10) == 0  # it went down: progress
    for garbage in (None, "x", [1], [1.5, 2], [True, 3], {"a": 1}, [10**30, "y"]):
        data[HTN_PROGRESS_KEY] = garbage
        assert htn_turns_since_progress(data, 3, 12) == 3


def test_the_context_s_level_is_said_once_while_it_holds_and_again_when_the_fill_comes_back(make_session):
    """The task moving does not change the context's fill (Agent-Zero compresses the history and
    the fill stays high): 93% is said once, not every cooldown; falling to 85% after it is no
    news; back to 93% after the history was compressed to half is."""
    session = make_session()
    fills = [0.93] * 6 + [0.85] * 2 + [0.5] * 2 + [0.93] * 4
    session.run(*[sh(f"cat src/m{n}.py", f"def f{n}(): return {n}", context_fill=fill) for n, fill in enumerate(fills)])
    assert [t for t, a in session.anomalies() if a == "context"] == [1, 11]
    assert all("93% full and nearly exhausted" in text for _, a, text in session.steering() if a == "context")


def test_the_context_said_is_kept_however_many_other_episodes_are_said_after_it():
    """The episodes said are bounded, the oldest going first; the context's is not dropped for
    them, or a fill that held through a long task would be said again."""
    from org.contracts import Finding
    from org.supervisor.radio_check import SAID_KEPT, SupervisorState, decide

    state = SupervisorState()
    context = Finding(anomaly="context", severity="critical", template="context_critical", turn=1,
                      evidence={"percent": 93, "episode": "context:critical:90"})
    state.record(context)
    for n in range(SAID_KEPT + 5):
        state.record(Finding(anomaly="loop", template="loop_repeat", turn=2 + n, evidence={"episode": f"call:x{n}|e"}))
    assert len(state.said) == SAID_KEPT and "context:critical:90" in state.said
    assert "call:x0|e" not in state.said and f"call:x{SAID_KEPT + 4}|e" in state.said
    again = context.model_copy(update={"turn": SAID_KEPT + 20})
    assert decide([again], state, Doctrine()).steering == []


def test_a_context_filling_up_is_said_again_each_time_it_grew_by_five_points(make_session):
    session = make_session()
    fills = [0.80 + n / 100 for n in range(19)]  # 80% to 98%, a point a turn
    session.run(*[sh(f"cat src/m{n}.py", f"def f{n}(): return {n}", context_fill=fill) for n, fill in enumerate(fills)])
    said = [text.split(" full")[0] for _, a, text in session.steering() if a == "context"]
    assert said == ["[SUPERVISOR] Context is 80%", "[SUPERVISOR] Context is 85%", "[SUPERVISOR] Context is 90%",
                    "[SUPERVISOR] Context is 95%"]


# the waste that went unheard -------------------------------------------------------------

def test_reruns_count_across_looks(make_session):
    session = make_session()
    for n in range(4):
        session.run(sh("python reproduce.py", TYPE_ERROR), sh(f"grep -n 'concat' src/m{n}.py", f"{n}: x = a + b"))
    session.run(sh("python reproduce.py", TYPE_ERROR))
    [(turn, anomaly, text)] = session.steering()
    assert anomaly == "rerun" and text.startswith("[SUPERVISOR] Rerun: you ran `python reproduce.py` 3 more times")


def test_the_same_failing_edit_retried_with_only_its_indentation_changed_is_a_loop(make_session):
    rejected = ("ERRORS:\n- E999 IndentationError: unexpected indent\n\n"
                "Your changes have NOT been applied. Please fix your edit command and try again.\n")
    session = make_session()
    for indent in (4, 8, 2):
        session.run(sh(f"edit 12:12\n{' ' * indent}return total\nend_of_edit", rejected), sh("open app.py 12", "12: return total"))
    [(turn, anomaly, text)] = session.steering()
    assert (turn, anomaly) == (5, "loop") and "E999 IndentationError" in text and "3 times" in text


def test_replies_without_a_tool_call_in_a_row(make_session):
    session = make_session()
    session.run(sh("ls", "app.py"), *[{"response": f"I will now fix it ({n})."} for n in range(3)])
    [(turn, anomaly, text)] = session.steering()
    assert (turn, anomaly) == (4, "loop") and "last 3 replies called no tool" in text


GO_ON = ("Please continue working on the task on whatever approach you think is suitable.\n"
         "When you think you have solved the question, please use the finish tool and include your final answer in the message "
         "parameter of the finish tool.\nIMPORTANT: YOU SHOULD NEVER ASK FOR HUMAN HELP.\n")


def test_replies_without_a_tool_call_each_told_to_go_on_are_still_in_a_row(make_session):
    """OpenHands answers a reply without a tool call with "Please continue working on the task":
    a message that begins no new task, so the replies stay in a row (OpenHands with GLM-4.6,
    django-12184: 12 malformed calls in a row, none steered)."""
    malformed = "<function>execute_bash>\n<parameter=command>python t.py</parameter>"
    session = make_session()
    session.run(sh("ls", "app.py"), {"response": malformed}, *[{"user": GO_ON, "response": malformed} for _ in range(2)])
    [(turn, anomaly, text)] = session.steering()
    assert (turn, anomaly) == (4, "loop") and "last 3 replies called no tool" in text


def test_a_user_telling_the_agent_to_go_on_keeps_the_task_s_evidence_and_a_new_task_starts_afresh(make_session):
    broken = traceback("ModuleNotFoundError: No module named 'flask'")
    session = make_session()
    session.run(*[sh("python app.py", broken)] * 2, {"user": "continue", **sh("python app.py", broken)})
    assert session.anomalies() == [(3, "loop")]  # the third time, across the user's "continue"
    session = make_session()
    session.run(*[sh("python app.py", broken)] * 2, {"user": "Now write the README.", **sh("python app.py", broken)})
    assert session.anomalies() == []  # a new task: its first failure


def farewells(n: int) -> list[dict]:
    return [sh(f"echo 'I could not fix the bug, attempt {i}. Goodbye.'", f"I could not fix the bug, attempt {i}. Goodbye.")
            for i in range(n)]


def test_farewell_echoes_are_not_progress(make_session):
    session = make_session(doctrine={"max_turns_without_progress": 6})
    session.run(sh("python app.py", TYPE_ERROR), *farewells(11))
    assert "stall" in [a for _, a in session.anomalies()]


def test_calls_that_only_print_the_agent_s_own_text_are_replies_without_a_tool(make_session):
    """An agent that gave up and says goodbye through `echo`, each time anew: told once, on the
    third, never blocked or paused."""
    session = make_session()
    session.run(sh("python app.py", TYPE_ERROR), *farewells(11))
    [(turn, anomaly, text)] = session.steering()
    assert (turn, anomaly) == (4, "loop")
    assert text.startswith("[SUPERVISOR] Loop: your last 3 calls only printed text you wrote (the latest: `echo 'I could not")
    assert not any(r.blocked or r.paused for r in session.results)


def test_commands_of_shell_comments_only_run_nothing_and_are_replies_without_a_tool(make_session):
    session = make_session()
    session.run(sh("javac Repro.java", "/bin/bash: line 5: javac: command not found"),
                *[sh(f"# Step {n}. Find out which package manager this system has\n# then install a JDK with it") for n in range(3)])
    [(turn, anomaly, text)] = session.steering()
    assert (turn, anomaly) == (4, "loop") and "only printed text you wrote (the latest: `# Step 2.`)" in text


def test_status_echoes_between_real_work_and_thinking_tools_are_no_loop(make_session):
    session = make_session()
    session.run(sh("echo 'Step 1: reproduce'", "Step 1: reproduce"), sh("python app.py", TYPE_ERROR),
                sh("echo 'Step 2: fix'", "Step 2: fix"), sh("echo \"$PATH\"", "/usr/bin"), sh("echo done > status.txt"),
                sh("sleep 5"), sh("sleep 10"), sh("sleep 15"),
                *[{"tool": "sequential-thinking.sequentialthinking", "args": {"thought": f"Thought {n}"}, "output": "ok"}
                  for n in range(4)])
    assert "loop" not in [a for _, a in session.anomalies()]


def test_waiting_is_not_progress(make_session):
    """Sleeping between polls of a run that shows nothing new moves nothing."""
    session = make_session(doctrine={"max_turns_without_progress": 6})
    session.run(sh("python tests/runtests.py &", "started"))
    session.run(*[sh(f"sleep {30 * (n + 1)} && echo 'Done waiting'", "Done waiting") for n in range(8)])
    assert "stall" in [a for _, a in session.anomalies()]


def test_thinking_aloud_is_not_progress(make_session):
    """OpenHands' `think` and the MCP server's `sequentialthinking` record the agent's own words."""
    for tool in ("think", "sequential-thinking.sequentialthinking"):
        session = make_session(doctrine={"max_turns_without_progress": 6})
        session.run(sh("python app.py", TYPE_ERROR),
                    *[{"tool": tool, "args": {"thought": f"Maybe the bug is in part {n}."}, "output": "Your thought has been logged."}
                      for n in range(8)])
        assert "stall" in [a for _, a in session.anomalies()], tool


def test_debug_prints_that_never_appear(make_session):
    session = make_session()
    session.run(sh("python run_case.py", "result: []"))
    for n in range(8):
        session.run(sh(f"sed -i '{n + 3}i print(\"DEBUG\", items)' lib/core.py"), sh("python run_case.py", "result: []"))
    anomalies = session.anomalies()
    assert ("rerun" in [a for _, a in anomalies]) and anomalies[0][0] <= 13


def test_the_count_a_steering_was_said_with_survives_a_reload_and_a_new_chat_forgets_it():
    from org.contracts import Finding
    from org.supervisor.radio_check import SupervisorState

    state = SupervisorState()
    state.record(Finding(anomaly="rerun", template="rerun", turn=5, evidence={"episode": "rerun:x|y", "times": 3}))
    reloaded = SupervisorState.from_dict(state.to_dict())
    assert reloaded.told == {"rerun:x|y": 3}
    reloaded.forget_episodes()
    assert reloaded.told == {}


def test_nothing_is_said_after_the_agent_gave_its_answer(make_session):
    """The answer ends the task: steering then would greet the user's next message. PACE's level,
    still contingent from the failures before it, was said there with no cause left to name."""
    session = make_session(doctrine={"breaker": {"enabled": False}, "escalation": {"pause": False}})
    session.run(*[sh("cat /etc/app.yml", "cat: /etc/app.yml: Permission denied")] * 3)
    session.run(*[sh(f"cat /etc/app{n}.yml", f"cat: /etc/app{n}.yml: Permission denied") for n in range(2)])
    session.run({"tool": "response", "args": {"text": "I could not read the settings."}, "output": "I could not read the settings."})
    assert session.anomalies() == [(3, "loop")]
    session.run(*[sh(f"cat /srv/app{n}.yml", f"cat: /srv/app{n}.yml: Permission denied") for n in range(6)])
    assert "pace" in [anomaly for _, anomaly in session.anomalies()]  # a new stretch of failures is said as before


def test_a_persisting_anomaly_is_worded_once_whatever_the_radio_check_keeps_for_itself():
    """The outcome a steering answers moves on at every turn, and a stall's or PACE's episode names
    the turn it began: neither is worded, so the same text is not worded again for them. A value
    the text does word (the count) is."""
    from org.contracts import Finding
    from org.supervisor.steering import SteeringBook

    book = SteeringBook()
    worded: list[str] = []
    render = book._render
    book._render = lambda finding, repeated: worded.append(finding.template) or render(finding, repeated)

    def pace(turn: int, failed: int) -> Finding:
        return Finding(anomaly="pace", severity="emergency", template="pace_emergency", turn=turn, evidence={
            "level": "emergency", "description": "Unrecoverable", "failed": failed, "latest": "boom", "stuck": 20,
            "since": turn - 20, "episode": f"pace:emergency:{turn - 20}", "at": turn})

    texts = {book.render(pace(turn, 8)) for turn in range(30, 40)}
    assert len(texts) == 1 and worded == ["pace_emergency"]
    assert "the last 12 calls failed" in book.render(pace(41, 12)) and len(worded) == 2
