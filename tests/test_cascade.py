"""The cascade of a role (org/kernel/cascade.py): ``extends`` chains, the organization's
``role_defaults``, the user's and a project's ``overrides.yaml``; one set of merge rules;
every value located in the file it came from, by the kernel, ``a0org validate`` and
``a0org explain``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from conftest import fail, ok
from pack_commands import a0org

from org.contracts import Doctrine, RoleProfile
from org.kernel import cascade
from org.kernel.cascade import Layer, merge
from org.kernel.loading import DocumentError
from org.kernel.paths import OrganizationLayout
from org.validate import validate_paths

ROOT = Path(__file__).resolve().parent.parent


def line_of(path: Path, needle: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), start=1) if needle in line)


@pytest.fixture
def orgs(tmp_path) -> Path:
    """An organizations folder as the installer leaves it, software_dev active."""
    home = tmp_path / "organizations"
    shutil.copytree(ROOT / "roles", home / "roles", ignore=shutil.ignore_patterns("organizations"))
    shutil.copy(ROOT / "roles" / "organizations" / "software_dev.yaml", home)
    (home / "active.json").write_text('{"schema_version": 1, "org_id": "software_dev"}')
    return home


def write(path: Path, data: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def resolve(orgs: Path, role_id: str, project: str | None = None) -> cascade.ResolvedRole:
    return cascade.resolve_role(OrganizationLayout(orgs), role_id, orgs / "software_dev.yaml", project)


# --------------------------------------------------------------------------- merge rules


def test_mappings_merge_lists_and_scalars_replace_and_null_removes():
    base = Layer("base.yaml", {"doctrine": {"cooldown_turns": 3, "loop": {"repeat_threshold": 3, "exempt_tools": ["wait", "poll"]},
                                            "cooldown_overrides": {"loop": 5}}})
    child = Layer("child.yaml", {"doctrine": {"loop": {"exempt_tools": ["sleep"]}, "cooldown_overrides": None}})
    data, origins = merge([base, child])
    assert data == {"doctrine": {"cooldown_turns": 3, "loop": {"repeat_threshold": 3, "exempt_tools": ["sleep"]}}}
    assert origins[("doctrine", "cooldown_turns")] is base and origins[("doctrine", "loop", "exempt_tools")] is child
    assert ("doctrine", "cooldown_overrides") not in origins and ("doctrine", "cooldown_overrides", "loop") not in origins
    assert base.data["doctrine"]["loop"]["exempt_tools"] == ["wait", "poll"]  # layers are never changed by a merge


def test_a_removed_entry_falls_back_to_the_pack_default(orgs):
    write(orgs / "overrides.yaml", {"roles": {"codegen": {"doctrine": {"cooldown_turns": None}}}})
    role = resolve(orgs, "codegen").role
    assert role.doctrine.cooldown_turns == RoleProfile.model_fields["doctrine"].default_factory().cooldown_turns


# --------------------------------------------------------------------------- extends


def test_the_shipped_bugfix_role_is_codegen_with_what_differs(orgs):
    resolved = resolve(orgs, "bugfix")
    role, codegen = resolved.role, resolve(orgs, "codegen").role
    assert role.role_id == "bugfix" and role.extends == "codegen" and role.role_name == "Bug Fix Specialist"
    assert role.doctrine.max_turns_without_progress == 15 and role.doctrine.loop.repeat_threshold == 4
    assert role.doctrine.cooldown_turns == codegen.doctrine.cooldown_turns  # inherited
    assert role.pace_plan.alternate.trigger == codegen.pace_plan.alternate.trigger
    assert role.pace_plan.alternate.description != codegen.pace_plan.alternate.description
    assert [Path(f).name for f in resolved.files] == ["codegen.yaml", "bugfix.yaml"]


def test_a_chain_of_three(orgs):
    write(orgs / "roles" / "hotfix.yaml", {"extends": "bugfix", "role_id": "hotfix", "role_name": "Hotfix",
                                           "doctrine": {"max_turns_without_progress": 6}})
    role = resolve(orgs, "hotfix").role
    assert (role.doctrine.max_turns_without_progress, role.doctrine.loop.repeat_threshold, role.role_type) == (6, 4, "specialist")


def test_a_circle_is_refused_with_the_chain_named(orgs):
    write(orgs / "roles" / "a.yaml", {"extends": "b", "role_id": "a"})
    b = write(orgs / "roles" / "b.yaml", {"extends": "a", "role_id": "b"})
    with pytest.raises(DocumentError) as caught:
        resolve(orgs, "a")
    [problem] = caught.value.problems
    assert (problem.path, problem.line, problem.field) == (str(b), line_of(b, "extends"), "extends")
    assert problem.reason == "the chain a -> b -> a goes round in a circle"


def test_extending_a_role_that_is_not_there_is_refused_at_the_extends_line(orgs):
    child = write(orgs / "roles" / "child.yaml", {"role_id": "child", "extends": "ghost"})
    with pytest.raises(DocumentError) as caught:
        resolve(orgs, "child")
    assert [(p.path, p.line, p.field) for p in caught.value.problems] == [(str(child), line_of(child, "extends"), "extends")]
    assert "no role 'ghost' to extend" in caught.value.problems[0].reason


def test_extends_cannot_leave_the_roles_folder(orgs):
    write(orgs / "roles" / "child.yaml", {"role_id": "child", "extends": "../software_dev"})
    with pytest.raises(DocumentError) as caught:
        resolve(orgs, "child")
    assert caught.value.problems[0].field == "extends" and "not a valid id" in caught.value.problems[0].reason


def test_a_mistake_is_located_in_the_file_that_made_it(orgs):
    codegen = orgs / "roles" / "codegen.yaml"
    codegen.write_text(codegen.read_text().replace("cooldown_turns: 3", "cooldown_turns: -1"))
    with pytest.raises(DocumentError) as caught:
        resolve(orgs, "bugfix")  # inherits the mistake
    assert [(p.path, p.line, p.field) for p in caught.value.problems] == [
        (str(codegen), line_of(codegen, "cooldown_turns: -1"), "doctrine.cooldown_turns")]


def test_a_role_id_is_never_inherited(orgs):
    child = write(orgs / "roles" / "child.yaml", {"extends": "codegen", "role_name": "Child"})
    with pytest.raises(DocumentError) as caught:
        resolve(orgs, "child")
    assert [(p.path, p.field, p.reason) for p in caught.value.problems] == [(str(child), "role_id", "required field is missing")]


# --------------------------------------------------------------------------- the layers in order


def test_each_layer_wins_over_the_one_below(orgs):
    organization = orgs / "software_dev.yaml"
    data = yaml.safe_load(organization.read_text())
    data["role_defaults"] = {"doctrine": {"cooldown_turns": 7, "report_archive_limit": 9}}
    write(organization, data)
    write(orgs / "overrides.yaml", {"every_role": {"doctrine": {"salute_interval_turns": 8}},
                                    "roles": {"codegen": {"doctrine": {"salute_interval_turns": 9}}}})
    write(orgs / "projects" / "shop" / "overrides.yaml", {"roles": {"codegen": {"doctrine": {"radio_check_interval_turns": 2}}}})

    role = resolve(orgs, "codegen").role.doctrine
    assert role.cooldown_turns == 3  # the role's own file wins over the organization's defaults
    assert role.report_archive_limit == 50  # (codegen.yaml sets it too)
    assert role.salute_interval_turns == 9  # roles.codegen wins over every_role
    assert role.radio_check_interval_turns == 1  # no project: its overrides do not apply
    assert resolve(orgs, "devops").role.doctrine.salute_interval_turns == 8
    assert resolve(orgs, "codegen", "shop").role.doctrine.radio_check_interval_turns == 2

    write(orgs / "roles" / "plain.yaml", {"extends": "codegen", "role_id": "plain", "doctrine": {"report_archive_limit": None}})
    removed = resolve(orgs, "plain").role.doctrine.report_archive_limit
    assert removed == Doctrine().report_archive_limit != 9  # null removes what every layer below gave: the pack's default


def test_a_mistake_in_the_overrides_is_located_there(orgs):
    overrides = write(orgs / "overrides.yaml", {"roles": {"codegen": {"doctrine": {"loop": {"repeat_threshold": "many"}}}}})
    with pytest.raises(DocumentError) as caught:
        resolve(orgs, "codegen")
    assert [(p.path, p.line, p.field) for p in caught.value.problems] == [
        (str(overrides), line_of(overrides, "repeat_threshold"), "doctrine.loop.repeat_threshold")]


# --------------------------------------------------------------------------- at run time


def test_the_agent_runs_the_role_its_cascade_makes(make_session, org_home):
    write(org_home / "overrides.yaml", {"roles": {"codegen": {"doctrine": {"loop": {"repeat_threshold": 5}}}}})
    session = make_session(doctrine={"radio_check_interval_turns": 1})
    session.run(*[fail("code_execution_tool") for _ in range(4)])
    assert "loop" not in [a for _, a in session.anomalies()]  # four times is not a loop any more
    session.run(fail("code_execution_tool"))
    assert (5, "loop") in session.anomalies()


def test_a_chat_in_a_project_runs_with_its_projects_overrides(make_session, org_home):
    write(org_home / "projects" / "shop" / "overrides.yaml", {"roles": {"codegen": {"doctrine": {"loop": {"repeat_threshold": 2}}}}})
    in_project = make_session(doctrine={"radio_check_interval_turns": 1})
    in_project.agent.context.data["project"] = "shop"
    in_project.run(*[fail("code_execution_tool") for _ in range(2)])
    assert [a for _, a in in_project.anomalies()] == ["loop"]
    assert in_project.agent._org_active_role["doctrine"]["loop"]["repeat_threshold"] == 2

    elsewhere = make_session(doctrine={"radio_check_interval_turns": 1})
    elsewhere.run(*[fail("code_execution_tool") for _ in range(2)])
    assert elsewhere.anomalies() == [] and elsewhere.agent._org_active_role["doctrine"]["loop"]["repeat_threshold"] == 3


def test_an_edit_of_the_overrides_applies_within_a_turn(make_session, org_home, monkeypatch):
    from org.kernel import store

    monkeypatch.setattr(store, "RECHECK_SECONDS", 0)
    session = make_session()
    session.run(ok("a", 1))
    assert session.agent._org_active_role["doctrine"]["cooldown_turns"] == 3
    write(org_home / "overrides.yaml", {"every_role": {"doctrine": {"cooldown_turns": 6}}})
    session.run(ok("b", 2))
    assert session.agent._org_active_role["doctrine"]["cooldown_turns"] == 6


# --------------------------------------------------------------------------- validate and explain


def test_validate_checks_every_role_the_overrides_reach(orgs):
    overrides = write(orgs / "overrides.yaml", {"every_role": {"doctrine": {"context_thresholds": {"warning": 0.99}}}})
    # every role's own critical threshold (0.90) is now below the warning every role gets
    roles = sorted(p.stem for p in (orgs / "roles").glob("*.yaml") if "extends" not in p.read_text())
    for paths in ([orgs], [overrides]):
        problems, _ = validate_paths(paths)
        assert sorted(Path(p.path).stem for p in problems) == roles, problems
        assert {(p.field, p.reason) for p in problems} == {("doctrine.context_thresholds.critical", "must not be below warning (0.99)")}


def test_validate_resolves_a_role_that_extends_another(orgs):
    assert validate_paths([orgs / "roles" / "bugfix.yaml"])[0] == []
    child = write(orgs / "roles" / "child.yaml", {"extends": "bugfix", "role_id": "child", "doctrine": {"cooldown_turnz": 1}})
    [problem] = validate_paths([child])[0]
    assert (problem.path, problem.field) == (str(child), "doctrine.cooldown_turnz") and "did you mean 'cooldown_turns'" in problem.reason


def test_explain_names_the_file_and_line_of_every_value(orgs):
    write(orgs / "overrides.yaml", {"roles": {"bugfix": {"doctrine": {"cooldown_turns": 5}}}})
    (orgs / "steering.yaml").write_text('loop_repeat: "[SUPERVISOR] Same call, same result, $times times. Change course."\n')
    result = a0org("explain", "bugfix", "--org-dir", str(orgs))
    assert result.returncode == 0, result.stderr
    out = result.stdout.splitlines()
    assert out[0] == f"role bugfix, organization software_dev, in {orgs}"
    assert out[1] == "layers, lowest first: pack default; roles/codegen.yaml; roles/bugfix.yaml; overrides.yaml (roles.bugfix)"
    rows = {line.split()[0]: line for line in out if line.startswith("  ")}
    assert rows["cooldown_turns"].endswith("5  (overrides.yaml:4)")
    assert rows["max_turns_without_progress"].endswith(f"15  (roles/bugfix.yaml:{line_of(orgs / 'roles' / 'bugfix.yaml', 'max_turns')})")
    assert rows["salute_interval_turns"].endswith(f"(roles/codegen.yaml:{line_of(orgs / 'roles' / 'codegen.yaml', 'salute_interval')})")
    assert rows["heartbeat.stale_after_seconds"].endswith("(pack default)")
    assert rows["loop_repeat:"].endswith("(steering.yaml:1)") and rows["stall:"].endswith("(pack default)")

    as_json = json.loads(a0org("explain", "codegen", "--org-dir", str(orgs), "--project", "shop", "--json").stdout)
    assert as_json["role"] == "codegen" and as_json["project"] == "shop"
    assert {"field": "doctrine.cooldown_turns", "value": 3, "from": f"roles/codegen.yaml:{line_of(orgs / 'roles' / 'codegen.yaml', 'cooldown_turns')}"} in as_json["values"]


def test_explain_of_a_broken_role_says_where_and_fails(orgs):
    write(orgs / "roles" / "a.yaml", {"extends": "a", "role_id": "a"})
    result = a0org("explain", "a", "--org-dir", str(orgs))
    assert result.returncode == 1 and result.stdout == ""
    assert "extends: the chain a -> a goes round in a circle" in result.stderr


def test_a_projects_steering_texts_go_over_the_organizations(make_session, org_home):
    (org_home / "steering.yaml").write_text('loop_repeat: "[SUPERVISOR] Organization wording: $times times."\n')
    project = org_home / "projects" / "shop" / "steering.yaml"
    project.parent.mkdir(parents=True)
    project.write_text('loop_repeat: "[SUPERVISOR] Shop wording: $times times."\n')
    in_project = make_session(doctrine={"radio_check_interval_turns": 1})
    in_project.agent.context.data["project"] = "shop"
    in_project.run(*[fail("code_execution_tool") for _ in range(3)])
    elsewhere = make_session(doctrine={"radio_check_interval_turns": 1})
    elsewhere.run(*[fail("code_execution_tool") for _ in range(3)])
    assert [t for _, a, t in in_project.steering() if a == "loop"] == ["[SUPERVISOR] Shop wording: 3 times."]
    assert [t for _, a, t in elsewhere.steering() if a == "loop"] == ["[SUPERVISOR] Organization wording: 3 times."]

    shown = json.loads(a0org("explain", "codegen", "--org-dir", str(org_home), "--project", "shop", "--json").stdout)
    assert {"key": "loop_repeat", "text": "[SUPERVISOR] Shop wording: $times times.", "from": "projects/shop/steering.yaml:1"} in shown["steering"]


def test_the_xo_judges_a_role_that_extends_another_as_the_kernel_makes_it(orgs):
    from org.macrocosm.roles import RoleBook

    doctrine, plan = RoleBook([orgs / "roles"]).judged("bugfix")
    role = resolve(orgs, "bugfix").role
    assert (doctrine, plan) == (role.doctrine, role.pace_plan) and doctrine.loop.repeat_threshold == 4
