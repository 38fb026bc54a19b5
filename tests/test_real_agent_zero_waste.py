"""Waste the pack must see in a real Agent-Zero, whose terminal states no exit status: a failing
run repeated with looks between, debug prints that never appear, the same failing patch retried with only its indentation
changed, and the same failing command whose message changes each time (a duration, a
temporary path, a time in a Node error).

Runs like tests/test_real_agent_zero.py (skipped unless ``A0ORG_TEST_A0_ROOT`` and
``A0ORG_TEST_A0_PYTHON`` are set), with the shipped doctrine.
"""

from __future__ import annotations

import json
import shutil

import pytest
from test_real_agent_zero import install_pack, pytestmark, run_chat, tree, warnings  # noqa: F401 (fixture, marks)
from test_real_agent_zero_escalation import FINAL, command, log_headings, times_run


def steering_of(result: dict) -> list[str]:
    return [w for w in warnings(result) if "[SUPERVISOR]" in w]


def tool_results(result: dict) -> list[dict]:
    return [m for m in result["history"] if '"tool_result"' in m["content"]]


def test_a_failing_run_repeated_with_looks_between_is_told_it_is_a_rerun(tree, tmp_path):  # noqa: F811
    """The reproduction fails the same way each time and nothing it reads changes: a look between
    two runs does not make the next one new. Said at the fourth run, and again once the count has
    doubled; the looks are work, so it is never blocked or paused."""
    install_pack(tree, activate=True)
    work = tmp_path / "work"
    work.mkdir()
    (work / "repro.py").write_text("import json\nprint(json.loads('{\"a\": 1,}'))\n")
    run = command("Run the reproduction", f"cd {work} && python3 repro.py")
    looks = [f"cat {work}/repro.py", f"grep -n json {work}/repro.py", f"head -1 {work}/repro.py", f"wc -l {work}/repro.py",
             f"sed -n 2p {work}/repro.py", f"cat {work}/repro.py"]
    script = [step for n, look in enumerate(looks) for step in (run, command(f"Look {n}", look))] + [run, FINAL]
    result = run_chat(tree, script, tmp_path, harness_args=("--workdir", str(work), "--stop-when-paused"))
    ran = sum("JSONDecodeError" in m["content"] for m in tool_results(result))
    steering = steering_of(result)
    assert ran == 7, ran
    assert [s.split("`")[0] for s in steering] == ['{"system_warning": "[SUPERVISOR] Rerun: you ran '] * 2, steering
    assert "3 more times" in steering[0] and "6 more times" in steering[1] and "JSONDecodeError" in steering[0], steering
    assert not result["paused"] and "Supervisor: blocked" not in log_headings(result)
    (tmp_path / "figures.json").write_text(json.dumps({"ran": ran, "steering": steering}))


PATCH = """python3 - <<'EOF'
from pathlib import Path
p = Path('{path}')
s = p.read_text()
old = '''    count = len(values)
{indent}return total / count'''
assert old in s, 'old text not found'
p.write_text(s.replace(old, old + ' if count else 0'))
EOF"""


def test_the_same_failing_patch_retried_with_only_its_indentation_changed_is_one_loop(tree, tmp_path):  # noqa: F811
    """A patch program whose text to replace is not in the file, retried with only that text's
    indentation changed and a look between: one failing edit. Said once, as a loop, at the third
    try (no churn "across different actions" after it), and paused when it goes on twice more."""
    install_pack(tree, activate=True)
    work = tmp_path / "work"
    work.mkdir()
    path = work / "stats.py"
    path.write_text("def mean(values):\n    total = sum(values)\n    count = len(values)\n    return total / count\n")
    script = []
    for n, indent in enumerate(["  ", "   ", "\t", "      ", "  ", "\t\t", "        "]):
        script += [command(f"Patch {n}", PATCH.format(path=path, indent=indent)), command(f"Look {n}", f"cat -A {path} | tail -2")]
    result = run_chat(tree, script + [FINAL], tmp_path, harness_args=("--workdir", str(work), "--stop-when-paused"))
    tries = sum("AssertionError: old text not found" in m["content"] for m in tool_results(result))
    steering = steering_of(result)
    assert "[SUPERVISOR] Loop: you ran `python3 - <<'EOF'" in steering[0] and "3 times" in steering[0], steering
    assert "AssertionError: old text not found" in steering[0], steering
    assert len(steering) == 2 and "[SUPERVISOR] Paused:" in steering[1], steering
    assert result["paused"] and tries == 5, (result["paused"], tries, log_headings(result))
    (tmp_path / "figures.json").write_text(json.dumps({"tries": tries, "steering": steering}))


@pytest.mark.parametrize("failing", [
    "curl -sS http://127.0.0.1:9/health",  # "… after 0 ms: Couldn't connect to server", the milliseconds its own
    'd=$(mktemp -d) && cat "$d/settings.yml"',  # "cat: /tmp/tmp.5SCyzVwVse/settings.yml: No such file or directory"
    pytest.param('node -e "null[Date.now()]()"', marks=pytest.mark.skipif(shutil.which("node") is None, reason="no node here")),
    # "TypeError: Cannot read properties of null (reading '1796534681704')", then its stack
], ids=["duration", "temporary-path", "node-error-naming-a-time"])
def test_the_same_failing_command_whose_message_changes_is_a_loop(tree, tmp_path, failing):  # noqa: F811
    """The same command failing the same way, its message differing in what says nothing about
    the result: the same failure, so the loop is said at the third run, the fourth is blocked
    and the chat paused: it ran at most 4 times."""
    install_pack(tree, activate=True)
    counter = tmp_path / "runs.txt"
    script = [command(f"Try {n}", f"echo ran >> {counter}; {failing}") for n in range(1, 12)] + [FINAL]
    result = run_chat(tree, script, tmp_path, harness_args=("--stop-when-paused",))
    steering = steering_of(result)
    assert steering and "[SUPERVISOR] Loop: you ran" in steering[0] and "3 times with the same outcome" in steering[0], steering
    assert result["paused"] and times_run(counter) <= 4, (result["paused"], times_run(counter), log_headings(result))
    assert "Supervisor: blocked" in log_headings(result)
    (tmp_path / "figures.json").write_text(json.dumps({"ran": times_run(counter), "main_calls": result["main_calls"]}))


def test_debug_prints_that_never_appear_draw_no_effect(tree, tmp_path):  # noqa: F811
    """A print added before each run, in a function the failing path never calls: the run fails
    the same way and the prints never show. The edits have no effect on it: said at the fourth
    run, not blocked (each run follows a change)."""
    install_pack(tree, activate=True)
    work = tmp_path / "work"
    work.mkdir()
    (work / "app.py").write_text("def unused(x):\n    return x\n\ndef total(items):\n    return sum(items)\n\nprint(total(['1', 2]))\n")
    run = command("Run the app", f"cd {work} && python3 app.py")
    script = [run]
    for n in range(1, 9):
        script += [command(f"Debug print {n}", f"sed -i '2i\\    print(\"DEBUG {n}\", x)' {work}/app.py"), run]
    result = run_chat(tree, script + [FINAL], tmp_path, harness_args=("--workdir", str(work), "--stop-when-paused"))
    failed = sum("TypeError: unsupported operand" in m["content"] for m in tool_results(result))
    steering = steering_of(result)
    assert "DEBUG 8" in (work / "app.py").read_text() and failed == 9, (failed, (work / "app.py").read_text())
    assert steering and "[SUPERVISOR] No effect: you ran" in steering[0], steering
    assert "again 3 times after making changes" in steering[0] and "TypeError: unsupported operand" in steering[0], steering[0]
    assert "Supervisor: blocked" not in log_headings(result)
    (tmp_path / "figures.json").write_text(json.dumps({"failed": failed, "steering": steering, "paused": result["paused"]}))


def test_edits_to_a_copy_the_run_does_not_import_are_told_at_once(tree, tmp_path):  # noqa: F811
    """The package is installed in site-packages; the model fixes its checkout and runs the
    program, which imports the installed copy: the traceback goes through it. Said at that first
    run, naming both files, and not again when the next run goes through the same copy."""
    install_pack(tree, activate=True)
    work = tmp_path / "work"
    site = tmp_path / "venv" / "lib" / "python3.12" / "site-packages"
    for package in (work / "src" / "shapes", site / "shapes"):
        package.mkdir(parents=True)
        (package / "__init__.py").write_text("")
        (package / "area.py").write_text("def area(w, h):\n    return w * hh\n")
    edited, installed = work / "src" / "shapes" / "area.py", site / "shapes" / "area.py"
    run = command("Run the program", f"cd {work} && PYTHONPATH={site} python3 -c 'from shapes.area import area; print(area(2, 3))'")
    script = [command("Fix the typo", f"sed -i 's/hh/h/' {edited}"), run, command("Read the fix", f"cat {edited}"), run, FINAL]
    result = run_chat(tree, script, tmp_path, harness_args=("--workdir", str(work), "--stop-when-paused"))
    failed = sum("NameError: name 'hh' is not defined" in m["content"] for m in tool_results(result))
    steering = steering_of(result)
    assert "w * h\n" in edited.read_text() and failed == 2, (failed, edited.read_text())
    assert len(steering) == 1 and "[SUPERVISOR] No effect: the traceback of `cd " in steering[0], steering
    assert f"went through `{installed}`" in steering[0] or "site-packages/shapes/area.py`" in steering[0], steering[0]
    assert "src/shapes/area.py`, another copy of that file, so your changes there do not run" in steering[0], steering[0]
    assert not result["paused"] and result["script_left"] == 0 and "Supervisor: blocked" not in log_headings(result)
    (tmp_path / "figures.json").write_text(json.dumps({"failed": failed, "steering": steering}))
