"""The installer, driven the way a user drives it: the bash wrappers in a copy of the pack,
run as real subprocesses against temporary Agent-Zero trees of each era."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest
from a0_trees import HOOK_DIRS, HOOK_FILES, POINTS, REPO, hook_path, make_a0_tree, snapshot
from pack_commands import install, run_script

ORGS = Path("usr/organizations")


def assert_clean_error(result: subprocess.CompletedProcess, *fragments: str) -> None:
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in result.stderr, result.stderr


# --------------------------------------------------------------------------- where files go


@pytest.mark.parametrize("era", ["D", "C", "B"])
def test_each_era_gets_hooks_in_its_own_folder(tmp_path, pack, era):
    tree = make_a0_tree(tmp_path / "a0", era)
    result = install(pack, tree)

    for point in POINTS:
        installed = hook_path(tree, era, point)
        assert installed.read_bytes() == (pack / "extensions" / point / HOOK_FILES[point]).read_bytes()
    other_folders = {pattern for other, pattern in HOOK_DIRS.items() if pattern != HOOK_DIRS[era]}
    for pattern in other_folders:
        for point in POINTS:
            assert not (tree / pattern.format(point=point) / HOOK_FILES[point]).exists()
    assert f"era {era[0]}" in result.stdout
    assert "== Phase 1: kernel ==" in result.stdout and "== Phase 2: supervisor loop ==" in result.stdout


def test_organizations_folder_is_laid_out(tmp_path, pack):
    tree = make_a0_tree(tmp_path / "a0", "D")
    install(pack, tree)
    orgs = tree / ORGS
    assert sorted(p.name for p in (orgs / "roles").iterdir()) == ["coder.yaml", "lead.yaml"]
    assert sorted(p.name for p in (orgs / "schemas").iterdir()) == ["organization.schema.json", "role_profile.schema.json"]
    assert (orgs / "reports" / "archive").is_dir()
    assert not (orgs / "active.json").exists()
    manifest = json.loads((orgs / ".a0org-manifest.json").read_text())
    assert set(manifest["files"]) == {
        "roles/coder.yaml", "roles/lead.yaml", "software_dev.yaml",
        "schemas/organization.schema.json", "schemas/role_profile.schema.json",
    }


def test_organization_template_modeline_points_at_installed_schemas(tmp_path, pack):
    tree = make_a0_tree(tmp_path / "a0", "D")
    install(pack, tree)
    template = tree / ORGS / "software_dev.yaml"
    first_line = template.read_text().splitlines()[0]
    assert first_line == "# yaml-language-server: $schema=schemas/organization.schema.json"
    assert (template.parent / "schemas" / "organization.schema.json").is_file()
    role_line = (tree / ORGS / "roles" / "lead.yaml").read_text().splitlines()[0]
    assert (tree / ORGS / "roles" / role_line.split("$schema=")[1]).resolve().is_file()


def test_v0_9_3_without_tool_execute_after_skips_that_hook(tmp_path, pack):
    tree = make_a0_tree(tmp_path / "a0", "B3")
    result = install(pack, tree)
    assert hook_path(tree, "B", "before_main_llm_call").is_file()
    assert hook_path(tree, "B", "message_loop_end").is_file()
    assert not hook_path(tree, "B", "tool_execute_after").exists()
    assert "skipped tool_execute_after/_25_org_tool_outcomes.py" in result.stdout
    assert "no tool_execute_after extension point" in result.stdout
    # the skipped hook is not "missing": nothing more can be installed
    check = run_script(pack, "install_all.sh", "--a0-root", str(tree), "--no-library", "--check-only")
    assert check.returncode == 0, check.stdout


def test_era_b_warns_that_an_image_update_loses_the_hooks(tmp_path, pack):
    tree = make_a0_tree(tmp_path / "a0", "B")
    result = install(pack, tree)
    assert "loses the hooks" in result.stdout and "again after every update" in result.stdout
    assert "Restart Agent-Zero" in result.stdout


def test_era_d_needs_no_restart(tmp_path, pack):
    tree = make_a0_tree(tmp_path / "a0", "D")
    assert "Restart Agent-Zero" not in install(pack, tree).stdout


# --------------------------------------------------------------------------- refusing what is not Agent-Zero


def test_not_an_agent_zero_tree_is_refused(tmp_path, pack):
    empty = tmp_path / "not-a0"
    empty.mkdir()
    result = run_script(pack, "install_all.sh", "--a0-root", str(empty), "--no-library")
    assert_clean_error(result, str(empty), "not an Agent-Zero folder", "agent.py", "run_ui.py")
    assert list(empty.iterdir()) == []


def test_missing_root_is_refused(tmp_path, pack):
    result = run_script(pack, "install_all.sh", "--a0-root", str(tmp_path / "nowhere"), "--no-library")
    assert_clean_error(result, str(tmp_path / "nowhere"), "is not a folder")


def test_agent_zero_v0_9_2_and_older_is_refused(tmp_path, pack):
    tree = make_a0_tree(tmp_path / "a0", "A")
    before = snapshot(tree)
    result = run_script(pack, "install_all.sh", "--a0-root", str(tree), "--no-library")
    assert_clean_error(result, "no call_extensions function", "v0.9.2 or older")
    assert snapshot(tree) == before


def test_incomplete_pack_is_refused(tmp_path, pack):
    tree = make_a0_tree(tmp_path / "a0", "D")
    missing = pack / "extensions" / "tool_execute_after" / HOOK_FILES["tool_execute_after"]
    missing.unlink()
    result = run_script(pack, "install_all.sh", "--a0-root", str(tree), "--no-library")
    assert_clean_error(result, "is incomplete", str(missing))


@pytest.mark.skipif(shutil.which("git") is None, reason="needs the git binary")
def test_version_comes_from_git_describe(tmp_path, pack):
    tree = make_a0_tree(tmp_path / "a0", "D")
    git = ["git", "-C", str(tree), "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    for command in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "snapshot"], ["tag", "v1.7"]):
        subprocess.run(git + command, check=True, capture_output=True)
    assert "version v1.7)" in install(pack, tree).stdout


def test_missing_python_is_named(tmp_path, pack):
    tree = make_a0_tree(tmp_path / "a0", "D")
    result = run_script(pack, "install_all.sh", "--a0-root", str(tree), python=str(tmp_path / "no-python"))
    assert_clean_error(result, str(tmp_path / "no-python"), "no such executable")


@pytest.mark.skipif(
    any(Path(p).exists() for p in ("/opt/venv-a0/bin/python", "/opt/venv/bin/python")),
    reason="an Agent-Zero Python exists on this machine",
)
def test_without_agent_zero_python_the_wrapper_says_what_to_pass(tmp_path, pack):
    result = subprocess.run(["bash", str(pack / "install_supervisor_loop.sh"), "--a0-root", str(tmp_path)],
                            capture_output=True, text=True, check=False)
    assert_clean_error(result, "/opt/venv-a0/bin/python", "--python PATH")


def test_unwritable_target_is_reported_before_anything_changes(tmp_path, pack):
    tree = make_a0_tree(tmp_path / "a0", "D")
    (tree / "usr").rmdir()
    (tree / "usr").write_text("a file where Agent-Zero's usr folder should be\n")
    before = snapshot(tree)
    result = run_script(pack, "install_all.sh", "--a0-root", str(tree), "--no-library")
    assert_clean_error(result, f"cannot write {tree / 'usr'}", f"{tree / 'usr'} is a file, not a folder")
    assert snapshot(tree) == before


# --------------------------------------------------------------------------- repeat runs and modes


def test_second_run_changes_nothing_and_says_so(tmp_path, pack):
    tree = make_a0_tree(tmp_path / "a0", "D")
    install(pack, tree, "--activate", "software_dev")
    after_first = snapshot(tree)
    second = install(pack, tree, "--activate", "software_dev")
    assert snapshot(tree) == after_first
    assert "Nothing to change: everything is already installed and current." in second.stdout


def test_check_only_exit_codes(tmp_path, pack):
    tree = make_a0_tree(tmp_path / "a0", "C")
    check = ("install_all.sh", "--a0-root", str(tree), "--no-library", "--check-only")

    before = snapshot(tree)
    missing = run_script(pack, *check)
    assert missing.returncode == 1
    assert "missing" in missing.stdout and "Run install_all.sh" in missing.stdout
    assert snapshot(tree) == before

    install(pack, tree)
    current = run_script(pack, *check)
    assert current.returncode == 0, current.stdout
    assert "everything is installed and current" in current.stdout

    hook = hook_path(tree, "C", "message_loop_end")
    hook.write_text(hook.read_text() + "# changed\n")
    outdated = run_script(pack, *check)
    assert outdated.returncode == 1
    assert any(line.split()[:2] == ["outdated", f"usr/extensions/message_loop_end/{HOOK_FILES['message_loop_end']}"]
               for line in outdated.stdout.splitlines())

    supervisor_only = run_script(pack, "install_supervisor_loop.sh", "--a0-root", str(tree), "--check-only")
    assert supervisor_only.returncode == 1


def test_an_edited_role_gets_a_new_file_only_for_a_pack_version_not_seen_before(tmp_path, pack):
    """The pack's version goes beside an edited role once per version: not when the pack did
    not change it, and not again after the user merged it and deleted the .new file."""
    tree = make_a0_tree(tmp_path / "a0", "D")
    install(pack, tree)
    role = tree / ORGS / "roles" / "lead.yaml"
    new_file = role.with_name("lead.yaml.new")
    role.write_text(role.read_text() + "# my tuning\n")
    check = ("install_all.sh", "--a0-root", str(tree), "--no-library", "--check-only")
    result = run_script(pack, *check)
    assert result.returncode == 0, result.stdout  # the pack has nothing new for it
    assert "the pack's version is the one you edited" in result.stdout
    install(pack, tree)
    assert not new_file.exists()

    (pack / "roles" / "lead.yaml").write_text((pack / "roles" / "lead.yaml").read_text() + "extra: 2\n")  # a newer pack
    assert run_script(pack, *check).returncode == 1  # its version is not beside yours yet
    install(pack, tree)
    assert new_file.exists() and run_script(pack, *check).returncode == 0

    role.write_text(role.read_text() + "extra: 2\n")  # merged what they wanted
    new_file.unlink()
    result = run_script(pack, *check)
    assert result.returncode == 0, result.stdout
    assert "the pack's version is the one you merged" in result.stdout
    install(pack, tree)
    assert not new_file.exists()


@pytest.mark.parametrize("state", ["fresh", "installed and edited"])
def test_dry_run_changes_nothing(tmp_path, pack, state):
    tree = make_a0_tree(tmp_path / "a0", "D")
    if state != "fresh":
        install(pack, tree)
        (tree / ORGS / "roles" / "lead.yaml").write_text("# mine\n")
        (pack / "roles" / "lead.yaml").write_text((pack / "roles" / "lead.yaml").read_text() + "extra: 2\n")
        (pack / "extensions" / "message_loop_end" / HOOK_FILES["message_loop_end"]).write_text("# a newer hook\n")
        pycache = tree / "usr/extensions/python/message_loop_end/__pycache__"
        pycache.mkdir()
        (pycache / "x.pyc").write_bytes(b"\0")
    before = snapshot(tree)
    result = run_script(pack, "install_all.sh", "--a0-root", str(tree), "--no-library", "--dry-run", "--activate", "software_dev")
    assert result.returncode == 0, result.stderr
    assert snapshot(tree) == before
    assert "nothing was changed" in result.stdout
    lines = result.stdout.splitlines()
    if state == "fresh":
        for point in POINTS:
            assert any(line.split()[:3] == ["would", "install", f"usr/extensions/python/{point}/{HOOK_FILES[point]}"] for line in lines)
        assert any("would create folder" in line and line.endswith("usr/organizations/reports/archive") for line in lines)
    else:
        assert any(line.split()[:2] == ["would", "update"] and "message_loop_end" in line for line in lines)
        assert any(line.split()[:2] == ["would", "clear"] and "__pycache__" in line for line in lines)
        assert any(line.split()[:2] == ["would", "write"] and "lead.yaml.new" in line for line in lines)
    assert any(line.split()[:2] == ["would", "write"] and "active.json" in line for line in lines)


def test_dry_run_uninstall_changes_nothing(tmp_path, pack):
    tree = make_a0_tree(tmp_path / "a0", "D")
    install(pack, tree)
    before = snapshot(tree)
    result = run_script(pack, "install_all.sh", "--a0-root", str(tree), "--no-library", "--uninstall", "--dry-run")
    assert result.returncode == 0, result.stderr
    assert snapshot(tree) == before
    assert "would remove" in result.stdout


# --------------------------------------------------------------------------- user edits


def test_edited_role_is_kept_and_the_new_version_goes_beside_it(tmp_path, pack):
    tree = make_a0_tree(tmp_path / "a0", "D")
    install(pack, tree)
    orgs = tree / ORGS
    edited = orgs / "roles" / "lead.yaml"
    edited.write_text(edited.read_text() + "# tuned for my team\n")
    mine = edited.read_text()
    newer_lead = (pack / "roles" / "lead.yaml").read_text() + "extra: 2\n"
    (pack / "roles" / "lead.yaml").write_text(newer_lead)
    newer_coder = (pack / "roles" / "coder.yaml").read_text() + "extra: 2\n"
    (pack / "roles" / "coder.yaml").write_text(newer_coder)

    result = install(pack, tree)

    assert edited.read_text() == mine
    assert (orgs / "roles" / "lead.yaml.new").read_text() == newer_lead
    assert (orgs / "roles" / "coder.yaml").read_text() == newer_coder  # untouched by the user: updated
    assert "edited by you" in result.stdout and "lead.yaml.new" in result.stdout


def test_existing_file_the_pack_did_not_install_is_kept(tmp_path, pack):
    tree = make_a0_tree(tmp_path / "a0", "D")
    theirs = tree / ORGS / "roles" / "coder.yaml"
    theirs.parent.mkdir(parents=True)
    theirs.write_text("# someone's own coder role\n")
    result = install(pack, tree)
    assert theirs.read_text() == "# someone's own coder role\n"
    assert (theirs.parent / "coder.yaml.new").read_bytes() == (pack / "roles" / "coder.yaml").read_bytes()
    assert "not installed by this pack" in result.stdout
    manifest = json.loads((tree / ORGS / ".a0org-manifest.json").read_text())
    assert "roles/coder.yaml" not in manifest["files"]


def test_edited_schema_is_replaced(tmp_path, pack):
    tree = make_a0_tree(tmp_path / "a0", "D")
    install(pack, tree)
    schema = tree / ORGS / "schemas" / "role_profile.schema.json"
    schema.write_text("{}\n")
    install(pack, tree)
    assert schema.read_bytes() == (pack / "schemas" / "role_profile.schema.json").read_bytes()


# --------------------------------------------------------------------------- activation


def test_activate_writes_active_json(tmp_path, pack):
    tree = make_a0_tree(tmp_path / "a0", "D")
    install(pack, tree, "--activate", "software_dev")
    active = json.loads((tree / ORGS / "active.json").read_text())
    assert active["schema_version"] == 1 and active["org_id"] == "software_dev"
    assert active["activated_by"] == "install_all.sh"
    assert "T" in active["activated_at"]

    install(pack, tree, "--deactivate")
    assert not (tree / ORGS / "active.json").exists()


@pytest.mark.parametrize(
    "org_id, message",
    [
        ("Software Dev", "not a valid organization id"),
        ("../roles/lead", "not a valid organization id"),
        ("sales", "there is no organization template"),
        ("lead", "there is no organization template"),
    ],
)
def test_activate_refuses_what_is_not_an_installed_template(tmp_path, pack, org_id, message):
    tree = make_a0_tree(tmp_path / "a0", "D")
    install(pack, tree)
    before = snapshot(tree)
    result = run_script(pack, "install_all.sh", "--a0-root", str(tree), "--no-library", "--activate", org_id)
    assert_clean_error(result, message)
    assert snapshot(tree) == before


def test_activate_refuses_a_template_whose_org_id_differs(tmp_path, pack):
    tree = make_a0_tree(tmp_path / "a0", "D")
    install(pack, tree)
    (tree / ORGS / "steering.yaml").write_text("# not an organization\nmessages: []\n")
    result = run_script(pack, "install_all.sh", "--a0-root", str(tree), "--no-library", "--activate", "steering")
    assert_clean_error(result, "is not an organization template for 'steering'")


# --------------------------------------------------------------------------- uninstall


def test_uninstall_keeps_edited_roles_and_reports(tmp_path, pack):
    tree = make_a0_tree(tmp_path / "a0", "C")
    install(pack, tree, "--activate", "software_dev")
    orgs = tree / ORGS
    (orgs / "roles" / "lead.yaml").write_text("# my lead\n")
    (pack / "roles" / "lead.yaml").write_text((pack / "roles" / "lead.yaml").read_text() + "extra: 2\n")
    install(pack, tree)  # writes lead.yaml.new
    assert (orgs / "roles" / "lead.yaml.new").exists()
    report = orgs / "reports" / "archive" / "lead_20250101T000000Z.json"
    report.write_text("{}\n")

    result = run_script(pack, "install_all.sh", "--a0-root", str(tree), "--no-library", "--uninstall")

    assert result.returncode == 0, result.stderr
    for point in POINTS:
        assert not hook_path(tree, "C", point).exists()
    assert (orgs / "roles" / "lead.yaml").read_text() == "# my lead\n"
    assert not (orgs / "roles" / "lead.yaml.new").exists()
    assert not (orgs / "roles" / "coder.yaml").exists()
    assert not (orgs / "software_dev.yaml").exists()
    assert not (orgs / "schemas").exists()
    assert not (orgs / ".a0org-manifest.json").exists()
    assert not (orgs / "active.json").exists()
    assert report.read_text() == "{}\n"
    assert f"kept {orgs / 'roles' / 'lead.yaml'}" in result.stdout
    assert "kept 1 report file(s)" in result.stdout

    again = run_script(pack, "install_all.sh", "--a0-root", str(tree), "--no-library", "--uninstall")
    assert again.returncode == 0, again.stderr
    assert "Nothing to change: everything is already removed." in again.stdout


SUPERVISOR_POINTS = ("message_loop_end", "message_loop_prompts_before")
KERNEL_POINTS = ("before_main_llm_call", "tool_execute_after")


@pytest.mark.parametrize("era", ["D", "C", "B"])
def test_uninstall_removes_every_hook_in_each_era(tmp_path, pack, era):
    tree = make_a0_tree(tmp_path / "a0", era)
    install(pack, tree)
    assert all(hook_path(tree, era, point).is_file() for point in POINTS)
    result = run_script(pack, "install_all.sh", "--a0-root", str(tree), "--no-library", "--uninstall")
    assert result.returncode == 0, result.stdout + result.stderr
    for point in POINTS:
        assert not hook_path(tree, era, point).exists()
        rel = f"{HOOK_DIRS[era].format(point=point)}/{HOOK_FILES[point]}"
        assert any(line.split()[:2] == ["remove", rel] for line in result.stdout.splitlines()), result.stdout


@pytest.mark.parametrize("era", ["D", "C", "B"])
def test_supervisor_loop_uninstall_removes_only_its_hooks(tmp_path, pack, era):
    tree = make_a0_tree(tmp_path / "a0", era)
    install(pack, tree)
    result = run_script(pack, "install_supervisor_loop.sh", "--a0-root", str(tree), "--uninstall")
    assert result.returncode == 0, result.stderr
    for point in SUPERVISOR_POINTS:
        assert not hook_path(tree, era, point).exists()
    for point in KERNEL_POINTS:
        assert hook_path(tree, era, point).exists()
    assert (tree / ORGS / "roles" / "lead.yaml").exists()


# --------------------------------------------------------------------------- __pycache__ and clashes


def test_pycache_is_cleared_after_writing_hooks_only(tmp_path, pack):
    tree = make_a0_tree(tmp_path / "a0", "D")
    hook_dir = hook_path(tree, "D", "message_loop_end").parent
    stale = hook_dir / "__pycache__" / "_50_supervisor_loop.cpython-312.pyc"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"stale bytecode")
    install(pack, tree)
    assert not (hook_dir / "__pycache__").exists()

    # Agent-Zero compiles the hook again; an install that writes nothing leaves that alone
    stale.parent.mkdir()
    stale.write_bytes(b"fresh bytecode")
    install(pack, tree)
    assert stale.exists()


@pytest.mark.parametrize(
    "era, rel, kind",
    [
        ("D", "agents/agent0/extensions/python/message_loop_end", "INSTEAD of"),
        ("D", "usr/plugins/mine/agents/agent0/extensions/python/message_loop_end", "through plugin mine, for agent profile agent0."),
        ("D", "usr/projects/p1/.a0proj/extensions/python/before_main_llm_call", "in project p1."),
        ("D", "usr/plugins/_exocortex/extensions/python/message_loop_end", "loads ours"),
        ("D", "extensions/python/tool_execute_after", "loads ours"),
        ("D", "usr/extensions/message_loop_end", "does not read"),
        ("C", "usr/agents/agent0/extensions/message_loop_end", "INSTEAD of"),
        ("C", "usr/agents/agent0/extensions/message_loop_prompts_before", "INSTEAD of"),
        ("D", "extensions/python/message_loop_prompts_before", "loads ours"),
        ("B", "usr/extensions/message_loop_prompts_before", "does not read"),
        ("C", "python/extensions/before_main_llm_call", "loads ours"),
        ("C", "usr/extensions/python/message_loop_end", "does not read"),
        ("B", "agents/developer/extensions/tool_execute_after", "INSTEAD of"),
        ("B", "usr/extensions/message_loop_end", "does not read"),
    ],
)
def test_name_clashes_are_reported(tmp_path, pack, era, rel, kind):
    tree = make_a0_tree(tmp_path / "a0", era)
    point = rel.rsplit("/", 1)[1]
    other = tree / rel / HOOK_FILES[point]
    other.parent.mkdir(parents=True, exist_ok=True)
    other.write_text("# a file with our hook's name\n")
    result = install(pack, tree)
    warnings = [line for line in result.stdout.splitlines() if line.strip().startswith("warning:")]
    assert any(str(other) in line and kind in line for line in warnings), result.stdout
    assert other.read_text() == "# a file with our hook's name\n"


# --------------------------------------------------------------------------- the supervisor-loop script and the library


def test_supervisor_loop_script_installs_only_its_hooks(tmp_path, pack):
    tree = make_a0_tree(tmp_path / "a0", "D")
    result = run_script(pack, "install_supervisor_loop.sh", "--a0-root", str(tree))
    assert result.returncode == 0, result.stderr
    for point in SUPERVISOR_POINTS:
        assert hook_path(tree, "D", point).is_file()
    for point in KERNEL_POINTS:
        assert not hook_path(tree, "D", point).exists()
    assert not (tree / ORGS).exists()
    assert "Phase 1" not in result.stdout


def test_wrapper_runs_its_own_pack_whatever_the_current_folder(tmp_path, pack):
    tree = make_a0_tree(tmp_path / "a0", "D")
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "org").mkdir(parents=True)
    (elsewhere / "org" / "__init__.py").write_text("raise SystemExit('the wrong org package was imported')\n")
    result = subprocess.run(["bash", str(pack / "install_all.sh"), "--python", sys.executable, "--a0-root", str(tree), "--no-library"],
                            capture_output=True, text=True, cwd=elsewhere, check=False)
    assert result.returncode == 0, result.stderr
    assert f"pack:        {pack}" in result.stdout


def test_installer_imports_only_the_standard_library():
    stdlib = set(sys.stdlib_module_names)
    installer = sorted((REPO / "org" / "install").glob("*.py"))
    kernel_files = [REPO / "org" / "__init__.py", REPO / "org" / "kernel" / "__init__.py", REPO / "org" / "kernel" / "files.py"]
    org_imports: set[str] = set()
    for path in installer + kernel_files:
        tree = ast.parse(path.read_text())
        imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
        imported |= {node.module for node in ast.walk(tree)
                     if isinstance(node, ast.ImportFrom) and node.module and node.level == 0}
        assert {name.split(".")[0] for name in imported} <= stdlib | {"org", "__future__"}, (path, imported)
        ours = {name for name in imported if name.split(".")[0] == "org"}
        assert path in installer or not ours, (path, ours)  # the kernel files import nothing of the pack
        org_imports |= ours
    # the installer uses `org` only for org.__version__, its own modules and the file primitives
    assert org_imports <= {"org", "org.install", "org.kernel.files"} | {f"org.install.{p.stem}" for p in installer}, org_imports
    assert "from org import __version__" in (REPO / "org" / "install" / "contents.py").read_text()


@pytest.mark.registry
def test_library_really_installs_into_a_fresh_venv(tmp_path):
    """The one slow test: pip-installs the real pack into a new venv, as install_all.sh does in the container."""
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(system_site_packages=True).create(env_dir)
    python = str(env_dir / "bin" / "python")
    # the base Python's pip serves the venv through its site packages (ensurepip costs seconds)
    if subprocess.run([python, "-m", "pip", "--version"], capture_output=True, cwd=tmp_path).returncode != 0:
        subprocess.run([python, "-m", "ensurepip"], capture_output=True, cwd=tmp_path, check=True)
    tree = make_a0_tree(tmp_path / "a0", "D")

    clean_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    preinstalled = subprocess.run([python, "-c", "import importlib.metadata as m; m.version('a0-org-kernel')"],
                                  capture_output=True, cwd=tmp_path, env=clean_env).returncode == 0
    before = run_script(REPO, "install_supervisor_loop.sh", "--a0-root", str(tree), python=python)
    assert before.returncode == 0, before.stderr
    assert preinstalled or "warning: library: missing" in before.stdout  # the base Python may hold it already

    result = run_script(REPO, "install_all.sh", "--a0-root", str(tree), python=python)
    assert result.returncode == 0, result.stdout + result.stderr
    probe = subprocess.run([python, "-c", "import org, sys; print(org.__version__, org.__file__)"],
                           capture_output=True, text=True, cwd=tmp_path, env=clean_env)
    assert probe.returncode == 0, probe.stderr
    assert preinstalled or str(env_dir) in probe.stdout

    check = run_script(REPO, "install_all.sh", "--a0-root", str(tree), "--check-only", python=python)
    assert check.returncode == 0, check.stdout
    assert "current" in next(line for line in check.stdout.splitlines() if "library a0-org-kernel" in line)

    removed = run_script(REPO, "install_all.sh", "--a0-root", str(tree), "--uninstall", python=python)
    assert removed.returncode == 0, removed.stdout + removed.stderr
    gone = subprocess.run([python, "-c", "import importlib.metadata as m; print(m.version('a0-org-kernel'))"],
                          capture_output=True, text=True, cwd=tmp_path, env=clean_env)
    assert preinstalled or gone.returncode != 0


def test_installer_identifier_rule_is_the_contracts_rule():
    from org.contracts.common import IDENTIFIER_PATTERN
    from org.install.manifest import ORG_ID_RE

    assert ORG_ID_RE.pattern == IDENTIFIER_PATTERN


@pytest.mark.parametrize("era", ["D", "C"])
def test_uninstall_removes_the_hook_folders_it_created_and_keeps_one_with_other_files(tmp_path, pack, era):
    tree = make_a0_tree(tmp_path / "a0", era)
    before = {p for p in tree.rglob("*") if p.is_dir()}
    install(pack, tree)
    mine = hook_path(tree, era, "message_loop_end").parent / "_90_my_extension.py"
    mine.write_text("# the user's own extension\n")
    result = run_script(pack, "install_all.sh", "--a0-root", str(tree), "--no-library", "--uninstall")
    assert result.returncode == 0, result.stderr
    assert mine.read_text() == "# the user's own extension\n"
    left = {p for p in tree.rglob("*") if p.is_dir()} - before
    assert left == {mine.parent, *(p for p in mine.parent.parents if tree / "usr" in p.parents)}


@pytest.mark.skipif(Path("/opt/venv-a0/bin/python").exists() or Path("/opt/venv/bin/python").exists(),
                    reason="Agent-Zero's Python is on this machine")
@pytest.mark.parametrize("script", ["install_all.sh", "install_supervisor_loop.sh"])
def test_help_works_outside_the_container(pack, script):
    """No Agent-Zero Python here: the help is printed all the same, installing is refused."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"}
    shown = subprocess.run(["bash", str(pack / script), "--help"], capture_output=True, text=True, timeout=120, env=env, check=False)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith(f"usage: {script}")
    refused = subprocess.run(["bash", str(pack / script)], capture_output=True, text=True, timeout=120, env=env, check=False)
    assert refused.returncode == 2 and "Agent-Zero's Python was not found" in refused.stderr
