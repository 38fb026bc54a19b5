"""Task digests show delegated work, what worked, the agent's reasoning, and files from the agent's working directory."""

from __future__ import annotations

import json
from pathlib import Path

from test_llm_supervisors import code_style, request_text, respond, turns, write_config

from org.a0 import hooks
from org.llm_supervisors import digests
from org.llm_supervisors.runner import runner_for
from org.llm_supervisors.task_readings import read_task
from org.llm_supervisors.supervisors import digest_text
from org.replay import prepare_organization
from org.standin.agent import LoopData, Response, StandInAgent
from org.standin.session import StandInSession


def settle(home: Path, project: str | None = None) -> None:
    runner = runner_for(home, project)
    while runner.in_flight():
        runner.wait_for_runs()
        runner.collect()


def _call(agent: StandInAgent, tool: str, args: dict, output: str, thoughts: list[str] | None = None) -> None:
    """One tool call through the pack's real tool_execute_after hook, the way Agent-Zero runs it."""
    agent.loop_data.current_tool = type("Tool", (), {"args": args})()
    agent.loop_data.last_response = json.dumps({"thoughts": thoughts or [], "tool_name": tool, "tool_args": args})
    hooks.tool_execute_after(agent, response=Response(message=output, break_loop=tool == "response"), tool_name=tool)


def test_a_subordinates_calls_outputs_and_thoughts_are_in_the_digest(org_home):
    prepare_organization(org_home, None)
    top = StandInAgent()
    top.context.data["project"] = "shop"
    digests.begin(read_task(top, LoopData(user_message="add a payment module"), start=True))
    _call(top, "call_subordinate", {"message": "write app/pay.py", "reset": "true"}, "payment module written",
          ["The payment module is a separate concern", "I delegate it to a coder"])
    sub = top.subordinate()
    _call(sub, "code_execution_tool", {"runtime": "terminal", "code": "mkdir -p app && cat > app/pay.py"}, "", ["Create the file first"])
    _call(sub, "code_execution_tool", {"runtime": "terminal", "code": "python -m pytest tests/test_pay.py"}, "3 passed in 0.12s")
    _call(sub, "response", {"text": "app/pay.py written, 3 tests pass"}, "app/pay.py written, 3 tests pass")
    _call(top, "response", {"text": "done"}, "done")
    digest = digests.finish(read_task(top), 1)

    project = "/a0/usr/projects/shop"
    assert digest.workdir == project
    assert [(t.agent, t.tool, t.ok) for t in digest.tools] == [
        (0, "call_subordinate", True), (1, "code_execution_tool", True), (1, "code_execution_tool", True), (1, "response", True),
        (0, "response", True)]
    assert digest.tools[2].output == "3 passed in 0.12s" and digest.tools[3].output == "app/pay.py written, 3 tests pass"
    assert digest.files_touched == [f"{project}/app/pay.py", f"{project}/tests/test_pay.py"]
    assert digest.reasoning == ["The payment module is a separate concern I delegate it to a coder", "Create the file first"]
    assert digest.outcome == "completed" and digest.final_response == "done"  # the subordinate's answer does not end the task
    text = digest_text(digest)
    assert "[subordinate A1] code_execution_tool(" in text and "-> 3 passed in 0.12s" in text and "Reasoning: " in text


def test_reasoning_and_outputs_are_bounded_and_redacted(org_home):
    agent = StandInAgent()
    digests.begin(read_task(agent, LoopData(user_message="x"), start=True))
    secret = "sk_" + "live_" + "51HqT9kLmNoPqRsTuVwXyZaBcDeFgHiJ"
    for n in range(40):
        _call(agent, "code_execution_tool", {"code": f"echo {n}"}, f"STRIPE_KEY={secret} " + "x" * 2000,
              [f"thought {n}: the key is {secret} " + "y" * 1000])
    digest = digests.finish(read_task(agent), 1)
    assert len(digest.reasoning) == digests.MAX_THOUGHTS and all(len(r) <= digests.THOUGHT_CHARS for r in digest.reasoning)
    assert all(len(t.output) <= digests.OUTPUT_CHARS for t in digest.tools)
    assert secret not in digest.model_dump_json()


def test_relative_files_are_read_from_the_agents_working_directory(org_home, llm_server, llm_key, tmp_path, monkeypatch):
    prepare_organization(org_home, None)
    a0 = tmp_path / "a0"
    project = a0 / "usr" / "projects" / "shop"
    (project / "app").mkdir(parents=True)
    (project / "app" / "pay.py").write_text("def charge(amount):\n    raise Exception('no')\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # the process works elsewhere: app/pay.py is not here
    monkeypatch.setattr("org.kernel.agent_scope.a0_root", lambda: a0)
    write_config(org_home, llm_server, code_style={"every_tasks": 1})
    llm_server.script(code_style())
    session = StandInSession()
    session.agent.context.data["project"] = "shop"
    session.run_task("fix the payment module", turns(
        {"tool": "code_execution_tool", "args": {"code": "sed -i s/no/declined/ app/pay.py"}, "output": ""},
        {"tool": "text_editor", "args": {"op": "read", "path": "app/missing.py"}, "output": "not found"},
        respond()))
    settle(org_home, "shop")
    asked = request_text(llm_server.requests[0])
    assert f"### {project}/app/pay.py\n```\ndef charge(amount):" in asked
    assert f"Not read: {project}/app/missing.py (not found here)" in asked


def test_a_digest_without_a_working_directory_names_its_relative_files(org_home):
    trace = digests.TaskTrace(workdir="")
    trace.note_tool("text_editor", {"path": "src/app.py"}, "ok", True, None, False)
    assert trace.files == {} and list(trace.unresolved) == ["src/app.py"]


