"""The eight testing criteria of the supervisor-loop specification, run through the real
hook files in a stand-in agent, on both Agent-Zero API eras."""

from __future__ import annotations

import sys

from conftest import fail, ok


def _audit_opens():
    opened: list[str] = []
    state = {"on": False}

    def hook(event, args):
        if state["on"] and event == "open":
            opened.append(str(args[0]))

    sys.addaudithook(hook)
    return opened, state


_OPENED, _AUDIT = _audit_opens()


# Test 1: no organization, no work
def test_no_active_organization_means_no_checks_no_logs_no_steering_no_file_reads(make_session, era):
    session = make_session(era=era, doctrine={"radio_check_interval_turns": 1}, active=False)
    _OPENED.clear()
    _AUDIT["on"] = True
    try:
        session.run(*[fail("code_execution_tool") for _ in range(6)], *[fail(t) for t in ("a", "b", "c")])
    finally:
        _AUDIT["on"] = False
    assert session.steering() == []
    assert session.agent.context.log.items == []
    assert _OPENED == [], f"files opened with no organization active: {_OPENED}"
    assert not any(key.startswith(("_org", "org_", "_tool_failures")) for key in session.agent.data)
    assert getattr(session.agent, "_org_active_role", None) is None
    assert not (session.home / "reports").exists() or not any((session.home / "reports").glob("*_latest.json"))


# Test 2: normal operation
def test_normal_operation_checks_on_schedule_and_injects_nothing(make_session, era):
    session = make_session(era=era)
    session.run(*[ok("code_execution_tool", i) for i in range(8)], {"tool": "response", "args": {"text": "done"}, "output": "done"})
    assert session.steering() == []
    assert not any("[SUPERVISOR]" in str(m.content) for m in session.agent.history)
    state = session.agent.data["org_supervisor"]
    assert state["turn"] == 9 and state["checks"] == 9 and state["injections"] == 0  # a radio check every turn, none steered
    assert (session.home / "reports" / "codegen_latest.json").exists()


# Test 3: stall detection, from HTN state and from the pack's own progress signal
def test_stall_from_htn_state_references_the_step(make_session, era):
    session = make_session(era=era, doctrine={"radio_check_interval_turns": 1, "max_turns_without_progress": 4})
    plan = {"plan_name": "migrate_db", "current_step": "apply migration 0042"}
    session.run(*[ok("code_execution_tool", i, htn={**plan, "turns_since_progress": i}) for i in range(1, 6)])
    assert session.anomalies() == [(5, "stall")]
    text = session.steering()[0][2]
    assert text.startswith("[SUPERVISOR] Stall") and "apply migration 0042" in text


def test_stall_without_htn_uses_the_pack_progress_signal(make_session, era):
    # (the pause when such replies go on after the loop steering is tested on its own, in test_supervisor_behaviour)
    session = make_session(era=era, doctrine={"radio_check_interval_turns": 1, "max_turns_without_progress": 4, "escalation": {"pause": False}})
    session.run(ok("code_execution_tool", 1))
    # turns with no tool call (talking, not acting) make no progress
    session.run(*[{"response": f"thinking about it ({i})"} for i in range(5)])
    # three replies without a tool call are a loop of their own; the stall is heard beside it
    assert session.anomalies() == [(4, "loop"), (6, "stall")]  # 5 turns without progress > 4


# Test 4: loop detection
def test_repeated_failing_operation_is_a_loop_after_three(make_session, era):
    session = make_session(era=era, doctrine={"radio_check_interval_turns": 1})
    session.run(fail("code_execution_tool"), fail("code_execution_tool"))
    assert session.steering() == []
    session.run(fail("code_execution_tool"))
    assert session.anomalies() == [(3, "loop")]
    text = session.steering()[0][2]
    assert text.startswith("[SUPERVISOR]") and not text.startswith("Tool guidance:")
    assert "code_execution_tool" in text and "3 times" in text


def test_oscillation_between_two_failing_tools_is_a_loop(make_session, era):
    session = make_session(era=era, doctrine={"radio_check_interval_turns": 1})
    session.run(fail("search_engine", output="ConnectionError: Connection refused"),
                fail("document_query", output="FileNotFoundError: nope"),
                fail("search_engine", output="ConnectionError: Connection refused"))
    assert session.steering() == []
    session.run(fail("document_query", output="FileNotFoundError: nope"))
    assert session.anomalies() == [(4, "loop")]
    assert "alternating between `search_engine /x` and `document_query /x`" in session.steering()[0][2]


# Test 5: context exhaustion
def test_context_warning_at_80_and_urgent_at_90(make_session, era):
    session = make_session(era=era, doctrine={"radio_check_interval_turns": 1})
    session.run(ok("t", 1, context_fill=0.79))
    assert session.steering() == []
    session.run(ok("t", 2, context_fill=0.80))
    session.run(ok("t", 3, context_fill=0.90))
    assert session.anomalies() == [(2, "context"), (3, "context")]
    assert "80% full" in session.steering()[0][2]
    assert "90% full" in session.steering()[1][2] and "respond to the user" in session.steering()[1][2]


# Test 6: PACE response
def test_failures_push_pace_to_contingent_and_steering_quotes_the_role_plan(make_session, era):
    session = make_session(era=era, doctrine={"radio_check_interval_turns": 1})
    # five failures of one tool, each call another (not a loop), the same error each time (nothing new learned)
    session.run(*[fail("code_execution_tool", {"code": f"v{i}"}, "Traceback (most recent call last):\nValueError: bad") for i in range(5)])
    session.run(ok("text_editor", "x", output="Traceback (most recent call last):\nValueError: bad again", ok=False))
    assert session.results[-1].pace == "contingent"
    pace = [text for _, anomaly, text in session.steering() if anomaly == "pace"]
    assert pace and pace[0].startswith("[SUPERVISOR] PACE contingent")
    assert "The approach is failing" in pace[0]  # codegen's pace_plan.contingent.description


# Test 7: cooldown
def test_cooldown_holds_the_same_warning_for_three_turns(make_session, era):
    session = make_session(era=era, doctrine={"radio_check_interval_turns": 1, "max_turns_without_progress": 10})
    plan = {"plan_name": "p", "current_step": "s"}
    session.run(*[ok("t", i, htn={**plan, "turns_since_progress": 10 + i}) for i in range(1, 6)])
    # stalled from turn 1 on: warned at 1, held at 2 and 3, warned again at 4
    assert session.anomalies() == [(1, "stall"), (4, "stall")]


# Test 8: cascade detection
def test_three_different_tools_failing_is_a_cascade(make_session, era):
    session = make_session(era=era, doctrine={"radio_check_interval_turns": 1})
    session.run(fail("code_execution_tool", output="bash: cd: /srv/app: No such file or directory"),
                fail("text_editor", output="PermissionError: [Errno 13] Permission denied"))
    assert session.steering() == []
    session.run(fail("browser_agent", output="ConnectionError: Name or service not known"))
    assert session.anomalies() == [(3, "cascade")]
    assert "verify your assumptions" in session.steering()[0][2]
