"""``a0org status``, ``watch`` and ``tail`` over real volume folders, run as real processes."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from uuid import uuid4

import pytest
from pack_commands import a0org

from org.contracts import RoleProfile, SaluteReport
from org.contracts.steering_message import SteeringMessage
from org.kernel import loading
from org.kernel.files import atomic_write_text
from org.kernel.outcomes import ToolOutcome
from org.macrocosm.views.rows import STATUS_KEYS, FileCache, format_age, format_table, status_lines, status_rows
from org.macrocosm.views.watch import fit, frame
from org.macrocosm.volume import VolumeLayout
from org.resources import roles_dir
from org.supervisor.signals import signals_from_snapshot
from org.supervisor.snapshot import Snapshot

ROOT = Path(__file__).resolve().parent.parent
ROLE = loading.load(RoleProfile, roles_dir() / "codegen.yaml")
ESC = "\x1b["


# --------------------------------------------------------------------------- helpers


def report(unit: str, *, turn: int = 3, age: float = 5.0, health: str = "nominal", state: str = "active",
           pace: str = "primary", fill: float | None = 0.42, outcomes: tuple[ToolOutcome, ...] = (),
           doctrine=None, since_progress: int = 0) -> SaluteReport:
    doctrine = doctrine or ROLE.doctrine
    snapshot = Snapshot(turn=turn, role_id=ROLE.role_id, doctrine=doctrine, pace_level=pace, pace_plan=ROLE.pace_plan,
                        turns_since_progress=since_progress, progress_source="pack", outcomes=outcomes, context_fill=fill)
    return SaluteReport.model_validate({
        "reason": "turn",
        "status": {"state": state, "pace_level": pace, "health": health},
        "activity": {"current_tool": "text_editor"},
        "unit": {"unit_id": unit, "role_id": ROLE.role_id, "role_name": ROLE.role_name, "role_type": ROLE.role_type,
                 "reports_to": "engineering_xo", "organization": "software_dev"},
        "time": {"timestamp": datetime.now(timezone.utc) - timedelta(seconds=age), "turns_elapsed": turn, "turns_since_progress": since_progress},
        "environment": {"context_fill_pct": fill},
        "signals": signals_from_snapshot(snapshot),
    })


def publish(layout: VolumeLayout, unit: str, **fields) -> SaluteReport:
    value = report(unit, **fields)
    atomic_write_text(layout.report(unit), value.model_dump_json())
    return value


def steering(unit: str, seq: int, *, anomaly: str = "loop", severity: str = "hint", kind: str = "steer",
             text: str = "[SUPERVISOR] You repeated the same call three times; change the approach.") -> SteeringMessage:
    return SteeringMessage(id=uuid4().hex, seq=seq, unit=unit, sender_role="engineering_xo", kind=kind, anomaly=anomaly,
                           severity=severity, text=text, nudge=seq - 1, report_turn=3, created_at=datetime.now(timezone.utc),
                           expires_at=datetime.now(timezone.utc), epoch=1)


def deliver(layout: VolumeLayout, message: SteeringMessage, where: str = "inbox") -> Path:
    folder = {"inbox": layout.inbox, "processed": layout.processed, "rejected": layout.rejected}[where](message.unit)
    path = folder / layout.message_file(message.unit, message.seq, message.id).name
    atomic_write_text(path, message.model_dump_json())
    return path


@pytest.fixture
def layout(tmp_path) -> VolumeLayout:
    volume = VolumeLayout(tmp_path / "volume")
    volume.units_dir.mkdir(parents=True)
    return volume


def row_of(rows: list[dict], unit: str) -> dict:
    (row,) = [r for r in rows if r["unit"] == unit]
    return row


# --------------------------------------------------------------------------- rows


def test_rows_follow_freshness_and_never_show_a_silent_units_old_health(layout):
    for unit, age in (("fresh", 10), ("stale", 200), ("lost", 400)):
        publish(layout, unit, age=age, health="degraded")
    rows = status_rows(layout, time.time())

    assert [r["unit"] for r in rows] == ["fresh", "lost", "stale"]
    assert all(list(r) == list(STATUS_KEYS) for r in rows)
    fresh, lost, stale = rows
    assert (fresh["freshness"], fresh["health"]) == ("fresh", "degraded")
    assert (stale["freshness"], stale["health"]) == ("stale", "degraded")
    assert (lost["freshness"], lost["health"]) == ("very_stale", "unknown")
    assert 395 <= lost["age_seconds"] <= 420
    assert fresh["role"] == "codegen" and fresh["pace"] == "primary" and fresh["state"] == "active"
    assert fresh["context_fill"] == 0.42 and fresh["turn"] == 3 and fresh["error"] is None


def test_thresholds_come_from_the_units_own_doctrine(layout):
    quick = ROLE.doctrine.model_copy(update={"heartbeat": ROLE.doctrine.heartbeat.model_copy(
        update={"stale_after_seconds": 5, "very_stale_after_seconds": 20})})
    publish(layout, "impatient", age=30, doctrine=quick)
    publish(layout, "patient", age=30)
    rows = status_rows(layout, time.time())
    assert row_of(rows, "impatient")["freshness"] == "very_stale"
    assert row_of(rows, "impatient")["health"] == "unknown"
    assert row_of(rows, "patient")["freshness"] == "fresh"


def test_every_kind_of_bad_report_gets_a_row_saying_why(layout, tmp_path):
    publish(layout, "good")
    bad = {
        "torn": b'{"schema_version": 1, "reason": "tu',
        "list": b"[1, 2, 3]",
        "wrong-type": report("wrong-type").model_dump_json().replace('"turns_elapsed":3', '"turns_elapsed":"3"').encode(),
        "future": report("future").model_dump_json().replace('"schema_version":1', '"schema_version":2', 1).encode(),
        "huge": b" " * 300_000,
        "nested": b"[" * 5000 + b"]" * 5000,
    }
    for unit, data in bad.items():
        layout.unit_dir(unit).mkdir(parents=True)
        layout.report(unit).write_bytes(data)
    (tmp_path / "elsewhere.json").write_text(report("linked").model_dump_json())
    layout.unit_dir("linked").mkdir()
    layout.report("linked").symlink_to(tmp_path / "elsewhere.json")
    layout.unit_dir("silent").mkdir()
    layout.unit_dir("impostor").mkdir()  # the XO refuses a report that names another unit, so must the views
    layout.report("impostor").write_text(report("good").model_dump_json())
    (layout.units_dir / "Not A Unit").mkdir()
    (layout.units_dir / "readme").write_text("not a unit")
    (layout.units_dir / "elsewhere").symlink_to(layout.unit_dir("good"))

    rows = status_rows(layout, time.time())
    errors = {r["unit"]: r["error"] for r in rows}
    assert errors["good"] is None
    assert "not valid JSON" in errors["torn"]
    assert "expected a JSON object" in errors["list"]
    assert "turns_elapsed" in errors["wrong-type"]
    assert "schema_version 2 is newer" in errors["future"]
    assert "over the 256000-byte limit" in errors["huge"]
    assert "nested too deeply" in errors["nested"]
    assert "symbolic link" in errors["linked"]
    assert errors["silent"] == "no report yet"
    assert errors["impostor"] == "unit.unit_id: 'good' is not the unit of this folder ('impostor')"
    assert "not a valid unit id" in errors["Not A Unit"]
    assert errors["readme"] == "not a folder; ignored"
    assert errors["elsewhere"].startswith("is a symbolic link; a unit folder must be a real folder")
    for unit in bad | {"linked": 0, "silent": 0, "impostor": 0, "Not A Unit": 0, "readme": 0, "elsewhere": 0}:
        assert row_of(rows, unit)["health"] == "unknown"
        assert row_of(rows, unit)["freshness"] is None


def test_pending_counts_only_messages_waiting_in_the_inbox(layout):
    publish(layout, "u1")
    deliver(layout, steering("u1", 1), "processed")
    deliver(layout, steering("u1", 2), "rejected")
    deliver(layout, steering("u1", 3))
    deliver(layout, steering("u1", 4))
    (layout.inbox("u1") / ".0000000005-x.json.tmp").write_text("{")  # a writer's temporary file
    assert row_of(status_rows(layout, time.time()), "u1")["pending"] == 2


def test_nudges_and_pause_come_from_the_xos_state(layout):
    from org.macrocosm.store import XOStore
    from org.macrocosm.xo import XO

    publish(layout, "calm")
    publish(layout, "looping", turn=3, fill=0.95)  # context critical: the XO steers
    rows = status_rows(layout, time.time())
    assert row_of(rows, "looping")["nudges"] is None  # no XO has run yet

    home = layout.root.parent / "xo-home"
    home.mkdir()
    XO(layout, "engineering_xo", None, store=XOStore.for_home(home, layout.root)).sweep()
    assert row_of(status_rows(layout, time.time()), "looping")["nudges"] is None  # the XO's knowledge is in its home
    rows = status_rows(layout, time.time(), home=home)
    assert row_of(rows, "looping")["nudges"] == 1
    assert row_of(rows, "looping")["pending"] == 1
    assert row_of(rows, "looping")["paused"] is False
    assert row_of(rows, "calm")["nudges"] == 0


def test_a_paused_unit_shows_as_paused(layout):
    from org.macrocosm.store import XOStore
    from org.macrocosm.xo import XO

    doctrine = ROLE.doctrine.model_copy(update={
        "escalation": ROLE.doctrine.escalation.model_copy(update={"pause_after_nudges": 1}),
        "radio_check_interval_turns": 1, "cooldown_turns": 0,
    })
    from org.macrocosm.roles import RoleBook

    home = layout.root.parent / "xo-home"
    home.mkdir()
    xo = XO(layout, "engineering_xo", None, roles=RoleBook(fixed={ROLE.role_id: (doctrine, ROLE.pace_plan)}),  # the XO's own copy
            store=XOStore.for_home(home, layout.root))
    for turn in (1, 2):  # a nudge, then (unanswered) the pause
        publish(layout, "stuck", turn=turn, pace="contingent", doctrine=doctrine, since_progress=6)
        xo.sweep()
    row = row_of(status_rows(layout, time.time(), home=home), "stuck")
    assert row["paused"] is True
    assert "paused" in format_table([row])[0][1]


def test_a_watch_round_rereads_only_what_changed_and_forgets_gone_units(layout):
    import shutil

    publish(layout, "u1", turn=3)
    publish(layout, "u2", turn=3)
    cache = FileCache()
    assert [r["turn"] for r in status_rows(layout, time.time(), cache)] == [3, 3]
    first = dict(cache.entries)
    publish(layout, "u1", turn=4)
    assert [r["turn"] for r in status_rows(layout, time.time(), cache)] == [4, 3]
    u1, u2 = str(layout.report("u1")), str(layout.report("u2"))
    assert cache.entries[u2] is first[u2]  # unchanged: not read again
    assert cache.entries[u1] is not first[u1]
    shutil.rmtree(layout.unit_dir("u2"))
    assert [r["unit"] for r in status_rows(layout, time.time(), cache)] == ["u1"]
    assert all("u2" not in str(path) for path in cache.entries)


# --------------------------------------------------------------------------- the table


def test_table_columns_line_up():
    rows = [
        dict.fromkeys(STATUS_KEYS) | {"unit": "a", "role": "codegen", "health": "nominal", "pending": 0, "context_fill": 0.5,
                                            "age_seconds": 3.2, "freshness": "fresh", "nudges": 2},
        dict.fromkeys(STATUS_KEYS) | {"unit": "a-much-longer-unit", "health": "unknown", "pending": 12, "error": "no report yet"},
    ]
    (header, first, second), hidden = format_table(rows)
    assert hidden == []
    for name in ("ROLE", "HEALTH", "FILL", "AGE", "PENDING"):
        column = header.index(name)
        assert first[column - 2: column] == "  " and second[column - 2: column] == "  "
    assert first[header.index("FILL"):].startswith("50%")
    assert second[header.index("PENDING"):].startswith("12")
    assert second.endswith("no report yet")


@pytest.mark.parametrize("seconds, text", [(None, "-"), (0.4, "0s"), (119, "119s"), (125, "2m05s"), (7300, "2h01m"), (200000, "2d07h")])
def test_ages_read_easily(seconds, text):
    assert format_age(seconds) == text


def test_a_terminal_frame_redraws_in_place_without_a_blank_moment():
    text = frame(["one", "two"], tty=True)
    assert text.startswith(ESC + "H")
    assert text.endswith(ESC + "J")
    assert "one" + ESC + "K\n" in text and "two" + ESC + "K\n" in text
    assert ESC + "2J" not in text  # clearing the whole screen each time is what flickers
    assert frame(["one"], tty=False) == "one\n\n"


def test_a_frame_never_wraps_or_scrolls_the_terminal():
    lines = ["summary", "", "HEADER"] + [f"row {i} " + "x" * 200 for i in range(50)] + ["footer"]
    fitted = fit(lines, columns=80, rows=24)
    assert len(fitted) == 23 and fitted[-1] == "footer"
    assert fitted[-2] == "... 32 more lines; a taller terminal shows them"
    assert max(len(line) for line in fitted) == 79 and fitted[3].endswith("…")  # a cut line says so
    assert fit(["a", "b"], 80, 24) == ["a", "b"]


def test_a_narrow_watch_keeps_what_matters_and_says_what_it_hid(layout):
    """At 60 columns: the counts, then UNIT, HEALTH, FRESHNESS and NOTE; the columns left
    out are named, and problems come first so a lost unit is never below "... N more"."""
    for i in range(30):
        publish(layout, f"unit-{i:02d}")
    publish(layout, "zz-lost", age=1000)  # very stale, and last by name
    layout.unit_dir("zz-broken").mkdir()
    layout.report("zz-broken").write_text("{")
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 12, 60, 0, 0))
    process = subprocess.Popen([sys.executable, "-m", "org", "watch", "--volume", str(layout.root)], cwd=ROOT,
                               env={**os.environ, "A0ORG_WATCH_FRAMES": "1"}, stdin=follower, stdout=follower, stderr=subprocess.PIPE)
    os.close(follower)
    try:
        seen = read_until(leader, b"Ctrl-C to stop", 30).decode()
        process.wait(30)
    finally:
        if process.poll() is None:
            process.kill()
        os.close(leader)
    drawn = seen.rsplit(ESC + "H", 1)[1].split(ESC + "J", 1)[0]  # the one frame
    lines = drawn.replace("\r", "").replace(ESC + "K", "").split("\n")[:-1]
    assert lines[0].startswith("units: 32  stale: 1  pending steering: 0") and len(lines[0]) <= 59
    assert lines[1].startswith("hidden on this narrow terminal: TURN, ROLE, PACE")
    header = lines[2].split()
    assert header[0] == "UNIT" and {"HEALTH", "FRESHNESS", "NOTE"} <= set(header) and "TURN" not in header
    assert [line.split()[0] for line in lines[3:5]] == ["zz-broken", "zz-lost"]
    assert lines[-2].startswith("... ") and lines[-2].endswith("more units")
    assert all(len(line) <= 59 for line in lines)


def test_status_keeps_every_column_in_unit_order(layout):
    publish(layout, "b-lost", age=1000)
    publish(layout, "a-fine")
    lines = status_lines(layout, time.time())
    assert lines[1] == "" and [line.split()[0] for line in lines[3:]] == ["a-fine", "b-lost"]
    assert lines[2].split() == ["UNIT", "ROLE", "STATE", "PACE", "HEALTH", "FILL", "TURN", "AGE", "FRESHNESS", "PENDING",
                                "NUDGES", "NOTE"]


def test_a_screen_shows_the_first_units_and_says_how_many_more(layout):
    for i in range(30):
        publish(layout, f"unit-{i:02d}")
    lines = status_lines(layout, time.time(), max_rows=10)
    assert "units: 30" in lines[0]
    assert [line.split()[0] for line in lines[3:13]] == [f"unit-{i:02d}" for i in range(10)]
    assert lines[13:] == ["... 20 more units"]


# --------------------------------------------------------------------------- the commands, as processes


def test_status_json_has_stable_keys(layout):
    publish(layout, "codegen-1", age=2, fill=0.5)
    publish(layout, "devops-1", age=500)
    layout.unit_dir("broken").mkdir()
    layout.report("broken").write_text("{")
    layout.unit_dir("impostor").mkdir()
    layout.report("impostor").write_text(report("codegen-1").model_dump_json())
    deliver(layout, steering("codegen-1", 1))

    result = a0org("status", "--volume", str(layout.root), "--json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert list(document) == ["schema_version", "volume", "generated_at", "units"]
    assert document["schema_version"] == 1 and document["volume"] == str(layout.root)
    units = {row["unit"]: row for row in document["units"]}
    assert list(units) == ["broken", "codegen-1", "devops-1", "impostor"]
    assert all(list(row) == list(STATUS_KEYS) for row in units.values())
    assert units["codegen-1"] | {"age_seconds": None} == {
        "unit": "codegen-1", "role": "codegen", "state": "active", "pace": "primary", "health": "nominal", "context_fill": 0.5,
        "turn": 3, "age_seconds": None, "freshness": "fresh", "pending": 1, "nudges": None, "paused": None, "paused_by": None, "error": None,
        "degraded": None,
    }
    assert (units["devops-1"]["health"], units["devops-1"]["freshness"]) == ("unknown", "very_stale")
    assert units["broken"]["error"].startswith("not valid JSON")
    assert (units["impostor"]["health"], units["impostor"]["freshness"], units["impostor"]["role"]) == ("unknown", None, None)
    assert "is not the unit of this folder" in units["impostor"]["error"]


def test_status_table_as_a_process(layout):
    publish(layout, "codegen-1", fill=0.5)
    result = a0org("status", "--volume", str(layout.root))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "units: 1" in lines[0]
    assert lines[2].split() == ["UNIT", "ROLE", "STATE", "PACE", "HEALTH", "FILL", "TURN", "AGE", "FRESHNESS", "PENDING", "NUDGES", "NOTE"]
    assert lines[3].split()[:7] == ["codegen-1", "codegen", "active", "primary", "nominal", "50%", "3"]


def test_status_stops_quietly_when_its_reader_goes_away(layout):
    for i in range(300):  # far more JSON than a pipe holds
        publish(layout, f"unit-{i:03d}")
    process = subprocess.Popen([sys.executable, "-m", "org", "status", "--volume", str(layout.root), "--json"],
                               cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    process.stdout.read(10)
    process.stdout.close()
    assert process.wait(60) == 0
    assert "Traceback" not in process.stderr.read().decode()


def test_status_is_not_held_up_by_a_report_that_is_a_fifo(layout):
    publish(layout, "good")
    layout.unit_dir("piped").mkdir()
    os.mkfifo(layout.report("piped"))  # reading one waits for a writer that never comes
    result = a0org("status", "--volume", str(layout.root), "--json")
    assert result.returncode == 0, result.stderr
    units = {row["unit"]: row for row in json.loads(result.stdout)["units"]}
    assert units["piped"]["error"] == "not a regular file" and units["good"]["error"] is None


def test_status_of_a_missing_volume_says_so(tmp_path):
    result = a0org("status", "--volume", str(tmp_path / "nowhere"))
    assert result.returncode == 2
    assert "nowhere: not a folder" in result.stderr
    assert "Traceback" not in result.stderr


def test_watch_prints_successive_tables_when_not_on_a_terminal(layout):
    publish(layout, "codegen-1")
    result = a0org("watch", "--volume", str(layout.root), "--interval", "0.05", env={**os.environ, "A0ORG_WATCH_FRAMES": "3"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("UNIT  ") == 3
    assert result.stdout.count("codegen-1") == 3
    assert ESC not in result.stdout


def read_until(fd: int, needle: bytes, timeout: float) -> bytes:
    data = b""
    deadline = time.monotonic() + timeout
    while needle not in data and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the terminal closed: the process is gone
                break
            if not chunk:
                break
            data += chunk
    return data


def test_watch_redraws_in_place_on_a_terminal_and_stops_cleanly_on_ctrl_c(layout):
    publish(layout, "codegen-1")
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 160, 0, 0))
    # Ctrl-C as a terminal delivers it, even when this test runs where SIGINT is ignored (a background job)
    process = subprocess.Popen([sys.executable, "-m", "org", "watch", "--volume", str(layout.root), "--interval", "0.05"],
                               cwd=ROOT, stdin=follower, stdout=follower, stderr=subprocess.PIPE,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    os.close(follower)
    try:
        seen = read_until(leader, b"Ctrl-C to stop", 30)
        seen += read_until(leader, b"Ctrl-C to stop", 5)  # a second frame
        process.send_signal(signal.SIGINT)
        # read on while it stops: frames still queued in a full terminal would hold it in its last write
        seen += read_until(leader, b"\x1b[?25h", 30)
        code = process.wait(10)
    finally:
        if process.poll() is None:
            process.kill()
        os.close(leader)
    assert code == 0, process.stderr.read().decode()
    text = seen.decode()
    assert text.count(ESC + "H") >= 2 and ESC + "J" in text and "Ctrl-C to stop" in text
    assert text.count(ESC + "2J") == 1  # once, at the start
    assert text.rstrip().endswith(ESC + "?25h")  # the cursor is given back
    assert "Traceback" not in process.stderr.read().decode()


class Lines:
    """A ``tail`` process's output, line by line, with a time limit per line."""

    def __init__(self, process: subprocess.Popen):
        self.process = process
        self.buffer = b""

    def next(self, timeout: float = 15) -> str:
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"no line within {timeout}s; so far {self.buffer!r}"
            ready, _, _ = select.select([self.process.stdout], [], [], remaining)
            if ready:
                chunk = os.read(self.process.stdout.fileno(), 65536)
                assert chunk, f"tail ended early: {self.process.stderr.read().decode()}"
                self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line.decode()


def test_tail_shows_the_latest_then_follows_reports_and_steering(layout):
    unit = "codegen-1"
    publish(layout, unit, turn=3, outcomes=(ToolOutcome(3, "code_execution_tool", False, "not_found", "s", "h", "cat: x"),))
    old = [steering(unit, seq) for seq in (1, 2, 3)]
    deliver(layout, old[0], "processed")
    deliver(layout, old[1], "processed")
    rejected = deliver(layout, old[2], "rejected")
    rejected.with_name(rejected.name + ".reason").write_text("wrong signature (not signed with this organization's key)\n")

    process = subprocess.Popen(
        [sys.executable, "-m", "org", "tail", unit, "--volume", str(layout.root), "--last", "2", "--interval", "0.05"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, "A0ORG_TAIL_LINES": "7", "A0ORG_TAIL_SECONDS": "60"},
    )
    lines = Lines(process)
    try:
        first = lines.next()
        assert "report  turn 3  PACE primary  health nominal  state active" in first
        assert "tool code_execution_tool failed (not_found)" in first and "context 42%" in first
        assert "#2 processed" in lines.next()  # only the last two of the three
        last = lines.next()
        assert "#3 rejected" in last and "hint" in last and "loop" in last
        assert "[rejected: wrong signature" in last

        new = steering(unit, 4, anomaly="context", severity="warning", text="[SUPERVISOR] Context 95% full.")
        path = deliver(layout, new)
        line = lines.next()
        assert "#4 inbox" in line and "warning" in line and "context" in line and "Context 95% full." in line
        os.replace(path, layout.processed(unit) / path.name)
        assert "#4 processed" in lines.next()

        publish(layout, unit, turn=4, health="degraded", pace="alternate", state="error_recovery", fill=0.61)
        line = lines.next()
        assert "turn 4  PACE alternate  health degraded  state error_recovery" in line and "context 61%" in line
        layout.report(unit).write_text("{")
        assert "salute.json: not valid JSON" in lines.next()
        assert process.wait(15) == 0  # $A0ORG_TAIL_LINES (7) reached
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_tail_stops_at_its_timeout_and_refuses_bad_unit_ids(layout):
    layout.unit_dir("quiet").mkdir()
    result = a0org("tail", "quiet", "--volume", str(layout.root), "--interval", "0.05", env={**os.environ, "A0ORG_TAIL_SECONDS": "0.3"})
    assert (result.returncode, result.stdout) == (0, "")

    result = a0org("tail", "../etc", "--volume", str(layout.root))
    assert result.returncode == 2
    assert "not a valid id" in result.stderr and "Traceback" not in result.stderr
