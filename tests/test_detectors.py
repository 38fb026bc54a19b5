"""Each detector's boundaries, on plain snapshots (no agent involved)."""

from __future__ import annotations

from dataclasses import replace
from itertools import count

import pytest

from org.contracts.role import Doctrine, RoleProfile
from org.kernel import loading
from org.kernel.outcomes import ToolOutcome, record_outcome
from org.replay import roles_dir
from org.supervisor.detectors import (
    detect_cascade,
    detect_churn,
    detect_context,
    detect_oscillation,
    detect_pace,
    detect_repeat,
    detect_rerun,
    detect_stall,
    word,
)
from org.supervisor.snapshot import Snapshot

CODEGEN = loading.load(RoleProfile, roles_dir() / "codegen.yaml")


_TURNS = count(1)


def out(tool: str, ok: bool | None = None, error_type: str | None = None, args: dict | None = None, output: str = "",
        turn: int | None = None) -> ToolOutcome:
    """One outcome as the recorder makes it (``ok`` None: the classifier decides from the output),
    in a turn of its own: each later than the one made before, unless ``turn`` is given."""
    return replace(record_outcome({}, tool, args or {}, output, ok, error_type), turn=next(_TURNS) if turn is None else turn)


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


def test_a_stall_names_the_calls_repeated_and_counts_the_looks_that_found_nothing_since_it_began():
    """What came before the stall began (turn 20 - 13 = 7) is not what its turns went on."""
    def at(turn: int, command: str, empty: bool = False) -> ToolOutcome:
        return replace(out("code_execution_tool", args={"code": command}, output="x"), turn=turn, empty=empty)

    before = [at(1, "cat a"), at(2, "cat a"), at(3, "cat a"), at(4, "grep -rn y src", empty=True), at(7, "cat a")]
    during = [at(8, "ls"), at(9, "grep -rn x src", empty=True), at(11, "ls"), at(12, "cat b"), at(14, "grep -rn x src", empty=True),
              at(15, "ls"), at(19, "cat a")]
    stalled = snap(turn=20, turns_since_progress=13, outcomes=(*before, *during))
    finding = detect_stall(stalled)
    assert finding is not None and finding.evidence["since"] == 7
    word(stalled, [finding])
    assert finding.evidence["repeated"] == (("`ls`", 3), ("`grep -rn x src`", 2))
    assert finding.evidence["found_nothing"] == 2

    # ten different edits of one file, two of them alike (OpenHands GLM-4.6, django-16229): named
    # by the editor and the file, they are counted together, not "twice"
    def edit(turn: int, new: str) -> ToolOutcome:
        return replace(out("str_replace_editor", args={"command": "str_replace", "path": "/workspace/repro.py", "old_str": "a",
                                                       "new_str": new}, output="The file /workspace/repro.py has been edited."), turn=turn)
    edits = [edit(turn, "b" if turn in (12, 14) else f"c{turn}") for turn in range(8, 18)]
    run = replace(out("execute_bash", args={"command": "python /workspace/repro.py"}, output="Traceback (most recent call last):\nValueError: x"),
                  turn=19)
    stalled = snap(turn=20, turns_since_progress=13, outcomes=(*edits, run))
    finding = detect_stall(stalled)
    word(stalled, [finding])
    assert finding is not None and finding.evidence["repeated"] == (("`str_replace_editor str_replace /workspace/repro.py`", 10),)


def test_a_stall_is_worded_when_it_is_said_and_not_at_every_turn_it_is_held():
    """A stall is found at every turn it lasts and said once: what its steering names (the calls
    gone round) is worked out for the turn it is said, not for every turn it is held."""
    from org.supervisor.radio_check import SupervisorState, radio_check
    reads = tuple(replace(out("code_execution_tool", args={"code": f"cat {name}"}, output=name), turn=turn)
                  for turn, name in zip(range(8, 20), "abcabcabcabc"))
    state = SupervisorState()
    said = radio_check(snap(turn=20, turns_since_progress=13, outcomes=reads), state)
    [stall] = said.steering
    assert stall.anomaly == "stall" and stall.evidence["repeated"] == (("`cat a`", 4), ("`cat b`", 4))
    state.record(stall)
    held = radio_check(snap(turn=21, turns_since_progress=14, outcomes=reads), state)
    [found] = held.findings
    assert held.steering == [] and found.evidence["episode"] == stall.evidence["episode"]
    assert "repeated" not in found.evidence and "made_before" not in found.evidence


def test_a_wording_that_fails_leaves_the_steering_saying_less(monkeypatch):
    from org.supervisor import detectors
    from org.supervisor.radio_check import SupervisorState, radio_check

    def broken(snapshot, finding):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setitem(detectors.WORDING, "stall", broken)
    [stall] = radio_check(snap(turn=20, turns_since_progress=13), SupervisorState()).steering
    assert stall.anomaly == "stall" and "repeated" not in stall.evidence


# loop: repeat and oscillation --------------------------------------------------------

def test_two_identical_failures_are_not_a_loop_three_are():
    same = out("code_execution_tool", args={"code": "cat x"}, output="cat: x: No such file or directory")
    assert detect_repeat(snap(outcomes=(same, same))) is None
    finding = detect_repeat(snap(outcomes=(same, same, same)))
    assert finding is not None and finding.evidence["pattern"] == "repeat" and finding.evidence["action"] == "`cat x`"


def test_repeat_threshold_comes_from_doctrine():
    same = out("t", False, "not_found", {"a": 1}, "x")
    doctrine = Doctrine(loop={"repeat_threshold": 4})
    assert detect_repeat(snap(outcomes=(same,) * 3, doctrine=doctrine)) is None
    assert detect_repeat(snap(outcomes=(same,) * 4, doctrine=doctrine)) is not None


def test_different_calls_with_different_errors_are_iteration_not_a_loop():
    debugging = tuple(out("code_execution_tool", args={"code": f"python v{i}.py"}, output=f"ValueError: bad value {'abc'[i]}") for i in range(3))
    assert detect_repeat(snap(outcomes=debugging)) is None
    assert detect_churn(snap(outcomes=debugging)) is None


def test_different_calls_with_the_same_error_are_churn_not_a_repeat():
    retries = tuple(replace(out("search_engine", args={"q": f"q{i}"}, output="ConnectionError: Connection refused"), baseline=False)
                    for i in range(3))
    assert detect_repeat(snap(outcomes=retries)) is None
    finding = detect_churn(snap(outcomes=retries))
    assert finding is not None and finding.evidence["error"] == "ConnectionError: Connection refused"


def test_the_same_call_failing_with_only_its_numbers_changing_is_a_loop():
    retries = tuple(out("t", args={"q": "same"}, output=f"ConnectionError: refused after {i} ms") for i in range(3))
    assert detect_repeat(snap(outcomes=retries)) is not None


def test_identical_successful_results_repeated_are_a_loop_but_changing_output_is_not():
    same = out("code_execution_tool", True, args={"code": "ls"}, output="a b c")
    assert detect_repeat(snap(outcomes=(same,) * 3)) is not None
    polling = tuple(out("code_execution_tool", True, args={"code": "tail log"}, output=f"line {i}") for i in range(5))
    assert detect_repeat(snap(outcomes=polling)) is None


def test_exempt_tools_are_never_loops_and_do_not_break_runs_of_others():
    poll = out("wait", True, args={"s": 5}, output="still running")
    doctrine = Doctrine(loop={"exempt_tools": ["wait"]})
    assert detect_repeat(snap(outcomes=(poll,) * 6, doctrine=doctrine)) is None
    same = out("t", False, "not_found", {"a": 1}, "x")
    assert detect_repeat(snap(outcomes=(same, poll, same, poll, same), doctrine=doctrine)) is not None


def test_oscillation_needs_full_cycles():
    a = out("A", False, "network", {"x": 1}, "refused")
    b = out("B", False, "not_found", {"y": 1}, "missing")
    assert detect_oscillation(snap(outcomes=(a, b, a))) is None
    finding = detect_oscillation(snap(outcomes=(a, b, a, b)))
    assert finding is not None and finding.evidence["pattern"] == "oscillation"
    assert detect_oscillation(snap(outcomes=(a, b, a, b), doctrine=Doctrine(loop={"oscillation_cycles": 3}))) is None
    assert detect_oscillation(snap(outcomes=(a, b, a, b, a, b), doctrine=Doctrine(loop={"oscillation_cycles": 3}))) is not None



def test_an_oscillation_between_two_calls_of_one_tool_names_them_apart():
    # AutoCodeRover searching for two classes in turns: both calls are named by the tool alone
    a = out("search_class", False, "not_found", {"class_name": "Query"}, "Could not find class Query in the codebase.")
    b = out("search_class", False, "not_found", {"class_name": "QuerySet"}, "Could not find class QuerySet in the codebase.")
    evidence = detect_oscillation(snap(outcomes=(a, b, a, b))).evidence
    assert (evidence["tool_a"], evidence["tool_b"]) == ("search_class", "search_class with other arguments")

def test_a_cycle_of_three_to_six_calls_going_round_twice_is_a_loop():
    a = out("A", True, args={"x": 1}, output="[File: a.py]\n1: x")
    b = out("B", False, "network", {"y": 1}, "refused")
    c = out("C", True, args={"z": 1}, output="[File: a.py]\n470: y")
    d = out("D", True, args={"w": 1}, output="3 matches")
    assert detect_oscillation(snap(outcomes=(a, b, c, a, b))) is None
    finding = detect_oscillation(snap(outcomes=(a, b, c, a, b, c)))
    assert finding.template == "loop_cycle" and finding.evidence["count"] == 3 and finding.evidence["cycles"] == 2
    assert finding.evidence["episode"].count("call:") == 3
    assert detect_oscillation(snap(outcomes=(d, a, b, c) * 2)).evidence["count"] == 4
    # a round of six (deepseek-coder: open, search, goto, scroll, a `create` that fails, open), not one of seven
    e, f, g = (out(name, True, args={"v": name}, output=f"{name} shown") for name in "EFG")
    six = detect_oscillation(snap(outcomes=(a, b, c, d, e, f) * 2))
    assert six.evidence["count"] == 6 and len(six.evidence["round"]) == 6
    assert detect_oscillation(snap(outcomes=(a, b, c, d, e, f, g) * 2)) is None
    assert detect_oscillation(snap(outcomes=(a, b, c) * 2, doctrine=Doctrine(loop={"oscillation_cycles": 3}))) is None


def test_a_cycle_whose_calls_all_work_or_whose_results_change_is_no_loop():
    a = out("A", True, args={"x": 1}, output="[File: a.py]\n1: x")
    c = out("C", True, args={"z": 1}, output="[File: a.py]\n470: y")
    d = out("D", True, args={"w": 1}, output="3 matches")
    assert detect_oscillation(snap(outcomes=(a, c, d) * 2)) is None
    b1, b2 = out("B", False, "execution", {"y": 1}, "Error: one"), out("B", False, "execution", {"y": 1}, "Error: two")
    assert detect_oscillation(snap(outcomes=(a, b1, c, a, b2, c))) is None
    assert detect_oscillation(snap(outcomes=(a, a, b1, a, a, b1))) is None  # a repeat inside is no cycle of three


def test_edit_then_rerun_cycle_is_not_an_oscillation():
    cycle = []
    for i in range(3):
        cycle.append(out("text_editor", True, args={"patch": f"fix {i}"}, output="file saved"))
        cycle.append(out("code_execution_tool", args={"code": "pytest"}, output=f"FAILED t.py::test_{'abc'[i]} - assert 1 == 2\n1 failed in 0.1s"))
    assert detect_oscillation(snap(outcomes=tuple(cycle))) is None


def test_loop_is_left_to_agent_zero_when_its_own_repeat_warning_fired():
    same = out("t", False, "not_found", {"a": 1}, "x")
    assert detect_repeat(snap(outcomes=(same,) * 3, native_repeat_warning=True)) is None


# churn and reruns ----------------------------------------------------------------------

def test_churn_threshold_comes_from_doctrine_and_failing_tests_never_churn():
    broken = tuple(replace(out("code_execution_tool", args={"code": f"python fix{i}.py && python app.py"}, output="SyntaxError: unexpected indent"),
                           baseline=False) for i in range(3))
    assert detect_churn(snap(outcomes=broken[:2])) is None
    assert detect_churn(snap(outcomes=broken)) is not None
    assert detect_churn(snap(outcomes=broken, doctrine=Doctrine(loop={"churn_threshold": 4}))) is None
    tests = tuple(out("code_execution_tool", args={"code": f"pytest -k {i}"}, output="FAILED t.py::test_a - assert 1 == 2\n1 failed in 0.1s")
                  for i in range(4))
    assert detect_churn(snap(outcomes=tests)) is None


def test_a_rerun_counts_only_after_other_work_and_resets_when_the_result_changes():
    run = out("code_execution_tool", args={"code": "python debug.py"}, output="TypeError: bad operand")
    edit = lambda n: out("code_execution_tool", args={"code": f"sed -i 's/{n}/{n + 1}/' a.py"}, output="")  # noqa: E731
    three = (run, edit(1), run, edit(2), run, edit(3), run)
    assert detect_rerun(snap(outcomes=three)) is not None
    assert detect_rerun(snap(outcomes=(run, run, run, run))) is None  # back to back is a repeat, not a rerun
    changed = out("code_execution_tool", args={"code": "python debug.py"}, output="TypeError: other operand")
    assert detect_rerun(snap(outcomes=(run, edit(1), run, edit(2), changed, edit(3), changed))) is None
    assert detect_rerun(snap(outcomes=three, doctrine=Doctrine(loop={"rerun_threshold": 4}))) is None


def test_a_run_that_works_needs_twice_as_many_unchanged_reruns():
    run = out("code_execution_tool", args={"code": "python debug.py"}, output="value: None")
    edit = lambda n: out("code_execution_tool", args={"code": f"sed -i 's/{n}/{n + 1}/' a.py"}, output="")  # noqa: E731
    work = [run]
    for n in range(6):
        work += [edit(n), run]
    assert detect_rerun(snap(outcomes=tuple(work[:7]))) is None
    assert detect_rerun(snap(outcomes=tuple(work))).evidence["times"] == 6


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



def test_searches_that_found_nothing_are_answers_not_a_cascade_even_where_the_scaffold_counts_them_failed():
    # AutoCodeRover counts a code search with no match as a failed call
    nothing = (out("search_method_in_class", False, None, {"class_name": "Product", "method_name": "save"},
                   "Could not find method save in class Product`."),
               out("search_code", False, None, {"code_str": "ForeignKey(Product)"}, "Could not find code ForeignKey(Product) in the codebase."),
               out("search_method_in_file", False, None, {"file_name": "a.py", "method_name": "f"}, "There is no method with name f in file a.py."),
               out("search_method", False, None, {"method_name": "f"}, "The method f does not appear in the codebase."))
    assert all(o.empty and o.error_type == "not_found" for o in nothing)
    assert detect_cascade(snap(outcomes=nothing)) is None
    # they neither count nor end a streak of tools really failing
    a, b, c = (out(t, False, "execution", {"i": t}, t) for t in "ABC")
    assert detect_cascade(snap(outcomes=(a, nothing[0], b, nothing[1], c))).evidence["tools"] == ["A", "B", "C"]

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


def test_pace_contingent_is_not_said_on_a_turn_agent_zero_warned_about_a_message_sent_again():
    """Agent-Zero's own warning already tells the model to do something else (a real chat got
    "change approach" on that very turn, one turn after a churn steering); "stop" still goes in."""
    assert detect_pace(snap(pace_level="contingent", native_repeat_warning=True)) is None
    assert detect_pace(snap(pace_level="emergency", native_repeat_warning=True)).severity == "emergency"


def test_pace_finding_carries_the_role_description_and_emergency_is_cooldown_exempt():
    contingent = detect_pace(snap(pace_level="contingent"))
    emergency = detect_pace(snap(pace_level="emergency"))
    assert contingent.evidence["description"] == CODEGEN.pace_plan.contingent.description
    assert emergency.cooldown_exempt and not contingent.cooldown_exempt
