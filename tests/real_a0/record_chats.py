#!/usr/bin/env python
"""Record saved chats with a real Agent-Zero and the scripted model, for ``a0org replay``'s tests.

    python tests/real_a0/record_chats.py --a0-root TREE --python A0_PYTHON --out DIR

Runs each scenario below as one chat (tests/real_a0/harness.py, without the pack), and keeps
the chat file Agent-Zero saved (``usr/chats/<id>/chat.json``) as ``DIR/<scenario>/chat.json``.
What replay does not read is stripped to keep the files small: the text of the last prompt
(``ctx_window.text``; its token count stays). The log shown in the UI is kept: replay reads the
turns Agent-Zero compressed out of a history from it. ``delegate`` is
recorded on v1.x only: v0.9.8.x gives the subordinate the default model settings rather than the
harness's, so its subordinate never reaches the scripted model.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HARNESS = Path(__file__).with_name("harness.py")


def code(headline: str, command: str) -> dict:
    return {"thoughts": [headline], "headline": headline, "tool_name": "code_execution_tool",
            "tool_args": {"runtime": "terminal", "session": 0, "reset": False, "code": command}}


def answer(text: str) -> dict:
    return {"thoughts": ["Done."], "headline": "Reporting", "tool_name": "response", "tool_args": {"text": text}}


#: scenario -> (first message, later messages, model replies in order)
SCENARIOS: dict[str, tuple[str, list[str], list[dict]]] = {
    "loop": ("Read /nonexistent/file", [],
             [code(f"attempt {n}", "cat /nonexistent/file") for n in (1, 2, 3, 4)] + [answer("The file does not exist.")]),
    "healthy": ("Count the files in /etc", [],
                [code("list", "ls /etc | head -3"), code("count", "ls /etc | wc -l"), answer("Counted.")]),
    "missing_tools": ("Find the settings", [],
                [code("read", "cat /nonexistent/settings.yaml"),
                 {"thoughts": ["a skill?"], "headline": "skill", "tool_name": "skills_tool:load", "tool_args": {"skill_name": "nonexistent-skill-x"}},
                 {"thoughts": ["a reader?"], "headline": "reader", "tool_name": "file_reader", "tool_args": {"path": "/nonexistent/settings.yaml"}},
                 answer("No settings found.")]),
    "delegate": ("Have a subordinate read /nonexistent/c", [],
                 [{"thoughts": ["delegate"], "headline": "delegate", "tool_name": "call_subordinate",
                   "tool_args": {"message": "Read /nonexistent/c", "reset": True}},
                  *[code(f"sub {n}", "cat /nonexistent/c") for n in (1, 2, 3)], answer("No c (subordinate)."),
                  answer("The subordinate found no c.")]),
    "two_tasks": ("Read /nonexistent/a", ["Now read /nonexistent/b"],
                  [code("a1", "cat /nonexistent/a"), code("a2", "cat /nonexistent/a"), answer("No a."),
                   code("b1", "cat /nonexistent/b"), code("b2", "cat /nonexistent/b"), code("b3", "cat /nonexistent/b"),
                   answer("No b.")]),
}


def strip(chat: dict) -> dict:
    for agent in chat.get("agents", []):
        window = (agent.get("data") or {}).get("ctx_window")
        if isinstance(window, dict):
            window["text"] = ""
    return chat


def record(a0_root: Path, python: str, name: str, out: Path) -> Path:
    message, later, replies = SCENARIOS[name]
    with tempfile.TemporaryDirectory(prefix="a0-record-") as scratch:
        script = Path(scratch) / "script.json"
        script.write_text(json.dumps(replies))
        command = [python, str(HARNESS), "--tree", str(a0_root), "--keep-tree", "--script", str(script), "--message", message]
        for text in later:
            command += ["--then", text]
        done = subprocess.run(command, capture_output=True, text=True, timeout=300)
        result = json.loads([line for line in done.stdout.splitlines() if line.startswith("{")][-1])
        tree = Path(result["tree"])
        try:
            if not result["ok"]:
                raise SystemExit(f"{name}: {result.get('error')}")
            saved = next((tree / "usr" / "chats").glob("*/chat.json"))
            target = out / name / "chat.json"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(strip(json.loads(saved.read_text())), ensure_ascii=False, indent=1))
            return target
        finally:
            shutil.rmtree(tree, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--a0-root", type=Path, required=True)
    parser.add_argument("--python", required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--only", action="append", choices=sorted(SCENARIOS))
    args = parser.parse_args()
    for name in args.only or SCENARIOS:
        print(record(args.a0_root, args.python, name, args.out), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
