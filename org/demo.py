"""``a0org demo``: a scripted session through the real hook files, no Agent-Zero needed.

Normal work, then a tool loop, an oscillation, a failure cascade, a stall, a filling
context and a PACE escalation, with the supervisor steering as each one appears.

Then the LLM-backed supervisors: a local scripted OpenAI-compatible server plays the
model, the code style supervisor runs after a task, and the next task's prompt carries
the convention it wrote (PROJECT KNOWLEDGE) and its cleanup directive (ACTIVE DIRECTIVES).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any, TextIO

from org.contracts import TraceHeader, TraceTurn
from org.replay import organization_home, prepare_organization, run_session

#: The demo runs the radio check every turn and calls 4 turns without progress a stall,
#: so that every anomaly shows up within a short session.
DEMO_DOCTRINE = {"radio_check_interval_turns": 1, "max_turns_without_progress": 4}


def _ok(tool: str, args: dict, output: str, **extra: Any) -> dict:
    return {"tool": tool, "args": args, "output": output, **extra}


def demo_script() -> list[tuple[str, dict]]:
    """(phase, turn) pairs; turns are numbered when the session is built."""
    missing = "cat: /app/config.yml: No such file or directory"
    plan = {"plan_name": "add_config_loader", "current_step": "write the loader"}
    script: list[tuple[str, dict]] = []
    add = lambda phase, *turns: script.extend((phase, t) for t in turns)  # noqa: E731
    add("normal work",
        _ok("code_execution_tool", {"runtime": "terminal", "code": "ls /app"}, "main.py\nrequirements.txt\nsettings/"),
        _ok("code_execution_tool", {"runtime": "terminal", "code": "cat /app/main.py"}, "import settings\nprint(settings.load())"),
        _ok("text_editor", {"op": "read", "path": "/app/settings/__init__.py"}, "def load():\n    return {}"),
        _ok("code_execution_tool", {"runtime": "terminal", "code": "python /app/main.py"}, "{}"))
    add("tool loop", *[_ok("code_execution_tool", {"runtime": "terminal", "code": "cat /app/config.yml"}, missing) for _ in range(3)])
    add("recovery", _ok("code_execution_tool", {"runtime": "terminal", "code": "ls /app/settings"}, "__init__.py\ndefaults.yml"))
    for _ in range(2):
        add("oscillation",
            _ok("search_engine", {"query": "settings loader defaults.yml"}, "ConnectionError: Connection refused"),
            _ok("document_query", {"document": "/app/docs/settings.md"}, "FileNotFoundError: [Errno 2] No such file or directory: '/app/docs/settings.md'"))
    add("recovery", _ok("code_execution_tool", {"runtime": "terminal", "code": "cat /app/settings/defaults.yml"}, "debug: false\nport: 8080"))
    add("cascade",
        _ok("code_execution_tool", {"runtime": "terminal", "code": "pip install pyyaml"}, "ERROR: Could not install packages due to an OSError: [Errno 13] Permission denied"),
        _ok("text_editor", {"op": "write", "path": "/srv/app/loader.py"}, "PermissionError: [Errno 13] Permission denied: '/srv/app/loader.py'"),
        _ok("browser_agent", {"message": "open the PyYAML docs"}, "ConnectionError: Name or service not known"))
    add("recovery", _ok("code_execution_tool", {"runtime": "terminal", "code": "python -c 'import yaml'"}, ""))
    for since in range(1, 7):
        add("stall", _ok("text_editor", {"op": "read", "path": f"/app/settings/part{since}.py"}, f"# part {since}", htn={**plan, "turns_since_progress": since}))
    add("context filling up",
        _ok("code_execution_tool", {"runtime": "terminal", "code": "pytest -q"}, "3 passed", htn={**plan, "current_step": "run tests", "turns_since_progress": 0}, context_fill=0.83),
        _ok("code_execution_tool", {"runtime": "terminal", "code": "pytest -q -k loader"}, "1 passed", context_fill=0.86),
        _ok("text_editor", {"op": "read", "path": "/app/README.md"}, "# App", context_fill=0.91),
        _ok("code_execution_tool", {"runtime": "terminal", "code": "git status --short"}, " M settings/__init__.py", context_fill=0.40))
    no_flask = "Traceback (most recent call last):\n  File \"/app/main.py\", line 1, in <module>\nModuleNotFoundError: No module named 'flask'"
    # the plan layer reports the task standing still while the agent loops, and moving again once it is resumed
    add("steering ignored", *[_ok("code_execution_tool", {"runtime": "terminal", "code": "python /app/main.py"}, no_flask,
                                  htn={**plan, "current_step": "start the app", "turns_since_progress": n}) for n in range(1, 8)])
    add("resumed by the user", _ok("code_execution_tool", {"runtime": "terminal", "code": "pip install flask"}, "Successfully installed flask-3.0.2",
                                   htn={**plan, "current_step": "deploy", "turns_since_progress": 0}))
    refused = "ConnectionError: registry.example.com refused the upload"
    for attempt in range(1, 10):  # a new task; every way of deploying ends in the same refusal: the task does not move
        add("PACE escalation", _ok("code_execution_tool", {"runtime": "terminal", "code": f"python deploy.py --attempt {attempt}"},
                                   f"Traceback (most recent call last):\n  File \"deploy.py\", line 12\n{refused}",
                                   htn={**plan, "current_step": "deploy", "turns_since_progress": attempt},
                                   **({"user": "Deploy the app"} if attempt == 1 else {})))
    return script


def _describe(turn: TraceTurn) -> str:
    args = turn.args or {}
    target = args.get("code") or args.get("query") or args.get("path") or args.get("document") or args.get("message") or ""
    return f"{turn.tool}: {target}"


def run_demo(out: TextIO, reports_dir: Path | None = None, era: str = "D") -> Path:
    """Run the demo, printing as it goes. Returns the folder holding the SALUTE reports."""
    folder = reports_dir or Path(tempfile.mkdtemp(prefix="a0org-demo-"))
    script = demo_script()
    turns = [TraceTurn.model_validate({"turn": n, **raw}) for n, (_, raw) in enumerate(script, start=1)]
    header = TraceHeader(kind="header", role="codegen", doctrine=DEMO_DOCTRINE)
    with organization_home(folder) as home:
        results = run_session(header, turns, home, era)
    out.write(f"a0org demo: role codegen, radio check every turn, {len(turns)} turns\n")
    phase = None
    for (name, _), turn, result in zip(script, turns, results):
        if name != phase:
            phase = name
            out.write(f"\n== {phase}\n")
        out.write(f"turn {turn.turn:2d} | PACE {result.pace or '-':10s} | {_describe(turn)}\n")
        if result.blocked:
            out.write(f"         [not run] {result.blocked[1]}\n")
        for _, text in result.steering:
            out.write(f"         >> {text}\n")
        for text in result.native_warnings:
            if not result.pause_text or not result.pause_text.startswith(text):
                out.write(f"         (Agent-Zero) {text}\n")
        if result.pause_text:
            out.write(f"         || {result.pause_text}\n")
    total = sum(len(r.steering) for r in results)
    reports = sorted((folder / "reports").glob("*_latest.json"))
    archived = len(list((folder / "reports" / "archive").glob("*.json")))
    out.write(f"\n{total} steering messages in {len(turns)} turns.\n")
    out.write(f"SALUTE reports written to {folder / 'reports'}: {', '.join(p.name for p in reports)} (+{archived} archived)\n")
    out.write(f"What supervision did, and how often progress followed: a0org stats --org-dir {folder}  (each event: a0org events --org-dir {folder})\n")
    run_supervisors_demo(out, folder / "llm-supervisors", era)
    return folder


# --------------------------------------------------------------------------- LLM-backed supervisors

#: What the scripted model answers for the code style supervisor.
DEMO_CODE_STYLE_ANSWER = {
    "conventions_updated": [{
        "category": "conventions", "name": "error_handling", "title": "Error handling",
        "rules": ["Raise ConfigError with the file and the reason; never a bare Exception",
                  "Let errors reach the caller; never return None to mean failure"],
        "examples": "Good:\n  raise ConfigError(f\"{path}: missing key 'port'\")\nBad:\n  raise Exception('bad config')",
        "rationale": "A failure that names the file and the reason can be fixed without reading the code.",
        "tags": ["errors", "config"],
    }],
    "inconsistencies": ["app/loader.py raises a bare Exception", "app/loader.py returns None when the file is missing"],
    "directives": [{"type": "cleanup", "description": "Raise ConfigError instead of Exception in app/loader.py, and stop returning None",
                    "rationale": "Follows conventions/error_handling.md", "files": ["app/loader.py"]}],
    "summary": "Error handling in the new loader differs from the rest of the code; convention written.",
}
DEMO_LOADER = """import yaml


def load(path):
    try:
        return yaml.safe_load(open(path))
    except FileNotFoundError:
        return None
    except yaml.YAMLError:
        raise Exception("bad config")
"""


def _demo_task(*raw: dict) -> list[TraceTurn]:
    return [TraceTurn.model_validate({"turn": n, **turn}) for n, turn in enumerate(raw, start=1)]


def run_supervisors_demo(out: TextIO, home: Path, era: str = "D") -> None:
    """Two tasks in a stand-in agent with the code style supervisor on a local scripted model."""
    from org.contracts.supervisor_outputs import CodeStyleOutput
    from org.llm_supervisors.records import outcome_line
    from org.llm_supervisors.runner import runner_for
    from org.standin.model_server import Reply, ScriptedServer
    from org.standin.session import StandInSession

    (home / "knowledge" / "conventions").mkdir(parents=True, exist_ok=True)
    (home / "app").mkdir(exist_ok=True)
    # a person's own convention: read and respected, never rewritten by a supervisor
    (home / "knowledge" / "conventions" / "naming.md").write_text(
        "# Naming\n\n## Rules\n\n1. snake_case for functions and modules\n", encoding="utf-8")
    loader = home / "app" / "loader.py"
    answers = (Reply.valid(CodeStyleOutput, DEMO_CODE_STYLE_ANSWER, prompt_tokens=2400, completion_tokens=310, cost=0.0119),
               Reply.valid(CodeStyleOutput, DEMO_CODE_STYLE_ANSWER | {"conventions_updated": [], "directives": [],
                                                                  "summary": "Nothing new; the cleanup directive stands."},
                           prompt_tokens=2600, completion_tokens=120, cost=0.0096))
    with ScriptedServer(*answers) as server, organization_home(home):
        prepare_organization(home, None)  # the supervisors work for an active organization
        (home / "supervisors.yaml").write_text(
            f"model: {{base_url: '{server.base_url}', model: scripted/demo, api_key_env: null}}\n"
            "supervisors:\n  code_style: {every_tasks: 1, time_budget_seconds: 30}\n"
            "  design: {enabled: false}\n  internaliser: {enabled: false}\n", encoding="utf-8")
        out.write(f"\n== LLM-backed supervisors (a scripted model at {server.base_url})\n")
        session = StandInSession(era=era)
        loader.write_text(DEMO_LOADER, encoding="utf-8")
        out.write("task 1 | user: Add a loader for the YAML settings\n")
        session.run_task("Add a loader for the YAML settings", _demo_task(
            {"tool": "text_editor", "args": {"op": "write", "path": str(loader)}, "output": f"{loader} written"},
            {"tool": "response", "args": {"text": "Added app/loader.py"}, "output": "Added app/loader.py"}))
        out.write("task 1 | done; the code style supervisor is due (every task here) and runs in the background\n")
        logged = len(session.agent.context.log.items)
        out.write("task 2 | user: Add a test for the loader\n")
        results = session.run_task("Add a test for the loader", _demo_task(
            {"tool": "response", "args": {"text": "Added tests/test_loader.py"}, "output": "Added tests/test_loader.py"}))
        for item in session.agent.context.log.items[logged:]:
            out.write(f"         (UI log) {item.heading}\n")
        out.write("task 2 | the prompt's extras on its first turn:\n")
        for key in ("org_knowledge", "org_directives"):
            for line in results[0].extras.get(key, "(missing)").splitlines():
                out.write(f"         {line}\n")
        out.write("task 2 | done; the code style supervisor runs again (the demo waits for it)\n")
        runner = runner_for(home)
        while runner.in_flight():
            runner.wait_for_runs()
            for run in runner.collect():
                out.write(f"         {outcome_line(run)}\n")
    out.write(f"Knowledge store: {home / 'knowledge'}; run records: {home / 'supervisors' / 'runs.jsonl'}\n")
    out.write(f"See them with: a0org supervisors log --org-dir {home}  (and: a0org supervisors stats --org-dir {home})\n")
