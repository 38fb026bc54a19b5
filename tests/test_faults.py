"""Fault tests: every input source of the pack broken in every way we could think of.

The promise under test (``org/a0/hooks.py``): a hook never raises, the pack fails
open (the agent's loop carries on, the pack switches itself off or ignores the broken
source), the problem is logged once on the "a0org" logger with the file or field and
the reason, and nothing is lost (tool outcomes stay recorded, steering is delivered).

The hooks run for real: either through the entry points in ``org.a0.hooks`` with a
stand-in agent (``Driver``), or through the real hook files loaded by the stand-in
Agent-Zero loader (``Session`` from conftest). The organization folder is a real
temporary folder with the pack's roles.

Where the pack does not keep its promise, the test is a strict xfail naming the bug
(see its reason); once the bug is fixed the marker goes and the test stays as a
regression test.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import json
import logging
import math
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Callable

import pytest
import yaml
from conftest import Session, fail
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from org.a0 import hooks
from org.contracts import RoleProfile, SaluteReport, TraceHeader
from org.contracts.common import PACE_LEVELS
from org.contracts.finding import SEVERITY_ORDER
from org.kernel import store as store_module
from org.kernel.dispatcher import ORG_ATTR, PACE_ATTR, ROLE_ATTR
from org.kernel.loading import MAX_DOCUMENT_BYTES
from org.kernel.log import forget_logged
from org.kernel.outcomes import FAILURES_KEY, LEDGER_KEY, ToolLedger
from org.kernel.paths import ENV_HOME
from org.kernel.store import OrganizationStore
from org.replay import prepare_organization
from org.resources import extensions_dir
from org.standin.agent import LoopData, Response, StandInAgent, Tool
from org.standin.session import StandInSession
from org.supervisor.microcosm import STATE_KEY
from org.supervisor.steering import TAG, count_sentences

ROOT = Path(__file__).resolve().parent.parent
LOGGER = "a0org"
#: what ``hooks._failed`` logs when an exception reached the hook's last line of defence,
#: i.e. nothing closer to the source handled (and named) the problem
CATCH_ALL = "failed and was skipped"
MISSING_FILE = "cat: /app/config.yml: No such file or directory"
TOOL = "code_execution_tool"
LOOP_TEXT = f"{TAG} Loop: you repeated the same {TOOL} action 3 times"


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(autouse=True)
def _fresh_store(monkeypatch):
    """A fresh organization cache per test, re-checking the files every turn.

    Re-checking every turn (instead of at most once a second) makes "the user fixed
    the file" visible on the next turn, and makes "logged once" stricter: the broken
    file is re-read every turn and must still be reported only once.
    """
    monkeypatch.setattr(hooks, "store", OrganizationStore())
    monkeypatch.setattr(store_module, "RECHECK_SECONDS", 0.0)


@pytest.fixture
def home(org_home) -> Path:
    """The replay organization (default role codegen), radio check every turn."""
    prepare_organization(org_home, TraceHeader(kind="header", role="codegen"))
    role = org_home / "roles" / "codegen.yaml"
    text = role.read_text(encoding="utf-8")
    assert "radio_check_interval_turns: 3" in text
    role.write_text(text.replace("radio_check_interval_turns: 3", "radio_check_interval_turns: 1"), encoding="utf-8")
    return org_home


def active_file(home: Path) -> Path:
    return home / "active.json"


def org_file(home: Path) -> Path:
    return home / "replay.yaml"


def role_file(home: Path, role: str = "codegen") -> Path:
    return home / "roles" / f"{role}.yaml"


# --------------------------------------------------------------------------- helpers


def a0org_messages(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == LOGGER]


def logged(caplog, *fragments: str) -> list[str]:
    return [m for m in a0org_messages(caplog) if all(f in m for f in fragments)]


def assert_logged_once(caplog, *fragments: str) -> str:
    found = logged(caplog, *fragments)
    assert len(found) == 1, f"expected one a0org message with {fragments}, found {found}; all messages: {a0org_messages(caplog)}"
    return found[0]


def assert_no_catch_all(caplog) -> None:
    caught = logged(caplog, CATCH_ALL)
    assert not caught, f"a problem reached the hook's catch-all instead of being handled (and named) where it is read: {caught}"


def assert_no_duplicate_messages(caplog) -> None:
    messages = a0org_messages(caplog)
    repeated = [m for m, n in collections.Counter(messages).items() if n > 1]
    assert not repeated, f"logged more than once: {repeated}"


def assert_active(agent: Any, role: str = "codegen") -> None:
    role_dict = getattr(agent, ROLE_ATTR, None)
    assert isinstance(role_dict, dict) and role_dict["role_id"] == role, f"the pack is not active: {ROLE_ATTR}={role_dict!r}"
    assert getattr(agent, PACE_ATTR, None) in PACE_LEVELS
    assert getattr(agent, ORG_ATTR, None) == "replay"


def assert_inactive(agent: Any) -> None:
    for attr in (ROLE_ATTR, PACE_ATTR, ORG_ATTR):
        assert getattr(agent, attr, None) is None, f"{attr} is {getattr(agent, attr)!r} with no usable organization"


def ledger_size(agent: Any) -> int:
    ledger = agent.data.get(LEDGER_KEY)
    return len(ledger.outcomes) if isinstance(ledger, ToolLedger) else 0


def last_outcome(agent: Any):
    return agent.data[LEDGER_KEY].outcomes[-1]


def report(home: Path, role: str = "codegen") -> SaluteReport:
    return SaluteReport.model_validate_json((home / "reports" / f"{role}_latest.json").read_text(encoding="utf-8"))


def line_of(text: str, needle: str) -> int:
    for number, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not in the text")


_DEFAULT: Any = object()


class Driver:
    """One stand-in agent run through the three hook entry points of ``org.a0.hooks``,
    in the order Agent-Zero's message loop calls them. Era C: the chat model's context
    length is ``agent.config.chat_model.ctx_length``, no plugin needed.

    Callbacks let "another layer" change the agent at each step of the turn.
    """

    def __init__(self, era: str = "C"):
        self.agent = StandInAgent(era=era)
        self.turns = 0

    def turn(
        self,
        tool: str | None = TOOL,
        args: Any = _DEFAULT,
        output: str = "done",
        *,
        before: Callable[[Any], None] | None = None,
        after_dispatch: Callable[[Any], None] | None = None,
        before_end: Callable[[Any], None] | None = None,
        response: Any = _DEFAULT,
        tool_name: Any = _DEFAULT,
        loop_data: Any = _DEFAULT,
    ) -> list[str]:
        """Run one turn; returns the warnings added to the history during it."""
        agent = self.agent
        self.turns += 1
        own_loop_data = agent.__dict__.get("loop_data")
        if isinstance(own_loop_data, LoopData):
            own_loop_data.iteration += 1
        ld = own_loop_data if loop_data is _DEFAULT else loop_data
        start = len(agent.history)
        if before:
            before(agent)
        assert hooks.before_main_llm_call(agent, loop_data=ld) is None
        if after_dispatch:
            after_dispatch(agent)
        if tool is not None:
            if isinstance(own_loop_data, LoopData):
                own_loop_data.current_tool = Tool(tool, {"turn": self.turns} if args is _DEFAULT else args)
            message = Response(output, break_loop=False) if response is _DEFAULT else response
            assert hooks.tool_execute_after(agent, response=message, tool_name=tool if tool_name is _DEFAULT else tool_name) is None
            if isinstance(own_loop_data, LoopData):
                own_loop_data.current_tool = None
        if before_end:
            before_end(agent)
        assert asyncio.run(hooks.message_loop_end(agent, loop_data=ld)) is None
        return [m.content["system_warning"] for m in agent.history[start:] if m.kind == "warning"]

    def fail(self, n: int = 1, **kwargs: Any) -> list[str]:
        """The same failing call ``n`` times (a loop after 3); returns all warnings."""
        warnings: list[str] = []
        for _ in range(n):
            warnings += self.turn(TOOL, {"code": "cat /app/config.yml"}, MISSING_FILE, **kwargs)
        return warnings


class Raising:
    """An object whose every attribute access, str() and repr() raise."""

    def __getattribute__(self, name: str) -> Any:
        if name in ("__class__", "__dict__"):
            return object.__getattribute__(self, name)
        raise RuntimeError(f"attribute {name} exploded")

    def __str__(self) -> str:
        raise RuntimeError("str exploded")

    def __repr__(self) -> str:
        raise RuntimeError("repr exploded")


class Opaque:
    """An object of a type no layer expects; plain attribute access works."""

    def __repr__(self) -> str:
        return "<Opaque>"


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
    "mode": (_org_with(mode="galaxy"), ["mode", "'microcosm' or 'macrocosm'"]),
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
        ["pace_plan.alternate.trigger.any_of[1].metric", "'consecutive_tool_failures'"], "failing_vibes"),
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
    assert_logged_once(caplog, where, *fragments, "role 'codegen' is skipped")
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
    path.write_text(_role_text(home, "bugfix").replace("role_type: specialist", "role_type: [specialist"), encoding="utf-8")
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
    assert_logged_once(caplog, str(role_file(home)), "not valid YAML")


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
    assert_logged_once(caplog, str(path), "role 'codegen' is skipped")


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


# =========================================================================== attributes other layers set


def _set(name: str, value: Any) -> Callable[[Any], None]:
    return lambda agent: setattr(agent, name, value)


def _set_data(key: str, value: Any) -> Callable[[Any], None]:
    return lambda agent: agent.data.__setitem__(key, value)


# ---- agent._htn_state

HTN_MALFORMED: dict[str, tuple[Any, list[str]]] = {
    "text": ("apply migration", ["agent._htn_state", "expected a dict, found str"]),
    "list": ([{"turns_since_progress": 1}], ["agent._htn_state", "expected a dict, found list"]),
    "int": (7, ["agent._htn_state", "expected a dict, found int"]),
    "bool": (True, ["agent._htn_state", "expected a dict, found bool"]),
    "raising_object": (Raising(), ["agent._htn_state", "expected a dict, found Raising"]),
    "missing_key": ({"plan_name": "p", "current_step": "s"},
                    ["agent._htn_state.turns_since_progress: expected a non-negative number of turns, found None"]),
    "negative": ({"turns_since_progress": -1}, ["agent._htn_state.turns_since_progress", "found -1"]),
    "minus_infinity": ({"turns_since_progress": float("-inf")}, ["agent._htn_state.turns_since_progress", "found -inf"]),
    "bool_for_int": ({"turns_since_progress": True}, ["agent._htn_state.turns_since_progress", "found True"]),
    "numeric_text": ({"turns_since_progress": "3"}, ["agent._htn_state.turns_since_progress", "found '3'"]),
    "nested": ({"turns_since_progress": {"n": [3]}}, ["agent._htn_state.turns_since_progress", "found {'n': [3]}"]),
}


@pytest.mark.parametrize("case", sorted(HTN_MALFORMED))
def test_malformed_htn_state_is_ignored_and_logged_once(home, caplog, case):
    value, fragments = HTN_MALFORMED[case]
    driver = Driver()
    warnings = driver.fail(3, before=_set("_htn_state", value))
    assert_active(driver.agent)
    assert any(w.startswith(LOOP_TEXT) for w in warnings)  # the supervisor still works
    assert report(home).activity.progress_source == "pack"  # progress from the pack's own signal
    assert_logged_once(caplog, *fragments, "HTN state ignored")
    assert_no_catch_all(caplog)
    assert_no_duplicate_messages(caplog)


def test_odd_but_usable_htn_state_is_used(home, caplog):
    htn = {"turns_since_progress": 2.0, "current_step": {"name": "apply migration", "args": [1]}, "plan_name": ["not", "text"], "plan_id": "p1"}
    driver = Driver()
    driver.turn(before=_set("_htn_state", htn))
    assert_active(driver.agent)
    salute = report(home)
    assert salute.activity.progress_source == "htn" and salute.activity.htn_step == "apply migration"
    assert salute.activity.htn_plan is None  # a list is not a name
    assert salute.time.turns_since_progress == 2
    assert a0org_messages(caplog) == []


@pytest.mark.parametrize("value", [float("nan"), float("inf"), 10**12], ids=["nan", "inf", "implausible"])
def test_non_finite_htn_progress_is_ignored_and_named(home, caplog, value):
    """Regression: int(nan)/int(inf) raised in the dispatcher before the role was set."""
    driver = Driver()
    driver.fail(3, before=_set("_htn_state", {"turns_since_progress": value}))
    assert_no_catch_all(caplog)
    assert_active(driver.agent)
    assert_logged_once(caplog, "agent._htn_state.turns_since_progress")


@pytest.mark.parametrize("value", [10**400, -(10**400)], ids=["huge", "huge_negative"])
def test_huge_int_htn_progress_is_ignored_and_named(home, caplog, value):
    """Regression: an int beyond float range (10**400) made math.isfinite() raise OverflowError
    in the guard meant to reject it; the dispatcher's catch-all took it before the role was
    set, without naming the field. Now org/kernel/values.py plain_number() compares ints as
    ints: the value is rejected, the field named (the value cut to 40 characters)."""
    driver = Driver()
    driver.fail(3, before=_set("_htn_state", {"turns_since_progress": value}))
    assert_no_catch_all(caplog)
    assert_active(driver.agent)
    assert_logged_once(caplog, "agent._htn_state.turns_since_progress: expected a non-negative number of turns, "
                               f"found {repr(value)[:39]}…; HTN state ignored")


# ---- agent._bst_store and its __bst_belief_state__

BST_MALFORMED: dict[str, tuple[Any, list[str]]] = {
    "text": ("coding", ["agent._bst_store", "expected a dict, found str"]),
    "list": ([{"domain": "coding"}], ["agent._bst_store", "expected a dict, found list"]),
    "raising_object": (Raising(), ["agent._bst_store", "expected a dict, found Raising"]),
    "belief_text": ({"__bst_belief_state__": "coding"}, ["agent._bst_store['__bst_belief_state__']", "expected a dict, found str"]),
    "belief_list": ({"__bst_belief_state__": [1, 2]}, ["agent._bst_store['__bst_belief_state__']", "found list"]),
    "domain_int": ({"__bst_belief_state__": {"domain": 5}}, ["agent._bst_store['__bst_belief_state__'].domain", "expected text, found 5"]),
    "domain_list": ({"__bst_belief_state__": {"domain": ["debugging"]}}, [".domain", "expected text, found ['debugging']"]),
    "domain_bool": ({"__bst_belief_state__": {"domain": True}}, [".domain", "expected text, found True"]),
}


@pytest.mark.parametrize("case", sorted(BST_MALFORMED))
def test_malformed_bst_store_is_ignored_and_logged_once(home, caplog, case):
    value, fragments = BST_MALFORMED[case]
    driver = Driver()
    warnings = driver.fail(3, before=_set("_bst_store", value))
    assert_active(driver.agent, "codegen")  # no domain: the default role
    assert any(w.startswith(LOOP_TEXT) for w in warnings)
    assert report(home).activity.bst_domain is None
    assert_logged_once(caplog, *fragments, "BST state ignored")
    assert_no_catch_all(caplog)
    assert_no_duplicate_messages(caplog)


@pytest.mark.parametrize("belief", [
    None, {}, {"domain": ""}, {"domain": None}, {"domain": "debugging", "confidence": "high"},
    {"domain": "debugging", "confidence": float("nan")}, {"domain": "debugging", "confidence": float("inf")},
    {"domain": "debugging", "confidence": True}, {"domain": "debugging", "confidence": [0.9]},
], ids=["none", "empty", "empty_domain", "null_domain", "confidence_text", "confidence_nan", "confidence_inf",
        "confidence_bool", "confidence_list"])
def test_bst_belief_without_usable_domain_or_confidence_still_works(home, caplog, belief):
    driver = Driver()
    driver.turn(before=_set("_bst_store", {"__bst_belief_state__": belief}))
    role = (belief or {}).get("domain") or None
    assert_active(driver.agent, "bugfix" if role == "debugging" else "codegen")
    salute = report(home, "bugfix" if role == "debugging" else "codegen")
    confidence = salute.activity.bst_confidence
    assert confidence is None or math.isfinite(confidence)  # the report stays valid JSON
    assert_no_catch_all(caplog)


def test_huge_bst_confidence_is_ignored(home, caplog):
    """Regression: float(10**400) raised OverflowError in the dispatcher."""
    driver = Driver()
    driver.turn(before=_set("_bst_store", {"__bst_belief_state__": {"domain": "debugging", "confidence": 10**400}}))
    assert_no_catch_all(caplog)
    assert_active(driver.agent, "bugfix")


def test_huge_bst_domain_does_not_silently_disable_the_health_correction(home, caplog):
    """Regression: an unbounded domain pushed the report over MAX_REPORT_BYTES and the health
    correction was skipped without a word."""
    driver = Driver()
    bst = _set("_bst_store", {"__bst_belief_state__": {"domain": "x" * 300_000}})
    for tool, output in (("code_execution_tool", MISSING_FILE), ("text_editor", "PermissionError: [Errno 13] Permission denied"),
                         ("browser_agent", "ConnectionError: Name or service not known")):
        driver.turn(tool, {"a": 1}, output, before=bst)  # a cascade: critical
    assert any("Cascade" in w for w in driver.agent.warnings())
    salute_path = home / "reports" / "codegen_latest.json"
    corrected = json.loads(salute_path.read_text(encoding="utf-8"))["status"]
    assert corrected["health"] == "critical" or logged(caplog, str(salute_path))


# ---- agent._org_active_role set to garbage by someone else between dispatcher and supervisor


def _valid_role_dict() -> dict:
    return RoleProfile.model_validate(yaml.safe_load((ROOT / "roles" / "codegen.yaml").read_text(encoding="utf-8"))).model_dump(mode="json")


def _role_with_doctrine(**doctrine: Any) -> dict:
    role = _valid_role_dict()
    role["doctrine"].update(doctrine)
    return role


ROLE_GARBAGE: dict[str, Any] = {
    "text": "codegen",
    "int": 42,
    "zero": 0,
    "false": False,
    "list": ["codegen"],
    "empty_dict": {},
    "only_id": {"role_id": "codegen"},
    "negative_interval": _role_with_doctrine(radio_check_interval_turns=-1),
    "nan_threshold": _role_with_doctrine(context_thresholds={"warning": float("nan"), "critical": 0.9}),
    "bool_doctrine": _role_with_doctrine(loop=True),
    "nested_garbage": {"role_id": [{"a": [None]}], "pace_plan": {"primary": [1, 2]}},
    "raising_object": Raising(),
}


@pytest.mark.parametrize("case", sorted(ROLE_GARBAGE))
def test_garbage_active_role_between_dispatcher_and_supervisor(home, caplog, case):
    garbage = ROLE_GARBAGE[case]
    driver = Driver()
    driver.turn()
    before = dict(driver.agent.data[STATE_KEY])
    for _ in range(3):
        assert driver.turn(TOOL, {"p": 1}, MISSING_FILE, after_dispatch=_set(ROLE_ATTR, garbage)) == []
    assert driver.agent.data[STATE_KEY] == before  # the supervisor skipped these turns, state untouched
    assert ledger_size(driver.agent) == 4  # the recorder kept recording
    assert_logged_once(caplog, f"agent.{ROLE_ATTR}", "not a valid role profile", "supervisor skipped")
    assert_no_catch_all(caplog)
    # the garbage stops: the dispatcher sets the role again and the supervisor carries on
    warnings = driver.turn(TOOL, {"p": 1}, MISSING_FILE)
    assert_active(driver.agent)
    assert driver.agent.data[STATE_KEY]["turn"] == before["turn"] + 1
    assert any(w.startswith(LOOP_TEXT) for w in warnings)


# ---- agent._org_pace_level set to an unknown level


@pytest.mark.parametrize("level", ["panic", "EMERGENCY", "", 3, 2.5, True, ["emergency"], {"level": "emergency"}],
                         ids=["word", "upper", "empty", "int", "float", "bool", "list", "dict"])
def test_unknown_pace_level_is_ignored_and_logged_once(home, caplog, level):
    driver = Driver()
    warnings = driver.fail(4, after_dispatch=_set(PACE_ATTR, level))
    assert not any("PACE" in w for w in warnings)  # an unknown level never steers
    assert any(w.startswith(LOOP_TEXT) for w in warnings)  # the other detectors still do
    assert driver.agent.data[STATE_KEY]["turn"] == 4
    assert_logged_once(caplog, f"agent.{PACE_ATTR}", "unknown PACE level", repr(level))
    assert_no_catch_all(caplog)
    # the dispatcher recomputes the level; a garbage previous level is not a "PACE change"
    driver.turn()
    assert getattr(driver.agent, PACE_ATTR) in PACE_LEVELS
    assert not [i for i in driver.agent.context.log.items if (i.heading or "").startswith("[ORG] PACE")]


# ---- agent.data["_tool_failures"]

FAILURES_USABLE_OR_REPLACED: dict[str, Any] = {
    "text": "three failures",
    "list": [{"tool": TOOL}],
    "int": 3,
    "consecutive_a_list": {"consecutive": [TOOL], "history": []},
    "history_a_dict": {"consecutive": {}, "history": {"0": {"tool": TOOL}}},
    "history_scalars": {"consecutive": {}, "history": [1, "x", None, [2], 3.5, float("nan")]},
    "history_entry_missing_tool": {"consecutive": {}, "history": [{"error_type": "timeout"}]},
    "negative_count": {"consecutive": {TOOL: -4}, "history": []},
    "bool_count": {"consecutive": {TOOL: True}, "history": []},
    "numeric_text_count": {"consecutive": {TOOL: "2"}, "history": []},
    "huge_count": {"consecutive": {TOOL: 10**400}, "history": []},
    "huge_history": {"consecutive": {}, "history": [{"tool": f"t{i}", "error_type": "x"} for i in range(5000)]},
}


@pytest.mark.parametrize("case", sorted(FAILURES_USABLE_OR_REPLACED))
def test_malformed_tool_failure_record_never_loses_an_outcome(home, caplog, case):
    driver = Driver()
    for n in range(3):
        driver.turn(TOOL, {"n": n}, MISSING_FILE, before=_set_data(FAILURES_KEY, FAILURES_USABLE_OR_REPLACED[case]))
        assert ledger_size(driver.agent) == n + 1
        assert last_outcome(driver.agent).ok is False and last_outcome(driver.agent).error_type == "not_found"
        record = driver.agent.data[FAILURES_KEY]
        assert isinstance(record, dict) and isinstance(record["consecutive"], dict) and isinstance(record["history"], list)
        assert record["history"][-1]["tool"] == TOOL
        assert len(record["history"]) <= 20
    assert_active(driver.agent)
    assert_no_catch_all(caplog)


@pytest.mark.parametrize("tool", [["a", "b"], {"name": TOOL}], ids=["list", "dict"])
def test_unhashable_tool_in_failure_history(home, caplog, tool):
    """Regression: an unhashable tool crashed the dispatcher before the role was set, for good."""
    driver = Driver()
    driver.agent.data[FAILURES_KEY] = {"consecutive": {}, "history": [{"tool": tool, "error_type": "timeout"}]}
    driver.fail(3)
    assert_no_catch_all(caplog)
    assert_active(driver.agent)


@pytest.mark.parametrize("count", ["three", float("nan"), float("inf"), [1], {"n": 1}], ids=["word", "nan", "inf", "list", "dict"])
def test_garbage_consecutive_failure_count_does_not_lose_the_outcome(home, caplog, count):
    driver = Driver()
    driver.fail(1, before=_set_data(FAILURES_KEY, {"consecutive": {TOOL: count}, "history": []}))
    assert ledger_size(driver.agent) == 1
    assert driver.agent.data[FAILURES_KEY]["consecutive"][TOOL] == 1  # the garbage count starts afresh
    assert_no_catch_all(caplog)


# ---- agent.data["_org_tool_ledger"]


def assert_foreign_ledger_logged_once(caplog, garbage: Any) -> None:
    """The recorder ("started afresh") and the supervisor ("tool history ignored") share one
    log-once key: whichever sees the foreign ledger first reports it, and only once in all."""
    message = assert_logged_once(caplog, f"agent.data[{LEDGER_KEY!r}]")
    prefix = f"agent.data[{LEDGER_KEY!r}]: expected the pack's tool ledger, found {type(garbage).__name__}; "
    assert message in (prefix + "started afresh", prefix + "tool history ignored"), message


@pytest.mark.parametrize("garbage", ["ledger", [1, 2], {"outcomes": [], "turn": 3}, 7, Opaque()],
                         ids=["text", "list", "dict", "int", "object"])
def test_foreign_tool_ledger_before_the_dispatcher_is_replaced(home, caplog, garbage):
    driver = Driver()
    warnings = driver.fail(3, before=_set_data(LEDGER_KEY, garbage))
    assert isinstance(driver.agent.data[LEDGER_KEY], ToolLedger)
    assert ledger_size(driver.agent) == 1  # each turn's garbage replaced, this turn recorded
    assert_active(driver.agent)
    assert warnings == [] or all(w.startswith(TAG) for w in warnings)
    assert_foreign_ledger_logged_once(caplog, garbage)
    assert_no_catch_all(caplog)


@pytest.mark.parametrize("garbage", ["ledger", [1, 2], {"outcomes": []}, Opaque()], ids=["text", "list", "dict", "object"])
def test_foreign_tool_ledger_seen_by_the_supervisor_is_ignored_and_logged_once(home, caplog, garbage):
    driver = Driver()
    for _ in range(4):
        driver.turn(TOOL, {"p": 1}, MISSING_FILE, before_end=_set_data(LEDGER_KEY, garbage))
    assert driver.agent.data[STATE_KEY]["turn"] == 4  # the supervisor ran every turn
    assert_foreign_ledger_logged_once(caplog, garbage)
    assert_no_catch_all(caplog)


# ---- agent.data["org_supervisor"]: the persisted supervisor state, e.g. a corrupted chat file

SUPERVISOR_STATE_GARBAGE: dict[str, Any] = {
    "text": "corrupted",
    "list": [1, 2, 3],
    "null": None,
    "int": 12,
    "turn_text": {"turn": "7"},
    "turn_negative": {"turn": -3},
    "turn_bool": {"turn": True},
    "turn_float": {"turn": 2.5},
    "turn_nan": {"turn": float("nan")},
    "turn_huge": {"turn": 10**30},
    "maps_wrong_types": {"turn": 2, "last_fired": ["loop"], "last_severity": "critical", "episode": 5},
    "map_values_garbage": {"turn": 2, "last_fired": {"loop": "3", "stall": None, "cascade": 1.5, "pace": True},
                           "last_severity": {"loop": "mild", "stall": ["critical"], "context": None},
                           "episode": {"loop": [1], "stall": float("inf")}},
    "nested_garbage": {"turn": {"turn": {"turn": 1}}, "last_fired": {"loop": {"at": 1}}, "extra": [[[]]]},
    "cooldown_in_the_far_future": {"turn": 5, "last_fired": {"loop": 10**9}, "last_severity": {"loop": "emergency"}, "episode": {"loop": 1}},
}


def assert_valid_supervisor_state(state: Any) -> None:
    assert isinstance(state, dict)
    json.dumps(state, allow_nan=False)  # survives saving the chat
    assert state["version"] == 1
    assert type(state["turn"]) is int and state["turn"] >= 1
    for key in ("last_fired", "episode"):
        assert isinstance(state[key], dict) and all(isinstance(k, str) and type(v) is int for k, v in state[key].items())
    assert all(v in SEVERITY_ORDER for v in state["last_severity"].values())
    assert isinstance(state["injections"], int)


@pytest.mark.parametrize("case", sorted(SUPERVISOR_STATE_GARBAGE))
def test_corrupted_supervisor_state_starts_afresh_and_the_loop_is_still_steered(home, caplog, case):
    driver = Driver()
    driver.agent.data[STATE_KEY] = SUPERVISOR_STATE_GARBAGE[case]
    warnings = driver.fail(3)
    assert_valid_supervisor_state(driver.agent.data[STATE_KEY])
    assert [w for w in warnings if w.startswith(LOOP_TEXT)], warnings  # a corrupted cooldown never silences it
    assert_no_catch_all(caplog)


@pytest.mark.parametrize("injections", [True, -4], ids=["bool", "negative"])
def test_corrupted_injection_count_starts_afresh(home, injections):
    """Regression: bool and negative counts were kept."""
    driver = Driver()
    driver.agent.data[STATE_KEY] = {"turn": 1, "injections": injections}
    driver.turn()
    state = driver.agent.data[STATE_KEY]
    assert type(state["injections"]) is int and state["injections"] >= 0


# ---- agent.data["ctx_window"]


@pytest.mark.parametrize("window", [
    "x" * 1000, 5, [1, 2], None, {}, {"tokens": "many"}, {"tokens": -5}, {"tokens": True}, {"tokens": None},
    {"tokens": float("nan")}, {"tokens": float("-inf")}, {"tokens": [100]}, {"tokens": {"n": 1}}, Opaque(),
], ids=["text", "int", "list", "none", "empty", "tokens_text", "tokens_negative", "tokens_bool", "tokens_none",
        "tokens_nan", "tokens_minus_inf", "tokens_list", "tokens_dict", "object"])
def test_unusable_context_window_means_no_context_fill(home, caplog, window):
    driver = Driver()
    warnings = driver.fail(3, before=_set_data("ctx_window", window))
    assert_active(driver.agent)
    assert not any("Context is" in w for w in warnings)
    assert any(w.startswith(LOOP_TEXT) for w in warnings)
    assert_no_catch_all(caplog)


@pytest.mark.parametrize("tokens", [float("inf"), 10**13], ids=["inf", "implausible"])
def test_non_finite_context_tokens_are_ignored(home, caplog, tokens):
    """Regression: int(inf) raised in the dispatcher before the role was set."""
    driver = Driver()
    warnings = driver.fail(3, before=_set_data("ctx_window", {"tokens": tokens}))
    assert_no_catch_all(caplog)
    assert_active(driver.agent)
    assert not any("Context is" in w for w in warnings)


def test_huge_int_context_tokens_are_ignored(home, caplog):
    """Regression: a token count beyond float range (10**400) made math.isfinite() raise
    OverflowError in the dispatcher before the role was set; now it is not a measurement."""
    driver = Driver()
    warnings = driver.fail(3, before=_set_data("ctx_window", {"tokens": 10**400}))
    assert_no_catch_all(caplog)
    assert_active(driver.agent)
    assert not any("Context is" in w for w in warnings)


# ---- agent._error_diagnosis (an error-comprehension layer's verdict)


@dataclasses.dataclass
class Diagnosis:
    tool: Any
    error_class: Any


@pytest.mark.parametrize("diagnosis,expected_ok,expected_error", [
    ("timeout", False, "not_found"), (5, False, "not_found"), ([TOOL, "timeout"], False, "not_found"),
    ({"tool": TOOL}, False, "not_found"), ({"tool": TOOL, "error_class": 5}, False, "not_found"),
    ({"tool": TOOL, "error_class": ""}, False, "not_found"), ({"tool": "other", "error_class": "timeout"}, False, "not_found"),
    ({"tool": [TOOL], "error_class": "timeout"}, False, "not_found"), ({"error_class": None}, False, "not_found"),
    ({"tool": TOOL, "error_class": None}, True, None), ({"tool": TOOL, "error_class": "timeout"}, False, "timeout"),
    (Diagnosis(TOOL, "permission"), False, "permission"), (Diagnosis(TOOL, None), True, None), (Opaque(), False, "not_found"),
], ids=["text", "int", "list", "no_error_class", "error_class_int", "error_class_empty", "other_tool", "tool_list",
        "no_tool", "verdict_ok", "verdict_failed", "object_failed", "object_ok", "opaque_object"])
def test_odd_error_diagnosis_never_loses_the_outcome(home, caplog, diagnosis, expected_ok, expected_error):
    driver = Driver()
    driver.fail(1, after_dispatch=_set("_error_diagnosis", diagnosis))
    assert ledger_size(driver.agent) == 1
    outcome = last_outcome(driver.agent)
    assert (outcome.ok, outcome.error_type) == (expected_ok, expected_error)
    assert_no_catch_all(caplog)


@dataclasses.dataclass(slots=True)
class SlottedDiagnosis:
    tool: str
    error_class: str | None


class RaisingDiagnosis:
    error_class = "timeout"

    @property
    def tool(self) -> str:
        raise RuntimeError("diagnosis not ready")


@pytest.mark.parametrize("diagnosis", [
    SlottedDiagnosis(TOOL, "timeout"),
    collections.namedtuple("NamedDiagnosis", "tool error_class")(TOOL, "timeout"),
    RaisingDiagnosis(),
], ids=["slots_dataclass", "namedtuple", "raising_property"])
def test_diagnosis_objects_without_dict_do_not_lose_the_outcome(home, caplog, diagnosis):
    """Regression: vars() on a slotted verdict crashed the recorder and lost the outcome."""
    driver = Driver()
    driver.fail(1, after_dispatch=_set("_error_diagnosis", diagnosis))
    assert ledger_size(driver.agent) == 1
    assert_no_catch_all(caplog)


# =========================================================================== Agent-Zero objects misbehaving


def test_hist_add_warning_raising_never_escapes_and_the_agent_goes_on(home, caplog):
    driver = Driver()
    real = driver.agent.hist_add_warning
    broken = {"on": True}

    def hist_add_warning(message, id=""):
        if broken["on"]:
            raise RuntimeError("history is locked")
        return real(message, id)

    driver.agent.hist_add_warning = hist_add_warning
    driver.fail(3)  # the loop steering fails to go in
    driver.fail(3)
    assert_logged_once(caplog, "agent.hist_add_warning", "RuntimeError: history is locked", "the loop steering was not injected")
    assert_no_catch_all(caplog)
    assert driver.agent.data[STATE_KEY]["injections"] == 0
    assert_active(driver.agent)
    assert driver.agent.data[STATE_KEY]["turn"] == 6  # the supervisor kept running
    broken["on"] = False
    warnings = driver.fail(4)
    assert_active(driver.agent)
    assert any(w.startswith(TAG) for w in warnings)  # steering goes in again once the history works


def test_async_hist_add_warning_failing_never_escapes(home, caplog):
    driver = Driver()

    async def hist_add_warning(message, id=""):
        raise RuntimeError("async history is locked")

    driver.agent.hist_add_warning = hist_add_warning
    driver.fail(5)
    assert_active(driver.agent)
    assert_logged_once(caplog, "agent.hist_add_warning", "RuntimeError: async history is locked")
    assert_no_catch_all(caplog)


def test_steering_that_could_not_be_injected_is_not_counted_or_cooled_down(home):
    """Regression: an injection that failed was counted and started its cooldown."""
    driver = Driver()
    real = driver.agent.hist_add_warning
    broken = {"on": True}

    def hist_add_warning(message, id=""):
        if broken["on"]:
            raise RuntimeError("history is locked")
        return real(message, id)

    driver.agent.hist_add_warning = hist_add_warning
    driver.fail(3)  # turn 3: the loop is found, injecting fails
    assert driver.agent.data[STATE_KEY]["injections"] == 0
    broken["on"] = False
    warnings = driver.fail(1)  # turn 4: still looping, and nothing was delivered yet
    assert any(w.startswith(TAG) for w in warnings), "the loop steering was lost"


@pytest.mark.parametrize("agent", [None, "agent0", 0, Opaque(), Raising()], ids=["none", "text", "int", "opaque", "raising"])
def test_hooks_never_raise_for_something_that_is_not_an_agent(home, caplog, agent):
    for _ in range(3):
        assert hooks.before_main_llm_call(agent, loop_data=None) is None
        assert hooks.tool_execute_after(agent, response=None, tool_name=None) is None
        assert asyncio.run(hooks.message_loop_end(agent, loop_data=None)) is None
    assert_no_duplicate_messages(caplog)


@pytest.mark.parametrize("data", [None, "data", [], Raising()], ids=["none", "text", "list", "raising"])
def test_agent_data_that_is_not_a_dict_never_escapes(home, caplog, data):
    driver = Driver()
    driver.agent.data = data
    for _ in range(3):
        driver.turn(TOOL, {"p": 1}, MISSING_FILE)
    assert len(logged(caplog, "org dispatcher")) <= 1  # once, however many turns
    driver.agent.data = {}
    warnings = driver.fail(3)
    assert_active(driver.agent)
    assert any(w.startswith(LOOP_TEXT) for w in warnings)


def test_ui_log_raising_does_not_stop_the_steering(home, caplog):
    driver = Driver()

    def log(**kwargs):
        raise RuntimeError("UI is gone")

    driver.agent.context.log.log = log
    warnings = driver.fail(3)
    assert any(w.startswith(LOOP_TEXT) for w in warnings)
    assert driver.agent.data[STATE_KEY]["injections"] == 1
    assert a0org_messages(caplog) == []  # a UI problem is not the user's problem


@pytest.mark.parametrize("context", ["missing", "none", "no_log"])
def test_missing_or_broken_context_does_not_stop_the_pack(home, caplog, context):
    driver = Driver()
    agent = driver.agent
    if context == "missing":
        del agent.context
    elif context == "none":
        agent.context = None
    else:
        agent.context = Opaque()
    warnings = driver.fail(3)
    assert any(w.startswith(LOOP_TEXT) for w in warnings)
    assert report(home).unit.context_id is None
    assert_no_catch_all(caplog)


def test_context_whose_attributes_raise_never_escapes(home, caplog):
    driver = Driver()
    driver.agent.context = Raising()
    warnings = driver.fail(3)
    assert_active(driver.agent)
    assert any(w.startswith(LOOP_TEXT) for w in warnings)  # compat.ui_log absorbs it for the supervisor


def test_context_whose_attributes_raise_does_not_cost_the_salute_report(home, caplog):
    """Regression: a raising context.id aborted the dispatcher before the report was written."""
    driver = Driver()
    driver.agent.context = Raising()
    driver.turn()
    assert_no_catch_all(caplog)
    assert report(home).unit.context_id is None


@pytest.mark.parametrize("loop_data", [None, "loop", 5, Opaque(), LoopData(iteration="x", last_response=None, params_persistent="p")],
                         ids=["none", "text", "int", "no_attributes", "wrong_attribute_types"])
def test_missing_or_odd_loop_data_does_not_stop_the_pack(home, caplog, loop_data):
    driver = Driver()
    warnings = driver.fail(3, loop_data=loop_data)
    assert_active(driver.agent)
    assert any(w.startswith(LOOP_TEXT) for w in warnings)
    assert ledger_size(driver.agent) == 3
    assert_no_catch_all(caplog)


def test_agent_without_loop_data_records_outcomes_without_arguments(home, caplog):
    driver = Driver()
    del driver.agent.loop_data
    for _ in range(3):
        driver.turn(TOOL, output=MISSING_FILE, loop_data=None)
    assert ledger_size(driver.agent) == 3
    assert any(w.startswith(LOOP_TEXT) for w in driver.agent.warnings())
    assert_no_catch_all(caplog)


class Message:
    def __init__(self, message: Any):
        self.message = message


@pytest.mark.parametrize("response,expected_preview", [
    (None, None), (Message(None), None), (Message(12345), "12345"), (Message(b"bytes"), None), (Message({"a": [1]}), None),
    (Message(["a", "b"]), None), (Message(float("nan")), "nan"), ("a bare string", "a bare string"),
    (Message("x" * 5_000_000), "x" * 150),
], ids=["none", "message_none", "message_int", "message_bytes", "message_dict", "message_list", "message_nan",
        "bare_string", "huge_message"])
def test_odd_tool_responses_are_recorded(home, caplog, response, expected_preview):
    driver = Driver()
    driver.turn(TOOL, {"p": 1}, response=response)
    assert ledger_size(driver.agent) == 1
    outcome = last_outcome(driver.agent)
    assert outcome.tool == TOOL
    if expected_preview is not None:
        assert outcome.message_preview == expected_preview
    assert_no_catch_all(caplog)


class RaisingMessage:
    @property
    def message(self) -> str:
        raise RuntimeError("response already consumed")


class Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("no str")

    def __repr__(self) -> str:
        raise RuntimeError("no repr")


@pytest.mark.parametrize("case", ["raising_message", "unprintable_message", "unprintable_argument"])
def test_unreadable_response_or_arguments_do_not_lose_the_outcome(home, caplog, case):
    """Regression: an unreadable response or unprintable arguments lost the outcome."""
    driver = Driver()
    if case == "raising_message":
        driver.turn(TOOL, {"p": 1}, response=RaisingMessage())
    elif case == "unprintable_message":
        driver.turn(TOOL, {"p": 1}, response=Message(Unprintable()))
    else:
        driver.turn(TOOL, {"p": Unprintable()}, "done")
    assert ledger_size(driver.agent) == 1
    assert_no_catch_all(caplog)


@pytest.mark.parametrize("tool_name", [None, "", 5, ["x"], Opaque()], ids=["none", "empty", "int", "list", "object"])
def test_missing_tool_name_is_recorded_as_unknown(home, caplog, tool_name):
    driver = Driver()
    driver.turn(TOOL, {"p": 1}, MISSING_FILE, tool_name=tool_name)
    assert ledger_size(driver.agent) == 1
    assert last_outcome(driver.agent).tool == "unknown"
    assert driver.agent.data[FAILURES_KEY]["history"][-1]["tool"] == "unknown"
    assert_no_catch_all(caplog)


def _circular() -> dict:
    args: dict = {"code": "ls"}
    args["self"] = args
    return args


SHARED_OBJECT = Opaque()


@pytest.mark.parametrize("args", [
    {"s": {1, 2}}, {"b": b"\x00\xff"}, {"o": SHARED_OBJECT}, _circular(), {(1, 2): "tuple key"}, {1: "a", "b": 2},
    {"n": float("nan"), "i": float("inf")}, {"deep": [[[[[[[[[[[]]]]]]]]]]]}, "not a dict", None, 10**400,
], ids=["set", "bytes", "object", "circular", "tuple_key", "mixed_keys", "nan", "deep", "text", "none", "huge_int"])
def test_non_json_arguments_are_recorded_and_loops_still_found(home, caplog, args):
    driver = Driver()
    warnings: list[str] = []
    for n in range(3):
        warnings += driver.turn(TOOL, args, MISSING_FILE)
        assert ledger_size(driver.agent) == n + 1
    signatures = {o.signature for o in driver.agent.data[LEDGER_KEY].outcomes}
    assert len(signatures) == 1  # the same arguments give the same signature
    assert any(w.startswith(LOOP_TEXT) for w in warnings)
    assert_no_catch_all(caplog)


# =========================================================================== the file system


def test_reports_folder_is_a_file(home, caplog):
    reports = home / "reports"
    if reports.exists():
        for path in sorted(reports.rglob("*"), reverse=True):
            path.rmdir() if path.is_dir() else path.unlink()
        reports.rmdir()
    reports.write_text("not a folder", encoding="utf-8")
    driver = Driver()
    warnings = driver.fail(3)
    driver.turn("text_editor", {"p": 1}, "PermissionError: denied")
    driver.turn("browser_agent", {"p": 1}, "ConnectionError: refused")  # a cascade: the supervisor corrects health
    assert_active(driver.agent)
    assert any(w.startswith(LOOP_TEXT) for w in warnings)
    assert reports.read_text(encoding="utf-8") == "not a folder"
    assert_logged_once(caplog, str(reports), "cannot write the SALUTE report for 'codegen'")
    assert_no_catch_all(caplog)


def test_reports_archive_is_a_file(home, caplog):
    archive = home / "reports" / "archive"
    archive.rmdir()
    archive.write_text("not a folder", encoding="utf-8")
    driver = Driver()
    warnings = driver.fail(3)
    assert_active(driver.agent)
    assert any(w.startswith(LOOP_TEXT) for w in warnings)
    assert report(home).unit.role_id == "codegen"  # the latest report is still written
    assert archive.read_text(encoding="utf-8") == "not a folder"
    assert_logged_once(caplog, f"{archive}: cannot archive the SALUTE report for 'codegen': ")
    assert not logged(caplog, "cannot write the SALUTE report")  # the report itself was written
    assert_no_catch_all(caplog)


def test_unwritable_archive_does_not_turn_every_report_into_the_first(home):
    """Regression: when only the archive copy failed, write_report() returned None although the
    latest report was written, so the dispatcher never set last_report_turn and rewrote the
    report every turn with reason 'first'. Now an archive problem is only logged: the report
    counts as written and the next one is due after salute_interval_turns."""
    archive = home / "reports" / "archive"
    archive.rmdir()
    archive.write_text("not a folder", encoding="utf-8")
    driver = Driver()
    driver.turn()
    assert report(home).reason == "first"
    for _ in range(2):
        driver.turn()
    assert report(home).reason == "first" and report(home).time.turns_elapsed == 1  # interval is 5 turns


@pytest.mark.parametrize("content", ["{", "[1, 2", '{"status": "ok"}', "", b"\xff\xfe"], ids=["truncated", "truncated_list", "wrong_shape", "empty", "not_utf8"])
def test_corrupted_latest_report_is_logged_once_and_the_supervisor_goes_on(home, caplog, content):
    driver = Driver()
    driver.turn()
    latest = home / "reports" / "codegen_latest.json"
    tools = (("code_execution_tool", MISSING_FILE), ("text_editor", "PermissionError: denied"), ("browser_agent", "ConnectionError: refused"))
    for tool, output in tools * 2:  # cascades: the supervisor wants to correct the report's health
        latest.write_bytes(content if isinstance(content, bytes) else content.encode())
        driver.turn(tool, {"p": 1}, output)
    assert_active(driver.agent)
    assert any("Cascade" in w for w in driver.agent.warnings())
    assert_logged_once(caplog, str(latest), "cannot read it to correct health")
    assert_no_catch_all(caplog)


# ---- steering.yaml overrides

#: name -> (content of steering.yaml, fragments the log message must contain besides the path)
STEERING_FAULTS: dict[str, tuple[str | bytes, list[str]]] = {
    "bad_yaml": ('loop_repeat: "[SUPERVISOR] unterminated\n', ["cannot read steering overrides"]),
    "a_list": ("- loop_repeat\n- cascade\n", ["expected a mapping of steering key -> text"]),
    "a_scalar": ("just some text\n", ["expected a mapping of steering key -> text"]),
    "unknown_key": ('loop_repeet: "[SUPERVISOR] Loop."\n', ["loop_repeet", "unknown steering key"]),
    "unknown_repeated_key": ('loop_repeat.again: "[SUPERVISOR] Loop."\n', ["loop_repeat.again", "unknown steering key"]),
    "int_key": ('42: "[SUPERVISOR] Loop."\n', ["42", "unknown steering key"]),
    "no_tag": ('loop_repeat: "Loop: you repeated $tool."\n', ["loop_repeat", "must start with [SUPERVISOR]"]),
    "tag_later": ('loop_repeat: "Careful. [SUPERVISOR] Loop."\n', ["loop_repeat", "must start with [SUPERVISOR]"]),
    "four_sentences": ('loop_repeat: "[SUPERVISOR] One. Two! Three? Four."\n', ["loop_repeat", "has 4 sentences", "at most 3"]),
    "unknown_placeholder": ('loop_repeat: "[SUPERVISOR] Loop on $tool, see $secret."\n', ["loop_repeat", "$secret", "allowed: $outcome, $times, $tool"]),
    "braced_unknown_placeholder": ('loop_repeat: "[SUPERVISOR] Loop on ${toolname}."\n', ["loop_repeat", "$toolname"]),
    "not_text": ("loop_repeat: 5\n", ["loop_repeat", "expected text, found int"]),
    "null_text": ("loop_repeat: null\n", ["loop_repeat", "expected text, found NoneType"]),
    "nested": ('loop_repeat: {text: "[SUPERVISOR] Loop."}\n', ["loop_repeat", "expected text, found dict"]),
    "not_utf8": (b'loop_repeat: "[SUPERVISOR] L\xff\xfeop."\n', ["cannot read steering overrides"]),
    "python_tag": ('loop_repeat: !!python/object/apply:os.getcwd []\n', ["cannot read steering overrides"]),
}


@pytest.mark.parametrize("case", sorted(STEERING_FAULTS))
def test_broken_steering_override_falls_back_to_the_default_and_is_logged_once(home, caplog, case):
    content, fragments = STEERING_FAULTS[case]
    path = home / "steering.yaml"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    driver = Driver()
    warnings = driver.fail(3) + driver.fail(3)  # steered at turn 3 and again at turn 6
    loop = [w for w in warnings if w.startswith(TAG)]
    assert loop and loop[0].startswith(LOOP_TEXT), loop  # the default text
    assert all(count_sentences(w) <= 3 for w in loop)
    assert_logged_once(caplog, str(path), *fragments)
    assert_no_catch_all(caplog)
    assert_no_duplicate_messages(caplog)


def test_steering_override_is_a_directory(home, caplog):
    path = home / "steering.yaml"
    path.mkdir()
    warnings = Driver().fail(3)
    assert any(w.startswith(LOOP_TEXT) for w in warnings)
    assert_logged_once(caplog, str(path), "cannot read steering overrides")


@pytest.mark.parametrize("content", ["", "# only a comment\n", "null\n", "{}\n"], ids=["empty", "comment", "null", "empty_mapping"])
def test_empty_steering_override_uses_the_defaults_silently(home, caplog, content):
    (home / "steering.yaml").write_text(content, encoding="utf-8")
    warnings = Driver().fail(3)
    assert any(w.startswith(LOOP_TEXT) for w in warnings)
    assert a0org_messages(caplog) == []


def test_good_overrides_apply_next_to_broken_ones(home, caplog):
    path = home / "steering.yaml"
    path.write_text(textwrap.dedent("""\
        loop_repeat: "[SUPERVISOR] Custom loop text: $tool failed $times times."
        loop_oscillation: "no tag here"
        cascade: 12
    """), encoding="utf-8")
    warnings = Driver().fail(3)
    assert f"{TAG} Custom loop text: {TOOL} failed 3 times." in warnings
    assert_logged_once(caplog, str(path), "loop_oscillation", "must start with [SUPERVISOR]")
    assert_logged_once(caplog, str(path), "cascade", "expected text")
    # fixed while the agent runs: the new file is read on the next steering
    path.write_text('loop_repeat: "[SUPERVISOR] Second version on $tool."\n', encoding="utf-8")
    driver = Driver()
    warnings = driver.fail(3)
    assert f"{TAG} Second version on {TOOL}." in warnings


# =========================================================================== the real hook files, through the stand-in loader

SABOTEUR = '''\
try:
    from helpers.extension import Extension
except ImportError:
    from python.helpers.extension import Extension


class Saboteur(Extension):
    """Another layer's extension: puts what the test asks for on the agent."""

    async def execute(self, **kwargs):
        for name, value in dict(getattr(self.agent, "_saboteur", {{}}).get("{point}", {{}})).items():
            if name.startswith("data:"):
                self.agent.data[name[5:]] = value
            else:
                setattr(self.agent, name, value)
'''


def saboteur_session(home: Path, tmp_path: Path, era: str) -> Session:
    """A conftest Session whose loader also loads another layer's extensions: one
    before the dispatcher, one before the recorder and one between the recorder and
    the supervisor."""
    folder = tmp_path / "other_layer"
    for point, name in (("before_main_llm_call", "_10_saboteur.py"), ("tool_execute_after", "_20_saboteur.py"),
                        ("message_loop_end", "_40_saboteur.py")):
        (folder / point).mkdir(parents=True)
        (folder / point / name).write_text(SABOTEUR.format(point=point), encoding="utf-8")
    session = Session(home, era)
    session.standin = StandInSession(era=era, extension_folders=[extensions_dir(), folder])
    session.agent = session.standin.agent
    assert [c.__name__ for c in session.standin.points["message_loop_end"]] == ["Saboteur", "SupervisorLoop"]
    return session


@pytest.mark.parametrize("garbage", ["codegen", {}, {"role_id": "codegen"}, Raising()], ids=["text", "empty", "partial", "raising"])
def test_another_extension_garbling_the_role_between_dispatcher_and_supervisor(home, tmp_path, caplog, era, garbage):
    session = saboteur_session(home, tmp_path, era)
    session.agent._saboteur = {"message_loop_end": {ROLE_ATTR: garbage}}
    session.run(*[fail(TOOL) for _ in range(4)])
    assert session.steering() == []
    assert STATE_KEY not in session.agent.data
    assert_logged_once(caplog, f"agent.{ROLE_ATTR}", "not a valid role profile")
    assert_no_catch_all(caplog)
    session.agent._saboteur = {}
    session.run(*[fail(TOOL) for _ in range(3)])
    assert_active(session.agent)
    assert session.agent.data[STATE_KEY]["turn"] == 3
    assert "loop" in [a for _, a in session.anomalies()]


def test_another_extension_garbling_everything_each_turn(home, tmp_path, caplog, era):
    session = saboteur_session(home, tmp_path, era)
    session.agent._saboteur = {
        "before_main_llm_call": {"_htn_state": "garbage", "_bst_store": ["garbage"], "data:ctx_window": {"tokens": "lots"},
                                 "data:org_supervisor": {"turn": "x"}, "data:_tool_failures": {"history": "x"}},
        "tool_execute_after": {"_error_diagnosis": {"tool": None, "error_class": 3}},
        "message_loop_end": {PACE_ATTR: "panic", "data:_org_tool_ledger": "garbage"},
    }
    session.run(*[fail(TOOL) for _ in range(5)])
    assert session.agent._org_active_role["role_id"] == "codegen"
    assert session.agent.data[STATE_KEY]["turn"] == 1  # reset every turn by the garbage, never crashed
    assert_no_catch_all(caplog)
    assert_no_duplicate_messages(caplog)
    for fragment in ("agent._htn_state", "agent._bst_store", f"agent.{PACE_ATTR}", f"agent.data[{LEDGER_KEY!r}]"):
        assert_logged_once(caplog, fragment)
    session.agent._saboteur = {}
    session.agent._htn_state = session.agent._bst_store = None
    session.run(*[fail(TOOL, {"path": "/y"}) for _ in range(3)])
    assert [a for _, a in session.anomalies()] == ["loop"]


# =========================================================================== random garbage in every attribute and key

#: values that break numeric code: non-finite, beyond float range, bool-for-int, negative, empty
_EDGE_VALUES = [float("nan"), float("inf"), float("-inf"), 10**400, -(10**400), 2**63, -1, 0, True, False, "", "0", "nan", None]
_edge = st.sampled_from(_EDGE_VALUES)
_scalars = _edge | st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12)
_json = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=10)
_tools = st.sampled_from([TOOL, "text_editor", "response", "unknown"])


def _near(shape: dict[str, st.SearchStrategy]) -> st.SearchStrategy:
    """Dicts with the keys a layer expects, holding anything, some keys left out."""
    return st.fixed_dictionaries({}, optional=shape)


def _garbage(json_values: st.SearchStrategy, edge: st.SearchStrategy) -> dict[str, st.SearchStrategy]:
    """Per attribute or key: any JSON-like value, or the shape its layer writes with
    garbage inside (edge values weighted up where a number is read)."""
    j = json_values
    n = edge | j  # where the pack reads a number
    role = st.just(_valid_role_dict())
    return {
        "_htn_state": _near({"turns_since_progress": n, "current_step": j, "plan_name": j, "plan_id": j}) | j,
        "_bst_store": _near({"__bst_belief_state__": _near({"domain": st.sampled_from(["debugging", "coding", "research"]) | j, "confidence": n}) | j}) | j,
        "_org_active_role": j | role | role.flatmap(lambda r: j.map(lambda v: {**r, "doctrine": v})),
        "_org_pace_level": j | st.sampled_from(list(PACE_LEVELS)),
        "_error_diagnosis": j | _near({"tool": j | _tools, "error_class": j}),
        "data:_tool_failures": _near({"consecutive": st.dictionaries(_tools, n, max_size=3) | j,
                                      "history": st.lists(_near({"tool": _tools | j, "error_type": j, "message_preview": j}) | j, max_size=5) | j}) | j,
        "data:_org_tool_ledger": j,
        "data:org_supervisor": _near({"version": j, "turn": n, "injections": n, "last_fired": st.dictionaries(st.sampled_from(["loop", "stall", "pace"]), n, max_size=3) | j,
                                      "last_severity": st.dictionaries(st.sampled_from(["loop", "stall", "pace"]), st.sampled_from(list(SEVERITY_ORDER)) | j, max_size=3) | j,
                                      "episode": st.dictionaries(st.sampled_from(["loop", "stall"]), n, max_size=2) | j}) | j,
        "data:ctx_window": _near({"tokens": n, "text": j}) | j,
    }


#: when each kind of garbage is put on the agent: before the dispatcher, after it
#: (someone else between dispatcher and supervisor) or just before the supervisor
_WHEN = {"_org_active_role": "after_dispatch", "_org_pace_level": "after_dispatch", "_error_diagnosis": "after_dispatch",
         "data:_org_tool_ledger": "before_end"}


def _turn_plans(json_values: st.SearchStrategy, edge: st.SearchStrategy) -> st.SearchStrategy:
    one_turn = st.fixed_dictionaries({}, optional=_garbage(json_values, edge))
    return st.lists(st.tuples(one_turn, st.booleans()), min_size=1, max_size=4)


def _apply(garbage: dict[str, Any], when: str) -> Callable[[Any], None]:
    def put(agent: Any) -> None:
        for name, value in garbage.items():
            if _WHEN.get(name, "before") != when:
                continue
            if name.startswith("data:"):
                agent.data[name[5:]] = value
            else:
                setattr(agent, name, value)

    return put


def _run_garbage_session(plans: list[tuple[dict[str, Any], bool]]) -> tuple[Driver, list[list[str]]]:
    forget_logged()
    hooks.store = OrganizationStore()
    driver = Driver()
    per_turn: list[list[str]] = []
    for garbage, failing in plans:
        supervisor_before = driver.agent.data.get(STATE_KEY)
        warnings = driver.turn(TOOL, {"p": 1} if failing else _DEFAULT, MISSING_FILE if failing else "done",
                               before=_apply(garbage, "before"), after_dispatch=_apply(garbage, "after_dispatch"),
                               before_end=_apply(garbage, "before_end"))
        per_turn.append(warnings)
        # supervisor invariants: at most one steering a turn, in the house style
        assert len(warnings) <= 1, warnings
        for text in warnings:
            assert text.startswith(TAG) and count_sentences(text) <= 3, text
        state = driver.agent.data.get(STATE_KEY)
        if state is not supervisor_before and state is not garbage.get(f"data:{STATE_KEY}"):
            assert_valid_supervisor_state(state)
    return driver, per_turn


def _recovers(driver: Driver) -> None:
    """The garbage stops (the other layers clean up): the pack works normally again."""
    agent = driver.agent
    for name in ("_htn_state", "_bst_store", "_error_diagnosis"):
        agent.__dict__.pop(name, None)
    for key in (FAILURES_KEY, LEDGER_KEY, STATE_KEY, "ctx_window"):
        agent.data.pop(key, None)
    before = len(agent.history)
    for n in range(3):
        driver.turn(TOOL, {"recover": 1}, MISSING_FILE)
        assert_active(agent)
        assert ledger_size(agent) == n + 1
        assert agent.data[STATE_KEY]["turn"] == n + 1
    assert any(m.kind == "warning" and m.content["system_warning"].startswith(LOOP_TEXT) for m in agent.history[before:])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(plans=_turn_plans(_json, _edge))
def test_random_garbage_never_escapes_and_the_supervisor_keeps_its_invariants(home, plans):
    driver, _ = _run_garbage_session(plans)
    _recovers(driver)


# The same garbage as above, ints beyond float range (10**400) included: they are rejected
# where they are read (org/kernel/values.py plain_number), not by the hooks' catch-all.
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(plans=_turn_plans(_json, _edge))
def test_random_garbage_is_handled_where_it_is_read_and_logged_once(home, plans):
    records: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record):
            records.append(record.getMessage())

    handler = Collect()
    logger = logging.getLogger(LOGGER)
    logger.addHandler(handler)
    try:
        driver, _ = _run_garbage_session(plans)
    finally:
        logger.removeHandler(handler)
    caught = [m for m in records if CATCH_ALL in m]
    assert not caught, caught
    repeated = [m for m, n in collections.Counter(records).items() if n > 1]
    assert not repeated, repeated
    _recovers(driver)


# =========================================================================== the same problem, a changing value


@pytest.mark.parametrize("attr,values,fragment", [
    ("_htn_state", [{"turns_since_progress": str(n)} for n in range(6)], "agent._htn_state.turns_since_progress"),
    ("_bst_store", [{"__bst_belief_state__": {"domain": n}} for n in range(6)], "agent._bst_store['__bst_belief_state__'].domain"),
    (PACE_ATTR, [f"level-{n}" for n in range(6)], f"agent.{PACE_ATTR}"),
], ids=["htn_turns_as_text", "bst_domain_as_number", "pace_level_words"])
def test_a_field_wrong_the_same_way_every_turn_is_logged_once(home, caplog, attr, values, fragment):
    """The messages quote the offending value, but warn_once() de-duplicates on a stable key
    per field: a layer that keeps writing the same wrong kind of value (turns as text: '1',
    '2', '3', ...) gets the problem logged once, not once a turn."""
    driver = Driver()
    for value in values:
        put = _set(attr, value)
        if attr == PACE_ATTR:
            driver.turn(after_dispatch=put)
        else:
            driver.turn(before=put)
    assert getattr(driver.agent, ROLE_ATTR)["role_id"] == "codegen"  # the pack went on working
    assert_logged_once(caplog, fragment)
