"""Validation errors a person can act on: ``org/kernel/loading.py`` and ``a0org validate``.

Every problem must name the file, the line the mistake is on, the field path (e.g.
``pace_plan.alternate.trigger.any_of[0].metric``) and a useful reason; ``a0org validate``
exits 0 only when every file it checked is valid. The command runs as a real
subprocess (``python -m org validate PATH...`` from the repository root), except in the
one-case-per-mistake table, which calls the same command line in-process
(``org.cli.main``) to spare ~20 interpreter starts.

Also: every shipped YAML names its JSON Schema in a ``yaml-language-server`` modeline
whose relative path resolves to a file in ``schemas/``, and validates against it.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import jsonschema
import pytest
import yaml
from conftest import fail, ok
from pack_commands import a0org

from org.cli import main
from org.contracts import ActiveOrganization, Organization, RoleProfile, SaluteReport
from org.kernel import loading
from org.kernel.loading import DocumentError, Problem
from org.validate import validate_file

ROOT = Path(__file__).resolve().parent.parent
ROLES = ROOT / "roles"
SCHEMAS = ROOT / "schemas"
ROLE_SRC = (ROLES / "codegen.yaml").read_text(encoding="utf-8")
ORG_SRC = (ROLES / "organizations" / "software_dev.yaml").read_text(encoding="utf-8")
MODELINE_RE = re.compile(r"^# yaml-language-server: \$schema=(?P<path>\S+\.schema\.json)\s*$")

SHIPPED_YAML = sorted(ROLES.rglob("*.yaml")) + [ROOT / "org" / "supervisor" / "steering.yaml"]


def line_of(text: str, needle: str) -> int:
    """1-based number of the first line containing ``needle``."""
    for number, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} is not in the text")


def replace(old: str, new: str) -> Callable[[str], str]:
    def change(text: str) -> str:
        assert old in text, f"{old!r} not found"
        return text.replace(old, new, 1)

    return change


def salute_report() -> dict:
    """A valid SALUTE report, as the dispatcher writes it."""
    return {
        "schema_version": 1, "reason": "first",
        "status": {"state": "active", "pace_level": "primary", "health": "nominal"},
        "activity": {"current_task": "general"},
        "location": {"working_directory": "/app"},
        "unit": {"role_id": "codegen", "role_name": "Code Generation Specialist", "role_type": "specialist",
                 "reports_to": "engineering_xo", "organization": "software_dev"},
        "time": {"timestamp": "2026-01-01T00:00:00Z", "turns_elapsed": 1, "turns_since_progress": 0},
        "environment": {"tool_failures_consecutive": 0, "tool_failures_total": 0},
    }


def salute_text(**changes: dict) -> Callable[[str], str]:
    """The report as JSON (indent 2), with sections updated."""
    def make(_: str) -> str:
        data = salute_report()
        for section, values in changes.items():
            if values is None:
                del data[section]
            else:
                data[section] = {**data[section], **values}
        return json.dumps(data, indent=2)

    return make


@dataclass(frozen=True)
class Case:
    name: str
    model: type
    file_name: str
    source: str
    change: Callable[[str], str]
    field: str
    marker: str | None  # text on the line the problem must point at; None: the document's first line
    reason: str
    schema: str | None  # the JSON Schema that must reject the file too (None: not expressible there)


_ALT_SECOND = '- {metric: distinct_failing_tools, comparison: ">=", value: 2}'
_ALT_TRIGGER = """    trigger:
      any_of:
        - {metric: consecutive_tool_failures, comparison: ">=", value: 3}
        - {metric: distinct_failing_tools, comparison: ">=", value: 2}"""
_CONTINGENT_ALL_OF = '            - {metric: context_fill, comparison: ">", value: 0.85}'

CASES = [
    Case("unknown_pace_metric", RoleProfile, "codegen.yaml", ROLE_SRC,
         replace(_ALT_SECOND, _ALT_SECOND.replace("distinct_failing_tools", "failing_vibes")),
         "pace_plan.alternate.trigger.any_of[1].metric", "failing_vibes",
         "got 'failing_vibes' (allowed: consecutive_tool_failures, recent_tool_failures", "role_profile"),
    Case("unknown_pace_metric_first", RoleProfile, "codegen.yaml", ROLE_SRC,
         replace("- {metric: consecutive_tool_failures, comparison: \">=\", value: 3}", "- {metric: tool_failures, comparison: \">=\", value: 3}"),
         "pace_plan.alternate.trigger.any_of[0].metric", "tool_failures,",
         "got 'tool_failures'; did you mean 'recent_tool_failures'? (allowed: consecutive_tool_failures,", "role_profile"),
    Case("unknown_metric_nested_in_all_of", RoleProfile, "codegen.yaml", ROLE_SRC,
         replace(_CONTINGENT_ALL_OF, _CONTINGENT_ALL_OF.replace("context_fill", "context_full")),
         "pace_plan.contingent.trigger.any_of[2].all_of[0].metric", "context_full",
         "got 'context_full'; did you mean 'context_fill'?", "role_profile"),
    Case("unknown_comparison", RoleProfile, "codegen.yaml", ROLE_SRC,
         replace(_ALT_SECOND, _ALT_SECOND.replace('">="', '"=>"')),
         "pace_plan.alternate.trigger.any_of[1].comparison", '"=>"', "got '=>'; did you mean '>='? (allowed: >, >=, <, <=, ==, !=)", "role_profile"),
    Case("condition_without_value", RoleProfile, "codegen.yaml", ROLE_SRC,
         replace(_ALT_SECOND, '- {metric: distinct_failing_tools, comparison: ">="}'),
         "pace_plan.alternate.trigger.any_of[1].value", 'comparison: ">="}', "required field is missing", "role_profile"),
    Case("cooldown_a_word", RoleProfile, "codegen.yaml", ROLE_SRC,
         replace("cooldown_turns: 3 ", 'cooldown_turns: "three" '),
         "doctrine.cooldown_turns", '"three"', "Input should be a valid integer", "role_profile"),
    Case("interval_zero", RoleProfile, "codegen.yaml", ROLE_SRC,
         replace("radio_check_interval_turns: 1", "radio_check_interval_turns: 0"),
         "doctrine.radio_check_interval_turns", "radio_check_interval_turns: 0", "greater than or equal to 1", "role_profile"),
    Case("missing_role_type", RoleProfile, "codegen.yaml", ROLE_SRC, replace("role_type: specialist\n", ""),
         "role_type", None, "required field is missing", "role_profile"),
    Case("missing_pace_plan", RoleProfile, "codegen.yaml", ROLE_SRC, lambda t: t.split("pace_plan:")[0],
         "pace_plan", None, "required field is missing", "role_profile"),
    Case("missing_tier_description", RoleProfile, "codegen.yaml", ROLE_SRC,
         replace('    description: "Write and run the code directly with the primary tools."\n', ""),
         "pace_plan.primary.description", "  primary:", "required field is missing", "role_profile"),
    Case("unknown_doctrine_field", RoleProfile, "codegen.yaml", ROLE_SRC,
         replace("  report_archive_limit: 50\n", "  report_archive_limit: 50\n  radio_check_every: 2\n"),
         "doctrine.radio_check_every", "radio_check_every", "unknown field", "role_profile"),
    Case("unknown_top_level_field", RoleProfile, "codegen.yaml", ROLE_SRC,
         replace("role_type: specialist\n", "role_type: specialist\nrole_kind: coder\n"),
         "role_kind", "role_kind", "unknown field", "role_profile"),
    Case("misspelled_any_of", RoleProfile, "codegen.yaml", ROLE_SRC,
         replace(_ALT_TRIGGER, _ALT_TRIGGER.replace("any_of:", "anyof:")),
         "pace_plan.alternate.trigger", "trigger:", "a trigger is {metric, comparison, value}, {any_of: [...]} or {all_of: [...]}", "role_profile"),
    Case("trigger_a_string", RoleProfile, "codegen.yaml", ROLE_SRC,
         replace(_ALT_TRIGGER, '    trigger: "consecutive_tool_failures >= 3"'),
         "pace_plan.alternate.trigger", "trigger: \"consecutive", "a trigger is {metric, comparison, value}", "role_profile"),
    Case("trigger_a_list", RoleProfile, "codegen.yaml", ROLE_SRC,
         replace(_ALT_TRIGGER, '    trigger: [{metric: consecutive_tool_failures, comparison: ">=", value: 3}]'),
         "pace_plan.alternate.trigger", "trigger: [", "a trigger is {metric, comparison, value}", "role_profile"),
    Case("trigger_any_of_empty", RoleProfile, "codegen.yaml", ROLE_SRC,
         replace(_ALT_TRIGGER, "    trigger:\n      any_of: []"),
         "pace_plan.alternate.trigger.any_of", "any_of: []", "at least 1 item", "role_profile"),
    Case("thresholds_out_of_order", RoleProfile, "codegen.yaml", ROLE_SRC,
         replace("warning: 0.80", "warning: 0.95"),
         "doctrine.context_thresholds.critical", "critical: 0.90", "must not be below warning (0.95)", None),
    Case("threshold_over_one", RoleProfile, "codegen.yaml", ROLE_SRC,
         replace("critical: 0.90", "critical: 90"),
         "doctrine.context_thresholds.critical", "critical: 90", "less than or equal to 1", "role_profile"),
    Case("heartbeat_thresholds_out_of_order", RoleProfile, "codegen.yaml", ROLE_SRC,
         replace("  report_archive_limit: 50\n", "  report_archive_limit: 50\n  heartbeat:\n    stale_after_seconds: 600\n    very_stale_after_seconds: 300\n"),
         "doctrine.heartbeat.very_stale_after_seconds", "very_stale_after_seconds: 300", "must not be below stale_after_seconds (600.0)", None),
    Case("escalation_zero_nudges", RoleProfile, "codegen.yaml", ROLE_SRC,
         replace("  report_archive_limit: 50\n", "  report_archive_limit: 50\n  escalation:\n    pause_after_nudges: 0\n"),
         "doctrine.escalation.pause_after_nudges", "pause_after_nudges: 0", "greater than or equal to 1", "role_profile"),
    Case("escalate_to_with_a_slash", RoleProfile, "codegen.yaml", ROLE_SRC,
         replace("escalate_to: engineering_xo", "escalate_to: engineering/xo"),
         "pace_plan.contingent.escalate_to", "engineering/xo", "String should match pattern", "role_profile"),
    Case("role_id_with_a_slash", RoleProfile, "codegen.yaml", ROLE_SRC,
         replace("role_id: codegen", "role_id: ../codegen"),
         "role_id", "role_id:", "String should match pattern", "role_profile"),
    Case("org_id_with_a_slash", Organization, "software_dev.yaml", ORG_SRC,
         replace("org_id: software_dev", "org_id: software/dev"),
         "org_id", "org_id:", "String should match pattern '^[a-z0-9][a-z0-9_-]{0,63}$'", "organization"),
    Case("org_hierarchy_key_with_a_slash", Organization, "software_dev.yaml", ORG_SRC,
         replace("  ops_xo:\n", "  ops/xo:\n"),
         "hierarchy.ops/xo.[key]", "ops/xo:", "String should match pattern", "organization"),
    Case("org_subordinate_not_an_id", Organization, "software_dev.yaml", ORG_SRC,
         replace("subordinates: [codegen, bugfix]", "subordinates: [codegen, Bug Fix]"),
         "hierarchy.engineering_xo.subordinates[1]", "Bug Fix", "String should match pattern", "organization"),
    Case("org_mode", Organization, "software_dev.yaml", ORG_SRC, replace("mode: microcosm", "mode: galaxy"),
         "mode", "mode: galaxy", "got 'galaxy' (allowed: microcosm, macrocosm)", "organization"),
    Case("org_missing_default_role", Organization, "software_dev.yaml", ORG_SRC, replace("default_role: codegen\n", ""),
         "default_role", None, "required field is missing", "organization"),
    Case("salute_unknown_health", SaluteReport, "codegen_latest.json", "",
         salute_text(status={"health": "fine"}), "status.health", '"health": "fine"',
         "got 'fine' (allowed: nominal, degraded, critical)", "salute_report"),
    Case("salute_negative_turns", SaluteReport, "codegen_latest.json", "",
         salute_text(time={"turns_elapsed": -1}), "time.turns_elapsed", '"turns_elapsed": -1',
         "greater than or equal to 0", "salute_report"),
    Case("salute_bad_timestamp", SaluteReport, "codegen_latest.json", "",
         salute_text(time={"timestamp": "yesterday"}), "time.timestamp", '"yesterday"', "valid datetime", None),
    Case("salute_missing_unit", SaluteReport, "codegen_latest.json", "", salute_text(unit=None),
         "unit", None, "required field is missing", "salute_report"),
    Case("salute_unknown_field", SaluteReport, "codegen_latest.json", "",
         salute_text(environment={"gpu": "A100"}), "environment.gpu", '"gpu"', "unknown field", "salute_report"),
    Case("active_org_id_with_a_slash", ActiveOrganization, "active.json", "",
         lambda _: json.dumps({"schema_version": 1, "org_id": "../software_dev"}, indent=2),
         "org_id", '"org_id"', "String should match pattern", "active_organization"),
]
CASE_IDS = [c.name for c in CASES]


def first_line(text: str) -> int:
    """Where a problem about the whole document (a missing field) points: its first content line."""
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip() and not line.lstrip().startswith("#"):
            return number
    raise AssertionError("empty document")


def write_case(case: Case, folder: Path) -> tuple[Path, str]:
    text = case.change(case.source)
    path = folder / case.file_name
    path.write_text(text, encoding="utf-8")
    return path, text


def expected_line(case: Case, text: str) -> int:
    return line_of(text, case.marker) if case.marker else first_line(text)


def matching(problems: list[Problem], case: Case) -> list[Problem]:
    return [p for p in problems if p.field == case.field]


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_document_errors_name_file_line_field_and_reason(case, tmp_path):
    path, text = write_case(case, tmp_path)
    with pytest.raises(DocumentError) as raised:
        loading.load(case.model, path)
    problems = raised.value.problems
    found = matching(problems, case)
    assert len(found) == 1, f"no single problem for field {case.field!r}: {[str(p) for p in problems]}"
    problem = found[0]
    assert problem.path == str(path)
    assert problem.line == expected_line(case, text), f"{problem} should point at line {expected_line(case, text)}:\n{text}"
    assert case.reason in problem.reason
    assert str(problem) == f"{path}:{problem.line}: {case.field}: {problem.reason}"
    assert len(problems) == 1, f"one mistake, one problem: {[str(p) for p in problems]}"


@pytest.mark.parametrize("case", [c for c in CASES if c.schema], ids=[c.name for c in CASES if c.schema])
def test_the_json_schema_rejects_the_same_mistakes(case, tmp_path):
    """An editor using the modeline's schema flags what ``a0org validate`` flags."""
    _, text = write_case(case, tmp_path)
    data = json.loads(text) if case.file_name.endswith(".json") else yaml.safe_load(text)
    schema = json.loads((SCHEMAS / f"{case.schema}.schema.json").read_text(encoding="utf-8"))
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(data))
    assert errors, f"{case.schema}.schema.json accepts a document a0org validate rejects"


#: a JSON file has no modeline: without "unit" a SALUTE report is not recognised as one
_CLI_CASES = [c for c in CASES if c.name != "salute_missing_unit"]


@pytest.mark.parametrize("case", _CLI_CASES, ids=[c.name for c in _CLI_CASES])
def test_a0org_validate_prints_the_problem_and_fails(case, tmp_path, capsys):
    path, text = write_case(case, tmp_path)
    code = main(["validate", str(path)])
    done = capsys.readouterr()
    assert code == 1, done
    expected = f"{path}:{expected_line(case, text)}: {case.field}: "
    lines = [line for line in done.err.splitlines() if line.startswith(expected)]
    assert len(lines) == 1 and case.reason in lines[0], done.err
    assert done.out.strip().endswith("1 file(s) checked: 1 problem(s)"), done.out


@pytest.mark.parametrize("shape", ["any_of", "all_of"])
def test_a_trigger_mixing_shapes_names_the_stray_field(tmp_path, shape):
    """A trigger mixing shapes, {metric: ..., any_of: [...]}, is validated as any_of; the
    problem names the stray ``metric`` at its line, not the correct ``any_of`` key
    (pydantic's union tags are class names, never mistaken for the data's keys)."""
    text = ROLE_SRC.replace(_ALT_TRIGGER, _ALT_TRIGGER.replace("      any_of:", f"      metric: context_fill\n      {shape}:"))
    path = tmp_path / "codegen.yaml"
    path.write_text(text, encoding="utf-8")
    problems = validate_file(path)
    assert [(p.field, p.line, p.reason.split(" (")[0]) for p in problems] == [
        ("pace_plan.alternate.trigger.metric", line_of(text, "metric: context_fill"), "unknown field")]


def test_the_json_schema_checks_role_ids_used_as_keys():
    """Role ids used as keys of Organization.hierarchy are Identifiers in the JSON Schema
    too (propertyNames): an editor using the modeline rejects 'ops/xo:' as a0org validate does."""
    text = ORG_SRC.replace("  ops_xo:\n", "  ops/xo:\n")
    schema = json.loads((SCHEMAS / "organization.schema.json").read_text(encoding="utf-8"))
    assert list(jsonschema.Draft202012Validator(schema).iter_errors(yaml.safe_load(text)))


# ---- cross-field rules are reported at the field they are about, with its line

_ROUTING_TO_UNKNOWN_ROLE = replace("research: [research]", "research: [researcher]")


@pytest.mark.parametrize("source,change,field,marker,reason", [
    (ORG_SRC, replace("default_role: codegen", "default_role: frontend"), "default_role", "default_role: frontend",
     "'frontend' is not in the hierarchy"),
    (ORG_SRC, _ROUTING_TO_UNKNOWN_ROLE, "domain_routing.research[0]", "research: [researcher]",
     "'research' routes to 'researcher', which is not in the hierarchy"),
    (ROLE_SRC, replace(_ALT_TRIGGER + "\n", ""), "pace_plan.alternate.trigger", "  alternate:", "required field is missing"),
    (ROLE_SRC, replace('    action: normal_execution\n', '    action: normal_execution\n    trigger: {metric: context_fill, comparison: ">", value: 0.5}\n'),
     "pace_plan.primary.trigger", "value: 0.5", "Input should be None"),
], ids=["default_role_not_in_hierarchy", "routing_to_unknown_role_at_the_entry",
        "tier_without_trigger", "primary_with_trigger"])
def test_cross_field_rules_point_at_the_field_and_its_line(tmp_path, source, change, field, marker, reason):
    """Rules relating two fields (the default role and the routing against the hierarchy, a
    trigger required above primary and refused on it) are reported at the field they are
    about, on its line, with pydantic's "Value error, " prefix stripped from the reason."""
    model = Organization if source is ORG_SRC else RoleProfile
    text = change(source)
    path = tmp_path / ("software_dev.yaml" if model is Organization else "codegen.yaml")
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DocumentError) as raised:
        loading.load(model, path)
    problems = [(p.field, p.line, p.reason) for p in raised.value.problems]
    assert problems == [(field, line_of(text, marker), reason)], problems


def test_cross_field_rules_are_still_reported_with_a_useful_reason(tmp_path):
    path = tmp_path / "software_dev.yaml"
    text = ORG_SRC.replace("default_role: codegen", "default_role: frontend")
    path.write_text(text, encoding="utf-8")
    problems = validate_file(path)
    assert len(problems) == 1 and problems[0].path == str(path)
    assert str(problems[0]) == f"{path}:{line_of(text, 'default_role: frontend')}: default_role: 'frontend' is not in the hierarchy"


# ---- what YAML turns into something else

@pytest.mark.parametrize("old,new,field,reason", [
    ("cooldown_turns: 3 ", "cooldown_turns: true ", "doctrine.cooldown_turns", "Input should be a valid integer"),
    ("radio_check_interval_turns: 1", "radio_check_interval_turns: yes", "doctrine.radio_check_interval_turns",
     "Input should be a valid integer"),
    ("schema_version: 1", "schema_version: true", "schema_version", "must be the number 1, not a boolean"),
], ids=["cooldown_true", "interval_yes", "schema_version_true"])
def test_a_boolean_is_not_an_integer(tmp_path, old, new, field, reason):
    """The contracts are strict, as their JSON Schemas: YAML's true/yes is not the number 1."""
    path = tmp_path / "codegen.yaml"
    path.write_text(replace(old, new)(ROLE_SRC), encoding="utf-8")
    problems = validate_file(path)
    assert [(p.field, p.line, p.reason) for p in problems] == [(field, line_of(path.read_text(), new.strip()), reason)], problems


def test_numeric_text_is_not_an_integer(tmp_path):
    """Strict contracts: the text "3" is not the number 3."""
    path = tmp_path / "codegen.yaml"
    new = 'cooldown_turns: "3"'
    path.write_text(replace("cooldown_turns: 3 ", new + " ")(ROLE_SRC), encoding="utf-8")
    problems = validate_file(path)
    line = line_of(path.read_text(), new)
    assert [str(p) for p in problems] == [f"{path}:{line}: doctrine.cooldown_turns: Input should be a valid integer"]


def test_tab_indented_json_problems_have_line_numbers(tmp_path):
    """Tab-indented JSON (valid JSON, not valid YAML) still gets line numbers in its problems."""
    data = salute_report()
    data["status"]["health"] = "fine"
    text = json.dumps(data, indent="\t")
    path = tmp_path / "codegen_latest.json"
    path.write_text(text, encoding="utf-8")
    problems = validate_file(path)
    assert [(p.field, p.line) for p in problems] == [("status.health", line_of(text, '"health": "fine"'))]


def test_tab_indented_json_is_json(tmp_path):
    path = tmp_path / "active.json"
    path.write_text(json.dumps({"schema_version": 1, "org_id": "software_dev"}, indent="\t"), encoding="utf-8")
    assert validate_file(path) == []
    assert loading.load(ActiveOrganization, path).org_id == "software_dev"


@pytest.mark.parametrize("text,reason", [
    ("role_id: [codegen\n", "not valid YAML"),
    ("a: b\n  c: d\n", "not valid YAML"),
    ("!!python/object/apply:os.system [\"true\"]\n", "not valid YAML"),
], ids=["unclosed_list", "bad_indentation", "python_tag"])
def test_yaml_syntax_errors_name_the_line(tmp_path, text, reason):
    path = tmp_path / "codegen.yaml"
    path.write_text("# yaml-language-server: $schema=../schemas/role_profile.schema.json\n" + text, encoding="utf-8")
    problems = validate_file(path)
    assert len(problems) == 1 and problems[0].path == str(path)
    assert reason in problems[0].reason
    assert problems[0].line is not None and 2 <= problems[0].line <= 3


def test_json_syntax_errors_name_the_line(tmp_path):
    path = tmp_path / "active.json"
    path.write_text('{\n  "schema_version": 1,\n  "org_id": "software_dev",\n}\n', encoding="utf-8")
    problems = validate_file(path)
    assert len(problems) == 1 and "not valid JSON" in problems[0].reason
    assert problems[0].line == 4


@pytest.mark.parametrize("content,reason", [
    (b"", "the file is empty"),
    (b"# only a comment\n", "the file is empty"),
    (b"role_id: c\xf6degen\n", "not UTF-8"),
    (b"x" * (loading.MAX_DOCUMENT_BYTES + 1), f"over the {loading.MAX_DOCUMENT_BYTES}-byte limit"),
], ids=["empty", "comment_only", "latin1", "over_size_limit"])
def test_unreadable_documents(tmp_path, content, reason):
    path = tmp_path / "codegen.yaml"
    path.write_bytes(content)
    with pytest.raises(DocumentError) as raised:
        loading.load(RoleProfile, path)
    assert [p.path for p in raised.value.problems] == [str(path)]
    assert reason in raised.value.problems[0].reason


# =========================================================================== a0org validate


def copy_roles(target: Path) -> Path:
    shutil.copytree(ROLES, target)
    return target


def test_shipped_roles_validate_cleanly():
    expected = len([p for p in ROLES.rglob("*") if p.suffix in (".yaml", ".yml", ".json")])
    done = a0org("validate", "roles")
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert done.stdout.strip() == f"{expected} file(s) checked: valid"


def test_every_shipped_file_validates_one_by_one():
    for path in SHIPPED_YAML:
        assert validate_file(path) == [], path


def test_folder_of_good_files_exits_zero(tmp_path):
    folder = copy_roles(tmp_path / "roles")
    (folder / "codegen_latest.json").write_text(json.dumps(salute_report(), indent=2), encoding="utf-8")
    (folder / "active.json").write_text('{"schema_version": 1, "org_id": "software_dev"}', encoding="utf-8")
    done = a0org("validate", folder)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"{len(list(ROLES.rglob('*.yaml'))) + 2} file(s) checked: valid"


def test_machine_written_state_is_not_validated_at_any_depth(tmp_path):
    folder = copy_roles(tmp_path / "organizations")
    for state in ("supervisors/usage.json", "knowledge/_review/R1.json", "knowledge/_review/done/R2.json"):
        (folder / state).parent.mkdir(parents=True, exist_ok=True)
        (folder / state).write_text('{"not": "a document"}', encoding="utf-8")
    done = a0org("validate", folder)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"{len(list(ROLES.rglob('*.yaml')))} file(s) checked: valid"


def test_folder_with_one_bad_file_among_good_ones_exits_one(tmp_path):
    folder = copy_roles(tmp_path / "roles")
    bad = folder / "organizations" / "software_dev.yaml"
    bad.write_text(ORG_SRC.replace("mode: microcosm", "mode: galaxy"), encoding="utf-8")
    done = a0org("validate", folder)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [f"{bad}:{line_of(bad.read_text(), 'mode:')}: mode: got 'galaxy' (allowed: microcosm, macrocosm)"]
    assert done.stdout.strip() == f"{len(list(ROLES.rglob('*.yaml')))} file(s) checked: 1 problem(s)"


def test_good_and_bad_files_given_one_by_one(tmp_path):
    good = ROLES / "codegen.yaml"
    bad = tmp_path / "bugfix.yaml"
    bad.write_text(ROLE_SRC.replace("role_type: specialist", "role_type: wizard"), encoding="utf-8")
    assert a0org("validate", good).returncode == 0
    done = a0org("validate", good, bad)
    assert done.returncode == 1
    assert all(line.startswith(f"{bad}:") for line in done.stderr.splitlines()), done.stderr
    assert "2 file(s) checked: 1 problem(s)" in done.stdout


def test_nonexistent_path_exits_one_and_names_it(tmp_path):
    missing = tmp_path / "no_such_role.yaml"
    done = a0org("validate", ROLES / "codegen.yaml", missing)
    assert done.returncode == 1
    assert f"{missing}: (document): no such file or folder" in done.stderr
    only_missing = a0org("validate", missing)
    assert only_missing.returncode == 1 and "0 file(s) checked" in only_missing.stdout


def test_empty_folder_is_not_a_success(tmp_path):
    done = a0org("validate", tmp_path)
    assert done.returncode == 1
    assert done.stdout.strip() == "0 file(s) checked: valid"


def test_a_file_of_unknown_kind_is_a_problem(tmp_path):
    path = tmp_path / "notes.yaml"
    path.write_text("shopping: [milk, eggs]\n", encoding="utf-8")
    done = a0org("validate", path)
    assert done.returncode == 1
    assert f"{path}: (document): cannot tell what this file is" in done.stderr


def test_modeline_decides_the_kind(tmp_path):
    """A role without its modeline but with its keys is still found to be a role; a
    modeline naming the organization schema makes the same text an invalid organization."""
    without = tmp_path / "codegen.yaml"
    without.write_text(ROLE_SRC.split("\n", 1)[1], encoding="utf-8")
    assert validate_file(without) == []
    wrong = tmp_path / "coder.yaml"
    wrong.write_text(ROLE_SRC.replace("role_profile.schema.json", "organization.schema.json"), encoding="utf-8")
    problems = validate_file(wrong)
    assert any(p.field == "role_id" and "unknown field" in p.reason for p in problems), problems


def test_deeply_nested_file_is_a_problem_not_a_crash(tmp_path):
    deep = tmp_path / "deep.yaml"
    deep.write_text("# yaml-language-server: $schema=../schemas/role_profile.schema.json\nnotes: " + "[" * 3000 + "]" * 3000 + "\n",
                    encoding="utf-8")
    good = tmp_path / "codegen.yaml"
    good.write_text(ROLE_SRC, encoding="utf-8")
    done = a0org("validate", tmp_path)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 1
    assert done.stderr.splitlines()[0].startswith(f"{deep}")
    assert "2 file(s) checked: 1 problem(s)" in done.stdout


def test_alias_bomb_is_rejected_quickly(tmp_path):
    bomb = "\n".join(["# yaml-language-server: $schema=../schemas/role_profile.schema.json", "a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
                     + [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]) + "\n"
    path = tmp_path / "bomb.yaml"
    path.write_text(bomb, encoding="utf-8")
    try:
        done = a0org("validate", path, timeout=30)
    except subprocess.TimeoutExpired:
        pytest.fail("a0org validate did not finish a 700-byte file in 30 s")
    assert done.returncode == 1 and "unknown field" in done.stderr


def test_reports_written_by_a_real_session_validate(make_session, org_home):
    """The organization folder after a session: active.json, the organization, the
    roles, the SALUTE reports and their archive (some rewritten by the supervisor)."""
    session = make_session(doctrine={"radio_check_interval_turns": 1, "salute_interval_turns": 1})
    session.run(ok("t", 1), fail("code_execution_tool"), fail("text_editor", output="PermissionError: denied"),
                fail("browser_agent", output="ConnectionError: refused"))  # a cascade: the supervisor raises health
    reports = list((org_home / "reports").rglob("*.json"))
    assert len(reports) >= 3
    assert any(json.loads(p.read_text())["status"]["health_source"] == "supervisor" for p in reports)
    done = a0org("validate", org_home)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("file(s) checked: valid")


# ---- steering overrides

@pytest.mark.parametrize("text,reason", [
    ("[SUPERVISOR] Loop on $secret.", "unknown placeholder(s) $secret; allowed: $action, $advice, $outcome, $times, $tool"),
    ("[SUPERVISOR] One. Two. Three. Four.", "has 4 sentences; steering is at most 3"),
], ids=["unknown_placeholder", "four_sentences"])
def test_validate_rejects_steering_the_supervisor_would_refuse(tmp_path, text, reason):
    """a0org validate checks a steering override by the supervisor's own rules
    (org/supervisor/steering.py check_template), not only the [SUPERVISOR] prefix: what the
    supervisor would refuse at run time is reported at the key, with the same reason."""
    from org.supervisor.steering import check_template

    assert check_template("loop_repeat", text) == reason  # the supervisor refuses it
    path = tmp_path / "steering.yaml"
    path.write_text(f'# yaml-language-server: $schema=../schemas/steering.schema.json\nloop_repeat: "{text}"\n', encoding="utf-8")
    problems = validate_file(path)
    assert [str(p) for p in problems] == [f"{path}:2: loop_repeat: {reason}"]


def test_validate_rejects_steering_without_the_tag(tmp_path):
    path = tmp_path / "steering.yaml"
    path.write_text('# yaml-language-server: $schema=../schemas/steering.schema.json\nstall: "[SUPERVISOR] ok."\ncascade: "Cascade."\n',
                    encoding="utf-8")
    problems = validate_file(path)
    assert [(p.field, p.line) for p in problems] == [("cascade", 3)]
    assert "[SUPERVISOR]" in problems[0].reason or "pattern" in problems[0].reason


# =========================================================================== modelines and JSON Schemas


def modeline_schema(path: Path) -> Path:
    first = path.read_text(encoding="utf-8").splitlines()[0]
    match = MODELINE_RE.match(first)
    assert match, f"{path}: the first line is not a '# yaml-language-server: $schema=...' modeline: {first!r}"
    return (path.parent / match["path"]).resolve()


def expected_schema(path: Path) -> str:
    if path.name == "supervisors.example.yaml":
        return "supervisors_config.schema.json"
    if path.parent.name == "organizations":
        return "organization.schema.json"
    if path.name == "steering.yaml":
        return "steering.schema.json"
    if "extends" in yaml.safe_load(path.read_text(encoding="utf-8")):
        return "role_layer.schema.json"  # a role that gives only what differs from the one it extends
    return "role_profile.schema.json"


@pytest.mark.parametrize("path", SHIPPED_YAML, ids=[str(p.relative_to(ROOT)) for p in SHIPPED_YAML])
def test_shipped_yaml_modeline_resolves_to_its_schema(path):
    schema = modeline_schema(path)
    assert schema.is_file(), f"{path}: the modeline points at {schema}, which does not exist"
    assert schema.parent == SCHEMAS.resolve(), f"{path}: the modeline points outside schemas/: {schema}"
    assert schema.name == expected_schema(path)


@pytest.mark.parametrize("path", SHIPPED_YAML, ids=[str(p.relative_to(ROOT)) for p in SHIPPED_YAML])
def test_shipped_yaml_validates_against_its_json_schema(path):
    schema = json.loads(modeline_schema(path).read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
    errors = [f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(data)]
    assert errors == []


def test_modeline_check_can_fail(tmp_path):
    """The modeline check rejects a missing modeline and one pointing nowhere."""
    nowhere = tmp_path / "roles" / "x.yaml"
    nowhere.parent.mkdir()
    nowhere.write_text("# yaml-language-server: $schema=../schemas/nothing.schema.json\nrole_id: x\n", encoding="utf-8")
    assert not modeline_schema(nowhere).is_file()
    missing = tmp_path / "y.yaml"
    missing.write_text("role_id: y\n", encoding="utf-8")
    with pytest.raises(AssertionError):
        modeline_schema(missing)


@pytest.mark.parametrize("old,new,expected", [
    ("metric: consecutive_tool_failures", "metric: consecutive_tool_failure",
     "got 'consecutive_tool_failure'; did you mean 'consecutive_tool_failures'? (allowed: consecutive_tool_failures, "),
    ("role_type: specialist", "role_type: specialst", "got 'specialst'; did you mean 'specialist'? (allowed: commander, executive, specialist)"),
    ("  cooldown_turns:", "  cooldown_turn:", "unknown field; did you mean 'cooldown_turns'?"),
], ids=["metric", "role_type", "field"])
def test_a_misspelling_is_quoted_with_the_nearest_allowed_name(tmp_path, old, new, expected):
    path = tmp_path / "codegen.yaml"
    path.write_text(ROLE_SRC.replace(old, new, 1), encoding="utf-8")
    [problem] = validate_file(path)
    assert problem.line == line_of(path.read_text(), new.strip()) and problem.reason.startswith(expected), problem


def test_a_role_whose_id_differs_from_its_file_name_is_refused_as_at_run_time(tmp_path):
    """The kernel finds a role by its file name and skips one whose role_id differs:
    validate reports that file at the role_id line instead of calling it valid."""
    folder = copy_roles(tmp_path / "organizations")
    bugfix = folder / "bugfix.yaml"
    text = bugfix.read_text(encoding="utf-8").replace("role_id: bugfix", "role_id: bug_fix")
    bugfix.write_text(text, encoding="utf-8")
    done = a0org("validate", folder)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"{bugfix}:{line_of(text, 'role_id:')}: role_id: is 'bug_fix' but the file is named for 'bugfix'; rename one of them so they agree"]


def test_an_organization_whose_id_differs_from_its_file_name_is_refused(tmp_path):
    path = tmp_path / "software.yaml"
    path.write_text(ORG_SRC, encoding="utf-8")
    assert [(p.field, p.line) for p in validate_file(path)] == [("org_id", line_of(ORG_SRC, "org_id:"))]


@pytest.mark.parametrize("folder", ["organizations", "xo"])
def test_steering_yaml_is_known_by_its_name_without_a_modeline(tmp_path, folder):
    """A misspelt key in steering.yaml is reported as such, not as a file of unknown kind."""
    path = tmp_path / folder / "steering.yaml"
    path.parent.mkdir()
    path.write_text('stal: "[SUPERVISOR] Progress has stopped."\n', encoding="utf-8")
    problems = validate_file(path)
    assert [(p.field, p.line) for p in problems] == [("stal", 1)], problems
    assert "cannot tell" not in problems[0].reason


def test_a_file_in_roles_is_a_role_even_with_its_id_misspelt(tmp_path):
    path = tmp_path / "roles" / "codegen.yaml"
    path.parent.mkdir()
    path.write_text(ROLE_SRC.split("\n", 1)[1].replace("role_id:", "roleid:"), encoding="utf-8")
    fields = {p.field for p in validate_file(path)}
    assert {"role_id", "roleid"} <= fields, fields
