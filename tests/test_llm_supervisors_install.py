"""The LLM supervisors' install phase (off by default) and doctor's checks of it, run the
way a user runs them: the bash wrapper and ``python -m org.doctor`` as subprocesses
against temporary Agent-Zero trees."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from a0_trees import HOOK_DIRS, REPO, make_a0_tree, real_hooks_available
from pack_commands import install, run_script

ORGS = Path("usr/organizations")
LLM_HOOKS = {
    "monologue_start": "_65_org_supervisors.py",
    "monologue_end": "_65_org_supervisors.py",
    "message_loop_prompts_after": "_65_org_knowledge.py",
}
CONFIG = "model: {model: anthropic/claude-sonnet-4}\n"


@pytest.fixture
def pack(pack: Path) -> Path:
    """The conftest pack (the repository's hooks) with the LLM supervisors' hooks."""
    assert real_hooks_available()
    for point, name in LLM_HOOKS.items():
        (pack / "extensions" / point).mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / "extensions" / point / name, pack / "extensions" / point / name)
    return pack


def llm_hook(tree: Path, era: str, point: str) -> Path:
    return tree / HOOK_DIRS[era].format(point=point) / LLM_HOOKS[point]


def doctor(tree: Path, pack: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    result = subprocess.run([sys.executable, "-m", "org.doctor", "--a0-root", str(tree), "--pack-dir", str(pack), "--json"],
                            capture_output=True, text=True, env=env, cwd=tree.parent, timeout=300, check=False)
    assert "Traceback" not in result.stderr, result.stderr
    return json.loads(result.stdout)


def checks(report: dict, topic: str) -> dict[str, dict]:
    return {c["subject"]: c for c in report["checks"] if c["topic"] == topic}


def test_the_phase_is_off_by_default(tmp_path, pack):
    tree = make_a0_tree(tmp_path / "a0", "D")
    result = install(pack, tree)
    assert "== Phase 3: LLM supervisors ==" in result.stdout and "off" in result.stdout and "--with-supervisors" in result.stdout
    assert not any(llm_hook(tree, "D", point).exists() for point in LLM_HOOKS)
    assert run_script(pack, "install_all.sh", "--a0-root", str(tree), "--no-library", "--check-only").returncode == 0  # an off phase is not "missing"
    report = doctor(tree, pack)
    hooks = checks(report, "hook")
    for point, name in LLM_HOOKS.items():
        assert hooks[f"{point}/{name}"]["level"] == "info" and "LLM supervisors are off" in hooks[f"{point}/{name}"]["message"]
    [config] = checks(report, "supervisors").values()
    assert config["level"] == "info" and "not configured" in config["message"]
    assert not [c for c in report["checks"] if c["level"] == "problem" and c["topic"] != "library"]


@pytest.mark.parametrize("era", ["D", "C", "B"])
def test_with_supervisors_installs_hooks_that_load_like_agent_zero_loads_them(tmp_path, pack, era):
    tree = make_a0_tree(tmp_path / "a0", era)
    result = install(pack, tree, "--with-supervisors")
    assert "== Phase 3: LLM supervisors ==" in result.stdout
    assert "do nothing until" in result.stdout  # no supervisors.yaml yet
    for point in LLM_HOOKS:
        assert llm_hook(tree, era, point).read_bytes() == (REPO / "extensions" / point / LLM_HOOKS[point]).read_bytes()
    hooks = checks(doctor(tree, pack), "hook")
    for point, name in LLM_HOOKS.items():
        check = hooks[f"{point}/{name}"]
        assert check["level"] == "ok" and check["details"]["org_import_error"] is None, check
        assert check["details"]["execute_async"] is True


def test_a_configured_model_turns_the_phase_on_and_doctor_validates_the_config(tmp_path, pack):
    tree = make_a0_tree(tmp_path / "a0", "D")
    install(pack, tree)
    (tree / ORGS / "supervisors.yaml").write_text(CONFIG)
    assert run_script(pack, "install_all.sh", "--a0-root", str(tree), "--no-library", "--check-only").returncode == 1  # now expected, not yet there
    install(pack, tree)
    assert all(llm_hook(tree, "D", point).is_file() for point in LLM_HOOKS)
    [config] = checks(doctor(tree, pack), "supervisors").values()
    assert config["level"] == "ok" and "code_style, design, internaliser on anthropic/claude-sonnet-4" in config["message"]
    assert "OPENROUTER_API_KEY" in config["message"]

    (tree / ORGS / "supervisors.yaml").write_text("model: {model: x, timeout_seconds: -1}\n")
    [config] = checks(doctor(tree, pack), "supervisors").values()
    assert config["level"] == "problem" and "model.timeout_seconds" in config["message"]


def test_a_missing_hook_of_an_installed_phase_is_a_problem(tmp_path, pack):
    tree = make_a0_tree(tmp_path / "a0", "D")
    install(pack, tree, "--with-supervisors")
    llm_hook(tree, "D", "monologue_end").unlink()
    check = checks(doctor(tree, pack), "hook")["monologue_end/_65_org_supervisors.py"]
    assert check["level"] == "problem" and "--with-supervisors" in check["fix"]


def test_the_supervisors_component_installs_and_removes_only_its_hooks(tmp_path, pack):
    tree = make_a0_tree(tmp_path / "a0", "D")
    install(pack, tree)
    install(pack, tree, component="supervisors")
    assert all(llm_hook(tree, "D", point).is_file() for point in LLM_HOOKS)
    again = install(pack, tree)  # install_all.sh keeps installed hooks current
    assert "Nothing to change" in again.stdout
    removed = install(pack, tree, "--uninstall", component="supervisors")
    assert "Uninstall: LLM supervisors" in removed.stdout
    assert not any(llm_hook(tree, "D", point).exists() for point in LLM_HOOKS)
    assert (tree / HOOK_DIRS["D"].format(point="message_loop_end") / "_50_supervisor_loop.py").is_file()


def test_uninstall_all_removes_the_phase_too(tmp_path, pack):
    tree = make_a0_tree(tmp_path / "a0", "D")
    install(pack, tree, "--with-supervisors")
    install(pack, tree, "--uninstall")
    assert not any(llm_hook(tree, "D", point).exists() for point in LLM_HOOKS)
