"""Evidence a person would accept: a failure is named by this run's own failing line.

Each test is a pattern that made the supervisor speak falsely on some scaffold, written as
the turns an agent takes (nearly everything through ``code_execution_tool``) and the
steering that must, or must not, come out.
"""

from __future__ import annotations

from test_judgement import TOOL, sh, traceback

from org.kernel.classify import advice_kind, classify_output, no_match_notice, shows_nothing

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


def test_a_shell_s_line_counter_makes_no_output_new(make_session):
    session = make_session(doctrine={"breaker": {"enabled": False}})
    session.run(sh("sed -i 's/a/b/' Test.java"),
                *[sh(f"javac -cp .:lib/{n}.jar Test.java", f"/bin/bash: line {47857 + 15 * n}: javac: command not found") for n in range(3)],
                *[sh(f"javac -d out{n} Test.java", f"/bin/bash: line {48000 + 15 * n}: javac: command not found") for n in range(3)])
    assert [a for _, a in session.anomalies()].count("churn") == 1  # the task did not move: said once


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



def test_an_error_back_after_the_task_moved_on_elsewhere_starts_afresh(make_session):
    """A build error waits while the agent writes the task's fix (new results on every call):
    seen again at the first run after it, it has not come back after fixes aimed at it (a
    scikit-learn session that went on to succeed was told to go back to installing)."""
    unbuilt = traceback("ImportError: No module named 'sklearn.__check_build._check_build'")
    session = make_session()
    session.run(sh("sed -i 's/a/b/' sklearn/ensemble/iforest.py", ""), sh("python -c 'import sklearn'", unbuilt),
                sh("pip install numpy scipy", "Successfully installed numpy-1.26"), sh("python -m sklearn", unbuilt),
                *[sh(f"sed -n '{10 * n},{10 * n + 9}p' sklearn/ensemble/iforest.py", f"    line {n} of the forest") for n in range(5)],
                sh("sed -i 's/warm_start=False/warm_start=warm_start/' sklearn/ensemble/iforest.py", ""),
                sh("python3 -c 'from sklearn.ensemble import IsolationForest'", unbuilt))
    assert "churn" not in [anomaly for _, anomaly in session.anomalies()]

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

    # and a run whose scratch files are removed first, or whose output is kept by `tee` (RepoLaunch vitess-19666, beads-3083:
    # "you applied the same edit … view the file as it is now", of `go test ./...`)
    for command in ("rm -rf build && make", "mkdir -p out && python gen.py", "python app.py > out.txt",
                    "rm -f /tmp/endtoend.port /tmp/go-test.log && mkdir -p /tmp/vtdataroot && go test ./... 2>&1 | tee /tmp/go-test.log",
                    "bash -lc 'set -o pipefail; go test -v ./... 2>&1 | tee /tmp/go-test.log'", "rm -f build.log && make"):
        assert action_kind("Bash", {"command": command}) == "run", command
    for command in ("rm -rf build", "sed -i 's/a/b/' a.py && python a.py", "cp fixed.py a.py && python a.py", "echo x > config.py",
                    "rm tests/test_old.py && pytest", "touch src/__init__.py && pytest", "sh -c 'printf x > src/a.py'",
                    "rm -f src/cache.py && pytest", "echo 'x = 1' | tee src/config.py && pytest"):
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


def test_the_same_command_described_anew_is_the_same_action(make_session):
    """Claude Code's Bash takes a `description` of the command for people: the command is the action."""
    from org.kernel.outcomes import canonical_signature
    session = make_session(doctrine={"breaker": {"enabled": False}})
    session.run(*[{"tool": "Bash", "args": {"command": "python app.py", "description": f"Run the app, try {n}"},
                   "output": "Exit code 1\n" + traceback("KeyError: 'user'")} for n in range(3)])
    assert [a for _, a in session.anomalies()] == ["loop"]
    issue = {"title": "Crash on start"}  # no command: every argument is what the call does
    assert canonical_signature("create_issue", {**issue, "description": "a"}) != canonical_signature("create_issue", {**issue, "description": "b"})


def test_climbing_up_with_cd_is_no_loop(make_session):
    session = make_session()
    session.run(sh("cd src/main/java", ""), *[sh("cd ..", "")] * 4)
    assert session.anomalies() == []


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
    # a terminal that echoes the command first (RepoLaunch's, a letter doubled now and then): the
    # tests passed, and the grep for their failures found none
    command = 'su - tester -c "cd /testbed && go test ./worker > /tmp/test.log 2>&1; grep -n \\"FAIL\\" /tmp/test.log"'
    echoed = command.replace("test.log 2", "test.loog 2") + "\n\nroot@7510551bca1c:/testbed $\n\nexit code: 1"
    assert found_nothing(command, echoed) and not found_nothing(command, echoed.replace("\n\nroot", "\n12: --- FAIL: TestRun\n\nroot"))


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
    # a code search's answers (AutoCodeRover's) are no-match notices; the same words in other lines are not
    searches = ["Could not find class Query in the codebase.", "Could not find method save in class Product`.",
                "Could not find code class Product(models.Model): in file tests/models.py.",
                "There is no method with name f in file a.py.", "The method f does not appear in the codebase."]
    assert all(no_match_notice(text) and shows_nothing(text) for text in searches)
    # a terminal that echoes the command it runs: the echo alone is nothing, with what it found is something
    grep = "grep -rn 'def resolve' src/ \\\n  --include=*.py"
    echoed = "grep -rn 'def resolve' src/ \\\n  --include=*.py\n[The command completed with exit code 1.]"
    assert shows_nothing(echoed, grep) and not shows_nothing(echoed) and shows_nothing("grep -rnn 'def resolve' src/ \\\nroot@c0:/# ", grep)
    assert not shows_nothing(echoed.replace("\n[", "\nsrc/a.py:3:def resolve():\n["), grep)
    assert not shows_nothing("grep -rn 'def resolve' src/", "ls")  # the output of another command
    assert not any(no_match_notice(text) for text in ["ERROR: Could not find a version that satisfies the requirement foo",
                                                      "Could not find class Query in the codebase.\nbut this line", "",
                                                      "No output returned", "Your command ran successfully and did not produce any output."])


def test_apt_s_error_lines_are_failures_and_pytest_s_e_lines_are_not_read_as_them():
    held = ("Reading package lists...\nBuilding dependency tree...\nSome packages could not be installed.\n"
            "E: Unable to correct problems, you have held broken packages.\n")
    verdict = classify_output(held)
    assert verdict.failed and verdict.error_line == "E: Unable to correct problems, you have held broken packages."
    assert classify_output("W: Some index files failed to download. They have been ignored.\n").failed is False
    assert classify_output("E       assert 1 == 2\n").failed is False  # pytest's mark, no colon: not apt's


def pip_failed(cause: str = "") -> str:
    """pip's words for a build it ran that failed, with the subprocess's output it boxes above them
    (``cause``: its last lines; none when `| tail` cut them off)."""
    boxed = "".join(f"      {line}\n" for line in cause.splitlines())
    return (f"{boxed}      [end of output]\n  \n  note: This error originates from a subprocess, and is likely not a problem with pip.\n"
            "error: metadata-generation-failed\n\n× Encountered error while generating package metadata.\n╰─> See above for output.\n\n"
            "note: This is an issue with the package mentioned above, not pip.\nhint: See above for details.\n")


def test_pip_s_closing_words_are_no_failure_s_identity_the_cause_it_boxes_above_them_is(make_session):
    """An astropy session installed the build's missing dependencies one by one, each time seeing
    pip's same closing line over another cause (or none, cut off by `| tail`): it was told that
    the same error kept coming back and to install what was missing, as it was doing."""
    frames = '  File "/opt/conda/lib/python3.11/site-packages/setuptools/build_meta.py", line 341, in run_setup\n    exec(code, locals())\n'
    named = classify_output(pip_failed(frames + "ModuleNotFoundError: No module named 'extension_helpers'"))
    assert (named.error_type, named.error_line) == ("dependency", "ModuleNotFoundError: No module named 'extension_helpers'")
    cut = classify_output(pip_failed())
    assert cut.failed and cut.identity is None and cut.error_line == "error: metadata-generation-failed"
    compiler = "astropy/_np_utils.c:196:12: fatal error: longintrepr.h: No such file or directory"
    assert classify_output(pip_failed(compiler)).error_line == compiler  # a compiler's line names it already
    session = make_session()
    session.run(sh("sed -i 's/a/b/' astropy/io/fits/card.py", ""))
    for n, package in enumerate(("cython", "numpy", "setuptools_scm")):
        session.run(sh(f"pip install -e . --no-build-isolation 2>&1 | tail -{n + 8}", pip_failed()),
                    sh(f"pip install {package}", f"Successfully installed {package}-1.0"))
    assert "churn" not in [anomaly for _, anomaly in session.anomalies()]


def test_the_repository_s_diff_kept_in_a_file_is_a_look_not_an_edit(make_session):
    """The submission step of many scaffolds, `git diff > patch.txt && cat patch.txt`, run again
    was called the same edit applied again and again."""
    from org.kernel.classify import action_kind

    looks = ["git diff django/utils/autoreload.py > patch.txt && cat patch.txt", "cd /testbed && git diff > fix.patch",
             "git status > status.txt; ls"]
    edits = ["git diff > a.patch && git apply a.patch", "cat a.py > b.py", "echo x > a.py", "git diff > p.txt && sed -i s/a/b/ x.py"]
    assert [action_kind(TOOL, {"runtime": "terminal", "code": c}) for c in looks] == ["inspect"] * len(looks)
    assert [action_kind(TOOL, {"runtime": "terminal", "code": c}) for c in edits] == ["edit"] * len(edits)
    session = make_session()
    diff = "diff --git a/django/utils/autoreload.py b/django/utils/autoreload.py\n+    return paths\n"
    session.run(*[sh(looks[0], diff) for _ in range(4)])
    assert [text for _, _, text in session.steering()] and all("edit" not in text for _, _, text in session.steering())


def test_a_command_that_takes_no_time_and_ran_out_of_time_never_ran(make_session):
    """A test runner left in watch mode holds the terminal: `pwd` and `echo hi` sent after it
    time out too. They never ran (no step of a failing approach for PACE to count, "stop, this
    is unrecoverable" was said while the prompt came back); calls in a row that ran nothing are
    said as such, with the busy terminal's advice."""
    from org.kernel.classify import instant

    assert instant("pwd") and instant("cd /testbed && ls node_modules") and instant("echo hi")
    assert not instant("npm test") and not instant("echo 1 | python slow.py") and not instant("")
    timed_out = "**Exited due to timeout**\n\nroot@6a688473b2b4:/testbed $\n\nexit code: 124"
    session = make_session()
    session.run(sh("sed -i 's/a/b/' app.ts", ""), sh("npm run test", "Watch Usage\n › Press q to quit watch mode.\n" + timed_out),
                sh("pwd", timed_out), sh("echo hi", timed_out), sh("ls", timed_out))
    ledger = session.agent.data["_org_tool_ledger"]
    assert [o.error_type for o in ledger.outcomes][1:] == ["timeout", "busy", "busy", "busy"]
    [(turn, anomaly, text)] = session.steering()
    assert (turn, anomaly) == (5, "loop") and "your last 3 calls ran nothing" in text and "still running an earlier command" in text


def test_an_error_back_with_no_change_tried_between_is_not_said_to_be_missed_by_changes(make_session):
    """GPT-5-nano's patches never ran (replies whose command the scaffold could not read), and
    three checks of the unchanged file showed its `SyntaxError`: "your changes are not reaching
    its cause" blamed changes that were never made."""
    broken = traceback("SyntaxError: invalid syntax", line=7)
    session = make_session()
    session.run(sh("sed -i 's/a/b/' django/db/backends/ddl_references.py", ""),
                sh("python -c 'import django.db.backends.ddl_references'", broken), {"response": "Patch: ..."},
                sh("python -m py_compile django/db/backends/ddl_references.py", broken), {"response": "Patch again: ..."},
                sh("python -c 'from django.db.backends import ddl_references'", broken))
    [(_, anomaly, text)] = session.steering()
    assert anomaly == "churn" and "with no change made between them" in text and "not reaching" not in text
    changed = make_session()
    changed.run(*[step for n in range(3) for step in (sh(f"sed -i 's/a{n}/b{n}/' app.py", ""), sh(f"python app.py --try {n}", broken))])
    assert "Your changes are not reaching its cause" in changed.steering()[-1][2]
