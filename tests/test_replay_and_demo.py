"""``a0org replay`` and ``a0org demo``, run as real processes."""

from __future__ import annotations

import json
import os
from pathlib import Path

from pack_commands import a0org


def write_trace(path: Path, lines: list[dict]) -> Path:
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    return path


def test_replay_prints_one_json_line_per_steering(tmp_path):
    trace = write_trace(tmp_path / "t.jsonl", [
        {"kind": "header", "role": "codegen", "doctrine": {"radio_check_interval_turns": 1}},
        *[{"turn": n, "tool": "code_execution_tool", "args": {"code": "cat /x"}, "output": "cat: /x: No such file or directory"} for n in (1, 2, 3)],
        {"turn": 4, "tool": "code_execution_tool", "args": {"code": "ls"}, "output": "a"},
        {"turn": 5, "tool": "t", "ok": True, "output": "fine", "context_fill": 0.93},
        {"turn": 6, "tool": "t", "args": {"x": 1}, "ok": False, "error_type": "permission", "output": ""},
        {"turn": 7, "tool": "t", "args": {"x": 2}, "pace": "emergency", "htn": {"plan_name": "p", "current_step": "s", "turns_since_progress": 9}},
    ])
    result = a0org("replay", str(trace))
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(l["turn"], l["anomaly"]) for l in lines] == [(3, "loop"), (5, "context"), (7, "pace")]
    assert all(set(l) == {"turn", "anomaly", "action", "text"} and l["text"].startswith("[SUPERVISOR] ") for l in lines)
    assert {l["action"] for l in lines} == {"steer"}


def test_replay_classifier_decides_when_ok_is_absent_and_trace_verdict_wins_when_present(tmp_path):
    lines = [{"kind": "header", "doctrine": {"radio_check_interval_turns": 1}}]
    # output that looks like an error but the trace says ok: no failures, no cascade
    lines += [{"turn": n, "tool": t, "args": {"n": n}, "ok": True, "output": "Traceback (most recent call last): fine"} for n, t in ((1, "a"), (2, "b"), (3, "c"))]
    # plain output the classifier reads as failures: a cascade
    lines += [{"turn": n, "tool": t, "args": {"n": n}, "output": f"{t}: Permission denied"} for n, t in ((4, "a"), (5, "b"), (6, "c"))]
    result = a0org("replay", str(write_trace(tmp_path / "t.jsonl", lines)))
    assert [json.loads(l)["anomaly"] for l in result.stdout.splitlines()] == ["cascade"]
    assert json.loads(result.stdout.splitlines()[0])["turn"] == 6


def test_replay_era_c_gives_the_same_steering(tmp_path):
    trace = write_trace(tmp_path / "t.jsonl", [{"kind": "header", "doctrine": {"radio_check_interval_turns": 1}}] +
                        [{"turn": n, "tool": "x", "args": {}, "output": "ConnectionError: Connection refused"} for n in range(1, 5)])
    assert a0org("replay", "--era", "C", str(trace)).stdout == a0org("replay", str(trace)).stdout != ""


def test_replay_reports_bad_lines_with_numbers(tmp_path):
    trace = tmp_path / "bad.jsonl"
    trace.write_text('{"turn": 1}\n{not json\n{"turn": "two"}\n{"kind": "header"}\n{"turn": 3, "pace": "panic"}\n')
    result = a0org("replay", str(trace))
    assert result.returncode == 2 and result.stdout == ""
    err = result.stderr
    assert f"{trace}:2: (document): not valid JSON" in err
    assert f"{trace}:3: turn:" in err
    assert f"{trace}:4: kind: a header may only be the first line" in err
    assert f"{trace}:5: pace:" in err


def test_replay_runs_a_reply_s_parallel_calls_as_one_turn_and_checks_their_lines(tmp_path):
    def look(turn: int, path: str) -> dict:
        return {"turn": turn, "tool": "code_execution_tool", "args": {"code": f"cat {path}"}, "output": f"cat: {path}: No such file or directory"}

    header = {"kind": "header", "doctrine": {"radio_check_interval_turns": 1, "max_looks_finding_nothing": 2}}
    # three guessed paths read in one reply, sent before any came back: one turn of a hunt
    together = [header, {"turn": 1, "tool": "code_execution_tool", "args": {"code": "pwd"}, "output": "/w"},
                *[look(2, f"/w/{name}.py") for name in "abc"], look(3, "/w/d.py")]
    result = a0org("replay", str(write_trace(tmp_path / "t.jsonl", together)))
    assert result.returncode == 0 and result.stdout == "", result.stderr
    apart = [*together[:2], *[look(turn, f"/w/{name}.py") for turn, name in zip((2, 3, 4), "abc")]]
    result = a0org("replay", str(write_trace(tmp_path / "apart.jsonl", apart)))
    assert [(json.loads(l)["turn"], json.loads(l)["anomaly"]) for l in result.stdout.splitlines()] == [(4, "stall")]

    bad = write_trace(tmp_path / "bad.jsonl", [{"turn": 1, "tool": "x"}, {"turn": 1, "user": "hi", "tool": "y"}, {"turn": 1, "output": "z"},
                                                {"turn": 2, "tool": "x"}])
    result = a0org("replay", str(bad))
    assert result.returncode == 2 and result.stdout == ""
    assert f"{bad}:2: user: a further call of the turn before: the reply's fields go on its first line" in result.stderr
    assert f"{bad}:3: tool: a line with the turn of the line before is a further call of that reply and needs a tool" in result.stderr
    assert f"{bad}:4:" not in result.stderr


def test_replay_locates_header_mistakes_in_the_trace(tmp_path):
    trace = write_trace(tmp_path / "t.jsonl", [
        {"kind": "header", "role": "codegen", "doctrine": {"cooldown_turns": "two", "radio_check_interval_turns": 0}},
        {"turn": 1, "tool": "x", "output": "ok"},
    ])
    result = a0org("replay", str(trace))
    assert result.returncode == 2 and result.stdout == ""
    assert f"{trace}:1: doctrine.cooldown_turns:" in result.stderr
    assert f"{trace}:1: doctrine.radio_check_interval_turns:" in result.stderr
    unknown = write_trace(tmp_path / "u.jsonl", [{"kind": "header", "role": "wizard"}, {"turn": 1, "tool": "x"}])
    result = a0org("replay", str(unknown))
    assert result.returncode == 2 and f"{unknown}:1: role: no role 'wizard' among the pack's roles" in result.stderr


def test_replay_takes_a_context_fill_over_one_as_a_real_session_records_it(tmp_path):
    trace = write_trace(tmp_path / "t.jsonl", [{"kind": "header", "doctrine": {"radio_check_interval_turns": 1}},
                                               {"turn": 1, "tool": "x", "ok": True, "output": "ok", "context_fill": 1.7}])
    result = a0org("replay", str(trace))
    assert result.returncode == 0, result.stderr
    assert "context" in [json.loads(line)["anomaly"] for line in result.stdout.splitlines()]


def test_replay_keeps_the_organization_folder_when_asked(tmp_path):
    trace = write_trace(tmp_path / "t.jsonl", [{"turn": 1, "tool": "x", "output": "ok"}])
    assert a0org("replay", "--org-dir", str(tmp_path / "org"), str(trace)).returncode == 0
    assert (tmp_path / "org" / "reports" / "codegen_latest.json").exists()


def test_demo_shows_every_anomaly_and_writes_reports(tmp_path):
    result = a0org("demo", "--out", str(tmp_path / "demo"))
    assert result.returncode == 0, result.stderr
    out = result.stdout
    for phase in ("normal work", "tool loop", "oscillation", "cascade", "stall", "PACE escalation"):
        assert f"== {phase}" in out
    for words in ("Loop:", "Oscillation:", "Cascade:", "Stall:", "Context is", "PACE contingent", "PACE emergency"):
        assert f">> [SUPERVISOR] {words}" in out
    normal = out.split("== normal work")[1].split("==")[0]
    assert "[SUPERVISOR]" not in normal
    assert (tmp_path / "demo" / "reports" / "codegen_latest.json").exists()
    assert str(tmp_path / "demo" / "reports") in out
    validate = a0org("validate", str(tmp_path / "demo" / "reports"))
    assert validate.returncode == 0, validate.stdout + validate.stderr


def test_replay_does_not_depend_on_a_volume_in_the_environment(tmp_path):
    trace = write_trace(tmp_path / "t.jsonl", [
        {"turn": n, "tool": "code_execution_tool", "args": {"code": "cat /x"}, "output": "cat: /x: No such file or directory"}
        for n in (1, 2, 3)])
    plain = a0org("replay", str(trace))
    volume = tmp_path / "volume"
    volume.mkdir()
    linked = a0org("replay", str(trace), env={**os.environ, "A0ORG_VOLUME": str(volume), "A0ORG_UNIT": "unit-1"})
    assert linked.returncode == 0 and linked.stdout == plain.stdout != ""
    assert not any(volume.iterdir())  # nothing was published
