"""The waste a real-sessions benchmark holds the supervisor to, read from a raw trace alone
(bench/waste_sessions.py): 5 turns of the same failure, or of reruns that change nothing; and
the turns whose edit went in."""

from __future__ import annotations

from bench.waste_sessions import changes, waste_in


def run(turn: int, code: str, output: str, exit_code: int | None = None) -> dict:
    line = {"turn": turn, "tool": "code_execution_tool", "args": {"runtime": "terminal", "code": code},
            "output": output}
    if exit_code is not None:
        line["exit_code"] = exit_code
    return line


def crash(address: str) -> str:
    return f"Traceback (most recent call last):\n  File \"/tmp/t{address}/a.py\", line 3\nTypeError: bad object at {address}"


def test_the_same_failure_counts_across_looks_and_volatile_text():
    turns = []
    for n in range(5):
        turns.append(run(2 * n + 1, "python  a.py", crash(f"0x7f{n}a"), exit_code=1))
        turns.append(run(2 * n + 2, f"cat a.py | head -{n + 3}", "import x", exit_code=0))
    found = {(w.kind, w.turns) for w in waste_in(turns)}
    assert found == {("same failure", (1, 3, 5, 7, 9)), ("no-effect rerun", (1, 3, 5, 7, 9))}  # a look resets nothing


def test_four_failures_or_five_different_ones_are_not_waste():
    assert waste_in([run(n, "python a.py", crash("0x1"), 1) for n in range(1, 5)]) == []
    assert waste_in([run(n, "python a.py", f"NameError: name_{'abcde'[n - 1]}", 1) for n in range(1, 6)]) == []


def test_a_rerun_with_the_same_output_and_no_edit_between_is_waste_even_when_it_succeeds():
    turns = [run(n, "pytest -q tests/test_x.py", "1 passed in 0.12s", 0) for n in range(1, 6)]
    assert [w.kind for w in waste_in(turns)] == ["no-effect rerun"]


def test_an_edit_between_reruns_starts_the_count_again():
    turns = [run(1, "python a.py", "ok 1", 0), run(2, "python a.py", "ok 1", 0), run(3, "python a.py", "ok 1", 0),
             run(4, "sed -i 's/a/b/' a.py", "", 0),
             run(5, "python a.py", "ok 1", 0), run(6, "python a.py", "ok 1", 0)]
    assert waste_in(turns) == []


def test_a_file_view_that_shows_error_words_is_not_a_failure():
    view = "[File: /repo/a.py (40 lines total)]\n1:raise ValueError: no\n2:# error: here"
    turns = [run(n, "open a.py", view) for n in range(1, 7)]
    assert waste_in(turns) == []


def test_the_same_rejected_edit_five_times_is_waste():
    rejected = "Your proposed edit has introduced new syntax error(s). Please read this error message carefully."
    turns = [run(n, "edit 3:3\n    return  x\nend_of_edit", rejected) for n in range(1, 6)]
    assert {w.kind for w in waste_in(turns)} == {"same failure", "no-effect rerun"}


def test_the_edits_that_went_in_are_the_changes_and_a_refused_edit_or_a_run_is_none():
    refused = "Your proposed edit has introduced new syntax error(s). Please read this error message carefully."
    applied = "[File: /repo/a.py (40 lines total)]\n1:raise ValueError: no"
    turns = [run(1, "edit 3:3\n    return  x\nend_of_edit", refused), run(2, "python a.py", "ok"),
             run(3, "edit 3:3\n    return x\nend_of_edit", applied), run(4, "sed -i 's/a/b/' a.py", "", 0),
             run(5, "sed -i 's/a/b/' b.py", "sed: can't read b.py: No such file or directory", 2)]
    assert changes(turns) == [3, 4]


def test_an_editor_creating_one_file_after_another_is_not_a_rerun():
    turns = [{"turn": n, "tool": "str_replace_editor", "args": {"command": "create", "path": f"debug_{n}.py", "file_text": f"print({n})"},
              "output": f"File created successfully at: debug_{n}.py"} for n in range(1, 7)]
    assert waste_in(turns) == []


def test_a_stretch_of_waste_is_met_by_steering_inside_it_or_a_pause_before_its_end():
    [stretch] = [w for w in waste_in([run(n, "python a.py", crash("0x1"), exit_code=1) for n in range(10, 15)])
                 if w.kind == "same failure"]
    assert (stretch.first, stretch.last) == (10, 14)
    assert stretch.met_by({"turn": 12, "action": "steer"})
    assert not stretch.met_by({"turn": 8, "action": "steer"}) and not stretch.met_by({"turn": 15, "action": "steer"})
    assert stretch.met_by({"turn": 8, "action": "pause"}) and not stretch.met_by({"turn": 15, "action": "pause"})
