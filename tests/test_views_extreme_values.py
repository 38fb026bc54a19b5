"""``status``, ``watch`` and ``tail`` show any value the contracts accept, and only as text.

Generated reports, XO states and steering files take the contracts to their edges: times
from year 1 to year 9999 at any offset or none, integers far past 64 bits, the largest and
smallest finite floats, thresholds of a second or of ages, and texts holding escape
sequences, line breaks and direction overrides (so does an entry of ``units/``). Every view
must render them without an exception, and no line may carry a control character a
terminal would act on.
"""

from __future__ import annotations

import io
import json
import os
import re
import sys
import uuid
from datetime import datetime, timedelta, timezone

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pack_commands import a0org
from volume_units import report_for, scenario_snapshot

from org.contracts import SaluteReport, SteeringMessage
from org.kernel.files import atomic_write_text
from org.macrocosm.cli import ENV_TAIL_SECONDS
from org.macrocosm.state import UnitState
from org.macrocosm.store import XOStore
from org.macrocosm.views import status, tail, watch
from org.macrocosm.views.rows import status_lines, status_rows
from org.macrocosm.volume import VolumeLayout, message_name

UNIT = "unit-1"
#: what a terminal acts on: C0 and C1 controls, DEL, direction and line separators
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")

zones = st.one_of(st.none(), st.integers(-(24 * 60 - 1), 24 * 60 - 1).map(lambda m: timezone(timedelta(minutes=m))))
moments = st.one_of(
    st.sampled_from([datetime.min, datetime.max, datetime(1970, 1, 1)]),
    st.datetimes(min_value=datetime.min, max_value=datetime.max),
).flatmap(lambda moment: zones.map(lambda zone: moment.replace(tzinfo=zone)))
big = st.one_of(st.sampled_from([0, 2**63 - 1, 2**64 + 1, 10**30]), st.integers(0, 10**40))
finite = st.one_of(st.sampled_from([0.0, 5e-324, 1e-300, 1.7976931348623157e308]), st.floats(0, 1e308, allow_nan=False))
seconds = st.one_of(st.sampled_from([5e-324, 1e-9, 1.7976931348623157e308]), st.floats(1e-9, 1e300, allow_nan=False))
nasty = st.one_of(
    st.sampled_from(["\x1b[2J\x1b[H", "line\nbreak\r", "\u202egnp.exe", "\x9b31m", "\x00\x07\x7f", "é" * 200]),
    st.text(max_size=200),
)


def write_report(layout: VolumeLayout, when, turn, fill, stale, spread, tool, task) -> None:
    value = report_for(UNIT, scenario_snapshot("cascade", 3)).model_dump(mode="json")
    value["time"].update(timestamp=when.isoformat(), turns_elapsed=turn)
    value["environment"]["context_fill_pct"] = fill
    value["activity"]["current_task"] = value["activity"]["current_tool"] = task
    value["signals"].update(turn=turn, context_fill=fill)
    value["signals"]["outcomes"][-1]["tool"] = tool
    value["signals"]["doctrine"]["heartbeat"] = {"stale_after_seconds": stale, "very_stale_after_seconds": min(stale + spread, sys.float_info.max)}
    text = json.dumps(value)
    SaluteReport.model_validate_json(text)  # the contract accepts it: that is the point
    atomic_write_text(layout.report(UNIT), text)


def write_steering(layout: VolumeLayout, when, seq, text) -> None:
    message = SteeringMessage(id=uuid.uuid4().hex, seq=seq, unit=UNIT, sender_role="xo", kind="steer", anomaly="loop",
                              severity="hint", text=text or "x", nudge=seq, report_turn=seq, created_at=when,
                              expires_at=when, epoch=1)
    name = message_name(min(seq, 9_999_999_999), message.id)
    atomic_write_text(layout.inbox(UNIT) / name, message.model_dump_json())
    rejected = layout.rejected(UNIT)
    atomic_write_text(rejected / name, message.model_dump_json())
    atomic_write_text(rejected / (name + ".reason"), text + "\n")


def every_line(layout: VolumeLayout, home=None) -> list[str]:
    now = datetime.now(timezone.utc).timestamp()
    lines = status_lines(layout, now, home=home) + status_lines(layout, now, max_rows=3, home=home)
    json.dumps(status.status_document(layout, now, home), allow_nan=False)
    out = io.StringIO()
    assert watch.main(layout.root, interval=0.05, out=out, frames=1, home=home) == 0
    lines += out.getvalue().splitlines()
    out = io.StringIO()
    assert tail.main(layout.root, UNIT, last=10, interval=0.01, out=out, seconds=0.05) == 0
    return lines + out.getvalue().splitlines()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(when=moments, sent=moments, turn=big, fill=finite, stale=seconds, spread=st.floats(0, 1e300), tool=nasty, task=nasty,
       text=nasty, nudges=big, paused=st.one_of(st.none(), big))
def test_every_view_shows_any_value_the_contracts_accept(tmp_path_factory, when, sent, turn, fill, stale, spread, tool, task,
                                                         text, nudges, paused):
    layout = VolumeLayout(tmp_path_factory.mktemp("volume"))
    write_report(layout, when, turn, fill, stale, spread, tool[:200], task)
    write_steering(layout, sent, max(1, turn % 10**12), text[:2000])
    home = tmp_path_factory.mktemp("xo-home")
    store = XOStore.for_home(home, layout.root)
    assert store.save([UnitState(unit=UNIT, nudges=nudges, paused_turn=paused, last_turn=turn, seq=1)])
    store.close()
    (layout.units_dir / "bad\x1b[31m\nname\u202e").touch()

    lines = every_line(layout, home)
    [row] = [r for r in status_rows(layout, home=home) if r["unit"] == UNIT]
    assert row["error"] is None and row["turn"] == turn and row["nudges"] == nudges
    assert any(line.startswith(("0", "1", "2", "3", "4", "5", "6", "7", "8", "9")) and "  report  " in line for line in lines)
    assert [line for line in lines if CONTROL.search(line)] == []


def test_year_9999_and_year_1_in_every_view(tmp_path):
    """The cases that crashed ``tail``: a time the contract accepts whose UTC is past year 9999 or before year 1."""
    layout = VolumeLayout(tmp_path)
    late = datetime(9999, 12, 31, 23, 0, tzinfo=timezone(timedelta(hours=-5)))
    early = datetime(1, 1, 1, 1, 0, tzinfo=timezone(timedelta(hours=5)))
    write_report(layout, late, 3, 0.5, 120.0, 180.0, "code_execution_tool", "task")
    write_steering(layout, early, 1, "[SUPERVISOR] Try another way.")
    lines = every_line(layout)
    assert any(line.startswith("9999-12-31T23:00:00-05:00  report") for line in lines), lines
    assert any(line.startswith("0001-01-01T01:00:00+05:00  steer") for line in lines), lines
    done = a0org("tail", UNIT, "--volume", tmp_path, env={**os.environ, ENV_TAIL_SECONDS: "0.2"})
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    naive = datetime(1, 1, 1)  # no zone: UTC, as the XO reads it
    write_report(layout, naive, 3, 0.5, 120.0, 180.0, "tool", "task")
    [row] = [r for r in status_rows(layout) if r["unit"] == UNIT]
    assert row["freshness"] == "very_stale" and row["error"] is None
