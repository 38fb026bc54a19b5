"""One store and one directive queue per Agent-Zero project; the commands that show them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pack_commands import a0org
from test_llm_supervisors import code_style, respond, turns, write_config

from org.knowledge.directives import DirectiveQueue
from org.knowledge.store import KnowledgeStore
from org.llm_supervisors.runner import runner_for
from org.replay import prepare_organization
from org.standin.session import StandInSession


@pytest.fixture(autouse=True)
def _active_organization(org_home: Path) -> None:
    prepare_organization(org_home, None)


def _session(project: str | None) -> StandInSession:
    session = StandInSession()
    if project:
        session.agent.context.data["project"] = project
    return session


def _settle(home: Path, project: str | None) -> None:
    runner = runner_for(home, project)
    while runner.in_flight():
        runner.wait_for_runs()
        runner.collect()


def test_each_project_has_its_own_knowledge_and_directives(org_home, llm_server, llm_key):
    write_config(org_home, llm_server, code_style={"every_tasks": 1})
    scope = org_home / "projects" / "shop"
    (scope / "knowledge" / "conventions").mkdir(parents=True)
    (scope / "knowledge" / "conventions" / "naming.md").write_text("# Naming\n\n## Rules\n\n1. snake_case\n")  # review mode
    llm_server.script(code_style())
    shop = _session("shop")
    shop.run_task("add a tool", turns({"tool": "code_execution_tool", "args": {"code": "ls"}, "output": "a.py"}, respond()))
    _settle(org_home, "shop")

    assert KnowledgeStore(scope / "knowledge").get("conventions/error_handling.md") is not None
    assert [d.id for d in DirectiveQueue(scope / "supervisors" / "directives.json").pending()] == ["D1"]
    assert (scope / "supervisors" / "digests.jsonl").is_file() and (scope / "supervisors" / "state.json").is_file()
    assert not (org_home / "knowledge").exists() and not (org_home / "supervisors" / "directives.json").exists()
    [run] = [json.loads(line) for line in (org_home / "supervisors" / "runs.jsonl").read_text().splitlines()]
    assert run["project"] == "shop"

    llm_server.script(code_style(), code_style())
    seen_in = {}
    for project in ("shop", "blog", None):
        result = _session(project).run_task("next", turns(respond()))[0]
        seen_in[project] = ("Error handling" in result.extras.get("org_knowledge", ""), "D1" in result.extras.get("org_directives", ""))
    assert seen_in == {"shop": (True, True), "blog": (False, False), None: (False, False)}


def test_knowledge_list_shows_where_the_store_is_and_which_projects_have_one(org_home):
    KnowledgeStore(org_home / "projects" / "shop" / "knowledge").root.mkdir(parents=True)
    (org_home / "projects" / "shop" / "knowledge" / "conventions").mkdir()
    (org_home / "projects" / "shop" / "knowledge" / "conventions" / "naming.md").write_text("# Naming\n\n1. snake_case\n")
    plain = a0org("knowledge", "list")
    assert plain.returncode == 0, plain.stderr
    assert f"0 document(s) in {org_home / 'knowledge'} (the global store (no project))" in plain.stdout
    assert "projects with a store of their own: shop (see one with --project NAME)" in plain.stdout
    shop = a0org("knowledge", "list", "--project", "shop")
    assert "conventions/naming.md" in shop.stdout
    assert f"1 document(s) in {org_home / 'projects' / 'shop' / 'knowledge'} (project 'shop')" in shop.stdout
    directives = a0org("directives", "--project", "shop")
    assert f"0 pending directive(s) in {org_home / 'projects' / 'shop' / 'supervisors' / 'directives.json'}" in directives.stdout


# --------------------------------------------------------------------------- preview


def _store_and_queue(home: Path) -> None:
    folder = home / "knowledge" / "conventions"
    folder.mkdir(parents=True)
    (folder / "small.md").write_text("# Small\n\n## Rules\n\n1. Short rule.\n")
    rules = "\n".join(f"{n}. Rule number {n} says something rather long about the way code is written here." for n in range(1, 200))
    (folder / "big.md").write_text(f"# Big\n\n## Rules\n\n{rules}\n")
    DirectiveQueue(home / "supervisors" / "directives.json").add([{"type": "functional", "source": "design",
                                                                   "description": "Split the loader", "priority": "normal"}])


def test_preview_shows_the_sections_in_the_agents_order(org_home):
    _store_and_queue(org_home)
    out = a0org("knowledge", "preview").stdout
    assert 0 == out.index("## PROJECT KNOWLEDGE") < out.index("## ACTIVE DIRECTIVES")


def test_preview_with_only_root_shows_the_directives_beside_that_store(tmp_path):
    home = tmp_path / "elsewhere"
    _store_and_queue(home)
    out = a0org("knowledge", "preview", "--root", home / "knowledge").stdout
    assert "## PROJECT KNOWLEDGE" in out and "Split the loader" in out


@pytest.mark.parametrize("budget", ["120", "300"])
def test_a_document_that_does_not_fit_shows_the_cut_note(org_home, budget):
    _store_and_queue(org_home)
    out = a0org("knowledge", "preview", "--budget", budget).stdout
    assert "cut to fit" in out and "conventions/big.md" in out


# --------------------------------------------------------------------------- stats and run


def test_stats_without_an_organizations_folder_creates_nothing_and_says_so(tmp_path):
    missing = tmp_path / "fresh" / "usr" / "organizations"
    for command in (("stats",), ("stats", "--json"), ("log",)):
        result = a0org("supervisors", *command, "--org-dir", missing)
        assert result.returncode == 1 and f"the organizations folder {missing} does not exist" in result.stderr
    assert not (tmp_path / "fresh").exists()


def test_run_exits_2_when_every_supervisor_is_skipped(org_home, llm_server, monkeypatch):
    from llm_server import KEY_ENV

    monkeypatch.delenv(KEY_ENV, raising=False)
    write_config(org_home, llm_server, code_style={}, internaliser={})
    result = a0org("supervisors", "run")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "skipped" in result.stdout
