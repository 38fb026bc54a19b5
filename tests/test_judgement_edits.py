"""Edits: how an edit's failure is named, and when the same edit again is a loop.

An editor refusing an edit names its linter's finding or its own check; the same old text
refused is the same failing edit whatever the new text or its indentation; the same edit
applied again and again is a loop, one after other edits is not; a patch program handed whole
to a shell is an edit. Written as the turns an agent takes and the steering that must, or must
not, come out.
"""

from __future__ import annotations

from test_judgement import sh, traceback

from org.kernel.classify import advice_kind, classify_output

REFUSED = ("Your proposed edit has introduced new syntax error(s). Please read this error message carefully.\n\n"
           "ERRORS:\n- E999 IndentationError: unexpected indent\n\nThis is how your edit would have looked if applied\n"
           "...\nYour changes have NOT been applied. Please fix your edit command and try again.\n")


def test_an_editor_refusing_an_edit_is_a_failure_named_by_the_linter_s_finding():
    verdict = classify_output(REFUSED)
    assert verdict.failed and verdict.error_type == "syntax"
    assert verdict.error_line == "edit not applied: E999 IndentationError: unexpected indent"


def test_an_editor_whose_own_check_failed_is_named_and_not_told_to_fix_the_edit(make_session):
    """SWE-agent's flake8 crashing on the project's configuration lists its own error where a
    finding belongs: the edit is refused whatever it is, and the advice says so."""
    crashed = REFUSED.replace("- E999 IndentationError: unexpected indent\n", (
        "- (most recent call last):\n- \"/env/bin/flake8\", line 8, in <module>\n- self.options = parse_args(argv)\n- ValueError(\n"
        "- Error code '#' supplied to 'ignore' option does not match '^[A-Z]{1,3}[0-9]{0,3}$'\n"))
    verdict = classify_output(crashed)
    assert verdict.failed and verdict.error_line == (
        "edit not applied: the editor's check failed: Error code '#' supplied to 'ignore' option does not match '^[A-Z]{1,3}[0-9]{0,3}$'")
    session = make_session()
    session.run(*[sh("edit 1:1\nimport numpy as np\nend_of_edit", crashed)] * 3)
    [(_, _, text)] = session.steering()
    assert "Error code '#' supplied" in text and "the editor's own check failed, not your edit" in text
    assert "range" not in text  # nothing in the edit to fix


def test_a_linter_finding_with_its_line_and_column_is_the_finding_not_a_failed_check():
    numbered = REFUSED.replace("- E999 IndentationError", "- line 12 col 5: E999 IndentationError")
    assert classify_output(numbered).error_line == "edit not applied: E999 IndentationError: unexpected indent"


def test_edits_the_editor_refused_for_the_same_reason_are_not_churn(make_session):
    """Different edits refused with the same generic finding changed nothing: no fix failed to reach a cause."""
    session = make_session()
    session.run(sh("sed -i 's/a/b/' x.py"), *[sh(f"edit {n}:{n}\n    return {n}\nend_of_edit", REFUSED) for n in range(4)])
    assert "churn" not in [a for _, a in session.anomalies()]


def test_one_failing_edit_is_one_episode_whether_it_is_seen_retried_or_repeated(make_session):
    """Retried with its indentation changed (a retry), paused, resumed by the user, then sent
    identically (a repeat): the same edit failing the same way, an episode the user decided on."""
    refused = ("Your proposed edit has introduced new syntax error(s).\nERRORS:\n- E999 IndentationError: unexpected indent\n"
               "Your changes have NOT been applied.\n")
    session = make_session(doctrine={"radio_check_interval_turns": 1})
    session.run(sh("sed -i 's/a/b/' x.py", ""), *[sh(f"edit 10:12\n{' ' * i}return x\nend_of_edit", refused) for i in (4, 8, 4, 8, 4, 8)])
    assert [(t, a) for t, a, _ in session.steering()] == [(4, "loop")] and any(r.paused for r in session.results)
    session.standin.agent.context.paused = False  # the user resumes
    session.run(*[sh("edit 10:12\n    return x\nend_of_edit", refused) for _ in range(4)])
    assert [(t, a) for t, a, _ in session.steering()] == [(4, "loop")]  # not said again as a "new" repeat


def test_the_same_edit_applied_again_and_again_is_a_loop_though_the_file_grows(make_session):
    """SWE-agent's `edit 4:4` replacing a line by two, sent again after each look: each time it
    goes in and the file grows a line, so no two results are the same; said once."""
    session = make_session()
    for lines in range(40, 46):
        session.run(sh("edit 4:4\n    def __init__(self, raw):\n        self.query = None\nend_of_edit",
                       f"[File: /repo/query.py ({lines} lines total)]\n4:    def __init__(self, raw):\n5:        self.query = None\n"),
                    sh("open query.py", f"[File: /repo/query.py ({lines} lines total)]\n1: class Query:\n"))
    [(turn, anomaly, text)] = session.steering()
    assert (turn, anomaly) == (5, "loop") and text.startswith("[SUPERVISOR] Loop: you applied the same edit `edit 4:4")


def test_the_same_edit_that_changes_nothing_is_not_said_to_change_the_file(make_session):
    """A range replaced by the very lines it holds, with a run after each: the file stays as it is."""
    window = "[File: /repo/query.py (90 lines total)]\n73:    def load(self):\n74:        return self.rows\n"
    session = make_session()
    for _ in range(3):
        session.run(sh("edit 73:74\n    def load(self):\n        return self.rows\nend_of_edit", window),
                    sh("python reproduce.py", "rows: 0"))
    [(_, anomaly, text)] = session.steering()
    assert anomaly == "loop" and "got the same result each time" in text and "changes the file again" not in text


def test_the_same_edit_again_after_other_edits_is_no_loop(make_session):
    """A reproduction restored after each experiment: other edits came between."""
    session = make_session()
    for n in range(4):
        session.run(sh("git stash pop", "On branch main\n"), sh(f"sed -i 's/v{n}/v{n + 1}/' app.py", ""),
                    sh("python app.py", f"v{n + 1}"), sh("git stash", "Saved working directory\n"))
    assert "loop" not in [a for _, a in session.anomalies()]


def test_a_tools_own_error_mark_is_a_failure_and_a_refused_edit():
    missing = classify_output("<tool_use_error>File does not exist.</tool_use_error>")
    assert missing.failed and missing.error_type == "not_found" and missing.error_line == "File does not exist."
    refused = classify_output("<tool_use_error>String to replace not found in file.\nString:     def f(self):</tool_use_error>")
    assert refused.failed and refused.error_line == "edit not applied: String to replace not found in file."
    assert not classify_output("File does not exist\n").failed  # a program's own words, without the mark
    viewed = classify_output("ERROR:\nInvalid `path` parameter: /workspace/app.py. The path /workspace/app.py does not exist. "
                             "Please provide a valid path.")  # OpenHands' editor
    assert viewed.failed and viewed.error_type == "not_found" and viewed.error_line.startswith("Invalid `path` parameter")
    # the same editor in SWE-agent 1.x says it with no "ERROR:" before it
    bare = classify_output("OBSERVATION:\nThe path /testbed/app.py does not exist. Please provide a valid path.")
    assert bare.failed and bare.error_type == "not_found" and bare.error_line.startswith("The path /testbed/app.py does not exist")
    for refusal in ("Invalid `view_range`: [1, 900]. Its second element `900` should be smaller than the number of lines in the file: `120`",
                    "File already exists at: /testbed/r.py. Cannot overwrite files using command `create`."):
        assert classify_output(refusal).failed
    # the words inside a file shown are the file's
    assert not classify_output("Here's the result of running `cat -n` on /testbed/a.py:\n     1\tThe path x does not exist.").failed


def test_claude_code_refusing_a_write_to_a_file_not_read_is_a_refused_edit():
    for message in ("File has not been read yet. Read it first before writing to it.",
                    "File has been modified since read, either by the user or by a linter. Read it again before attempting to write it."):
        refused = classify_output(f"<tool_use_error>{message}</tool_use_error>")
        assert refused.failed and refused.error_line == "edit not applied: " + message


def claude_code(tool: str, output: str, ok: bool = True, **args) -> dict:
    """A Claude Code call as a scaffold that flags failures records it: ``ok`` False, no error type."""
    return {"tool": tool, "args": args, "output": output, "ok": ok}


def test_a_failure_flagged_without_a_type_is_named_by_what_its_message_says(make_session):
    """Claude Code's Read says "File does not exist." with no error mark; the scaffold flags the
    call as failed and no more. Guessed paths that are not there are looks that found nothing,
    not steps of a failing approach: no PACE, and no stall before the doctrine's budget of them."""
    missing = "File does not exist. Note: your current working directory is /work."
    session = make_session()
    session.run(*[claude_code("Read", missing, ok=False, file_path=f"~/src/{name}.py") for name in ("auth", "billing", "cache", "metrics", "store")])
    ledger = session.agent.data["_org_tool_ledger"]
    assert {o.error_type for o in ledger.outcomes} == {"not_found"}
    assert session.anomalies() == []
    # with the tool's own mark, a scaffold's bare "failed" does not hide the kind the message names either
    session.run(claude_code("Edit", f"<tool_use_error>{missing}</tool_use_error>", ok=False, file_path="~/src/auth.py",
                            old_string="a", new_string="b"))
    assert ledger.outcomes[-1].error_type == "not_found"


def test_looks_sent_together_in_one_reply_are_one_turn_of_a_hunt(make_session):
    """Claude Code sends a reply's calls at once: six guessed paths read in one reply were all
    sent before any came back "not there". That is one turn of looks that found nothing, not a
    stall; the same six looks one per reply, each after the last failed, are a hunt."""
    missing = "File does not exist. Note: your current working directory is /work."
    guesses = [claude_code("Read", missing, ok=False, file_path=f"~/src/{name}.py")
               for name in ("auth", "billing", "cache", "metrics", "store", "queue")]
    where = claude_code("Bash", "/work", command="pwd")
    together = make_session()
    results = together.run(where, *[{**guess, "turn": 2} for guess in guesses],
                           {**claude_code("Read", "import os", file_path="/work/src/auth.py"), "turn": 3})
    assert [r.turn for r in results] == [1, 2, 3]
    ledger = together.agent.data["_org_tool_ledger"]
    assert [o.turn for o in ledger.outcomes] == [1] + [2] * 6 + [3]
    assert together.anomalies() == []

    one_by_one = make_session()
    one_by_one.run(where, *guesses)
    assert one_by_one.anomalies() == [(7, "stall")]
    assert "6 looks that found nothing" in one_by_one.steering()[0][2]


def test_an_error_of_several_calls_sent_together_came_back_in_none_of_them(make_session):
    """Five edits sent in one reply, each to a file at a path that is not there: one failure,
    seen once, not an error that came back five times across five actions. Made one by one,
    each after the one before failed, it is churn."""
    missing = "<tool_use_error>File does not exist. Note: your current working directory is /work.</tool_use_error>"
    edits = [claude_code("Edit", missing, ok=False, file_path=f"~/evals/{name}.json", old_string='"0.1.0"', new_string='"0.2.0"')
             for name in ("api", "core", "ui", "db", "cli")]
    where = claude_code("Bash", "api.json core.json ui.json db.json cli.json", command="ls")
    together = make_session()
    together.run(where, *[{**edit, "turn": 2} for edit in edits])
    assert together.anomalies() == []
    one_by_one = make_session()
    one_by_one.run(where, *edits)
    assert "churn" in [anomaly for _, anomaly in one_by_one.anomalies()]


def test_a_type_another_layer_gives_still_wins_over_the_output_s(make_session):
    session = make_session()
    session.run({**sh("python app.py", traceback("FileNotFoundError: [Errno 2] No such file or directory: 'a.cfg'")), "ok": False,
                 "error_type": "dependency"})
    assert session.agent.data["_org_tool_ledger"].outcomes[-1].error_type == "dependency"


def editor(command: str, output: str, **args) -> dict:
    return {"tool": "str_replace_editor", "args": {"command": command, "path": "/workspace/ponyc/src/expr/match.c", **args},
            "output": output}


NOT_UNIQUE = ("ERROR:\nNo replacement was performed. Multiple occurrences of old_str `return pattern_type;` in lines "
              "[317, 449]. Please ensure it is unique.")


def test_an_old_text_the_editor_refuses_is_the_same_failing_edit_whatever_the_new_text(make_session):
    """OpenHands' str_replace with the same old text, found twice, tried with other new text each
    time, views and other edits between: the refusal is about the old text alone."""
    session = make_session()
    session.run(editor("view", "Here's the result of running `cat -n` on match.c:\n   317\t      return pattern_type;"))
    for n in range(3):
        session.run(editor("str_replace", NOT_UNIQUE, old_str="return pattern_type;", new_str=f"if (iso) x = {n};\nreturn pattern_type;"),
                    editor("view", f"Here's the result of running `cat -n` on match.c:\n   31{n}\t  switch(ast_id(pattern))"))
    [(turn, anomaly, text)] = session.steering()
    assert (turn, anomaly) == (6, "loop")
    assert "`str_replace_editor str_replace /workspace/ponyc/src/expr/match.c` 3 times" in text
    assert "(edit not applied: Multiple occurrences of old_str in lines [317, 449])" in text
    # there twice, the text to replace matches already: the advice is to make it unique
    assert "the text to replace is there more than once" in text and "match them exactly" not in text
    claude_code = classify_output("<tool_use_error>Found 2 matches of the string to replace, but replace_all is false. "
                                  "To replace all occurrences, set replace_all to true.\nString: x = 1</tool_use_error>")
    assert advice_kind(claude_code.error_type, claude_code.error_line) == "ambiguous_edit"


def test_an_old_text_retried_with_only_its_indentation_changed_is_the_same_failing_edit(make_session):
    """OpenHands' editor quotes the old text back in its refusal: that is the agent's own text,
    not the result, so a retry with only its indentation changed is the same failing edit."""
    session = make_session()
    for n, indent in enumerate(("    ", "", "        ")):
        old = f"{indent}def get_prep_lookup(self):\n{indent}    return self.rhs"
        session.run(editor("str_replace", f"ERROR:\nNo replacement was performed, old_str `{old}` did not appear verbatim in "
                                          "/workspace/ponyc/src/expr/match.c.", old_str=old, new_str=f"pass  # {n}"),
                    sh(f"sed -n '{360 + n},386p' match.c", f"    def get_prep_lookup(self):  # {n}"))
    [(turn, anomaly, text)] = session.steering()
    assert (turn, anomaly) == (5, "loop") and "did not appear verbatim" in text


def test_new_texts_a_linter_refuses_are_different_attempts(make_session):
    """A refusal about what the edit would make (a linter's finding) depends on the new text: other new
    text for the same old text is another attempt, not the same edit again."""
    session = make_session()
    for n in range(4):
        session.run(editor("str_replace", REFUSED, old_str="return pattern_type;", new_str=f"  return {n}"),
                    editor("view", f"Here's the result of running `cat -n` on match.c:\n   31{n}\t  x"))
    assert "loop" not in [a for _, a in session.anomalies()]


def test_a_patch_program_handed_whole_to_a_shell_is_an_edit_and_its_error_coming_back_churns(make_session):
    """mini-swe-agent runs of GPT-5 nano: `bash -lc 'python - << "PY" … open(p, "w").write(…)'`
    patched a file, and the probe after each patch failed with the same TypeError. Read as runs,
    no fix was ever tried and the error was the baseline: nothing was said for 17 turns."""
    error = traceback("TypeError: __repr__ returned non-string (type NoneType)")
    def patch(n: int) -> dict:
        program = f'p = "defaults.py"\ns = open(p).read()\nopen(p, "w").write(s.replace("x{n}", "y{n}"))'
        return sh(f"bash -lc 'python - << \"PY\"\n{program}\nPY'", "patched")
    def probe(n: int) -> dict:
        return sh(f"bash -lc 'python - << \"PY\"\nfrom defaults import Value\nprint(repr(Value({n})))\nPY'", error)
    session = make_session()
    session.run(sh("grep -n __repr__ defaults.py", "24:    def __repr__(self):"), patch(1), probe(1), patch(2), probe(2))
    assert session.anomalies() == []
    session.run(patch(3), probe(3))
    [(turn, anomaly, text)] = session.steering()
    assert (turn, anomaly) == (7, "churn") and "TypeError: __repr__ returned non-string" in text and "3 times" in text


def test_a_patch_program_retried_with_only_its_indentation_changed_is_one_action_said_once(make_session):
    """A patch program whose text to replace is not in the file fails its own check each time;
    retried with only the indentation of that text changed, with a look between, it is one
    failing edit: the loop is said at the third try, and the fourth is no churn "across 4
    different actions" saying the same again."""
    def patch(indent: str) -> dict:
        program = (f"p = Path('stats.py')\ns = p.read_text()\nold = '''    count = len(values)\n{indent}return total / count'''\n"
                   "assert old in s, 'old text not found'\np.write_text(s.replace(old, old + ' if count else 0'))")
        return sh(f"python3 - <<'EOF'\nfrom pathlib import Path\n{program}\nEOF", traceback("AssertionError: old text not found"))
    session = make_session()
    for indent in ("  ", "   ", "\t", "      "):
        session.run(patch(indent), sh("cat -A stats.py | tail -2", "    return total / count$"))
    [(turn, anomaly, text)] = session.steering()
    assert (turn, anomaly) == (5, "loop") and "AssertionError: old text not found" in text and "3 times" in text


def test_a_revert_done_again_between_fixes_a_program_wrote_is_no_same_edit(make_session):
    """`git checkout mod.py` after each fix a `python -c` program wrote into the file, and a test
    run: each checkout undid a different fix (mini-swe-agent with DeepSeek V4 Flash, sympy-15599,
    which succeeded: "you applied the same edit 5 times")."""
    session = make_session()
    for n in range(6):
        session.run(sh("git checkout sympy/core/mod.py", "Updated 1 path from the index\n"),
                    sh(f"python -c \"p = 'sympy/core/mod.py'; s = open(p).read(); open(p, 'w').write(s.replace('q', 'q{n}'))\"", ""),
                    sh("python -m pytest -q sympy/core/tests/test_arit.py", f"FAILED test_Mod - assert {n} == 1\n"))
    assert "loop" not in [a for _, a in session.anomalies()]



def test_a_build_folder_removed_before_each_configure_is_no_same_edit(make_session):
    """`rm -rf build` before each of several configures (RepoLaunch, NVIDIA cccl, which succeeded:
    "you applied the same edit 8 times … view the file as it is now"): each removal undid what the
    configure made, as a revert does; removing it again with nothing run in between is still a loop."""
    session = make_session()
    for n in range(5):
        session.run(sh("rm -rf build", ""), sh(f"cmake -S . -B build -DOPTION_{n}=ON", f"CMake Error: option {n} needs CUDA\n"))
    assert "loop" not in [a for _, a in session.anomalies()]

    session = make_session()
    session.run(*[sh("rm -rf build", "")] * 3)
    assert [a for _, a in session.anomalies()] == ["loop"]
