"""Secrets inside a real Agent-Zero: the agent reads a file full of them, the supervisors'
model repeats one back, and none reaches the model's requests or any file of the organization.

Runs only when ``A0ORG_TEST_A0_ROOT`` and ``A0ORG_TEST_A0_PYTHON`` are set (see
tests/test_real_agent_zero.py). Agent-Zero's own model is the harness's scripted server;
the supervisors' model is a scripted server in this process.
"""

from __future__ import annotations

import json

import pytest
import yaml
from conftest import ROOT
from pack_commands import a0org, install
from secret_corpus import CORPUS
from test_real_agent_zero import A0_PYTHON, A0_ROOT, FINAL, reply, run_chat, tree  # noqa: F401 (tree: a fixture)

from org.contracts.supervisor_outputs import CodeStyleOutput
from org.standin.model_server import Reply, ScriptedServer

pytestmark = [
    pytest.mark.real_a0,
    pytest.mark.skipif(not (A0_ROOT and A0_PYTHON), reason="set A0ORG_TEST_A0_ROOT and A0ORG_TEST_A0_PYTHON to run against a real Agent-Zero"),
]

SECRETS = [secret for sample in CORPUS for secret in sample.secrets]
STRIPE = CORPUS[0].secrets[0]


def _answer() -> Reply:
    """The supervisors' model repeats the Stripe key it was (not) shown, everywhere it can."""
    return Reply.valid(CodeStyleOutput, {
        "conventions_updated": [{"category": "conventions", "name": "naming", "title": "Naming of keys",
                                 "rules": [f"Payment keys look like {STRIPE}; read them from STRIPE_KEY"],
                                 "examples": f"Bad:\n  KEY = '{STRIPE}'", "rationale": f"{STRIPE} was hard-coded"}],
        "inconsistencies": [f"settings.py holds {STRIPE}"],
        "directives": [{"type": "cleanup", "description": f"Remove {STRIPE} from settings.py", "files": ["settings.py"]}],
        "summary": f"found {STRIPE}",
    })


def test_no_secret_reaches_the_supervisors_model_or_any_file_in_a_real_agent_zero(tree, tmp_path):  # noqa: F811
    install(ROOT, tree, "--with-supervisors", "--activate", "software_dev", python=A0_PYTHON)
    organizations = tree / "usr" / "organizations"
    mine = organizations / "knowledge" / "conventions" / "style.md"  # a person's: the supervisor reviews, not bootstraps
    mine.parent.mkdir(parents=True)
    mine.write_text("# Style\n\n## Rules\n\n1. Settings come from the environment\n")
    workdir = tmp_path / "work"
    workdir.mkdir()
    account = [s for s in CORPUS if s.kind == "service account json"]
    (workdir / "settings.py").write_text("\n\n".join(s.text for s in CORPUS if s not in account) + "\n", encoding="utf-8")
    (workdir / "keys").mkdir()
    (workdir / "keys" / "app.json").write_text(account[0].text, encoding="utf-8")  # a credential by its content

    with ScriptedServer() as server:
        (organizations / "supervisors.yaml").write_text(yaml.safe_dump({
            "model": {"base_url": server.base_url, "model": "scripted/model", "api_key_env": None},
            "supervisors": {"code_style": {"every_tasks": 100}, "design": {"enabled": False}, "internaliser": {"enabled": False}},
        }))
        # the agent reads the file by a relative name, in its working directory
        first = run_chat(tree, [reply("Reading the settings", code="cat settings.py keys/app.json"), FINAL], tmp_path,
                         harness_args=("--workdir", str(workdir), "--dump-requests", str(tmp_path / "one.json")))
        assert first["ok"]
        [digest] = [json.loads(line) for line in (organizations / "supervisors" / "digests.jsonl").read_text().splitlines()]
        assert str(workdir / "settings.py") in digest["files_touched"]

        server.script(_answer())
        run = a0org("supervisors", "run", "--milestone", "--org-dir", organizations)
        assert run.returncode == 0, run.stdout + run.stderr
        [request] = server.requests
        sent = json.dumps(request.body)
        asked = request.body["messages"][1]["content"]
        assert f"### {workdir / 'settings.py'}" in asked  # read, redacted
        assert f"{workdir / 'keys' / 'app.json'} (a credential file: never read)" in asked
        assert [s for s in SECRETS if s in sent] == []

        run_chat(tree, [FINAL], tmp_path, harness_args=("--workdir", str(workdir), "--dump-requests", str(tmp_path / "two.json")))

    prompts = [json.dumps(r["request"]["messages"]) for r in json.loads((tmp_path / "two.json").read_text()) if r["kind"] == "main"]
    assert prompts and all("Naming of keys" in p and "[REDACTED]" in p and STRIPE not in p for p in prompts)
    leaks = {str(path.relative_to(organizations)): [s[:12] for s in SECRETS if s in path.read_text(errors="replace")]
             for path in organizations.rglob("*") if path.is_file()}
    assert {name: found for name, found in leaks.items() if found} == {}
    assert "knowledge/conventions/naming.md" in leaks and "supervisors/runs.jsonl" in leaks
