"""A radio check computed from a SALUTE file gives the verdict computed from the live agent."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from org.contracts import RoleProfile, SaluteReport
from org.contracts.role import CascadeDoctrine, ContextThresholds, Doctrine, LoopDoctrine
from org.kernel import loading
from org.kernel.files import FileRefused
from org.kernel.outcomes import ToolOutcome
from org.macrocosm.volume import read_report
from org.resources import roles_dir
from org.supervisor.detectors import CYCLE_PERIODS, detect_churn
from org.supervisor.radio_check import SupervisorState, radio_check
from org.supervisor.signals import doctrine_version, needed_outcomes, signals_from_snapshot, snapshot_from_signals
from org.supervisor.snapshot import Snapshot

TOOLS = ["code_execution_tool", "text_editor", "search_engine", "wait", "response"]

outcome = st.builds(
    lambda turn, tool, ok, error, sig, out, msg, novel, kind, line, command, waits, prints, empty, copy: ToolOutcome(
        turn, tool, ok, None if ok else error, sig, out, msg, novel, kind, line, f"e{hash(line) % 3}" if line else None, command,
        waits=waits, prints=prints, empty=empty and ok and kind == "inspect", ran_copy=copy and copy[0], edited_copy=copy and copy[1]),
    st.integers(0, 500), st.sampled_from(TOOLS), st.booleans(),
    st.sampled_from(["not_found", "timeout", "execution", "x" * 64]),
    st.sampled_from(["s1", "s2", "s3"]), st.sampled_from(["h1", "h2"]),
    st.sampled_from(["", "cat: /x: No such file", "Traceback …"]), st.booleans(),
    st.sampled_from(["inspect", "edit", "run"]), st.sampled_from([None, "KeyError: 'x'", "cat: /x: No such file or directory"]),
    st.sampled_from([None, "python app.py", "cat /x"]), st.booleans(), st.booleans(), st.booleans(),
    st.sampled_from([None, ("/testbed/lib/m/a.py", "/workspace/r/lib/m/a.py"), ("/testbed/lib/m/b.py", "/workspace/r/lib/m/b.py")]),
)

doctrine = st.builds(
    lambda repeat, cycles, exempt, distinct, window, warning, spread, cooldown, limit, looks: Doctrine(
        loop=LoopDoctrine(repeat_threshold=repeat, oscillation_cycles=cycles, exempt_tools=exempt),
        cascade=CascadeDoctrine(distinct_tools=distinct, window=window),
        context_thresholds=ContextThresholds(warning=warning, critical=min(1.0, warning + spread)),
        cooldown_turns=cooldown, max_turns_without_progress=limit, max_looks_finding_nothing=looks,
    ),
    st.integers(2, 5), st.integers(2, 3), st.lists(st.sampled_from(TOOLS), max_size=2, unique=True),
    st.integers(2, 4), st.integers(2, 9), st.floats(0.5, 0.95), st.floats(0, 0.2), st.integers(0, 4), st.integers(1, 20),
    st.integers(1, 8),
)

ROLE = loading.load(RoleProfile, roles_dir() / "codegen.yaml")

snapshot = st.builds(
    lambda turn, d, level, tsp, source, step, fill, native, outcomes, domain: Snapshot(
        turn=turn, role_id=ROLE.role_id, doctrine=d, pace_level=level, pace_plan=ROLE.pace_plan,
        turns_since_progress=tsp, progress_source=source if tsp is not None else None, current_step=step,
        plan_name=None, bst_domain=domain, bst_confidence=None, outcomes=tuple(outcomes), context_fill=fill,
        native_repeat_warning=native,
    ),
    st.integers(1, 1000), doctrine, st.sampled_from([None, "primary", "alternate", "contingent", "emergency"]),
    st.one_of(st.none(), st.integers(0, 40)), st.sampled_from(["htn", "pack"]),
    st.one_of(st.none(), st.text(max_size=50)), st.one_of(st.none(), st.floats(0, 1.2)), st.booleans(),
    st.lists(outcome, max_size=64), st.one_of(st.none(), st.sampled_from(["codegen", "devops"])),
)

state = st.builds(
    lambda fired, severities, episode: SupervisorState(
        turn=0, last_fired=fired, last_severity={k: v for k, v in severities.items() if k in fired}, episode=episode,
    ),
    st.dictionaries(st.sampled_from(["stall", "loop", "context", "cascade", "pace"]), st.integers(0, 1000), max_size=5),
    st.dictionaries(st.sampled_from(["stall", "loop", "context", "cascade", "pace"]), st.sampled_from(["warning", "critical"])),
    st.dictionaries(st.sampled_from(["stall", "loop", "context", "cascade", "pace"]), st.integers(1, 5), max_size=5),
)


def verdict(result):
    return (
        [f.model_dump() for f in result.findings],
        [f.model_dump() for f in result.steering],
        result.health,
    )


def report_with(signals) -> SaluteReport:
    return SaluteReport.model_validate({
        "reason": "turn",
        "status": {"state": "active", "pace_level": signals.pace_level or "primary", "health": "nominal"},
        "activity": {},
        "unit": {"unit_id": "unit-1", "role_id": ROLE.role_id, "role_name": ROLE.role_name, "role_type": ROLE.role_type,
                 "reports_to": "engineering_xo", "organization": "software_dev"},
        "time": {"timestamp": datetime.now(timezone.utc), "turns_elapsed": signals.turn, "turns_since_progress": 0},
        "environment": {},
        "signals": signals,
    })


@settings(max_examples=400, deadline=None)
@given(live=snapshot, saved=state)
def test_verdict_from_the_file_equals_the_live_verdict(tmp_path_factory, live, saved):
    path = tmp_path_factory.mktemp("volume") / "salute.json"
    path.write_text(report_with(signals_from_snapshot(live)).model_dump_json(indent=2))

    from_file = snapshot_from_signals(read_report(path).signals)

    live_state = SupervisorState.from_dict(saved.to_dict())
    file_state = SupervisorState.from_dict(saved.to_dict())
    assert verdict(radio_check(from_file, file_state)) == verdict(radio_check(live, live_state))
    assert file_state.to_dict() == live_state.to_dict()


def test_a_reported_outcome_answers_every_question_the_detectors_ask_a_live_one():
    """The XO's detectors read a report's outcomes as they are: each property of ToolOutcome is there too, alike."""
    from org.contracts.salute import OutcomeSignal

    asked = [name for name, value in vars(ToolOutcome).items() if isinstance(value, property)]
    assert {"result", "worked"} <= set(asked)
    for live in (ToolOutcome(1, "t", True, None, "s", "h", ""), ToolOutcome(1, "t", True, "test", "s", "h", "", error_signature="e"),
                 ToolOutcome(1, "t", False, "execution", "s", "h", "", error_signature="e")):
        reported = OutcomeSignal(**{name: getattr(live, name) for name in OutcomeSignal.model_fields})
        assert [getattr(reported, name) for name in asked] == [getattr(live, name) for name in asked]


def test_every_field_of_a_live_outcome_is_carried_in_the_report():
    """A field the unit knows but its report leaves out would make the XO judge otherwise."""
    from dataclasses import fields

    from org.contracts.salute import OutcomeSignal

    live = ToolOutcome(7, "code_execution_tool", False, "execution", "s", "h", "", novel=True, kind="edit", error_line="E: x",
                       error_signature="e", command="python a.py", shape="sh", baseline=True, blocked=True, waits=True, prints=True,
                       empty=True, program=True, ran_copy="/testbed/lib/m/a.py", edited_copy="/workspace/r/lib/m/a.py")
    carried = {f.name for f in fields(ToolOutcome)} - {"message_preview"}  # no tool output leaves the unit
    assert carried <= set(OutcomeSignal.model_fields)
    [reported] = signals_from_snapshot(Snapshot(turn=8, role_id=ROLE.role_id, doctrine=ROLE.doctrine, outcomes=(live,))).outcomes
    assert {name: getattr(reported, name) for name in carried} == {name: getattr(live, name) for name in carried}


def test_failures_in_a_row_of_exempt_calls_are_carried_whole():
    """No call a loop is judged on, and a short window: PACE steering still counts every failure in a row."""
    d = Doctrine(loop=LoopDoctrine(repeat_threshold=2, oscillation_cycles=2, exempt_tools=["code_execution_tool"]),
                 cascade=CascadeDoctrine(distinct_tools=2, window=2))
    failing = tuple(ToolOutcome(i, "code_execution_tool", False, "not_found", "s1", "h1", "", kind="inspect") for i in range(5))
    assert len(needed_outcomes(failing, d)) == 5
    worked = (ToolOutcome(0, "code_execution_tool", True, None, "s0", "h0", ""),) + failing
    assert [o.turn for o in needed_outcomes(worked, d)] == [0, 0, 1, 2, 3, 4]


def test_what_churn_and_reruns_look_back_at_is_carried_and_nothing_else():
    d = Doctrine()  # repeat 3, cycles of up to 6 calls going round 2 times (12 outcomes), cascade window 5
    tail = max(d.loop.repeat_threshold, d.loop.no_tool_threshold, max(CYCLE_PERIODS) * d.loop.oscillation_cycles, d.cascade.window)

    distinct = tuple(ToolOutcome(i, "text_editor", True, None, f"s{i}", f"h{i}", "") for i in range(64))
    assert [o.turn for o in needed_outcomes(distinct, d)] == list(range(64 - tail, 64))
    longer = tuple(ToolOutcome(i, "x", True, None, f"s{i}", "h", "") for i in range(100))
    assert [o.turn for o in needed_outcomes(longer, d)] == list(range(100 - tail, 100))
    assert needed_outcomes((), d) == ()
    # calls that only print the agent's own text: as many as make the doctrine's streak
    printing = tuple(ToolOutcome(i, "x", True, None, f"s{i}", f"h{i}", "", prints=True) for i in range(64))
    assert len(needed_outcomes(printing, Doctrine(loop=LoopDoctrine(no_tool_threshold=12)))) == 12

    # churn: every failure with the latest error, however early in the task, and for each
    # stretch between two of them what says whether a fix was tried or something worked
    # (and the failures in a row up to now, with the call that worked before them: PACE steering counts them)
    failing = [ToolOutcome(i, "code_execution_tool", False, "execution", f"c{i}", "e", "", error_signature="E" if i % 10 == 0 else None)
               for i in range(41)]
    assert [o.turn for o in needed_outcomes(tuple(failing), d)] == list(range(41))  # all failed in a row
    failing[33] = ToolOutcome(33, "code_execution_tool", True, None, "c33", "ok", "", kind="run")
    assert [o.turn for o in needed_outcomes(tuple(failing), d)] == [0, 1, 10, 11, 20, 21, *range(41 - tail, 41)]
    failing[13] = ToolOutcome(13, "code_execution_tool", True, None, "c13", "ok", "", kind="run")
    failing[25] = ToolOutcome(25, "code_execution_tool", True, None, "c25", "e2", "", kind="edit")
    assert [o.turn for o in needed_outcomes(tuple(failing), d)] == [0, 1, 10, 11, 13, 20, 21, 25, *range(41 - tail, 41)]

    # an edit applied again: its applications, whatever came between, back to the other edit before them
    applied = [ToolOutcome(i, "code_execution_tool", True, None, {4: "edit-B", 12: "edit-A", 20: "edit-A", 28: "edit-A"}.get(i, f"l{i}"),
                           f"h{i}", "", kind="edit" if i in (4, 12, 20, 28) else "inspect") for i in range(40)]
    applied.append(ToolOutcome(40, "code_execution_tool", True, None, "edit-A", "h40", "", kind="edit"))
    assert [o.turn for o in needed_outcomes(tuple(applied), d)] == [4, 12, 20, 28, *range(41 - tail, 41)]

    # reruns: each run of the latest call, and for each stretch between two runs its first
    # edit (or first outcome) and its first novel outcome
    work = []
    for i in range(40):
        if i % 10 == 0:
            work.append(ToolOutcome(i, "code_execution_tool", True, None, "run", "same", "", kind="run", command="pytest"))
        else:
            work.append(ToolOutcome(i, "text_editor", True, None, f"e{i}", f"h{i}", "", novel=i > 10, kind="edit" if i == 14 else "inspect"))
    work.append(ToolOutcome(40, "code_execution_tool", True, None, "run", "same", "", kind="run", command="pytest"))
    assert [o.turn for o in needed_outcomes(tuple(work), d)] == [0, 1, 10, 11, 14, 20, 21, *range(41 - tail, 41)]


def test_report_size_stays_small_with_a_full_history():
    history = tuple(ToolOutcome(i, "code_execution_tool", False, "execution", f"s{i}", f"h{i}", "x" * 150,
                                error_line="x" * 150, error_signature="E", command="x" * 150) for i in range(64))
    live = Snapshot(turn=64, role_id=ROLE.role_id, doctrine=ROLE.doctrine, pace_plan=ROLE.pace_plan, outcomes=history)
    text = report_with(signals_from_snapshot(live)).model_dump_json()
    assert len(text) < 48_000  # a full task of 64 failures with one error, far below the 256,000-byte limit readers accept
    assert {o["message_preview"] for o in json.loads(text)["signals"]["outcomes"]} == {""}  # no tool output leaves
    assert json.loads(text)["signals"]["doctrine_version"] == doctrine_version(ROLE.doctrine, ROLE.pace_plan)


def test_doctrine_version_follows_the_numbers():
    a = Doctrine()
    assert doctrine_version(a, ROLE.pace_plan) == doctrine_version(Doctrine(), ROLE.pace_plan)
    assert doctrine_version(a, ROLE.pace_plan) != doctrine_version(Doctrine(cooldown_turns=9), ROLE.pace_plan)


def test_reports_of_one_doctrine_share_its_validated_model_and_other_content_is_never_mixed_up(tmp_path):
    live = Snapshot(turn=3, role_id=ROLE.role_id, doctrine=ROLE.doctrine, pace_plan=ROLE.pace_plan)
    text = report_with(signals_from_snapshot(live)).model_dump_json()
    first, second = SaluteReport.model_validate_json(text), SaluteReport.model_validate_json(text)
    assert first.signals.doctrine is second.signals.doctrine and first.signals.pace_plan is second.signals.pace_plan

    # the same doctrine_version over other numbers (a unit that lies, or a hand edit) is validated on its own
    edited = json.loads(text)
    edited["signals"]["doctrine"]["cooldown_turns"] = 9
    assert SaluteReport.model_validate_json(json.dumps(edited)).signals.doctrine.cooldown_turns == 9
    broken = json.loads(text)
    broken["signals"]["pace_plan"]["alternate"]["trigger"] = "consecutive_tool_failures >= 3"
    path = tmp_path / "salute.json"
    path.write_text(json.dumps(broken))
    with pytest.raises(FileRefused, match=r"signals\.pace_plan\.alternate\.trigger"):
        read_report(path)
    assert SaluteReport.model_validate_json(text).signals.doctrine.cooldown_turns == ROLE.doctrine.cooldown_turns


def test_a_report_carries_the_detour_the_repeated_mistake_is_judged_on():
    """The way around a failure the unit's detector takes (the first command that worked
    without changing files, a look too) is the one its report carries, however far back."""
    def out(turn, command, ok, kind="inspect", error=None):
        return ToolOutcome(turn, "code_execution_tool", ok, None if ok else "not_found", f"s-{command}", f"h-{command}", "",
                           kind=kind, command=command, error_signature=error, error_line=error and "Error: File name Foo.java not found")

    def stretch(turn, n):
        return [out(turn, f"cat missing{n}", False, error=f"F{n}"), out(turn + 1, f'search_file "a{n}" /src/Foo.java', True),
                out(turn + 2, f"python check{n}.py", True, kind="run")]

    looks = [out(4 + n, f"ls dir{n}", True) for n in range(10)]
    outcomes = (out(0, 'search_file "a0" Foo.java', False, error="E"), *stretch(1, 0), *looks,
                out(14, 'search_file "a1" Foo.java', False, error="E"), *stretch(15, 1),
                out(18, 'search_file "a2" Foo.java', False, error="E"))
    live = Snapshot(turn=19, role_id=ROLE.role_id, doctrine=ROLE.doctrine, outcomes=outcomes)
    carried = snapshot_from_signals(signals_from_snapshot(live))
    assert len(carried.outcomes) < len(outcomes)  # the first stretch is carried in part
    found = detect_churn(live)
    assert found is not None and found.template == "churn_detour"
    assert detect_churn(carried).evidence == found.evidence


def test_a_report_carries_the_runs_through_another_copy_its_steering_counts():
    """Runs through the same other copy of an edited file, far apart in a long task: the XO counts
    as many as the unit, so it says the firmer second message when the unit would."""
    from org.supervisor.detectors import detect_other_copy

    copy = {"ran_copy": "/testbed/lib/m/a.py", "edited_copy": "/workspace/r/lib/m/a.py"}
    outcomes = []
    for turn in range(1, 61):
        through = turn in (3, 20, 40, 60)
        outcomes.append(ToolOutcome(turn, "code_execution_tool", not through, "execution" if through else None, f"s{turn}", f"h{turn}", "",
                                    novel=True, kind="run", command=f"python t{turn}.py", **(copy if through else {})))
    live = Snapshot(turn=60, role_id=ROLE.role_id, doctrine=ROLE.doctrine, outcomes=tuple(outcomes))
    reported = snapshot_from_signals(signals_from_snapshot(live))
    assert len(reported.outcomes) < len(live.outcomes)
    assert detect_other_copy(reported).evidence == detect_other_copy(live).evidence
    assert detect_other_copy(live).evidence["times"] == 4 and detect_other_copy(live).template == "rerun_other_copy_again"
