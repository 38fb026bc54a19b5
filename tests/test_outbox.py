"""The XO's outbox on a real temporary volume: written ahead, delivered once, redelivered
after a crash, and never again once the unit has the message."""

from __future__ import annotations

import json
import logging
import os

import pytest
from volume_units import KEYRING, SIGNER

from org.macrocosm.outbox import Outbox
from org.macrocosm.policy import Steering
from org.macrocosm.state import UnitState
from org.macrocosm.store import XOStore
from org.macrocosm.volume import VolumeLayout, message_name

KEY = SIGNER
UNIT = "unit-1"
T0 = 1_900_000_000.0
LOOP = Steering(kind="steer", anomaly="loop", severity="hint", text="[SUPERVISOR] Change the approach.", nudge=0, turn=4)


@pytest.fixture
def store(tmp_path) -> XOStore:
    """The XO's memory in its home (a folder beside the volume)."""
    (tmp_path / "xo-home").mkdir()
    return XOStore.for_home(tmp_path / "xo-home")


def save_unit_state(store: XOStore, state: UnitState) -> bool:
    return store.save([state])


def load_unit_state(store: XOStore, unit: str) -> UnitState:
    return XOStore(store.path).load()[unit]  # as a fresh XO process reads it


@pytest.fixture
def layout(tmp_path) -> VolumeLayout:
    volume = VolumeLayout(tmp_path / "volume")
    volume.unit_dir(UNIT).mkdir(parents=True)
    return volume


def outbox(layout: VolumeLayout, store: XOStore) -> Outbox:
    """An outbox as a fresh XO process has it: the state is saved before every delivery."""
    return Outbox(layout, "engineering_xo", KEY, lambda state: save_unit_state(store, state), clock=lambda: T0)


def files(folder) -> list[str]:
    """The message files in a folder (``processed/`` and ``rejected/`` are inside the inbox)."""
    try:
        return sorted(name for name in os.listdir(folder) if (folder / name).is_file())
    except FileNotFoundError:
        return []


def test_a_message_is_in_the_saved_outbox_before_its_inbox_file_exists(layout, store):
    seen: list[tuple[list, list]] = []

    def write_ahead(state: UnitState) -> bool:
        save_unit_state(store, state)
        seen.append((load_unit_state(store, UNIT).outbox, files(layout.inbox(UNIT))))
        return True

    box = Outbox(layout, "engineering_xo", KEY, write_ahead, clock=lambda: T0)
    state = UnitState(unit=UNIT)
    message_id = box.record(state, LOOP, T0)
    box.deliver(state, {message_id})

    [(saved_outbox, inbox_then)] = seen
    assert [m["id"] for m in saved_outbox] == [message_id] and inbox_then == []
    assert files(layout.inbox(UNIT)) == [message_name(1, message_id)]


def test_delivers_exactly_once(layout, store, caplog):
    caplog.set_level(logging.INFO, logger="a0org")
    box = outbox(layout, store)
    state = UnitState(unit=UNIT)
    message_id = box.record(state, LOOP, T0)

    [message] = box.deliver(state, {message_id})
    assert (message.id, message.seq, message.unit, message.kind, message.report_turn) == (message_id, 1, UNIT, "steer", 4)
    assert state.outbox == [] and state.seq == 1
    assert [(r.seq, r.id, r.sent_at) for r in state.recent] == [(1, message_id, T0)]
    [name] = files(layout.inbox(UNIT))
    payload = json.loads((layout.inbox(UNIT) / name).read_text())
    assert payload["id"] == message_id and KEYRING.verify(payload) is None

    assert box.deliver(state) == []  # nothing left to deliver: nothing written again
    assert files(layout.inbox(UNIT)) == [name]
    assert [r.message for r in caplog.records if r.message.startswith("steering ")] == [
        f"steering sent: unit={UNIT} seq=1 anomaly=loop severity=hint kind=steer",
    ]


def test_after_a_crash_between_the_outbox_and_the_inbox_the_message_is_redelivered(layout, store, caplog):
    caplog.set_level(logging.INFO, logger="a0org")
    before = UnitState(unit=UNIT)
    message_id = outbox(layout, store).record(before, LOOP, T0)
    assert save_unit_state(store, before)  # written ahead; the process dies before the inbox file

    state = load_unit_state(store, UNIT)  # the XO started again
    [message] = outbox(layout, store).deliver(state)

    assert (message.id, message.seq) == (message_id, 1)
    assert files(layout.inbox(UNIT)) == [message_name(1, message_id)]
    assert state.outbox == []
    assert f"steering redelivered: unit={UNIT} seq=1 anomaly=loop severity=hint kind=steer" in caplog.messages


@pytest.mark.parametrize("where", ["inbox", "processed", "rejected"])
def test_a_message_the_unit_already_has_is_not_delivered_again(layout, store, where):
    state = UnitState(unit=UNIT)
    message_id = outbox(layout, store).record(state, LOOP, T0)
    assert save_unit_state(store, state)
    # the inbox file was written, and the unit may have applied or refused it, before the crash
    folder = {"inbox": layout.inbox, "processed": layout.processed, "rejected": layout.rejected}[where](UNIT)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / message_name(1, message_id)).write_text(json.dumps(state.outbox[0]))

    state = load_unit_state(store, UNIT)
    assert outbox(layout, store).deliver(state) == []
    assert state.outbox == []  # acknowledged: its file exists
    if where != "inbox":
        assert files(layout.inbox(UNIT)) == []


def test_nothing_is_written_to_the_inbox_unless_the_outbox_was_saved(layout):
    box = Outbox(layout, "engineering_xo", KEY, lambda state: False, clock=lambda: T0)
    state = UnitState(unit=UNIT)
    box.record(state, LOOP, T0)
    assert box.deliver(state) is None
    assert files(layout.inbox(UNIT)) == [] and len(state.outbox) == 1


def test_a_unit_whose_folder_is_gone_keeps_its_messages_in_order(layout, store):
    box = outbox(layout, store)
    state = UnitState(unit=UNIT)
    first = box.record(state, LOOP, T0)
    second = box.record(state, LOOP, T0 + 1)
    layout.unit_dir(UNIT).rmdir()

    assert box.deliver(state, {second}) is None
    assert [m["seq"] for m in state.outbox] == [1, 2]

    layout.unit_dir(UNIT).mkdir()
    assert [(m.id, m.seq) for m in box.deliver(state)] == [(first, 1), (second, 2)]
    assert files(layout.inbox(UNIT)) == [message_name(1, first), message_name(2, second)]
