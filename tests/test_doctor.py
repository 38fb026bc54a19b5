"""``a0org doctor`` against temporary Agent-Zero trees with the hooks installed by the real installer.

Doctor runs in a subprocess, as it does in the container: it puts the tree on sys.path
and imports the tree's own ``helpers.extension``, which must not leak between tests.
The hooks are the repository's own once it ships them; before that, stand-ins with the
same import pattern.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from a0_trees import HOOK_FILES, POINTS, REPO, hook_path, make_a0_tree, make_pack, real_doctrine_available, stand_in_hook
from pack_commands import install

ORGS = Path("usr/organizations")


def doctor(tree: Path, pack: Path | None, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    env = dict(env or os.environ, PYTHONPATH=str(REPO))
    command = [sys.executable, "-m", "org.doctor", "--a0-root", str(tree), *args]
    if pack is not None:
        command += ["--pack-dir", str(pack)]
    return subprocess.run(command, capture_output=True, text=True, env=env, cwd=tree.parent, timeout=300, check=False)


def doctor_json(tree: Path, pack: Path | None = None) -> tuple[int, dict]:
    result = doctor(tree, pack, "--json")
    assert "Traceback" not in result.stderr, result.stderr
    return result.returncode, json.loads(result.stdout)


def checks(report: dict, topic: str, level: str | None = None) -> list[dict]:
    return [c for c in report["checks"] if c["topic"] == topic and (level is None or c["level"] == level)]


def hook_check(report: dict, point: str) -> dict:
    return next(c for c in checks(report, "hook") if c["subject"] == f"{point}/{HOOK_FILES[point]}")


@pytest.mark.parametrize("era", ["D", "C", "B"])
def test_installed_hooks_load_like_agent_zero_loads_them(tmp_path, pack, era):
    tree = make_a0_tree(tmp_path / "a0", era)
    install(pack, tree)
    code, report = doctor_json(tree, pack)

    assert report["era"] == era and report["version"] == "unknown"
    for point in POINTS:
        check = hook_check(report, point)
        assert check["level"] == "ok", check
        assert check["details"]["current"] is True
        assert check["details"]["org_import_error"] is None
        assert len(check["details"]["classes"]) == 1
        assert check["details"]["execute_async"] is True
    assert checks(report, "clash") == [checks(report, "clash", "ok")[0]]
    assert not checks(report, "hook", "problem")
    assert code == (1 if report["problems"] else 0)
    assert code == 0 or {c["topic"] for c in report["checks"] if c["level"] == "problem"} <= {"library"}


def test_v0_9_3_without_tool_execute_after_needs_no_tool_hook(tmp_path, pack):
    tree = make_a0_tree(tmp_path / "a0", "B3")
    install(pack, tree)
    _, report = doctor_json(tree, pack)
    check = hook_check(report, "tool_execute_after")
    assert check["level"] == "info" and "no tool_execute_after extension point" in check["message"]
    assert hook_check(report, "message_loop_end")["level"] == "ok"


def test_loading_does_not_register_hooks_in_sys_modules(tmp_path):
    from org.doctor.hooks import load_like_agent_zero

    class Extension:
        def __init__(self, agent, **kwargs):
            self.agent = agent

    hook = tmp_path / "_77_probe_hook.py"
    hook.write_text("ORG_IMPORT_ERROR = None\nBase = None\n")
    before = set(sys.modules)
    load = load_like_agent_zero(hook, Extension)
    assert load.error is None and load.classes == []
    assert "_77_probe_hook" not in sys.modules
    assert set(sys.modules) - before == set()


def test_failed_library_import_in_a_hook_is_a_problem(tmp_path):
    pack = make_pack(tmp_path / "pack", hook_module="org.no_such_module", use_real_hooks=False)
    tree = make_a0_tree(tmp_path / "a0", "D")
    install(pack, tree)
    code, report = doctor_json(tree, pack)
    assert code == 1
    for point in POINTS:
        check = hook_check(report, point)
        assert check["level"] == "problem"
        assert "No module named 'org.no_such_module'" in check["message"]
        assert "install the library" in check["fix"]


@pytest.mark.parametrize("era", ["D", "C", "B"])
@pytest.mark.parametrize("point", ["message_loop_end", "message_loop_prompts_before"])
def test_missing_hook_names_the_script_that_installs_it(tmp_path, pack, era, point):
    tree = make_a0_tree(tmp_path / "a0", era)
    install(pack, tree)
    hook_path(tree, era, point).unlink()
    code, report = doctor_json(tree, pack)
    assert code == 1
    check = hook_check(report, point)
    assert check["level"] == "problem" and "not installed" in check["message"]
    assert "install_supervisor_loop.sh" in check["fix"]


@pytest.mark.parametrize(
    "body, expected",
    [
        ("raise RuntimeError('boom')\n", "fails to load: RuntimeError: boom (line"),
        ("class Helper(Extension):\n    async def execute(self, **kwargs):\n        pass\n", "defines 2 Extension subclasses"),
        ("del ORG_IMPORT_ERROR\n", "defines no ORG_IMPORT_ERROR"),
    ],
)
def test_broken_hook_files_are_problems(tmp_path, pack, body, expected):
    tree = make_a0_tree(tmp_path / "a0", "D")
    install(pack, tree)
    path = hook_path(tree, "D", "before_main_llm_call")
    path.write_text(stand_in_hook("before_main_llm_call") + body)
    code, report = doctor_json(tree, pack)
    assert code == 1
    check = hook_check(report, "before_main_llm_call")
    assert check["level"] == "problem" and expected in check["message"], check
    assert check["fix"]


def test_hook_without_extension_class_from_this_tree_is_a_problem(tmp_path, pack):
    tree = make_a0_tree(tmp_path / "a0", "D")
    install(pack, tree)
    path = hook_path(tree, "D", "message_loop_end")
    path.write_text("ORG_IMPORT_ERROR = None\n\nclass Extension:\n    pass\n\nclass Loop(Extension):\n    async def execute(self, **kw):\n        pass\n")
    code, report = doctor_json(tree, pack)
    check = hook_check(report, "message_loop_end")
    assert code == 1 and check["level"] == "problem"
    assert "subclasses Extension from _50_supervisor_loop, not from helpers.extension" in check["message"]


@pytest.mark.parametrize("era, level", [("C", "problem"), ("B", "problem"), ("D", "ok")])
def test_sync_execute_is_a_problem_only_where_agent_zero_awaits_it(tmp_path, pack, era, level):
    tree = make_a0_tree(tmp_path / "a0", era)
    install(pack, tree)
    sync_hook = stand_in_hook("message_loop_end").replace("async def execute", "def execute")
    for path in (hook_path(tree, era, "message_loop_end"), pack / "extensions" / "message_loop_end" / HOOK_FILES["message_loop_end"]):
        path.write_text(sync_hook)
    _, report = doctor_json(tree, pack)
    check = hook_check(report, "message_loop_end")
    assert check["level"] == level, check
    if level == "problem":
        assert "is not async" in check["message"]


def test_outdated_hook_is_a_warning_that_says_how_to_update(tmp_path, pack):
    tree = make_a0_tree(tmp_path / "a0", "D")
    install(pack, tree)
    path = hook_path(tree, "D", "tool_execute_after")
    path.write_text(path.read_text() + "# an older copy\n")
    _, report = doctor_json(tree, pack)
    check = hook_check(report, "tool_execute_after")
    assert check["level"] == "warning" and check["details"]["current"] is False
    assert "install_all.sh" in check["fix"]


def test_unimportable_base_class_falls_back_to_reporting(tmp_path, pack):
    tree = make_a0_tree(tmp_path / "a0", "D")
    install(pack, tree)
    (tree / "helpers" / "extension.py").write_text("import module_agent_zero_would_need\n")
    code, report = doctor_json(tree, pack)
    assert code == 1
    base = next(c for c in checks(report, "hook") if c["subject"] == "Extension base class")
    assert "No module named 'module_agent_zero_would_need'" in base["message"]
    assert "Agent-Zero's own Python" in base["fix"]
    for point in POINTS:
        check = hook_check(report, point)
        assert check["details"]["current"] is True and "load not checked" in check["message"]


def test_shadowing_file_is_a_problem_and_stale_copy_a_warning(tmp_path, pack):
    tree = make_a0_tree(tmp_path / "a0", "D")
    install(pack, tree)
    shadow = tree / "usr/agents/agent0/extensions/python/message_loop_end" / HOOK_FILES["message_loop_end"]
    stale = tree / "usr/extensions/before_main_llm_call" / HOOK_FILES["before_main_llm_call"]
    for path in (shadow, stale):
        path.parent.mkdir(parents=True)
        path.write_text("# same name\n")
    code, report = doctor_json(tree, pack)
    assert code == 1
    clashes = {c["details"]["path"]: c for c in checks(report, "clash")}
    assert clashes[str(shadow)]["level"] == "problem" and "INSTEAD of" in clashes[str(shadow)]["message"]
    assert "for agent profile agent0" in clashes[str(shadow)]["message"] and "Remove it" in clashes[str(shadow)]["fix"]
    assert clashes[str(stale)]["level"] == "warning" and "does not read" in clashes[str(stale)]["message"]


def test_not_an_agent_zero_tree(tmp_path):
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    result = doctor(folder, None)
    assert result.returncode == 1
    assert "not an Agent-Zero folder" in result.stdout and "fix: pass --a0-root" in result.stdout
    assert "Traceback" not in result.stderr


def test_every_problem_line_says_what_to_do(tmp_path, pack):
    tree = make_a0_tree(tmp_path / "a0", "C")
    install(pack, tree)
    hook_path(tree, "C", "before_main_llm_call").unlink()
    (tree / ORGS / "active.json").write_text('{"schema_version": 1, "org_id": "gone"}\n')
    result = doctor(tree, pack)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    problem_lines = [i for i, line in enumerate(lines) if line.strip().startswith("PROBLEM")]
    assert len(problem_lines) >= 2
    for i in problem_lines:
        assert lines[i + 1].strip().startswith("fix:"), lines[i : i + 2]
    assert "Result:" in lines[-1] and "problem(s)" in lines[-1]


def test_active_organization_naming_a_missing_template_is_a_problem(tmp_path, pack):
    tree = make_a0_tree(tmp_path / "a0", "D")
    install(pack, tree)
    (tree / ORGS / "active.json").write_text('{"schema_version": 1, "org_id": "gone"}\n')
    code, report = doctor_json(tree, pack)
    active = next(c for c in checks(report, "organization") if c["subject"].endswith("active.json"))
    assert code == 1 and active["level"] == "problem"
    assert "gone" in active["message"] and "does not exist" in active["message"]


def test_no_active_organization_is_a_warning_not_a_problem(tmp_path, pack):
    tree = make_a0_tree(tmp_path / "a0", "D")
    install(pack, tree)
    _, report = doctor_json(tree, pack)
    active = next(c for c in checks(report, "organization") if c["subject"].endswith("active.json"))
    assert active["level"] == "warning" and "--activate" in active["fix"] and "software_dev" in active["fix"]


@pytest.mark.skipif(not real_doctrine_available(), reason="the repository ships no roles yet")
def test_active_shipped_organization_validates(tmp_path):
    pack = make_pack(tmp_path / "pack", real_doctrine=True)
    tree = make_a0_tree(tmp_path / "a0", "D")
    org_id = "software_dev"
    install(pack, tree, "--activate", org_id)
    assert (tree / ORGS / "supervisors.example.yaml").is_file()  # installed beside where supervisors.yaml goes
    _, report = doctor_json(tree, pack)
    active = next(c for c in checks(report, "organization") if c["subject"].endswith("active.json"))
    assert active["level"] == "ok", active
    assert active["details"]["org_id"] == org_id
    summary = next(c for c in checks(report, "organization") if "templates" in (c.get("details") or {}))
    assert summary["details"]["templates"] == [org_id]  # the supervisors example is neither a template nor a role
    assert "supervisors.example" not in summary["details"]["roles"]


def test_json_stays_clean_when_a_hook_prints_on_load(tmp_path, pack):
    tree = make_a0_tree(tmp_path / "a0", "D")
    install(pack, tree)
    path = hook_path(tree, "D", "message_loop_end")
    path.write_text("print('hello from a hook')\n" + stand_in_hook("message_loop_end"))
    _, report = doctor_json(tree, pack)  # parses, or the test fails
    assert hook_check(report, "message_loop_end")["details"]["printed_on_load"] == "hello from a hook\n"


def test_library_section_reports_version_and_location(tmp_path, pack):
    tree = make_a0_tree(tmp_path / "a0", "D")
    install(pack, tree)
    _, report = doctor_json(tree, pack)
    library = next(c for c in checks(report, "library") if c["subject"] == "org")
    assert library["details"]["version"]
    assert Path(library["details"]["location"]) == REPO / "org"


def test_a0org_doctor_command_runs_the_same_checks(tmp_path, pack):
    tree = make_a0_tree(tmp_path / "a0", "D")
    install(pack, tree)
    result = subprocess.run([sys.executable, "-m", "org.cli", "doctor", "--a0-root", str(tree), "--json"],
                            capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(REPO)), cwd=tmp_path, check=False)
    assert "Traceback" not in result.stderr, result.stderr
    report = json.loads(result.stdout)
    assert report["era"] == "D"
    assert all(hook_check(report, point)["details"]["path"] for point in POINTS)


@pytest.mark.skipif(not real_doctrine_available(), reason="the repository ships no roles yet")
def test_a_role_the_kernel_would_skip_is_a_problem(tmp_path):
    """role_id: bug_fix in roles/bugfix.yaml: the kernel skips that role at run time, so
    doctor must not call the organization's roles all valid."""
    pack = make_pack(tmp_path / "pack", real_doctrine=True)
    tree = make_a0_tree(tmp_path / "a0", "D")
    install(pack, tree, "--activate", "software_dev")
    role = tree / ORGS / "roles" / "bugfix.yaml"
    role.write_text(role.read_text(encoding="utf-8").replace("role_id: bugfix", "role_id: bug_fix"), encoding="utf-8")
    code, report = doctor_json(tree, pack)
    active = next(c for c in checks(report, "organization") if c["subject"].endswith("active.json"))
    assert code == 1 and active["level"] == "problem", active
    assert "role_id: is 'bug_fix' but the file is named for 'bugfix'" in active["message"]


@pytest.mark.parametrize("volume_state,level,words", [
    ("unset", "ok", "not set: each agent is steered by its own supervisor"),
    ("missing", "warning", "does not exist (not mounted?); this agent's own supervisor steers"),
    ("no XO", "warning", "No XO is running on"),
    ("XO running", "ok", "the XO steers this agent"),
])
def test_doctor_says_who_steers(tmp_path, pack, volume_state, level, words):
    from org.macrocosm.daemon import Heartbeat
    from org.macrocosm.volume import VolumeLayout

    tree = make_a0_tree(tmp_path / "a0", "D")
    install(pack, tree)
    env = {k: v for k, v in os.environ.items() if not k.startswith("A0ORG_")}
    volume = tmp_path / "volume"
    if volume_state != "unset":
        env.update(A0ORG_VOLUME=str(volume), A0ORG_UNIT="unit-1")
    if volume_state in ("no XO", "XO running"):
        (volume / "xo").mkdir(parents=True)
    if volume_state == "XO running":
        Heartbeat(VolumeLayout(volume)).beat()
    result = doctor(tree, pack, "--json", env=env)
    [check] = checks(json.loads(result.stdout), "link")
    assert check["level"] == level and words in check["message"], check


def test_doctor_with_a_python_that_lacks_agent_zeros_packages_reports_instead_of_crashing(tmp_path, pack):
    """Run with the wrong Python, Agent-Zero's own modules fail to import; v0.9.8's `python`
    folder is a namespace package, whose path cannot be computed once its parent is dropped."""
    tree = make_a0_tree(tmp_path / "a0", "C")
    (tree / "python" / "__init__.py").unlink()  # as in v0.9.8.2: no __init__.py
    extension = tree / "python" / "helpers" / "extension.py"
    extension.write_text("import a_package_only_agent_zeros_python_has\n" + extension.read_text())
    install(pack, tree)
    result = doctor(tree, pack)
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 1
    assert "PROBLEM  Extension base class: cannot import python.helpers.extension" in result.stdout
    assert "No module named 'a_package_only_agent_zeros_python_has'" in result.stdout


# --------------------------------------------------------------------------- the plugin form


def plugin_checks(report: dict) -> dict[str, dict]:
    return {c["subject"]: c for c in checks(report, "plugin")}


def test_doctor_reads_the_plugin_form_and_its_switch(tmp_path, pack):
    tree = make_a0_tree(tmp_path / "a0", "P")
    install(pack, tree)
    _, report = doctor_json(tree, pack)
    assert report["form"] == "plugin" and report["hook_dir"] == "usr/plugins/a0_org_kernel/extensions/python/<point>"
    for point in POINTS:
        check = hook_check(report, point)
        assert check["level"] == "ok" and check["details"]["path"] == str(hook_path(tree, "P", point)), check
    found = plugin_checks(report)
    assert found["usr/plugins/a0_org_kernel/plugin.yaml"]["level"] == "ok"
    switch = found["on/off switch"]
    assert switch["level"] == "ok" and switch["message"] == "on for everyone" and switch["details"]["enabled"] is True
    text = doctor(tree, pack).stdout
    assert "as a plugin, hooks in usr/plugins/a0_org_kernel/extensions/python/<point>/" in text
    assert "\nPlugin\n  OK       usr/plugins/a0_org_kernel/plugin.yaml: current" in text


def test_doctor_names_the_projects_and_profiles_that_differ(tmp_path, pack):
    tree = make_a0_tree(tmp_path / "a0", "P")
    install(pack, tree)
    for rel in ("usr/plugins/a0_org_kernel/.toggle-0", "usr/projects/alpha/.a0proj/plugins/a0_org_kernel/.toggle-1",
                "usr/agents/developer/plugins/a0_org_kernel/.toggle-1"):
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_text("")
    code, report = doctor_json(tree, pack)
    switch = plugin_checks(report)["on/off switch"]
    assert switch["level"] == "warning" and switch["details"]["enabled"] is False
    assert switch["message"].startswith("off for everyone: the pack does nothing; ")
    assert [e.split(" (")[0] for e in switch["details"]["exceptions"]] == ["on for project alpha", "on for agent profile developer"]
    assert "Agent-Zero's plugin list" in switch["fix"]


def test_doctor_finds_the_pack_in_both_forms_a_problem(tmp_path, pack):
    tree = make_a0_tree(tmp_path / "a0", "P")
    install(pack, tree)
    stray = hook_path(tree, "D", "message_loop_end")
    stray.parent.mkdir(parents=True)
    stray.write_bytes(hook_path(tree, "P", "message_loop_end").read_bytes())
    code, report = doctor_json(tree, pack)
    form = plugin_checks(report)["form"]
    assert code == 1 and form["level"] == "problem" and "run even while the plugin is switched off" in form["message"]
    assert "--form plugin" in form["fix"]
    assert checks(report, "clash") == [checks(report, "clash", "ok")[0]]  # our own copy is not reported twice


def test_doctor_without_the_plugin_manifest_is_a_problem(tmp_path, pack):
    tree = make_a0_tree(tmp_path / "a0", "P")
    install(pack, tree)
    (tree / "usr/plugins/a0_org_kernel/plugin.yaml").unlink()
    code, report = doctor_json(tree, pack)
    manifest = plugin_checks(report)["usr/plugins/a0_org_kernel/plugin.yaml"]
    assert code == 1 and manifest["level"] == "problem" and "Agent-Zero does not see the plugin" in manifest["message"]


def test_doctor_suggests_the_plugin_to_an_extension_install_that_could_have_it(tmp_path, pack):
    tree = make_a0_tree(tmp_path / "a0", "P")
    install(pack, tree, "--form", "extensions")
    _, report = doctor_json(tree, pack)
    assert report["form"] == "extensions" and report["hook_dir"] == "usr/extensions/python/<point>"
    assert all(hook_check(report, p)["level"] == "ok" for p in POINTS)
    form = plugin_checks(report)["form"]
    assert form["level"] == "info" and "install_all.sh --form plugin" in form["fix"]
    assert "on/off switch" not in plugin_checks(report)


@pytest.mark.parametrize("era", ["D", "C"])
def test_doctor_says_nothing_of_plugins_where_agent_zero_has_none(tmp_path, pack, era):
    tree = make_a0_tree(tmp_path / "a0", era)
    install(pack, tree)
    _, report = doctor_json(tree, pack)
    assert report["form"] == "extensions" and not checks(report, "plugin")


