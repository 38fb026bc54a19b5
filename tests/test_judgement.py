"""Judging real sessions: what is a loop, churn, a rerun with no effect, progress, and what is not.

Each test is one pattern seen in real agent sessions, written as the turns an agent in
Agent-Zero would take: nearly everything through ``code_execution_tool``.
"""

from __future__ import annotations

from conftest import fail

from org.kernel.outcomes import LEDGER_KEY

TOOL = "code_execution_tool"


def sh(command: str, output: str = "", **extra) -> dict:
    return {"tool": TOOL, "args": {"runtime": "terminal", "code": command}, "output": output, **extra}


def traceback(message: str, line: int = 3) -> str:
    return f'Traceback (most recent call last):\n  File "/repo/app.py", line {line}, in <module>\n    main()\n{message}\n'


def test_different_commands_sharing_a_banner_are_not_a_loop(make_session):
    banner = "Note: running in the development environment\n"
    session = make_session()
    session.run(sh("ls src", banner + "app.py"), sh("cat setup.cfg", banner + "[metadata]"), sh("pip list | head", banner + "flask 3.0"))
    assert session.anomalies() == []


def test_greps_that_find_nothing_are_not_failures_or_a_loop(make_session):
    session = make_session()
    session.run(sh("grep -rn 'slugify' src"), sh("grep -rn 'slug_of' src"), sh("grep -rn 'make_slug' lib"))
    assert session.anomalies() == []


def test_the_same_call_with_the_same_error_is_a_loop_named_by_its_command(make_session):
    session = make_session()
    session.run(*[sh("python app.py", traceback("ModuleNotFoundError: No module named 'flask'"))] * 3)
    [(turn, anomaly, text)] = session.steering()
    assert (turn, anomaly) == (3, "loop")
    assert "`python app.py`" in text and "No module named 'flask'" in text
    assert "install or correct the missing package" in text  # advice for its error type


def test_debugging_with_a_new_error_each_time_is_iteration(make_session):
    session = make_session()
    session.run(sh("python app.py", traceback("NameError: name 'x' is not defined")),
                sh("sed -i 's/x/y/' app.py"),
                sh("python app.py", traceback("TypeError: unsupported operand type(s) for +: 'int' and 'str'")),
                sh("sed -i 's/y + 1/int(y) + 1/' app.py"),
                sh("python app.py", traceback("ValueError: invalid literal for int() with base 10: 'a'")),
                sh("sed -i 's/int(y)/int(y or 0)/' app.py"),
                sh("python app.py", "ok"))
    assert session.anomalies() == []


def test_the_same_error_coming_back_across_different_commands_is_churn(make_session):
    corrupted = traceback("SyntaxError: unexpected indent", line=14)
    session = make_session()
    session.run(sh("python -m app", "serving"),
                sh("sed -i 's/a/b/' app/core.py && python -m app", corrupted),
                sh("sed -i '14s/^  //' app/core.py && python -m app", corrupted.replace("line 14", "line 15")))
    assert session.anomalies() == []
    session.run(sh("sed -i '14d' app/core.py && python -m app", corrupted.replace("line 14", "line 13")))
    [(turn, anomaly, text)] = session.steering()
    assert (turn, anomaly) == (4, "churn")
    assert "SyntaxError: unexpected indent" in text and "3 times" in text


def test_churn_counts_the_actions_of_the_times_it_counts(make_session):
    """Occurrences with only a look that worked between them are one: neither the time nor its
    action counts, so the text never says more actions than times ("3 times across 4 actions")."""
    error = traceback("ImportError: cannot import name 'slugify' from 'app.text'")
    session = make_session()
    session.run(sh("sed -i 's/slugify/slug/' app/text.py", ""),  # the agent's change: the error is its own
                sh("python -m app", error), sh("cat app/text.py", "def slug(s): ..."), sh("python -c 'import app'", error),
                sh("sed -i 's/slug(/slugify(/' app/text.py", ""), sh("python -m app.main", error), sh("ls app", "text.py"),
                sh("python -m app.cli", error), sh("sed -i 's/slugify(/slugify_(/' app/text.py", ""), sh("python -m app", error))
    [(turn, anomaly, text)] = session.steering()
    assert (turn, anomaly) == (10, "churn") and "3 times across 2 different actions" in text



def test_an_error_fixed_and_coming_back_later_in_a_new_script_is_no_churn(make_session):
    """The fix reached the cause: the call that failed with the error ran and worked. The error
    seen again in a script written since is another problem, not the same fix missing."""
    error = traceback("django.db.utils.IntegrityError: FOREIGN KEY constraint failed")
    session = make_session()
    session.run(sh("sed -i 's/pk = None/pk = 0/' django/db/models/deletion.py", ""),  # the agent's change
                sh("python test_delete_pk.py", error), sh("sed -i 's/a/b/' test_delete_pk.py", ""),
                sh("python test_delete_pk.py", error), sh("sed -i 's/b/c/' test_delete_pk.py", ""),
                sh("python test_delete_pk.py", "test 1 ok\ntest 2 ok\n"),  # fixed
                sh("cat > test_fix_verification.py << 'EOF'\nimport django\nEOF", ""),
                sh("python test_fix_verification.py", "test 3 ok\n" + error))
    assert "churn" not in [anomaly for _, anomaly in session.anomalies()]
    # never fixed in between: the same error after each change is churn
    session = make_session()
    session.run(sh("sed -i 's/pk = None/pk = 0/' django/db/models/deletion.py", ""),
                sh("python test_delete_pk.py", error), sh("sed -i 's/a/b/' test_delete_pk.py", ""),
                sh("python -X dev test_delete_pk.py", error), sh("sed -i 's/b/c/' test_delete_pk.py", ""),
                sh("python3 test_delete_pk.py", error))
    assert [anomaly for _, anomaly in session.anomalies()][-1:] == ["churn"]
    # an editor's call that worked says nothing of the program: the error is not fixed by it
    circular = traceback("ImportError: cannot import name 'wraps' from partially initialized module 'functools'")

    def create(path: str, output: str) -> dict:
        return {"tool": "str_replace_editor", "args": {"command": "create", "path": path, "file_text": "x = 1\n"}, "output": output}
    session = make_session()
    session.run(sh("sed -i 's/Any/JSONObject/' sphinx/ext/autodoc/typehints.py", ""), create("/repo/conf.py", circular),
                sh("python -m venv venv && pip install -e .", circular), create("/repo/conf.py", "File created successfully at: /repo/conf.py"),
                sh("sphinx-build -b html . _build", circular))
    assert [anomaly for _, anomaly in session.anomalies()][-1:] == ["churn"]

def test_rerunning_after_edits_with_the_same_result_is_a_no_effect_rerun(make_session):
    unchanged = traceback("TypeError: unsupported operand type(s) for +: 'int' and 'str'")
    session = make_session()
    session.run(sh("python debug.py", unchanged))
    for n in range(3):
        session.run(sh(f"sed -i 's/v{n}/v{n + 1}/' lib/core.py"), sh("python debug.py", unchanged))
    assert [(t, a) for t, a in session.anomalies()][-1:] == [(7, "rerun")]
    text = session.steering()[-1][2]
    assert text.startswith("[SUPERVISOR] No effect: you ran `python debug.py` again 3 times") and "TypeError" in text


def test_rereading_a_file_after_each_edit_is_not_a_rerun(make_session):
    session = make_session()
    for n in range(4):
        session.run(sh(f"sed -i 's/a{n}/a{n + 1}/' x.py"), sh("cat x.py", "same text"))
    assert [a for _, a in session.anomalies()] == []


def test_edits_and_reruns_that_change_nothing_stall_without_a_plan_layer(make_session):
    session = make_session(doctrine={"max_turns_without_progress": 6, "loop": {"rerun_threshold": 50, "churn_threshold": 50}})
    session.run(sh("python -m pytest -q", "1 failed, 3 passed in 0.2s\nFAILED tests/t.py::test_a - assert 1 == 2"))
    for n in range(4):
        session.run(sh(f"sed -i 's/{n}/{n + 1}/' a.py"),
                    sh("python -m pytest -q", f"FAILED tests/t.py::test_a - assert 1 == 2\n1 failed, 3 passed in 0.{n}s"))
    assert ("stall" in {a for _, a in session.anomalies()})


def test_looking_at_new_places_is_progress(make_session):
    session = make_session(doctrine={"max_turns_without_progress": 4})
    session.run(*[sh(f"cat src/module_{n}.py", f"contents {n}") for n in range(10)])
    assert session.anomalies() == []


def test_everything_is_scoped_to_the_current_task(make_session):
    session = make_session()
    session.run(sh("ls", "a b"), sh("ls", "a b"))
    session.run(sh("ls", "a b", user="now something else"))
    assert session.anomalies() == []


def test_a_pattern_is_steered_on_the_turn_it_completes(make_session):
    session = make_session()
    session.run(sh("ls"), *[fail(TOOL)] * 3)
    assert session.anomalies()[0] == (4, "loop")


def test_several_anomalies_due_at_once_all_reach_the_agent(make_session):
    session = make_session(doctrine={"max_turns_without_progress": 1})
    session.run(fail(TOOL), fail(TOOL), fail(TOOL, context_fill=0.86))
    # the stall due at 3 as well says nothing the loop does not: it is left out
    assert {a for t, a in session.anomalies() if t == 3} == {"loop", "context"}


def test_a_lasting_stall_is_heard_beside_a_full_context(make_session):
    session = make_session(doctrine={"max_turns_without_progress": 3})
    session.run(*[sh(f"sed -i 's/{n}/{n + 1}/' a.py", context_fill=0.86) for n in range(12)])
    anomalies = {a for _, a in session.anomalies()}
    assert {"context", "stall"} <= anomalies


def test_no_stall_where_outcomes_cannot_be_seen(make_session):
    """Agent-Zero v0.9.3 and v0.9.4 have no tool hooks: a turn count alone is no progress signal."""
    session = make_session(doctrine={"max_turns_without_progress": 3})
    for point in ("tool_execute_before", "tool_execute_after"):
        del session.standin.points[point]
    session.run(*[sh(f"cat src/module_{n}.py", f"contents {n}") for n in range(8)])
    assert session.anomalies() == []


def test_a_stall_names_the_calls_its_turns_went_on(make_session):
    """Two views of the same file taken in turns for many turns: each works, none shows anything new,
    no loop or oscillation fits, and the stall quotes the two calls and how often each ran."""
    session = make_session(doctrine={"max_turns_without_progress": 6})
    session.run(sh("cat Types.java", "class Types {}"), sh("cat src/Types.java", "class Types { int x; }"))
    session.run(*[sh("cat Types.java", "class Types {}"), sh("cat src/Types.java", "class Types { int x; }"),
                  sh("ls src", "Types.java")] * 4)
    [(turn, anomaly, text)] = session.steering()
    assert (turn, anomaly) == (12, "stall")  # the last new thing was the first `ls src`, at turn 5
    assert "Stall: 7 turns without progress (you ran `cat Types.java` 3 times and `cat src/Types.java` twice)." in text


def test_a_round_of_reads_longer_than_the_stall_is_named_as_calls_made_before(make_session):
    """SWE-agent-LM-32B went round 14 and 17 views and greps for 40 turns: no call twice in the
    stall's turns, so no call to name, but every one of them made before with the same output."""
    session = make_session(doctrine={"max_turns_without_progress": 6})
    reads = [sh(f"sed -n '{10 * n},{10 * n + 9}p' src/m{n}.py", f"def f{n}():\n    return {n}\n") for n in range(8)]
    session.run(*reads)  # each a new read: the task moves
    session.run(*reads[:7])  # the same reads again, the same output each
    [(turn, anomaly, text)] = session.steering()
    assert (turn, anomaly) == (15, "stall")
    assert text.startswith("[SUPERVISOR] Stall: 7 turns without progress (7 calls that repeat earlier ones, with the same results). Reassess")


def test_calls_named_with_their_counts_are_not_counted_again_as_made_before(make_session):
    session = make_session(doctrine={"max_turns_without_progress": 6})
    session.run(sh("ls src", "a.py b.py"), *[sh(f"cat src/{name}.py", f"x = '{name}'") for name in "ab"] * 5)
    [(turn, anomaly, text)] = session.steering()
    assert (turn, anomaly) == (10, "stall")
    assert "(you ran `cat src/a.py` 4 times and `cat src/b.py` 3 times)." in text
    others = make_session(doctrine={"max_turns_without_progress": 6})
    reads = [sh(f"sed -n '{n},{n + 9}p' src/m.py", f"line {n}") for n in range(3)]
    cat = sh("cat src/a.py", "x = 'a'")
    others.run(*reads, cat, reads[0], cat, reads[1], reads[2], cat, reads[0], reads[1])
    [(turn, anomaly, text)] = others.steering()
    assert (turn, anomaly) == (11, "stall")
    assert "(you ran `sed -n '0,9p' src/m.py` twice and `cat src/a.py` twice; 3 more calls that repeat earlier ones, with the same results)" in text, text


def test_different_long_commands_that_open_alike_are_not_counted_as_one_made_again(make_session):
    """A real Agent-Zero chat: three different scripts, each fixing the last one's error, all
    opening with the same 80 characters: "you ran `from youtube_transcript_api import …` 3 times"
    was false. Steering names a long command by its start; the count is of the very call."""
    session = make_session(doctrine={"max_turns_without_progress": 6})
    script = "python3 -c \"from youtube_transcript_api import YouTubeTranscriptApi as Api; import json, sys; print(Api().fetch('{}'))\""
    a, b = sh("cat a.py", "x = 1"), sh("cat b.py", "y = 2")
    session.run(sh("ls", "a.py b.py"), a, b, sh(script.format("v0"), "[]"))
    session.run(sh(script.format("v1"), "[]"), sh(script.format("v2"), "[]"), a, b, sh(script.format("v3"), "[]"), a, b)
    [(turn, anomaly, text)] = session.steering()
    assert (turn, anomaly) == (11, "stall")
    assert "(you ran `cat a.py` twice and `cat b.py` twice)" in text, text


def test_looks_that_find_nothing_are_no_progress_and_the_stall_counts_them(make_session):
    """A hunt where nothing is: each look is at a new place (SWE-agent's `find_file` with a new
    name, `find` in a new folder), but finds nothing, so the task does not move."""
    session = make_session(doctrine={"max_turns_without_progress": 6, "max_looks_finding_nothing": 50})
    session.run(sh("javac Repro.java", "/bin/bash: line 5: javac: command not found"))
    session.run(*[sh(f'find_file "jdk_setup_{n}.txt"', f'No matches found for "jdk_setup_{n}.txt" in /repo') for n in range(4)],
                *[sh(f"find /opt/{n} -name javac 2>/dev/null") for n in range(3)])
    [(turn, anomaly, text)] = session.steering()
    assert (turn, anomaly) == (8, "stall")
    assert text.startswith("[SUPERVISOR] Stall: 7 turns without progress (7 looks that found nothing). Reassess")


def test_views_of_one_guessed_path_after_another_that_is_not_there_are_a_hunt(make_session):
    """A look at something that is not there found nothing, as an empty one did (SWE-agent-LM-32B,
    pylint-4604: six views of guessed paths, "The path /testbed/astroid/utils.py does not exist")."""
    session = make_session()  # the shipped doctrine: more than 5 looks that found nothing
    session.run(sh("cat setup.py", "from setuptools import setup"))
    session.run(*[{"tool": "str_replace_editor", "args": {"command": "view", "path": f"/testbed/astroid/{name}"},
                   "output": f"The path /testbed/astroid/{name} does not exist. Please provide a valid path."}
                  for name in ("messages", "checkers", "utils.py", "nodes.py", "manager.py")])
    assert session.anomalies() == []
    session.run(sh("cat pylint/messages.py", "cat: pylint/messages.py: No such file or directory"))
    [(turn, anomaly, text)] = session.steering()
    assert (turn, anomaly) == (7, "stall") and "(6 looks that found nothing)" in text


def test_more_looks_that_found_nothing_than_the_doctrine_allows_are_a_stall_before_the_turn_limit(make_session):
    """Five misses in a search are a search; the sixth, with nothing found in between, is a hunt."""
    session = make_session()  # the shipped doctrine: 12 turns, 5 looks
    session.run(sh("javac Repro.java", "/bin/bash: line 5: javac: command not found"), sh("cat Repro.java", "class Repro {}"))
    session.run(*[sh(f"find /{top} -name javac 2>/dev/null") for top in ("usr", "opt", "etc", "srv", "home")])
    assert session.anomalies() == []
    session.run(sh("find /root -name javac 2>/dev/null"))
    [(turn, anomaly, text)] = session.steering()
    assert (turn, anomaly) == (8, "stall")
    assert text.startswith("[SUPERVISOR] Stall: 6 turns without progress (6 looks that found nothing). Reassess")


def test_a_new_look_that_shows_only_what_was_seen_before_is_no_progress(make_session):
    """Searching for a JDK in one new way after another, each finding the same two folders of the
    project: nothing new is learned."""
    listing = "/repo/src/main/java\n/repo/src/test/java"
    session = make_session(doctrine={"max_turns_without_progress": 4})
    session.run(sh("javac A.java", "bash: javac: command not found"), sh("find / -name 'java*'", listing))
    session.run(*[sh(f"find / -type {kind} -name 'java*'", listing) for kind in ("d", "l", "f")],
                *[sh(f"find /{top} / -name 'java*'", listing) for top in ("usr", "opt", "etc")])
    assert session.anomalies() == [(7, "stall")]


def test_new_commands_that_give_an_output_seen_before_are_no_progress(make_session):
    """An editor given its arguments the wrong way round answers each try with its usage line:
    every call is new, but nothing new comes back."""
    session = make_session(doctrine={"max_turns_without_progress": 4})
    session.run(sh("python repro.py", traceback("ValueError: bad")))
    session.run(*[sh(f"edit repro.py {n}:{n + 2}\nprint(1)\nend_of_edit", "Usage: edit <start_line>:<end_line>") for n in range(1, 7)])
    assert session.anomalies() == [(7, "stall")]  # the first usage line was news


def test_searches_that_find_something_between_ones_that_find_nothing_are_progress(make_session):
    session = make_session(doctrine={"max_turns_without_progress": 3})
    session.run(*[call for n in range(6) for call in (
        sh(f"grep -rn 'def name_{n}' src"), sh(f"grep -rn 'class Name{n}' src", f"src/m{n}.py:3:class Name{n}:"))])
    assert session.anomalies() == []


def test_a_stall_whose_calls_were_all_different_names_none(make_session):
    session = make_session(doctrine={"max_turns_without_progress": 4, "loop": {"rerun_threshold": 50}})
    session.run(sh("python -m pytest -q", "FAILED tests/t.py::test_a - assert 1 == 2"))
    session.run(*[sh(f"sed -i 's/{n}/{n + 1}/' a.py") for n in range(6)])
    [(_, anomaly, text)] = session.steering()
    # due at turn 6, an edit that went in: it waits a turn for what the fix shows; and it says that
    # the edits since the last run have not been run, rather than "change approach"
    assert anomaly == "stall" and "you ran" not in text
    assert text.startswith("[SUPERVISOR] Stall: 6 turns without progress, and your last 6 edits have not been run. Run what they are for")

    # a revert puts files back: no change to run (DeepSeek, django-13121: rewrites and `git checkout`s taken in turns)
    session = make_session(doctrine={"max_turns_without_progress": 4, "loop": {"rerun_threshold": 50}})
    session.run(sh("python -m pytest -q", "FAILED tests/t.py::test_a - assert 1 == 2"))
    session.run(*[call for n in range(3) for call in (sh(f"sed -i 's/{n}/{n + 1}/' a.py"), sh("git checkout -- a.py"))])
    [(_, anomaly, text)] = session.steering()
    assert anomaly == "stall" and "your last 3 edits have not been run" in text, text


def test_scripts_written_and_run_in_the_same_call_are_experiments_not_edits_left_unrun(make_session):
    """Each call writes a new script from a heredoc and runs it, and shows something new: the
    agent is finding things out (mini-swe-agent with DeepSeek V4 Flash, astropy-14182, was told
    "your last 10 edits have not been run")."""
    session = make_session(doctrine={"max_turns_without_progress": 4})
    session.run(*[sh(f"cat > /tmp/probe{n}.py << 'EOF'\nprint(rows({n}))\nEOF\npython /tmp/probe{n}.py", f"rows: {n * 7}") for n in range(8)])
    assert session.anomalies() == []
    # the same script written and run again, with the same output, is a rerun that shows nothing new
    session.run(*[sh("cat > /tmp/probe.py << 'EOF'\nprint(rows(1))\nEOF\npython /tmp/probe.py", "rows: 7")] * 6)
    [(_, anomaly, text)] = session.steering()
    assert anomaly == "loop" and "`cat > /tmp/probe.py" in text


def test_a_stall_after_edits_that_were_run_says_to_change_approach(make_session):
    """Edits each followed by a run of the failing test are being tried: the approach is what to change."""
    session = make_session(doctrine={"max_turns_without_progress": 4, "loop": {"rerun_threshold": 50, "churn_threshold": 50}})
    session.run(*[call for n in range(4) for call in (
        sh(f"sed -i 's/{n}/{n + 1}/' a.py"), sh("python -m pytest -q", "FAILED tests/t.py::test_a - assert 1 == 2"))])
    [(_, anomaly, text)] = [s for s in session.steering() if s[1] == "stall"]
    assert "not been run" not in text and "Reassess and change approach" in text


def test_a_long_call_a_stall_names_is_shortened_inside_its_quotes():
    from org.contracts import Finding
    from org.supervisor.steering import template_values
    finding = Finding(anomaly="stall", template="stall", turn=20,
                      evidence={"turns": 13, "repeated": (("`open " + "src/" * 30 + "Types.java`", 3), ("`ls`", 2))})
    text = template_values(finding)["repeated"]
    assert text.startswith(" (you ran `open src/src/") and text.endswith("…` 3 times and `ls` twice)") and text.count("`") == 4


def test_calls_a_stall_names_that_read_the_same_once_shortened_are_named_once():
    from org.contracts import Finding
    from org.supervisor.steering import template_values
    grep = 'grep -n -A 10 "test_unicode_address" /testbed/tests/mail/test_message_headers.py'
    finding = Finding(anomaly="stall", template="stall", turn=31,
                      evidence={"turns": 13, "repeated": ((f"`{grep} | head -20`", 4), (f"`{grep} | head -40`", 4))})
    assert template_values(finding)["repeated"] == f" (you ran `{grep[:69]}…` 8 times)"


def test_agent_zero_s_text_editor_reading_a_file_between_patches_is_a_look(make_session):
    """Agent-Zero v1.x's `text_editor:read` and `:patch` reach the hooks as one tool, `text_editor`:
    a read is a look at the file (its numbered lines between ">>>" and "<<<" are the file's words),
    so reading the same file after each patch of another is neither a rerun nor a failure."""
    shown = "/a0/usr/workdir/net.py 3 lines\n>>>\n1 import socket\n2 # retried when: Connection refused\n3 TIMEOUT = 3\n<<<"
    read = {"tool": "text_editor", "args": {"path": "/a0/usr/workdir/net.py", "line_from": 1, "line_to": 3}, "output": shown}

    def patch(n: int) -> dict:
        return {"tool": "text_editor", "args": {"path": "/a0/usr/workdir/app.py", "edits": [{"from": n, "to": n, "content": f"x = {n}\n"}]},
                "output": f"/a0/usr/workdir/app.py patched 1 edits applied 20 lines now\n>>>\n{n} x = {n}\n<<<"}

    session = make_session()
    session.run(read, patch(1), read, patch(2), read, patch(3), read, patch(4), read)
    assert session.anomalies() == []
    assert all(o.ok for o in session.agent.data[LEDGER_KEY].outcomes)


def test_researching_an_error_is_no_failure_and_leaves_the_error_its_identity(make_session):
    """A web search titled with the error, a page and a memory quoting it are what the agent
    found, not failures of three tools in a row (a cascade); and the error's line, printed by
    them, is still the run's failure when the run prints it again."""
    error = "ModuleNotFoundError: No module named 'cv2'"
    found = f"{error} - Stack Overflow\nhttps://stackoverflow.com/questions/51853018\n{traceback(error)}pip install opencv-python fixes it."
    session = make_session()
    session.run(sh("python app.py", traceback(error)),
                {"tool": "search_engine", "args": {"query": error}, "output": found},
                {"tool": "document_query", "args": {"document": "https://stackoverflow.com/questions/51853018", "queries": ["fix?"]},
                 "output": f"Question: {error}\n{traceback(error)}Answer: install opencv-python-headless."},
                {"tool": "memory_load", "args": {"query": "cv2"}, "output": f"Last time `{error}` was fixed with the headless build."},
                sh("python app.py", traceback(error)))
    assert session.anomalies() == []
    outcomes = session.agent.data[LEDGER_KEY].outcomes
    assert [o.ok for o in outcomes] == [False, True, True, True, False]
    assert outcomes[-1].error_signature == outcomes[0].error_signature is not None


def test_a_tool_named_for_fetching_or_searching_brings_back_content_and_fails_in_a_line_of_its_own(make_session):
    """MCP servers' tools (Agent-Zero calls them ``server.tool``) are known by their names: a page
    fetched or a search run for the error is what was found; Agent-Zero's own line for a tool
    that raised ("ERROR: …") is the call's failure."""
    error = "ModuleNotFoundError: No module named 'cv2'"
    page = f"# {error}\n\nYou will see:\n\n{traceback(error)}\nInstall opencv-python-headless."
    session = make_session()
    session.run(sh("python app.py", traceback(error)),
                {"tool": "brave-search.brave_web_search", "args": {"query": error}, "output": f"Title: {error}\n{traceback(error)}"},
                {"tool": "fetch.fetch", "args": {"url": "https://example.org/cv2"}, "output": page},
                {"tool": "context7.get-library-docs", "args": {"context7CompatibleLibraryID": "/opencv/opencv"}, "output": page},
                sh("python app.py", traceback(error)))
    assert session.anomalies() == []
    outcomes = session.agent.data[LEDGER_KEY].outcomes
    assert [o.ok for o in outcomes] == [False, True, True, True, False]
    assert outcomes[-1].error_signature == outcomes[0].error_signature is not None
    session.run({"tool": "fetch.fetch", "args": {"url": "https://example.org/x"}, "output": "ERROR: Failed to fetch https://example.org/x - status 404"})
    assert session.agent.data[LEDGER_KEY].outcomes[-1].ok is False
    from org.kernel.classify import reports_content  # a name that also says it changes something is no reporting tool
    assert not reports_content("search_and_replace", {"path": "a.py", "search": "f(", "replace": "g("})
    assert not reports_content("git_fetch", {"remote": "origin"}) and not reports_content("docs_write", {"path": "a", "text": "b"})
