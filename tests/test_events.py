"""The supervision event log (org/kernel/events.py), what the in-process supervisor writes to
it, and ``a0org events`` / ``a0org stats`` (org/stats.py)."""

from __future__ import annotations

import json
import os
from datetime import datetime, timedelta, timezone

import pytest
from conftest import fail, ok
from pack_commands import a0org

from org.contracts import SupervisionEvent
from org.kernel import events
from org.stats import followed_by_progress, stats

STRIPE = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"


def logged(org_home) -> list[SupervisionEvent]:
    return list(events.read(org_home))


def test_a_loop_steered_then_fixed_is_steering_followed_by_progress(make_session, org_home):
    session = make_session(doctrine={"radio_check_interval_turns": 1})
    session.run(*[fail("code_execution_tool") for _ in range(3)], ok("search", 4))
    kinds = [(e.type, e.turn, e.anomaly or e.findings) for e in logged(org_home)]
    assert kinds[:3] == [("radio_check", 3, ["loop"]), ("steering", 3, "loop"), ("progress", 4, [])]
    [steering] = [e for e in logged(org_home) if e.type == "steering"]
    assert steering.role == "codegen" and steering.template == "loop_repeat" and steering.chat
    figures = stats(logged(org_home))
    assert figures["total"]["steered"] == 1 and figures["total"]["share_followed"] == 1.0
    assert figures["by_anomaly"]["loop"]["median_turns_to_progress"] == 1


def test_no_secret_reaches_the_event_log(make_session, org_home):
    """Steering quotes the agent's command; the event names the text's template instead."""
    session = make_session(doctrine={"radio_check_interval_turns": 1})
    failing = {"tool": "code_execution_tool", "args": {"code": f"curl -H 'Authorization: Bearer {STRIPE}' https://api.example.com"},
               "ok": False, "error_type": "network", "output": "curl: (7) Failed to connect"}
    session.run(failing, failing, failing)
    assert any(e.type == "steering" for e in logged(org_home))
    assert STRIPE not in (org_home / "events" / "events.jsonl").read_text()


def test_the_pause_and_the_resume_are_events(make_session, org_home):
    session = make_session(doctrine={"radio_check_interval_turns": 1, "cooldown_turns": 0,
                                     "escalation": {"pause_after_ignored": 1}})
    session.run(*[fail("code_execution_tool") for _ in range(4)])
    assert "pause" in [e.type for e in logged(org_home)]
    session.agent.context.paused = False  # the user pressed resume
    session.run(ok("search", 5))
    types = [e.type for e in logged(org_home)]
    assert types.index("resume") > types.index("pause")


def test_an_unwritable_event_folder_never_stops_the_agent(make_session, org_home, caplog):
    (org_home / "events").write_text("a file where the folder should be")
    session = make_session(doctrine={"radio_check_interval_turns": 1})
    session.run(*[fail("code_execution_tool") for _ in range(3)])
    assert [a for _, a in session.anomalies()] == ["loop"]  # steered all the same
    assert len([r for r in caplog.records if "cannot record a supervision event" in r.getMessage()]) == 1


def test_the_log_rotates_and_keeps_the_newest(org_home, monkeypatch):
    monkeypatch.setattr(events, "MAX_BYTES", 2000)
    for turn in range(200):
        events.record(org_home, ("steering", {"role": "codegen", "turn": turn, "anomaly": "loop", "template": "loop_repeat"}))
    files = sorted(p.name for p in (org_home / "events").glob("events*.jsonl"))
    assert files == ["events.1.jsonl", "events.2.jsonl", "events.3.jsonl", "events.4.jsonl", "events.jsonl"]
    assert all(p.stat().st_size <= 2000 for p in (org_home / "events").glob("events*.jsonl"))
    turns = [e.turn for e in logged(org_home)]
    assert turns == sorted(turns) and turns[-1] == 199 and len(turns) < 200


def test_lines_that_are_not_events_are_skipped(org_home):
    events.record(org_home, ("steering", {"role": "codegen", "turn": 1, "anomaly": "loop"}))
    with open(events.log_path(org_home), "a") as handle:
        handle.write("{not json\n" + json.dumps({"type": "steering", "turn": "x"}) + "\n" + "x" * 30_000 + "\n")
    events.record(org_home, ("progress", {"role": "codegen", "turn": 2}))
    assert [e.type for e in logged(org_home)] == ["steering", "progress"]


def test_progress_counts_only_within_the_window_and_before_a_pause():
    now = datetime.now(timezone.utc)

    def event(kind: str, turn: int, chat: str = "c1") -> SupervisionEvent:
        return SupervisionEvent(time=now + timedelta(seconds=turn), type=kind, chat=chat, role="codegen", turn=turn, anomaly="loop")

    log = [event("steering", 1), event("steering", 1, "c2"), event("progress", 3, "c2"), event("pause", 2), event("progress", 4),
           event("steering", 10), event("progress", 20)]
    assert [(e.chat, e.turn, t) for e, t in followed_by_progress(log, 5)] == [("c1", 1, None), ("c2", 1, 2), ("c1", 10, None)]


def test_the_commands(make_session, org_home):
    session = make_session(doctrine={"radio_check_interval_turns": 1})
    session.run(*[fail("code_execution_tool") for _ in range(3)], ok("search", 4))
    home = str(org_home)
    listed = a0org("events", "--org-dir", home, "--type", "steering", "--json")
    assert listed.returncode == 0 and [json.loads(line)["type"] for line in listed.stdout.splitlines()] == ["steering"]
    assert a0org("events", "--org-dir", home, "--since", "1h").stdout.count("\n") == len(logged(org_home))
    future = (datetime.now(timezone.utc) + timedelta(hours=1)).isoformat()
    assert a0org("events", "--org-dir", home, "--since", future).stdout == ""
    assert a0org("events", "--org-dir", home, "--type", "stering").returncode == 2
    assert a0org("events", "--org-dir", home, "--since", "yesterday").returncode == 2
    figures = json.loads(a0org("stats", "--org-dir", home, "--json").stdout)
    assert figures["by_role"]["codegen"]["steered"] == 1 and figures["total"]["followed_by_progress"] == 1
    text = a0org("stats", "--org-dir", home).stdout
    assert "steered 1, blocked 0, followed by progress: 100% (median 1 turns)" in text
    missing = a0org("stats", "--org-dir", str(org_home / "nowhere"))
    assert missing.returncode == 1 and "does not exist" in missing.stderr and not (org_home / "nowhere").exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes everywhere")
def test_a_read_only_log_is_reported_once(make_session, org_home, caplog):
    (org_home / "events").mkdir()
    (org_home / "events").chmod(0o500)
    try:
        session = make_session(doctrine={"radio_check_interval_turns": 1})
        session.run(*[fail("code_execution_tool") for _ in range(3)])
    finally:
        (org_home / "events").chmod(0o700)
    assert len([r for r in caplog.records if "cannot record a supervision event" in r.getMessage()]) == 1


def test_the_xo_writes_its_events_in_its_home(tmp_path):
    from test_xo import EVERY_TURN, TrustingRoles
    from volume_units import acknowledge, publish, test_home

    from org.macrocosm.volume import VolumeLayout
    from org.macrocosm.xo import XO

    volume, home = tmp_path / "volume", tmp_path / "xo-home"
    volume.mkdir()
    home.mkdir()
    xo = XO(VolumeLayout(volume), "engineering_xo", test_home(home), roles=TrustingRoles())
    publish(volume, "unit-1", "stall", 3, EVERY_TURN)
    xo.sweep()
    acknowledge(volume, "unit-1")
    publish(volume, "unit-1", "healthy", 4, EVERY_TURN)
    xo.sweep()
    shown = [(e.type, e.unit) for e in events.read(home)]
    assert shown == [("steering", "unit-1"), ("progress", "unit-1")]
    assert not (volume / "xo" / "events").exists()  # nothing of the XO's own on the volume
    figures = json.loads(a0org("stats", "--xo-home", str(home), "--json").stdout)
    assert figures["total"]["steered"] == 1 and figures["total"]["followed_by_progress"] == 1
    assert "unit-1" in a0org("events", "--xo-home", str(home)).stdout
