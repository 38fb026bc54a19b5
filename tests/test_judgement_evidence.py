"""Evidence a person would accept: a failure is named by this run's own failing line.

Each test is a pattern that made the supervisor speak falsely on some scaffold, written as
the turns an agent takes (nearly everything through ``code_execution_tool``) and the
steering that must, or must not, come out.
"""

from __future__ import annotations

from test_judgement import TOOL, sh, traceback

from org.kernel.classify import advice_kind, classify_output, shows_nothing

#: Python prints this at every interpreter start on some machines: it names no failure.
PTH_WARNING = (
    "Error processing line 1 of /opt/conda/lib/python3.9/site-packages/distutils-precedence.pth:\n\n"
    "  Traceback (most recent call last):\n"
    '    File "/opt/conda/lib/python3.9/site.py", line 177, in addpackage\n'
    "      exec(line)\n"
    '    File "<string>", line 1, in <module>\n'
    "  ModuleNotFoundError: No module named '_distutils_hack'\n\n"
    "Remainder of file ignored\n"
)


def unittest_run(test: str, error: str) -> str:
    return (f"E\n{'=' * 70}\nERROR: {test} (tests.test_views.ViewTests)\n{'-' * 70}\n"
            f"{traceback(error)}{'-' * 70}\nRan 1 test in 0.004s\n\nFAILED (errors=1)\n")


def test_a_warning_printed_at_every_interpreter_start_is_not_a_failure_nor_an_identity(make_session):
    assert not classify_output(PTH_WARNING + "4\n").failed
    session = make_session()
    session.run(sh("python -c 'print(2 + 2)'", PTH_WARNING + "4\n"),
                sh("sed -i 's/a/b/' app.py", ""),
                sh("python app.py", PTH_WARNING + traceback("KeyError: 'user'")),
                sh("sed -i 's/b/c/' app.py", ""),
                sh("python -m app", PTH_WARNING + traceback("TypeError: 'NoneType' object is not subscriptable")),
                sh("python app.py --check", PTH_WARNING + traceback("ValueError: empty name")))
    assert session.anomalies() == []


def test_a_line_the_task_s_working_runs_print_too_names_nothing(make_session):
    notice = "ERROR: config.ini not found, using defaults"
    tests_ok = f"{notice}\n....\nRan 4 tests in 0.01s\n\nOK\n"
    session = make_session()
    session.run(sh("python -m unittest", tests_ok),
                sh("sed -i 's/x/y/' a.py", ""),
                *[sh(f"python tool.py --mode {m}", f"{notice}\n{traceback(f'RuntimeError: mode {m} broke')}") for m in "abc"])
    assert [a for _, a in session.anomalies()] == []
    outcome = session.agent.data["_org_tool_ledger"].outcomes[-1]
    assert outcome.error_line == "RuntimeError: mode c broke"


def test_a_test_run_is_named_by_its_failing_tests_and_their_errors_not_its_summary(make_session):
    errors = ("AttributeError: 'View' object has no attribute 'slug'", "TypeError: get() missing 1 required positional argument",
              "KeyError: 'pk'")
    session = make_session()
    session.run(sh("python -m unittest tests.test_views", unittest_run("test_detail", errors[0])))
    for n, error in enumerate(errors[1:]):
        session.run(sh(f"sed -i 's/v{n}/v{n + 1}/' views.py"), sh("python -m unittest tests.test_views", unittest_run("test_detail", error)))
    session.run(sh("sed -i 's/v9/v10/' views.py"), sh("python -m unittest tests.test_views", unittest_run("test_detail", errors[2])))
    assert session.anomalies() == []  # three errors fixed one after another; the third seen twice is not yet a pattern


def test_the_regression_different_error_types_with_empty_output_are_different_outcomes(make_session):
    session = make_session()
    session.run(*[{"tool": TOOL, "args": {"runtime": "terminal", "code": "python a.py"}, "output": "", "ok": False, "error_type": t}
                  for t in ("syntax", "dependency", "execution")])
    assert session.anomalies() == []
    assert not any(r.blocked or r.paused for r in session.results)
    ledger = session.agent.data["_org_tool_ledger"]
    assert {o.error_signature for o in ledger.outcomes} == {None}  # an empty output names no error
    assert len({o.result for o in ledger.outcomes}) == 3


def test_a_linter_s_normal_findings_are_not_a_failure():
    pylint = "************* Module app\napp.py:1:0: C0114: Missing module docstring (missing-module-docstring)\n"
    flake8 = "app.py:1:1: F401 'os' imported but unused\napp.py:3:80: E501 line too long (88 > 79 characters)\n"
    assert not classify_output(pylint).failed and not classify_output(flake8).failed
    assert not classify_output("app.py:1:0: C0114: Missing module docstring (missing-module-docstring)").failed


def test_a_traceback_cut_off_before_its_exception_fails_but_names_nothing(make_session):
    bare = 'Traceback (most recent call last):\n  File "<string>", line 1, in <module>\n'
    verdict = classify_output(bare)
    assert verdict.failed and verdict.identity is None
    session = make_session()
    session.run(sh("sed -i 's/a/b/' x.py"), *[sh(f"python -c 'import x; x.run({n})'", bare) for n in range(4)])
    assert "churn" not in [a for _, a in session.anomalies()]


def test_a_failure_there_before_the_first_edit_is_not_churn_and_seeing_it_again_is_a_rerun(make_session):
    """A reproduction script shows the bug; the agent's edits do not reach it."""
    bug = "Error: Invalid IP address format: 999.999.999.999"
    session = make_session()
    session.run(sh("python reproduce.py", bug), sh("python check.py 999.999.999.999", bug))
    for n in range(3):
        session.run(sh(f"sed -i 's/v{n}/v{n + 1}/' ipcheck.py"), sh("python reproduce.py", bug))
    anomalies = [a for _, a in session.anomalies()]
    assert "churn" not in anomalies and anomalies == ["rerun"]
    assert "No effect: you ran `python reproduce.py` again 3 times" in session.steering()[0][2]


def test_edits_that_only_move_where_the_same_error_is_raised_have_no_effect(make_session):
    """Editing the reproduction script shifts the line its frame names; the failure is the same."""
    def run(line: int) -> str:
        return ("Traceback (most recent call last):\n"
                f'  File "/repo/reproduce.py", line {line}, in setUpClass\n    with connection.schema_editor() as editor:\n'
                '  File "/repo/django/db/backends/sqlite3/schema.py", line 29, in __enter__\n    raise NotSupportedError(\n'
                "django.db.utils.NotSupportedError: SQLite schema editor cannot be used while foreign key constraint checks are enabled.\n")
    session = make_session()
    session.run(sh("python reproduce.py", run(31)))
    for n in range(3):
        session.run(sh(f"sed -i '{29 + n}a\\    pass' reproduce.py"), sh("python reproduce.py", run(33 + 2 * n)))
    [(_, anomaly, text)] = session.steering()
    assert anomaly == "rerun" and "No effect: you ran `python reproduce.py` again 3 times" in text and "NotSupportedError" in text


def test_an_oscillation_needs_identical_actions_not_look_alikes(make_session):
    failed = "sed: -e expression #1, char 9: unterminated `s' command"
    session = make_session()
    session.run(*[sh(f"sed -i 's/  x{' ' * n}/x/' a.py", failed) for n in range(4)])
    assert session.anomalies() == []


def test_the_same_three_calls_going_round_with_the_same_results_is_a_cycle(make_session):
    """CodeR django-11797: a view, another view and a search that fails, round and round."""
    search_failed = "/root/commands/search_stackoverflow.sh: line 16: _web_issue_retrieval_with_api: command not found"
    calls = [sh("open django/db/models/sql/compiler.py 134", "[File: compiler.py (1525 lines total)]\n134: def get_group_by"),
             sh("goto 470", "[File: compiler.py (1525 lines total)]\n470: def as_sql"),
             sh('stackoverflow_search "Django SQLCompiler get_group_by"', search_failed)]
    session = make_session()
    session.run(*calls, *calls[:2])
    assert session.anomalies() == []
    session.run(calls[2])
    [(turn, anomaly, text)] = session.steering()
    assert (turn, anomaly) == (6, "loop")
    assert text.startswith("[SUPERVISOR] Cycle: you went round the same 3 calls (`open django/db/models/sql/compiler.py…`, "
                           "`goto 470` and `stackoverflow_search \"Django SQLCompi…`) 2 times and got the same results each time.")


def test_steering_quotes_the_command_the_repeated_line_and_how_many_times(make_session):
    session = make_session()
    session.run(*[sh("python app.py", traceback("KeyError: 'user'"))] * 3)
    [(_, _, text)] = session.steering()
    assert "`python app.py`" in text and "KeyError: 'user'" in text and "3 times" in text


def test_the_same_call_that_worked_with_the_same_output_is_told_to_use_it_not_to_fix_it(make_session):
    session = make_session()
    session.run(*[sh("python reproduce.py", "2\n")] * 3)
    [(_, _, text)] = session.steering()
    assert "`python reproduce.py` 3 times and got the same output each time" in text and "act on it" in text
    assert "(the same" not in text and "fix" not in text
    session = make_session()
    session.run(*[sh("echo 'import os' >> src/app.py", "")] * 3)  # each one appended again: "only repeats it", not "changes nothing"
    [(_, _, text)] = session.steering()
    assert "applied the same edit `echo 'import os' >> src/app.py`" in text and "Applying it again only repeats it" in text


def test_the_same_failure_with_changing_times_paths_and_pids_is_the_same_failure(make_session):
    session = make_session()
    session.run(*[sh("./start.sh", f"2026-11-25T17:0{n}:1{n}Z worker pid {4000 + n} at /tmp/tmpx{n}q9z/app.sock\n"
                                   f"fatal: could not bind /tmp/tmpx{n}q9z/app.sock after 0.{n}3s") for n in range(3)])
    assert session.anomalies() == [(3, "loop")]


REFUSED = ("Your proposed edit has introduced new syntax error(s). Please read this error message carefully.\n\n"
           "ERRORS:\n- E999 IndentationError: unexpected indent\n\nThis is how your edit would have looked if applied\n"
           "...\nYour changes have NOT been applied. Please fix your edit command and try again.\n")


def test_a_shell_s_line_counter_makes_no_output_new(make_session):
    session = make_session(doctrine={"breaker": {"enabled": False}})
    session.run(sh("sed -i 's/a/b/' Test.java"),
                *[sh(f"javac -cp .:lib/{n}.jar Test.java", f"/bin/bash: line {47857 + 15 * n}: javac: command not found") for n in range(3)],
                *[sh(f"javac -d out{n} Test.java", f"/bin/bash: line {48000 + 15 * n}: javac: command not found") for n in range(3)])
    assert [a for _, a in session.anomalies()].count("churn") == 1  # the task did not move: said once


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


def test_an_exit_status_the_output_states_decides_and_an_error_printed_on_purpose_is_no_churn(make_session):
    on_purpose = "<returncode>0</returncode>\n<output>\nError: Invalid IP address format: 999.999.999.999\n</output>"
    assert not classify_output(on_purpose).failed
    assert classify_output("<returncode>2</returncode>\n<output>\n</output>").failed
    assert classify_output("[The command completed with exit code 1.]").failed
    # OpenHands' older line names the command's id (and once closed it with two brackets)
    assert classify_output("OBSERVATION:\nTraceback (most recent call last):\nValueError: on purpose\n[Command -1 finished with exit code 0]]").failed is False
    assert classify_output("OBSERVATION:\n\n[Command 12 finished with exit code 2]").failed
    session = make_session()
    session.run(sh("cat > check.sh <<'EOF'\nvalidate \"$1\"\nEOF", "<returncode>0</returncode>\n<output>\n</output>"),
                *[sh(f"./check.sh 999.999.999.{n}", on_purpose) for n in range(4)])
    assert session.anomalies() == []


def test_a_status_of_0_from_a_filter_at_the_end_of_a_pipeline_says_nothing_of_the_run(make_session):
    """`python repro.py 2>&1 | tail` exits with tail's 0 whatever the script did: the output's text
    decides, as where no status is printed; a status that is not 0 still says the pipeline failed."""
    from org.kernel.classify import filter_sets_status

    crashed = "<returncode>0</returncode>\n<output>\n" + traceback("ImportError: No module named pkg_resources") + "</output>"
    assert not classify_output(crashed).failed  # the status decides, when it is the run's
    assert classify_output(crashed, filter_status=True).error_line == "ImportError: No module named pkg_resources"
    assert not classify_output("<returncode>0</returncode>\n<output>\na.py\nb.py\n</output>", filter_status=True).failed
    assert classify_output("[The command completed with exit code 1.]", filter_status=True).failed
    for command, filtered in (("python repro.py 2>&1 | tail -20", True), ("cd /repo && python -m pytest -x | head -50", True),
                              ("python repro.py |& grep -v Warning", True), ("python repro.py || echo failed", False),
                              ("echo 3 | python repro.py", False), ("set -o pipefail; python repro.py | tail", False),
                              ("python repro.py | tail -5 && echo done", False)):
        assert filter_sets_status(command) is filtered, command

    session = make_session(doctrine={"breaker": {"enabled": False}})
    session.run(sh("sed -i 's/a/b/' setup.py", "<returncode>0</returncode>\n<output>\n</output>"))
    for n in range(3):
        session.run(sh(f"pip install -e . 2>&1 | tail -{n + 3}", crashed), sh(f"sed -i 's/a{n}/b{n}/' setup.py", "<returncode>0</returncode>"))
    assert "churn" in [a for _, a in session.anomalies()]


# ----- other scaffolds' tools, and where an error was raised


def test_file_tools_of_other_scaffolds_are_known_by_their_arguments_and_names():
    from org.kernel.classify import action_kind

    edits = [("Edit", {"file_path": "a.py", "old_string": "x", "new_string": "y"}), ("Write", {"file_path": "a.py", "content": "x"}),
             ("str_replace_editor", {"command": "str_replace", "path": "a.py", "old_str": "x", "new_str": "y"}),
             ("mcp_filesystem.edit_file", {"path": "a.py", "edits": [{"oldText": "x", "newText": "y"}]})]
    looks = [("Read", {"file_path": "a.py"}), ("Grep", {"pattern": "def main"}), ("Glob", {"pattern": "**/*.py"}),
             ("str_replace_editor", {"command": "view", "path": "a.py"}), ("read_file", {"path": "a.py"})]
    runs = [("Bash", {"command": "python a.py"}), ("TodoWrite", {"todos": []}), ("call_subordinate", {"message": "read a.py"})]
    assert [action_kind(t, a) for t, a in edits] == ["edit"] * len(edits)
    assert [action_kind(t, a) for t, a in looks] == ["inspect"] * len(looks)
    assert [action_kind(t, a) for t, a in runs] == ["run"] * len(runs)


def test_an_exit_code_line_opening_the_output_and_zsh_s_wording_are_failures():
    assert classify_output("Exit code 2\nusage: tool [-h]").failed
    assert classify_output("zsh: command not found: javac").error_type == "not_found"
    # Claude Code's shell evaluates the command: zsh names the command, then the missing name
    for said in ("(eval):1: command not found: pytest", "(eval):cd:1: no such file or directory: testbed"):
        assert classify_output(said).error_line == said
    assert advice_kind("not_found", "(eval):1: command not found: pytest") == "missing_program"
    assert not classify_output("collected 3 items\nExit code 2 was expected here").failed


def test_the_same_message_raised_at_another_site_of_the_project_is_another_failure():
    def raised(site: str) -> str:
        return ("Traceback (most recent call last):\n  File \"/repo/run.py\", line 3, in <module>\n    main()\n"
                f"  File \"/repo/pkg/{site}.py\", line 30, in {site}\n    x = np.float(1)\n"
                "  File \"/usr/lib/python3.11/site-packages/numpy/__init__.py\", line 320, in __getattr__\n    raise AttributeError\n"
                "AttributeError: module 'numpy' has no attribute 'float'\n")

    first, moved, again = (classify_output(raised(site)) for site in ("least_angle", "online_lda", "least_angle"))
    assert first.error_line == moved.error_line == "AttributeError: module 'numpy' has no attribute 'float'"
    assert first.identity != moved.identity and first.identity == again.identity  # the library's frame names no site


def test_an_error_moving_to_the_next_call_site_after_each_fix_is_not_churn(make_session):
    session = make_session()
    session.run(sh("python -c 'print(1)'", "1\n"))
    for n, site in enumerate(("least_angle", "online_lda", "pairwise", "ridge")):
        session.run(sh(f"sed -i 's/np.float(/float(/' pkg/{site}.py", ""),
                    sh(f"python check.py --n {n}", traceback("AttributeError: module 'numpy' has no attribute 'float'")
                       .replace('File "/repo/app.py", line 3, in <module>', f'File "/repo/pkg/{site}.py", line 30, in {site}')))
    assert session.anomalies() == []


def test_an_error_routed_around_is_no_churn_and_the_same_mistake_made_again_is_said_with_the_form_that_works(make_session):
    """`python -m pytest` fails (no module), `pytest` works: a slip back to the first is not a
    pattern of fixes missing their cause; made a third time, the mistake is said, quoting the
    form that worked."""
    missing = "/usr/bin/python: No module named pytest\n"
    session = make_session()
    session.run(sh("sed -i 's/a/b/' src/x.py", ""),
                sh("python -m pytest tests/test_x.py", missing), sh("pytest tests/test_x.py", "1 passed in 0.1s\n"),
                sh("python -m pytest tests/test_y.py", missing), sh("pytest tests/test_y.py", "2 passed in 0.1s\n"))
    assert session.anomalies() == []
    session.run(sh("cat src/x.py", "def x(): ..."), sh("python -m pytest -k x", missing))
    [(turn, anomaly, text)] = session.steering()
    assert (turn, anomaly) == (7, "churn") and "not reaching" not in text
    assert text.startswith("[SUPERVISOR] Repeated mistake: a command like `python -m pytest -k x` has failed 3 times")
    assert "after each earlier time a corrected form such as `pytest tests/test_y.py` ran without it" in text


def test_an_import_error_back_after_every_install_is_churn(make_session):
    missing = traceback("ModuleNotFoundError: No module named 'yaml'")
    session = make_session()
    session.run(sh("sed -i 's/a/b/' app.py", ""), sh("python app.py", missing),
                sh("pip install pyyaml", "Successfully installed pyyaml-6.0"), sh("python -m app", missing),
                sh("pip install --user pyyaml", "Requirement already satisfied: pyyaml"), sh("python3 app.py", missing))
    [(turn, anomaly, text)] = session.steering()
    assert (turn, anomaly) == (6, "churn") and "No module named 'yaml'" in text


def test_looks_that_find_nothing_and_refused_edits_are_no_failure_streak_for_pace(make_session):
    session = make_session(doctrine={"radio_check_interval_turns": 1})
    refused = ("Your proposed edit has introduced new syntax error(s).\nERRORS:\n- E999 IndentationError: unexpected indent\n"
               "Your changes have NOT been applied.\n")
    session.run(sh("sed -i 's/a/b/' app.py", ""),
                *[sh(f"ls src/mod{i}", f"ls: cannot access 'src/mod{i}': No such file or directory") for i in range(4)],
                *[sh(f"edit 10:12\n    return {i}\nend_of_edit", refused) for i in range(4)])
    assert {r.pace for r in session.results} == {"primary"}
    assert not [a for _, a in session.anomalies() if a == "pace"]


def test_a_linter_s_findings_and_a_pytest_4_summary_are_reports_whatever_the_exit_status():
    assert not classify_output("Exit code 24\n************* Module a\na.py:1:0: C0114: Missing module docstring\n\n"
                               "Your code has been rated at 5.00/10\n").failed
    verdict = classify_output("Exit code 1\ncollected 2 items\n\nt.py FF\n\nE   assert 1 == 2\n===== 2 failed in 0.03 seconds =====\n")
    assert (verdict.failed, verdict.error_type) == (False, "test")


def test_a_heredoc_fed_to_a_program_is_a_run_and_one_into_a_file_an_edit_that_creates_it():
    from org.kernel.classify import action_kind, leaves_code

    assert action_kind("Bash", {"command": "python3 << EOF\nif len(x) > 1: print(x)\nEOF"}) == "run"
    assert action_kind("Bash", {"command": "cat > repro.py << EOF\nprint(1)\nEOF"}) == "edit"
    assert leaves_code({"command": "cat > repro.py << EOF\nprint(1)\nEOF"}) and leaves_code({"file_path": "t.py", "content": "x"})
    assert leaves_code({"command": "str_replace_editor create /testbed/repro.py --file_text 'print(1)'"})
    assert not leaves_code({"command": "str_replace_editor str_replace /testbed/a.py --old_str a --new_str b"})
    assert not leaves_code({"command": "sed -i 's/a/b/' app.py"}) and not leaves_code({"file_path": "a.py", "old_string": "a", "new_string": "b"})
    setup = ["rm -rf testbed", "cd testbed && git checkout 1a2b3c", "git fetch origin && git checkout main",
             "pip install -e . > /tmp/install.log 2>&1", "mkdir -p out && touch out/a"]
    assert all(leaves_code({"command": c}) for c in setup), [c for c in setup if not leaves_code({"command": c})]
    assert not leaves_code({"command": "cd src && sed -i 's/a/b/' x.py && python x.py"})
    assert not leaves_code({"command": "echo 'x = 1' >> src/config.py"})


def test_code_that_agent_zero_runs_as_a_program_is_judged_as_one(make_session):
    """Agent-Zero's `runtime: python` (and `nodejs`) runs code, not shell: `x > 1` is a comparison,
    and code that writes a file (`open(p, "w")`, `write_text`) edits it, as a script fed to
    Python through a heredoc does; reruns after such edits are reruns after changes."""
    from org.kernel.classify import action_kind, leaves_code

    def code(runtime: str, text: str) -> dict:
        return {"runtime": runtime, "session": 0, "code": text}

    assert action_kind("code_execution_tool", code("python", "rows = load()\nif len(rows) > 1:\n    print(rows)")) == "run"
    assert action_kind("code_execution_tool", code("nodejs", "console.log(a > b)")) == "run"
    patch = "s = open('app.py').read()\nopen('app.py', 'w').write(s.replace('x + 1', 'x + 2'))"
    assert action_kind("code_execution_tool", code("python", patch)) == "edit"
    assert action_kind("code_execution_tool", code("nodejs", "fs.writeFileSync('a.js', src)")) == "edit"
    assert action_kind("Bash", {"command": f"python3 - <<'EOF'\n{patch}\nEOF"}) == "edit"
    assert action_kind("Bash", {"command": "python3 - <<'EOF'\nprint(1 > 0)\nEOF"}) == "run"
    assert action_kind("Bash", {"command": "python3 -c \"from app import rows; print(len(rows()) > 1)\""}) == "run"
    assert action_kind("Bash", {"command": "python3 -c 'print(1)' > settings.py"}) == "edit"
    reads = ("print(open(os.path.join(root, 'app.py')).read())", "im = Image.open('avatar.png')", "z.open('word/document.xml')")
    assert [action_kind("code_execution_tool", code("python", text)) for text in reads] == ["run"] * 3  # a file named a…, w…, x… is no mode
    assert action_kind("code_execution_tool", code("python", "with open(os.path.join(d, 'a.py'), 'w') as f:\n    f.write(s)")) == "edit"
    assert action_kind("code_execution_tool", {"runtime": ["python"], "code": "print(1)"}) == "run"  # a runtime of another type
    assert not leaves_code(code("python", patch))  # it changes the code under work: the baseline ends
    unclosed = 'python -c "import sys; print(\'' + "a\\t" * 30 + '\\n\')'  # a quote never closed, many escapes: no backtracking
    assert action_kind("Bash", {"command": unclosed}) == "inspect"  # an import and a print: a look
    session = make_session(doctrine={"breaker": {"enabled": False}})
    for n in range(4):
        session.run({"tool": "code_execution_tool", "args": code("python", patch.replace("2", str(n + 2))), "output": ""},
                    sh("python app.py", traceback("TypeError: unsupported operand")))
    assert [a for _, a in session.anomalies()] == ["rerun"] and "No effect" in session.steering()[-1][2]


def test_a_command_that_clears_or_makes_room_around_a_run_is_the_run(make_session):
    """`rm -rf generated && sphinx-autogen …` regenerates the docs: run again after each change of
    the configuration it is no edit applied again and again, and its output is what the run gave."""
    from org.kernel.classify import action_kind

    for command in ("rm -rf build && make", "mkdir -p out && python gen.py", "python app.py > out.txt"):
        assert action_kind("Bash", {"command": command}) == "run", command
    for command in ("rm -rf build", "sed -i 's/a/b/' a.py && python a.py", "cp fixed.py a.py && python a.py", "echo x > config.py",
                    "rm tests/test_old.py && pytest", "touch src/__init__.py && pytest", "sh -c 'printf x > src/a.py'"):
        assert action_kind("Bash", {"command": command}) == "edit", command
    session = make_session()
    regenerate = "rm -rf generated && PYTHONPATH=. sphinx-autogen -i -o generated index.rst"
    for n in range(3):
        session.run(sh(f"python3 - <<'PY'\nopen('conf.py', 'a').write('x = {n}')\nPY"), sh(regenerate, f"[autosummary] writing {n} files"))
    assert session.anomalies() == []


def test_the_reproduction_s_first_failure_is_the_baseline_even_after_writing_the_script(make_session):
    """Writing one's own script changes none of the code under work: the error it shows before
    the first real edit is what the agent works against, and its coming back is no churn."""
    bug = traceback("AssertionError: expected 3, got 2")
    session = make_session()
    session.run(sh("cat > repro.py << EOF\nassert f() == 3\nEOF", ""), sh("python repro.py", bug),
                sh("sed -i 's/+ 1/+ 2/' lib.py", ""), sh("python repro.py --v", bug),
                sh("sed -i 's/+ 2/+ 3/' lib.py", ""), sh("python -m repro", bug))
    assert [a for _, a in session.anomalies()] != ["churn"]
    assert all(o.baseline for o in session.agent.data["_org_tool_ledger"].outcomes if not o.ok)


def test_an_install_that_failed_is_no_fix_attempt():
    from org.kernel.outcomes import ToolOutcome, fix_attempt

    def install(ok: bool) -> ToolOutcome:
        return ToolOutcome(1, "t", ok, None if ok else "not_found", "s", "h", "", kind="run", command="mvn install")

    assert fix_attempt(install(True)) and not fix_attempt(install(False))


def test_a_missing_module_there_from_the_start_churns_when_installs_that_worked_keep_leaving_it(make_session):
    """No code changed (a checkout and a log file change none): the edits are not its cause,
    but every install that worked and left it is a fix missing it (another interpreter)."""
    missing = traceback("ModuleNotFoundError: No module named 'yaml'")
    session = make_session()
    session.run(sh("git clone https://example.invalid/r.git && cd r && git checkout v1", "Cloning into 'r'..."),
                sh("python app.py", missing), sh("cat app.py", "import yaml"), sh("python -m app", missing))
    assert session.anomalies() == []  # there before any change, and nothing tried: a look between is no fix
    session.run(sh("pip install pyyaml > /tmp/pip.log 2>&1", ""), sh("python app.py", missing),
                sh("pip install --user pyyaml", "Requirement already satisfied: pyyaml"), sh("python3 app.py", missing))
    [(turn, anomaly, text)] = session.steering()
    assert (turn, anomaly) == (8, "churn") and "No module named 'yaml'" in text
    assert all(o.baseline for o in session.agent.data["_org_tool_ledger"].outcomes if not o.ok)


def test_a_command_that_worked_but_does_another_job_is_no_detour(make_session):
    broken = "Error: JAVA_HOME is not defined correctly.\n"
    session = make_session()
    session.run(sh("sed -i 's/a/b/' Foo.java", ""),
                *[step for n in range(3) for step in (sh(f"./mvnw compile -q{'q' * n}", broken), sh(f"export JAVA_HOME=/opt/jdk{n}", ""))])
    assert not [text for _, _, text in session.steering() if "Repeated mistake" in text]


def test_a_tool_that_marks_its_failures_with_an_exit_code_worked_when_it_did_not(make_session):
    """Claude Code's Bash opens a failing output with `Exit code N` and says nothing when the
    command exited 0: once seen, a script's own `Error: …` line printed with no mark is a result."""
    from org.kernel.outcomes import record_outcome

    data: dict = {}
    printed = "Error: Velocity of point Q has not been defined in ReferenceFrame N\n"
    assert record_outcome(data, "Bash", {"command": "python repro.py"}, printed).ok is False  # its way not seen yet: a failure
    assert record_outcome(data, "Bash", {"command": "python -m pytest"}, "Exit code 1\n/usr/bin/python: No module named pytest\n").ok is False
    assert record_outcome(data, "Bash", {"command": "python repro.py"}, printed).ok
    assert record_outcome(data, "Bash", {"command": "sleep 999"}, "Command timed out after 2m 0.0s").ok is False
    assert record_outcome(data, "Other", {"command": "python other.py"}, "Error: no frame named N\n").ok is False  # another tool: its own way


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


def test_a_blocked_call_did_not_run_so_no_error_came_back_and_nothing_was_rerun(make_session):
    """A mistyped folder tried once with a listing, then alone until the breaker blocks it and
    pauses: the loop is said once; a blocked call is no error coming back (churn), no run
    repeated and no work between two runs (rerun), also when the user resumes and it fails again."""
    missing = "/bin/bash: line 12: cd: fastjson/: No such file or directory\n"
    session = make_session()
    session.run(sh("cd fastjson/\nls -F", missing + "fasterxml/\n"), *[sh("cd fastjson/", missing)] * 5)
    assert [(r.turn, bool(r.blocked), r.paused) for r in session.results][3:] == [(4, False, False), (5, True, False), (6, True, True)]
    session.standin.agent.context.paused = False  # the user resumes
    session.run(*[sh("cd fastjson/", missing)] * 2)
    assert [(t, a) for t, a, _ in session.steering()] == [(4, "loop")]


def test_a_refused_edit_and_a_program_not_installed_get_advice_that_fits_them(make_session):
    """Not "fix the quoting" for an edit whose range left old lines behind, not "check the
    path" for a JDK that is not there."""
    refused = ("Your proposed edit has introduced new syntax error(s).\nERRORS:\n- E999 SyntaxError: invalid syntax\n"
               "Your changes have NOT been applied. Please fix your edit command and try again.\n")
    session = make_session(doctrine={"breaker": {"enabled": False}})
    session.run(*[sh("edit 10:11\n    return total\nend_of_edit", refused)] * 3)
    session.run(*[sh("javac Repro.java", "/bin/bash: line 62245: javac: command not found\n")] * 3)
    session.run(*[sh("curl -sO https://example.org/x", "/bin/sh: 1: curl: not found\n")] * 3)  # dash's wording
    edit, javac, curl = [text for _, anomaly, text in session.steering() if anomaly == "loop"]
    assert "the editor changed nothing" in edit and "quoting" not in edit
    assert "the program is not installed here" in javac and "check the path" not in javac
    assert "the program is not installed here" in curl
    # a build tool finding no Java where JAVA_HOME points (deepseek-chat, dubbo-7041): the JDK is what is missing
    for no_jdk in ("Error: JAVA_HOME is not defined correctly.",
                   "ERROR: JAVA_HOME is not set and no 'java' command could be found in your PATH."):
        verdict = classify_output(f"{no_jdk}\n  We cannot execute /usr/lib/jvm/zulu8/bin/java\n")
        assert advice_kind(verdict.error_type, verdict.error_line) == "missing_program", no_jdk


def test_a_module_imported_while_it_is_still_being_imported_is_told_not_to_install_anything(make_session):
    """A `types.py` of the agent's own hides the standard one, or an edit made two modules
    import each other (sphinx-8459, sympy): an ImportError, but nothing to install."""
    shadowed = traceback("ImportError: cannot import name 'GenericAlias' from partially initialized module 'types' "
                         "(most likely due to a circular import) (/testbed/types.py)")
    cycle = traceback("AttributeError: partially initialized module 'sphinx.addnodes' has no attribute 'versionmodified' "
                      "(most likely due to a circular import)")
    for output, error_type in ((shadowed, "dependency"), (cycle, "execution")):
        verdict = classify_output(output)
        assert verdict.error_type == error_type and advice_kind(verdict.error_type, verdict.error_line) == "circular_import"
    assert advice_kind("dependency", "ModuleNotFoundError: No module named 'yaml'") == "dependency"
    session = make_session(doctrine={"breaker": {"enabled": False}})
    session.run(*[sh("python repro.py", shadowed)] * 3)
    [(_, _, text)] = session.steering()
    assert "nothing is missing" in text and "types.py" in text and "install or correct" not in text


def test_django_refusing_a_script_in_its_setup_is_told_to_set_django_up_not_to_change_the_code(make_session):
    """Each verification script written anew defines a model outside any app (django-15022 and
    others of SWE-agent 1.0): the same error each time, from Django's setup, before the code under
    work is reached."""
    lines = ("django.core.exceptions.ImproperlyConfigured: Requested setting INSTALLED_APPS, but settings are not configured. "
             "You must either define the environment variable DJANGO_SETTINGS_MODULE or call settings.configure() before accessing settings.",
             "django.core.exceptions.AppRegistryNotReady: Apps aren't loaded yet.",
             "RuntimeError: Model class __main__.Client doesn't declare an explicit app_label and isn't in an application in INSTALLED_APPS.",
             "django.core.exceptions.ImproperlyConfigured: The SECRET_KEY setting must not be empty.",
             "django.db.utils.OperationalError: no such table: django_content_type")
    for line in lines:
        verdict = classify_output(traceback(line))
        assert advice_kind(verdict.error_type, verdict.error_line) == "django_setup", line
    # a table of the project's own models (or of a test app's, `auth_tests`) missing may be the bug under work
    for table in ("library_book", "auth_tests_parentmodel"):
        assert advice_kind("execution", f"django.db.utils.OperationalError: no such table: {table}") == "execution"
    assert advice_kind("execution", "django.db.utils.OperationalError: no such table: auth_user_groups") == "django_setup"
    session = make_session()
    for name in ("verify_fix", "test_admin_search", "final_check"):
        session.run({"tool": "text_editor", "args": {"path": f"/testbed/{name}.py", "edits": [{"from": 1, "to": 1, "content": "import django\n"}]},
                     "output": "edited"},
                    sh(f"python {name}.py", traceback(lines[2])))
    [(_, anomaly, text)] = session.steering()
    assert anomaly == "churn" and "Django's own setup" in text and "`app_label`" in text and "read the error message" not in text


def test_text_sent_as_a_command_is_told_so_not_to_install_a_program(make_session):
    """A model that writes its reasoning where the command goes: bash runs the words."""
    reasoning = "DISCUSSION\nThe file path may be wrong. Let's check it again."
    said = ("/bin/bash: line 2862: DISCUSSION: command not found\n/bin/bash: line 2863: The: command not found\n"
            "/bin/bash: line 2864: Lets: command not found\n")
    session = make_session(doctrine={"breaker": {"enabled": False}})
    session.run(*[sh(reasoning, said)] * 3)
    [(_, _, text)] = session.steering()
    assert "what you sent was text, not a command" in text and "not installed" not in text


def test_source_code_sent_as_a_command_is_told_to_go_in_a_file_not_to_fix_its_quoting(make_session):
    """A Java class sent where the command goes (deepseek-chat, jackson-databind-4189): bash
    cannot parse it, and no quoting makes it a command."""
    java = "class Parent {\n    public Child child;\n}"
    said = "/bin/bash: line 3: syntax error near unexpected token `}'\n/bin/bash: line 3: `}'"
    session = make_session()
    session.run(*[sh(java, said)] * 4)
    texts = [text for _, _, text in session.steering()]
    assert texts and all("source code, not a shell command" in t and "quoting" not in t for t in texts)
    # a shell script with a quoting mistake keeps the syntax advice
    quoting = make_session(doctrine={"breaker": {"enabled": False}})
    quoting.run(*[sh("echo 'it''s) done", "/bin/bash: -c: line 1: syntax error near unexpected token `)'")] * 3)
    [(_, _, text)] = quoting.steering()
    assert "fix the quoting or syntax" in text


def test_code_as_a_command_is_known_by_how_it_opens_and_the_shell_refusing_it():
    refused = "/bin/bash: line 7: syntax error near unexpected token `('"
    for code in ("import numpy as np\nfrom sklearn.metrics import x\ndef test_reproduce():", "public class Main {",
                 "package com.example;\nimport java.util.List;", "def main():", "#include <stdio.h>", "@Test\nvoid t() {"):
        assert advice_kind("syntax", refused, code) == "code_command", code
    assert advice_kind("not_found", "/bin/bash: line 1: from: command not found", "from x import y") == "code_command"
    for command in ("python reproduce.py", "import -window root shot.png", "grep -n 'class Foo {' a.java"):
        assert advice_kind("syntax", refused, command) == "syntax", command
    assert advice_kind("execution", "Traceback: NameError", "class A:") == "execution"  # the shell ran it


def test_the_same_command_described_anew_is_the_same_action(make_session):
    """Claude Code's Bash takes a `description` of the command for people: the command is the action."""
    from org.kernel.outcomes import canonical_signature
    session = make_session(doctrine={"breaker": {"enabled": False}})
    session.run(*[{"tool": "Bash", "args": {"command": "python app.py", "description": f"Run the app, try {n}"},
                   "output": "Exit code 1\n" + traceback("KeyError: 'user'")} for n in range(3)])
    assert [a for _, a in session.anomalies()] == ["loop"]
    issue = {"title": "Crash on start"}  # no command: every argument is what the call does
    assert canonical_signature("create_issue", {**issue, "description": "a"}) != canonical_signature("create_issue", {**issue, "description": "b"})


def test_a_package_the_package_manager_does_not_know_is_not_told_to_install_it(make_session):
    apt = "Reading package lists...\nBuilding dependency tree...\nE: Package 'openjdk-8-jdk' has no installation candidate\n"
    assert classify_output(apt).error_type == "dependency"
    session = make_session(doctrine={"breaker": {"enabled": False}})
    session.run(*[sh("apt-get install -y openjdk-8-jdk", apt)] * 3)
    session.run(*[sh("pip install cv3", "ERROR: Could not find a version that satisfies the requirement cv3 (from versions: none)\n"
                                       "ERROR: No matching distribution found for cv3\n")] * 3)
    apt_loop, pip_loop = [text for _, anomaly, text in session.steering() if anomaly == "loop"]
    for text in (apt_loop, pip_loop):
        assert "look up the package's name" in text and "install or correct" not in text


def test_a_program_that_is_not_installed_does_not_churn_across_edits(make_session):
    """Edits do not bring a missing compiler: `javac` failing between unrelated edits and
    other work is not "your changes are not reaching its cause"."""
    missing = "/bin/bash: line 7: javac: command not found\n"
    session = make_session()
    session.run(sh("sed -i 's/x/y/' src/Main.java", ""))  # after the agent's first change: not the baseline
    for n in range(3):
        session.run(sh(f"javac -cp . Repro{n}.java", missing), sh(f"sed -i 's/a{n}/b{n}/' src/Main.java", ""),
                    sh(f"grep -n b{n} src/Main.java", f"{n}: b{n}"))
    assert "churn" not in [a for _, a in session.anomalies()]


def test_climbing_up_with_cd_is_no_loop(make_session):
    session = make_session()
    session.run(sh("cd src/main/java", ""), *[sh("cd ..", "")] * 4)
    assert session.anomalies() == []


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


def test_pace_steering_says_what_brought_the_level(make_session):
    """Not a bare "Unrecoverable: stop": the failures in a row and the latest one's line."""
    session = make_session(doctrine={"breaker": {"enabled": False}, "escalation": {"pause": False, "pause_after_emergency": False}})
    session.run(*[sh(f"python check_{n}.py", traceback(f"TypeError: bad operand {n}")) for n in range(8)])
    pace = [text for _, anomaly, text in session.steering() if anomaly == "pace"]
    assert pace[0].startswith("[SUPERVISOR] PACE contingent: ")
    assert "has failed (the last 5 calls failed; the latest: TypeError: bad operand 4); switch" in pace[0]

    session = make_session(doctrine={"breaker": {"enabled": False}, "escalation": {"pause": False, "pause_after_emergency": False}})
    session.run(*[sh("python app.py", traceback("TypeError: bad operand"))] * 8)
    [emergency] = [text for _, anomaly, text in session.steering() if anomaly == "pace"]
    assert "Stop now (the last 8 calls failed; the latest: TypeError: bad operand), preserve" in emergency

    # failures that printed nothing have no line to quote: not their error type in its place
    session = make_session(doctrine={"breaker": {"enabled": False}, "escalation": {"pause": False}})
    session.run(*[sh(f"cd build_{n} && make", "<returncode>2</returncode>\n<output>\n</output>") for n in range(5)])
    [pace] = [text for _, anomaly, text in session.steering() if anomaly == "pace"]
    assert "has failed (the last 5 calls failed); switch" in pace, pace


def program(code: str, output: str) -> dict:
    """Agent-Zero's `runtime: python`: the call's code is the program."""
    return {"tool": "code_execution_tool", "args": {"runtime": "python", "code": code}, "output": output}


BUGS = ["SyntaxError: f-string: expecting '}'", "IndentationError: expected an indented block after 'for' statement on line 9",
        "KeyError: 'odds'", "TypeError: 'set' object is not subscriptable", "AttributeError: 'list' object has no attribute 'get'"]


def test_a_program_being_debugged_bug_after_bug_is_not_told_to_change_approach(make_session):
    """A scraper written anew in each call fails each time with another bug: each fix went in and
    uncovered the next one. PACE rises to contingent from the failures in a row, but "change the
    design or the library" is wrong there (real Agent-Zero chats: two such steerings were false)."""
    quiet = {"breaker": {"enabled": False}, "escalation": {"pause": False}}
    session = make_session(doctrine=quiet)
    results = session.run(*[program(f"import requests\n# version {n}\nscrape()", traceback(bug)) for n, bug in enumerate(BUGS)])
    assert results[-1].pace == "contingent" and [a for _, a, _ in session.steering()] == []

    # the same five bugs from a script run again and again with nothing changed: no debugging
    session = make_session(doctrine=quiet)
    session.run(*[sh(f"python scrape.py --try {n}", traceback(bug)) for n, bug in enumerate(BUGS)])
    assert [a for _, a, _ in session.steering()] == ["pace"]

    # a bug that comes back is no new bug uncovered; a module not installed is no bug of the program
    for bugs in ([*BUGS[:4], BUGS[0]], [*BUGS[:4], "ModuleNotFoundError: No module named 'websocket'"]):
        session = make_session(doctrine=quiet)
        session.run(*[program(f"import requests\n# version {n}\nscrape()", traceback(bug)) for n, bug in enumerate(bugs)])
        assert "pace" in [a for _, a, _ in session.steering()], bugs


def test_a_cause_outside_the_code_gets_its_advice_not_a_new_method_or_a_look_at_the_changes(make_session):
    """PACE contingent and the reruns send the agent to its changes or to a new method; for
    reasoning sent as the command (doubao), a program that is not installed or a package the
    package manager does not know, no change does anything: their advice is said instead."""
    quiet = {"breaker": {"enabled": False}, "escalation": {"pause": False, "pause_after_emergency": False}}
    session = make_session(doctrine=quiet)
    session.run(*[sh(f"DISCUSSION\nLet's try step {n} again.", f"/bin/bash: line {n}: DISCUSSION: command not found\n")
                  for n in range(5)])
    [pace] = [text for _, anomaly, text in session.steering() if anomaly == "pace"]
    assert pace.startswith("[SUPERVISOR] PACE contingent: ")
    assert "; what you sent was text, not a command: the shell ran its words as programs" in pace
    assert "fundamentally different method" not in pace

    session = make_session(doctrine=quiet)
    session.run(*[sh(f"apt-get install -y jdk{n}", f"E: Unable to locate package jdk{n}\n") for n in range(5)])
    [pace] = [text for _, anomaly, text in session.steering() if anomaly == "pace"]
    assert "; the package manager does not know that name here" in pace

    # a rerun after edits: no edit brings a compiler; with only looks in between: looking again brings none either
    missing = "/bin/bash: line 9: javac: command not found\n"
    session = make_session(doctrine=quiet)
    session.run(sh("sed -i 's/a/b/' src/Main.java", ""))
    for n in range(4):
        session.run(sh("javac Repro.java && java Repro", missing), sh(f"sed -i 's/a{n}/b{n}/' src/Main.java", ""))
    [rerun] = [text for _, anomaly, text in session.steering() if anomaly == "rerun"]
    assert rerun.startswith("[SUPERVISOR] No effect: ")
    assert "No change to the code can change it; the program is not installed here" in rerun and "reach the code" not in rerun

    session = make_session(doctrine=quiet)
    session.run(sh("sed -i 's/a/b/' src/Main.java", ""))
    for n in range(4):
        session.run(sh("./mvnw -q compile", "Error: JAVA_HOME is not defined correctly.\n"), sh(f"ls src/d{n}", f"F{n}.java"))
    [rerun] = [text for _, anomaly, text in session.steering() if anomaly == "rerun"]
    assert rerun.startswith("[SUPERVISOR] Rerun: ") and "Running it again will not change it; the program is not installed" in rerun

    # a failure in the code keeps the texts that send the agent to its changes (see also the test above)
    session = make_session(doctrine=quiet)
    session.run(sh("sed -i 's/a/b/' src/app.py", ""))
    for n in range(4):
        session.run(sh("python app.py", traceback("TypeError: bad operand")), sh(f"sed -i 's/a{n}/b{n}/' src/app.py", ""))
    [rerun] = [text for _, anomaly, text in session.steering() if anomaly == "rerun"]
    assert "check that they reach the code this runs" in rerun


def test_the_wording_for_a_cause_outside_the_code_is_a_user_s_to_override_and_only_it_quotes_the_advice(tmp_path):
    from org.contracts import Finding
    from org.supervisor.steering import SteeringBook, check_template

    override = tmp_path / "steering.yaml"
    override.write_text('pace_contingent_outside_the_code: "[SUPERVISOR] PACE: $advice."\n', encoding="utf-8")
    pace = Finding(anomaly="pace", severity="critical", template="pace_contingent", turn=9, evidence={
        "level": "contingent", "description": "Failing", "failed": 5, "latest": "/bin/sh: 1: curl: not found",
        "latest_action": "`curl -sO https://example.org/x`", "error_type": "not_found", "stuck": 5})
    assert SteeringBook(override).render(pace) == "[SUPERVISOR] PACE: the program is not installed here, so check with `which`, install it, or do the job without it."
    assert check_template("pace_contingent", "[SUPERVISOR] PACE: $advice.").startswith("unknown placeholder(s) $advice")


def test_pace_steering_names_the_turns_without_progress_when_a_few_failures_end_a_long_stretch():
    from org.contracts import Finding
    from org.supervisor.steering import SteeringBook

    def said(failed: int, stuck: int) -> str:
        latest = "File .java not found" if failed else ""
        return SteeringBook().render(Finding(anomaly="pace", severity="emergency", template="pace_emergency", turn=30, evidence={
            "level": "emergency", "description": "Unrecoverable", "failed": failed, "latest": latest, "stuck": stuck}))
    assert "Stop now (19 turns without progress; the latest failure: File .java not found)," in said(2, 19)
    assert "Stop now (the last 8 calls failed; the latest: File .java not found)," in said(8, 10)
    assert "Stop now (19 turns without progress)," in said(0, 19)


def test_a_terminals_carriage_returns_and_openhands_interpreter_tag_hide_no_failure():
    """OpenHands returns the terminal's lines with carriage returns and appends the interpreter to
    the last one (its IPython cell, the working folder and the interpreter): the failing line is
    still named, without the tag."""
    tag = "[Python Interpreter: /opt/miniconda3/envs/testbed/bin/python]\nroot@openhands-workspace:/workspace # \n"
    missing = classify_output(f"cat notes.txt\r\ncat: notes.txt: No such file or directory\r\n{tag}[Command finished with exit code 1]")
    assert (missing.error_type, missing.error_line) == ("not_found", "cat: notes.txt: No such file or directory")
    raised = classify_output('python app.py\r\nTraceback (most recent call last):\r\n  File "/workspace/app.py", line 3, in <module>\r\n'
                             f"    main()\r\nTypeError: unsupported operand{tag}[Command finished with exit code 1]")
    assert raised.error_line == "TypeError: unsupported operand"
    assert not classify_output(f"ls\r\nAUTHORS  setup.py{tag}[Command finished with exit code 0]").failed
    jupyter = "[Jupyter current working directory: /workspace/django]\n[Jupyter Python interpreter: /openhands/poetry/bin/python]"
    ipython = classify_output(f"---------------------------------------------------------------------------\nKeyError: 'user'{jupyter}")
    assert ipython.error_line == "KeyError: 'user'"


def test_an_ipython_traceback_is_a_failure():
    """IPython's header names the exception before "Traceback", and Jupyter lines follow the error."""
    output = ("-" * 75 + "\nTypeError                                 Traceback (most recent call last)\nCell In[1], line 3\n"
              "      1 import app\n----> 3 app.run(1)\n\nTypeError: unsupported operand type(s) for +: 'int' and 'str'\n"
              "[Jupyter current working directory: /workspace]\n[Jupyter Python interpreter: /opt/miniconda3/bin/python]")
    verdict = classify_output(output)
    assert verdict.failed and verdict.error_line == "TypeError: unsupported operand type(s) for +: 'int' and 'str'"


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


def test_a_search_that_found_nothing_answered_whatever_the_terminal_says_of_its_status():
    """`grep` exits 1 when nothing matches: OpenHands', mini-swe-agent's and Claude Code's
    terminals print that status, Agent-Zero's prints nothing; either way no failure. Another
    command exiting 1 in silence did fail (`ls` in a folder deleted under it)."""
    from org.kernel.classify import found_nothing
    codeact = "OBSERVATION:\n\n[Python Interpreter: /opt/miniconda3/envs/testbed/bin/python]\n[Command finished with exit code 1]"
    for status in ("\n[The command completed with exit code 1.]", "<returncode>1</returncode>\n<output>\n</output>", "Exit code 1", codeact):
        assert found_nothing("cd /repo && grep -rn 'slugify' src", status) and found_nothing("which javac", status)
        assert not found_nothing("ls -la ./work", status) and not found_nothing("grep -rn x src", status + "\nboom")
    assert not found_nothing("grep -rn x missing", "grep: missing: No such file or directory\n[The command completed with exit code 2.]")


def test_a_failure_that_printed_nothing_is_not_named_by_its_status_line_or_the_observation_mark(make_session):
    """OpenHands' CodeAct opens each observation with "OBSERVATION:" and closes a command's with
    its exit status: neither is what went wrong."""
    from org.kernel.classify import telling_line
    silent = "OBSERVATION:\n\n[Python Interpreter: /usr/bin/python]\n[Command finished with exit code 1]"
    assert telling_line(silent) is None and telling_line("<returncode>2</returncode>\n<output>\n</output>") is None
    session = make_session(doctrine={"breaker": {"enabled": False}})
    session.run(*[sh(f"./check_{n}.sh", silent) for n in range(5)])
    [pace] = [text for _, anomaly, text in session.steering() if anomaly == "pace"]
    assert "OBSERVATION" not in pace and "exit code" not in pace


def test_greps_that_find_nothing_with_a_stated_status_are_no_failure_streak(make_session):
    session = make_session()
    nothing = "\n[The command completed with exit code 1.]"
    session.run(*[{"tool": "execute_bash", "args": {"command": f"grep -rn 'name_{n}' src"}, "output": nothing} for n in range(8)])
    # no failure: nothing for PACE; but the sixth look that found nothing is a hunt
    assert {r.pace for r in session.results} == {"primary"}
    [(turn, anomaly, text)] = session.steering()
    assert (turn, anomaly) == (7, "stall") and "(6 looks that found nothing)" in text  # the task began at the first


def test_a_poll_or_wait_answering_nothing_is_the_program_at_work_not_a_hunt(make_session):
    """Agent-Zero's poll of a running command, or a doctrine's exempt poller reading a log, answers
    nothing while the program works: those answers are never looks that found nothing."""
    polls = [{"tool": "code_execution_tool", "args": {"runtime": "output", "session": 0}, "output": "\nroot@a0:/a0/usr/workdir# "}] * 8
    reads = [{"tool": "read_build_log", "args": {"lines": 30 + n}, "output": ""} for n in range(8)]
    for calls, doctrine in ((polls, {}), (reads, {"loop": {"exempt_tools": ["read_build_log"]}})):
        session = make_session(doctrine=doctrine)
        session.run(sh("make build &", "[1] 4242"), *calls)
        assert "stall" not in [anomaly for _, anomaly in session.anomalies()], calls[0]
    session = make_session()  # not exempt: the same answers are looks that found nothing
    session.run(sh("make build &", "[1] 4242"), *reads)
    assert "stall" in [anomaly for _, anomaly in session.anomalies()]


def test_churn_said_again_about_a_cause_outside_the_code_keeps_its_advice():
    """"Undo your last changes" would send an agent whose reasoning runs as commands the wrong way."""
    from org.contracts import Finding
    from org.supervisor.steering import SteeringBook

    def churn(error: str, error_type: str) -> Finding:
        return Finding(anomaly="churn", template="churn", turn=31, evidence={"error": error, "error_type": error_type, "times": 8, "calls": 3})

    book = SteeringBook()
    prose = book.render(churn("/bin/bash: line 4: DISCUSSION: command not found", "not_found"), repeated=True)
    assert "what you sent was text, not a command" in prose and "undo your last changes" not in prose
    code = book.render(churn("TypeError: unsupported operand type(s)", "execution"), repeated=True)
    assert code.startswith("[SUPERVISOR] The same error keeps coming back") and "undo your last changes" in code


def test_reasoning_whose_apostrophes_leave_the_shell_without_a_closing_quote_is_text_sent_as_a_command(make_session):
    """doubao jackson-databind-4087: each turn a new paragraph of reasoning where the command goes;
    its "Let's" opens a quote bash never sees closed. The same error across different texts is
    churn, about the text, and said again it does not tell the agent to undo its one real fix."""
    said = "/bin/bash: line 2: unexpected EOF while looking for matching `''\n/bin/bash: line 4: syntax error: unexpected end of file"
    texts = [f"DISCUSSION\nThere seems to be an issue with the command, attempt {n}. Let's check the JDK." for n in range(8)]
    session = make_session()
    session.run(sh("sed -i 's/isEnum()/isEnumType()/' src/ClassUtil.java"), *[sh(text, said) for text in texts])
    steering = [text for _, anomaly, text in session.steering() if anomaly == "churn"]
    assert steering and all("what you sent was text, not a command" in t and "undo your last changes" not in t for t in steering)


def test_an_output_that_shows_nothing_is_known_in_every_scaffold_s_form():
    nothing = ["", "  \n", "<returncode>1</returncode>\n<output>\n</output>",
               "OBSERVATION:\n[Python Interpreter: /usr/bin/python]\n[Command finished with exit code 1]",
               'No matches found for "JacksonXmlProperty" in /repo', "No files found", "Found 0 matches",
               "\nroot@a0:/a0/usr/workdir# ", "(venv) user@host:~/src$", " \r\n" * 3000,
               "[SYSTEM: No output returned. Consider resetting the terminal or using another session.] ",
               "OBSERVATION:\nYour command ran successfully and did not produce any output."]  # SWE-agent's
    something = ['Found 2 matches for "x" in /repo:\n/repo/a.py (2 matches)', "src/a.py:3:class Name:",
                 "No matches found for a in b\nbut this line", "0 passed in 0.01s", "a.py\nroot@a0:/a0/usr/workdir# ",
                 "x = 1\r\n" * 20000]
    assert all(shows_nothing(text) for text in nothing)
    assert not any(shows_nothing(text) for text in something)


def mini_timeout(command: str) -> str:
    return (f"The last command <command>{command}</command> timed out and has been killed.\nThe output of the command was:\n"
            " <output>\nCollecting package metadata (repodata.json): ...working... \n</output>\n"
            "Please try another command and make sure to avoid those requiring interactive input.")


def test_mini_swe_agent_s_time_limit_is_a_timeout_named_with_its_command(make_session):
    conda, pip = (classify_output(mini_timeout(c)) for c in ("conda env create -f environment.yml", "pip install torch"))
    assert conda.failed and conda.error_type == pip.error_type == "timeout" and conda.identity != pip.identity
    assert conda.error_line.startswith("The last command <command>conda env create")
    session = make_session()
    session.run(*[sh("conda env create -f environment.yml", mini_timeout("conda env create -f environment.yml"))] * 3)
    [(turn, anomaly, text)] = session.steering()
    assert (turn, anomaly) == (3, "loop") and "run it with a time limit or in the background" in text


def test_a_time_limit_is_named_with_the_command_that_ran_out_of_it(make_session):
    """SWE-agent's `EXECUTION TIMED OUT` says nothing of what ran: installs of three different
    packages timing out after edits are three failures, not one that the edits do not reach."""
    assert classify_output("\nEXECUTION TIMED OUT").error_type == "timeout"
    session = make_session()
    session.run(*[call for n, package in enumerate(("openjdk-17-jdk", "maven", "gradle")) for call in (
        sh(f"sed -i 's/mirror{n}/mirror{n + 1}/' /etc/apt/sources.list"), sh(f"apt-get install -y {package}", "\nEXECUTION TIMED OUT"))])
    assert "churn" not in [anomaly for _, anomaly in session.anomalies()]


def test_a_run_that_ran_out_of_time_gets_the_timeout_s_advice_not_a_look_at_the_changes_or_a_new_design(make_session):
    """An install waiting at its prompt (doubao) or a download too big for the time limit
    (mini-swe-agent) is no result the changes failed to change, nor a design to drop: each text
    says it ran out of time and how to run it."""
    quiet = {"breaker": {"enabled": False}, "escalation": {"pause": False, "pause_after_emergency": False}}
    timed_out, advice = "\nEXECUTION TIMED OUT", "run it with a time limit or in the background"
    session = make_session(doctrine=quiet)
    session.run(sh("apt-get install default-jdk", timed_out))
    for n in range(3):
        session.run(sh(f"sed -i 's/mirror{n}/mirror{n + 1}/' /etc/apt/sources.list"), sh("apt-get install default-jdk", timed_out))
    [rerun] = [text for _, anomaly, text in session.steering() if anomaly == "rerun"]
    assert "again 3 times after making changes and it ran out of time each time (EXECUTION TIMED OUT)" in rerun
    assert "Your changes have not made it finish; check whether the process is hanging" in rerun and "reach the code" not in rerun

    session = make_session(doctrine=quiet)
    session.run(sh("apt-get install default-jdk", timed_out), *[call for n in range(3) for call in (
        sh(f"cat /etc/apt/notes{n}", f"note {n}"), sh("apt-get install default-jdk", timed_out))])
    [rerun] = [text for _, anomaly, text in session.steering() if anomaly == "rerun"]
    assert rerun.startswith("[SUPERVISOR] Rerun: ") and "Running it again will not make it finish; check whether" in rerun

    session = make_session(doctrine=quiet)
    session.run(*[sh(f"python download.py --part {n}", mini_timeout(f"python download.py --part {n}")) for n in range(5)])
    [pace] = [text for _, anomaly, text in session.steering() if anomaly == "pace"]
    assert pace.startswith("[SUPERVISOR] PACE contingent: ") and pace.endswith(f"; check whether the process is hanging or waiting for input, and {advice}.")
    assert "fundamentally different method" not in pace


def test_a_quoted_call_keeps_its_own_marks_and_its_backticks_and_ends_at_its_first_sentence():
    from org.contracts import Finding
    from org.supervisor.steering import SteeringBook, count_sentences

    def loop(action: str) -> str:
        return SteeringBook().render(Finding(anomaly="loop", template="loop_repeat", turn=5, evidence={
            "pattern": "repeat", "action": action, "times": 3, "outcome": "cd..: command not found", "error_type": "not_found"}))
    assert "you ran `cd..` 3 times" in loop("`cd..`")
    said = loop("`# Midpoints of neighboring intervals. Then the rest`")
    assert "you ran `# Midpoints of neighboring intervals.` 3 times" in said and count_sentences(said) <= 3


def test_apt_s_error_lines_are_failures_and_pytest_s_e_lines_are_not_read_as_them():
    held = ("Reading package lists...\nBuilding dependency tree...\nSome packages could not be installed.\n"
            "E: Unable to correct problems, you have held broken packages.\n")
    verdict = classify_output(held)
    assert verdict.failed and verdict.error_line == "E: Unable to correct problems, you have held broken packages."
    assert classify_output("W: Some index files failed to download. They have been ignored.\n").failed is False
    assert classify_output("E       assert 1 == 2\n").failed is False  # pytest's mark, no colon: not apt's


A0_BUSY = ("[SYSTEM: Terminal session 0 might be still running. Check previous outputs and decide whether to reset and continue "
           "or wait for more output is needed.] ")
A0_DIALOG = ("[SYSTEM: Potential dialog detected in output. Returning control to agent after {} seconds since last output update. "
             "Decide whether dialog actually occurred and needs to be addressed, or if it was just a false positive and wait for more output.] ")


def openhands_busy(command: str, above: str) -> str:
    return (f'[Below is the output of the previous command.]\n{above}\n[Your command "{command}" is NOT executed. The previous command '
            "is still running - You CANNOT send new commands until the previous command is completed. By setting `is_input` to "
            "`true`, you can interact with the current process: You may wait longer to see additional output of the previous "
            "command by sending empty command '']")


def test_a_runtime_agent_zero_does_not_have_ran_nothing():
    """Agent-Zero answers `runtime: bash` with a warning and runs nothing: a failure, whose repeats are a loop."""
    warning = ('~~~json\n{\n    "system_warning": "The runtime \'bash\' is not supported, available options are \'terminal\', '
               '\'python\', \'nodejs\' and \'output\'."\n}\n~~~')
    verdict = classify_output(warning)
    assert verdict.failed and "The runtime 'bash' is not supported" in verdict.error_line


def a0_unknown_tool(name: str) -> str:
    return (f"Tool {name} not found. Available tools: \n## Tools available:\n\n### response:\nfinal answer to user\n"
            "### code_execution_tool:\nexecute terminal commands\nTraceback (most recent call last): is shown when code fails\n")


def test_calls_of_tools_that_are_not_there_ran_nothing_and_are_told_so_not_a_cascade(make_session):
    """Agent-Zero answers a tool it does not have with its whole list of tools (whose words name
    nothing of the call). Three such calls in a row ran nothing: one loop steering, no cascade."""
    verdict = classify_output(a0_unknown_tool("bash"))
    assert (verdict.failed, verdict.error_type, verdict.error_line) == (True, "not_found", "Tool bash not found.")
    assert advice_kind(verdict.error_type, verdict.error_line) == "unknown_tool"
    session = make_session()
    session.run(*[{"tool": name, "args": {"command": "ls /tmp"}, "output": a0_unknown_tool(name)} for name in ("bash", "shell", "terminal")])
    [(turn, anomaly, text)] = session.steering()
    assert (turn, anomaly) == (3, "loop")
    assert text == ("[SUPERVISOR] Loop: your last 3 calls ran nothing (Tool terminal not found); there is no tool by that name "
                    "here, so call one of the tools the answer lists, by its exact name.")
    assert {r.pace for r in session.results} == {"primary"}  # no step of a failing approach


def test_a_command_the_terminal_did_not_run_for_an_earlier_one_still_running_is_known_in_each_form():
    """Agent-Zero and OpenHands refuse a command while an earlier one runs in that terminal. What
    the output shows above the note (the earlier program's traceback) is not this command's."""
    for text in (A0_BUSY, A0_DIALOG.format(1), openhands_busy("pytest -q", traceback("TypeError: bad operand"))):
        verdict = classify_output(text)
        assert (verdict.failed, verdict.error_type) == (True, "busy"), text
        assert "TypeError" not in verdict.error_line
    assert classify_output(A0_BUSY).identity == classify_output(openhands_busy("ls", "")).identity  # whatever was sent
    asked = classify_output("Do you want to continue? [Y/n] \n\n" + A0_DIALOG.format(5))  # the command itself asks
    assert asked.error_type != "busy"
    assert advice_kind("busy", A0_BUSY) == "busy"


def test_commands_sent_to_a_terminal_still_running_an_earlier_one_are_told_why_they_did_not_run(make_session):
    """Agent-Zero users' trap: an install left waiting, then command after command into the same
    terminal, none of them run. The third is told why, and what to do about the terminal."""
    session = make_session()
    session.run(sh("apt-get install default-jdk", "Do you want to continue? [Y/n] \n\n" + A0_DIALOG.format(5)),
                sh("java -version", A0_BUSY), sh("ls /usr/lib/jvm", A0_BUSY), sh("which javac", A0_BUSY))
    [(turn, anomaly, text)] = session.steering()
    assert (turn, anomaly) == (4, "loop")
    assert text.startswith("[SUPERVISOR] Loop: your last 3 calls ran nothing ([SYSTEM: Terminal session 0 might be still running); ")
    assert text.endswith("; that terminal is still running an earlier command, so nothing sent to it runs: wait for that "
                         "command's output, answer its question if it asks one, or use another session (resetting this one ends what runs in it).")
    session.run(sh("echo y | apt-get install default-jdk", A0_BUSY), sh("java -version", A0_BUSY))
    assert len(session.steering()) == 1  # one episode: said once

    # after an edit (so no error is the baseline), commands into the busy terminal: one steering, not a churn beside it
    session = make_session()
    session.run(sh("sed -i 's/8000/8080/' server.py", ""), sh("python server.py", "Serving on 8080\n\n" + A0_DIALOG.format(5)),
                sh("curl localhost:8080", A0_BUSY), sh("ps aux | grep server", A0_BUSY), sh("tail server.log", A0_BUSY))
    assert [(turn, anomaly) for turn, anomaly, _ in session.steering()] == [(5, "loop")]

    # polls of the earlier command that show nothing new come between: still one episode
    poll = {"tool": "code_execution_tool", "args": {"runtime": "output", "session": 0},
            "output": "[SYSTEM: Returning control to agent after 90 seconds with no output. Process might be still running.]"}
    session = make_session()
    session.run(sh("python generate.py", "Generating post 1\n\n" + A0_DIALOG.format(5)), sh("ls out/", A0_BUSY), poll,
                sh("tail out/log", A0_BUSY), poll, poll, sh("ps aux", A0_BUSY), sh("wc -l out/*", A0_BUSY), poll, sh("ls", A0_BUSY))
    assert [(turn, anomaly) for turn, anomaly, _ in session.steering()] == [(7, "loop")]

    # the same error, from a terminal still running: churn, when it comes, names no change to make
    from org.contracts import Finding
    from org.supervisor.steering import SteeringBook
    churn = SteeringBook().render(Finding(anomaly="churn", template="churn", turn=9, evidence={
        "error": A0_BUSY.strip(), "error_type": "busy", "times": 3, "calls": 3}))
    assert "No change to the code can change it; that terminal is still running" in churn and "Your changes" not in churn

    session = make_session(doctrine={"breaker": {"enabled": False}})
    session.run(sh("npm start", "> app@1.0.0 start\n> node server.js\nListening on 3000"),
                *[sh("curl -s localhost:3000/health", openhands_busy("curl -s localhost:3000/health", "Listening on 3000"))] * 3)
    [(turn, anomaly, text)] = session.steering()
    assert (turn, anomaly) == (4, "loop") and "Running it again will not change the result; that terminal is still running" in text


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
