"""The pack inside a real Agent-Zero, with the model replaced by a scripted
OpenAI-compatible server on 127.0.0.1.

Runs only when ``A0ORG_TEST_A0_ROOT`` points at an Agent-Zero tree (v0.9.8.x or v1.x)
and ``A0ORG_TEST_A0_PYTHON`` at a Python 3.12 with its requirements
(``tests/real_a0/make_env.sh`` builds one). Each scenario copies the tree, installs the
pack with ``install_all.sh`` and runs one chat in its own process.
``A0ORG_TEST_HARNESS_ARGS`` adds harness options, e.g. ``--disable-plugin _telegram_integration``
for v0.9.9.0, whose Telegram plugin needs a package the small environment lacks.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from conftest import ROOT
from org.contracts import SaluteReport

A0_ROOT = os.environ.get("A0ORG_TEST_A0_ROOT")
A0_PYTHON = os.environ.get("A0ORG_TEST_A0_PYTHON")
pytestmark = [
    pytest.mark.real_a0,
    pytest.mark.skipif(not (A0_ROOT and A0_PYTHON), reason="set A0ORG_TEST_A0_ROOT and A0ORG_TEST_A0_PYTHON to run against a real Agent-Zero"),
]
HARNESS = ROOT / "tests" / "real_a0" / "harness.py"


def reply(headline: str, code: str = "cat /nonexistent/file") -> dict:
    return {
        "thoughts": ["I will read the file."],
        "headline": headline,
        "tool_name": "code_execution_tool",
        "tool_args": {"runtime": "terminal", "session": 0, "reset": False, "code": code},
    }


FINAL = {"thoughts": ["Done."], "headline": "Reporting", "tool_name": "response", "tool_args": {"text": "The file does not exist."}}


def install(tree: Path, activate: bool, doctrine: dict | None = None) -> Path:
    args = ["bash", str(ROOT / "install_all.sh"), "--a0-root", str(tree), "--python", A0_PYTHON, "--no-library"]
    if activate:
        args += ["--activate", "software_dev"]
    done = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    organizations = tree / "usr" / "organizations"
    if doctrine:
        role_file = organizations / "roles" / "codegen.yaml"
        role = yaml.safe_load(role_file.read_text())
        role["doctrine"].update(doctrine)
        role_file.write_text(yaml.safe_dump(role, sort_keys=False))
    return organizations


def run_chat(tree: Path, script: list[dict], tmp_path: Path) -> dict:
    script_file = tmp_path / "script.json"
    script_file.write_text(json.dumps(script))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("A0ORG_HOME", None)  # the pack must find the organizations folder through Agent-Zero itself
    extra = shlex.split(os.environ.get("A0ORG_TEST_HARNESS_ARGS", ""))
    done = subprocess.run([A0_PYTHON, str(HARNESS), "--script", str(script_file), "--message", "Read /nonexistent/file", *extra],
                          cwd=tree, env=env, capture_output=True, text=True, timeout=300)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    assert lines, done.stdout[-2000:] + done.stderr[-2000:]
    result = json.loads(lines[-1])
    assert result["ok"], result.get("traceback") or result.get("error")
    return result


@pytest.fixture
def tree(tmp_path) -> Path:
    copy = tmp_path / "a0"
    shutil.copytree(A0_ROOT, copy, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def warnings(result: dict) -> list[str]:
    return [m["content"] for m in result["history"] if not m["ai"] and "system_warning" in m["content"]]


def test_loop_in_a_real_agent_zero_gets_one_supervisor_steering(tree, tmp_path):
    organizations = install(tree, activate=True, doctrine={"radio_check_interval_turns": 1})
    result = run_chat(tree, [reply(f"attempt {i}") for i in range(1, 4)] + [FINAL], tmp_path)
    steering = [w for w in warnings(result) if "[SUPERVISOR]" in w]
    assert len(steering) == 1 and "[SUPERVISOR] Loop" in steering[0], warnings(result)
    logged = [item for item in result["log"] if item["heading"] == "Supervisor: loop"]
    assert len(logged) == 1 and logged[0]["type"] == "warning"
    assert result["result"] == "The file does not exist."
    report = SaluteReport.model_validate_json((organizations / "reports" / "codegen_latest.json").read_text())
    assert report.unit.role_id == "codegen" and report.unit.organization == "software_dev"
    assert report.environment.context_tokens_max == 32000 and report.environment.context_tokens_used
    assert report.environment.model == "harness-main"


def test_no_supervisor_warning_on_the_turn_agent_zero_warns_about_a_repeat(tree, tmp_path):
    install(tree, activate=True, doctrine={"radio_check_interval_turns": 2})
    same = reply("attempt 3")
    script = [reply("attempt 1"), reply("attempt 2"), same, same, reply("attempt 5"), reply("attempt 6"), FINAL]
    result = run_chat(tree, script, tmp_path)
    history = [m["content"] for m in result["history"]]
    repeat = next(i for i, text in enumerate(history) if "You have sent the same message again" in text)
    # the turn of Agent-Zero's repeat warning ends without a supervisor warning after it
    assert "[SUPERVISOR]" not in history[repeat + 1]
    steering = [w for w in warnings(result) if "[SUPERVISOR]" in w]
    assert len(steering) == 1 and "[SUPERVISOR] Loop" in steering[0]
    assert history.index(next(t for t in history if "[SUPERVISOR]" in t)) > repeat + 1


def test_without_an_active_organization_the_pack_does_nothing(tree, tmp_path):
    organizations = install(tree, activate=False)
    result = run_chat(tree, [reply(f"attempt {i}") for i in range(1, 5)] + [FINAL], tmp_path)
    assert not [w for w in warnings(result) if "[SUPERVISOR]" in w]
    assert not [item for item in result["log"] if item["heading"].startswith(("Supervisor:", "[ORG]"))]
    assert not list((organizations / "reports").glob("*.json"))
