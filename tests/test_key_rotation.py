"""Key rotation that keeps supervising: a running unit process (the pack's real hooks in the
stand-in Agent-Zero) stuck in a loop, steered by an XO process, through a rotation, an XO
restart and the retirement of the old key while a message signed with it waits in the inbox.

Before: a running unit read ``steering.pub`` once, so after a rotation and an XO restart it
refused every new message; a refused message never moved the seq the unit reported, and the
XO waited for it forever: no steering at all.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_xo_processes import Processes, terminate
from volume_units import wait_for

from org.macrocosm.volume import VolumeLayout

ROOT = Path(__file__).resolve().parent.parent
WAIT = 120.0
UNIT = "unit-1"


def a0org(*args: str) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "org", *args], cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return done


def applied_keys(layout: VolumeLayout) -> list[str]:
    """The key ids of the steering the unit applied, by seq."""
    folder = layout.processed(UNIT)
    names = sorted(p for p in folder.iterdir() if p.suffix == ".json") if folder.is_dir() else []
    return [json.loads(p.read_text())["key_id"] for p in names]


def pending(layout: VolumeLayout) -> list[Path]:
    inbox = layout.inbox(UNIT)
    return sorted(p for p in inbox.iterdir() if p.is_file() and p.suffix == ".json") if inbox.is_dir() else []


@pytest.fixture
def procs(tmp_path):
    processes = Processes(tmp_path)
    yield processes
    processes.stop_all()


def test_rotation_restart_and_retirement_lose_no_steering(procs, tmp_path):
    volume, keys = tmp_path / "volume", tmp_path / "org-keys"
    volume.mkdir()
    layout = VolumeLayout(volume)
    a0org("keys", "init", "--dir", str(keys))
    a0org("keys", "unit", UNIT, "--dir", str(keys))
    old = (keys / "xo" / "signing" / "active").read_text().strip()
    procs.home = keys / "xo"
    xo, xo_log = procs.xo(volume, "--polling", "--poll-interval", "0.05")

    env = {**procs.env, "A0ORG_VOLUME": str(volume), "A0ORG_UNIT": UNIT,
           "A0ORG_STEERING_KEYS": str(keys / "public" / "steering.pub"), "A0ORG_UNIT_KEY": str(keys / "units" / f"{UNIT}.key"),
           "A0ORG_UNIT_STATE": str(tmp_path / "unit-state.json"), "A0ORG_HOME": str(tmp_path / "orgs")}
    out = tmp_path / "unit.json"
    with open(tmp_path / "unit.log", "ab") as unit_log:
        unit = subprocess.Popen([sys.executable, str(ROOT / "tests" / "looping_unit.py"), "--org-home", str(tmp_path / "orgs"),
                                 "--until", "2", "--seconds", "100", "--out", str(out)],
                                cwd=ROOT, env=env, stdout=unit_log, stderr=subprocess.STDOUT)
    procs.started.append(unit)
    assert wait_for(lambda: applied_keys(layout) == [old], WAIT), xo_log.read_text()

    # the next message, signed with the old key, is caught waiting in the inbox
    while True:
        assert wait_for(lambda: pending(layout), WAIT), xo_log.read_text()
        unit.send_signal(signal.SIGSTOP)
        if pending(layout):
            break
        unit.send_signal(signal.SIGCONT)
    [in_flight] = pending(layout)
    assert json.loads(in_flight.read_text())["key_id"] == old

    a0org("keys", "rotate", "--dir", str(keys))
    new = (keys / "xo" / "signing" / "active").read_text().strip()
    terminate(xo, xo_log)
    xo, xo_log = procs.xo(volume, "--polling", "--poll-interval", "0.05", name="xo-2")  # signs with the new key
    a0org("keys", "retire", old, "--dir", str(keys))  # the waiting message's key is gone from steering.pub
    time.sleep(0.05)
    unit.send_signal(signal.SIGCONT)

    assert wait_for(lambda: new in applied_keys(layout), WAIT), (xo_log.read_text(), (tmp_path / "unit.log").read_text())
    assert unit.wait(timeout=WAIT) == 0
    text = terminate(xo, xo_log)
    rejected = layout.rejected(UNIT)
    assert (rejected / (in_flight.name + ".reason")).read_text().startswith(f"signed with key '{old}'")
    assert f"steering sent again: unit={UNIT}" in text and "refused by the unit (key" in text
    warnings = json.loads(out.read_text())["warnings"]
    # steered on, under the new key, with no restart of the unit: the loop steering, then the one that
    # was in flight (sent again), whatever it is (the pause, when the loop went on)
    assert len(warnings) >= 2, warnings
    assert "steering keys read again" in (tmp_path / "unit.log").read_text()
