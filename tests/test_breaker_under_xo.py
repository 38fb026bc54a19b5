"""The circuit breaker of a unit linked to a running XO: the XO's loop steering names the call it
is about, and the unit's breaker opens on it as on its own supervisor's loop steering; the calls
it blocks, with that steering, end in a pause after as many unanswered nudges.

In one process: a stand-in unit (the pack's real hook files) and an XO judging its reports on a
shared volume. Through real processes: tests/test_xo_processes.py's way, with tests/breaker_unit.py.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import ROOT
from test_escalation import TOOL, run_app
from test_unit_link import UNIT, deliver, drain, keyed, message, volume  # noqa: F401 (fixtures)
from test_xo_processes import procs  # noqa: F401 (fixture)
from volume_units import SIGNER, scenario_snapshot, test_home, unit_key

from org.contracts import Finding
from org.contracts.steering_message import SteeringMessage
from org.kernel.outcomes import LEDGER_KEY, canonical_signature
from org.macrocosm.link import ENV_UNIT_KEY
from org.macrocosm.policy import repeated_call
from org.macrocosm.signing import public_line
from org.macrocosm.volume import read_report
from org.macrocosm.xo import XO
from org.supervisor.microcosm import STATE_KEY
from org.supervisor.signals import signals_from_snapshot

RUN_APP = canonical_signature(TOOL, run_app()["args"])


@pytest.fixture
def sealed(keyed, monkeypatch, tmp_path):
    """A unit that takes only the test XO's signed steering and seals its reports."""
    key = tmp_path / "unit.key"
    key.write_text(unit_key(UNIT).hex() + "\n")
    key.chmod(0o600)
    monkeypatch.setenv(ENV_UNIT_KEY, str(key))
    return keyed


def applied(layout) -> list[SteeringMessage]:
    return [SteeringMessage.model_validate_json(p.read_text()) for p in sorted(layout.processed(UNIT).glob("*.json"))]


def ran(session) -> int:
    return sum(1 for r in session.results if not r.blocked)


def run_until_paused(session, calls: tuple = (), turns: int = 15) -> None:
    """Run the calls in turn (``python app.py`` failing, by default) until the chat is paused."""
    calls = calls or (run_app(),)
    for turn in range(turns):
        session.run(calls[turn % len(calls)])
        if session.results[-1].paused:
            return


#: when the XO's sweep answers the last report: before the next prompt is built, or while the model
#: answers (the usual case: its steering then arrives at the tool call)
XO_ANSWERS = {"before the next prompt": "message_loop_prompts_before", "while the model answers": "before_main_llm_call"}


def linked_to_xo(make_session, layout, monkeypatch, answers: str = "while the model answers"):
    """A stand-in unit and an XO that answers its latest report at the point ``answers`` names."""
    session = make_session()
    xo = XO(layout, "xo", test_home())

    def call(point, original=session.standin._call, **kwargs):
        if point == XO_ANSWERS[answers]:
            xo.sweep()
        return original(point, **kwargs)

    monkeypatch.setattr(session.standin, "_call", call)
    return session, xo


@pytest.mark.parametrize("answers", sorted(XO_ANSWERS))
def test_under_an_xo_a_call_that_keeps_failing_runs_at_most_four_times_then_the_chat_is_paused(make_session, sealed, monkeypatch, answers):
    session, xo = linked_to_xo(make_session, sealed, monkeypatch, answers)
    run_until_paused(session)

    assert session.results[-1].paused and ran(session) <= 4, [(r.turn, bool(r.blocked), r.paused) for r in session.results]
    loops = [m for m in applied(sealed) if m.anomaly == "loop" and m.kind == "steer"]
    assert loops and loops[0].call == RUN_APP and loops[0].signature
    headings = [i.heading for i in session.agent.context.log.items]
    assert "Supervisor: breaker open" in headings and "Supervisor: blocked" in headings
    assert {"Supervisor: paused", "Supervisor (XO xo): paused"} & set(headings)  # by the unit's breaker, or the XO on proof
    assert "Supervisor: loop" not in headings  # the XO steers; the unit's own supervisor stays quiet
    # a pause the unit made itself is in its report, and the XO takes it: it sends nothing more
    itself = "Supervisor: paused" in headings
    assert (read_report(sealed.report(UNIT)).signals.paused_turn is not None) == itself
    if itself:
        assert xo.sweep().sent == []
        assert xo._units[UNIT].paused_itself and xo._units[UNIT].paused_turn is not None
    blocked = [m.content for m in session.agent.history if isinstance(m.content, dict) and "tool_result" in m.content
               and m.content["tool_result"].startswith("[SUPERVISOR] Blocked")]
    assert blocked


def test_a_unit_that_pauses_itself_says_so_and_the_xo_sends_nothing_more(make_session, sealed, monkeypatch):
    """The XO steers once and then answers no report until the chat is paused (a slow XO):
    the unit's breaker blocks, pauses the chat itself, and its report tells the XO."""
    session = make_session()
    xo = XO(sealed, "xo", test_home())
    swept = []

    def call(point, original=session.standin._call, **kwargs):
        if point == "message_loop_prompts_before" and not any(swept):
            swept.append(xo.sweep().sent)
        return original(point, **kwargs)

    monkeypatch.setattr(session.standin, "_call", call)
    run_until_paused(session)

    headings = [i.heading for i in session.agent.context.log.items]
    assert session.results[-1].paused and ran(session) <= 4 and "Supervisor: paused" in headings
    report = read_report(sealed.report(UNIT))
    assert report.signals.paused_turn == report.signals.turn
    assert xo.sweep().sent == []
    assert xo._units[UNIT].paused_itself and xo._units[UNIT].paused_turn == report.signals.turn


def test_without_the_xos_loop_steering_the_unit_never_blocks(make_session, sealed):
    """The unit's own evidence alone opens nothing while the XO steers: the agent was not told."""
    session = make_session()
    for _ in range(6):
        session.run(run_app())
    assert ran(session) == 6 and not any(r.paused for r in session.results)
    assert not session.agent.data[STATE_KEY]["breakers"]


def xo_loop_steering(seq: int, call: str) -> dict:
    payload = message(seq)
    payload["call"] = call
    return payload


def test_a_loop_steering_opens_the_breaker_only_for_a_call_this_chat_repeated_and_failed(make_session, sealed):
    session = make_session()
    session.run(run_app(), run_app(), run_app(), {"tool": TOOL, "args": {"runtime": "terminal", "code": "ls"}, "output": "app.py"})
    ls = canonical_signature(TOOL, {"runtime": "terminal", "code": "ls"})
    deliver(sealed, xo_loop_steering(1, ls), SIGNER)  # worked: nothing to open
    deliver(sealed, xo_loop_steering(2, "0123456789abcdef"), SIGNER)  # never made here
    drain(session.agent)
    assert not session.agent.data[STATE_KEY]["breakers"]
    deliver(sealed, xo_loop_steering(3, RUN_APP), SIGNER)
    drain(session.agent)
    opened = session.agent.data[STATE_KEY]["breakers"][RUN_APP]
    assert opened["times"] == 3 and opened["action"] == "`python app.py`" and opened["other_since"] is True
    assert session.agent.data[STATE_KEY]["episode"]["loop"] == 1
    # another call ran since, so the breaker lets the next identical call through to try again, as the unit's own does
    session.run(run_app())
    assert not session.results[-1].blocked


def test_a_loop_steering_about_a_call_that_failed_fewer_times_than_the_breaker_needs_opens_nothing(make_session, sealed):
    session = make_session()
    session.run(run_app(), run_app())
    deliver(sealed, xo_loop_steering(1, RUN_APP), SIGNER)
    drain(session.agent)
    assert not session.agent.data[STATE_KEY]["breakers"]
    assert session.agent.data[LEDGER_KEY].outcomes[-1].signature == RUN_APP


def test_a_loop_steering_about_a_check_after_waits_opens_nothing(make_session, sealed):
    """A server still starting, checked after each `sleep`: the XO's loop steering about the check
    opens no breaker, as the unit's own steering does not (waiting is the server's time)."""
    check = {"tool": TOOL, "args": {"runtime": "terminal", "code": "curl -sS http://127.0.0.1:8000/"},
             "output": "curl: (7) Failed to connect to 127.0.0.1 port 8000 after 0 ms: Couldn't connect to server"}
    wait = {"tool": TOOL, "args": {"runtime": "terminal", "code": "sleep 5"}, "output": ""}
    session = make_session()
    session.run(check, wait, check, wait, check)
    deliver(sealed, xo_loop_steering(1, canonical_signature(TOOL, check["args"])), SIGNER)
    drain(session.agent)
    assert not session.agent.data[STATE_KEY]["breakers"]


# ----- through real processes -------------------------------------------------------------------


def test_a_real_xo_process_and_a_unit_process_block_and_pause_a_failing_call(procs, tmp_path):  # noqa: F811
    volume = tmp_path / "volume"
    volume.mkdir()
    xo, xo_log = procs.xo(volume)
    out = tmp_path / "unit.json"
    done = subprocess.run([sys.executable, str(ROOT / "tests" / "breaker_unit.py"), "--turns", "15", "--model-seconds", "0.5",
                           "--out", str(out)], cwd=ROOT, env={**procs.env, **unit_environment(tmp_path, volume)},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    got = json.loads(out.read_text())
    assert got["paused"] and got["ran"] <= 4, (got, xo_log.read_text()[-3000:])
    assert "Supervisor: breaker open" in got["headings"]
    assert {"Supervisor: paused", "Supervisor (XO engineering_xo): paused"} & set(got["headings"])  # the unit's breaker, or the XO on proof
    loops = [m for m in applied_on(volume) if m.anomaly == "loop" and m.kind == "steer"]
    assert loops and loops[0].call == RUN_APP


def applied_on(volume) -> list[SteeringMessage]:
    folder = volume / "units" / UNIT / "inbox" / "processed"
    return [SteeringMessage.model_validate_json(p.read_text()) for p in sorted(folder.glob("*.json"))]


def unit_environment(tmp_path, volume) -> dict[str, str]:
    keys = tmp_path / "unit-keys"
    keys.mkdir(mode=0o700)
    (keys / "report.key").write_text(unit_key(UNIT).hex() + "\n")
    (keys / "report.key").chmod(0o600)
    public = tmp_path / "public" / "steering.pub"
    public.parent.mkdir()
    public.write_text(public_line(SIGNER.private.public_key()) + "\n")
    return {"A0ORG_VOLUME": str(volume), "A0ORG_UNIT": UNIT, "A0ORG_STEERING_KEYS": str(public),
            "A0ORG_UNIT_KEY": str(keys / "report.key"), "A0ORG_UNIT_STATE": str(tmp_path / "unit-state.json"),
            "A0ORG_HOME": str(tmp_path / "orgs")}



def test_the_xo_names_the_call_only_for_a_repeated_failure_and_only_as_a_signature():
    reported = signals_from_snapshot(scenario_snapshot("loop", 6))

    def last_signature(signature: str):
        return reported.model_copy(update={"outcomes": [*reported.outcomes[:-1], reported.outcomes[-1].model_copy(update={"signature": signature})]})

    loop = Finding(anomaly="loop", template="loop_repeat", turn=6)
    stall = Finding(anomaly="stall", template="stall", turn=6)
    assert repeated_call([loop], last_signature(RUN_APP)) == RUN_APP
    assert repeated_call([stall], last_signature(RUN_APP)) is None  # not about one call
    assert repeated_call([loop], last_signature("../x")) is None  # a report is the unit's word: not a signature, not sent


def test_under_an_xo_a_call_that_works_repeated_after_its_steering_is_paused_never_blocked(make_session, sealed, monkeypatch):
    """The XO judges the unit's reports with the same proof as the unit's own supervisor: a call
    that works, repeated four times after the loop steering about it."""
    from test_escalation import view

    session, _xo = linked_to_xo(make_session, sealed, monkeypatch)
    run_until_paused(session, (view(),))
    assert session.results[-1].paused and not any(r.blocked for r in session.results)
    assert ran(session) <= 8, [(r.turn, r.paused) for r in session.results]
    assert [m.anomaly for m in applied(sealed) if m.kind == "steer"][:1] == ["loop"]
    assert "Supervisor (XO xo): paused" in [i.heading for i in session.agent.context.log.items]


def test_under_an_xo_a_round_of_calls_gone_round_again_after_its_steering_is_paused(make_session, sealed, monkeypatch):
    """The unit's report carries enough of its latest calls for the XO to see a cycle of three,
    steer it with the round quoted, and pause the unit once it goes round again."""
    from test_escalation import view

    session, _xo = linked_to_xo(make_session, sealed, monkeypatch)
    run_until_paused(session, (view(134), view(470), run_app()))
    assert session.results[-1].paused and not any(r.blocked for r in session.results)
    assert len(session.results) <= 11, [(r.turn, r.paused) for r in session.results]  # 6, one more round, the XO's latency
    steered = [m for m in applied(sealed) if m.kind == "steer"]
    assert steered[0].anomaly == "loop" and "Cycle: you went round the same 3 calls" in steered[0].text
    assert "Supervisor (XO xo): paused" in [i.heading for i in session.agent.context.log.items]
