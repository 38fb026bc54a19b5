"""What a flood of junk and a killed writer leave on the volume, and what the XO and the
unit make of it: each bad entry of ``units/`` logged once, however many there are, and
the temporary files of an interrupted write removed at the next start (only those, and
only old ones). The XO runs as a real process."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest
from conftest import ok
from test_unit_link import UNIT, volume  # noqa: F401  (the fixture)
from test_xo_processes import WAIT, Processes, terminate
from volume_units import doctrine, messages, publish, wait_for

from org.kernel.files import atomic_write_text, remove_stale_temp_files
from org.macrocosm import publishing, unit
from org.macrocosm.volume import VolumeLayout, message_name

JUNK = 10_050  # above the 10,000 bad files an XO used to remember


@pytest.fixture
def procs(tmp_path):
    processes = Processes(tmp_path)
    yield processes
    processes.stop_all()


def skipped_counts(text: str, units_dir: Path) -> tuple[int, int]:
    """(entries logged one by one, entries counted in summary lines) in an XO log."""
    single = sum(1 for line in text.splitlines() if f"skipped {units_dir}{os.sep}junk." in line)
    summary = sum(int(m.group(1)) for m in re.finditer(rf"skipped (\d+) more entries of {re.escape(str(units_dir))} ", text))
    return single, summary


def test_each_bad_entry_of_units_is_logged_once_however_many(procs, tmp_path):
    root = tmp_path / "volume"
    units = root / "units"
    units.mkdir(parents=True)
    for i in range(JUNK):
        (units / f"junk.{i}").touch()  # not a valid unit id
    xo, log = procs.xo(root, "--polling", "--poll-interval", "0.05")  # every poll is a full sweep

    # a unit reporting, and later one more bad entry: both seen by later full sweeps
    publish(root, "unit-1", "stall", 1, doctrine(**{"radio_check_interval_turns": 1}))
    assert wait_for(lambda: messages(root, "unit-1"), WAIT), log.read_text()
    (units / "junk.late").touch()
    assert wait_for(lambda: "junk.late" in log.read_text(), WAIT)
    time.sleep(1.0)  # many more full sweeps
    text = terminate(xo, log)

    single, summary = skipped_counts(text, units)
    assert single + summary == JUNK + 1, (single, summary)  # every entry once, none twice
    assert single <= 2 * 20 and summary == JUNK - 20, (single, summary)  # a flood is one line, not 10,000
    assert text.count("junk.late") == 1


def old(path: Path, seconds: float = 3600) -> Path:
    then = time.time() - seconds
    os.utime(path, (then, then))
    return path


def leftovers(layout: VolumeLayout) -> dict[str, Path]:
    """Files an interrupted write leaves, and files that only look alike, in every folder a writer uses."""
    layout.inbox(UNIT).mkdir(parents=True, exist_ok=True)
    layout.rejected(UNIT).mkdir(parents=True, exist_ok=True)
    name = message_name(3, "a" * 32)
    files = {
        "message": layout.inbox(UNIT) / f".{name}.abcd1234.tmp",
        "report": layout.unit_dir(UNIT) / ".salute.json.q1w2e3r4.tmp",
        "reason": layout.rejected(UNIT) / f".{name}{unit.REASON_SUFFIX}.zz99yy88.tmp",
        # not ours: another program's file, a name we never write, a writer still at work
        "foreign": layout.unit_dir(UNIT) / ".salute.json.tmp",
        "other_target": layout.inbox(UNIT) / ".notes.txt.abcd1234.tmp",
        "live": layout.inbox(UNIT) / f".{name}.live0000.tmp",
    }
    for key, path in files.items():
        path.write_text("{")
        if key != "live":
            old(path)
    return files


def test_a_starting_xo_removes_what_its_killed_writes_left(procs, tmp_path):
    layout = VolumeLayout(tmp_path / "volume")
    files = leftovers(layout)
    xo, log = procs.xo(layout.root)
    text = terminate(xo, log)
    assert not files["message"].exists()
    # the unit's own files are the unit's to remove; what is not ours, or young, stays
    for key in ("report", "reason", "foreign", "other_target", "live"):
        assert files[key].exists(), key
    assert "removed 1 temporary file(s) an interrupted write left" in text


def test_a_unit_removes_its_own_leftovers_at_its_first_report(make_session, volume, monkeypatch):  # noqa: F811
    monkeypatch.setattr(publishing, "_cleaned", set())
    files = leftovers(volume)
    session = make_session()
    session.run(ok("search", 1))
    assert volume.report(UNIT).exists()
    assert not files["report"].exists() and not files["reason"].exists()
    for key in ("message", "foreign", "other_target", "live"):
        assert files[key].exists(), key


def test_a_fresh_temporary_file_belongs_to_a_live_writer(tmp_path):
    target = re.compile(r"salute\.json")
    fresh = tmp_path / ".salute.json.abcdefgh.tmp"
    fresh.write_text("{")
    assert remove_stale_temp_files(tmp_path, target) == []
    old(fresh, 601)
    link = tmp_path / ".salute.json.linkxxxx.tmp"
    link.symlink_to(fresh)
    old(fresh, 601)
    assert remove_stale_temp_files(tmp_path, target) == [fresh]
    assert link.is_symlink()  # only regular files are removed
    atomic_write_text(tmp_path / "salute.json", "{}")
    assert sorted(p.name for p in tmp_path.iterdir()) == [".salute.json.linkxxxx.tmp", "salute.json"]

    # a folder that is a symbolic link is not followed: nothing is removed elsewhere
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    kept = elsewhere / ".salute.json.abcdefgh.tmp"
    kept.write_text("{")
    old(kept)
    (tmp_path / "linked").symlink_to(elsewhere)
    assert remove_stale_temp_files(tmp_path / "linked", target) == [] and kept.exists()
    assert remove_stale_temp_files(elsewhere, target) == [kept]
