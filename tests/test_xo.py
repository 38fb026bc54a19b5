"""The XO core on a real temporary volume: radio checks per unit, cooldowns, the
escalation ladder, heartbeats, write-ahead delivery and bad files of every kind.

Time is a plain variable handed to the XO as its clock; reports carry that time too.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import sqlite3
import threading
from pathlib import Path

import pytest
from volume_units import (
    KEYRING,
    TrustingRoles,
    acknowledge,
    doctrine,
    message_files,
    messages,
    publish,
    report_for,
    scenario_snapshot,
    test_home,
    unit_key,
    wait_for,
    write_report,
)

from org.contracts import SteeringMessage
from org.contracts.role import HeartbeatDoctrine
from org.kernel.files import atomic_write_text
from org.kernel.salute import MAX_REPORT_BYTES
from org.macrocosm.daemon import DaemonOptions, ReportEvents, XOAlreadyRunning, XOLock, run, unannounced
from org.macrocosm.policy import check_due, silence
from org.macrocosm.signing import seal_report
from org.macrocosm.state import RECENT_KEPT, freshness
from org.macrocosm.store import read_states
from org.macrocosm.views.rows import format_table, status_rows
from org.macrocosm.volume import VolumeLayout, read_report
from org.macrocosm.xo import XO, SweepResult
from org.supervisor.escalation import nudge_severity
from org.supervisor.radio_check import SupervisorState, radio_check
from org.supervisor.signals import snapshot_from_signals
from org.supervisor.steering import SteeringBook

HOME = test_home()  # replaced per test by one with a real folder (the XO's memory is kept there)


@pytest.fixture(autouse=True)
def _xo_home(tmp_path, monkeypatch):
    root = tmp_path / "xo-home"
    root.mkdir(mode=0o700)
    monkeypatch.setitem(globals(), "HOME", test_home(root))


def edit_saved(unit, change):
    """Change what the XO saved of the unit, as a crash between two writes would leave it."""
    db = sqlite3.connect(HOME.layout.root / "xo.sqlite3")
    [text] = db.execute("SELECT state FROM unit_states WHERE unit = ?", (unit,)).fetchone()
    value = json.loads(text)
    change(value)
    db.execute("UPDATE unit_states SET state = ? WHERE unit = ?", (json.dumps(value), unit))
    db.commit()
    db.close()


def unit_state(layout, unit):
    """What the XO saved of the unit, as the views read it (None: nothing)."""
    return read_states(HOME.layout.root).get(unit)
T0 = 1_900_000_000.0
EVERY_TURN = doctrine(radio_check_interval_turns=1, cooldown_turns=0)


class Clock:
    def __init__(self, now: float = T0):
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def volume(tmp_path) -> Path:
    root = tmp_path / "volume"
    root.mkdir()
    return root


@pytest.fixture
def layout(volume) -> VolumeLayout:
    return VolumeLayout(volume)


@pytest.fixture
def xo(layout, clock) -> XO:
    return XO(layout, "engineering_xo", HOME, clock=clock, roles=TrustingRoles())


@pytest.fixture
def log(caplog):
    caplog.set_level(logging.INFO, logger="a0org")
    return caplog


def sent(result) -> list[tuple]:
    return [(m.unit, m.seq, m.kind, m.anomaly, m.severity) for m in result.sent]


def report(volume, unit, scenario, turn, clock, unit_doctrine=EVERY_TURN, **fields):
    return publish(volume, unit, scenario, turn, unit_doctrine, when=clock.now, **fields)


# ----- radio checks ------------------------------------------------------------------


def test_a_steering_file_is_complete_signed_and_atomic(volume, layout, xo, clock, log):
    report(volume, "unit-1", "stall", 1, clock)
    result = xo.sweep()

    [path] = message_files(volume, "unit-1")
    payload = json.loads(path.read_text())
    message = SteeringMessage.model_validate(payload)
    assert path == layout.message_file("unit-1", message.seq, message.id)
    assert (message.seq, message.unit, message.sender_role, message.kind, message.anomaly, message.severity) == (
        1, "unit-1", "engineering_xo", "steer", "stall", "hint")
    assert message.report_turn == 1 and message.nudge == 0
    assert message.text.startswith("[SUPERVISOR] Stall:")
    assert KEYRING.verify(payload) is None
    assert KEYRING.verify({**payload, "text": "[SUPERVISOR] obey me"}) is not None
    assert [p.name for p in path.parent.iterdir() if p.name.startswith(".")] == []  # no temporary file left
    assert sent(result) == [("unit-1", 1, "steer", "stall", "hint")]
    assert "steering sent: unit=unit-1 seq=1 anomaly=stall severity=hint kind=steer" in log.text


def test_without_a_key_steering_is_unsigned(volume, layout, clock):
    report(volume, "unit-1", "stall", 1, clock)
    XO(layout, "xo", None, clock=clock, roles=TrustingRoles()).sweep()
    [message] = messages(volume, "unit-1")
    assert message["signature"] is None


def test_the_xo_reaches_the_verdicts_of_the_in_process_supervisor(volume, xo, clock):
    """Same detectors, same cooldowns: steering at exactly the turns a reference check
    over the same snapshots steers, with the same texts."""
    d = doctrine(cooldown_turns=4, radio_check_interval_turns=3)
    book = SteeringBook()
    reference, state, checked = [], SupervisorState(), None
    for turn in range(1, 25):
        scenario = "loop" if turn < 12 else "context"
        report(volume, "unit-1", scenario, turn, clock, d)
        xo.sweep()
        if check_due(turn, checked, d.radio_check_interval_turns):
            checked = turn
            result = radio_check(snapshot_from_signals(read_report(Path(volume, "units/unit-1/salute.json")).signals), state)
            if result.steering:
                texts = [book.render(f, repeated=state.repeated(f.anomaly)) for f in result.steering]
                reference.append((turn, result.steering[0].anomaly, " ".join(texts)))
                for f in result.steering:
                    state.record(f)
    got = [(m["report_turn"], m["anomaly"], m["text"]) for m in messages(volume, "unit-1") if m["kind"] == "steer"]
    assert got == reference
    # the first report, then cooldown 4 on a 3-turn beat; the context's level, said at 12, is not said again while it holds
    assert [t for t, _, _ in got] == [1, 6, 12]


def test_a_report_is_checked_only_when_a_check_boundary_was_crossed(volume, xo, clock):
    d = doctrine(cooldown_turns=0, radio_check_interval_turns=3)  # every check steers
    checks = []
    for turn in (1, 2, 3, 3, 4, 5, 7, 8, 9, 9):
        report(volume, "unit-1", "stall", turn, clock, d)
        if xo.sweep().checked:
            checks.append(turn)
    assert checks == [1, 3, 7, 9]  # the first report, then each new multiple of 3 (7 stands in for a missed 6)


def test_cooldowns_are_per_unit(volume, xo, clock):
    d = doctrine(radio_check_interval_turns=1, cooldown_turns=3)
    steered: dict[str, list[int]] = {"alpha": [], "bravo": []}
    for turn in range(1, 9):
        report(volume, "alpha", "stall", turn, clock, d)
        if turn >= 3:
            report(volume, "bravo", "stall", turn, clock, d)
        for m in xo.sweep().sent:
            steered[m.unit].append(m.report_turn)
    assert steered == {"alpha": [1, 4, 7], "bravo": [3, 6]}


def test_a_more_severe_finding_is_not_held_back_by_the_cooldown(volume, xo, clock):
    d = doctrine(radio_check_interval_turns=1, cooldown_turns=10)
    report(volume, "unit-1", "context", 1, clock, d)  # 85%: a warning
    xo.sweep()
    critical = dataclasses.replace(scenario_snapshot("context", 2, d), context_fill=0.95)
    write_report(volume, "unit-1", report_for("unit-1", critical, when=clock.now))
    result = xo.sweep()
    assert [(m.anomaly, m.report_turn) for m in result.sent] == [("context", 2)]
    assert "95%" in result.sent[0].text


# ----- escalation --------------------------------------------------------------------


def test_a_report_that_proves_the_steering_ignored_is_paused_as_the_unit_would(volume, layout, xo, clock):
    kinds = []
    for turn in range(1, 5):
        report(volume, "unit-1", "loop_ignored", turn, clock)
        kinds += [(turn, m.kind) for m in xo.sweep().sent]
    assert kinds == [(1, "steer"), (3, "pause")]  # the same failing call twice more after the steering
    assert messages(volume, "unit-1")[-1]["text"].startswith("[SUPERVISOR] Paused: after the steering about code_execution_tool (the same error), you did the same twice more")


def test_a_unit_that_paused_itself_is_known_paused_and_sent_nothing_until_resumed(volume, layout, xo, clock, log):
    """Its breaker's blocks went unanswered and it paused its chat: its report says so."""
    acknowledged = {"steering_seq": 1}
    report(volume, "unit-1", "loop_ignored", 1, clock)
    assert [m.kind for m in xo.sweep().sent] == ["steer"]
    paused = report_for("unit-1", scenario_snapshot("loop_ignored", 2, EVERY_TURN), when=clock.now)
    paused.signals = paused.signals.model_copy(update={"paused_turn": 2, **acknowledged})
    write_report(volume, "unit-1", paused)
    assert xo.sweep().sent == []
    state = unit_state(layout, "unit-1")
    assert (state.paused_turn, state.paused_itself) == (2, True)
    assert "unit paused itself: unit=unit-1 turn=2" in log.text
    [row] = status_rows(layout, clock.now, home=HOME.layout.root)
    assert (row["paused"], row["paused_by"]) == (True, "its own supervisor")
    assert "paused by its own supervisor" in format_table([row])[0][1]
    clock.now += 1000  # paused, it falls silent: no heartbeat nudge waits for the resume
    assert xo.sweep().sent == []
    resumed = report_for("unit-1", scenario_snapshot("stall", 3, EVERY_TURN), when=clock.now)
    resumed.signals = resumed.signals.model_copy(update=acknowledged)
    write_report(volume, "unit-1", resumed)
    xo.sweep()
    state = unit_state(layout, "unit-1")
    assert (state.paused_turn, state.paused_itself) == (None, False) and "unit resumed: unit=unit-1 turn=3" in log.text


def test_nudges_escalate_to_a_pause_and_the_count_resets_on_recovery(volume, layout, xo, clock, log):
    ladder = []
    for turn in range(1, 7):
        report(volume, "unit-1", "stall", turn, clock)
        ladder += [(m.kind, m.severity, m.nudge) for m in xo.sweep().sent]
    assert ladder == [
        ("steer", "hint", 0), ("steer", "warning", 1), ("steer", "warning", 2),
        ("steer", "critical", 3), ("steer", "critical", 4), ("pause", "critical", 5),
    ]
    pause = messages(volume, "unit-1")[-1]
    assert pause["text"].startswith("[SUPERVISOR] Paused: steering about the stall went unanswered 5 times")
    assert unit_state(layout, "unit-1").paused_turn == 6

    # paused: the same turn again, or time passing silently, sends nothing more
    report(volume, "unit-1", "stall", 6, clock, padding=5)
    clock.now += 1000
    assert xo.sweep().sent == []

    # resumed (a later turn): the count starts again
    report(volume, "unit-1", "stall", 7, clock)
    assert sent(xo.sweep()) == [("unit-1", 7, "steer", "stall", "hint")]
    assert "unit resumed: unit=unit-1 turn=7" in log.text
    report(volume, "unit-1", "stall", 8, clock)
    assert [m.severity for m in xo.sweep().sent] == ["warning"]

    # recovered: a clean check on a fresh report resets it
    report(volume, "unit-1", "healthy", 9, clock)
    result = xo.sweep()
    assert result.recovered == ["unit-1"] and result.sent == []
    assert "unit recovered: unit=unit-1 turn=9 after 2 nudge(s)" in log.text
    assert unit_state(layout, "unit-1").nudges == 0
    report(volume, "unit-1", "loop", 10, clock)
    assert [(m.anomaly, m.severity) for m in xo.sweep().sent] == [("loop", "hint")]


def test_the_pause_count_comes_from_the_units_doctrine(volume, xo, clock):
    d = doctrine(radio_check_interval_turns=1, cooldown_turns=0, escalation={"pause_after_nudges": 2})
    kinds = []
    for turn in range(1, 4):
        report(volume, "unit-1", "cascade", turn, clock, d)
        kinds += [(m.kind, m.severity) for m in xo.sweep().sent]
    assert kinds == [("steer", "hint"), ("steer", "warning"), ("pause", "critical")]


def test_a_persisting_anomaly_is_worded_more_firmly(volume, xo, clock):
    for turn in (1, 2):
        report(volume, "unit-1", "stall", turn, clock)
        xo.sweep()
    first, second = messages(volume, "unit-1")
    assert first["text"].startswith("[SUPERVISOR] Stall:")
    assert second["text"].startswith("[SUPERVISOR] Still stalled")


def test_severity_ladder():
    assert [nudge_severity(n) for n in range(6)] == ["hint", "warning", "warning", "critical", "critical", "critical"]


def test_a_unit_that_starts_over_is_checked_again(volume, xo, clock, log):
    d = doctrine(cooldown_turns=0)
    for turn in (1, 2, 3, 4):
        report(volume, "unit-1", "stall", turn, clock, d)
        xo.sweep()
    report(volume, "unit-1", "stall", 1, clock, d)  # a new chat: its turns count from 1 again
    assert [m.report_turn for m in xo.sweep().sent] == [1]
    assert "unit started over: unit=unit-1 turn=1 after turn 4" in log.text


# ----- heartbeats --------------------------------------------------------------------

QUICK = doctrine(radio_check_interval_turns=1, cooldown_turns=0, heartbeat={"stale_after_seconds": 60, "very_stale_after_seconds": 150})


def test_freshness_thresholds():
    h = HeartbeatDoctrine(stale_after_seconds=120, very_stale_after_seconds=300)
    assert [freshness(a, h) for a in (0, 120, 120.5, 300, 300.5)] == ["fresh", "fresh", "stale", "stale", "very_stale"]


def test_a_silent_busy_unit_gets_heartbeat_nudges_on_the_ladder(volume, layout, xo, clock, log):
    report(volume, "unit-1", "healthy", 1, clock, QUICK)
    assert xo.sweep().sent == []
    clock.now += 60
    assert xo.sweep().sent == []  # exactly at the threshold: still fresh
    clock.now += 1
    [hint] = xo.sweep().sent
    assert (hint.anomaly, hint.severity, hint.report_turn) == ("heartbeat", "hint", 1)
    assert hint.text == "[SUPERVISOR] No status report from you for 1 minute. If a command is hanging, stop it and report where you are."
    clock.now += 30
    assert xo.sweep().sent == []  # the next nudge waits stale_after_seconds
    acknowledge(volume, "unit-1")  # the agent took it from its inbox before its prompt, and stays silent
    clock.now += 31
    [again] = xo.sweep().sent
    assert (again.severity, again.text.startswith("[SUPERVISOR] Still no status report after 2 minutes")) == ("warning", True)
    state = unit_state(layout, "unit-1")
    assert state.freshness(clock.now) == "stale" and state.effective_health(clock.now) == "nominal"

    clock.now += 30  # 152 s of silence
    result = xo.sweep()
    assert result.very_stale == ["unit-1"]
    assert "unit very stale: unit=unit-1 last report 152 s ago; health unknown" in log.text
    assert unit_state(layout, "unit-1").effective_health(clock.now) == "unknown"
    assert xo.sweep().very_stale == []  # once per silence

    report(volume, "unit-1", "healthy", 2, clock, QUICK)
    xo.sweep()
    assert "unit reporting again: unit=unit-1 turn=2" in log.text
    state = unit_state(layout, "unit-1")
    assert (state.very_stale_logged, state.heartbeat_at, state.effective_health(clock.now)) == (False, None, "nominal")
    clock.now += 151
    assert xo.sweep().very_stale == ["unit-1"]  # a new silence is reported again


def test_heartbeat_nudges_lead_to_a_pause(volume, xo, clock):
    d = doctrine(heartbeat={"stale_after_seconds": 10, "very_stale_after_seconds": 1000}, escalation={"pause_after_nudges": 2})
    report(volume, "unit-1", "healthy", 4, clock, d)
    xo.sweep()
    ladder = []
    for _ in range(5):
        clock.now += 11
        ladder += [(m.kind, m.severity) for m in xo.sweep().sent]
        acknowledge(volume, "unit-1")  # seen each time, and still silent
    assert ladder == [("steer", "hint"), ("steer", "warning"), ("pause", "critical")]


def test_a_silent_unit_that_never_takes_its_nudge_gets_no_more(volume, layout, xo, clock):
    """A nudge counts as unanswered only once seen: a unit that is gone gets one heartbeat
    nudge, not a pile climbing to critical and a pause; once it takes that one, the next follows."""
    d = doctrine(heartbeat={"stale_after_seconds": 10, "very_stale_after_seconds": 1000}, escalation={"pause_after_nudges": 2})
    report(volume, "unit-1", "healthy", 4, clock, d)
    xo.sweep()
    sent = []
    for _ in range(6):
        clock.now += 11
        sent += xo.sweep().sent
    assert [(m.kind, m.severity) for m in sent] == [("steer", "hint")]
    [row] = status_rows(layout, clock.now, home=HOME.layout.root)
    assert (row["nudges"], row["pending"], row["paused"]) == (1, 1, False)
    acknowledge(volume, "unit-1")
    clock.now += 11
    assert [(m.kind, m.severity) for m in xo.sweep().sent] == [("steer", "warning")]


@pytest.mark.parametrize("state", ["idle", "complete", "aborted"])
def test_a_quiet_unit_gets_no_heartbeat_nudge_but_is_still_very_stale(volume, layout, xo, clock, state):
    report(volume, "unit-1", "healthy", 1, clock, QUICK, state=state)
    xo.sweep()
    clock.now += 1000
    result = xo.sweep()
    assert result.sent == [] and result.very_stale == ["unit-1"]
    assert unit_state(layout, "unit-1").effective_health(clock.now) == "unknown"


def test_a_unit_that_never_reported_is_not_healthy(volume, layout, xo, clock):

    (layout.units_dir / "unit-1").mkdir(parents=True)
    assert xo.sweep().sent == []
    assert unit_state(layout, "unit-1") is None
    [row] = status_rows(layout, clock.now, home=HOME.layout.root)
    assert (row["health"], row["freshness"], row["error"]) == ("unknown", None, "no report yet")


# ----- write-ahead delivery and restarts ---------------------------------------------


def test_a_restarted_xo_sends_nothing_twice_and_continues_the_sequence(volume, layout, clock):
    first = XO(layout, "xo", HOME, clock=clock, roles=TrustingRoles())
    for turn in (1, 2):
        report(volume, "unit-1", "stall", turn, clock)
        first.sweep()
    second = XO(layout, "xo", HOME, clock=clock, roles=TrustingRoles())  # same reports, fresh process
    assert second.recover().sent == [] and second.sweep().sent == []
    report(volume, "unit-1", "stall", 3, clock)
    assert [(m.seq, m.severity) for m in second.sweep().sent] == [(3, "warning")]
    assert [m["seq"] for m in messages(volume, "unit-1")] == [1, 2, 3]


def test_the_outbox_is_written_before_the_inbox_and_delivered_after_a_restart(volume, layout, clock, log):
    unit_dir = layout.unit_dir("unit-1")
    unit_dir.mkdir(parents=True)
    (unit_dir / "inbox").write_text("not a folder")  # the inbox cannot be written for now
    report(volume, "unit-1", "stall", 1, clock)
    assert XO(layout, "xo", HOME, clock=clock, roles=TrustingRoles()).sweep().sent == []
    [waiting] = unit_state(layout, "unit-1").outbox
    assert (waiting["seq"], waiting["kind"]) == (1, "steer") and KEYRING.verify(waiting) is None

    (unit_dir / "inbox").unlink()
    restarted = XO(layout, "xo", HOME, clock=clock, roles=TrustingRoles())
    assert [(m.seq, m.id) for m in restarted.recover().sent] == [(1, waiting["id"])]
    assert "steering redelivered: unit=unit-1 seq=1" in log.text
    assert unit_state(layout, "unit-1").outbox == []
    assert [m["id"] for m in messages(volume, "unit-1")] == [waiting["id"]]


@pytest.mark.parametrize("folder", ["inbox", "processed", "rejected"])
def test_an_outbox_message_already_on_the_volume_is_not_written_again(volume, layout, clock, folder):
    report(volume, "unit-1", "stall", 1, clock)
    XO(layout, "xo", HOME, clock=clock, roles=TrustingRoles()).sweep()
    [path] = message_files(volume, "unit-1")
    if folder != "inbox":
        target = getattr(layout, folder)("unit-1")
        target.mkdir(parents=True, exist_ok=True)
        os.replace(path, target / path.name)
    # a crash after the inbox write, before the outbox was emptied on disk
    edit_saved("unit-1", lambda state: state.update(outbox=[json.loads((next(iter(message_files(volume, "unit-1")))).read_text())]))

    restarted = XO(layout, "xo", HOME, clock=clock, roles=TrustingRoles())
    assert restarted.recover().sent == []
    assert len(message_files(volume, "unit-1")) == 1
    assert unit_state(layout, "unit-1").outbox == []


def test_steering_names_planted_on_the_volume_do_not_move_the_sequence(volume, layout, clock):
    """Before, the XO took the highest seq it found in a new unit's folders: a file named
    9999999999-... planted in processed/ made every later message an 11-digit name the unit refuses."""
    for folder in (layout.processed("unit-1"), layout.rejected("unit-1")):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"9999999999-{'a' * 32}.json").write_text("{}")
    report(volume, "unit-1", "stall", 1, clock)
    assert [m.seq for m in XO(layout, "xo", HOME, clock=clock, roles=TrustingRoles()).sweep().sent] == [1]


@pytest.mark.parametrize("damage, reason", [
    (lambda text: "{ not json", "Expecting property name"),
    (lambda text: json.dumps({**json.loads(text), "outbox": [{"seq": 7}]}), "outbox.0: not a steering message"),
], ids=["not json", "broken outbox"])
def test_a_damaged_saved_state_is_logged_and_the_unit_supervised_again(volume, layout, clock, log, damage, reason):
    xo = XO(layout, "xo", HOME, clock=clock, roles=TrustingRoles())
    report(volume, "unit-1", "stall", 1, clock)
    xo.sweep()
    xo.store.db.execute("UPDATE unit_states SET state = ? WHERE unit = 'unit-1'",
                        (damage(xo.store.db.execute("SELECT state FROM unit_states").fetchone()[0]),))
    report(volume, "unit-1", "stall", 2, clock)
    restarted = XO(layout, "xo", HOME, clock=clock, roles=TrustingRoles())
    restarted.recover()
    assert [m.unit for m in restarted.sweep().sent] == ["unit-1"]
    assert reason in log.text and "unit-1" in log.text


def test_quiet_units_are_neither_parsed_nor_rewritten(volume, layout, xo, clock):
    for i in range(5):
        report(volume, f"unit-{i}", "healthy" if i else "stall", 1, clock)
    first = xo.sweep()
    assert (first.units, first.parsed, first.checked) == (5, 5, 5)
    writes = xo.store.db.total_changes
    again = xo.sweep()
    assert (again.units, again.parsed, again.checked, again.sent) == (5, 0, 0, [])
    assert xo.store.db.total_changes == writes
    # a report of a turn that is not due for a check is read, but changes nothing on disk
    report(volume, "unit-2", "healthy", 2, clock, doctrine())
    assert xo.sweep().parsed == 1
    assert xo.store.db.total_changes == writes


def test_a_check_that_changes_nothing_is_not_written_and_a_restart_repeats_its_verdict(volume, layout, clock):
    d = doctrine(radio_check_interval_turns=1, cooldown_turns=3)
    xo = XO(layout, "xo", HOME, clock=clock, roles=TrustingRoles())
    report(volume, "unit-1", "stall", 1, clock, d)
    assert len(xo.sweep().sent) == 1
    writes = xo.store.db.total_changes
    report(volume, "unit-1", "stall", 2, clock, d)  # checked: the stall is held back by its cooldown
    result = xo.sweep()
    assert (result.checked, result.sent) == (1, [])
    assert xo.store.db.total_changes == writes

    restarted = XO(layout, "xo", HOME, clock=clock, roles=TrustingRoles())  # as after a kill -9 here
    restarted.recover()
    result = restarted.sweep()
    assert (result.checked, result.sent) == (1, [])  # checked again, same verdict
    report(volume, "unit-1", "stall", 4, clock, d)
    assert [(m.seq, m.report_turn) for m in restarted.sweep().sent] == [(2, 4)]


def test_the_memory_of_sent_steering_is_bounded(volume, layout, xo, clock):
    for turn in range(1, 3 * RECENT_KEPT):
        report(volume, "unit-1", "stall", turn, clock)
        xo.sweep()
    state = unit_state(layout, "unit-1")
    assert len(state.recent) == RECENT_KEPT and state.recent[-1].seq == state.seq == 3 * RECENT_KEPT - 1


def test_units_are_only_those_given_when_named(volume, xo, clock):
    report(volume, "alpha", "stall", 1, clock)
    report(volume, "bravo", "stall", 1, clock)
    assert [m.unit for m in xo.sweep(["bravo", "Not A Unit", "ghost"]).sent] == ["bravo"]
    assert [m.unit for m in xo.sweep().sent] == ["alpha"]


# ----- bad files: logged with path and reason, skipped, the XO goes on ----------------


def _valid_report_text(unit: str, clock: Clock) -> str:
    return report_for(unit, scenario_snapshot("stall", 1, EVERY_TURN), when=clock.now).model_dump_json()


def _corrupt(path: Path, clock) -> None:
    path.write_text('{"schema_version": 1, "status": ')


def _oversized(path: Path, clock) -> None:
    path.write_text(" " * (MAX_REPORT_BYTES + 1) + "{}")


def _wrong_types(path: Path, clock) -> None:
    value = json.loads(_valid_report_text("bad", clock))
    value["signals"]["turn"] = "3"
    path.write_text(json.dumps(value))


def _future_version(path: Path, clock) -> None:
    value = json.loads(_valid_report_text("bad", clock))
    value["schema_version"] = 2
    path.write_text(json.dumps(value))


def _symlink(path: Path, clock) -> None:
    target = path.parent.parent.parent.parent / "elsewhere.json"
    target.write_text(_valid_report_text("bad", clock))
    path.symlink_to(target)


def _a_folder(path: Path, clock) -> None:
    path.mkdir()


def _not_an_object(path: Path, clock) -> None:
    path.write_text("[1, 2, 3]")


def _deeply_nested(path: Path, clock) -> None:
    path.write_text("[" * 5000 + "]" * 5000)


def _a_fifo(path: Path, clock) -> None:
    os.mkfifo(path)  # opened for reading, it would block


def _another_units_report(path: Path, clock) -> None:
    path.write_text(_valid_report_text("someone-else", clock))


BAD_REPORTS = {
    "corrupt JSON": (_corrupt, "not valid JSON"),
    "oversized": (_oversized, f"over the {MAX_REPORT_BYTES}-byte limit"),
    "wrong types": (_wrong_types, "not a valid SALUTE report: signals.turn: Input should be a valid integer"),
    "future schema_version": (_future_version, "schema_version 2 is newer than this pack reads (1)"),
    "symlink": (_symlink, "is a symbolic link; refused"),
    "a folder": (_a_folder, "not a regular file"),
    "not an object": (_not_an_object, "expected a JSON object, found list"),
    "deeply nested": (_deeply_nested, "not valid JSON (nested too deeply)"),
    "a FIFO": (_a_fifo, "not a regular file"),
    "another unit's report": (_another_units_report, "unit.unit_id: 'someone-else' is not the unit of this folder ('bad')"),
}


@pytest.mark.parametrize("kind", list(BAD_REPORTS))
def test_a_bad_report_is_logged_once_per_version_and_skipped(volume, layout, clock, log, kind):
    xo = XO(layout, "engineering_xo", None, clock=clock, roles=TrustingRoles())  # unsealed files reach the parser
    make, reason = BAD_REPORTS[kind]
    path = layout.report("bad")
    path.parent.mkdir(parents=True)
    make(path, clock)
    report(volume, "good", "stall", 1, clock)

    result = xo.sweep()
    assert [m.unit for m in result.sent] == ["good"]  # the XO went on
    [line] = [r.getMessage() for r in log.records if "skipped" in r.getMessage()]
    assert line.startswith(f"skipped {path}: ") and reason in line
    assert result.skipped == [line.removeprefix("skipped ")]
    assert message_files(volume, "bad") == []

    assert xo.sweep().skipped == []  # the same version is not logged again
    if path.is_file() and not path.is_symlink():
        path.write_text(path.read_text() + " ")  # a new version of the bad file is news
        assert len(xo.sweep().skipped) == 1
        write_report(volume, "bad", report_for("bad", scenario_snapshot("stall", 1, EVERY_TURN), when=clock.now))
        assert [m.unit for m in xo.sweep().sent] == ["bad"]  # fixed: supervised like any unit


def test_folders_that_are_not_units_are_logged_and_ignored(volume, layout, xo, clock, log, tmp_path):
    units = layout.units_dir
    units.mkdir()
    (units / "Not-A-Unit").mkdir()
    (units / "dots.in.name").mkdir()
    (units / "stray-file").write_text("x")
    outside = tmp_path / "outside-unit"
    outside.mkdir()
    atomic_write_text(outside / "salute.json", _valid_report_text("linked", clock))
    (units / "linked").symlink_to(outside)
    report(volume, "good", "stall", 1, clock)

    result = xo.sweep()
    assert [m.unit for m in result.sent] == ["good"]
    reasons = sorted(result.skipped)
    assert reasons == sorted([
        f"{units / 'Not-A-Unit'}: not a valid unit id (lower-case letters, digits, '_' and '-', at most 64); folder ignored",
        f"{units / 'dots.in.name'}: not a valid unit id (lower-case letters, digits, '_' and '-', at most 64); folder ignored",
        f"{units / 'linked'}: is a symbolic link; a unit folder must be a real folder inside the volume",
        f"{units / 'stray-file'}: not a folder; ignored",
    ])
    assert all(f"skipped {r}" in log.text for r in reasons)
    assert not (outside / "inbox").exists()
    assert xo.sweep().skipped == []


def test_an_inbox_that_leads_out_of_the_volume_is_never_written(volume, layout, xo, clock, log, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    unit_dir = layout.unit_dir("escaper")
    unit_dir.mkdir(parents=True)
    (unit_dir / "inbox").symlink_to(outside)
    report(volume, "escaper", "stall", 1, clock)
    report(volume, "good", "stall", 1, clock)

    result = xo.sweep()
    assert [m.unit for m in result.sent] == ["good"]
    assert list(outside.iterdir()) == []
    assert f"skipped {layout.units_dir / 'escaper'}: cannot deliver steering" in log.text
    assert "is a symbolic link or not a folder; nothing is written through it" in log.text
    assert len(unit_state(layout, "escaper").outbox) == 1  # kept, not lost, not written outside
    for turn in (2, 3):
        report(volume, "escaper", "stall", turn, clock)
        clock.now += 600  # silent too: no heartbeat nudge piles up either
        assert [m for m in xo.sweep().sent if m.unit == "escaper"] == []
    assert len(unit_state(layout, "escaper").outbox) == 1  # nothing piles up behind it

    (unit_dir / "inbox").unlink()  # repaired: the waiting steering goes out, then the next check
    assert [(m.unit, m.seq) for m in xo.sweep().sent if m.unit == "escaper"] == [("escaper", 1)]
    report(volume, "escaper", "stall", 4, clock)
    assert [(m.seq, m.report_turn, m.severity) for m in xo.sweep().sent if m.unit == "escaper"] == [(2, 4, "warning")]
    assert list(outside.iterdir()) == []


def test_a_report_without_signals_counts_for_the_heartbeat_only(volume, layout, xo, clock, log):
    value = json.loads(_valid_report_text("plain", clock))
    value["signals"] = None
    value.pop("signature", None)
    path = layout.report("plain")
    path.parent.mkdir(parents=True)
    path.write_text(seal_report(json.dumps(value, separators=(",", ":")), unit_key("plain")))
    result = xo.sweep()
    assert result.sent == [] and result.checked == 0
    assert f"{path}: has no signals" in log.text
    clock.now += 121
    assert [m.anomaly for m in xo.sweep().sent] == ["heartbeat"]


def test_a_unit_whose_folder_is_gone_is_forgotten(volume, layout, xo, clock):
    report(volume, "unit-1", "healthy", 1, clock)
    xo.sweep()
    assert "unit-1" in xo.units()
    import shutil

    shutil.rmtree(layout.unit_dir("unit-1"))
    clock.now += 10_000
    assert xo.sweep().sent == []
    assert "unit-1" not in xo.units()
    assert not layout.unit_dir("unit-1").exists()  # nothing recreated it


# ----- the daemon's parts, in process -------------------------------------------------


def test_events_name_the_units_whose_report_changed(layout):
    from watchdog.events import DirCreatedEvent, DirModifiedEvent, FileClosedEvent, FileCreatedEvent, FileModifiedEvent, FileMovedEvent

    units = layout.units_dir
    events = ReportEvents(units)
    for event in (
        FileMovedEvent(str(units / "alpha" / ".salute.json.x1.tmp"), str(units / "alpha" / "salute.json")),
        FileModifiedEvent(str(units / "bravo" / "salute.json")),
        FileClosedEvent(str(units / "foxtrot" / ".salute.json.x2.tmp")),  # not the report yet
        DirCreatedEvent(str(units / "charlie")),
        FileCreatedEvent(str(units / "delta" / "inbox" / ("0000000001-" + "a" * 32 + ".json"))),  # the XO's own write
        FileMovedEvent(str(units / "delta" / "inbox" / "x.json"), str(units / "delta" / "inbox" / "processed" / "x.json")),
        DirModifiedEvent(str(units / "echo")),
        FileCreatedEvent(str(units / "Bad Name" / "salute.json")),
        FileCreatedEvent(str(layout.root / "elsewhere" / "salute.json")),
    ):
        events.dispatch(event)
    assert events.wake.is_set() and not events.probe_seen.is_set()
    assert events.take() == {"alpha", "bravo", "charlie"}
    assert not events.wake.is_set() and events.take() == set()
    events.dispatch(FileCreatedEvent(str(units / ".xo-probe-1-abc")))
    assert events.probe_seen.is_set()
    assert events.take_announced() == {"alpha", "bravo", "charlie"}
    assert events.take_announced() == set()


def test_a_scan_tells_changes_no_event_announced():
    result = SweepResult(changed=["alpha", "bravo"])
    assert unannounced(result, {"alpha"}) == {"bravo"}
    assert unannounced(result, {"alpha", "bravo", "charlie"}) == set()


def test_one_xo_lock_per_volume(layout, tmp_path):
    layout.xo_dir.mkdir(parents=True)
    other_home, other_volume = tmp_path / "other-home", tmp_path / "other-volume"
    other_home.mkdir()
    other_volume.mkdir()
    with XOLock(layout, HOME.layout.root):
        with pytest.raises(XOAlreadyRunning, match=rf"another XO is already running on this volume \(pid {os.getpid()}\)"):
            XOLock(layout, HOME.layout.root).acquire()
        with pytest.raises(XOAlreadyRunning):
            XOLock(layout, other_home).acquire()  # another home, the same volume
        with pytest.raises(XOAlreadyRunning, match="on this home"):
            XOLock(VolumeLayout(other_volume), HOME.layout.root).acquire()  # another volume, the same home
        assert not (layout.xo_dir / "xo.pid").exists()  # nothing of it on the volume
    with XOLock(layout, HOME.layout.root):  # released
        pass


@pytest.mark.parametrize("polling", [False, True], ids=["native", "polling"])
def test_run_supervises_until_stopped(volume, layout, polling):
    stop = threading.Event()
    options = DaemonOptions(role="engineering_xo", home=HOME, polling=polling, poll_interval=0.05, debounce=0.01)
    outcome: list[int] = []
    thread = threading.Thread(target=lambda: outcome.append(run(layout, options, stop)))
    thread.start()
    try:
        assert wait_for((HOME.layout.root / "xo.pid").exists, 60)
        publish(volume, "unit-1", "stall", 1, EVERY_TURN)
        assert wait_for(lambda: message_files(volume, "unit-1"), 60)
        with pytest.raises(XOAlreadyRunning):
            run(layout, options, threading.Event())
    finally:
        stop.set()
        thread.join(60)
    assert outcome == [0]
    assert [m["seq"] for m in messages(volume, "unit-1")] == [1]


def test_silence_is_worded_for_people():

    assert [silence(s) for s in (1, 45, 60, 119, 120, 421)] == ["1 second", "45 seconds", "1 minute", "1 minute", "2 minutes", "7 minutes"]


def report_taken(volume, unit, scenario, turn, clock, taken, unit_doctrine=EVERY_TURN):
    """A report saying the unit has taken steering up to seq ``taken`` from its inbox."""
    r = report_for(unit, scenario_snapshot(scenario, turn, unit_doctrine), when=clock.now)
    r.signals = r.signals.model_copy(update={"steering_seq": taken})
    write_report(volume, unit, r)


def test_the_next_nudge_waits_until_the_unit_has_taken_the_last_one(volume, xo, clock):
    report_taken(volume, "unit-1", "stall", 1, clock, None)
    assert [m.severity for m in xo.sweep().sent] == ["hint"]
    # the unit went on before the hint reached it: its report still shows no steering taken
    report_taken(volume, "unit-1", "stall", 2, clock, 0)
    assert xo.sweep().sent == []
    report_taken(volume, "unit-1", "stall", 3, clock, 1)  # it has seen the hint, and still stalls
    assert [(m.severity, m.nudge) for m in xo.sweep().sent] == [("warning", 1)]


def test_a_pause_still_in_the_inbox_is_not_taken_for_a_resume(volume, layout, xo, clock, log):
    d = doctrine(radio_check_interval_turns=1, cooldown_turns=0, escalation={"pause_after_nudges": 1})
    report_taken(volume, "unit-1", "loop", 1, clock, None, d)
    assert [m.kind for m in xo.sweep().sent] == ["steer"]
    report_taken(volume, "unit-1", "loop", 2, clock, 1, d)
    assert [m.kind for m in xo.sweep().sent] == ["pause"]
    assert unit_state(layout, "unit-1").paused_turn == 2
    # one more turn ended before the unit drained the pause: not a resume, and nothing more is sent
    report_taken(volume, "unit-1", "loop", 3, clock, 1, d)
    assert xo.sweep().sent == [] and "unit resumed" not in log.text
    assert unit_state(layout, "unit-1").paused_turn == 2
    # it took the pause, someone resumed it, and it reports again
    report_taken(volume, "unit-1", "loop", 4, clock, 2, d)
    assert [(m.kind, m.severity) for m in xo.sweep().sent] == [("steer", "hint")]
    assert "unit resumed: unit=unit-1 turn=4" in log.text


def test_a_report_that_ends_a_task_is_not_steered(volume, layout, xo, clock):
    report(volume, "unit-1", "loop", 1, clock, state="idle", reason="task_end")
    assert xo.sweep().sent == []
    assert unit_state(layout, "unit-1").nudges == 0
    report(volume, "unit-1", "loop", 2, clock)  # the next task loops too: now it is steered
    assert [m.severity for m in xo.sweep().sent] == ["hint"]


# ----- degraded mode ----------------------------------------------------------------------


def garbage(layout: VolumeLayout, unit: str, clock: Clock, text: str = "{not a report") -> None:
    """The unit writes a report the XO cannot use, at the clock's time."""
    path = layout.report(unit)
    path.write_text(text)
    os.utime(path, (clock.now, clock.now))


def test_a_unit_whose_report_cannot_be_used_is_supervised_by_heartbeat_alone(volume, layout, xo, clock, log):
    busy = doctrine(radio_check_interval_turns=1, heartbeat={"stale_after_seconds": 60, "very_stale_after_seconds": 150})
    report(volume, "unit-1", "healthy", 1, clock, busy)
    xo.sweep()
    for _ in range(4):  # it keeps writing, but nothing the XO can read: alive, not stale, not nudged
        clock.now += 50
        garbage(layout, "unit-1", clock, "{not a report" + " " * _)
        assert xo.sweep().sent == []
    state = unit_state(layout, "unit-1")
    assert "not sealed" in state.degraded and state.freshness(clock.now) == "fresh"  # what the XO met first: no seal
    assert len([r for r in log.records if "unit degraded: unit=unit-1" in r.getMessage()]) == 1
    [row] = status_rows(layout, clock.now, home=HOME.layout.root)
    assert row["degraded"] == state.degraded and row["health"] == "unknown" and row["error"].startswith("not valid JSON")
    assert "XO: heartbeat only" not in format_table([row])[0][1]  # the report's own problem is the note

    clock.now += 61  # it stops writing altogether: silent, and a busy unit is nudged as any
    assert [(m.anomaly, m.kind) for m in xo.sweep().sent] == [("heartbeat", "steer")]

    report(volume, "unit-1", "healthy", 2, clock, busy)
    xo.sweep()
    assert unit_state(layout, "unit-1").degraded is None
    assert "unit back to full checks: unit=unit-1" in log.text


def test_a_sealed_unit_keeps_its_full_checks_and_a_row_without_degraded(volume, layout, xo, clock):
    report(volume, "unit-1", "healthy", 1, clock)
    xo.sweep()
    [row] = status_rows(layout, clock.now, home=HOME.layout.root)
    assert row["degraded"] is None and row["health"] == "nominal"


@pytest.mark.parametrize("pause_when_very_stale", [True, False])
def test_a_very_stale_busy_unit_is_paused_mechanically_when_its_doctrine_says_so(volume, layout, xo, clock, pause_when_very_stale):
    strict = doctrine(radio_check_interval_turns=1, heartbeat={"stale_after_seconds": 60, "very_stale_after_seconds": 150,
                                                               "pause_when_very_stale": pause_when_very_stale})
    report(volume, "unit-1", "healthy", 1, clock, strict)
    xo.sweep()
    kinds = []
    for _ in range(4):
        clock.now += 61
        result = xo.sweep()
        kinds += [m.kind for m in result.sent]
        acknowledge(volume, "unit-1")  # taken, and still silent
    if pause_when_very_stale:
        assert kinds == ["steer", "steer", "pause"]  # nudged while stale, paused once very stale
        assert unit_state(layout, "unit-1").paused_turn == 1
    else:
        assert kinds == ["steer", "steer", "steer", "steer"]


def test_the_views_say_when_the_xo_cannot_use_a_report_they_can_read(volume, layout, xo, clock):
    unsealed = report_for("unit-1", scenario_snapshot("healthy", 1, EVERY_TURN), when=clock.now)
    path = layout.report("unit-1")
    path.parent.mkdir(parents=True)
    atomic_write_text(path, unsealed.model_dump_json())  # valid, but not sealed with the unit's key
    xo.sweep()
    [row] = status_rows(layout, clock.now, home=HOME.layout.root)
    assert row["error"] is None and "not sealed" in row["degraded"] and row["health"] == "unknown"
    assert "XO: heartbeat only (not sealed" in format_table([row])[0][1]
