"""Supervisor behaviour beyond the eight criteria: coexistence with Agent-Zero's own
warnings, state across a chat reload, health correction, steering templates."""

from __future__ import annotations

import json

from conftest import Session, fail, ok

from org.contracts import SaluteReport
from org.kernel.paths import OrganizationLayout
from org.kernel.salute import correct_health
from org.supervisor.steering import count_sentences


def test_no_loop_steering_on_the_turn_agent_zero_warned_about_a_repeat(make_session, era):
    session = make_session(era=era, doctrine={"radio_check_interval_turns": 2})
    same = fail("code_execution_tool")
    session.run(*[{**same, "response": f"r{n}"} for n in (1, 2, 3)])  # a loop, not yet checked (turn 3)
    results = session.run({**same, "response": "r3"})  # Agent-Zero's own repeat check fires on turn 4
    assert results[0].native_warnings and results[0].steering == []
    session.run({**same, "response": "r5"}, {**same, "response": "r6"})
    assert [(t, a) for t, a in session.anomalies() if a == "loop"] == [(6, "loop")]  # heard at the next check


def test_a_model_that_keeps_sending_the_same_message_after_agent_zero_s_warnings_is_paused(make_session, era):
    """Agent-Zero (v1.7 and older) warns about a message sent again unchanged and runs no tool,
    for as long as the model goes on: its warning is the steering, and the same message after it
    4 times is the proof it went unheard (it runs nothing: the proof a call that works needs; on
    real chats models sent it 3 to 5 times and went on). The model stuck so is paused; one that
    changes is not."""
    session = make_session(era=era)
    same = {**fail("code_execution_tool"), "response": "the same message"}
    session.run(same, same, same, same, same)  # warned at 2 to 5
    assert not any(r.paused for r in session.results) and all(r.native_warnings for r in session.results[1:])
    session.run(same)  # warned a fifth time: its warning went unheard 4 times
    assert session.results[-1].paused
    assert session.results[-1].pause_text.startswith("[SUPERVISOR] Paused: after the steering about the message you keep sending unchanged, you did "
                                                     "the same 4 times more. When you are resumed, change your approach before anything else.")
    session.run(same, same, same)  # the user resumed the chat and the task has not moved since: they have decided
    assert not any(r.paused for r in session.results[-3:])

    changing = make_session(era=era)
    changing.run(*[{**fail("code_execution_tool"), "response": "a message"}] * 2, *[{**ok("code_execution_tool", n), "response": f"new {n}"}
                                                                                   for n in range(3)])
    assert not any(r.paused for r in changing.results)


def test_replies_without_a_tool_call_that_go_on_after_steering_are_paused_once(make_session):
    """In Agent-Zero every reply must call a tool: told at the third reply without one, the model
    that replies so four times more is paused (such a reply runs nothing: the proof a call that
    works needs); after the user resumes, not again for that stretch."""
    session = make_session()
    session.run(ok("code_execution_tool", 1), *[{"response": f"Still thinking, step {n}."} for n in range(12)])
    assert [(r.turn, a) for r in session.results for a, _ in r.steering] == [(4, "loop")]
    assert [r.turn for r in session.results if r.paused] == [8]
    assert "after the steering about your replies that call no tool, you did the same 4 times more" in session.results[7].pause_text


def test_a_model_that_finds_the_format_after_five_replies_without_a_tool_is_not_paused(make_session):
    """Models that cannot get the format right try another way each time (mini-swe-agent runs of
    GPT-5 models on SWE-bench: a heredoc closed on the fence's line, five and six times, then the
    right form and a fix that succeeded): steered at the third, not paused at the sixth."""
    session = make_session()
    session.run(ok("code_execution_tool", 1), *[{"response": f"python - <<'PY'\nprint({n})\nPY```"} for n in range(6)],
                ok("code_execution_tool", 2))
    assert [(r.turn, a) for r in session.results for a, _ in r.steering] == [(4, "loop")]
    assert not any(r.paused for r in session.results)


def test_every_steering_is_tagged_and_at_most_three_sentences(make_session):
    session = make_session(doctrine={"radio_check_interval_turns": 1, "max_turns_without_progress": 2})
    session.run(*[fail(t) for t in "abc"], *[fail("d") for _ in range(3)], ok("x", 1, context_fill=0.95),
                *[{"response": f"r{i}", "htn": {"turns_since_progress": 9, "current_step": "step. with. dots!"}} for i in range(4)])
    texts = [text for _, _, text in session.steering()]
    assert len(texts) >= 4
    for text in texts:
        assert text.startswith("[SUPERVISOR] ") and count_sentences(text) <= 3, text
    anomalies = {"Supervisor: " + a for a in ("stall", "loop", "churn", "rerun", "context", "cascade", "pace")}
    logged = [i for i in session.agent.context.log.items if i.heading in anomalies]
    assert [i.content for i in logged] == texts and all(i.type == "warning" for i in logged)


def test_turn_counter_and_cooldowns_survive_a_chat_reload(make_session, org_home):
    session = make_session(doctrine={"radio_check_interval_turns": 1, "max_turns_without_progress": 10})
    plan = {"plan_name": "p", "current_step": "s"}
    session.run(ok("t", 1, htn={**plan, "turns_since_progress": 11}))
    assert session.anomalies() == [(1, "stall")]
    # Agent-Zero saves agent.data without "_" keys, as JSON, and restores it into a new agent
    saved = json.loads(json.dumps({k: v for k, v in session.agent.data.items() if not k.startswith("_")}))
    reloaded = Session(org_home, "D")
    reloaded.agent.data.update(saved)
    reloaded.results = list(session.results)
    reloaded.run(*[ok("t", i, htn={**plan, "turns_since_progress": 11 + i}) for i in range(2, 5)])
    assert reloaded.agent.data["org_supervisor"]["turn"] == 4
    assert reloaded.anomalies() == [(1, "stall"), (4, "stall")]  # held at 2 and 3 after the reload


def test_supervisor_raises_salute_health_when_it_sees_worse(make_session, org_home):
    session = make_session(doctrine={"radio_check_interval_turns": 1, "salute_interval_turns": 50})
    session.run(ok("t", 1), fail("a"), fail("b", output="PermissionError: no"))
    before = SaluteReport.model_validate_json((org_home / "reports" / "codegen_latest.json").read_text())
    assert before.status.health == "degraded" and before.supervisor is None  # PACE alternate: two tools failing
    session.run(fail("c", output="ConnectionError: Connection refused"))
    after = SaluteReport.model_validate_json((org_home / "reports" / "codegen_latest.json").read_text())
    assert after.status.health == "critical" and after.status.health_source == "supervisor"
    assert after.supervisor.anomalies == ["cascade"] and after.reason == "supervisor"


def test_health_is_corrected_back_down_but_never_below_the_dispatchers_numbers(make_session, org_home):
    session = make_session(doctrine={"salute_interval_turns": 50})
    session.run(ok("t", 1))
    latest = org_home / "reports" / "codegen_latest.json"
    assert correct_health(OrganizationLayout(org_home), "codegen", "critical", ["loop"], 2)
    assert SaluteReport.model_validate_json(latest.read_text()).status.health == "critical"
    assert correct_health(OrganizationLayout(org_home), "codegen", "nominal", [], 3)  # the anomaly cleared
    assert SaluteReport.model_validate_json(latest.read_text()).status.health == "nominal"
    report = SaluteReport.model_validate_json(latest.read_text())
    report.status.pace_level = "contingent"
    latest.write_text(report.model_dump_json())
    assert correct_health(OrganizationLayout(org_home), "codegen", "nominal", [], 4)  # the PACE level says critical
    assert SaluteReport.model_validate_json(latest.read_text()).status.health == "critical"


def test_user_steering_overrides_apply_and_a_broken_one_falls_back(make_session, org_home):
    (org_home / "steering.yaml").write_text(
        'loop_repeat: "[SUPERVISOR] Same $tool call again ($times times). Try another way."\n'
        'cascade: "No tag here."\n'
    )
    session = make_session(doctrine={"radio_check_interval_turns": 1})
    session.run(*[fail("x") for _ in range(3)], ok("y", 1), *[fail(t) for t in "abc"])
    texts = [text for _, _, text in session.steering()]
    assert texts[0] == "[SUPERVISOR] Same x call again (3 times). Try another way."
    assert any(t.startswith("[SUPERVISOR] Cascade:") for t in texts[1:])  # the default, since the override was rejected


def test_one_message_per_episode_and_a_new_one_when_the_evidence_changes(make_session):
    session = make_session(doctrine={"radio_check_interval_turns": 1, "cooldown_turns": 2, "escalation": {"pause": False},
                                     "breaker": {"enabled": False}})
    session.run(*[fail("x") for _ in range(6)])
    assert [t for t, a in session.anomalies() if a == "loop"] == [3]  # nothing changed: nothing more is said
    session.run(*[fail("x", output="cat: /y: No such file or directory") for _ in range(3)])
    texts = [text for _, a, text in session.steering() if a == "loop"]
    assert len(texts) == 2 and "/x" in texts[0] and "/y" in texts[1]


def test_subordinate_agents_are_supervised_but_write_no_reports(make_session, org_home):
    session = make_session(doctrine={"radio_check_interval_turns": 1})
    session.agent.number = 1
    session.run(*[fail("x") for _ in range(3)])
    assert [a for _, a in session.anomalies()] == ["loop"]
    assert not list((org_home / "reports").glob("*_latest.json"))


def test_no_loop_steering_when_newer_agent_zero_counted_an_unusable_response_this_turn(make_session):
    from org.standin.agent import LoopData
    from org.kernel.turn_readings import native_repeat_fired

    loop_data = LoopData(iteration=4, last_response="a")
    loop_data.params_persistent["_unusable_response_failures"] = {"iteration": 4, "count": 2}
    assert native_repeat_fired(loop_data)
    loop_data = LoopData(iteration=5, last_response="b")
    loop_data.params_persistent["_unusable_response_failures"] = {"iteration": 4, "count": 2}
    assert not native_repeat_fired(loop_data)


def test_a0org_validate_recognises_a_steering_override_file_without_a_modeline(org_home):
    from org.validate import validate_file

    path = org_home / "steering.yaml"
    path.write_text('stall: "[SUPERVISOR] Stalled $turns turns. Change approach."\n')
    assert validate_file(path) == []
    path.write_text('stall: "[SUPERVISOR] Stalled $turns turns."\nloop_repeat: "[SUPERVISOR] $secret"\n')
    assert [str(p) for p in validate_file(path)] == [f"{path}:2: loop_repeat: unknown placeholder(s) $secret; allowed: $action, $advice, $outcome, $times, $tool"]
