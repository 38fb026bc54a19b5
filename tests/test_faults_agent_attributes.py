"""Fault tests, source: attributes and ``agent.data`` keys that other layers set (HTN and
BST state, the dispatcher's role and pace level, tool-failure history, tool ledger,
persisted supervisor state, context window, error diagnosis).

The promise under test and the shared stand-ins: ``tests/fault_kit.py``.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import math
from typing import Any

import pytest
from fault_kit import (
    LOOP_TEXT,
    MISSING_FILE,
    TOOL,
    Driver,
    Opaque,
    Raising,
    a0org_messages,
    assert_active,
    assert_logged_once,
    assert_no_catch_all,
    assert_no_duplicate_messages,
    assert_valid_supervisor_state,
    last_outcome,
    ledger_size,
    logged,
    report,
    set_attr,
    set_data,
    valid_role_dict,
)

from org.contracts.common import PACE_LEVELS
from org.kernel.dispatcher import PACE_ATTR, ROLE_ATTR
from org.kernel.outcomes import FAILURES_KEY, LEDGER_KEY, ToolLedger
from org.supervisor.microcosm import STATE_KEY
from org.supervisor.steering import TAG

pytestmark = pytest.mark.usefixtures("fresh_store")


# =========================================================================== attributes other layers set


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
    warnings = driver.fail(3, before=set_attr("_htn_state", value))
    assert_active(driver.agent)
    assert any(w.startswith(LOOP_TEXT) for w in warnings)  # the supervisor still works
    assert report(home).activity.progress_source == "pack"  # progress from the pack's own signal
    assert_logged_once(caplog, *fragments, "HTN state ignored")
    assert_no_catch_all(caplog)
    assert_no_duplicate_messages(caplog)


def test_odd_but_usable_htn_state_is_used(home, caplog):
    htn = {"turns_since_progress": 2.0, "current_step": {"name": "apply migration", "args": [1]}, "plan_name": ["not", "text"], "plan_id": "p1"}
    driver = Driver()
    driver.turn(before=set_attr("_htn_state", htn))
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
    driver.fail(3, before=set_attr("_htn_state", {"turns_since_progress": value}))
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
    driver.fail(3, before=set_attr("_htn_state", {"turns_since_progress": value}))
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
    warnings = driver.fail(3, before=set_attr("_bst_store", value))
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
    driver.turn(before=set_attr("_bst_store", {"__bst_belief_state__": belief}))
    role = (belief or {}).get("domain") or None
    assert_active(driver.agent, "bugfix" if role == "debugging" else "codegen")
    salute = report(home, "bugfix" if role == "debugging" else "codegen")
    confidence = salute.activity.bst_confidence
    assert confidence is None or math.isfinite(confidence)  # the report stays valid JSON
    assert_no_catch_all(caplog)


def test_huge_bst_confidence_is_ignored(home, caplog):
    """Regression: float(10**400) raised OverflowError in the dispatcher."""
    driver = Driver()
    driver.turn(before=set_attr("_bst_store", {"__bst_belief_state__": {"domain": "debugging", "confidence": 10**400}}))
    assert_no_catch_all(caplog)
    assert_active(driver.agent, "bugfix")


def test_huge_bst_domain_does_not_silently_disable_the_health_correction(home, caplog):
    """Regression: an unbounded domain pushed the report over MAX_REPORT_BYTES and the health
    correction was skipped without a word."""
    driver = Driver()
    bst = set_attr("_bst_store", {"__bst_belief_state__": {"domain": "x" * 300_000}})
    for tool, output in (("code_execution_tool", MISSING_FILE), ("text_editor", "PermissionError: [Errno 13] Permission denied"),
                         ("browser_agent", "ConnectionError: Name or service not known")):
        driver.turn(tool, {"a": 1}, output, before=bst)  # a cascade: critical
    assert any("Cascade" in w for w in driver.agent.warnings())
    salute_path = home / "reports" / "codegen_latest.json"
    corrected = json.loads(salute_path.read_text(encoding="utf-8"))["status"]
    assert corrected["health"] == "critical" or logged(caplog, str(salute_path))


# ---- agent._org_active_role set to garbage by someone else between dispatcher and supervisor


def _role_with_doctrine(**doctrine: Any) -> dict:
    role = valid_role_dict()
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
        assert driver.turn(TOOL, {"p": 1}, MISSING_FILE, after_dispatch=set_attr(ROLE_ATTR, garbage)) == []
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
    warnings = driver.fail(4, after_dispatch=set_attr(PACE_ATTR, level))
    assert not any("PACE" in w for w in warnings)  # an unknown level never steers
    assert any(w.startswith(LOOP_TEXT) for w in warnings)  # the other detectors still do
    assert driver.agent.data[STATE_KEY]["turn"] == 4
    # PACE is judged again once the tool has run: the garbage never reaches the supervisor
    assert getattr(driver.agent, PACE_ATTR) in PACE_LEVELS
    assert_no_catch_all(caplog)
    driver.turn()
    assert getattr(driver.agent, PACE_ATTR) in PACE_LEVELS


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
        driver.turn(TOOL, {"n": n}, MISSING_FILE, before=set_data(FAILURES_KEY, FAILURES_USABLE_OR_REPLACED[case]))
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
    # a run that failed (a look that found nothing is no step of a failure streak)
    driver.turn(TOOL, {"code": "python /app/run.py"}, "python: can't open file '/app/run.py': [Errno 2] No such file or directory",
                before=set_data(FAILURES_KEY, {"consecutive": {TOOL: count}, "history": []}))
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
    warnings = driver.fail(3, before=set_data(LEDGER_KEY, garbage))
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
        driver.turn(TOOL, {"p": 1}, MISSING_FILE, before_end=set_data(LEDGER_KEY, garbage))
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
    warnings = driver.fail(3, before=set_data("ctx_window", window))
    assert_active(driver.agent)
    assert not any("Context is" in w for w in warnings)
    assert any(w.startswith(LOOP_TEXT) for w in warnings)
    assert_no_catch_all(caplog)


@pytest.mark.parametrize("tokens", [float("inf"), 10**13], ids=["inf", "implausible"])
def test_non_finite_context_tokens_are_ignored(home, caplog, tokens):
    """Regression: int(inf) raised in the dispatcher before the role was set."""
    driver = Driver()
    warnings = driver.fail(3, before=set_data("ctx_window", {"tokens": tokens}))
    assert_no_catch_all(caplog)
    assert_active(driver.agent)
    assert not any("Context is" in w for w in warnings)


def test_huge_int_context_tokens_are_ignored(home, caplog):
    """Regression: a token count beyond float range (10**400) made math.isfinite() raise
    OverflowError in the dispatcher before the role was set; now it is not a measurement."""
    driver = Driver()
    warnings = driver.fail(3, before=set_data("ctx_window", {"tokens": 10**400}))
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
    driver.fail(1, after_dispatch=set_attr("_error_diagnosis", diagnosis))
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
    driver.fail(1, after_dispatch=set_attr("_error_diagnosis", diagnosis))
    assert ledger_size(driver.agent) == 1
    assert_no_catch_all(caplog)


