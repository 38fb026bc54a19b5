"""The supervision page's API inside a real Agent-Zero (v0.9.9+/v1.x, the plugin form): a chat in
a project runs with the pack and the scripted model, then Agent-Zero's own loader
(``helpers.modules.load_classes_from_file`` with ``helpers.api.ApiHandler``, as its API route
does) loads the installed ``api/supervision.py`` and the chat is loaded back from its saved file.
Runs only with ``A0ORG_TEST_A0_ROOT`` and ``A0ORG_TEST_A0_PYTHON`` (see test_real_agent_zero.py).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT
from test_real_agent_zero import A0_PYTHON, FINAL, install_pack, reply, run_chat, tree  # noqa: F401 - fixture

A0_ROOT = os.environ.get("A0ORG_TEST_A0_ROOT")
pytestmark = [
    pytest.mark.real_a0,
    pytest.mark.skipif(not (A0_ROOT and A0_PYTHON), reason="set A0ORG_TEST_A0_ROOT and A0ORG_TEST_A0_PYTHON"),
    pytest.mark.skipif(bool(A0_ROOT) and not (Path(A0_ROOT or ".") / "helpers" / "plugins.py").is_file(),
                       reason="this Agent-Zero has no plugins (v0.9.8.x and older): the page comes with the plugin form"),
]

CALL = r'''
import asyncio, json, sys
sys.path.insert(0, ".")
from helpers import persist_chat
from helpers.api import ApiHandler
from helpers.modules import load_classes_from_file
ids = persist_chat.load_tmp_chats()
handler = load_classes_from_file("usr/plugins/a0_org_kernel/api/supervision.py", ApiHandler)[0]
print(json.dumps(asyncio.run(handler(None, None).process({"context": ids[0]}, None))))
'''


def test_the_supervision_api_answers_inside_agent_zero(tree, tmp_path):  # noqa: F811
    install_pack(tree, activate=True, doctrine={"radio_check_interval_turns": 1})
    run_chat(tree, [reply(f"attempt {i}") for i in range(1, 5)] + [FINAL], tmp_path, harness_args=("--project", "shop"))
    done = subprocess.run([A0_PYTHON, "-c", CALL], cwd=tree, env={**os.environ, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=300)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    assert lines, done.stdout[-2000:] + done.stderr[-3000:]
    doc = json.loads(lines[-1])
    assert doc["project"] == "shop", doc  # read from the chat Agent-Zero loaded back
    kinds = [(e["type"], e.get("anomaly")) for e in doc["timeline"]]
    assert ("steering", "loop") in kinds and ("block", "loop") in kinds, kinds
    assert doc["pace"] and doc["knowledge"]["scope"] == "project 'shop'"
    assert any(v["field"] == "doctrine.radio_check_interval_turns" and v["value"] == 1 for v in doc["doctrine"]["values"])
    for name in ("supervision.html", "supervision.js", "supervision.css"):
        assert (tree / "usr" / "plugins" / "a0_org_kernel" / "webui" / name).read_bytes() == (ROOT / "org" / "a0" / "webui" / name).read_bytes()
    assert "supervision.html?context=" in (tree / "usr" / "plugins" / "a0_org_kernel" / "webui" / "config.html").read_text()
