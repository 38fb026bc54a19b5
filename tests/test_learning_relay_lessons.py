"""Lessons the internaliser writes are learnings a unit publishes for the relay."""

from __future__ import annotations

from test_llm_supervisors import _active_organization, home, internaliser, lesson, respond, turns, write_config  # noqa: F401
from test_unit_link import UNIT, volume  # noqa: F401  (the fixture)

from org.llm_supervisors.runner import runner_for
from org.macrocosm.volume import read_report
from org.standin.session import StandInSession
from org.supervisor.learnings import LESSONS_KEY, note_lesson


def test_a_lesson_the_internaliser_wrote_is_in_the_units_next_report(home, llm_server, volume):  # noqa: F811
    write_config(home, llm_server, internaliser={"every_tasks": 1})
    llm_server.script(internaliser(lesson("the package mirror needs --index-url https://mirror.local/simple", topic="tooling")))
    session = StandInSession()
    pip = {"tool": "code_execution_tool", "args": {"code": "pip install --index-url https://mirror.local/simple shop"}, "output": "ok"}
    session.run_task("install deps", turns(pip, respond()))  # the task used the mirror: a lesson may name it
    runner_for(home).wait_for_runs()
    assert [l.kind for l in read_report(volume.report(UNIT)).signals.learnings] == []
    session.run_task("next", turns(respond()))  # the answer is applied at this task's start

    [learned] = [l for l in read_report(volume.report(UNIT)).signals.learnings if l.kind == "lesson"]
    assert learned.text.startswith("lesson Tooling: the package mirror needs --index-url https://mirror.local/simple")
    assert learned.turn is None and len(learned.digest) == 16


def test_lessons_kept_are_the_newest_few_each_once():
    data: dict = {}
    for n in range(5):
        note_lesson(data, "lessons/tooling.md", "Tooling", f"rule {n}", ["build"])
    note_lesson(data, "lessons/tooling.md", "Tooling", "rule 4", ["build"])
    assert [l.text for l in data[LESSONS_KEY]] == ["lesson Tooling: rule 2", "lesson Tooling: rule 3", "lesson Tooling: rule 4"]
    assert {l.domain for l in data[LESSONS_KEY]} == {"build"}
