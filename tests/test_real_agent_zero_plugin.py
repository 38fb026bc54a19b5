"""The pack as an Agent-Zero plugin (v0.9.9+ / v1.x), in a real Agent-Zero: it steers a looping
agent while the plugin is on, and does nothing where Agent-Zero's own switch turns it off for
a project or an agent profile (the harness calls ``helpers.plugins.toggle_plugin``, as the
plugin settings do). Doctor reads the same switches.

Runs like tests/test_real_agent_zero.py (skipped unless ``A0ORG_TEST_A0_ROOT`` and
``A0ORG_TEST_A0_PYTHON`` are set); skipped too on an Agent-Zero without plugins (v0.9.8.x and older).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT
from pack_commands import install
from test_real_agent_zero import A0_PYTHON, A0_ROOT, FINAL, pytestmark, reply, run_chat, warnings

from org.install.plugin import PLUGIN_NAME, plugins_supported

pytestmark = [*pytestmark, pytest.mark.skipif(not (A0_ROOT and plugins_supported(Path(A0_ROOT))),
                                              reason="this Agent-Zero has no plugins (they came with v0.9.9.0)")]
LOOP = [reply(f"attempt {i}") for i in range(1, 4)] + [FINAL]


@pytest.fixture
def tree(tmp_path) -> Path:
    copy = tmp_path / "a0"
    shutil.copytree(A0_ROOT, copy, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def install_as(tree: Path, *form: str) -> Path:
    """Install with ``form`` (e.g. "--form", "extensions"; nothing: the default) and a radio check every turn."""
    import yaml

    install(ROOT, tree, "--activate", "software_dev", *form, python=A0_PYTHON)
    role_file = tree / "usr" / "organizations" / "roles" / "codegen.yaml"
    role = yaml.safe_load(role_file.read_text())
    role["doctrine"]["radio_check_interval_turns"] = 1
    role_file.write_text(yaml.safe_dump(role, sort_keys=False))
    return tree / "usr" / "organizations"


def steering(result: dict) -> list[str]:
    return [w for w in warnings(result) if "[SUPERVISOR]" in w]


def did_nothing(result: dict, organizations: Path) -> bool:
    return (not steering(result) and not list((organizations / "reports").glob("*.json"))
            and not [i for i in result["log"] if i["heading"].startswith(("Supervisor", "[ORG]"))])


def doctor_switch(tree: Path) -> dict:
    """Doctor's report on the plugin's switch, run with Agent-Zero's Python."""
    done = subprocess.run([A0_PYTHON, "-m", "org", "doctor", "--a0-root", str(tree), "--pack-dir", str(ROOT), "--json"],
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=120)
    report = json.loads(done.stdout)
    assert report["form"] == "plugin", done.stdout
    return next(c for c in report["checks"] if c["topic"] == "plugin" and c["subject"] == "on/off switch")


def test_by_default_the_pack_is_a_plugin_and_steers_a_looping_agent(tree, tmp_path):
    organizations = install_as(tree)
    assert (tree / "usr" / "plugins" / PLUGIN_NAME / "plugin.yaml").is_file()
    assert not (tree / "usr" / "extensions").exists()
    result = run_chat(tree, LOOP, tmp_path)
    assert len(steering(result)) == 1 and "[SUPERVISOR] Loop" in steering(result)[0], warnings(result)
    assert (organizations / "reports" / "codegen_latest.json").is_file()
    switch = doctor_switch(tree)
    assert switch["level"] == "ok" and switch["details"]["enabled"] is True and not switch["details"]["exceptions"]


def test_switched_off_for_the_project_the_plugin_does_nothing_there(tree, tmp_path):
    organizations = install_as(tree, "--form", "plugin")
    result = run_chat(tree, LOOP, tmp_path, harness_args=("--project", "alpha", "--plugin-switch", f"{PLUGIN_NAME}=off@project=alpha"))
    assert (tree / "usr" / "projects" / "alpha" / ".a0proj" / "plugins" / PLUGIN_NAME / ".toggle-0").is_file()
    assert did_nothing(result, organizations), warnings(result)
    assert result["result"] == "The file does not exist."  # the chat itself ran as usual
    switch = doctor_switch(tree)
    assert switch["details"]["enabled"] is True
    assert [e.split(" (")[0] for e in switch["details"]["exceptions"]] == ["off for project alpha"]


def test_switched_off_for_another_project_the_plugin_still_steers(tree, tmp_path):
    install_as(tree, "--form", "plugin")
    result = run_chat(tree, LOOP, tmp_path, harness_args=("--project", "alpha", "--plugin-switch", f"{PLUGIN_NAME}=off@project=beta"))
    assert len(steering(result)) == 1 and "[SUPERVISOR] Loop" in steering(result)[0], warnings(result)


def test_switched_off_for_the_agent_profile_the_plugin_does_nothing(tree, tmp_path):
    organizations = install_as(tree, "--form", "plugin")
    result = run_chat(tree, LOOP, tmp_path, harness_args=("--plugin-switch", f"{PLUGIN_NAME}=off@profile=agent0"))
    assert (tree / "usr" / "agents" / "agent0" / "plugins" / PLUGIN_NAME / ".toggle-0").is_file()
    assert did_nothing(result, organizations), warnings(result)
    assert [e.split(" (")[0] for e in doctor_switch(tree)["details"]["exceptions"]] == ["off for agent profile agent0"]


def test_switched_off_for_everyone_but_on_for_one_project(tree, tmp_path):
    organizations = install_as(tree, "--form", "plugin")
    off = run_chat(tree, LOOP, tmp_path, harness_args=("--plugin-switch", f"{PLUGIN_NAME}=off"))
    assert did_nothing(off, organizations), warnings(off)
    on = run_chat(tree, LOOP, tmp_path, harness_args=("--project", "alpha", "--plugin-switch", f"{PLUGIN_NAME}=on@project=alpha"))
    assert len(steering(on)) == 1, warnings(on)
    switch = doctor_switch(tree)
    assert switch["level"] == "warning" and switch["details"]["enabled"] is False
    assert [e.split(" (")[0] for e in switch["details"]["exceptions"]] == ["on for project alpha"]


def test_the_extension_form_still_steers_and_leaves_no_plugin(tree, tmp_path):
    install_as(tree)
    install_as(tree, "--form", "extensions")  # a switch of form: the plugin goes
    assert not (tree / "usr" / "plugins" / PLUGIN_NAME).exists()
    assert (tree / "usr" / "extensions" / "python" / "message_loop_end" / "_50_supervisor_loop.py").is_file()
    result = run_chat(tree, LOOP, tmp_path)
    assert len(steering(result)) == 1 and "[SUPERVISOR] Loop" in steering(result)[0], warnings(result)


PROBE = """
import asyncio, json, os, sys
sys.path.insert(0, os.getcwd())
from helpers import plugins
from api.plugins import Plugins
item = plugins.get_enhanced_plugins_list(custom=True, builtin=False, plugin_names=[sys.argv[1]])[0]
api = Plugins(None, None)
config = asyncio.run(api.process({"action": "get_config", "plugin_name": sys.argv[1]}, None))
saved = asyncio.run(api.process({"action": "save_config", "plugin_name": sys.argv[1], "project_name": "",
                                 "agent_profile": "", "settings": {"anything": 1}}, None))
print(json.dumps({"item": item.model_dump(), "config": config, "saved": saved}))
"""


def test_agent_zeros_plugin_list_and_settings_screen_read_the_plugin(tree, tmp_path):
    """Through Agent-Zero's own plugin API, as its web UI calls it."""
    install_as(tree)
    probe = tmp_path / "probe.py"
    probe.write_text(PROBE)
    done = subprocess.run([A0_PYTHON, str(probe), PLUGIN_NAME], cwd=tree, env={**os.environ, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=120)
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    item = answer["item"]
    assert item["display_name"] == "Organization kernel" and item["is_custom"] and item["toggle_state"] == "enabled"
    assert item["per_project_config"] and item["per_agent_config"] and not item["always_enabled"]
    assert item["has_config_screen"] and item["settings_sections"] == ["agent"]
    view = answer["config"]["data"]
    assert view["state"] == "active" and view["org_id"] == "software_dev"
    codegen = next(r for r in view["roles"] if r["role_id"] == "codegen")
    assert {"name": "radio_check_interval_turns", "value": "1"} in codegen["doctrine"]  # the edit install_as made
    assert answer["saved"] == {"ok": True} and not (tree / "usr" / "plugins" / PLUGIN_NAME / "config.json").exists()
