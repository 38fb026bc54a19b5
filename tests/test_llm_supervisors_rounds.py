"""When the supervisors' results reach the agent: runs due together go side by side, the wait at
a task's start is bounded and shown in the UI; a re-plan runs the design supervisor; a document
is established only by tasks that were shown it."""

from __future__ import annotations

import threading

import yaml
from test_llm_supervisors import (  # noqa: F401 (fixtures)
    _active_organization,
    code_style,
    failing,
    home,
    internaliser,
    lesson,
    respond,
    runs,
    seed_hand_written_convention,
    turns,
    ui_headings,
    write_config,
)

from org.contracts.knowledge import KnowledgeDraft
from org.contracts.supervisor_outputs import DesignOutput
from org.knowledge.store import KnowledgeStore
from org.llm_supervisors.runner import runner_for
from org.standin.model_server import For, Reply, Slow
from org.standin.session import StandInSession


def test_every_supervisor_due_at_a_task_end_has_its_result_there_at_the_next_start(home, llm_server):  # noqa: F811
    seed_hand_written_convention(home)
    write_config(home, llm_server, code_style={"every_tasks": 100, "time_budget_seconds": 10},
                 design={"time_budget_seconds": 10}, internaliser={"every_tasks": 100, "time_budget_seconds": 10})
    design = For("DesignOutput", Reply.valid(DesignOutput, {"divergences": [], "summary": "the design holds", "directives": [
        {"type": "functional", "description": "Stop deploying from the task runner", "priority": "critical"}]}))
    # an aborted task pulls every supervisor forward: all three are due at its end, and run at once
    held = 60  # each answer is held until all three questions are in: one after the other, they never would be
    llm_server.script(Slow(held, code_style()), Slow(held, design), Slow(held, internaliser(lesson("the build needs make 4.3"))))
    session = StandInSession()
    session.run_task("deploy", turns(failing(1)))  # no response: aborted
    assert llm_server.wait_for_requests(3), "the supervisors did not ask side by side"
    release = threading.Timer(1.0, llm_server.release)  # the answers come while the next task's start waits for them
    release.start()
    second = session.run_task("check", turns(respond()))
    release.join()
    assert sorted(r.supervisor for r in runs(home)) == ["code_style", "design", "internaliser"]
    knowledge, directives = second[0].extras["org_knowledge"], second[0].extras["org_directives"]
    assert "Error handling" in knowledge and "the build needs make 4.3" in knowledge
    assert "Stop deploying from the task runner" in directives  # the critical one did not wait a task
    assert any(h.startswith("Supervisor results in after") for h in ui_headings(session))


def test_the_wait_is_bounded_and_shown_in_the_ui_and_a_late_result_comes_at_the_following_task(home, llm_server):  # noqa: F811
    seed_hand_written_convention(home)
    write_config(home, llm_server, code_style={"every_tasks": 1, "time_budget_seconds": 10})
    config = yaml.safe_load((home / "supervisors.yaml").read_text())
    (home / "supervisors.yaml").write_text(yaml.safe_dump({**config, "wait_seconds": 0.3}))
    llm_server.script(Slow(60, code_style()))  # held until released below
    session = StandInSession()
    session.run_task("one", turns(respond()))
    second = session.run_task("two", turns(respond()))
    assert 0.2 < runner_for(home).last_wait_seconds < 30  # a stalled endpoint holds the message 0.3 s, not until it answers
    assert "Error handling" not in second[0].extras.get("org_knowledge", "")
    [line] = [item for item in session.agent.context.log.items if "Code style supervisor" in (item.heading or "")
              and "still running" in (item.heading or "")]
    assert line.type == "info" and line.heading.startswith("Code style supervisor is still running after ")
    assert "results that come later are applied at the next task" in line.heading
    llm_server.release()
    runner_for(home).worker.wait()  # the answer comes in meanwhile
    third = session.run_task("three", turns(respond()))
    assert "Error handling" in third[0].extras["org_knowledge"]


def test_a_task_start_shows_the_wait_and_how_it_ended(home, llm_server):  # noqa: F811
    seed_hand_written_convention(home)
    write_config(home, llm_server, code_style={"every_tasks": 1, "time_budget_seconds": 10})
    llm_server.script(Slow(0.4, code_style()))
    session = StandInSession()
    session.run_task("one", turns(respond()))
    session.run_task("two", turns(respond()))
    [line] = [item for item in session.agent.context.log.items if (item.heading or "").startswith("Supervisor results in after")]
    assert line.type == "info" and "review the previous task" in (line.content or "")


def test_a_task_that_abandons_its_plan_runs_the_design_supervisor_as_a_replan(home, llm_server):  # noqa: F811
    design = For("DesignOutput", Reply.valid(DesignOutput, {"divergences": ["the importer was rewritten as a stream"],
                                                            "summary": "the plan changed"}))
    write_config(home, llm_server, design={}, code_style={"every_tasks": 100})
    config = yaml.safe_load((home / "supervisors.yaml").read_text())
    config["urgency"] = {"weights": {"carry_forward_churn": 0.0}}  # so only the re-plan triggers
    (home / "supervisors.yaml").write_text(yaml.safe_dump(config))
    llm_server.script(design)
    session = StandInSession()
    session.run_task("import", turns({"tool": "x", "args": {}, "output": "ok", "pace": "alternate"}, respond()))
    assert runs(home) == [] and llm_server.requests == []  # trying another way is not a re-plan yet
    session.run_task("import again", turns({"tool": "x", "args": {}, "output": "ok", "pace": "contingent"}, respond()))
    session.run_task("next", turns(respond()))
    [run] = runs(home)
    assert (run.supervisor, run.trigger, run.outcome) == ("design", "replan", "applied")


def test_a_document_is_established_only_by_tasks_whose_prompt_showed_it(home, llm_server):  # noqa: F811
    write_config(home, llm_server, code_style={"every_tasks": 100})
    config = yaml.safe_load((home / "supervisors.yaml").read_text())
    (home / "supervisors.yaml").write_text(yaml.safe_dump({**config, "knowledge": {"establish_after_tasks": 2}}))
    store = KnowledgeStore(home / "knowledge", establish_after_tasks=2)
    store.write(KnowledgeDraft(category="conventions", name="errors", title="Errors", rules=["Raise ToolError"]), "code_style", task=0)
    store.write(KnowledgeDraft(category="design", name="billing", title="Billing", rules=["Invoices are immutable"],
                               tags=["billing", "invoices"]), "design", task=0)
    session = StandInSession()
    shown = [session.run_task(f"fix the login page {n}", turns(respond()))[0].extras["org_knowledge"] for n in range(3)]
    assert all("(conventions/errors.md, " in text and "billing" not in text for text in shown)
    assert store.get("conventions/errors.md").status == "established"  # shown in every task's prompt
    assert store.get("design/billing.md").status == "provisional"  # never shown: no task used it
