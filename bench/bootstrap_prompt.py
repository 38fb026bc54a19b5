"""What a bootstrap run sends on a 247-file project, against what the pack estimates.

    python bench/bootstrap_prompt.py [--tokenizer-python PYTHON]

Builds a project of 247 files (Python packages with tests, a README and a manifest), runs a
bootstrap code style run against a scripted model on 127.0.0.1 that reports no usage (so the
run records the pack's own estimate), and prints the request's size: characters, the pack's
estimate, and, with ``--tokenizer-python`` (a Python with tiktoken, such as Agent-Zero's), the
cl100k token count of what was sent (the messages and the response format's schema).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.append(str(ROOT))  # PYTHONPATH=<another checkout> measures that one

COUNT = """
import json, os, sys, glob
import tiktoken
body = json.load(open(sys.argv[1]))
encoding = tiktoken.get_encoding("cl100k_base")
text = "".join(m["content"] for m in body["messages"])
schema = json.dumps(body.get("response_format", {}).get("json_schema", {}).get("schema", {}), separators=(",", ":"))
print(len(encoding.encode(text)) + 4 * len(body["messages"]) + (len(encoding.encode(schema)) if schema != "{}" else 0))
"""


def project(root: Path) -> Path:
    (root / ".git").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "shop"\nversion = "1.0"\ndependencies = ["httpx", "pydantic"]\n')
    (root / "README.md").write_text("# Shop\n\nOrders, billing, shipping and the catalogue of a small web shop.\n" * 8)
    n = 2
    for package in ("orders", "billing", "shipping", "catalog", "users", "search", "reports", "admin", "api", "jobs", "mail", "util"):
        for module in range(10):
            body = "".join(f"\n\ndef {package}_{module}_{f}(value: dict) -> dict:\n    \"\"\"Turn one {package} record into the next.\"\"\"\n"
                           f"    if not value:\n        raise ValueError('empty {package} record')\n    return {{**value, 'step': {f}}}\n"
                           for f in range(12))
            path = root / "shop" / package / f"{package}_{module}.py"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f'"""{package}: part {module}."""\nfrom __future__ import annotations\n{body}')
            test = root / "tests" / package / f"test_{package}_{module}.py"
            test.parent.mkdir(parents=True, exist_ok=True)
            test.write_text(f"from shop.{package}.{package}_{module} import {package}_{module}_0\n\n\ndef test_it():\n"
                            f"    assert {package}_{module}_0({{'a': 1}})['step'] == 0\n")
            n += 2
    for extra in range(247 - n):
        (root / "docs" / f"note_{extra}.md").parent.mkdir(exist_ok=True)
        (root / "docs" / f"note_{extra}.md").write_text(f"# Note {extra}\n")
    return root


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tokenizer-python", help="a Python with tiktoken (and its cl100k file) to count what is sent")
    args = parser.parse_args()
    from org.contracts import TraceTurn
    from org.contracts.supervisor_outputs import CodeStyleOutput
    from org.llm_supervisors.runner import SupervisorRunner
    from org.replay import prepare_organization
    from org.standin.model_server import Reply, ScriptedServer
    from org.standin.session import StandInSession

    with tempfile.TemporaryDirectory() as folder, ScriptedServer() as server:
        home = Path(folder) / "organizations"
        home.mkdir()
        os.environ["A0ORG_HOME"] = str(home)
        prepare_organization(home, None)
        code = project(Path(folder) / "shop")
        import yaml
        (home / "supervisors.yaml").write_text(yaml.safe_dump({
            "model": {"base_url": server.base_url, "model": "scripted/model", "api_key_env": None},
            "supervisors": {"code_style": {"every_tasks": 100}, "design": {"enabled": False}, "internaliser": {"enabled": False}}}))
        session = StandInSession()
        for n in range(3):
            touched = code / "shop" / "orders" / f"orders_{n}.py"
            session.run_task(f"change orders {n}", [TraceTurn(turn=1, tool="text_editor", args={"op": "write", "path": str(touched)}, output="ok"),
                                                    TraceTurn(turn=2, tool="response", args={"text": "done"}, output="done")])
        server.script(Reply.valid(CodeStyleOutput, {"summary": "baseline"}, usage=False))
        [run] = SupervisorRunner(home).run_now()
        [request] = server.requests
        dump = Path(folder) / "request.json"
        dump.write_text(json.dumps(request.body))
        result = {"name": "bootstrap_prompt", "bootstrap": run.bootstrap, "files": 247,
                  "characters": sum(len(m["content"]) for m in request.body["messages"]), "pack_estimate_tokens": run.prompt_tokens}
        if args.tokenizer_python:
            cache = next(Path(args.tokenizer_python).absolute().parent.parent.glob("lib/python3*/site-packages/litellm/litellm_core_utils/tokenizers"), None)
            env = {**os.environ, **({"TIKTOKEN_CACHE_DIR": str(cache)} if cache else {})}
            counted = subprocess.run([args.tokenizer_python, "-c", COUNT, str(dump)], capture_output=True, text=True, env=env)
            if counted.returncode == 0:
                sent = int(counted.stdout.strip())
                result.update(sent_tokens_cl100k=sent, estimate_error=round(run.prompt_tokens / sent - 1, 3))
            else:
                result["tokenizer_error"] = counted.stderr.strip().splitlines()[-1:]
        print(json.dumps(result))


if __name__ == "__main__":
    main()
