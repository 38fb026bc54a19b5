"""The directive queue: consumption order, the prompt section, what counts as addressed,
aging, the cleanup cap, persistence across a restart, and several writers at once."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from org.contracts.knowledge import DirectiveDraft
from org.knowledge import DirectiveQueue, addressed_ids

ROOT = Path(__file__).resolve().parent.parent


def directive(description: str, type: str = "cleanup", priority: str = "low", source: str = "code_style", **extra) -> dict:
    return {"type": type, "source": source, "description": description, "priority": priority, **extra}


@pytest.fixture
def queue(tmp_path) -> DirectiveQueue:
    return DirectiveQueue(tmp_path / "supervisors" / "directives.json")


def ids(directives) -> list[str]:
    return [d.id for d in directives]


def queue_log(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "a0org" and r.getMessage().startswith("directives:")]


# -- order and the section -------------------------------------------------------------------------


def test_consumption_order_is_critical_then_functional_then_cleanup(queue):
    queue.add([
        directive("tidy imports"),  # D1 cleanup low
        directive("split the storage module", type="functional", priority="low", source="design"),  # D2
        directive("rename helpers", priority="normal"),  # D3 cleanup normal
        directive("use a dict for colonies", type="functional", source="design", priority="normal"),  # D4
        directive("stop deleting user files", type="functional", priority="critical", source="design"),  # D5
        directive("remove the leaked key from config.py", priority="critical"),  # D6 cleanup, but critical
    ])
    assert ids(queue.pending()) == ["D5", "D6", "D4", "D2", "D3", "D1"]


def test_the_section_lists_directives_in_order_and_says_how_to_mark_them_done(queue):
    assert queue.active_directives_section() == ""
    queue.add([
        directive("Standardise error handling in tools/", files=["tools/a.py", "tools/b.py"]),
        directive("Refactor colony storage to a dict", type="functional", source="design",
                  rationale="Entity lookups are by id", priority="normal"),
    ])
    section = queue.active_directives_section()
    lines = section.splitlines()
    assert lines[0] == "## ACTIVE DIRECTIVES"
    assert "[done D12]" in section and "final response" in section
    assert "Cleanup directives only once the current request is done." in section
    assert "Critical directives come before anything else" not in section
    entries = [line for line in lines if line.startswith("- ")]
    assert entries == [
        "- D2 [normal functional, from design]: Refactor colony storage to a dict. Why: Entity lookups are by id.",
        "- D1 [low cleanup, from code_style]: Standardise error handling in tools/. Files: tools/a.py, tools/b.py",
    ]
    queue.add([directive("Writer truncates files", type="functional", priority="critical", source="design")])
    section = queue.active_directives_section()
    assert "Critical directives were confirmed by a person: take them before the other directives." in section
    assert "before anything else" not in section and "including the current request" not in section
    assert section.index("D3 [critical") < section.index("D2 [normal") < section.index("D1 [low")


def test_a_long_queue_shows_the_first_ones_and_says_how_many_wait(tmp_path):
    queue = DirectiveQueue(tmp_path / "d.json", functional_cap=30)
    queue.add([directive(f"functional {n}", type="functional", priority="normal") for n in range(25)])
    section = queue.active_directives_section(limit=20, budget_tokens=5000)
    assert section.count("\n- D") == 20 and section.rstrip().endswith("(5 more wait until these are done.)")


# -- addressed ------------------------------------------------------------------------------------


@pytest.mark.parametrize("text,expected", [
    ("Done. [done D12]", ["D12"]),
    ("[done D3, D4] and [DONE d7]", ["D3", "D4", "D7"]),
    ("[done: D5] [done D5]", ["D5"]),
    ("[ done D8 ; D9 ]", ["D8", "D9"]),
    ("D12 is done", []),
    ("[done]", []),
    ("[done D0]", []),
    (None, []),
])
def test_addressed_ids_reads_the_done_marks(text, expected):
    assert addressed_ids(text) == expected


def test_marks_in_the_final_response_remove_directives_and_are_recorded(queue):
    queue.add([directive("one"), directive("two", type="functional"), directive("three")])
    outcome = queue.note_task_completed("Fixed the tests. [done D2] Already handled: [done D3, D99]")
    assert outcome.addressed == ["D2", "D3"] and outcome.dropped == []
    assert ids(queue.pending()) == ["D1"]
    assert [(r.id, r.outcome, r.by, r.task) for r in queue.history()] == [("D2", "addressed", "agent", 0), ("D3", "addressed", "agent", 0)]


def test_a_supervisor_or_a_person_marks_directives_addressed(queue, tmp_path):
    queue.add([directive("one"), directive("two")])
    assert queue.mark_addressed(["d1", "D7", "nonsense"], by="code_style") == ["D1"]
    assert queue.history()[-1].by == "code_style"
    done = subprocess.run([sys.executable, "-m", "org", "directives", "--path", str(queue.path), "--done", "D2"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "addressed: D2"
    assert queue.pending() == [] and queue.history()[-1].by == "human"
    listing = subprocess.run([sys.executable, "-m", "org", "directives", "--path", str(queue.path), "--history"],
                             cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert "D1     addressed by code_style" in listing.stdout and "D2     addressed by human" in listing.stdout


# -- aging and the cap ----------------------------------------------------------------------------


def test_each_kind_is_dropped_at_its_own_age(queue, caplog):
    caplog.set_level(logging.INFO, logger="a0org")
    queue.add([directive("tidy"), directive("refactor", type="functional"), directive("urgent cleanup", priority="critical")])
    for _ in range(14):
        assert queue.note_task_completed().dropped == []
    assert ids(queue.pending()) == ["D3", "D2", "D1"] and queue.pending()[-1].age == 14
    assert queue.note_task_completed().dropped == ["D1"]  # cleanup: 15 tasks
    assert ids(queue.pending()) == ["D3", "D2"]
    assert [m for m in queue_log(caplog) if "D1 dropped" in m] == ["directives: D1 dropped, unaddressed for 15 tasks: tidy"]
    for _ in range(4):
        assert queue.note_task_completed().dropped == []
    assert queue.note_task_completed().dropped == ["D3"]  # critical: 20 tasks
    for _ in range(9):
        assert queue.note_task_completed().dropped == []
    assert queue.note_task_completed().dropped == ["D2"]  # functional: 30 tasks
    assert queue.pending() == [] and [r.outcome for r in queue.history()] == ["aged_out"] * 3 and queue.tasks_completed == 30


def test_each_kind_has_its_cap_and_the_oldest_gives_way(tmp_path):
    queue = DirectiveQueue(tmp_path / "d.json", functional_cap=2, critical_cap=1, cleanup_cap=3)
    queue.add([directive(f"functional {n}", type="functional") for n in range(4)])
    queue.add([directive(f"critical {n}", type="functional", priority="critical") for n in range(3)])
    queue.add([directive(f"cleanup {n}") for n in range(5)])
    assert [d.description for d in queue.pending()] == ["critical 2", "functional 2", "functional 3", "cleanup 2", "cleanup 3", "cleanup 4"]
    assert {r.outcome for r in queue.history()} == {"capped"}


def test_age_counts_from_when_a_directive_was_queued(tmp_path):
    queue = DirectiveQueue(tmp_path / "d.json", cleanup_max_age_tasks=3)
    queue.add([directive("early")])
    queue.note_task_completed()
    queue.note_task_completed()
    queue.add([directive("late")])
    assert queue.note_task_completed().dropped == ["D1"]
    assert queue.pending()[0].created_task == 2
    assert queue.note_task_completed().dropped == []
    assert queue.note_task_completed().dropped == ["D2"]


def test_at_most_ten_cleanup_directives_wait_and_the_oldest_gives_way(queue, caplog):
    caplog.set_level(logging.INFO, logger="a0org")
    queue.add([directive(f"cleanup {n}") for n in range(10)])
    queue.add([directive("functional", type="functional"), directive("critical cleanup", priority="critical")])
    added = queue.add([directive("cleanup 10"), directive("cleanup 11")])
    assert ids(added) == ["D13", "D14"]
    pending = queue.pending()
    cleanup = [d for d in pending if d.type == "cleanup" and d.priority != "critical"]
    assert len(cleanup) == 10 and ids(cleanup)[0] == "D3"
    assert {"D11", "D12"} <= set(ids(pending))
    assert [m for m in queue_log(caplog) if "oldest" in m] == [
        "directives: D1 dropped, the oldest of more than 10 pending cleanup directives: cleanup 0",
        "directives: D2 dropped, the oldest of more than 10 pending cleanup directives: cleanup 1",
    ]
    assert [(r.id, r.outcome) for r in queue.history()] == [("D1", "capped"), ("D2", "capped")]


def test_a_repeated_directive_is_not_added_twice_but_may_become_more_urgent(queue):
    queue.add([directive("Standardise error handling", files=["a.py"])])
    again = queue.add([directive("  standardise   ERROR handling. ", priority="normal", files=["b.py"])])
    assert again == []
    (only,) = queue.pending()
    assert (only.id, only.priority, only.files) == ("D1", "normal", ["a.py", "b.py"])


def test_invalid_directives_are_logged_and_skipped(queue, caplog):
    caplog.set_level(logging.INFO, logger="a0org")
    added = queue.add([directive("fine"), {"type": "refactor", "source": "design", "description": "x"}, {"source": "design"}])
    assert ids(added) == ["D1"]
    assert [m for m in queue_log(caplog) if "skipped" in m] == [
        "directives: from design: type: Input should be 'functional' or 'cleanup'; directive skipped",
        "directives: from design: type: Field required (and 1 more); directive skipped",
    ]


def test_secrets_in_directives_are_redacted(queue):
    key = "sk-or-v1-" + "0123456789abcdef" * 4
    queue.add([DirectiveDraft(type="cleanup", source="code_style", description=f"Remove {key} from settings.py",
                              rationale="password=hunter22 is in the repo", files=["settings.py"])])
    text = queue.path.read_text(encoding="utf-8")
    assert key not in text and "hunter22" not in text
    assert "Remove [REDACTED] from settings.py" in queue.active_directives_section()


# -- persistence ----------------------------------------------------------------------------------


def test_the_queue_survives_a_restart(queue):
    queue.add([directive("one"), directive("two", type="functional")])
    queue.note_task_completed("[done D1]")
    queue.note_task_completed()
    reopened = DirectiveQueue(queue.path)
    (two,) = reopened.pending()
    assert (two.id, two.age, reopened.tasks_completed) == ("D2", 2, 2)
    assert ids(reopened.add([directive("three")])) == ["D3"]  # ids are never reused
    data = json.loads(queue.path.read_text(encoding="utf-8"))
    assert data["schema_version"] == 1 and data["next_id"] == 4
    assert not [p for p in queue.path.parent.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize("text,problem", [
    ('{"schema_version": 1, "pending": [{"id": "D1"}]}', ":1: pending[0].type: required field is missing"),
    ('{"schema_version": 1,\n "pending": [{"id": "D1"', ":2: (document): not valid JSON"),
])
def test_a_broken_queue_file_is_named_read_as_empty_and_kept_aside(queue, caplog, text, problem):
    caplog.set_level(logging.INFO, logger="a0org")
    queue.path.parent.mkdir(parents=True)
    queue.path.write_text(text, encoding="utf-8")
    assert queue.pending() == [] and queue.active_directives_section() == ""
    assert any(f"{queue.path}{problem}" in m for m in (r.getMessage() for r in caplog.records))
    assert ids(queue.add([directive("fresh")])) == ["D1"]
    (aside,) = [p for p in queue.path.parent.iterdir() if ".broken-" in p.name]
    assert aside.read_text(encoding="utf-8") == text


def test_concurrent_writers_lose_nothing(tmp_path):
    queue = DirectiveQueue(tmp_path / "d.json", functional_cap=100)

    def work(prefix: str) -> None:
        for number in range(15):
            queue.add([directive(f"{prefix} {number}", type="functional")])
            if number % 5 == 0:
                queue.note_task_completed()

    threads = [threading.Thread(target=work, args=(f"writer {n}",)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    pending = queue.pending()
    assert len(pending) == 60 and len(set(ids(pending))) == 60
    assert queue.tasks_completed == 12


def test_processes_share_the_queue(tmp_path):
    queue = DirectiveQueue(tmp_path / "d.json", functional_cap=100)
    script = ("import sys\nfrom org.knowledge import DirectiveQueue\n"
              "q = DirectiveQueue(sys.argv[1], functional_cap=100)\n"
              "for n in range(20):\n    q.add([{'type': 'functional', 'source': 'design', 'description': f'{sys.argv[2]} {n}'}])\n")
    workers = [subprocess.Popen([sys.executable, "-c", script, str(queue.path), f"process {n}"], cwd=ROOT) for n in range(3)]
    assert [w.wait(timeout=60) for w in workers] == [0, 0, 0]
    assert len(queue.pending()) == 60
