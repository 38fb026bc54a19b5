"""Advice that fits the failure's cause: what steering tells the agent to do.

An edit the editor refused, a program not installed, text or source code sent as a command, a
package the package manager does not know, a module imported while it is still being imported,
Django refusing a script in its setup, a run that ran out of time, a terminal still busy, a tool
that is not there, a call the tool refused for its arguments, an edit whose new text is its old:
each is told what fits it, not "fix the quoting" or "check your changes".
Written as the turns an agent takes and the steering that must, or must not, come out.
"""

from __future__ import annotations

import pytest

from test_judgement import sh, traceback

from org.kernel.classify import advice_kind, classify_output
from org.kernel.outcomes import ledger_of


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


def test_a_name_the_standard_library_no_longer_has_is_told_there_is_nothing_to_install(make_session):
    """Old code on a new Python (DeepSeek, pylint-4604: an old `wrapt` importing
    `inspect.formatargspec`, gone in 3.11; sympy-14248: `collections.MutableSet`, gone in 3.10;
    the `distutils` and `imp` modules, gone in 3.12): nothing is missing to install. A file of the
    agent's own named like the module, or an installed package, lacking a name is another cause."""
    removed = ("ImportError: cannot import name 'formatargspec' from 'inspect' (/opt/miniconda3/lib/python3.11/inspect.py)",
               "AttributeError: module 'collections' has no attribute 'MutableSet'",
               "ModuleNotFoundError: No module named 'distutils'", "ModuleNotFoundError: No module named 'imp'",
               "ImportError: cannot import name 'getargspec' from 'inspect' (C:\\Python312\\Lib\\inspect.py)")
    for line in removed:
        verdict = classify_output(traceback(line))
        assert advice_kind(verdict.error_type, verdict.error_line) == "stdlib_removed", line
    for line in ("ImportError: cannot import name 'helper' from 'inspect' (/testbed/inspect.py)",
                 "ImportError: cannot import name 'x' from 'six' (/usr/lib/python3/dist-packages/six.py)",
                 "ImportError: cannot import name 'Thing' from 'app.models' (/testbed/app/models.py)",
                 "AttributeError: module 'numpy' has no attribute 'float'", "ModuleNotFoundError: No module named 'imported_things'"):
        verdict = classify_output(traceback(line))
        assert advice_kind(verdict.error_type, verdict.error_line) != "stdlib_removed", line
    session = make_session()
    session.run(sh("sed -i 's/a/b/' astroid/x.py"))
    for n, run in enumerate(("python -m pytest -q tests/test_self.py", "python -c 'import pylint.lint'", "pylint --version")):
        session.run(sh(f"sed -i 's/v{n}/v{n + 1}/' pylint/checkers/base.py"), sh(run, traceback(removed[0])))
    [text] = [text for _, anomaly, text in session.steering() if anomaly == "churn"]
    assert text.endswith("; this Python's standard library no longer has that name (removed or renamed in a newer version than the code), "
                         "so there is nothing to install: use what replaced it, upgrade the package that still uses it, or run the Python "
                         "version the code was written for."), text


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


def test_pace_steering_says_what_brought_the_level(make_session):
    """Not a bare "Unrecoverable: stop": the failures in a row and the latest one's line."""
    session = make_session(doctrine={"breaker": {"enabled": False}, "escalation": {"pause": False, "pause_after_emergency": False}})
    session.run(*[sh(f"python check_{n}.py", traceback("TypeError: bad operand")) for n in range(8)])
    pace = [text for _, anomaly, text in session.steering() if anomaly == "pace"]
    assert pace[0].startswith("[SUPERVISOR] PACE contingent: ")
    assert "has failed (the last 5 calls failed; the latest: TypeError: bad operand); switch" in pace[0]

    session = make_session(doctrine={"breaker": {"enabled": False}, "escalation": {"pause": False, "pause_after_emergency": False}})
    session.run(*[sh("python app.py", traceback("TypeError: bad operand"))] * 13)
    [emergency] = [text for _, anomaly, text in session.steering() if anomaly == "pace"]
    assert "Stop now (the last 13 calls failed; the latest: TypeError: bad operand), preserve" in emergency

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


def test_an_assignment_the_shell_ran_as_a_command_is_no_program_to_install():
    """A variable name with dots (`Logging__X.Y=Error dotnet test`): bash runs the assignment as a
    program, and "install it" is wrong (RepoLaunch, OrchardCore)."""
    from org.kernel.classify import advice_kind

    line = "bash: Logging__LogLevel__Microsoft.AspNetCore.DataProtection=Error: command not found"
    assert advice_kind("not_found", line, "Logging__LogLevel__Microsoft.AspNetCore.DataProtection=Error dotnet test") == "not_found"
    assert advice_kind("not_found", "bash: javac: command not found", "javac A.java") == "missing_program"


def test_a_program_that_ran_before_and_a_shell_does_not_find_is_not_to_be_installed(make_session):
    """`go` built the project, then `bash -lc` (a login shell, another PATH) does not find it
    (RepoLaunch, terragrunt: "the program is not installed here … install it")."""
    quiet = {"breaker": {"enabled": False}, "escalation": {"pause": False}}
    lost = "bash: line 1: go: command not found\n\nroot@5a6c35c1:/testbed $\n\nexit code: 127"
    session = make_session(doctrine=quiet)
    session.run(sh("export PATH=/usr/local/go/bin:$PATH && go build ./...", "\nroot@5a6c35c1:/testbed $\n\nexit code: 0"),
                *[sh(f"bash -lc 'go test ./pkg/{n}/...'", lost) for n in range(5)])
    [pace] = [text for _, anomaly, text in session.steering() if anomaly == "pace"]
    assert "that program ran here before, so it is installed" in pace and "install it" not in pace

    # never seen to run: not installed
    session = make_session(doctrine=quiet)
    session.run(*[sh(f"bash -lc 'go test ./pkg/{n}/...'", lost) for n in range(5)])
    [pace] = [text for _, anomaly, text in session.steering() if anomaly == "pace"]
    assert "the program is not installed here" in pace


def test_pace_contingent_waits_while_each_failure_shows_something_new(make_session):
    """A scraper written anew in each call fails each time with another bug: each fix went in and
    uncovered the next one (real Agent-Zero chats: two such steerings were false). A build that
    runs out of time at each call and gets further each time (RepoLaunch: ClickHouse, built
    again and again). PACE rises to contingent from the failures in a row, but "change the design
    or the library" is wrong while each failure shows something new; it is said once they do not."""
    quiet = {"breaker": {"enabled": False}, "escalation": {"pause": False}}
    session = make_session(doctrine=quiet)
    results = session.run(*[program(f"import requests\n# version {n}\nscrape()", traceback(bug)) for n, bug in enumerate(BUGS)])
    assert results[-1].pace == "contingent" and [a for _, a, _ in session.steering()] == []

    def build(step: int) -> str:
        return (f"cmake --build build\n[{step}/1728] Building CXX object src/f{step}.cpp.o^C\nninja: build stopped: interrupted by user.\n\n"
                "**Exited due to timeout**\n\nroot@5a6c35c1:/testbed $\n\nexit code: 124")
    session = make_session(doctrine=quiet)
    results = session.run(*[sh("cmake --build build", build(300 * n)) for n in range(1, 6)])
    assert results[-1].pace == "contingent" and [a for _, a, _ in session.steering()] == []

    # the same bug each time, whatever the program became: nothing new was learned
    session = make_session(doctrine=quiet)
    session.run(*[program(f"import requests\n# version {n}\nscrape()", traceback(BUGS[2])) for n in range(5)])
    assert [a for _, a, _ in session.steering()] == ["pace"]

    # the build that stops at the same place each time hangs there: a loop, its advice the timeout's
    session = make_session(doctrine=quiet)
    session.run(*[sh("cmake --build build", build(300)) for _ in range(3)])
    [(_, anomaly, text)] = session.steering()
    assert anomaly == "loop" and "(**Exited due to timeout**)" in text and "run it with a time limit or in the background" in text


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
    session.run(*[sh(f"apt-get install -y{' -q' * n} jdk", "E: Unable to locate package jdk\n") for n in range(5)])
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
    session.run(*[sh(f"python download.py --part {n}", timed_out) for n in range(5)])
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
    # a command's own marks end no sentence (RepoLaunch: the quote stopped at `cmake -S .`, as if that were all)
    for command in ("cmake -S . -B build -G Ninja", "go test $(go list ./... | grep -v /e2e)"):
        assert f"you ran `{command}` 3 times" in loop(f"`{command}`"), command

    # a line that opens with a question mark (go's package without tests) is quoted, not cut to nothing
    said = SteeringBook().render(Finding(anomaly="loop", template="loop_repeat", turn=5, evidence={
        "pattern": "repeat", "action": "`go test ./...`", "times": 3, "outcome": "? \tgithub.com/a/b\t[no test files]", "error_type": ""}))
    assert "(? github.com/a/b [no test files])" in said


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




def oh_edit(path: str, output: str, **args) -> dict:
    """An OpenHands editor call (its tool, its arguments) and what the editor answered."""
    return {"tool": "str_replace_editor", "args": {"command": "str_replace", "path": path, **args}, "output": output}


def tracker_plan() -> dict:
    """OpenHands' task tracker called to plan with no task list, and its answer."""
    return {"tool": "task_tracker", "args": {"command": "plan"},
            "output": '\n\nMissing required argument "task_list" for "plan" command in tool call task_tracker\n'
                      "[Error occurred in processing last action]"}


def oh_unchanged(text: str) -> str:
    return (f"ERROR:\nInvalid `new_str` parameter: {text}. No replacement was performed. "
            "`new_str` and `old_str` must be different.")


def test_an_edit_whose_new_text_is_its_old_is_named_by_the_editor_s_reason_not_by_the_agent_s_text(make_session):
    """OpenHands quotes the agent's new text back before its reason. The line quoted was the last
    line of that text ("return NotImplemented"), cut at its first period, and the advice was to
    make the old text match, which it did (OpenHands GLM-4.6: 26 events, in every one of them)."""
    text = "def __eq__(self, other):\n    # Compare fields. Models first.\n    return NotImplemented"
    verdict = classify_output(oh_unchanged(text))
    assert (verdict.failed, verdict.error_line) == (True, "edit not applied: `new_str` and `old_str` must be different.")
    assert advice_kind(verdict.error_type, verdict.error_line) == "unchanged_edit"
    # Claude Code's Edit refuses the same edit in its own words
    claude = classify_output("<tool_use_error>No changes to make: old_string and new_string are exactly the same.</tool_use_error>")
    assert advice_kind(claude.error_type, claude.error_line) == "unchanged_edit"
    # and SWE-agent's, which quotes both texts around its reason: the line was cut inside the old
    # one ("old_str `@classmethod"), and the advice was to make the old text match
    both = "@classmethod\n    def runshell_db(cls, conn_params):\n        args = [cls.executable_name]"
    swe = classify_output(f"No replacement was performed, old_str `{both}` is the same as new_str `{both}`.")
    assert swe.error_line == "edit not applied: old_str is the same as new_str."
    assert advice_kind(swe.error_type, swe.error_line) == "unchanged_edit"
    session = make_session(doctrine={"breaker": {"enabled": False}})
    session.run(*[oh_edit("/repo/a.py", oh_unchanged(text), old_str=text, new_str=text)] * 3)
    [(turn, anomaly, steering)] = session.steering()
    assert (turn, anomaly) == (3, "loop")
    assert "(edit not applied: `new_str` and `old_str` must be different)" in steering
    assert "the new text is the same as the text it would replace" in steering and "NotImplemented" not in steering


def test_a_call_the_tool_refused_for_its_arguments_ran_nothing_and_is_not_a_churn(make_session):
    """The editor refusing a call with no text to replace, each slip put right at the next turn
    while the work moves from file to file, is no error coming back after fixes (OpenHands GLM-4.6,
    xarray: "Your changes are not reaching its cause"). Three such calls in a row ran nothing."""
    refused = "ERROR:\nParameter `old_str` is required for command: str_replace."
    verdict = classify_output(refused)
    assert (verdict.failed, verdict.error_line) == (True, "Parameter `old_str` is required for command: str_replace.")
    assert advice_kind(verdict.error_type, verdict.error_line) == "bad_arguments"
    # OpenHands checking a call against the tool's schema: a failure, not an output that worked
    tracker = classify_output(tracker_plan()["output"])
    assert (tracker.failed, advice_kind(tracker.error_type, tracker.error_line)) == (True, "bad_arguments")
    session = make_session()
    for name in ("a", "b", "c"):
        session.run(oh_edit(f"/repo/{name}.py", refused, new_str="x = 2"),
                    oh_edit(f"/repo/{name}.py", f"The file /repo/{name}.py has been edited.", old_str="x = 1", new_str="x = 2"),
                    sh(f"python -c 'import {name}'", ""))
    assert session.steering() == []
    # nor is the task tracker's call without its list, made now and then between edits and runs, a
    # run whose changes had no effect (OpenHands GLM-4.6, django-10924: "No effect: you ran `plan` again")
    session = make_session()
    for name in ("a", "b", "c", "d"):
        session.run(tracker_plan(), oh_edit(f"/repo/{name}.py", f"The file /repo/{name}.py has been edited.", old_str="x = 1", new_str="x = 2"),
                    sh("python repro.py", f"checked {name}\n"))
    assert session.steering() == []
    session = make_session()
    session.run(*[oh_edit(f"/repo/{name}.py", refused, new_str="x = 2") for name in ("a", "b", "c")])
    [(turn, anomaly, steering)] = session.steering()
    assert (turn, anomaly) == (3, "loop")
    assert steering.startswith("[SUPERVISOR] Loop: your last 3 calls ran nothing (Parameter `old_str` is required for command: str_replace); ")
    assert "send the call again with every argument the message names" in steering


def test_a_call_refused_for_its_arguments_again_and_again_takes_the_proof_a_reply_without_a_tool_call_takes(make_session):
    """A model sending the task tracker's `plan` with no task list five times, then with it, and
    finishing (OpenHands GLM-4.6, django-12497): the call ran nothing and harmed nothing, like a
    reply without a tool call. It is told at the third, blocked after, and paused only once the
    steering went unheard 4 times, not twice (which paused it one turn before it found the form)."""
    bare = tracker_plan()
    session = make_session()
    session.run(*[bare] * 5)
    assert [(r.turn, r.steering[0][0] if r.steering else None, bool(r.blocked), r.paused) for r in session.results] == [
        (1, None, False, False), (2, None, False, False), (3, "loop", False, False), (4, None, True, False), (5, None, True, False)]
    session.run(bare, bare)
    assert session.results[-1].paused and not session.results[-2].paused  # the 4th time unheard


def test_a_create_refused_over_a_file_that_is_there_is_named_by_that_reason(make_session):
    """OpenHands opens this refusal with the path ("Invalid `path` parameter: /workspace/t.py."),
    and the quote ended there; SWE-agent 1.x says only the reason. Nothing was written: an edit
    refused, with advice to edit the file that is there (OpenHands GLM-4.6, django-15819)."""
    reason = "File already exists at: /workspace/t.py. Cannot overwrite files using command `create`."
    for output in (f"ERROR:\nInvalid `path` parameter: /workspace/t.py. {reason}", reason):
        verdict = classify_output(output)
        assert (verdict.failed, verdict.error_line) == (True, f"edit not applied: {reason}"), output
        assert advice_kind(verdict.error_type, verdict.error_line) == "file_exists"
    create = {"tool": "str_replace_editor", "args": {"command": "create", "path": "/workspace/t.py", "file_text": "print(1)\n"},
              "output": f"ERROR:\nInvalid `path` parameter: /workspace/t.py. {reason}"}
    session = make_session(doctrine={"breaker": {"enabled": False}})
    session.run(create, create, create)
    [(turn, anomaly, steering)] = session.steering()
    assert (turn, anomaly) == (3, "loop")
    assert "(edit not applied: File already exists at: /workspace/t.py)" in steering
    assert steering.endswith("the editor wrote nothing because the file is there already and `create` does not overwrite: "
                             "view it and edit it, or write under another name.")


def test_calls_in_a_row_into_a_busy_terminal_after_a_churn_about_it_say_nothing_more(make_session):
    """The busy terminal's note came back after each edit (a churn, told that the terminal is
    still running and what to do), then three calls in a row ran nothing: the same cause, the
    same advice. Said once, by the churn."""
    session = make_session()
    session.run(sh("sed -i 's/8000/8080/' server.py", ""), sh("python server.py", "Serving on 8080\n\n" + A0_DIALOG.format(5)))
    for n in range(3):
        session.run(sh(f"sed -i 's/debug={n}/debug={n + 1}/' server.py", ""), sh(f"curl localhost:8080/{n}", A0_BUSY))
    assert [anomaly for _, anomaly, _ in session.steering()] == ["churn"]
    assert "that terminal is still running an earlier command" in session.steering()[0][2]
    session.run(sh("ps aux | grep server", A0_BUSY), sh("tail server.log", A0_BUSY))
    assert [anomaly for _, anomaly, _ in session.steering()] == ["churn"]
    ledger = session.agent.data["_org_tool_ledger"]
    assert [o.error_type for o in list(ledger.outcomes)[-3:]] == ["busy"] * 3  # three in a row that ran nothing


PYTHON_BANNER = ('Python 3.12.1 (main, Jan  8 2024, 05:57:25) [GCC 12.2.0] on linux\n'
                 'Type "help", "copyright", "credits" or "license" for more information.\n')
A0_NO_NEW_OUTPUT = ("[SYSTEM: Returning control to agent after 45 seconds since last output update. Process might be still running. "
                    "Check previous outputs and decide whether to reset and continue or wait for more output is needed.] ")


def test_a_terminal_left_at_an_interactive_prompt_is_known_by_that_prompt_last():
    """A bare `python`, a heredoc that reached Python, a script stopped at `breakpoint()`: the
    terminal's last line is the interpreter's prompt, under what the tool adds after it. Each
    form (Agent-Zero's notes, a harness's timeout, exit status and shell prompt) names it; a
    doctest's `>>>` lines, a file shown with them, and dots a program prints do not."""
    waits = {
        PYTHON_BANNER + ">>> \n\n" + A0_NO_NEW_OUTPUT: "Python prompt (`>>>`)",
        PYTHON_BANNER + ">>> ls -la\n  File \"<stdin>\", line 1\n    ls -la\n       ^^\nSyntaxError: invalid syntax\n>>> \n\n" + A0_BUSY:
            "Python prompt (`>>>`)",
        ">>> prompt\nTraceback (most recent call last):\n  File \"<python-input-3>\", line 1, in <module>\n    prompt\n"
        "NameError: name 'prompt' is not defined\n>>> \n**Exited due to timeout**\n\nNone@None:None $\n\nexit code: 124":
            "Python prompt (`>>>`)",
        ">>> def f():\n... ": "Python prompt (`...`)",
        "> /repo/app.py(12)main()\n-> total = price * qty\n(Pdb) ": "pdb prompt (`(Pdb)`)",
        "In [1]: ": "IPython prompt (`In [1]:`)",
        "Python 3.12.1\n>>> \n[The command completed with exit code 0.]": "Python prompt (`>>>`)",  # OpenHands' closing line
    }
    for text, prompt in waits.items():
        verdict = classify_output(text)
        assert (verdict.failed, verdict.error_type, verdict.error_line) == (True, "busy", f"the terminal waits at an interactive {prompt}"), text
        assert advice_kind(verdict.error_type, verdict.error_line) == "interpreter"
    for text in ("Failed example:\n    >>> total(2, 3)\nExpected:\n    5\nGot:\n    6\n***Test Failed*** 1 failures.\n",
                 "/a0/usr/workdir/notes.md 3 lines\n>>>\n 1 # Examples\n 2 >>> total(2, 3)\n 3 5\n<<<",
                 "Downloading model\n...", "Python 3.12.1\n>>> print(1)\n1\n>>> exit()\nroot@a0:/a0# "):
        verdict = classify_output(text)
        assert verdict.error_type != "busy" and advice_kind(verdict.error_type, verdict.error_line) != "interpreter", text


def test_commands_sent_to_a_terminal_at_a_python_prompt_are_told_to_leave_it(make_session):
    """A RepoLaunch session (nanobot-2869): a heredoc left the terminal in Python, and every
    command after it was read as Python (its own `prompt` a NameError each time). What counts is
    that nothing the agent sent ran in the shell: the third call is told so, and how to get
    out; no churn on the NameError blames its changes."""
    stuck = (">>> {command}\n  File \"<stdin>\", line 1\n    {command}\n    ^\nSyntaxError: invalid syntax\n>>> prompt\n"
             "Traceback (most recent call last):\n  File \"<python-input-3>\", line 1, in <module>\n    prompt\n"
             "NameError: name 'prompt' is not defined\n>>> \n**Exited due to timeout**\n\nNone@None:None $\n\nexit code: 124")
    session = make_session()
    session.run(sh("sed -i 's/limit = 10/limit = 20/' nanobot/config.py", ""),
                sh("python - <<'PY'\nprint(1)\n", PYTHON_BANNER + ">>> print(1)\n1\n>>> \n**Exited due to timeout**\n\nexit code: 124"),
                *[sh(command, stuck.format(command=command)) for command in ("pytest -q tests/test_config.py", "git status", "cat nanobot/config.py")])
    [(turn, anomaly, text)] = session.steering()
    assert (turn, anomaly) == (4, "loop")
    assert text == ("[SUPERVISOR] Loop: your last 3 calls ran nothing (the terminal waits at an interactive Python prompt (`>>>`)); what you "
                    "send is read by that interpreter, not run by the shell: send it `exit()` (`q` at pdb's prompt) as input to the running "
                    "program, or reset that terminal session, then run the command again.")
    assert {r.pace for r in session.results} == {"primary"}  # no step of a failing approach


def test_agent_zero_s_notes_after_a_terminal_was_left_in_python_are_that_prompt_waiting(make_session):
    """In Agent-Zero the prompt shows once: `python3` answers with the banner and `>>>`, and every
    command after it with the bare "Terminal session 0 might be still running". The session's
    last answer says why; a reset (an answer that is no such note) forgets it, and another
    session was never in Python."""
    opened = sh("python3", PYTHON_BANNER + ">>>\n\n" + A0_NO_NEW_OUTPUT)
    session = make_session()
    session.run(opened, sh("ls /tmp", A0_BUSY), sh("pwd", A0_BUSY))
    [(turn, anomaly, text)] = session.steering()
    assert (turn, anomaly) == (3, "loop") and "(the terminal waits at an interactive Python prompt (`>>>`))" in text
    ledger = session.agent.data["_org_tool_ledger"]
    other = {"tool": "code_execution_tool", "args": {"runtime": "terminal", "session": 1, "code": "ls"},
             "output": A0_BUSY.replace("session 0", "session 1")}
    reset = {"tool": "code_execution_tool", "args": {"runtime": "terminal", "session": 0, "reset": True, "code": "ls"}, "output": "app.py"}
    session.run(other, reset, sh("python server.py", "Serving on 8080\n\n" + A0_NO_NEW_OUTPUT), sh("ls", A0_BUSY))
    lines = [o.error_line or "" for o in list(ledger.outcomes)[-4:]]
    assert lines[0].startswith("[SYSTEM: Terminal session 1 might be still running") and lines[1] == ""
    assert lines[3].startswith("[SYSTEM: Terminal session 0 might be still running")


def test_a_here_document_sent_on_one_line_is_told_it_never_ends(make_session):
    """Line breaks escaped twice (RepoLaunch, devlake-8828, memgraph-4010): `<<'PY'\\nfrom …` is one
    line, its closing word never comes, and the shell waits until the call runs out of time.
    Running it again, with a time limit or in the background, waits again: the advice is the
    line breaks. The same here-document with real line breaks is no such thing."""
    one_line = "python3 - <<'PY'\\nfrom pathlib import Path\\nprint(Path('setup.cfg').read_text())\\nPY"
    waits = "> \n\n[SYSTEM: Returning control to agent after 180 seconds of execution. Process might be still running.]"
    session = make_session(doctrine={"breaker": {"enabled": False}})
    session.run(*[sh(one_line, waits)] * 3)
    [(turn, anomaly, text)] = session.steering()
    assert (turn, anomaly) == (3, "loop")
    assert text.endswith("; its here-document never ends, because its line breaks went as the two characters `\\n` and its closing "
                         "word never stands on a line of its own, so the shell waits for it: send the lines with real line breaks, "
                         "or write the script to a file first and run that."), text
    assert advice_kind("timeout", "timed out", "`python3 - <<'PY' from pathlib import Path print(1) PY`") == "timeout"


@pytest.mark.parametrize("echoed", [
    # OpenHands (GLM-4.6, flask-4045): the command, then its footer
    "{cmd}\n[The command completed with exit code 0.]\n[Current working directory: /repo]\n[Command finished with exit code 0]",
    # a terminal that prints the line it runs, a letter doubled, then its prompt (RepoLaunch)
    "{cmd_doubled}\nroot@bd88c1f0e2a1:/repo# ",
])
def test_a_look_whose_output_is_only_the_command_echoed_found_nothing(make_session, echoed):
    """A terminal that echoes the command it runs: an output of the echo alone shows nothing, so
    the same search three times is told to look elsewhere, not to act on its result."""
    cmd = 'find tests/ -name "*.py" -exec grep -l "should not contain dots" {} \\;'
    output = echoed.format(cmd=cmd, cmd_doubled=cmd.replace("tests/", "testts/"))
    session = make_session()
    session.run(*[sh(cmd, output)] * 3)
    [(_, anomaly, text)] = session.steering()
    assert anomaly == "loop" and "it found nothing each time. Looking the same way again will not find it" in text, text


def test_what_a_command_prints_of_its_own_text_is_no_echo_of_it(make_session):
    """`echo "…"` prints its text, which reads almost as the command itself (mini-swe-agent's
    submission word, quoted by a model that got it wrong): what it printed, not an echo that
    shows nothing."""
    said = 'echo "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached"'
    session = make_session()
    session.run(*[sh(said, said[6:-1])] * 3)
    assert [a for _, a, text in session.steering() if "found nothing" in text] == []
    assert not ledger_of(session.agent.data).outcomes[-1].empty


def test_the_same_look_after_a_failing_run_is_told_to_act_on_it_not_to_finish(make_session):
    """Reads of the same lines again after the tests failed (OpenHands GLM-4.6, seed 54 #43, #67):
    the task is not done, so "or finish if it is what you needed" would be wrong; the run that
    failed is named instead."""
    session = make_session()
    failing = sh("python -m pytest tests/test_query.py -q", "FAILED tests/test_query.py::test_lookup - AssertionError: 3 != 4\n1 failed in 0.2s")
    read = sh("sed -n 40,60p src/query.py", "def lookup(key):\n    return table[key] + 1\n")
    session.run(failing, read, read, read)
    [(turn, anomaly, text)] = session.steering()
    assert (turn, anomaly) == (4, "loop")
    assert text == ("[SUPERVISOR] Loop: you ran `sed -n 40,60p src/query.py` 3 times and got the same output each time. You have that "
                    "result already; act on it, as the task is not done: `python -m pytest tests/test_query.py -q` failed when it last "
                    "ran (FAILED tests/test_query.py::test_lookup - AssertionError: 3 != 4)."), text
    # a failure that names nothing (a reproduction's banner, then exit status 1): the run is named without a line
    banner = make_session()
    banner.run(sh("python repro.py", "=== Testing the choices ===\nstr(value) = 'MyChoice.FIRST'\n[Command finished with exit code 1]"),
               read, read, read)
    [(_, _, text)] = banner.steering()
    assert text.endswith("act on it, as the task is not done: `python repro.py` failed when it last ran."), text


@pytest.mark.parametrize("calls", [
    # the run after the fix worked: the result may be what the task needed
    [sh("python repro.py", "Traceback (most recent call last):\nValueError: bad"), sh("python repro.py", "ok"),
     *[sh("cat out.txt", "42")] * 3],
    # the run itself, working after the fix, again and again
    [sh("python repro.py", "Traceback (most recent call last):\nValueError: bad"), sh("sed -i 's/bad/good/' app.py"),
     *[sh("python repro.py", "ok")] * 3],
])
def test_the_same_result_after_a_run_that_worked_may_be_what_was_needed(make_session, calls):
    session = make_session()
    session.run(*calls)
    [(_, anomaly, text)] = session.steering()
    assert anomaly == "loop" and text.endswith("You have that result already; act on it, or finish if it is what you needed."), text


def test_the_same_look_finding_nothing_again_and_again_is_told_to_look_elsewhere_not_to_finish(make_session):
    """A search with no match, three times (OpenHands GLM-4.6, seed 52 #23 and #29): there is no
    result to act on, nor one to finish with."""
    session = make_session()
    session.run(*[sh("grep -rn 'def resolve_lookup' django/", "")] * 3)
    [(turn, anomaly, text)] = session.steering()
    assert (turn, anomaly) == (3, "loop")
    assert text == ("[SUPERVISOR] Loop: you ran `grep -rn 'def resolve_lookup' django/` 3 times and it found nothing each time. "
                    "Looking the same way again will not find it; look somewhere else or by another name, or go on without it.")
