"""Fault tests, source: the files a person edits (``active.json``, the organization file,
the role doctrines).

The promise under test and the shared stand-ins: ``tests/fault_kit.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Callable

import pytest
import yaml
from conftest import ROOT
from fault_kit import (
    LOOP_TEXT,
    MISSING_FILE,
    TOOL,
    Driver,
    a0org_messages,
    active_file,
    assert_active,
    assert_inactive,
    assert_logged_once,
    assert_no_catch_all,
    assert_no_duplicate_messages,
    line_of,
    org_file,
    report,
    role_file,
)

from org.kernel.loading import MAX_DOCUMENT_BYTES
from org.kernel.paths import ENV_HOME
from org.supervisor.microcosm import STATE_KEY

pytestmark = pytest.mark.usefixtures("fresh_store")


# =========================================================================== active.json

VALID_ACTIVE = '{"schema_version": 1, "org_id": "replay"}\n'

#: name -> (content of active.json, fragments the log message must contain)
ACTIVE_FAULTS: dict[str, tuple[str | bytes, list[str]]] = {
    "empty": ("", ["the file is empty"]),
    "blank": ("  \n\n", ["the file is empty"]),
    "not_json": ('{"org_id": "replay"', ["not valid JSON"]),
    "json_list": ('["replay"]', ["(document)", "valid dictionary"]),
    "json_number": ("42", ["(document)", "valid dictionary"]),
    "org_id_int": ('{"org_id": 5}', ["org_id", "valid string"]),
    "org_id_negative": ('{"org_id": -1}', ["org_id", "valid string"]),
    "org_id_nan": ('{"org_id": NaN}', ["org_id", "valid string"]),
    "yaml_not_json": ("org_id: replay\n", ["not valid JSON"]),
    "org_id_bool": ('{"org_id": true}', ["org_id", "valid string"]),
    "org_id_null": ('{"org_id": null}', ["org_id", "valid string"]),
    "org_id_nested": ('{"org_id": {"id": ["replay", {"x": null}]}}', ["org_id", "valid string"]),
    "org_id_missing": ('{"schema_version": 1}', ["org_id", "required field is missing"]),
    "org_id_traversal": ('{"org_id": "../replay"}', ["org_id", "should match pattern"]),
    "org_id_subfolder": ('{"org_id": "roles/codegen"}', ["org_id", "should match pattern"]),
    "org_id_absolute": ('{"org_id": "/etc/passwd"}', ["org_id", "should match pattern"]),
    "org_id_huge": ('{"org_id": "' + "a" * 100_000 + '"}', ["org_id", "should match pattern"]),
    "names_missing_org": ('{"org_id": "ghost"}', ["org_id", "names 'ghost'", "does not exist"]),
    "schema_version": ('{"schema_version": 2, "org_id": "replay"}', ["schema_version", "Input should be 1"]),
    "activated_at": ('{"org_id": "replay", "activated_at": "last tuesday"}', ["activated_at"]),
    "unknown_key": ('{"org_id": "replay", "org": "replay"}', ["org", "unknown field"]),
    "over_size_limit": ('{"org_id": "replay"}' + " " * (MAX_DOCUMENT_BYTES + 10), [f"over the {MAX_DOCUMENT_BYTES}-byte limit"]),
    "not_utf8": (b'{"org_id": "repl\xff\xfeay"}', ["not UTF-8"]),
    "python_tag": ('!!python/object/apply:os.system ["echo pwned"]', ["not valid JSON"]),
}


@pytest.mark.parametrize("case", sorted(ACTIVE_FAULTS))
def test_broken_active_json_keeps_the_pack_off_logs_once_and_recovers(home, caplog, case):
    content, fragments = ACTIVE_FAULTS[case]
    path = active_file(home)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    driver = Driver()
    for _ in range(2):
        driver.fail(2)
    assert_inactive(driver.agent)
    assert driver.agent.warnings() == []
    assert STATE_KEY not in driver.agent.data
    assert_logged_once(caplog, str(path), *fragments)
    assert_no_catch_all(caplog)
    assert_no_duplicate_messages(caplog)
    # the user fixes the file: the next turn runs with the organization
    path.write_text(VALID_ACTIVE, encoding="utf-8")
    driver.turn()
    assert_active(driver.agent)
    assert report(home).unit.organization == "replay"


def test_active_json_as_a_directory(home, caplog):
    path = active_file(home)
    path.unlink()
    path.mkdir()
    driver = Driver()
    driver.fail(4)
    assert_inactive(driver.agent)
    assert_logged_once(caplog, str(path), "cannot read")
    assert_no_catch_all(caplog)
    path.rmdir()
    path.write_text(VALID_ACTIVE, encoding="utf-8")
    driver.turn()
    assert_active(driver.agent)


def test_missing_active_json_switches_off_silently_and_back_on(home, caplog):
    driver = Driver()
    driver.turn()
    assert_active(driver.agent)
    active_file(home).unlink()
    warnings = driver.fail(4)
    assert_inactive(driver.agent)  # the attributes set on the first turn are cleared
    assert warnings == []
    assert a0org_messages(caplog) == []  # no organization is not a problem
    active_file(home).write_text(VALID_ACTIVE, encoding="utf-8")
    driver.turn()
    assert_active(driver.agent)


def test_active_json_broken_mid_session_deactivates_every_reader(home, caplog):
    driver = Driver()
    driver.fail(1)
    assert_active(driver.agent)
    supervisor_turn = driver.agent.data[STATE_KEY]["turn"]
    active_file(home).write_text("[", encoding="utf-8")
    assert driver.fail(3) == []  # a loop, but nobody is watching: no steering
    assert_inactive(driver.agent)
    assert driver.agent.data[STATE_KEY]["turn"] == supervisor_turn  # the supervisor did not run
    assert_logged_once(caplog, str(active_file(home)), "not valid JSON")


def test_tab_indented_active_json_is_valid_json(home, caplog):
    """Regression: JSON was read with the YAML parser, which refuses tabs."""
    active_file(home).write_text(json.dumps({"schema_version": 1, "org_id": "replay"}, indent="\t"), encoding="utf-8")
    driver = Driver()
    driver.turn()
    assert a0org_messages(caplog) == []
    assert_active(driver.agent)


def test_python_tags_in_active_json_are_not_executed(home, tmp_path):
    marker = tmp_path / "pwned"
    active_file(home).write_text(f'!!python/object/apply:os.system ["touch {marker}"]', encoding="utf-8")
    Driver().turn()
    assert not marker.exists()


# =========================================================================== organization and role files


def _org_data(home: Path) -> dict:
    return yaml.safe_load(org_file(home).read_text(encoding="utf-8"))


def _dump(data: Any) -> str:
    return yaml.safe_dump(data, sort_keys=False)


def _org_with(**changes: Any) -> Callable[[Path], str]:
    def make(home: Path) -> str:
        data = _org_data(home)
        data.update(changes)
        return _dump(data)

    return make


#: name -> (new text of the organization file, fragments of the log message);
#: cases listed in ORG_FAULT_LINES must also name the line the mistake is on
ORG_FAULTS: dict[str, tuple[Callable[[Path], str | bytes], list[str]]] = {
    "broken_yaml": (lambda h: "org_id: replay\nhierarchy: [codegen\n", ["not valid YAML"]),
    "empty": (lambda h: "", ["the file is empty"]),
    "a_list": (lambda h: "- codegen\n- bugfix\n", ["(document)", "valid dictionary"]),
    "default_role_not_in_hierarchy": (_org_with(default_role="ghost"), ["default_role: 'ghost' is not in the hierarchy"]),
    "routing_to_unknown_role": (_org_with(domain_routing={"coding": ["ghost"]}),
                                ["domain_routing.coding[0]: 'coding' routes to 'ghost', which is not in the hierarchy"]),
    "hierarchy_empty": (_org_with(hierarchy={}), ["hierarchy", "at least 1 item"]),
    "hierarchy_a_list": (_org_with(hierarchy=["codegen"]), ["hierarchy", "valid dictionary"]),
    "hierarchy_role_with_slash": (_org_with(hierarchy={"../codegen": {"subordinates": []}}), ["hierarchy", "should match pattern"]),
    "subordinates_nested_garbage": (_org_with(hierarchy={"codegen": {"subordinates": [{"a": [1]}]}}), ["hierarchy.codegen.subordinates[0]", "valid string"]),
    "unknown_field": (_org_with(commander="co"), ["commander", "unknown field"]),
    "mode": (_org_with(mode="galaxy"), ["mode", "got 'galaxy' (allowed: microcosm, macrocosm)"]),
    "org_name_int": (_org_with(org_name=7), ["org_name", "valid string"]),
    "schema_version_2": (_org_with(schema_version=2), ["schema_version", "Input should be 1"]),
    "not_utf8": (lambda h: b"org_id: r\xe9play\n", ["not UTF-8"]),
    "over_size_limit": (lambda h: "#" * (MAX_DOCUMENT_BYTES + 1), [f"over the {MAX_DOCUMENT_BYTES}-byte limit"]),
}
#: name -> text on the line the problem must point at (cross-field rules are reported at their field)
ORG_FAULT_LINES: dict[str, str] = {
    "default_role_not_in_hierarchy": "default_role: ghost",
    "routing_to_unknown_role": "- ghost",
}


@pytest.mark.parametrize("case", sorted(ORG_FAULTS))
def test_broken_organization_file_keeps_the_pack_off_logs_once_and_recovers(home, caplog, case):
    make, fragments = ORG_FAULTS[case]
    path = org_file(home)
    good = path.read_text(encoding="utf-8")
    content = make(home)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    driver = Driver()
    driver.fail(4)
    assert_inactive(driver.agent)
    assert driver.agent.warnings() == []
    marker = ORG_FAULT_LINES.get(case)
    where = f"{path}:{line_of(content, marker)}: " if marker else str(path)
    assert_logged_once(caplog, where, *fragments)
    assert_no_catch_all(caplog)
    assert_no_duplicate_messages(caplog)
    path.write_text(good, encoding="utf-8")
    driver.turn()
    assert_active(driver.agent)


def test_organization_file_is_a_directory(home, caplog):
    path = org_file(home)
    path.unlink()
    path.mkdir()
    driver = Driver()
    driver.fail(3)
    assert_inactive(driver.agent)
    assert_logged_once(caplog, str(path), "cannot read")
    assert_no_catch_all(caplog)


def test_organizations_folder_missing_means_off_and_no_folder_created(tmp_path, monkeypatch, caplog):
    missing = tmp_path / "no" / "organizations"
    monkeypatch.setenv(ENV_HOME, str(missing))
    driver = Driver()
    assert driver.fail(4) == []
    assert_inactive(driver.agent)
    assert a0org_messages(caplog) == []
    assert not missing.exists() and not (tmp_path / "no").exists()


def test_organizations_folder_is_a_file(tmp_path, monkeypatch, caplog):
    not_a_folder = tmp_path / "organizations"
    not_a_folder.write_text("I am a file", encoding="utf-8")
    monkeypatch.setenv(ENV_HOME, str(not_a_folder))
    driver = Driver()
    assert driver.fail(3) == []
    assert_inactive(driver.agent)
    assert_no_catch_all(caplog)
    assert not_a_folder.read_text(encoding="utf-8") == "I am a file"


def test_organizations_folder_removed_mid_session(home, caplog):
    driver = Driver()
    driver.turn()
    assert_active(driver.agent)
    moved = home.with_name("moved-away")
    home.rename(moved)
    assert driver.fail(3) == []
    assert_inactive(driver.agent)
    assert_no_catch_all(caplog)
    moved.rename(home)
    driver.turn()
    assert_active(driver.agent)


def _role_text(home: Path, role: str = "codegen") -> str:
    return role_file(home, role).read_text(encoding="utf-8")


def _replace(old: str, new: str) -> Callable[[str], str]:
    def change(text: str) -> str:
        assert old in text, old
        return text.replace(old, new, 1)

    return change


_ALTERNATE_SECOND_CONDITION = '- {metric: distinct_failing_tools, comparison: ">=", value: 2}'

#: name -> (change to the default role's text, fragments of the problem, line marker or None)
ROLE_FAULTS: dict[str, tuple[Callable[[str], str], list[str], str | None]] = {
    "broken_yaml": (lambda t: t + "\n  broken: [\n", ["not valid YAML"], None),
    "unknown_pace_metric": (
        _replace(_ALTERNATE_SECOND_CONDITION, _ALTERNATE_SECOND_CONDITION.replace("distinct_failing_tools", "failing_vibes")),
        ["pace_plan.alternate.trigger.any_of[1].metric", "got 'failing_vibes' (allowed: consecutive_tool_failures,"], "failing_vibes"),
    "cooldown_a_word": (_replace("cooldown_turns: 3", "cooldown_turns: three"), ["doctrine.cooldown_turns", "valid integer"], "cooldown_turns"),
    "interval_negative": (_replace("radio_check_interval_turns: 1", "radio_check_interval_turns: -1"),
                          ["doctrine.radio_check_interval_turns", "greater than or equal to 1"], "radio_check_interval_turns"),
    "interval_nan": (_replace("radio_check_interval_turns: 1", "radio_check_interval_turns: .nan"),
                     ["doctrine.radio_check_interval_turns"], "radio_check_interval_turns"),
    "interval_huge_float": (_replace("radio_check_interval_turns: 1", "radio_check_interval_turns: 1.0e+400"),
                            ["doctrine.radio_check_interval_turns"], "radio_check_interval_turns"),
    "thresholds_out_of_order": (_replace("warning: 0.80", "warning: 0.95"),
                                ["doctrine.context_thresholds.critical: must not be below warning (0.95)"], "critical: 0.90"),
    "threshold_over_one": (_replace("critical: 0.90", "critical: 9.0"), ["doctrine.context_thresholds.critical", "less than or equal to 1"], "critical: 9.0"),
    "missing_role_type": (_replace("role_type: specialist\n", ""), ["role_type", "required field is missing"], None),
    "unknown_field": (_replace("  report_archive_limit: 50\n", "  report_archive_limit: 50\n  radio_check_every: 2\n"),
                      ["doctrine.radio_check_every", "unknown field"], "radio_check_every"),
    "trigger_a_string": (_replace("""    trigger:
      any_of:
        - {metric: consecutive_tool_failures, comparison: ">=", value: 3}
        - {metric: distinct_failing_tools, comparison: ">=", value: 2}""", '    trigger: "consecutive_tool_failures >= 3"'),
                         ["pace_plan.alternate.trigger", "a trigger is {metric, comparison, value}"], "consecutive_tool_failures >= 3"),
    "pace_plan_nested_garbage": (lambda t: t.split("pace_plan:")[0] + "pace_plan: [[{}], {a: [null]}]\n", ["pace_plan", "valid dictionary"], "pace_plan:"),
    "empty": (lambda t: "", ["the file is empty"], None),
    "not_a_mapping": (lambda t: "just a sentence about the role\n", ["(document)", "valid dictionary"], None),
}


@pytest.mark.parametrize("case", sorted(ROLE_FAULTS))
def test_broken_default_role_keeps_the_pack_off_logs_once_and_recovers(home, caplog, case):
    change, fragments, marker = ROLE_FAULTS[case]
    path = role_file(home)
    good = _role_text(home)
    broken = change(good)
    path.write_text(broken, encoding="utf-8")
    driver = Driver()
    driver.fail(4)
    assert_inactive(driver.agent)
    assert driver.agent.warnings() == []
    where = f"{path}:{line_of(broken, marker)}: " if marker else str(path)
    # codegen is skipped, with bugfix when the mistake is in what bugfix takes from codegen
    assert_logged_once(caplog, where, *fragments, "'codegen'", "skipped until this is fixed")
    assert_logged_once(caplog, str(org_file(home)), "default_role", "'codegen' could not be loaded")
    assert_no_catch_all(caplog)
    assert_no_duplicate_messages(caplog)
    path.write_text(good, encoding="utf-8")
    driver.turn()
    assert_active(driver.agent)


def test_default_role_file_missing(home, caplog):
    path = role_file(home)
    path.unlink()
    driver = Driver()
    driver.fail(3)
    assert_inactive(driver.agent)
    assert_logged_once(caplog, str(path), "cannot read", "role 'codegen' is skipped")
    assert_logged_once(caplog, "default_role", "'codegen' could not be loaded")
    assert_no_catch_all(caplog)


def test_role_id_not_matching_its_file_name(home, caplog):
    path = role_file(home)
    path.write_text(_role_text(home).replace("role_id: codegen", "role_id: bugfix"), encoding="utf-8")
    driver = Driver()
    driver.fail(3)
    assert_inactive(driver.agent)
    assert_logged_once(caplog, str(path), "role_id", "is 'bugfix'", "named for 'codegen'")
    assert_logged_once(caplog, "default_role", "'codegen' could not be loaded")
    assert_no_catch_all(caplog)


def test_broken_non_default_role_is_skipped_and_its_domain_falls_back(home, caplog):
    path = role_file(home, "bugfix")
    path.write_text(_role_text(home, "bugfix").replace("role_name: Bug Fix Specialist", "role_name: [Bug Fix Specialist"), encoding="utf-8")
    driver = Driver()
    bst = {"__bst_belief_state__": {"domain": "debugging", "confidence": 0.9}}  # routed to bugfix
    warnings: list[str] = []
    for _ in range(3):
        warnings += driver.turn(TOOL, {"code": "cat /app/config.yml"}, MISSING_FILE, before=lambda a: setattr(a, "_bst_store", bst))
    assert_active(driver.agent, "codegen")  # the default role takes the domain
    assert any(w.startswith(LOOP_TEXT) for w in warnings)  # and the supervisor works as usual
    assert_logged_once(caplog, str(path), "not valid YAML", "role 'bugfix' is skipped")
    assert_no_catch_all(caplog)


def test_yaml_python_tags_in_a_role_are_not_executed(home, tmp_path, caplog):
    marker = tmp_path / "pwned"
    role_file(home).write_text(f'!!python/object/apply:os.system ["touch {marker}"]\n', encoding="utf-8")
    Driver().turn()
    assert not marker.exists()
    assert_logged_once(caplog, str(role_file(home)), "not valid YAML", "roles 'codegen', 'bugfix' are skipped")  # bugfix extends it


def test_org_id_not_matching_its_file_name_is_reported(home, caplog):
    """Regression: the org_id in the file was not checked against the file name, and later
    messages named a file that does not exist."""
    path = org_file(home)
    path.write_text(path.read_text(encoding="utf-8").replace("org_id: replay", "org_id: other"), encoding="utf-8")
    role_file(home).write_text("", encoding="utf-8")  # and the default role is broken too
    driver = Driver()
    driver.turn()
    assert_inactive(driver.agent)
    messages = a0org_messages(caplog)
    assert not any(str(home / "other.yaml") in m for m in messages), f"a message names a file that does not exist: {messages}"
    assert_logged_once(caplog, str(path), "org_id")


def test_deeply_nested_role_file_is_reported_with_its_file_name(home, caplog):
    """Regression: RecursionError reached the hook's catch-all without naming the file."""
    path = role_file(home)
    path.write_text("notes: " + "[" * 3000 + "]" * 3000 + "\n", encoding="utf-8")
    driver = Driver()
    driver.fail(3)
    assert_inactive(driver.agent)
    assert_no_catch_all(caplog)
    assert_logged_once(caplog, str(path), "roles 'codegen', 'bugfix' are skipped")  # bugfix extends codegen


_BOMB = "\n".join(
    ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    + [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
) + "\n"


def test_alias_bomb_in_a_role_file_does_not_hang_the_dispatcher(home):
    """Regression: the line map walked aliases as copies (10**9 paths for 500 bytes)."""
    role_file(home).write_text(_BOMB, encoding="utf-8")
    assert len(_BOMB) < 600
    code = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(ROOT)!r})
        from org.a0 import hooks
        from org.standin.agent import StandInAgent
        agent = StandInAgent(era="C")
        hooks.before_main_llm_call(agent, loop_data=agent.loop_data)
        print("role:", getattr(agent, "_org_active_role", None))
    """)
    env = {"PATH": "/usr/bin:/bin", ENV_HOME: str(home)}
    try:
        done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=15)
    except subprocess.TimeoutExpired:
        pytest.fail("the dispatcher hook did not return within 15 s")
    assert done.returncode == 0, done.stderr
    assert "role: None" in done.stdout and "role 'codegen' is skipped" in done.stderr


def test_a_doctrine_parsed_again_is_a_copy_and_its_errors_name_each_file(tmp_path):
    """The same text is parsed once (every store and XO check reads the same role files): each
    reader still gets data of its own, aliases still shared as written, and a broken file's
    error names that file."""
    from org.kernel.loading import DocumentError, parse

    text = "role_id: coder\nlimits: &limits {steps: [1, 2]}\nagain: *limits\n"
    first, lines = parse(tmp_path / "a.yaml", text)
    first["limits"]["steps"].append(3)
    lines.clear()
    second, second_lines = parse(tmp_path / "b.yaml", text)
    assert second["limits"] == {"steps": [1, 2]} and second["again"] is second["limits"]
    assert second_lines[("again",)] == 3
    for name in ("x.yaml", "y.yaml"):
        with pytest.raises(DocumentError) as caught:
            parse(tmp_path / name, "role_id: [\n")
        assert str(tmp_path / name) in str(caught.value)
