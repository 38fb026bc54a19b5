"""No secret reaches the supervisors' model or any file: the agent reads files full of secrets,
and the model repeats one of them back (the scripted server on 127.0.0.1 plays the model)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from secret_corpus import CORPUS
from test_llm_supervisors import code_style, edit, request_text, respond, settle, turns, write_config

from org.replay import prepare_organization
from org.standin.session import StandInSession

ALL_SECRETS = [secret for sample in CORPUS for secret in sample.secrets]
STRIPE = CORPUS[0].secrets[0]
#: What only a credential file holds: seen in a request means the file was read.
DOCKER_AUTH, KUBE_KEY = "ZG9ja2VyLXVzZXI6ZG9ja2VyLXB3LTk5", "a3ViZS1rZXktZGF0YS1zZWNyZXQtOTk5"


@pytest.fixture(autouse=True)
def _active_organization(org_home: Path) -> None:
    prepare_organization(org_home, None)


def _project(tmp_path: Path) -> dict[str, Path]:
    root = tmp_path / "project"
    (root / ".docker").mkdir(parents=True)
    (root / ".kube").mkdir()
    files = {
        "settings": root / "settings.py",
        "notes": root / "deploy_notes.md",
        "docker": root / ".docker" / "config.json",
        "kube": root / ".kube" / "config",
        "tfstate": root / "terraform.tfstate",
    }
    files["settings"].write_text("\n\n".join(s.text for s in CORPUS[: len(CORPUS) // 2]) + "\n", encoding="utf-8")
    files["notes"].write_text("\n\n".join(s.text for s in CORPUS[len(CORPUS) // 2:]) + "\n", encoding="utf-8")
    files["docker"].write_text(json.dumps({"auths": {"r.example.com": {"auth": DOCKER_AUTH}}, "note": KUBE_KEY}), encoding="utf-8")
    files["kube"].write_text(f"users:\n- user:\n    opaque: {KUBE_KEY}\n", encoding="utf-8")
    files["tfstate"].write_text(json.dumps({"resources": [{"attributes": {"opaque": KUBE_KEY}}]}), encoding="utf-8")
    return files


def test_no_secret_reaches_the_model_or_any_file_even_when_the_model_repeats_one(org_home, llm_server, llm_key, tmp_path):
    files = _project(tmp_path)
    write_config(org_home, llm_server, code_style={"every_tasks": 1})
    repeated = {"category": "conventions", "name": "naming", "title": f"Naming ({STRIPE})",
                "rules": [f"Payment keys look like {STRIPE}; name them STRIPE_KEY"], "examples": f"Good:\n  STRIPE_KEY = '{STRIPE}'",
                "rationale": f"seen {STRIPE} in settings.py"}
    llm_server.script(code_style(conventions_updated=[repeated], summary=f"found {STRIPE} in settings.py",
                                 inconsistencies=[f"settings.py hard-codes {STRIPE}"],
                                 directives=[{"type": "cleanup", "description": f"Move {STRIPE} out of settings.py",
                                              "files": ["settings.py"], "priority": "low"}]))
    session = StandInSession()
    everything = "\n".join(p.read_text() for p in files.values())
    session.run_task(f"check the deploy settings; the Stripe key is {STRIPE}", turns(
        {"tool": "code_execution_tool", "args": {"code": f"cat {files['settings']} {files['notes']} {files['docker']} {files['kube']}"},
         "output": everything},
        edit(files["settings"]), edit(files["notes"]), edit(files["docker"]), edit(files["kube"]), edit(files["tfstate"]),
        respond(f"The settings hold {STRIPE} and more"),
    ))
    settle(org_home)
    second = session.run_task("next task", turns(respond()))

    [request] = llm_server.requests
    sent = json.dumps(request.body)
    assert "## FILES THE RECENT TASKS TOUCHED" in request_text(request) and "settings.py" in request_text(request)
    assert [s for s in ALL_SECRETS if s in sent] == []
    assert DOCKER_AUTH not in sent and KUBE_KEY not in request_text(request).split("## FILES THE RECENT TASKS TOUCHED")[1]
    for name in ("config.json", "terraform.tfstate"):  # named in the digest, never read
        assert f"### {files['docker' if name == 'config.json' else 'tfstate']}\n" not in request_text(request)

    written = [p for p in org_home.rglob("*") if p.is_file()]
    assert org_home / "knowledge" / "conventions" / "naming.md" in written
    for path in written:
        text = path.read_text(errors="replace")
        assert [s for s in ALL_SECRETS if s in text] == [], path
    prompt = json.dumps(second[0].extras)
    assert "Naming" in prompt and STRIPE not in prompt and "[REDACTED]" in prompt
    assert STRIPE not in json.dumps([(i.heading, i.content) for i in session.agent.context.log.items], default=str)


def test_files_named_in_never_read_are_not_read(org_home, llm_server, llm_key, tmp_path):
    config = write_config(org_home, llm_server, code_style={"every_tasks": 1})
    config.write_text(config.read_text() + "never_read: ['config/prod.yaml']\n")
    (tmp_path / "config").mkdir()
    prod, app = tmp_path / "config" / "prod.yaml", tmp_path / "app.py"
    prod.write_text("opaque: only-in-prod-yaml\n")
    app.write_text("print('hello')\n")
    llm_server.script(code_style())
    StandInSession().run_task("deploy", turns(edit(prod), edit(app), respond()))
    settle(org_home)
    asked = request_text(llm_server.requests[0])
    assert "only-in-prod-yaml" not in asked and f"{prod} (a credential file: never read)" in asked
    assert f"### {app}\n```\nprint('hello')" in asked
