"""The LLM-backed supervisors end to end: the real hook files in a stand-in agent, a real
HTTP server on 127.0.0.1 playing the model, and the files they leave behind."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import ROOT
from llm_server import KEY_ENV, TEST_KEY

from org.contracts import TraceTurn
from org.contracts.supervisor_outputs import CodeStyleOutput, DesignOutput, InternaliserOutput, SupervisorRun
from org.knowledge.directives import DirectiveQueue
from org.knowledge.store import KnowledgeStore
from org.llm.budget import UsageLedger
from org.llm_supervisors.runner import SupervisorRunner, runner_for
from org.replay import prepare_organization
from org.standin.model_server import Drop, For, Reply, ScriptedServer, Slow, Status
from org.standin.session import StandInSession, render_extras

# --------------------------------------------------------------------------- scenario pieces

CONVENTION = {"category": "conventions", "name": "error_handling", "title": "Error handling",
              "rules": ["Raise ToolError with a message, never bare Exception"],
              "examples": "Good:\n  raise ToolError(f'not found: {path}')\nBad:\n  raise Exception('error')",
              "rationale": "QA reads failures from result summaries."}
CLEANUP = {"type": "cleanup", "description": "Use ToolError in app/tools.py", "files": ["app/tools.py"], "priority": "low"}


def code_style(**fields: Any) -> For:
    """The code style supervisor's answer, for its request only (runs due together go at the same time)."""
    data = {"conventions_updated": [CONVENTION], "inconsistencies": ["app/tools.py raises bare Exception",
                                                                      "app/io.py returns None on error"],
            "directives": [CLEANUP], "summary": "error handling is inconsistent"}
    return For("CodeStyleOutput", Reply.valid(CodeStyleOutput, {**data, **fields}, cost=0.0021))


def internaliser(*items: dict, summary: str = "captured") -> For:
    return For("InternaliserOutput", Reply.valid(InternaliserOutput, {"knowledge_items": list(items), "summary": summary}))


def lesson(content: str, **fields: Any) -> dict:
    return {"category": "lesson", "content": content, "source_task": "1", "confidence": "high", **fields}


def write_config(home: Path, server: ScriptedServer | None, **supervisors: dict) -> Path:
    """supervisors.yaml for the scripted server; every supervisor off unless given."""
    settings = {name: {"enabled": False} for name in ("code_style", "design", "internaliser")}
    settings.update({name: {"enabled": True, **values} for name, values in supervisors.items()})
    config = {
        "model": {"base_url": server.base_url if server else "http://127.0.0.1:9/v1", "model": "scripted/model",
                  "api_key_env": KEY_ENV, "timeout_seconds": 60, "max_retries": 3, "backoff_seconds": 0.01},
        "supervisors": settings,
    }
    path = home / "supervisors.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def turns(*raw: dict) -> list[TraceTurn]:
    return [TraceTurn.model_validate({"turn": n, **t}) for n, t in enumerate(raw, start=1)]


def respond(text: str = "done") -> dict:
    return {"tool": "response", "args": {"text": text}, "output": text}


def edit(path: Path, content: str = "") -> dict:
    if content:
        path.write_text(content, encoding="utf-8")
    return {"tool": "text_editor", "args": {"op": "write", "path": str(path)}, "output": f"{path} written"}


def failing(n: int) -> dict:
    """A failed call; each n a different error (the numbers in an error do not tell errors apart)."""
    name = "abcdefghij"[n % 10]
    return {"tool": "code_execution_tool", "args": {"code": f"cat /missing/{name}"}, "output": f"cat: /missing/{name}: No such file or directory"}


def runs(home: Path) -> list[SupervisorRun]:
    path = home / "supervisors" / "runs.jsonl"
    return [SupervisorRun.model_validate_json(line) for line in path.read_text().splitlines()] if path.exists() else []


def state(home: Path) -> dict:
    return json.loads((home / "supervisors" / "state.json").read_text())


def ui_headings(session: StandInSession) -> list[str]:
    return [item.heading or "" for item in session.agent.context.log.items]


def pack_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "a0org" and r.levelno >= logging.WARNING]


def seed_hand_written_convention(home: Path) -> None:
    """A person's document: the code style supervisor then reviews instead of bootstrapping."""
    folder = home / "knowledge" / "conventions"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "naming.md").write_text("# Naming\n\n## Rules\n\n1. snake_case for functions\n", encoding="utf-8")


def request_text(request: Any) -> str:
    return "\n".join(m["content"] for m in request.body["messages"])


@pytest.fixture(autouse=True)
def _active_organization(org_home: Path) -> None:
    """The supervisors work for an active organization; without one every hook stays silent."""
    prepare_organization(org_home, None)


@pytest.fixture
def home(org_home: Path, llm_key: str) -> Path:  # noqa: F811
    return org_home


# --------------------------------------------------------------------------- no config: nothing


def test_without_supervisors_yaml_the_hooks_do_nothing(org_home, caplog):
    session = StandInSession()
    results = session.run_task("list the files", turns({"tool": "code_execution_tool", "args": {"code": "ls"}, "output": "a.py"},
                                                        respond()))
    assert all(r.extras == {} for r in results)
    assert not (org_home / "supervisors").exists() and not (org_home / "knowledge").exists()
    assert "_org_task_trace" not in session.agent.data
    assert pack_warnings(caplog) == []


def test_without_a_key_the_agent_runs_exactly_as_without_supervisors(org_home, llm_server, monkeypatch, caplog):  # noqa: F811
    monkeypatch.delenv(KEY_ENV, raising=False)
    task = turns({"tool": "code_execution_tool", "args": {"code": "ls"}, "output": "a.py"}, respond())
    plain = StandInSession().run_task("list", task)
    write_config(org_home, llm_server, internaliser={"every_tasks": 1})
    session = StandInSession()
    first = session.run_task("list", task)
    second = session.run_task("list", task)
    assert [(r.steering, r.native_warnings, r.pace, r.extras) for r in first] == [(r.steering, r.native_warnings, r.pace, r.extras) for r in plain]
    assert second[0].extras == {}
    assert llm_server.requests == []  # refused before anything was sent
    [run] = runs(org_home)[:1]
    assert run.outcome == "skipped" and f"the environment variable {KEY_ENV} is not set" in run.reason
    skipped = [m for m in pack_warnings(caplog) if "skipped" in m]
    assert skipped == [f"Internaliser skipped: no API key: the environment variable {KEY_ENV} is not set"]


def test_a_switched_off_config_is_one_log_line_and_nothing_else(org_home, caplog):
    (org_home / "supervisors.yaml").write_text("enabled: false\n")
    session = StandInSession()
    for n in range(3):
        results = session.run_task(f"task {n}", turns(respond()))
        assert results[0].extras == {}
    assert not (org_home / "supervisors").exists()
    assert pack_warnings(caplog) == [f"{org_home / 'supervisors.yaml'}: every supervisor is switched off (enabled: false); they are skipped"]


def test_a_key_of_any_shape_stays_out_of_every_file_and_prompt(org_home, llm_server, monkeypatch):  # noqa: F811
    key = "gsk_live_" + "9f8a7b6c5d4e3f2a1b0c" * 2  # no redaction pattern knows this shape
    monkeypatch.setenv(KEY_ENV, key)
    write_config(org_home, llm_server, internaliser={"every_tasks": 1})
    llm_server.script(internaliser(lesson("the deploy script prints its environment")))
    session = StandInSession()
    session.run_task(f"deploy with the key {key}", turns(
        {"tool": "code_execution_tool", "args": {"code": "env"}, "output": f"API_TOKEN_X={key}\nHOME=/root"},
        respond(f"Deployed; the key {key} works")))
    settle(org_home)
    [request] = llm_server.requests
    assert request.headers["authorization"] == f"Bearer {key}"
    assert key not in json.dumps(request.body) and "[REDACTED]" in json.dumps(request.body)
    files = [p for p in org_home.rglob("*") if p.is_file()]
    assert org_home / "supervisors" / "digests.jsonl" in files
    assert [p for p in files if key in p.read_text(errors="replace")] == []


def test_a_failure_inside_the_supervisors_never_reaches_the_agent(home, llm_server, caplog):  # noqa: F811
    write_config(home, llm_server, internaliser={"every_tasks": 1})
    (home / "supervisors").write_text("a file where the folder should be")
    task = turns({"tool": "code_execution_tool", "args": {"code": "ls"}, "output": "a.py"}, respond())
    session = StandInSession()
    for n in range(2):
        results = session.run_task(f"task {n}", task)
        assert [r.steering for r in results] == [[], []]
    failed = [m for m in pack_warnings(caplog) if "org LLM supervisors (task end) failed and was skipped" in m]
    assert len(failed) == 1  # once, not every task
    assert llm_server.requests == []


# --------------------------------------------------------------------------- a valid answer, applied


def test_valid_answer_is_applied_and_injected_into_the_next_prompt(home, llm_server_both_ways, tmp_path, era):  # noqa: F811
    llm_server = llm_server_both_ways  # the whole way once with connections kept, once with each closed
    seed_hand_written_convention(home)
    write_config(home, llm_server, code_style={"every_tasks": 1})
    llm_server.script(code_style())
    source = tmp_path / "tools.py"
    session = StandInSession(era=era)
    session.run_task("add a tool that reads files", turns(edit(source, "API_KEY = 'sk-live-abcdefghijklmnopqrstu'\nraise Exception('x')\n"),
                                                          respond("added [done D99]")))
    second = session.run_task("now add tests", turns({"tool": "code_execution_tool", "args": {"code": "pytest"}, "output": "1 passed"},
                                                     respond()))

    # what the model was asked (the second task's end already started the next run)
    request = llm_server.requests[0]
    assert request.headers["authorization"] == f"Bearer {TEST_KEY}"
    asked = request_text(request)
    for expected in ("## RECENT TASKS", "add a tool that reads files", "text_editor(", "## FILES THE RECENT TASKS TOUCHED",
                     "raise Exception('x')", "REVIEW MODE", "conventions/naming.md", "written by a person"):
        assert expected in asked
    assert "sk-live-abcdefghijklmnopqrstu" not in asked and "[REDACTED]" in asked

    # what it changed
    store = KnowledgeStore(home / "knowledge")
    document = store.get("conventions/error_handling.md")
    assert document is not None and document.meta is not None
    assert (document.meta.author, document.status, document.meta.updated_after_task) == ("code_style", "provisional", 1)
    assert "raise ToolError" in document.body and "code_style" in document.change_log[0]
    [directive] = DirectiveQueue(home / "supervisors" / "directives.json").pending()
    assert (directive.id, directive.source, directive.type, directive.files) == ("D1", "code_style", "cleanup", ["app/tools.py"])
    assert "Code style supervisor: 2 inconsistencies, 1 cleanup directive, 1 convention written" in ui_headings(session)

    # and the next task's prompt carries both sections, every turn
    for result in second:
        assert "## PROJECT KNOWLEDGE" in result.extras["org_knowledge"]
        assert "Error handling (conventions/error_handling.md, provisional)" in result.extras["org_knowledge"]
        assert "## ACTIVE DIRECTIVES" in result.extras["org_directives"]
        assert "- D1 [low cleanup, from code_style]: Use ToolError in app/tools.py." in result.extras["org_directives"]
        assert render_extras(result.extras).startswith("[EXTRAS]\n{")

    run = runs(home)[0]
    assert (run.supervisor, run.trigger, run.outcome, run.findings, run.bootstrap) == ("code_style", "periodic", "applied", 2, False)
    assert run.documents == ["conventions/error_handling.md"]
    assert run.directives == ["cleanup/low: Use ToolError in app/tools.py"]
    assert (run.prompt_tokens, run.completion_tokens, run.cost_usd, run.attempts) == (120, 40, 0.0021, 1)
    assert TEST_KEY not in "".join(p.read_text(errors="replace") for p in home.rglob("*") if p.is_file())


def test_the_agent_marks_a_directive_done_in_its_response(home, llm_server):  # noqa: F811
    seed_hand_written_convention(home)
    write_config(home, llm_server, code_style={"every_tasks": 1})
    llm_server.script(code_style(), code_style(directives=[], inconsistencies=[], conventions_updated=[]))
    session = StandInSession()
    session.run_task("one", turns(respond()))
    session.run_task("two", turns(respond("Switched app/tools.py to ToolError. [done D1]")))
    queue = DirectiveQueue(home / "supervisors" / "directives.json")
    assert queue.pending() == []
    assert [(r.id, r.outcome, r.by) for r in queue.history()] == [("D1", "addressed", "agent")]


def test_bootstrap_mode_establishes_baselines_and_gives_no_cleanup_directives(home, llm_server):  # noqa: F811
    write_config(home, llm_server, code_style={"every_tasks": 1})
    llm_server.script(code_style(), code_style(conventions_updated=[]))
    session = StandInSession()
    session.run_task("one", turns(respond()))
    session.run_task("two", turns(respond()))
    session.run_task("three", turns(respond()))

    first, second = (request_text(r) for r in llm_server.requests[:2])
    assert "BOOTSTRAP MODE: the store has no conventions yet" in first and "REVIEW MODE" not in first
    assert "REVIEW MODE" in second and "BOOTSTRAP MODE" not in second
    bootstrap, review = runs(home)
    assert bootstrap.bootstrap and bootstrap.directives == [] and "1 cleanup directive(s) dropped" in bootstrap.reason
    assert bootstrap.documents == ["conventions/error_handling.md"]
    assert not review.bootstrap and review.directives == ["cleanup/low: Use ToolError in app/tools.py"]


# --------------------------------------------------------------------------- answers that are not applied


def run_code_style_now(home: Path, server: ScriptedServer, *behaviours: Any) -> SupervisorRun:
    seed_hand_written_convention(home)
    write_config(home, server, code_style={"every_tasks": 5})
    server.script(*behaviours)
    [run] = SupervisorRunner(home).run_now()
    return run


def assert_nothing_applied(home: Path) -> None:
    store = KnowledgeStore(home / "knowledge")
    assert [d.path for d in store.documents()] == ["conventions/naming.md"]
    assert DirectiveQueue(home / "supervisors" / "directives.json").pending() == []


@pytest.mark.parametrize("answer, reason", [
    (Reply('{"conventions_updated": [], "summary": "cut off'), "invalid answer: not valid JSON"),
    (Reply("I reviewed the code and it looks fine."), "invalid answer: not valid JSON"),
    (Reply.of({"conventions_updated": [CONVENTION], "directives": [{**CLEANUP, "type": "functional"}], "summary": "s"}),
     "invalid answer: does not match CodeStyleOutput: directives.0.type"),
    (Reply.of({"conventions_updated": [CONVENTION], "directives": [CLEANUP]}), "invalid answer: does not match CodeStyleOutput: summary"),
    (Reply.of({"conventions_updated": [{**CONVENTION, "name": "../escape"}], "summary": "s"}),
     "invalid answer: does not match CodeStyleOutput: conventions_updated.0.name"),
])
def test_a_malformed_or_off_schema_answer_is_discarded_whole_after_its_repair_round(home, llm_server, caplog, answer, reason):  # noqa: F811
    run = run_code_style_now(home, llm_server, answer, answer)
    assert run.outcome == "discarded" and run.reason.startswith(reason), run.reason
    assert (run.prompt_tokens, run.completion_tokens, run.repairs) == (240, 80, 1)  # both paid for, though unusable
    assert "the repaired answer could not be used either" in run.answer_notes
    assert_nothing_applied(home)
    assert [m for m in pack_warnings(caplog) if "Code style supervisor" in m] == [f"Code style supervisor: discarded: {run.reason}"]


def test_an_answer_writing_outside_its_folder_breaks_the_schema_and_is_discarded_whole(home, llm_server, caplog):  # noqa: F811
    trespass = {**CONVENTION, "category": "design", "name": "architecture"}
    answer = Reply.of({"conventions_updated": [CONVENTION, trespass], "summary": "s"})
    run = run_code_style_now(home, llm_server, answer, answer)
    assert run.outcome == "discarded" and run.repairs == 1
    assert "conventions_updated.1.category" in run.reason
    assert_nothing_applied(home)


def test_the_store_still_refuses_a_write_outside_the_supervisors_folder(home, caplog):  # noqa: F811
    from org.contracts.knowledge import KnowledgeDraft
    from org.knowledge.store import OwnershipError

    with pytest.raises(OwnershipError):
        KnowledgeStore(home / "knowledge").write(KnowledgeDraft(**{**CONVENTION, "category": "design"}), "code_style")
    assert any("code_style may not write design/ (it owns conventions/); refused" in m for m in pack_warnings(caplog))


def test_each_supervisor_is_told_how_it_writes_and_sees_its_findings_as_written(home, llm_server):  # noqa: F811
    seed_hand_written_convention(home)
    write_config(home, llm_server, code_style={"every_tasks": 5}, internaliser={"every_tasks": 5})
    llm_server.script(code_style(), internaliser(lesson("pip needs --user here", topic="tooling")), code_style())
    runner = SupervisorRunner(home)
    runner.run_now()
    [second] = runner.run_now(["code_style"])
    systems = [r.body["messages"][0]["content"] for r in llm_server.requests]
    [code] = [p for p in systems[:2] if "code style supervisor" in p]
    [lessons] = [p for p in systems[:2] if "internaliser" in p]
    assert "A document you write replaces the whole file" in code and "'Do X'" in code
    assert "'Do X'" not in lessons and "Directives are short" not in lessons and "facts and observations, not prescriptions" in lessons
    previous = request_text(llm_server.requests[-1])
    assert "- app/tools.py raises bare Exception\n- app/io.py returns None on error" in previous  # not lower-cased or stripped
    assert second.outcome == "applied"


def test_a_write_that_fails_half_way_puts_back_what_was_written(home, llm_server):  # noqa: F811
    (home / "supervisors" / "directives.json").mkdir(parents=True)  # the queue cannot be written
    run = run_code_style_now(home, llm_server, code_style())
    assert run.outcome == "failed" and "nothing was kept" in run.reason
    assert not (home / "knowledge" / "conventions" / "error_handling.md").exists()
    assert not (home / "knowledge" / "_index.md").exists()  # written with the document, and put back (to none) with it
    assert [p.name for p in (home / "knowledge" / "conventions").iterdir()] == ["naming.md"]


@pytest.mark.parametrize("behaviours, attempts", [
    ((Status(429, retry_after=0), Status(500), code_style()), 3),
    ((Status(503), code_style()), 2),
    ((Drop(), code_style()), 2),
])
def test_transient_errors_are_retried(home, llm_server, behaviours, attempts):  # noqa: F811
    run = run_code_style_now(home, llm_server, *behaviours)
    assert run.outcome == "applied" and run.attempts == attempts
    assert len(llm_server.requests) == attempts


def test_an_endpoint_that_keeps_dropping_the_connection_is_skipped(home, llm_server, caplog):  # noqa: F811
    run = run_code_style_now(home, llm_server, Drop(), Drop(), Drop(), Drop())
    assert run.outcome == "skipped" and "cannot reach" in run.reason and "gave up after 4 attempts" in run.reason
    assert_nothing_applied(home)
    assert [m for m in pack_warnings(caplog) if "skipped" in m] == [f"Code style supervisor skipped: {run.reason}"]


def test_a_spent_daily_budget_skips_the_run_with_one_log_line(home, llm_server, caplog):  # noqa: F811
    seed_hand_written_convention(home)
    path = write_config(home, llm_server, code_style={"every_tasks": 5})
    config = yaml.safe_load(path.read_text())
    config["model"]["daily_budget_usd"] = 0.01
    path.write_text(yaml.safe_dump(config))
    UsageLedger.for_organizations(home).record(supervisor="design", prompt_tokens=5000, completion_tokens=1000, cost_usd=0.02)
    [run] = SupervisorRunner(home).run_now()
    assert run.outcome == "skipped" and run.reason.startswith("daily budget spent: $0.0200 of $0.01")
    assert llm_server.requests == []
    assert [m for m in pack_warnings(caplog) if "Code style" in m] == [f"Code style supervisor skipped: {run.reason}"]


# --------------------------------------------------------------------------- time budget


def code_style_run_going(home: Path, server: ScriptedServer, answer: Any, time_budget_seconds: float) -> StandInSession:
    """A session whose first task ended with a code style run going (against a person's baseline)."""
    seed_hand_written_convention(home)
    write_config(home, server, code_style={"every_tasks": 1, "time_budget_seconds": time_budget_seconds})
    server.script(answer)
    session = StandInSession()
    session.run_task("one", turns(respond()))
    return session


def test_the_next_task_waits_at_most_the_time_budget(home, llm_server):  # noqa: F811
    session = code_style_run_going(home, llm_server, Slow(120, code_style()), time_budget_seconds=1.0)
    started = time.monotonic()
    second = session.run_task("two", turns(respond()))
    took = time.monotonic() - started
    waited = runner_for(home).last_wait_seconds
    assert 0.5 < waited < 60 and took < 60  # not for the slow answer (120 s): only until its budget (1 s) ran out
    session.run_task("three", turns(respond()))  # the run ends as its budget does; it is recorded by now
    run = runs(home)[0]
    assert run.outcome == "skipped" and "time budget" in run.reason
    assert second[0].extras.get("org_knowledge", "").count("Error handling") == 0


def test_an_answer_that_arrives_after_the_supervisors_were_switched_off_is_dropped(home, llm_server):  # noqa: F811
    session = code_style_run_going(home, llm_server, Slow(0.3, code_style()), time_budget_seconds=10)
    runner_for(home).wait_for_runs()  # the answer is in, not yet applied
    (home / "supervisors.yaml").write_text("enabled: false\n")
    second = session.run_task("two", turns(respond()))
    [run] = runs(home)
    assert (run.outcome, run.reason) == ("skipped", "switched off before the answer arrived; nothing of it was applied")
    assert runner_for(home).in_flight() == [] and second[0].extras == {}
    assert KnowledgeStore(home / "knowledge").get("conventions/error_handling.md") is None
    assert DirectiveQueue(home / "supervisors" / "directives.json").pending() == []


def test_the_config_is_read_again_when_it_changes_even_if_the_folder_came_later(tmp_path, llm_server):  # noqa: F811
    home = tmp_path / "later"
    runner = SupervisorRunner(home)  # Agent-Zero started before the organizations folder existed
    home.mkdir()
    write_config(home, llm_server, code_style={})
    assert runner.active_config() is not None
    config = home / "supervisors.yaml"
    with open(config, "w", encoding="utf-8") as handle:  # rewritten in place: the folder itself does not change
        handle.write("enabled: false\n")
    assert runner.active_config() is None


def test_periodic_triggers_count_completed_tasks(home, llm_server):  # noqa: F811
    write_config(home, llm_server, code_style={"every_tasks": 5}, internaliser={"every_tasks": 3})
    llm_server.script(*[internaliser(lesson(f"fact {n}")) for n in range(1, 3)], code_style())
    session = StandInSession()
    for n in range(1, 7):
        session.run_task(f"task {n}", turns(respond()))
        runner_for(home).wait_for_runs()
    session.run_task("apply", turns(respond()))
    assert [(r.supervisor, r.task) for r in runs(home)] == [("internaliser", 3), ("code_style", 5), ("internaliser", 6)]
    assert state(home)["tasks_completed"] == 7


def test_urgency_pulls_the_runs_forward_and_resets(home, llm_server):  # noqa: F811
    write_config(home, llm_server, internaliser={"every_tasks": 100})
    llm_server.script(internaliser(lesson("the mirror is slow")))
    session = StandInSession()
    looked = [{"tool": "code_execution_tool", "args": {"code": f"ls /srv/{n}"}, "output": f"app{n}.py"} for n in range(2)]
    for n in range(3):  # three failed tool calls each (not in a row: the kernel's PACE stays primary): +0.3
        session.run_task(f"fetch {n}", turns(failing(1), looked[0], failing(2), looked[1], failing(3), respond()))
    assert state(home)["urgency"] == pytest.approx(0.9) and runs(home) == []
    session.run_task("switch plans", turns({"tool": "x", "args": {}, "output": "ok", "pace": "alternate"}, respond()))  # +0.2
    assert state(home)["urgency"] == 0.0 and state(home)["urgency_signals"] == []
    session.run_task("next", turns(respond()))
    [run] = runs(home)
    assert (run.trigger, run.outcome) == ("urgency", "applied")


def test_an_aborted_task_runs_the_design_supervisor(home, llm_server):  # noqa: F811
    design = Reply.valid(DesignOutput, {"design_updates": [{**CONVENTION, "category": "design", "name": "storage"}],
                                        "divergences": ["colonies are a list"],
                                        "directives": [{"type": "functional", "description": "Store colonies in a dict",
                                                        "rationale": "entities use dict lookup"}],
                                        "summary": "storage diverges"})
    write_config(home, llm_server, design={}, code_style={"every_tasks": 100})
    config = yaml.safe_load((home / "supervisors.yaml").read_text())
    config["urgency"] = {"weights": {"task_abort": 0.0}}  # so only on_abort triggers
    (home / "supervisors.yaml").write_text(yaml.safe_dump(config))
    llm_server.script(design)
    session = StandInSession()
    session.run_task("deploy", turns({"tool": "x", "args": {}, "output": "boom", "pace": "emergency"}, respond()))
    session.run_task("next", turns(respond()))
    [run] = runs(home)
    assert (run.supervisor, run.trigger, run.outcome) == ("design", "abort", "applied")
    assert "Design supervisor (bootstrap): 1 divergence, 1 functional directive, 1 design document updated" in ui_headings(session)
    digests = [json.loads(line) for line in (home / "supervisors" / "digests.jsonl").read_text().splitlines()]
    assert digests[0]["outcome"] == "aborted" and digests[0]["abort_reason"] == "reached PACE emergency"


def test_converging_findings_double_the_interval_and_a_change_resets_it(home, llm_server):  # noqa: F811
    write_config(home, llm_server, internaliser={"every_tasks": 1})
    same = [lesson("the mirror is slow"), lesson("tests need a database")]
    llm_server.script(internaliser(*same), internaliser(*same), internaliser(lesson("the mirror is slow"), lesson("tests need a  database!")),
                      internaliser(lesson("something new entirely"), lesson("and another thing")))
    session = StandInSession()
    for n in range(1, 9):
        session.run_task(f"task {n}", turns(respond()))
        runner_for(home).wait_for_runs()
    session.run_task("apply", turns(respond()))
    tasks_at_run = [(r.task, r.converging, r.interval_tasks) for r in runs(home)]
    # every task at first; the same findings (reworded or not): interval 2, then 4; new ones: back to 1
    assert tasks_at_run == [(1, False, 1), (2, True, 2), (4, True, 4), (8, False, 1)]


# --------------------------------------------------------------------------- internaliser


def test_internaliser_accumulates_lessons_and_sends_flagged_items_to_review(home, llm_server):  # noqa: F811
    write_config(home, llm_server, internaliser={"every_tasks": 5})
    llm_server.script(internaliser(lesson("pip needs --user in this image", topic="tooling"),
                                   lesson("The team chose SQLite implicitly", category="domain", needs_user_review=True)),
                      internaliser(lesson("apt is offline", topic="tooling", confidence="low")))
    runner = SupervisorRunner(home)
    first = runner.run_now()[0]
    assert runner.run_now()[0].outcome == "applied"
    store = KnowledgeStore(home / "knowledge")
    tooling = store.get("lessons/tooling.md")
    assert tooling is not None and "1. pip needs --user in this image (task 1)" in tooling.body
    assert "2. apt is offline (task 1, low confidence)" in tooling.body
    [item] = store.review_items()
    assert item.source == "internaliser" and item.draft is not None and item.draft.category == "domain"
    assert "SQLite" in item.draft.rules[0] and store.get(f"domain/{item.draft.name}.md") is None
    assert (first.review_items, first.findings) == (1, 2)
    assert "Internaliser (bootstrap): 2 knowledge items, 1 document updated, 1 for review" == first_line(first)


def settle(home: Path) -> None:
    """Wait for every queued and running run and apply the results (what later task starts would do)."""
    runner = runner_for(home)
    while runner.in_flight():
        runner.wait_for_runs()
        runner.collect()


def first_line(run: SupervisorRun) -> str:
    from org.llm_supervisors.records import outcome_line

    return outcome_line(run)


def test_a_supervisor_resolves_its_own_directives_only(home, llm_server):  # noqa: F811
    seed_hand_written_convention(home)
    write_config(home, llm_server, code_style={"every_tasks": 5})
    queue = DirectiveQueue(home / "supervisors" / "directives.json")
    queue.add([{"type": "functional", "source": "design", "description": "Store colonies in a dict"}])
    llm_server.script(code_style(), code_style(directives=[], resolved=["D1", "D2"]))
    runner = SupervisorRunner(home)
    runner.run_now()
    [run] = runner.run_now()
    assert [d.id for d in queue.pending()] == ["D1"]  # design's directive stays
    assert [(r.id, r.by) for r in queue.history()] == [("D2", "code_style")]
    assert "resolved D2" in run.reason


# --------------------------------------------------------------------------- restart, records, command line

TASKS_SCRIPT = """
import sys
sys.path.insert(0, {root!r})
from org.contracts import TraceTurn
from org.llm_supervisors.runner import runner_for
from org.standin.session import StandInSession

session = StandInSession()
for n in range(int(sys.argv[1])):
    session.run_task(f"task {{n}}", [TraceTurn(turn=1, tool="response", args={{"text": "ok"}}, output="ok")])
runner_for().wait_for_runs()
runner_for().collect()
"""


def python(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def test_counters_survive_a_restart(home, llm_server, tmp_path):  # noqa: F811
    write_config(home, llm_server, internaliser={"every_tasks": 3})
    llm_server.script(internaliser(lesson("kept across restarts")))
    script = tmp_path / "tasks.py"
    script.write_text(TASKS_SCRIPT.format(root=str(ROOT)))
    first = python(str(script), "2")
    assert first.returncode == 0, first.stderr
    assert state(home)["supervisors"]["internaliser"]["tasks_since_run"] == 2 and runs(home) == []
    second = python(str(script), "1")  # a new process: the agent restarted
    assert second.returncode == 0, second.stderr
    [run] = runs(home)
    assert (run.supervisor, run.trigger, run.task, run.outcome) == ("internaliser", "periodic", 3, "applied")
    assert state(home)["supervisors"]["internaliser"]["tasks_since_run"] == 0


def test_a_damaged_state_file_is_named_once_and_counting_starts_again(home, llm_server, caplog):  # noqa: F811
    write_config(home, llm_server, internaliser={"every_tasks": 3})
    (home / "supervisors").mkdir()
    (home / "supervisors" / "state.json").write_text('{"schema_version": 1, "tasks_completed": "many"}')
    session = StandInSession()
    session.run_task("one", turns(respond()))
    session.run_task("two", turns(respond()))
    assert state(home)["tasks_completed"] == 2
    damaged = [m for m in pack_warnings(caplog) if "state.json" in m]
    assert len(damaged) == 1 and "tasks_completed" in damaged[0] and "start again from zero" in damaged[0]


def test_log_stats_and_run_from_the_command_line(home, llm_server):  # noqa: F811
    seed_hand_written_convention(home)
    write_config(home, llm_server, code_style={"every_tasks": 1}, internaliser={"every_tasks": 1})
    llm_server.script(code_style(), internaliser(lesson("one fact")))
    StandInSession().run_task("one", turns(respond()))
    settle(home)
    recorded = runs(home)
    assert [(r.supervisor, r.outcome, r.source) for r in recorded] == [("code_style", "applied", "agent"),
                                                                       ("internaliser", "applied", "agent")]

    log = python("-m", "org", "supervisors", "log")
    assert log.returncode == 0, log.stderr
    assert "Code style supervisor: 2 inconsistencies, 1 cleanup directive, 1 convention written" in log.stdout
    assert "Internaliser (bootstrap): 1 knowledge item, 1 document updated" in log.stdout
    assert "wrote conventions/error_handling.md" in log.stdout and "directive cleanup/low: Use ToolError" in log.stdout
    as_json = python("-m", "org", "supervisors", "log", "--json", "--supervisor", "internaliser")
    assert [json.loads(line)["run_id"] for line in as_json.stdout.splitlines()] == [recorded[1].run_id]

    stats = python("-m", "org", "supervisors", "stats", "--json")
    assert stats.returncode == 0, stats.stderr
    data = json.loads(stats.stdout)
    assert data["total"]["runs"] == 2 and data["total"]["applied"] == 2
    assert data["total"]["prompt_tokens"] == sum(r.prompt_tokens for r in recorded) == 240
    assert data["today"]["cost_usd"] == data["total"]["cost_usd"] == pytest.approx(0.0021)
    assert data["by_supervisor"]["code_style"]["cost_usd"] == pytest.approx(0.0021)
    assert data["by_supervisor"]["internaliser"]["runs"] == 1 and data["by_supervisor"]["design"]["runs"] == 0
    assert data["ledger"]["total_calls"] == 2 and data["ledger"]["total_usd"] == pytest.approx(0.0021)
    text = python("-m", "org", "supervisors", "stats").stdout
    assert "today (" in text and "By supervisor (total)" in text and "Usage ledger" in text and "$0.0021" in text

    llm_server.script(code_style(inconsistencies=[], directives=[]), internaliser(lesson("two facts")))
    run = python("-m", "org", "supervisors", "run", "--milestone")
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.splitlines()[0] == "Code style supervisor: 0 inconsistencies, 0 cleanup directives"
    assert [(r.trigger, r.source) for r in runs(home)[2:]] == [("milestone", "cli"), ("milestone", "cli")]

    failed = python("-m", "org", "supervisors", "run", "--supervisor", "code_style")  # the script has no answer left: 500s
    assert failed.returncode == 2 and failed.stdout.startswith("Code style supervisor: skipped: HTTP 500")  # nothing could run
    assert "Code style supervisor: skipped: HTTP 500" in python("-m", "org", "supervisors", "log").stdout


def test_run_from_the_command_line_without_a_config_says_so(org_home):
    result = python("-m", "org", "supervisors", "run")
    assert result.returncode == 2 and "supervisors.yaml" in result.stderr
    log = python("-m", "org", "supervisors", "log")
    assert log.stdout.strip() == "No supervisor runs recorded yet.", log.stderr


def test_the_demo_shows_a_written_document_in_the_next_prompt(tmp_path):
    result = python("-m", "org", "demo", "--out", str(tmp_path / "demo"))
    assert result.returncode == 0, result.stderr
    part = result.stdout.split("== LLM-backed supervisors", 1)[1]
    for expected in ("(UI log) Code style supervisor: 2 inconsistencies, 1 cleanup directive, 1 convention written",
                     "## PROJECT KNOWLEDGE", "### Naming (conventions/naming.md, established)",
                     "### Error handling (conventions/error_handling.md, provisional)",
                     "1. Raise ConfigError with the file and the reason; never a bare Exception",
                     "## ACTIVE DIRECTIVES", "- D1 [low cleanup, from code_style]: Raise ConfigError instead of Exception"):
        assert expected in part
    log = python("-m", "org", "supervisors", "log", "--org-dir", str(tmp_path / "demo" / "llm-supervisors"))
    assert "wrote conventions/error_handling.md" in log.stdout and "converging: interval now 2 tasks" in log.stdout


# --------------------------------------------------------------------------- pieces on their own


def test_findings_are_compared_by_their_words_not_their_wording():
    from org.llm_supervisors.triggers import barely_changed, findings_change

    before = ["app/tools.py raises bare Exception", "app/io.py returns None on error"]
    assert findings_change(before, ["App/tools.py raises a bare Exception!", "app/io.py returns None on error"]) == 0
    assert findings_change(before, before + ["tests/ has no fixtures"]) == 1 and barely_changed(before, before + ["x y z"])
    assert not barely_changed(before, ["something else", "and more", "and more still"])
    assert barely_changed([], []) and not barely_changed([], ["new", "other"])


def test_milestones_every_n_tasks_and_the_order_of_reasons():
    from org.contracts.supervisor_outputs import SupervisorsState, TaskDigest
    from org.contracts.supervisors import SupervisorsConfig
    from org.llm_supervisors.triggers import TriggerSettings, due, note_task, started

    config = SupervisorsConfig.model_validate({"model": {"model": "m"}, "milestone_every_tasks": 2,
                                               "supervisors": {"internaliser": {"every_tasks": 2}}})
    settings, state = TriggerSettings.from_config(config), SupervisorsState()
    digest = TaskDigest(task=1, started="2026-01-01T00:00:00Z", duration_seconds=1, outcome="completed")
    note_task(state, settings, digest)
    assert due(state, settings) == {}
    note_task(state, settings, digest.model_copy(update={"task": 2}))
    assert due(state, settings) == {"code_style": ["milestone"], "design": ["milestone"], "internaliser": ["milestone", "periodic"]}
    started(state, ["code_style", "design", "internaliser"])
    note_task(state, settings, digest.model_copy(update={"task": 3, "outcome": "aborted"}))
    assert due(state, settings) == {"code_style": ["urgency"], "design": ["abort", "urgency"], "internaliser": ["urgency"]}


def test_a_digest_names_the_files_and_keeps_no_secrets(org_home):
    from org.llm_supervisors import digests
    from org.llm_supervisors.task_readings import read_task
    from org.standin.agent import LoopData, StandInAgent

    agent = StandInAgent()
    digests.begin(read_task(agent, LoopData(user_message={"user_message": "deploy with token ghp_" + "a" * 30}), start=True))
    trace = digests.current(read_task(agent))
    trace.note_tool("text_editor", {"op": "write", "path": "/app/src/main.py"}, "written", None, None, False)
    trace.note_tool("code_execution_tool", {"code": "python tests/test_main.py && cat conf/app.yaml"}, "Traceback (most recent call last):\nError", None, None, False)
    trace.note_tool("browser_agent", {"message": "log in", "password": "hunter33", "api_key": "gsk_live_0123456789abcdef"}, "ok", None, None, False)
    trace.note_tool("response", {"text": "done; password = hunter22 was wrong"}, "done", None, None, True)
    digest = digests.finish(read_task(agent), 7)
    workdir = "/a0/usr/workdir"  # no project: Agent-Zero's workdir_path default
    assert digest.files_touched == ["/app/src/main.py", f"{workdir}/tests/test_main.py", f"{workdir}/conf/app.yaml"]
    assert [(t.tool, t.ok) for t in digest.tools] == [("text_editor", True), ("code_execution_tool", False), ("browser_agent", True),
                                                      ("response", True)]
    assert digest.tools[2].args == "message=log in, password=[REDACTED], api_key=[REDACTED]"
    assert digest.outcome == "completed" and digest.task == 7 and digests.current(read_task(agent)) is None
    assert "ghp_" not in digest.user_message and "hunter22" not in digest.final_response
    assert "[REDACTED]" in digest.user_message and "[REDACTED]" in digest.final_response


def test_run_records_keep_the_most_recent_runs(tmp_path):
    from org.llm_supervisors.records import RunLog

    log = RunLog(tmp_path / "runs.jsonl", limit=3)
    for n in range(7):
        log.append(SupervisorRun(run_id=f"{n:012x}", supervisor="design", trigger="manual", started="2026-01-01T00:00:00Z",
                                 duration_seconds=1, outcome="skipped", reason=f"run {n}"))
    assert [r.reason for r in log.runs()] == ["run 4", "run 5", "run 6"]  # trimmed back to 3 at the 7th
    assert len(log.path.read_text().splitlines()) == 3


def test_a_damaged_run_record_is_skipped_with_one_log_line(org_home):
    folder = org_home / "supervisors"
    folder.mkdir()
    good = SupervisorRun(run_id="0123456789ab", supervisor="design", trigger="manual", started="2026-01-01T00:00:00Z",
                         duration_seconds=1, outcome="skipped", reason="no API key")
    (folder / "runs.jsonl").write_text('{"run_id": "x"}\n' + good.model_dump_json() + "\n")
    result = python("-m", "org", "supervisors", "log")
    assert result.returncode == 0 and "Design supervisor: skipped: no API key" in result.stdout
    assert f"{folder / 'runs.jsonl'}:1: " in result.stderr and "that run is left out" in result.stderr
