"""The XO as a real process on a real temporary volume, with units as real processes.

Units are ``tests/volume_units.py write`` processes; the XO is ``python -m org xo``.
Waits are generous and nothing asserts on speed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from cryptography.hazmat.primitives import serialization
from volume_units import KEYRING, ROLE, SIGNER, message_files, messages, unit_key, wait_for

from org.contracts import SteeringMessage
from org.kernel.files import atomic_write_bytes
from org.macrocosm.keys import XOHomeLayout
from org.macrocosm.store import read_states
from org.macrocosm.volume import VolumeLayout, message_name, xo_running
from org.supervisor.escalation import nudge_severity

ROOT = Path(__file__).resolve().parent.parent
UNITS_SCRIPT = ROOT / "tests" / "volume_units.py"
EVERY_TURN = json.dumps({"radio_check_interval_turns": 1, "cooldown_turns": 0})
WAIT = 120.0


#: Units the tests run; each has its report key registered with the XO.
UNIT_NAMES = ("unit-1", "unit-a", "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", *(f"unit-{i:02d}" for i in range(64)))


def xo_home(keys: Path) -> Path:
    """A key folder as ``a0org keys`` makes it, with the test XO key, the units' test report
    keys, and the XO's own copy of the codegen role (checked every turn, no cooldown)."""
    home = XOHomeLayout(keys / "xo")
    for folder in (keys, home.root, home.signing_dir, home.units_dir, home.roles_dir):
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    pem = SIGNER.private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    atomic_write_bytes(home.signing_dir / f"{SIGNER.key_id}.pem", pem, mode=0o600)
    atomic_write_bytes(home.active_file, SIGNER.key_id.encode() + b"\n", mode=0o600)
    for unit in UNIT_NAMES:
        atomic_write_bytes(home.units_dir / f"{unit}.key", unit_key(unit).hex().encode() + b"\n", mode=0o600)
    role = ROLE.model_dump(mode="json")
    role["doctrine"].update(json.loads(EVERY_TURN))
    (home.roles_dir / f"{ROLE.role_id}.yaml").write_text(yaml.safe_dump(role))
    return home.root


class Processes:
    """Starts processes and makes sure none outlives the test."""

    def __init__(self, tmp_path: Path):
        self.tmp_path = tmp_path
        self.started: list[subprocess.Popen] = []
        self.env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        for name in ("A0ORG_KEY", "A0ORG_KEY_FILE", "A0ORG_XO_HOME"):
            self.env.pop(name, None)
        self.home = xo_home(tmp_path / "keys")

    def start(self, args: list[str], name: str) -> tuple[subprocess.Popen, Path]:
        log = self.tmp_path / f"{name}.log"
        handle = open(log, "ab")
        process = subprocess.Popen([sys.executable, *args], cwd=ROOT, env=self.env, stdout=handle, stderr=subprocess.STDOUT)
        handle.close()
        self.started.append(process)
        return process, log

    def xo(self, volume: Path, *options: str, name: str = "xo", ready: str = "XO engineering_xo ") -> tuple[subprocess.Popen, Path]:
        process, log = self.start(["-m", "org", "xo", "--volume", str(volume), "--role", "engineering_xo", "--home", str(self.home), *options], name)
        if ready and not wait_for(lambda: ready in log.read_text() or process.poll() is not None, WAIT):
            pytest.fail(f"the XO did not start:\n{log.read_text()}")
        assert process.poll() is None, log.read_text()
        return process, log

    def xo_to_the_end(self, *args: str) -> subprocess.CompletedProcess:
        """``a0org xo ARGS`` run until it exits by itself."""
        command = [sys.executable, "-m", "org", "xo", *args, *(() if "--home" in args or "--insecure" in args else ("--home", str(self.home)))]
        return subprocess.run(command, cwd=ROOT, env=self.env, capture_output=True, text=True, timeout=WAIT, check=False)

    def unit(self, volume: Path, unit: str, *options: str) -> tuple[subprocess.Popen, Path]:
        return self.start([str(UNITS_SCRIPT), "write", "--volume", str(volume), "--unit", unit, *options], unit)

    def stop_all(self) -> None:
        for process in self.started:
            if process.poll() is None:
                process.kill()
            process.wait(timeout=30)


@pytest.fixture
def procs(tmp_path):
    processes = Processes(tmp_path)
    yield processes
    processes.stop_all()


@pytest.fixture
def volume(tmp_path) -> Path:
    root = tmp_path / "volume"
    root.mkdir()
    return root


def finish(process: subprocess.Popen, log: Path) -> None:
    assert process.wait(timeout=WAIT * 2) == 0, log.read_text()


def terminate(process: subprocess.Popen, log: Path) -> str:
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=WAIT) == 0, log.read_text()
    return log.read_text()


def expected_ladder(count: int, pause_after: int = 5) -> list[tuple[str, str]]:
    """Kinds and severities of ``count`` steering about an anomaly that never clears,
    checked at every turn: the ladder up to a pause, which the next turn resumes."""
    ladder, nudges = [], 0
    for _ in range(count):
        if nudges >= pause_after:
            ladder.append(("pause", "critical"))
            nudges = 0
        else:
            ladder.append(("steer", nudge_severity(nudges)))
            nudges += 1
    return ladder


def check_exactly_once(volume: Path, unit: str) -> list[dict]:
    """Every steering of the unit exists once: seqs 1..n without gaps, unique ids, names
    that match their content, valid signatures, one per judged turn, nothing pending."""
    files = message_files(volume, unit)
    found = [json.loads(p.read_text()) for p in files]
    for path, payload in zip(files, found, strict=True):
        assert path.name == message_name(payload["seq"], payload["id"])
        assert KEYRING.verify(payload) is None
        SteeringMessage.model_validate(payload)
    found.sort(key=lambda m: m["seq"])
    assert [m["seq"] for m in found] == list(range(1, len(found) + 1)), [p.name for p in files]
    assert len({m["id"] for m in found}) == len(found)
    turns = [m["report_turn"] for m in found]
    assert turns == sorted(set(turns)), turns
    state = read_states(volume.parent / "keys" / "xo").get(unit)  # the XO's memory, in the home Processes made
    if found:
        assert state is not None and state.seq == len(found) and state.outbox == []
    return found


# ----- one XO per volume, clean stops ------------------------------------------------


def test_one_xo_per_volume_and_a_clean_stop(procs, volume):
    first, first_log = procs.xo(volume)
    layout = VolumeLayout(volume)
    assert xo_running(layout, time.time())  # units know an XO steers them
    second = procs.xo_to_the_end("--volume", str(volume))
    assert second.returncode == 2
    assert f"another XO is already running on this volume (pid {first.pid})" in second.stderr
    assert f"{volume} is locked" in second.stderr

    text = terminate(first, first_log)
    assert "XO stopping (SIGTERM)" in text and "XO engineering_xo stopped" in text
    assert not layout.xo_heartbeat.exists() and not xo_running(layout, time.time())  # units steer themselves again

    once = procs.xo_to_the_end("--volume", str(volume), "--once")
    assert once.returncode == 0, once.stderr  # the lock went with the stopped XO


def test_sigint_stops_the_xo_cleanly(procs, volume):
    process, log = procs.xo(volume)
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=WAIT) == 0
    assert "XO stopping (SIGINT)" in log.read_text()


def test_the_key_is_never_printed_and_a_bad_home_stops_the_start(procs, volume, tmp_path):
    empty = tmp_path / "empty-home"
    empty.mkdir(mode=0o700)
    bad = procs.xo_to_the_end("--volume", str(volume), "--home", str(empty))
    assert bad.returncode == 2 and "no active signing key; run `a0org keys init`" in bad.stderr

    missing = procs.xo_to_the_end("--volume", str(tmp_path / "nowhere"))
    assert missing.returncode == 2 and "the volume folder does not exist" in missing.stderr

    unit, unit_log = procs.unit(volume, "unit-1", "--scenario", "stall", "--turns", "3", "--doctrine", EVERY_TURN)
    finish(unit, unit_log)
    once = procs.xo_to_the_end("--volume", str(volume), "--once")
    assert once.returncode == 0
    assert "steering sent: unit=unit-1 seq=1 anomaly=stall severity=hint kind=steer" in once.stderr
    secret = (procs.home / "signing" / f"{SIGNER.key_id}.pem").read_text().splitlines()[1]
    assert secret not in once.stderr and secret not in once.stdout
    assert len(check_exactly_once(volume, "unit-1")) == 1


# ----- units and an XO, all real processes -------------------------------------------


def test_units_writing_continuously_are_each_steered_exactly_once_per_check(procs, volume):
    xo, xo_log = procs.xo(volume)
    turns = 40
    scenarios = {"alpha": "stall", "bravo": "loop", "charlie": "cascade", "delta": "healthy"}
    units = [
        procs.unit(volume, unit, "--scenario", scenario, "--turns", str(turns), "--interval", "0.01", "--doctrine", EVERY_TURN, "--ack")
        for unit, scenario in scenarios.items()
    ]
    for process, log in units:
        finish(process, log)  # acknowledging parses every steering file: a torn one fails the unit
    for unit, scenario in scenarios.items():
        if scenario != "healthy":
            assert wait_for(lambda unit=unit: any(m["report_turn"] == turns for m in messages(volume, unit)), WAIT), unit
    text = terminate(xo, xo_log)

    assert check_exactly_once(volume, "delta") == []
    total = 0
    for unit in ("alpha", "bravo", "charlie"):
        found = check_exactly_once(volume, unit)
        assert {m["anomaly"] for m in found} == {scenarios[unit]}
        assert [(m["kind"], m["severity"]) for m in found] == expected_ladder(len(found))
        assert found[-1]["report_turn"] == turns
        total += len(found)
    assert text.count("steering sent: ") == total
    assert "with native file-system events" in text


def test_a_kill_9_mid_stream_loses_nothing_and_doubles_nothing(procs, volume):
    """Units wait for the XO's answer to each turn, so exactly one steering per turn
    must exist in the end, whatever the kills interrupted."""
    xo, xo_log = procs.xo(volume, name="xo-0")
    turns = 30
    lockstep = ["alpha", "bravo", "charlie"]
    units = [
        procs.unit(volume, unit, "--scenario", "stall", "--turns", str(turns), "--interval", "0", "--doctrine", EVERY_TURN, "--lockstep", "--ack", "--timeout", str(WAIT))
        for unit in lockstep
    ]
    units.append(procs.unit(volume, "delta", "--scenario", "loop", "--turns", "400", "--interval", "0.01", "--doctrine", EVERY_TURN, "--ack"))

    def total() -> int:
        return sum(len(message_files(volume, u)) for u in lockstep)

    for kill, threshold in enumerate((8, 25, 45, 70), start=1):
        assert wait_for(lambda threshold=threshold: total() >= threshold, WAIT), xo_log.read_text()
        xo.send_signal(signal.SIGKILL)
        xo.wait(timeout=WAIT)
        xo, xo_log = procs.xo(volume, name=f"xo-{kill}")
    for process, log in units:
        finish(process, log)
    assert wait_for(lambda: any(m["report_turn"] == 400 for m in messages(volume, "delta")), WAIT)
    terminate(xo, xo_log)

    for unit in lockstep:
        found = check_exactly_once(volume, unit)
        assert [m["report_turn"] for m in found] == list(range(1, turns + 1))
        assert [(m["kind"], m["severity"]) for m in found] == expected_ladder(turns)
        processed = VolumeLayout(volume).processed(unit)
        assert processed.is_dir() and any(processed.iterdir())
    found = check_exactly_once(volume, "delta")
    assert [(m["kind"], m["severity"]) for m in found] == expected_ladder(len(found))
    assert found[-1]["report_turn"] == 400


def test_the_polling_path(procs, volume):
    xo, xo_log = procs.xo(volume, "--polling", "--poll-interval", "0.05")
    unit, log = procs.unit(volume, "unit-1", "--scenario", "stall", "--turns", "8", "--interval", "0", "--doctrine", EVERY_TURN, "--lockstep", "--timeout", str(WAIT))
    finish(unit, log)
    text = terminate(xo, xo_log)
    assert "XO engineering_xo polling" in text and "native file-system events" not in text
    found = check_exactly_once(volume, "unit-1")
    assert [m["report_turn"] for m in found] == list(range(1, 9))


def test_the_xo_falls_back_to_polling_when_events_stop_arriving(procs, volume):
    """The watched units folder is swapped for a new one (as when a volume is mounted
    again): no event reaches the XO any more, and a safety scan notices."""
    xo, xo_log = procs.xo(volume, "--rescan", "0.3", "--poll-interval", "0.05")
    assert "with native file-system events" in xo_log.read_text()
    units = volume / "units"
    units.rename(volume / "units.old")
    units.mkdir()
    unit, log = procs.unit(volume, "unit-1", "--scenario", "stall", "--turns", "6", "--interval", "0", "--doctrine", EVERY_TURN, "--lockstep", "--timeout", str(WAIT))
    finish(unit, log)
    text = terminate(xo, xo_log)
    assert "this volume does not deliver native events; polling every 0.05 s" in text
    assert "XO engineering_xo polling" in text
    assert [m["report_turn"] for m in check_exactly_once(volume, "unit-1")] == list(range(1, 7))


# ----- atomic reports ----------------------------------------------------------------


def _reader(procs: Processes, path: Path, name: str, seconds: float = 0.5) -> tuple[subprocess.Popen, Path]:
    return procs.start([str(UNITS_SCRIPT), "read", "--path", str(path), "--seconds", str(seconds)], name)


def _counts(log: Path) -> dict:
    return json.loads(log.read_text().strip().splitlines()[-1])


NAIVE_WRITER = """
import sys, time
path, text = sys.argv[1], open(sys.argv[2]).read()
deadline = time.monotonic() + float(sys.argv[3])
while time.monotonic() < deadline:
    with open(path, "w") as handle:  # rewritten in place, a chunk at a time
        for start in range(0, len(text), 4096):
            handle.write(text[start:start + 4096])
            handle.flush()
            time.sleep(0.0002)
"""


def test_readers_never_see_a_torn_report(procs, volume, tmp_path):
    path = VolumeLayout(volume).report("unit-1")
    writer, _ = procs.unit(volume, "unit-1", "--scenario", "cascade", "--turns", "100000", "--interval", "0", "--padding", "60000")
    assert wait_for(path.exists, WAIT)
    readers = [_reader(procs, path, f"reader-{i}") for i in range(2)]
    for process, log in readers:
        assert process.wait(timeout=WAIT) == 0, log.read_text()
    writer.kill()
    counts = [_counts(log) for _, log in readers]
    assert all(c["torn"] == 0 for c in counts), [log.read_text() for _, log in readers]
    assert all(c["reads"] > 20 for c in counts), counts

    # the same readers do see torn files when a report is rewritten in place
    text = tmp_path / "report.json"
    text.write_text(path.read_text())
    # (it rewrites until the reader is done: on a loaded machine the reader may start late)
    naive, _ = procs.start(["-c", NAIVE_WRITER, str(path), str(text), str(WAIT)], "naive")
    reader, reader_log = _reader(procs, path, "reader-naive")
    assert reader.wait(timeout=WAIT) == 0
    naive.kill()
    assert _counts(reader_log)["torn"] > 0, reader_log.read_text()
