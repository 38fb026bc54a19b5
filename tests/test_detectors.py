"""Each detector's boundaries, on plain snapshots (no agent involved)."""

from __future__ import annotations

import pytest

from org.contracts.role import Doctrine, RoleProfile
from org.kernel import loading
from org.kernel.outcomes import ToolOutcome, canonical_signature, output_hash
from org.replay import roles_dir
from org.supervisor.detectors import detect_cascade, detect_context, detect_loop, detect_pace, detect_stall
from org.supervisor.snapshot import Snapshot

CODEGEN = loading.load(RoleProfile, roles_dir() / "codegen.yaml")


def out(tool: str, ok: bool, error_type: str | None = None, args: dict | None = None, output: str = "", turn: int = 0) -> ToolOutcome:
    return ToolOutcome(turn, tool, ok, None if ok else (error_type or "execution"), canonical_signature(tool, args or {}),
                       output_hash(output), output[:150])


def snap(**kw) -> Snapshot:
    doctrine = kw.pop("doctrine", None) or Doctrine()
    return Snapshot(turn=kw.pop("turn", 10), role_id="codegen", doctrine=doctrine, pace_plan=CODEGEN.pace_plan, **kw)


# stall ------------------------------------------------------------------------------

@pytest.mark.parametrize("turns, fires", [(None, False), (0, False), (12, False), (13, True), (50, True)])
def test_stall_fires_only_when_turns_exceed_the_doctrine_limit(turns, fires):
    assert (detect_stall(snap(turns_since_progress=turns)) is not None) is fires


def test_stall_limit_comes_from_doctrine():
    assert detect_stall(snap(turns_since_progress=3, doctrine=Doctrine(max_turns_without_progress=2))) is not None
    assert detect_stall(snap(turns_since_progress=3, doctrine=Doctrine(max_turns_without_progress=3))) is None


# loop -------------------------------------------------------------------------------

def test_two_identical_failures_are_not_a_loop_three_are():
    same = out("code_execution_tool", False, "not_found", {"code": "cat x"}, "No such file")
    assert detect_loop(snap(outcomes=(same, same))) is None
    finding = detect_loop(snap(outcomes=(same, same, same)))
    assert finding is not None and finding.evidence["pattern"] == "repeat"


def test_repeat_threshold_comes_from_doctrine():
    same = out("t", False, "not_found", {"a": 1}, "x")
    doctrine = Doctrine(loop={"repeat_threshold": 4})
    assert detect_loop(snap(outcomes=(same,) * 3, doctrine=doctrine)) is None
    assert detect_loop(snap(outcomes=(same,) * 4, doctrine=doctrine)) is not None


def test_same_tool_same_error_type_with_different_args_and_messages_is_iteration_not_a_loop():
    debugging = tuple(out("code_execution_tool", False, "execution", {"code": f"v{i}"}, f"ValueError: {i}") for i in range(3))
    assert detect_loop(snap(outcomes=debugging)) is None


def test_same_tool_same_error_with_different_args_but_same_message_is_a_loop():
    retries = tuple(out("search_engine", False, "network", {"q": f"q{i}"}, "Connection refused") for i in range(3))
    assert detect_loop(snap(outcomes=retries)) is not None


def test_same_args_same_error_different_message_is_a_loop():
    retries = tuple(out("t", False, "network", {"q": "same"}, f"Connection refused at {i}") for i in range(3))
    assert detect_loop(snap(outcomes=retries)) is not None


def test_identical_successful_results_repeated_are_a_loop_but_changing_output_is_not():
    same = out("code_execution_tool", True, args={"code": "ls"}, output="a b c")
    assert detect_loop(snap(outcomes=(same,) * 3)) is not None
    polling = tuple(out("code_execution_tool", True, args={"code": "tail log"}, output=f"line {i}") for i in range(5))
    assert detect_loop(snap(outcomes=polling)) is None


def test_exempt_tools_are_never_loops_and_do_not_break_runs_of_others():
    poll = out("wait", True, args={"s": 5}, output="still running")
    doctrine = Doctrine(loop={"exempt_tools": ["wait"]})
    assert detect_loop(snap(outcomes=(poll,) * 6, doctrine=doctrine)) is None
    same = out("t", False, "not_found", {"a": 1}, "x")
    assert detect_loop(snap(outcomes=(same, poll, same, poll, same), doctrine=doctrine)) is not None


def test_oscillation_needs_full_cycles():
    a = out("A", False, "network", {"x": 1}, "refused")
    b = out("B", False, "not_found", {"y": 1}, "missing")
    assert detect_loop(snap(outcomes=(a, b, a))) is None
    finding = detect_loop(snap(outcomes=(a, b, a, b)))
    assert finding is not None and finding.evidence["pattern"] == "oscillation"
    assert detect_loop(snap(outcomes=(a, b, a, b), doctrine=Doctrine(loop={"oscillation_cycles": 3}))) is None
    assert detect_loop(snap(outcomes=(a, b, a, b, a, b), doctrine=Doctrine(loop={"oscillation_cycles": 3}))) is not None


def test_edit_then_rerun_cycle_is_not_an_oscillation():
    cycle = []
    for i in range(3):
        cycle.append(out("text_editor", True, args={"patch": f"fix {i}"}, output="file saved"))
        cycle.append(out("code_execution_tool", False, "execution", {"code": "pytest"}, f"AssertionError {i}"))
    assert detect_loop(snap(outcomes=tuple(cycle))) is None


def test_loop_is_left_to_agent_zero_when_its_own_repeat_warning_fired():
    same = out("t", False, "not_found", {"a": 1}, "x")
    assert detect_loop(snap(outcomes=(same,) * 3, native_repeat_warning=True)) is None


# context ----------------------------------------------------------------------------

@pytest.mark.parametrize("fill, severity", [(None, None), (0.0, None), (0.7999, None), (0.80, "warning"), (0.8999, "warning"), (0.90, "critical"), (1.2, "critical")])
def test_context_thresholds(fill, severity):
    finding = detect_context(snap(context_fill=fill))
    assert (finding.severity if finding else None) == severity


def test_context_thresholds_come_from_doctrine():
    doctrine = Doctrine(context_thresholds={"warning": 0.5, "critical": 0.6})
    assert detect_context(snap(context_fill=0.55, doctrine=doctrine)).severity == "warning"
    assert detect_context(snap(context_fill=0.6, doctrine=doctrine)).severity == "critical"


# cascade ----------------------------------------------------------------------------

def test_cascade_needs_three_distinct_failing_tools_in_a_row():
    a, b, c = (out(t, False, "execution", {"i": t}, t) for t in "ABC")
    assert detect_cascade(snap(outcomes=(a, b))) is None
    assert detect_cascade(snap(outcomes=(a, b, a, b))) is None
    assert detect_cascade(snap(outcomes=(a, b, c))).evidence["tools"] == ["A", "B", "C"]


def test_a_success_in_between_breaks_the_cascade():
    a, b, c = (out(t, False, "execution", {"i": t}, t) for t in "ABC")
    good = out("D", True, args={}, output="fine")
    assert detect_cascade(snap(outcomes=(a, b, good, c))) is None


def test_cascade_only_looks_at_the_window():
    a, b, c = (out(t, False, "execution", {"i": t}, t) for t in "ABC")
    doctrine = Doctrine(cascade={"distinct_tools": 3, "window": 5})
    old_first = (a, b, c, c, c, c)  # A is outside the last 5
    assert detect_cascade(snap(outcomes=old_first, doctrine=doctrine)) is None
    assert detect_cascade(snap(outcomes=(a, b, c, c, c), doctrine=doctrine)) is not None


# PACE -------------------------------------------------------------------------------

@pytest.mark.parametrize("level, expected", [(None, None), ("primary", None), ("alternate", None), ("contingent", "critical"), ("emergency", "emergency")])
def test_pace_fires_at_contingent_and_emergency(level, expected):
    finding = detect_pace(snap(pace_level=level))
    assert (finding.severity if finding else None) == expected


def test_pace_finding_carries_the_role_description_and_emergency_is_cooldown_exempt():
    contingent = detect_pace(snap(pace_level="contingent"))
    emergency = detect_pace(snap(pace_level="emergency"))
    assert contingent.evidence["description"] == CODEGEN.pace_plan.contingent.description
    assert emergency.cooldown_exempt and not contingent.cooldown_exempt
