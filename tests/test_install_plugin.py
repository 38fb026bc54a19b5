"""The plugin form: the installer on a plugin-capable stand-in tree (``make_a0_tree(..., "P")``),
run through the bash wrappers as a user runs it; and the plugin's on/off rule."""

from __future__ import annotations

from pathlib import Path

import pytest
from a0_trees import HOOK_DIRS, HOOK_FILES, POINTS, hook_path, make_a0_tree, snapshot
from pack_commands import install, run_script

from org.install.plugin import PLUGIN_NAME, enabled_for, toggles

PLUGIN = Path("usr/plugins") / PLUGIN_NAME
KERNEL_POINTS = ("before_main_llm_call", "tool_execute_after")


def extension_hook(tree: Path, point: str) -> Path:
    return hook_path(tree, "D", point)


def plugin_hook(tree: Path, point: str) -> Path:
    return hook_path(tree, "P", point)


def one_copy_each(tree: Path, form: str) -> bool:
    """Every hook in ``form`` and none in the other: never two copies of a hook."""
    wanted, other = (plugin_hook, extension_hook) if form == "plugin" else (extension_hook, plugin_hook)
    return all(wanted(tree, p).is_file() and not other(tree, p).exists() for p in POINTS)


def touch(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("")
    return path


def test_an_agent_zero_with_plugins_gets_the_plugin_by_default(tmp_path, pack):
    tree = make_a0_tree(tmp_path / "a0", "P")
    result = install(pack, tree)
    assert one_copy_each(tree, "plugin")
    for point in POINTS:
        assert plugin_hook(tree, point).read_bytes() == (pack / "extensions" / point / HOOK_FILES[point]).read_bytes()
    manifest = (tree / PLUGIN / "plugin.yaml").read_text()
    for line in (f"name: {PLUGIN_NAME}", "per_project_config: true", "per_agent_config: true", "always_enabled: false"):
        assert line in manifest.splitlines()
    assert "settings_sections: [agent]" in manifest.splitlines()
    assert (tree / PLUGIN / "hooks.py").is_file() and (tree / PLUGIN / "webui" / "config.html").is_file()
    assert not (tree / "usr" / "extensions").exists()
    assert "form:        Agent-Zero plugin usr/plugins/a0_org_kernel/" in result.stdout
    # the manifest comes first, so Agent-Zero knows the plugin before its hooks appear
    lines = [line.split() for line in result.stdout.splitlines()]
    installs = [words[1] for words in lines if words[:1] == ["install"]]
    assert installs[0] == f"{PLUGIN.as_posix()}/plugin.yaml"
    again = install(pack, tree)
    assert "Nothing to change: everything is already installed and current." in again.stdout


@pytest.mark.parametrize("era", ["D", "C", "B"])
def test_without_plugins_the_extension_folders_stay_the_default_and_plugin_is_refused(tmp_path, pack, era):
    tree = make_a0_tree(tmp_path / "a0", era)
    refused = run_script(pack, "install_all.sh", "--a0-root", str(tree), "--no-library", "--form", "plugin")
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "has no plugins (they came with v0.9.9.0); use --form extensions" in refused.stderr
    assert not (tree / "usr" / "plugins" / PLUGIN_NAME).exists()
    install(pack, tree)
    assert all(hook_path(tree, era, p).is_file() for p in POINTS)
    assert not (tree / PLUGIN).exists()


def test_check_only_in_the_plugin_form(tmp_path, pack):
    tree = make_a0_tree(tmp_path / "a0", "P")
    check = ("install_all.sh", "--a0-root", str(tree), "--check-only")
    before = run_script(pack, *check)
    assert before.returncode == 1
    assert any(line.split()[:2] == ["missing", f"{PLUGIN.as_posix()}/plugin.yaml"] for line in before.stdout.splitlines())
    install(pack, tree)
    assert run_script(pack, *check, "--no-library").returncode == 0
    (tree / PLUGIN / "plugin.yaml").unlink()
    missing = run_script(pack, *check, "--no-library")
    assert missing.returncode == 1 and f"missing              {PLUGIN.as_posix()}/plugin.yaml" in missing.stdout


def test_check_only_counts_a_copy_in_the_other_form_as_not_current(tmp_path, pack):
    tree = make_a0_tree(tmp_path / "a0", "P")
    install(pack, tree)
    stray = extension_hook(tree, "message_loop_end")
    stray.parent.mkdir(parents=True)
    stray.write_bytes(plugin_hook(tree, "message_loop_end").read_bytes())
    # an extension-folder copy runs even while the plugin is off: --check-only says it must go
    result = run_script(pack, "install_all.sh", "--a0-root", str(tree), "--no-library", "--check-only", "--form", "plugin")
    assert result.returncode == 1
    assert "Switching to the plugin form" in result.stdout and "usr/extensions/python/message_loop_end/_50_supervisor_loop.py" in result.stdout


def test_dry_run_of_a_form_switch_changes_nothing_and_lists_the_removals(tmp_path, pack):
    tree = make_a0_tree(tmp_path / "a0", "P")
    install(pack, tree, "--form", "extensions")
    before = snapshot(tree)
    result = run_script(pack, "install_all.sh", "--a0-root", str(tree), "--no-library", "--dry-run", "--form", "plugin")
    assert result.returncode == 0, result.stderr
    assert snapshot(tree) == before
    lines = [line.split() for line in result.stdout.splitlines()]
    assert ["would", "install", f"{PLUGIN.as_posix()}/plugin.yaml", "(plugin", "manifest)"] in lines
    for point in POINTS:
        assert ["would", "remove", f"usr/extensions/python/{point}/{HOOK_FILES[point]}"] in lines
    assert ["would", "remove", "usr/extensions"] in lines


def test_an_installed_extension_form_is_kept_until_the_plugin_is_asked_for(tmp_path, pack):
    tree = make_a0_tree(tmp_path / "a0", "P")
    install(pack, tree, "--form", "extensions")
    assert one_copy_each(tree, "extensions") and not (tree / PLUGIN).exists()
    install(pack, tree)  # an upgrade keeps the form
    assert one_copy_each(tree, "extensions") and not (tree / PLUGIN).exists()
    switched = install(pack, tree, "--form", "plugin")
    assert one_copy_each(tree, "plugin") and (tree / PLUGIN / "plugin.yaml").is_file()
    assert not (tree / "usr" / "extensions").exists()  # the folders it created went with the hooks
    assert "== Switching to the plugin form: removing the extension-folder copies ==" in switched.stdout
    install(pack, tree)
    assert one_copy_each(tree, "plugin")


def test_switching_to_extension_folders_removes_the_plugin_and_names_the_switches_it_keeps(tmp_path, pack):
    tree = make_a0_tree(tmp_path / "a0", "P")
    install(pack, tree)
    touch(tree / PLUGIN / ".toggle-0")
    project_switch = touch(tree / "usr/projects/alpha/.a0proj/plugins" / PLUGIN_NAME / ".toggle-1")
    mine = touch(tree / "usr/plugins/other_plugin/plugin.yaml")
    result = install(pack, tree, "--form", "extensions")
    assert one_copy_each(tree, "extensions")
    assert not (tree / PLUGIN).exists() and (tree / "usr" / "plugins").is_dir() and mine.is_file()
    assert project_switch.is_file()
    assert "the plugin's switches for project alpha" in result.stdout and "switch nothing without the plugin" in result.stdout


def test_a_folder_with_other_files_in_the_plugin_stays(tmp_path, pack):
    tree = make_a0_tree(tmp_path / "a0", "P")
    install(pack, tree)
    config = touch(tree / PLUGIN / "config.json")
    touch(tree / PLUGIN / "__pycache__" / "hooks.cpython-312.pyc")  # Agent-Zero imported hooks.py
    install(pack, tree, "--form", "extensions")
    assert config.is_file() and sorted(p.name for p in (tree / PLUGIN).iterdir()) == ["config.json"]


def test_one_component_moves_the_other_hooks_along(tmp_path, pack):
    tree = make_a0_tree(tmp_path / "a0", "P")
    install(pack, tree, "--form", "extensions")
    result = run_script(pack, "install_supervisor_loop.sh", "--a0-root", str(tree), "--form", "plugin")
    assert result.returncode == 0, result.stdout + result.stderr
    assert one_copy_each(tree, "plugin")


@pytest.mark.parametrize("form", ["plugin", "extensions"])
def test_uninstall_removes_either_form(tmp_path, pack, form):
    tree = make_a0_tree(tmp_path / "a0", "P")
    install(pack, tree, "--form", form)
    switches = [touch(tree / "usr/projects/alpha/.a0proj/plugins" / PLUGIN_NAME / ".toggle-0"),
                touch(tree / "usr/agents/agent0/plugins" / PLUGIN_NAME / ".toggle-0")]
    result = run_script(pack, "install_all.sh", "--a0-root", str(tree), "--no-library", "--uninstall")
    assert result.returncode == 0, result.stdout + result.stderr
    assert not (tree / PLUGIN).exists() and not (tree / "usr" / "extensions").exists()
    assert (tree / "usr" / "plugins").is_dir()  # Agent-Zero's own folder stays
    assert not any(s.exists() for s in switches) and not any(s.parent.exists() for s in switches)
    assert not (tree / "usr" / "organizations").exists()


def test_supervisor_loop_uninstall_keeps_the_plugin_for_the_kernel_hooks(tmp_path, pack):
    tree = make_a0_tree(tmp_path / "a0", "P")
    install(pack, tree)
    result = run_script(pack, "install_supervisor_loop.sh", "--a0-root", str(tree), "--uninstall")
    assert result.returncode == 0, result.stderr
    assert (tree / PLUGIN / "plugin.yaml").is_file()
    assert [p for p in POINTS if plugin_hook(tree, p).exists()] == [p for p in POINTS if p in KERNEL_POINTS]
    run_script(pack, "install_all.sh", "--a0-root", str(tree), "--no-library", "--uninstall")
    assert not (tree / PLUGIN).exists()


def test_dry_run_uninstall_of_the_plugin_changes_nothing(tmp_path, pack):
    tree = make_a0_tree(tmp_path / "a0", "P")
    install(pack, tree)
    touch(tree / "usr/agents/agent0/plugins" / PLUGIN_NAME / ".toggle-0")
    before = snapshot(tree)
    result = run_script(pack, "install_all.sh", "--a0-root", str(tree), "--no-library", "--uninstall", "--dry-run")
    assert result.returncode == 0 and snapshot(tree) == before
    lines = [line.split() for line in result.stdout.splitlines()]
    assert ["would", "remove", f"{PLUGIN.as_posix()}/plugin.yaml"] in lines
    assert ["would", "remove", f"usr/agents/agent0/plugins/{PLUGIN_NAME}/.toggle-0"] in lines


def test_uninstall_is_refused_with_a_form(tmp_path, pack):
    tree = make_a0_tree(tmp_path / "a0", "P")
    result = run_script(pack, "install_all.sh", "--a0-root", str(tree), "--uninstall", "--form", "plugin")
    assert result.returncode == 2 and "--form and --uninstall cannot be combined" in result.stderr


@pytest.mark.parametrize(
    "rel, kind",
    [
        ("agents/agent0/extensions/python/message_loop_end", "INSTEAD of"),
        ("usr/projects/p1/.a0proj/extensions/python/before_main_llm_call", "INSTEAD of"),
        # plugins' extension folders are searched in name order: "_x" sorts before "a0_org_kernel", "zeta" after
        ("usr/plugins/_exocortex/extensions/python/message_loop_end", "INSTEAD of"),
        ("plugins/_core_thing/extensions/python/message_loop_end", "INSTEAD of"),
        ("usr/plugins/zeta/extensions/python/message_loop_end", "loads ours"),
        ("extensions/python/tool_execute_after", "loads ours"),
        ("usr/extensions/message_loop_end", "does not read"),
    ],
)
def test_name_clashes_in_the_plugin_form(tmp_path, pack, rel, kind):
    tree = make_a0_tree(tmp_path / "a0", "P")
    point = rel.rsplit("/", 1)[1]
    other = touch(tree / rel / HOOK_FILES[point])
    result = install(pack, tree)
    warnings = [line for line in result.stdout.splitlines() if line.strip().startswith("warning:")]
    assert any(str(other) in line and kind in line for line in warnings), result.stdout
    assert HOOK_DIRS["P"].format(point=point) in result.stdout


# --------------------------------------------------------------------------- the switch rule


@pytest.mark.parametrize(
    "files, project, profile, on",
    [
        ([], "", "", True),
        ([f"usr/plugins/{PLUGIN_NAME}/.toggle-0"], "", "", False),
        ([f"usr/plugins/{PLUGIN_NAME}/.toggle-0"], "alpha", "agent0", False),
        ([f"usr/plugins/{PLUGIN_NAME}/.toggle-0", f"usr/projects/alpha/.a0proj/plugins/{PLUGIN_NAME}/.toggle-1"], "alpha", "agent0", True),
        ([f"usr/plugins/{PLUGIN_NAME}/.toggle-0", f"usr/projects/alpha/.a0proj/plugins/{PLUGIN_NAME}/.toggle-1"], "beta", "agent0", False),
        ([f"usr/projects/alpha/.a0proj/plugins/{PLUGIN_NAME}/.toggle-0"], "alpha", "agent0", False),
        ([f"usr/projects/alpha/.a0proj/plugins/{PLUGIN_NAME}/.toggle-0",
          f"usr/projects/alpha/.a0proj/agents/agent0/plugins/{PLUGIN_NAME}/.toggle-1"], "alpha", "agent0", True),
        ([f"usr/agents/agent0/plugins/{PLUGIN_NAME}/.toggle-0"], "alpha", "agent0", False),
        ([f"usr/agents/agent0/plugins/{PLUGIN_NAME}/.toggle-0"], "alpha", "developer", True),
        ([f"agents/agent0/plugins/{PLUGIN_NAME}/.toggle-0", f"usr/agents/agent0/plugins/{PLUGIN_NAME}/.toggle-1"], "", "agent0", True),
        # while on, a .toggle-1 changes nothing; while off, a .toggle-0 changes nothing
        ([f"usr/projects/alpha/.a0proj/plugins/{PLUGIN_NAME}/.toggle-1"], "alpha", "", True),
    ],
)
def test_the_switch_follows_agent_zeros_rule(tmp_path, files, project, profile, on):
    tree = make_a0_tree(tmp_path / "a0", "P")
    for rel in files:
        touch(tree / rel)
    assert enabled_for(tree, project, profile) is on
    assert {t.path for t in toggles(tree)} == {tree / rel for rel in files}


# --------------------------------------------------------------------------- the settings screen


def test_the_settings_screen_shows_the_active_organization_and_its_doctrine(tmp_path):
    from a0_trees import make_pack

    from org.a0.plugin_settings import settings_view

    pack = make_pack(tmp_path / "pack", real_doctrine=True)
    tree = make_a0_tree(tmp_path / "a0", "P")
    orgs = tree / "usr" / "organizations"
    assert settings_view(orgs)["state"] == "off"  # no organizations folder yet
    install(pack, tree, "--activate", "software_dev")
    view = settings_view(orgs)
    assert view["state"] == "active" and view["org_id"] == "software_dev" and view["default_role"]
    codegen = next(r for r in view["roles"] if r["role_id"] == "codegen")
    assert not codegen["error"] and codegen["file"] == str(orgs / "roles" / "codegen.yaml")
    assert {"name": "radio_check_interval_turns", "value": "1"} in codegen["doctrine"]  # as roles/codegen.yaml says
    (orgs / "roles" / "codegen.yaml").write_text("role_id: codegen\n")
    broken = next(r for r in settings_view(orgs)["roles"] if r["role_id"] == "codegen")
    assert "codegen.yaml" in broken["error"] and broken["doctrine"] == []
    (orgs / "active.json").write_text("{not json")
    assert settings_view(orgs)["state"] == "invalid"
