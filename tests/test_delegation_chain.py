"""A delegation chain: subordinates handing their task on as it came, before doing any of it.

Each agent of the chain runs the pack's hook files as the stand-in runs them; a subordinate is
made as ``call_subordinate`` makes one (the next number, the same chat, its superior in its data),
and its turns run while its superior's delegation is the latest call its superior made.
"""

from __future__ import annotations

import pytest

from org.contracts import TraceHeader, TraceTurn
from org.replay import prepare_organization
from org.standin.agent import StandInAgent
from org.standin.session import StandInSession, TurnResult
from org.supervisor.handoff import relayed_by, relays, same_task

POEM = "Write a short poem about programmers and save it to /tmp/poem.txt."


@pytest.fixture
def organization(org_home):
    def prepare(doctrine: dict | None = None) -> None:
        prepare_organization(org_home, TraceHeader(kind="header", role="codegen", doctrine=doctrine or {}))
    prepare()
    return prepare


def delegate(message: str, answer: str = "done") -> dict:
    return {"tool": "call_subordinate", "args": {"message": message}, "output": answer}


def run(session: StandInSession, *turns: dict) -> list[TurnResult]:
    return session.run([TraceTurn.model_validate({"turn": n, **t}) for n, t in enumerate(turns, start=1)])


def chain(length: int, era: str = "D") -> list[StandInSession]:
    """Agent 0 and ``length`` subordinates below it, each with a task started."""
    sessions = [StandInSession(era)]
    for _ in range(length):
        sessions.append(StandInSession(era, agent=sessions[-1].agent.subordinate()))
    for session in sessions:
        session.new_task("the task")
    return sessions


def test_the_second_subordinate_handing_the_task_on_as_it_came_is_blocked(organization, era):
    a0, a1, a2 = chain(2, era)
    assert not run(a0, delegate(POEM))[0].blocked  # agent 0 handing the user's task on is an ordinary choice
    assert not run(a1, delegate(f"Please do this: {POEM} Report back when done."))[0].blocked  # the first relay is let through
    result = run(a2, delegate(f"{POEM} Make it rhyme."))[0]
    assert result.blocked is not None, result
    text = result.blocked[1]
    assert text.startswith("[SUPERVISOR] Blocked: A1 passed this task down to you as it came")
    assert "Write a short poem about programmers" in text and "do it yourself with your own tools" in text
    again = run(a2, delegate(f"Please: {POEM}"))[0]  # a delegation is no work of its own: still a relay
    assert again.blocked is not None


def test_a_subordinate_handing_on_a_smaller_part_is_no_relay(organization):
    a0, a1, a2, a3 = chain(3)
    run(a0, delegate("Build the shop: the payment, cart and catalogue modules, each with its tests, and document them."))
    run(a1, delegate("Write app/pay.py with a charge() function."))
    assert not run(a2, delegate("Write app/pay.py with a charge() function."))[0].blocked  # one relay after a split
    assert run(a3, delegate("Write app/pay.py, a charge() function."))[0].blocked  # the second relay in a row


def test_a_subordinate_that_did_some_of_the_work_first_may_hand_the_rest_on(organization):
    a0, a1, a2 = chain(2)
    run(a0, delegate(POEM))
    run(a1, {"tool": "code_execution_tool", "args": {"runtime": "terminal", "code": "ls /tmp"}, "output": "notes.txt"},
        delegate(POEM))
    assert not run(a2, delegate(POEM))[0].blocked


def test_the_block_follows_the_doctrine_s_breaker_and_exempt_tools(organization):
    for doctrine in ({"breaker": {"enabled": False}}, {"loop": {"exempt_tools": ["call_subordinate"]}}):
        organization(doctrine)
        a0, a1, a2 = chain(2)
        run(a0, delegate(POEM))
        run(a1, delegate(POEM))
        assert not run(a2, delegate(POEM))[0].blocked, doctrine


def test_a_chain_s_evidence_is_read_from_plain_values():
    record = {"message": POEM, "relays": 1}
    assert relays(2, record, POEM, own_work=False) == 2
    assert relays(0, record, POEM, own_work=False) == 0  # agent 0 is handed the user's task, not a superior's
    assert relays(2, record, POEM, own_work=True) == 0
    assert relays(2, None, POEM, own_work=False) == 0
    assert relays(2, {"message": POEM, "relays": "x"}, POEM, own_work=False) == 1  # a broken count starts again
    assert relays(2, record, "Check the weather in Paris.", own_work=False) == 0
    assert same_task("Fix the login bug in auth.py", "Please fix the login bug in auth.py and run the tests")
    assert not same_task("Fix the login bug in auth.py", "Read auth.py")
    assert not same_task("", "anything")
    assert relayed_by(2, 2) == "A1" and relayed_by(4, 3) == "A2 and A3" and relayed_by(5, 4) == "A2, A3 and A4"


def test_a_subordinate_s_superior_is_read_through_agent_zero_s_data():
    top = StandInAgent()
    sub = top.subordinate()
    from org.kernel.agent_scope import HANDOFF_KEY, handed_down
    assert handed_down(sub) is None and handed_down(top) is None
    top.data[HANDOFF_KEY] = {"message": POEM, "relays": 0}
    assert handed_down(sub) == {"message": POEM, "relays": 0}
    top.data[HANDOFF_KEY] = "garbage"
    assert handed_down(sub) is None
