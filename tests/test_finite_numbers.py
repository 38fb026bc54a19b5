"""No NaN or infinity in any contract, and a damaged XO state loses only its damaged part.

An infinite number is accepted by YAML (``.inf``) and by Python's JSON (``Infinity``) but
cannot be written back as JSON: an XO that took an infinite heartbeat threshold from a
report saved a state it could not load again after a restart. Every contract now
refuses such numbers with the file, the field and the reason; the XO and the views keep
what can be kept of a state file that is damaged anyway, and say what they dropped.
"""

from __future__ import annotations

import importlib
import json
import math
import sqlite3
import pkgutil
import signal
from pathlib import Path

import pytest
from test_xo_processes import EVERY_TURN, WAIT, Processes, terminate
from volume_units import ROLE, doctrine, messages, publish, report_for, scenario_snapshot, unit_key, wait_for

import org.contracts
from org.contracts.common import Contract
from org.contracts.role import HeartbeatDoctrine
from org.kernel.files import FileRefused
from org.macrocosm.signing import seal_report
from org.macrocosm.state import UnitState
from org.macrocosm.store import XOStore, read_states
from org.macrocosm.volume import VolumeLayout, read_report
from org.supervisor.detectors import detect_context, run_detectors
from org.supervisor.snapshot import Snapshot

UNIT = "unit-1"
EVERY_TURN_DOCTRINE = json.loads(EVERY_TURN)


def contract_models() -> list[type]:
    """Every contract model: each module of org.contracts and the XO's own state."""
    for module in pkgutil.iter_modules(org.contracts.__path__):
        importlib.import_module(f"org.contracts.{module.name}")
    importlib.import_module("org.macrocosm.state")
    found, todo = [], [Contract]
    while todo:
        model = todo.pop()
        found.append(model)
        todo.extend(model.__subclasses__())
    return found


def test_every_contract_refuses_nan_and_infinity():
    models = contract_models()
    assert len(models) > 40
    assert [m.__name__ for m in models if m.model_config.get("allow_inf_nan") is not False] == []
    for bad in (math.inf, -math.inf, math.nan):
        with pytest.raises(ValueError, match="finite number"):
            HeartbeatDoctrine(stale_after_seconds=bad)
    with pytest.raises(ValueError, match="finite number"):
        UnitState.model_validate_json('{"unit": "u", "report_time": NaN}')


def _report_value(context_fill: float | None = 0.3, **doctrine_changes) -> dict:
    report = report_for(UNIT, scenario_snapshot("stall", 3, doctrine(**EVERY_TURN_DOCTRINE)))
    value = report.model_dump(mode="json")
    value["signals"]["context_fill"] = context_fill
    value["signals"]["doctrine"]["heartbeat"].update(doctrine_changes)
    return value


def test_a_report_with_infinity_is_refused_naming_the_field(tmp_path):
    path = tmp_path / "salute.json"
    path.write_text(json.dumps(_report_value(math.inf)))  # Python writes Infinity
    assert "Infinity" in path.read_text()
    with pytest.raises(FileRefused, match=r"signals\.context_fill: Input should be a finite number"):
        read_report(path)
    path.write_text(json.dumps(_report_value(stale_after_seconds=math.inf)))
    with pytest.raises(FileRefused, match=r"signals\.doctrine\.heartbeat\.stale_after_seconds: Input should be a finite number"):
        read_report(path)


def test_the_context_detector_fails_open():
    for fill in (math.inf, math.nan):
        live = Snapshot(turn=3, role_id=ROLE.role_id, doctrine=ROLE.doctrine, context_fill=fill,
                        turns_since_progress=ROLE.doctrine.max_turns_without_progress + 1)
        assert detect_context(live) is None
        assert [f.anomaly for f in run_detectors(live)] == ["stall"]  # the others still run


def test_one_failing_detector_leaves_the_others_running(monkeypatch):
    from org.supervisor import detectors

    def broken(snapshot):
        raise OverflowError("cannot convert float infinity to integer")

    monkeypatch.setitem(detectors.DETECTORS, "context", broken)
    live = Snapshot(turn=3, role_id=ROLE.role_id, doctrine=ROLE.doctrine, turns_since_progress=99)
    assert [f.anomaly for f in run_detectors(live)] == ["stall"]


# ----- damaged saved states --------------------------------------------------------------


def _saved(home: Path, **fields) -> Path:
    """A saved state in the XO's store, then changed as a damaged one would be."""
    state = UnitState(unit=UNIT, nudges=3, paused_turn=7, seq=4, supervisor={"last_fired": {"stall": 6}})
    store = XOStore.for_home(home)
    assert store.save([state])
    value = json.loads(state.model_dump_json())
    value.update(fields)
    store.db.execute("UPDATE unit_states SET state = ? WHERE unit = ?", (json.dumps(value), UNIT))
    store.close()
    return store.path


def test_a_damaged_field_is_dropped_and_the_rest_kept(tmp_path, caplog):
    # what an XO that took an infinite threshold wrote: JSON has no infinity, so null
    path = _saved(tmp_path, heartbeat={"stale_after_seconds": None, "very_stale_after_seconds": 300},
                  recent=[{"seq": 1}, {"seq": 2, "id": "x", "anomaly": "stall", "severity": "hint", "kind": "steer", "sent_at": 1.0}])
    state = XOStore.for_home(tmp_path).load()[UNIT]
    assert (state.nudges, state.paused_turn, state.seq, state.supervisor) == (3, 7, 4, {"last_fired": {"stall": 6}})
    assert state.heartbeat == HeartbeatDoctrine() and [r.seq for r in state.recent] == [2]
    assert f"{path} [{UNIT}]: heartbeat.stale_after_seconds: Input should be a valid number (heartbeat back to its default)" in caplog.text
    assert "(recent entry 0 dropped)" in caplog.text
    assert read_states(tmp_path)[UNIT].nudges == 3  # the views show what is kept


def test_a_state_of_another_unit_is_not_used(tmp_path, caplog):
    _saved(tmp_path, unit="unit-2")
    assert XOStore.for_home(tmp_path).load() == {}
    assert "does not match the unit it is saved for" in caplog.text


# ----- the XO as a process ---------------------------------------------------------------


@pytest.fixture
def procs(tmp_path):
    processes = Processes(tmp_path)
    yield processes
    processes.stop_all()


def _stall(volume: Path, turn: int, **heartbeat) -> None:
    if not heartbeat:
        publish(volume, UNIT, "stall", turn, doctrine(**EVERY_TURN_DOCTRINE))
        return
    value = report_for(UNIT, scenario_snapshot("stall", turn, doctrine(**EVERY_TURN_DOCTRINE))).model_dump(mode="json")
    value["signals"]["doctrine"]["heartbeat"].update(heartbeat)
    layout = VolumeLayout(volume)
    path = layout.report(UNIT)
    tmp = path.with_name("salute.json.writing")
    value.pop("signature", None)
    # json writes float("inf") as Infinity; sealed with the unit's key, as the unit writes it
    tmp.write_text(seal_report(json.dumps(value, separators=(",", ":")), unit_key(UNIT)))
    tmp.replace(path)


def test_an_infinite_heartbeat_threshold_does_not_cost_the_xo_its_memory(procs, tmp_path):
    """Two nudges, then a report with an infinite threshold, then a restart: the ladder
    goes on at the third nudge instead of starting again with a hint."""
    volume = tmp_path / "volume"
    volume.mkdir()
    xo, log = procs.xo(volume, name="xo-1")
    for turn in (1, 2):
        _stall(volume, turn)
        assert wait_for(lambda turn=turn: len(messages(volume, UNIT)) == turn, WAIT), log.read_text()
    _stall(volume, 3, stale_after_seconds=math.inf)
    report = str(VolumeLayout(volume).report(UNIT))
    refused = f"skipped {report}: not a valid SALUTE report: signals.doctrine.heartbeat.stale_after_seconds: Input should be a finite number"
    assert wait_for(lambda: refused in log.read_text() or len(messages(volume, UNIT)) > 2, WAIT)
    text = terminate(xo, log)
    assert refused in text and "unexpected" not in text

    xo, log = procs.xo(volume, name="xo-2")
    _stall(volume, 4)
    assert wait_for(lambda: len(messages(volume, UNIT)) >= 3, WAIT), log.read_text()
    text = terminate(xo, log)
    assert "starts afresh" not in text
    third = messages(volume, UNIT)[2]
    assert (third["seq"], third["nudge"], third["severity"]) == (3, 2, "warning"), third
    assert read_states(procs.home).get(UNIT).nudges == 3


def test_a_restarted_xo_keeps_the_outbox_and_ladder_of_a_damaged_state(procs, tmp_path):
    volume = tmp_path / "volume"
    volume.mkdir()
    layout = VolumeLayout(volume)
    xo, log = procs.xo(volume, name="xo-1")
    for turn in (1, 2):
        _stall(volume, turn)
        assert wait_for(lambda turn=turn: len(messages(volume, UNIT)) == turn, WAIT), log.read_text()
    xo.send_signal(signal.SIGKILL)
    xo.wait(timeout=WAIT)

    # the second steering goes back into the outbox, not yet delivered, and the state is
    # damaged the way an XO that took an infinite threshold left it
    [second] = [p for p in layout.inbox(UNIT).iterdir() if p.name.startswith("0000000002-")]
    payload = json.loads(second.read_text())
    second.unlink()
    db = sqlite3.connect(Path(procs.home) / "xo.sqlite3")
    value = json.loads(db.execute("SELECT state FROM unit_states WHERE unit = ?", (UNIT,)).fetchone()[0])
    value["heartbeat"] = {"stale_after_seconds": None, "very_stale_after_seconds": None}
    value["outbox"] = [payload, {"not": "a message"}]
    db.execute("UPDATE unit_states SET state = ? WHERE unit = ?", (json.dumps(value), UNIT))
    db.commit()
    db.close()
    path = f"{Path(procs.home) / 'xo.sqlite3'} [{UNIT}]"

    xo, log = procs.xo(volume, name="xo-2")
    assert wait_for(second.exists, WAIT), log.read_text()  # delivered from the kept outbox
    _stall(volume, 3)
    assert wait_for(lambda: len(messages(volume, UNIT)) >= 3, WAIT), log.read_text()
    text = terminate(xo, log)
    assert f"{path}: heartbeat.stale_after_seconds: Input should be a valid number (heartbeat back to its default)" in text
    assert f"{path}: outbox.1: not a steering message" in text and "(outbox entry 1 dropped)" in text
    assert "starts afresh" not in text
    third = messages(volume, UNIT)[2]
    assert (third["seq"], third["nudge"], third["severity"]) == (3, 2, "warning"), third
